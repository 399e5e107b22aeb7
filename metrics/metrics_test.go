package metrics_test

import (
	"bytes"
	"io"
	"maps"
	"math"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/gcstats"
	"github.com/clrgo/clrevents/internal/etltest"
	"github.com/clrgo/clrevents/internal/racemode"
	"github.com/clrgo/clrevents/internal/simruntime"
	"github.com/clrgo/clrevents/internal/tracetest"
	"github.com/clrgo/clrevents/metrics"
	"github.com/clrgo/clrevents/trace"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// allProviders is a request that enables everything a Workload writes.
var allProviders = &simruntime.Collect{Version: 6, Stackwalk: true, Providers: []simruntime.Provider{
	{Name: "Microsoft-Windows-DotNETRuntime", Keywords: 0x1 | 0x10 | 0x4000 | 0x8000 | 0x10000, Level: 5},
	{Name: "System.Runtime", Level: 5, Args: "EventCounterIntervalSec=0.05"},
}}

// record returns what a Workload's session writes in d.
func record(t testing.TB, w *simruntime.Workload, req *simruntime.Collect, d time.Duration) []byte {
	var buf bytes.Buffer
	stop := make(chan struct{})
	time.AfterFunc(d, func() { close(stop) })
	w.Stream(req, &buf, stop, make(chan struct{}))
	return buf.Bytes()
}

// counts counts a trace's events by name, and its exceptions by type.
func counts(t testing.TB, data []byte) (names, exceptions map[string]int) {
	names, exceptions = map[string]int{}, map[string]int{}
	eachEvent(t, data, func(e *trace.Event) {
		names[e.Name()]++
		if e.Name() == "ExceptionThrown_V1" {
			v, _ := e.Decode()
			exceptions[v.(*clrevents.ExceptionThrownV1).ExceptionType.String()]++
		}
	})
	return names, exceptions
}

func feed(t testing.TB, p *metrics.Process, data []byte) {
	eachEvent(t, data, func(e *trace.Event) {
		if err := p.Add(e); err != nil {
			t.Fatal(err)
		}
	})
}

// eachEvent calls fn with every event of the trace.
func eachEvent(t testing.TB, data []byte, fn func(*trace.Event)) {
	t.Helper()
	r, err := trace.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for {
		e, err := r.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		fn(e)
	}
}

// gather returns the registry's families by name.
func gather(t testing.TB, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		m[mf.GetName()] = mf
	}
	return m
}

