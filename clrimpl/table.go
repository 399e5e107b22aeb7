package clrimpl

import (
	"fmt"
	"strconv"
)

// ProviderInfo describes a provider of a generated package.
type ProviderInfo struct {
	Name  string // e.g. "Microsoft-Windows-DotNETRuntime"
	Short string // e.g. "Runtime": the prefix of its Go names
	GUID  GUID
}

// ProviderIndex finds a provider by name in a generated package's provider
// table.
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
func ProviderString(table []ProviderInfo, p int) string {
	if p < 0 || p >= len(table) {
		return "Provider(" + strconv.Itoa(p) + ")"
	}
	return table[p].Name
}

// Level is an ETW event level (LevelInformational, …).
type Level uint8

// Opcode is an ETW opcode: a standard one (OpcodeStart, …) or one a task
// defines.
type Opcode uint8

// Index maps (provider, event ID, version) to a row of a generated
// package's event table: one dense slice per provider, so a lookup is two
// bounds checks and a load.
type Index struct {
	providers []providerSlots
}

type providerSlots struct {
	versions int
	slots    []uint16 // id*versions+version → row + 1
}

// NewIndex indexes the rows of an event table of n rows over the given
// number of providers; key gives a row's provider, ID and version.
func NewIndex(providers, n int, key func(row int) (p int, id uint16, version uint8)) *Index {
	x := &Index{providers: make([]providerSlots, providers)}
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

// Lookup returns the row of (p, id, version), or -1.
func (x *Index) Lookup(p int, id uint16, version uint8) int {
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

// LookupOlder returns the row of (p, id, version) or, when the table lacks
// that version, of the newest older version of the event; -1 if none.
func (x *Index) LookupOlder(p int, id uint16, version uint8) int {
	if p < 0 || p >= len(x.providers) {
		return -1
	}
	if v := x.providers[p].versions - 1; int(version) > v {
		version = uint8(v)
	}
	for v := int(version); v >= 0; v-- {
		if i := x.Lookup(p, id, uint8(v)); i >= 0 {
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
