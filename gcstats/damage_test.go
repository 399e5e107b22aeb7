package gcstats_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/gcstats"
	"github.com/clrgo/clrevents/internal/tracetest"
	"github.com/clrgo/clrevents/trace"
)

// TestReadTruncated: the first 2 MB of the .NET Core 3.0 trace give the
// GCs in them, with an error that says the trace was cut short (not that
// it has no GC).
func TestReadTruncated(t *testing.T) {
	data := tracetest.Bytes(t, "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip")
	r, err := trace.NewReader(bytes.NewReader(data[:2<<20]), trace.WithName("cut.nettrace"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := gcstats.Read(r)
	if !errors.Is(err, trace.ErrDamaged) || !errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, gcstats.ErrNoEvents) {
		t.Errorf("error %v: want the cut, not ErrNoEvents", err)
	}
	procs := a.Processes()
	if len(procs) != 1 || len(procs[0].GCs) < 50 || len(procs[0].GCs) >= 478 {
		t.Fatalf("%d processes; want one with part of the 478 GCs", len(procs))
	}
	t.Logf("%d GCs in the first 2 MB", len(procs[0].GCs))
}

// TestReadTruncatedBeforeGCs: the first 20 KB of the .NET Core 3.0 trace
// hold no GC. The error is ErrNoEvents joined with the cut, and its text
// says first that the events lost may have held the GCs, before what a
// whole trace without them would say (that its suspensions were none for
// a GC, or to record the GC keyword, which this trace did).
func TestReadTruncatedBeforeGCs(t *testing.T) {
	data := tracetest.Bytes(t, "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip")
	r, err := trace.NewReader(bytes.NewReader(data[:20000]), trace.WithName("cut.nettrace"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = gcstats.Read(r)
	if !errors.Is(err, trace.ErrDamaged) || !errors.Is(err, gcstats.ErrNoEvents) {
		t.Fatalf("error %v: want ErrNoEvents and the cut", err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "no GC events in what was read: the events the trace lost (below) may have held them; if they did not, the trace holds 36 runtime suspensions") {
		t.Errorf("error text:\n%s", msg)
	}
}
