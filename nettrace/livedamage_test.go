package nettrace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestV6AheadDecidesAsWindow checks that v6Block decides on the bytes
// v6Ahead looks at as it does on a searchWindow look-ahead, at every
// offset of the start of a V6 trace (block headers, and the bytes inside
// blocks that a search after damage takes for headers), near its cut end,
// and in random bytes made to look like block headers, for the depths and
// ends its callers use; and that v6Ahead looks no further than a window.
func TestV6AheadDecidesAsWindow(t *testing.T) {
	starts := v6LookInputs(t)
	var r Reader
	checked, credible := 0, 0
	for _, s := range starts {
		for depth := 0; depth <= 1; depth++ {
			r.s.init(bytes.NewReader(s.in[s.from:]))
			w, _ := r.s.peek(searchWindow)
			w = bytes.Clone(w)
			a, more := r.v6Ahead(depth)
			r.s.end()
			if len(a) > len(w) || !bytes.Equal(a, w[:len(a)]) {
				t.Fatalf("offset %d: v6Ahead(%d) gives %d bytes that are not the window's first", s.from, depth, len(a))
			}
			for _, end := range []bool{false, true} {
				want := v6Block(w, depth, end, len(w) == searchWindow)
				if got := v6Block(a, depth, end, more); got != want {
					t.Fatalf("offset %d of %d, depth %d, end %v: %v on v6Ahead's %d bytes (more %v), %v on the window's %d", s.from, len(s.in), depth, end, got, len(a), more, want, len(w))
				}
				checked++
				if want {
					credible++
				}
			}
		}
	}
	t.Logf("%d of %d decisions credible", credible, checked)
	// The test means something only if both answers came up often.
	if credible < 100 || checked-credible < 100 {
		t.Errorf("%d of %d decisions credible: the inputs do not test both answers", credible, checked)
	}
}

// TestV6LookDecidesAsWindow checks look.v6 as findBack and resync use it:
// from a start inside bytes already taken from the stream (the last bytes
// of a block findBack looks back into), or inside the stream (a candidate
// of resync's round), v6Block decides on the bytes it looks at as it does
// on the window that the search looked at before: the bytes taken and the
// stream's next searchWindow (findBack), or the stream's next
// searchWindow (resync). The places are TestV6AheadDecidesAsWindow's.
func TestV6LookDecidesAsWindow(t *testing.T) {
	var s stream
	checked, credible := 0, 0
	judge := func(in v6Look, pre, start int) {
		if in.from+pre > len(in.in) {
			return
		}
		s.init(bytes.NewReader(in.in[in.from+pre:]))
		ahead, _ := s.peek(searchWindow)
		w := append(bytes.Clone(in.in[in.from:in.from+pre]), ahead...)
		if start+4 > len(w) {
			s.end()
			return // the callers look only where a header's bytes are
		}
		want := v6Block(w[start:], 1, false, len(ahead) == searchWindow)
		l := look{s: &s, pre: in.in[in.from : in.from+pre]}
		a, more := l.v6(start, 1, pre+searchWindow)
		s.end()
		if len(a) < start || len(a) > len(w) || !bytes.Equal(a, w[:len(a)]) {
			t.Fatalf("offset %d, %d bytes taken, start %d: the look's %d bytes are not the window's first", in.from, pre, start, len(a))
		}
		if got := v6Block(a[start:], 1, false, more); got != want {
			t.Fatalf("offset %d of %d, %d bytes taken, start %d: %v on the look's %d bytes (more %v), %v on the window's %d", in.from, len(in.in), pre, start, got, len(a), more, want, len(w))
		}
		checked++
		if want {
			credible++
		}
	}
	for k, in := range v6LookInputs(t) {
		if k%3 != 0 {
			continue // every offset is some other's start below
		}
		for _, pre := range []int{1, 4, 5, 37, 300} {
			for _, start := range []int{0, 1, pre / 2, pre - 4, pre - 1} {
				if start >= 0 && start < pre {
					judge(in, pre, start)
				}
			}
		}
		for _, start := range []int{1, 2, 3, 57} {
			judge(in, 0, start)
		}
	}
	t.Logf("%d of %d decisions credible", credible, checked)
	if credible < 100 || checked-credible < 100 {
		t.Errorf("%d of %d decisions credible: the inputs do not test both answers", credible, checked)
	}
}

// v6Look is where a V6 judgement after damage looks: from in[from:].
type v6Look struct {
	in   []byte
	from int
}

