package nettrace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"path/filepath"
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
	var starts []struct {
		in   []byte
		from int
	}
	for i := 0; i < 6000; i++ {
		starts = append(starts, struct {
			in   []byte
			from int
		}{data, i})
	}
	for i := len(data) - 400; i < len(data); i++ {
		starts = append(starts, struct {
			in   []byte
			from int
		}{data, i})
	}
	for i := 0; i < 3000; i++ {
		starts = append(starts, struct {
			in   []byte
			from int
		}{noise, i})
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
			starts = append(starts, struct {
				in   []byte
				from int
			}{data[:cut], ends[k]})
		}
	}
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
