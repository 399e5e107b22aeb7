package nettrace

import (
	"bytes"
	"testing"
)

// TestReadBlockRoundsUp: a block buffer is made a power of two large (at
// most twice the block), so that the next block of a similar size reuses
// it, as time order reuses its spare buffers; a block larger than
// growChunk is not rounded, and a buffer large enough is reused as it is.
func TestReadBlockRoundsUp(t *testing.T) {
	data := make([]byte, 4<<20)
	s := newStream(bytes.NewReader(data))
	buf, err := s.readBlock(nil, 100_000)
	if err != nil || len(buf) != 100_000 || cap(buf) != 128<<10 {
		t.Fatalf("first block: len %d cap %d, %v; want len 100000, cap %d", len(buf), cap(buf), err, 128<<10)
	}
	p := &buf[:1][0]
	buf, err = s.readBlock(buf, 102_400)
	if err != nil || len(buf) != 102_400 || &buf[0] != p {
		t.Fatalf("second block: len %d, %v, same array %v; want the first block's buffer", len(buf), err, &buf[0] == p)
	}
	big, err := s.readBlock(nil, growChunk+1)
	if err != nil || cap(big) != growChunk+1 {
		t.Fatalf("a block past growChunk: cap %d, %v; want %d", cap(big), err, growChunk+1)
	}
}
