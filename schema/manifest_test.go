package schema

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// ignorePos compares models without positions, which differ by design
// between the XML and the YAML form.
var ignorePos = cmpopts.IgnoreTypes(Pos{})

// roundTrip checks XML model → YAML → model and the stability of the YAML
// bytes.
func roundTrip(t *testing.T, s *Schema) {
	t.Helper()
	y1, err := MarshalYAML(s)
	if err != nil {
		t.Fatalf("MarshalYAML: %v", err)
	}
	s2, err := ParseYAML("clr.yaml", y1)
	if err != nil {
		t.Fatalf("ParseYAML of our own output: %v", err)
	}
	if d := cmp.Diff(s, s2, ignorePos); d != "" {
		t.Errorf("model from YAML differs from model from XML (-xml +yaml):\n%s", d)
	}
	y2, err := MarshalYAML(s2)
	if err != nil {
		t.Fatalf("MarshalYAML (second): %v", err)
	}
	if !bytes.Equal(y1, y2) {
		t.Errorf("YAML bytes not stable: marshal→parse→marshal changed them")
	}
}

func TestRoundTripSmall(t *testing.T) {
	roundTrip(t, loadSmall(t))
}

func TestRoundTripRealManifests(t *testing.T) {
	for _, name := range realManifests {
		t.Run(name, func(t *testing.T) {
			roundTrip(t, loadShared(t, name))
		})
	}
}

