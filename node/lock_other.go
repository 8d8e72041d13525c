//go:build !unix

package node

import "os"

// lockDataDir does nothing where flock is missing: there, nothing stops two
// daemons from sharing a data directory (see lock_unix.go).
func lockDataDir(dir string) (*os.File, error) { return nil, nil }
