package etl

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func TestOpen(t *testing.T) {
	r, err := Open(gcZip)
	if err != nil {
		t.Fatal(err)
	}
	if r.Order() != TimeOrder {
		t.Errorf("order %v", r.Order())
	}
	zipped := readAll(t, r)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if len(zipped) != 71 {
		t.Errorf("%d events, want 71", len(zipped))
	}

	// The same file unzipped, and zipped again at the top level.
	dir := t.TempDir()
	plain := filepath.Join(dir, "g.etl")
	if err := os.WriteFile(plain, gcETL(t), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err = Open(plain)
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, r); !reflect.DeepEqual(got, zipped) {
		t.Error("plain .etl reads differently from the zip")
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}

	for name, files := range map[string][]string{
		"none.zip": {"readme.txt"},
		"two.zip":  {"a.etl", "b/c.etl"},
	} {
		p := filepath.Join(dir, name)
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, f := range files {
			w, _ := zw.Create(f)
			w.Write([]byte("x"))
		}
		zw.Close()
		os.WriteFile(p, buf.Bytes(), 0o644)
		if _, err := Open(p); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err %v", name, err)
		}
	}
	if _, err := Open(filepath.Join(dir, "missing.etl")); err == nil {
		t.Error("missing file opened")
	}
}

// TestOrders checks that FileOrder and TimeOrder deliver the same events,
// that TimeOrder is sorted by timestamp after the header buffer and that
// FileOrder follows the file.
func TestOrders(t *testing.T) {
	for _, name := range []string{"gcevents", "net"} {
		t.Run(name, func(t *testing.T) {
			var data []byte
			if name == "gcevents" {
				data = gcETL(t)
			} else {
				data = netETL(t)
			}
			tr := mustReader(t, data)
			fr := mustFileOrder(t, data)
			if fr.Order() != FileOrder || tr.Order() != TimeOrder {
				t.Fatalf("orders %v %v", fr.Order(), tr.Order())
			}
			if !reflect.DeepEqual(*fr.Header(), *tr.Header()) {
				t.Errorf("headers differ:\n%+v\n%+v", *fr.Header(), *tr.Header())
			}
			te, fe := readAll(t, tr), readAll(t, fr)
			if len(te) != len(fe) {
				t.Fatalf("TimeOrder %d events, FileOrder %d", len(te), len(fe))
			}
			for i := 1; i < len(fe); i++ {
				if fe[i].Buffer < fe[i-1].Buffer || fe[i].Buffer == fe[i-1].Buffer && fe[i].Offset <= fe[i-1].Offset {
					t.Fatalf("FileOrder event %d goes back in the file", i)
				}
			}
			for i := 1; i < len(te); i++ {
				if te[i].Buffer != 0 && te[i-1].Buffer != 0 && te[i].TS < te[i-1].TS {
					t.Fatalf("TimeOrder event %d at %d goes back in time from %d", i, te[i].TS, te[i-1].TS)
				}
			}
			sort.Slice(te, func(i, j int) bool {
				return te[i].Buffer < te[j].Buffer || te[i].Buffer == te[j].Buffer && te[i].Offset < te[j].Offset
			})
			if !reflect.DeepEqual(te, fe) {
				t.Error("the two orders deliver different events")
			}
		})
	}
}

func TestNetDetails(t *testing.T) {
	netETL(t)              // skips when absent
	r, err := Open(netZip) // a zip holding LogFile.txt and the .etl
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := r.Header()
	if !h.Compressed() || h.ClockType != ClockQPC || h.Frequency != 10_000_000 {
		t.Errorf("header %+v", *h)
	}
	if maj, min := h.OSVersion(); maj != 6 || min != 2 {
		t.Errorf("OS version %d.%d, want 6.2", maj, min)
	}
	var stacks, related, ptr4 int
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(e.Stack) > 0 {
			stacks++
			raw, ok := e.ExtendedItem(ExtStackTrace64)
			if !ok || len(raw) != 8+8*len(e.Stack) || e.StackMatchID != binary.LittleEndian.Uint64(raw) {
				t.Fatalf("stack item %x vs %d frames", raw, len(e.Stack))
			}
		}
		if !e.RelatedActivityID.IsZero() {
			related++
		}
		if e.ProviderGUID == runtimeGUID && e.PointerSize == 4 {
			ptr4++
		}
	}
	if stacks < 1000 || related == 0 || ptr4 == 0 {
		t.Errorf("stacks %d, related activity ids %d, 32-bit runtime events %d", stacks, related, ptr4)
	}
}

