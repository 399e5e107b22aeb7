// Package ziptrace holds what every way into a zipped trace shares: finding
// the one trace inside an archive, and copying a stream that must be read
// at any offset to memory or a temporary file. Package trace (the front
// door) and the format readers' own Open functions use it, so these
// decisions live in one place.
package ziptrace

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// Member returns the one file of zr whose name ends in one of exts
// (case-insensitive), such as PerfView's gcevents/PerfViewData.etl beside
// its log. Errors start with name (the archive's) and list the members.
func Member(zr *zip.Reader, name string, exts ...string) (*zip.File, error) {
	var found []*zip.File
	var names []string
	for _, zf := range zr.File {
		if zf.FileInfo().IsDir() {
			continue
		}
		names = append(names, zf.Name)
		ext := strings.ToLower(path.Ext(zf.Name))
		for _, e := range exts {
			if ext == e {
				found = append(found, zf)
				break
			}
		}
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("%s: zip archive holds %d trace files (%s), want exactly one (members: %s)",
			name, len(found), strings.Join(exts, ", "), strings.Join(names, ", "))
	}
	return found[0], nil
}

// Spooled is a stream copied so that it can be read at any offset.
type Spooled struct {
	io.ReaderAt
	Size int64
	// Close releases the copy (removes the temporary file).
	Close func() error
}

// Spool copies src to memory, up to memMax bytes, and past that to a
// temporary file in tempDir ("" for os.TempDir()). hint is the size src
// claims (-1 if unknown): it sizes the memory buffer up to memMax but is not
// trusted, so a false claim costs nothing. Errors start with name.
func Spool(src io.Reader, hint, memMax int64, tempDir, name string) (*Spooled, error) {
	// bytes.Buffer.ReadFrom wants MinRead bytes free before each read: a
	// buffer sized to the claim plus MinRead holds a truthful input without
	// growing (doubling) at its end.
	capHint := int64(64 << 10)
	if hint > 0 {
		capHint = min(hint, memMax) + bytes.MinRead
	}
	buf := bytes.NewBuffer(make([]byte, 0, capHint))
	n, err := io.Copy(buf, io.LimitReader(src, memMax+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if n <= memMax {
		b := buf.Bytes()
		return &Spooled{ReaderAt: bytes.NewReader(b), Size: int64(len(b)), Close: func() error { return nil }}, nil
	}
	tmp, err := os.CreateTemp(tempDir, "clrevents-trace-*")
	if err != nil {
		return nil, fmt.Errorf("%s: temporary copy: %w", name, err)
	}
	cleanup := func() error { return errors.Join(tmp.Close(), os.Remove(tmp.Name())) }
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		cleanup()
		return nil, fmt.Errorf("%s: temporary copy: %w", name, err)
	}
	rest, err := io.Copy(tmp, src)
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("%s: temporary copy: %w", name, err)
	}
	return &Spooled{ReaderAt: tmp, Size: n + rest, Close: cleanup}, nil
}
