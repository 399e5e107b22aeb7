package nettrace

import (
	"bufio"
	"bytes"
	"hash/fnv"
	"io"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/clrgo/clrevents/internal/racemode"
	"github.com/clrgo/clrevents/internal/readbuf"
)

// TestSpentBuffers: Readers that reuse what finished ones left (their
// stream buffers; in time order their record chunks, block buffers and
// stack tables too) hand out the same events, payloads and stacks as the
// first, whatever traces read before, in either order; and none is given
// twice.
func TestSpentBuffers(t *testing.T) {
	for _, o := range []Order{TimeOrder, FileOrder} {
		t.Run(o.String(), func(t *testing.T) { testSpentBuffers(t, o) })
	}
}

func testSpentBuffers(t *testing.T, order Order) {
	paths := []string{
		filepath.Join("..", "testdata", "traces", "eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"),
		filepath.Join("..", "testdata", "traces", "eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip"),
	}
	sum := func(data []byte) uint64 {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		r.SetOrder(order)
		h := fnv.New64a()
		var b [8]byte
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			h.Write(e.Payload)
			for _, ip := range e.Stack {
				for i := range b {
					b[i] = byte(ip >> (8 * i))
				}
				h.Write(b[:])
			}
		}
		if order == TimeOrder && (r.sorted.chunks != nil || r.blk != nil) {
			t.Error("a finished Reader kept its buffers")
		}
		if order == FileOrder && (r.blk != nil || r.ips != nil) {
			t.Error("a finished file-order Reader kept its block buffer or stack table")
		}
		if r.s.own != nil {
			t.Error("a finished Reader kept its stream buffer")
		}
		return h.Sum64()
	}
	var data [][]byte
	var first []uint64
	for _, p := range paths {
		d := loadTrace(t, p)
		data = append(data, d)
		first = append(first, sum(d))
	}
	for round := range 3 {
		for i := range data {
			if got := sum(data[(i+round)%len(data)]); got != first[(i+round)%len(data)] {
				t.Errorf("round %d, %s: sum %x, want %x", round, paths[(i+round)%len(data)], got, first[(i+round)%len(data)])
			}
		}
	}
	// No buffer is given twice: the current block is also the last of
	// blocks at the end of the stream.
	s := &sortState{spare: [][]byte{make([]byte, 8)}, peak: 3}
	s.blocks = [][]byte{make([]byte, 16), make([]byte, 8)}
	s.chunks = []*[recChunk]heldRec{new([recChunk]heldRec)}
	r := &Reader{blk: s.blocks[1]}
	if sp := s.spend(r); len(sp.blocks) != 3 || len(sp.chunks) != 1 {
		t.Errorf("%d buffers given for 3, %d chunks for 1", len(sp.blocks), len(sp.chunks))
	}
	// No more than the Reader held at once: the biggest.
	s = &sortState{spare: [][]byte{make([]byte, 8), make([]byte, 32)}, peak: 2}
	s.blocks = [][]byte{make([]byte, 16)}
	if sp := s.spend(&Reader{}); len(sp.blocks) != 2 || cap(sp.blocks[0]) != 32 || cap(sp.blocks[1]) != 16 {
		t.Errorf("a Reader that held 2 buffers at once gave %d, want the 2 biggest", len(sp.blocks))
	}
}

// TestSpentBuffersBounded: Readers that take the buffers of finished ones
// leave as many as they held, Reader after Reader. (The first block of
// each came in a new buffer, and every Reader left one more than it
// took: after a few thousand the list of buffers, up to 32 MB of them,
// took half of each small trace's read to hand on.)
func TestSpentBuffersBounded(t *testing.T) {
	if racemode.Enabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	data := loadTrace(t, filepath.Join("..", "testdata", "traces", "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"))
	most := 0
	for pass := range 12 {
		r := mustReader(t, bytes.NewReader(data))
		r.SetOrder(TimeOrder)
		drain(t, r)
		sp, _ := spentPool.Get().(*spent)
		if sp == nil {
			continue // a collection emptied the pool
		}
		n := len(sp.blocks)
		spentPool.Put(sp)
		if pass < 2 {
			most = max(most, n)
		} else if n > most {
			t.Fatalf("pass %d: the finished Reader left %d block buffers, the first ones %d", pass+1, n, most)
		}
	}
	if most == 0 {
		t.Fatal("no Reader left block buffers")
	}
}

