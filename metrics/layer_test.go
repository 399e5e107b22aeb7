package metrics_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLayer: the package reads traces through the front door (trace,
// diagnostics' live streams), never through a format reader.
func TestLayer(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			switch path {
			case "github.com/clrgo/clrevents/nettrace", "github.com/clrgo/clrevents/etl":
				t.Errorf("%s imports %s: layer 4 and up read traces through package trace", f, path)
			}
		}
	}
}
