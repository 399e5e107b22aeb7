package profile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/internal/etltest"
	"github.com/clrgo/clrevents/internal/tracetest"
	"github.com/clrgo/clrevents/symbols"
	"github.com/clrgo/clrevents/trace"
)

const golden = "../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace"

func build(t *testing.T, name string, o Options) (*Profile, error) {
	t.Helper()
	r, err := trace.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return Build(r, o)
}

func sortedLines(b []byte) []string {
	ls := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	sort.Strings(ls)
	return ls
}

// goldenTraces lists pyroscope-style golden traces: X.golden.nettrace
// beside X.txt (all time) and X-managed-only.txt, in testdata, in the
// shared fixtures and in $CLREVENTS_PYROSCOPE_TESTDATA (for instance
// dotnetdiag's own nettrace/testdata, with its web app trace).
func goldenTraces() []string {
	dirs := []string{"../testdata/pyroscope-dotnetdiag", "../../shared/fixtures/traces/pyroscope-dotnetdiag"}
	if d := os.Getenv("CLREVENTS_PYROSCOPE_TESTDATA"); d != "" {
		dirs = append(dirs, d)
	}
	var out []string
	for _, d := range dirs {
		m, _ := filepath.Glob(filepath.Join(d, "*.golden.nettrace"))
		out = append(out, m...)
	}
	return out
}

// TestPyroscopeExpected: the folded CPU profile equals dotnetdiag's
// expected outputs line for line, all time and managed code only.
func TestPyroscopeExpected(t *testing.T) {
	traces := goldenTraces()
	if len(traces) == 0 {
		t.Fatal("no golden traces: testdata/pyroscope-dotnetdiag is missing")
	}
	for _, tr := range traces {
		base := strings.TrimSuffix(tr, ".golden.nettrace")
		for _, c := range []struct {
			suffix      string
			managedOnly bool
		}{{".txt", false}, {"-managed-only.txt", true}} {
			want, err := os.ReadFile(base + c.suffix)
			if err != nil {
				t.Errorf("%v", err)
				continue
			}
			t.Run(filepath.Base(base+c.suffix), func(t *testing.T) {
				p, err := build(t, tr, Options{Kind: CPU, ManagedOnly: c.managedOnly})
				if err != nil {
					t.Fatal(err)
				}
				var got bytes.Buffer
				if err := p.WriteFolded(&got); err != nil {
					t.Fatal(err)
				}
				g, w := sortedLines(got.Bytes()), sortedLines(want)
				if len(g) != len(w) {
					t.Errorf("%d lines, want %d", len(g), len(w))
				}
				for i := 0; i < len(g) && i < len(w); i++ {
					if g[i] != w[i] {
						t.Errorf("line %d:\n got %s\nwant %s", i+1, g[i], w[i])
					}
				}
			})
		}
	}
}

func foldedTotal(t *testing.T, p *Profile) int64 {
	var n int64
	for _, v := range p.Folded() {
		n += v
	}
	return n
}

var (
	totalRE = regexp.MustCompile(`of (\d+)[a-zA-Z]* total`)
	shownRE = regexp.MustCompile(`accounting for (\d+)[a-zA-Z]*,`)
)

// TestPprofGoTool: go tool pprof reads the pprof output, and its total
// equals the folded total.
func TestPprofGoTool(t *testing.T) {
	p, err := build(t, golden, Options{Kind: CPU})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "cpu.pb.gz")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.WritePprof(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// Our own reader first: the library's parser and checks.
	raw, _ := os.ReadFile(file)
	pp, err := profile.ParseData(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := pp.CheckValid(); err != nil {
		t.Fatal(err)
	}
	// The SampleProfiler's samples are threads' time: "wall", not "cpu".
	if pp.SampleType[0].Type != "samples" || pp.SampleType[1].Type != "wall" || pp.SampleType[1].Unit != "nanoseconds" ||
		pp.PeriodType == nil || pp.PeriodType.Type != "wall" || pp.DefaultSampleType != "wall" {
		t.Errorf("sample types %v %v, period type %v, default %q", pp.SampleType[0], pp.SampleType[1], pp.PeriodType, pp.DefaultSampleType)
	}
	want := foldedTotal(t, p)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH: cannot run go tool pprof")
	}
	out, err := exec.Command(goBin, "tool", "pprof", "-top", "-unit=ns", file).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof: %v\n%s", err, out)
	}
	m := totalRE.FindSubmatch(out)
	if m == nil {
		t.Fatalf("no total in go tool pprof's output:\n%s", out)
	}
	got, _ := strconv.ParseInt(string(m[1]), 10, 64)
	if got != want {
		t.Errorf("go tool pprof total %d, folded total %d", got, want)
	}
	if !bytes.Contains(out, []byte("mvc-hello-world!Example.Program.Work")) {
		t.Errorf("function names missing:\n%s", out)
	}
	if !bytes.Contains(out, []byte("Type: wall")) {
		t.Errorf("go tool pprof's type is not wall:\n%s", out)
	}
	// -tagfocus keeps the time of one state: here the time ending in
	// the trace's samples outside managed code.
	var external int64
	for _, s := range p.Samples {
		if s.State == StateExternal {
			external += s.Values[1]
		}
	}
	focused, err := exec.Command(goBin, "tool", "pprof", "-top", "-unit=ns", "-tagfocus=state=external", file).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -tagfocus: %v\n%s", err, focused)
	}
	if m := shownRE.FindSubmatch(focused); external == 0 || m == nil || string(m[1]) != strconv.FormatInt(external, 10) {
		t.Errorf("go tool pprof -tagfocus=state=external: want %d ns shown:\n%s", external, focused)
	}
	// Names whole, with their parameters: pprof cuts what looks like
	// C++'s parameters out of a name whose SystemName is the same, and
	// .NET's overloads then merge.
	if !bytes.Contains(out, []byte("mvc-hello-world!Example.Program.Main(class System.String[])")) {
		t.Errorf("go tool pprof cut the parameters out of a method's name:\n%s", out)
	}
	// A managed module's mapping has its PDB's identity (the module
	// event's ManagedPdbSignature and age), which symbol servers key by,
	// and without which pprof drops a Windows path (it takes
	// "C:\..." for a URL).
	var dll *profile.Mapping
	for _, m := range pp.Mapping {
		if strings.HasSuffix(m.File, "mvc-hello-world.dll") {
			dll = m
		}
	}
	if dll == nil || dll.BuildID != "AB87C2F708D74A9289560D81D3A1DB051" || !dll.HasFunctions {
		t.Errorf("the managed module's mapping: %+v; want its PDB's build ID, and HasFunctions (its methods are named)", dll)
	}
	// An EventPipe trace does not name its executable: pprof names no
	// main binary rather than the first module it met.
	if pp.Mapping[0].File != "" || bytes.Contains(out, []byte("File:")) {
		t.Errorf("main mapping %q:\n%s", pp.Mapping[0].File, out)
	}
	writersAgree(t, p)
}

