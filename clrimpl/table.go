package clrimpl

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// ProviderInfo describes a provider of a generated package.
type ProviderInfo struct {
	Name  string // e.g. "Microsoft-Windows-DotNETRuntime"
	Short string // e.g. "Runtime": the prefix of its Go names
	GUID  GUID
}

// Level is an ETW event level (LevelInformational, …).
type Level uint8

// Opcode is an ETW opcode: a standard one (OpcodeStart, …) or one a task
// defines.
type Opcode uint8

// Table is the event types of one generated package, indexed by provider,
// event ID and version: what a reader decodes events through. Each
// generated package makes one at initialization, registers it (Tables
// lists the registered ones) and returns it from its Table function, so a
// program can also name the tables to decode with, e.g. only a generated
// subset.
//
// The lookups come in two steps, for readers that resolve a provider once
// and then look up each of its events: Provider finds a provider's index,
// Find or FindOlder an event type's index (Type returns the type; the
// indexes are dense, 0 to Len()-1, for per-type state such as one reused
// value per type). Lookup and LookupOlder do both at once.
//
// A Table never changes after it is made; it is safe for concurrent use.
type Table struct {
	pkg       string
	providers []ProviderInfo
	types     []EventType
	built     sync.Once // index: built at the first look-up (build)
	index     index
}

// Package is the name of the generated package the table is of, as its
// errors give it ("clrevents").
func (t *Table) Package() string { return t.pkg }

// Providers lists the table's providers; the index of a provider in it is
// what Provider returns. The slice is shared: do not modify it.
func (t *Table) Providers() []ProviderInfo { return t.providers }

// Len is the number of event types.
func (t *Table) Len() int { return len(t.types) }

// Type returns event type i, for 0 ≤ i < Len(); it panics otherwise, as a
// slice index does.
func (t *Table) Type(i int) EventType { return t.types[i] }

// Provider finds a provider of the table: by name, or by GUID when name is
// empty or not one of the table's providers (a trace may name a provider
// differently, or only by GUID); the zero GUID matches none. It returns the
// provider's index in Providers.
func (t *Table) Provider(name string, guid GUID) (p int, ok bool) {
	if name != "" {
		if p, ok := ProviderIndex(t.providers, name); ok {
			return p, true
		}
	}
	if guid == (GUID{}) {
		return 0, false
	}
	return ProviderIndexByGUID(t.providers, guid)
}

// Find returns the index of the event type (p, id, version), p an index
// in Providers, or -1 if the table does not have it.
func (t *Table) Find(p int, id uint16, version uint8) int {
	t.built.Do(t.build)
	return t.index.lookup(p, id, version)
}

// FindOlder is Find, except that when the table lacks the version (an
// event from a runtime newer than the package's schema) it returns the
// newest older version of the event: the fields that version knows decode,
// and the rest of the payload is left over. It returns -1 when the table
// has no version of the event up to version.
func (t *Table) FindOlder(p int, id uint16, version uint8) int {
	t.built.Do(t.build)
	return t.index.lookupOlder(p, id, version)
}

// Lookup finds the event type of an event by its provider (by name, or by
// GUID when name is empty or not the table's, as Provider does), ID and
// version.
func (t *Table) Lookup(provider string, guid GUID, id uint16, version uint8) (EventType, bool) {
	p, ok := t.Provider(provider, guid)
	if !ok {
		return nil, false
	}
	return t.at(t.Find(p, id, version))
}

// LookupOlder is Lookup with FindOlder's fallback to the newest older
// version of the event.
func (t *Table) LookupOlder(provider string, guid GUID, id uint16, version uint8) (EventType, bool) {
	p, ok := t.Provider(provider, guid)
	if !ok {
		return nil, false
	}
	return t.at(t.FindOlder(p, id, version))
}

func (t *Table) at(i int) (EventType, bool) {
	if i < 0 {
		return nil, false
	}
	return t.types[i], true
}

// String returns "Table(clrevents)".
func (t *Table) String() string { return "Table(" + t.pkg + ")" }

// The registry of tables.
var registry struct {
	mu      sync.Mutex
	tables  []*Table
	version atomic.Uint64 // registrations so far
}

// Tables lists the registered tables (see Register): every generated
// package the program links, in the order they registered, which for
// packages initialized at program start is Go's package initialization
// order. Two tables may both have an event type (the full clrevents and a
// generated subset of it); a reader that decodes through several tables
// chooses which to ask first. The slice is the caller's.
func Tables() []*Table {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return append([]*Table(nil), registry.tables...)
}

// TablesVersion changes whenever a table is registered: a reader that
// keeps what it derived from Tables can tell, without a copy of the list,
// that the list it derived it from is still the list.
func TablesVersion() uint64 { return registry.version.Load() }

// index maps (provider, event ID, version) to an index of a table's types:
// one dense slice per provider, so a lookup is two bounds checks and a
// load.
type index struct {
	providers []providerSlots
}

type providerSlots struct {
	versions int
	slots    []uint16 // id*versions+version → type index + 1
}

// newIndex indexes n types over the given number of providers; key gives a
// type's provider, ID and version.
func newIndex(providers, n int, key func(i int) (p int, id uint16, version uint8)) index {
	x := index{providers: make([]providerSlots, providers)}
	maxID := make([]int, providers)
	for i := 0; i < n; i++ {
		p, id, v := key(i)
		maxID[p] = max(maxID[p], int(id))
		x.providers[p].versions = max(x.providers[p].versions, int(v)+1)
	}
	for p := range x.providers {
		x.providers[p].slots = make([]uint16, (maxID[p]+1)*x.providers[p].versions)
	}
	for i := 0; i < n; i++ {
		p, id, v := key(i)
		ps := &x.providers[p]
		ps.slots[int(id)*ps.versions+int(v)] = uint16(i + 1)
	}
	return x
}

// lookup returns the index of (p, id, version), or -1.
func (x *index) lookup(p int, id uint16, version uint8) int {
	if p < 0 || p >= len(x.providers) {
		return -1
	}
	ps := &x.providers[p]
	if int(version) >= ps.versions {
		return -1
	}
	k := int(id)*ps.versions + int(version)
	if k >= len(ps.slots) {
		return -1
	}
	return int(ps.slots[k]) - 1
}

// lookupOlder returns the index of (p, id, version) or, when there is no
// such version, of the newest older version of the event; -1 if none.
func (x *index) lookupOlder(p int, id uint16, version uint8) int {
	if p < 0 || p >= len(x.providers) {
		return -1
	}
	if v := x.providers[p].versions - 1; int(version) > v {
		version = uint8(v)
	}
	for v := int(version); v >= 0; v-- {
		if i := x.lookup(p, id, uint8(v)); i >= 0 {
			return i
		}
	}
	return -1
}

// UnknownEventError says that an event is not in a generated package's
// schema. errors.Is(err, ErrUnknownEvent) holds.
type UnknownEventError struct {
	Package  string // the generated package
	Provider string // the provider's name
	ID       uint16
	Version  uint8
}

func (e *UnknownEventError) Error() string {
	return fmt.Sprintf("%s: %s event %d version %d: %v", e.Package, e.Provider, e.ID, e.Version, ErrUnknownEvent)
}

// Unwrap returns ErrUnknownEvent.
func (e *UnknownEventError) Unwrap() error { return ErrUnknownEvent }
