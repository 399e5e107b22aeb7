package gcstats_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	stdhtml "html"
	"image"
	"image/png"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/gcstats"
	"github.com/clrgo/clrevents/trace"
)

// report is what write writes of a's processes.
func report(t *testing.T, a *gcstats.Analyzer, write func(io.Writer, time.Time, []*gcstats.Process) error) string {
	t.Helper()
	var b bytes.Buffer
	if err := write(&b, a.Origin(), a.Processes()); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// writeHTML is WriteHTML with the page named "gcevents".
func writeHTML(w io.Writer, origin time.Time, procs []*gcstats.Process) error {
	return gcstats.WriteHTML(w, origin, procs, "gcevents")
}

// TestWriteJSONLines: one object per GC with the documented keys, each of
// a fixed JSON type.
func TestWriteJSONLines(t *testing.T) {
	out := report(t, analyze(t, gcevents), gcstats.WriteJSONLines)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2 GCs:\n%s", len(lines), out)
	}
	types := map[string]string{
		"pid": "number", "gc": "number", "gen": "number", "reason": "string", "type": "string",
		"start_ms": "number", "pause_ms": "number", "pauses": "number", "suspend_ms": "number", "duration_ms": "number",
		"pause_percent": "number", "allocated_bytes": "number", "heap_before_bytes": "number", "heap_before_estimated": "bool",
		"heap_after_bytes": "number", "fragmentation_bytes": "number", "promoted_bytes": "number", "pinned_objects": "number", "heaps": "number", "complete": "bool",
		"process_start_ms": "number", "allocated_exact": "bool",
	}
	if len(types) != len(gcstats.Columns()) {
		t.Errorf("Columns %v, want the %d keys here", gcstats.Columns(), len(types))
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

func jsonType(v any) string {
	switch v.(type) {
	case float64:
		return "number"
	case string:
		return "string"
	case bool:
		return "bool"
	}
	return fmt.Sprintf("%T", v)
}

// TestWriteCSV: a header of Columns, then the JSON lines' values, a GC a
// record.
func TestWriteCSV(t *testing.T) {
	a := analyze(t, gcevents)
	rows, err := csv.NewReader(strings.NewReader(report(t, a, gcstats.WriteCSV))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || !slices.Equal(rows[0], gcstats.Columns()) {
		t.Fatalf("rows %v", rows)
	}
	if rows[2][1] != "2" || rows[2][2] != "2" {
		t.Errorf("GC 2 row %v", rows[2])
	}
	for i, l := range strings.Split(strings.TrimSpace(report(t, a, gcstats.WriteJSONLines)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		for j, k := range rows[0] {
			if want := fmt.Sprint(m[k]); rows[i+1][j] != want && strconv.Quote(rows[i+1][j]) != want {
				if f, err := strconv.ParseFloat(rows[i+1][j], 64); err != nil || f != m[k] {
					t.Errorf("GC %d: %s is %q in CSV, %v in JSON", i+1, k, rows[i+1][j], m[k])
				}
			}
		}
	}
}

func TestWriteText(t *testing.T) {
	out := report(t, analyze(t, gcevents), gcstats.WriteText)
	for _, want := range []string{"Process 179596: 2 GCs (1 heap)", " NonConcurrentGC ", "Induced", "1.450 MB allocated", "largest heap after a GC 0.657 MB"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "estimated") {
		t.Errorf("heap sizes marked estimated; the trace has per-heap histories:\n%s", out)
	}
	// The share of time paused is over the process's time in the trace
	// (no kernel Process events: from the runtime's start, 8.185 s into
	// the trace, to its end), not over the 1.3 ms from the first GC to
	// the last, and the line says so.
	if !strings.Contains(out, "paused 1.329 ms, 0.04% of its 3.424 s in the trace (8.185 s to 11.609 s from the trace's start)") {
		t.Errorf("pause share not over the process's time in the trace:\n%s", out)
	}
}

// TestReportTypeSpelling: the GC type is spelled as TraceEvent's GCType
// names it in every format.
func TestReportTypeSpelling(t *testing.T) {
	a := analyze(t, gcevents)
	for format, write := range map[string]func(io.Writer, time.Time, []*gcstats.Process) error{
		"text": gcstats.WriteText, "jsonl": gcstats.WriteJSONLines, "csv": gcstats.WriteCSV, "html": writeHTML,
	} {
		out := report(t, a, write)
		if n := strings.Count(out, "NonConcurrentGC"); n != 2 {
			t.Errorf("%s: NonConcurrentGC %d times, want 2 (one per GC)", format, n)
		}
		if n := strings.Count(out, "NonConcurrent"); n != 2 {
			t.Errorf("%s: NonConcurrent %d times, another spelling", format, n)
		}
	}
}

// TestReportAllocationUnknown: a trace without AllocationTick events
// (gcevents.etl's GC events at level Informational, the Verbose ticks
// left out) says allocation is unknown and what records it, never 0 MB,
// but for a GC whose allocation the per-heap histories of it and the GC
// before it give (GC 2).
func TestReportAllocationUnknown(t *testing.T) {
	r, err := trace.Open(gcevents)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	a := gcstats.NewAnalyzer()
	ticks := 0
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(e.Name(), "GCAllocationTick") {
			ticks++
			continue
		}
		a.Add(e)
	}
	if ticks == 0 {
		t.Fatal("gcevents.etl has no AllocationTick events to leave out")
	}
	for format, write := range map[string]func(io.Writer, time.Time, []*gcstats.Process) error{"text": gcstats.WriteText, "html": writeHTML} {
		out := report(t, a, write)
		if strings.Contains(out, "0.000 MB allocated") || strings.Contains(out, "Allocated 0.000") {
			t.Errorf("%s: a zero allocation that is no measurement:\n%s", format, out)
		}
		if !strings.Contains(out, "llocation unknown") || !strings.Contains(out, "at level Verbose") {
			t.Errorf("%s: does not say allocation is unknown and what records it:\n%s", format, out)
		}
	}
	// GC 1's allocation is unknown too: -1, and ? in the tables; GC 2's
	// is exact, from its histories and GC 1's (both induced, 0.75 ms
	// apart: nothing allocated).
	out := report(t, a, gcstats.WriteJSONLines)
	if strings.Count(out, `"allocated_bytes":-1,`) != 1 || !strings.Contains(out, `"gc":2,`) ||
		!regexp.MustCompile(`"gc":2,.*"allocated_bytes":0,.*"allocated_exact":true}`).MatchString(out) {
		t.Errorf("jsonl: GC 1's allocation not -1, or GC 2's not an exact 0:\n%s", out)
	}
	if out := report(t, a, gcstats.WriteText); !regexp.MustCompile(`(?m)^ 1 .* 0\.0 +\? +1\.468 `).MatchString(out) ||
		!regexp.MustCompile(`(?m)^ 2 .* 94\.6 +0\.000 +0\.657 `).MatchString(out) {
		t.Errorf("text: GC 1's allocation not ?, or GC 2's not 0.000:\n%s", out)
	}
}

// TestAllocatedPerGC: each GC's allocation, in every format, is what the
// AllocationTick events add up to since the previous GC's heap
// statistics (gcevents.etl: all 1.45 MB before GC 1, none between GC 1
// and GC 2, both induced), summed here from the events alone.
func TestAllocatedPerGC(t *testing.T) {
	r, err := trace.Open(gcevents)
	if err != nil {
		t.Fatal(err)
	}
	var want []uint64
	var sum uint64
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(e.Name(), "GCAllocationTick") && !strings.HasPrefix(e.Name(), "GCHeapStats") {
			continue
		}
		ev, err := e.Decode()
		if err != nil {
			t.Fatal(err)
		}
		switch ev := ev.(type) {
		case clrevents.GCAllocationTickEvent:
			sum += ev.GCAllocationTickFields().Amount()
		case clrevents.GCHeapStatsEvent:
			want = append(want, sum)
			sum = 0
		}
	}
	r.Close()
	if len(want) != 2 || want[0] == 0 {
		t.Fatalf("allocation before each GC's heap statistics: %v", want)
	}
	a := analyze(t, gcevents)
	for i, gc := range a.Processes()[0].GCs {
		if got := gc.Allocated[0] + gc.Allocated[1] + gc.Allocated[2]; got != want[i] {
			t.Errorf("GC %d: allocated %d bytes, the ticks %d", gc.Number, got, want[i])
		}
	}
	lines := strings.Split(strings.TrimSpace(report(t, a, gcstats.WriteJSONLines)), "\n")
	rows, err := csv.NewReader(strings.NewReader(report(t, a, gcstats.WriteCSV))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(rows[0], "allocated_bytes")
	if col < 0 || len(rows) != 3 {
		t.Fatalf("no allocated_bytes column, or not 2 GCs: %v", rows)
	}
	text := report(t, a, gcstats.WriteText)
	page := report(t, a, writeHTML)
	for i, n := range want {
		s := strconv.FormatUint(n, 10)
		if !strings.Contains(lines[i], `"allocated_bytes":`+s+",") || rows[i+1][col] != s {
			t.Errorf("GC %d: allocated_bytes %s in JSON, %s in CSV; want %s", i+1, lines[i], rows[i+1][col], s)
		}
		mb := strconv.FormatFloat(float64(n)/1e6, 'f', 3, 64)
		if !regexp.MustCompile(`(?m)^ ` + strconv.Itoa(i+1) + ` .* ` + regexp.QuoteMeta(mb) + ` +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +\d+ +\d+$`).MatchString(text) {
			t.Errorf("GC %d: no alloc MB %s before the heap sizes in the text:\n%s", i+1, mb, text)
		}
		if !strings.Contains(page, "<td>"+mb+"</td><td>") {
			t.Errorf("GC %d: no alloc MB %s in the HTML table", i+1, mb)
		}
	}
	if !strings.Contains(text, " alloc MB  before MB ") || !strings.Contains(page, "<th>alloc MB</th><th>before MB</th>") {
		t.Errorf("no alloc MB column before before MB:\n%s", text)
	}
}

// TestReportPauseUnknown: a GC whose suspension the trace does not hold is
// a row, its pause marked unknown ("?" in text, -1 in jsonl and csv), and
// the text says how many there are.
func TestReportPauseUnknown(t *testing.T) {
	a := gcstats.NewAnalyzer()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a.SetOrigin(t0)
	at := func(ms float64, ev clrevents.Event) {
		a.Observe(t0.Add(time.Duration(ms*float64(time.Millisecond))), 7, 1, ev)
	}
	at(1, &clrevents.GCStartV2{Count: 3})
	at(2, &clrevents.GCEndV1{Count: 3})
	at(2.1, &clrevents.GCHeapStatsV2{GenerationSize0: 10})
	at(2.2, &clrevents.GCRestartEEEndV1{})
	at(5, &clrevents.GCSuspendEEBeginV1{Reason: clrevents.GCSuspendEEReasonSuspendForGC})
	at(5.1, &clrevents.GCStartV2{Count: 4, Depth: 1})
	at(6, &clrevents.GCEndV1{Count: 4})
	at(6.1, &clrevents.GCHeapStatsV2{GenerationSize0: 10})
	at(6.5, &clrevents.GCRestartEEEndV1{})
	text := report(t, a, gcstats.WriteText)
	if !strings.Contains(text, "Process 7: 2 GCs") || !strings.Contains(text, "its pause is unknown (1 of the GCs)") {
		t.Errorf("text:\n%s", text)
	}
	lines := strings.Split(text, "\n")
	var row3, row4 []string
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) > 6 && f[0] == "3" {
			row3 = f
		}
		if len(f) > 6 && f[0] == "4" {
			row4 = f
		}
	}
	if row3 == nil || row3[5] != "?" || row3[6] != "?" || row4 == nil || row4[5] != "1.500" {
		t.Errorf("rows %v and %v; want GC 3's pause ?, GC 4's 1.500:\n%s", row3, row4, text)
	}
	// Generation 0's one GC has no known pause: its pause figures are
	// unknown, not 0.
	if !strings.Contains(text, "\n  0      1              ?             ?               ?") {
		t.Errorf("gen 0 summary row not marked unknown:\n%s", text)
	}
	var m struct {
		GC       int64   `json:"gc"`
		PauseMS  float64 `json:"pause_ms"`
		Suspend  float64 `json:"suspend_ms"`
		Percent  float64 `json:"pause_percent"`
		Complete bool    `json:"complete"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(report(t, a, gcstats.WriteJSONLines), "\n", 2)[0]), &m); err != nil {
		t.Fatal(err)
	}
	if m.GC != 3 || m.PauseMS != -1 || m.Suspend != -1 || m.Percent != -1 || !m.Complete {
		t.Errorf("GC 3 line %+v, want pause_ms, suspend_ms, pause_percent -1 and complete", m)
	}
}

// TestReportHTMLInBrowser renders the HTML report in headless Chromium:
// the pause chart drew bars of the generations the trace's GCs condemned
// (gcevents.etl: one gen 1 and one gen 2 GC) and the heap line; and the
// time axes' labels, as the browser lays them out, are distinct, readable
// times that do not overlap, on that trace (1.5 ms of GCs 11.6 s into
// it) and on processes whose GCs span a millisecond hours into a trace,
// a second, a minute and a half, and hours.
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
	html := []byte(report(t, analyze(t, gcevents), writeHTML))
	if err := os.WriteFile(page, html, 0o644); err != nil {
		t.Fatal(err)
	}
	browser := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(chromium, append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--user-data-dir=" + filepath.Join(dir, "profile"), "--hide-scrollbars", "--window-size=1100,1400"}, args...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("chromium: %v\n%s", err, stderr.Bytes())
		}
		return stdout.Bytes()
	}

	shot := filepath.Join(dir, "gc.png")
	browser("--screenshot="+shot, "file://"+page)
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
		c := attrOf(t, html, fmt.Sprintf(`class="pause gen%d"`, gen), "fill")
		if n := countColor(img, c); n < 300 {
			t.Errorf("gen %d colour %s: %d pixels in the screenshot; the chart did not render its bar", gen, c, n)
		}
	}
	if c := attrOf(t, html, `class="heap-line"`, "stroke"); countColor(img, c) < 300 {
		t.Errorf("heap line colour %s: %d pixels; the heap chart did not render", c, countColor(img, c))
	}

	// The axes as laid out: gcevents.etl's page, and synthetic processes
	// whose GCs span 1 ms three hours in, 1 s, 90 s and 5 hours.
	synthetic := filepath.Join(dir, "spans.html")
	var b bytes.Buffer
	a := spansAnalyzer()
	if err := gcstats.WriteHTML(&b, a.Origin(), a.Processes(), "spans"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(synthetic, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		page   string
		charts int
	}{{page, 2}, {synthetic, 2 * len(a.Processes())}} {
		probe := c.page + ".probe.html"
		src, err := os.ReadFile(c.page)
		if err != nil {
			t.Fatal(err)
		}
		// A copy of the page with a script that reports each chart's
		// tick labels and where the browser put them.
		src = bytes.Replace(src, []byte("</body>"), []byte(axisProbe+"</body>"), 1)
		if err := os.WriteFile(probe, src, 0o644); err != nil {
			t.Fatal(err)
		}
		dom := browser("--dump-dom", "--virtual-time-budget=2000", "file://"+probe)
		checkAxes(t, filepath.Base(c.page), dom, c.charts)
	}
}

// axisProbe writes, into the page, each chart's tick labels with their
// boxes as laid out, and the chart's box.
const axisProbe = `<script>
const charts = [];
for (const svg of document.querySelectorAll("svg")) {
	const axis = cls => [...svg.querySelectorAll("text." + cls)].map(t => {
		const r = t.getBoundingClientRect();
		return {label: t.textContent, left: r.left, right: r.right, top: r.top, bottom: r.bottom};
	});
	const r = svg.getBoundingClientRect();
	charts.push({chart: svg.getAttribute("class"), left: r.left, right: r.right, top: r.top, bottom: r.bottom, x: axis("xtick"), y: axis("ytick")});
}
const pre = document.createElement("pre");
pre.id = "axes";
pre.textContent = JSON.stringify(charts);
document.body.appendChild(pre);
</script>
`

type probedLabel struct {
	Label                    string
	Left, Right, Top, Bottom float64
}

type probedChart struct {
	Chart                    string
	Left, Right, Top, Bottom float64
	X, Y                     []probedLabel
}

// timeLabel is a readable time: seconds ("11.6074 s"), m:ss or h:mm:ss,
// with decimals.
var timeLabel = regexp.MustCompile(`^(\d+(\.\d+)? s|\d+:\d\d(\.\d+)?|\d+:\d\d:\d\d(\.\d+)?)$`)

// checkAxes checks the charts the probe found in dom: each axis has at
// least two labels, distinct, increasing, readable, inside the chart and
// apart from each other.
func checkAxes(t *testing.T, page string, dom []byte, charts int) {
	t.Helper()
	m := regexp.MustCompile(`(?s)<pre id="axes">(.*?)</pre>`).FindSubmatch(dom)
	if m == nil {
		t.Fatalf("%s: the probe wrote nothing:\n%.2000s", page, dom)
	}
	var got []probedChart
	if err := json.Unmarshal([]byte(stdhtml.UnescapeString(string(m[1]))), &got); err != nil {
		t.Fatalf("%s: %v", page, err)
	}
	if len(got) != charts {
		t.Fatalf("%s: %d charts, want %d", page, len(got), charts)
	}
	for i, c := range got {
		for axis, labels := range map[string][]probedLabel{"time": c.X, "value": c.Y} {
			where := fmt.Sprintf("%s chart %d (%s), %s axis", page, i, c.Chart, axis)
			if len(labels) < 2 {
				t.Errorf("%s: %d labels", where, len(labels))
				continue
			}
			var texts []string
			prev := math.Inf(-1)
			for j, l := range labels {
				texts = append(texts, l.Label)
				if axis == "time" && (!timeLabel.MatchString(l.Label) || len(l.Label) > 14) {
					t.Errorf("%s: label %q is not a readable time", where, l.Label)
				}
				if v := labelValue(l.Label); !(v > prev) {
					t.Errorf("%s: label %q does not follow %v", where, l.Label, texts[:j])
				} else {
					prev = v
				}
				if l.Left < c.Left || l.Right > c.Right || l.Top < c.Top || l.Bottom > c.Bottom || l.Right <= l.Left {
					t.Errorf("%s: label %q at [%.0f,%.0f]x[%.0f,%.0f] is outside the chart [%.0f,%.0f]x[%.0f,%.0f]",
						where, l.Label, l.Left, l.Right, l.Top, l.Bottom, c.Left, c.Right, c.Top, c.Bottom)
				}
				if j > 0 {
					p := labels[j-1]
					if axis == "time" && l.Left < p.Right+4 || axis == "value" && p.Top < l.Bottom {
						t.Errorf("%s: labels %q and %q overlap", where, p.Label, l.Label)
					}
				}
			}
			t.Logf("%s: %q", where, texts)
			if distinct := len(slices.Compact(slices.Sorted(slices.Values(texts)))); distinct != len(texts) {
				t.Errorf("%s: labels %q repeat", where, texts)
			}
		}
	}
}

// labelValue is the time (seconds) or value a tick label shows.
func labelValue(s string) float64 {
	s = strings.TrimSuffix(s, " s")
	v := 0.0
	for _, part := range strings.Split(s, ":") {
		f, err := strconv.ParseFloat(part, 64)
		if err != nil {
			return math.NaN()
		}
		v = v*60 + f
	}
	return v
}

// spansAnalyzer is a GC model of four processes whose GCs span 1 ms three
// hours into the trace, 1 s, 90 s and 5 hours, and a fifth with a GC
// whose pause is unknown.
func spansAnalyzer() *gcstats.Analyzer {
	a := gcstats.NewAnalyzer()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a.SetOrigin(t0)
	for pid, span := range []struct{ from, to, pause time.Duration }{
		{3 * time.Hour, 3*time.Hour + time.Millisecond, 100 * time.Microsecond},
		{2 * time.Second, 3 * time.Second, 5 * time.Millisecond},
		{10 * time.Second, 100 * time.Second, 20 * time.Millisecond},
		{0, 5 * time.Hour, 300 * time.Millisecond},
	} {
		for i := range 5 {
			at := t0.Add(span.from + (span.to-span.from-span.pause)*time.Duration(i)/4)
			n := uint32(i + 1)
			a.Observe(at, int64(pid+1), 1, &clrevents.GCSuspendEEBeginV1{Reason: clrevents.GCSuspendEEReasonSuspendForGC})
			a.Observe(at.Add(span.pause/10), int64(pid+1), 1, &clrevents.GCStartV2{Count: n, Depth: uint32(i % 3)})
			a.Observe(at.Add(span.pause/2), int64(pid+1), 1, &clrevents.GCEndV1{Count: n})
			a.Observe(at.Add(span.pause/2), int64(pid+1), 1, &clrevents.GCHeapStatsV2{GenerationSize0: uint64(i+1) * 1_000_000, GenerationSize2: 3_000_000})
			a.Observe(at.Add(span.pause), int64(pid+1), 1, &clrevents.GCRestartEEEndV1{})
		}
	}
	// A fifth whose first GC began before the trace: its pause unknown.
	at := func(d time.Duration, ev clrevents.Event) { a.Observe(t0.Add(5*time.Hour+d), 5, 1, ev) }
	at(time.Second, &clrevents.GCStartV2{Count: 9})
	at(time.Second+time.Millisecond, &clrevents.GCEndV1{Count: 9})
	at(time.Second+time.Millisecond, &clrevents.GCHeapStatsV2{GenerationSize0: 1_000_000})
	at(time.Second+2*time.Millisecond, &clrevents.GCRestartEEEndV1{})
	at(2*time.Second, &clrevents.GCSuspendEEBeginV1{Reason: clrevents.GCSuspendEEReasonSuspendForGC})
	at(2*time.Second+time.Millisecond, &clrevents.GCStartV2{Count: 10})
	at(2*time.Second+2*time.Millisecond, &clrevents.GCEndV1{Count: 10})
	at(2*time.Second+2*time.Millisecond, &clrevents.GCHeapStatsV2{GenerationSize0: 2_000_000})
	at(2*time.Second+3*time.Millisecond, &clrevents.GCRestartEEEndV1{})
	return a
}

// attrOf is the value of attribute name of the first element of page
// whose markup holds marker.
func attrOf(t *testing.T, page []byte, marker, name string) string {
	t.Helper()
	i := bytes.Index(page, []byte(marker))
	if i < 0 {
		t.Fatalf("no %s in the page", marker)
	}
	end := bytes.IndexByte(page[i:], '>')
	m := regexp.MustCompile(name + `="([^"]*)"`).FindSubmatch(page[i : i+end])
	if m == nil {
		t.Fatalf("no %s in %s", name, page[i:i+end])
	}
	return string(m[1])
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
			if absInt(int(r>>8)-r0) <= 6 && absInt(int(g>>8)-g0) <= 6 && absInt(int(b>>8)-b0) <= 6 {
				n++
			}
		}
	}
	return n
}

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// TestReportUnknownFragmentation: a GC without per-heap histories has no
// free-space figure, written as -1 (not 0, which would claim none).
func TestReportUnknownFragmentation(t *testing.T) {
	col := slices.Index(gcstats.Columns(), "fragmentation_bytes")
	for _, c := range []struct {
		gc   gcstats.GC
		want string
	}{
		{gcstats.GC{Number: 1}, "-1"},
		{gcstats.GC{Number: 2, HasFragmentation: true}, "0"},
		{gcstats.GC{Number: 3, HasFragmentation: true, Fragmentation: [gcstats.NumGens]uint64{5, 0, 7}}, "12"},
	} {
		var b bytes.Buffer
		if err := gcstats.WriteCSV(&b, time.Time{}, []*gcstats.Process{{PID: 1, GCs: []*gcstats.GC{&c.gc}}}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(b.String()), "\n")
		row := strings.Split(lines[len(lines)-1], ",")
		if len(row) != len(gcstats.Columns()) || row[col] != c.want {
			t.Errorf("GC %d: fragmentation_bytes %q, want %q (row %v)", c.gc.Number, row[col], c.want, row)
		}
	}
}

