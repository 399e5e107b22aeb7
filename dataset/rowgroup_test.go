package dataset

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// TestAppendRowGroup: appendRowGroup writes a row group's metadata as
// thrift.Marshal does, byte for byte, for row groups as the writer makes
// them (random sizes, offsets, statistics present, empty or absent, many
// columns and encodings), and goes through thrift.Marshal for one with a
// field it does not write.
func TestAppendRowGroup(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	i64 := func() int64 {
		switch rng.IntN(4) {
		case 0:
			return 0
		case 1:
			return rng.Int64N(100)
		case 2:
			return -rng.Int64N(1 << 40)
		}
		return rng.Int64()
	}
	bs := func() []byte {
		switch rng.IntN(3) {
		case 0:
			return nil
		case 1:
			return []byte{}
		}
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	for n := range 500 {
		rg := format.RowGroup{TotalByteSize: i64(), NumRows: i64(), FileOffset: i64(), TotalCompressedSize: i64(),
			Ordinal: int16(rng.IntN(math.MaxInt16 + 1))}
		if n%7 == 0 {
			rg.Ordinal = -int16(rng.IntN(100))
		}
		cols := rng.IntN(40) + 1
		if n == 0 {
			cols = 0
		}
		rg.Columns = make([]format.ColumnChunk, cols)
		for i := range rg.Columns {
			md := format.ColumnMetaData{
				Type: format.Type(rng.IntN(8)), Codec: format.CompressionCodec(rng.IntN(8)),
				NumValues: i64(), TotalUncompressedSize: i64(), TotalCompressedSize: i64(),
				DataPageOffset: i64(), DictionaryPageOffset: i64(),
			}
			for range rng.IntN(4) + 1 {
				md.Encoding = append(md.Encoding, format.Encoding(rng.IntN(10)))
			}
			for range rng.IntN(20) + 1 {
				md.PathInSchema = append(md.PathInSchema, string(bs()))
			}
			md.Statistics = format.Statistics{Max: bs(), Min: bs(), NullCount: i64(), DistinctCount: i64(), MaxValue: bs(), MinValue: bs()}
			rg.Columns[i] = format.ColumnChunk{FileOffset: i64(), MetaData: md}
		}
		want, err := thrift.Marshal(new(thrift.CompactProtocol), &rg)
		if err != nil {
			t.Fatal(err)
		}
		if !plainRowGroup(&rg) {
			t.Fatalf("row group %d: not written without reflection", n)
		}
		got, err := appendRowGroup([]byte("x"), &rg)
		if err != nil || !bytes.Equal(got[1:], want) || got[0] != 'x' {
			t.Fatalf("row group %d: %v\n got %x\nwant %x", n, err, got[1:], want)
		}
		var back format.RowGroup
		if err := thrift.Unmarshal(new(thrift.CompactProtocol), got[1:], &back); err != nil || back.NumRows != rg.NumRows || len(back.Columns) != len(rg.Columns) {
			t.Fatalf("row group %d: read back %v, %d rows, %d columns", n, err, back.NumRows, len(back.Columns))
		}
	}
	// Each field it does not write, set alone: thrift.Marshal writes the
	// row group.
	base := func() format.RowGroup {
		return format.RowGroup{NumRows: 3, Columns: []format.ColumnChunk{{FileOffset: 4,
			MetaData: format.ColumnMetaData{Encoding: []format.Encoding{format.Plain}, PathInSchema: []string{"a"}}}}}
	}
	if rg := base(); !plainRowGroup(&rg) {
		t.Fatal("the base row group is not plain")
	}
	for name, change := range map[string]func(*format.RowGroup){
		"FilePath":          func(rg *format.RowGroup) { rg.Columns[0].FilePath = "other.parquet" },
		"OffsetIndexOffset": func(rg *format.RowGroup) { rg.Columns[0].OffsetIndexOffset = 1 },
		"OffsetIndexLength": func(rg *format.RowGroup) { rg.Columns[0].OffsetIndexLength = 1 },
		"ColumnIndexOffset": func(rg *format.RowGroup) { rg.Columns[0].ColumnIndexOffset = 1 },
		"ColumnIndexLength": func(rg *format.RowGroup) { rg.Columns[0].ColumnIndexLength = 1 },
		"CryptoMetadata": func(rg *format.RowGroup) {
			rg.Columns[0].CryptoMetadata.Value = &format.EncryptionWithFooterKey{}
		},
		"EncryptedColumnMetadata": func(rg *format.RowGroup) { rg.Columns[0].EncryptedColumnMetadata = []byte{1} },
		"KeyValueMetadata": func(rg *format.RowGroup) {
			rg.Columns[0].MetaData.KeyValueMetadata = []format.KeyValue{{Key: "k"}}
		},
		"IndexPageOffset": func(rg *format.RowGroup) { rg.Columns[0].MetaData.IndexPageOffset = 1 },
		"EncodingStats": func(rg *format.RowGroup) {
			rg.Columns[0].MetaData.EncodingStats = []format.PageEncodingStats{{Count: 1}}
		},
		"BloomFilterOffset": func(rg *format.RowGroup) { rg.Columns[0].MetaData.BloomFilterOffset = 1 },
		"BloomFilterLength": func(rg *format.RowGroup) { rg.Columns[0].MetaData.BloomFilterLength = 1 },
		"SizeStatistics": func(rg *format.RowGroup) {
			rg.Columns[0].MetaData.SizeStatistics.DefinitionLevelHistogram = []int64{1}
		},
		"GeospatialStatistics": func(rg *format.RowGroup) { rg.Columns[0].MetaData.GeospatialStatistics.BBox.XMax = 1 },
		"SortingColumns":       func(rg *format.RowGroup) { rg.SortingColumns = []format.SortingColumn{{ColumnIdx: 0}} },
		"nil Encoding":         func(rg *format.RowGroup) { rg.Columns[0].MetaData.Encoding = nil },
		"nil PathInSchema":     func(rg *format.RowGroup) { rg.Columns[0].MetaData.PathInSchema = nil },
		"nil Columns":          func(rg *format.RowGroup) { rg.Columns = nil },
	} {
		rg := base()
		change(&rg)
		if plainRowGroup(&rg) {
			t.Errorf("%s: taken as plain", name)
		}
		want, _ := thrift.Marshal(new(thrift.CompactProtocol), &rg)
		if got, err := appendRowGroup(nil, &rg); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %v\n got %x\nwant %x", name, err, got, want)
		}
	}
}
