package schema

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sectionLines returns the lines of one section of one provider, or nil.
func sectionLines(r *DiffReport, provider, title string) []string {
	for _, p := range r.Providers {
		if p.Name != provider {
			continue
		}
		for _, s := range p.Sections {
			if s.Title == title {
				return s.Lines
			}
		}
	}
	return nil
}

func reportText(t *testing.T, r *DiffReport) string {
	t.Helper()
	var b bytes.Buffer
	if err := r.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestDiffIdentical(t *testing.T) {
	a, b := loadCheckedIn(t), loadCheckedIn(t)
	r := Diff(a, b)
	if !r.Empty() {
		t.Errorf("clr.yaml against itself is not empty:\n%s", reportText(t, r))
	}
	if got := reportText(t, r); got != "" {
		t.Errorf("empty report printed %q", got)
	}
	if r := Diff(loadSmall(t), loadSmall(t)); !r.Empty() {
		t.Errorf("small.man against itself:\n%s", reportText(t, r))
	}
}

// TestDiffXMLAgainstYAML: the manifest and the schema imported from it
// (clr.yaml's source: key names it) are the same schema.
func TestDiffXMLAgainstYAML(t *testing.T) {
	y := loadCheckedIn(t)
	x := loadShared(t, y.Source)
	if r := Diff(x, y); !r.Empty() {
		t.Errorf("%s against clr.yaml:\n%s", y.Source, reportText(t, r))
	}
}

// TestDiffSmall makes one change of each kind to the small manifest and
// checks the whole report.
func TestDiffSmall(t *testing.T) {
	old, s := loadSmall(t), loadSmall(t)
	rt := s.Provider("Test-Runtime")
	// Keywords: rename (same mask), add, remove.
	rt.Keyword("LoaderKeyword").Name = "AssemblyLoaderKeyword"
	for _, e := range rt.Events {
		for i, k := range e.Keywords {
			if k == "LoaderKeyword" {
				e.Keywords[i] = "AssemblyLoaderKeyword"
			}
		}
	}
	rt.Keywords = append(rt.Keywords[:2], &Keyword{Name: "JitKeyword", Mask: 0x10})
	// Tasks and opcodes.
	rt.Tasks = append(rt.Tasks, &Task{Name: "CLRMethod", Value: 9})
	gc := rt.Task("GarbageCollection")
	gc.Opcodes = append(gc.Opcodes, &Opcode{Name: "GCJoin", Value: 203})
	rt.Task("CLRLoader").Name = "Loader"
	for _, e := range rt.Events {
		if e.Task == "CLRLoader" {
			e.Task = "Loader"
		}
	}
	// Maps.
	reason := rt.Map("GCReasonMap")
	reason.Entries[0].Name = "AllocSmallObject"
	reason.Entries = append(reason.Entries, &MapEntry{Value: 2, Name: "LowMemory"})
	rt.Maps = append(rt.Maps, &Map{Name: "GCTypeMap", Kind: ValueMap, Entries: []*MapEntry{{Value: 0, Name: "NonConcurrentGC"}}})
	// Events: add a version, remove one, change level and fields.
	rt.Events = append(rt.Events, &Event{Value: 9, Version: 3, Symbol: "GCStart_V3", Task: "GarbageCollection",
		Opcode: "win:Start", Level: "win:Informational", Keywords: []string{"GCKeyword"}, Template: "GCStart_V2"})
	// An event of one field is counted in the singular.
	rt.Templates = append(rt.Templates, &Template{TID: "Ping", Fields: []*Field{{Name: "Value", InType: "win:UInt32"}}})
	rt.Events = append(rt.Events, &Event{Value: 30, Version: 0, Symbol: "Ping", Level: "win:Informational", Template: "Ping"})
	var keep []*Event
	for _, e := range rt.Events {
		if e.Symbol != "GCStart_V1" {
			keep = append(keep, e)
		}
	}
	rt.Events = keep
	rt.Event("GCPerHeap").Level = "win:Informational"
	// Moving an event to another task or opcode is a change; renaming the
	// task (above) or an opcode is not.
	rt.Event("MethodILToNativeMap").Task = "CLRMethod"
	rt.Event("MethodILToNativeMap").Opcode = "win:Info"
	gc.Opcodes[0].Name = "HeapStats"
	rt.Event("GCPerHeap").Opcode = "HeapStats"
	il := rt.Template("MethodILToNativeMap")
	il.Fields = append(il.Fields, &Field{Name: "ILVersionID", InType: "win:UInt64"})
	rt.Template("BulkType").Fields[2].Fields[3].InType = "win:UInt32"
	// A renamed template with the same fields is no change.
	rt.Template("ModuleLoad").TID = "ModuleLoad_V0"
	rt.Event("ModuleLoad").Template = "ModuleLoad_V0"
	// A provider removed.
	s.Providers = []*Provider{rt}
	canonicalize(s)
	if err := Validate(s); err != nil {
		t.Fatalf("the changed schema is invalid: %v", err)
	}

	want := `- provider Test-Rundown
  events removed:
    - ModuleDCStop (144 v0)
provider Test-Runtime
  keywords added:
    + JitKeyword 0x10
  keywords removed:
    - StackKeyword 0x40000000
  keywords renamed:
    ~ 0x8: LoaderKeyword → AssemblyLoaderKeyword
  tasks added:
    + CLRMethod (9)
  tasks renamed:
    ~ 10: CLRLoader → Loader
  opcodes added:
    + GarbageCollection/GCJoin (203)
  opcodes renamed:
    ~ GarbageCollection/133: GCHeapStats → HeapStats
  maps added:
    + GCTypeMap (valueMap, 1 value)
  map values added:
    + GCReasonMap 0x2 LowMemory
  map values renamed:
    ~ GCReasonMap 0x0: AllocSmall → AllocSmallObject
  events added:
    + GCStart_V3 (9 v3), task GarbageCollection, keywords GCKeyword, 6 fields
    + Ping (30 v0), 1 field
  events removed:
    - GCStart_V1 (9 v1)
  events changed:
    ~ GCPerHeap (4 v0): level win:Verbose → win:Informational
    ~ BulkType (15 v0): field Values.Params win:UInt64 count ParamCount → win:UInt32 count ParamCount
    ~ MethodILToNativeMap (190 v0): task (none) → CLRMethod; opcode (none) → win:Info; field +ILVersionID at 5 (win:UInt64)
`
	if d := cmp.Diff(want, reportText(t, Diff(old, s))); d != "" {
		t.Errorf("report (-want +got):\n%s", d)
	}
	// And backwards: the same changes the other way.
	back := reportText(t, Diff(s, old))
	for _, l := range []string{"+ provider Test-Rundown", "- JitKeyword 0x10", "+ StackKeyword 0x40000000",
		"~ 0x8: AssemblyLoaderKeyword → LoaderKeyword", "+ GCStart_V1 (9 v1)", "- GCStart_V3 (9 v3)",
		"field -ILVersionID"} {
		if !strings.Contains(back, l) {
			t.Errorf("reverse report lacks %q:\n%s", l, back)
		}
	}
}

// diffExpect is what a real upgrade's report must say for one provider.
type diffExpect struct {
	provider string
	// Counts of lines per section. A section not listed must be absent.
	counts map[string]int
	// Lines that must appear, by section.
	lines map[string][]string
	// The exact "events changed" lines.
	changed []string
}

func checkRealDiff(t *testing.T, oldName string, want []diffExpect, providers []string) {
	oldPath, newPath := sharedPath(t, oldName), sharedPath(t, manNet10)
	old, s := loadShared(t, oldName), loadShared(t, manNet10)
	r := Diff(old, s)
	text := reportText(t, r)
	t.Logf("%s → %s:\n%s", oldName, manNet10, text)

	// Independent counts: elements per provider in each file.
	oc, nc := xmlCounts(t, oldPath), xmlCounts(t, newPath)
	var got []string
	for _, p := range r.Providers {
		got = append(got, p.Name)
	}
	if d := cmp.Diff(providers, got); d != "" {
		t.Errorf("providers in report (-want +got):\n%s", d)
	}
	for _, w := range want {
		counts := map[string]int{}
		for _, p := range r.Providers {
			if p.Name == w.provider {
				for _, sec := range p.Sections {
					counts[sec.Title] = len(sec.Lines)
				}
			}
		}
		if d := cmp.Diff(w.counts, counts); d != "" {
			t.Errorf("%s: lines per section (-want +got):\n%s", w.provider, d)
		}
		// Nothing is removed upstream, so each "added" count is the
		// difference of the element counts.
		elems := map[string]string{"events added": "event", "keywords added": "keyword", "tasks added": "task"}
		if oc[w.provider] == nil {
			// A new provider's report lists only its events.
			elems = map[string]string{"events added": "event"}
		}
		for title, elem := range elems {
			if want := nc[w.provider][elem] - oc[w.provider][elem]; counts[title] != want {
				t.Errorf("%s: %s: %d lines, but the manifests differ by %d <%s> elements", w.provider, title, counts[title], want, elem)
			}
		}
		if oc[w.provider] == nil {
			// Only events.
		} else if want := nc[w.provider]["valueMap"] + nc[w.provider]["bitMap"] - oc[w.provider]["valueMap"] - oc[w.provider]["bitMap"]; counts["maps added"] != want {
			t.Errorf("%s: maps added: %d lines, but the manifests differ by %d maps", w.provider, counts["maps added"], want)
		}
		for title, ls := range w.lines {
			have := sectionLines(r, w.provider, title)
			for _, l := range ls {
				if !contains(have, l) {
					t.Errorf("%s: %s lacks %q", w.provider, title, l)
				}
			}
		}
		if d := cmp.Diff(w.changed, sectionLines(r, w.provider, "events changed")); d != "" {
			t.Errorf("%s: events changed (-want +got):\n%s", w.provider, d)
		}
	}
	if strings.Contains(text, "GCStart_V2") {
		t.Errorf("report mentions GCStart_V2, which did not change")
	}
}

func contains(ls []string, prefix string) bool {
	for _, l := range ls {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

// TestDiff2016ToNet10 reviews the .NET Framework → .NET 10 upgrade.
func TestDiff2016ToNet10(t *testing.T) {
	const rt, prv, rd = "Microsoft-Windows-DotNETRuntime", "Microsoft-Windows-DotNETRuntimePrivate", "Microsoft-Windows-DotNETRuntimeRundown"
	checkRealDiff(t, man2016, []diffExpect{
		{
			provider: rt,
			// PROVENANCE.md: 155→212 events, 28→39 keywords, 26→40 tasks.
			// Two keywords kept their mask under a new name. Events changed:
			// the two symbol renames upstream made, and two events that
			// gained a keyword (checked by hand in the XML).
			counts: map[string]int{"keywords added": 11, "keywords renamed": 2, "tasks added": 14, "opcodes added": 12,
				"maps added": 6, "map values added": 23, "map values renamed": 1, "events added": 57, "events changed": 4},
			lines: map[string][]string{
				"keywords renamed": {"~ 0x800000: GCHeapCollectKeyword → ManagedHeapCollectKeyword", "~ 0x4: FusionKeyword → AssemblyLoaderKeyword"},
				"keywords added":   {"+ WaitHandleKeyword 0x40000000000", "+ AllocationSamplingKeyword 0x80000000000"},
				"tasks added":      {"+ WaitHandleWait (39)", "+ AllocationSampling (40)"},
				"events added": {"+ AllocationSampled (303 v0)", "+ WaitHandleWaitStart (301 v0)", "+ WaitHandleWaitStop (302 v0)",
					"+ ModuleLoad_V3 (152 v3)", "+ MethodJitInliningFailed (192 v0)", "+ MethodJitTailCallFailed (191 v0)"},
				"map values renamed": {"~ GCRootKindMap 0x3: Other → Older"},
			},
			changed: []string{
				"~ GCGenerationRange (23 v0): keywords 0x1 → 0x400000",
				"~ ExceptionThrown_V1 (80 v1): keywords 0x8000 → 0x200008000",
				"~ MethodJitInliningFailedAnsi (186 v0): symbol MethodJitInliningFailed → MethodJitInliningFailedAnsi",
				"~ MethodJitTailCallFailedAnsi (189 v0): symbol MethodJitTailCallFailed → MethodJitTailCallFailedAnsi",
			},
		},
		{
			provider: prv,
			counts:   map[string]int{"keywords added": 1, "tasks added": 1, "opcodes added": 1, "events added": 4, "events changed": 1},
			lines:    map[string][]string{"events added": {"+ CCWRefCountChange (200 v0)", "+ JittedMethodRichDebugInfo (189 v0)"}},
			changed:  []string{"~ CCWRefCountChangeAnsi (193 v0): symbol CCWRefCountChange → CCWRefCountChangeAnsi"},
		},
		{
			provider: rd,
			counts:   map[string]int{"keywords added": 2, "tasks added": 3, "maps added": 1, "map values added": 7, "events added": 6},
			lines:    map[string][]string{"events added": {"+ ModuleDCEnd_V3 (154 v3)"}},
		},
		{
			provider: "Microsoft-DotNETRuntimeMonoProfiler",
			counts:   map[string]int{"events added": 65},
		},
	}, []string{"Microsoft-DotNETRuntimeMonoProfiler", rt, prv, rd})
}

// TestDiff2021ToNet10 reviews the .NET 6 → .NET 10 upgrade: PROVENANCE.md
// lists its 13 new events and the changes below.
func TestDiff2021ToNet10(t *testing.T) {
	const rt, prv, rd = "Microsoft-Windows-DotNETRuntime", "Microsoft-Windows-DotNETRuntimePrivate", "Microsoft-Windows-DotNETRuntimeRundown"
	checkRealDiff(t, man2021, []diffExpect{
		{
			provider: rt,
			counts: map[string]int{"keywords added": 2, "keywords renamed": 1, "tasks added": 3, "opcodes added": 1,
				"maps added": 1, "map values added": 4, "events added": 9, "events changed": 1},
			lines: map[string][]string{
				"keywords renamed": {"~ 0x800000: GCHeapCollectKeyword → ManagedHeapCollectKeyword"},
				"events added": {"+ ThreadPoolMinMaxThreads (59 v0)", "+ ContentionStart_V2 (81 v2)", "+ ContentionLockCreated (90 v0)",
					"+ ModuleLoad_V3 (152 v3)", "+ R2RGetEntryPoint_V1 (159 v1)", "+ MethodILToNativeMap_V1 (190 v1)",
					"+ WaitHandleWaitStart (301 v0)", "+ WaitHandleWaitStop (302 v0)", "+ AllocationSampled (303 v0)"},
			},
			changed: []string{"~ GCDynamicEvent (39 v0): level win:LogAlways → win:Informational"},
		},
		{
			provider: prv,
			counts:   map[string]int{"keywords added": 1, "tasks added": 1, "events added": 1},
			lines:    map[string][]string{"events added": {"+ JittedMethodRichDebugInfo (189 v0)"}},
		},
		{
			provider: rd,
			counts:   map[string]int{"map values added": 3, "events added": 3},
			lines: map[string][]string{"events added": {"+ MethodDCStartILToNativeMap_V1 (149 v1)",
				"+ MethodDCEndILToNativeMap_V1 (150 v1)", "+ ModuleDCEnd_V3 (154 v3)"}},
		},
	}, []string{rt, prv, rd})
}

// Example output format of a report, for the reader.
func ExampleDiffReport_Write() {
	r := &DiffReport{Providers: []*ProviderDiff{{Name: "P", Sections: []*DiffSection{{Title: "events added", Lines: []string{"+ E (1 v0), 0 fields"}}}}}}
	var b bytes.Buffer
	r.Write(&b)
	fmt.Print(b.String())
	// Output:
	// provider P
	//   events added:
	//     + E (1 v0), 0 fields
}
