package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// readmeSection returns the text of the README section "## title", up to
// the next section of the same level.
func readmeSection(t *testing.T, readme, title string) string {
	t.Helper()
	_, rest, ok := strings.Cut(readme, "\n## "+title+"\n")
	if !ok {
		t.Fatalf("README.md has no section %q", title)
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// readmeCommands returns the go commands a section shows as indented
// code ("    go get …"), in order, as argument lists. They are run without a
// shell, so a quote in one is an error: the README and the test would
// read it differently.
func readmeCommands(t *testing.T, section string) [][]string {
	t.Helper()
	var cmds [][]string
	for _, l := range strings.Split(section, "\n") {
		line, ok := strings.CutPrefix(l, "    go ")
		if !ok {
			continue
		}
		if strings.ContainsAny(line, `'"\#$`) {
			t.Fatalf("README command %q needs a shell; this test runs commands without one", l)
		}
		cmds = append(cmds, strings.Fields(line))
	}
	return cmds
}

// goRunner runs go commands in a user's module. The go command gets what
// a user's has by default: no -mod=mod, which would add missing go.sum
// entries on the fly and so hide the very failure this is about.
// Modules come from the module cache the test's own build filled
// (GOPROXY=off, GOSUMDB=off: go.sum lines are computed from the cache);
// only a step the cache cannot serve is retried with the test's own
// GOPROXY and GOSUMDB. (GOPROXY=off rather than the proxy because a proxy
// that answers a module path that does not exist with anything but 404
// or 410 fails go get: go get -tool asks for
// github.com/clrgo/clrevents/cmd/clrgen as a module path too.)
type goRunner struct {
	t   *testing.T
	dir string
}

func (g goRunner) env(online bool) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GOFLAGS", "GOWORK", "GOTOOLCHAIN":
			continue
		case "GOPROXY", "GOSUMDB":
			if !online {
				continue
			}
		}
		env = append(env, kv)
	}
	env = append(env, "GOFLAGS=-mod=readonly", "GOWORK=off", "GOTOOLCHAIN=local")
	if !online {
		env = append(env, "GOPROXY=off", "GOSUMDB=off")
	}
	return env
}

