//go:build unix

package main

import (
	"os"
	"syscall"
)

// restart replaces this process with a new run of the same program and
// arguments in environment env. It returns only on failure.
func restart(env []string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	return syscall.Exec(exe, os.Args, env)
}
