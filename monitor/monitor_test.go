package monitor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gprofile "github.com/google/pprof/profile"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	_ "github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/diagnostics"
	"github.com/clrgo/clrevents/internal/simruntime"
	"github.com/clrgo/clrevents/metrics"
	"github.com/clrgo/clrevents/monitor"
	"github.com/clrgo/clrevents/trace"
)

// host is a set of simulated .NET processes that a Monitor discovers.
type host struct {
	t    testing.TB
	dir  string
	mu   sync.Mutex
	sims map[int]*sim
}

type sim struct {
	srv *simruntime.Server
	w   *simruntime.Workload
}

func newHost(t testing.TB) *host {
	dir, err := os.MkdirTemp("", "serve")
	if err != nil {
		t.Fatal(err)
	}
	h := &host{t: t, dir: dir, sims: map[int]*sim{}}
	t.Cleanup(func() {
		h.mu.Lock()
		for _, s := range h.sims {
			s.srv.Close()
		}
		h.mu.Unlock()
		os.RemoveAll(dir)
	})
	return h
}

// start starts a simulated process pid running w.
func (h *host) start(pid int, w *simruntime.Workload) *sim {
	w.PID = pid
	return h.startAs(pid, w)
}

// startAs starts a simulated process pid running w, whose events give the
// process ID w.PID: a process in a container, which knows itself by its
// namespace's PID.
func (h *host) startAs(pid int, w *simruntime.Workload) *sim {
	return h.startWith(simruntime.Config{PID: pid, Stream: w.Stream,
		CommandLine: fmt.Sprintf("/usr/share/dotnet/dotnet /app/Sim.App.dll --id %d", pid),
		OS:          "Linux", Arch: "x64", Entrypoint: "Sim.App", ClrVersion: "8.0.11+abc", RID: "linux-x64",
		DisambigKey: uint64(pid)}, w)
}

// startWith starts a simulated process as cfg says (its PID, its stream:
// w's, or a wrapper of it), running w.
func (h *host) startWith(cfg simruntime.Config, w *simruntime.Workload) *sim {
	srv, err := simruntime.Start(h.dir, cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	s := &sim{srv: srv, w: w}
	h.mu.Lock()
	h.sims[cfg.PID] = s
	h.mu.Unlock()
	return s
}

// exit ends process pid, as a process that exits.
func (h *host) exit(pid int) {
	h.mu.Lock()
	s := h.sims[pid]
	delete(h.sims, pid)
	h.mu.Unlock()
	s.srv.Close()
}

func (h *host) discover() ([]diagnostics.Process, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var ps []diagnostics.Process
	for pid, s := range h.sims {
		ps = append(ps, diagnostics.Process{PID: pid, Address: s.srv.Addr()})
	}
	return ps, nil
}

// server is a running ListenAndServe.
type server struct {
	url  string
	stop context.CancelFunc
	done chan error
	logs *logBuffer
}

type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) logf(format string, args ...any) {
	l.mu.Lock()
	fmt.Fprintf(&l.b, format+"\n", args...)
	l.mu.Unlock()
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// stopAndWait ends the server and fails unless ListenAndServe returns,
// without an error, within 20 s.
func (s *server) stopAndWait(t testing.TB) {
	t.Helper()
	s.stop()
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("ListenAndServe: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no return within 20 s of the end")
	}
	s.done <- nil // for the cleanup
}

func serve(t testing.TB, h *host, o monitor.Options, a monitor.Access) *server {
	logs := &logBuffer{}
	o.Discover = h.discover
	if o.Poll == 0 {
		o.Poll = 100 * time.Millisecond
	}
	o.Logf = logs.logf
	m := monitor.New(o)
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan net.Addr, 1)
	s := &server{stop: cancel, done: make(chan error, 1), logs: logs}
	go func() {
		s.done <- monitor.ListenAndServe(ctx, "127.0.0.1:0", m, a, func(a net.Addr) { addrs <- a })
	}()
	select {
	case a := <-addrs:
		s.url = "http://" + a.String()
	case err := <-s.done:
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			t.Error("the server did not stop within 30 s")
		}
	})
	return s
}