// TestSpeedscope checks the JSON against the file format's rules: frame
// indices in range, one weight per sample, end value the sum of weights.
func TestSpeedscope(t *testing.T) {
	p, err := build(t, golden, Options{Kind: CPU})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := p.WriteSpeedscope(&b); err != nil {
		t.Fatal(err)
	}
	var f ssFile
	if err := json.Unmarshal(b.Bytes(), &f); err != nil {
		t.Fatal(err)
	}
	if f.Schema != "https://www.speedscope.app/file-format-schema.json" || len(f.Profiles) == 0 {
		t.Fatalf("schema %q, %d profiles", f.Schema, len(f.Profiles))
	}
	var total int64
	for _, pr := range f.Profiles {
		if pr.Type != "sampled" || pr.Unit != "nanoseconds" || len(pr.Samples) != len(pr.Weights) {
			t.Errorf("profile %q: type %s unit %s, %d samples %d weights", pr.Name, pr.Type, pr.Unit, len(pr.Samples), len(pr.Weights))
		}
		var sum int64
		for i, s := range pr.Samples {
			for _, fi := range s {
				if fi < 0 || fi >= len(f.Shared.Frames) {
					t.Fatalf("frame index %d out of range", fi)
				}
			}
			sum += pr.Weights[i]
		}
		if sum != pr.EndValue-pr.StartValue {
			t.Errorf("weights sum %d, end-start %d", sum, pr.EndValue-pr.StartValue)
		}
		total += sum
	}
	if want := foldedTotal(t, p); total != want {
		t.Errorf("speedscope total %d, folded %d", total, want)
	}
}

// TestNoEvents: a trace without the events a kind needs is an error that
// names the trace and says what to enable.
func TestNoEvents(t *testing.T) {
	_, err := build(t, golden, Options{Kind: Contention})
	if !errors.Is(err, ErrNoEvents) || !strings.Contains(err.Error(), "golden.nettrace") || !strings.Contains(err.Error(), "Contention keyword") {
		t.Errorf("got %v", err)
	}
	// A process the trace does not have: the error names the one it has,
	// instead of asking for a provider the trace already holds.
	_, err = build(t, golden, Options{Kind: CPU, PIDs: []int64{12345}})
	if !errors.Is(err, ErrNoEvents) || !strings.Contains(err.Error(), "cpu profile of process 12345: the trace has them only for process 55960 (5564 events)") ||
		strings.Contains(err.Error(), "enable") {
		t.Errorf("got %v", err)
	}
}