// TestReportIncomplete: a GC whose end the trace lacks (it was cut during
// the GC) shows what needs that end as unknown, in every form: its pause
// (the runtime was not restarted), duration and sizes are "?" in text
// and HTML and -1 in JSON lines, not measured zeros; the HTML marks the
// GC * and says why; and a GC whose suspension was lost mid-trace is not
// said to have begun before the trace.
func TestReportIncomplete(t *testing.T) {
	a := gcstats.NewAnalyzer()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a.SetOrigin(t0)
	at := func(ms float64, ev clrevents.Event) {
		a.Observe(t0.Add(time.Duration(ms*float64(time.Millisecond))), 7, 1, ev)
	}
	at(1, &clrevents.GCSuspendEEBeginV1{Reason: clrevents.GCSuspendEEReasonSuspendForGC})
	at(1.1, &clrevents.GCStartV2{Count: 1})
	at(2, &clrevents.GCEndV1{Count: 1})
	at(2.1, &clrevents.GCHeapStatsV2{GenerationSize0: 10})
	at(2.2, &clrevents.GCRestartEEEndV1{})
	at(5, &clrevents.GCSuspendEEBeginV1{Reason: clrevents.GCSuspendEEReasonSuspendForGC})
	at(5.1, &clrevents.GCSuspendEEEndV1{})
	at(5.2, &clrevents.GCStartV2{Count: 2, Depth: 1})
	// the trace ends here

	var m struct {
		GC       int64   `json:"gc"`
		PauseMS  float64 `json:"pause_ms"`
		Pauses   int     `json:"pauses"`
		Duration float64 `json:"duration_ms"`
		Before   int64   `json:"heap_before_bytes"`
		After    int64   `json:"heap_after_bytes"`
		Promoted int64   `json:"promoted_bytes"`
		Pinned   int64   `json:"pinned_objects"`
		Complete bool    `json:"complete"`
	}
	lines := strings.Split(strings.TrimSpace(report(t, a, gcstats.WriteJSONLines)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil {
		t.Fatal(err)
	}
	if m.GC != 2 || m.Complete || m.PauseMS != -1 || m.Pauses != -1 || m.Duration != -1 || m.Before != -1 || m.After != -1 || m.Promoted != -1 || m.Pinned != -1 {
		t.Errorf("GC 2 (cut short) %+v: want its pause, pauses, duration and sizes -1", m)
	}

	text := report(t, a, gcstats.WriteText)
	var row []string
	for _, l := range strings.Split(text, "\n") {
		if f := strings.Fields(l); len(f) > 10 && f[0] == "2*" {
			row = f
		}
	}
	// GC, start, gen, type, reason, pause, pauses, suspend, duration,
	// pause %, alloc, before, after, free, promoted, pinned, heaps
	if row == nil || row[5] != "?" || row[6] != "?" || row[7] != "0.100" || row[8] != "?" || row[10] != "?" || row[11] != "?" || row[12] != "?" || row[14] != "?" || row[15] != "?" {
		t.Errorf("GC 2's row %q: want ? for its pause, duration, allocation and sizes, its suspension 0.100:\n%s", row, text)
	}
	if strings.Contains(text, "began after") || strings.Contains(text, "began before") {
		t.Errorf("the text blames the trace's start:\n%s", text)
	}

	page := report(t, a, func(w io.Writer, origin time.Time, procs []*gcstats.Process) error {
		return gcstats.WriteHTML(w, origin, procs, "cut")
	})
	if !strings.Contains(page, "<tr><td>2*</td>") || !strings.Contains(page, "does not hold the end of 1 of the GCs") {
		t.Errorf("the HTML does not mark GC 2 incomplete")
	}
	if strings.Contains(page, "GC 2 (gen 1, AllocSmall): 0.000 ms") || !strings.Contains(page, "GC 2 (gen 1, AllocSmall): pause unknown") {
		t.Errorf("the HTML pause chart draws GC 2's unknown pause as a measured one")
	}
}
