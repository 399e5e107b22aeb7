package gen

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// TestFamiliesOfTheSchema checks the families the checked-in schema makes
// against what the rule promises for the events users ask for most, and
// logs them all, largest first.
func TestFamiliesOfTheSchema(t *testing.T) {
	m, err := Load("../schema/clr.yaml", "../schema/overrides.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ir, err := buildIR(m)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*familyIR{}
	total := 0
	for _, f := range ir.families {
		byName[f.name] = f
		total += len(f.members)
	}
	members := func(name string) []string {
		f := byName[name]
		if f == nil {
			t.Errorf("no family %s", name)
			return nil
		}
		var out []string
		for _, ev := range f.members {
			out = append(out, ev.goName)
		}
		return out
	}
	if got := strings.Join(members("GCStart"), " "); got != "GCStart GCStartV1 GCStartV2" {
		t.Errorf("GCStart family: %s", got)
	}
	for _, c := range []struct {
		family string
		want   []string
	}{
		{"MethodLoadUnloadVerbose", []string{"MethodLoadVerbose", "MethodLoadVerboseV2", "MethodUnloadVerboseV1", "MethodDCStartVerbose", "MethodDCEndVerboseV2"}},
		{"ModuleLoadUnload", []string{"ModuleLoad", "ModuleLoadV2", "ModuleDCEnd", "ModuleDCEndV2"}},
		// ContentionStart_V1 and ContentionStop share template Contention;
		// ContentionStart_V2 (template ContentionStart_V2) joins as a version.
		// Contention (V0) has no payload.
		{"Contention", []string{"ContentionStartV1", "ContentionStartV2", "ContentionStop", "ContentionStopV1"}},
		{"GCHeapStats", []string{"GCHeapStats", "GCHeapStatsV1", "GCHeapStatsV2"}},
	} {
		got := " " + strings.Join(members(c.family), " ") + " "
		for _, w := range c.want {
			if !strings.Contains(got, " "+w+" ") {
				t.Errorf("family %s lacks %s: %s", c.family, w, got)
			}
		}
	}
	fams := append([]*familyIR(nil), ir.families...)
	sort.SliceStable(fams, func(i, j int) bool { return len(fams[i].members) > len(fams[j].members) })
	t.Logf("%d families covering %d event types", len(fams), total)
	for _, f := range fams {
		s := fmt.Sprintf("%s: %d members, keys %v, %d fields", f.name, len(f.members), f.keys, len(f.fields))
		for _, c := range f.conflicts {
			s += "; left out " + c.goName + " (" + conflictTypes(c) + ")"
		}
		t.Log(s)
	}
}