// TestZeroOptions: the zero Options are a CPU profile of every process,
// on an EventPipe trace (one process, not process 0) and on ETW traces
// (many processes, process 0 the idle one).
func TestZeroOptions(t *testing.T) {
	p, err := build(t, golden, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(strings.TrimSuffix(golden, ".golden.nettrace") + ".txt")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := p.WriteFolded(&got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sortedLines(want), sortedLines(got.Bytes())); diff != "" {
		t.Errorf("zero Options on %s (-want +got):\n%s", filepath.Base(golden), diff)
	}
	// gcevents.etl has GCAllocationTick events of one process, not 0.
	p, err = build(t, "../testdata/traces/gcevents.etl.zip", Options{Kind: Alloc})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Samples) == 0 || p.Samples[0].PID == 0 || p.rooted() {
		t.Errorf("gcevents.etl allocations: %d samples, first of process %d", len(p.Samples), p.Samples[0].PID)
	}
	// A cut of the 4.5.2 ETL log: kernel CPU samples of several
	// processes. Every writer starts each stack with its process, and
	// pprof names no main binary.
	p, err = build(t, "../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if pp := writersAgree(t, p); pp.Mapping[0].File != "" {
		t.Errorf("main mapping of a profile of %d processes: %+v", len(p.ProcessNames), pp.Mapping[0])
	}
	procRoot := regexp.MustCompile(`^(\S+ \(\d+\)|process \d+|process unknown)$`)
	cut := map[string]int64{}
	for stack, v := range p.Folded() {
		root, _, _ := strings.Cut(stack, ";")
		if !procRoot.MatchString(root) {
			t.Errorf("stack does not start with its process: %s", stack)
		}
		cut[root] += v
	}
	if cut["PerfView.exe (3988)"] == 0 || len(cut) < 3 {
		t.Errorf("CPU time of the cut by process: %v", cut)
	}
	const etl = "../../shared/fixtures/traces/perfview/net.4.5.2.x86.etl.zip"
	if _, err := os.Stat(etl); err != nil {
		t.Skip("shared traces absent (../shared beside the checkout)")
	}
	p, err = build(t, etl, Options{})
	if err != nil {
		t.Fatal(err)
	}
	byProcess := map[string]int64{}
	for stack, v := range p.Folded() {
		root, _, _ := strings.Cut(stack, ";")
		byProcess[root] += v
	}
	// The trace's kernel samples: 88,809 of 1 ms; 82,128 of them idle.
	if byProcess["Idle (0)"] != 82_128e6 || byProcess["Test.x86.exe (3644)"] != 4_900e6 || len(byProcess) < 10 {
		t.Errorf("CPU time by process: %v", byProcess)
	}
}

// TestSharedTraces builds every kind from every shared trace and logs what
// came out; the profiles must be consistent in every format.
func TestSharedTraces(t *testing.T) {
	files, _ := filepath.Glob("../../shared/fixtures/traces/perfview/*.zip")
	if len(files) == 0 {
		t.Skip("no shared traces beside the checkout")
	}
	for _, f := range files {
		for k := CPU; k <= Exception; k++ {
			p, err := build(t, f, Options{Kind: k})
			if errors.Is(err, ErrNoEvents) {
				continue
			}
			if err != nil {
				t.Errorf("%s %s: %v", filepath.Base(f), k, err)
				continue
			}
			var pb bytes.Buffer
			if err := p.WritePprof(&pb); err != nil {
				t.Fatal(err)
			}
			pp, err := profile.Parse(&pb)
			if err != nil {
				t.Fatal(err)
			}
			var total int64
			for _, s := range pp.Sample {
				total += s.Value[len(s.Value)-1]
			}
			ft := foldedTotal(t, p)
			if total != ft {
				t.Errorf("%s %s: pprof total %d, folded %d", filepath.Base(f), k, total, ft)
			}
			t.Logf("%s %s: %d events, %d samples, total %d %s, frames resolved %.1f%%", filepath.Base(f), k, p.Events,
				len(p.Samples), ft, p.SampleTypes[len(p.SampleTypes)-1].Unit, 100*p.Map.Share())
		}
	}
}

func TestUpscaleAndNanos(t *testing.T) {
	c, n := upscale(100 * 1024)
	if c != 2 || n < 160000 || n > 165000 { // 1/(1-e^-1) = 1.582
		t.Errorf("upscale(100 KiB) = %d, %d", c, n)
	}
	if c, n := upscale(10 << 20); c != 1 || n != 10<<20 {
		t.Errorf("upscale(10 MiB) = %d, %d", c, n)
	}
	b := NewBuilder(Options{}, 0, 10_000_000)
	if got := b.nanos(3); got != 300 {
		t.Errorf("10 MHz: %d", got)
	}
	b = NewBuilder(Options{}, 0, 3_579_545)
	if got := b.nanos(3_579_545 * 2); got != 2e9 {
		t.Errorf("3.58 MHz: %d", got)
	}
}

// TestSpanNanos: a profile's duration is never negative, however far apart
// the times read are (garbled ones): it was -8.9 × 10^18 ns for a garbled
// copy of an ETL log, the difference of the two times and its conversion
// overflowing.
func TestSpanNanos(t *testing.T) {
	for _, c := range []struct {
		freq, first, last, want int64
	}{
		{10_000_000, 100, 300, 20_000},
		{3_579_545, 0, 3_579_545 * 2, 2e9},
		{10_000_000, math.MinInt64 + 1, math.MaxInt64, math.MaxInt64},
		{3, -5, math.MaxInt64 / 2, math.MaxInt64},
		{1e9, -1, math.MaxInt64, math.MaxInt64},
		{1e9, 0, math.MaxInt64, math.MaxInt64},
		{10_000_000, 0, math.MaxInt64 / 100, math.MaxInt64},
	} {
		b := NewBuilder(Options{}, 0, c.freq)
		b.span(c.last)
		b.span(c.first)
		if got := b.spanNanos(); got != c.want {
			t.Errorf("%d Hz, %d to %d: %d ns, want %d", c.freq, c.first, c.last, got, c.want)
		}
	}
}

