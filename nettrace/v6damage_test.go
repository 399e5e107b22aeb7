package nettrace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"testing"
)

// TestV6DamageThenWriterBlocks: after damage, the reader believes a V6
// block only when it is credible, and the blocks real writers write must
// be: event blocks larger than the 60 KiB the reader looks at at once
// (the runtime writes up to 100 KB, one-collect's record-trace 1 MiB), a
// metadata block whose HeaderSize is 0 (it does not count itself, as an
// event block's does). Each was taken for more damage, and the events
// after it lost.
func TestV6DamageThenWriterBlocks(t *testing.T) {
	for _, metaHeader := range [][]byte{{}, {0xAA, 0xBB, 0xCC}} {
		w := newV6Writer(8, 0)
		w.metaHeader = metaHeader
		w.threads(wThread{index: 1, pid: 1234, tid: 7777})
		w.metadata(wMeta{id: 1, provider: "P", eventID: 1, name: "E"})
		blockA := w.buf.Len()
		w.events(true,
			wEvent{meta: 1, seq: 1, thread: 1, capThread: 1, ts: 1_000_100, payload: []byte{1}},
			wEvent{meta: 1, seq: 2, thread: 1, capThread: 1, ts: 1_000_200, payload: []byte{2}},
		)
		// Its first event's header garbled: the rest of the block is lost.
		at := int64(blockA + 4 + 24)
		copy(w.buf.Bytes()[at:], []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF})
		end := int64(w.buf.Len())
		w.metadata(wMeta{id: 2, provider: "P", eventID: 2, name: "F"})
		large := largeEvents(1600, 3, 2)
		w.events(true, large...)
		w.events(true, wEvent{meta: 2, seq: 1603, thread: 1, capThread: 1, ts: 1_002_000, payload: []byte{3}})
		_, n, err := readToEnd(w.end(), FileOrder)
		var de *DamageError
		if !errors.As(err, &de) || de.Stopped != nil || len(de.Damage) != 1 ||
			de.Damage[0].Offset != at || de.Damage[0].Offset+de.Damage[0].Length != end || de.Damage[0].Events != 2 {
			t.Errorf("metadata header of %d bytes: final error %v, want the damage from %d to %d, 2 events lost, alone", len(metaHeader), err, at, end)
		}
		if want := len(large) + 1; n != want {
			t.Errorf("metadata header of %d bytes: %d events, want %d", len(metaHeader), n, want)
		}
		if err == io.EOF {
			t.Error("no damage recorded")
		}
	}
}

// TestV6DropsFromDeclaration: a V6 thread's numbers count from the
// ThreadBlock that defines it, so a first event numbered 5 shows 4 events
// dropped before it, and a sequence point's 9 after it 4 more: 8, as
// TraceEvent counts them (the reader took the first event as where the
// numbers began, and counted 4). A row with an info kind a later version
// added keeps what came before it.
func TestV6DropsFromDeclaration(t *testing.T) {
	w := newV6Writer(8, 0)
	w.threads(wThread{index: 1, pid: 1234, tid: 7777})
	// Thread 2's row: its index, thread ID 88, then kind 9, which this
	// version does not define.
	row := appendVar(append(appendVar(nil, 2), 3), 88)
	row = append(row, 9, 0xEE, 0xEE)
	w.block(kindThread, append(binary.LittleEndian.AppendUint16(nil, uint16(len(row))), row...))
	w.metadata(wMeta{id: 1, provider: "P", eventID: 1, name: "E"})
	w.events(true,
		wEvent{meta: 1, seq: 5, thread: 1, capThread: 1, ts: 1_000_100},
		wEvent{meta: 1, seq: 1, thread: 2, capThread: 2, ts: 1_000_200},
	)
	w.sequencePoint(1_000_300, 0, 1, 9, 2, 1)
	data := w.end()
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var tids []uint64
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		tids = append(tids, e.ThreadID)
	}
	if got := r.Dropped(); got != 8 {
		t.Errorf("Dropped %d, want 8 (4 before the first event, 4 after it)", got)
	}
	if len(tids) != 2 || tids[0] != 7777 || tids[1] != 88 {
		t.Errorf("thread IDs %v, want [7777 88]", tids)
	}
}

