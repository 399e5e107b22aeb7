package main

import (
	"encoding/csv"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/gcstats"
)

const core30 = "../../../shared/fixtures/traces/perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"

// TestReportGCJSON: one object per GC with the documented keys, each of
// a fixed JSON type.
func TestReportGCJSON(t *testing.T) {
	out, errs, code := dump(t, "-report", "gc", "-format", "jsonl", gcETL)
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2 GCs:\n%s", len(lines), out)
	}
	types := map[string]string{
		"pid": "number", "gc": "number", "gen": "number", "reason": "string", "type": "string",
		"start_ms": "number", "pause_ms": "number", "pauses": "number", "suspend_ms": "number", "duration_ms": "number",
		"pause_percent": "number", "heap_before_bytes": "number", "heap_before_estimated": "bool",
		"heap_after_bytes": "number", "fragmentation_bytes": "number", "promoted_bytes": "number", "pinned_objects": "number", "heaps": "number", "complete": "bool",
	}
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, l)
		}
		if len(m) != len(types) {
			t.Errorf("line %d has %d keys, want %d: %s", i+1, len(m), len(types), l)
		}
		for k, want := range types {
			if got := jsonType(m[k]); got != want {
				t.Errorf("line %d: %s is %s, want %s", i+1, k, got, want)
			}
		}
		if m["gc"] != float64(i+1) || m["gen"] != float64(i+1) || m["reason"] != "Induced" || m["type"] != "NonConcurrentGC" {
			t.Errorf("line %d: %s", i+1, l)
		}
		// The trace has per-heap histories: the free space is known, and
		// part of the heap.
		if f, ok := m["fragmentation_bytes"].(float64); !ok || f <= 0 || f >= m["heap_after_bytes"].(float64) {
			t.Errorf("line %d: fragmentation_bytes %v of a %v-byte heap", i+1, m["fragmentation_bytes"], m["heap_after_bytes"])
		}
	}
	// GC 1's heap after is TraceEvent's TotalHeapSize=657,192.
	if !strings.Contains(lines[0], `"heap_after_bytes":657192`) {
		t.Errorf("GC 1: %s", lines[0])
	}
}

func TestReportCSV(t *testing.T) {
	out, errs, code := dump(t, "-report", "gc", "-format", "csv", gcETL)
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || strings.Join(rows[0], ",") != strings.Join(gcColumns, ",") {
		t.Fatalf("rows %v", rows)
	}
	if rows[2][1] != "2" || rows[2][2] != "2" {
		t.Errorf("GC 2 row %v", rows[2])
	}
}

func TestReportText(t *testing.T) {
	out, errs, code := dump(t, "-report", "gc", gcETL)
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, want := range []string{"Process 179596: 2 GCs (workstation GC)", "NonConcurrent", "Induced"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "estimated") {
		t.Errorf("heap sizes marked estimated; the trace has per-heap histories:\n%s", out)
	}
}

// TestReportMissingEvents: a trace without the events names the keyword
// to enable.
func TestReportMissingEvents(t *testing.T) {
	_, errs, code := dump(t, "-report", "gc", small)
	if code != exitError || !strings.Contains(errs, "GC keyword (0x1) at level Informational (4)") {
		t.Errorf("gc: exit %d, stderr %q", code, errs)
	}
	_, errs, code = dump(t, "-report", "jit", gcETL)
	if code != exitError || !strings.Contains(errs, "JIT keyword (0x10) at level Verbose (5)") {
		t.Errorf("jit: exit %d, stderr %q", code, errs)
	}
	_, errs, code = dump(t, "-report", "gc", "-pid", "1", gcETL)
	if code != exitError || !strings.Contains(errs, "for process 1") {
		t.Errorf("gc -pid 1: exit %d, stderr %q", code, errs)
	}
}

