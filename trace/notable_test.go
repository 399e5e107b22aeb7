package trace_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/kernelevents"
	"github.com/clrgo/clrevents/trace"
)

// TestDecodeNoTable: Decode of an event whose provider no table of the
// Reader has says so, and how to link one, in an error that is still
// clrimpl.ErrUnknownEvent.
func TestDecodeNoTable(t *testing.T) {
	const core30 = "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"
	r, err := trace.Open(core30, trace.WithEvents(kernelevents.Table()))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.Provider() != "Microsoft-Windows-DotNETRuntime" {
			continue
		}
		_, err = e.Decode()
		if !errors.Is(err, clrimpl.ErrUnknownEvent) || err == clrimpl.ErrUnknownEvent || !strings.Contains(err.Error(), "package clrevents") {
			t.Fatalf("Decode of %s with no runtime table: %v", e.DisplayName(), err)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no runtime event")
	}
}
