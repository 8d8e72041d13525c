package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// signalIgnoreTerm makes the program ignore SIGTERM, so that only SIGKILL
// stops it.
func signalIgnoreTerm() { signal.Ignore(syscall.SIGTERM) }

// startChild starts a grandchild that sleeps long, writing its pid to
// stderr, to check that stopping the program stops its process group.
func startChild() {
	cmd := exec.Command("/bin/sleep", "3600")
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "cannot start child:", err)
		os.Exit(4)
	}
	if f := os.Getenv("ENVPROG_CHILD_PID"); f != "" {
		os.WriteFile(f, []byte(fmt.Sprint(cmd.Process.Pid)), 0o644)
	}
}