func TestReportUsage(t *testing.T) {
	for _, args := range [][]string{
		{"-report", "heap", gcETL},
		{"-report", "jit", "-format", "html", gcETL},
		{"-report", "gc", "-format", "pprof", gcETL},
		{"-report", "gc"},
	} {
		if _, _, code := dump(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}

// TestReportSharedTrace: the 3.0 trace's GC 1 pauses 20.865 ms, not the
// SampleProfiler's interleaved suspensions; its JIT report lists the slowest
// method first.
func TestReportSharedTrace(t *testing.T) {
	if _, err := os.Stat(core30); err != nil {
		t.Skipf("%s is not here (it comes with ../shared): %v", core30, err)
	}
	out, errs, code := dump(t, "-report", "gc", "-format", "jsonl", core30)
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	first := out[:strings.IndexByte(out, '\n')]
	if !strings.Contains(first, `"pause_ms":20.865`) {
		t.Errorf("GC 1: %s", first)
	}
	if n := strings.Count(out, "\n"); n != 478 {
		t.Errorf("%d GCs, want 478", n)
	}
	out, _, code = dump(t, "-report", "jit", "-format", "jsonl", core30)
	if code != exitOK {
		t.Fatalf("jit: exit %d", code)
	}
	var m struct {
		PID        int64   `json:"pid"`
		Method     string  `json:"method"`
		Tier       string  `json:"tier"`
		JitMS      float64 `json:"jit_ms"`
		ILSize     int     `json:"il_size"`
		NativeSize int     `json:"native_size"`
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 53 {
		t.Errorf("%d methods, want 53", len(lines))
	}
	if err := json.Unmarshal([]byte(lines[0]), &m); err != nil || m.PID != 10064 || m.Method == "" || m.Tier == "" || m.JitMS <= 0 || m.NativeSize <= 0 {
		t.Errorf("first method %+v, %v: %s", m, err, lines[0])
	}
	text, _, _ := dump(t, "-report", "jit", "-n", "3", core30)
	if !strings.Contains(text, "Slowest 3:") || !strings.Contains(text, "System.Marvin.ComputeHash") {
		t.Errorf("jit text:\n%s", text)
	}
}

// TestReportHTMLInBrowser renders the HTML report in headless Chromium and
// checks that the pause chart drew bars of the generations the trace's GCs
// condemned (gcevents.etl: one gen 1 and one gen 2 GC).
func TestReportHTMLInBrowser(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CLREVENTS_REQUIRE_CHROMIUM") != "" {
			t.Fatal("CLREVENTS_REQUIRE_CHROMIUM is set and chromium is not on PATH")
		}
		t.Skip("chromium is not installed (Debian's chromium package; .ci/run installs it)")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "gc.html")
	if _, errs, code := dump(t, "-report", "gc", "-format", "html", "-o", page, gcETL); code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	shot := filepath.Join(dir, "gc.png")
	cmd := exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--hide-scrollbars", "--window-size=1100,1400",
		"--screenshot="+shot, "file://"+page)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	for gen := 1; gen <= 2; gen++ {
		// The legend's swatch is 100 pixels of the colour; each bar is 3
		// pixels wide and more than 100 tall.
		if n := countColor(img, gcstats.GenColors[gen]); n < 300 {
			t.Errorf("gen %d colour %s: %d pixels in the screenshot; the chart did not render its bar", gen, gcstats.GenColors[gen], n)
		}
	}
	if n := countColor(img, gcstats.HeapColors[0]); n < 300 {
		t.Errorf("heap line colour: %d pixels; the heap chart did not render", n)
	}
}

// countColor counts the pixels of img within a small distance of the
// colour "#rrggbb".
func countColor(img image.Image, hex string) int {
	v, _ := strconv.ParseUint(hex[1:], 16, 32)
	r0, g0, b0 := int(v>>16), int(v>>8&0xff), int(v&0xff)
	n := 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if abs(int(r>>8)-r0) <= 6 && abs(int(g>>8)-g0) <= 6 && abs(int(b>>8)-b0) <= 6 {
				n++
			}
		}
	}
	return n
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// TestReportUnknownFragmentation: a GC without per-heap histories has no
// free-space figure, written as -1 (not 0, which would claim none).
func TestReportUnknownFragmentation(t *testing.T) {
	comma := func(b []byte, i int) []byte {
		if i > 0 {
			b = append(b, ',')
		}
		return b
	}
	plain := func(b []byte, s string) []byte { return append(b, s...) }
	col := slices.Index(gcColumns, "fragmentation_bytes")
	for _, c := range []struct {
		gc   gcstats.GC
		want string
	}{
		{gcstats.GC{Number: 1}, "-1"},
		{gcstats.GC{Number: 2, HasFragmentation: true}, "0"},
		{gcstats.GC{Number: 3, HasFragmentation: true, Fragmentation: [gcstats.NumGens]uint64{5, 0, 7}}, "12"},
	} {
		row := strings.Split(string(gcRow(nil, 1, &c.gc, time.Time{}, comma, plain)), ",")
		if len(row) != len(gcColumns) || row[col] != c.want {
			t.Errorf("GC %d: fragmentation_bytes %q, want %q (row %v)", c.gc.Number, row[col], c.want, row)
		}
	}
}
