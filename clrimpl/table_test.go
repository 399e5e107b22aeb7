package clrimpl

import (
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// fakeEvent is an event type of one uint32 field, as generated code would
// write it, for the tests of Table and EventFields.
type fakeEvent struct {
	desc *Descriptor
	V    uint32
}

func (e *fakeEvent) Decode(b []byte, ptrSize int) (int, error) {
	if len(b) < 4 {
		return 0, NewDecodeError("fake", e.desc.Name, "V", 0, ErrShortPayload)
	}
	e.V = binary.LittleEndian.Uint32(b)
	return 4, nil
}
func (e *fakeEvent) Encode(dst []byte, ptrSize int) []byte {
	return binary.LittleEndian.AppendUint32(dst, e.V)
}
func (e *fakeEvent) AppendJSON(dst []byte) []byte {
	return strconv.AppendUint(append(dst, `{"V":`...), uint64(e.V), 10)
}
func (e *fakeEvent) AppendText(dst []byte) []byte {
	return strconv.AppendUint(append(dst, "V="...), uint64(e.V), 10)
}
func (e *fakeEvent) AppendColumns(a ColumnAppender) { a.Uint(uint64(e.V)) }
func (e *fakeEvent) Descriptor() *Descriptor        { return e.desc }

// fakeType is an EventType of fakeEvents.
type fakeType struct{ desc Descriptor }

func (t *fakeType) Descriptor() *Descriptor { return &t.desc }
func (t *fakeType) New() Event              { return &fakeEvent{desc: &t.desc} }

func newFakeType(provider string, id uint16, version uint8) *fakeType {
	t := &fakeType{desc: Descriptor{Provider: provider, ID: id, Version: version, Name: provider + "/" + strconv.Itoa(int(id)) + "v" + strconv.Itoa(int(version))}}
	t.desc.Fields = &EventFields{New: t.New}
	return t
}

var (
	guidA = MustParseGUID("e13c0d23-ccbc-4e12-931b-d9cc2eee27e4")
	guidB = MustParseGUID("a669021c-c450-4609-a035-5af59af4df18")
)

func fakeTable(t *testing.T) (*Table, []EventType) {
	t.Helper()
	// C has no GUID: the zero GUID of an event must not find it.
	providers := []ProviderInfo{{Name: "A", Short: "A", GUID: guidA}, {Name: "B", Short: "B", GUID: guidB}, {Name: "C", Short: "C"}}
	// Event 10 of A has versions 0 and 2, not 1; event 144 is in both
	// providers, meaning different things.
	types := []EventType{newFakeType("A", 10, 0), newFakeType("A", 10, 2), newFakeType("A", 144, 0), newFakeType("B", 144, 1), newFakeType("B", 0, 0)}
	return NewTable("fake", providers, types), types
}

func TestTableFind(t *testing.T) {
	tab, types := fakeTable(t)
	if tab.Package() != "fake" || tab.Len() != len(types) || len(tab.Providers()) != 3 || tab.String() != "Table(fake)" {
		t.Fatalf("table %s: package %q, %d types, %d providers", tab, tab.Package(), tab.Len(), len(tab.Providers()))
	}
	for i, typ := range types {
		if tab.Type(i) != typ {
			t.Errorf("Type(%d) = %v, want %v", i, tab.Type(i), typ)
		}
	}
	for _, c := range []struct {
		p          int
		id         uint16
		version    uint8
		find, prev int
	}{
		{0, 10, 0, 0, 0},
		{0, 10, 1, -1, 0}, // no version 1: the older one is 0
		{0, 10, 2, 1, 1},
		{0, 10, 9, -1, 1}, // past the newest: the newest
		{0, 144, 0, 2, 2},
		{1, 144, 0, -1, -1}, // B's 144 starts at version 1
		{1, 144, 1, 3, 3},
		{1, 144, 200, -1, 3},
		{1, 0, 0, 4, 4},
		{0, 11, 0, -1, -1},
		{0, 65535, 255, -1, -1},
		{2, 10, 0, -1, -1},
		{3, 10, 0, -1, -1},
		{-1, 10, 0, -1, -1},
	} {
		if got := tab.Find(c.p, c.id, c.version); got != c.find {
			t.Errorf("Find(%d, %d, %d) = %d, want %d", c.p, c.id, c.version, got, c.find)
		}
		if got := tab.FindOlder(c.p, c.id, c.version); got != c.prev {
			t.Errorf("FindOlder(%d, %d, %d) = %d, want %d", c.p, c.id, c.version, got, c.prev)
		}
	}
}

func TestTableProvider(t *testing.T) {
	tab, types := fakeTable(t)
	for _, c := range []struct {
		name string
		guid GUID
		p    int
		ok   bool
	}{
		{"A", GUID{}, 0, true},
		{"B", guidA, 1, true}, // the name wins
		{"", guidB, 1, true},
		{"Renamed", guidA, 0, true}, // an unknown name falls back to the GUID
		{"Renamed", GUID{}, 0, false},
		{"", GUID{}, 0, false},
		{"C", GUID{}, 2, true},
	} {
		if p, ok := tab.Provider(c.name, c.guid); p != c.p || ok != c.ok {
			t.Errorf("Provider(%q, %v) = %d, %v; want %d, %v", c.name, c.guid, p, ok, c.p, c.ok)
		}
	}
	if typ, ok := tab.Lookup("", guidB, 144, 1); !ok || typ != types[3] {
		t.Errorf("Lookup(B's GUID, 144, 1) = %v, %v", typ, ok)
	}
	if typ, ok := tab.Lookup("A", GUID{}, 10, 1); ok {
		t.Errorf("Lookup(A, 10, 1) = %v", typ)
	}
	if typ, ok := tab.LookupOlder("A", GUID{}, 10, 1); !ok || typ != types[0] {
		t.Errorf("LookupOlder(A, 10, 1) = %v, %v", typ, ok)
	}
	for _, f := range []func(string, GUID, uint16, uint8) (EventType, bool){tab.Lookup, tab.LookupOlder} {
		if typ, ok := f("D", GUID{9}, 10, 0); ok {
			t.Errorf("lookup in an unknown provider = %v", typ)
		}
	}
}

func TestNewTableRejects(t *testing.T) {
	providers := []ProviderInfo{{Name: "A"}}
	for _, c := range []struct {
		types []EventType
		want  string
	}{
		{[]EventType{newFakeType("B", 1, 0)}, `of provider "B", which the table does not have`},
		{[]EventType{newFakeType("A", 1, 0), newFakeType("A", 2, 0), newFakeType("A", 1, 0)}, "event types 0 (A/1v0) and 2 (A/1v0) are both A event 1 version 0"},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), c.want) {
					t.Errorf("the table panics with %v, want %q", r, c.want)
				}
			}()
			tab := NewTable("bad", providers, c.types)
			tab.Find(0, 1, 0) // the first look-up builds the index
			t.Errorf("no panic at the first look-up")
		}()
	}
}

