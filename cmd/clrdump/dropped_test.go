package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/internal/etltest"
	"github.com/clrgo/clrevents/internal/tracetest"
)

// TestDropped: events the trace's writer dropped (here an ETW session, as
// its log header counts them) are said on standard error in every mode,
// after the output, and the exit status is 1: the output lacks them.
func TestDropped(t *testing.T) {
	name := lostLog(t, 7, 0)
	want := "clrdump: " + name + ": the ETW session lost 7 events (as the log's header counts them): they are not in the trace, nor in this output\n"
	for _, args := range [][]string{{}, {"-stats"}, {"-format", "jsonl"}, {"-report", "gc"}} {
		_, errs, code := dump(t, append(args, name)...)
		if code != exitError || !strings.HasSuffix(errs, want) {
			t.Errorf("%v: exit %d, stderr %q; want 1 and %q", args, code, errs, want)
		}
	}
	// A dataset: the traces row counts them, and the run says so.
	dir := filepath.Join(t.TempDir(), "ds")
	errs, code := parquetRun(t, &parquetFlags{}, "-o", dir, name)
	if code != exitError || !strings.HasSuffix(errs, want) {
		t.Errorf("-format parquet: exit %d, stderr %q; want 1 and %q", code, errs, want)
	}
	rows, _ := filepath.Glob(filepath.Join(dir, "traces", "*.parquet"))
	if len(rows) != 1 {
		t.Fatalf("%d traces files", len(rows))
	}
	if row := readParquet(t, rows[0]); len(row) != 1 || row[0]["dropped"].Int64() != 7 {
		t.Errorf("traces row %v, want dropped 7", row)
	}
	// -n asks for part of the output: what was dropped does not matter.
	if _, errs, code := dump(t, "-n", "1", name); code != exitOK || errs != "" {
		t.Errorf("-n 1: exit %d, stderr %q", code, errs)
	}
}

// TestLostBuffers: whole buffers an ETW session could not write (the log
// header's BuffersLost) are said as dropped events are, and the exit
// status is 1; with lost events too, both are said.
func TestLostBuffers(t *testing.T) {
	for _, c := range []struct {
		events uint32
		want   string
	}{
		{0, "the ETW session lost 3 buffers of events (as the log's header counts them)"},
		{7, "the ETW session lost 7 events and 3 buffers of events (as the log's header counts them)"},
	} {
		name := lostLog(t, c.events, 3)
		want := "clrdump: " + name + ": " + c.want + ": they are not in the trace, nor in this output\n"
		_, errs, code := dump(t, name)
		if code != exitError || !strings.HasSuffix(errs, want) {
			t.Errorf("exit %d, stderr %q; want 1 and %q", code, errs, want)
		}
		// A dataset's traces row counts both.
		dir := filepath.Join(t.TempDir(), "ds")
		if errs, code := parquetRun(t, &parquetFlags{}, "-o", dir, name); code != exitError || !strings.HasSuffix(errs, want) {
			t.Errorf("-format parquet: exit %d, stderr %q; want 1 and %q", code, errs, want)
		}
		rows, _ := filepath.Glob(filepath.Join(dir, "traces", "*.parquet"))
		if len(rows) != 1 {
			t.Fatalf("%d traces files", len(rows))
		}
		if row := readParquet(t, rows[0]); len(row) != 1 || row[0]["dropped"].Int64() != int64(c.events) || row[0]["lost_buffers"].Int64() != 3 {
			t.Errorf("traces row %v, want dropped %d and lost_buffers 3", row, c.events)
		}
	}
}

// lostLog writes a log whose header counts events and buffers its ETW
// session lost (EventsLost and BuffersLost of its TRACE_LOGFILE_HEADER)
// and returns its name.
func lostLog(t *testing.T, events, buffers uint32) string {
	t.Helper()
	log, err := etltest.Log(tracetest.Bytes(t, "../../testdata/traces/gcevents.etl.zip"))
	if err != nil {
		t.Fatal(err)
	}
	at, err := etltest.HeaderAt(log)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(log[at+48:], events)
	// BuffersLost follows BootTime in a 64-bit TRACE_LOGFILE_HEADER: at
	// 248+28 (TimeZone at 56+2×8, 172 bytes long; BootTime 8-aligned).
	binary.LittleEndian.PutUint32(log[at+276:], buffers)
	h := bytes.NewReader(log)
	if r, err := etl.NewFileOrderReader(h); err != nil || r.Header().EventsLost != events || r.Header().BuffersLost != buffers {
		t.Fatalf("the header's counts are not where the test wrote them: %v", err)
	}
	name := filepath.Join(t.TempDir(), "lost.etl")
	if err := os.WriteFile(name, log, 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}
