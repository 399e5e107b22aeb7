package etl

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestShiftSweep moves the bytes after a point in a buffer of each log by
// a few bytes (some taken out, or zeros put in), as damage does to a
// zipped log when deflate decodes on past it, garbling a stretch and
// leaving what follows earlier or later than it was. A log whose buffers
// all have its BufferSize was searched only at multiples of it after
// damage, which a shift leaves between buffers: every buffer after it was
// lost. Now the multiple must hold a credible header, else the search
// looks at every byte. Read each way, every event from the second buffer
// after the shifted one on comes out. The first can be lost with it:
// where bytes were taken out, its header begins inside the damaged
// buffer's bytes, behind where the search starts; where zeros were put
// in, the bytes at its old place can pass for a header's size, and a
// buffer of garbage is read there.
func TestShiftSweep(t *testing.T) {
	for _, l := range damageTraces(t) {
		t.Run(l.name, func(t *testing.T) {
			var report []string
			step := max(1, len(l.bufs)/8)
			for bi := 1; bi+2 < len(l.bufs); bi += step {
				b := l.bufs[bi]
				// Inside the buffer's events (compressed: its data).
				at := b.off + bufferHeaderSize + (min(b.saved, b.end-b.off)-bufferHeaderSize)/2
				for _, delta := range []int{-3, -1, 2, 40} {
					bad := slices.Clone(l.data[:at])
					if delta < 0 {
						bad = append(bad, l.data[at-int64(delta):]...)
					} else {
						bad = append(bad, make([]byte, delta)...)
						bad = append(bad, l.data[at:]...)
					}
					from := bi + 2 // the first buffer that must come out whole
					names, open := damageReaders(t, bad)
					for i, o := range open {
						what := fmt.Sprintf("%s: shift of %+d at %d (buffer %d), %s", l.name, delta, at, bi, names[i])
						r, done := o()
						got := map[int64]bool{} // by offset in the intact log
						for {
							e, err := r.Next()
							if err != nil {
								break
							}
							off := e.Offset
							if off >= at {
								off -= int64(delta)
							}
							got[off] = true
						}
						done()
						missing := 0
						var first ev
						for _, e := range l.events {
							if e.Buffer >= from && !got[e.Offset] {
								if missing == 0 {
									first = e
								}
								missing++
							}
						}
						if missing > 0 {
							t.Errorf("%s: %d events of buffers %d on are missing, the first %+v; damage %v", what, missing, from, first, r.Damage())
						}
						if i == 0 {
							report = append(report, fmt.Sprintf("%d@%d%+d", len(got), at, delta))
						}
					}
				}
			}
			t.Logf("%d events intact; read: %s", len(l.events), strings.Join(report, " "))
		})
	}
}
