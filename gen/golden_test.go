package gen_test

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/clrgo/clrevents/gen"
	"github.com/clrgo/clrevents/schema"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenCases are the directories of gen/testdata, one construct each.
var goldenCases = []string{
	"fixed",           // fixed fields only, every fixed-size inType, no payload
	"trailing_string", // UnicodeString and AnsiString at the end and in the middle
	"pointer",         // win:Pointer fields, a pointer after a string
	"counted_array",   // count= scalar arrays, pointer array, literal counts
	"shared_count",    // two arrays counted by one field, not adjacent
	"struct_variable", // struct array with a string and a counted array per element
	"struct_fixed",    // struct array of fixed elements holding pointers
	"struct_aligned",  // struct elements with C natural alignment (padding only at 8-byte pointers)
	"struct_shared",   // newer versions (and an event sharing a template) carrying the same struct: aliases of the older types
	"binary_length",   // win:Binary with length=, UnicodeString with length=
	"versions",        // V0 → V1 → V2 of one event
	"map_two_intypes", // one valueMap read as UInt8 and UInt32; a bitMap
	"family",          // two versions and a rundown event sharing a template key: optional, widened, left-out and map-typed fields, kinds
	"kernel",          // the kernel's MOF classes: shown names, show, ports, addresses, FILETIME, SizeT, a SID, a padded array, a rest array
}

const goldenExt = ".golden"

// generateCase generates the package of one golden case, samples included.
func generateCase(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	m, err := gen.Load(filepath.Join(dir, "schema.yaml"), "")
	if err != nil {
		t.Fatal(err)
	}
	files, err := gen.Generate(m, gen.Config{Package: "clrevents", Sources: "schema.yaml", Tests: true})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestGolden compares what each case's schema generates with its golden
// files; -update rewrites them (and removes goldens no longer generated).
func TestGolden(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c, func(t *testing.T) {
			dir := filepath.Join("testdata", c)
			files := generateCase(t, dir)
			for _, n := range sortedKeys(files) {
				golden := filepath.Join(dir, n+goldenExt)
				if *update {
					writeIfChanged(t, golden, files[n])
					continue
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Errorf("%s is generated but has no golden file (%v); run go test ./gen/ -run TestGolden -update", n, err)
					continue
				}
				if diff := cmp.Diff(lines(string(want)), lines(string(files[n]))); diff != "" {
					t.Errorf("%s differs from %s (-golden +generated):\n%s\nIf the change is intended, run go test ./gen/ -run TestGolden -update and review the diff.", n, golden, diff)
				}
			}
			goldens, err := filepath.Glob(filepath.Join(dir, "*"+goldenExt))
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range goldens {
				n := strings.TrimSuffix(filepath.Base(g), goldenExt)
				if _, ok := files[n]; ok {
					continue
				}
				if *update {
					if err := os.Remove(g); err != nil {
						t.Fatal(err)
					}
					continue
				}
				t.Errorf("%s: %s is no longer generated; run go test ./gen/ -run TestGolden -update", g, n)
			}
		})
	}
}

