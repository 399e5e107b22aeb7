package clrevents_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/clrgo/clrevents/gen"
)

// TestGeneratedUpToDate regenerates the package in memory from the checked-in
// schema and overrides and fails if any file differs from what is committed.
func TestGeneratedUpToDate(t *testing.T) {
	const schemaPath, extra, overrides = "../schema/clr.yaml", "../schema/extra.yaml", "../schema/overrides.yaml"
	m, err := gen.Load(schemaPath, overrides, extra)
	if err != nil {
		t.Fatal(err)
	}
	files, err := gen.Generate(m, gen.Config{Package: "clrevents", Sources: gen.Sources(schemaPath, overrides, extra), Tests: true})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(name)
		if err != nil || string(got) != string(want) {
			t.Errorf("stale generated files (%s); run go generate ./...", name)
		}
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if gen.IsGenerated(e.Name()) {
			if _, ok := files[e.Name()]; !ok {
				t.Errorf("%s is no longer generated; run go generate ./...", filepath.Join("clrevents", e.Name()))
			}
		}
	}
}