// TestRoundTripCheckedIn runs on a fresh clone: the checked-in schema parses
// and re-marshals to the same bytes.
func TestRoundTripCheckedIn(t *testing.T) {
	data, err := os.ReadFile("clr.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := loadCheckedIn(t)
	out, err := MarshalYAML(s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, out) {
		t.Errorf("clr.yaml is not in canonical form: MarshalYAML(LoadYAML(clr.yaml)) differs")
	}
	roundTrip(t, s)
}

// TestCheckedInSchemaCurrent fails when schema/clr.yaml is not what clrgen
// import makes of the manifest it was imported from (its source: key).
func TestCheckedInSchemaCurrent(t *testing.T) {
	source := loadCheckedIn(t).Source
	s := loadShared(t, source)
	want, err := MarshalYAML(s)
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile("clr.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, want) {
		t.Error(staleSchema(source))
	}
}

// staleSchema is the message when importing source, the manifest
// schema/clr.yaml says it was imported from, does not give clr.yaml.
func staleSchema(source string) string {
	return fmt.Sprintf("stale schema/clr.yaml: importing ../shared/manifests/%s, the manifest its source: key names, gives another schema; "+
		"if clr.yaml was edited, run: go run ./cmd/clrgen import -o schema/clr.yaml ../shared/manifests/%s "+
		"(the README's \"Regenerating after a new runtime\" says what a newer manifest changes)", source, source)
}

// TestStaleSchemaMessage: the message names the manifest clr.yaml says it
// was imported from, whatever it is, never an older one.
func TestStaleSchemaMessage(t *testing.T) {
	msg := staleSchema("ClrEtwAll.runtime-main-net11.man")
	if want := "run: go run ./cmd/clrgen import -o schema/clr.yaml ../shared/manifests/ClrEtwAll.runtime-main-net11.man"; !strings.Contains(msg, want) || strings.Contains(msg, "net10") {
		t.Errorf("message %q; want one with %q and no other manifest", msg, want)
	}
}

func TestPositions(t *testing.T) {
	const path = "testdata/small.man"
	s := loadSmall(t)
	rt := s.Provider("Test-Runtime")
	ev := rt.Event("GCStart_V2")
	if want := (Pos{File: "small.man", Line: lineOf(t, path, `symbol="GCStart_V2"`)}); ev.Pos != want {
		t.Errorf("GCStart_V2 at %v, want %v", ev.Pos, want)
	}
	f := rt.Template("BulkType").Fields[2].Fields[3]
	if want := (Pos{File: "small.man", Line: lineOf(t, path, `name="Params"`)}); f.Pos != want || f.Name != "Params" {
		t.Errorf("BulkType Values.Params (%s) at %v, want %v", f.Name, f.Pos, want)
	}
	e := rt.Map("ModuleFlagsMap").Entries[1]
	if want := (Pos{File: "small.man", Line: lineOf(t, path, `$(string.Map.Native)`)}); e.Pos != want {
		t.Errorf("map entry at %v, want %v", e.Pos, want)
	}

	// The YAML form has its own positions.
	y, err := os.ReadFile("clr.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cs := loadCheckedIn(t)
	want := Pos{File: "clr.yaml", Line: 1 + bytes.Count(y[:bytes.Index(y, []byte("symbol: GCStart_V2,"))], []byte("\n"))}
	if got := cs.Provider("Microsoft-Windows-DotNETRuntime").Event("GCStart_V2").Pos; got != want {
		t.Errorf("clr.yaml GCStart_V2 at %v, want %v", got, want)
	}
}

// TestNothingLost compares, per provider, the number of elements in the
// manifest (counted with encoding/xml alone) with what the model holds.
func TestNothingLost(t *testing.T) {
	paths := []string{"testdata/small.man"}
	for _, n := range realManifests {
		if _, err := os.Stat(sharedDir + "/" + n); err == nil {
			paths = append(paths, sharedDir+"/"+n)
		} else {
			t.Logf("skipping %s: needs the real manifests in %s (present in CI)", n, sharedDir)
		}
	}
	for _, path := range paths {
		s, err := LoadManifest(path)
		if err != nil {
			t.Fatal(err)
		}
		counts := xmlCounts(t, path)
		if len(counts) != len(s.Providers) {
			t.Errorf("%s: %d providers in XML, %d in model", path, len(counts), len(s.Providers))
		}
		for _, p := range s.Providers {
			x := counts[p.Name]
			var fields, structs, opcodes, entries int
			var walk func([]*Field)
			walk = func(fs []*Field) {
				for _, f := range fs {
					if f.Struct {
						structs++
					} else {
						fields++
					}
					walk(f.Fields)
				}
			}
			for _, tpl := range p.Templates {
				walk(tpl.Fields)
			}
			for _, tk := range p.Tasks {
				opcodes += len(tk.Opcodes)
			}
			for _, m := range p.Maps {
				entries += len(m.Entries)
			}
			got := map[string]int{
				"event": len(p.Events), "template": len(p.Templates), "data": fields, "struct": structs,
				"keyword": len(p.Keywords), "task": len(p.Tasks), "opcode": opcodes,
				"maps": len(p.Maps), "map": entries,
			}
			want := map[string]int{}
			for k := range got {
				want[k] = x[k]
			}
			want["maps"] = x["valueMap"] + x["bitMap"]
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s: provider %s: element counts (-xml +model):\n%s", path, p.Name, d)
			}
		}
	}
}

// provenanceRow is one line of PROVENANCE.md's per-provider table.
var provenanceRow = regexp.MustCompile(`^\| (\S+) \{[0-9A-Fa-f-]+\} \| (.*?) \| (.*?) \| (.*?) \|$`)

// TestProvenanceCounts checks the loaded manifests against the event and
// template counts that ../shared/manifests/PROVENANCE.md states per provider
// (counted there with Python's ElementTree).
func TestProvenanceCounts(t *testing.T) {
	doc, err := os.ReadFile(sharedPath(t, "PROVENANCE.md"))
	if err != nil {
		t.Fatal(err)
	}
	type ev struct{ events, templates int }
	want := map[string]map[string]ev{} // manifest → provider → counts
	rows := 0
	for _, line := range strings.Split(string(doc), "\n") {
		m := provenanceRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		rows++
		for i, man := range realManifests {
			cell := m[2+i]
			if want[man] == nil {
				want[man] = map[string]ev{}
			}
			if cell == "—" {
				continue
			}
			var e, tp int
			if _, err := fmt.Sscanf(cell, "%d / %d", &e, &tp); err != nil {
				t.Fatalf("PROVENANCE.md: bad cell %q: %v", cell, err)
			}
			want[man][m[1]] = ev{e, tp}
		}
	}
	if rows != 5 {
		t.Fatalf("PROVENANCE.md: found %d provider rows, want 5", rows)
	}
	for _, man := range realManifests {
		s := loadShared(t, man)
		got := map[string]ev{}
		for _, p := range s.Providers {
			got[p.Name] = ev{len(p.Events), len(p.Templates)}
		}
		if d := cmp.Diff(want[man], got, cmp.AllowUnexported(ev{})); d != "" {
			t.Errorf("%s: counts per provider differ from PROVENANCE.md (-provenance +model):\n%s", man, d)
		}
	}
}

// TestRuntimeProviderFacts checks the other counts PROVENANCE.md states for
// the runtime and rundown providers.
func TestRuntimeProviderFacts(t *testing.T) {
	tests := []struct {
		man                 string
		keywords, tasks     int
		maxRuntime, maxRund uint8
	}{
		{man2016, 28, 26, 3, 2},
		{man2021, 37, 37, 4, 2},
		{manNet10, 39, 40, 4, 3},
	}
	for _, tt := range tests {
		s := loadShared(t, tt.man)
		rt := s.Provider("Microsoft-Windows-DotNETRuntime")
		if len(rt.Keywords) != tt.keywords || len(rt.Tasks) != tt.tasks {
			t.Errorf("%s: runtime keywords/tasks %d/%d, want %d/%d", tt.man, len(rt.Keywords), len(rt.Tasks), tt.keywords, tt.tasks)
		}
		maxVer := func(p *Provider) (m uint8) {
			for _, e := range p.Events {
				m = max(m, e.Version)
			}
			return m
		}
		if got := maxVer(rt); got != tt.maxRuntime {
			t.Errorf("%s: runtime max version %d, want %d", tt.man, got, tt.maxRuntime)
		}
		if got := maxVer(s.Provider("Microsoft-Windows-DotNETRuntimeRundown")); got != tt.maxRund {
			t.Errorf("%s: rundown max version %d, want %d", tt.man, got, tt.maxRund)
		}
	}
}

// TestCheckedInCounts runs on a fresh clone: clr.yaml holds the .NET 10-era
// manifest's providers (PROVENANCE.md's last column).
func TestCheckedInCounts(t *testing.T) {
	s := loadCheckedIn(t)
	want := map[string]string{
		"Microsoft-Windows-DotNETRuntime":        "212/142",
		"Microsoft-Windows-DotNETRuntimeRundown": "51/26",
		"Microsoft-Windows-DotNETRuntimeStress":  "3/3",
		"Microsoft-Windows-DotNETRuntimePrivate": "185/58",
		"Microsoft-DotNETRuntimeMonoProfiler":    "65/36",
	}
	got := map[string]string{}
	for _, p := range s.Providers {
		got[p.Name] = strconv.Itoa(len(p.Events)) + "/" + strconv.Itoa(len(p.Templates))
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("clr.yaml events/templates per provider (-want +got):\n%s", d)
	}
	if s.Source != manNet10 {
		t.Errorf("clr.yaml source %q, want %q", s.Source, manNet10)
	}
}

// TestMarshalYAMLSourceControl: a source with a line break (a schema built
// in code; loading rejects one) is refused, not written into the header's
// comment, where it would end the comment and start YAML of its own.
func TestMarshalYAMLSourceControl(t *testing.T) {
	s := loadSmall(t)
	s.Source = "small.man\nproviders: []"
	y, err := MarshalYAML(s)
	if err == nil || !strings.Contains(err.Error(), `"small.man\nproviders: []" has a control character at byte 9`) {
		t.Fatalf("MarshalYAML = %d bytes, %v; want the control character refused", len(y), err)
	}
}