func get(t testing.TB, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func processes(t testing.TB, s *server) map[int]monitor.ProcessState {
	t.Helper()
	code, b := get(t, s.url+"/processes")
	if code != 200 {
		t.Fatalf("/processes: %d %s", code, b)
	}
	var ps []monitor.ProcessState
	if err := json.Unmarshal(b, &ps); err != nil {
		t.Fatalf("/processes: %v\n%s", err, b)
	}
	m := map[int]monitor.ProcessState{}
	for _, p := range ps {
		m[p.PID] = p
	}
	return m
}

// waitFor polls cond every 50 ms for up to d.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// attached waits until pids are attached and have read events.
func attached(t testing.TB, s *server, pids ...int) {
	t.Helper()
	waitFor(t, 10*time.Second, fmt.Sprintf("processes %v attached", pids), func() bool {
		ps := processes(t, s)
		for _, pid := range pids {
			if p, ok := ps[pid]; !ok || p.State != monitor.StateAttached || p.EventsRead == 0 {
				return false
			}
		}
		return true
	})
}

// families parses /metrics with the Go parser (and promtool when on PATH).
func families(t testing.TB, s *server) map[string]*dto.MetricFamily {
	t.Helper()
	code, b := get(t, s.url+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d %s", code, b)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, b)
	}
	return fams
}

// series returns the value of name's series with label pid=pid (and the
// other pairs given).
func series(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	mf := fams[name]
	if mf == nil {
		return 0, false
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
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// functions returns the function names of a gzipped pprof profile.
func functions(t testing.TB, b []byte) (*gprofile.Profile, string) {
	t.Helper()
	p, err := gprofile.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a pprof profile: %v (%d bytes)", err, len(b))
	}
	var names []string
	for _, f := range p.Function {
		names = append(names, f.Name)
	}
	return p, strings.Join(names, "\n")
}

// TestServe: every endpoint, end to end over HTTP, on two simulated
// processes.
func TestServe(t *testing.T) {
	h := newHost(t)
	a := h.start(100001, &simruntime.Workload{Rate: 5000, ExceptionTypes: 4})
	h.start(100002, &simruntime.Workload{Rate: 2000, DropPerTick: 1})
	s := serve(t, h, monitor.Options{CounterInterval: 0.2, Metrics: metrics.Options{MaxExceptionTypes: 3}}, monitor.Access{})
	attached(t, s, 100001, 100002)

	t.Run("processes", func(t *testing.T) {
		waitFor(t, 5*time.Second, "drops counted", func() bool { return processes(t, s)[100002].EventsDropped > 0 })
		p := processes(t, s)[100001]
		if p.CommandLine != "/usr/share/dotnet/dotnet /app/Sim.App.dll --id 100001" || p.RuntimeVersion != "8.0.11+abc" ||
			p.OS != "Linux" || p.Architecture != "x64" || p.Name != "Sim.App" {
			t.Errorf("process 100001: %+v", p)
		}
		if p.EventsDropped != 0 {
			t.Errorf("process 100001 dropped %d events; its workload drops none", p.EventsDropped)
		}
	})

	t.Run("metrics", func(t *testing.T) {
		var fams map[string]*dto.MetricFamily
		waitFor(t, 5*time.Second, "counters and GCs in /metrics", func() bool {
			fams = families(t, s)
			_, ok := series(fams, "dotnet_runtime_cpu_usage_ratio", "pid", "100002")
			n, _ := series(fams, "dotnet_gc_collections_total", "pid", "100001", "generation", "gen0")
			return ok && n > 0
		})
		for _, c := range []struct {
			name   string
			labels []string
		}{
			{"dotnet_gc_collections_total", []string{"pid", "100001", "process", "Sim.App", "generation", "gen1"}},
			{"dotnet_gc_pause_seconds", []string{"pid", "100001"}},
			{"dotnet_gc_heap_size_bytes", []string{"pid", "100002", "generation", "loh"}},
			{"dotnet_jit_compiled_methods_total", []string{"pid", "100001", "tier", "QuickJitted"}},
			{"dotnet_exceptions_total", []string{"pid", "100001", "type", "other"}},
			{"dotnet_monitor_lock_contentions_total", []string{"pid", "100001"}},
			{"dotnet_thread_pool_threads", []string{"pid", "100001"}},
			{"dotnet_thread_pool_thread_goal", []string{"pid", "100001"}},
			{"dotnet_runtime_working_set_bytes", []string{"pid", "100001"}},
			{"dotnet_runtime_alloc_rate_bytes_total", []string{"pid", "100001"}},
			{"clrevents_monitor_events_read_total", []string{"pid", "100001"}},
			{"clrevents_monitor_events_dropped_total", []string{"pid", "100002"}},
			{"clrevents_monitor_sessions", nil},
			{"clrevents_monitor_errors_total", []string{"stage", "attach"}},
		} {
			if _, ok := series(fams, c.name, c.labels...); !ok {
				t.Errorf("no %s%v", c.name, c.labels)
			}
		}
		if n, _ := series(fams, "clrevents_monitor_sessions"); n != 2 {
			t.Errorf("sessions %v", n)
		}
		// Exception types are capped at 3 here (the workload throws 4).
		if n := len(fams["dotnet_exceptions_total"].Metric); n > 2*(3+1) {
			t.Errorf("%d exception series for 2 processes with a cap of 3", n)
		}
		code, b := get(t, s.url+"/metrics")
		if code != 200 {
			t.Fatal(code)
		}
		promtool(t, b)
	})

	t.Run("profile", func(t *testing.T) {
		before := len(a.srv.Requests())
		code, b := get(t, s.url+"/debug/pprof/profile?pid=100001&seconds=1")
		if code != 200 {
			t.Fatalf("%d %s", code, b)
		}
		p, names := functions(t, b)
		// Compute is precompiled: only the rundown at attach names it.
		// Step0 is JIT-compiled, named by the loads of the session that
		// names compiled methods (at Informational, the monitoring
		// session's own loads have no names, as the runtime's).
		for _, want := range []string{"Sim.App!Sim.App.Worker.Compute(int32)", "Sim.App.Generated.Step", "Sim.App.Program.Main"} {
			if !strings.Contains(names, want) {
				t.Errorf("no %q in the profile's functions:\n%s", want, names)
			}
		}
		if strings.Contains(names, "?!?") {
			t.Errorf("unresolved frames:\n%s", names)
		}
		// The SampleProfiler's samples: thread time, "wall".
		if p.SampleType[1].Type != "wall" || p.SampleType[1].Unit != "nanoseconds" || len(p.Sample) == 0 {
			t.Errorf("sample types %v, %d samples", p.SampleType, len(p.Sample))
		}
		var total int64
		for _, x := range p.Sample {
			total += x.Value[1]
		}
		// 4 threads for about 1 s.
		if total < int64(2*time.Second) || total > int64(8*time.Second) {
			t.Errorf("%v of CPU samples in a 1 s window of 4 threads", time.Duration(total))
		}
		// The window's session asked for no rundown.
		var windows int
		for _, r := range a.srv.Requests()[before:] {
			if r.Collect == nil {
				continue
			}
			windows++
			if r.Collect.RundownKeyword != 0 || r.Collect.Version < 4 && r.Collect.RequestRundown {
				t.Errorf("the profile window asked for a rundown: %+v", r.Collect)
			}
		}
		if windows != 1 {
			t.Errorf("%d sessions for one window", windows)
		}
		pprofReads(t, b, "Sim.App.Worker.Compute")
	})

	t.Run("pprof-url", func(t *testing.T) {
		// go tool pprof fetches the profile itself, as users run it.
		out := goToolPprof(t, "-top", s.url+"/debug/pprof/profile?pid=100002&seconds=1")
		if !strings.Contains(out, "Sim.App.Worker.Hash") {
			t.Errorf("go tool pprof -top of the URL:\n%s", out)
		}
	})

	t.Run("allocs", func(t *testing.T) {
		code, b := get(t, s.url+"/debug/pprof/allocs?pid=100001&seconds=1")
		if code != 200 {
			t.Fatalf("%d %s", code, b)
		}
		p, names := functions(t, b)
		if p.SampleType[1].Type != "alloc_space" || !strings.Contains(names, "Sim.App.Worker.Run") {
			t.Errorf("allocs: %v\n%s", p.SampleType, names)
		}
		pprofReads(t, b, "Sim.App.Worker.Run")
	})

	t.Run("mutex", func(t *testing.T) {
		code, b := get(t, s.url+"/debug/pprof/mutex?pid=100001&seconds=1")
		if code != 200 {
			t.Fatalf("%d %s", code, b)
		}
		p, names := functions(t, b)
		var delay, n int64
		for _, x := range p.Sample {
			n += x.Value[0]
			delay += x.Value[1]
		}
		// Each simulated contention waits 50 µs.
		if p.SampleType[1].Type != "delay" || n == 0 || delay != n*50_000 || !strings.Contains(names, "Sim.App.Program.Main") {
			t.Errorf("mutex: %v, %d contentions, %d ns\n%s", p.SampleType, n, delay, names)
		}
	})

	t.Run("trace", func(t *testing.T) {
		names := traceNames(t, s.url+"/trace?pid=100002&seconds=1")
		// cpu-sampling, as clrtrace collect's default: samples, and the
		// rundown at the end.
		if names["ThreadSample"] == 0 || names["MethodDCEndVerbose_V2"] == 0 {
			t.Errorf("the trace holds %v: no samples or no rundown", names)
		}
		names = traceNames(t, s.url+"/trace?pid=100002&seconds=1&profile=gc")
		if names["GCStart_V2"] == 0 || names["ThreadSample"] != 0 {
			t.Errorf("the gc trace holds %v", names)
		}
	})

	t.Run("busy", func(t *testing.T) {
		before := len(a.srv.Requests())
		first := make(chan int, 1)
		go func() {
			code, _ := get(t, s.url+"/debug/pprof/profile?pid=100001&seconds=2")
			first <- code
		}()
		waitFor(t, 2*time.Second, "the first window's session", func() bool {
			for _, r := range a.srv.Requests()[before:] {
				if r.Collect != nil {
					return true
				}
			}
			return false
		})
		code, b := get(t, s.url+"/trace?pid=100001&seconds=1")
		if code != http.StatusConflict || !strings.Contains(string(b), "already running") {
			t.Errorf("a second window: %d %s", code, b)
		}
		if code, b := get(t, s.url+"/debug/pprof/allocs?pid=100001&seconds=1"); code != http.StatusConflict {
			t.Errorf("a third window: %d %s", code, b)
		}
		// Another process is not busy.
		if code, b := get(t, s.url+"/debug/pprof/mutex?pid=100002&seconds=1"); code != 200 {
			t.Errorf("another process: %d %s", code, b)
		}
		if c := <-first; c != 200 {
			t.Errorf("the first window: %d", c)
		}
		// Once it is over, the next window runs.
		if code, b := get(t, s.url+"/debug/pprof/mutex?pid=100001&seconds=1"); code != 200 {
			t.Errorf("after the window: %d %s", code, b)
		}
	})

	t.Run("bad requests", func(t *testing.T) {
		for _, c := range []struct {
			path string
			code int
		}{
			{"/debug/pprof/profile?seconds=1", 400},
			{"/debug/pprof/profile?pid=abc", 400},
			{"/debug/pprof/profile?pid=100001&seconds=0", 400},
			{"/debug/pprof/profile?pid=100001&seconds=301", 400},
			{"/debug/pprof/profile?pid=100001&seconds=18446744073", 400}, // 0 s, once multiplied into a Duration
			{"/debug/pprof/profile?pid=100001&seconds=18446744074", 400},
			{"/debug/pprof/profile?pid=100001&seconds=1.5", 400},
			{"/trace?pid=100001&seconds=1&profile=nosuch", 400},
			{"/trace?pid=100001&seconds=1&providers=:::", 400},
			{"/debug/pprof/profile?pid=4&seconds=1", 404},
			{"/nosuch", 404},
		} {
			if code, b := get(t, s.url+c.path); code != c.code {
				t.Errorf("GET %s: %d %s, want %d", c.path, code, b, c.code)
			}
		}
		for _, method := range []string{"POST", "PUT", "DELETE", "HEAD"} {
			req, _ := http.NewRequest(method, s.url+"/processes", strings.NewReader("x"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET" {
				t.Errorf("%s: %d, Allow %q", method, resp.StatusCode, resp.Header.Get("Allow"))
			}
		}
		req, _ := http.NewRequest("GET", s.url+"/processes", strings.NewReader("body"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Errorf("GET with a body: %d", resp.StatusCode)
		}
	})
}

// traceNames reads the trace at url and counts its events by name.
func traceNames(t *testing.T, url string) map[string]int {
	t.Helper()
	code, b := get(t, url)
	if code != 200 {
		t.Fatalf("%s: %d %s", url, code, b)
	}
	r, err := trace.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]int{}
	for {
		e, err := r.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names[e.Name()]++
	}
}

// promtool checks an exposition when promtool is on PATH.
func promtool(t *testing.T, text []byte) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CLREVENTS_REQUIRE_PROMTOOL") != "" {
			t.Fatal("CLREVENTS_REQUIRE_PROMTOOL is set but promtool is not on PATH")
		}
		t.Log("promtool is not on PATH (Debian package prometheus; .ci/run installs it): only the Go parser checked /metrics")
		return
	}
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// goToolPprof runs go tool pprof with args, offline.
func goToolPprof(t *testing.T, args ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("go tool pprof builds pprof: skipped with -short")
	}
	cmd := exec.Command("go", append([]string{"tool", "pprof"}, args...)...)
	cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// pprofReads checks that go tool pprof -raw reads the profile and names
// want.
func pprofReads(t *testing.T, b []byte, want string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "p.pb.gz")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out := goToolPprof(t, "-raw", f); !strings.Contains(out, want) {
		t.Errorf("go tool pprof -raw: no %q:\n%s", want, out)
	}
}

