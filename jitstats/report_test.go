package jitstats_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/jitstats"
)

// reportAnalyzer holds process 9: App.Run compiled at tier 0 (2 ms) and
// tier 1 (8 ms, unnamed: a MethodLoad without names), a compile without
// a start event, two inlining failures for one reason and one success.
func reportAnalyzer() *jitstats.Analyzer {
	a := jitstats.NewAnalyzer()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a.SetOrigin(t0)
	at := func(ms float64, tid int64, ev clrevents.Event) {
		a.Observe(t0.Add(time.Duration(ms*float64(time.Millisecond))), 9, tid, ev)
	}
	ns, name, sig := clrevents.UTF16Of("App"), clrevents.UTF16Of("Run"), clrevents.UTF16Of("void  (int32)")
	tier := func(t clrevents.OptimizationTier) clrevents.MethodFlags {
		return clrevents.MethodFlagsJitted | clrevents.MethodFlags(t)<<7
	}
	at(1, 5, &clrevents.MethodJittingStartedV1{MethodID: 0x100, MethodILSize: 40, MethodNamespace: ns, MethodName: name, MethodSignature: sig})
	at(3, 5, &clrevents.MethodLoadVerboseV2{MethodID: 0x100, MethodSize: 120, MethodFlags: tier(clrevents.TierQuickJitted), MethodNamespace: ns, MethodName: name, MethodSignature: sig})
	at(50, 7, &clrevents.MethodJittingStartedV1{MethodID: 0x100, MethodILSize: 40})
	at(58, 7, &clrevents.MethodLoadV2{MethodID: 0x100, MethodSize: 90, MethodFlags: tier(clrevents.TierOptimizedTier1)})
	at(60, 8, &clrevents.MethodLoadV2{MethodID: 0x300, MethodSize: 10, MethodFlags: tier(clrevents.TierOptimized)})
	at(63, 5, &clrevents.MethodJitInliningFailed{FailReason: clrevents.UTF16Of("too many il bytes")})
	at(64, 5, &clrevents.MethodJitInliningFailed{FailReason: clrevents.UTF16Of("too many il bytes")})
	at(65, 5, &clrevents.MethodJitInliningSucceeded{})
	return a
}

// TestWriteJSONLines: a line per compile with the keys of Columns, each of
// one JSON type; the compile without a start event has jit_ms -1.
func TestWriteJSONLines(t *testing.T) {
	a := reportAnalyzer()
	var b bytes.Buffer
	if err := jitstats.WriteJSONLines(&b, a.Origin(), a.Processes()); err != nil {
		t.Fatal(err)
	}
	type line struct {
		PID        int64   `json:"pid"`
		Method     string  `json:"method"`
		MethodID   string  `json:"method_id"`
		Tier       string  `json:"tier"`
		StartMS    float64 `json:"start_ms"`
		TID        int64   `json:"tid"`
		JitMS      float64 `json:"jit_ms"`
		ILSize     uint32  `json:"il_size"`
		NativeSize uint32  `json:"native_size"`
		ProcStart  float64 `json:"process_start_ms"`
	}
	want := []line{
		{9, "App.Run(int32)", "0x100", "QuickJitted", 1, 5, 2, 40, 120, -1},
		{9, "", "0x100", "OptimizedTier1", 50, 7, 8, 40, 90, -1},
		{9, "", "0x300", "Optimized", 60, 8, -1, 0, 10, -1},
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), b.String())
	}
	for i, l := range lines {
		var keys map[string]any
		var got line
		if err := json.Unmarshal([]byte(l), &keys); err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(strings.NewReader(l))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&got); err != nil || len(keys) != len(jitstats.Columns()) {
			t.Fatalf("line %d: %v, %d keys: %s", i+1, err, len(keys), l)
		}
		if got != want[i] {
			t.Errorf("line %d: %+v, want %+v", i+1, got, want[i])
		}
	}

	// The CSV report: a header of Columns, then the same values.
	b.Reset()
	if err := jitstats.WriteCSV(&b, a.Origin(), a.Processes()); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(rows) != 1+len(want) || !slices.Equal(rows[0], jitstats.Columns()) {
		t.Fatalf("CSV %v, %v", rows, err)
	}
	for i, w := range want {
		r := rows[i+1]
		if r[1] != w.Method || r[2] != w.MethodID || r[3] != w.Tier || r[6] != strconv.FormatFloat(w.JitMS, 'f', 3, 64) && w.JitMS >= 0 || w.JitMS < 0 && r[6] != "-1" {
			t.Errorf("CSV row %d: %v, want %+v", i+1, r, w)
		}
	}
}

// TestWriteText: the summary line, the tiers, the slowest top compiles
// and the inlining failures by reason.
func TestWriteText(t *testing.T) {
	a := reportAnalyzer()
	for top, slowest := range map[int]string{1: "Slowest 1:", 10: "Slowest 2:", 0: "Slowest 2:"} {
		var b bytes.Buffer
		if err := jitstats.WriteText(&b, a.Origin(), a.Processes(), top); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, want := range []string{
			"Process 9: 3 methods compiled in 10.000 ms (2 timed); 0 ReadyToRun methods used\n",
			"\n   QuickJitted        1   2.000        40           120\n",
			"\n" + slowest + "\n",
			"\n 8.000    50.000  OptimizedTier1  40      90  \n",
			"\nInlining: 1 succeeded, 2 failed\nfailures  reason\n       2  too many il bytes\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("top %d: no %q in\n%s", top, want, out)
			}
		}
	}
}

// TestWriteTextPending: compiles the trace holds the start of but not the
// method's load (the trace ended during them) are said, not silently left
// out of the counts.
func TestWriteTextPending(t *testing.T) {
	a := reportAnalyzer()
	t0 := a.Origin()
	a.Observe(t0.Add(70*time.Millisecond), 9, 11, &clrevents.MethodJittingStartedV1{MethodID: 0x400, MethodILSize: 8})
	var b bytes.Buffer
	if err := jitstats.WriteText(&b, a.Origin(), a.Processes(), 10); err != nil {
		t.Fatal(err)
	}
	if want := "Process 9: 3 methods compiled in 10.000 ms (2 timed); 0 ReadyToRun methods used\n1 compile started without the method's load in the trace"; !strings.Contains(b.String(), want) {
		t.Errorf("no %q in\n%s", want, b.String())
	}
	var c bytes.Buffer
	if err := jitstats.WriteText(&c, reportAnalyzer().Origin(), reportAnalyzer().Processes(), 10); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(c.String(), "started without") {
		t.Errorf("a process with no compile pending says one is:\n%s", c.String())
	}
}
