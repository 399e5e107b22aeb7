package dataset

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"

	"github.com/clrgo/clrevents/clrimpl"
)

// column is one column of a table: a name, a kind and whether it may be
// null.
type column struct {
	name     string
	kind     clrimpl.ColumnKind
	optional bool
	time     bool // an int64 of nanoseconds since 1970 as TIMESTAMP(NANOS, UTC)
	list     bool // a LIST of kind (uintList writes it)
}

// node is the Parquet type of a column.
func (c column) node() parquet.Node {
	var n parquet.Node
	switch c.kind {
	case clrimpl.ColumnBool:
		n = parquet.Leaf(parquet.BooleanType)
	case clrimpl.ColumnInt8, clrimpl.ColumnInt16, clrimpl.ColumnInt32, clrimpl.ColumnInt64:
		n = parquet.Int(c.kind.Bits())
		if c.time {
			n = parquet.TimestampAdjusted(parquet.Nanosecond, true)
		}
	case clrimpl.ColumnUint8, clrimpl.ColumnUint16, clrimpl.ColumnUint32, clrimpl.ColumnUint64:
		n = parquet.Uint(c.kind.Bits())
	case clrimpl.ColumnFloat32:
		n = parquet.Leaf(parquet.FloatType)
	case clrimpl.ColumnFloat64:
		n = parquet.Leaf(parquet.DoubleType)
	case clrimpl.ColumnGUID:
		n = parquet.UUID()
	case clrimpl.ColumnString:
		n = parquet.String()
	case clrimpl.ColumnBinary:
		n = parquet.Leaf(parquet.ByteArrayType)
	case clrimpl.ColumnJSON:
		n = parquet.JSON()
	default:
		panic("dataset: column kind " + c.kind.String())
	}
	if c.list {
		n = parquet.List(n)
	}
	if c.optional {
		n = parquet.Optional(n)
	}
	return n
}

// orderedGroup is a Parquet group whose fields keep the order they were
// given in (parquet.Group sorts them by name): header columns first, then
// the payload's fields in template order, as the JSON lines have them.
type orderedGroup struct {
	parquet.Group
	fields []parquet.Field
}

func (g *orderedGroup) Fields() []parquet.Field { return g.fields }

type orderedField struct {
	parquet.Node
	name string
}

func (f *orderedField) Name() string                           { return f.name }
func (f *orderedField) Value(base reflect.Value) reflect.Value { return base.FieldByName(f.name) }

func newSchema(name string, cols []column) *parquet.Schema {
	g := &orderedGroup{Group: parquet.Group{}}
	for _, c := range cols {
		n := c.node()
		g.Group[c.name] = n
		g.fields = append(g.fields, &orderedField{Node: n, name: c.name})
	}
	return parquet.NewSchema(name, g)
}

// table is one Parquet file being written: a temporary name until the
// trace's commit renames it. Values are collected per column and handed to
// the column writers a batch at a time, with no parquet.Row in between (a
// row-wise write costs twice as much).
type table struct {
	final, tmp string
	f          *os.File
	w          *parquet.GenericWriter[any]
	rg         *parquet.ConcurrentRowGroupWriter
	cols       []column
	colVals    [][]parquet.Value // per column, the batch's values; byte values alias arena
	arena      []byte
	batch      int   // rows in the batch
	inGroup    int64 // rows in the row group, written or batched
	maxRows    int64 // rows per row group
	col        int   // the next column of the current row
	scratch    []byte
}

// batchRows is how many rows a table collects before handing them to the
// column writers.
const batchRows = 1024

func newTable(final string, name string, cols []column, codec compress.Codec, rowGroupRows int64) (*table, error) {
	if err := os.MkdirAll(filepath.Dir(final), 0o777); err != nil {
		return nil, err
	}
	tmp := filepath.Join(filepath.Dir(final), "."+filepath.Base(final)+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return nil, err
	}
	t := &table{final: final, tmp: tmp, f: f, cols: cols, maxRows: rowGroupRows,
		colVals: make([][]parquet.Value, len(cols)), scratch: make([]byte, 0, 16<<10)}
	var noBounds []string
	for _, c := range cols {
		if c.kind == clrimpl.ColumnJSON || c.kind == clrimpl.ColumnBinary {
			noBounds = append(noBounds, c.name)
		}
	}
	t.w = parquet.NewGenericWriter[any](f, newSchema(name, cols),
		parquet.Compression(codec),
		// Strings repeat (the trace, names, enum names): dictionaries make
		// them small before compression, and cheaper to compress.
		parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.RLEDictionary),
		// Page bounds of JSON and binary columns serve no query and cost a
		// tenth of the time.
		parquet.SkipPageBounds(noBounds...),
		parquet.PageBufferSize(pageBufferSize),
		parquet.CreatedBy("clrevents", "dataset", "v1"),
	)
	t.rg = t.w.BeginRowGroup()
	return t, nil
}

