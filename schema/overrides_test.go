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
		{"invalid_result.yaml", `small.man:51: template ModuleLoad: field "Stack": count="FrameCount" names no earlier field of the same template or struct`},
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
