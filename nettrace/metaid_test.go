package nettrace

import (
	"testing"
	"time"
)

// TestMetadataLookupAfterGrowth: a metadata ID too large for the dense
// slice when it arrives stays in the map, and is still found after later,
// smaller IDs have grown the slice past it.
func TestMetadataLookupAfterGrowth(t *testing.T) {
	r := &Reader{meta: map[uint32]*Metadata{}, guids: map[string]provider{}}
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
