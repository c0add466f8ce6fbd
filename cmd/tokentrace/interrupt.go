package main

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Interrupts. The table writers stream into hidden temporary files
// (".events.parquet.tmp-…"; analyze: a hidden output set beside -o,
// outdir.go) that are renamed into place when complete; a command
// interrupted by SIGINT or SIGTERM would leave them behind (hundreds of MB
// for a large run). main watches for the signals
// from the start; commands register their writers' Abort with onInterrupt
// once the writer exists. On the signal every registered cleanup runs and
// the process exits with 128 + the signal's number (130, 143).
// The tables already in the output directory are untouched either way.

var (
	interruptMu   sync.Mutex
	interruptRuns = map[int]func(){}
	interruptNext int
	interruptOnce sync.Once
)

// onInterrupt registers cleanup to run if the process is interrupted (main
// watches for the signals) and returns the function that unregisters it
// (call it once the writer is closed or aborted).
func onInterrupt(cleanup func()) (remove func()) {
	interruptMu.Lock()
	defer interruptMu.Unlock()
	id := interruptNext
	interruptNext++
	interruptRuns[id] = cleanup
	return func() {
		interruptMu.Lock()
		defer interruptMu.Unlock()
		delete(interruptRuns, id)
	}
}

func watchInterrupts() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		sig := <-ch
		n := runInterruptCleanups()
		if n > 0 {
			fmt.Fprintln(os.Stderr, "tokentrace: interrupted: the unfinished output's temporary files were removed")
		}
		code := 130
		if sig == syscall.SIGTERM {
			code = 143
		}
		os.Exit(code)
	}()
}

// runInterruptCleanups runs (and forgets) the registered cleanups and
// returns how many ran.
func runInterruptCleanups() int {
	interruptMu.Lock()
	defer interruptMu.Unlock()
	n := len(interruptRuns)
	for id, f := range interruptRuns {
		f()
		delete(interruptRuns, id)
	}
	return n
}
