package etl

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/internal/numfmt"

	"github.com/clrgo/clrevents/internal/tracetest"
	"hash/crc32"
)

// Reading through damage: the real logs with 64 bytes overwritten at many
// offsets (buffer headers, event headers, payloads, compressed data,
// buffer boundaries), read in TimeOrder, in FileOrder and from a pipe.
// Every event outside the damaged buffers, and every event of a damaged
// buffer that lies wholly before the damage, must be delivered with its
// bytes; nothing else may be, except from a damaged buffer at or after
// the damage; an event that is not delivered at all must be accounted for
// by a Damage record, which names the damaged buffer; both orders skip the
// same ranges.

const contentionZip = "../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip"

// damageLen is how many bytes each case overwrites.
const damageLen = 64

// intactLog is a log read whole, to compare damaged copies with.
type intactLog struct {
	name   string
	data   []byte
	bufs   []damageBuf
	events []ev          // in file order
	ends   []int64       // each event's end, in Offset's terms
	byKey  map[evKey]int // index into events
	hdrEnd int64         // end of the log header event (buffer 0)
	limit  int64         // the reader's buffer size limit
}

type damageBuf struct {
	off, end   int64
	saved      int64 // used (expanded) size
	compressed bool
	first, n   int // its events: events[first:first+n]
}

type evKey struct {
	buf int
	off int64
}

func loadIntact(t *testing.T, name string, data []byte) *intactLog {
	t.Helper()
	l := &intactLog{name: name, data: data, byKey: map[evKey]int{}}
	r := mustFileOrder(t, data)
	l.limit = r.sizeLimit
	l.events = readAll(t, r)
	for _, b := range etlBuffers(t, data) {
		l.bufs = append(l.bufs, damageBuf{off: b.off, end: b.end, saved: usedSize(data[b.off:]), compressed: b.compressed})
	}
	l.ends = make([]int64, len(l.events))
	for i, e := range l.events {
		l.byKey[evKey{e.Buffer, e.Offset}] = i
		b := &l.bufs[e.Buffer]
		if b.n == 0 {
			b.first = i
		}
		b.n++
		if i+1 < len(l.events) && l.events[i+1].Buffer == e.Buffer {
			l.ends[i] = l.events[i+1].Offset
		} else {
			l.ends[i] = b.off + b.saved
		}
	}
	l.hdrEnd = l.ends[0]
	return l
}

func damageTraces(t *testing.T) []*intactLog {
	t.Helper()
	logs := []*intactLog{
		loadIntact(t, "gcevents", gcETL(t)),
		loadIntact(t, "contention-exception", unzipETL(t, contentionZip)),
	}
	if net, err := readZipETL(netZip); err == nil {
		logs = append(logs, loadIntact(t, "net.4.5.2.x86", net))
	} else {
		t.Logf("net.4.5.2.x86.etl.zip is not in ../../shared (only the shared fixture set has it): %v", err)
	}
	return logs
}

// damageCase is one place to damage and what lies there.
type damageCase struct {
	at   int64
	what string
}

// damageCases returns, for each chosen buffer (every one, or every step-th),
// the start of its header (the size field), the header's end and its
// first event, an event header and a payload in its middle (compressed
// buffers: the middle of the compressed data), and its last 32 bytes with
// the next buffer's first 32; none inside the log header event, which the
// reader needs.
func damageCases(l *intactLog, step int) []damageCase {
	var cs []damageCase
	add := func(at int64, what string) {
		if at >= l.hdrEnd && at+damageLen <= int64(len(l.data)) {
			cs = append(cs, damageCase{at, what})
		}
	}
	for i := 0; i < len(l.bufs); i += step {
		b := l.bufs[i]
		add(b.off, "buffer header")
		add(b.off+40, "buffer header and first event")
		if b.compressed {
			add(b.off+bufferHeaderSize+(b.end-b.off-bufferHeaderSize)/2, "compressed data")
		} else if b.n > 2 {
			mid := b.first + b.n/2
			add(l.events[mid].Offset, "event header")
			for j := mid; j < b.first+b.n; j++ {
				if l.ends[j]-l.events[j].Offset > eventHeaderSize+damageLen+8 {
					add(l.events[j].Offset+eventHeaderSize+8, "payload")
					break
				}
			}
		}
		if i+1 < len(l.bufs) {
			add(b.end-damageLen/2, "buffer boundary")
		}
	}
	return cs
}

// tenOffsets spreads ten cases evenly over the bytes of the log that hold
// something (buffer headers, events, compressed data: not the padding
// after a buffer's used size), after its header event.
func tenOffsets(l *intactLog) []damageCase {
	type span struct{ from, to int64 }
	var used []span
	var total int64
	for _, b := range l.bufs {
		s := span{max(b.off, l.hdrEnd), b.end}
		if !b.compressed {
			s.to = min(b.end, b.off+b.saved)
		}
		if s.to > s.from {
			used = append(used, s)
			total += s.to - s.from
		}
	}
	var cs []damageCase
	for k := range int64(10) {
		at := total * (2*k + 1) / 20
		for _, s := range used {
			if at < s.to-s.from {
				at += s.from
				break
			}
			at -= s.to - s.from
		}
		at = min(at, int64(len(l.data))-damageLen)
		cs = append(cs, damageCase{at, l.kindAt(at)})
	}
	return cs
}

// kindAt names what lies at file offset at.
func (l *intactLog) kindAt(at int64) string {
	i := l.bufferAt(at)
	b := l.bufs[i]
	switch {
	case at < b.off+bufferHeaderSize:
		return "buffer header"
	case b.compressed:
		return "compressed data"
	case at >= b.off+b.saved:
		return "padding"
	}
	for j := b.first; j < b.first+b.n; j++ {
		if at < l.ends[j] {
			if at < l.events[j].Offset+eventHeaderSize {
				return "event header"
			}
			return "payload"
		}
	}
	return "padding"
}

