package gen_test

import (
	"bytes"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/gen"
)

// primitivesDir holds the hand-written half of the generated package.
const primitivesDir = "../clrevents"

// notPrimitives are hand-written files of clrevents that build on specific
// generated types (the families of the real schema), so they belong to the
// clrevents package only, not beside every generated package.
var notPrimitives = []string{
	"derived.go", // derived values as methods of MethodLoadUnloadVerboseFields, GCHeapStatsFields, …
}

// primitives returns the hand-written files of the clrevents package (not
// *_gen.go, not tests, not notPrimitives), which every generated package
// needs beside it. It
// fails if one of them imports anything but the standard library, since the
// temporary modules built from them have no network and no requirements.
func primitives(t *testing.T) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(primitivesDir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	fset := token.NewFileSet()
	skip := map[string]bool{}
	for _, n := range notPrimitives {
		if _, err := os.Stat(filepath.Join(primitivesDir, n)); err != nil {
			t.Fatalf("notPrimitives names %s: %v; drop it from the list", n, err)
		}
		skip[n] = true
	}
	for _, e := range entries {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") || gen.IsGenerated(n) || skip[n] {
			continue
		}
		src, err := os.ReadFile(filepath.Join(primitivesDir, n))
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, n, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") {
				t.Fatalf("%s imports %s: the primitives must use only the standard library", n, p)
			}
		}
		out[n] = src
	}
	if len(out) == 0 {
		t.Fatalf("no hand-written files in %s", primitivesDir)
	}
	return out
}

// goVersion is the go directive of this module, for the temporary modules.
func goVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("../go.mod has no go directive")
	}
	return string(m[1])
}

// tempModule makes a module example.com/x in a temporary directory with one
// package per entry of pkgs (directory → files), each holding the
// hand-written primitives and the given files.
func tempModule(t *testing.T, pkgs map[string]map[string][]byte) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command in PATH")
	}
	dir := t.TempDir()
	prims := primitives(t)
	write := func(p string, data []byte) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "go.mod"), []byte("module example.com/x\n\ngo "+goVersion(t)+"\n"))
	for pkg, files := range pkgs {
		for n, src := range prims {
			write(filepath.Join(dir, pkg, n), src)
		}
		for n, src := range files {
			write(filepath.Join(dir, pkg, n), src)
		}
	}
	return dir
}

// goCmd runs the go command in dir, offline, and fails with its output if it
// does not succeed.
func goCmd(t *testing.T, dir string, args ...string) {
	t.Helper()
	start := time.Now()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOPROXY=off", "GOWORK=off")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out.Bytes())
	}
	t.Logf("go %s: %v\n%s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond), out.Bytes())
}
