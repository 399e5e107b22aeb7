package nettrace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fsWriter writes V4/V5 framing from NetTraceFormat_v5.md: the magic,
// the FastSerialization header, a Trace object, then block objects (an
// int32 size, zero padding to a 4-byte stream offset, the content, the
// end tag) and the NullReference tag. The contents are opaque to the
// Checker, so they are whatever the test wants.
type fsWriter struct{ b []byte }

func newFSWriter() *fsWriter {
	w := &fsWriter{}
	w.b = append(w.b, "Nettrace"...)
	w.b = append(w.b, fsHeader...)
	w.objHeader("Trace", 4)
	fields := make([]byte, 48)
	binary.LittleEndian.PutUint32(fields[32:], 8) // pointer size
	w.b = append(w.b, fields...)
	w.b = append(w.b, tagEndObject)
	return w
}

func (w *fsWriter) objHeader(name string, version uint32) {
	w.b = append(w.b, tagBeginPrivateObject, tagBeginPrivateObject, tagNullReference)
	w.b = binary.LittleEndian.AppendUint32(w.b, version)
	w.b = binary.LittleEndian.AppendUint32(w.b, version)
	w.b = binary.LittleEndian.AppendUint32(w.b, uint32(len(name)))
	w.b = append(w.b, name...)
	w.b = append(w.b, tagEndObject)
}

// block writes a block object and returns its offset.
func (w *fsWriter) block(name string, content []byte) int {
	at := len(w.b)
	w.objHeader(name, 2)
	w.b = binary.LittleEndian.AppendUint32(w.b, uint32(len(content)))
	for len(w.b)%4 != 0 {
		w.b = append(w.b, 0)
	}
	w.b = append(w.b, content...)
	w.b = append(w.b, tagEndObject)
	return at
}

func (w *fsWriter) end() []byte { return append(w.b, tagNullReference) }

// check feeds data to a Checker in one Write and returns its verdict.
func check(data []byte) error {
	var c Checker
	c.Write(data)
	return c.Close()
}

func verdict(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// checkerTraces are whole streams: real V4/V5 captures (the shared ones
// when they are there) and synthetic V4 and V6 streams.
func checkerTraces(t *testing.T) map[string][]byte {
	// Blocks with headers and no rows, as the Reader reads them.
	w := newFSWriter()
	w.block("MetadataBlock", append([]byte{20, 0, 0, 0}, make([]byte, 16)...)) // 1 byte of padding before it
	w.block("StackBlock", make([]byte, 8))
	w.block("EventBlock", append([]byte{24, 0, 1, 0}, make([]byte, 20)...))
	w.block("SPBlock", make([]byte, 12))
	m := map[string][]byte{
		"fs-synthetic":    w.end(),
		"v6-compressed":   buildV6(true),
		"v6-plain":        buildV6(false),
		"v6-rich":         richV6(),
		"5.0-arraytypes":  loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip")),
		"6.0-checkpoints": loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip")),
		"5.0-golden":      loadTrace(t, "../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace"),
	}
	if _, err := os.Stat(sharedTraces); err != nil {
		t.Logf("shared fixtures not available (%v): checking only the repository's traces", err)
		return m
	}
	for _, name := range []string{"perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip", "perfview/only_managed_samples.nettrace.zip"} {
		m[filepath.Base(name)] = loadTrace(t, filepath.Join(sharedTraces, name))
	}
	return m
}

// TestCheckerAcceptsTraces: every whole stream passes, whatever the
// writes, and every one the Reader reads to its end.
func TestCheckerAcceptsTraces(t *testing.T) {
	for name, data := range checkerTraces(t) {
		t.Run(name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			for err == nil {
				_, err = r.Next()
			}
			if err != io.EOF {
				t.Fatalf("the reader fails: %v", err)
			}
			var c Checker
			for off := 0; off < len(data); {
				n := min(len(data)-off, 1+off%5000)
				if _, err := c.Write(data[off : off+n]); err != nil {
					t.Fatalf("Write at %d: %v", off, err)
				}
				off += n
			}
			if err := c.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			want := 4
			if strings.HasPrefix(name, "v6") {
				want = 6
			}
			if c.Version() != want || c.Offset() != int64(len(data)) {
				t.Fatalf("version %d, offset %d; want %d, %d", c.Version(), c.Offset(), want, len(data))
			}
		})
	}
}