func (l *intactLog) bufferAt(at int64) int {
	i, _ := slices.BinarySearchFunc(l.bufs, at, func(b damageBuf, at int64) int {
		switch {
		case b.end <= at:
			return -1
		case b.off > at:
			return 1
		}
		return 0
	})
	return i
}

// damage returns a copy of the log with damageLen bytes at at replaced by
// random ones (seeded by the offset, so a failure reproduces).
func (l *intactLog) damage(at int64) []byte {
	bad := bytes.Clone(l.data)
	rng := rand.New(rand.NewPCG(uint64(at), 0xda3a9e))
	for i := at; i < at+damageLen; i++ {
		bad[i] = byte(rng.Uint32())
	}
	return bad
}

// affected returns, for each buffer the damage touches, the first offset
// (in Offset's terms) from which its events may differ: the damage itself
// in a buffer stored plain, the first byte where its expansion differs in
// a compressed one, its start when its header is touched. hit says
// whether a buffer size field was made impossible (the reader must then
// record damage).
func (l *intactLog) affected(bad []byte, at int64) (from map[int]int64, hit bool) {
	from = map[int]int64{}
	for i := l.bufferAt(at); i < len(l.bufs) && l.bufs[i].off < at+damageLen; i++ {
		b := l.bufs[i]
		switch {
		case at < b.off+bufferHeaderSize:
			from[i] = b.off
			if at < b.off+4 {
				if size := int64(le.Uint32(bad[b.off:])); size < bufferHeaderSize || size > l.limit {
					hit = true
				}
			}
		case b.compressed:
			good, _ := decompressLZ77(nil, l.data[b.off+bufferHeaderSize:b.end], int(b.saved))
			got, _ := decompressLZ77(nil, bad[b.off+bufferHeaderSize:b.end], int(b.saved))
			p := 0
			for p < len(good) && p < len(got) && good[p] == got[p] {
				p++
			}
			from[i] = b.off + bufferHeaderSize + int64(p)
		default:
			from[i] = at
		}
	}
	return from, hit
}

// damageResult is what one reading of a damaged log gave.
type damageResult struct {
	same      []bool // for each intact event: delivered with its bytes
	seen      []bool // for each intact event: an event was delivered at its place
	other     map[evKey]bool
	recovered int
	final     error
	damage    []Damage
}

// readDamaged reads a damaged log to its final error, checking each event
// against the intact log as it comes (no copies).
func (l *intactLog) readDamaged(t *testing.T, what string, r *Reader, from map[int]int64) damageResult {
	t.Helper()
	res := damageResult{same: make([]bool, len(l.events)), seen: make([]bool, len(l.events)), other: map[evKey]bool{}}
	limit := etlNextBound(len(l.data))
	for calls := 0; ; calls++ {
		if calls > limit {
			t.Fatalf("%s: no final error after %d calls", what, limit)
		}
		e, err := r.Next()
		if err != nil {
			res.final = err
			if err := checkFinal(r, err); err != nil {
				t.Errorf("%s: %v", what, err)
			}
			res.damage = r.Damage()
			return res
		}
		k := evKey{e.Buffer, e.Offset}
		i, ok := l.byKey[k]
		if ok && res.seen[i] || !ok && res.other[k] {
			t.Fatalf("%s: event at %d (buffer %d) delivered twice", what, e.Offset, e.Buffer)
		}
		if ok {
			res.seen[i] = true
		} else {
			res.other[k] = true
		}
		if ok && sameEvent(l.events[i], e) {
			res.same[i] = true
			res.recovered++
			continue
		}
		// Not the intact log's event: only a damaged buffer may give
		// it, at or after the damage.
		f, damaged := from[e.Buffer]
		if !damaged {
			t.Fatalf("%s: event at %d (buffer %d) is not the intact log's, and its buffer is not damaged", what, e.Offset, e.Buffer)
		}
		if ok && l.ends[i] <= f || !ok && e.Offset < f && !l.overlaps(e.Buffer, e.Offset, f) {
			t.Fatalf("%s: event at %d (buffer %d) differs from the intact log's, before the damage at %d", what, e.Offset, e.Buffer, f)
		}
	}
}

// overlaps reports whether offset off of buffer b lies inside an intact
// event that reaches f or beyond (a misparse of an event the damage
// touches).
func (l *intactLog) overlaps(b int, off, f int64) bool {
	buf := l.bufs[b]
	for j := buf.first; j < buf.first+buf.n; j++ {
		if l.events[j].Offset <= off && off < l.ends[j] {
			return l.ends[j] > f
		}
	}
	return true // padding after the used end: the used size was damaged
}

// sameEvent compares a delivered event with an intact one, field by field
// and byte by byte, without copying it.
func sameEvent(w ev, e *Event) bool {
	return w.Offset == e.Offset && w.Buffer == e.Buffer && w.Kind == e.HeaderKind && w.GUID == e.ProviderGUID && w.ID == e.ID &&
		w.Version == e.Version && w.HookID == e.HookID && w.TS == e.Timestamp && w.Ptr == e.PointerSize &&
		w.PID == e.ProcessID && w.TID == e.ThreadID && w.Flags == e.Flags && w.Stack == len(e.Stack) && w.Ext == len(e.Extended) &&
		bytes.Equal(w.Payload, e.Payload)
}

