//go:build !unix

package main

import "io"

// reexecForSysmon does nothing where exec is not available.
func reexecForSysmon([]string, io.Writer) {}
