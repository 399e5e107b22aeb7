package dataset

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/clrgo/clrevents/clrimpl"
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

// TestSpilledFooter: a table of thousands of row groups, whose metadata
// go to the spill file beside it, reads back whole and in order, and the
// spill file is gone once the table is finished.
func TestSpilledFooter(t *testing.T) {
	dir := t.TempDir()
	fl := newFlusher()
	cols := []column{{name: "n", kind: clrimpl.ColumnInt64}, {name: "s", kind: clrimpl.ColumnString, optional: true}}
	tb := newTable(filepath.Join(dir, "x.parquet"), filepath.Join(dir, "0.tmp"), "x", cols, nil, 1, fl, nil, nil)
	const rows = 3000
	for i := range rows {
		tb.begin()
		tb.Int(int64(i))
		if i%3 == 0 {
			tb.null()
		} else {
			tb.Bytes([]byte(strconv.Itoa(i)))
		}
		if err := tb.end(); err != nil {
			t.Fatal(err)
		}
	}
	if err := fl.send(job{t: tb, b: tb.cur, last: true}); err != nil {
		t.Fatal(err)
	}
	if err := fl.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "0.tmp.rowgroups")); !os.IsNotExist(err) {
		t.Errorf("spill file left: %v", err)
	}
	f, err := os.Open(filepath.Join(dir, "0.tmp"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(pf.Metadata().RowGroups); n != rows {
		t.Fatalf("%d row groups, want %d", n, rows)
	}
	if foot := footerLen(t, f, st.Size()); foot <= groupsLimit {
		t.Fatalf("a footer of %d bytes: nothing spilled", foot)
	}
	i := 0
	for _, rg := range pf.RowGroups() {
		r := rg.Rows()
		buf := make([]parquet.Row, 4)
		for {
			n, err := r.ReadRows(buf)
			for _, row := range buf[:n] {
				want := parquet.Row{parquet.Int64Value(int64(i)).Level(0, 0, 0), parquet.ByteArrayValue([]byte(strconv.Itoa(i))).Level(0, 1, 1)}
				if i%3 == 0 {
					want[1] = parquet.NullValue().Level(0, 0, 1)
				}
				if !row.Equal(want) {
					t.Fatalf("row %d: %v, want %v", i, row, want)
				}
				i++
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		r.Close()
	}
	if i != rows {
		t.Errorf("%d rows read, want %d", i, rows)
	}
}

// footerLen is the length of the footer of the Parquet file f.
func footerLen(t *testing.T, f *os.File, size int64) int64 {
	t.Helper()
	var b [4]byte
	if _, err := f.ReadAt(b[:], size-8); err != nil {
		t.Fatal(err)
	}
	return int64(binary.LittleEndian.Uint32(b[:]))
}
