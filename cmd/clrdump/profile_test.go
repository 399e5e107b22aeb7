package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

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
		if code != exitOK || errs != "" {
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
		{[]string{"-managed-only", tr}, exitUsage, "go with -profile"},
		{[]string{"-profile", "exception", tr}, exitError, "no ExceptionThrown events; enable"},
		{[]string{"-profile", "cpu", "-pid", "1", tr}, exitError, "enable the Microsoft-DotNETCore-SampleProfiler provider"},
		{[]string{"-profile", "cpu", "no-such-file.nettrace"}, exitError, "no-such-file.nettrace"},
	} {
		_, errs, code := dump(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.errs) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.args, code, errs, c.code, c.errs)
		}
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
	if code != exitOK || !strings.Contains(errs, "frames in native images, named by module only") {
		t.Fatalf("exit %d, stderr %q", code, errs)
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
