package dataset

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockSupported reports whether this platform has the file locks that
// tell a live writer's staging folders from those a stopped one left.
const lockSupported = true

// lockFile takes a lock on f's first byte, exclusive or shared, waiting
// for it or not; ok is false when it is held otherwise and wait is false.
// The system releases it when the process ends, however it ends.
func lockFile(f *os.File, exclusive, wait bool) (ok bool, err error) {
	var flags uint32
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	if !wait {
		flags |= windows.LOCKFILE_FAIL_IMMEDIATELY
	}
	ol := new(windows.Overlapped)
	err = windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, ol)
	switch {
	case err == nil:
		return true, nil
	case !wait && errors.Is(err, windows.ERROR_LOCK_VIOLATION):
		return false, nil
	}
	return false, &os.PathError{Op: "LockFileEx", Path: f.Name(), Err: err}
}

func unlockFile(f *os.File) error {
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, new(windows.Overlapped))
}
