//go:build unix

package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// lockDataDir takes the data directory's lock, DIR/lock, for this process:
// an exclusive flock, which the kernel releases when the process dies,
// however it dies. A second daemon started on the same directory (the same
// identity, the same records) fails here rather than marking the first's
// running sessions aborted and writing records beside it. The file says
// which process holds it.
func lockDataDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, "lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the data directory's lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		switch {
		case errors.Is(err, syscall.EWOULDBLOCK):
			return nil, fmt.Errorf("node.data_dir %s is in use by another bandit-node (%s): two daemons must not share a data directory", dir, strings.TrimSpace(string(holder)))
		case errors.Is(err, syscall.ENOLCK) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EOPNOTSUPP):
			// A file system without locks (some network ones): the
			// daemon runs, unguarded, and says so.
			return nil, fmt.Errorf("%w: node.data_dir %s: %v", ErrNoDataDirLock, dir, err)
		}
		return nil, fmt.Errorf("locking node.data_dir %s: %w", dir, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(fmt.Sprintf("pid %d\n", os.Getpid())), 0)
	}
	return f, nil
}
