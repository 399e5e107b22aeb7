// Command repeattrace writes a NetTrace file (.nettrace, V4 and later)
// whose body, every block after the Trace object, is the input's repeated
// n times, each block's padding recomputed for its new offset: a large
// trace of real events for measuring how a command's memory grows with
// the trace's size (BENCHMARKS.md, "Parquet export"). Readers see the
// same metadata, stacks and events n times over. (Each repetition's
// EventBlocks state a time range wider by its number of ticks, so that
// no block repeats another byte for byte: the reader would skip it.)
//
//	go run ./bench/repeattrace -n 50 -o /tmp/rep50.nettrace in.nettrace[.zip]
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
	"strings"
)

func main() {
	n := flag.Int("n", 10, "times the body is repeated")
	out := flag.String("o", "", "output `file`")
	flag.Parse()
	if flag.NArg() != 1 || *out == "" || *n < 1 {
		fmt.Fprintln(os.Stderr, "usage: repeattrace -n N -o OUT IN")
		os.Exit(2)
	}
	in, err := readTrace(flag.Arg(0))
	if err == nil {
		var b []byte
		if b, err = repeat(in, *n); err == nil {
			err = os.WriteFile(*out, b, 0o666)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "repeattrace:", err)
		os.Exit(1)
	}
}

// readTrace reads a trace file, or the one file in a zip.
func readTrace(path string) ([]byte, error) {
	if !strings.HasSuffix(path, ".zip") {
		return os.ReadFile(path)
	}
	zr, err := zip.OpenReader(path)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, ".nettrace") {
			rc, err := f.Open()
			if err != nil {
				return nil, err
			}
			defer rc.Close()
			return io.ReadAll(rc)
		}
	}
	return nil, fmt.Errorf("%s: no .nettrace in it", path)
}

// repeat returns the trace b with its body repeated n times. A block
// object is BeginPrivateObject (5), its type (5, NullReference (1), two
// int32 versions, the name's int32 length and bytes, EndObject (6)), the
// block's int32 size, zero padding to a multiple of 4 from the start of
// the stream, the block, EndObject; the stream ends with NullReference.
func repeat(b []byte, n int) ([]byte, error) {
	i := bytes.Index(b, []byte("MetadataBlock"))
	if i < 15 {
		return nil, errors.New("no MetadataBlock: not a NetTrace V4+ trace")
	}
	start := i - 15 // its object's BeginPrivateObject
	type block struct{ head, data []byte }
	var blocks []block
	p := start
	for p < len(b) && b[p] == 5 {
		q := p + 3 + 8
		if q+4 > len(b) {
			return nil, fmt.Errorf("object at %d: truncated", p)
		}
		q += 4 + int(binary.LittleEndian.Uint32(b[q:]))
		if q+5 > len(b) || b[q] != 6 {
			return nil, fmt.Errorf("object at %d: no end of its type", p)
		}
		size := int(binary.LittleEndian.Uint32(b[q+1:]))
		head := b[p : q+5]
		q += 5
		for q%4 != 0 {
			q++
		}
		if q+size+1 > len(b) || b[q+size] != 6 {
			return nil, fmt.Errorf("object at %d: no end", p)
		}
		blocks = append(blocks, block{head, b[q : q+size]})
		p = q + size + 1
	}
	if p != len(b)-1 || b[p] != 1 {
		return nil, fmt.Errorf("offset %d: not the end of the stream", p)
	}
	out := append([]byte(nil), b[:start]...)
	for r := range n {
		for _, bl := range blocks {
			out = append(out, bl.head...)
			for len(out)%4 != 0 {
				out = append(out, 0)
			}
			at := len(out)
			out = append(append(out, bl.data...), 6)
			if r > 0 && bytes.Contains(bl.head, []byte("EventBlock")) {
				widen(out[at:at+len(bl.data)], r)
			}
		}
	}
	return append(out, 1), nil
}

// widen widens the time range an EventBlock's header states (its least
// and greatest timestamps, after the header's size and flags) by d ticks
// each way, so that the blocks of each repetition differ from the
// others' (a reader skips, as damage, an event block that repeats one it
// read before), while their events stay within it.
func widen(blk []byte, d int) {
	if len(blk) < 20 || binary.LittleEndian.Uint16(blk) < 20 {
		return
	}
	lo := binary.LittleEndian.Uint64(blk[4:])
	hi := binary.LittleEndian.Uint64(blk[12:])
	if lo == 0 && hi == 0 || lo < uint64(d) {
		return
	}
	binary.LittleEndian.PutUint64(blk[4:], lo-uint64(d))
	binary.LittleEndian.PutUint64(blk[12:], hi+uint64(d))
}
