package nettrace

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/internal/tracetest"
)

const (
	repoTraces   = "../testdata/traces"
	sharedTraces = "../../shared/fixtures/traces"
)

// loadTrace returns the bytes of a trace file, unzipping it if needed.
func loadTrace(t testing.TB, path string) []byte {
	t.Helper()
	if !strings.HasSuffix(path, ".zip") {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, ".nettrace") || strings.HasSuffix(f.Name, ".netperf") {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	t.Fatalf("%s holds no trace", path)
	return nil
}

func sharedPath(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(sharedTraces, rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared fixtures not available (%v); they live in ../shared next to the repository", err)
	}
	return p
}

type key struct {
	provider string
	id       uint16
	version  uint8
}

func (k key) String() string { return fmt.Sprintf("%s/%d/v%d", k.provider, k.id, k.version) }

// countEvents reads r to the end and counts events per (provider, id, version).
func countEvents(t testing.TB, r *Reader) (map[key]int, int) {
	t.Helper()
	counts := map[key]int{}
	n := 0
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after %d events: %v", n, err)
		}
		n++
		counts[key{ev.Provider, ev.ID, ev.Version}]++
	}
	return counts, n
}

func checkCounts(t *testing.T, got map[key]int, total int, want map[key]int, wantTotal int) {
	t.Helper()
	var keys []key
	for k := range want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	for _, k := range keys {
		if got[k] != want[k] {
			t.Errorf("%s: got %d events, want %d", k, got[k], want[k])
		}
	}
	if total != wantTotal {
		t.Errorf("total %d events, want %d", total, wantTotal)
	}
}

const (
	rt      = "Microsoft-Windows-DotNETRuntime"
	rundown = "Microsoft-Windows-DotNETRuntimeRundown"
	private = "Microsoft-Windows-DotNETRuntimePrivate"
	sampler = "Microsoft-DotNETCore-SampleProfiler"
	epipe   = "Microsoft-DotNETCore-EventPipe"
	tpl     = "System.Threading.Tasks.TplEventSource"
)