// value returns the value of family name's series whose labels include
// the pairs given.
func value(t testing.TB, fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	mf := fams[name]
	if mf == nil {
		t.Fatalf("no %s", name)
	}
next:
	for _, m := range mf.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if have[labels[i]] != labels[i+1] {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	t.Fatalf("no %s%v", name, labels)
	return 0
}

// TestMetrics: the metrics of a simulated process's events agree with
// the events counted directly.
func TestMetrics(t *testing.T) {
	w := &simruntime.Workload{PID: 7, Rate: 20000, ExceptionTypes: 3}
	data := record(t, w, allProviders, 600*time.Millisecond)
	names, excs := counts(t, data)
	set := metrics.New(metrics.Options{MaxExceptionTypes: 2})
	reg := prometheus.NewRegistry()
	reg.MustRegister(set)
	feed(t, set.Process(7, "sim"), data)
	f := gather(t, reg)

	var gcs float64
	for _, g := range []string{"gen0", "gen1", "gen2"} {
		gcs += value(t, f, "dotnet_gc_collections_total", "pid", "7", "process", "sim", "generation", g)
	}
	if int(gcs) != names["GCStart_V2"] || gcs == 0 {
		t.Errorf("collections %v, GCStart events %d", gcs, names["GCStart_V2"])
	}
	if got := value(t, f, "dotnet_gc_pause_seconds"); int(got) != names["GCRestartEEEnd_V1"] {
		t.Errorf("pauses %v, GCRestartEEEnd %d", got, names["GCRestartEEEnd_V1"])
	}
	h := f["dotnet_gc_pause_seconds"].Metric[0].Histogram
	if mean := h.GetSampleSum() / float64(h.GetSampleCount()); mean < 0.001 || mean > 0.005 {
		t.Errorf("mean pause %v s, the workload's are 1–5 ms", mean)
	}
	if got := value(t, f, "dotnet_gc_heap_size_bytes", "generation", "poh"); got != 64<<10 {
		t.Errorf("poh %v", got)
	}
	if got := value(t, f, "dotnet_gc_allocated_bytes_total"); got != 100_000*float64(names["GCAllocationTick_V4"]) || got == 0 {
		t.Errorf("allocated %v for %d ticks", got, names["GCAllocationTick_V4"])
	}
	jit := value(t, f, "dotnet_jit_compiled_methods_total", "tier", "QuickJitted") + value(t, f, "dotnet_jit_compiled_methods_total", "tier", "OptimizedTier1")
	if int(jit) != names["MethodLoadVerbose_V2"] {
		t.Errorf("jitted %v, loads %d", jit, names["MethodLoadVerbose_V2"])
	}
	if got := value(t, f, "dotnet_jit_compilation_seconds_total", "tier", "QuickJitted"); got <= 0 {
		t.Errorf("jit time %v", got)
	}
	// Three types, two kept: the rest is other.
	var total float64
	kept := 0
	for typ, n := range excs {
		mf := f["dotnet_exceptions_total"]
		for _, m := range mf.Metric {
			for _, l := range m.Label {
				if l.GetName() == "type" && l.GetValue() == typ {
					kept++
					if int(m.Counter.GetValue()) != n {
						t.Errorf("%s: %v, thrown %d", typ, m.Counter.GetValue(), n)
					}
				}
			}
		}
	}
	for _, m := range f["dotnet_exceptions_total"].Metric {
		total += m.Counter.GetValue()
	}
	if kept != 2 || len(f["dotnet_exceptions_total"].Metric) != 3 || int(total) != names["ExceptionThrown_V1"] {
		t.Errorf("exception types kept %d, series %d, total %v of %d", kept, len(f["dotnet_exceptions_total"].Metric), total, names["ExceptionThrown_V1"])
	}
	if got := value(t, f, "dotnet_monitor_lock_contentions_total"); int(got) != names["ContentionStart_V2"] {
		t.Errorf("contentions %v of %d", got, names["ContentionStart_V2"])
	}
	if got, want := value(t, f, "dotnet_monitor_lock_contention_seconds_total"), 50e-6*float64(names["ContentionStop_V1"]); math.Abs(got-want) > 1e-9 {
		t.Errorf("contention time %v, want %v", got, want)
	}
	// The threads that exist (a worker's wait: 6) and hill climbing's
	// goal (the adjustment: 8) are two gauges; the one gauge took
	// whichever came last.
	if got := value(t, f, "dotnet_thread_pool_threads"); got != 6 {
		t.Errorf("thread pool threads %v, want the 6 that exist", got)
	}
	if got := value(t, f, "dotnet_thread_pool_thread_goal"); got != 8 {
		t.Errorf("thread pool goal %v, want 8", got)
	}
	if got := value(t, f, "dotnet_runtime_cpu_usage_ratio"); got != 0.125 {
		t.Errorf("cpu usage %v", got)
	}
	if got := value(t, f, "dotnet_runtime_working_set_bytes"); got != 64e6 {
		t.Errorf("working set %v", got)
	}
	reports := names["EventCounters"] / 10
	if got := value(t, f, "dotnet_runtime_alloc_rate_bytes_total"); got != 1e6*float64(reports) || reports == 0 {
		t.Errorf("alloc rate %v after %d reports", got, reports)
	}
	if got := value(t, f, "dotnet_runtime_time_in_jit_seconds_total"); math.Abs(got-0.0015*float64(reports)) > 1e-9 {
		t.Errorf("time in jit %v after %d reports", got, reports)
	}
	if got := value(t, f, "dotnet_events_total"); int(got) == 0 {
		t.Errorf("events %v", got)
	}
	checkText(t, reg)

	// A removed process is no longer collected.
	set.Remove(7)
	if f := gather(t, reg); len(f) != 0 {
		t.Errorf("%d families after Remove", len(f))
	}
}

// checkText writes the registry in Prometheus' text format and checks
// that the Go parser (and promtool, where installed) reads it.
func checkText(t *testing.T, reg *prometheus.Registry) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&buf, mf); err != nil {
			t.Fatal(err)
		}
	}
	CheckExposition(t, buf.Bytes(), len(mfs))
}

