package clrimpl

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// genOnlyMark is what the doc of every helper for generated code only says.
const genOnlyMark = "For generated code only"

// TestGeneratedOnlyMarked checks the split the package doc describes: every
// exported declaration in a genonly_*.go file says it is for generated code
// only, and no other declaration does.
func TestGeneratedOnlyMarked(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var marked, unmarked int
	check := func(file, name string, docs ...*ast.CommentGroup) {
		if !token.IsExported(name) {
			return
		}
		text := ""
		for _, d := range docs {
			text += d.Text()
		}
		genOnly := strings.HasPrefix(file, "genonly_")
		switch has := strings.Contains(text, genOnlyMark); {
		case genOnly && !has:
			t.Errorf("%s: %s is in a genonly file but its doc does not say %q", file, name, genOnlyMark)
		case !genOnly && has:
			t.Errorf("%s: %s says %q but is not in a genonly_*.go file", file, name, genOnlyMark)
		case has:
			marked++
		default:
			unmarked++
		}
	}
	for _, e := range entries {
		file := e.Name()
		if !strings.HasSuffix(file, ".go") || strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					check(file, d.Name.Name, d.Doc)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						check(file, s.Name.Name, d.Doc, s.Doc)
					case *ast.ValueSpec:
						for _, n := range s.Names {
							check(file, n.Name, d.Doc, s.Doc)
						}
					}
				}
			}
		}
	}
	if marked < 20 || unmarked < 20 {
		t.Errorf("%d declarations marked for generated code only, %d not: the files were not all read", marked, unmarked)
	}
}