// Expected counts, from ../shared/fixtures/PROVENANCE.md (and, for the 2.0
// trace, which PROVENANCE lists only by baseline name, from the baseline's
// counts: see TestFixture20Baseline).
var fixtureCounts = []struct {
	file   string
	format Format
	ver    int
	ptr    int
	pid    int64
	nproc  int
	freq   int64
	total  int
	counts map[key]int
}{
	{
		file: "perfview/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip", format: FormatNetTrace, ver: 4,
		ptr: 8, pid: 9832, nproc: 8, freq: 10_000_000, total: 3,
		counts: map[key]int{{rundown, 300, 0}: 3},
	},
	{
		file: "perfview/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip", format: FormatNetTrace, ver: 4,
		ptr: 8, pid: 26240, nproc: 12, freq: 10_000_000, total: 1970,
		counts: map[key]int{
			{epipe, 1, 0}:     2,
			{rundown, 144, 1}: 1499, {rundown, 146, 1}: 1, {rundown, 148, 1}: 1, {rundown, 150, 0}: 363,
			{rundown, 152, 1}: 33, {rundown, 154, 2}: 33, {rundown, 156, 1}: 33, {rundown, 158, 1}: 1, {rundown, 187, 0}: 1,
			{"TestEventSource0", 5, 0}: 1, {"TestEventSource0", 6, 0}: 1, {"TestEventSource0", 7, 0}: 1,
		},
	},
	{
		file: "perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip", format: FormatNetTrace, ver: 4,
		ptr: 8, pid: 10064, nproc: 4, freq: 3_124_099, total: 105540,
		counts: map[key]int{
			{sampler, 0, 0}: 35161,
			{rt, 1, 2}:      478, {rt, 2, 1}: 478, {rt, 3, 1}: 6002, {rt, 4, 1}: 478, {rt, 7, 1}: 6002, {rt, 8, 1}: 5953,
			{rt, 9, 1}: 5953, {rt, 10, 3}: 35458, {rt, 13, 1}: 2, {rt, 14, 1}: 2, {rt, 22, 0}: 478, {rt, 23, 0}: 3824,
			{rt, 33, 0}: 45, {rt, 35, 0}: 478,
			{rt, 50, 0}: 12, {rt, 54, 0}: 1, {rt, 55, 0}: 8, {rt, 56, 0}: 1, {rt, 57, 0}: 25, {rt, 61, 0}: 5, {rt, 62, 0}: 5,
			{rt, 81, 1}: 8, {rt, 85, 0}: 14, {rt, 91, 1}: 8,
			{rt, 143, 1}: 45, {rt, 143, 2}: 8, {rt, 145, 1}: 54, {rt, 151, 1}: 14, {rt, 152, 2}: 14, {rt, 154, 1}: 14,
			{rt, 159, 0}: 1547, {rt, 190, 0}: 35,
			{rt, 200, 0}: 15, {rt, 201, 0}: 1, {rt, 202, 0}: 1912, {rt, 204, 3}: 478, {rt, 205, 2}: 478,
			{private, 199, 0}: 46,
		},
	},
	{
		file: "perfview/eventpipe-dotnetcore2.1-linux-x64-objver3.netperf.zip", format: FormatNetPerf, ver: 3,
		ptr: 8, pid: 80749, nproc: 4, freq: 1_000_000_000, total: 26146,
		counts: map[key]int{
			{rundown, 144, 1}: 26053, {rundown, 146, 1}: 1, {rundown, 148, 1}: 1, {rundown, 150, 0}: 50,
			{rundown, 152, 1}: 12, {rundown, 154, 2}: 13, {rundown, 156, 1}: 13, {rundown, 158, 1}: 2,
			{tpl, 25, 0}: 1,
		},
	},
	{
		file: "perfview/eventpipe-dotnetcore2.0-linux-objver2.netperf.zip", format: FormatNetPerf, ver: 2,
		ptr: 8, pid: -1, nproc: 1, freq: 1_000_000_000, total: 272332,
		counts: map[key]int{
			{sampler, 0, 0}: 163801,
			{rt, 3, 1}:      14846, {rt, 7, 1}: 14846, {rt, 8, 1}: 14846, {rt, 9, 1}: 14846, {rt, 10, 3}: 169,
			{rt, 54, 0}: 3, {rt, 55, 0}: 2, {rt, 56, 0}: 3, {rt, 57, 0}: 127, {rt, 85, 0}: 2,
			{rt, 143, 1}: 104, {rt, 145, 1}: 104, {rt, 151, 1}: 4, {rt, 152, 2}: 4, {rt, 154, 1}: 4,
			{rt, 190, 0}: 72, {rt, 200, 0}: 1,
			{rundown, 144, 1}: 44583, {rundown, 146, 1}: 1, {rundown, 148, 1}: 1, {rundown, 150, 0}: 2914,
			{rundown, 152, 1}: 148, {rundown, 154, 2}: 149, {rundown, 156, 1}: 149, {rundown, 158, 1}: 2,
			{tpl, 7, 1}: 82, {tpl, 8, 0}: 82, {tpl, 9, 1}: 82, {tpl, 10, 3}: 106, {tpl, 11, 0}: 96, {tpl, 12, 0}: 1, {tpl, 13, 0}: 96,
			{"TestEventSource", 1, 0}: 28, {"TestEventSource", 2, 0}: 28,
		},
	},
	{
		file: "perfview/only_managed_samples.nettrace.zip", format: FormatNetTrace, ver: 4,
		ptr: 8, pid: 60178, nproc: 8, freq: 1_000_000_000, total: 37603,
		counts: map[key]int{
			{epipe, 1, 1}: 1, {sampler, 0, 0}: 7423,
			{rt, 3, 1}: 7423, {rt, 7, 1}: 7423, {rt, 8, 1}: 7423, {rt, 9, 1}: 7423, {rt, 51, 0}: 2, {rt, 85, 0}: 3,
			{rundown, 144, 1}: 400, {rundown, 144, 2}: 8, {rundown, 146, 1}: 1, {rundown, 148, 1}: 1, {rundown, 150, 0}: 37,
			{rundown, 152, 1}: 11, {rundown, 154, 2}: 11, {rundown, 156, 1}: 11, {rundown, 158, 1}: 1, {rundown, 187, 0}: 1,
		},
	},
	{
		file: "pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace", format: FormatNetTrace, ver: 4,
		ptr: 8, pid: 55960, nproc: 4, freq: 1_000_000_000, total: 27951,
		counts: map[key]int{
			{epipe, 1, 1}: 1, {sampler, 0, 0}: 5564,
			{rt, 3, 1}: 5564, {rt, 7, 1}: 5564, {rt, 8, 1}: 5564, {rt, 9, 1}: 5564, {rt, 85, 0}: 3,
			{rundown, 144, 1}: 104, {rundown, 146, 1}: 1, {rundown, 148, 1}: 1, {rundown, 150, 0}: 10,
			{rundown, 152, 1}: 3, {rundown, 154, 2}: 3, {rundown, 156, 1}: 3, {rundown, 158, 1}: 1, {rundown, 187, 0}: 1,
		},
	},
}