// CheckExposition parses text as Prometheus' text format and runs promtool
// check metrics on it when promtool is on PATH.
func CheckExposition(t *testing.T, text []byte, families int) {
	t.Helper()
	// The legacy scheme: names as every Prometheus version reads them.
	p := expfmt.NewTextParser(model.LegacyValidation)
	got, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("the Go parser: %v\n%s", err, text)
	}
	if len(got) != families {
		t.Errorf("parsed %d families, wrote %d", len(got), families)
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CLREVENTS_REQUIRE_PROMTOOL") != "" {
			t.Fatal("CLREVENTS_REQUIRE_PROMTOOL is set but promtool is not on PATH")
		}
		t.Log("promtool is not on PATH (Debian package prometheus; .ci/run installs it): only the Go parser checked the text")
		return
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestSetAdd: Set.Add routes events by process; concurrent collection
// is safe.
func TestSetAdd(t *testing.T) {
	w := &simruntime.Workload{PID: 9}
	data := record(t, w, allProviders, 200*time.Millisecond)
	set := metrics.New(metrics.Options{})
	reg := prometheus.NewRegistry()
	reg.MustRegister(set)
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
				reg.Gather()
			}
		}
	}()
	r, err := trace.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err := set.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()
	f := gather(t, reg)
	if got := value(t, f, "dotnet_events_total", "pid", "9", "process", ""); got == 0 {
		t.Errorf("events %v", got)
	}
}

// TestAddAllocs: once a process has seen its exception types, feeding it
// the runtime's events allocates nothing per event: reading and adding a
// trace of thousands of events allocates what reading it alone does, but
// for a few allocations a run (the value a new Reader's Decode makes for
// each of the 10 event types Add decodes, and the like).
func TestAddAllocs(t *testing.T) {
	if racemode.Enabled {
		// The readers' buffers come back from sync.Pools, which drop
		// what is put in them at random under the race detector.
		t.Skip("sync.Pool drops items at random under the race detector: allocation counts are not the program's")
	}
	w := &simruntime.Workload{PID: 7, Rate: 20000}
	req := &simruntime.Collect{Version: 6, Stackwalk: true, Providers: []simruntime.Provider{
		{Name: "Microsoft-Windows-DotNETRuntime", Keywords: 0x1 | 0x10 | 0x4000 | 0x8000 | 0x10000, Level: 5}}}
	data := record(t, w, req, 300*time.Millisecond)
	p := metrics.New(metrics.Options{}).Process(7, "sim")
	feed(t, p, data) // the exception types, the maps' sizes
	read := func(add bool) {
		r, err := trace.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		for {
			e, err := r.Next()
			if err == io.EOF {
				return
			}
			if add {
				p.Add(e)
			}
		}
	}
	names, _ := counts(t, data)
	n := 0
	for _, c := range names {
		n += c
	}
	alone := testing.AllocsPerRun(5, func() { read(false) })
	with := testing.AllocsPerRun(5, func() { read(true) })
	// The events the simulator writes in the time depend on the machine;
	// a thousand show a per-event allocation well above the margin.
	if with > alone+16 || n < 1000 { // 10 types, and a few first-time growths
		t.Errorf("reading %d events allocates %v times, reading and adding them %v", n, alone, with)
	}
}

