package schema

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func loadOverrides(t *testing.T, path string) *Overrides {
	t.Helper()
	o, err := LoadOverrides(path)
	if err != nil {
		t.Fatalf("LoadOverrides(%s): %v", path, err)
	}
	return o
}

// TestRealOverrides applies schema/overrides.yaml to the checked-in schema:
// every entry must still match and change something.
func TestRealOverrides(t *testing.T) {
	s := loadCheckedIn(t)
	o := loadOverrides(t, "overrides.yaml")
	if len(o.Entries) == 0 {
		t.Fatal("overrides.yaml has no entries")
	}
	rt := s.Provider("Microsoft-Windows-DotNETRuntime")
	before := len(rt.Map("GCReasonMap").Entries)
	if err := o.Apply(s); err != nil {
		t.Fatalf("Apply(overrides.yaml) to clr.yaml: %v", err)
	}
	m := rt.Map("GCReasonMap")
	if got := len(m.Entries); got != before+8 {
		t.Errorf("GCReasonMap has %d entries after overrides, want %d", got, before+8)
	}
	last := m.Entries[len(m.Entries)-1]
	if last.Value != 0x11 || last.Name != "InducedAggressive" || last.Pos.File != "overrides.yaml" {
		t.Errorf("last GCReasonMap entry %+v, want 0x11 InducedAggressive from overrides.yaml", last)
	}
	lm := lowerOrFail(t, s)
	// The .NET Framework 4.5.2 per-heap history: 233 bytes with 4-byte
	// pointers, 433 with 8, as net.4.5.2.x86.etl's DataLen and TraceEvent say.
	ph := lm.provider(t, "Microsoft-Windows-DotNETRuntimePrivate").template(t, "GCPerHeapHistory")
	if ph.Variable() || ph.PrefixSize.At(4) != 233 || ph.PrefixSize.At(8) != 433 {
		t.Errorf("private GCPerHeapHistory: %d bytes (x86), %d (x64), variable %v; want 233, 433, fixed", ph.PrefixSize.At(4), ph.PrefixSize.At(8), ph.Variable())
	}
	for _, pn := range []string{"Microsoft-Windows-DotNETRuntime", "Microsoft-Windows-DotNETRuntimeRundown", "Microsoft-Windows-DotNETRuntimePrivate"} {
		sw := lm.provider(t, pn).template(t, "ClrStackWalk")
		st := field(t, sw.Fields, "Stack")
		if st.Count.Field == nil || st.Count.Field.Name != "FrameCount" || st.Fixed || !sw.Variable() {
			t.Errorf("%s ClrStackWalk Stack count %+v fixed %v after overrides; want FrameCount, variable", pn, st.Count, st.Fixed)
		}
	}
	// Applied twice, every entry is stale.
	err := o.Apply(s)
	if err == nil {
		t.Fatal("applying overrides.yaml twice succeeded")
	}
	for _, l := range strings.Split(err.Error(), "\n") {
		if l == "too many errors" {
			continue
		}
		if !strings.HasPrefix(l, "overrides.yaml:") || !strings.Contains(l, "drop") {
			t.Errorf("stale override error %q does not name overrides.yaml:line and say drop", l)
		}
	}
}

func TestOverridesGood(t *testing.T) {
	s := loadSmall(t)
	if err := loadOverrides(t, "testdata/overrides/good.yaml").Apply(s); err != nil {
		t.Fatal(err)
	}
	rt := s.Provider("Test-Runtime")
	var names []string
	for _, e := range rt.Map("GCReasonMap").Entries {
		names = append(names, e.Name)
	}
	if d := cmp.Diff([]string{"AllocSmall", "Induced", "LowMemory"}, names); d != "" {
		t.Errorf("GCReasonMap entries (sorted by value) (-want +got):\n%s", d)
	}
	if f := rt.Template("BulkType").Fields[2].Fields[3]; f.Name != "Params" || f.OutType != "win:HexInt64" {
		t.Errorf("Values.Params: %+v", f)
	}
}

// TestKeywordAlias: keywordAliases keeps a former keyword name as an alias
// of the keyword, and the second time it is stale.
func TestKeywordAlias(t *testing.T) {
	s := loadSmall(t)
	o := loadOverrides(t, "testdata/overrides/keyword_alias.yaml")
	if err := o.Apply(s); err != nil {
		t.Fatal(err)
	}
	if got := s.Provider("Test-Runtime").Keyword("GCKeyword").Aliases; !cmp.Equal(got, []string{"FormerGCKeyword"}) {
		t.Errorf("GCKeyword's aliases %q, want [FormerGCKeyword]", got)
	}
	err := o.Apply(s)
	if want := `keyword_alias.yaml:3: override of Test-Runtime keyword GCKeyword: FormerGCKeyword is already an alias of GCKeyword: drop this one`; err == nil || err.Error() != want {
		t.Errorf("applied twice: %v, want %s", err, want)
	}
}

