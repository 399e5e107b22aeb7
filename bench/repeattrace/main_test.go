package main

import (
	"bytes"
	"testing"

	"github.com/clrgo/clrevents/trace"
)

// TestRepeat: once is the trace itself, byte for byte; three times reads
// as three times the events.
func TestRepeat(t *testing.T) {
	in, err := readTrace("../../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip")
	if err != nil {
		t.Fatal(err)
	}
	once, err := repeat(in, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(once, in) {
		t.Fatal("the body once is not the trace")
	}
	thrice, err := repeat(in, 3)
	if err != nil {
		t.Fatal(err)
	}
	count := func(b []byte) int {
		r, err := trace.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			if _, err := r.Next(); err != nil {
				break
			}
			n++
		}
		return n
	}
	if a, b := count(in), count(thrice); b != 3*a || a == 0 {
		t.Errorf("%d events, three times: %d", a, b)
	}
	if _, err := repeat(in[:len(in)-1], 2); err == nil {
		t.Error("a stream without its end: no error")
	}
}
