package nettrace

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"testing"
)

// TestRepeatedBlock writes event blocks of two traces twice, the copy
// right after the block, as a fault in storage or in a copy could. The
// copy is skipped, as one Damage of its whole content that lost no
// event: every event comes out once, unchanged, and the runtime's drops
// stay what they were. When the copy keeps the stream's 4-byte
// alignment nothing else is wrong with it, and before the reader
// remembered blocks it handed the block's events out twice. Strict mode
// stops at the copy.
func TestRepeatedBlock(t *testing.T) {
	arr := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"))
	pyro := loadTrace(t, "../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace")
	aligned, other := 0, 0
	for _, data := range [][]byte{arr, pyro} {
		ri, _, _ := readToEnd(data, FileOrder)
		tried := 0
		for _, b := range fsBlocks(data) {
			if b.name != "EventBlock" || tried == 40 {
				continue
			}
			tried++
			bad := slices.Concat(data[:b.end], data[b.hdr:b.end], data[b.end:])
			isAligned := (b.end-b.hdr)%4 == 0
			if isAligned {
				aligned++
			} else {
				other++
			}
			// The copy's content starts where the block's does, moved by
			// the block's length.
			copyAt := int64(b.content() + b.end - b.hdr)
			for _, order := range []Order{FileOrder, TimeOrder} {
				want, wantN, _, _ := readFull(t, data, order)
				got, n, damage, err := readFull(t, bad, order)
				lost, changed := lostChanged(want, got, b.end, b.end-b.hdr)
				r, _, _ := readToEnd(bad, order)
				bad1 := n != wantN || lost > 0 || changed > 0 || r.Dropped() != ri.Dropped() || !errors.Is(err, ErrDamaged) || len(damage) == 0
				if isAligned && !bad1 {
					bad1 = len(damage) != 1 || damage[0].Offset != copyAt || damage[0].Events != 0 || damage[0].Block != "EventBlock"
				}
				if bad1 {
					t.Errorf("block at %d repeated (aligned %v), %v: %d events (intact %d), %d lost, %d changed, %d dropped (intact %d); %v, damage %v",
						b.hdr, isAligned, order, n, wantN, lost, changed, r.Dropped(), ri.Dropped(), err, damage)
				}
			}
			if !isAligned {
				continue
			}
			r, _ := NewReader(bytes.NewReader(bad))
			r.SetStrict(true)
			var err error
			for err == nil {
				_, err = r.Next()
			}
			var e *Error
			if !errors.As(err, &e) || e.Offset != copyAt || errors.Is(err, io.EOF) {
				t.Errorf("block at %d repeated, strict: %v, want an error at offset %d", b.hdr, err, copyAt)
			}
		}
	}
	t.Logf("%d aligned copies and %d others", aligned, other)
	if aligned < 4 || other < 4 {
		t.Errorf("%d aligned copies and %d others tried", aligned, other)
	}
}
