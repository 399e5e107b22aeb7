package nettrace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"path/filepath"
	"testing"
)

// TestStrayThread damages the .NET Core 3.0 trace where the third audit
// found damage that nothing reported: one flipped byte of a compressed
// header's flags (or 64 zeroed bytes) left headers that parse, and every
// later header of the block inherited a garbled thread, sequence number
// or time. Before, the reader found no damage: up to 1,116 events came
// out with threads that do not exist and other metadata, stacks and
// times, and their gaps counted up to 1,259 events as the runtime's
// drops (the intact trace has none). The first header after the damage
// that names a capture thread of its own names one never seen, numbered
// a delta above the event before it: that is damage now, each such event
// skipped, and when a known thread's number then jumps past them, the
// rest of the block is lost with it. What must hold: the damage is found, the
// events it counts are the events missing (within a margin: the garbled
// header before it can take a few), no event outside the damaged block is
// lost or changed, at most one in it is changed (the garbled header's
// own), and no drop is counted.
func TestStrayThread(t *testing.T) {
	data := loadTrace(t, "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip")
	blocks := fsBlocks(data)
	for _, c := range []struct {
		at, end int  // the bytes damaged
		mask    byte // xor with it; 0: zero them
	}{
		{3239252, 3239253, 0x15}, // 0x81 → 0x94: thread, activity and size, no metadata ID
		{1413270, 1413271, 0x1b},
		{2142461, 2142462, 0xbf},
		{3613116, 3613180, 0},
	} {
		bad := bytes.Clone(data)
		for i := c.at; i < c.end; i++ {
			if c.mask == 0 {
				bad[i] = 0
			} else {
				bad[i] ^= c.mask
			}
		}
		var blk fsBlock
		for _, b := range blocks {
			if b.hdr <= c.at && c.at < b.end {
				blk = b
			}
		}
		if blk.name != "EventBlock" {
			t.Fatalf("byte %d is in %q at %d, not an event block", c.at, blk.name, blk.hdr)
		}
		in := func(off int64) bool { return off >= int64(blk.hdr) && off < int64(blk.end) }
		for _, o := range []Order{FileOrder, TimeOrder} {
			what := fmt.Sprintf("bytes [%d,%d) of the event block at %d, %v", c.at, c.end, blk.hdr, o)
			want, wantN, _, _ := readFull(t, data, o)
			got, n, damage, err := readFull(t, bad, o)
			r, _, _ := readToEnd(bad, o)
			if len(damage) == 0 || err == io.EOF {
				t.Errorf("%s: no damage found (%v): %d events, Dropped %d", what, err, n, r.Dropped())
				continue
			}
			var outside, inside int
			for k, w := range want {
				g, ok := got[k]
				switch {
				case !in(w.off) && (!ok || g != w):
					outside++
				case in(w.off) && ok && g != w:
					inside++
				}
			}
			counted := int64(0)
			for _, d := range damage {
				counted += d.Events
			}
			missing := int64(wantN - n)
			if outside > 0 || inside > 1 || r.Dropped() != 0 || counted < missing-2 || counted > missing+16 {
				t.Errorf("%s: %d events outside the block and %d in it lost or changed, Dropped %d, %d missing, %d counted lost: %v",
					what, outside, inside, r.Dropped(), missing, counted, damage)
			}
		}
	}
}

// TestCaptureThreadDamaged flips a byte of a compressed header's capture
// thread field, in a block's first header (the pyroscope trace) and in
// the middle of blocks (the 3.0 trace): the header names a thread never
// seen, with the current thread's next number, and the headers after it
// inherit it until one states a thread again. Those events were handed
// out with the made-up thread, and their real thread's next number
// counted them as dropped (369 for the first); taken for made up
// (d8c1737), they were lost, up to 3,526. Now they are read as the
// current thread's: every event comes out unchanged, in both orders, no
// drop is counted, and the field is one Damage that lost nothing.
func TestCaptureThreadDamaged(t *testing.T) {
	for _, c := range []struct {
		path string
		at   int
		mask byte
	}{
		{"../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace", 92666, 0x47},
		{"../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip", 3489517, 111},
		{"../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip", 3990251, 66},
		{"../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip", 948873, 36},
	} {
		data := loadTrace(t, c.path)
		bad := bytes.Clone(data)
		bad[c.at] ^= c.mask
		for _, o := range []Order{FileOrder, TimeOrder} {
			want, wantN, _, _ := readFull(t, data, o)
			got, n, damage, _ := readFull(t, bad, o)
			r, _, _ := readToEnd(bad, o)
			lost, changed := diffEvents(want, got)
			if lost+changed > 0 || n != wantN || r.Dropped() != 0 || len(damage) != 1 || damage[0].Events != 0 || damage[0].Offset > int64(c.at) {
				t.Errorf("%s, byte %d ^%#x, %v: %d events of %d, %d lost, %d changed, Dropped %d, damage %v",
					filepath.Base(c.path), c.at, c.mask, o, n, wantN, lost, changed, r.Dropped(), damage)
			}
		}
	}
}

