package nettrace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// liveStream is a V6 stream written block by block: a thread, one
// metadata row, then event blocks of a writer thread whose first event is
// flagged IsSorted, as the runtime flags each batch.
func liveStream() (head []byte, blocks [][]byte, tail []byte) {
	w := newV6Writer(8, 0)
	w.threads(wThread{index: 1, pid: 7, tid: 70}, wThread{index: 2, pid: 7, tid: 71})
	w.metadata(wMeta{id: 1, provider: "P", eventID: 1, name: "E"})
	head = bytes.Clone(w.buf.Bytes())
	seq := map[uint64]uint32{}
	ev := func(th uint64, ts int64, sorted bool) wEvent {
		seq[th]++
		return wEvent{meta: 1, seq: seq[th], thread: th, capThread: th, ts: ts, sorted: sorted, payload: []byte{byte(ts)}}
	}
	for b := range 3 {
		w.buf.Reset()
		base := int64(100 * (b + 1))
		// Thread 2's run is earlier than thread 1's: the merge must
		// reorder within the block.
		w.events(false, ev(1, base+5, true), ev(1, base+7, false), ev(2, base+1, false), ev(2, base+6, false))
		blocks = append(blocks, bytes.Clone(w.buf.Bytes()))
	}
	w.buf.Reset()
	w.sequencePoint(1000, 0, 1, uint64(seq[1]), 2, uint64(seq[2]))
	tail = w.end()
	return head, blocks, tail
}

// TestLowLatencyReleasesBeforeNextBlock feeds a stream through a pipe and
// checks that each block's events that the IsSorted marks allow come out
// before the next block is written, in the order TimeOrder gives without
// low latency.
func TestLowLatencyReleasesBeforeNextBlock(t *testing.T) {
	head, blocks, tail := liveStream()
	all := append(append(bytes.Clone(head), bytes.Join(blocks, nil)...), tail...)
	want, err := readOrdered(t, all, TimeOrder)
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	go func() {
		pw.Write(head)
		pw.Write(blocks[0])
	}()
	r, err := NewReader(pr)
	if err != nil {
		t.Fatal(err)
	}
	r.SetOrder(TimeOrder)
	r.SetLowLatency(true)
	var got []int64
	next := func() {
		t.Helper()
		done := make(chan error, 1)
		go func() {
			e, err := r.Next()
			if err == nil {
				got = append(got, e.Timestamp)
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("event %d was held back waiting for more of the stream (got %v)", len(got)+1, got)
		}
	}
	// Block 1: mark 105; events 101 and 105 are released, 106 and 107
	// wait (a later block may still hold an event at 105 or after).
	next()
	next()
	if got[0] != 101 || got[1] != 105 {
		t.Fatalf("first block released %v, want [101 105]", got)
	}
	go pw.Write(blocks[1])
	next() // 106
	next() // 107
	next() // 201
	next() // 205
	go func() {
		pw.Write(blocks[2])
		pw.Write(tail)
		pw.Close()
	}()
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e.Timestamp)
	}
	if len(got) != len(want) {
		t.Fatalf("low latency gave %d events, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i].timestamp {
			t.Fatalf("event %d: timestamp %d, want %d (order %v)", i, got[i], want[i].timestamp, got)
		}
	}
	if r.Dropped() != 0 {
		t.Errorf("Dropped = %d, want 0", r.Dropped())
	}
}

