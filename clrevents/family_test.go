package clrevents

// This file is also copied by gen/golden_test.go into the packages built
// from the golden cases, so it uses only what every generated package has.

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestFamilyFields checks every family against its members: for every
// member type, decode the sample event at both pointer sizes, call the
// family accessor, and compare the family's fields with the member's by
// name (reflection here only): a field the member has must hold its value
// (widened, for integers) with HasX true; a field it lacks must be zero with
// HasX false. A family whose members mean different things has a Kind
// field: it must name what the member's EventInfo says it is (wantKind),
// one value per meaning, never zero.
func TestFamilyFields(t *testing.T) {
	samples := sampleEvents()
	index := map[*EventInfo]int{}
	for i := range Events() {
		index[Events()[i]] = i
	}
	inFamily := map[*EventInfo]string{}
	for _, fam := range Families() {
		if len(fam.Members) < 2 {
			t.Errorf("family %s has %d members", fam.Name, len(fam.Members))
		}
		kinds := map[string]uint64{} // meaning → Kind
		byKind := map[uint64]string{}
		for _, info := range fam.Members {
			if prev, dup := inFamily[info]; dup {
				t.Errorf("%s is in families %s and %s", info, prev, fam.Name)
			}
			inFamily[info] = fam.Name
			for _, ptr := range []int{4, 8} {
				payload := samples[index[info]].Encode(nil, ptr)
				ev := info.New().(Event)
				if _, err := ev.Decode(payload, ptr); err != nil {
					t.Fatalf("%s: %v", info, err)
				}
				k, ok := checkFamily(t, fam.Name, ev)
				if !ok {
					continue
				}
				want := wantKind(info)
				if prev, seen := kinds[want]; seen && prev != k {
					t.Errorf("%s: Kind %d, but an earlier %s member was %d", info.TypeName, k, want, prev)
				}
				if prev, seen := byKind[k]; seen && prev != want {
					t.Errorf("%s: Kind %d is both %s and %s", info.TypeName, k, prev, want)
				}
				kinds[want], byKind[k] = k, want
			}
		}
		if len(kinds) == 1 {
			t.Errorf("family %s has a Kind, but all its members are %v", fam.Name, kinds)
		}
	}
}

// wantKind is what a member means within its family, from its EventInfo
// alone: an opcode of the task's own by its name; a standard opcode
// (win:Start, …) after the task's name without "Rundown" (win:Info: the
// task alone); without a task, the symbol without _V<n>.
func wantKind(info *EventInfo) string {
	op := info.OpcodeName
	if op != "" && !strings.HasPrefix(op, "win:") {
		return op
	}
	if info.TaskName == "" {
		return regexp.MustCompile(`_V[0-9]+$`).ReplaceAllString(info.Name, "")
	}
	task := strings.ReplaceAll(info.TaskName, "Rundown", "")
	if task == "" {
		task = info.TaskName
	}
	if op == "" || op == "win:Info" {
		return task
	}
	return task + strings.ReplaceAll(strings.TrimPrefix(op, "win:"), "_", "")
}

// checkFamily compares ev's family fields with its own, and returns the
// family's Kind if it has one.
func checkFamily(t *testing.T, family string, ev Event) (kind uint64, hasKind bool) {
	t.Helper()
	info := ev.Info()
	m := reflect.ValueOf(ev).MethodByName(family + "Fields")
	if !m.IsValid() {
		t.Errorf("%s has no method %sFields", info.TypeName, family)
		return 0, false
	}
	ff := m.Call(nil)[0]
	if got := ff.Type().Name(); got != family+"Fields" {
		t.Errorf("%s.%sFields returns %s", info.TypeName, family, got)
	}
	src := reflect.ValueOf(ev).Elem()
	seen := map[string]bool{}
	for j := 0; j < ff.NumField(); j++ {
		name := ff.Type().Field(j).Name
		if name == "Kind" && ff.Field(j).Type().Name() == family+"Kind" {
			k := ff.Field(j)
			kind, hasKind = k.Uint(), true
			if kind == 0 {
				t.Errorf("%s: %s.Kind is zero", info.TypeName, ff.Type().Name())
			}
			if got, want := k.Interface().(interface{ String() string }).String(), wantKind(info); got != want {
				t.Errorf("%s: %s.Kind is %s, want %s", info.TypeName, ff.Type().Name(), got, want)
			}
			continue
		}
		if rest, ok := strings.CutPrefix(name, "Has"); ok && ff.Field(j).Kind() == reflect.Bool {
			if _, isFlag := ff.Type().FieldByName(rest); isFlag {
				continue // checked with its field
			}
		}
		seen[name] = true
		got := ff.Field(j)
		has := ff.FieldByName("Has" + name)
		want := src.FieldByName(name)
		if !want.IsValid() {
			if !has.IsValid() {
				t.Errorf("%s lacks %s.%s, which has no Has%s", info.TypeName, ff.Type().Name(), name, name)
			} else if has.Bool() {
				t.Errorf("%s: Has%s is true, but the event has no %s", info.TypeName, name, name)
			}
			if !got.IsZero() {
				t.Errorf("%s: %s is %v, want zero", info.TypeName, name, got)
			}
			continue
		}
		if has.IsValid() && !has.Bool() {
			t.Errorf("%s: Has%s is false, but the event has %s", info.TypeName, name, name)
		}
		if !sameValue(want, got) {
			t.Errorf("%s: %s.%s is %v, the event's %v", info.TypeName, ff.Type().Name(), name, got, want)
		}
	}
	for j := 0; j < src.NumField(); j++ {
		if n := src.Type().Field(j).Name; !seen[n] {
			t.Logf("%s.%s is not in %s (types differ across the family)", info.TypeName, n, ff.Type().Name())
		}
	}
	return kind, hasKind
}

// sameValue compares a member's field with the family's: views by their
// Equal method, integers by value across widths, the rest deeply.
func sameValue(a, b reflect.Value) bool {
	if a.Type() == b.Type() {
		if eq := a.MethodByName("Equal"); eq.IsValid() && eq.Type().NumIn() == 1 && eq.Type().In(0) == b.Type() {
			return eq.Call([]reflect.Value{b})[0].Bool()
		}
		return reflect.DeepEqual(a.Interface(), b.Interface())
	}
	switch {
	case a.CanUint() && b.CanUint():
		return a.Uint() == b.Uint()
	case a.CanInt() && b.CanInt():
		return a.Int() == b.Int()
	}
	return false
}
