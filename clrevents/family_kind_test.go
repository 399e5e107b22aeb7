package clrevents

import (
	"strings"
	"testing"
)

// The family fields whose members bind them to two providers' maps have the
// map's type, so flags combine with the constants without a conversion.
var (
	_ MethodFlags   = MethodLoadUnloadVerboseFields{}.MethodFlags
	_ MethodFlags   = MethodLoadUnloadFields{}.MethodFlags
	_ ModuleFlags   = ModuleLoadUnloadFields{}.ModuleFlags
	_ AssemblyFlags = AssemblyLoadUnloadFields{}.AssemblyFlags
	_ GCReason      = GCGlobalHeapFields{}.Reason
)

// TestMethodFamilyKinds: every member of the method load families has the
// kind its name says, whichever provider it comes from (the runtime
// provider's legacy RuntimeMethodDCStartVerboseV2 is a DCStart like the
// rundown's), and the flags keep their type and value.
func TestMethodFamilyKinds(t *testing.T) {
	byName := map[string]MethodLoadUnloadVerboseKind{
		"MethodLoadVerbose":    KindMethodLoadVerbose,
		"MethodUnloadVerbose":  KindMethodUnloadVerbose,
		"MethodDCStartVerbose": KindMethodDCStartVerbose,
		"MethodDCEndVerbose":   KindMethodDCEndVerbose,
	}
	counts := map[MethodLoadUnloadVerboseKind]int{}
	for _, fam := range Families() {
		if fam.Name != "MethodLoadUnloadVerbose" {
			continue
		}
		for _, info := range fam.Members {
			ev := sampleOf(t, info.TypeName)
			f := ev.(MethodLoadUnloadVerboseEvent).MethodLoadUnloadVerboseFields()
			name := strings.TrimPrefix(info.TypeName, "Runtime")
			name = strings.TrimSuffix(strings.TrimSuffix(name, "V1"), "V2")
			want, ok := byName[name]
			if !ok {
				t.Fatalf("member %s: no kind expected for %s", info.TypeName, name)
			}
			if f.Kind != want {
				t.Errorf("%s (%s): Kind %v, want %v", info.TypeName, info.Provider, f.Kind, want)
			}
			if f.Kind.String() != name {
				t.Errorf("%s: Kind prints %q, want %q", info.TypeName, f.Kind, name)
			}
			counts[f.Kind]++
		}
	}
	// Loads and unloads in 3 versions; DCStart and DCEnd in the rundown's 3
	// and the runtime provider's one.
	for k, n := range map[MethodLoadUnloadVerboseKind]int{KindMethodLoadVerbose: 3, KindMethodUnloadVerbose: 3, KindMethodDCStartVerbose: 4, KindMethodDCEndVerbose: 4} {
		if counts[k] != n {
			t.Errorf("%v: %d members, want %d", k, counts[k], n)
		}
	}
	if s := MethodLoadUnloadVerboseKind(0).String(); s != "MethodLoadUnloadVerboseKind(0x0)" {
		t.Errorf("zero kind prints %q", s)
	}
}

// TestKindsNotOpcodeNumbers: kinds follow opcode names, not numbers, which
// providers assign apart. The runtime's ModuleRangeLoad and the rundown's
// ModuleRangeDCStart are both opcode 10 and two kinds; the runtime's
// WorkerThreadCreate and WorkerThreadRetire are both win:Start, in two
// tasks, and two kinds.
func TestKindsNotOpcodeNumbers(t *testing.T) {
	load := sampleOf(t, "ModuleRangeLoad").(ModuleRangeEvent)
	dcStart := sampleOf(t, "ModuleRangeDCStart").(ModuleRangeEvent)
	if load.Info().Opcode != dcStart.Info().Opcode {
		t.Fatalf("opcodes %d and %d: the case this test is for is gone", load.Info().Opcode, dcStart.Info().Opcode)
	}
	if k := load.ModuleRangeFields().Kind; k != KindModuleRangeLoad {
		t.Errorf("ModuleRangeLoad: Kind %v", k)
	}
	if k := dcStart.ModuleRangeFields().Kind; k != KindModuleRangeDCStart {
		t.Errorf("ModuleRangeDCStart: Kind %v", k)
	}
	create := sampleOf(t, "WorkerThreadCreate").(ClrWorkerThreadEvent)
	retire := sampleOf(t, "WorkerThreadRetire").(ClrWorkerThreadEvent)
	if create.Info().OpcodeName != retire.Info().OpcodeName {
		t.Fatalf("opcodes %s and %s: the case this test is for is gone", create.Info().OpcodeName, retire.Info().OpcodeName)
	}
	if a, b := create.ClrWorkerThreadFields().Kind, retire.ClrWorkerThreadFields().Kind; a != KindWorkerThreadCreationStart || b != KindWorkerThreadRetirementStart {
		t.Errorf("WorkerThreadCreate, WorkerThreadRetire: kinds %v, %v", a, b)
	}
}

// TestFamilyFlagsTyped: a rundown event's flags, seen through the family,
// are the runtime's MethodFlags with the same bits and names.
func TestFamilyFlagsTyped(t *testing.T) {
	ev := &MethodDCEndVerboseV2{MethodFlags: RundownMethodFlagsJitted | RundownMethodFlagsGeneric}
	f := ev.MethodLoadUnloadVerboseFields()
	if f.MethodFlags&MethodFlagsJitted == 0 || f.MethodFlags&MethodFlagsGeneric == 0 || uint32(f.MethodFlags) != uint32(ev.MethodFlags) {
		t.Errorf("MethodFlags %v from %v", f.MethodFlags, ev.MethodFlags)
	}
	if f.MethodFlags.String() != ev.MethodFlags.String() {
		t.Errorf("MethodFlags prints %q, the rundown's %q", f.MethodFlags, ev.MethodFlags)
	}
}