// TestOverridesStale checks that an override that matches nothing, or that
// the schema already satisfies, is an error naming overrides file:line.
func TestOverridesStale(t *testing.T) {
	tests := []struct {
		file string
		want string
	}{
		{"value_present.yaml", `value_present.yaml:3: override of Test-Runtime map GCReasonMap: value 0x1 is already in the map as "Induced": drop this entry`},
		{"field_already.yaml", `field_already.yaml:3: override of Test-Runtime template ModuleLoad: field "Stack" already is as the override says: drop it`},
		{"unknown_provider.yaml", `unknown_provider.yaml:3: override: provider "Test-Private" is not in the schema`},
		{"unknown_map.yaml", `unknown_map.yaml:3: override of Test-Runtime map GCTypeMap: no such map`},
		{"unknown_template.yaml", `unknown_template.yaml:3: override of Test-Runtime template ClrStackWalk: no such template`},
		{"unknown_field.yaml", `unknown_field.yaml:3: override of Test-Runtime template BulkType: no field "Values.Flags"`},
		{"keyword_alias_present.yaml", `keyword_alias_present.yaml:3: override of Test-Runtime keyword GCKeyword: keyword LoaderKeyword is in the schema itself: drop the alias`},
		{"keyword_alias_unknown.yaml", `keyword_alias_unknown.yaml:3: override of Test-Runtime keyword ManagedHeapCollectKeyword: no such keyword (the alias GCHeapCollectKeyword is for it)`},
		{"invalid_result.yaml", `small.man:51 (as changed by invalid_result.yaml:3): template ModuleLoad: field "Stack": count="FrameCount" names no earlier field of the same template or struct`},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			err := loadOverrides(t, "testdata/overrides/"+tt.file).Apply(loadSmall(t))
			if err == nil {
				t.Fatal("Apply succeeded")
			}
			if err.Error() != tt.want {
				t.Errorf("error:\n%s\nwant:\n%s", err, tt.want)
			}
		})
	}
}

func TestOverridesInvalidFile(t *testing.T) {
	_, err := LoadOverrides("testdata/overrides/no_why.yaml")
	if want := "no_why.yaml:3: override: every override needs a why"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

// TestOverridesNewKinds covers newMap (a map the manifest lacks), templates
// (one field set applied to several templates) and fields (the layout of a
// template the manifest leaves empty, with pointer-sized and aligned parts).
func TestOverridesNewKinds(t *testing.T) {
	s := loadSmall(t)
	rt := s.Provider("Test-Runtime")
	rt.Template("GCStart_V2").Fields = nil // as the manifest leaves a raw struct's template
	o, err := ParseOverrides("kinds.yaml", []byte(`overrides:
  - why: the GC type is an enum
    providers: [Test-Runtime]
    newMap:
      name: GCTypeMap
      kind: valueMap
      entries:
        - {value: 0, name: NonConcurrentGC}
        - {value: 1, name: BackgroundGC}
  - why: both carry the instance in hex
    providers: [Test-Runtime]
    templates: [MethodILToNativeMap, ModuleLoad]
    field: ModuleID
    set: {outType: 'win:HexInt64'}
  - why: a raw struct behind an empty template
    providers: [Test-Runtime]
    template: GCStart_V2
    fields:
      - name: Gens
        count: '2'
        struct: true
        align: natural
        fields:
          - {name: Size, inType: 'win:Pointer'}
          - {name: Flag, inType: 'win:UInt8'}
      - {name: Type, inType: 'win:UInt32', map: GCTypeMap}
      - {name: ClrInstanceID, inType: 'win:UInt8'}
`))
	if err != nil {
		t.Fatal(err)
	}
	// ModuleID is only in ModuleLoad: the templates entry fails for
	// MethodILToNativeMap and names it.
	err = o.Apply(s)
	if want := `kinds.yaml:10: override of Test-Runtime template MethodILToNativeMap: no field "ModuleID"`; err == nil || err.Error() != want {
		t.Fatalf("Apply: %v, want %s", err, want)
	}
	o.Entries[1].Templates = []string{"ModuleLoad"}
	s = loadSmall(t)
	rt = s.Provider("Test-Runtime")
	rt.Template("GCStart_V2").Fields = nil
	if err := o.Apply(s); err != nil {
		t.Fatal(err)
	}
	if m := rt.Map("GCTypeMap"); m == nil || m.Kind != ValueMap || len(m.Entries) != 2 || m.Pos.String() != "kinds.yaml:2" {
		t.Fatalf("GCTypeMap after overrides: %+v", m)
	}
	if f := rt.Template("ModuleLoad").Fields[0]; f.OutType != "win:HexInt64" {
		t.Errorf("ModuleLoad.ModuleID outType %q", f.OutType)
	}
	lt := lowerOrFail(t, s).provider(t, "Test-Runtime").template(t, "GCStart_V2")
	if lt.Variable() || lt.PrefixSize.At(4) != 2*8+4+1 || lt.PrefixSize.At(8) != 2*16+4+1 {
		t.Errorf("GCStart_V2 sizes %d (x86) %d (x64), want 21 and 37", lt.PrefixSize.At(4), lt.PrefixSize.At(8))
	}
	if ty := field(t, lt.Fields, "Type"); ty.Map == nil || ty.Map.Name != "GCTypeMap" || ty.Pos.String() != "kinds.yaml:15" {
		t.Errorf("Type: map %v at %s", ty.Map, ty.Pos)
	}
	// Applied again, each is stale and says so.
	err = o.Apply(s)
	for _, want := range []string{
		"kinds.yaml:2: override of Test-Runtime map GCTypeMap: the map is already defined: drop this override",
		`kinds.yaml:10: override of Test-Runtime template ModuleLoad: field "ModuleID" already is as the override says: drop it`,
		"kinds.yaml:15: override of Test-Runtime template GCStart_V2: the template already has fields: drop this override",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("second Apply: %v\nwant a line %s", err, want)
		}
	}
}