// gcBuffers splits the gcevents trace into its buffers.
func gcBuffers(t testing.TB) [][]byte {
	data := gcETL(t)
	var bufs [][]byte
	for off := 0; off < len(data); {
		n := int(binary.LittleEndian.Uint32(data[off:]))
		bufs = append(bufs, data[off:off+n])
		off += n
	}
	return bufs
}

// bigGC builds a larger log: the gcevents header buffer, then its other
// buffers repeated n times, each copy numbered as a buffer of its own
// (WMI_BUFFER_HEADER.SequenceNumber) and counted in the log header's
// BuffersWritten, as ETW writes a log.
func bigGC(t testing.TB, n int) []byte {
	bufs := gcBuffers(t)
	out := append([]byte(nil), bufs[0]...)
	seq := uint64(1)
	for i := 0; i < n; i++ {
		for _, b := range bufs[1:] {
			at := len(out)
			out = append(out, b...)
			binary.LittleEndian.PutUint64(out[at+24:], seq)
			// Each copy flushed at its own time, as ETW's buffers are:
			// a copy with the same header but for its number is a
			// repeat (noteBuffer).
			binary.LittleEndian.PutUint64(out[at+16:], binary.LittleEndian.Uint64(out[at+16:])+uint64(i))
			seq++
		}
	}
	// TRACE_LOGFILE_HEADER.BuffersWritten, in the payload of the log
	// header event (a system header after the buffer header).
	binary.LittleEndian.PutUint32(out[bufferHeaderSize+systemHeaderSize+36:], uint32(seq))
	return out
}

func TestTruncated(t *testing.T) {
	data := gcETL(t)
	full := readAll(t, mustFileOrder(t, data))
	// Cut inside each buffer after the first, and inside buffer headers.
	for _, cut := range []int{0x10000 + 0x100, 0x20000 + 0x300, 0x40000 + 0x1000, 0x40000 + 40, 0x40000 + 0x1860 - 3} {
		for _, order := range []Order{FileOrder, TimeOrder} {
			var r *Reader
			if order == FileOrder {
				r = mustFileOrder(t, data[:cut])
			} else {
				r = mustReader(t, data[:cut])
			}
			got, err := readUntilErr(r, 1e6)
			if !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "truncated") {
				t.Fatalf("cut %#x %v: err %v", cut, order, err)
			}
			// Every event wholly before the cut, and nothing else.
			want := 0
			for _, e := range full {
				if e.Offset+int64(eventEnd(e)) <= int64(cut) {
					want++
				}
			}
			if len(got) != want {
				t.Errorf("cut %#x %v: %d events, want %d", cut, order, len(got), want)
			}
			var de *DamageError
			if !errors.As(err, &de) || !errors.Is(err, ErrDamaged) || len(de.Damage) != 1 || !reflect.DeepEqual(de.Damage, r.Damage()) {
				t.Errorf("cut %#x %v: final error %T %v, damage %+v", cut, order, err, err, r.Damage())
			}
			if _, again := r.Next(); again != err {
				t.Errorf("cut %#x %v: after the final error: %v", cut, order, again)
			}
		}
	}
	// A file shorter than its first buffer header.
	if _, err := NewReader(bytes.NewReader(data[:40])); !errors.Is(err, ErrTruncated) {
		t.Errorf("40 bytes: %v", err)
	}
	if _, err := NewFileOrderReader(bytes.NewBuffer(data[:40])); !errors.Is(err, ErrTruncated) {
		t.Errorf("40 bytes, FileOrder: %v", err)
	}
}

