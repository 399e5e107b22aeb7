package gcstats_test

import (
	"bytes"
	"errors"
	"io"
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