// TestFixtureTraces reads every EventPipe trace in ../shared and checks the
// event counts PROVENANCE.md gives.
func TestFixtureTraces(t *testing.T) {
	for _, fx := range fixtureCounts {
		t.Run(filepath.Base(fx.file), func(t *testing.T) {
			r, err := Open(sharedPath(t, fx.file))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			in := r.Info()
			if in.Format != fx.format || in.Version != fx.ver || in.PointerSize != fx.ptr || in.ProcessID != fx.pid ||
				in.NumProcessors != fx.nproc || in.QPCFrequency != fx.freq {
				t.Errorf("info = %+v, want format %v version %d pointer size %d pid %d cpus %d freq %d",
					*in, fx.format, fx.ver, fx.ptr, fx.pid, fx.nproc, fx.freq)
			}
			got, n := countEvents(t, r)
			checkCounts(t, got, n, fx.counts, fx.total)
		})
	}
}

// TestFixture20Baseline checks the .NET Core 2.0 (EventPipeFile v2) trace,
// whose contents PROVENANCE.md only gives through PerfView's baseline, against
// the baseline's per-event counts (TraceEvent names events by task/opcode).
func TestFixture20Baseline(t *testing.T) {
	r, err := Open(sharedPath(t, "perfview/eventpipe-dotnetcore2.0-linux-objver2.netperf.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, _ := countEvents(t, r)
	for _, c := range []struct {
		k    key
		want int
	}{
		{key{sampler, 0, 0}, 163801},       // Thread/Sample
		{key{rt, 85, 0}, 2},                // ThreadCreated
		{key{rt, 200, 0}, 1},               // GC (IncreaseMemoryPressure)
		{key{rt, 10, 3}, 169},              // GC/AllocationTick
		{key{rt, 3, 1}, 14846},             // GC/RestartEEStop
		{key{rt, 7, 1}, 14846},             // GC/RestartEEStart
		{key{rt, 8, 1}, 14846},             // GC/SuspendEEStop
		{key{rt, 9, 1}, 14846},             // GC/SuspendEEStart
		{key{rt, 154, 1}, 4},               // Loader/AssemblyLoad
		{key{rt, 151, 1}, 4},               // Loader/DomainModuleLoad
		{key{rt, 152, 2}, 4},               // Loader/ModuleLoad
		{key{rt, 145, 1}, 104},             // Method/JittingStarted
		{key{rt, 143, 1}, 104},             // Method/LoadVerbose
		{key{rt, 57, 0}, 127},              // ThreadPoolWorkerThread/Wait
		{key{rt, 55, 0}, 2},                // …Adjustment/Adjustment
		{key{rt, 54, 0}, 3},                // …Adjustment/Sample
		{key{rt, 56, 0}, 3},                // …Adjustment/Stats
		{key{rundown, 158, 1}, 2},          // AppDomainDCStop
		{key{rundown, 156, 1}, 149},        // AssemblyDCStop
		{key{rundown, 152, 1}, 148},        // DomainModuleDCStop
		{key{rundown, 154, 2}, 149},        // ModuleDCStop
		{key{rundown, 146, 1}, 1},          // DCStopComplete
		{key{rundown, 148, 1}, 1},          // DCStopInit
		{key{tpl, 12, 0}, 1},               // AwaitTaskContinuationScheduled
		{key{tpl, 8, 0}, 82},               // TaskExecute/Start
		{key{tpl, 9, 1}, 82},               // TaskExecute/Stop
		{key{tpl, 7, 1}, 82},               // TaskScheduled
		{key{tpl, 10, 3}, 106},             // TaskWait/Send
		{key{tpl, 11, 0}, 96},              // TaskWait/Stop
		{key{tpl, 13, 0}, 96},              // TaskWaitContinuationComplete
		{key{"TestEventSource", 1, 0}, 28}, // Request/Start
		{key{"TestEventSource", 2, 0}, 28}, // Request/Stop
	} {
		if got[c.k] != c.want {
			t.Errorf("%s: %d events, baseline says %d", c.k, got[c.k], c.want)
		}
	}
}

// TestRepoTraces runs on a fresh clone: the two small traces in
// ../testdata/traces, with values from their TraceEvent baselines.
func TestRepoTraces(t *testing.T) {
	t.Run("executioncheckpoints", func(t *testing.T) {
		r, err := Open(filepath.Join(repoTraces, "eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip"))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		in := r.Info()
		if in.Format != FormatNetTrace || in.Version != 4 || in.PointerSize != 8 || in.ProcessID != 9832 ||
			in.NumProcessors != 8 || in.QPCFrequency != 10_000_000 {
			t.Errorf("info = %+v", *in)
		}
		if want := time.Date(2021, 6, 9, 9, 48, 25, 902e6, time.UTC); !in.SyncTime.Equal(want) {
			t.Errorf("sync time %v, want %v", in.SyncTime, want)
		}
		ev, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		// Baseline: MSec="1753.7906" TID="25112" Name="RuntimeInit" ClrInstanceID="9"
		// Timestamp="11,111,925,598,665".
		if ev.Provider != rundown || ev.ID != 300 || ev.Version != 0 || ev.ThreadID != 25112 || ev.ProcessID != 9832 {
			t.Errorf("first event %+v", *ev)
		}
		if ms := float64(ev.Timestamp-in.SyncTimeQPC) * 1000 / float64(in.QPCFrequency); fmt.Sprintf("%.4f", ms) != "1753.7906" {
			t.Errorf("first event at %.4f ms, baseline 1753.7906", ms)
		}
		if d := ev.Time().Sub(in.SyncTime); d != 1753790600*time.Nanosecond {
			t.Errorf("first event time offset %v", d)
		}
		if ev.ProviderGUID.String() != "a669021c-c450-4609-a035-5af59af4df18" {
			t.Errorf("provider GUID %s", ev.ProviderGUID)
		}
		// ClrInstanceID (uint16) 9, Name "RuntimeInit", Timestamp int64.
		want := append([]byte{9, 0}, utf16z("RuntimeInit")...)
		want = append(want, le64(11111925598665)...)
		if !bytes.Equal(ev.Payload, want) {
			t.Errorf("payload % x, want % x", ev.Payload, want)
		}
		if ev.StackID != 1 || len(ev.Stack) != 0 {
			t.Errorf("stack id %d, stack %x", ev.StackID, ev.Stack)
		}
		got, n := countEvents(t, r)
		if n != 2 || got[key{rundown, 300, 0}] != 2 {
			t.Errorf("rest: %v", got)
		}
	})
	t.Run("arraytypes", func(t *testing.T) {
		r, err := Open(filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		json := map[string]string{}
		text := map[string]string{}
		var stacks int
		n := 0
		for {
			ev, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			n++
			if len(ev.Stack) > 0 {
				stacks++
			}
			if ev.Provider == "TestEventSource0" || ev.Provider == epipe {
				j, err := ev.Metadata.AppendJSON(nil, ev.Payload)
				if err != nil {
					t.Errorf("%s: %v", ev.Name, err)
				}
				json[ev.Name] = string(j)
				x, err := ev.Metadata.AppendText(nil, ev.Payload)
				if err != nil {
					t.Errorf("%s: %v", ev.Name, err)
				}
				text[ev.Name] = string(x)
				if ev.Name == "TestEvent3" && (ev.Opcode != 24 || !ev.Metadata.HasOpcode) {
					t.Errorf("TestEvent3 opcode %d (baseline names it TestEvent3/24)", ev.Opcode)
				}
			}
		}
		if n != 1970 {
			t.Errorf("%d events, want 1970", n)
		}
		if stacks == 0 {
			t.Error("no event has a stack")
		}
		// Values from the TraceEvent baseline.
		for name, want := range map[string]string{
			"TestEvent1": `{"arg0":[2032854139,1608221689,1470019200,199494339,1238846140,1366609043],"arg1":[26494,17115,-7229,18850,27931],"arg2":2033417279}`,
			"TestEvent2": `{"arg0":-1001479330,"arg1":-1397908228,"arg2":[1470938110,172564262,1133558854,-1572049829],"arg3":[2055126903,593325874,2130052527,162795177]}`,
			"TestEvent3": "{\"arg0\":\"\ue7a3㎯隍ᳯ诤\"}", // a char[]; U+E7A3 is in the baseline too
		} {
			if json[name] != want {
				t.Errorf("%s JSON:\n got %s\nwant %s", name, json[name], want)
			}
		}
		if want := `arg0=-1001479330 arg1=-1397908228 arg2=[1470938110 172564262 1133558854 -1572049829] arg3=[2055126903 593325874 2130052527 162795177]`; text["TestEvent2"] != want {
			t.Errorf("TestEvent2 text:\n got %s\nwant %s", text["TestEvent2"], want)
		}
		if !strings.Contains(json["ProcessInfo"], `"CommandLine":"C:\\work\\arraytypes_test\\repro\\\\runtime\\corerun.exe  C:\\work\\arraytypes_test\\repro\\\\arraytypesapp.dll"`) {
			t.Errorf("ProcessInfo JSON %s", json["ProcessInfo"])
		}
	})
}

func utf16z(s string) []byte {
	var b []byte
	for _, r := range s {
		b = append(b, byte(r), byte(r>>8))
	}
	return append(b, 0, 0)
}

func le64(v uint64) []byte {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	return b
}

// TestTruncated cuts real traces at many offsets: every complete event
// before the cut is delivered, then an error that says "truncated".
func TestTruncated(t *testing.T) {
	for _, name := range []string{
		"eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip",
		"eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip",
	} {
		data := loadTrace(t, filepath.Join(repoTraces, name))
		full := readAll(t, data)
		for _, cut := range cutPoints(len(data)) {
			r, err := NewReader(bytes.NewReader(data[:cut]))
			if err != nil {
				if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "truncated") {
					t.Errorf("%s cut at %d: NewReader: %v", name, cut, err)
				}
				continue
			}
			n := 0
			for {
				ev, err := r.Next()
				if err != nil {
					if err == io.EOF {
						t.Errorf("%s cut at %d: io.EOF after %d events", name, cut, n)
					} else if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "truncated") {
						t.Errorf("%s cut at %d: error %v is not a truncation", name, cut, err)
					}
					break
				}
				if n >= len(full) || ev.Offset != full[n] {
					t.Fatalf("%s cut at %d: event %d at offset %d, want %v", name, cut, n, ev.Offset, full[n:min(n+1, len(full))])
				}
				n++
			}
			// All events whose block was complete must have come out. In
			// these traces a block holds many events, so only check that
			// none came from beyond the cut.
			if n > 0 && full[n-1] >= int64(cut) {
				t.Errorf("%s cut at %d: delivered an event at %d", name, cut, full[n-1])
			}
		}
	}
}

// readAll returns the offsets of all events of an intact trace.
func readAll(t testing.TB, data []byte) []int64 {
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return offs
		}
		if err != nil {
			t.Fatal(err)
		}
		offs = append(offs, ev.Offset)
	}
}