// eventEnd returns the size of an event's header plus payload, which is
// its end relative to Offset for the gcevents events (EVENT_HEADER without
// extended items, or the system header).
func eventEnd(e ev) int {
	switch e.Kind {
	case SystemHeader:
		return systemHeaderSize + e.DataLen
	}
	return eventHeaderSize + e.DataLen
}

func TestTruncatedCompressed(t *testing.T) {
	data := netETL(t)
	cut := len(data) / 2
	r := mustReader(t, data[:cut])
	got, err := readUntilErr(r, 1e7)
	if !errors.Is(err, ErrTruncated) {
		t.Fatalf("err %v", err)
	}
	if len(got) < 1000 {
		t.Errorf("only %d events before the cut", len(got))
	}
}

func TestErrorsNameTheOffset(t *testing.T) {
	data := gcETL(t)
	bad := append([]byte(nil), data...)
	// Buffer 1 starts at 0x10000; its first event at 0x10048. Give it an
	// unknown header type.
	bad[0x10048+2] = 0x33
	want := "etl: buffer 1 at offset 65536: event at 65608: unsupported event header type 51"
	full := len(readAll(t, mustFileOrder(t, data)))
	r := mustFileOrder(t, bad)
	got, err := readUntilErr(r, 1e6)
	var de *DamageError
	if !errors.As(err, &de) || len(de.Damage) != 1 {
		t.Fatalf("error %T %v", err, err)
	}
	d := de.Damage[0]
	if d.Buffer != 1 || d.Offset != 0x10048 || d.Length != 0x10000-0x48 || d.Events != -1 || !strings.HasPrefix(d.Err.Error(), want) {
		t.Errorf("damage %+v: %v", d, d.Err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "etl: damaged buffer skipped (65,464 bytes): buffer 1 at offset 65536: event at 65608: ") {
		t.Errorf("final error %q", msg)
	}
	var fe *FormatError
	if !errors.As(err, &fe) || fe != d.Err {
		t.Errorf("errors.As finds %v, not the damage's error", fe)
	}
	// The rest of buffer 1 is dropped; the other buffers still read.
	if n := len(got); n >= full || n < full-20 {
		t.Errorf("%d events after the error, full file has %d", n, full)
	}

	// A hostile buffer size: damage, not a 4 GB allocation, and the
	// buffers after it are read.
	bad = append([]byte(nil), data...)
	binary.LittleEndian.PutUint32(bad[0x10000:], 0xFFFFFFF0)
	for _, r := range []*Reader{mustReader(t, bad), mustFileOrder(t, bad)} {
		got, err := readUntilErr(r, 1e6)
		if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "buffer 1 at offset 65536: buffer size 4294967280 is out of range [72, 65536]") {
			t.Errorf("%v: err %v", r.Order(), err)
		}
		if dm := r.Damage(); len(dm) != 1 || dm[0].Offset != 0x10000 || dm[0].Length != 0x10000 {
			t.Errorf("%v: damage %+v", r.Order(), dm)
		}
		for _, e := range got {
			if e.Buffer == 1 {
				t.Fatalf("%v: %v delivered from the skipped buffer", r.Order(), e)
			}
		}
		if len(got) < 40 {
			t.Errorf("%v: %d events", r.Order(), len(got))
		}
	}
	// Not an ETL file at all.
	if _, err := NewReader(strings.NewReader(strings.Repeat("hello, world ", 100))); err == nil {
		t.Error("text accepted")
	}
}

