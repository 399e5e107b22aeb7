package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/trace"
)

// TestMain lets the test binary be the child of the whole-process rows,
// as the program is.
func TestMain(m *testing.M) {
	flag.Parse()
	if *child != "" {
		childMain(*child, flag.Arg(0))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestSameEvents: on every trace at hand, both readers (and both orders
// of ours, and the format reader alone) see the same events with the same
// timestamps, threads and payload sizes, and the event IDs our reader
// finds are the ones the peer's metadata gives. Otherwise the table would
// compare different work.
func TestSameEvents(t *testing.T) {
	e, err := setup()
	if err != nil {
		t.Fatal(err)
	}
	defer e.cleanup()
	for _, s := range e.skipped {
		t.Logf("skipped: %s", s)
	}
	if len(e.traces) == 0 {
		t.Fatal("no trace at hand")
	}
	for name, data := range e.traces {
		peer := peerAll(data)
		if peer.Events == 0 {
			t.Fatalf("%s: the peer read no event", name)
		}
		min := peerEvents(data)
		min.IDs = peer.IDs // peerEvents does not look the events up
		for what, got := range map[string]headers{
			"ours, time order":     ourHeaders(data, trace.TimeOrder),
			"ours, file order":     ourHeaders(data, trace.FileOrder),
			"nettrace, time order": netHeaders(data, true),
			"nettrace, file order": netHeaders(data, false),
			"peer, events only":    min,
		} {
			if got != peer {
				t.Errorf("%s: %s: %+v, the peer: %+v", name, what, got, peer)
			}
		}
	}
}

// TestRowsOnce runs one pass of each side of each in-process row, so that
// none rots between measurements; the whole-process rows run in -short
// only if the 3.0 trace is there (a second or so).
func TestRowsOnce(t *testing.T) {
	e, err := setup()
	if err != nil {
		t.Fatal(err)
	}
	defer e.cleanup()
	if !testing.Short() {
		if err := e.buildPrograms(); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range e.rows() {
		for _, s := range []side{r.a, r.b} {
			if s.proc != nil {
				if testing.Short() || r.trace != trace30 {
					continue
				}
				if c, _ := s.proc(); c <= 0 {
					t.Errorf("%s: %s: no CPU time", r.key(), s.label)
				}
				continue
			}
			s.run()
		}
	}
	if _, err := os.Stat(e.files[trace30]); err != nil {
		t.Errorf("the 3.0 trace's file: %v", err)
	}
}

// TestTraceFlag: -trace takes NAME=FILE or FILE (named by its base name,
// without .zip and .nettrace), refuses the names of the harness's own
// traces, a name given twice and a name with a path separator, and a
// trace given so gets every kind of row; one the readers do not read
// alike (cut short) is refused, named.
func TestTraceFlag(t *testing.T) {
	var f traceFlags
	for _, v := range []string{"srv=/data/a.nettrace", "/data/b.nettrace.zip", "/data/c.nettrace"} {
		if err := f.Set(v); err != nil {
			t.Fatalf("Set(%q): %v", v, err)
		}
	}
	want := "srv=/data/a.nettrace,b=/data/b.nettrace.zip,c=/data/c.nettrace"
	if f.String() != want {
		t.Errorf("got %q, want %q", f.String(), want)
	}
	for _, v := range []string{"3.0=/x", "webapp=/x", "2.0=/x", "=/x", "a=", "/data/managed", "srv=/other", "/elsewhere/b.nettrace", "a/b=/x"} {
		if err := f.Set(v); err == nil {
			t.Errorf("Set(%q): no error", v)
		}
	}

	saved := extraTraces
	defer func() { extraTraces = saved }()
	extraTraces = traceFlags{"mine=../../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace"}
	e, err := setup()
	if err != nil {
		t.Fatal(err)
	}
	defer e.cleanup()
	if _, ok := e.files["mine"]; !ok {
		t.Error("no file for the trace given")
	}

	// A trace the two readers do not read alike is refused, named: here
	// one cut short, in the middle of a block.
	full, err := os.ReadFile("../../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace")
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.nettrace")
	if err := os.WriteFile(cut, full[:len(full)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	extraTraces = traceFlags{"cut=" + cut}
	if e2, err := setup(); err == nil {
		e2.cleanup()
		t.Error("a trace cut short was taken")
	} else if !strings.Contains(err.Error(), "-trace cut=") {
		t.Errorf("the error does not name the trace: %v", err)
	}
	extraTraces = traceFlags{"mine=../../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace"}
	got := map[string]bool{}
	for _, r := range e.rows() {
		got[r.key()] = true
	}
	for _, k := range []string{"time-order/mine", "file-order/mine", "process-time-order/mine", "program-file-order/mine", "profile/mine", "parquet/mine"} {
		if !got[k] {
			t.Errorf("no row %s", k)
		}
	}
}