// v6LookInputs returns the places TestV6AheadDecidesAsWindow and
// TestV6LookDecidesAsWindow judge: every offset of the first 6,000 bytes
// of a V6 trace and of its last 400 before a cut, random bytes made to
// look like block headers, and streams cut at and about the ends of the
// trace's first blocks.
func v6LookInputs(t *testing.T) []v6Look {
	t.Helper()
	full := benchV6Trace()
	if len(full) < 2*searchWindow {
		t.Fatalf("the V6 trace holds %d bytes, want at least %d", len(full), 2*searchWindow)
	}
	data := full[:searchWindow+searchWindow/2]
	rng := rand.New(rand.NewPCG(1, 2))
	noise := make([]byte, searchWindow+1000)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
		if i%7 == 3 {
			noise[i] = byte(kindEvent + rng.IntN(kindLabelList-kindEvent+1)) // a credible kind, in a header's top byte
		}
		if i%97 == 0 {
			noise[i] = 0
		}
	}
	var starts []v6Look
	for i := 0; i < 6000; i++ {
		starts = append(starts, v6Look{data, i})
	}
	for i := len(data) - 400; i < len(data); i++ {
		starts = append(starts, v6Look{data, i})
	}
	for i := 0; i < 3000; i++ {
		starts = append(starts, v6Look{noise, i})
	}
	// Streams cut at and about the ends of the first blocks, read from
	// their headers: where the input ends decides whether a block is
	// believed.
	var ends []int
	for i := 8 + 4 + 4 + 4; i+4 <= len(data) && len(ends) < 40; {
		ends = append(ends, i)
		i += 4 + int(le32(data[i:])&0xFFFFFF)
	}
	for k := 0; k+2 < len(ends); k++ {
		for _, cut := range []int{ends[k+1] - 1, ends[k+1], ends[k+1] + 1, ends[k+1] + 4, ends[k+1] + 5, ends[k+2] - 1, ends[k+2], ends[k+2] + 1} {
			starts = append(starts, v6Look{data[:cut], ends[k]})
		}
	}
	return starts
}

// TestV6LiveLargeBlockAfterDamage reads a live V6 stream (a pipe that
// stays open) in which damage to an event's size loses the rest of its
// block, then comes an event block larger than 60 KiB and a small one
// after it. After the damage the large block is read once the header
// and block after it check (believeLarge); they are all the stream holds,
// and a look 60 KiB past the large block's end waited for ever.
func TestV6LiveLargeBlockAfterDamage(t *testing.T) {
	w := newV6Writer(8, 0)
	w.threads(wThread{index: 1, pid: 1234, tid: 7777})
	w.metadata(wMeta{id: 1, provider: "P", eventID: 1, name: "E"})
	blockA := w.buf.Len()
	w.events(false,
		wEvent{meta: 1, seq: 1, thread: 1, capThread: 1, ts: 1_000_100, payload: []byte{1, 1, 1, 1}},
		wEvent{meta: 1, seq: 2, thread: 1, capThread: 1, ts: 1_000_200, payload: []byte{2, 2, 2, 2}},
	)
	// The first event's size (after the block's size and its 24-byte
	// header) runs past the block.
	binary.LittleEndian.PutUint32(w.buf.Bytes()[blockA+4+24:], 0xFFFF)
	large := largeEvents(1600, 3, 1)
	w.events(true, large...)
	if n := w.buf.Len() - blockA; n < searchWindow+1000 {
		t.Fatalf("the blocks take %d bytes, want the large one larger than %d", n, searchWindow)
	}
	w.events(true, wEvent{meta: 1, seq: 1603, thread: 1, capThread: 1, ts: 1_002_000, payload: []byte{3}, sorted: true})
	tr := w.end()
	// All but the EndOfStream block.
	if n := liveCount(t, tr[:len(tr)-4], len(large)+1); n < len(large)+1 {
		t.Errorf("%d events within 5 s, want the large block's %d and the one after it", n, len(large))
	}
}

