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
	finishTable(t, fl, tb)
	if _, err := os.Stat(filepath.Join(dir, "0.tmp.rowgroups")); !os.IsNotExist(err) {
		t.Errorf("spill file left: %v", err)
	}
	f, pf := openParquet(t, filepath.Join(dir, "0.tmp"))
	defer f.Close()
	st, _ := f.Stat()
	if n := len(pf.Metadata().RowGroups); n != rows {
		t.Fatalf("%d row groups, want %d", n, rows)
	}
	if foot := footerLen(t, f, st.Size()); foot <= groupsLimit {
		t.Fatalf("a footer of %d bytes: nothing spilled", foot)
	}
	i := 0
	eachRow(t, pf, func(row parquet.Row) {
		want := parquet.Row{parquet.Int64Value(int64(i)).Level(0, 0, 0), parquet.ByteArrayValue([]byte(strconv.Itoa(i))).Level(0, 1, 1)}
		if i%3 == 0 {
			want[1] = parquet.NullValue().Level(0, 0, 1)
		}
		if !row.Equal(want) {
			t.Fatalf("row %d: %v, want %v", i, row, want)
		}
		i++
	})
	if i != rows {
		t.Errorf("%d rows read, want %d", i, rows)
	}
}

// finishTable writes tb's last rows and footer and stops fl.
func finishTable(t *testing.T, fl *flusher, tb *table) {
	t.Helper()
	if err := fl.send(job{t: tb, b: tb.cur, last: true}); err != nil {
		t.Fatal(err)
	}
	if err := fl.stop(); err != nil {
		t.Fatal(err)
	}
}

// openParquet opens the Parquet file at path; the caller closes f.
func openParquet(t *testing.T, path string) (f *os.File, pf *parquet.File) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if pf, err = parquet.OpenFile(f, st.Size()); err != nil {
		t.Fatal(err)
	}
	return f, pf
}

// eachRow calls fn with every row of pf, in order.
func eachRow(t *testing.T, pf *parquet.File, fn func(parquet.Row)) {
	t.Helper()
	buf := make([]parquet.Row, 64)
	for _, rg := range pf.RowGroups() {
		r := rg.Rows()
		for {
			n, err := r.ReadRows(buf)
			for _, row := range buf[:n] {
				fn(row)
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

// TestIntDictionary: integer columns of a few values are written as
// dictionaries (int32 and int64, optional with nulls, unsigned, negative),
// columns of many values as PLAIN, and every value reads back with
// parquet-go in order, in row groups of every size from one row up.
func TestIntDictionary(t *testing.T) {
	cols := []column{
		{name: "tid", kind: clrimpl.ColumnInt64},                 // 7 values
		{name: "cpu", kind: clrimpl.ColumnInt32, optional: true}, // 3 values and nulls
		{name: "flags", kind: clrimpl.ColumnUint32},              // 5 values, the high bit set
		{name: "addr", kind: clrimpl.ColumnUint64},               // all distinct
		{name: "neg", kind: clrimpl.ColumnInt64, optional: true}, // 2 negative values and nulls
	}
	value := func(i, c int) (int64, bool) {
		switch c {
		case 0:
			return int64(1000 + i*i%7), true
		case 1:
			return int64(i % 3), i%5 != 0
		case 2:
			return int64(uint32(0x80000000 | i%5)), true
		case 3:
			return int64(0x7ff000000000 + i*64), true
		default:
			return -int64(i%2) - 1, i%4 != 0
		}
	}
	for _, rowGroup := range []int64{1, 3, 1000, 100000} {
		dir := t.TempDir()
		fl := newFlusher()
		tb := newTable(filepath.Join(dir, "x.parquet"), filepath.Join(dir, "0.tmp"), "x", cols, nil, rowGroup, fl, nil, nil)
		const rows = 5000
		for i := range rows {
			tb.begin()
			for c := range cols {
				if v, ok := value(i, c); ok {
					tb.Int(v)
				} else {
					tb.null()
				}
			}
			if err := tb.end(); err != nil {
				t.Fatal(err)
			}
		}
		finishTable(t, fl, tb)
		f, pf := openParquet(t, filepath.Join(dir, "0.tmp"))
		if rowGroup == 100000 {
			// One row group: which columns are dictionaries.
			for c, cc := range pf.Metadata().RowGroups[0].Columns {
				dict := cc.MetaData.DictionaryPageOffset != 0
				if want := c != 3; dict != want {
					t.Errorf("column %s: dictionary %v, want %v (encodings %v)", cols[c].name, dict, want, cc.MetaData.Encoding)
				}
			}
		}
		i := 0
		eachRow(t, pf, func(row parquet.Row) {
			for c, v := range row {
				want, ok := value(i, c)
				switch {
				case !ok && !v.IsNull():
					t.Fatalf("row group size %d: row %d column %s: %v, want null", rowGroup, i, cols[c].name, v)
				case ok && cols[c].kind == clrimpl.ColumnInt32 && v.Int32() != int32(want),
					ok && cols[c].kind == clrimpl.ColumnUint32 && uint32(v.Int32()) != uint32(want),
					ok && cols[c].kind.Bits() == 64 && v.Int64() != want:
					t.Fatalf("row group size %d: row %d column %s: %v, want %d", rowGroup, i, cols[c].name, v, want)
				}
			}
			i++
		})
		f.Close()
		if i != rows {
			t.Errorf("row group size %d: %d rows read, want %d", rowGroup, i, rows)
		}
	}
}

// TestIntDictionaryLimit: number gives up past the limit (a quarter of
// the values and 16, maxIntDict at most) and numbers up to it.
func TestIntDictionaryLimit(t *testing.T) {
	var d ints
	var idx []int32
	for _, tc := range []struct {
		n, distinct int
		want        bool
	}{
		{1, 1, true}, {16, 16, true}, {24, 22, true}, {24, 23, false}, {100, 41, true}, {100, 42, false},
		{100000, maxIntDict, true}, {100000, maxIntDict + 1, false},
	} {
		c := colData{}
		for i := range tc.n {
			c.i64 = append(c.i64, int64(i%tc.distinct)*0x1000000)
		}
		got := d.number(&c, physInt64, &idx)
		if got != tc.want {
			t.Errorf("%d values, %d distinct: %v, want %v", tc.n, tc.distinct, got, tc.want)
			continue
		}
		if !got {
			continue
		}
		if d.n != tc.distinct || len(idx) != tc.n {
			t.Errorf("%d values, %d distinct: %d in the dictionary, %d indexes", tc.n, tc.distinct, d.n, len(idx))
		}
		for i, k := range idx {
			if d.vals[k] != c.i64[i] {
				t.Fatalf("%d values, %d distinct: value %d is %d, its entry %d", tc.n, tc.distinct, i, c.i64[i], d.vals[k])
			}
		}
	}
}
