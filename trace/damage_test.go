package trace

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/internal/tracetest"
	"github.com/clrgo/clrevents/nettrace"
	"hash/crc32"
	"runtime"
)

// damaged returns the trace at path (unzipped) with n random bytes
// written over it at offset at.
func damaged(t *testing.T, path string, at, n int) []byte {
	t.Helper()
	b := mustRead(t, path)
	if strings.HasSuffix(path, ".zip") {
		b = unzipOne(t, b)
	}
	rng := rand.New(rand.NewPCG(uint64(at), 7))
	for i := at; i < at+n && i < len(b); i++ {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// zipped returns b as a zip holding one member.
func zipped(t *testing.T, member string, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create(member)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(b)
	zw.Close()
	return buf.Bytes()
}

// TestDamage reads real traces damaged in the middle (64 random bytes)
// through every way in (a file, a zip, a pipe, a zip through a pipe) and
// in both orders: every event of the intact trace outside the damage comes
// out, Damage records the range, and the trace ends with a *DamageError
// that names the input and the offset, errors.Is ErrDamaged, and errors.As
// the format reader's error; with WithStrict it ends at the damage with the
// format reader's error instead.
func TestDamage(t *testing.T) {
	for _, c := range []struct {
		path   string
		member string
		at     int
	}{
		// .NET Core 3.0 EventPipe: 4.8 MB, damage in an EventBlock.
		{"../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip", "t.nettrace", 2_000_000},
		// The ETW cut of the 4.5.2 log: compressed buffers.
		{"../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip", "t.etl", 300_000},
	} {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			intact := readOffsets(t, c.path)
			data := damaged(t, c.path, c.at, 64)
			dir := t.TempDir()
			file := filepath.Join(dir, c.member)
			zipFile := file + ".zip"
			if err := os.WriteFile(file, data, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(zipFile, zipped(t, c.member, data), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, how := range []string{"file", "zip", "pipe", "zip pipe"} {
				for _, order := range []Order{TimeOrder, FileOrder} {
					open := func(opts ...Option) *Reader {
						opts = append(opts, WithOrder(order))
						var r *Reader
						var err error
						switch how {
						case "file":
							r, err = Open(file, opts...)
						case "zip":
							r, err = Open(zipFile, opts...)
						case "pipe":
							r, err = NewReader(onlyReader{bytes.NewReader(data)}, append(opts, WithName("pipe"))...)
						default:
							r, err = NewReader(onlyReader{bytes.NewReader(mustRead(t, zipFile))}, append(opts, WithName("pipe"))...)
						}
						if err != nil {
							t.Fatalf("%s %v: %v", how, order, err)
						}
						return r
					}
					r := open()
					got := map[int64]bool{}
					var end error
					for {
						e, err := r.Next()
						if err != nil {
							end = err
							break
						}
						got[e.Offset()] = true
					}
					missing := 0
					for _, off := range intact {
						if !got[off] {
							missing++
						}
					}
					// One damaged block or buffer: a few hundred events at most.
					if missing > len(intact)/100 || missing == 0 {
						t.Errorf("%s %v: %d of %d events missing", how, order, missing, len(intact))
					}
					var de *DamageError
					if !errors.As(end, &de) || !errors.Is(end, ErrDamaged) {
						t.Fatalf("%s %v: the trace ended with %v, want a *DamageError", how, order, end)
					}
					var ne *nettrace.Error
					var ee *etl.FormatError
					if !errors.As(end, &ne) && !errors.As(end, &ee) {
						t.Errorf("%s %v: %v: no format reader's error in it", how, order, end)
					}
					d := r.Damage()
					if len(d) == 0 || len(de.Damage) != len(d) || d[0].Offset > int64(c.at+64) || d[0].Offset+d[0].Length < int64(c.at) {
						t.Errorf("%s %v: damage %v, want a range over %d+64", how, order, d, c.at)
					}
					if !strings.Contains(end.Error(), "offset "+strconv.FormatInt(d[0].Offset, 10)) || !strings.HasPrefix(end.Error(), r.Name()+": ") {
						t.Errorf("%s %v: %q does not name the input and the offset", how, order, end)
					}
					if _, err := r.Next(); err == nil || err.Error() != end.Error() {
						t.Errorf("%s %v: after the end, %v", how, order, err)
					}
					r.Close()

					// Strict: the first damage ends the trace, with the
					// format reader's error.
					r = open(WithStrict())
					n := 0
					for {
						if _, err := r.Next(); err != nil {
							end = err
							break
						}
						n++
					}
					r.Close()
					if errors.As(end, &de) || errors.Is(end, ErrDamaged) || end == io.EOF || n >= len(got) {
						t.Errorf("%s %v strict: %d events, then %v", how, order, n, end)
					}
				}
			}
			t.Logf("%d events intact", len(intact))
		})
	}
}

// readOffsets returns the offsets of every event of the intact trace.
func readOffsets(t *testing.T, path string) []int64 {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []int64
	for {
		e, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e.Offset())
	}
}

// TestDecodeErrors: DecodeErrors counts, keeps the first three in full,
// and says how many more.
func TestDecodeErrors(t *testing.T) {
	var d DecodeErrors
	if d.Err() != nil {
		t.Fatal("an empty DecodeErrors has an error")
	}
	for i := range 5 {
		d.Add(&DecodeError{Name: "x.nettrace", Offset: int64(100 * i), Err: errors.New("GCStart_V2: field Depth: short")})
	}
	err := d.Err()
	want := "5 events did not decode; the first 3: x.nettrace: event at offset 0: GCStart_V2: field Depth: short; x.nettrace: event at offset 100: GCStart_V2: field Depth: short; x.nettrace: event at offset 200: GCStart_V2: field Depth: short (and 2 more)"
	if err.Error() != want || !errors.Is(err, ErrUndecoded) || d.Len() != 5 {
		t.Errorf("%q\nwant %q", err, want)
	}
	var de *DecodeError
	if !errors.As(err, &de) || de.Offset != 0 {
		t.Errorf("errors.As: %v", de)
	}
	var one DecodeErrors
	one.Add(errors.New("e"))
	if got := one.Err().Error(); got != "1 event did not decode: e" {
		t.Errorf("%q", got)
	}
}

// TestCutZip reads zipped traces cut short, as a download or copy that
// stopped leaves them: the archive's directory is gone, and the trace is
// read from its member's local header. Through a file and a pipe, in both
// orders: the events before the cut come out (in file order, the intact
// trace's first ones), and the trace ends as one cut short; an archive
// that lost only its directory gives every event and io.EOF.
func TestCutZip(t *testing.T) {
	for _, c := range []struct {
		path   string
		cut    error // what the end of a trace cut short wraps
		prefix bool  // file order is the order of the bytes (not ETL's, where a stack walk follows its event)
	}{
		// Sizes in the member's local header, as PerfView writes them.
		{"../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip", io.ErrUnexpectedEOF, true},
		// Sizes after the data (a data descriptor), as Go's zip.Writer
		// writes them.
		{"../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip", etl.ErrTruncated, false},
	} {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			whole := mustRead(t, c.path)
			intact, end := readZipOffsets(t, whole, "file", FileOrder)
			if end != io.EOF || len(intact) == 0 {
				t.Fatalf("intact: %d events, then %v", len(intact), end)
			}
			prev := 0
			for _, cut := range []int{len(whole) * 3 / 10, len(whole) * 6 / 10, len(whole) * 95 / 100, len(whole) - 22} {
				data := whole[:cut]
				dirOnly := cut == len(whole)-22 // the end of central directory record
				for _, how := range []string{"file", "pipe"} {
					got, end := readZipOffsets(t, data, how, FileOrder)
					name := fmt.Sprintf("cut at %d of %d, %s", cut, len(whole), how)
					if c.prefix && (len(got) > len(intact) || !slices.Equal(got, intact[:len(got)])) {
						t.Fatalf("%s: the %d events read are not the intact trace's first", name, len(got))
					}
					if !c.prefix && !subset(got, intact) {
						t.Fatalf("%s: the %d events read are not all the intact trace's", name, len(got))
					}
					switch {
					case dirOnly:
						if end != io.EOF || len(got) != len(intact) {
							t.Errorf("%s: %d of %d events, then %v; want all and io.EOF", name, len(got), len(intact), end)
						}
					default:
						var de *DamageError
						if !errors.As(end, &de) || !errors.Is(end, c.cut) || len(got) <= prev || len(got) == len(intact) {
							t.Errorf("%s: %d of %d events (%d at the cut before), then %v; want more and a trace cut short", name, len(got), len(intact), prev, end)
						}
					}
					timeOrder, tend := readZipOffsets(t, data, how, TimeOrder)
					slices.Sort(timeOrder)
					sorted := slices.Sorted(slices.Values(got))
					if !slices.Equal(timeOrder, sorted) || (tend == io.EOF) != (end == io.EOF) {
						t.Errorf("%s: time order read %d events, then %v; file order %d, then %v", name, len(timeOrder), tend, len(got), end)
					}
				}
				if !dirOnly {
					got, _ := readZipOffsets(t, data, "file", FileOrder)
					prev = len(got)
				}
			}
		})
	}
}