func cutPoints(n int) []int {
	pts := []int{0, 1, 7, 8, 12, 20, 31, 32, 40, 60, 100}
	for i := 1; i < 40; i++ {
		pts = append(pts, n*i/40)
	}
	pts = append(pts, n-2, n-1)
	var out []int
	for _, p := range pts {
		if p >= 0 && p < n {
			out = append(out, p)
		}
	}
	return out
}

// TestTruncatedNetPerf cuts the .NET Core 2.0 and 2.1 traces (events
// outside EventBlocks in 2.0; inline metadata in both).
func TestTruncatedNetPerf(t *testing.T) {
	for _, name := range []string{
		"perfview/eventpipe-dotnetcore2.1-linux-x64-objver3.netperf.zip",
		"perfview/eventpipe-dotnetcore2.0-linux-objver2.netperf.zip",
	} {
		data := loadTrace(t, sharedPath(t, name))
		data = data[:min(len(data), 3<<20)] // the first 3 MB is plenty
		for _, cut := range []int{30, 100, 1000, 65536, 1 << 20, len(data) - 3, len(data) - 1} {
			r, err := NewReader(bytes.NewReader(data[:cut]))
			if err != nil {
				if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "truncated") {
					t.Errorf("%s cut at %d: NewReader: %v", name, cut, err)
				}
				continue
			}
			n := 0
			var last error
			for {
				_, err := r.Next()
				if err != nil {
					last = err
					break
				}
				n++
			}
			if !errors.Is(last, io.ErrUnexpectedEOF) || !strings.Contains(last.Error(), "truncated") {
				t.Errorf("%s cut at %d: after %d events: %v", name, cut, n, last)
			}
		}
	}
}

