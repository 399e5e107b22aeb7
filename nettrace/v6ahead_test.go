package nettrace

import (
	"bytes"
	"math/rand/v2"
	"testing"
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
