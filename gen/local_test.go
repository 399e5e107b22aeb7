package gen_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/clrgo/clrevents/gen"
	"github.com/clrgo/clrevents/schema"
)

// The shipped .NET 10 manifest, which clrgen's -schema takes too.
const net10Manifest = "../testdata/manifests/ClrEtwAll.runtime-main-net10.man.gz"

// loadNet10 reads the shipped .NET 10 manifest with the built-in extra
// providers and overrides, as clrevents is generated, and lets edit change
// it before it is lowered.
func loadNet10(t *testing.T, edit func(*schema.Schema)) *schema.Model {
	t.Helper()
	f, err := os.Open(net10Manifest)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	s, err := schema.Parse("ClrEtwAll.runtime-main-net10.man", data)
	if err != nil {
		t.Fatal(err)
	}
	x, err := schema.BuiltinExtra()
	if err != nil {
		t.Fatal(err)
	}
	s.Providers = append(s.Providers, x.Providers...)
	o, err := schema.BuiltinOverrides()
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Apply(s); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(s)
	}
	m, err := schema.Lower(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// addGCStartV3 adds version 3 of GCStart, as a newer runtime would: a copy
// of GCStart_V2's event and template with one more field, each beside
// GCStart_V2 in the manifest.
func addGCStartV3(t *testing.T, s *schema.Schema) {
	t.Helper()
	p := s.Provider("Microsoft-Windows-DotNETRuntime")
	if p == nil {
		t.Fatal("no runtime provider")
	}
	ti := slices.IndexFunc(p.Templates, func(tp *schema.Template) bool { return tp.TID == "GCStart_V2" })
	ei := slices.IndexFunc(p.Events, func(e *schema.Event) bool { return e.Symbol == "GCStart_V2" })
	if ti < 0 || ei < 0 {
		t.Fatalf("the manifest has no GCStart_V2 (template %d, event %d)", ti, ei)
	}
	tmpl := *p.Templates[ti]
	tmpl.TID = "GCStart_V3"
	tmpl.Fields = append(slices.Clone(tmpl.Fields), &schema.Field{Name: "GenerationMask", InType: "win:UInt32", Pos: tmpl.Pos})
	p.Templates = slices.Insert(p.Templates, ti+1, &tmpl)
	ev := *p.Events[ei]
	ev.Version, ev.Symbol, ev.Template = 3, "GCStart_V3", "GCStart_V3"
	p.Events = slices.Insert(p.Events, ei+1, &ev)
}

// TestLocalRegeneration generates the whole package from the .NET 10
// manifest into a directory, then again with GCStart_V3 added, and checks
// that the second generation rewrites at most 5 files: the event's own
// file, the event table, the families and the samples (and the enums it
// would touch, which GCStart_V3 does not). A table numbered across the
// package would shift every later event's index and rewrite most files.
func TestLocalRegeneration(t *testing.T) {
	cfg := gen.Config{Package: "clrevents", Sources: gen.Sources(net10Manifest, gen.BuiltinOverrides, gen.BuiltinExtra), Tests: true}
	before, err := gen.Generate(loadNet10(t, nil), cfg)
	if err != nil {
		t.Fatal(err)
	}
	after, err := gen.Generate(loadNet10(t, func(s *schema.Schema) { addGCStartV3(t, s) }), cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, _, err := gen.WriteDir(dir, before); err != nil {
		t.Fatal(err)
	}
	written, removed, err := gen.WriteDir(dir, after)
	if err != nil {
		t.Fatal(err)
	}
	changed := append(written, removed...)
	t.Logf("adding GCStart_V3 rewrites %d of %d generated files: %v", len(changed), len(after), changed)
	if len(changed) > 5 {
		t.Errorf("adding GCStart_V3 rewrites %d generated files, want at most 5: %v", len(changed), changed)
	}
	const own = "runtime_garbagecollection_gen.go"
	if !slices.Contains(changed, own) || !bytes.Contains(after[own], []byte("\ntype GCStartV3 struct {")) {
		t.Errorf("%s does not get the new type GCStartV3; rewritten: %v", own, changed)
	}
	if got, err := os.ReadFile(filepath.Join(dir, own)); err != nil || !bytes.Equal(got, after[own]) {
		t.Errorf("%s on disk is not the regenerated file (%v)", own, err)
	}
}