func TestNotATrace(t *testing.T) {
	for _, in := range []string{"", "N", "Nettrace", "hello, world, this is not a trace at all", "Nettrace\x00\x00\x00\x00\x07\x00\x00\x00\x00\x00\x00\x00"} {
		_, err := NewReader(strings.NewReader(in))
		if err == nil {
			t.Errorf("%q: no error", in)
			continue
		}
		if !errors.Is(err, ErrFormat) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, ErrUnsupported) {
			t.Errorf("%q: %v is neither ErrFormat, ErrUnsupported nor io.ErrUnexpectedEOF", in, err)
		}
		if !strings.HasPrefix(err.Error(), "nettrace: ") {
			t.Errorf("%q: error %q lacks the package prefix", in, err)
		}
	}
}

// TestErrorNamesOffset corrupts an event header and checks the message.
func TestErrorNamesOffset(t *testing.T) {
	data := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip"))
	data = bytes.Clone(data)
	// The EventBlock's content starts at 0x16c (after its 20-byte header
	// at 0x16c comes the first compressed event at 0x180); give the first
	// event a payload size far beyond the block.
	if data[0x180] != 0xcf {
		t.Fatalf("unexpected layout: byte 0x180 = %#x", data[0x180])
	}
	// flags 0xcf: metadata id, capture thread/seq, thread, stack, sorted,
	// payload size. Payload size is the last varint before the payload.
	i := bytes.Index(data[0x180:], []byte{0x22, 0x09, 0x00, 'R'})
	if i < 0 {
		t.Fatal("payload size not found")
	}
	data[0x180+i] = 0x7f
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, err = r.Next()
		if err != nil {
			break
		}
	}
	msg := err.Error()
	if !errors.Is(err, ErrFormat) || !strings.Contains(msg, "EventBlock at offset ") || !strings.Contains(msg, "event header at ") {
		t.Errorf("error %q", msg)
	}
	var e *Error
	if !errors.As(err, &e) || e.Block != "EventBlock" || e.Offset <= e.BlockOffset {
		t.Errorf("error %#v", err)
	}
}