func TestOverridesNewKindsInvalid(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"newMap: {name: M, kind: enum, entries: [{value: 1, name: A}]}", `newMap M: kind "enum" is neither valueMap nor bitMap`},
		{"newMap: {name: M, kind: bitMap}", "newMap needs a name and entries"},
		{"templates: [A, B]\n    field: X", "templates [A B]: name field and set"},
		{"template: A\n    field: X\n    set: {map: M}\n    fields: [{name: Y, inType: 'win:UInt8'}]", "template A: name either field (with set), insertAfter (with insert) or fields"},
		{"template: A\n    templates: [B]\n    field: X\n    set: {map: M}", "name exactly one of map, newMap, template, templates, goNames, displayNames, familyNames or keywordAliases"},
		{"template: A\n    fields: [{name: S, struct: true, fields: [null]}]", "empty item in fields"},
	}
	for _, tt := range tests {
		_, err := ParseOverrides("bad.yaml", []byte("overrides:\n  - why: test\n    providers: [P]\n    "+tt.yaml+"\n"))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s:\nerror %v, want %s", tt.yaml, err, tt.want)
		}
	}
}

// TestOverridesDisplayNames: displayNames gives events the names TraceEvent
// shows them by in place of the task's and opcode's messages; applied again
// it is stale, and a symbol the provider lacks is an error.
func TestOverridesDisplayNames(t *testing.T) {
	s := loadSmall(t)
	before := lowerOrFail(t, s).provider(t, "Test-Runtime").event(t, "GCStart_V2").DisplayName
	if before != "GarbageCollection/Start" {
		t.Fatalf("GCStart_V2's DisplayName before the override: %q", before)
	}
	o, err := ParseOverrides("names.yaml", []byte(`overrides:
  - why: TraceEvent's own name
    providers: [Test-Runtime]
    displayNames: {GCStart_V2: GC/Begin}
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Apply(s); err != nil {
		t.Fatal(err)
	}
	if got := lowerOrFail(t, s).provider(t, "Test-Runtime").event(t, "GCStart_V2").DisplayName; got != "GC/Begin" {
		t.Errorf("GCStart_V2's DisplayName after the override: %q", got)
	}
	if err := o.Apply(s); err == nil || err.Error() != "names.yaml:2: override of Test-Runtime event GCStart_V2: display name already GC/Begin: drop it" {
		t.Errorf("applied again: %v", err)
	}
	for yaml, want := range map[string]string{
		"{NoSuchEvent: X/Y}": "names.yaml:2: override of Test-Runtime event NoSuchEvent: no such event",
		"{GCStart_V2: ''}":   "names.yaml:2: override of Test-Runtime event GCStart_V2: an empty display name",
	} {
		o, err := ParseOverrides("names.yaml", []byte("overrides:\n  - why: test\n    providers: [Test-Runtime]\n    displayNames: "+yaml+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		if err := o.Apply(loadSmall(t)); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", yaml, err, want)
		}
	}
}