// TestStreamBufferReused: a Reader made after another has read to the end
// takes its stream buffer (64 KiB) and its block buffer instead of making
// them, and the
// finished Reader, asked again, finds the end, not the new one's input.
func TestStreamBufferReused(t *testing.T) {
	if racemode.Enabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	data := loadTrace(t, filepath.Join("..", "testdata", "traces", "eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip"))
	r1, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	buf := r1.s.own
	want := drain(t, r1)
	r2, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if r2.s.own != buf {
		t.Error("the second Reader made a stream buffer of its own")
	}
	if cap(r2.blk) == 0 {
		t.Error("the second Reader did not take the first one's block buffer")
	}
	if n := drain(t, r1); n != 0 {
		t.Errorf("the finished Reader gave %d more events", n)
	}
	if _, err := r1.s.peek(1); err != io.EOF {
		t.Errorf("the finished Reader's stream: %v, want io.EOF", err)
	}
	if got := drain(t, r2); got != want {
		t.Errorf("the second Reader gave %d events, the first %d", got, want)
	}
}

// TestHandoff: a buffered reader handed off (package trace's, through
// readbuf.Handoff) is read directly, not buffered again, and given back at
// the end; a caller's own bufio.Reader is buffered as any reader, never
// taken.
func TestHandoff(t *testing.T) {
	data := loadTrace(t, filepath.Join("..", "testdata", "traces", "eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip"))
	want := drain(t, mustReader(t, bytes.NewReader(data)))

	br := readbuf.Get(bytes.NewReader(data))
	r := mustReader(t, &readbuf.Handoff{R: br})
	if r.s.br != br || r.s.own != br {
		t.Error("a handed-off reader was buffered again")
	}
	if n := drain(t, r); n != want {
		t.Errorf("read %d events through a handed-off reader, want %d", n, want)
	}
	if r.s.own != nil {
		t.Error("a handed-off reader was not given back at the end")
	}

	mine := bufio.NewReaderSize(bytes.NewReader(data), readbuf.Size)
	r = mustReader(t, mine)
	if r.s.br == mine || r.s.own == mine {
		t.Error("a caller's bufio.Reader was taken as the stream's buffer")
	}
	if n := drain(t, r); n != want {
		t.Errorf("read %d events through a caller's bufio.Reader, want %d", n, want)
	}
}

// drain reads r to the end and returns how many events it gave.
func drain(t *testing.T, r *Reader) int {
	t.Helper()
	n := 0
	for {
		if _, err := r.Next(); err == io.EOF {
			return n
		} else if err != nil {
			t.Fatal(err)
		}
		n++
	}
}

func mustReader(t *testing.T, in io.Reader) *Reader {
	t.Helper()
	r, err := NewReader(in)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSpentAllocs: a time-order Reader after another allocates little but
// the trace's metadata: both of the last one's stack table arrays, its
// merge's arrays and its block buffers serve it. On the 3.0 trace a Reader
// allocated 430 KB, then 250 KB with the block buffers reused, now about
// 40 KB.
func TestSpentAllocs(t *testing.T) {
	if racemode.Enabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	data := loadTrace(t, filepath.Join("..", "testdata", "traces", "eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"))
	read := func() {
		r := mustReader(t, bytes.NewReader(data))
		r.SetOrder(TimeOrder)
		drain(t, r)
	}
	read()
	least := uint64(1 << 62)
	for range 5 { // the least: a collection between two empties the pool
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		read()
		runtime.ReadMemStats(&m1)
		least = min(least, m1.TotalAlloc-m0.TotalAlloc)
	}
	if least > 80<<10 {
		t.Errorf("a time-order Reader after another allocated %d bytes, want at most 80 KiB", least)
	}
}