// TestGoldenCoverage checks that the golden cases exercise what they are
// named for, so that a schema edit cannot quietly drop a construct.
func TestGoldenCoverage(t *testing.T) {
	load := func(c string) *schema.Model {
		m, err := gen.Load(filepath.Join("testdata", c, "schema.yaml"), "")
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	var walk func(fs []*schema.LField, visit func(*schema.LField))
	walk = func(fs []*schema.LField, visit func(*schema.LField)) {
		for _, f := range fs {
			visit(f)
			walk(f.Elem, visit)
		}
	}
	has := func(c string, pred func(*schema.LField) bool) bool {
		found := false
		for _, p := range load(c).Providers {
			for _, tp := range p.Templates {
				walk(tp.Fields, func(f *schema.LField) { found = found || pred(f) })
			}
		}
		return found
	}
	checks := []struct {
		c    string
		what string
		pred func(*schema.LField) bool
	}{
		{"trailing_string", "UnicodeString", func(f *schema.LField) bool { return f.Kind == schema.KindUTF16 }},
		{"trailing_string", "AnsiString", func(f *schema.LField) bool { return f.Kind == schema.KindAnsi }},
		{"pointer", "pointer", func(f *schema.LField) bool { return f.Kind == schema.KindPointer }},
		{"counted_array", "field-counted scalar array", func(f *schema.LField) bool { return f.Count.Field != nil && f.Kind != schema.KindStruct }},
		{"shared_count", "a count sizing two arrays", func(f *schema.LField) bool { return len(f.Counts) == 2 }},
		{"struct_variable", "variable-size struct elements", func(f *schema.LField) bool { return f.Kind == schema.KindStruct && !f.ElemFixed }},
		{"struct_fixed", "fixed-size struct elements with pointers", func(f *schema.LField) bool {
			return f.Kind == schema.KindStruct && f.ElemFixed && f.ElemSize.Ptrs > 0
		}},
		{"struct_aligned", "padding inside and after aligned elements", func(f *schema.LField) bool {
			return f.Kind == schema.KindStruct && f.Align == "natural" && f.ElemTail != (schema.Size{})
		}},
		{"binary_length", "win:Binary with length=", func(f *schema.LField) bool { return f.Kind == schema.KindBinary && f.Length.Field != nil }},
		{"kernel", "a rest array", func(f *schema.LField) bool { return f.Count.Rest }},
		{"kernel", "a port", func(f *schema.LField) bool { return f.Kind == schema.KindPort }},
		{"kernel", "an IPv4 address", func(f *schema.LField) bool { return f.Kind == schema.KindIPv4 }},
		{"kernel", "an IPv6 address", func(f *schema.LField) bool { return f.Kind == schema.KindIPv6 }},
		{"kernel", "a FILETIME", func(f *schema.LField) bool { return f.Kind == schema.KindFileTime }},
		{"kernel", "a SID", func(f *schema.LField) bool { return f.Kind == schema.KindWBEMSID }},
		{"kernel", "a padded character array", func(f *schema.LField) bool { return f.Padded() }},
		{"kernel", "a SizeT", func(f *schema.LField) bool { return f.Kind == schema.KindPointer && !f.Hex }},
	}
	for _, c := range checks {
		if !has(c.c, c.pred) {
			t.Errorf("golden case %s has no %s", c.c, c.what)
		}
	}
	for _, f := range []struct {
		c    string
		pred func(*schema.LField) bool
	}{{"fixed", func(f *schema.LField) bool { return !f.Fixed }}} {
		if has(f.c, f.pred) {
			t.Errorf("golden case %s has a variable-size field", f.c)
		}
	}
	// A map read with two inTypes, and a bitMap.
	var twoKinds, bitmap bool
	for _, p := range load("map_two_intypes").Providers {
		kinds := map[*schema.LMap]map[schema.Kind]bool{}
		for _, tp := range p.Templates {
			walk(tp.Fields, func(f *schema.LField) {
				if f.Map != nil {
					if kinds[f.Map] == nil {
						kinds[f.Map] = map[schema.Kind]bool{}
					}
					kinds[f.Map][f.Kind] = true
				}
			})
		}
		for lm, ks := range kinds {
			twoKinds = twoKinds || (lm.Kind == schema.KindUint32 && ks[schema.KindUint8] && ks[schema.KindUint32] && lm.Map.Kind == schema.ValueMap)
			bitmap = bitmap || lm.Map.Kind == schema.BitMap
		}
	}
	if !twoKinds || !bitmap {
		t.Errorf("map_two_intypes: a valueMap read as UInt8 and UInt32: %v; a bitMap: %v", twoKinds, bitmap)
	}
	// One event in three versions.
	versions := map[uint16]int{}
	for _, p := range load("versions").Providers {
		for _, e := range p.Events {
			versions[e.Value]++
		}
	}
	if versions[1] != 3 {
		t.Errorf("versions: event 1 has %d versions, want 3", versions[1])
	}
}

// TestGoldenBuilds builds, vets and tests the package of every golden case:
// each in its own package of one temporary module, beside the hand-written
// primitives; its generated TestSamples runs the generated code at both
// pointer sizes through clrimpltest, and testdata/roundtrip_test.go.txt
// its Decoder.
func TestGoldenBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: builds the generated packages")
	}
	roundtrip, err := os.ReadFile(filepath.Join("testdata", "roundtrip_test.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// The family test of clrevents uses only what every generated
	// package has, so it runs on every golden case too.
	familyTest, err := os.ReadFile(filepath.Join(primitivesDir, "family_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string]map[string][]byte{}
	for _, c := range goldenCases {
		files := generateCase(t, filepath.Join("testdata", c))
		files["roundtrip_test.go"] = roundtrip
		files["family_test.go"] = familyTest
		pkgs[c] = files
	}
	dir := tempModule(t, pkgs)
	goCmd(t, dir, "build", "-trimpath", "./...")
	goCmd(t, dir, "vet", "./...")
	goCmd(t, dir, "test", "-trimpath", "./...")
}

// TestGoldenErrors generates from schemas that must be rejected and compares
// the error with testdata/errors/<name>.golden; -update rewrites them.
func TestGoldenErrors(t *testing.T) {
	schemas, err := filepath.Glob(filepath.Join("testdata", "errors", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(schemas) == 0 {
		t.Fatal("no schemas in testdata/errors")
	}
	for _, s := range schemas {
		name := strings.TrimSuffix(filepath.Base(s), ".yaml")
		t.Run(name, func(t *testing.T) {
			m, err := gen.Load(s, "")
			if err != nil {
				t.Fatalf("the schema itself should load; the generator should reject it: %v", err)
			}
			files, err := gen.Generate(m, gen.Config{})
			if err == nil {
				t.Fatalf("Generate made %d files, want an error", len(files))
			}
			var se *schema.Error
			if !errors.As(err, &se) {
				t.Errorf("error %v (%T) holds no *schema.Error with a position", err, err)
			}
			got := err.Error() + "\n"
			golden := strings.TrimSuffix(s, ".yaml") + goldenExt
			if *update {
				writeIfChanged(t, golden, []byte(got))
				return
			}
			want, rerr := os.ReadFile(golden)
			if rerr != nil {
				t.Fatalf("%v; run go test ./gen/ -run TestGoldenErrors -update", rerr)
			}
			if got != string(want) {
				t.Errorf("error differs from %s (-golden +got):\n%s", golden, cmp.Diff(string(want), got))
			}
		})
	}
}

// TestClashNamesBoth checks the content of the name clash error: both
// symbols, each with its file:line, whatever the golden says.
func TestClashNamesBoth(t *testing.T) {
	m, err := gen.Load(filepath.Join("testdata", "errors", "name_clash.yaml"), "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = gen.Generate(m, gen.Config{})
	if err == nil {
		t.Fatal("no error for Foo_V2 and FooV2")
	}
	for _, want := range []string{"name_clash.yaml:8", "Foo_V2", "name_clash.yaml:9", "FooV2", "Go name FooV2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	m, err = gen.Load(filepath.Join("testdata", "errors", "field_method.yaml"), "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = gen.Generate(m, gen.Config{})
	if err == nil || !strings.Contains(err.Error(), "field_method.yaml:11") || !strings.Contains(err.Error(), "Decode") {
		t.Errorf("field named Decode: error %v, want one at field_method.yaml:11 naming Decode", err)
	}
}

// lines splits a file for a line-by-line diff.
func lines(s string) []string { return strings.SplitAfter(s, "\n") }

func writeIfChanged(t *testing.T, path string, data []byte) {
	t.Helper()
	if old, err := os.ReadFile(path); err == nil && string(old) == string(data) {
		return
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", path)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
