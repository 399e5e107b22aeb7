package schema

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParseKinds(t *testing.T) {
	for _, c := range []struct {
		name, data, want string
	}{
		{"empty.man", "", "empty.man: empty file"},
		{"blank.yaml", " \n\t\n", "blank.yaml: empty file"},
		{"yaml.man", "providers: []\n", "yaml.man:1: not an XML manifest"},
		{"yaml.XML", "source: x\n", "yaml.XML:1: not an XML manifest"},
	} {
		_, err := Parse(c.name, []byte(c.data))
		var se *Error
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || !errors.As(err, &se) {
			t.Errorf("Parse(%s): %v, want %q…", c.name, err, c.want)
		}
	}
	if _, err := Parse("x.yaml", []byte("source: x\nproviders: []\n")); err != nil {
		t.Errorf("a YAML schema: %v", err)
	}
}

func TestBuiltin(t *testing.T) {
	got, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	want, err := LoadYAML("clr.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got, cmpopts.IgnoreFields(Pos{}, "File")); d != "" {
		t.Errorf("the built-in schema differs from clr.yaml:\n%s", d)
	}
	x, err := BuiltinExtra()
	if err != nil || len(x.Providers) != 2 {
		t.Errorf("extra: %v, %d providers", err, len(x.Providers))
	}
	o, err := BuiltinOverrides()
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile("overrides.yaml")
	fromFile, _ := ParseOverrides("overrides.yaml", data)
	if len(o.Entries) == 0 || len(o.Entries) != len(fromFile.Entries) {
		t.Errorf("built-in overrides: %d entries, the file %d", len(o.Entries), len(fromFile.Entries))
	}
	// Builtin returns a fresh copy: changing one does not change the next.
	got.Providers = nil
	again, _ := Builtin()
	if len(again.Providers) == 0 {
		t.Error("Builtin shares its result between calls")
	}
}

func TestSubset(t *testing.T) {
	s, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	u := Subset{Providers: []string{"*dotnetruntime"}, Events: []string{"GCStart*", "GCHeapStats*"}}
	if err := u.Apply(s); err != nil {
		t.Fatal(err)
	}
	if len(s.Providers) != 1 || s.Providers[0].Name != "Microsoft-Windows-DotNETRuntime" {
		t.Fatalf("providers: %d", len(s.Providers))
	}
	p := s.Providers[0]
	var syms []string
	for _, e := range p.Events {
		syms = append(syms, e.Symbol)
	}
	if got := strings.Join(syms, " "); got != "GCStart GCStart_V1 GCStart_V2 GCHeapStats GCHeapStats_V1 GCHeapStats_V2" {
		t.Errorf("events: %s", got)
	}
	if len(p.Templates) != 6 {
		t.Errorf("%d templates, want the 6 the events use", len(p.Templates))
	}
	var maps []string
	for _, m := range p.Maps {
		maps = append(maps, m.Name)
	}
	if got := strings.Join(maps, " "); got != "GCReasonMap GCTypeMap" {
		t.Errorf("maps: %s", got)
	}
	if _, err := Lower(s); err != nil {
		t.Errorf("the subset does not lower: %v", err)
	}

	s, _ = Builtin()
	if err := (Subset{Keywords: 0x8000}).Apply(s); err != nil { // ExceptionKeyword
		t.Fatal(err)
	}
	for _, p := range s.Providers {
		for _, e := range p.Events {
			ok := false
			for _, kw := range e.Keywords {
				ok = ok || p.Keyword(kw).Mask&0x8000 != 0
			}
			if !ok {
				t.Errorf("%s/%s lacks keyword 0x8000", p.Name, e.Symbol)
			}
		}
	}

	s, _ = Builtin()
	if err := (Subset{Events: []string{"Nothing*"}}).Apply(s); err == nil || !strings.Contains(err.Error(), "selects no event") {
		t.Errorf("empty subset: %v", err)
	}
	if err := (Subset{Events: []string{"["}}).Check(); err == nil {
		t.Error("a bad glob passes Check")
	}
}

// withoutFitBucket is the built-in schema as an older manifest has it: no
// GCFitBucketInfo template or event.
func withoutFitBucket(t *testing.T) *Schema {
	s, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	rt := s.Provider("Microsoft-Windows-DotNETRuntime")
	var keep []*Template
	for _, tp := range rt.Templates {
		if tp.TID != "GCFitBucketInfo" {
			keep = append(keep, tp)
		}
	}
	rt.Templates = keep
	var events []*Event
	for _, e := range rt.Events {
		if e.Template != "GCFitBucketInfo" {
			events = append(events, e)
		}
	}
	rt.Events = events
	return s
}

func TestApplyLenient(t *testing.T) {
	o, err := BuiltinOverrides()
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Apply(withoutFitBucket(t)); err == nil || !strings.Contains(err.Error(), "GCFitBucketInfo: no such template") {
		t.Errorf("strict: %v", err)
	}
	s := withoutFitBucket(t)
	skipped, err := o.ApplyLenient(s)
	if err != nil {
		t.Fatal(err)
	}
	// The field override of its template and its display name.
	if len(skipped) != 2 || !strings.Contains(skipped[0].Error(), "overrides.yaml:") || !strings.Contains(skipped[0].Error(), "GCFitBucketInfo: no such template") ||
		!strings.Contains(skipped[1].Error(), "event GCFitBucketInfo: no such event") {
		t.Errorf("skipped: %v", skipped)
	}
	// The others were applied: GCReason has the values the manifest lacks.
	if m := s.Provider("Microsoft-Windows-DotNETRuntime").Map("GCReasonMap"); len(m.Entries) < 17 {
		t.Errorf("GCReasonMap has %d entries; the override adds up to 17", len(m.Entries))
	}
}
