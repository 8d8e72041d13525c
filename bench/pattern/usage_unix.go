//go:build unix

package pattern

import (
	"syscall"
	"time"
)

// usageMeasured reports that processUsage reads the system's figures.
const usageMeasured = true

// processUsage returns this process's resource usage so far (zero if the
// system will not tell).
func processUsage() usage {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return usage{}
	}
	return usage{cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds(), user: time.Duration(ru.Utime.Nano()).Seconds(), switches: ru.Nvcsw + ru.Nivcsw}
}
