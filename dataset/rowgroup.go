package dataset

import (
	"encoding/binary"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// A row group's metadata in thrift's compact protocol, written without
// reflection: thrift.Marshal of the row groups was 3% of the export of the
// 4.8 MB .NET Core 3.0 trace (77 row groups of some 20 column chunks).
// appendRowGroup writes the fields the writer sets, with the rules
// parquet-go's encoder follows (an optional field at its zero value is
// left out, a required or "writezero" one is not), so that its bytes are
// thrift.Marshal's (TestAppendRowGroup compares them); a row group with
// any other field set goes through thrift.Marshal.

// Compact protocol types.
const (
	ctI16    = 4
	ctI32    = 5
	ctI64    = 6
	ctBinary = 8
	ctList   = 9
	ctStruct = 12
)

// ctWriter appends one struct's fields; last is the previous field's ID,
// from which the next field's is a delta.
type ctWriter struct {
	b    []byte
	last int16
}

func (w *ctWriter) field(id int16, typ byte) {
	if d := id - w.last; d > 0 && d <= 15 {
		w.b = append(w.b, byte(d)<<4|typ)
	} else {
		w.b = append(w.b, typ)
		w.b = binary.AppendUvarint(w.b, zigzag(int64(id)))
	}
	w.last = id
}

func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

func (w *ctWriter) i16(id int16, v int16) {
	w.field(id, ctI16)
	w.b = binary.AppendUvarint(w.b, zigzag(int64(v)))
}

func (w *ctWriter) i32(id int16, v int32) {
	w.field(id, ctI32)
	w.b = binary.AppendUvarint(w.b, zigzag(int64(v)))
}

func (w *ctWriter) i64(id int16, v int64) {
	w.field(id, ctI64)
	w.b = binary.AppendUvarint(w.b, zigzag(v))
}

func (w *ctWriter) binary(id int16, v []byte) {
	w.field(id, ctBinary)
	w.b = binary.AppendUvarint(w.b, uint64(len(v)))
	w.b = append(w.b, v...)
}

// list writes a list field's header: n elements of type typ follow.
func (w *ctWriter) list(id int16, typ byte, n int) {
	w.field(id, ctList)
	if n < 15 {
		w.b = append(w.b, byte(n)<<4|typ)
	} else {
		w.b = append(w.b, 0xF0|typ)
		w.b = binary.AppendUvarint(w.b, uint64(n))
	}
}

// begin starts a struct field; end closes it and restores the outer
// struct's last field ID.
func (w *ctWriter) begin(id int16) (outer int16) {
	w.field(id, ctStruct)
	outer, w.last = w.last, 0
	return outer
}

func (w *ctWriter) end(outer int16) {
	w.b = append(w.b, 0) // STOP
	w.last = outer
}

// appendRowGroup appends rg, as thrift.Marshal with the compact protocol
// would write it.
func appendRowGroup(b []byte, rg *format.RowGroup) ([]byte, error) {
	if !plainRowGroup(rg) {
		m, err := thrift.Marshal(new(thrift.CompactProtocol), rg)
		return append(b, m...), err
	}
	w := ctWriter{b: b}
	w.list(1, ctStruct, len(rg.Columns))
	for i := range rg.Columns {
		cc := &rg.Columns[i]
		// An element of a list is a struct of its own: field IDs from 0.
		outer := w.last
		w.last = 0
		w.i64(2, cc.FileOffset)
		appendColumnMetaData(&w, &cc.MetaData)
		w.b = append(w.b, 0)
		w.last = outer
	}
	w.i64(2, rg.TotalByteSize)
	w.i64(3, rg.NumRows)
	if rg.FileOffset != 0 {
		w.i64(5, rg.FileOffset)
	}
	if rg.TotalCompressedSize != 0 {
		w.i64(6, rg.TotalCompressedSize)
	}
	w.i16(7, rg.Ordinal)
	w.b = append(w.b, 0)
	return w.b, nil
}

func appendColumnMetaData(w *ctWriter, md *format.ColumnMetaData) {
	outer := w.begin(3)
	w.i32(1, int32(md.Type))
	w.list(2, ctI32, len(md.Encoding))
	for _, e := range md.Encoding {
		w.b = binary.AppendUvarint(w.b, zigzag(int64(e)))
	}
	w.list(3, ctBinary, len(md.PathInSchema))
	for _, p := range md.PathInSchema {
		w.b = binary.AppendUvarint(w.b, uint64(len(p)))
		w.b = append(w.b, p...)
	}
	w.i32(4, int32(md.Codec))
	w.i64(5, md.NumValues)
	w.i64(6, md.TotalUncompressedSize)
	w.i64(7, md.TotalCompressedSize)
	w.i64(9, md.DataPageOffset)
	if md.DictionaryPageOffset != 0 {
		w.i64(11, md.DictionaryPageOffset)
	}
	st := &md.Statistics
	so := w.begin(12)
	if st.Max != nil {
		w.binary(1, st.Max)
	}
	if st.Min != nil {
		w.binary(2, st.Min)
	}
	w.i64(3, st.NullCount)
	if st.DistinctCount != 0 {
		w.i64(4, st.DistinctCount)
	}
	if st.MaxValue != nil {
		w.binary(5, st.MaxValue)
	}
	if st.MinValue != nil {
		w.binary(6, st.MinValue)
	}
	w.end(so)
	w.end(outer)
}

// plainRowGroup reports whether appendRowGroup writes all of rg: no
// field set that it does not write, and no list it would write that
// thrift.Marshal leaves out (a nil one).
func plainRowGroup(rg *format.RowGroup) bool {
	if rg.Columns == nil || rg.SortingColumns != nil {
		return false
	}
	for i := range rg.Columns {
		cc := &rg.Columns[i]
		md := &cc.MetaData
		if cc.FilePath != "" || cc.OffsetIndexOffset != 0 || cc.OffsetIndexLength != 0 ||
			cc.ColumnIndexOffset != 0 || cc.ColumnIndexLength != 0 ||
			cc.CryptoMetadata.Value != nil || cc.EncryptedColumnMetadata != nil ||
			md.Encoding == nil || md.PathInSchema == nil || md.KeyValueMetadata != nil ||
			md.IndexPageOffset != 0 || md.EncodingStats != nil || md.BloomFilterOffset != 0 || md.BloomFilterLength != 0 {
			return false
		}
		if ss := &md.SizeStatistics; ss.UnencodedByteArrayDataBytes != 0 || ss.RepetitionLevelHistogram != nil || ss.DefinitionLevelHistogram != nil {
			return false
		}
		if gs := &md.GeospatialStatistics; gs.BBox != (format.BoundingBox{}) || gs.GeoSpatialTypes != nil {
			return false
		}
	}
	return true
}
