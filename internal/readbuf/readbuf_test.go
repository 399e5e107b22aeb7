package readbuf

import (
	"bufio"
	"io"
	"strings"
	"testing"
)

func TestGetPut(t *testing.T) {
	b := Get(strings.NewReader("abc"))
	if b.Size() != Size {
		t.Fatalf("Get gave a buffer of %d bytes, want %d", b.Size(), Size)
	}
	got, err := io.ReadAll(b)
	if err != nil || string(got) != "abc" {
		t.Fatalf("read %q, %v; want abc", got, err)
	}
	Put(b)
	// The buffer given back reads nothing of its old input: Put resets
	// it, and Get resets it again on the new one.
	b2 := Get(strings.NewReader("xyz"))
	if got, err := io.ReadAll(b2); err != nil || string(got) != "xyz" {
		t.Fatalf("a buffer from the pool read %q, %v; want xyz", got, err)
	}
	// Buffers of another size, and nil, are not kept.
	Put(bufio.NewReaderSize(strings.NewReader(""), 4096))
	Put(nil)
	for range 4 {
		if b := Get(nil); b.Size() != Size {
			t.Fatalf("Get gave a buffer of %d bytes", b.Size())
		}
	}
}

func TestHandoff(t *testing.T) {
	h := &Handoff{R: Get(strings.NewReader("hello"))}
	got, err := io.ReadAll(h)
	if err != nil || string(got) != "hello" {
		t.Fatalf("read %q, %v through the handoff", got, err)
	}
}