func TestZeroAllocs(t *testing.T) {
	check := func(t *testing.T, data []byte, order Order) {
		var r *Reader
		if order == TimeOrder {
			r = mustReader(t, data)
		} else {
			r = mustFileOrder(t, data)
		}
		// Warm up: the first buffers of each stream size the reader's memory.
		for i := 0; i < 2000; i++ {
			if _, err := r.Next(); err != nil {
				t.Fatal(err)
			}
		}
		allocs := testing.AllocsPerRun(2000, func() {
			if _, err := r.Next(); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%v allocations per event", allocs)
		}
	}
	big := bigGC(t, 100)
	t.Run("plain/TimeOrder", func(t *testing.T) { check(t, big, TimeOrder) })
	t.Run("plain/FileOrder", func(t *testing.T) { check(t, big, FileOrder) })
	t.Run("compressed/TimeOrder", func(t *testing.T) { check(t, netETL(t), TimeOrder) })
	t.Run("compressed/FileOrder", func(t *testing.T) { check(t, netETL(t), FileOrder) })
}

func BenchmarkReader(b *testing.B) {
	for _, c := range []struct {
		name string
		data func(testing.TB) []byte
	}{
		{"plain", func(t testing.TB) []byte { return bigGC(t, 50) }},
		{"compressed", func(t testing.TB) []byte { return netETL(t) }},
	} {
		for _, order := range []Order{TimeOrder, FileOrder} {
			b.Run(c.name+"/"+order.String(), func(b *testing.B) {
				data := c.data(b)
				b.ReportAllocs()
				b.SetBytes(int64(len(data)))
				events := 0
				for i := 0; i < b.N; i++ {
					var r *Reader
					var err error
					if order == TimeOrder {
						r, err = NewReader(bytes.NewReader(data))
					} else {
						r, err = NewFileOrderReader(io.MultiReader(bytes.NewReader(data)))
					}
					if err != nil {
						b.Fatal(err)
					}
					for {
						_, err := r.Next()
						if err == io.EOF {
							break
						}
						if err != nil {
							b.Fatal(err)
						}
						events++
					}
				}
				b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			})
		}
	}
}

// TestTruncatedMissing: a log cut short says how many of the buffers its
// header counts the file lacks, on the record of the buffer the cut falls
// in, or on a record of its own when the cut falls between two buffers,
// whose message says the log is cut short (nothing in the file was
// skipped).
func TestTruncatedMissing(t *testing.T) {
	data := gcETL(t)
	written := int(mustReader(t, data).Header().BuffersWritten)
	if written < 4 || len(data) != written*0x10000 {
		t.Fatalf("the log holds %d bytes, its header counts %d buffers of 64 KiB", len(data), written)
	}
	for _, c := range []struct {
		cut     int
		missing int
		msg     string
	}{
		{0x20000, written - 2, fmt.Sprintf("etl: the log is cut short, %d buffers missing at its end: buffer 2 at offset 131072: ", written-2)},
		// The cut buffer's whole events are read, its last 192 bytes not.
		{0x20000 + 0x300, written - 3, fmt.Sprintf("etl: damaged buffer skipped (192 bytes; then %d buffers missing at the log's end): buffer 2 at offset 131072: ", written-3)},
	} {
		for _, order := range []Order{FileOrder, TimeOrder} {
			r := mustReader(t, data[:c.cut])
			if order == FileOrder {
				r = mustFileOrder(t, data[:c.cut])
			}
			_, err := readUntilErr(r, 1e6)
			d := r.Damage()
			if len(d) != 1 || d[0].Missing != c.missing {
				t.Errorf("cut %#x %v: damage %+v, want one record with %d buffers missing", c.cut, order, d, c.missing)
			}
			if err == nil || !strings.HasPrefix(err.Error(), c.msg) || !errors.Is(err, ErrTruncated) {
				t.Errorf("cut %#x %v: %v, want %q…", c.cut, order, err, c.msg)
			}
		}
	}
}

// TestFormatErrorCompressed: an event's offset in a compressed buffer is
// no file offset; the error says where it is in the expanded buffer.
func TestFormatErrorCompressed(t *testing.T) {
	e := &FormatError{Buffer: 12, BufferOffset: 183810, EventOffset: 183810 + 46736, Compressed: true, Err: errors.New("bad")}
	if got, want := e.Error(), "etl: buffer 12 at offset 183810: event at byte 46736 of the buffer expanded (it is stored compressed): bad"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	e.Compressed = false
	if got, want := e.Error(), "etl: buffer 12 at offset 183810: event at 230546: bad"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
