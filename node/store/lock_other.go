//go:build !unix

package store

import (
	"fmt"
	"os"
)

// lockDataDir takes no lock where flock is missing: there, nothing stops two
// daemons from sharing a data directory (see lock_unix.go), and the daemon
// warns.
func lockDataDir(dir string) (*os.File, error) {
	return nil, fmt.Errorf("%w: node.data_dir %s: no flock on this system", ErrNoDataDirLock, dir)
}