// TestV6ResyncToLargeBlock: damage to a block's size puts the next block
// header off by a few bytes; the search for the next credible block must
// take an event block larger than the 60 KiB it looks at at once (it did
// not, and lost every event of a trace whose blocks were all as large).
func TestV6ResyncToLargeBlock(t *testing.T) {
	w := newV6Writer(8, 0)
	w.threads(wThread{index: 1, pid: 1234, tid: 7777})
	w.metadata(wMeta{id: 1, provider: "P", eventID: 1, name: "E"})
	blockA := w.buf.Len()
	w.events(true,
		wEvent{meta: 1, seq: 1, thread: 1, capThread: 1, ts: 1_000_100, payload: []byte{1, 1, 1, 1}},
		wEvent{meta: 1, seq: 2, thread: 1, capThread: 1, ts: 1_000_200, payload: []byte{2, 2, 2, 2}},
	)
	b := w.buf.Bytes()
	b[blockA] -= 3 // its size, 3 bytes short
	large := largeEvents(1600, 3, 1)
	w.events(true, large...)
	_, n, err := readToEnd(w.end(), FileOrder)
	var de *DamageError
	if !errors.As(err, &de) || de.Stopped != nil {
		t.Errorf("final error %v, want damage", err)
	}
	if n < len(large) || n > len(large)+1 {
		t.Errorf("%d events, want the large block's %d (and block A's first)", n, len(large))
	}
}

// TestV6EndOfStreamWithData: the format lets a later version put data in
// the EndOfStream block; one that ends the input with its data ends the
// trace as an empty one does. One with more input after it is damage.
func TestV6EndOfStreamWithData(t *testing.T) {
	build := func(after []byte) []byte {
		w := newV6Writer(8, 0)
		w.threads(wThread{index: 1, pid: 1234, tid: 7777})
		w.metadata(wMeta{id: 1, provider: "P", eventID: 1, name: "E"})
		w.events(true, wEvent{meta: 1, seq: 1, thread: 1, capThread: 1, ts: 1_000_100})
		w.block(kindEndOfStream, []byte{1, 2, 3, 4, 5})
		return append(w.buf.Bytes(), after...)
	}
	for _, c := range []struct {
		after  []byte
		damage bool
	}{{nil, false}, {[]byte{0, 0, 0, 0}, true}} {
		_, n, err := readToEnd(build(c.after), FileOrder)
		var de *DamageError
		if n != 1 || c.damage != errors.As(err, &de) || !c.damage && err != io.EOF {
			t.Errorf("%d bytes after it: %d events, final error %v; want 1, damage %v", len(c.after), n, err, c.damage)
		}
	}
}

// TestV6DecimalField: a V6 metadata row with a Decimal field (type code
// 15, not in V6's table, which TraceEvent reads as 16 bytes) is taken;
// it was lost, and every event of its type with it.
func TestV6DecimalField(t *testing.T) {
	fields := []Field{{Name: "Price", Type: TypeDecimal}, {Name: "N", Type: TypeInt32}}
	w := newV6Writer(8, 0)
	w.threads(wThread{index: 1, pid: 1234, tid: 7777})
	w.metadata(wMeta{id: 1, provider: "P", eventID: 1, name: "Sale", fields: fields})
	w.events(true, wEvent{meta: 1, seq: 1, thread: 1, capThread: 1, ts: 1_000_100, payload: make([]byte, 20)})
	r, err := NewReader(bytes.NewReader(w.end()))
	if err != nil {
		t.Fatal(err)
	}
	e, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if e.Metadata == nil || len(e.Metadata.Fields) != 2 || e.Metadata.Fields[0].Type != TypeDecimal {
		t.Errorf("metadata %+v, want the Decimal and Int32 fields", e.Metadata)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("after the event: %v, want io.EOF", err)
	}
}

