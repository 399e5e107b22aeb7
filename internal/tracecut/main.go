// Command tracecut cuts a small trace from a large one, for testdata.
//
// From an ETW log it keeps the buffers it is told to keep, byte for byte,
// and sets the log header's BuffersWritten to their number, so that the
// result is a valid log that the Windows consumer API, TraceEvent and
// package etl read without reporting a cut. An ETL file is a sequence of
// buffers, each stating its own size; events never span buffers, so whole
// buffers can be left out and every event kept stays exactly as it was.
//
//	go run ./internal/tracecut -buffers 0,14-16,121-126 -o out.etl.zip in.etl.zip
//
// From a .NET Core 2.0 EventPipeFile (.netperf, V1/V2), whose records
// follow one another after the Trace object, it keeps the first N records
// (metadata and events) byte for byte and ends them with the trailer the
// runtime writes (the EndObject tag and the forward-reference table, with
// the offsets of the new end), so that the result reads as a whole trace.
// Metadata IDs are stream offsets, which the cut leaves as they were.
//
//	go run ./internal/tracecut -records 1300 -o out.netperf.zip in.netperf.zip
//
// The input may be the trace or a zip holding it; with an output name
// ending in .zip the result is zipped (deflate, no timestamps, one member
// named after the output without .zip), so that the same input and list
// give the same bytes every time.
//
// With -pack FOLDER it packs files already cut into one zip, each as
// FOLDER/its name, in the order given, as a Visual Studio diagnostics
// session holds its logs (the same bytes every time, too):
//
//	go run ./internal/tracecut -pack diaghub -o diaghub.zip diaghub.etl diaghub.kernel.1.etl
//
// testdata/PROVENANCE.md records the command that made each cut file.
package main

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/nettrace"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "tracecut: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("tracecut", flag.ContinueOnError)
	list := fs.String("buffers", "", "ETW log: buffers to keep, by index in file order from 0: a comma-separated list of N or N-M (buffer 0, the log header, is always kept)")
	records := fs.Int("records", 0, ".netperf V1/V2: how many records to keep from the start")
	out := fs.String("o", "", "the output file (.etl or .netperf, or .zip to zip it)")
	pack := fs.String("pack", "", "pack the files given, already cut, into the zip -o, each as this folder/its name")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *pack != "" {
		if fs.NArg() == 0 || !strings.HasSuffix(*out, ".zip") {
			return errors.New("usage: tracecut -pack FOLDER -o OUT.zip FILE ...: at least one file, into a .zip")
		}
		var members []member
		for _, name := range fs.Args() {
			b, err := os.ReadFile(name)
			if err != nil {
				return err
			}
			members = append(members, member{*pack + "/" + filepath.Base(name), b})
		}
		z, err := zipOf(members...)
		if err != nil {
			return err
		}
		return os.WriteFile(*out, z, 0o644)
	}
	if fs.NArg() != 1 || *out == "" || (*list == "") == (*records <= 0) {
		return errors.New("usage: tracecut -buffers LIST -o OUT IN.etl, or tracecut -records N -o OUT IN.netperf")
	}
	var cut []byte
	if *records > 0 {
		in, err := readMember(fs.Arg(0), ".netperf")
		if err != nil {
			return err
		}
		if cut, err = CutNetPerf(in, *records); err != nil {
			return fmt.Errorf("%s: %w", fs.Arg(0), err)
		}
	} else {
		keep, err := parseList(*list)
		if err != nil {
			return fmt.Errorf("-buffers: %w", err)
		}
		in, err := readLog(fs.Arg(0))
		if err != nil {
			return err
		}
		if cut, err = Cut(in, keep); err != nil {
			return fmt.Errorf("%s: %w", fs.Arg(0), err)
		}
	}
	var err error
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
func readLog(name string) ([]byte, error) { return readMember(name, ".etl") }

// readMember reads a file, or the first member with extension ext of a
// zip.
func readMember(name, ext string) ([]byte, error) {
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
		if strings.EqualFold(filepath.Ext(f.Name), ext) {
			rc, err := f.Open()
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", name, f.Name, err)
			}
			defer rc.Close()
			return io.ReadAll(rc)
		}
	}
	return nil, fmt.Errorf("%s: no %s file in the zip", name, ext)
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
func zipped(name string, data []byte) ([]byte, error) { return zipOf(member{name, data}) }

// member is a file to zip.
type member struct {
	name string
	data []byte
}

// zipOf zips members, deflated, without timestamps: the same files give
// the same bytes.
func zipOf(members ...member) ([]byte, error) {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, m := range members {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: m.name, Method: zip.Deflate, Modified: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(m.data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// CutNetPerf returns the first n records (metadata and events) of a .NET
// Core 2.0 EventPipeFile trace (V1/V2), ended with the runtime's trailer:
// the EndObject tag that ends the Trace object, a forward-reference table
// of one entry (the tag's offset) and the offsets of the table's count and
// of its end. Records are an int32 size and that many bytes; the first is
// found from the first event, whose metadata (an ID that is a stream
// offset) the runtime wrote just before it.
func CutNetPerf(data []byte, n int) ([]byte, error) {
	r, err := nettrace.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if v := r.Info().Version; v > 2 {
		return nil, fmt.Errorf("a %s trace of version %d; -records cuts V1/V2 (.NET Core 2.0) traces", r.Info().Format, v)
	}
	r.SetOrder(nettrace.FileOrder)
	e, err := r.Next()
	if err != nil {
		return nil, fmt.Errorf("the first event: %w", err)
	}
	first, ev := int64(e.MetadataID), e.Offset
	if first <= 0 || first >= ev {
		return nil, fmt.Errorf("the first event, at %d, refers to metadata at %d: the first record is not found", ev, first)
	}
	at, seenEvent := first, false
	for i := range n {
		if at+4 > int64(len(data)) {
			return nil, fmt.Errorf("record %d at offset %d: the trace ends (it holds %d records)", i, at, i)
		}
		size := int64(binary.LittleEndian.Uint32(data[at:]))
		if data[at] == 0x06 && i > 0 && at+9 <= int64(len(data)) && int64(binary.LittleEndian.Uint32(data[at+5:])) == at {
			return nil, fmt.Errorf("the trace holds %d records, %d asked for", i, n)
		}
		seenEvent = seenEvent || at == ev
		if at+4+size > int64(len(data)) {
			return nil, fmt.Errorf("record %d at offset %d: size %d runs past the trace's end", i, at, size)
		}
		at += 4 + size
	}
	if !seenEvent && ev < at {
		return nil, fmt.Errorf("the records from offset %d do not reach the first event at %d: not a V1/V2 record stream", first, ev)
	}
	out := slices.Clone(data[:at])
	out = append(out, 0x06)
	out = binary.LittleEndian.AppendUint32(out, 1)
	for _, o := range []int64{at, at + 1, at + 9} {
		if o > math.MaxUint32 {
			return nil, fmt.Errorf("the cut ends at %d, past what a V1/V2 offset holds", at)
		}
		out = binary.LittleEndian.AppendUint32(out, uint32(o))
	}
	return out, nil
}
