// Package ziptrace holds what every way into a zipped or gzipped trace
// shares: finding the one trace inside an archive, or the ETW logs of a
// session to be read as one (through the archive's directory or, when it
// is cut short, its local headers; a gzip file's content), and copying a stream that must
// be read at any offset to memory or a temporary file. Package trace (the front
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
	"runtime"
	"strings"
)

// Members returns the file of zr whose name ends in one of exts
// (case-insensitive), such as PerfView's gcevents/PerfViewData.etl beside
// its log; or, where the archive holds several ETL logs and no other
// trace (a Visual Studio diagnostics session's), all of them in the
// archive's order, to be read as one (see Several). Errors start with
// name (the archive's) and list the members.
func Members(zr *zip.Reader, name string, exts ...string) ([]*zip.File, error) {
	names := make([]string, len(zr.File))
	for i, zf := range zr.File {
		names[i] = zf.Name
	}
	idx, files := traceMembers(names, func(i int) bool { return zr.File[i].FileInfo().IsDir() }, exts)
	if !Several(names, idx) && len(idx) != 1 {
		return nil, fmt.Errorf("%s: zip archive holds %d trace files (%s), want exactly one (members: %s)",
			name, len(idx), strings.Join(exts, ", "), memberList(files))
	}
	out := make([]*zip.File, len(idx))
	for k, i := range idx {
		out[k] = zr.File[i]
	}
	return out, nil
}

// traceMembers returns the indexes of the names that end in one of exts
// (case-insensitive), folders (dir) and the metadata macOS adds to the
// archives it makes (appleDouble) left out, or, when none does, of the
// one member left if it has no extension at all (zip's standard input
// member, "-": its bytes tell its format); and, for errors, the names
// that are not folders.
func traceMembers(names []string, dir func(i int) bool, exts []string) (idx []int, files []string) {
	var others []int // members without an extension
	for j, name := range names {
		if dir(j) {
			continue
		}
		files = append(files, name)
		switch {
		case appleDouble(name):
		case hasExt(name, exts):
			idx = append(idx, j)
		case path.Ext(name) == "":
			others = append(others, j)
		}
	}
	if len(idx) == 0 && len(others) == 1 {
		idx = others
	}
	return idx, files
}

// appleDouble reports whether a member is the metadata macOS's Finder
// and ditto add beside each file they archive: __MACOSX/…/._name.
func appleDouble(name string) bool {
	return strings.HasPrefix(name, "__MACOSX/") || strings.HasPrefix(path.Base(name), "._")
}

// Several reports whether the members idx of names are more than one
// and are all ETL logs: logs that are read as one, merged by time (a
// kernel session's and a user session's). Several EventPipe traces, or a
// trace of each format, are not.
func Several(names []string, idx []int) bool {
	if len(idx) < 2 {
		return false
	}
	for _, i := range idx {
		if !hasExt(names[i], []string{".etl"}) {
			return false
		}
	}
	return true
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
// claims (-1 if unknown): it sizes the memory buffer, and a claim past
// memMax sends src straight to the file; it is not trusted otherwise (a
// false claim costs at most a file). Errors start with name.
func Spool(src io.Reader, hint, memMax int64, tempDir, name string) (*Spooled, error) {
	// The buffer starts at the claimed size (or 64 KB) and doubles up to
	// memMax bytes, never past: a bytes.Buffer would double a full 32 MB
	// buffer to 64 MB just to find the input's end. Whether there is more
	// than memMax is learnt by reading into a small probe.
	size := int64(64 << 10)
	if hint > 0 {
		size = hint
	}
	limit := memMax
	if hint > memMax {
		// A claim past memMax goes straight to a file; were it false,
		// the file would only be slower than memory.
		limit = 0
	}
	buf := make([]byte, 0, max(min(size, limit), 1))
	var probe []byte
	for {
		if int64(len(buf)) == limit {
			var p [512]byte
			n, err := src.Read(p[:])
			if n > 0 {
				probe = p[:n]
				break
			}
			if err == io.EOF {
				return &Spooled{ReaderAt: bytes.NewReader(buf), Size: int64(len(buf)), Close: func() error { return nil }}, nil
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			continue
		}
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(2*int64(cap(buf)), limit))
			copy(grown, buf)
			buf = grown
		}
		n, err := src.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return &Spooled{ReaderAt: bytes.NewReader(buf), Size: int64(len(buf)), Close: func() error { return nil }}, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	tmp, err := os.CreateTemp(tempDir, "clrevents-trace-*")
	if err != nil {
		return nil, fmt.Errorf("%s: temporary copy: %w", name, err)
	}
	cleanup := func() error { return errors.Join(tmp.Close(), os.Remove(tmp.Name())) }
	if runtime.GOOS != "windows" && runtime.GOOS != "plan9" {
		// The name goes at once, the open file stays: the copy is gone
		// when the process ends however it ends (a signal, a closed
		// pipe, a crash), not only when Close runs. (Windows does not
		// remove a file that is open.)
		if err := os.Remove(tmp.Name()); err == nil {
			cleanup = tmp.Close
		}
	}
	n, err := tmp.Write(buf)
	buf = nil // the file holds it now; let the memory go
	if err == nil {
		var m int
		m, err = tmp.Write(probe)
		n += m
	}
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("%s: temporary copy: %w", name, err)
	}
	rest, err := io.Copy(tmp, src)
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("%s: temporary copy: %w", name, err)
	}
	return &Spooled{ReaderAt: tmp, Size: int64(n) + rest, Close: cleanup}, nil
}
