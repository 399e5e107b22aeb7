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
// looks at every byte. Read each way, every event from the buffer after
// the shifted one on comes out. That buffer used to be lost too: where
// bytes were taken out its header begins inside the damaged buffer's
// bytes, behind where the search started (it now starts inside that
// buffer), and where zeros were put in, the bytes at its old place passed
// for a header's size, and a buffer of garbage was read there (a header
// that fails the search's checks is now taken only when its size leads to
// another header: TestUnknownHeaderChained).
func TestShiftSweep(t *testing.T) {
	for _, l := range damageTraces(t) {
		t.Run(l.name, func(t *testing.T) {
			var report []string
			step := max(1, len(l.bufs)/8)
			bis := []int{0} // the first buffer: after the log header's event, which reading needs
			for bi := 1; bi+2 < len(l.bufs); bi += step {
				bis = append(bis, bi)
			}
			for _, bi := range bis {
				b := l.bufs[bi]
				// Inside the buffer's events (compressed: its data).
				start, end := b.off+bufferHeaderSize, b.off+min(b.saved, b.end-b.off)
				if bi == 0 {
					start = l.hdrEnd
				}
				if end-start < 16 {
					t.Logf("buffer %d: no events to shift after the log header's", bi)
					continue
				}
				at := start + (end-start)/2
				for _, delta := range []int{-3, -1, 2, 40} {
					bad := slices.Clone(l.data[:at])
					if delta < 0 {
						bad = append(bad, l.data[at-int64(delta):]...)
					} else {
						bad = append(bad, make([]byte, delta)...)
						bad = append(bad, l.data[at:]...)
					}
					from := bi + 1 // the first buffer that must come out whole
					names, open := damageReaders(t, bad)
					for i, o := range open {
						what := fmt.Sprintf("%s: shift of %+d at %d (buffer %d), %s", l.name, delta, at, bi, names[i])
						r, done := o()
						got := map[int64]bool{} // by offset in the intact log
						var offs []int64        // in the shifted log
						for {
							e, err := r.Next()
							if err != nil {
								break
							}
							off := e.Offset
							offs = append(offs, off)
							if off >= at {
								off -= int64(delta)
							}
							got[off] = true
						}
						done()
						// What was read is not in what the damage says was
						// skipped: the events, and the headers of the
						// buffers after the shifted one (file offsets where
						// buffers are stored plain; a compressed one's
						// events are counted in its expansion).
						if !l.bufs[bi].compressed {
							for _, b := range l.bufs[bi+1:] {
								offs = append(offs, b.off+int64(delta))
							}
							for _, d := range r.Damage() {
								for _, off := range offs {
									if off >= d.Offset && off < d.Offset+d.Length {
										t.Errorf("%s: %d was read, inside damage %+v", what, off, d)
										break
									}
								}
							}
						}
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

// TestUnknownHeaderChained reads logs in which one buffer's header has a
// flag bit no log here sets and a buffer type beyond the known ones, as a
// future writer might: the header fails the checks a search makes, but its
// size leads to the next buffer's header, so it is read as it is, every
// event of it included, each way.
//
// The same with every buffer's header changed but the first's (which holds
// the log header): no header passes the checks then, but each leads to the
// next by its size.
func TestUnknownHeaderChained(t *testing.T) {
	for _, l := range damageTraces(t) {
		for _, bi := range []int{1, len(l.bufs) / 2, len(l.bufs) - 2, -1} {
			odd := slices.Clone(l.data)
			which := fmt.Sprintf("buffer %d's header", bi)
			for j, b := range l.bufs {
				if j == 0 || bi >= 0 && j != bi {
					continue
				}
				le.PutUint16(odd[b.off+52:], le.Uint16(odd[b.off+52:])|0x100)
				le.PutUint16(odd[b.off+54:], BufferTypeDbgInfo+1)
				if r := mustFileOrder(t, odd); r.candidate(odd[b.off:]) {
					t.Fatalf("%s: buffer %d's changed header still passes the search's checks", l.name, j)
				}
			}
			if bi < 0 {
				which = "every buffer's header"
			}
			names, open := damageReaders(t, odd)
			for i, o := range open {
				r, done := o()
				got := readAll(t, r)
				done()
				if len(got) != len(l.events) || len(r.Damage()) > 0 {
					t.Errorf("%s: %s with flag 0x100 and type %d, %s: %d of %d events, damage %v",
						l.name, which, BufferTypeDbgInfo+1, names[i], len(got), len(l.events), r.Damage())
				}
			}
		}
	}
}
