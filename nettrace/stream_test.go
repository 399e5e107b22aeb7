package nettrace

import (
	"bytes"
	"io"
	"testing"
)

// TestReadBlockRoundsUp: a block buffer is made a power of two large (at
// most twice the block), so that the next block of a similar size reuses
// it, as time order reuses its spare buffers; a block larger than
// growChunk is not rounded, and a buffer large enough is reused as it is.
func TestReadBlockRoundsUp(t *testing.T) {
	data := make([]byte, 4<<20)
	var s stream
	s.init(bytes.NewReader(data))
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

// TestStreamEnded: a stream whose buffer went to the next one (end) reads
// as an input at its end, as it did when end put an empty reader in the
// buffer's place: nothing more to read, nothing asked for is no error.
func TestStreamEnded(t *testing.T) {
	var s stream
	s.init(bytes.NewReader([]byte("abcdefgh")))
	if b, err := s.peek(4); err != nil || string(b) != "abcd" {
		t.Fatalf("peek before the end: %q, %v", b, err)
	}
	s.end()
	s.end() // twice: nothing more
	if b, err := s.peek(4); err != io.EOF || len(b) != 0 {
		t.Errorf("peek(4) after the end: %q, %v; want io.EOF", b, err)
	}
	if _, err := s.peek(0); err != nil {
		t.Errorf("peek(0) after the end: %v", err)
	}
	if err := s.readSmall(make([]byte, 4)); err != io.EOF {
		t.Errorf("readSmall after the end: %v; want io.EOF", err)
	}
	if err := s.discard(2); err != io.ErrUnexpectedEOF {
		t.Errorf("discard(2) after the end: %v; want io.ErrUnexpectedEOF", err)
	}
	if b, err := s.readBlock(make([]byte, 0, 8), 8); err != io.ErrUnexpectedEOF || len(b) != 0 {
		t.Errorf("readBlock after the end: %q, %v; want io.ErrUnexpectedEOF", b, err)
	}
	if b, err := s.readBlock(nil, 0); err != nil || len(b) != 0 {
		t.Errorf("readBlock(0) after the end: %q, %v", b, err)
	}
	s.discardAll()
	if s.off != 0 {
		t.Errorf("offset %d after the end; want 0 (nothing was read)", s.off)
	}
	// Bytes put back after the end are read, then the end again.
	s.unread([]byte("xy"))
	got := make([]byte, 2)
	if err := s.readSmall(got); err != nil || string(got) != "xy" {
		t.Errorf("after unread: %q, %v; want \"xy\"", got, err)
	}
	if err := s.readSmall(got); err != io.EOF {
		t.Errorf("after the bytes put back: %v; want io.EOF", err)
	}
}
