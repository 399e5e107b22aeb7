package nettrace

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
)

// TestSequencePointSwapped swaps every sequence point of three traces
// with the StackBlock after it, in both orders. The StackBlock, numbered
// from 1 while the table still holds the stacks before the sequence
// point, starts the table again, and the sequence point after it, with
// no event block between, keeps that table: no event is lost or changed.
// Before, the StackBlock's first ID was taken for damaged and renumbered
// past the old table, the sequence point then emptied the table, the
// event block after it lost its events (1,364 to 5,905 in the 3.0
// trace), and the next StackBlock, renumbered from 1, gave later events
// other stacks (up to 4,538) with no damage said of them (audit damage3's
// F3).
func TestSequencePointSwapped(t *testing.T) {
	swaps := 0
	for _, tr := range threeTraces(1, 1, 2) {
		data := loadTrace(t, tr.path)
		blocks := fsBlocks(data)
		for _, order := range []Order{FileOrder, TimeOrder} {
			want, wantN, _, _ := readFull(t, data, order)
			for i := 0; i+1 < len(blocks); i++ {
				if blocks[i].name != "SPBlock" || blocks[i+1].name != "StackBlock" || i%tr.every != 0 {
					continue
				}
				swaps++
				a, b, c := blocks[i].hdr, blocks[i+1].hdr, blocks[i+1].end
				bad := slices.Concat(data[:a], data[b:c], data[a:b], data[c:])
				got, n, damage, err := readFull(t, bad, order)
				lost, changed := diffEvents(want, got)
				if lost > 0 || changed > 0 || n != wantN || !errors.Is(err, ErrDamaged) {
					t.Errorf("%s, %v, SPBlock at %d swapped with the StackBlock after it: %d lost, %d changed, %d events (intact %d); %v, damage %v",
						filepath.Base(tr.path), order, a, lost, changed, n, wantN, err, damage)
				}
			}
		}
	}
	if swaps < 20 {
		t.Errorf("%d swaps", swaps)
	}
}
