package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestMemLimitFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, 100 << 20},
		{60 << 20, 100 << 20},  // 4/3·60 MiB is below the default
		{150 << 20, 200 << 20}, // a third more than the live heap
		{600 << 20, 800 << 20}, // …
		{800 << 20, 1 << 30},   // capped by the 1 GiB budget
		{1 << 30, 1280 << 20},  // the live heap past the budget: a quarter above it
	} {
		if got := memLimitFor(c.live); got != c.want {
			t.Errorf("memLimitFor(%d MiB) = %d MiB, want %d MiB", c.live>>20, got>>20, c.want>>20)
		}
	}
}

// TestSetDefaultMemoryLimit checks that GOMEMLIMIT, when set, is left to
// the runtime, and that otherwise the default limit is applied, with GOGC
// off unless GOGC is set.
func TestSetDefaultMemoryLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer following.Store(false) // no limit following in the rest of the tests
	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "off")
	if setDefaultMemoryLimit() || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Errorf("GOMEMLIMIT=off: the limit was changed to %d", debug.SetMemoryLimit(-1))
	}
	// t.Setenv cannot unset; clear it by hand for the default case.
	t.Setenv("GOMEMLIMIT", "")
	unsetenv(t, "GOMEMLIMIT")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "150")
	if !setDefaultMemoryLimit() || debug.SetMemoryLimit(-1) != defaultMemoryLimit {
		t.Errorf("no GOMEMLIMIT: limit %d, want %d", debug.SetMemoryLimit(-1), defaultMemoryLimit)
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC set: GC percent changed to %d", got)
	}
	t.Setenv("GOGC", "")
	unsetenv(t, "GOGC")
	setDefaultMemoryLimit()
	if got := debug.SetGCPercent(100); got != -1 {
		t.Errorf("no GOGC: GC percent %d, want -1 (off under the limit)", got)
	}
}

func unsetenv(t *testing.T, key string) {
	t.Helper()
	if err := os.Unsetenv(key); err != nil {
		t.Fatal(err)
	}
}

// TestLimitFollowsLiveHeap checks that after a collection that finds more
// live data than the default limit allows for, the limit is raised to stay
// a quarter above it (no collector thrashing on very large runs).
func TestLimitFollowsLiveHeap(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer following.Store(false)
	unsetenv(t, "GOMEMLIMIT")
	if !setDefaultMemoryLimit() {
		t.Fatal("limit not set")
	}
	live := make([]byte, 120<<20) // pointer-free: cheap to keep live
	for i := range live {
		live[i] = byte(i)
	}
	want := int64(150 << 20) // ≥ 1.25 · 120 MiB
	for range 200 {
		runtime.GC()
		if debug.SetMemoryLimit(-1) >= want {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := debug.SetMemoryLimit(-1); got < want {
		t.Errorf("live heap ≥ 120 MiB: limit %d MiB, want ≥ %d MiB", got>>20, want>>20)
	}
	runtime.KeepAlive(live)
}

// TestLimitFollowerKeepsRunning: the follower runs after every collection,
// also while tiny objects stay alive (a finalizer on an object of the tiny
// allocator runs only when its whole 16-byte block is free: with a 1-byte
// gcCycle the follower stopped after the first collections, the limit
// stayed at 100 MiB and a large run was collected continuously).
func TestLimitFollowerKeepsRunning(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer following.Store(false)
	unsetenv(t, "GOMEMLIMIT")
	if !setDefaultMemoryLimit() {
		t.Fatal("limit not set")
	}
	keep := make([]*[2]byte, 0, 1<<16) // tiny objects, alive throughout
	for range cap(keep) {
		keep = append(keep, new([2]byte))
	}
	start := followed.Load()
	for i := range 20 {
		keep = append(keep, new([2]byte))
		runtime.GC()
		for k := 0; k < 100 && followed.Load() < start+int64(i)+1; k++ {
			time.Sleep(time.Millisecond) // the finalizer goroutine runs it
		}
	}
	if got := followed.Load() - start; got < 20 {
		t.Errorf("the follower ran after %d of 20 collections", got)
	}
	runtime.KeepAlive(keep)
}
