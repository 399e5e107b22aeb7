package nettrace

// A V1/V2 (EventPipeFile) metadata record's ID is the stream offset at
// which its writer wrote it, and events refer to it by that offset. Damage
// to a zipped trace's compressed bytes seldom stops inflating: deflate
// decodes on and leaves the bytes after the damage earlier or later than
// they were (a shift). Every metadata record read after a shift then sits
// at another offset than its ID, and without more the events that refer to
// it would be lost to the end of the trace, however small the damage.
//
// The runtime writes a metadata record just before the first event that
// refers to it (in the .NET Core 2.0 trace of the shared fixtures, all 35
// of them). So when the record just before an event is a metadata record
// read since the last damage, and the event refers to an ID no metadata
// has, the difference between the record's offset and that ID is the
// shift. The reader then also files every metadata record read since that
// damage under its offset less the shift, its ID as written, and files so
// the records it reads after it, until the next damage. The records keep
// their own offsets as IDs too, so a wrong guess (an event whose ID the
// damage garbled) costs nothing but an alias that no event names; an
// alias never takes the place of metadata already filed under its ID.

// maxV2Shifts bounds the shifts learned after one damage: each files the
// damage's metadata records once more.
const maxV2Shifts = 4

// v2Shift is what the reader knows of the shift since the last damage.
type v2Shift struct {
	epoch   int         // Reader.damages when pending began
	pending []*Metadata // metadata records read since that damage, by their offsets
	shifts  []uint32    // the shifts learned since it (offset - ID, mod 2^32)
	// prev is the metadata record read last, if the record after it
	// begins at prevEnd.
	prev    *Metadata
	prevEnd int64
}

// sync starts a new epoch when there was damage since the last call.
func (v *v2Shift) sync(damages int) {
	if v.epoch != damages {
		clear(v.pending)
		*v = v2Shift{epoch: damages, pending: v.pending[:0], shifts: v.shifts[:0]}
	}
}

// addMetadataV2 files a V1/V2 metadata record, read at its ID's offset
// and ending at end, under its ID and, after damage, under the IDs the
// shifts learned since give it.
func (r *Reader) addMetadataV2(m *Metadata, end int64) {
	r.addMetadata(m)
	if r.damages == 0 {
		return // no damage: offsets are as written
	}
	v := &r.v2
	v.sync(r.damages)
	v.pending = append(v.pending, m)
	v.prev, v.prevEnd = m, end
	for _, d := range v.shifts {
		r.aliasMeta(m, m.ID-d)
	}
}

// shiftedMetaV2 returns the metadata an event at off refers to by id, a
// shift after the last damage apart, learning the shift from the metadata
// record just before the event; nil when there is none.
func (r *Reader) shiftedMetaV2(id uint32, off int64) *Metadata {
	v := &r.v2
	if r.damages == 0 || v.epoch != r.damages || v.prev == nil || v.prevEnd != off || v.prev.ID == id || len(v.shifts) == maxV2Shifts {
		return nil
	}
	d := v.prev.ID - id
	v.shifts = append(v.shifts, d)
	for _, m := range v.pending {
		r.aliasMeta(m, m.ID-d)
	}
	v.prev = nil
	return r.lookupMeta(id)
}

// aliasMeta files a copy of m under id, unless metadata is filed there.
func (r *Reader) aliasMeta(m *Metadata, id uint32) {
	if r.lookupMeta(id) != nil {
		return
	}
	a := *m
	a.ID = id
	r.putMeta(&a)
}

// v2ShiftedTrailer reports whether b is the whole of what is left of a
// V1/V2 stream and is its trailer, written at another offset than it is
// read at: the EndObject tag, n forward-reference offsets and the offsets
// of the count (just after the tag, where the first one says the tag is)
// and of the table's end.
func v2ShiftedTrailer(b []byte) bool {
	if len(b) < 17 || b[0] != tagEndObject {
		return false
	}
	n := le32(b[1:])
	if n < 1 || n >= 1<<16 || len(b) != 9+4*int(n-1)+8 {
		return false
	}
	tag := le32(b[5:])
	return le32(b[len(b)-8:]) == tag+1
}
