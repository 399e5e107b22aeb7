package nettrace

import (
	"bytes"
	"path/filepath"
	"testing"
)

// TestFirstFlagsDamaged flips each bit, one at a time, of the flags of
// the first compressed header of metadata and event blocks of three
// traces (every metadata block, every third of the 3.0 trace's; every
// event block of the arraytypes trace, every 16th of the pyroscope
// trace's and every 27th of the 3.0 trace's), in both orders (the 3.0
// trace in file order). Every header after
// the first inherits the fields it sets: a flip that changes which fields
// it holds misread every record after it, and lost the block: a metadata
// block took every event that needs its metadata (a flip of the
// pyroscope trace's first MetadataBlock, 27,823 of its 27,951 events).
// Now no event is lost or changed, and where the reader puts the byte
// right (firstFlagsFix) the damage is that byte, having lost nothing. A
// flip that changes no field's presence (IsSorted, in a metadata block)
// is read as it is, and nothing is lost either.
func TestFirstFlagsDamaged(t *testing.T) {
	for i, tr := range threeTraces(16, 1, 27) {
		data := loadTrace(t, tr.path)
		mended, flips := 0, 0
		orders := []Order{FileOrder, TimeOrder}
		if i == 2 {
			orders = orders[:1] // (the fix is the block's, whatever the order)
		}
		for _, order := range orders {
			want, wantN, _, _ := readFull(t, data, order)
			nth := map[string]int{}
			for _, b := range fsBlocks(data) {
				every := map[string]int{"EventBlock": tr.every, "MetadataBlock": 1 + i/2*2}[b.name]
				if every == 0 {
					continue
				}
				if nth[b.name]++; (nth[b.name]-1)%every != 0 {
					continue
				}
				at := compressedRecords(data, b)[0].hdr
				for bit := range 8 {
					bad := bytes.Clone(data)
					bad[at] ^= 1 << bit
					if firstFlags(kindEvent, bad[at]) && firstFlags(kindEvent, data[at]) {
						continue // 0x8f and 0xcf: IsSorted alone, which nothing tells
					}
					flips++
					got, n, damage, _ := readFull(t, bad, order)
					lost, changed := diffEvents(want, got)
					fixed := len(damage) == 1 && damage[0].Offset == int64(at) && damage[0].Length == 1 && damage[0].Events == 0
					if lost+changed > 0 || n != wantN || len(damage) > 0 && !fixed {
						t.Errorf("%s, %v, %s at %d, first flags %#x as %#x: %d events of %d, %d lost, %d changed, damage %v",
							filepath.Base(tr.path), order, b.name, b.hdr, data[at], bad[at], n, wantN, lost, changed, damage)
					}
					if fixed {
						mended++
					}
				}
			}
		}
		if mended*4 < flips*3 {
			t.Errorf("%s: %d of %d flips put right", filepath.Base(tr.path), mended, flips)
		}
	}
}
