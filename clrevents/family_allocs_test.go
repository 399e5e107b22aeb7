package clrevents

import "testing"

// sampleOf returns the decoded sample of the event type named typeName.
func sampleOf(t *testing.T, typeName string) Event {
	t.Helper()
	for i, ev := range sampleEvents() {
		if info := Events()[i]; info.TypeName == typeName {
			got := info.New().(Event)
			if _, err := got.Decode(ev.Encode(nil, 8), 8); err != nil {
				t.Fatal(err)
			}
			return got
		}
	}
	t.Fatalf("no event type %s", typeName)
	return nil
}

var familySink int

// TestFamilyAccessorAllocs checks that reading a family's fields through
// its interface, as user code does after a type switch, allocates nothing.
func TestFamilyAccessorAllocs(t *testing.T) {
	for _, name := range []string{"MethodLoadVerbose", "MethodDCEndVerboseV2", "RuntimeMethodDCStartVerboseV2", "GCStart", "GCStartV2", "ModuleLoadV2", "ModuleDCEnd"} {
		ev := sampleOf(t, name)
		allocs := testing.AllocsPerRun(100, func() {
			switch ev := ev.(type) {
			case MethodLoadUnloadVerboseEvent:
				m := ev.MethodLoadUnloadVerboseFields()
				familySink += m.MethodName.Len() + int(m.ReJITID)
				if m.HasReJITID {
					familySink++
				}
				if m.Kind == KindMethodLoadVerbose && m.MethodFlags&MethodFlagsJitted != 0 {
					familySink++
				}
				familySink += len(m.Kind.String())
			case GCStartEvent:
				g := ev.GCStartFields()
				familySink += int(g.Count) + int(g.Depth)
			case ModuleLoadUnloadEvent:
				m := ev.ModuleLoadUnloadFields()
				familySink += m.ModuleILPath.Len()
			default:
				t.Fatalf("%s is in none of the families tested", name)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per family accessor call", name, allocs)
		}
	}
}