type badStream struct {
	name     string
	data     []byte
	sentinel error
	want     string
}

// badStreams are streams cut or damaged in each way the Checker knows,
// with what it says about them.
func badStreams() []badStream {
	w := newFSWriter()
	meta := w.block("MetadataBlock", bytes.Repeat([]byte{7}, 37))
	ev := w.block("EventBlock", bytes.Repeat([]byte{1}, 65536))
	good := w.end()
	evContent := ev + 15 + len("EventBlock") + 1 + 4
	evContent += (4 - evContent%4) % 4
	set := func(at int, b ...byte) []byte { d := bytes.Clone(good); copy(d[at:], b); return d }
	v6 := buildV6(false)
	return []badStream{
		{"empty", nil, io.ErrUnexpectedEOF, "the stream is empty"},
		{"random", []byte{0x3f, 0x2a, 0x91, 0, 7, 8, 9, 10, 11}, ErrFormat, "not a nettrace stream: it begins with 3f 2a 91 00 07 08 09 0a …"},
		{"text", []byte("<html><body>"), ErrFormat, `not a nettrace stream: it begins with 3c 68 74 6d 6c 3e 3c 62 … ("<html><b")`},
		{"short", []byte{0x3f, 0x2a}, ErrFormat, `not a nettrace stream: it is only 2 bytes long: 3f 2a ("?*")`},
		{"netperf", []byte(fsHeader), ErrUnsupported, "a NetPerf stream (the .NET Core 2.x format), not NetTrace: it begins with 14 00 00 00 21 46 61 73 …"},
		{"cut in the magic", []byte("Nettr"), io.ErrUnexpectedEOF, "the stream ended after 5 bytes, in the middle of its header"},
		{"no FastSerialization", append([]byte("Nettrace\x13\x00\x00\x00"), "!FastSerialization.2"...), ErrFormat,
			`not a nettrace stream: the Nettrace magic is followed by 13 00 00 00 21 46 61 73 74 53 65 72 69 61 6c 69 7a 61 74 69 6f 6e 2e 32 … ("....!FastSerialization.2"), neither a V6 header nor "!FastSerialization.1"`},
		{"cut after the header", good[:32], io.ErrUnexpectedEOF, "the stream ended after its header, at byte 32, before the Trace object"},
		{"cut in the Trace object", good[:60], io.ErrUnexpectedEOF, "the stream ended in the middle of the Trace object at byte 32 (28 bytes of it read)"},
		{"cut in an object header", good[:meta+3], io.ErrUnexpectedEOF, "the stream ended in the middle of an object header at byte 102 (3 bytes of it read)"},
		{"cut in a block", good[:evContent+12000], io.ErrUnexpectedEOF, "the stream ended in the middle of an EventBlock at byte 174 (65,536-byte block, 12,000 bytes read)"},
		{"cut before a block's end tag", good[:len(good)-2], io.ErrUnexpectedEOF, "the stream ended in the middle of an EventBlock at byte 174 (all of its 65,536 bytes read, not its end tag)"},
		{"no end tag", good[:len(good)-1], io.ErrUnexpectedEOF, "the stream ended before the end-of-stream tag, at byte 65,741, after 2 whole blocks (the last an EventBlock)"},
		{"bad object tag", set(ev, 0x3f), ErrFormat, "the stream is not well-formed at byte 174: found 3f where an object (05) or the end-of-stream tag (01) should begin"},
		{"bad type tags", set(ev+1, 4), ErrFormat, "the stream is not well-formed at byte 174: an object header begins 05 04 01, not 05 05 01"},
		{"long type name", set(ev+11, 200), ErrFormat, "the stream is not well-formed at byte 174: an object's type name is 200 bytes long"},
		{"unknown type", set(ev+15, 'X'), ErrFormat, `the stream is not well-formed: the object at byte 174 is of type "XventBlock", none of EventBlock, MetadataBlock, StackBlock, SPBlock`},
		{"type without end tag", set(ev+25, 0), ErrFormat, `the stream is not well-formed: the object type "EventBlock" at byte 174 is followed by 00, not its end tag (06)`},
		{"new block version", set(meta+3, 3), ErrUnsupported, "the MetadataBlock at byte 102 has version 3: this program reads up to 2"},
		{"garbled first block version", set(meta+3, 0, 0, 0, 1), ErrFormat, "the stream is not well-formed: the MetadataBlock at byte 102 has version 16777216, which no writer takes the next step to"},
		{"block version changes", set(ev+3, 3), ErrFormat, "the stream is not well-formed: the EventBlock at byte 174 has version 3, after blocks of version 2 or below"},
		{"negative block version", set(meta+3, 0xfe, 0xff, 0xff, 0xff), ErrFormat, "the stream is not well-formed: the MetadataBlock at byte 102 has version -2"},
		{"huge block", set(ev+26, 0, 0, 0, 0x40), ErrFormat, "the stream is not well-formed: the EventBlock at byte 174 declares 1,073,741,824 bytes (more than 268,435,456)"},
		{"bad padding", set(meta+33, 9), ErrFormat, "the stream is not well-formed: the MetadataBlock at byte 102 has 09 in its padding at byte 135, not 00"},
		{"no block end tag", set(len(good)-2, 0), ErrFormat, "the stream is not well-formed: the EventBlock at byte 174 is followed by 00, not its end tag (06)"},
		{"second Trace", secondTrace(), ErrFormat, "the stream is not well-formed: a second Trace object at byte 102"},
		{"data after the end", append(bytes.Clone(good), 0), ErrFormat, "the stream goes on after its end at byte 65,742"},
		{"Trace version 5", set(35, 5), ErrUnsupported, "a Trace object of version 5 at byte 32: this program reads versions 3 (NetPerf's blocks) and 4 (NetTrace V4 and V5)"},
		{"first object not a Trace", set(47, 'X'), ErrFormat, `not a nettrace stream: its first object, at byte 32, is "Xrace", not a Trace`},
		{"pointer size", set(32+21+32, 2), ErrFormat, "the stream is not well-formed: the Trace object at byte 32 gives a pointer size of 2, not 4 or 8"},
		{"v6 newer", set6(v6, 12, 7), ErrUnsupported, "NetTrace version 7.3: a version newer than this program reads (6)"},
		{"v6 first block", set6(v6, 23, kindEvent), ErrFormat, "not a nettrace stream: the first block, at byte 20, is an EventBlock, not a TraceBlock"},
		{"v6 cut in a block", v6[:200], io.ErrUnexpectedEOF, "the stream ended in the middle of a ThreadBlock at byte 179 (33-byte block, 17 bytes read)"},
		{"v6 cut in an unknown block", v6[:155], io.ErrUnexpectedEOF, "the stream ended in the middle of a block of kind 42 at byte 147 (28-byte block, 4 bytes read)"},
		{"v6 no end block", v6[:len(v6)-4], io.ErrUnexpectedEOF, "the stream ended before the end-of-stream tag, at byte 1,180, after 12 whole blocks (the last a RemoveThreadBlock)"},
		{"v6 after the end", append(bytes.Clone(v6), 0), ErrFormat, "the stream goes on after its end at byte 1,184"},
	}
}

