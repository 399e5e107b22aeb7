package nettrace

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// TestMetadataLookupAfterGrowth: a metadata ID too large for the dense
// slice when it arrives stays in the map, and is still found after later,
// smaller IDs have grown the slice past it.
func TestMetadataLookupAfterGrowth(t *testing.T) {
	r := &Reader{} // its maps are made when first written
	add := func(id uint32) { r.addMetadata(&Metadata{ID: id, Provider: "P"}) }
	add(200) // too large for the slice: map only
	for id := uint32(1); id <= 150; id++ {
		add(id)
	}
	add(201) // now small enough: the slice grows past 200
	if len(r.metaByID) <= 200 {
		t.Fatalf("slice has %d entries; the test needs it past 200", len(r.metaByID))
	}
	for _, id := range []uint32{1, 150, 200, 201} {
		if m := r.lookupMeta(id); m == nil || m.ID != id {
			t.Errorf("lookupMeta(%d) = %v", id, m)
		}
	}
	if m := r.lookupMeta(5000); m != nil {
		t.Errorf("lookupMeta(5000) = %v", m)
	}
	for _, id := range []uint32{1, 200} {
		if m := r.Metadata(id); m == nil || m.ID != id {
			t.Errorf("Metadata(%d) = %v", id, m)
		}
	}
	// A hostile ID goes to the map: the slice grows only with the records.
	add(1 << 30)
	if m := r.Metadata(1 << 30); m == nil || len(r.metaByID) > 2*r.nmeta+64 {
		t.Errorf("ID 1<<30: found %v, slice of %d entries after %d records", m != nil, len(r.metaByID), r.nmeta)
	}
}

// TestCachedProvider: Readers share a provider's name string and GUID
// through the process-wide cache, and what it keeps is bounded.
func TestCachedProvider(t *testing.T) {
	a := cachedProvider(strings.Clone("Microsoft-Windows-DotNETRuntime"))
	b := cachedProvider(strings.Clone("Microsoft-Windows-DotNETRuntime"))
	if a != b || unsafe.StringData(a.name) != unsafe.StringData(b.name) {
		t.Errorf("the same provider twice: two entries")
	}
	if a.guid != ProviderGUID("Microsoft-Windows-DotNETRuntime") {
		t.Errorf("GUID %v", a.guid)
	}
	e := cachedProvider("MyCompany-MyApp")
	if e.guid != EventSourceGUID("MyCompany-MyApp") || e.name != "MyCompany-MyApp" {
		t.Errorf("EventSource provider: %q %v", e.name, e.guid)
	}
	long := strings.Repeat("x", maxCachedName+1)
	if p, q := cachedProvider(long), cachedProvider(long); p == q {
		t.Errorf("a name of %d bytes was kept", len(long))
	}
	// Many names: each is right, whatever it displaced.
	for i := range 1000 {
		name := fmt.Sprintf("Provider-%d", i)
		if p := cachedProvider(name); p.name != name || p.guid != EventSourceGUID(name) {
			t.Fatalf("%s: got %q %v", name, p.name, p.guid)
		}
	}
}

// TestTicksToTimeReciprocal checks the division-free path against the
// plain one for awkward frequencies and tick counts.
func TestTicksToTimeReciprocal(t *testing.T) {
	sync := time.Date(2019, 6, 15, 1, 2, 3, 0, time.UTC)
	for _, f := range []int64{2, 3, 7, 3124099, 2533200, 14318180, 999999937, 1e9 + 7} {
		fast := TraceInfo{SyncTime: sync, SyncTimeQPC: 1000, QPCFrequency: f}
		fast.setReciprocal()
		slow := TraceInfo{SyncTime: sync, SyncTimeQPC: 1000, QPCFrequency: f} // no reciprocal: the division path
		for _, d := range []int64{0, 1, -1, f - 1, f, f + 1, 123456789, -987654321, 1 << 33, 18446744073 / 2, 1<<62 - 1, -(1 << 62)} {
			ticks := 1000 + d
			if a, b := fast.TicksToTime(ticks), slow.TicksToTime(ticks); !a.Equal(b) {
				t.Errorf("f=%d d=%d: reciprocal %v, division %v", f, d, a, b)
			}
		}
	}
}