// TestLowLatencySameOrder reads every real trace in TimeOrder with and
// without low latency: the events, their payloads and stacks must be the
// same, in the same order.
func TestLowLatencySameOrder(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join(repoTraces, "*.nettrace.zip"))
	paths = append(paths, "../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace")
	if more, _ := filepath.Glob(filepath.Join(sharedTraces, "*", "*.nettrace*")); len(more) > 0 {
		paths = append(paths, more...)
	}
	for _, p := range paths {
		if strings.HasSuffix(p, ".txt") {
			continue
		}
		t.Run(filepath.Base(p), func(t *testing.T) {
			data := loadTrace(t, p)
			want, werr := readOrdered(t, data, TimeOrder)
			r, err := NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			r.SetOrder(TimeOrder)
			r.SetLowLatency(true)
			i := 0
			for ; ; i++ {
				e, err := r.Next()
				if err != nil {
					if err != io.EOF && (werr == nil || err.Error() != werr.Error()) {
						t.Fatalf("event %d: %v (without low latency: %v)", i, err, werr)
					}
					break
				}
				if i >= len(want) {
					t.Fatalf("more events than without low latency (%d)", len(want))
				}
				w := want[i]
				if e.Offset != w.offset || e.Timestamp != w.timestamp || len(e.Stack) != w.stack {
					t.Fatalf("event %d: offset %d ts %d stack %d, want offset %d ts %d stack %d",
						i, e.Offset, e.Timestamp, len(e.Stack), w.offset, w.timestamp, w.stack)
				}
			}
			if i != len(want) {
				t.Fatalf("%d events, want %d", i, len(want))
			}
		})
	}
}

// TestDropped counts gaps in the sequence numbers: within a thread's
// events, and between a thread's last event and a sequence point. An
// event's gap counts once a later number of its thread settles it (here
// the sequence point's), or at the end.
func TestDropped(t *testing.T) {
	w := newV6Writer(8, 0)
	w.threads(wThread{index: 1, pid: 7, tid: 70}, wThread{index: 2, pid: 7, tid: 71})
	w.metadata(wMeta{id: 1, provider: "P", eventID: 1, name: "E"})
	ev := func(th uint64, seq uint32, ts int64) wEvent {
		return wEvent{meta: 1, seq: seq, thread: th, capThread: th, ts: ts, sorted: true}
	}
	// Thread 1: 1, 2, 5 (3 and 4 dropped); thread 2: 10, 11 (its numbers
	// start at 1 from the ThreadBlock that defines it: 9 dropped before
	// it, as TraceEvent counts them).
	w.events(false, ev(1, 1, 10), ev(1, 2, 11), ev(2, 10, 12), ev(2, 11, 13), ev(1, 5, 14))
	// The sequence point says thread 1 reached 8 (6–8 dropped) and
	// thread 2 reached 11.
	w.sequencePoint(20, 0, 1, 8, 2, 11)
	w.events(true, ev(1, 9, 21), ev(2, 14, 22)) // 12, 13 dropped
	data := w.end()
	for _, o := range []Order{FileOrder, TimeOrder} {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		r.SetOrder(o)
		n := 0
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			n++
			if o == FileOrder && n == 5 {
				// The first block read to its end: its gaps wait for a
				// later number of their threads.
				if got := r.Dropped(); got != 0 {
					t.Errorf("after the first block: Dropped = %d, want 0", got)
				}
			}
			if o == FileOrder && n == 6 {
				// The sequence point settled them (2 + 9); the 3 it
				// shows wait for thread 1's next number, in this block,
				// and thread 2's 2 before 14 for the end.
				if got := r.Dropped(); got != 11 {
					t.Errorf("after the sequence point: Dropped = %d, want 11", got)
				}
			}
		}
		if n != 7 {
			t.Fatalf("%v: %d events, want 7", o, n)
		}
		if got := r.Dropped(); got != 16 {
			t.Errorf("%v: Dropped = %d, want 16 (2 + 9 + 3 + 2)", o, got)
		}
	}
}

// TestDroppedRealTraces: the real traces lost nothing.
func TestDroppedRealTraces(t *testing.T) {
	p := "../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace"
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := r.Next(); err != nil {
			if err != io.EOF {
				t.Fatal(err)
			}
			break
		}
	}
	if r.Dropped() != 0 {
		t.Errorf("Dropped = %d, want 0", r.Dropped())
	}
}

