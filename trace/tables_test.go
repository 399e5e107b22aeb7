package trace_test

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/internal/tracetest"
	"github.com/clrgo/clrevents/kernelevents"
	"github.com/clrgo/clrevents/trace"
)

const (
	gcETL      = "../testdata/traces/gcevents.etl.zip"
	gcNetTrace = "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"
)

// tagType is an event type of a test table: one of clrevents' types under
// a name of its own ("sub:GCStart_V2") and with values of a Go type of
// its own (*tagEvent), so that a test sees which table decoded an event.
type tagType struct {
	info *clrevents.EventInfo
	desc clrimpl.Descriptor
}

func (t *tagType) Descriptor() *clrimpl.Descriptor { return &t.desc }
func (t *tagType) New() clrimpl.Event              { return &tagEvent{Event: t.info.New(), typ: t} }

type tagEvent struct {
	clrimpl.Event
	typ *tagType
}

func (e *tagEvent) Descriptor() *clrimpl.Descriptor { return &e.typ.desc }

// subset is a table of clrevents' types that keep holds, as tagTypes
// named "pkg:Name".
func subset(pkg string, keep func(*clrevents.EventInfo) bool) *clrimpl.Table {
	var types []clrimpl.EventType
	for _, info := range clrevents.Events() {
		if keep(info) {
			tt := &tagType{info: info, desc: *info.Descriptor()}
			tt.desc.Name = pkg + ":" + tt.desc.Name
			types = append(types, tt)
		}
	}
	return clrimpl.NewTable(pkg, clrevents.Providers(), types)
}

func isGC(info *clrevents.EventInfo) bool { return strings.HasPrefix(info.Name, "GC") }

// decoded counts what a reader's events decoded as.
type decoded struct {
	tagged, clr int // values of the test table's types, of clrevents'
	// unknown: events of the runtime's provider no table has.
	unknown int
	// kernel: the kernel's events, which decode with kernelevents
	// whatever the tables.
	kernel int
	names  map[string]int // GCStart's decoded names
}

// scan reads every event of path and checks that Type, Decode and
// Descriptor agree: an event of a Type decodes into a value of that type,
// whose Descriptor is the type's and the event's.
func scan(t *testing.T, path string, opts ...trace.Option) decoded {
	t.Helper()
	r, err := trace.Open(path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c := decoded{names: map[string]int{}}
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		typ, hasType := e.Type()
		ev, err := e.Decode()
		switch {
		case errors.Is(err, clrimpl.ErrUnknownEvent):
			if hasType {
				t.Fatalf("%s/%s: a Type, and Decode says %v", e.Provider(), e.Name(), err)
			}
			// (An ETW provider no table names is shown by its GUID.)
			if e.Provider() == "Microsoft-Windows-DotNETRuntime" || e.ProviderGUID() == clrevents.ProviderRuntime.GUID() {
				c.unknown++
			}
			continue
		case err != nil:
			t.Fatalf("%s/%s: %v", e.Provider(), e.Name(), err)
		}
		d := e.Descriptor()
		if ev.Descriptor() != d || hasType && typ.Descriptor() != d {
			t.Fatalf("%s/%s: decoded %q, descriptor %q", e.Provider(), e.Name(), ev.Descriptor().Name, d.Name)
		}
		if strings.HasSuffix(d.Name, "GCStart_V2") || strings.HasSuffix(d.Name, "GCStart_V1") {
			c.names[d.Name]++
		}
		switch ev.(type) {
		case *tagEvent:
			c.tagged++
		case clrevents.Event:
			c.clr++
		case kernelevents.Event:
			c.kernel++
		default:
			t.Fatalf("%s/%s: decoded a %T", e.Provider(), e.Name(), ev)
		}
	}
	return c
}