// TestPausesAgainstGCModel: on a real trace whose runtime suspended for
// other reasons on another thread while a GC's suspension was open (the
// .NET Core 3.0 trace: SuspendOther on thread 3444), the pause histogram
// counts each GC's pause from its suspension to the restart on the same
// thread, as the GC model does: the same count and the same sum. (Ended
// by whichever restart came next, 71 of its 478 pauses were cut short.)
func TestPausesAgainstGCModel(t *testing.T) {
	const path = "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"
	set := metrics.New(metrics.Options{})
	reg := prometheus.NewRegistry()
	reg.MustRegister(set)
	eachEvent(t, tracetest.Bytes(t, path), func(e *trace.Event) {
		if err := set.Add(e); err != nil {
			t.Fatal(err)
		}
	})
	h := gather(t, reg)["dotnet_gc_pause_seconds"].Metric[0].Histogram

	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	a, err := gcstats.Read(r)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var sum time.Duration
	for _, p := range a.Processes() {
		for _, gc := range p.GCs {
			n += gc.Pauses
			sum += gc.Pause
		}
	}
	if int(h.GetSampleCount()) != n || n != 478 || math.Abs(h.GetSampleSum()-sum.Seconds()) > 1e-6 {
		t.Errorf("%d pauses, %.6f s; the GC model's %d, %.6f s", h.GetSampleCount(), h.GetSampleSum(), n, sum.Seconds())
	}
}

// TestNotCollectedAbsent: at the runtime's Informational level, which
// brings no allocation ticks and no MethodJittingStarted, the allocated
// bytes and the compile time are absent, not 0 (nothing allocated, no
// time compiling); at Verbose they are there.
func TestNotCollectedAbsent(t *testing.T) {
	for _, level := range []uint32{4, 5} {
		req := &simruntime.Collect{Version: 6, Providers: []simruntime.Provider{
			{Name: "Microsoft-Windows-DotNETRuntime", Keywords: 0x1 | 0x10, Level: level},
		}}
		data := record(t, &simruntime.Workload{PID: 9}, req, 300*time.Millisecond)
		set := metrics.New(metrics.Options{})
		reg := prometheus.NewRegistry()
		reg.MustRegister(set)
		eachEvent(t, data, func(e *trace.Event) {
			if err := set.Add(e); err != nil {
				t.Fatal(err)
			}
		})
		f := gather(t, reg)
		_, alloc := f["dotnet_gc_allocated_bytes_total"]
		_, jitTime := f["dotnet_jit_compilation_seconds_total"]
		_, jitN := f["dotnet_jit_compiled_methods_total"]
		if want := level == 5; alloc != want || jitTime != want || !jitN {
			t.Errorf("level %d: allocated bytes %v, compile time %v, compiled methods %v; want %v, %v, true", level, alloc, jitTime, jitN, want, want)
		}
	}
}