func TestRegister(t *testing.T) {
	tab, _ := fakeTable(t)
	before, v0 := Tables(), TablesVersion()
	Register(tab)
	v1 := TablesVersion()
	Register(tab)
	if v1 == v0 || TablesVersion() != v1 {
		t.Errorf("TablesVersion: %d before, %d after a table, %d after it again; want a change, then none", v0, v1, TablesVersion())
	}
	after := Tables()
	if len(after) != len(before)+1 || after[len(after)-1] != tab || !slices.Equal(after[:len(before)], before) {
		t.Errorf("Tables after registering one table twice: %v, before: %v", after, before)
	}
	after[0] = nil // the caller's copy
	if Tables()[0] == nil {
		t.Error("Tables returns the registry itself")
	}
	defer func() {
		if recover() == nil {
			t.Error("Register(nil) does not panic")
		}
	}()
	Register(nil)
}

// TestEventFields checks the FieldWriter of a generated type: the event's
// own output, the decoder's error with dst unchanged, no allocation once a
// value is pooled.
func TestEventFields(t *testing.T) {
	typ := newFakeType("A", 1, 0)
	f := typ.desc.Fields
	payload := binary.LittleEndian.AppendUint32(nil, 1234)
	if out, err := f.AppendJSON([]byte("x"), payload, 8); err != nil || string(out) != `x{"V":1234` {
		t.Errorf("AppendJSON = %q, %v", out, err)
	}
	if out, err := f.AppendText(nil, payload, 8); err != nil || string(out) != "V=1234" {
		t.Errorf("AppendText = %q, %v", out, err)
	}
	c := &countingAppender{}
	if err := f.AppendColumns(c, payload, 8); err != nil || c.n != 1 || c.last != 1234 {
		t.Errorf("AppendColumns: %v, %d calls, last %d", err, c.n, c.last)
	}
	want := `fake: A/1v0: field "V" at byte 0: payload too short`
	if out, err := f.AppendJSON([]byte("x"), payload[:3], 8); err == nil || err.Error() != want || string(out) != "x" {
		t.Errorf("AppendJSON of a short payload = %q, %v; want x, %s", out, err, want)
	}
	if out, err := f.AppendText([]byte("x"), payload[:3], 8); err == nil || err.Error() != want || string(out) != "x" {
		t.Errorf("AppendText of a short payload = %q, %v; want x, %s", out, err, want)
	}
	c.n = 0
	if err := f.AppendColumns(c, nil, 8); err == nil || err.Error() != want || c.n != 0 {
		t.Errorf("AppendColumns of a short payload: %v after %d calls; want %s", err, c.n, want)
	}
	buf := make([]byte, 0, 64)
	if allocs := testing.AllocsPerRun(100, func() { f.AppendJSON(buf[:0], payload, 8) }); allocs != 0 {
		t.Errorf("AppendJSON allocates %v times", allocs)
	}
	if allocs := testing.AllocsPerRun(100, func() { f.AppendColumns(c, payload, 8) }); allocs != 0 {
		t.Errorf("AppendColumns allocates %v times", allocs)
	}
}