// TestCheckerMessages pins what the Checker says about each kind of bad
// stream.
func TestCheckerMessages(t *testing.T) {
	for _, c := range badStreams() {
		t.Run(c.name, func(t *testing.T) {
			err := check(c.data)
			var ce *CheckError
			if !errors.As(err, &ce) || !errors.Is(err, c.sentinel) {
				t.Fatalf("got %v, want a *CheckError for %v", err, c.sentinel)
			}
			if c.want != "" && err.Error() != c.want {
				t.Fatalf("got  %s\nwant %s", err, c.want)
			}
			t.Log(err)
		})
	}
}

func set6(d []byte, at int, b ...byte) []byte {
	d = bytes.Clone(d)
	copy(d[at:], b)
	return d
}

func secondTrace() []byte {
	w := newFSWriter()
	w.block("Trace", nil)
	return w.end()
}

// TestCheckerSplits: the verdict is the same however the stream is split
// into writes: a byte at a time, in random pieces, and, for the synthetic
// streams (which take the Checker through each of its states, good and
// bad), in two at every position.
func TestCheckerSplits(t *testing.T) {
	type stream struct {
		name  string
		data  []byte
		every bool // split at every position
	}
	var all []stream
	for name, data := range checkerTraces(t) {
		all = append(all, stream{name, data, len(data) < 4096 || name == "fs-synthetic" || strings.HasPrefix(name, "v6")})
	}
	for _, b := range badStreams() {
		all = append(all, stream{b.name, b.data, true})
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, s := range all {
		want := verdict(check(s.data))
		var c Checker
		for i := range s.data {
			c.Write(s.data[i : i+1])
		}
		if got := verdict(c.Close()); got != want {
			t.Fatalf("%s a byte at a time: %s, in one write: %s", s.name, got, want)
		}
		for range 20 {
			var c Checker
			for p := s.data; len(p) > 0; {
				n := min(len(p), rng.IntN(3)*rng.IntN(5000)+1)
				c.Write(p[:n])
				p = p[n:]
			}
			if got := verdict(c.Close()); got != want {
				t.Fatalf("%s in random pieces: %s, in one write: %s", s.name, got, want)
			}
		}
		if !s.every {
			continue
		}
		for i := range len(s.data) + 1 {
			var c Checker
			_, err1 := c.Write(s.data[:i])
			_, err2 := c.Write(s.data[i:])
			// A fault is found in the write that holds its last byte,
			// and is the verdict.
			if err2 == nil && err1 != nil || err2 != nil && c.Close() != err2 {
				t.Fatalf("%s split at %d: Write errors %v, %v and verdict %v", s.name, i, err1, err2, c.Close())
			}
			if got := verdict(c.Close()); got != want {
				t.Fatalf("%s split at %d: %s, in one write: %s", s.name, i, got, want)
			}
		}
	}
}

// TestCheckerCuts: every beginning of a whole stream is a truncation (of
// the real captures, a sample of 20,000), and where a cut falls inside a
// block the Checker names the block the Reader names, at the same offset
// (compared on 300 cuts a stream, 60 of a stream over 1 MiB).
func TestCheckerCuts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for name, data := range checkerTraces(t) {
		t.Run(name, func(t *testing.T) {
			cuts := make([]int, 0, len(data))
			if len(data) <= 20000 {
				for i := range data {
					cuts = append(cuts, i)
				}
			} else {
				for range 20000 {
					cuts = append(cuts, rng.IntN(len(data)))
				}
			}
			inBlocks := 0
			for k, cut := range cuts {
				var c Checker
				c.Write(data[:cut])
				err := c.Close()
				var ce *CheckError
				if !errors.As(err, &ce) || !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("cut at %d: %v, want a truncation", cut, err)
				}
				compare := 300
				if len(data) > 1<<20 {
					compare = 60
				}
				if k%max(1, len(cuts)/compare) != 0 {
					continue
				}
				// What the Reader says of the same bytes (in strict mode,
				// where the error of the cut block is the trace's end).
				r, rerr := NewReader(bytes.NewReader(data[:cut]))
				if rerr == nil {
					r.SetStrict(true)
				}
				for rerr == nil {
					_, rerr = r.Next()
				}
				var re *Error
				if !errors.As(rerr, &re) || !errors.Is(rerr, io.ErrUnexpectedEOF) {
					t.Fatalf("cut at %d: the reader says %v", cut, rerr)
				}
				if re.What == "" && re.Block != "" {
					// Cut in a block's content.
					inBlocks++
					if strings.Replace(ce.Item, "block of kind", "block kind", 1) != re.Block || ce.Offset != re.BlockOffset {
						t.Fatalf("cut at %d: the checker says %q at %d (%v), the reader %q at %d (%v)", cut, ce.Item, ce.Offset, err, re.Block, re.BlockOffset, rerr)
					}
				}
			}
			if inBlocks == 0 {
				t.Fatal("no cut fell inside a block")
			}
		})
	}
}

