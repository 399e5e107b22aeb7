package nettrace

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// TestBlockTypeDamaged damages one field of the object header of the
// blocks of three traces (V5, V5, V4: every block of the smallest, every
// ninth and every thirty-first of the others), in both orders: the type
// name's length, a byte of the name (its first and its third), the
// EndObject tag after the name, and the size's high byte. Each is
// framing alone: the block is read, the field is one Damage that lost no
// event, and no event is lost or changed. Before, the block was skipped,
// with the events of every block that needs it when it held metadata or
// stacks (every event of the arraytypes trace for its StackBlock's tag;
// 60,808 of the 3.0 trace's for its first MetadataBlock's), and the
// block before it was taken for one whose size shrank, its search for an
// end making up events from the damaged header.
func TestBlockTypeDamaged(t *testing.T) {
	for _, tr := range threeTraces(9, 1, 31) {
		data := loadTrace(t, tr.path)
		copies := 0
		for _, order := range []Order{FileOrder, TimeOrder} {
			want, wantN, _, _ := readFull(t, data, order)
			for i, b := range fsBlocks(data) {
				if i%tr.every != 0 {
					continue
				}
				for _, f := range []struct {
					what string
					at   int
					x    byte
				}{
					{"name length", b.hdr + 11, 0xff},
					{"name's first byte", b.hdr + 15, 0xff},
					{"name's third byte", b.hdr + 17, 0x01},
					{"tag after the name", b.hdr + 15 + len(b.name), 0xff},
					{"size's high byte", b.sizeAt + 3, 0xff},
				} {
					copies++
					bad := bytes.Clone(data)
					bad[f.at] ^= f.x
					got, n, damage, err := readFull(t, bad, order)
					lost, changed := diffEvents(want, got)
					if lost > 0 || changed > 0 || n != wantN || !errors.Is(err, ErrDamaged) || len(damage) != 1 || damage[0].Events != 0 {
						t.Errorf("%s, %v, %s at %d, %s (byte %d ^%#x): %d lost, %d changed, %d events (intact %d); %v, damage %v",
							filepath.Base(tr.path), order, b.name, b.hdr, f.what, f.at, f.x, lost, changed, n, wantN, err, damage)
					}
				}
			}
		}
		if copies < 30 {
			t.Errorf("%s: %d copies", tr.path, copies)
		}
	}
}

// TestV3TagsWanted: the message of a damaged V3 block's tags names the
// tags V3 writers write (BeginObject, 4), not the later ones (audit
// damage3's m1).
func TestV3TagsWanted(t *testing.T) {
	data := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore2.1-linux-x64-tracelogging.netperf.zip"))
	at := bytes.Index(data, []byte("EventBlock")) - 15
	if at < 0 || data[at] != tagBeginObject {
		t.Fatalf("no V3 EventBlock header with BeginObject tags at %d", at)
	}
	bad := bytes.Clone(data)
	bad[at] ^= 0xff
	_, _, damage, _ := readFull(t, bad, FileOrder)
	if len(damage) == 0 || !strings.Contains(damage[0].Err.Error(), "want 4 4 1") {
		t.Errorf("damage %v, want the first to say the tags wanted are 4 4 1", damage)
	}
}

// TestLastBlockSizeGrown grows the size of the last block of two traces
// (an EventBlock's, a sequence point's), so that it runs past the input's
// end: the stream's end is in the bytes read, after the block's records,
// and the size is a Damage that lost nothing, not a trace cut short
// (audit damage3's m2).
func TestLastBlockSizeGrown(t *testing.T) {
	for _, path := range []string{filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"),
		filepath.Join(repoTraces, "eventpipe-dotnetcore2.1-linux-x64-tracelogging.netperf.zip")} {
		data := loadTrace(t, path)
		var sizeAt int
		if blocks := fsBlocks(data); len(blocks) > 0 && !strings.HasSuffix(path, ".netperf.zip") {
			sizeAt = blocks[len(blocks)-1].sizeAt
		} else {
			sizeAt = bytes.Index(data, []byte("EventBlock")) + len("EventBlock") + 1 // V3: its only block
		}
		for _, grow := range []byte{0x01, 0x10} {
			bad := bytes.Clone(data)
			bad[sizeAt+1] ^= grow // 256 or 4,096 bytes more
			for _, order := range []Order{FileOrder, TimeOrder} {
				want, wantN, _, _ := readFull(t, data, order)
				got, n, damage, err := readFull(t, bad, order)
				lost, changed := diffEvents(want, got)
				if lost > 0 || changed > 0 || n != wantN || !errors.Is(err, ErrDamaged) || errors.Is(err, io.ErrUnexpectedEOF) ||
					len(damage) != 1 || damage[0].Offset != int64(sizeAt) || damage[0].Length != 4 {
					t.Errorf("%s, %v, last block's size grown (^%#x at %d): %d lost, %d changed, %d events (intact %d); %v, damage %v",
						filepath.Base(path), order, grow, sizeAt+1, lost, changed, n, wantN, err, damage)
				}
			}
		}
	}
}
