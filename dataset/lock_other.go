//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd || windows)

package dataset

import "os"

// lockSupported reports whether this platform has the file locks that
// tell a live writer's staging folders from those a stopped one left.
// Without them, Create treats every leftover as a stopped writer's: one
// process at a time may write a dataset.
const lockSupported = false

func lockFile(f *os.File, exclusive, wait bool) (bool, error) { return true, nil }

func unlockFile(f *os.File) error { return nil }