// TestCheckerMemory: checking a whole stream allocates nothing, however
// long it is and whatever size a block declares, so the Checker's memory
// is its own fixed size.
func TestCheckerMemory(t *testing.T) {
	data := loadTrace(t, "../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace")
	if a := testing.AllocsPerRun(5, func() {
		var c Checker
		for p := data; len(p) > 0; {
			n := min(len(p), 4096)
			c.Write(p[:n])
			p = p[n:]
		}
		if c.Close() != nil {
			panic("not accepted")
		}
	}); a != 0 {
		t.Fatalf("%v allocations to check %d bytes", a, len(data))
	}
	// A block that declares 256 MiB, and a V6 block of 16 MiB.
	w := newFSWriter()
	w.objHeader("EventBlock", 2)
	huge := binary.LittleEndian.AppendUint32(w.b, maxObjectSize)
	v6 := append(bytes.Clone(buildV6(false)[:20+4+64]), 0xFF, 0xFF, 0xFF, kindEvent)
	for _, d := range [][]byte{huge, v6} {
		var c Checker
		if a := testing.AllocsPerRun(5, func() {
			c = Checker{}
			if _, err := c.Write(d); err != nil {
				panic(err)
			}
			c.Write(make([]byte, 0))
		}); a != 0 {
			t.Fatalf("%v allocations", a)
		}
		if err := c.Close(); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("verdict %v", err)
		}
	}
}

