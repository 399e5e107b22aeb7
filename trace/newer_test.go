package trace

import (
	"bytes"
	"slices"
	"testing"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/internal/tracetest"
	"github.com/clrgo/clrevents/kernelevents"
)

// TestNewerVersion: a newer version of a known event than the tables hold
// has no Type, but decodes with the newest older version (DecodeType),
// and is named, and has the task and opcode, of that version: before,
// its Name was empty, its DisplayName "EventID(1)" and its task and opcode
// 0, and the packages that look for events by type (DecodeType now)
// missed them.
func TestNewerVersion(t *testing.T) {
	r, err := NewReader(bytes.NewReader(tracetest.NewerGCStart(t, "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip")))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	v2, _ := clrevents.Lookup(clrevents.ProviderRuntime, 1, 2)
	n := 0
	for {
		e, err := r.Next()
		if err != nil {
			break
		}
		if e.Provider() != "Microsoft-Windows-DotNETRuntime" || e.ID() != 1 {
			continue
		}
		n++
		if _, ok := e.Type(); ok {
			t.Fatalf("GCStart version %d has a Type", e.Version())
		}
		typ, ok := e.DecodeType()
		ev, derr := e.Decode()
		if e.Version() != 3 || !ok || typ != clrimpl.EventType(v2) || derr != nil || ev.Descriptor() != v2.Descriptor() {
			t.Fatalf("GCStart version %d: DecodeType %v, %v; Decode %T, %v; want %v", e.Version(), typ, ok, ev, derr, v2)
		}
		if e.Name() != "GCStart_V2" || e.DisplayName() != "GC/Start" || e.Task() != v2.Task || e.Opcode() != uint8(v2.Opcode) {
			t.Fatalf("GCStart version 3: Name %q, DisplayName %q, task %d, opcode %d; want version 2's", e.Name(), e.DisplayName(), e.Task(), e.Opcode())
		}
	}
	if n != 478 {
		t.Errorf("%d GCStart events, want 478", n)
	}

	// WithExactVersions: no type to decode with, and nothing named.
	r2, err := NewReader(bytes.NewReader(tracetest.NewerGCStart(t, "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip")), WithExactVersions())
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	for {
		e, err := r2.Next()
		if err != nil {
			break
		}
		if e.Provider() == "Microsoft-Windows-DotNETRuntime" && e.ID() == 1 {
			if _, ok := e.DecodeType(); ok || e.Name() != "" {
				t.Fatalf("exact versions: GCStart version 3 has a DecodeType, or the name %q", e.Name())
			}
			break
		}
	}
}

// TestOwnFirst: clrevents' table comes first among the registered ones,
// whichever registered first, the others keeping their order: the
// packages above this one find the runtime's events as clrevents' types
// even when the program links another generated package with some of
// the same events whose import path sorts first.
func TestOwnFirst(t *testing.T) {
	c, k := clrevents.Table(), kernelevents.Table()
	for _, tc := range []struct{ in, want []*clrimpl.Table }{
		{[]*clrimpl.Table{k, c}, []*clrimpl.Table{c, k}},
		{[]*clrimpl.Table{c, k}, []*clrimpl.Table{c, k}},
		{[]*clrimpl.Table{k}, []*clrimpl.Table{k}},
		{nil, nil},
	} {
		if got := ownFirst(slices.Clone(tc.in)); !slices.Equal(got, tc.want) {
			t.Errorf("ownFirst(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestTypePkg: the package of a value's type, through a pointer or not,
// and "" for nil.
func TestTypePkg(t *testing.T) {
	info, _ := clrevents.Lookup(clrevents.ProviderRuntime, 1, 2)
	for _, c := range []struct {
		v    any
		want string
	}{
		{info, "github.com/clrgo/clrevents/clrevents"},
		{*info, "github.com/clrgo/clrevents/clrevents"},
		{3, ""},
		{nil, ""},
	} {
		if got := typePkg(c.v); got != c.want {
			t.Errorf("typePkg(%T) = %q, want %q", c.v, got, c.want)
		}
	}
}