// TestV5LiveDamageDoesNotStall reads the start of the repository's .NET
// 5 trace as a live stream: its first two event blocks (4 events and 1),
// and a few bytes of what follows, on a pipe that stays open, as a
// runtime's stream stands between two writes. Damage to the first event's
// header loses the first block; the second block's event comes all the
// same, without the reader looking further ahead than the stream holds.
func TestV5LiveDamageDoesNotStall(t *testing.T) {
	data := bytes.Clone(loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip")))
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var first int64 = -1
	var blocks []int64 // the event blocks' offsets
	for len(blocks) < 3 {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if first < 0 {
			first = e.Offset
		}
		if len(blocks) == 0 || blocks[len(blocks)-1] != r.blkOff {
			blocks = append(blocks, r.blkOff)
		}
	}
	cut := int(blocks[2]) - 10 // inside the third block's object header
	if blocks[2]-blocks[1] > 1000 || cut > searchWindow/2 {
		t.Fatalf("event blocks at %v: the trace is not the one this test knows", blocks)
	}
	data[first+1] = 0xFF // the first event's first varint runs on
	_, _, err = readToEnd(data[:cut], FileOrder)
	var de *DamageError
	if !errors.As(err, &de) || de.Damage[0].Offset != first || de.Damage[0].Length < 300 {
		t.Fatalf("read from memory: %v, want the rest of the first block (383 bytes) lost from %d", err, first)
	}
	if n := liveCount(t, data[:cut], 1); n != 1 {
		t.Errorf("%d events within 5 s, want the second block's one", n)
	}
}

// TestV5LiveFramingDamage reads the start of the repository's .NET 5
// trace, damaged in a block's framing, as a live stream: its first event
// blocks and the start of the next, on a pipe that stays open. The search
// for the next block (resync) and for the end of a block whose size is
// too small (sizeUndershoot) looked at 60 KiB at once, which a quiet
// session may take minutes to write; they read on with the bytes at hand.
// Each case gets as many events live as from memory, where the damage
// message says which search ran.
func TestV5LiveFramingDamage(t *testing.T) {
	data := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"))
	hs := blockHeaders(data)
	var events []int // the first event blocks' headers
	for _, h := range hs {
		if n := int(le32(data[h+11:])); string(data[h+15:h+15+n]) == "EventBlock" {
			events = append(events, h)
		}
	}
	if len(events) < 3 || events[2] > searchWindow/2 {
		t.Fatalf("event blocks at %v: the trace is not the one this test knows", events)
	}
	sizeAt := func(h int) int { return h + 15 + int(le32(data[h+11:])) + 1 }
	cut := events[2] + 10 // in the third event block's header
	for _, c := range []struct {
		name string
		mut  func(d []byte)
		want string // in the first damage's message
		min  int    // events from memory, at least
	}{
		{"the second block's header wiped", func(d []byte) {
			for i := events[0]; i < events[0]+16; i++ {
				d[i] = 0xEE
			}
		}, "bad tags", 1},
		{"a block size 8 short", func(d []byte) {
			p := sizeAt(events[1])
			binary.LittleEndian.PutUint32(d[p:], le32(d[p:])-8)
		}, "the size is damaged; the block ends there", 5},
		{"a block size 40 short", func(d []byte) {
			p := sizeAt(events[1])
			binary.LittleEndian.PutUint32(d[p:], le32(d[p:])-40)
		}, "ends 40 bytes before", 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := bytes.Clone(data[:cut])
			c.mut(d)
			_, n, err := readToEnd(d, FileOrder)
			var de *DamageError
			if !errors.As(err, &de) || !strings.Contains(de.Damage[0].Err.Error(), c.want) || n < c.min {
				t.Fatalf("read from memory: %d events, %v; want at least %d, and damage that says %q", n, err, c.min, c.want)
			}
			if got := liveCount(t, d, n); got != n {
				t.Errorf("%d events within 5 s, want the %d read from memory", got, n)
			}
		})
	}
}

