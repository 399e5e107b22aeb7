package trace

import (
	"bytes"
	"errors"
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

// TestDecodeTypeIn: with a generated package of one's own that has the
// newer version (GCStart version 3), Decode gives that package's type,
// and DecodeTypeIn and DecodeIn with clrevents' table still give
// clrevents' version 2, whichever table comes first. Events both tables
// have exactly are found in each.
func TestDecodeTypeIn(t *testing.T) {
	own := tracetest.OwnPackage("own", func(info *clrevents.EventInfo) bool { return info.Name == "GCEnd_V1" }, true)
	v2, _ := clrevents.Lookup(clrevents.ProviderRuntime, 1, 2)
	end, _ := clrevents.Lookup(clrevents.ProviderRuntime, 2, 1)
	for _, tables := range [][]*clrimpl.Table{{clrevents.Table(), own}, {own, clrevents.Table()}} {
		r, err := NewReader(bytes.NewReader(tracetest.NewerGCStart(t, "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip")), WithEvents(tables...))
		if err != nil {
			t.Fatal(err)
		}
		starts, ends := 0, 0
		for {
			e, err := r.Next()
			if err != nil {
				break
			}
			if e.Provider() != "Microsoft-Windows-DotNETRuntime" || e.ID() > 2 || e.ID() == 0 {
				continue
			}
			typ, _ := e.DecodeType()
			in, ok := e.DecodeTypeIn(clrevents.Table())
			ev, err := e.DecodeIn(clrevents.Table())
			ownTyp, ownOK := e.DecodeTypeIn(own)
			switch e.ID() {
			case 1:
				starts++
				if typ.Descriptor().Name != "own:GCStart_V3" || !ok || in != clrimpl.EventType(v2) || err != nil || ev.Descriptor() != v2.Descriptor() {
					t.Fatalf("tables %v: GCStart v3: DecodeType %s, DecodeTypeIn(clrevents) %v %v, DecodeIn %T %v", tables, typ.Descriptor().Name, in, ok, ev, err)
				}
				if _, isV2 := ev.(*clrevents.GCStartV2); !isV2 || !ownOK || ownTyp != typ {
					t.Fatalf("tables %v: GCStart v3 decoded in clrevents as %T; in its own table %v %v", tables, ev, ownTyp, ownOK)
				}
			case 2:
				ends++
				if !ok || in != clrimpl.EventType(end) || err != nil || !ownOK || ownTyp.Descriptor().Name != "own:GCEnd_V1" {
					t.Fatalf("tables %v: GCEnd: DecodeTypeIn(clrevents) %v %v %v; own %v %v", tables, in, ok, err, ownTyp, ownOK)
				}
				if want := tables[0] == own; (typ == ownTyp) != want {
					t.Fatalf("tables %v: GCEnd decodes as %s", tables, typ.Descriptor().Name)
				}
			}
		}
		r.Close()
		if starts != 478 || ends != 478 {
			t.Errorf("tables %v: %d GCStart, %d GCEnd, want 478 each", tables, starts, ends)
		}
	}
	// A table the Reader does not have: nothing.
	r, err := NewReader(bytes.NewReader(tracetest.NewerGCStart(t, "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip")))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	e, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := e.DecodeTypeIn(own); ok {
		t.Error("DecodeTypeIn of a table the Reader does not decode with found a type")
	}
	if _, err := e.DecodeIn(own); !errors.Is(err, clrimpl.ErrUnknownEvent) {
		t.Errorf("DecodeIn of a table the Reader does not have: %v", err)
	}
}
