package clrimpl

import (
	"fmt"
	"strconv"
	"sync"
)

// What a generated package calls to make, describe and register its event
// table. For generated code only (see the package doc).

// NewTable indexes the event types of the generated package pkg (its name,
// as its errors give it) over its providers, in the order given: the
// indexes of Table.Type are those of types. Every type's Descriptor names
// one of the providers (by its name, or, for a provider whose events are
// shown under another name, such as every kernel event class's "Windows
// Kernel", by its GUID), and no two types have the same provider, ID and
// version; the table panics otherwise, since generated code that breaks
// this is a generator bug. It indexes the types at its first look-up
// (Find, FindOlder, Lookup or LookupOlder), which is where it panics: a
// program that links a generated package and decodes none of its events
// (a trace of other providers, a tool that only reads headers) does not
// pay for the index as it starts. (A generated package's tests decode a
// sample of every type, so its table has been looked up there.)
//
// For generated code only.
func NewTable(pkg string, providers []ProviderInfo, types []EventType) *Table {
	return &Table{pkg: pkg, providers: providers, types: types}
}

// build indexes the table's types, at its first look-up: a program that
// links a generated package but reads no event of it (a trace of other
// providers) does not pay for touching every type's descriptor as it
// starts.
func (t *Table) build() {
	keys := make([]struct {
		p  int
		id uint16
		v  uint8
	}, len(t.types))
	for i, typ := range t.types {
		d := typ.Descriptor()
		p, ok := ProviderIndex(t.providers, d.Provider)
		if !ok && d.ProviderGUID != (GUID{}) {
			p, ok = ProviderIndexByGUID(t.providers, d.ProviderGUID)
		}
		if !ok {
			panic(fmt.Sprintf("clrimpl.NewTable: %s: event type %d (%s) is of provider %q, which the table does not have", t.pkg, i, d.Name, d.Provider))
		}
		keys[i].p, keys[i].id, keys[i].v = p, d.ID, d.Version
	}
	x := newIndex(len(t.providers), len(t.types), func(i int) (int, uint16, uint8) { return keys[i].p, keys[i].id, keys[i].v })
	// Two types of one key: the index holds the later, so the earlier's
	// look-up finds another. (Checked here rather than with a map of the
	// keys, which took most of the indexing's time.)
	for j, k := range keys {
		if i := x.lookup(k.p, k.id, k.v); i != j {
			d := t.types[i].Descriptor()
			panic(fmt.Sprintf("clrimpl.NewTable: %s: event types %d (%s) and %d (%s) are both %s event %d version %d", t.pkg, j, t.types[j].Descriptor().Name, i, d.Name, d.Provider, d.ID, d.Version))
		}
	}
	t.index = x
}

// Register adds a generated package's table to those Tables lists. A
// generated package calls it from an init function, so linking the package
// is enough for a reader that decodes through the registered tables to
// know its events. Registering a table again does nothing; a nil table
// panics.
//
// For generated code only.
func Register(t *Table) {
	if t == nil {
		panic("clrimpl.Register: nil table")
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	for _, r := range registry.tables {
		if r == t {
			return
		}
	}
	registry.tables = append(registry.tables, t)
	registry.version.Add(1)
}

// EventFields is the FieldWriter of a generated event type's Descriptor:
// each call decodes the payload into a value of the type and writes it
// with the value's own AppendJSON, AppendText or AppendColumns, so the
// output is the same as decoding and writing the value, and a payload
// that does not decode gives the decoder's error (a *DecodeError naming
// the event, the field and the byte offset), with dst unchanged.
//
// The values come from a pool (New makes them), so in steady state a call
// allocates nothing, and an EventFields is safe for concurrent use: each
// call has a value of its own. A pooled value keeps the views of the last
// payload it decoded (so that payload's memory) until the value is reused
// or the pool drops it at a garbage collection.
//
// A generated package declares one per event type, a package variable:
//
//	var fieldsGCStartV2 = clrimpl.EventFields{New: func() clrimpl.Event { return new(GCStartV2) }}
//
// For generated code only; use it through Descriptor.Fields. It must not
// be copied after first use.
type EventFields struct {
	// New returns a new zero value of the event type.
	New  func() Event
	pool sync.Pool
}

func (f *EventFields) decode(payload []byte, ptrSize int) (Event, error) {
	e, _ := f.pool.Get().(Event)
	if e == nil {
		e = f.New()
	}
	if _, err := e.Decode(payload, ptrSize); err != nil {
		f.pool.Put(e)
		return nil, err
	}
	return e, nil
}

// AppendJSON decodes payload and appends its fields as one JSON object.
func (f *EventFields) AppendJSON(dst, payload []byte, ptrSize int) ([]byte, error) {
	e, err := f.decode(payload, ptrSize)
	if err != nil {
		return dst, err
	}
	dst = e.AppendJSON(dst)
	f.pool.Put(e)
	return dst, nil
}

// AppendText decodes payload and appends its fields as Name=value pairs.
func (f *EventFields) AppendText(dst, payload []byte, ptrSize int) ([]byte, error) {
	e, err := f.decode(payload, ptrSize)
	if err != nil {
		return dst, err
	}
	dst = e.AppendText(dst)
	f.pool.Put(e)
	return dst, nil
}

// AppendColumns decodes payload and appends its fields to a, one call per
// column of the Descriptor's Columns; when the payload does not decode, it
// appends nothing.
func (f *EventFields) AppendColumns(a ColumnAppender, payload []byte, ptrSize int) error {
	e, err := f.decode(payload, ptrSize)
	if err != nil {
		return err
	}
	e.AppendColumns(a)
	f.pool.Put(e)
	return nil
}

// ProviderIndex finds a provider by name in a generated package's provider
// table.
//
// For generated code only; use Table.Provider.
func ProviderIndex(table []ProviderInfo, name string) (int, bool) {
	for i := range table {
		if table[i].Name == name {
			return i, true
		}
	}
	return 0, false
}

// ProviderIndexByGUID finds a provider by GUID in a generated package's
// provider table.
//
// For generated code only; use Table.Provider.
func ProviderIndexByGUID(table []ProviderInfo, g GUID) (int, bool) {
	for i := range table {
		if table[i].GUID == g {
			return i, true
		}
	}
	return 0, false
}

// ProviderString is a provider's name, or "Provider(n)" for an index
// outside the table.
//
// For generated code only.
func ProviderString(table []ProviderInfo, p int) string {
	if p < 0 || p >= len(table) {
		return "Provider(" + strconv.Itoa(p) + ")"
	}
	return table[p].Name
}
