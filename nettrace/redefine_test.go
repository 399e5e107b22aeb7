package nettrace

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"unicode/utf16"
)

// utf16le is s as UTF-16LE bytes.
func utf16le(s string) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return b
}

// TestMetadataRedefined inserts after each MetadataBlock of two traces a
// copy in which a provider's name is changed by one letter, as damage
// that still parses would: the copy's records give IDs the trace defined
// another meaning. Those records are damage, and every event keeps the
// metadata its ID was defined with, in both orders. (A copy that defines
// them as they were is a block written twice, and no damage:
// TestTableBlocksRepeatedOrWiped.)
func TestMetadataRedefined(t *testing.T) {
	const provider = "Microsoft-Windows-DotNETRuntime"
	from, to := utf16le(provider), utf16le(provider[:len(provider)-1]+"f")
	tried := 0
	for _, path := range []string{"../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace",
		filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip")} {
		data := loadTrace(t, path)
		for _, b := range fsBlocks(data) {
			if b.name != "MetadataBlock" || !bytes.Contains(data[b.hdr:b.end], from) {
				continue
			}
			tried++
			copyBlock := bytes.ReplaceAll(data[b.hdr:b.end], from, to)
			bad := slices.Concat(data[:b.end], copyBlock, data[b.end:])
			for _, order := range []Order{FileOrder, TimeOrder} {
				want, wantN, _, _ := readFull(t, data, order)
				got, n, damage, err := readFull(t, bad, order)
				lost, changed := lostChanged(want, got, b.end, b.end-b.hdr)
				if lost > 0 || changed > 0 || n != wantN || !errors.Is(err, ErrDamaged) || len(damage) == 0 {
					t.Errorf("%s, %v, MetadataBlock at %d redefined: %d lost, %d changed, %d events (intact %d); %v",
						filepath.Base(path), order, b.hdr, lost, changed, n, wantN, err)
				}
			}
		}
	}
	if tried < 2 {
		t.Errorf("%d metadata blocks tried", tried)
	}
}
