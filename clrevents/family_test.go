package clrevents

// This file is also copied by gen/golden_test.go into the packages built
// from the golden cases, so it uses only what every generated package has.

import (
	"reflect"
	"strings"
	"testing"
)

// TestFamilyFields checks every family against its members: for every
// member type, decode the sample event at both pointer sizes, call the
// family accessor, and compare the family's fields with the member's by
// name (reflection here only): a field the member has must hold its value
// (widened, for integers) with HasX true; a field it lacks must be zero with
// HasX false.
func TestFamilyFields(t *testing.T) {
	samples := sampleEvents()
	index := map[*EventInfo]int{}
	for i := range Events() {
		index[&Events()[i]] = i
	}
	inFamily := map[*EventInfo]string{}
	for _, fam := range Families() {
		if len(fam.Members) < 2 {
			t.Errorf("family %s has %d members", fam.Name, len(fam.Members))
		}
		for _, info := range fam.Members {
			if prev, dup := inFamily[info]; dup {
				t.Errorf("%s is in families %s and %s", info, prev, fam.Name)
			}
			inFamily[info] = fam.Name
			for _, ptr := range []int{4, 8} {
				payload := samples[index[info]].Encode(nil, ptr)
				ev := info.New()
				if _, err := ev.Decode(payload, ptr); err != nil {
					t.Fatalf("%s: %v", info, err)
				}
				checkFamily(t, fam.Name, ev)
			}
		}
	}
}

func checkFamily(t *testing.T, family string, ev Event) {
	t.Helper()
	info := ev.Info()
	m := reflect.ValueOf(ev).MethodByName(family + "Fields")
	if !m.IsValid() {
		t.Errorf("%s has no method %sFields", info.TypeName, family)
		return
	}
	ff := m.Call(nil)[0]
	if got := ff.Type().Name(); got != family+"Fields" {
		t.Errorf("%s.%sFields returns %s", info.TypeName, family, got)
	}
	src := reflect.ValueOf(ev).Elem()
	seen := map[string]bool{}
	for j := 0; j < ff.NumField(); j++ {
		name := ff.Type().Field(j).Name
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
