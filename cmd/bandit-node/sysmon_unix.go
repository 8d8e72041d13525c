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
// is: nothing to change, or the exec failed (reported on stderr). The
// re-execution itself is silent: it happens at every start of a daemon, and
// the README says what it does and how to turn it off; a line on stderr
// before the daemon's own log (and before any config error) only puzzled.
func reexecForSysmon(args []string, stderr io.Writer) {
	env := sysmonEnv(args, os.Environ())
	if env == nil {
		return
	}
	exe, err := os.Executable()
	if err == nil {
		err = syscall.Exec(exe, os.Args, env)
	}
	fmt.Fprintf(stderr, "bandit-node: could not restart with GODEBUG=%s (%v); running with the runtime's defaults\n", sysmonTrace, err)
}