// TestWithEvents: a Reader decodes with the tables WithEvents gives, the
// first that has an event's type winning, and by default with the
// registered ones; in both formats (EventPipe resolves types per
// metadata record, ETW per provider and event).
func TestWithEvents(t *testing.T) {
	sub := subset("sub", isGC)
	for _, path := range []string{gcETL, gcNetTrace} {
		t.Run(path[strings.LastIndex(path, "/")+1:], func(t *testing.T) {
			// By default: the registered tables, clrevents among them.
			r, err := trace.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Tables(); !slices.Equal(got, clrimpl.Tables()) || !slices.Contains(got, clrevents.Table()) {
				t.Errorf("default tables %v, want the registered ones %v", got, clrimpl.Tables())
			}
			r.Close()
			all := scan(t, path)
			if all.tagged != 0 || all.clr == 0 || all.unknown != 0 || all.names["GCStart_V2"] == 0 {
				t.Fatalf("default tables: %+v", all)
			}

			// The subset alone: only GC events decode, as its types.
			only := scan(t, path, trace.WithEvents(sub))
			if only.tagged == 0 || only.clr != 0 || only.unknown == 0 || only.names["sub:GCStart_V2"] != all.names["GCStart_V2"] {
				t.Errorf("WithEvents(sub): %+v", only)
			}
			// The subset first: GC events decode as its types, the
			// rest as clrevents'; and as many as with clrevents alone.
			first := scan(t, path, trace.WithEvents(sub, clrevents.Table()))
			if first.tagged != only.tagged || first.tagged+first.clr != all.clr || first.unknown != 0 {
				t.Errorf("WithEvents(sub, clrevents): %+v; clrevents alone %+v, sub alone %+v", first, all, only)
			}
			// Options add up, and a table given twice counts once.
			if twice := scan(t, path, trace.WithEvents(sub), trace.WithEvents(clrevents.Table(), sub)); twice.tagged != first.tagged || twice.clr != first.clr {
				t.Errorf("WithEvents(sub), WithEvents(clrevents, sub): %+v, want %+v", twice, first)
			}
			// clrevents first: the subset has nothing left to decode.
			if last := scan(t, path, trace.WithEvents(clrevents.Table(), sub)); last.tagged != 0 || last.clr != all.clr {
				t.Errorf("WithEvents(clrevents, sub): %+v", last)
			}
			// No tables: nothing decodes but the kernel's events.
			if none := scan(t, path, trace.WithEvents()); none.tagged+none.clr != 0 || none.unknown == 0 || none.kernel != all.kernel {
				t.Errorf("WithEvents(): %+v", none)
			}
			if strings.Contains(path, ".etl") && all.kernel == 0 {
				t.Errorf("no kernel event of %s decoded", path)
			}
		})
	}
}

// TestTablesOlderVersions: a version no table has decodes as the newest
// older version the first table that has one holds (unless
// WithExactVersions), and a table that has the version wins over an
// earlier one that has only an older version.
func TestTablesOlderVersions(t *testing.T) {
	// GCStart V0 and V1, not V2 (the traces' version).
	old := subset("old", func(info *clrevents.EventInfo) bool {
		return info.Name == "GCStart" || info.Name == "GCStart_V1"
	})
	for _, path := range []string{gcETL, gcNetTrace} {
		t.Run(path[strings.LastIndex(path, "/")+1:], func(t *testing.T) {
			want := scan(t, path).names["GCStart_V2"]
			if got := scan(t, path, trace.WithEvents(old)).names; got["old:GCStart_V1"] != want || len(got) != 1 {
				t.Errorf("WithEvents(old): GCStart decoded as %v, want %d old:GCStart_V1", got, want)
			}
			if got := scan(t, path, trace.WithEvents(old, clrevents.Table())).names; got["GCStart_V2"] != want || len(got) != 1 {
				t.Errorf("WithEvents(old, clrevents): GCStart decoded as %v, want %d GCStart_V2", got, want)
			}
			if got := scan(t, path, trace.WithEvents(old), trace.WithExactVersions()).names; len(got) != 0 {
				t.Errorf("WithEvents(old), WithExactVersions: GCStart decoded as %v, want not at all", got)
			}

			// The older version's fields, and the rest of the payload
			// past them.
			r, err := trace.Open(path, trace.WithEvents(old))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for {
				e, err := r.Next()
				if err != nil {
					t.Fatalf("no GCStart event: %v", err)
				}
				if e.Provider() == "Microsoft-Windows-DotNETRuntime" && e.ID() == 1 && e.Version() == 2 {
					if typ, ok := e.Type(); ok {
						t.Errorf("GCStart_V2 has the Type %s in a table without it", typ.Descriptor().Name)
					}
					// Named as the version it decodes as.
					if typ, ok := e.DecodeType(); !ok || typ.Descriptor().Name != "old:GCStart_V1" || e.Name() != "old:GCStart_V1" {
						t.Errorf("GCStart_V2: DecodeType %v, %v, Name %q; want old:GCStart_V1", typ, ok, e.Name())
					}
					ev, n, err := e.DecodeN()
					if err != nil {
						t.Fatal(err)
					}
					v1, ok := ev.(*tagEvent).Event.(*clrevents.GCStartV1)
					if !ok || n != len(e.Payload())-8 || e.Descriptor().Name != "old:GCStart_V1" {
						t.Errorf("GCStart_V2 decoded as %T (%s), %d bytes of %d", ev, e.Descriptor().Name, n, len(e.Payload()))
					}
					json, err := e.AppendJSON(nil)
					if err != nil || string(json) != string(v1.AppendJSON(nil)) {
						t.Errorf("AppendJSON %s, %v; the V1 value writes %s", json, err, v1.AppendJSON(nil))
					}
					return
				}
			}
		})
	}
}