// TestContainerProcess: a process whose events give another PID than the
// one it was found by (a container's program, PID 1 in its namespace) is
// profiled as any other: a window's events are all the process's, whatever
// PID they give. (Windows filtered by the host's PID were empty.)
func TestContainerProcess(t *testing.T) {
	h := newHost(t)
	h.startAs(700001, &simruntime.Workload{PID: 1})
	s := serve(t, h, monitor.Options{CounterInterval: 0.2}, monitor.Access{})
	attached(t, s, 700001)
	code, b := get(t, s.url+"/debug/pprof/profile?pid=700001&seconds=1")
	if code != 200 {
		t.Fatalf("%d %s", code, b)
	}
	p, names := functions(t, b)
	if len(p.Sample) == 0 || !strings.Contains(names, "Sim.App.Worker.Compute") {
		t.Errorf("%d samples; functions:\n%s", len(p.Sample), names)
	}
}

// TestWindowProcessExits: a process that exits during a profile window
// gives the profile of what was recorded until then, its duration the
// time recorded, not an error that throws the samples away.
func TestWindowProcessExits(t *testing.T) {
	h := newHost(t)
	h.start(700002, &simruntime.Workload{})
	s := serve(t, h, monitor.Options{CounterInterval: 0.2}, monitor.Access{})
	attached(t, s, 700002)
	time.AfterFunc(time.Second, func() { h.exit(700002) })
	code, b := get(t, s.url+"/debug/pprof/profile?pid=700002&seconds=5")
	if code != 200 {
		t.Fatalf("%d %s", code, b)
	}
	p, names := functions(t, b)
	if len(p.Sample) == 0 || !strings.Contains(names, "Sim.App.Worker.Compute") {
		t.Errorf("%d samples; functions:\n%s", len(p.Sample), names)
	}
	if d := time.Duration(p.DurationNanos); d < 500*time.Millisecond || d > 4*time.Second {
		t.Errorf("the window's profile lasts %v; the process exited after about 1 s of 5", d)
	}
	// The window gave its profile: no failure to count.
	if n, _ := series(families(t, s), "clrevents_monitor_errors_total", "stage", "window"); n != 0 {
		t.Errorf("%v window errors for a window that gave its profile", n)
	}
}

