//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package dataset

import (
	"errors"
	"os"
	"syscall"
)

// lockSupported reports whether this platform has the file locks that
// tell a live writer's staging folders from those a stopped one left.
const lockSupported = true

// lockFile takes f's advisory lock, exclusive or shared, waiting for it or
// not; ok is false when it is held otherwise and wait is false. The
// system releases it when the process ends, however it ends.
func lockFile(f *os.File, exclusive, wait bool) (ok bool, err error) {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	if !wait {
		how |= syscall.LOCK_NB
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case !wait && errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		}
		return false, &os.PathError{Op: "flock", Path: f.Name(), Err: err}
	}
}

func unlockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
