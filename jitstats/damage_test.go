package jitstats_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/internal/tracetest"
	"github.com/clrgo/clrevents/jitstats"
	"github.com/clrgo/clrevents/trace"
)

// TestReadTruncated: the first 2 MB of the .NET Core 3.0 trace give the
// JIT compiles in them, with an error that says the trace was cut short
// (not that it has no JIT events).
func TestReadTruncated(t *testing.T) {
	data := tracetest.Bytes(t, "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip")
	r, err := trace.NewReader(bytes.NewReader(data[:2<<20]), trace.WithName("cut.nettrace"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := jitstats.Read(r)
	if !errors.Is(err, trace.ErrDamaged) || !errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, jitstats.ErrNoEvents) {
		t.Errorf("error %v: want the cut, not ErrNoEvents", err)
	}
	procs := a.Processes()
	if len(procs) != 1 || len(procs[0].Methods) == 0 {
		t.Fatalf("%d processes; want one with JIT compiles", len(procs))
	}
	t.Logf("%d compiles in the first 2 MB", len(procs[0].Methods))
}

// TestReadTruncatedBeforeJIT: the first 20 KB of the .NET Core 3.0 trace
// hold no JIT compile. The error is ErrNoEvents joined with the cut, and
// its text says first that the events lost may have held them, then to
// record the JIT keyword (which this trace did).
func TestReadTruncatedBeforeJIT(t *testing.T) {
	data := tracetest.Bytes(t, "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip")
	r, err := trace.NewReader(bytes.NewReader(data[:20000]), trace.WithName("cut.nettrace"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = jitstats.Read(r)
	if !errors.Is(err, trace.ErrDamaged) || !errors.Is(err, jitstats.ErrNoEvents) {
		t.Fatalf("error %v: want ErrNoEvents and the cut", err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "no JIT events in what was read: the events the trace lost (below) may have held them; if they did not, record the runtime provider with the JIT keyword") {
		t.Errorf("error text:\n%s", msg)
	}
}