// checkDamaged checks one reading of the log damaged at c.
func (l *intactLog) checkDamaged(t *testing.T, what string, c damageCase, res damageResult, from map[int]int64, hit bool) {
	t.Helper()
	missing := 0
	for i, e := range l.events {
		if res.same[i] {
			continue
		}
		f, damaged := from[e.Buffer]
		if !damaged || l.ends[i] <= f {
			t.Errorf("%s: %v, before or outside the damage, was not delivered intact", what, e)
			return
		}
		if !res.seen[i] {
			missing++
		}
	}
	if len(res.damage) > 1 {
		t.Errorf("%s: %d damage records, want one: %+v", what, len(res.damage), res.damage)
		return
	}
	if len(res.damage) == 0 {
		switch {
		case hit:
			t.Errorf("%s: a buffer size made impossible, yet no damage recorded", what)
		case missing > 0:
			t.Errorf("%s: %d events lost with no damage recorded", what, missing)
		}
		if res.final != io.EOF {
			t.Errorf("%s: final error %v with no damage, want io.EOF", what, res.final)
		}
		return
	}
	d := res.damage[0]
	if _, ok := from[d.Buffer]; !ok || d.Err.Buffer != d.Buffer || d.Err.BufferOffset != l.bufs[d.Buffer].off ||
		d.Offset < l.bufs[d.Buffer].off || d.Offset >= l.bufs[d.Buffer].end ||
		// The rest of a buffer (-1 events), or events left out for
		// their garbled times (Length 0 in a compressed buffer).
		d.Events == -1 && d.Length <= 0 || d.Events == 0 || d.Events < -1 || d.Length < 0 {
		t.Errorf("%s: damage %+v (%v) does not name a damaged buffer (%v)", what, d, d.Err, from)
	}
	msg := res.final.Error()
	if want := fmt.Sprintf("buffer %d at offset %d: ", d.Buffer, l.bufs[d.Buffer].off); !strings.HasPrefix(msg, "etl: damaged buffer skipped (") && !strings.HasPrefix(msg, "etl: damaged range skipped (") ||
		!strings.Contains(msg, want) {
		t.Errorf("%s: final error %q does not name %q", what, msg, want)
	}
}

// readers opens a damaged log in the three ways: TimeOrder over an
// io.ReaderAt, FileOrder over an io.Reader, and through a pipe that hands
// it over in odd-sized writes. done releases the pipe.
func damageReaders(t *testing.T, bad []byte) (names []string, open []func() (*Reader, func())) {
	names = []string{"TimeOrder", "FileOrder", "pipe"}
	open = []func() (*Reader, func()){
		func() (*Reader, func()) { return mustReader(t, bad), func() {} },
		func() (*Reader, func()) { return mustFileOrder(t, bad), func() {} },
		func() (*Reader, func()) {
			pr, pw := io.Pipe()
			go func() {
				for i := 0; i < len(bad); i += 1021 {
					if _, err := pw.Write(bad[i:min(i+1021, len(bad))]); err != nil {
						return
					}
				}
				pw.Close()
			}()
			r, err := NewReader(pr)
			if err != nil {
				t.Fatal(err)
			}
			if r.Order() != FileOrder {
				t.Fatalf("a pipe reads in %v", r.Order())
			}
			return r, func() { pr.CloseWithError(errors.New("done")) }
		},
	}
	return names, open
}

// runDamage damages l at c and reads it each way; it returns the events
// recovered (the same each way).
func (l *intactLog) runDamage(t *testing.T, c damageCase) int {
	t.Helper()
	bad := l.damage(c.at)
	from, hit := l.affected(bad, c.at)
	names, open := damageReaders(t, bad)
	var first damageResult
	for i, o := range open {
		what := fmt.Sprintf("%s: %d bytes at %d (%s), %s", l.name, damageLen, c.at, c.what, names[i])
		r, done := o()
		res := l.readDamaged(t, what, r, from)
		done()
		l.checkDamaged(t, what, c, res, from, hit)
		if i == 0 {
			first = res
			continue
		}
		if !slices.Equal(res.same, first.same) || !slices.Equal(res.seen, first.seen) || !reflect.DeepEqual(res.other, first.other) || !sameDamage(res.damage, first.damage) {
			t.Errorf("%s: delivers %d events and skips %+v; %s %d and %+v", what, res.recovered, res.damage, names[0], first.recovered, first.damage)
		}
	}
	return first.recovered
}

// sameDamage compares two readings' records, their errors by text.
func sameDamage(a, b []Damage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Buffer != y.Buffer || x.Offset != y.Offset || x.Length != y.Length || x.Events != y.Events || x.Err.Error() != y.Err.Error() {
			return false
		}
	}
	return true
}

func TestDamageSweep(t *testing.T) {
	for _, l := range damageTraces(t) {
		t.Run(l.name, func(t *testing.T) {
			// Every buffer of the small logs; six of net.4.5.2.x86's
			// 276 (4.4 MB, each reading 168,298 events).
			n := 12
			if len(l.data) > 1<<20 {
				n = 6
			}
			if testing.Short() {
				n /= 3
			}
			step := max(1, len(l.bufs)/n)
			cases := damageCases(l, step)
			kinds := map[string]int{}
			var sum, worst float64 = 0, 1
			for _, c := range cases {
				got := l.runDamage(t, c)
				kinds[c.what]++
				frac := float64(got) / float64(len(l.events))
				sum += frac
				worst = min(worst, frac)
			}
			t.Logf("%s: %d events in %d buffers; %d cases %v, each read 3 ways: %.2f%% of the events recovered on average, %.2f%% at worst",
				l.name, len(l.events), len(l.bufs), len(cases), kinds, 100*sum/float64(len(cases)), 100*worst)
		})
	}
}

// TestDamageTenOffsets damages each log at ten offsets spread over its
// events and
// reports the events recovered; in a multi-megabyte log one damaged
// buffer must cost at most 3% of the events.
func TestDamageTenOffsets(t *testing.T) {
	for _, l := range damageTraces(t) {
		t.Run(l.name, func(t *testing.T) {
			var rows []string
			for _, c := range tenOffsets(l) {
				got := l.runDamage(t, c)
				pct := 100 * float64(got) / float64(len(l.events))
				rows = append(rows, fmt.Sprintf("%d (buffer %d, %s): %d/%d = %.2f%%", c.at, l.bufferAt(c.at), c.what, got, len(l.events), pct))
				if len(l.data) > 1<<20 && pct < 97 {
					t.Errorf("%s: damage at %d: %d of %d events recovered (%.2f%%), want at least 97%%", l.name, c.at, got, len(l.events), pct)
				}
			}
			t.Logf("%s (%d bytes, %d buffers, %d events), events recovered with %d bytes damaged at:\n\t%s",
				l.name, len(l.data), len(l.bufs), len(l.events), damageLen, strings.Join(rows, "\n\t"))
		})
	}
}

