package gen_test

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/clrgo/clrevents/gen"
	"github.com/clrgo/clrevents/schema"
)

// The three real manifests, oldest first (see ../../shared/manifests/PROVENANCE.md).
const manifestDir = "../../shared/manifests"

var manifests = []struct{ pkg, file string }{
	{"m2016", "ClrEtwAll.perfview-2016.man"},
	{"m2021", "ClrEtwAll.runtimelab-2021-09.man"},
	{"net10", "ClrEtwAll.runtime-main-net10.man"},
}

const (
	overridesPath = "../schema/overrides.yaml"
	schemaPath    = "../schema/clr.yaml"
	extraPath     = "../schema/extra.yaml"
)

func manifestPath(t *testing.T, file string) string {
	t.Helper()
	p := filepath.Join(manifestDir, file)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("real manifest %s is not available (%v); it lives outside the repository, in ../shared/manifests", file, err)
	}
	return p
}

// goNamesOnly returns the naming part of schema/overrides.yaml (goNames and
// familyNames), keeping only the names of events and templates s has. Every
// manifest has both the runtime provider's legacy MethodDCStartV2 …
// (version 0) and the rundown provider's MethodDCStart_V2 …, which the
// naming rule maps to one Go name, and the StressLog family whose interface
// would take the name of the event StressLogEvent; the other overrides (map
// entries, counts) are corrections of the net10 manifest and are left out.
func goNamesOnly(s *schema.Schema) (*schema.Overrides, error) {
	o, err := schema.LoadOverrides(overridesPath)
	if err != nil {
		return nil, err
	}
	out := &schema.Overrides{File: o.File}
	for _, e := range o.Entries {
		if len(e.GoNames) == 0 && len(e.FamilyNames) == 0 {
			continue
		}
		for _, pn := range e.Providers {
			p := s.Provider(pn)
			if p == nil {
				continue
			}
			names := map[string]string{}
			for sym, g := range e.GoNames {
				if p.Event(sym) != nil {
					names[sym] = g
				}
			}
			if len(names) > 0 {
				out.Entries = append(out.Entries, &schema.Override{Why: e.Why, Providers: []string{pn}, GoNames: names, Pos: e.Pos})
			}
			fams := map[string]string{}
			for tid, g := range e.FamilyNames {
				if p.Template(tid) != nil {
					fams[tid] = g
				}
			}
			if len(fams) > 0 {
				out.Entries = append(out.Entries, &schema.Override{Why: e.Why, Providers: []string{pn}, FamilyNames: fams, Pos: e.Pos})
			}
		}
	}
	if len(out.Entries) == 0 {
		return nil, fmt.Errorf("%s has no goNames for the events of %s", overridesPath, s.Source)
	}
	return out, nil
}

// realGen is what each real manifest generates, computed once for all tests.
type realGen struct {
	files map[string][]byte
	err   error
}

var (
	realOnce sync.Once
	realOut  map[string]realGen
)

// generateReal generates the package of every real manifest with no
// overrides but the goNames, the sample test file included.
func generateReal(t *testing.T) map[string]realGen {
	t.Helper()
	for _, m := range manifests {
		manifestPath(t, m.file)
	}
	realOnce.Do(func() {
		realOut = map[string]realGen{}
		for _, m := range manifests {
			path := filepath.Join(manifestDir, m.file)
			r := realGen{}
			r.files, r.err = func() (map[string][]byte, error) {
				data, err := os.ReadFile(path)
				if err != nil {
					return nil, err
				}
				s, err := schema.ParseManifest(path, data)
				if err != nil {
					return nil, err
				}
				o, err := goNamesOnly(s)
				if err != nil {
					return nil, err
				}
				if err := o.Apply(s); err != nil {
					return nil, err
				}
				lm, err := schema.Lower(s)
				if err != nil {
					return nil, err
				}
				return gen.Generate(lm, gen.Config{Package: "clrevents", Sources: gen.Sources(path, overridesPath), Tests: true})
			}()
			realOut[m.pkg] = r
		}
	})
	for _, m := range manifests {
		if err := realOut[m.pkg].err; err != nil {
			t.Fatalf("%s: %v", m.file, err)
		}
	}
	return realOut
}