// pageBufferSize is the uncompressed page size of every column.
const pageBufferSize = 64 << 10

// begin starts a row.
func (t *table) begin() { t.col = 0 }

// end finishes the row, writing the batch when it is full and the row
// group when it has its rows.
func (t *table) end() error {
	if t.col != len(t.cols) {
		return fmt.Errorf("row of %d values for %d columns", t.col, len(t.cols))
	}
	t.batch++
	t.inGroup++
	if t.batch == batchRows || t.inGroup >= t.maxRows {
		return t.flushBatch()
	}
	return nil
}

func (t *table) flushBatch() error {
	if t.batch > 0 {
		for i, cw := range t.rg.ColumnWriters() {
			if _, err := cw.WriteRowValues(t.colVals[i]); err != nil {
				return err
			}
			clear(t.colVals[i])
			t.colVals[i] = t.colVals[i][:0]
		}
		t.batch = 0
		t.arena = t.arena[:0]
	}
	if t.inGroup >= t.maxRows {
		t.inGroup = 0
		if _, err := t.rg.Commit(); err != nil {
			return err
		}
	}
	return nil
}

func (t *table) put(v parquet.Value) {
	if t.col >= len(t.cols) {
		t.col++ // counted, reported by end
		return
	}
	if t.cols[t.col].optional {
		v = v.Level(0, 1, t.col)
	}
	t.colVals[t.col] = append(t.colVals[t.col], v)
	t.col++
}

// uintList appends a non-empty LIST of UINT64 (columns of list set):
// repetition level 0 starts the row's list, 1 continues it.
func (t *table) uintList(v []uint64) {
	if t.col < len(t.cols) {
		vals := t.colVals[t.col]
		for i, x := range v {
			vals = append(vals, parquet.Int64Value(int64(x)).Level(min(i, 1), 1, t.col))
		}
		t.colVals[t.col] = vals
	}
	t.col++
}

func (t *table) null() {
	if t.col < len(t.cols) {
		t.colVals[t.col] = append(t.colVals[t.col], parquet.NullValue().Level(0, 0, t.col))
	}
	t.col++
}

// The clrimpl.ColumnAppender methods: the generated AppendColumns calls
// them, one per column.

func (t *table) Bool(v bool) { t.put(parquet.BooleanValue(v)) }

func (t *table) Int(v int64) {
	if t.col < len(t.cols) && t.cols[t.col].kind.Bits() == 64 {
		t.put(parquet.Int64Value(v))
		return
	}
	t.put(parquet.Int32Value(int32(v)))
}

func (t *table) Uint(v uint64) {
	if t.col < len(t.cols) && t.cols[t.col].kind.Bits() == 64 {
		t.put(parquet.Int64Value(int64(v)))
		return
	}
	t.put(parquet.Int32Value(int32(uint32(v))))
}

func (t *table) Float(v float64) {
	if t.col < len(t.cols) && t.cols[t.col].kind == clrimpl.ColumnFloat32 {
		t.put(parquet.FloatValue(float32(v)))
		return
	}
	t.put(parquet.DoubleValue(v))
}

func (t *table) GUID(v clrimpl.GUID) {
	// The UUID logical type is big-endian (RFC 4122 byte order); a GUID's
	// first three fields are little-endian on the wire.
	b := guidBytes(v)
	t.put(parquet.FixedLenByteArrayValue(t.keep(b[:])))
}

func (t *table) Bytes(v []byte) { t.put(parquet.ByteArrayValue(t.keep(v))) }

func (t *table) Scratch() []byte { return t.scratch[:0] }

// keep copies b into the batch's arena. Values of earlier rows keep
// pointing at the old array when the arena grows, which stays alive.
func (t *table) keep(b []byte) []byte {
	n := len(t.arena)
	t.arena = append(t.arena, b...)
	return t.arena[n:len(t.arena):len(t.arena)]
}

// guidBytes is the GUID in RFC 4122 (big-endian) byte order, as its text
// form reads.
func guidBytes(g clrimpl.GUID) [16]byte {
	var b [16]byte
	b[0], b[1], b[2], b[3] = g[3], g[2], g[1], g[0]
	b[4], b[5] = g[5], g[4]
	b[6], b[7] = g[7], g[6]
	copy(b[8:], g[8:])
	return b
}

// close writes the rest and the footer; the file keeps its temporary name
// until the trace's commit renames it.
func (t *table) close() error {
	t.inGroup = max(t.inGroup, 1) * t.maxRows // commit what is left
	err := t.flushBatch()
	if cerr := t.w.Close(); err == nil {
		err = cerr
	}
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// abort removes the temporary file.
func (t *table) abort() {
	t.w.Close()
	t.f.Close()
	os.Remove(t.tmp)
}