// TestHostileSizes: a header that claims a huge block or count must not
// make the reader allocate more than the input backs.
func TestHostileSizes(t *testing.T) {
	small := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip"))
	// The MetadataBlock's size field is at 0x84; claim 200 MB.
	fs := bytes.Clone(small[:0x100])
	binary.LittleEndian.PutUint32(fs[0x84:], 200<<20)
	v6 := newV6Writer(8, 0)
	v6.buf.Write(u32(0xFFFFFF | kindEvent<<24)) // a 16 MB event block, then nothing
	v6.buf.WriteString("short")
	lab := newV6Writer(8, 0)
	lab.block(kindLabelList, append(u32(1), u32(0xFFFFFFFF)...)) // 4 billion label lists
	for name, data := range map[string][]byte{"FastSerialization block": fs, "V6 block": v6.buf.Bytes(), "label count": lab.end()} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r, err := NewReader(bytes.NewReader(data))
		for err == nil {
			_, err = r.Next()
		}
		runtime.ReadMemStats(&after)
		if err == io.EOF {
			t.Errorf("%s: no error", name)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 2<<20 {
			t.Errorf("%s: allocated %d bytes for a %d-byte input (%v)", name, grew, len(data), err)
		}
	}
}

// TestOpenCutZip: Open reads a zipped trace cut short (its archive's
// directory lost) from the member's local header: the events before the
// cut, then a *DamageError wrapping io.ErrUnexpectedEOF.
func TestOpenCutZip(t *testing.T) {
	r, err := Open(tracetest.CutCopy(t, filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip")))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n, end := tracetest.Drain(r.Next)
	var de *DamageError
	if !errors.As(end, &de) || !errors.Is(end, io.ErrUnexpectedEOF) || n == 0 {
		t.Errorf("%d events, then %v; want some, then the trace cut short", n, end)
	}
}

// TestOpenZipChecked: a zipped trace's reader stops at the trace's end
// tag; Open reads the rest of the member then, so that the archive's
// checksum is checked: a member whose CRC-32 does not match ends, after
// every event, with an error wrapping zip.ErrChecksum (it ended in io.EOF
// before), and a sound one in io.EOF.
func TestOpenZipChecked(t *testing.T) {
	trace := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"))
	crc := crc32.ChecksumIEEE(trace)
	for _, c := range []struct {
		crc  uint32
		want error
	}{{crc, io.EOF}, {crc + 1, zip.ErrChecksum}} {
		p := tracetest.File(t, "a.nettrace.zip", tracetest.Zip(t, "a.nettrace", zip.Deflate, trace, c.crc, uint64(len(trace))))
		r, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		n, end := tracetest.Drain(r.Next)
		r.Close()
		if n != 1970 || !errors.Is(end, c.want) {
			t.Errorf("CRC-32 %08x: %d events, then %v; want all 1970, then %v", c.crc, n, end, c.want)
		}
		if c.want != io.EOF {
			t.Logf("%v", end)
		}
	}
}

// TestETLX: TraceEvent's own file (an .etlx, which PerfView makes from a
// trace and keeps beside it) has a trace's FastSerialization framing; its
// first object, a TraceLog, is named as such, and the error says what to
// read instead.
func TestETLX(t *testing.T) {
	const name = "Microsoft.Diagnostics.Tracing.Etlx.TraceLog"
	b := []byte(fsHeader)
	b = append(b, tagBeginObject, tagBeginObject, tagNullReference)
	b = binary.LittleEndian.AppendUint32(b, 72) // the type's version
	b = binary.LittleEndian.AppendUint32(b, 72) // and the least a reader needs
	b = binary.LittleEndian.AppendUint32(b, uint32(len(name)))
	b = append(append(b, name...), tagEndObject)
	b = append(b, make([]byte, 64)...) // the TraceLog's fields
	_, err := NewReader(bytes.NewReader(b))
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "an ETLX file (TraceEvent's TraceLog, made from a trace by PerfView or TraceEvent), not a trace: read the .etl or .nettrace it was made from") {
		t.Errorf("an ETLX file: %v", err)
	}
}
