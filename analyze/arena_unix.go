//go:build unix

package analyze

import (
	"runtime"
	"syscall"
	"unsafe"
)

// gapArena is address space reserved outside the Go heap for one run's
// pooled token gaps (convAcc.reserve): the slice can grow to its capacity
// without ever being copied, and only the pages written become memory.
// The mapping is released when the arena is no longer reachable.
type gapArena struct {
	mem []byte
}

// newGapArena reserves room for n float64s; nil when the system refuses
// (the caller keeps its blocks).
func newGapArena(n int) *gapArena {
	mem, err := syscall.Mmap(-1, 0, n*8, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|mapNoReserve)
	if err != nil {
		return nil
	}
	a := &gapArena{mem: mem}
	runtime.AddCleanup(a, func(m []byte) { _ = syscall.Munmap(m) }, mem)
	return a
}

// floats is the arena as an empty slice of its capacity.
func (a *gapArena) floats() []float64 {
	return unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(a.mem))), len(a.mem)/8)[:0]
}
