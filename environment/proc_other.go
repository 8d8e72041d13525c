//go:build !unix

package environment

import (
	"errors"
	"os"
	"os/exec"
)

// newProcessGroup does nothing where there are no POSIX process groups.
func newProcessGroup(*exec.Cmd) {}

// terminateGroup kills cmd's process: without POSIX signals there is no
// polite request to stop.
func terminateGroup(cmd *exec.Cmd) error { return killGroup(cmd) }

// killGroup kills cmd's process.
func killGroup(cmd *exec.Cmd) error {
	err := cmd.Process.Kill()
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}
