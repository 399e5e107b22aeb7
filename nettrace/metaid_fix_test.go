package nettrace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"
)

// TestMetadataIDDamaged writes over one byte of the ID of metadata
// records (the first int32 of its payload; every record of the arraytypes
// trace, every second of the pyroscope trace's, every fifth of the 3.0
// trace's) of three traces, each byte of it in turn (in time order, the
// second), with values that leave it other than the runtime's next ID
// by more than 8: the record defined an ID no event refers to, and every
// event of its real ID was lost as referring to metadata not defined (up
// to 6,002 of the pyroscope trace's events for one byte; 12 of the 3.0
// trace's for its record 15, the third audit's m5, whose damage was
// reported 122 KB later, at the first event of ID 15). Now every event
// comes out unchanged, in both orders, and the ID field is the one
// Damage, of its 4 bytes, having lost nothing.
func TestMetadataIDDamaged(t *testing.T) {
	for _, tr := range threeTraces(2, 1, 5) {
		data := loadTrace(t, tr.path)
		var ids []int // where each metadata record's ID is
		for _, b := range fsBlocks(data) {
			if b.name != "MetadataBlock" {
				continue
			}
			for _, rec := range compressedRecords(data, b) {
				ids = append(ids, rec.payload)
			}
		}
		if len(ids) < 10 {
			t.Fatalf("%s: %d metadata records", tr.path, len(ids))
		}
		for _, order := range []Order{FileOrder, TimeOrder} {
			want, wantN, _, _ := readFull(t, data, order)
			for k, at := range ids {
				id := binary.LittleEndian.Uint32(data[at:])
				if id != uint32(k+1) {
					t.Fatalf("%s: record %d at %d has ID %d", tr.path, k, at, id)
				}
				if k%tr.every != 0 {
					continue
				}
				for byt := range 4 {
					if order == TimeOrder && byt != 1 {
						continue // (the fix is the record's, whatever the order)
					}
					bad := bytes.Clone(data)
					bad[at+byt] ^= 0x40
					what := fmt.Sprintf("%s, %v, metadata ID %d at %d as %d", filepath.Base(tr.path), order, id, at, binary.LittleEndian.Uint32(bad[at:]))
					got, n, damage, _ := readFull(t, bad, order)
					lost, changed := diffEvents(want, got)
					if lost+changed > 0 || n != wantN || len(damage) != 1 || damage[0].Offset != int64(at) || damage[0].Length != 4 || damage[0].Events != 0 {
						t.Errorf("%s: %d events of %d, %d lost, %d changed, damage %v", what, n, wantN, lost, changed, damage)
					}
				}
			}
		}
	}
}
