//go:build unix

package main

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// reexecForSysmon re-executes the process with sysmonEnv's environment when
// there is one (see sysmon.go). It returns only if the process runs on as it
// is: nothing to change, or the exec failed (reported on stderr).
func reexecForSysmon(args []string, stderr io.Writer) {
	env := sysmonEnv(args, os.Environ())
	if env == nil {
		return
	}
	exe, err := os.Executable()
	if err == nil {
		if args[0] == "run" {
			fmt.Fprintf(stderr, "bandit-node: restarting with GODEBUG=%s, which keeps the Go runtime's monitor thread from a deep sleep between messages (a third less CPU a message); the runtime prints a scheduler line (SCHED) every 24.8 days. %s=default turns this off.\n", sysmonTrace, sysmonOptOut)
		}
		err = syscall.Exec(exe, os.Args, env)
	}
	fmt.Fprintf(stderr, "bandit-node: could not restart with GODEBUG=%s (%v); running with the runtime's defaults\n", sysmonTrace, err)
}
