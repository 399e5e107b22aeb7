package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"
)

const pyroscope = "../../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread"

func sortedLines(s string) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	sort.Strings(ls)
	return strings.Join(ls, "\n")
}

func TestProfileFolded(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-profile", "cpu", "-format", "folded"}, ".txt"},
		{[]string{"-profile", "cpu"}, ".txt"},
		{[]string{"-profile", "cpu", "-managed-only"}, "-managed-only.txt"},
	} {
		out, errs, code := dump(t, append(c.args, pyroscope+".golden.nettrace")...)
		// The one note: the SampleProfiler's samples are threads' time
		// (5 of this CPU-bound thread's were outside managed code).
		if code != exitOK || errs != "clrdump: "+pyroscope+".golden.nettrace: thread time, not CPU time: the runtime samples every managed thread, running or waiting; 5 of the 5,564 samples are of threads outside managed code (in native code, or waiting)\n" {
			t.Fatalf("%v: exit %d, stderr %q", c.args, code, errs)
		}
		want, err := os.ReadFile(pyroscope + c.want)
		if err != nil {
			t.Fatal(err)
		}
		if sortedLines(out) != sortedLines(string(want)) {
			t.Errorf("%v:\n%s\nwant:\n%s", c.args, out, want)
		}
	}
}

func TestProfilePprofAndSpeedscope(t *testing.T) {
	dir := t.TempDir()
	pb := filepath.Join(dir, "cpu.pb.gz")
	if _, errs, code := dump(t, "-profile", "cpu", "-format", "pprof", "-o", pb, pyroscope+".golden.nettrace"); code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	f, err := os.Open(pb)
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, s := range p.Sample {
		total += s.Value[1]
	}
	if total != 11217349+1639660012+11253402+6511759978 {
		t.Errorf("pprof total %d", total)
	}
	if goBin, err := exec.LookPath("go"); err == nil {
		if out, err := exec.Command(goBin, "tool", "pprof", "-top", pb).CombinedOutput(); err != nil {
			t.Errorf("go tool pprof: %v\n%s", err, out)
		}
	}
	out, errs, code := dump(t, "-profile", "cpu", "-format", "speedscope", pyroscope+".golden.nettrace")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var ss struct {
		Schema   string `json:"$schema"`
		Profiles []struct{ Type string }
	}
	if err := json.Unmarshal([]byte(out), &ss); err != nil || ss.Schema == "" || len(ss.Profiles) == 0 || ss.Profiles[0].Type != "sampled" {
		t.Errorf("speedscope: %v %+v", err, ss)
	}
}

func TestProfileErrors(t *testing.T) {
	tr := pyroscope + ".golden.nettrace"
	for _, c := range []struct {
		args []string
		code int
		errs string
	}{
		{[]string{"-profile", "heap", tr}, exitUsage, "unknown profile"},
		{[]string{"-profile", "cpu", "-format", "text", tr}, exitUsage, "want pprof, folded or speedscope"},
		{[]string{"-profile", "cpu", "-format", "pprof", tr}, exitUsage, "-o FILE"},
		{[]string{"-profile", "alloc", "-managed-only", tr}, exitUsage, "-managed-only goes with -profile cpu"},
		{[]string{"-managed-only", tr}, exitUsage, "-managed-only goes with -profile cpu"},
		{[]string{"-o", "x", "-format", "jsonl", tr}, exitUsage, "-o goes with -profile, -report or -format parquet"},
		{[]string{"-profile", "exception", tr}, exitError, "no ExceptionThrown events; enable"},
		{[]string{"-profile", "cpu", "-pid", "1", tr}, exitError, "no usable events for the cpu profile of process 1: the trace has them only for process 55960 (5564 events)"},
		{[]string{"-profile", "cpu", "-pid", "0", tr}, exitError, "of process 0: the trace has them only for process 55960"},
		{[]string{"-profile", "cpu", "no-such-file.nettrace"}, exitError, "no-such-file.nettrace"},
		// The output's folder is checked before the trace is read.
		{[]string{"-profile", "cpu", "-format", "pprof", "-o", "no-such-dir/cpu.pb.gz", tr}, exitError, "-o no-such-dir/cpu.pb.gz: stat no-such-dir: no such file or directory"},
		{[]string{"-report", "gc", "-o", ".", gcETL}, exitError, "-o .: is a directory"},
	} {
		_, errs, code := dump(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.errs) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.args, code, errs, c.code, c.errs)
		}
	}
	// -o - is standard output.
	if out, _, code := dump(t, "-profile", "cpu", "-o", "-", tr); code != exitOK || !strings.Contains(out, ";") {
		t.Errorf("-o -: exit %d, stdout %q", code, out)
	}
	// The error names the trace.
	if _, errs, _ := dump(t, "-profile", "contention", tr); !strings.Contains(errs, "single-thread.golden.nettrace") {
		t.Errorf("error does not name the trace: %q", errs)
	}
}

