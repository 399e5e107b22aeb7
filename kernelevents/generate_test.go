package kernelevents_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/clrgo/clrevents/gen"
)

// TestGeneratedUpToDate regenerates the package in memory from the
// checked-in kernel schema and fails if any file differs from what is
// committed.
func TestGeneratedUpToDate(t *testing.T) {
	const schemaPath = "../schema/kernel.yaml"
	m, err := gen.Load(schemaPath, "")
	if err != nil {
		t.Fatal(err)
	}
	files, err := gen.Generate(m, gen.Config{Package: "kernelevents", Sources: gen.Sources(schemaPath, ""), Tests: true, QuoteTextGUIDs: true})
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
				t.Errorf("%s is no longer generated; run go generate ./...", filepath.Join("kernelevents", e.Name()))
			}
		}
	}
}
