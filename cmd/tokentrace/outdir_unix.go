//go:build unix

package main

import (
	"errors"
	"syscall"
)

// processAlive reports whether process pid runs; known is false where it
// cannot be told.
func processAlive(pid int) (alive, known bool) {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM), true
}