// cEvent is an event of a compressedTrace: its capture thread (its
// thread too), its sequence number and its time.
type cEvent struct {
	thread uint64
	seq    uint32
	ts     int64
}

// compressedTrace writes a NetTrace V4 trace whose event blocks have
// compressed headers, as the runtime writes them: each header's fields
// that differ from the header before it's (zero at the block's start),
// its sequence number as a delta, its time as a delta. Every event has
// metadata 1 and a 4-byte payload, its sequence number. A sequence point
// before block sp lists each thread's last number, and those of extra.
func compressedTrace(sp int, extra []cEvent, blocks ...[]cEvent) []byte {
	le := binary.LittleEndian
	w := newFSWriter()
	md := v5BlockHeader(0, 0)
	md = v5Blob{sorted: true, payload: v5Metadata(1, "P", 1, "E", Field{Name: "N", Type: TypeUInt32})}.append(md)
	w.block("MetadataBlock", md)
	last := map[uint64]uint32{}
	var order []uint64
	for i, evs := range blocks {
		if i == sp {
			p := le.AppendUint64(nil, uint64(evs[0].ts-1))
			p = le.AppendUint32(p, uint32(len(order)+len(extra)))
			for _, th := range order {
				p = le.AppendUint64(p, th)
				p = le.AppendUint32(p, last[th])
			}
			for _, x := range extra {
				p = le.AppendUint64(p, x.thread)
				p = le.AppendUint32(p, x.seq)
			}
			w.block("SPBlock", p)
		}
		b := le.AppendUint16(nil, 20)
		b = le.AppendUint16(b, 1) // compressed headers
		b = le.AppendUint64(b, uint64(evs[0].ts))
		b = le.AppendUint64(b, uint64(evs[len(evs)-1].ts))
		var prev cEvent
		var prevMeta, prevSize uint64
		for _, e := range evs {
			var f byte
			var h []byte
			if prevMeta != 1 {
				f |= 1
				h = appendVar(h, 1)
			}
			if e.seq != prev.seq+1 || e.thread != prev.thread {
				f |= 2
				h = appendVar(h, uint64(e.seq-prev.seq-1))
				h = appendVar(h, e.thread)
				h = appendVar(h, 0) // processor
			}
			if e.thread != prev.thread {
				f |= 4
				h = appendVar(h, e.thread)
			}
			h = appendVar(h, uint64(e.ts-prev.ts))
			if prevSize != 4 {
				f |= 0x80
				h = appendVar(h, 4)
			}
			b = append(append(append(b, f), h...), le.AppendUint32(nil, e.seq)...)
			prev, prevMeta, prevSize = e, 1, 4
			if _, ok := last[e.thread]; !ok {
				order = append(order, e.thread)
			}
			last[e.thread] = e.seq
		}
		w.block("EventBlock", b)
	}
	return w.end()
}