// TestETWStackWalk: in an ETW log, the CLRStackWalk event after an event on
// the same thread gives that event's stack.
func TestETWStackWalk(t *testing.T) {
	const etl = "../../shared/fixtures/traces/perfview/net.4.5.2.x86.etl.zip"
	if _, err := os.Stat(etl); err != nil {
		t.Skip("shared traces absent")
	}
	for _, c := range []struct {
		kind Kind
		want string
	}{
		{Alloc, "Test.x86!Test.Program.Main(class System.String[]);"},
		{Contention, "mscorlib!"},
		{Exception, "!"},
	} {
		p, err := build(t, etl, Options{Kind: c.kind})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for k := range p.Folded() {
			if k == "" {
				t.Errorf("%s: a sample without a stack", c.kind)
			}
			found = found || strings.Contains(k, c.want)
		}
		if !found {
			t.Errorf("%s: no stack holds %q", c.kind, c.want)
		}
	}
}

// TestSpeedscopeSchema validates the speedscope output against speedscope's
// published file-format schema (testdata/speedscope, with provenance).
func TestSpeedscopeSchema(t *testing.T) {
	f, err := os.Open("../testdata/speedscope/file-format-schema.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("https://www.speedscope.app/file-format-schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("https://www.speedscope.app/file-format-schema.json")
	if err != nil {
		t.Fatal(err)
	}
	type tc struct {
		trace string
		kind  Kind
	}
	cases := []tc{{golden, CPU}}
	const etl = "../../shared/fixtures/traces/perfview/net.4.5.2.x86.etl.zip"
	if _, err := os.Stat(etl); err == nil {
		cases = append(cases, tc{etl, Alloc}, tc{etl, Contention}, tc{etl, Exception})
	}
	for _, c := range cases {
		p, err := build(t, c.trace, Options{Kind: c.kind})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := p.WriteSpeedscope(&b); err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(&b)
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Errorf("%s %s: %v", filepath.Base(c.trace), c.kind, err)
		}
	}
	// The validator catches a broken file.
	bad, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[]},"profiles":[{"type":"sampled","unit":"furlongs"}]}`))
	if sch.Validate(bad) == nil {
		t.Error("a file with a bad unit validated")
	}
}

// writersAgree writes the profile as pprof (parsed back by pprof's own
// reader) and as speedscope, reads each back as folded stacks (function
// names joined root first, summed main values) and checks that both equal
// Folded: the same frames, the same process frames, the same totals. It
// returns the parsed pprof.
func writersAgree(t *testing.T, p *Profile) *profile.Profile {
	t.Helper()
	want := p.Folded()
	var pb bytes.Buffer
	if err := p.WritePprof(&pb); err != nil {
		t.Fatal(err)
	}
	pp, err := profile.Parse(&pb)
	if err != nil {
		t.Fatal(err)
	}
	if err := pp.CheckValid(); err != nil {
		t.Fatal(err)
	}
	vi := len(pp.SampleType) - 1
	fromPprof := map[string]int64{}
	for _, s := range pp.Sample {
		if s.Value[vi] == 0 {
			continue
		}
		var names []string
		for i := len(s.Location) - 1; i >= 0; i-- { // pprof lists the leaf first
			l := s.Location[i]
			if len(l.Line) != 1 {
				t.Fatalf("pprof location %d (%#x) has %d lines", l.ID, l.Address, len(l.Line))
			}
			names = append(names, l.Line[0].Function.Name)
		}
		fromPprof[strings.Join(names, ";")] += s.Value[vi]
	}
	if diff := cmp.Diff(want, fromPprof); diff != "" {
		t.Errorf("pprof's stacks differ from the folded ones (-folded +pprof):\n%s", diff)
	}
	var sb bytes.Buffer
	if err := p.WriteSpeedscope(&sb); err != nil {
		t.Fatal(err)
	}
	var f ssFile
	if err := json.Unmarshal(sb.Bytes(), &f); err != nil {
		t.Fatal(err)
	}
	fromSS := map[string]int64{}
	for _, pr := range f.Profiles {
		for i, s := range pr.Samples {
			var names []string
			for _, fi := range s {
				names = append(names, f.Shared.Frames[fi].Name)
			}
			fromSS[strings.Join(names, ";")] += pr.Weights[i]
		}
	}
	if diff := cmp.Diff(want, fromSS); diff != "" {
		t.Errorf("speedscope's stacks differ from the folded ones (-folded +speedscope):\n%s", diff)
	}
	return pp
}

// TestUnresolvedRuns: in a .NET Core 3.0 trace whose stacks are mostly
// addresses no method covers, each run of them is one ?!? frame, in
// every writer; the folded total stays the same.
func TestUnresolvedRuns(t *testing.T) {
	p, err := build(t, "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for stack, v := range p.Folded() {
		if strings.Contains(stack, "?!?;?!?") {
			t.Errorf("a run of unresolved frames: %s", stack)
		}
		total += v
	}
	var samples int64
	for _, s := range p.Samples {
		samples += s.Values[1]
	}
	if c := p.Map.Counts(); total != samples || c[symbols.NoMethod] != 505_490 || len(p.Folded()) != 36 {
		t.Errorf("folded total %d, samples %d, unresolved %d, %d stacks", total, samples, c[symbols.NoMethod], len(p.Folded()))
	}
	writersAgree(t, p)
}

// TestGivenMap: a profile built on a code map someone else keeps (a live
// collector's) resolves through it as one built on its own, and the
// trace's method events are not added to it.
func TestGivenMap(t *testing.T) {
	const name = "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"
	own, err := build(t, name, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The map a collector would have kept: every method of the trace.
	m := symbols.NewMap()
	r, err := trace.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	methods := m.Methods()
	given, err := build(t, name, Options{Map: m})
	if err != nil {
		t.Fatal(err)
	}
	if m.Methods() != methods || given.Map != m {
		t.Errorf("the given map went from %d to %d methods (profile's map %p, given %p)", methods, m.Methods(), given.Map, m)
	}
	if diff := cmp.Diff(own.Folded(), given.Folded()); diff != "" {
		t.Errorf("folded stacks (-own map +given map):\n%s", diff)
	}
	// An empty map given: nothing resolves to a method.
	empty, err := build(t, name, Options{Map: symbols.NewMap()})
	if err != nil {
		t.Fatal(err)
	}
	for stack := range empty.Folded() {
		if strings.Contains(stack, "System.") {
			t.Fatalf("a method resolved through an empty map: %s", stack)
		}
	}
}

// TestDurationIsTheTraces: every kind of profile of a trace has the
// trace's span, from its start (its first event, or the start the trace
// states where that is earlier: the 3.0 trace's is 18 ms before its
// first event) to its last event, whichever events made the samples and
// whichever processes are kept.
func TestDurationIsTheTraces(t *testing.T) {
	const etl = "../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip"
	const core30 = "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"
	for _, tc := range []struct {
		path  string
		kinds []Options
	}{
		{etl, []Options{{Kind: CPU}, {Kind: Alloc}, {Kind: Contention}, {Kind: Exception}, {Kind: CPU, PIDs: []int64{3988}}}},
		{core30, []Options{{Kind: CPU}, {Kind: Alloc}}},
	} {
		r, err := trace.Open(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		start := r.Info().StartTime.UnixNano()
		first, last := int64(math.MaxInt64), int64(math.MinInt64)
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			first, last = min(first, e.Time().UnixNano()), max(last, e.Time().UnixNano())
		}
		r.Close()
		start = min(start, first)
		for _, o := range tc.kinds {
			p, err := build(t, tc.path, o)
			if err != nil {
				t.Fatalf("%v: %v", o, err)
			}
			// Within a microsecond: Time is truncated to 100 ns ticks.
			if d := p.StartNanos - start; d < -1000 || d > 1000 {
				t.Errorf("%s %+v: start %d, the trace starts at %d", tc.path, o, p.StartNanos, start)
			}
			if d := p.StartNanos + p.DurationNanos - last; d < -1000 || d > 1000 {
				t.Errorf("%s %+v: ends %d ns after its last event", tc.path, o, d)
			}
		}
	}
}

// TestTypeLeaves: allocation samples end in the type they allocated
// ("Type System.String"), throws in the exception they threw
// ("Throw(System.IO.FileNotFoundException)"), as PerfView's stacks end;
// each type's bytes are its ticks' amounts, read from the events here.
func TestTypeLeaves(t *testing.T) {
	const core30 = "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"
	want := map[string]int64{}
	r, err := trace.Open(core30)
	if err != nil {
		t.Fatal(err)
	}
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev, err := e.Decode(); err == nil {
			if x, ok := ev.(clrevents.GCAllocationTickEvent); ok {
				f := x.GCAllocationTickFields()
				want["Type "+f.TypeName.String()] += int64(f.Amount())
			}
		}
	}
	r.Close()
	p, err := build(t, core30, Options{Kind: Alloc})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, s := range p.Samples {
		frames := p.Stacks.Frames(s.Stack)
		leaf := p.Map.Frame(frames[len(frames)-1])
		if leaf.Reason != symbols.Label {
			t.Fatalf("a sample ends in %s, not its type", leaf)
		}
		got[leaf.String()] += s.Values[1]
	}
	if len(want) < 10 || !maps.Equal(got, want) {
		t.Errorf("bytes by type:\n got %v\nwant %v", got, want)
	}
	p, err = build(t, "../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip", Options{Kind: Exception})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := p.WriteFolded(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), ";Throw(System.IO.FileNotFoundException) 1\n") {
		t.Errorf("exception profile:\n%s", b.String())
	}
}

// TestAllocSampledOverTicks: a process whose trace has both allocation
// events (the GC keyword at Verbose and .NET 10's AllocationSampling
// keyword) has its allocations counted once, from AllocationSampled, as
// the runtime's design doc asks of profilers: its GCAllocationTick events
// are left out, those before its first AllocationSampled and those after
// (they were summed with them, twice the bytes, and ticks counted as
// objects). A process with ticks alone keeps them. An ETW log's ticks
// left out stay out when their stack walks come.
func TestAllocSampledOverTicks(t *testing.T) {
	runtime := clrevents.ProviderRuntime.GUID()
	clr := func(info *clrevents.EventInfo, pid uint32, ts int64, payload []byte) []byte {
		return etltest.Event(runtime, info.ID, info.Version, uint8(info.Opcode), uint16(info.Task), 5, pid, ts, payload)
	}
	tick := func(pid uint32, ts int64, typ string) []byte {
		return clr((*clrevents.GCAllocationTickV4)(nil).Info(), pid, ts, (&clrevents.GCAllocationTickV4{AllocationAmount: 100_000,
			AllocationAmount64: 100_000, ClrInstanceID: 1, TypeName: clrimpl.UTF16Of(typ)}).Encode(nil, 8))
	}
	sampled := func(pid uint32, ts int64, typ string, size uint64) []byte {
		return clr((*clrevents.AllocationSampled)(nil).Info(), pid, ts, (&clrevents.AllocationSampled{ClrInstanceID: 1,
			TypeName: clrimpl.UTF16Of(typ), ObjectSize: size}).Encode(nil, 8))
	}
	walk := func(pid uint32, ts int64, frames ...uint64) []byte { // the stack of the event before it
		return clr((*clrevents.CLRStackWalk)(nil).Info(), pid, ts, kkpl().u16(1).u16(0).u32(uint32(len(frames))).ptrs(frames...))
	}
	b := NewBuilder(Options{Kind: Alloc}, 0, 10_000_000)
	feed(t, b,
		tick(10, 100, "System.String"),
		walk(10, 101, 0x10000010), // a tick taken back keeps out when its walk comes
		tick(20, 150, "System.Byte[]"),
		sampled(10, 200, "System.String", 100),
		tick(10, 300, "System.String"),
		sampled(10, 400, "System.Object", 24),
		tick(20, 500, "System.Byte[]"),
	)
	p, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	c1, n1 := upscale(100)
	c2, n2 := upscale(24)
	want := map[string][]int64{
		"process 10;Type System.String": {c1, n1},
		"process 10;Type System.Object": {c2, n2},
		"process 20;Type System.Byte[]": {2, 200_000},
	}
	got := map[string][]int64{}
	for stack, v := range p.Folded() {
		got[stack] = []int64{0, v}
	}
	for _, s := range p.Samples {
		frames := p.Stacks.Frames(s.Stack)
		k := p.procFrames().name(procKey{s.PID, s.ProcessStart}) + ";" + p.Map.Frame(frames[len(frames)-1]).String()
		got[k][0] += s.Values[0]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("allocations (-want +got):\n%s", diff)
	}
	if p.Events != 4 {
		t.Errorf("%d events made samples, want 4 (two AllocationSampled, two ticks)", p.Events)
	}
	writersAgree(t, p)
}

// TestSamplesByThread: Profile.Samples come by process, then thread, as
// documented (they came in order of first appearance: in the .NET Core
// 3.0 trace 58 of 149 adjacent pairs were out of that order, in the cut
// ETW log hundreds), and the order is the same from every reader order.
func TestSamplesByThread(t *testing.T) {
	// Each thread's samples keep their order (Stack numbers them here).
	b := NewBuilder(Options{}, 0, 1e9)
	b.threadKeys = []threadKey{{5, 9}, {5, 2}, {-1, 7}, {3, 100}}
	var in []Sample
	var threadOf []uint32
	for i, th := range []uint32{0, 1, 0, 2, 3, 1, 0, 3} {
		k := b.threadKeys[th]
		in = append(in, Sample{PID: k.pid, TID: k.tid, Stack: symbols.StackID(i)})
		threadOf = append(threadOf, th)
	}
	var got []string
	for _, s := range b.sortByThread(in, threadOf) {
		got = append(got, fmt.Sprintf("%d/%d:%d", s.PID, s.TID, s.Stack))
	}
	want := []string{"-1/7:3", "3/100:4", "3/100:7", "5/2:1", "5/2:5", "5/9:0", "5/9:2", "5/9:6"}
	if !slices.Equal(got, want) {
		t.Errorf("sortByThread: %v, want %v", got, want)
	}
	for _, c := range []struct {
		path string
		kind Kind
	}{
		{coreclr30, CPU},
		{coreclr30, Alloc},
		{"../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip", CPU},
		{"../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip", Contention},
	} {
		var first []Sample
		for _, order := range []trace.Order{trace.ThreadOrder, trace.TimeOrder} {
			r, err := trace.Open(c.path, trace.WithOrder(order))
			if err != nil {
				t.Fatal(err)
			}
			p, err := Build(r, Options{Kind: c.kind})
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
			threads := map[[2]int64]bool{}
			for i, s := range p.Samples {
				threads[[2]int64{s.PID, s.TID}] = true
				if i == 0 {
					continue
				}
				if q := p.Samples[i-1]; q.PID > s.PID || q.PID == s.PID && q.TID > s.TID {
					t.Fatalf("%s %v: sample %d (process %d, thread %d) after sample %d (process %d, thread %d)", c.path, c.kind, i, s.PID, s.TID, i-1, q.PID, q.TID)
				}
			}
			if len(threads) < 2 {
				t.Errorf("%s %v: %d threads: the test needs more", c.path, c.kind, len(threads))
			}
			if first == nil {
				first = p.Samples
			} else if diff := cmp.Diff(first, p.Samples); diff != "" {
				t.Errorf("%s %v: samples in %v order differ (-thread order +%v):\n%s", c.path, c.kind, order, order, diff)
			}
		}
	}
}

// TestThreadTimeStates: a CPU profile of SampleProfiler samples has their
// State, what the runtime said of the thread: a thread's samples of one
// stack are a Sample per state, each pprof sample has a label "state"
// (managed or external), and its values are "wall" time; the folded and
// speedscope outputs have the stacks as they were, one entry a thread's
// stack. An ETW log's kernel samples are CPU time, and have no state.
func TestThreadTimeStates(t *testing.T) {
	p, err := build(t, golden, Options{Kind: CPU})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.SampleTypes, ThreadTimeSampleTypes()) || p.SampleTypes[1] != (ValueType{"wall", "nanoseconds"}) {
		t.Errorf("sample types %v", p.SampleTypes)
	}
	// The trace's one thread: 5,564 samples, 5 of them External, each
	// right after a Managed one of the same stack; the first sample
	// counts no time.
	count := map[State]int64{}
	stacks := map[symbols.StackID][]State{}
	for _, s := range p.Samples {
		count[s.State] += s.Values[0]
		stacks[s.Stack] = append(stacks[s.Stack], s.State)
	}
	if count[StateExternal] != 5 || count[StateManaged] != 5_558 || len(count) != 2 {
		t.Errorf("samples by state %v, want 5 external and 5,558 managed", count)
	}
	split := 0
	for _, states := range stacks {
		if len(states) > 1 {
			split++
		}
	}
	if split == 0 {
		t.Errorf("no stack has samples in both states: the test needs one")
	}
	pp := writersAgree(t, p)
	labels := map[string]int64{}
	for _, s := range pp.Sample {
		if st := s.Label["state"]; len(st) != 1 {
			t.Errorf("pprof sample with state label %v", st)
		} else {
			labels[st[0]] += s.Value[0]
		}
	}
	if labels["external"] != 5 || labels["managed"] != 5_558 {
		t.Errorf("pprof samples by state label: %v", labels)
	}
	var sb bytes.Buffer
	if err := p.WriteSpeedscope(&sb); err != nil {
		t.Fatal(err)
	}
	var f ssFile
	if err := json.Unmarshal(sb.Bytes(), &f); err != nil {
		t.Fatal(err)
	}
	for _, pr := range f.Profiles {
		seen := map[string]bool{}
		for _, s := range pr.Samples {
			k := fmt.Sprint(s)
			if seen[k] {
				t.Errorf("speedscope profile %q lists stack %v twice", pr.Name, s)
			}
			seen[k] = true
		}
		if len(seen) != len(stacks) {
			t.Errorf("speedscope profile %q: %d stacks, want %d", pr.Name, len(seen), len(stacks))
		}
	}

	p, err = build(t, "../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip", Options{Kind: CPU})
	if err != nil {
		t.Fatal(err)
	}
	pp = p.Pprof()
	if pp.SampleType[1].Type != "cpu" || pp.PeriodType.Type != "cpu" {
		t.Errorf("ETW: sample type %v, period type %v; want cpu", pp.SampleType[1], pp.PeriodType)
	}
	for _, s := range pp.Sample {
		if s.Label["state"] != nil {
			t.Fatalf("ETW: a kernel sample with state %v", s.Label["state"])
		}
	}
}

// TestSampleTypes: a CPU profile from SampleProfiler samples counts them by
// type, what says it is threads' time; an ETW trace's kernel samples are
// CPU time and count none.
func TestSampleTypes(t *testing.T) {
	p, err := build(t, "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.ExternalSamples != 35159 || p.ManagedSamples != 2 {
		t.Errorf("external %d, managed %d; the trace has 35,159 and 2", p.ExternalSamples, p.ManagedSamples)
	}
	p, err = build(t, "../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.ExternalSamples != 0 || p.ManagedSamples != 0 {
		t.Errorf("ETW: external %d, managed %d", p.ExternalSamples, p.ManagedSamples)
	}
}

// TestOwnPackageFirst: a program that links a generated package of its
// own with the runtime's events, decoding before clrevents, gets the same
// profiles: the builder and its code map know the runtime's events as
// clrevents' types, which DecodeTypeIn finds whatever decodes first
// (before, every method event decoded as the other package's type, so
// no frame resolved, and no sample or allocation was one).
func TestOwnPackageFirst(t *testing.T) {
	own := tracetest.OwnPackage("own", func(*clrevents.EventInfo) bool { return true }, false)
	for _, c := range []struct {
		path string
		kind Kind
	}{
		{golden, CPU},
		{"../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip", Alloc},
		{"../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip", Contention},
		{"../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip", Exception},
	} {
		folded := func(opts ...trace.Option) []byte {
			r, err := trace.Open(c.path, opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			p, err := Build(r, Options{Kind: c.kind})
			if err != nil {
				t.Fatalf("%s %v: %v", c.path, c.kind, err)
			}
			var b bytes.Buffer
			if err := p.WriteFolded(&b); err != nil {
				t.Fatal(err)
			}
			return b.Bytes()
		}
		want := folded()
		got := folded(trace.WithEvents(own, clrevents.Table()))
		if !bytes.Equal(got, want) || len(want) == 0 {
			t.Errorf("%s %v: with a package of one's own first, %d bytes of folded stacks, want the %d of clrevents alone", c.path, c.kind, len(got), len(want))
		}
	}
}

// TestBuilderStart: a profile made with NewBuilder, Add and Finish starts
// at its earliest event's time (it started at 0, which pprof shows as
// 1970), in file order too, and lasts to its latest.
func TestBuilderStart(t *testing.T) {
	for _, order := range []trace.Order{trace.TimeOrder, trace.FileOrder} {
		r, err := trace.Open(golden, trace.WithOrder(order))
		if err != nil {
			t.Fatal(err)
		}
		info := r.Info()
		b := NewBuilder(Options{Kind: CPU}, info.SyncTimestamp, info.ClockFrequency)
		var earliest, latest time.Time
		for {
			e, err := r.Next()
			if err != nil {
				break
			}
			if earliest.IsZero() || e.Time().Before(earliest) {
				earliest = e.Time()
			}
			if e.Time().After(latest) {
				latest = e.Time()
			}
			b.Add(e)
		}
		r.Close()
		p, err := b.Finish()
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Duration(p.StartNanos - earliest.UnixNano()); d.Abs() > time.Microsecond {
			t.Errorf("%v order: StartNanos %d, the earliest event at %d", order, p.StartNanos, earliest.UnixNano())
		}
		if d := time.Duration(p.DurationNanos) - latest.Sub(earliest); d.Abs() > time.Microsecond {
			t.Errorf("%v order: DurationNanos %d, want %d", order, p.DurationNanos, latest.Sub(earliest))
		}
	}
}

// TestPeriod: an ETW log's CPU profile has the sampling interval its
// CollectionStart states as its period (pprof showed Period 0); an
// EventPipe trace's, whose samples are weighed by the time between them,
// has none.
func TestPeriod(t *testing.T) {
	for _, c := range []struct {
		path string
		want int64
	}{
		{"../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip", 1_000_000},
		{golden, 0},
	} {
		p, err := build(t, c.path, Options{Kind: CPU})
		if err != nil {
			t.Fatal(err)
		}
		if p.PeriodNanos != c.want {
			t.Errorf("%s: period %d ns, want %d", c.path, p.PeriodNanos, c.want)
		}
		if pp := p.Pprof(); pp.Period != c.want || pp.PeriodType == nil || pp.PeriodType.Unit != "nanoseconds" {
			t.Errorf("%s: pprof period %d %v, want %d nanoseconds", c.path, pp.Period, pp.PeriodType, c.want)
		}
	}
}

// TestManagedOnlyExternalGap: with ManagedOnly, the while between a
// thread's Managed sample and its External one goes to the managed stack
// it was seen in (PerfView's thread time), never to the External
// sample's stack; the while between External samples, and from an
// External sample to a Managed one, is left out.
func TestManagedOnlyExternalGap(t *testing.T) {
	b := NewBuilder(Options{Kind: CPU, ManagedOnly: true}, 0, 1e9)
	a, ext, c := []uint64{0xa1, 0xa2}, []uint64{0xb1}, []uint64{0xc1, 0xc2, 0xc3}
	for _, s := range []struct {
		ts  int64
		typ clrevents.SampleProfilerSampleType
		ips []uint64
	}{
		{1000, clrevents.SampleProfilerSampleTypeManaged, a},
		{2000, clrevents.SampleProfilerSampleTypeManaged, a},    // 1,000 ns on a
		{5000, clrevents.SampleProfilerSampleTypeExternal, ext}, // 3,000 ns on a, not ext
		{6000, clrevents.SampleProfilerSampleTypeExternal, ext}, // left out
		{8000, clrevents.SampleProfilerSampleTypeManaged, c},    // left out: it was outside managed code
		{8500, clrevents.SampleProfilerSampleTypeManaged, c},    // 500 ns on c
	} {
		if err := b.cpu(1, 2, s.ts, s.typ, s.ips, 0); err != nil {
			t.Fatal(err)
		}
	}
	p, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	// No method map names the frames, so every stack reads ?!?: the
	// states and the time tell the stacks' shares apart.
	var managed, samples int64
	for _, s := range p.Samples {
		if s.State != StateManaged {
			t.Errorf("a sample in state %v with %v: ManagedOnly puts no time on an External stack", s.State, s.Values)
		}
		samples += s.Values[0]
		managed += s.Values[1]
	}
	if managed != 4500 || samples != 3 {
		t.Errorf("%d ns in %d samples on managed stacks, want 4,500 ns (1,000 and 3,000 on the first, 500 on the last) in 3", managed, samples)
	}
}

// TestSampleAtOrigin: a thread's sample at the sync time itself (relative
// time 0) is its first, and the next one has the time since it. (Its
// time was taken for "no sample yet": the thread lost an interval.)
func TestSampleAtOrigin(t *testing.T) {
	for _, typ := range []clrevents.SampleProfilerSampleType{clrevents.SampleProfilerSampleTypeManaged, clrevents.SampleProfilerSampleTypeExternal} {
		for _, first := range []int64{1000, 1001} {
			b := NewBuilder(Options{Kind: CPU}, 1000, 1e9)
			for _, ts := range []int64{first, 2000, 3000, 4000} {
				if err := b.cpu(1, 2, ts, typ, []uint64{0x1234}, 0); err != nil {
					t.Fatal(err)
				}
			}
			p, err := b.Finish()
			if err != nil {
				t.Fatal(err)
			}
			var samples, wall int64
			for _, s := range p.Samples {
				samples += s.Values[0]
				wall += s.Values[1]
			}
			if want := 4000 - first; samples != 3 || wall != want {
				t.Errorf("%v, first sample at %d (sync time 1000): %d samples, %d ns; want 3 samples, %d ns", typ, first, samples, wall, want)
			}
		}
	}
}
