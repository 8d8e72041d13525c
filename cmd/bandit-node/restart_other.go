//go:build !unix

package main

import "errors"

// restart is not available where exec is not.
func restart([]string) error {
	return errors.New("restarting a process in place is not supported on this system")
}