// TestRealManifestsNeedGoNames shows why the end-to-end tests apply the
// goNames overrides: without them every real manifest has a name clash,
// reported with both events' file:line.
func TestRealManifestsNeedGoNames(t *testing.T) {
	for _, m := range manifests {
		t.Run(m.pkg, func(t *testing.T) {
			path := manifestPath(t, m.file)
			lm, err := gen.Load(path, "")
			if err != nil {
				t.Fatal(err)
			}
			_, err = gen.Generate(lm, gen.Config{})
			if err == nil {
				t.Fatal("no name clash without the goNames overrides: drop goNamesOnly")
			}
			want := regexp.MustCompile(regexp.QuoteMeta(m.file) + `:\d+: event MethodDCStart_V2: Go name MethodDCStartV2 is already used by event MethodDCStartV2 \(` + regexp.QuoteMeta(m.file) + `:\d+\)`)
			if !want.MatchString(err.Error()) {
				t.Errorf("error does not match %s:\n%v", want, err)
			}
			var se *schema.Error
			if !errors.As(err, &se) {
				t.Errorf("%T holds no *schema.Error", err)
			}
		})
	}
}

// TestRealManifestsBuild builds and vets the package generated from each
// real manifest, all three in one temporary module.
func TestRealManifestsBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: builds the generated package")
	}
	real := generateReal(t)
	pkgs := map[string]map[string][]byte{}
	for _, m := range manifests {
		pkgs[m.pkg] = real[m.pkg].files
	}
	dir := tempModule(t, pkgs)
	goCmd(t, dir, "build", "-trimpath", "./...")
	goCmd(t, dir, "vet", "./...")
}

// TestManifestGivesCommittedPackage generates from the net10 manifest itself
// (not its import, clr.yaml) with schema/extra.yaml and schema/overrides.yaml
// and compares with the committed clrevents package, file for file.
func TestManifestGivesCommittedPackage(t *testing.T) {
	path := manifestPath(t, manifests[len(manifests)-1].file)
	m, err := gen.Load(path, overridesPath, extraPath)
	if err != nil {
		t.Fatal(err)
	}
	// The committed header names the imported schema, not the manifest.
	files, err := gen.Generate(m, gen.Config{Package: "clrevents", Sources: gen.Sources(schemaPath, overridesPath, extraPath), Tests: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range sortedKeys(files) {
		got, err := os.ReadFile(filepath.Join(primitivesDir, n))
		if err != nil {
			t.Errorf("%s is generated from the manifest but not committed: %v", n, err)
			continue
		}
		if string(got) != string(files[n]) {
			t.Errorf("clrevents/%s differs from what %s and overrides.yaml generate: %s", n, filepath.Base(path), firstDiff(string(got), string(files[n])))
		}
	}
	entries, err := os.ReadDir(primitivesDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := files[e.Name()]; gen.IsGenerated(e.Name()) && !ok {
			t.Errorf("clrevents/%s is committed but %s does not generate it", e.Name(), filepath.Base(path))
		}
	}
}

// firstDiff describes the first line where a (the committed or first
// version) and b (the generated or second) differ.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y || i >= len(al) || i >= len(bl) {
			return fmt.Sprintf("line %d: %q, then %q", i+1, x, y)
		}
	}
	return "no line differs"
}

// goType is what the generated code calls one (provider, id, version).
type goType struct {
	symbol string
	name   string
	fields []string
}

type eventKey struct {
	provider string
	id       int
	version  int
}

func (k eventKey) String() string {
	return fmt.Sprintf("%s event %d version %d", k.provider, k.id, k.version)
}

var payloadDoc = regexp.MustCompile(`^(\w+) is the payload of (\S+): event (\d+) version (\d+) of (\S+)\.`)

// goTypes reads the event types out of generated files: the type named by
// each doc comment "X is the payload of SYM: event N version V of PROVIDER."
// and its struct's field names.
func goTypes(t *testing.T, files map[string][]byte) map[eventKey]goType {
	t.Helper()
	out := map[eventKey]goType{}
	fset := token.NewFileSet()
	for _, n := range sortedKeys(files) {
		if !strings.HasSuffix(n, "_gen.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, files[n], parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE || gd.Doc == nil {
				continue
			}
			m := payloadDoc.FindStringSubmatch(gd.Doc.Text())
			if m == nil {
				continue
			}
			ts := gd.Specs[0].(*ast.TypeSpec)
			if ts.Name.Name != m[1] {
				t.Errorf("%s: the doc of type %s names %s", n, ts.Name.Name, m[1])
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				t.Fatalf("%s: event type %s is not a struct", n, ts.Name.Name)
			}
			gt := goType{symbol: m[2], name: ts.Name.Name}
			for _, fl := range st.Fields.List {
				for _, id := range fl.Names {
					gt.fields = append(gt.fields, id.Name)
				}
			}
			id, _ := strconv.Atoi(m[3])
			ver, _ := strconv.Atoi(m[4])
			k := eventKey{m[5], id, ver}
			if _, dup := out[k]; dup {
				t.Errorf("%s: two types for %s", n, k)
			}
			out[k] = gt
		}
	}
	return out
}

