// Command tracecut cuts a small ETW log from a large one, for testdata: it
// keeps the buffers it is told to keep, byte for byte, and sets the log
// header's BuffersWritten to their number, so that the result is a valid
// log that the Windows consumer API, TraceEvent and package etl read
// without reporting a cut. An ETL file is a sequence of buffers, each
// stating its own size; events never span buffers, so whole buffers can be
// left out and every event kept stays exactly as it was.
//
//	go run ./internal/tracecut -buffers 0,14-16,121-126 -o out.etl.zip in.etl.zip
//
// The input may be a .etl file or a zip holding one; with an output name
// ending in .zip the result is zipped (deflate, no timestamps, one member
// named after the output without .zip), so that the same input and buffer
// list give the same bytes every time. testdata/PROVENANCE.md records the
// command that made each cut file.
package main

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clrgo/clrevents/etl"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "tracecut: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("tracecut", flag.ContinueOnError)
	list := fs.String("buffers", "", "buffers to keep, by index in file order from 0: a comma-separated list of N or N-M (buffer 0, the log header, is always kept)")
	out := fs.String("o", "", "the output file (.etl, or .zip to zip it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 || *out == "" || *list == "" {
		return errors.New("usage: tracecut -buffers LIST -o OUT IN")
	}
	keep, err := parseList(*list)
	if err != nil {
		return fmt.Errorf("-buffers: %w", err)
	}
	in, err := readLog(fs.Arg(0))
	if err != nil {
		return err
	}
	cut, err := Cut(in, keep)
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Arg(0), err)
	}
	if strings.HasSuffix(*out, ".zip") {
		cut, err = zipped(strings.TrimSuffix(filepath.Base(*out), ".zip"), cut)
		if err != nil {
			return err
		}
	}
	return os.WriteFile(*out, cut, 0o644)
}

// parseList reads "0,3,5-9" into a sorted set of indexes.
func parseList(s string) ([]int, error) {
	var keep []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("%q is not a buffer index or range", part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("%q is not a buffer range", part)
			}
		}
		for i := a; i <= b; i++ {
			keep = append(keep, i)
		}
	}
	slices.Sort(keep)
	return slices.Compact(keep), nil
}

// readLog reads a .etl file, or the one .etl inside a zip.
func readLog(name string) ([]byte, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(b, []byte("PK\x03\x04")) {
		return b, nil
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for _, f := range zr.File {
		if strings.EqualFold(filepath.Ext(f.Name), ".etl") {
			rc, err := f.Open()
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", name, f.Name, err)
			}
			defer rc.Close()
			return io.ReadAll(rc)
		}
	}
	return nil, fmt.Errorf("%s: no .etl file in the zip", name)
}

// bufferHeaderSize is the WMI_BUFFER_HEADER's size; a buffer's first four
// bytes are its size in the file.
const bufferHeaderSize = 72

// Cut returns the log made of the buffers of log whose indexes keep lists
// (buffer 0, which holds the log header, is always kept), with the log
// header's BuffersWritten set to their number.
func Cut(log []byte, keep []int) ([]byte, error) {
	var bufs [][]byte
	for off := 0; off < len(log); {
		if len(log)-off < bufferHeaderSize {
			return nil, fmt.Errorf("buffer %d at offset %d: %d bytes left, too few for a buffer header", len(bufs), off, len(log)-off)
		}
		size := int(binary.LittleEndian.Uint32(log[off:]))
		if size < bufferHeaderSize || size > len(log)-off {
			return nil, fmt.Errorf("buffer %d at offset %d: size %d does not fit the %d bytes left", len(bufs), off, size, len(log)-off)
		}
		bufs = append(bufs, log[off:off+size])
		off += size
	}
	if len(keep) == 0 || keep[0] != 0 {
		keep = append([]int{0}, keep...)
	}
	var out []byte
	for _, i := range keep {
		if i >= len(bufs) {
			return nil, fmt.Errorf("buffer %d asked for, the log holds %d", i, len(bufs))
		}
		out = append(out, bufs[i]...)
	}
	if err := setBuffersWritten(out, bufs[0], len(keep)); err != nil {
		return nil, err
	}
	return out, nil
}

// setBuffersWritten finds the log header's payload in the first buffer (by
// reading the first event with package etl, and locating its payload in
// the buffer's bytes) and sets its BuffersWritten field (offset 36) to n.
func setBuffersWritten(out, first []byte, n int) error {
	r, err := etl.NewReader(bytes.NewReader(first))
	if err != nil {
		return fmt.Errorf("reading the log header: %w", err)
	}
	e, err := r.Next()
	if err != nil {
		return fmt.Errorf("reading the log header event: %w", err)
	}
	p := e.Payload
	at := bytes.Index(first, p)
	if len(p) < 40 || at < 0 || bytes.Contains(first[at+1:], p) {
		return errors.New("the log header's payload is not found once in the first buffer (a compressed first buffer is not supported)")
	}
	if got := binary.LittleEndian.Uint32(p[36:]); got != r.Header().BuffersWritten {
		return fmt.Errorf("BuffersWritten at payload offset 36 reads %d, the header says %d", got, r.Header().BuffersWritten)
	}
	binary.LittleEndian.PutUint32(out[at+36:], uint32(n))
	return nil
}

// zipped returns data as a zip with one member, deflated, with a fixed
// modification time so that the bytes depend on the data alone.
func zipped(member string, data []byte) ([]byte, error) {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: member, Method: zip.Deflate, Modified: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
