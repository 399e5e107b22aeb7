package trace_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// subsetProgram reads a trace through package trace and decodes its GC
// events with the tables of package gcev, imported from path: a package
// clrgen generated with only the runtime's GC events, or the full
// clrevents, which has the same names.
const subsetProgram = `package main

import (
	"fmt"
	"io"
	"log"
	"os"

	gcev %q
	"github.com/clrgo/clrevents/trace"
)

func main() {
	r, err := trace.Open(os.Args[1], trace.WithEvents(gcev.Table()))
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		ev, err := e.Decode()
		if err != nil {
			continue // not an event of the tables
		}
		switch ev := ev.(type) {
		case gcev.GCStartEvent:
			f := ev.GCStartFields()
			fmt.Printf("%%s GC %%d gen %%d %%v\n", e.Name(), f.Count, f.Depth, f.Reason)
		case *gcev.GCHeapStatsV2:
			fmt.Printf("heap gen0 %%d\n", ev.GenerationSize0)
		}
	}
}
`

// TestSubsetReader: a program that reads traces with package trace and
// decodes with a package clrgen generated for the runtime's GC events
// only (the README's gcev) links that package and not clrevents, decodes
// the GC events of a real trace as the same program with clrevents does,
// and is smaller than that program, plain and stripped (the sizes are
// logged: the README's "Generating a package of your own" quotes them).
func TestSubsetReader(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: generates a package and builds two programs in a new module")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command in PATH")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gorun := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		// The module's requirements come from the module cache this
		// test's own build filled; nothing is downloaded.
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local", "GOPROXY=off", "GOSUMDB=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	clrgen := filepath.Join(dir, "clrgen")
	build := exec.Command("go", "build", "-o", clrgen, "./cmd/clrgen")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/clrgen: %v\n%s", err, out)
	}
	gorun("mod", "init", "example.com/gcreader")
	gorun("mod", "edit", "-require", "github.com/clrgo/clrevents@v0.0.0", "-replace", "github.com/clrgo/clrevents="+root)
	gen := exec.Command(clrgen, "generate", "-providers", "*DotNETRuntime", "-events", "GC*", "-package", "gcev", "-o", "gcev")
	gen.Dir = dir
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("clrgen generate: %v\n%s", err, out)
	}
	programs := map[string]string{"subset": "example.com/gcreader/gcev", "full": "github.com/clrgo/clrevents/clrevents"}
	for name, pkg := range programs {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "main.go"), fmt.Appendf(nil, subsetProgram, pkg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gorun("mod", "tidy")

	deps := strings.Fields(gorun("list", "-deps", "./subset"))
	if !slices.Contains(deps, "example.com/gcreader/gcev") || !slices.Contains(deps, "github.com/clrgo/clrevents/trace") ||
		slices.Contains(deps, "github.com/clrgo/clrevents/clrevents") {
		t.Errorf("the subset reader should depend on gcev and trace, not on clrevents; go list -deps: %v", deps)
	}

	trace := filepath.Join(root, "testdata/traces/gcevents.etl.zip")
	sizes := map[string]int64{}
	var outs []string
	for _, name := range []string{"subset", "full"} {
		for _, stripped := range []bool{false, true} {
			exe := filepath.Join(dir, name+".exe")
			args := []string{"build", "-o", exe}
			key := name
			if stripped {
				args, key = append(args, "-ldflags=-s -w"), name+" stripped"
			}
			gorun(append(args, "./"+name)...)
			st, err := os.Stat(exe)
			if err != nil {
				t.Fatal(err)
			}
			sizes[key] = st.Size()
			if stripped {
				continue
			}
			var out bytes.Buffer
			run := exec.Command(exe, trace)
			run.Stdout, run.Stderr = &out, &out
			if err := run.Run(); err != nil {
				t.Fatalf("%s %s: %v\n%s", name, trace, err, out.String())
			}
			outs = append(outs, out.String())
		}
	}
	// TraceEvent's baseline of the trace: two induced GCs, of gen 1 and 2.
	for _, want := range []string{"GCStart_V2 GC 1 gen 1 Induced\n", "GCStart_V2 GC 2 gen 2 Induced\n", "heap gen0 584\n"} {
		if !strings.Contains(outs[0], want) {
			t.Errorf("the subset reader printed:\n%s\nwant a line %q", outs[0], want)
		}
	}
	if outs[0] != outs[1] {
		t.Errorf("the subset reader printed:\n%s\nthe full one:\n%s", outs[0], outs[1])
	}
	mb := func(n int64) string { return fmt.Sprintf("%.2f MB", float64(n)/1e6) }
	t.Logf("trace + gcev: %s (%s stripped); trace + clrevents: %s (%s stripped)",
		mb(sizes["subset"]), mb(sizes["subset stripped"]), mb(sizes["full"]), mb(sizes["full stripped"]))
	if sizes["subset"] >= sizes["full"] || sizes["subset stripped"] >= sizes["full stripped"] {
		t.Errorf("the subset reader is no smaller than the full one: %v", sizes)
	}
}
