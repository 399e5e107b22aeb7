package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// output is collect's output file. A regular file (or none yet) at the
// path is replaced only when Keep is called: the trace is written to a
// new file beside it, which Keep renames over the path and Discard
// removes, so that a session that does not start, or sends nothing of a
// trace, leaves a previous trace there as it was. A path that is not a
// regular file (a device such as /dev/stdout, a pipe) is written in place
// and never removed.
type output struct {
	*os.File
	path   string // the path the trace ends up at
	tmp    string // the file written, until Keep or Discard; "" when in place
	closed bool
}

// createOutput opens the file the trace is written to.
func createOutput(path string) (*output, error) {
	target := path
	mode := fs.FileMode(0o666) // as os.Create, less the umask
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&fs.ModeSymlink != 0 {
			// Replace the file the link names, not the link.
			if target, err = filepath.EvalSymlinks(path); err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					return nil, err
				}
				// A dangling link: write in place, as os.Create does.
				f, err := os.Create(path)
				if err != nil {
					return nil, err
				}
				return &output{File: f, path: path}, nil
			}
			if fi, err = os.Stat(target); err != nil {
				return nil, err
			}
		}
		if !fi.Mode().IsRegular() {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				return nil, err
			}
			return &output{File: f, path: path}, nil
		}
		mode = fi.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	dir, base := filepath.Split(target)
	for range 100 {
		var r [6]byte
		rand.Read(r[:])
		tmp := filepath.Join(dir, "."+base+"."+hex.EncodeToString(r[:])+".partial")
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if mode != 0o666 {
			f.Chmod(mode) // the replaced file's mode, whatever the umask
		}
		return &output{File: f, path: target, tmp: tmp}, nil
	}
	return nil, fmt.Errorf("%s: no free name for a temporary file", target)
}

// Close closes the file (once).
func (o *output) Close() error {
	if o.closed {
		return nil
	}
	o.closed = true
	return o.File.Close()
}

// Keep closes the file and puts it at the path, replacing what was there.
func (o *output) Keep() error {
	err := o.Close()
	if o.tmp == "" {
		return err
	}
	if rerr := os.Rename(o.tmp, o.path); rerr != nil {
		os.Remove(o.tmp)
		return rerr
	}
	o.tmp = ""
	return err
}

// Discard closes the file and removes it when it is one this run
// created; the path keeps what it had.
func (o *output) Discard() {
	o.Close()
	if o.tmp != "" {
		os.Remove(o.tmp)
		o.tmp = ""
	}
}
