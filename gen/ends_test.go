package gen_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestFieldEndsOnce checks, over the committed clrevents package, that the
// tables of where fixed fields end (for the error of a short payload) are
// package variables made once per event or element type, in the file of
// that type, and that no function builds one as a literal on its error
// path.
func TestFieldEndsOnce(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(primitivesDir, "*_gen.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no generated files in %s: %v", primitivesDir, err)
	}
	isEnds := func(e ast.Expr) bool {
		at, ok := e.(*ast.ArrayType)
		if !ok || at.Len != nil {
			return false
		}
		sel, ok := at.Elt.(*ast.SelectorExpr)
		return ok && sel.Sel.Name == "FieldEnd"
	}
	fset := token.NewFileSet()
	tables, used := 0, map[string]int{}
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		types := map[string]bool{}
		var vars []string
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						types[s.Name.Name] = true
					case *ast.ValueSpec:
						for i, v := range s.Values {
							if cl, ok := v.(*ast.CompositeLit); ok && isEnds(cl.Type) {
								vars = append(vars, s.Names[i].Name)
							}
						}
					}
				}
			case *ast.FuncDecl:
				ast.Inspect(d.Body, func(n ast.Node) bool {
					switch n := n.(type) {
					case *ast.CompositeLit:
						if isEnds(n.Type) {
							t.Errorf("%s: %s builds a []FieldEnd literal", fset.Position(n.Pos()), d.Name.Name)
						}
					case *ast.Ident:
						if strings.HasPrefix(n.Name, "ends") {
							used[n.Name]++
						}
					}
					return true
				})
			}
		}
		for _, v := range vars {
			tables++
			if typ := strings.TrimPrefix(v, "ends"); !types[typ] {
				t.Errorf("%s: table %s is not beside the type %s", filepath.Base(name), v, typ)
			}
			if used[v] == 0 {
				t.Errorf("%s: table %s is declared but no decoder uses it", filepath.Base(name), v)
			}
		}
	}
	if tables < 100 {
		t.Errorf("%d FieldEnd tables in clrevents, want one per event type with fixed fields", tables)
	}
}