// TestDecodeAllocs: decoding reuses one value per event type: reading a
// whole trace and decoding every event allocates what reading alone does
// plus the first value of each type (and each table's list of values),
// whatever the tables.
func TestDecodeAllocs(t *testing.T) {
	member := tracetest.Bytes(t, gcNetTrace)
	sub := subset("sub", isGC)
	for _, tables := range [][]*clrimpl.Table{{clrevents.Table()}, {sub, clrevents.Table()}} {
		read := func(decode bool) (events, types int) {
			r, err := trace.NewReader(bytes.NewReader(member), trace.WithOrder(trace.FileOrder), trace.WithEvents(tables...))
			if err != nil {
				t.Fatal(err)
			}
			seen := map[*clrimpl.Descriptor]bool{}
			for {
				e, err := r.Next()
				if err != nil {
					break
				}
				if !decode {
					continue
				}
				if ev, err := e.Decode(); err == nil {
					events++
					seen[ev.Descriptor()] = true
				}
			}
			return events, len(seen)
		}
		events, types := read(true)
		decoding := testing.AllocsPerRun(2, func() { read(true) })
		reading := testing.AllocsPerRun(2, func() { read(false) })
		// The map of types seen allocates too, a little per type.
		if extra := decoding - reading; extra > float64(3*types+len(tables)+8) {
			t.Errorf("%v: %d events of %d types decoded with %.0f allocations more than reading them", tables, events, types, extra)
		} else {
			t.Logf("%v: %d events of %d types decoded with %.0f allocations more than reading them", tables, events, types, extra)
		}
	}
}

// TestNoGeneratedPackage: trace decodes through the tables it is given or
// finds registered, and links no generated package itself (one with
// *_gen.go files, such as clrevents), so that a program that decodes with
// a generated subset links only the subset; but for kernelevents, the
// Windows kernel's events, whose facts (a thread's process, a process's
// executable, a CPU sample's thread, a stack walk's event and frames) the
// front door needs to give an ETW trace's events their shape.
func TestNoGeneratedPackage(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command in PATH")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.GoFiles}}", "github.com/clrgo/clrevents/trace").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, files, _ := strings.Cut(line, " ")
		if pkg == "github.com/clrgo/clrevents/kernelevents" {
			n++
			continue
		}
		// Other modules' generated files (klauspost/compress's inflater)
		// are not event packages.
		if strings.HasPrefix(pkg, "github.com/clrgo/clrevents/") && strings.Contains(files, "_gen.go") {
			t.Errorf("trace depends on the generated package %s", pkg)
		}
		n++
	}
	if n < 10 {
		t.Fatalf("go list -deps listed %d packages:\n%s", n, out)
	}
}