// knownRenames are the events whose manifest symbol changed upstream between
// our manifests (so the Go name follows): the type is renamed, its fields
// are not. TestNameStability fails on a rename not listed here and on an
// entry that no longer happens.
var knownRenames = []struct {
	key           eventKey
	oldGo, newGo  string
	whyFromSource string
}{
	{eventKey{"Microsoft-Windows-DotNETRuntime", 186, 0}, "MethodJitInliningFailed", "MethodJitInliningFailedAnsi",
		"upstream renamed the v0 symbol when the UnicodeString version 1 took the old name"},
	{eventKey{"Microsoft-Windows-DotNETRuntime", 189, 0}, "MethodJitTailCallFailed", "MethodJitTailCallFailedAnsi",
		"as for 186"},
	{eventKey{"Microsoft-Windows-DotNETRuntimePrivate", 193, 0}, "CCWRefCountChange", "CCWRefCountChangeAnsi",
		"as for 186"},
}

// TestNameStability checks the design's promise: a type present in an older
// manifest keeps its Go name and its field names when generated from a
// newer one.
func TestNameStability(t *testing.T) {
	real := generateReal(t)
	types := map[string]map[eventKey]goType{}
	for _, m := range manifests {
		types[m.pkg] = goTypes(t, real[m.pkg].files)
		if len(types[m.pkg]) < 300 {
			t.Fatalf("%s: only %d event types found in the generated files", m.file, len(types[m.pkg]))
		}
	}
	seen := make([]bool, len(knownRenames))
	for i, older := range manifests {
		for _, newer := range manifests[i+1:] {
			shared := 0
			for k, o := range types[older.pkg] {
				n, ok := types[newer.pkg][k]
				if !ok {
					continue
				}
				shared++
				if o.name != n.name {
					listed := false
					for j, r := range knownRenames {
						if r.key == k && r.oldGo == o.name && r.newGo == n.name {
							listed, seen[j] = true, true
						}
					}
					if !listed {
						t.Errorf("%s → %s: %s is %s (%s), then %s (%s)", older.pkg, newer.pkg, k, o.name, o.symbol, n.name, n.symbol)
					}
				}
				if !slices.Equal(o.fields, n.fields) {
					t.Errorf("%s → %s: %s (%s): fields %v, then %v", older.pkg, newer.pkg, k, n.name, o.fields, n.fields)
				}
			}
			t.Logf("%s → %s: %d event types in both", older.pkg, newer.pkg, shared)
			if shared < 300 {
				t.Errorf("%s → %s: only %d event types in both", older.pkg, newer.pkg, shared)
			}
		}
	}
	for j, r := range knownRenames {
		if !seen[j] {
			t.Errorf("known rename %s %s → %s no longer happens: drop it from knownRenames", r.key, r.oldGo, r.newGo)
		}
	}
}

// familyAPI is what the generated families give users: each FFields
// struct's fields with their types, and each kind constant with its type.
type familyAPI struct {
	fields map[string]string // "MethodLoadUnloadVerboseFields.MethodFlags" → "MethodFlags"
	kinds  map[string]string // "KindMethodLoadVerbose" → "MethodLoadUnloadVerboseKind"
}