// TestV6LiveFramingDamage does what TestV5LiveFramingDamage does for a
// V6 stream written here: four event blocks, damaged so that the reader
// searches for the next block (resync) or for a header in a block's last
// bytes (findBack). Both judged a block on 60 KiB; each judgement now
// waits only for the blocks it checks, and lets a made-up header go on
// its first bytes. The payloads hold no bytes that read as a credible
// block kind, as most real ones do not: a header made up of a payload's
// bytes that checks where this reader looks first (see look.v6) still
// waits for the bytes it states, up to 60 KiB.
func TestV6LiveFramingDamage(t *testing.T) {
	for _, c := range []struct {
		name string
		mut  func(b []byte, a, bb int)
		want string // in a damage's message
	}{
		{"an event size, then the next block's kind", func(b []byte, a, bb int) {
			binary.LittleEndian.PutUint32(b[a+4+24:], 0xFFFF)
			b[bb+3] = 0xEE
		}, "not a credible block header"},
		{"an event size, then the next block's size", func(b []byte, a, bb int) {
			binary.LittleEndian.PutUint32(b[a+4+24:], 0xFFFF)
			binary.LittleEndian.PutUint32(b[bb:], le32(b[bb:])-3)
		}, "not a credible block header"},
		{"an event size and its block's size, 3 short", func(b []byte, a, bb int) {
			binary.LittleEndian.PutUint32(b[bb+4+24:], 0xFFFF)
			binary.LittleEndian.PutUint32(b[bb:], le32(b[bb:])-3)
		}, "not a credible block header"},
		{"an event size and its block's size, 3 over", func(b []byte, a, bb int) {
			binary.LittleEndian.PutUint32(b[bb+4+24:], 0xFFFF)
			binary.LittleEndian.PutUint32(b[bb:], le32(b[bb:])+3)
		}, "runs 3 bytes past its end, into the next block"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newV6Writer(8, 0)
			w.threads(wThread{index: 1, pid: 1234, tid: 7777})
			w.metadata(wMeta{id: 1, provider: "P", eventID: 1, name: "E"})
			a := w.buf.Len()
			w.events(false,
				wEvent{meta: 1, seq: 1, thread: 1, capThread: 1, ts: 1_000_100, payload: []byte("AAAA")},
				wEvent{meta: 1, seq: 2, thread: 1, capThread: 1, ts: 1_000_200, payload: []byte("BBBB")},
			)
			bb := w.buf.Len()
			w.events(true, wEvent{meta: 1, seq: 3, thread: 1, capThread: 1, ts: 1_001_000, payload: []byte("CCCCCCCC"), sorted: true})
			w.events(true,
				wEvent{meta: 1, seq: 4, thread: 1, capThread: 1, ts: 1_002_000, payload: []byte("D"), sorted: true},
				wEvent{meta: 1, seq: 5, thread: 1, capThread: 1, ts: 1_002_100, payload: []byte("E")},
			)
			w.events(true, wEvent{meta: 1, seq: 6, thread: 1, capThread: 1, ts: 1_003_000, payload: []byte("F"), sorted: true})
			tr := w.end()
			c.mut(tr, a, bb)
			d := tr[:len(tr)-4] // the runtime has not ended the stream
			_, n, err := readToEnd(d, FileOrder)
			var de *DamageError
			if !errors.As(err, &de) || !slices.ContainsFunc(de.Damage, func(x Damage) bool { return strings.Contains(x.Err.Error(), c.want) }) || n < 3 {
				t.Fatalf("read from memory: %d events, %v; want at least 3, and damage that says %q", n, err, c.want)
			}
			if got := liveCount(t, d, n); got != n {
				t.Errorf("%d events within 5 s, want the %d read from memory", got, n)
			}
		})
	}
}

// TestPeekSomeTakesWhatIsAtHand: peekSome returns the bytes the buffer
// holds without waiting for more, and waits for the least it is asked.
func TestPeekSomeTakesWhatIsAtHand(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	go pw.Write([]byte("0123456789"))
	var s stream
	s.init(pr)
	b, err := s.peekSome(4, 100) // waits for 4; the pipe's one write brings 10
	if err != nil || string(b) != "0123456789" {
		t.Fatalf("peekSome(4, 100) = %q, %v; want the 10 bytes written", b, err)
	}
	if b, _ = s.peekSome(1, 6); string(b) != "012345" {
		t.Fatalf("peekSome(1, 6) = %q, want the first 6", b)
	}
	s.discard(8)
	go pw.Write([]byte("abc"))
	if b, err = s.peekSome(3, 100); err != nil || string(b) != "89abc" {
		t.Fatalf("peekSome(3, 100) after 8 bytes = %q, %v; want \"89abc\"", b, err)
	}
}

// liveCount writes stream to a pipe that stays open after it, reads
// events from it in file order until it has want of them, and returns how
// many it had within 5 s.
func liveCount(t *testing.T, stream []byte, want int) int {
	t.Helper()
	pr, pw := io.Pipe()
	go pw.Write(stream)
	var n atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		r, err := NewReader(pr)
		if err != nil {
			return
		}
		for n.Load() < int64(want) {
			if _, err := r.Next(); err != nil {
				return
			}
			n.Add(1)
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	got := int(n.Load())
	pw.Close() // a reader still waiting ends with the pipe
	<-done
	return got
}
