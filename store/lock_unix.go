//go:build unix && !solaris && !aix

package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDir takes the state directory's lock: an exclusive flock on its file
// "lock", which the kernel lets go when the process ends, however it ends
// (kill -9 too), so that a crash leaves no stale lock. A second server on
// the same directory would replay it, then remove the journal the first
// one is appending to at its first snapshot, and overwrite its journals:
// changes both acknowledged would be lost.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s is in use by another server (it holds %s): one server at a time may use a state directory", dir, path)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}
