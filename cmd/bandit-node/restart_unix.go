//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// restart replaces this process with a new run of the same program and
// arguments in environment env. It returns only on failure.
func restart(env []string) error {
	exe, err := executable()
	if err != nil {
		return err
	}
	return syscall.Exec(exe, os.Args, env)
}

// executable returns the path of the running program. os.Executable reads
// /proc/self/exe on Linux, which an empty root has not: a FROM scratch
// container runs with /proc mounted, but a bare chroot or a sandbox
// without procfs does not (TestEmptyRoot). There the program's own
// argv[0] names it, if it is an absolute path (as the Dockerfile's
// ENTRYPOINT and systemd's ExecStart give it).
func executable() (string, error) {
	exe, err := os.Executable()
	if err == nil {
		return exe, nil
	}
	if len(os.Args) > 0 && filepath.IsAbs(os.Args[0]) {
		if _, serr := os.Stat(os.Args[0]); serr == nil {
			return os.Args[0], nil
		}
	}
	return "", fmt.Errorf("finding this program's path to restart it: %w (and argv[0] %q is not an absolute path to it)", err, os.Args[0])
}