// TestComeAndGo: a process that appears is attached within a few polls;
// one that exits is detached, its series stay for KeepExited with what
// it counted to its exit, then go; one that restarts under the same PID
// is attached again.
func TestComeAndGo(t *testing.T) {
	h := newHost(t)
	h.start(200001, &simruntime.Workload{})
	const keep = 1500 * time.Millisecond
	s := serve(t, h, monitor.Options{CounterInterval: 0.2, KeepExited: keep}, monitor.Access{})
	attached(t, s, 200001)

	h.start(200002, &simruntime.Workload{})
	start := time.Now()
	attached(t, s, 200002)
	t.Logf("a new process attached in %v (poll 100 ms)", time.Since(start))

	before, _ := series(families(t, s), "dotnet_events_total", "pid", "200001")
	h.exit(200001)
	exited := time.Now()
	waitFor(t, 5*time.Second, "process 200001 gone from /processes", func() bool {
		_, ok := processes(t, s)[200001]
		return !ok
	})
	// The scrape after the exit still has what it counted up to it.
	kept, ok := series(families(t, s), "dotnet_events_total", "pid", "200001")
	if since := time.Since(exited); since < keep && (!ok || kept < before) {
		t.Errorf("%v after the exit: dotnet_events_total %v (present %v), want kept, at least the %v scraped before", since, kept, ok, before)
	}
	waitFor(t, 5*time.Second, "process 200001's series gone", func() bool {
		fams := families(t, s)
		_, ok := series(fams, "dotnet_events_total", "pid", "200001")
		_, ok2 := series(fams, "clrevents_monitor_events_read_total", "pid", "200001")
		return !ok && !ok2
	})
	fams := families(t, s)
	if n, _ := series(fams, "clrevents_monitor_detaches_total"); n < 1 {
		t.Errorf("detaches %v", n)
	}
	// A process that exits is no error of the monitor's: alerts on
	// errors do not fire at each restart.
	if n, _ := series(fams, "clrevents_monitor_errors_total", "stage", "stream"); n != 0 {
		t.Errorf("%v stream errors after a process exited", n)
	}
	if _, ok := series(fams, "dotnet_events_total", "pid", "200002"); !ok {
		t.Error("process 200002's series went too")
	}

	// The same PID again: a restarted process.
	h.start(200001, &simruntime.Workload{})
	attached(t, s, 200001)
	if !strings.Contains(s.logs.String(), "process 200001 (Sim.App): detached") {
		t.Errorf("logs:\n%s", s.logs)
	}
}

