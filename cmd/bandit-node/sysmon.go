package main

import (
	"strings"
)

// The Go runtime's monitor thread, sysmon, goes into a deep sleep whenever
// every P is idle, and the next system call wakes it with a futex and sets it
// polling every 20 µs again (runtime/proc.go: sysmon, entersyscall). A daemon
// that trades many small messages goes idle between any two of them, so every
// message paid for that wake-up and the polls after it: on this project's
// 2-core test machine the bare SAMBA message pattern (`bandit-node bench
// pattern --processes`, K = 10) took 0.56 ms a step that way and 0.36 ms with
// sysmon kept out of deep sleep, and a SAMBA session on 13 daemons 0.75 and
// 0.49 ms (golang/go#18236 is the runtime's open issue about sysmon's fixed
// ticks). The only switch the runtime offers is GODEBUG=schedtrace=N: sysmon
// does not deep-sleep while it must print a scheduler trace every N ms. With
// N = 2^31-1 the trace is one line on stderr every 24.8 days (first when the
// machine has been up that long), and an idle daemon's sysmon wakes 100 times
// a second (≈ 0.5 ms of CPU a second). The daemon (run) and the network benchmark (bench, whose party
// processes inherit the environment) re-execute themselves with it unless
// GODEBUG already sets schedtrace or BANDIT_NODE_SYSMON=default.

// sysmonTrace is the GODEBUG setting that keeps sysmon awake.
const sysmonTrace = "schedtrace=2147483647"

// sysmonOptOut is the environment variable that keeps the runtime's default.
const sysmonOptOut = "BANDIT_NODE_SYSMON"

// sysmonEnv returns the environment to re-execute the command args with, or
// nil if it runs as it is.
func sysmonEnv(args, environ []string) []string {
	if len(args) == 0 || (args[0] != "run" && args[0] != "bench") {
		return nil
	}
	for _, a := range args[1:] {
		if a == "-h" || a == "-help" || a == "--help" {
			return nil
		}
	}
	godebug, at := "", -1
	for i, kv := range environ {
		switch {
		case kv == sysmonOptOut+"=default":
			return nil
		case strings.HasPrefix(kv, "GODEBUG=") && at < 0: // the first one counts, as for the runtime
			godebug, at = strings.TrimPrefix(kv, "GODEBUG="), i
		}
	}
	for _, setting := range strings.Split(godebug, ",") {
		if strings.HasPrefix(strings.TrimSpace(setting), "schedtrace=") {
			return nil
		}
	}
	env := append([]string(nil), environ...)
	if at < 0 {
		return append(env, "GODEBUG="+sysmonTrace)
	}
	if godebug == "" {
		env[at] = "GODEBUG=" + sysmonTrace
	} else {
		env[at] = "GODEBUG=" + godebug + "," + sysmonTrace
	}
	return env
}
