package gen_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/gen"
)

// TestGeneratedHeader checks that every generated file of clrevents carries
// the standard header that go/ast.IsGenerated (and with it gopls and the
// linters) recognises, kept apart from the package doc, and followed by the
// regenerate hint.
func TestGeneratedHeader(t *testing.T) {
	entries, err := os.ReadDir(primitivesDir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	n := 0
	for _, e := range entries {
		name := e.Name()
		if !gen.IsGenerated(name) {
			continue
		}
		n++
		path := filepath.Join(primitivesDir, name)
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			t.Fatal(err)
		}
		if !ast.IsGenerated(f) {
			t.Errorf("%s: ast.IsGenerated is false", name)
		}
		if f.Doc != nil && strings.Contains(f.Doc.Text(), "DO NOT EDIT") {
			t.Errorf("%s: the header is part of the package doc", name)
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		h := gen.Header("clr.yaml, extra.yaml and overrides.yaml", "go generate")
		want := "// " + strings.Join(h, "\n// ") + "\n"
		if !strings.HasPrefix(string(src), want) {
			t.Errorf("%s does not start with\n%s", name, want)
		}
	}
	if n == 0 {
		t.Fatalf("no generated files in %s", primitivesDir)
	}
}
