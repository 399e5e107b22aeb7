package main

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/internal/eventfmt"
)

const small = "../../testdata/traces/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip"
const arrays = "../../testdata/traces/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"
const gcETL = "../../testdata/traces/gcevents.etl.zip"
const netperf20 = "../../testdata/traces/eventpipe-dotnetcore2.0-linux-objver2.first1300.netperf.zip"

func dump(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errb, false)
	return out.String(), errb.String(), code
}

func TestText(t *testing.T) {
	out, errs, code := dump(t, small)
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	want := `2021-06-09T09:48:27.655790600Z Microsoft-Windows-DotNETRuntimeRundown/ExecutionCheckpointDCEnd pid=9832 tid=25112 ClrInstanceID=9 Name="RuntimeInit" Timestamp=11111925598665
`
	lines := strings.SplitAfter(out, "\n")
	if len(lines) != 4 || lines[0] != want {
		t.Errorf("got:\n%s\nfirst line want:\n%s", out, want)
	}
	for _, name := range []string{"RuntimeInit", "RuntimeSuspend", "RuntimeResumed"} {
		if !strings.Contains(out, `Name="`+name+`"`) {
			t.Errorf("missing checkpoint %s", name)
		}
	}
}

func TestJSONLines(t *testing.T) {
	out, _, code := dump(t, "-format", "jsonl", arrays)
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	n := 0
	kinds := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m struct {
			Provider string         `json:"provider"`
			Event    string         `json:"event"`
			Fields   map[string]any `json:"fields"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d: %v: %s", n, err, l)
		}
		kinds[m.Event]++
		if m.Event == "MethodDCEndILToNativeMap" {
			il, _ := m.Fields["ILOffsets"].([]any)
			cnt, _ := m.Fields["CountOfMapEntries"].(float64)
			if len(il) != int(cnt) {
				t.Errorf("ILOffsets has %d entries, CountOfMapEntries %v", len(il), cnt)
			}
		}
		n++
	}
	if n != 1970 || kinds["MethodDCEndVerbose_V1"] != 1499 || kinds["TestEvent1"] != 1 || kinds["ProcessInfo"] != 2 {
		t.Errorf("%d events, kinds %v", n, kinds)
	}
}

func TestCSVLongForm(t *testing.T) {
	out, _, code := dump(t, "-format", "csv", small)
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows[0], ",")+"\n" != eventfmt.CSVHeader {
		t.Errorf("header %v", rows[0])
	}
	// 3 events × 3 fields.
	if len(rows) != 1+9 {
		t.Fatalf("%d rows:\n%s", len(rows), out)
	}
	if r := rows[2]; r[0] != "0" || r[8] != "Name" || r[9] != "RuntimeInit" {
		t.Errorf("row 2 = %v", r)
	}
}

func TestStatsAndFilters(t *testing.T) {
	out, _, code := dump(t, "-stats", arrays)
	if code != exitOK || !strings.Contains(out, "1499") || !strings.Contains(out, "1970") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	out, _, _ = dump(t, "-event", "Method*", "-n", "5", arrays)
	if c := strings.Count(out, "\n"); c != 5 || strings.Contains(out, "Assembly") {
		t.Errorf("-event Method* -n 5: %d lines\n%s", c, out)
	}
	out, _, _ = dump(t, "-provider", "*eventpipe", arrays)
	if c := strings.Count(out, "\n"); c != 2 {
		t.Errorf("-provider *eventpipe: %d lines", c)
	}
	out, _, _ = dump(t, "-tid", "33504", arrays)
	if c := strings.Count(out, "\n"); c != 1 {
		t.Errorf("-tid 33504: %d lines", c)
	}
	out, _, _ = dump(t, "-pid", "1", arrays)
	if out != "" {
		t.Errorf("-pid 1 printed %q", out)
	}
}

func TestETL(t *testing.T) {
	out, errs, code := dump(t, "-stats", gcETL)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "Microsoft-Windows-DotNETRuntime/GCStart_V2") {
		t.Errorf("no GCStart_V2:\n%s", out)
	}
	out, _, _ = dump(t, "-event", "GCCreateSegment*", "-n", "1", gcETL)
	// TraceEvent: Address=0x1b0f1000028; Size=0x01ffffd8; Type=PinnedObjectHeap
	if !strings.Contains(out, "Address=0x1b0f1000028") || !strings.Contains(out, "Type=PinnedHeap") {
		t.Errorf("GCCreateSegment: %s", out)
	}
}

func TestUsageAndErrors(t *testing.T) {
	if _, _, code := dump(t); code != exitUsage {
		t.Errorf("no args: exit %d", code)
	}
	if _, errs, code := dump(t, "-format", "xml", small); code != exitUsage || !strings.Contains(errs, "want text, jsonl, csv, or parquet with -o DIR") {
		t.Errorf("-format xml: exit %d, %q", code, errs)
	}
	for _, mode := range [][]string{nil, {"-report", "jit"}, {"-format", "parquet", "-o", t.TempDir()}} {
		args := append(append(mode, "-n", "-1"), small)
		if _, errs, code := dump(t, args...); code != exitUsage || !strings.Contains(errs, "clrdump: -n -1: want a count, or 0 for all") {
			t.Errorf("clrdump %v: exit %d, %q", args, code, errs)
		}
	}
	if _, errs, code := dump(t, "-keyword", "zz", small); code != exitUsage || !strings.Contains(errs, `clrdump: -keyword "zz": not a number`) {
		t.Errorf("bad keyword: exit %d, %q", code, errs)
	}
	// Flags that ask for two things at once, and IDs that are neither an
	// ID nor -1 (all), are usage errors, not silently one of them.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-profile", "cpu", "-report", "gc"}, "clrdump: -profile and -report each choose what clrdump does: give one"},
		{[]string{"-stats", "-report", "jit"}, "clrdump: -report and -stats each choose what clrdump does: give one"},
		{[]string{"-stats", "-format", "csv"}, "clrdump: -stats prints a text table: -format csv does not apply"},
		{[]string{"-pid", "-2"}, "clrdump: -pid -2: want a process ID, or -1 for all"},
		{[]string{"-report", "gc", "-pid", "-5"}, "clrdump: -pid -5: want a process ID, or -1 for all"},
		{[]string{"-tid", "-7"}, "clrdump: -tid -7: want a thread ID, or -1 for all"},
		// The event filters with a mode built from every event: they
		// were ignored (a profile of one thread was the whole machine's).
		{[]string{"-profile", "cpu", "-tid", "3708"}, "clrdump: -tid chooses the events printed; -profile is built from every event (-pid picks the process)"},
		{[]string{"-profile", "alloc", "-provider", "foo*"}, "clrdump: -provider chooses the events printed; -profile is built from every event"},
		{[]string{"-profile", "cpu", "-n", "5"}, "clrdump: -n limits the events printed; -profile is built from every event"},
		{[]string{"-report", "gc", "-event", "GC*"}, "clrdump: -event chooses the events printed; -report is built from every event"},
		{[]string{"-report", "jit", "-keyword", "0x10"}, "clrdump: -keyword chooses the events printed; -report is built from every event"},
	} {
		if _, errs, code := dump(t, append(c.args, small)...); code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("clrdump %v: exit %d, %q; want %q", c.args, code, errs, c.want)
		}
	}
	// Arguments after the trace: a flag there (which the flag package
	// leaves as an argument) or a second trace, in every mode.
	for _, mode := range [][]string{nil, {"-report", "gc"}, {"-profile", "cpu"}} {
		for _, c := range []struct {
			after []string
			want  string
		}{
			{[]string{"-pid", "1"}, "clrdump: flags go before the trace: -pid comes after " + small},
			{[]string{small}, "clrdump: one trace at a time, not 2"},
		} {
			args := append(append(append([]string(nil), mode...), small), c.after...)
			if _, errs, code := dump(t, args...); code != exitUsage || !strings.Contains(errs, c.want) || !strings.Contains(errs, "usage: clrdump") {
				t.Errorf("clrdump %v: exit %d, %q; want %q and the usage", args, code, errs, c.want)
			}
		}
	}
	if _, errs, code := dump(t, "does-not-exist.nettrace"); code != exitError || errs == "" {
		t.Errorf("missing file: exit %d, %q", code, errs)
	}
	// A truncated trace: every complete event, then exit 1 with a message.
	data := unzipFirst(t, arrays)
	p := filepath.Join(t.TempDir(), "cut.nettrace")
	if err := os.WriteFile(p, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := dump(t, p)
	if code != exitError || !strings.Contains(errs, "truncated") || strings.Count(out, "\n") == 0 {
		t.Errorf("truncated: exit %d, %d lines, stderr %q", code, strings.Count(out, "\n"), errs)
	}
}

// TestSharedTraces decodes every trace in ../shared with no decode error and
// the total counts PROVENANCE.md gives.
func TestSharedTraces(t *testing.T) {
	dir := "../../../shared/fixtures/traces"
	if _, err := os.Stat(dir); err != nil {
		t.Skip("../shared/fixtures is not beside the checkout (CI has it): ", err)
	}
	for name, want := range map[string]int{
		"perfview/eventpipe-dotnetcore2.1-linux-x64-objver3.netperf.zip":               26146,
		"perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip":                105540,
		"perfview/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip":             1970,
		"perfview/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip":   3,
		"perfview/only_managed_samples.nettrace.zip":                                   37603,
		"pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace": 27951,
		"perfview/eventpipe-dotnetcore2.0-linux-objver2.netperf.zip":                   -1,
		"perfview/gcevents.etl.zip":                                                    -1,
		"perfview/net.4.5.2.x86.etl.zip":                                               -1,
	} {
		t.Run(name, func(t *testing.T) {
			out, errs, code := dump(t, "-stats", filepath.Join(dir, name))
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errs)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			total, _ := strconv.Atoi(strings.Fields(lines[len(lines)-1])[0])
			if want >= 0 && total != want {
				t.Errorf("%d events, PROVENANCE.md says %d", total, want)
			}
			if total == 0 {
				t.Error("no events")
			}
		})
	}
}

func unzipFirst(t *testing.T, path string) []byte {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	f, err := zr.File[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestOrder: by default events come in timestamp order; -order file keeps
// the stored order, which in the .NET Core 3.0 trace goes back in time.
func TestOrder(t *testing.T) {
	if _, _, code := dump(t, "-order", "random", small); code != exitUsage {
		t.Errorf("-order random: exit %d", code)
	}
	p := filepath.Join("../../../shared/fixtures/traces/perfview", "eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip")
	if _, err := os.Stat(p); err != nil {
		t.Skip("the .NET Core 3.0 trace is in ../shared (CI has it): ", err)
	}
	backwards := func(args ...string) int {
		out, errs, code := dump(t, append(args, "-format", "jsonl", p)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		n, prev := 0, ""
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			var e struct{ Time string }
			if err := json.Unmarshal([]byte(l), &e); err != nil {
				t.Fatal(err)
			}
			if e.Time < prev { // RFC 3339 UTC with fixed digits sorts as time does
				n++
			}
			prev = e.Time
		}
		return n
	}
	if n := backwards(); n != 0 {
		t.Errorf("default order: %d events go back in time", n)
	}
	if n := backwards("-order", "file"); n == 0 {
		t.Error("-order file: no event goes back in time; the trace interleaves threads")
	}
}

func dumpStdin(t *testing.T, stdin []byte, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, bytes.NewReader(stdin), &out, &errb, false)
	return out.String(), errb.String(), code
}

// TestStdin: "-" reads a pipe, zipped or not, and gives the same events as
// the file, for every format.
func TestStdin(t *testing.T) {
	traces := []string{small, arrays, gcETL}
	shared := "../../../shared/fixtures/traces/perfview"
	for _, n := range []string{"eventpipe-dotnetcore2.1-linux-x64-objver3.netperf.zip", "net.4.5.2.x86.etl.zip"} {
		if _, err := os.Stat(filepath.Join(shared, n)); err == nil {
			traces = append(traces, filepath.Join(shared, n))
		} else {
			t.Logf("%s: not beside the checkout, skipped", n)
		}
	}
	for _, p := range traces {
		t.Run(filepath.Base(p), func(t *testing.T) {
			want, errs, code := dump(t, "-format", "jsonl", p)
			if code != exitOK {
				t.Fatalf("file: exit %d: %s", code, errs)
			}
			zipped, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			for how, data := range map[string][]byte{"zip": zipped, "unzipped": unzipTrace(t, p)} {
				got, errs, code := dumpStdin(t, data, "-format", "jsonl", "-")
				if code != exitOK {
					t.Fatalf("%s on stdin: exit %d: %s", how, code, errs)
				}
				if got != want {
					t.Errorf("%s on stdin: output differs from the file's (%d bytes, want %d)", how, len(got), len(want))
				}
			}
		})
	}
}

// TestStdinFileOrderETL: an ETW log from a stream in file order is read
// once, front to back, without what the log tells later: clrdump says so.
// Time order, and a file, say nothing.
func TestStdinFileOrderETL(t *testing.T) {
	data := unzipTrace(t, gcETL)
	const note = "standard input: an ETW log read from a stream in file order is read once, front to back"
	if _, errs, code := dumpStdin(t, data, "-order", "file", "-stats", "-"); code != exitOK || !strings.Contains(errs, note) {
		t.Errorf("file order on stdin: exit %d, stderr %q", code, errs)
	}
	for _, args := range [][]string{{"-stats", "-"}, {"-order", "file", "-stats", gcETL}} {
		if _, errs, _ := dumpStdin(t, data, args...); strings.Contains(errs, "front to back") {
			t.Errorf("%v: stderr %q", args, errs)
		}
	}
	// From a file, file order is not what is given: clrdump says so.
	if _, errs, code := dumpStdin(t, data, "-order", "file", "-stats", gcETL); code != exitOK || !strings.Contains(errs, "an ETW log read from a file is read in time order") {
		t.Errorf("-order file of an ETW log file: exit %d, stderr %q", code, errs)
	}
	if _, errs, _ := dumpStdin(t, data, "-stats", gcETL); errs != "" {
		t.Errorf("time order of an ETW log file: stderr %q", errs)
	}
}

// unzipTrace returns the trace inside a zip (skipping PerfView's log files).
func unzipTrace(t *testing.T, path string) []byte {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		switch strings.ToLower(filepath.Ext(f.Name)) {
		case ".etl", ".nettrace", ".netperf":
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			b, err := io.ReadAll(rc)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	t.Fatalf("%s holds no trace", path)
	return nil
}

// TestJSONKeys: every line has size; ETL lines have cpu; schema events have
// their task, opcode, level and keywords; each key keeps one JSON type.
func TestJSONKeys(t *testing.T) {
	for _, p := range []string{small, arrays, gcETL} {
		out, errs, code := dump(t, "-format", "jsonl", p)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", p, code, errs)
		}
		types := map[string]string{}
		sawGCStart := false
		for i, l := range strings.Split(strings.TrimSpace(out), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("%s line %d: %v", p, i, err)
			}
			for _, k := range []string{"time", "provider", "event", "id", "version", "task", "opcode", "level", "keywords", "pid", "tid", "size"} {
				if _, ok := m[k]; !ok {
					t.Fatalf("%s line %d: no %q: %s", p, i, k, l)
				}
			}
			if _, ok := m["cpu"]; !ok && p == gcETL {
				t.Fatalf("%s line %d: no cpu in an ETL event: %s", p, i, l)
			}
			for k, v := range m {
				typ := jsonType(v)
				if old, ok := types[k]; ok && old != typ {
					t.Fatalf("%s line %d: %q is a %s, earlier a %s", p, i, k, typ, old)
				}
				types[k] = typ
			}
			if m["provider"] == "Microsoft-Windows-DotNETRuntime" && m["event"] == "GCStart_V2" {
				// GC/Start: task 1, opcode 1, level 4, GCKeyword (0x1).
				sawGCStart = true
				kw, _ := strconv.ParseUint(strings.TrimPrefix(m["keywords"].(string), "0x"), 16, 64)
				if m["task"] != 1.0 || m["opcode"] != 1.0 || m["level"] != 4.0 || kw&1 == 0 {
					t.Errorf("GCStart_V2: task %v opcode %v level %v keywords %v", m["task"], m["opcode"], m["level"], m["keywords"])
				}
			}
			size, _ := m["size"].(float64)
			if f, ok := m["fields"].(map[string]any); ok {
				if hex, ok := f["payload"].(string); ok && len(f) == 1 && len(hex) != 2+2*int(size) {
					t.Errorf("%s line %d: payload %s is not %v bytes", p, i, hex, size)
				}
			}
		}
		if p == gcETL && !sawGCStart {
			t.Errorf("%s: no GCStart_V2 line", p)
		}
	}
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return "null"
}

func TestInputErrors(t *testing.T) {
	// Empty input, garbage, a missing file: one line on stderr naming the
	// input, exit 1.
	for _, c := range []struct {
		stdin []byte
		want  string
	}{
		{nil, "clrdump: standard input: empty input"},
		{[]byte(strings.Repeat("not a trace ", 20)), "clrdump: standard input: not a trace: the formats read are EventPipe .nettrace and .netperf, Windows ETW .etl, and a .zip or .gz holding one of them\n"},
	} {
		_, errs, code := dumpStdin(t, c.stdin, "-")
		if code != exitError || !strings.HasPrefix(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("exit %d, stderr %q; want it to start with %q", code, errs, c.want)
		}
	}
	p := filepath.Join(t.TempDir(), "empty.etl")
	os.WriteFile(p, nil, 0o644)
	if _, errs, code := dump(t, p); code != exitError || !strings.Contains(errs, p+": empty input") {
		t.Errorf("empty file: exit %d, stderr %q", code, errs)
	}
}

// TestNoMatch: filters that keep no event print nothing (CSV its header),
// exit 0, and say so on stderr, naming the filters.
func TestNoMatch(t *testing.T) {
	out, errs, code := dump(t, "-event", "GCStart", "-pid", "4", gcETL)
	if code != exitOK || out != "" || !strings.Contains(errs, `matched -event "GCStart" -pid 4; -stats lists`) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	out, _, code = dump(t, "-format", "csv", "-event", "GCStart", gcETL)
	if code != exitOK || out != eventfmt.CSVHeader {
		t.Errorf("csv: exit %d, %q", code, out)
	}
	if _, errs, _ := dump(t, "-event", "GCStart*", gcETL); errs != "" {
		t.Errorf("a filter that matched: stderr %q", errs)
	}
	// A trace that records no process IDs says so.
	const core20 = "../../testdata/traces/eventpipe-dotnetcore2.0-linux-objver2.first1300.netperf.zip"
	if out, errs, code := dump(t, "-pid", "4", core20); code != exitOK || out != "" || !strings.Contains(errs, "matched -pid 4: the trace records no process IDs") {
		t.Errorf("-pid on a trace without process IDs: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// TestEventTraceEventNames: -event takes TraceEvent's Task/Opcode names too.
func TestEventTraceEventNames(t *testing.T) {
	bySymbol, _, _ := dump(t, "-event", "GCStart_V2", gcETL)
	byName, _, code := dump(t, "-event", "GC/Start", gcETL)
	if code != exitOK || byName == "" || byName != bySymbol {
		t.Errorf("-event GC/Start gave %q, -event GCStart_V2 %q", byName, bySymbol)
	}
	out, _, _ := dump(t, "-event", "GC/*", gcETL)
	if !strings.Contains(out, "GCStart_V2") || !strings.Contains(out, "GCRestartEEEnd") || strings.Contains(out, "RuntimeInformationStart") {
		t.Errorf("-event 'GC/*':\n%s", out)
	}
	out, _, _ = dump(t, "-event", "EventTrace", gcETL)
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "Windows Kernel/EventTrace ") {
		t.Errorf("-event EventTrace: %q", out)
	}
	// An EventSource's RequestStop is TraceEvent's Request/Stop; the
	// output keeps the trace's name.
	for _, ev := range []string{"Request/Stop", "Request/*", "RequestStop"} {
		out, _, _ = dump(t, "-event", ev, netperf20)
		if strings.Count(out, "\n") != 1 || !strings.Contains(out, "TestEventSource/RequestStop ") {
			t.Errorf("-event %s: %q", ev, out)
		}
	}
	if out, _, _ = dump(t, "-event", "Request/Start", netperf20); out != "" {
		t.Errorf("-event Request/Start: %q", out)
	}
	out, _, _ = dump(t, "-event", "TestEvent3/24", "../../testdata/traces/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip")
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "TestEventSource0/TestEvent3 ") {
		t.Errorf("-event TestEvent3/24: %q", out)
	}
}

// TestUsageReportAndParquet: flags that mean nothing in a mode are usage
// errors (2) there, naming the flag: -n with a report that lists no
// methods, an unknown -compression.
func TestUsageReportAndParquet(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-report", "gc", "-n", "5"}, "-n does not apply to -report gc -format text"},
		{[]string{"-report", "jit", "-format", "csv", "-n", "1"}, "-n does not apply to -report jit -format csv"},
		{[]string{"-format", "parquet", "-compression", "lz4", "-o", filepath.Join(t.TempDir(), "ds")}, `-compression "lz4": want zstd, snappy or none`},
	} {
		if _, errs, code := dump(t, append(c.args, small)...); code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
}
