package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestUserModule does what a user does, in a module of their own outside
// this repository: go run clrgen to generate a package of the runtime's GC
// events, then build and vet it and decode the GC events of a real trace
// with it. The module requires this one (replaced by the checkout, so
// nothing is fetched), as `go get github.com/clrgo/clrevents` would.
func TestUserModule(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: builds clrgen and a generated package in a new module")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command in PATH")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goVer := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(gomod)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, body string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/user\n\ngo "+string(goVer[1])+
		"\n\nrequire github.com/clrgo/clrevents v0.0.0\n\nreplace github.com/clrgo/clrevents => "+root+"\n")
	write("go.sum", string(sum))
	write("tools.go", "//go:build tools\n\npackage tools\n\nimport _ \"github.com/clrgo/clrevents/cmd/clrgen\"\n")
	// The user's program: read a real ETW trace with the format reader and
	// decode its runtime GC events with the generated package alone.
	write("main.go", `package main

import (
	"fmt"
	"io"
	"log"
	"os"

	"example.com/user/gcev"
	"github.com/clrgo/clrevents/etl"
)

func main() {
	r, err := etl.Open(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	dec := gcev.NewDecoder()
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		p, ok := gcev.ProviderByGUID(e.ProviderGUID)
		if !ok {
			continue
		}
		ev, _, err := dec.Decode(p, e.ID, e.Version, e.PointerSize, e.Payload)
		if err != nil {
			continue // not a GC event: the package holds only those
		}
		switch ev := ev.(type) {
		case gcev.GCStartEvent:
			f := ev.GCStartFields()
			fmt.Printf("GC %d gen %d %v\n", f.Count, f.Depth, f.Reason)
		case *gcev.GCHeapStatsV2:
			fmt.Printf("heap gen0 %d\n", ev.GenerationSize0)
		}
	}
}
`)
	run := func(args ...string) string {
		t.Helper()
		start := time.Now()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOPROXY=off", "GOWORK=off")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out.Bytes())
		}
		t.Logf("go %s: %v", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
		return out.String()
	}
	out := run("run", "github.com/clrgo/clrevents/cmd/clrgen", "generate",
		"-providers", "*DotNETRuntime", "-events", "GC*", "-package", "gcev", "-o", "./gcev", "-v")
	if !strings.Contains(out, "clrgen: package gcev: ") {
		t.Errorf("clrgen -v said %q", out)
	}
	run("build", "./...")
	run("vet", "./...")
	got := run("run", ".", filepath.Join(root, "testdata/traces/gcevents.etl.zip"))
	// TraceEvent's baseline of the trace: two induced GCs, of gen 1 and 2.
	for _, want := range []string{"GC 1 gen 1 Induced\n", "GC 2 gen 2 Induced\n", "heap gen0 584\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("the user's program printed:\n%s\nwant a line %q", got, want)
		}
	}
}