// TestProfileETWKernel: the CPU profile of an ETW log comes from the
// kernel's samples: the .NET process of the 4.5.2 trace, with managed
// frames resolved, native ones named by module, and the note on stderr;
// -managed-only keeps the samples in managed code.
func TestProfileETWKernel(t *testing.T) {
	const etl = "../../../shared/fixtures/traces/perfview/net.4.5.2.x86.etl.zip"
	if _, err := os.Stat(etl); err != nil {
		t.Skip("shared traces absent (../shared beside the checkout)")
	}
	total := func(folded string) int64 {
		var n int64
		for _, l := range strings.Split(strings.TrimSpace(folded), "\n") {
			v, err := strconv.ParseInt(l[strings.LastIndexByte(l, ' ')+1:], 10, 64)
			if err != nil {
				t.Fatalf("line %q: %v", l, err)
			}
			n += v
		}
		return n
	}
	out, errs, code := dump(t, "-profile", "cpu", "-pid", "3644", etl)
	if code != exitOK || !strings.Contains(errs, ": 73,604 of 101,868 frames: native code, named by its module only; 5 of 101,868 frames: no method covers the address\n") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if strings.Contains(out, "Test.x86.exe (3644)") {
		t.Errorf("one process, yet stacks start with it:\n%.500s", out)
	}
	for _, want := range []string{";clr!?;", "Test.x86!Test.Program.Main(class System.String[]);mscorlib!System.DateTime.get_UtcNow()", "ntoskrnl!?"} {
		if !strings.Contains(out, want) {
			t.Errorf("no stack holds %q", want)
		}
	}
	managed, _, code := dump(t, "-profile", "cpu", "-managed-only", "-pid", "3644", etl)
	all, m := total(out), total(managed)
	if code != exitOK || m <= 0 || m >= all || all%1_000_000 != 0 {
		t.Errorf("exit %d: %d ns in all, %d managed", code, all, m)
	}
	for _, l := range strings.Split(strings.TrimSpace(managed), "\n") {
		stack := l[:strings.LastIndexByte(l, ' ')]
		if leaf := stack[strings.LastIndexByte(stack, ';')+1:]; strings.HasSuffix(leaf, "!?") {
			t.Errorf("-managed-only kept a native leaf: %s", l)
		}
	}
}

