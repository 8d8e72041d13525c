//go:build !linux

package samba

import "time"

// threadCPU reports that this system's thread CPU clock is not read: the
// SAMBA experiment times its runs by the wall clock instead.
func threadCPU() (time.Duration, bool) { return 0, false }