// TestStrayThreadSynthetic: which threads first seen with a number above
// 1 are taken for made up (a garbled header's), and which are not, and
// what is lost with them. A thread's first events the runtime dropped
// number its first event above 1; that is damage only where the header
// states the number as a delta of a few above the event before it, and
// no damage was found since the last sequence point. Not at a block's
// start, whose first header states its number in full; not where the
// delta goes round (the number is below the one before); not for a
// thread a sequence point listed. A made-up thread's event is lost alone,
// unless a known thread's number then jumps by more than the events so
// skipped: then the rest of the block.
func TestStrayThreadSynthetic(t *testing.T) {
	const a, b, c, d, e = 10, 20, 30, 40, 50
	ok := [][]cEvent{
		{{a, 1, 100}, {a, 2, 110}, {b, 1, 120}, {a, 3, 130}},
		{{c, 7, 200}, {a, 4, 210}, {d, 3, 220}, {a, 5, 230}}, // c first in its block; d below a's 4
		{{a, 6, 300}, {a, 7, 310}},
	}
	for _, o := range []Order{FileOrder, TimeOrder} {
		r, n, err := readToEnd(compressedTrace(-1, nil, ok...), o)
		if err != io.EOF || n != 10 || len(r.Damage()) > 0 {
			t.Errorf("%v: %d events of 10, %v, damage %v", o, n, err, r.Damage())
		}
		// e is first seen numbered 9, the event before it 7: taken for a
		// thread a damaged header made up, and skipped alone; a's numbers
		// go on from its last (the made-up thread's event was a's), and
		// nothing else is lost.
		stray := append(ok[:2:2], []cEvent{{a, 6, 300}, {a, 7, 310}, {e, 9, 320}, {a, 8, 330}, {a, 9, 340}}, []cEvent{{a, 10, 400}}, []cEvent{{a, 11, 500}})
		r, n, err = readToEnd(compressedTrace(-1, nil, stray...), o)
		if d := r.Damage(); err == io.EOF || n != 14 || len(d) != 1 || d[0].Offset != 551 || d[0].Events != 0 || r.Dropped() != 0 {
			t.Errorf("%v, a made-up thread: %d events of 14, %v, damage %v, Dropped %d", o, n, err, d, r.Dropped())
		}
		// After it, a's number jumps by more than the events skipped: the
		// block's numbers were moved from the damaged header on, and the
		// rest of the block is lost with it. a's next number, in the next
		// block, shows its two events lost.
		moved := append(ok[:2:2], []cEvent{{a, 6, 300}, {a, 7, 310}, {e, 9, 320}, {a, 15, 330}, {a, 16, 340}}, []cEvent{{a, 10, 400}}, []cEvent{{a, 11, 500}})
		r, n, err = readToEnd(compressedTrace(-1, nil, moved...), o)
		if d := r.Damage(); err == io.EOF || n != 12 || len(d) != 2 || d[0].Offset != 551 || d[1].Events != 2 || r.Dropped() != 0 {
			t.Errorf("%v, numbers moved after a made-up thread: %d events of 12, %v, damage %v, Dropped %d", o, n, err, d, r.Dropped())
		}
		// Listed by a sequence point (its first 8 events dropped), e is a
		// thread the trace knows.
		r, n, err = readToEnd(compressedTrace(2, []cEvent{{e, 8, 0}}, stray...), o)
		if err != io.EOF || n != 15 || len(r.Damage()) > 0 {
			t.Errorf("%v, a thread a sequence point listed: %d events of 15, %v, damage %v", o, n, err, r.Damage())
		}
	}
}

// TestCaptureThreadFieldSweep flips a bit of the capture thread field of
// headers that state one (every 7th of the pyroscope trace's event
// headers that do, every one of the arraytypes trace's), each alone, in
// file order. The header names a thread never seen with a thread's next
// number, and the headers that inherit the field follow it. Where that
// thread was first seen blocks before, the events are its: every event
// comes out unchanged, no drop is counted, and the damage is one record
// that lost nothing (before, the events came out with the made-up
// thread, and their thread's next number counted them as dropped: 382
// and 716 of the arraytypes trace's 1,970). Where it was first seen in
// the block or the one before, the damage may as well have made it up
// at its own first header: then nothing tells, the events come out as
// they state (a few, the ones that inherit the field), none is lost, and
// no more are counted as dropped.
func TestCaptureThreadFieldSweep(t *testing.T) {
	for _, tr := range []sampledTrace{threeTraces(7, 1, 0)[0], threeTraces(7, 1, 0)[1]} {
		data := loadTrace(t, tr.path)
		want, wantN, _, _ := readFull(t, data, FileOrder)
		threads := map[uint64]bool{}
		for k := range want {
			threads[k.ct] = true
		}
		var fields []int // where a header's capture thread field starts
		for _, b := range fsBlocks(data) {
			if b.name != "EventBlock" {
				continue
			}
			for _, rec := range compressedRecords(data, b) {
				at := rec.hdr
				if f := data[at]; f&2 != 0 {
					i := at + 1
					if f&1 != 0 {
						for data[i]&0x80 != 0 {
							i++
						}
						i++
					}
					for data[i]&0x80 != 0 { // the sequence delta
						i++
					}
					fields = append(fields, i+1)
				}
			}
		}
		mended := 0
		for j := 0; j < len(fields); j += tr.every {
			at := fields[j]
			bad := bytes.Clone(data)
			bad[at] ^= 0x10
			if v, _ := binary.Uvarint(bad[at:]); threads[v] {
				continue // another thread of the trace: nothing tells
			}
			got, n, damage, _ := readFull(t, bad, FileOrder)
			r, _, _ := readToEnd(bad, FileOrder)
			lost, changed := diffEvents(want, got)
			mend := lost+changed == 0 && len(damage) == 1 && damage[0].Events == 0
			if mend {
				mended++
			}
			if n != wantN || mend && r.Dropped() != 0 || !mend && (len(damage) > 0 || lost+changed > 8 || r.Dropped() > uint64(lost+changed)) {
				t.Errorf("%s, capture thread field at %d: %d events of %d, %d lost, %d changed, Dropped %d, damage %v",
					filepath.Base(tr.path), at, n, wantN, lost, changed, r.Dropped(), damage)
			}
		}
		if mended < 3 {
			t.Errorf("%s: %d fields put right", filepath.Base(tr.path), mended)
		}
	}
}