// TestProfileETWAllProcesses: without -pid, the CPU profile of an ETW log
// holds every process, and each of the three formats starts every stack
// with its process, so that the idle processors read as idle; pprof names
// no main binary. On the cut of the 4.5.2 log shipped in testdata, and on
// the whole log in ../shared.
func TestProfileETWAllProcesses(t *testing.T) {
	procRoot := regexp.MustCompile(`^(\S+ \(\d+\)|process \d+|process unknown)$`)
	roots, top := rootsByFormat(t, "../../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip")
	for format, r := range roots {
		if diff := cmp.Diff(roots["folded"], r); diff != "" {
			t.Errorf("%s's roots differ from folded's (-folded +%s):\n%s", format, format, diff)
		}
		for root := range r {
			if !procRoot.MatchString(root) {
				t.Errorf("%s: a stack starts with %q", format, root)
			}
		}
	}
	if roots["folded"]["PerfView.exe (3988)"] == 0 || len(roots["folded"]) < 3 || bytes.Contains(top, []byte("File:")) {
		t.Errorf("roots %v\ngo tool pprof -top:\n%s", roots["folded"], top)
	}
	const etl = "../../../shared/fixtures/traces/perfview/net.4.5.2.x86.etl.zip"
	if _, err := os.Stat(etl); err != nil {
		t.Skip("shared traces absent (../shared beside the checkout)")
	}
	roots, top = rootsByFormat(t, etl)
	for format, r := range roots {
		if r["Idle (0)"] != 82_128e6 || r["Test.x86.exe (3644)"] != 4_900e6 || r["ntoskrnl!?"] != 0 || len(r) < 10 {
			t.Errorf("%s: CPU time by root frame %v", format, r)
		}
	}
	// The header names no driver as the main binary, and the idle process
	// holds its 92%.
	if top != nil && (bytes.Contains(top, []byte("File:")) || !regexp.MustCompile(`(?m)^\s+0\s+0%\s+\S+\s+82128ms 92\.48%  Idle \(0\)$`).Match(top)) {
		t.Errorf("go tool pprof -top:\n%s", top)
	}
}

// rootsByFormat writes the CPU profile of a trace as folded stacks, pprof
// and speedscope, and sums each format's main value by the root frame of
// its stacks. It also returns go tool pprof -top's output, nil without a
// go command.
func rootsByFormat(t *testing.T, trace string) (map[string]map[string]int64, []byte) {
	t.Helper()
	roots := map[string]map[string]int64{"folded": {}, "pprof": {}, "speedscope": {}}
	out, errs, code := dump(t, "-profile", "cpu", trace)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		stack, v := l[:strings.LastIndexByte(l, ' ')], l[strings.LastIndexByte(l, ' ')+1:]
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		root, _, _ := strings.Cut(stack, ";")
		roots["folded"][root] += n
	}
	pb := filepath.Join(t.TempDir(), "cpu.pb.gz")
	if _, errs, code := dump(t, "-profile", "cpu", "-format", "pprof", "-o", pb, trace); code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	f, err := os.Open(pb)
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Sample {
		name := "" // an unresolved location without a function
		if l := s.Location[len(s.Location)-1]; len(l.Line) > 0 {
			name = l.Line[0].Function.Name
		}
		if s.Value[1] != 0 {
			roots["pprof"][name] += s.Value[1]
		}
	}
	if p.Mapping[0].File != "" {
		t.Errorf("pprof's main binary is %q in a profile of several processes", p.Mapping[0].File)
	}
	ssOut, errs, code := dump(t, "-profile", "cpu", "-format", "speedscope", trace)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var ss struct {
		Shared   struct{ Frames []struct{ Name string } }
		Profiles []struct {
			Samples [][]int
			Weights []int64
		}
	}
	if err := json.Unmarshal([]byte(ssOut), &ss); err != nil {
		t.Fatal(err)
	}
	for _, pr := range ss.Profiles {
		for i, s := range pr.Samples {
			roots["speedscope"][ss.Shared.Frames[s[0]].Name] += pr.Weights[i]
		}
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return roots, nil
	}
	top, err := exec.Command(goBin, "tool", "pprof", "-top", pb).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof: %v\n%s", err, top)
	}
	return roots, top
}

// TestProfileUnresolvedRuns: a .NET Core 3.0 trace whose stacks are
// mostly addresses no method covers: each run of them is one ?!? frame,
// and the note says how many frames there were.
func TestProfileUnresolvedRuns(t *testing.T) {
	const tr = "../../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"
	out, errs, code := dump(t, "-profile", "cpu", tr)
	if code != exitOK || !strings.Contains(errs, ".nettrace: 505,490 of 539,860 frames: no method covers the address (the trace holds no rundown, which lists the methods compiled before it began)\n") ||
		!strings.HasSuffix(errs, "35,159 of the 35,161 samples are of threads outside managed code (in native code, or waiting)\n") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if strings.Contains(out, "?!?;?!?") || !strings.HasPrefix(out, "?!? ") {
		t.Errorf("folded:\n%.1000s", out)
	}
}