// TestMaxWindow: Options.MaxWindow bounds a window requested without
// seconds= (30 s otherwise), and one under a second is a second. (The
// default window was 30 s whatever MaxWindow, and a MaxWindow under a
// second refused every seconds=, "from 1 to 0".)
func TestMaxWindow(t *testing.T) {
	h := newHost(t)
	h.start(300003, &simruntime.Workload{})
	s := serve(t, h, monitor.Options{MaxWindow: 2 * time.Second}, monitor.Access{})
	attached(t, s, 300003)
	if code, b := get(t, s.url+"/debug/pprof/profile?pid=300003&seconds=3"); code != 400 || !strings.Contains(string(b), "from 1 to 2") {
		t.Errorf("seconds=3 with MaxWindow 2 s: %d %s", code, b)
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(s.url + "/debug/pprof/profile?pid=300003")
	if err != nil {
		t.Fatalf("a window without seconds= with MaxWindow 2 s: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || err != nil {
		t.Fatalf("%d %s %v", resp.StatusCode, b, err)
	}
	if p, _ := functions(t, b); time.Duration(p.DurationNanos) > 3*time.Second {
		t.Errorf("a window without seconds= lasted %v with MaxWindow 2 s", time.Duration(p.DurationNanos))
	}

	s = serve(t, h, monitor.Options{MaxWindow: 500 * time.Millisecond}, monitor.Access{})
	attached(t, s, 300003)
	if code, b := get(t, s.url+"/debug/pprof/mutex?pid=300003&seconds=1"); code != 200 {
		t.Errorf("seconds=1 with MaxWindow 500 ms: %d %s", code, b)
	}
}

// TestPIDs: Options.PIDs restricts the processes monitored.
func TestPIDs(t *testing.T) {
	h := newHost(t)
	h.start(300001, &simruntime.Workload{})
	h.start(300002, &simruntime.Workload{})
	s := serve(t, h, monitor.Options{PIDs: []int{300002}}, monitor.Access{})
	attached(t, s, 300002)
	time.Sleep(300 * time.Millisecond)
	if ps := processes(t, s); len(ps) != 1 {
		t.Errorf("monitoring %v, want only 300002", ps)
	}
}

// TestShutdown: when the context ends, every session gets StopTracing,
// its stream ends, and ListenAndServe returns nil.
func TestShutdown(t *testing.T) {
	h := newHost(t)
	sims := []*sim{h.start(400001, &simruntime.Workload{}), h.start(400002, &simruntime.Workload{})}
	s := serve(t, h, monitor.Options{}, monitor.Access{})
	attached(t, s, 400001, 400002)
	// A window running at shutdown ends too.
	window := make(chan int, 1)
	go func() {
		resp, err := http.Get(s.url + "/debug/pprof/profile?pid=400001&seconds=60")
		if err != nil {
			window <- -1
			return
		}
		resp.Body.Close()
		window <- resp.StatusCode
	}()
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	s.stopAndWait(t)
	t.Logf("stopped in %v", time.Since(start))
	for _, sm := range sims {
		stops := 0
		for _, r := range sm.srv.Requests() {
			if r.Set == 2 && r.ID == 1 && r.Answer == 0 {
				stops++
			}
		}
		// The monitoring session, the rundown at attach, and for 400001
		// the window.
		if stops < 2 {
			t.Errorf("process %d: %d StopTracing", sm.w.PID, stops)
		}
	}
	select {
	case <-window:
	case <-time.After(5 * time.Second):
		t.Error("the window's request did not end")
	}
}

// TestShutdownBeforeStreamBegins: a process whose runtime starts the
// session but sends nothing (one suspended at startup begins its stream
// only once resumed) does not hold the shutdown; the session is stopped.
func TestShutdownBeforeStreamBegins(t *testing.T) {
	h := newHost(t)
	srv, err := simruntime.Start(h.dir, simruntime.Config{PID: 700001, DisambigKey: 700001,
		Trace: []byte("Nettrace, never sent"), Live: 0, StallAfterStop: true})
	if err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	h.sims[700001] = &sim{srv: srv, w: &simruntime.Workload{PID: 700001}}
	h.mu.Unlock()
	s := serve(t, h, monitor.Options{Poll: 50 * time.Millisecond, Drain: time.Second}, monitor.Access{})
	waitFor(t, 10*time.Second, "the monitoring session started", func() bool {
		for _, r := range srv.Requests() {
			if r.Collect != nil && r.Answer == 0 {
				return true
			}
		}
		return false
	})
	time.Sleep(100 * time.Millisecond) // the reader waits for the stream
	s.stopAndWait(t)
	// StopTracing is sent, not waited for: the runtime may take it in a
	// moment later.
	waitFor(t, 5*time.Second, "StopTracing", func() bool {
		for _, r := range srv.Requests() {
			if r.Set == 2 && r.ID == 1 {
				return true
			}
		}
		return false
	})
}

// TestAccess: a non-loopback address needs a token; with a token, only
// requests that carry it are served; TLS serves with the given
// certificate.
func TestAccess(t *testing.T) {
	for addr, loop := range map[string]bool{"127.0.0.1:1": true, "[::1]:1": true, "localhost:1": true, "127.1.2.3:1": true,
		":1": false, "0.0.0.0:1": false, "[::]:1": false, "192.168.1.2:1": false, "example.com:1": false, "nonsense": false} {
		if got := monitor.IsLoopback(addr); got != loop {
			t.Errorf("IsLoopback(%q) = %v", addr, got)
		}
	}
	m := monitor.New(monitor.Options{Discover: func() ([]diagnostics.Process, error) { return nil, nil }})
	for _, addr := range []string{":0", "0.0.0.0:0"} {
		err := monitor.ListenAndServe(context.Background(), addr, m, monitor.Access{}, nil)
		if !errors.Is(err, monitor.ErrNeedToken) {
			t.Errorf("%s without a token: %v", addr, err)
		}
	}

	h := newHost(t)
	const token = "s3cret-token-value"
	s := serve(t, h, monitor.Options{}, monitor.Access{Token: token})
	for _, c := range []struct {
		header string
		code   int
	}{
		{"", 401},
		{"Bearer", 401},
		{"Bearer ", 401},
		{"Bearer s3cret", 401},
		{"Bearer " + token + "x", 401},
		{"Basic " + token, 401},
		{"bearer " + token, 401},
		{"Bearer " + token, 200},
	} {
		req, _ := http.NewRequest("GET", s.url+"/processes", nil)
		if c.header != "" {
			req.Header.Set("Authorization", c.header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.code {
			t.Errorf("Authorization %q: %d, want %d", c.header, resp.StatusCode, c.code)
		}
		if c.code == 401 && (resp.Header.Get("WWW-Authenticate") == "" || strings.Contains(string(body), token)) {
			t.Errorf("401: %q %q", resp.Header.Get("WWW-Authenticate"), body)
		}
	}
	// Authorized requests still get the method check.
	req, _ := http.NewRequest("POST", s.url+"/processes", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 {
		t.Errorf("POST with the token: %d", resp.StatusCode)
	}
	if strings.Contains(s.logs.String(), token) {
		t.Errorf("the token is in the logs:\n%s", s.logs)
	}

	t.Run("tls", func(t *testing.T) { testTLS(t, h) })
}

// TestAttachFails: a process whose runtime refuses the session is listed
// as failed, with the runtime's answer, counted, and tried again after a
// back-off; one that then goes away is no longer listed.
func TestAttachFails(t *testing.T) {
	h := newHost(t)
	srv, err := simruntime.Start(h.dir, simruntime.Config{PID: 600001, CollectError: simruntime.EFail, DisambigKey: 600001})
	if err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	h.sims[600001] = &sim{srv: srv, w: &simruntime.Workload{PID: 600001}}
	h.mu.Unlock()
	s := serve(t, h, monitor.Options{Poll: 50 * time.Millisecond}, monitor.Access{})
	var p monitor.ProcessState
	waitFor(t, 5*time.Second, "process 600001 failed", func() bool {
		p = processes(t, s)[600001]
		return p.State == monitor.StateFailed
	})
	if !strings.Contains(p.Error, "0x80004005") {
		t.Errorf("error %q", p.Error)
	}
	waitFor(t, 5*time.Second, "a second attempt after the back-off", func() bool {
		n := 0
		for _, r := range srv.Requests() {
			if r.Collect != nil {
				n++
			}
		}
		return n >= 2
	})
	// The runtime records the request before it answers with the error,
	// and the monitor counts the error once it has read the answer: the
	// count follows the second request, a moment later (CI saw 1 here).
	waitFor(t, 5*time.Second, "two attach errors counted", func() bool {
		n, _ := series(families(t, s), "clrevents_monitor_errors_total", "stage", "attach")
		return n >= 2
	})
	h.exit(600001)
	waitFor(t, 5*time.Second, "process 600001 gone", func() bool {
		_, ok := processes(t, s)[600001]
		return !ok
	})
}

// TestExitedReplaced: a process that starts under the PID of one that
// exited while the exited one's series are kept (KeepExited) counts from
// 0, not on from the exited one's counts.
func TestExitedReplaced(t *testing.T) {
	h := newHost(t)
	h.start(210001, &simruntime.Workload{})
	s := serve(t, h, monitor.Options{CounterInterval: 0.2, KeepExited: time.Minute}, monitor.Access{})
	attached(t, s, 210001)
	const many = 3000
	waitFor(t, 20*time.Second, "the first process's events counted", func() bool {
		n, _ := series(families(t, s), "dotnet_events_total", "pid", "210001")
		return n >= many
	})
	h.exit(210001)
	waitFor(t, 5*time.Second, "process 210001 gone from /processes", func() bool {
		_, ok := processes(t, s)[210001]
		return !ok
	})
	if n, ok := series(families(t, s), "dotnet_events_total", "pid", "210001"); !ok || n < many {
		t.Fatalf("the exited process's series: %v (present %v), want kept at %d or more", n, ok, many)
	}
	h.start(210001, &simruntime.Workload{})
	attached(t, s, 210001)
	if n, _ := series(families(t, s), "dotnet_events_total", "pid", "210001"); n >= many/2 {
		t.Errorf("the new process under the PID counted %v events at its attach: on from the exited one's", n)
	}
}