type countingAppender struct {
	n    int
	last uint64
}

func (c *countingAppender) Bool(bool)       { c.n++ }
func (c *countingAppender) Int(int64)       { c.n++ }
func (c *countingAppender) Uint(v uint64)   { c.n++; c.last = v }
func (c *countingAppender) Float(float64)   { c.n++ }
func (c *countingAppender) GUID(GUID)       { c.n++ }
func (c *countingAppender) Bytes([]byte)    { c.n++ }
func (c *countingAppender) Scratch() []byte { return nil }

// TestNewTableShownProvider checks that an event type whose descriptor
// names the provider it is shown under (every kernel class's "Windows
// Kernel") finds its provider by GUID, and that lookups by the shown name
// fall back to the GUID.
func TestNewTableShownProvider(t *testing.T) {
	providers := []ProviderInfo{{Name: "Process", GUID: guidA}, {Name: "Thread", GUID: guidB}}
	a, b := newFakeType("Windows Kernel", 1, 3), newFakeType("Windows Kernel", 1, 3)
	a.desc.ProviderGUID, b.desc.ProviderGUID = guidA, guidB
	tab := NewTable("kern", providers, []EventType{a, b})
	for _, c := range []struct {
		guid GUID
		want EventType
	}{{guidA, a}, {guidB, b}} {
		if got, ok := tab.Lookup("Windows Kernel", c.guid, 1, 3); !ok || got != c.want {
			t.Errorf("Lookup(Windows Kernel, %s): %v %v", c.guid, got, ok)
		}
	}
	// Without a GUID, a name no provider has still panics.
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(r.(string), `of provider "Windows Kernel"`) {
				t.Errorf("the table panics with %v", r)
			}
		}()
		NewTable("kern", providers, []EventType{newFakeType("Windows Kernel", 1, 3)}).FindOlder(0, 1, 3)
		t.Errorf("no panic at the first look-up")
	}()
}

// countingType counts the calls of its Descriptor.
type countingType struct {
	*fakeType
	calls *atomic.Int32
}

func (t countingType) Descriptor() *Descriptor { t.calls.Add(1); return t.fakeType.Descriptor() }

// TestNewTableIndexesAtFirstLookup checks that NewTable looks at no type
// (a program linking a generated package it decodes nothing of does not
// pay for the index as it starts), and that look-ups from several
// goroutines at once index the table once and all find their types.
func TestNewTableIndexesAtFirstLookup(t *testing.T) {
	var calls atomic.Int32
	var types []EventType
	for id := range uint16(50) {
		types = append(types, countingType{newFakeType("A", id, 0), &calls})
	}
	tab := NewTable("lazy", []ProviderInfo{{Name: "A"}}, types)
	if n := calls.Load(); n != 0 {
		t.Fatalf("NewTable called Descriptor %d times", n)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range uint16(50) {
				if i := tab.Find(0, (id+uint16(g)*13)%50, 0); i != int((id+uint16(g)*13)%50) {
					t.Errorf("Find(0, %d, 0) = %d", id, i)
				}
			}
		}()
	}
	wg.Wait()
	if n := calls.Load(); n != 50 {
		t.Errorf("indexing called Descriptor %d times, want once a type (50)", n)
	}
}