// TestSetAddETL: from an ETW log, which holds every process's kernel
// events, Set.Add makes series only for the processes with the .NET
// runtime's events, named as the trace names them (before, every process
// of the machine, Idle and System among them, had a full set of GC and
// lock series, and no name).
func TestSetAddETL(t *testing.T) {
	r, err := trace.Open("../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	set := metrics.New(metrics.Options{})
	reg := prometheus.NewRegistry()
	reg.MustRegister(set)
	dotnet := map[string]string{} // pid → name
	all := map[int64]bool{}
	for {
		e, err := r.Next()
		if err != nil {
			break
		}
		all[e.ProcessID()] = true
		if e.Provider() == "Microsoft-Windows-DotNETRuntime" && e.ProcessID() >= 0 {
			dotnet[strconv.FormatInt(e.ProcessID(), 10)] = e.ProcessName()
		}
		if err := set.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	if len(dotnet) == 0 || len(all) <= len(dotnet) {
		t.Fatalf("%d processes, %d of them .NET: the log is not what the test needs", len(all), len(dotnet))
	}
	mf := gather(t, reg)["dotnet_events_total"]
	if mf == nil {
		t.Fatal("no dotnet_events_total")
	}
	got := map[string]string{}
	for _, m := range mf.Metric {
		l := map[string]string{}
		for _, p := range m.Label {
			l[p.GetName()] = p.GetValue()
		}
		got[l["pid"]] = l["process"]
	}
	if !maps.Equal(got, dotnet) {
		t.Errorf("series for processes %v, want the .NET ones, named: %v", got, dotnet)
	}
}

// TestSetAddReusedPID: in an ETW log, a process ID the system gave again
// (a kernel Process/Start for an ID that has a process) is another
// process, with series of its own under its own name; the earlier one's
// stay. A program started again under its ID and name has one set of
// series, the later process's (a registry refuses two of one labels).
func TestSetAddReusedPID(t *testing.T) {
	real := tracetest.Bytes(t, "../testdata/traces/gcevents.etl.zip")
	base, err := etltest.Origin(real) // 100 ns units
	if err != nil {
		t.Fatal(err)
	}
	var evs [][]byte
	ts := base
	gcs := func(pid uint32, n int) {
		for i := range n {
			ts += 100
			evs = append(evs, etltest.Runtime(&clrevents.GCStartV2{Count: uint32(i + 1)}, 5, pid, ts))
		}
	}
	proc := func(op uint8, pid uint32, name string) {
		ts += 100
		evs = append(evs, etltest.Process(op, pid, ts, name))
	}
	proc(1, 10, "first.exe")
	gcs(10, 2)
	proc(1, 11, "app.exe")
	gcs(11, 3)
	proc(2, 10, "first.exe")
	proc(1, 10, "second.exe")
	gcs(10, 1)
	proc(2, 11, "app.exe")
	proc(1, 11, "app.exe")
	gcs(11, 4)
	log, err := etltest.Log(real, evs...)
	if err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewReader(bytes.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	set := metrics.New(metrics.Options{})
	reg := prometheus.NewRegistry()
	reg.MustRegister(set)
	for {
		e, err := r.Next()
		if err != nil {
			break
		}
		if err := set.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]float64{}
	for _, m := range gather(t, reg)["dotnet_events_total"].GetMetric() {
		l := map[string]string{}
		for _, p := range m.Label {
			l[p.GetName()] = p.GetValue()
		}
		got[l["pid"]+" "+l["process"]] = m.GetCounter().GetValue()
	}
	// first.exe's: its two GCStart events and its Process/Stop; the
	// later app.exe's: its four GCStart events.
	want := map[string]float64{"10 first.exe": 3, "10 second.exe": 1, "11 app.exe": 4}
	if !maps.Equal(got, want) {
		t.Errorf("events by process %v, want %v", got, want)
	}
}

// TestPauseBucketsOrder: PauseBuckets in any order, with repeats, make
// the histogram that the same bounds sorted make, and the caller's slice
// is left as it was. (A pause counted in the first bucket in the given
// order whose bound it was under, and the buckets added up in that
// order: [0.004 0.002] said every pause under 4 ms was under 2 ms.)
func TestPauseBucketsOrder(t *testing.T) {
	data := record(t, &simruntime.Workload{PID: 9}, allProviders, 300*time.Millisecond)
	buckets := func(bounds []float64) map[float64]uint64 {
		set := metrics.New(metrics.Options{PauseBuckets: bounds})
		reg := prometheus.NewRegistry()
		reg.MustRegister(set)
		feed(t, set.Process(9, "sim"), data)
		out := map[float64]uint64{}
		for _, b := range gather(t, reg)["dotnet_gc_pause_seconds"].Metric[0].Histogram.Bucket {
			out[b.GetUpperBound()] = b.GetCumulativeCount()
		}
		return out
	}
	want := buckets([]float64{0.002, 0.004})
	if want[0.002] == 0 || want[0.002] == want[0.004] {
		t.Fatalf("buckets %v: the workload's pauses (1–5 ms) should fall on both sides of 2 ms", want)
	}
	given := []float64{0.004, math.NaN(), 0.002, 0.004, math.Inf(1)}
	got := buckets(given)
	if len(got) != len(want) || got[0.002] != want[0.002] || got[0.004] != want[0.004] {
		t.Errorf("buckets %v from %v; sorted, %v", got, given, want)
	}
	if given[0] != 0.004 || given[2] != 0.002 || len(given) != 5 {
		t.Errorf("the caller's buckets changed: %v", given)
	}
}