// goFamilies reads the families out of the generated families_gen.go.
func goFamilies(t *testing.T, files map[string][]byte) familyAPI {
	t.Helper()
	api := familyAPI{fields: map[string]string{}, kinds: map[string]string{}}
	f, err := parser.ParseFile(token.NewFileSet(), "families_gen.go", files["families_gen.go"], 0)
	if err != nil {
		t.Fatal(err)
	}
	typeString := func(e ast.Expr) string {
		switch e := e.(type) {
		case *ast.Ident:
			return e.Name
		case *ast.SelectorExpr:
			return fmt.Sprint(e.X) + "." + e.Sel.Name
		}
		return fmt.Sprintf("%T", e)
	}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, sp := range gd.Specs {
			switch sp := sp.(type) {
			case *ast.TypeSpec:
				st, ok := sp.Type.(*ast.StructType)
				if !ok || !strings.HasSuffix(sp.Name.Name, "Fields") {
					continue
				}
				for _, fl := range st.Fields.List {
					for _, id := range fl.Names {
						api.fields[sp.Name.Name+"."+id.Name] = typeString(fl.Type)
					}
				}
			case *ast.ValueSpec:
				if gd.Tok == token.CONST && sp.Type != nil && strings.HasSuffix(typeString(sp.Type), "Kind") {
					for _, id := range sp.Names {
						api.kinds[id.Name] = typeString(sp.Type)
					}
				}
			}
		}
	}
	return api
}

// TestFamilyStability extends the names' promise to the families: a
// family field present in an older manifest's package keeps its type in a
// newer one's (the maps the family's type comes from still agree), and a
// kind keeps its constant and the family it belongs to.
func TestFamilyStability(t *testing.T) {
	real := generateReal(t)
	apis := map[string]familyAPI{}
	for _, m := range manifests {
		apis[m.pkg] = goFamilies(t, real[m.pkg].files)
		if len(apis[m.pkg].kinds) < 100 || apis[m.pkg].fields["MethodLoadUnloadVerboseFields.MethodFlags"] != "MethodFlags" ||
			apis[m.pkg].kinds["KindMethodLoadVerbose"] != "MethodLoadUnloadVerboseKind" {
			t.Fatalf("%s: %d kinds, MethodLoadUnloadVerboseFields.MethodFlags is %q, KindMethodLoadVerbose is %q", m.file,
				len(apis[m.pkg].kinds), apis[m.pkg].fields["MethodLoadUnloadVerboseFields.MethodFlags"], apis[m.pkg].kinds["KindMethodLoadVerbose"])
		}
	}
	for i, older := range manifests {
		for _, newer := range manifests[i+1:] {
			o, n := apis[older.pkg], apis[newer.pkg]
			sharedFields, sharedKinds := 0, 0
			for _, k := range sortedKeys(o.fields) {
				if nt, ok := n.fields[k]; ok {
					sharedFields++
					if nt != o.fields[k] {
						t.Errorf("%s → %s: %s is %s, then %s", older.pkg, newer.pkg, k, o.fields[k], nt)
					}
				}
			}
			for _, k := range sortedKeys(o.kinds) {
				nt, ok := n.kinds[k]
				if !ok {
					t.Errorf("%s → %s: kind %s (%s) is gone", older.pkg, newer.pkg, k, o.kinds[k])
					continue
				}
				sharedKinds++
				if nt != o.kinds[k] {
					t.Errorf("%s → %s: kind %s is a %s, then a %s", older.pkg, newer.pkg, k, o.kinds[k], nt)
				}
			}
			t.Logf("%s → %s: %d family fields and %d kinds in both", older.pkg, newer.pkg, sharedFields, sharedKinds)
		}
	}
}

// TestOverrideNamedInErrors: an error about what an override changed
// names the override's file:line beside the manifest's: an event's Go
// name that clashes, given by goNames in a file of the user's own,
// was reported at the manifest's line alone, which is right as written.
func TestOverrideNamedInErrors(t *testing.T) {
	path := manifestPath(t, manifests[2].file)
	ov := filepath.Join(t.TempDir(), "mine.yaml")
	const y = "overrides:\n  - why: a clash on purpose\n    providers: [Microsoft-Windows-DotNETRuntime]\n    goNames: {GCEnd_V1: GCStartV2}\n"
	if err := os.WriteFile(ov, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	lm, err := gen.Load(path, ov)
	if err == nil {
		_, err = gen.Generate(lm, gen.Config{})
	}
	want := regexp.MustCompile(regexp.QuoteMeta(manifests[2].file) + `:\d+ \(as changed by mine\.yaml:2\): event GCEnd_V1: Go name GCStartV2 is already used by event GCStart_V2`)
	if err == nil || !want.MatchString(err.Error()) {
		t.Errorf("error does not match %s:\n%v", want, err)
	}
}
