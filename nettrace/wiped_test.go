package nettrace

import (
	"bytes"
	"path/filepath"
	"testing"
)

// TestWipedBlock zeroes an event block whole, its object header and end
// tag included, in three traces (every event block of two, every fourth
// of the 3.0 trace's), in both orders. The block before it is followed
// by its EndObject tag and then by zeros; the search for a block whose
// size shrank (sizeUndershoot) used to find the end of the block after
// the wiped one, and when the zeros and that block, header and all,
// read as records, took them for the block before's: the intact block's
// events were lost and made-up ones handed out (5 of the pyroscope
// trace's 97 event blocks). Now only the wiped block's events are lost,
// and the damage counts each of them.
func TestWipedBlock(t *testing.T) {
	for _, tr := range threeTraces(1, 1, 4) {
		data := loadTrace(t, tr.path)
		var blocks []fsBlock
		for _, b := range fsBlocks(data) {
			if b.name == "EventBlock" {
				blocks = append(blocks, b)
			}
		}
		wiped := 0
		for _, order := range []Order{FileOrder, TimeOrder} {
			want, wantN, _, _ := readFull(t, data, order)
			for i := 0; i < len(blocks); i += tr.every {
				b := blocks[i]
				wiped++
				bad := bytes.Clone(data)
				clear(bad[b.hdr:b.end])
				in := func(off int64) bool { return off >= int64(b.hdr) && off < int64(b.end) }
				inBlock := 0
				for _, w := range want {
					if in(w.off) {
						inBlock++
					}
				}
				got, n, damage, _ := readFull(t, bad, order)
				lost := 0
				for k, w := range want {
					if g, ok := got[k]; !in(w.off) && (!ok || g != w) {
						lost++
					}
				}
				counted := int64(0)
				for _, d := range damage {
					counted += d.Events
				}
				if lost > 0 || n != wantN-inBlock || counted != int64(inBlock) {
					t.Errorf("%s, %v, event block at %d (%d events) wiped: %d events (want %d), %d others lost or changed, damage counts %d: %v",
						filepath.Base(tr.path), order, b.hdr, inBlock, n, wantN-inBlock, lost, counted, damage)
				}
			}
		}
		if wiped < 10 {
			t.Errorf("%s: %d blocks wiped", tr.path, wiped)
		}
	}
}
