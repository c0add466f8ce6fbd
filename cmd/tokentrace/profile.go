package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// Hidden profiling flags on every command, for BENCHMARKS.md's profile:
//
//	tokentrace report FILE --cpuprofile cpu.out --memprofile mem.out
//	go tool pprof -top bin/tokentrace cpu.out
//
// The CPU profile covers the command's run; the heap profile is written
// after it (allocations since start, in-use at the end).
func addProfileFlags(root *cobra.Command) {
	var cpuPath, memPath string
	var cpuFile *os.File
	pf := root.PersistentFlags()
	pf.StringVar(&cpuPath, "cpuprofile", "", "write a CPU profile (pprof) of the command to FILE")
	pf.StringVar(&memPath, "memprofile", "", "write a heap profile (pprof) after the command to FILE")
	_ = pf.MarkHidden("cpuprofile")
	_ = pf.MarkHidden("memprofile")
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if cpuPath == "" {
			return nil
		}
		f, err := os.Create(cpuPath)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		cpuFile = f
		return nil
	}
	root.PersistentPostRunE = func(*cobra.Command, []string) error {
		if cpuFile != nil {
			pprof.StopCPUProfile()
			if err := cpuFile.Close(); err != nil {
				return fmt.Errorf("--cpuprofile: %w", err)
			}
		}
		if memPath == "" {
			return nil
		}
		f, err := os.Create(memPath)
		if err != nil {
			return fmt.Errorf("--memprofile: %w", err)
		}
		runtime.GC()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			f.Close()
			return fmt.Errorf("--memprofile: %w", err)
		}
		return f.Close()
	}
}
