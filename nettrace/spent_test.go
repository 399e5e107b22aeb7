package nettrace

import (
	"bytes"
	"hash/fnv"
	"io"
	"path/filepath"
	"testing"
)

// TestSpentBuffers: Readers in time order that reuse what finished ones
// left (their record chunks, block buffers and stack tables) hand out the
// same events, payloads and stacks as the first, whatever traces read
// before; and none is given twice.
func TestSpentBuffers(t *testing.T) {
	paths := []string{
		filepath.Join("..", "testdata", "traces", "eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"),
		filepath.Join("..", "testdata", "traces", "eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip"),
	}
	sum := func(data []byte) uint64 {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		r.SetOrder(TimeOrder)
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
		if r.sorted.chunks != nil || r.blk != nil {
			t.Error("a finished Reader kept its buffers")
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
	s := &sortState{spare: [][]byte{make([]byte, 8)}}
	s.blocks = [][]byte{make([]byte, 16), make([]byte, 8)}
	s.chunks = []*[recChunk]heldRec{new([recChunk]heldRec)}
	r := &Reader{blk: s.blocks[1]}
	if sp := s.spend(r); len(sp.blocks) != 3 || len(sp.chunks) != 1 {
		t.Errorf("%d buffers given for 3, %d chunks for 1", len(sp.blocks), len(sp.chunks))
	}
}