// TestDamageZip reads a damaged log through Open from a zip, as from a
// file: the same events and damage.
func TestDamageZip(t *testing.T) {
	l := loadIntact(t, "contention-exception", unzipETL(t, contentionZip))
	c := damageCase{l.bufs[5].off, "buffer header"}
	bad := l.damage(c.at)
	from, hit := l.affected(bad, c.at)
	p := filepath.Join(t.TempDir(), "bad.etl.zip")
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, _ := zw.Create("bad.etl")
	w.Write(bad)
	zw.Close()
	if err := os.WriteFile(p, zb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res := l.readDamaged(t, "zip", r, from)
	l.checkDamaged(t, "zip", c, res, from, hit)
	if len(res.damage) != 1 || res.damage[0].Buffer != 5 || res.damage[0].Offset != c.at || res.damage[0].Length != l.bufs[5].end-l.bufs[5].off {
		t.Errorf("damage %+v, want buffer 5 at %d, %d bytes", res.damage, c.at, l.bufs[5].end-l.bufs[5].off)
	}
	if want := len(l.events) - l.bufs[5].n; res.recovered != want {
		t.Errorf("%d events recovered, want %d (all but buffer 5's %d)", res.recovered, want, l.bufs[5].n)
	}
}

// TestResyncCandidates: the checks a searched-for buffer header must pass
// accept every buffer header of the real logs and nothing else, at any
// byte offset.
func TestResyncCandidates(t *testing.T) {
	for _, l := range damageTraces(t) {
		r := mustReader(t, l.data)
		starts := map[int64]bool{}
		for _, b := range l.bufs[1:] {
			starts[b.off] = true
		}
		for i := int64(1); i+bufferHeaderSize <= int64(len(l.data)); i++ {
			if got := r.candidate(l.data[i:min(int64(len(l.data)), i+resyncLookahead)]); got != starts[i] {
				t.Errorf("%s: offset %d: candidate %v, buffer start %v", l.name, i, got, starts[i])
			}
		}
	}
}

// TestWideDamage overwrites a range longer than the search reads at once
// (resyncChunk), over several buffers: one Damage record from the first
// damaged buffer to the first intact header after the range, and every
// event outside it delivered. In a log whose buffers are all BufferSize
// the reader steps over whole buffers and keeps counting them; elsewhere
// it searches, and counts the range as one buffer.
func TestWideDamage(t *testing.T) {
	shrunk := loadIntact(t, "gcevents shrunk", shrink(gcETL(t)))
	for _, c := range []struct {
		l        *intactLog
		from     int // first buffer damaged, from its start
		length   int64
		counting bool // buffer indices stay exact
	}{
		{loadIntact(t, "gcevents", gcETL(t)), 1, 150_000, true},
		{loadIntact(t, "contention-exception", unzipETL(t, contentionZip)), 3, 150_000, false},
		{shrunk, 2, 100, false},
	} {
		l := c.l
		at := l.bufs[c.from].off
		bad := bytes.Clone(l.data)
		rng := rand.New(rand.NewPCG(7, 7))
		for i := at; i < at+c.length; i++ {
			bad[i] = byte(rng.Uint32())
		}
		next := l.bufferAt(at+c.length-1) + 1 // the first buffer after the range
		names, open := damageReaders(t, bad)
		for i, o := range open {
			what := fmt.Sprintf("%s, %d bytes at %d, %s", l.name, c.length, at, names[i])
			r, done := o()
			got, err := readUntilErr(r, etlNextBound(len(bad)))
			done()
			if err := checkFinal(r, err); err != nil {
				t.Errorf("%s: %v", what, err)
			}
			end := int64(len(bad))
			if next < len(l.bufs) {
				end = l.bufs[next].off
			}
			dm := r.Damage()
			if len(dm) != 1 || dm[0].Buffer != c.from || dm[0].Offset != at || dm[0].Offset+dm[0].Length != end {
				t.Errorf("%s: damage %+v, want buffer %d from %d to %d", what, dm, c.from, at, end)
			}
			// Every event outside [at, end), with its bytes; buffer
			// indices after the range shift by the buffers it held,
			// less one, unless the reader could count them.
			shift := 0
			if !c.counting {
				shift = next - c.from - 1
			}
			var want []ev
			for _, e := range l.events {
				if e.Buffer < c.from || e.Buffer >= next {
					if e.Buffer >= next {
						e.Buffer -= shift
					}
					want = append(want, e)
				}
			}
			slices.SortFunc(got, func(a, b ev) int {
				if a.Buffer != b.Buffer {
					return a.Buffer - b.Buffer
				}
				return int(a.Offset - b.Offset)
			})
			if len(got) != len(want) {
				t.Errorf("%s: %d events, want %d", what, len(got), len(want))
				continue
			}
			for j := range got {
				if !etlEventsEqual(got[j], want[j]) {
					t.Errorf("%s: %v, want %v", what, got[j], want[j])
					break
				}
			}
		}
	}
}

// TestStrict: a strict reader stops at the first damage, with its
// *FormatError, on every later call; a truncated log still gives every
// complete event first; an intact one ends in io.EOF; SetStrict after
// the first Next changes nothing.
func TestStrict(t *testing.T) {
	l := loadIntact(t, "contention-exception", unzipETL(t, contentionZip))
	five := l.bufs[5]
	for _, c := range []struct {
		name  string
		bad   []byte
		exact bool // FileOrder and TimeOrder stop at the same place: the events of buffers 0-4
	}{
		{"buffer header", l.damage(five.off), true},
		{"compressed data", l.damage(five.off + bufferHeaderSize + 4000), false},
	} {
		names, open := damageReaders(t, c.bad)
		for i, o := range open {
			what := c.name + ", " + names[i]
			r, done := o()
			r.SetStrict(true)
			got, err := readUntilErr(r, etlNextBound(len(c.bad)))
			_, again := r.Next()
			done()
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Buffer != 5 || fe.BufferOffset != five.off || again != err || r.Damage() != nil {
				t.Errorf("%s: error %T %v, then %v, damage %+v", what, err, err, again, r.Damage())
			}
			var de *DamageError
			if errors.As(err, &de) || errors.Is(err, ErrDamaged) {
				t.Errorf("%s: strict error %v is a DamageError", what, err)
			}
			// FileOrder stops in buffer 5 (after its events before the
			// damage, if any), TimeOrder when the merge reaches it.
			n, n5 := 0, 0
			for _, e := range got {
				switch {
				case e.Buffer < 5:
					n++
				case e.Buffer == 5 && !c.exact:
					n5++
				case names[i] != "TimeOrder" || c.exact:
					t.Errorf("%s: %v delivered", what, e)
				}
			}
			if want := five.first; names[i] != "TimeOrder" && n != want || c.exact && n != want {
				t.Errorf("%s: %d events of buffers 0-4, want %d", what, n, want)
			}
			if !c.exact && names[i] != "TimeOrder" && (n5 == 0 || n5 >= five.n) {
				t.Errorf("%s: %d of buffer 5's %d events, want those before the damage", what, n5, five.n)
			}
		}
	}

	// Truncated: every complete event, then the truncation.
	cut := l.data[:l.bufs[20].off+5000]
	lax, laxErr := readUntilErr(mustFileOrder(t, cut), 1e6)
	for _, order := range []Order{FileOrder, TimeOrder} {
		var r *Reader
		if order == FileOrder {
			r = mustFileOrder(t, cut)
		} else {
			r = mustReader(t, cut)
		}
		r.SetStrict(true)
		got, err := readUntilErr(r, 1e6)
		var fe *FormatError
		if !errors.As(err, &fe) || !errors.Is(err, ErrTruncated) || errors.Is(err, ErrDamaged) || fe.Buffer != 20 {
			t.Errorf("truncated, %v: %v", order, err)
		}
		if len(got) != len(lax) || !strings.HasSuffix(laxErr.Error(), strings.TrimPrefix(err.Error(), "etl: ")) {
			t.Errorf("truncated, %v: %d events and %v; not strict: %d and %v", order, len(got), err, len(lax), laxErr)
		}
	}

	// Intact.
	r := mustReader(t, l.data)
	r.SetStrict(true)
	if got, err := readUntilErr(r, 1e6); err != io.EOF || len(got) != len(l.events) {
		t.Errorf("intact: %d events, %v", len(got), err)
	}

	// Too late.
	r = mustFileOrder(t, l.damage(five.off))
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	r.SetStrict(true)
	if _, err := readUntilErr(r, 1e6); !errors.Is(err, ErrDamaged) {
		t.Errorf("SetStrict after Next: %v", err)
	}
}

// TestDamageErrorText: two damaged ranges are summed up in one line that
// names the first in full; Damage grows as reading goes.
func TestDamageErrorText(t *testing.T) {
	l := loadIntact(t, "contention-exception", unzipETL(t, contentionZip))
	bad := l.damage(l.bufs[5].off)
	copy(bad[l.bufs[20].off:], l.damage(l.bufs[20].off)[l.bufs[20].off:l.bufs[20].off+damageLen])
	r := mustFileOrder(t, bad)
	sawOne := false
	var err error
	for err == nil {
		_, err = r.Next()
		if n := len(r.Damage()); n == 1 {
			sawOne = true
		}
	}
	n5, n20 := l.bufs[5].end-l.bufs[5].off, l.bufs[20].end-l.bufs[20].off
	want := fmt.Sprintf("etl: 2 damaged buffers skipped (%s bytes); the first: buffer 5 at offset %d: buffer size ", numfmt.Thousands(n5+n20), l.bufs[5].off)
	if !strings.HasPrefix(err.Error(), want) || !sawOne {
		t.Errorf("error %q, want prefix %q (one record seen on the way: %v)", err, want, sawOne)
	}
	if got := (&DamageError{Damage: []Damage{{Length: 1234567, Events: -1, Err: &FormatError{Buffer: 1, BufferOffset: 2, EventOffset: -1, Err: errors.New("x")}}}}).Error(); got != "etl: damaged buffer skipped (1,234,567 bytes): buffer 1 at offset 2: x" {
		t.Errorf("one buffer: %q", got)
	}
	// Events left out for their garbled times are counted, in ranges.
	if got := (&DamageError{Damage: []Damage{{Length: 82, Events: 1, Err: &FormatError{Buffer: 1, BufferOffset: 2, EventOffset: 10, Err: errors.New("x")}}}}).Error(); got != "etl: damaged range skipped (82 bytes, 1 event): buffer 1 at offset 2: event at 10: x" {
		t.Errorf("one event: %q", got)
	}
	two := []Damage{{Length: 82, Events: 3}, {Length: 1000, Events: -1}}
	two[0].Err, two[1].Err = &FormatError{Buffer: 1, BufferOffset: 2, EventOffset: 10, Err: errors.New("x")}, &FormatError{Buffer: 2, EventOffset: -1, Err: errors.New("y")}
	if got := (&DamageError{Damage: two}).Error(); got != "etl: 2 damaged ranges skipped (1,082 bytes, at least 3 events); the first: buffer 1 at offset 2: event at 10: x" {
		t.Errorf("an event and a buffer: %q", got)
	}
}

// TestOpenCutZip: Open reads a zipped log cut short (its archive's
// directory lost) from the member's local header: the events before the
// cut, then a *DamageError wrapping ErrTruncated.
func TestOpenCutZip(t *testing.T) {
	r, err := Open(tracetest.CutCopy(t, contentionZip))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n, end := tracetest.Drain(r.Next)
	var de *DamageError
	if !errors.As(end, &de) || !errors.Is(end, ErrTruncated) || n == 0 {
		t.Errorf("%d events, then %v; want some, then the log cut short", n, end)
	}
}

// TestOpenCorruptZip: Open reads a zipped log whose compressed bytes are
// damaged up to the damage (what the garbage after it holds is skipped
// as damage), and its final error says what stopped the data; one whose
// checksum alone is wrong is read whole, then the checksum error ends it.
func TestOpenCorruptZip(t *testing.T) {
	whole, err := os.ReadFile(contentionZip)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(whole)
	for i := 200_000; i < 200_040; i++ {
		bad[i] ^= 0x5a
	}
	p := filepath.Join(t.TempDir(), "bad.etl.zip")
	if err := os.WriteFile(p, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	n, end := tracetest.Drain(r.Next)
	r.Close()
	var de *DamageError
	if !errors.As(end, &de) || de.Stopped == nil || !errors.Is(end, zip.ErrFormat) || !strings.Contains(end.Error(), "; then reading stopped: "+p+": ") || n < 5000 {
		t.Errorf("%d events, then %v; want most of the first half, then the damage and what stopped the data", n, end)
	}

	// The checksum alone: a zip of the log written with a wrong CRC.
	log := unzipETL(t, contentionZip)
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, _ := zw.CreateRaw(&zip.FileHeader{Name: "a.etl", Method: zip.Store, CRC32: crc32.ChecksumIEEE(log) + 1,
		CompressedSize64: uint64(len(log)), UncompressedSize64: uint64(len(log))})
	w.Write(log)
	zw.Close()
	if err := os.WriteFile(p, zb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err = Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	intact := loadIntact(t, "contention-exception", log)
	n, end = tracetest.Drain(r.Next)
	if n != len(intact.events) || !errors.Is(end, zip.ErrChecksum) || errors.As(end, &de) {
		t.Errorf("%d of %d events, then %v; want all, then the checksum error", n, len(intact.events), end)
	}
}

// TestCompressedDamageNotUnsupported: a compressed buffer whose data is
// garbled is damage (recorded, read past), and its error does not wrap
// ErrUnsupported, which is for forms this package cannot read: code that
// gives up on those would give up on a log merely damaged.
func TestCompressedDamageNotUnsupported(t *testing.T) {
	l := loadIntact(t, "contention-exception", unzipETL(t, contentionZip))
	var b *damageBuf
	for i := range l.bufs {
		if l.bufs[i].compressed && l.bufs[i].n > 0 && i > 0 {
			b = &l.bufs[i]
			break
		}
	}
	if b == nil {
		t.Fatal("the log has no compressed buffer with events")
	}
	data := bytes.Clone(l.data)
	mid := b.off + bufferHeaderSize + (b.end-b.off-bufferHeaderSize)/2
	for i := mid; i < mid+64 && i < b.end; i++ {
		data[i] = 0xFF
	}
	r := mustFileOrder(t, data)
	n := 0
	var last error
	for {
		_, err := r.Next()
		if err != nil {
			last = err
			break
		}
		n++
	}
	if errors.Is(last, ErrUnsupported) || !errors.Is(last, ErrDamaged) {
		t.Errorf("a garbled compressed buffer ends the log with %v; want damage, not ErrUnsupported", last)
	}
	d := r.Damage()
	if len(d) == 0 {
		t.Fatal("no damage recorded")
	}
	for _, x := range d {
		if x.Err != nil && errors.Is(x.Err, ErrUnsupported) {
			t.Errorf("damage record %+v wraps ErrUnsupported", x)
		}
	}
	if n == 0 || n >= len(l.events) {
		t.Errorf("%d of %d events read", n, len(l.events))
	}
}

// readEach reads bad to its final error in the three ways damageReaders
// opens it, and checks that the events delivered are the intact log's
// (every field and byte) but for those lost reports: lost(i) says the
// intact log's event i is not delivered. It returns each way's final
// error and damage.
func (l *intactLog) readEach(t *testing.T, what string, bad []byte, lost func(i int) bool) (errs []error, dms [][]Damage) {
	t.Helper()
	names, open := damageReaders(t, bad)
	for k, o := range open {
		r, done := o()
		got, err := readUntilErr(r, etlNextBound(len(bad)))
		done()
		if cerr := checkFinal(r, err); cerr != nil {
			t.Errorf("%s, %s: %v", what, names[k], cerr)
		}
		errs, dms = append(errs, err), append(dms, r.Damage())
		seen := map[evKey]bool{}
		for _, g := range got {
			key := evKey{g.Buffer, g.Offset}
			i, ok := l.byKey[key]
			switch {
			case !ok || seen[key]:
				t.Errorf("%s, %s: %v delivered: not the intact log's, or twice", what, names[k], g)
			case lost(i):
				t.Errorf("%s, %s: %v delivered, from the damage", what, names[k], g)
			case !etlEventsEqual(g, l.events[i]) || g.Proc != l.events[i].Proc:
				t.Errorf("%s, %s: %v delivered as %v", what, names[k], l.events[i], g)
			}
			seen[key] = true
		}
		for i, e := range l.events {
			if !lost(i) && !seen[evKey{e.Buffer, e.Offset}] {
				t.Errorf("%s, %s: %v not delivered", what, names[k], e)
				break
			}
		}
	}
	return errs, dms
}

// TestFirstBufferSize: the first buffer's stated size is checked against
// the log header's BufferSize once that is read, as every other
// buffer's: a size the log does not allow is damage after the log header
// event (read, as the log's header), and the next buffer is found. Not a
// truncation (the audit's F1: buffers 1 and 2 taken as the first's
// padding and lost with no report, or the whole log after the header
// event, and "file is truncated" at the wrong offset).
func TestFirstBufferSize(t *testing.T) {
	gc := loadIntact(t, "gcevents", gcETL(t))
	ce := loadIntact(t, "contention-exception", unzipETL(t, contentionZip))
	for _, c := range []struct {
		l    *intactLog
		size uint32
	}{
		{gc, 3 * 65536},     // one bit: buffers 1 and 2 were lost
		{gc, 0x00FE0000},    // 16,646,144, beyond the file
		{ce, 0x20000 + 512}, // compressed: above what 64 KiB take as literals
	} {
		l := c.l
		what := fmt.Sprintf("%s, first buffer's size %d", l.name, c.size)
		bad := bytes.Clone(l.data)
		le.PutUint32(bad, c.size)
		errs, dms := l.readEach(t, what, bad, func(i int) bool { return i > 0 && l.events[i].Buffer == 0 })
		from, end := l.hdrEnd, l.bufs[1].off
		if l.bufs[0].compressed {
			from = 0 // a compressed buffer is one unit
		}
		for k, err := range errs {
			want := fmt.Sprintf("etl: damaged buffer skipped (%s bytes): buffer 0 at offset 0: buffer size %d is out of range [72, %d]", n0(end-from), c.size, l.limit)
			if errors.Is(err, ErrTruncated) || err == nil || err.Error() != want {
				t.Errorf("%s: %v, want %q", what, err, want)
			}
			if d := dms[k]; len(d) != 1 || d[0].Buffer != 0 || d[0].Offset != from || d[0].Offset+d[0].Length != end || d[0].Missing != 0 {
				t.Errorf("%s: damage %+v, want buffer 0 from %d to %d", what, d, from, end)
			}
		}
	}
}

// TestSizePastEnd: in a compressed log, whose buffers are stored at their
// own sizes, a buffer whose stated size grows past the end of the file
// while the next buffer's header follows inside it is damaged, not cut
// short: it is skipped and the buffers after it are read (the audit's F2:
// contention-exception's buffer 31 grown from 13,606 to 34,086 bytes lost
// buffers 32 and 33, reported as a truncation). The first buffer too,
// after its log header event.
func TestSizePastEnd(t *testing.T) {
	ce := loadIntact(t, "contention-exception", unzipETL(t, contentionZip))
	sd := loadIntact(t, "SelfDescribingSingleEvent", unzipETL(t, "../testdata/traces/SelfDescribingSingleEvent.etl.zip"))
	for _, c := range []struct {
		l    *intactLog
		buf  int
		size uint32
	}{
		{ce, 31, 34086},
		{ce, len(ce.bufs) - 2, uint32(int64(len(ce.data))-ce.bufs[len(ce.bufs)-2].off) + 100},
		{sd, 1, 59145},
		{sd, 0, 8000},
	} {
		l := c.l
		b := l.bufs[c.buf]
		what := fmt.Sprintf("%s, buffer %d's size %d", l.name, c.buf, c.size)
		if left := int64(len(l.data)) - b.off; int64(c.size) <= left || int64(c.size) > l.limit {
			t.Fatalf("%s: does not run past the end (%d bytes on), or is out of range", what, left)
		}
		bad := bytes.Clone(l.data)
		le.PutUint32(bad[b.off:], c.size)
		errs, dms := l.readEach(t, what, bad, func(i int) bool { return l.events[i].Buffer == c.buf && i > 0 })
		for k, err := range errs {
			want := fmt.Sprintf("buffer %d at offset %d: buffer size %d runs past the end of the file (%d bytes from the buffer's start), but a buffer header follows at %d", c.buf, b.off, c.size, int64(len(l.data))-b.off, b.end)
			if errors.Is(err, ErrTruncated) || err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v, want %q", what, err, want)
			}
			from := b.off
			if c.buf == 0 && !b.compressed {
				from = l.hdrEnd // after the log header's event
			}
			if d := dms[k]; len(d) != 1 || d[0].Buffer != c.buf || d[0].Offset != from || d[0].Offset+d[0].Length != b.end || d[0].Missing != 0 {
				t.Errorf("%s: damage %+v, want buffer %d from %d to %d", what, d, c.buf, from, b.end)
			}
		}
	}
	// A log cut short inside the buffer is still cut short.
	cut := ce.data[:ce.bufs[31].off+5000]
	for _, r := range []*Reader{mustReader(t, cut), mustFileOrder(t, cut)} {
		if _, err := readUntilErr(r, 1e6); !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "buffer 31 at offset") {
			t.Errorf("cut in buffer 31, %v: %v, want ErrTruncated there", r.Order(), err)
		}
	}
}

// TestRepeatedBuffer: a buffer the file holds twice (the same
// SequenceNumber and header as one read before) is skipped as damage
// naming the buffer it repeats, its events delivered once (the audit's
// F3: delivered twice, no report); a file holding more buffers than the
// log header's BuffersWritten, repeats left out, is reported at the first
// beyond the count, with nothing skipped.
func TestRepeatedBuffer(t *testing.T) {
	gc := loadIntact(t, "gcevents", gcETL(t))
	ce := loadIntact(t, "contention-exception", unzipETL(t, contentionZip))
	for _, c := range []struct {
		l   *intactLog
		buf int
	}{{gc, 2}, {ce, 17}} {
		l := c.l
		b := l.bufs[c.buf]
		end := int64(len(l.data))
		bad := append(bytes.Clone(l.data), l.data[b.off:b.end]...) // a copy at the end
		what := fmt.Sprintf("%s, buffer %d repeated at the end", l.name, c.buf)
		errs, dms := l.readEach(t, what, bad, func(int) bool { return false })
		for k, err := range errs {
			want := fmt.Sprintf("etl: damaged buffer skipped (%s bytes): buffer %d at offset %d: a repeat of buffer %d at offset %d (sequence number %d, the same header)",
				n0(b.end-b.off), len(l.bufs), end, c.buf, b.off, le.Uint64(l.data[b.off+24:]))
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("%s: %v, want %q…", what, err, want)
			}
			if d := dms[k]; len(d) != 1 || d[0].Buffer != len(l.bufs) || d[0].Offset != end || d[0].Length != b.end-b.off {
				t.Errorf("%s: damage %+v", what, d)
			}
		}
		// Repeated right after itself, as the audit had it: every event
		// once.
		bad = slices.Concat(l.data[:b.end], l.data[b.off:b.end], l.data[b.end:])
		for _, r := range []*Reader{mustReader(t, bad), mustFileOrder(t, bad)} {
			got, err := readUntilErr(r, 1e6)
			if len(got) != len(l.events) || !errors.Is(err, ErrDamaged) || len(r.Damage()) != 1 || r.Damage()[0].Buffer != c.buf+1 {
				t.Errorf("%s, buffer %d repeated after itself, %v: %d events, want %d; %v", l.name, c.buf, r.Order(), len(got), len(l.events), err)
			}
		}
	}

	// The copy numbered as a buffer of its own (its number damaged, or
	// written again): the same header and first bytes, so a repeat all
	// the same, skipped, its events delivered once; the file then holds
	// no more buffers than the header counts.
	for _, c := range []struct {
		l   *intactLog
		buf int
	}{{gc, 2}, {ce, 17}, {ce, 30}} {
		l := c.l
		b := l.bufs[c.buf]
		seq := le.Uint64(l.data[b.off+24:])
		for _, after := range []bool{false, true} {
			var bad []byte
			at := int64(len(l.data))
			if after {
				bad = slices.Concat(l.data[:b.end], l.data[b.off:b.end], l.data[b.end:])
				at = b.end
			} else {
				bad = append(bytes.Clone(l.data), l.data[b.off:b.end]...)
			}
			le.PutUint64(bad[at+24:], seq^0x100)
			want := fmt.Sprintf("a repeat of buffer %d at offset %d under another sequence number, %d (that one's %d): the same header, timestamp %d",
				c.buf, b.off, seq^0x100, seq, le.Uint64(l.data[b.off+16:]))
			for _, strict := range []bool{false, true} {
				for _, r := range []*Reader{mustReader(t, bad), mustFileOrder(t, bad)} {
					r.SetStrict(strict)
					got, err := readUntilErr(r, 1e6)
					var fe *FormatError
					if !errors.As(err, &fe) || fe.BufferOffset != at || !strings.Contains(err.Error(), want) || !strict && len(got) != len(l.events) {
						t.Errorf("%s, buffer %d renumbered, after itself %v, %v, strict %v: %d events, want %d; %v, want %q", l.name, c.buf, after, r.Order(), strict, len(got), len(l.events), err, want)
					}
					if d := r.Damage(); !strict && (len(d) != 1 || d[0].Offset != at || d[0].Length != b.end-b.off) {
						t.Errorf("%s, buffer %d renumbered, %v: damage %+v", l.name, c.buf, r.Order(), d)
					}
				}
			}
		}
	}

	// A buffer of its own, with another number and timestamp (the copy's
	// changed): its events are read, and the file holds one buffer more
	// than the header counts.
	b := gc.bufs[2]
	bad := append(bytes.Clone(gc.data), gc.data[b.off:b.end]...)
	le.PutUint64(bad[len(gc.data)+24:], 99)
	bad[len(gc.data)+16] ^= 1
	written := int(mustReader(t, gc.data).Header().BuffersWritten)
	want := fmt.Sprintf("etl: buffer %d at offset %d: the file holds %d buffers, more than the %d the log header says were written", len(gc.bufs), len(gc.data), written+1, written)
	for _, strict := range []bool{false, true} {
		for _, r := range []*Reader{mustReader(t, bad), mustFileOrder(t, bad)} {
			r.SetStrict(strict)
			got, err := readUntilErr(r, 1e6)
			var fe *FormatError
			if len(got) != len(gc.events)+b.n || err == nil || !strings.HasPrefix(err.Error(), want) || !errors.As(err, &fe) || fe.Buffer != len(gc.bufs) {
				t.Errorf("one buffer beyond the count, %v, strict %v: %d events, %v; want %d, %q…", r.Order(), strict, len(got), err, len(gc.events)+b.n, want)
			}
			if d := r.Damage(); !strict && (len(d) != 1 || d[0].Length != 0 || d[0].Events != 0 || d[0].Offset != int64(len(gc.data))) {
				t.Errorf("one buffer beyond the count, %v: damage %+v", r.Order(), d)
			}
		}
	}
}

