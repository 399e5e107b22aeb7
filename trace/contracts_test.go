package trace_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/trace"
)

// TestStackNilWhenNone: an event the trace recorded no stack with has a
// nil Stack in every format (the readers reuse their slices, which could
// be empty and not nil: an ETL log's CPU samples, whose stacks Stacks
// gives, and a netperf trace's events).
func TestStackNilWhenNone(t *testing.T) {
	for _, name := range []string{
		"../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip",
		"../testdata/traces/eventpipe-dotnetcore2.0-linux-objver2.first1300.netperf.zip",
		"../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip",
	} {
		r, err := trace.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		none, with := 0, 0
		for {
			e, err := r.Next()
			if err != nil {
				if err != io.EOF {
					t.Fatal(err)
				}
				break
			}
			switch s := e.Stack(); {
			case s == nil:
				none++
			case len(s) == 0:
				t.Fatalf("%s: %s: an empty stack that is not nil", name, e.Name())
			default:
				with++
			}
		}
		r.Close()
		if none == 0 {
			t.Errorf("%s: every event has a stack (%d)", name, with)
		}
	}
}

// TestDisplayNameUnnamed: an ETW event with no name is "EventID(N)", as
// an EventPipe one is.
func TestDisplayNameUnnamed(t *testing.T) {
	r, err := trace.Open("../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	unnamed := 0
	for {
		e, err := r.Next()
		if err != nil {
			break
		}
		if e.Name() == "" {
			unnamed++
			if d := e.DisplayName(); !strings.HasPrefix(d, "EventID(") {
				t.Fatalf("an unnamed event of %s: DisplayName %q", e.Provider(), d)
			}
		}
	}
	if unnamed == 0 {
		t.Fatal("no unnamed event in the log: the test needs one")
	}
}

// TestDecodeErrorsNil: Add(nil), the error of an event that decoded, is
// not counted, and Err stays nil.
func TestDecodeErrorsNil(t *testing.T) {
	var d trace.DecodeErrors
	d.Add(nil)
	if d.Len() != 0 || d.Err() != nil {
		t.Fatalf("after Add(nil): %d, %v", d.Len(), d.Err())
	}
	d.Add(errors.New("bad"))
	d.Add(nil)
	if d.Len() != 1 || d.Err() == nil || !strings.Contains(d.Err().Error(), "bad") {
		t.Fatalf("%d, %v", d.Len(), d.Err())
	}
}