// TestLowLatencyAllocs: releasing at IsSorted marks allocates no more per
// event than waiting for sequence points: reading a real trace costs
// allocations for its metadata, stacks and blocks, not per event.
func TestLowLatencyAllocs(t *testing.T) {
	data, err := os.ReadFile("../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace")
	if err != nil {
		t.Fatal(err)
	}
	perEvent := func(low bool) float64 {
		n := 0
		allocs := testing.AllocsPerRun(3, func() {
			r, err := NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			r.SetOrder(TimeOrder)
			r.SetLowLatency(low)
			n = 0
			for {
				if _, err := r.Next(); err != nil {
					break
				}
				n++
			}
		})
		return allocs / float64(n)
	}
	held, low := perEvent(false), perEvent(true)
	t.Logf("allocations per event: %.4f at sequence points, %.4f low latency", held, low)
	if low > 0.05 || low > held*1.5+0.001 {
		t.Errorf("low latency: %.4f allocations per event (%.4f without)", low, held)
	}
}

// BenchmarkLowLatency reads the real .NET 5 trace in TimeOrder, releasing
// at sequence points and at IsSorted marks.
func BenchmarkLowLatency(b *testing.B) {
	data, err := os.ReadFile("../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace")
	if err != nil {
		b.Fatal(err)
	}
	for _, low := range []bool{false, true} {
		name := "SequencePoints"
		if low {
			name = "IsSortedMarks"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for range b.N {
				r, err := NewReader(bytes.NewReader(data))
				if err != nil {
					b.Fatal(err)
				}
				r.SetOrder(TimeOrder)
				r.SetLowLatency(low)
				for {
					if _, err := r.Next(); err != nil {
						break
					}
				}
			}
		})
	}
}

// richV6 is a V6 stream with what held events point into: stacks, label
// lists (activity IDs), two capture threads whose runs overlap in time,
// IsSorted marks on some events, and sequence points that end stretches
// (and flush the stack and label tables) between blocks.
func richV6() []byte {
	w := newV6Writer(8, 0)
	w.threads(wThread{index: 1, tid: 100, pid: 1}, wThread{index: 2, tid: 200, pid: 1})
	w.metadata(wMeta{id: 1, provider: "P", eventID: 1, name: "E", fields: []Field{{Name: "V", Type: TypeInt64}}})
	seq := map[uint64]uint32{}
	ts := int64(1000)
	for stretch := range 3 {
		w.stacks(1, []uint64{uint64(stretch), 2, 3}, []uint64{4, uint64(stretch) + 5})
		w.labelLists(1, [][]byte{labActivity(guidA)}, [][]byte{labActivity(guidB)})
		for blk := range 4 {
			var evs []wEvent
			for th := uint64(1); th <= 2; th++ {
				// Thread 2's run starts before thread 1's ends.
				t0 := ts + int64(th)*3
				for i := range 5 {
					seq[th]++
					evs = append(evs, wEvent{meta: 1, seq: seq[th], thread: th, capThread: th,
						stack: uint32(1 + i%2), label: uint32(i % 3), ts: t0 + int64(i*4),
						sorted: i == 0 && (blk+int(th))%2 == 0, payload: binary.LittleEndian.AppendUint64(nil, uint64(i))})
				}
			}
			w.events(blk%2 == 0, evs...)
			ts += 40
		}
		w.sequencePoint(ts, 0, 1, uint64(seq[1]), 2, uint64(seq[2]))
		ts += 10
	}
	return w.end()
}

// TestLowLatencyV6SameEvents compares every field a held event carries,
// low latency against sequence points, on richV6.
func TestLowLatencyV6SameEvents(t *testing.T) {
	data := richV6()
	read := func(low bool) []string {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		r.SetOrder(TimeOrder)
		r.SetLowLatency(low)
		var out []string
		for {
			e, err := r.Next()
			if err == io.EOF {
				return out
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("off=%d ts=%d tid=%d seq=%d stack=%v act=%v pay=%x sorted=%v",
				e.Offset, e.Timestamp, e.ThreadID, e.SequenceNumber, e.Stack, e.ActivityID, e.Payload, e.IsSorted))
		}
	}
	want, got := read(false), read(true)
	if len(want) != 120 {
		t.Fatalf("%d events, want 120", len(want))
	}
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Fatalf("event %d:\n got %v\nwant %s", i, got[min(i, len(got)-1)], want[i])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d", len(got), len(want))
	}
}