// TestProcessorOutOfRange: a buffer read in sequence whose processor is
// not below the log header's NumberOfProcessors gets the header check a
// searched-for buffer gets: it is damage, skipped, and the buffers around
// it are read (the audit's F4: its events came with processor 65287 in a
// log of 8, no report).
func TestProcessorOutOfRange(t *testing.T) {
	gc := loadIntact(t, "gcevents", gcETL(t))
	ce := loadIntact(t, "contention-exception", unzipETL(t, contentionZip))
	for _, c := range []struct {
		l    *intactLog
		buf  int
		proc uint16
	}{
		{ce, 1, 7 ^ 0xFF00}, // byte 41 flipped: 65287
		{ce, 1, 7 ^ 0xFF},   // byte 40 flipped: 248
		{gc, 2, 8},          // the first processor the log does not have
	} {
		l := c.l
		b := l.bufs[c.buf]
		if le.Uint16(l.data[b.off+52:])&BufferFlagProcessorIndex == 0 {
			t.Fatalf("%s: buffer %d has 8-bit processor numbers", l.name, c.buf)
		}
		bad := bytes.Clone(l.data)
		le.PutUint16(bad[b.off+40:], c.proc)
		what := fmt.Sprintf("%s, buffer %d's processor %d", l.name, c.buf, c.proc)
		nproc := mustReader(t, l.data).Header().NumberOfProcessors
		errs, dms := l.readEach(t, what, bad, func(i int) bool { return l.events[i].Buffer == c.buf })
		for k, err := range errs {
			want := fmt.Sprintf("etl: damaged buffer skipped (%s bytes): buffer %d at offset %d: processor %d is not below the log's NumberOfProcessors, %d", n0(b.end-b.off), c.buf, b.off, c.proc, nproc)
			if err == nil || err.Error() != want {
				t.Errorf("%s: %v, want %q", what, err, want)
			}
			if d := dms[k]; len(d) != 1 || d[0].Buffer != c.buf || d[0].Offset != b.off || d[0].Length != b.end-b.off {
				t.Errorf("%s: damage %+v", what, d)
			}
		}
	}
}