// readZipOffsets reads the zip archive b through a file or a pipe and
// returns its events' offsets and the error that ended it.
func readZipOffsets(t *testing.T, b []byte, how string, order Order) ([]int64, error) {
	t.Helper()
	return readZip(t, b, how, order, (*Event).Offset)
}

// readZip reads the zip archive b through a file or a pipe and returns
// what key makes of each event and the error that ended it.
func readZip[K any](t *testing.T, b []byte, how string, order Order, key func(*Event) K) ([]K, error) {
	t.Helper()
	var r *Reader
	var err error
	if how == "file" {
		p := filepath.Join(t.TempDir(), "cut.zip")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err = Open(p, WithOrder(order))
	} else {
		r, err = NewReader(onlyReader{bytes.NewReader(b)}, WithOrder(order))
	}
	if err != nil {
		t.Fatalf("%s: %v", how, err)
	}
	defer r.Close()
	var out []K
	for {
		e, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, key(e))
	}
}

// subset reports whether every element of a is in b.
func subset(a, b []int64) bool {
	in := make(map[int64]bool, len(b))
	for _, x := range b {
		in[x] = true
	}
	for _, x := range a {
		if !in[x] {
			return false
		}
	}
	return true
}

// TestCutZipEarly: an archive cut before its trace member's first byte
// says so, through a file and a pipe; one cut inside the local header
// says that no trace was found before the archive's end.
func TestCutZipEarly(t *testing.T) {
	whole := mustRead(t, "../testdata/traces/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip")
	data := 30 + binary.LittleEndian.Uint16(whole[26:]) + binary.LittleEndian.Uint16(whole[28:]) // the member's data
	for _, c := range []struct {
		cut  int
		want string
	}{
		{int(data) + 1, "eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace: the archive is cut short before the member's first byte: unexpected EOF"},
		{20, "zip archive: zip: not a valid zip file, and its local headers hold 0 trace files (.nettrace, .netperf, .etl), want exactly one: the archive ends inside the local header at offset 0"},
	} {
		p := filepath.Join(t.TempDir(), "cut.zip")
		if err := os.WriteFile(p, whole[:c.cut], 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(p); err == nil || err.Error() != p+": "+c.want {
			t.Errorf("file cut at %d: %v\nwant %s: %s", c.cut, err, p, c.want)
		}
		if _, err := NewReader(onlyReader{bytes.NewReader(whole[:c.cut])}, WithName("pipe")); err == nil || err.Error() != "pipe: "+c.want {
			t.Errorf("pipe cut at %d: %v\nwant pipe: %s", c.cut, err, c.want)
		}
	}
}

// TestZipFalseSize: a member that claims a size its archive cannot hold
// (30 MB in a 3 KB archive) does not size a buffer of that much, and one
// that holds fewer bytes than the directory says is named so.
func TestZipFalseSize(t *testing.T) {
	log := tracetest.Bytes(t, "../testdata/traces/gcevents.etl.zip")
	crc := crc32.ChecksumIEEE(log)
	zipOf := func(data []byte, usize uint64) []byte {
		return tracetest.Zip(t, "a.etl", zip.Deflate, data, crc, usize)
	}
	a := zipOf(log, 30<<20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r, err := NewReader(bytes.NewReader(a), WithName("pipe"))
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if got, most := after.TotalAlloc-before.TotalAlloc, uint64(8<<20); got > most {
		t.Errorf("a %d-byte archive claiming 30 MB: opening it allocated %d bytes, want under %d", len(a), got, most)
	}

	// Fewer bytes than the directory says, before the format is known.
	short := zipOf(log[:40], uint64(len(log)))
	if _, err := NewReader(bytes.NewReader(short), WithName("pipe")); err == nil || err.Error() != "pipe: a.etl: the member holds fewer bytes than the archive's directory says: unexpected EOF" {
		t.Errorf("short member: %v", err)
	}

	// A checksum that does not match: every event is read, then the
	// archive's error ends the trace (no range is known to be damaged).
	crc++
	r, err = NewReader(bytes.NewReader(zipOf(log, uint64(len(log)))), WithName("pipe"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n, end := tracetest.Drain(r.Next)
	var de *DamageError
	if n != 71 || !errors.Is(end, zip.ErrChecksum) || errors.As(end, &de) || end.Error() != "pipe: a.etl: CRC-32 f20946c3, the archive says f20946c4: zip: checksum error" {
		t.Errorf("wrong checksum: %d events, then %v; want all 71, then the checksum error", n, end)
	}
}

// TestZipNetTraceChecked: an EventPipe trace ends with its own end tag,
// and its reader once read no further, so the archive's checks of a
// zipped one ran only when the tag was the member's last byte: a member
// whose checksum or size did not match ended in io.EOF, as if sound. The
// rest of the member is read at the trace's end (bytes there are damage);
// a mismatch ends the trace after all its events, as an ETL log's does.
func TestZipNetTraceChecked(t *testing.T) {
	trace := tracetest.Bytes(t, "../testdata/traces/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip")
	zipOf := func(method uint16, crc uint32, usize int, extra []byte) []byte {
		return tracetest.Zip(t, "a.nettrace", method, append(bytes.Clone(trace), extra...), crc, uint64(usize))
	}
	crc := crc32.ChecksumIEEE(trace)
	tail := []byte{1, 2, 3}
	crcTail := crc32.ChecksumIEEE(append(bytes.Clone(trace), tail...))
	afterEnd := "pipe: a.nettrace: nettrace: 1 damaged range skipped (3 bytes); the first: 3 bytes at offset 486814: nettrace: offset 486814: the input goes on 3 bytes after the trace's end"
	for _, method := range []uint16{zip.Deflate, zip.Store} {
		for _, c := range []struct {
			name string
			zip  []byte
			want string // the end's message; "" for io.EOF
			is   error
		}{
			{"sound", zipOf(method, crc, len(trace), nil), "", nil},
			{"checksum", zipOf(method, crc+1, len(trace), nil), fmt.Sprintf("pipe: a.nettrace: CRC-32 %08x, the archive says %08x: zip: checksum error", crc, crc+1), zip.ErrChecksum},
			// Bytes after the end tag are damage: the trace's events are
			// read, and the end says what follows them.
			{"bytes after the end tag", zipOf(method, crcTail, len(trace)+3, tail), afterEnd, ErrDamaged},
			{"a checksum of bytes after the end tag", zipOf(method, crcTail+1, len(trace)+3, tail), afterEnd + fmt.Sprintf("; then reading stopped: CRC-32 %08x, the archive says %08x: zip: checksum error", crcTail, crcTail+1), zip.ErrChecksum},
			{"larger size", zipOf(method, crc, len(trace)+5, nil), "pipe: a.nettrace: the member's data ends before the size the archive gives: unexpected EOF", io.ErrUnexpectedEOF},
		} {
			for _, order := range []Order{FileOrder, TimeOrder} {
				name := fmt.Sprintf("%s (method %d, %v)", c.name, method, order)
				r, err := NewReader(bytes.NewReader(c.zip), WithName("pipe"), WithOrder(order))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				n, end := tracetest.Drain(r.Next)
				r.Close()
				switch {
				case n != 1970:
					t.Errorf("%s: %d events, then %v; want all 1970", name, n, end)
				case c.want == "" && end != io.EOF:
					t.Errorf("%s: ended with %v, want io.EOF", name, end)
				case c.want != "" && (end == nil || end.Error() != c.want || !errors.Is(end, c.is)):
					t.Errorf("%s: ended with %v, want %s", name, end, c.want)
				}
			}
		}
	}
}

// TestCorruptZipSweep damages the 3.0 trace's archive at eight places
// spread over its compressed data, four ways (a byte changed, four bytes
// set, 512 zeroed, 16 overwritten), and reads each copy whole. Most of
// the damage garbles the inflated bytes for a while and shifts the rest,
// which the EventPipe reader reads past; some stops inflating, and the
// member reads on from the next deflate block (package inflate). The
// trace ends with a *DamageError, or a checksum or size error where the
// format reader found nothing.
//
// An event counts as read when one of the intact trace's has its time,
// thread, ID and payload. About seven in ten come out on average (71.7%
// here), a quarter at worst: the output can stay garbled up to the end
// when deflate keeps copying from what it garbled. Garbled bytes also come
// out as events the trace does not hold, which no check of the format
// tells apart: mostly a real event's header with its payload garbled, and
// some made of garbage whose fields pass (3.2% of the intact count on
// average; 3.4% before event blocks' time ranges were checked).
func TestCorruptZipSweep(t *testing.T) {
	const path = "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"
	whole := mustRead(t, path)
	intact, _ := readZip(t, whole, "file", FileOrder, keyOf)
	in := make(map[eventKey]bool, len(intact))
	for _, k := range intact {
		in[k] = true
	}
	zr, err := zip.NewReader(bytes.NewReader(whole), int64(len(whole)))
	if err != nil {
		t.Fatal(err)
	}
	f := zr.File[0]
	data, err := f.DataOffset()
	if err != nil {
		t.Fatal(err)
	}
	csize := int(f.CompressedSize64)
	var sum, extra float64
	var rows []string
	for k, kind := range []string{"byte", "ff4", "zero512", "rand16"} {
		for i := 1; i <= 8; i++ {
			at := int(data) + (csize-600)*(2*i-1)/16 + k*101
			bad := bytes.Clone(whole)
			switch kind {
			case "byte":
				bad[at] ^= 0x5a
			case "ff4":
				copy(bad[at:], []byte{0xff, 0xff, 0xff, 0xff})
			case "zero512":
				clear(bad[at : at+512])
			case "rand16":
				copy(bad[at:], []byte("\x8b\x1f\x02\xe7\x55\xc3\x90\x3a\x6d\xf1\x0e\xb4\x27\x99\xd0\x48"))
			}
			got, end := readZip(t, bad, "file", FileOrder, keyOf)
			var de *DamageError
			if !errors.As(end, &de) && !errors.Is(end, zip.ErrChecksum) && !errors.Is(end, zip.ErrFormat) && end != io.EOF {
				t.Errorf("%s at %d: %d events, then %v (%T)", kind, at, len(got), end, end)
			}
			real := 0
			for _, k := range got {
				if in[k] {
					real++
				}
			}
			frac := float64(real) / float64(len(intact))
			sum += frac
			extra += float64(len(got)-real) / float64(len(intact))
			rows = append(rows, fmt.Sprintf("%s@%d %.0f%%+%d", kind, at, 100*frac, len(got)-real))
		}
	}
	t.Logf("%d events intact; read on average %.1f%%, and %.1f%% more the trace does not hold: %s", len(intact), 100*sum/32, 100*extra/32, strings.Join(rows, " "))
	if sum/32 < 0.7 {
		t.Errorf("%.1f%% of the events read on average, want 70%%", 100*sum/32)
	}
	if extra/32 > 0.035 {
		t.Errorf("events the trace does not hold, %.1f%% of its count on average, want at most 3.5%%", 100*extra/32)
	}
}

// eventKey is what TestCorruptZipSweep compares events by.
type eventKey struct {
	time    int64
	thread  int64
	id      uint16
	payload uint64 // FNV-1a
}

// keyOf is what TestCorruptZipSweep compares an event by.
func keyOf(e *Event) eventKey {
	h := fnv.New64a()
	h.Write(e.Payload())
	return eventKey{e.Timestamp(), e.ThreadID(), e.ID(), h.Sum64()}
}

// TestDamageReadAsItStands finds a flipped flags bit of the 5.0 trace's
// that only the event block's timestamp range tells (nettrace's
// checkBlockRange), and checks what the front door says of it: a Damage
// with nothing skipped, its lost events unknown, the block's events given,
// and a message that says so.
func TestDamageReadAsItStands(t *testing.T) {
	data := tracetest.Bytes(t, "../testdata/traces/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip")
	read := func(b []byte) ([]int64, *Reader, error) {
		r, err := NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		var offs []int64
		for {
			e, err := r.Next()
			if err != nil {
				return offs, r, err
			}
			offs = append(offs, e.Offset())
		}
	}
	orig, _, err := read(data)
	if err != io.EOF {
		t.Fatal(err)
	}
	for _, off := range orig {
		bad := bytes.Clone(data)
		bad[off] ^= 1 // the metadata-ID flag
		got, r, err := read(bad)
		var de *DamageError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), "timestamps span") {
			continue
		}
		d := r.Damage()
		if len(d) != 1 || d[0].Length != 0 || d[0].Events != -1 {
			t.Fatalf("flip at %d: damage %v, want one record with nothing skipped and its lost events unknown", off, d)
		}
		if want := "at offset "; !strings.HasPrefix(d[0].String(), want) {
			t.Errorf("Damage.String() = %q, want it to begin %q", d[0].String(), want)
		}
		if !strings.Contains(err.Error(), "1 damaged block read as it stands; the first: at offset") {
			t.Errorf("error %q does not say the block was read as it stands", err)
		}
		// Read as it stands: no block's events lost (the misread record
		// may have made one event of two, or two of one).
		if len(got) < len(orig)-1 || len(got) > len(orig)+1 {
			t.Errorf("%d events, want %d give or take one (the block is read as it stands)", len(got), len(orig))
		}
		return
	}
	t.Fatal("no flip of a metadata-ID flag was reported by the block's timestamp range alone")
}
