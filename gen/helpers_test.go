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
)

// primitivesDir holds the committed clrevents package (generated files,
// and the hand-written extras only it has).
const primitivesDir = "../clrevents"

// implDir is the support package every generated package imports.
const implDir = "../clrimpl"

// checkImplStdlib fails if the support package imports anything but the
// standard library: a generated package must need only it.
func checkImplStdlib(t *testing.T) {
	t.Helper()
	entries, err := os.ReadDir(implDir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	n := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		n++
		f, err := parser.ParseFile(fset, filepath.Join(implDir, name), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") {
				t.Fatalf("clrimpl/%s imports %s: the support package must use only the standard library", name, p)
			}
		}
	}
	if n == 0 {
		t.Fatalf("no files in %s", implDir)
	}
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
// package per entry of pkgs (directory → files). It requires this module
// (replaced by the checkout, so nothing is fetched) for the support package
// clrimpl, as a user's module requires it with go get.
func tempModule(t *testing.T, pkgs map[string]map[string][]byte) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command in PATH")
	}
	checkImplStdlib(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(p string, data []byte) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "go.mod"), []byte("module example.com/x\n\ngo "+goVersion(t)+
		"\n\nrequire github.com/clrgo/clrevents v0.0.0\n\nreplace github.com/clrgo/clrevents => "+root+"\n"))
	sum, err := os.ReadFile("../go.sum")
	if err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(dir, "go.sum"), sum)
	for pkg, files := range pkgs {
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
