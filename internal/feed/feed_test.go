package feed

import (
	"strings"
	"testing"

	"github.com/clrgo/clrevents/clrevents"
)

func TestByDisplayName(t *testing.T) {
	rt := []string{"Microsoft-Windows-DotNETRuntime"}
	k := ByDisplayName(rt, map[string]int{"GC/Start": 1, "GC/BulkNode": 2})
	versions := 0
	for typ, v := range k {
		info := typ.(*clrevents.EventInfo)
		switch {
		case v == 1 && strings.HasPrefix(info.Name, "GCStart"):
			versions++
		case v == 2 && info.Name == "GCBulkNode":
		default:
			t.Errorf("%s (%s) is kind %d", info.Name, info.DisplayName, v)
		}
	}
	if versions < 3 || len(k) != versions+1 {
		t.Errorf("%d types, %d of them GCStart's versions", len(k), versions)
	}
	// A name no event of the providers has is a mistake in the table.
	for _, name := range []string{"GC/NoSuchEvent", "Method/ILToNativeMapDCStart"} { // the second is the rundown provider's
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), name) {
					t.Errorf("%s: recovered %v", name, r)
				}
			}()
			ByDisplayName(rt, map[string]int{name: 1})
		}()
	}
}

func TestProcessTitle(t *testing.T) {
	for _, c := range []struct {
		pid  int64
		name string
		want string
	}{
		{1234, "", "Process 1234"},
		{1234, "app.exe", "Process 1234 (app.exe)"},
		{0, "Idle", "Process 0 (Idle)"},
		{-1, "", "Process (not recorded)"},
	} {
		if got := ProcessTitle(c.pid, c.name); got != c.want {
			t.Errorf("ProcessTitle(%d, %q) = %q, want %q", c.pid, c.name, got, c.want)
		}
	}
}