// run runs go with args and returns its output and error.
func (g goRunner) run(args ...string) (string, error) {
	g.t.Helper()
	start := time.Now()
	out, err := g.exec(false, args)
	if err != nil && strings.Contains(out, "GOPROXY=off") {
		g.t.Logf("go %s: the module cache lacks a module; retrying with GOPROXY=%s", strings.Join(args, " "), os.Getenv("GOPROXY"))
		out, err = g.exec(true, args)
	}
	g.t.Logf("go %s: %v", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	return out, err
}

func (g goRunner) exec(online bool, args []string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = g.dir
	cmd.Env = g.env(online)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// must runs go with args and fails the test if it fails.
func (g goRunner) must(args ...string) string {
	g.t.Helper()
	out, err := g.run(args...)
	if err != nil {
		g.t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// newUserModule makes an empty module example.com/user whose requirement
// on this one is replaced by the checkout, as a user's would be by the
// published module.
func newUserModule(t *testing.T, root string) goRunner {
	t.Helper()
	g := goRunner{t: t, dir: t.TempDir()}
	g.must("mod", "init", "example.com/user")
	g.must("mod", "edit", "-replace", "github.com/clrgo/clrevents="+root)
	return g
}

// TestREADMEUserModule does what README.md tells a user to do, with the
// commands and the go:generate file taken from the README itself, in a
// module of their own outside this repository: go get the module
// ("Using the packages"), make clrgen a tool with go get -tool, write the
// README's gcev/gen.go, go generate ("Generating a package of your own"),
// then build, vet and run the tests it generated, and decode the GC events
// of a real trace with the generated package. It also checks that the flow the README showed before
// Go 1.24's tools (go run of clrgen after go get of the module) fails here
// as it did for users, so that this environment is a user's.
func TestREADMEUserModule(t *testing.T) {
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
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	using := readmeSection(t, string(readme), "Using the packages")
	ownPkg := readmeSection(t, string(readme), "Generating a package of your own")

	// The commands the README shows, in the order a user meets them.
	var gets, installs [][]string
	for _, c := range readmeCommands(t, using) {
		switch c[0] {
		case "get":
			gets = append(gets, c)
		case "install":
			installs = append(installs, c)
		default:
			t.Errorf("Using the packages: unexpected command go %s", strings.Join(c, " "))
		}
	}
	if len(gets) != 1 || strings.Join(gets[0], " ") != "get github.com/clrgo/clrevents@latest" {
		t.Errorf("Using the packages: go get commands %q, want go get github.com/clrgo/clrevents@latest", gets)
	}
	steps := readmeCommands(t, ownPkg)
	var joined []string
	for _, s := range steps {
		joined = append(joined, strings.Join(s, " "))
	}
	if strings.Join(joined, "; ") != "get -tool github.com/clrgo/clrevents/cmd/clrgen@latest; generate ./..." {
		t.Fatalf("Generating a package of your own: commands %q, want go get -tool …/cmd/clrgen@latest, then go generate ./...", joined)
	}
	// The file the README says to write, and where.
	m := regexp.MustCompile("`(\\w+/\\w+\\.go)`:\n\n```go\n((?s:.*?))```\n").FindStringSubmatch(ownPkg)
	if m == nil {
		t.Fatal("Generating a package of your own: no `dir/file.go`: followed by a ```go block")
	}
	genPath, genFile := m[1], m[2]
	if !strings.Contains(genFile, "//go:generate go tool clrgen generate ") {
		t.Fatalf("%s in the README has no //go:generate go tool clrgen line:\n%s", genPath, genFile)
	}

	// go install …@latest cannot run against a checkout; check that what it
	// names are this module's commands.
	for _, c := range installs {
		for _, a := range c[1:] {
			p, ok := strings.CutPrefix(strings.TrimSuffix(a, "@latest"), "github.com/clrgo/clrevents/")
			if !ok || !strings.HasSuffix(a, "@latest") {
				t.Errorf("go install %s: not a package@latest of this module", a)
				continue
			}
			src, err := os.ReadFile(filepath.Join(root, p, "main.go"))
			if err != nil || !bytes.Contains(src, []byte("\npackage main\n")) {
				t.Errorf("go install %s: %s is not a command of this module (%v)", a, p, err)
			}
		}
	}

	g := newUserModule(t, root)
	for _, c := range gets {
		g.must(c...)
	}
	g.must(steps[0]...) // go get -tool
	p := filepath.Join(g.dir, genPath)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(genFile), 0o644); err != nil {
		t.Fatal(err)
	}
	// The user's program: read a real ETW trace with the format reader
	// and decode its runtime GC events with the generated package alone.
	if err := os.WriteFile(filepath.Join(g.dir, "main.go"), []byte(userProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	g.must(steps[1]...) // go generate ./...
	gomod, err := os.ReadFile(filepath.Join(g.dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(gomod, []byte("\ntool github.com/clrgo/clrevents/cmd/clrgen\n")) {
		t.Errorf("go.mod does not record clrgen as a tool:\n%s", gomod)
	}
	if entries, _ := filepath.Glob(filepath.Join(g.dir, "gcev", "*_gen.go")); len(entries) < 4 {
		t.Fatalf("go generate made %d files in gcev", len(entries))
	}
	g.must("build", "./...")
	g.must("vet", "./...")
	// The tests -tests wrote: they run, and check every event type.
	if !strings.Contains(genFile, " -tests ") {
		t.Errorf("%s in the README does not pass -tests", genPath)
	}
	if out := g.must("test", "-v", "-run", "^TestSamples$", "-bench", ".", "-benchtime", "1x", "./gcev"); !strings.Contains(out, "--- PASS: TestSamples") || !strings.Contains(out, "BenchmarkSamplesDecode") {
		t.Errorf("go test ./gcev: the generated test or benchmark did not run:\n%s", out)
	}
	// The README's size claim: a program that reads with etl and decodes
	// with its own generated package does not link the full clrevents.
	deps := strings.Fields(g.must("list", "-deps", "."))
	if !slices.Contains(deps, "example.com/user/gcev") || slices.Contains(deps, "github.com/clrgo/clrevents/clrevents") {
		t.Errorf("the user's program should depend on gcev and not on clrevents; go list -deps: %v", deps)
	}
	got := g.must("run", ".", filepath.Join(root, "testdata/traces/gcevents.etl.zip"))
	// The README's count of event types, and TraceEvent's baseline of the
	// trace: two induced GCs, of gen 1 and 2.
	n := regexp.MustCompile("`gcev` holds those (\\d+) event types").FindStringSubmatch(ownPkg)
	if n == nil {
		t.Fatal("Generating a package of your own: no \"`gcev` holds those N event types\"")
	}
	for _, want := range []string{"event types " + n[1] + "\n", "GC 1 gen 1 Induced\n", "GC 2 gen 2 Induced\n", "heap gen0 584\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("the user's program printed:\n%s\nwant a line %q", got, want)
		}
	}

	// The flow the README showed before: it must fail here as it did for
	// users, or this test would not catch it.
	old := newUserModule(t, root)
	old.must("get", "github.com/clrgo/clrevents@latest")
	out, err := old.run("run", "github.com/clrgo/clrevents/cmd/clrgen", "list", "-name", "GCStart")
	if err == nil || !strings.Contains(out, "missing go.sum entry") {
		t.Errorf("go run …/cmd/clrgen without go get -tool: %v, %q; a user's go command reports a missing go.sum entry, so this environment differs from theirs", err, out)
	}
}

const userProgram = `package main

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
	fmt.Println("event types", len(gcev.Events()))
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
`
