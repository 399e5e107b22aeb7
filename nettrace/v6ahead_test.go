package nettrace

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand/v2"
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
	pr, pw := io.Pipe()
	go pw.Write(tr[:len(tr)-4]) // all but the EndOfStream block
	defer pw.Close()
	got := make(chan int, 1)
	go func() {
		r, err := NewReader(pr)
		if err != nil {
			got <- -1
			return
		}
		n := 0
		for {
			if _, err := r.Next(); err != nil {
				return
			}
			n++
			if n == len(large)+1 {
				got <- n
				return
			}
		}
	}()
	select {
	case n := <-got:
		if n < 0 {
			t.Fatal("NewReader failed")
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the large block's %d events and the one after it did not come within 5 s", len(large))
	}
}