// FuzzChecker: no panic; the verdict does not depend on the writes; a
// stream the Reader reads to its end is accepted, unless its padding is
// not zero or bytes follow its end (which the Reader does not look at).
func FuzzChecker(f *testing.F) {
	f.Add(loadTrace(f, filepath.Join(repoTraces, "eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip")), uint16(100))
	f.Add(buildV6(true), uint16(3))
	f.Add(secondTrace(), uint16(40))
	w := newFSWriter()
	w.block("MetadataBlock", append([]byte{20, 0, 0, 0}, make([]byte, 16)...))
	w.block("EventBlock", append([]byte{20, 0, 1, 0}, make([]byte, 16)...))
	f.Add(w.end(), uint16(7))
	f.Add([]byte("Nettrace\x00\x00\x00\x00\x06\x00\x00\x00\x00\x00\x00\x00"), uint16(9))
	f.Fuzz(func(t *testing.T, data []byte, split uint16) {
		want := check(data)
		var c Checker
		at := min(int(split), len(data))
		c.Write(data[:at])
		c.Write(data[at:])
		if verdict(c.Close()) != verdict(want) {
			t.Fatalf("split at %d: %v; in one write: %v", at, c.Close(), want)
		}
		c = Checker{}
		for i := range data {
			c.Write(data[i : i+1])
		}
		if verdict(c.Close()) != verdict(want) {
			t.Fatalf("a byte at a time: %v; in one write: %v", c.Close(), want)
		}
		if want != nil {
			var ce *CheckError
			if !errors.As(want, &ce) || !(errors.Is(want, ErrFormat) || errors.Is(want, ErrUnsupported) || errors.Is(want, io.ErrUnexpectedEOF)) {
				t.Fatalf("verdict %T %v", want, want)
			}
			if ce.Offset < 0 || ce.Offset > int64(len(data)) {
				t.Fatalf("offset %d outside the %d bytes", ce.Offset, len(data))
			}
		}
		r, err := NewReader(bytes.NewReader(data))
		for i := 0; err == nil && i < 100000; i++ {
			_, err = r.Next()
		}
		// The checker reads what a runtime sends over its diagnostics
		// channel, NetTrace; a NetPerf file (the reader reads it too) is
		// not its to accept.
		netPerf := bytes.HasPrefix(data, []byte("\x14\x00\x00\x00!FastSerialization.1"))
		if err == io.EOF && want != nil && !netPerf && !strings.Contains(want.Error(), "padding") && !strings.Contains(want.Error(), "goes on after its end") {
			t.Fatalf("the reader reads it all; the checker says %v", want)
		}
	})
}