// TestGarbledHeaderInherited: in a block of compressed headers each
// header inherits the fields the one before it set and adds its time to
// that one's. A header damaged into one that refers to metadata the
// trace does not define, with a sequence number that is not its thread's
// next, is damage, and the block's later events would come out with its
// garbled numbers and a moved time: they are lost with it. A header that
// refers to metadata the trace lost, its number the next, loses itself
// alone.
func TestGarbledHeaderInherited(t *testing.T) {
	build := func() []byte {
		w := newV6Writer(8, 0)
		w.threads(wThread{index: 1, pid: 1234, tid: 7777})
		w.metadata(wMeta{id: 1, provider: "P", eventID: 1, name: "E"}, wMeta{id: 2, provider: "P", eventID: 2, name: "F"})
		var evs []wEvent
		for i := range 8 {
			e := wEvent{meta: 1, seq: uint32(i + 1), thread: 1, capThread: 1, ts: 1_000_100 + 100*int64(i), payload: []byte{1, 2, 3, 4}}
			if i == 4 {
				e.meta, e.proc = 2, 1 // its header states metadata, sequence, capture thread and processor
			}
			evs = append(evs, e)
		}
		w.events(true, evs...)
		w.events(true, wEvent{meta: 1, seq: 9, thread: 1, capThread: 1, ts: 1_002_000, payload: []byte{1, 2, 3, 4}})
		return w.end()
	}
	type ev struct{ off, ts int64 }
	order := FileOrder
	read := func(data []byte) ([]ev, error) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		r.SetOrder(order)
		var out []ev
		for {
			e, err := r.Next()
			if err != nil {
				return out, err
			}
			out = append(out, ev{e.Offset, e.Timestamp})
		}
	}
	data := build()
	intact, err := read(data)
	if err != io.EOF || len(intact) != 9 {
		t.Fatalf("intact: %d events, %v", len(intact), err)
	}
	at := intact[4].off
	// flags, metadata ID 2, sequence delta 0, capture thread 1, processor
	// 1, time delta 100.
	if h := data[at : at+6]; h[1] != 2 || h[2] != 0 || h[3] != 1 || h[4] != 1 || h[5] != 100 {
		t.Fatalf("event 5's header % x, not as the test lays it out", h)
	}
	for _, o := range []Order{FileOrder, TimeOrder} {
		order = o
		for _, c := range []struct {
			name      string
			seq, dt   byte
			wantAfter int // events of the block after the damaged header
		}{{"garbled", 50, 127, 0}, {"metadata lost", 0, 100, 3}} {
			bad := bytes.Clone(data)
			bad[at+1], bad[at+2], bad[at+5] = 99, c.seq, c.dt
			got, err := read(bad)
			var de *DamageError
			if !errors.As(err, &de) || de.Stopped != nil || len(de.Damage) != 1 || de.Damage[0].Offset != at {
				t.Errorf("%v, %s: final error %v, want one damage record at %d", o, c.name, err, at)
			}
			if want := 4 + c.wantAfter + 1; len(got) != want {
				t.Errorf("%v, %s: %d events, want %d", o, c.name, len(got), want)
			}
			if c.wantAfter != 0 {
				continue
			}
			for i, e := range got {
				j := i
				if i >= 4 {
					j = i + 4
				}
				if j >= len(intact) || e != intact[j] {
					t.Errorf("%v, %s: event %d at %d, time %d; want the intact trace's events but the block's last four", o, c.name, i, e.off, e.ts)
					break
				}
			}
		}
	}
}

// TestDamagedSequencePointStacks: a sequence point whose thread list runs
// past its block flushes the stack table before its fault shows. In time
// order the held events' stacks must move out of the table before the
// stack block after it is read into it: they were overwritten (wrong
// stacks, or a panic where the new table was shorter).
func TestDamagedSequencePointStacks(t *testing.T) {
	w := newV6Writer(8, 0)
	w.threads(wThread{index: 1, pid: 1234, tid: 7777})
	w.metadata(wMeta{id: 1, provider: "P", eventID: 1, name: "E"})
	w.stacks(1, []uint64{0x1000, 0x1001, 0x1002}, []uint64{0x2000, 0x2001})
	w.events(true,
		wEvent{meta: 1, seq: 1, thread: 1, capThread: 1, stack: 1, ts: 1_000_100},
		wEvent{meta: 1, seq: 2, thread: 1, capThread: 1, stack: 2, ts: 1_000_200},
	)
	sp := w.buf.Len()
	w.sequencePoint(1_000_300, 0, 1, 2)
	binary.LittleEndian.PutUint32(w.buf.Bytes()[sp+4+12:], 50) // its thread count: 50, past the block
	w.stacks(1, []uint64{0x9000})
	w.events(true, wEvent{meta: 1, seq: 3, thread: 1, capThread: 1, stack: 1, ts: 1_000_400})
	data := w.end()
	stacks := map[Order]map[int64]string{}
	for _, o := range []Order{FileOrder, TimeOrder} {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		r.SetOrder(o)
		stacks[o] = map[int64]string{}
		for {
			e, err := r.Next()
			if err != nil {
				break
			}
			stacks[o][e.Offset] = fmt.Sprintf("%x", e.Stack)
		}
	}
	if len(stacks[FileOrder]) != 3 || !maps.Equal(stacks[FileOrder], stacks[TimeOrder]) {
		t.Errorf("stacks by offset: file order %v, time order %v; want the same 3", stacks[FileOrder], stacks[TimeOrder])
	}
}

// largeEvents is n compressed-header events of thread 1, numbered from
// seq, with 64-byte payloads: a block of 1,600 is over 100 KB. Their
// metadata IDs take turns among 1 to metas.
func largeEvents(n int, seq uint32, metas uint32) []wEvent {
	payload := bytes.Repeat([]byte{0x42}, 64)
	evs := make([]wEvent, n)
	for i := range evs {
		evs[i] = wEvent{meta: 1 + uint32(i)%metas, seq: seq + uint32(i), thread: 1, capThread: 1, ts: 1_001_000 + int64(i), payload: payload}
	}
	return evs
}
