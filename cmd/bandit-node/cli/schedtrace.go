package cli

import (
	"errors"
	"log/slog"
	"os"
	"strings"
)

// The Go runtime's monitor thread, sysmon, sleeps deeply whenever every P
// is idle, and the next system call pays a futex wake-up to set it polling
// again (golang/go#18236). A daemon that trades many small messages goes
// idle between any two of them, so it pays that on every message. The
// runtime's only switch is GODEBUG=schedtrace=N: sysmon does not deep-sleep
// while it owes a scheduler trace every N ms. With N = 2^31-1 the trace is
// one line on stderr every 24.8 days, and an idle daemon's sysmon wakes 100
// times a second (≈ 0.5 ms of CPU a second). The setting is [runtime]
// schedtrace for `run` and --schedtrace for `bench`, on by default: what it
// saves is measured in docs/performance.md, how it was found in
// bench/HISTORY.md.

// schedtraceSetting is the GODEBUG setting that keeps sysmon awake.
const schedtraceSetting = "schedtrace=2147483647"

// godebug returns the GODEBUG value of environ and its index, or -1: the
// first entry counts, as for the runtime.
func godebug(environ []string) (string, int) {
	for i, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "GODEBUG="); ok {
			return v, i
		}
	}
	return "", -1
}

// hasSchedtrace reports whether environ's GODEBUG sets schedtrace.
func hasSchedtrace(environ []string) bool {
	v, _ := godebug(environ)
	for _, setting := range strings.Split(v, ",") {
		if strings.HasPrefix(strings.TrimSpace(setting), "schedtrace=") {
			return true
		}
	}
	return false
}

// schedtraceEnv returns environ with schedtraceSetting added to GODEBUG, or
// nil if GODEBUG already sets schedtrace (the operator's own value wins).
func schedtraceEnv(environ []string) []string {
	if hasSchedtrace(environ) {
		return nil
	}
	v, at := godebug(environ)
	env := append([]string(nil), environ...)
	switch {
	case at < 0:
		return append(env, "GODEBUG="+schedtraceSetting)
	case v == "":
		env[at] = "GODEBUG=" + schedtraceSetting
	default:
		env[at] = "GODEBUG=" + v + "," + schedtraceSetting
	}
	return env
}

// applySchedtrace carries out the schedtrace setting named what: when on
// and this process runs without it, the process restarts itself once with
// it, saying so on log. It returns only if the process runs on as it is:
// the setting is off or already applied, there is no restart (a test runs
// the command in its own process) or it failed, which is logged. It then
// logs the runtime settings the process runs with.
func applySchedtrace(on bool, what string, log *slog.Logger, restart Restarter) {
	if env := schedtraceEnv(os.Environ()); on && env != nil {
		var err error = errNoRestart
		if restart != nil {
			log.Info("restarting with GODEBUG "+schedtraceSetting+" to keep the Go runtime's monitor thread awake",
				"setting", what)
			err = restart(env)
		}
		log.Warn("could not restart with GODEBUG "+schedtraceSetting+"; running with the runtime's defaults",
			"setting", what, "err", err)
	}
	v, _ := godebug(os.Environ())
	log.Info("go runtime", "schedtrace", hasSchedtrace(os.Environ()), "setting", what, "GODEBUG", v)
}

// errNoRestart says a command ran in a process that cannot restart.
var errNoRestart = errors.New("this process was not started to be restarted (it runs inside another program)")
