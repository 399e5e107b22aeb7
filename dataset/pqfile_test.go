package dataset

import (
	"bytes"
	"math"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// TestPageHeader: the page headers appendPageHeader writes decode, with
// parquet-go's thrift, to the header given: data and dictionary pages,
// sizes from zero to the largest.
func TestPageHeader(t *testing.T) {
	var hs []format.PageHeader
	for _, n := range []int32{0, 1, 63, 64, 1 << 20, math.MaxInt32} {
		var d format.PageHeader
		d.Type = format.DataPage
		d.UncompressedPageSize, d.CompressedPageSize = n, n/2
		d.DataPageHeader.Set(format.DataPageHeader{NumValues: n, Encoding: format.RLEDictionary,
			DefinitionLevelEncoding: format.RLE, RepetitionLevelEncoding: format.RLE})
		var p format.PageHeader
		p.Type = format.DictionaryPage
		p.UncompressedPageSize, p.CompressedPageSize = n/3, n
		p.DictionaryPageHeader.Set(format.DictionaryPageHeader{NumValues: n, Encoding: format.Plain})
		hs = append(hs, d, p)
	}
	for _, h := range hs {
		b := appendPageHeader(nil, &h)
		var got format.PageHeader
		if err := thrift.Unmarshal(new(thrift.CompactProtocol), b, &got); err != nil {
			t.Fatalf("%+v: %v", h, err)
		}
		gd, _ := got.DataPageHeader.Get()
		wd, _ := h.DataPageHeader.Get()
		gp, _ := got.DictionaryPageHeader.Get()
		wp, _ := h.DictionaryPageHeader.Get()
		if got.Type != h.Type || got.UncompressedPageSize != h.UncompressedPageSize || got.CompressedPageSize != h.CompressedPageSize ||
			got.DataPageHeader.Bool() != h.DataPageHeader.Bool() || got.DictionaryPageHeader.Bool() != h.DictionaryPageHeader.Bool() ||
			gd.NumValues != wd.NumValues || gd.Encoding != wd.Encoding || gd.DefinitionLevelEncoding != wd.DefinitionLevelEncoding ||
			gd.RepetitionLevelEncoding != wd.RepetitionLevelEncoding || gp.NumValues != wp.NumValues || gp.Encoding != wp.Encoding {
			t.Errorf("wrote %+v, read %+v", h, got)
		}
	}
}

// TestZstdFrames: pages of every size under 256 bytes, stored in a frame
// of one raw block, and larger ones, compressed, decode with a zstd
// decoder to themselves.
func TestZstdFrames(t *testing.T) {
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	c := newZstdCodec()
	for n := 0; n < 600; n++ {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(i * 7 / 5)
		}
		comp, err := c.Encode(nil, src)
		if err != nil {
			t.Fatal(err)
		}
		if n < 256 && len(comp) != n+9 {
			t.Errorf("%d bytes: a frame of %d", n, len(comp))
		}
		got, err := dec.DecodeAll(comp, nil)
		if err != nil || !bytes.Equal(got, src) {
			t.Fatalf("%d bytes: decoded %d bytes, %v", n, len(got), err)
		}
	}
}
