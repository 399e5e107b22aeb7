package dataset

import (
	"fmt"
	"os"
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

// table is one Parquet file being written: in the trace's staging
// folder until the trace's commit renames it into the dataset. Values are collected per column, a batch of
// rows at a time, with no parquet.Row in between (a row-wise write costs
// twice as much). A full batch goes to the trace's flusher, which hands it
// to the column writers, compresses and writes the pages on a goroutine of
// its own, while the trace's reader fills the table's other batch.
//
// The fields above the line are the reading side's; the file and the
// Parquet writer are the flusher's alone (it opens them on the table's
// first batch, so even the file system's work is off the reading side).
type table struct {
	final, tmp string
	cols       []column
	wide       []bool // per column: a 64-bit integer
	fl         *flusher
	cur        *batch      // the batch being filled
	free       chan *batch // batches the flusher is done with
	inGroup    int64       // rows in the row group, written or batched
	maxRows    int64       // rows per row group
	col        int         // the next column of the current row
	scratch    []byte

	// The flusher's.
	name    string
	codec   compress.Codec
	opened  chan error // open's result, once
	ready   bool       // opened was received
	openErr error      // open fails with it (a test's)
	f       *os.File
	w       *parquet.GenericWriter[any]
	rg      *parquet.ConcurrentRowGroupWriter
}

// batch is a batch of rows, column by column.
type batch struct {
	vals   [][]parquet.Value // per column; byte values alias arena
	arena  []byte
	rows   int
	commit bool // the row group ends with this batch
}

// batchRows is how many rows a table collects before handing them to the
// flusher. Each table has two batches: one being filled, one being
// written.
const batchRows = 1024

// newTable starts the table whose file is written at tmp, to be renamed
// final; a non-nil openErr fails its opening.
func newTable(final, tmp string, name string, cols []column, codec compress.Codec, rowGroupRows int64, fl *flusher, openErr error) *table {
	t := &table{final: final, tmp: tmp, openErr: openErr,
		name: name, codec: codec, cols: cols, maxRows: rowGroupRows, fl: fl,
		wide: make([]bool, len(cols)), free: make(chan *batch, 2), scratch: make([]byte, 0, 16<<10)}
	for i, c := range cols {
		t.wide[i] = c.kind.Bits() == 64
	}
	t.cur = &batch{vals: make([][]parquet.Value, len(cols))}
	t.free <- &batch{vals: make([][]parquet.Value, len(cols))}
	// Creating directories and files takes system calls that some file
	// systems make slow; they overlap the reading and the other tables'
	// writing instead of holding up either.
	t.opened = make(chan error, 1)
	go func() { t.opened <- t.open() }()
	return t
}

// wait waits for open (the flusher's, or the trace's once the flusher
// has stopped).
func (t *table) wait() error {
	if !t.ready {
		t.ready = true
		if err := <-t.opened; err != nil {
			t.w = nil
			return err
		}
	}
	if t.w == nil {
		return fmt.Errorf("not open")
	}
	return nil
}

// open creates the temporary file and the Parquet writer.
func (t *table) open() error {
	if t.openErr != nil {
		return t.openErr
	}
	f, err := os.OpenFile(t.tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return err
	}
	var noBounds []string
	for _, c := range t.cols {
		if c.kind == clrimpl.ColumnJSON || c.kind == clrimpl.ColumnBinary {
			noBounds = append(noBounds, c.name)
		}
	}
	t.f = f
	t.w = parquet.NewGenericWriter[any](f, newSchema(t.name, t.cols),
		parquet.Compression(t.codec),
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
	return nil
}

// pageBufferSize is the uncompressed page size of every column.
const pageBufferSize = 64 << 10

// begin starts a row.
func (t *table) begin() { t.col = 0 }

// abandon takes back the values of the row begun, which will not end (a
// payload that stopped fitting its description part way). Only for
// tables without list columns: each column holds one value per row.
func (t *table) abandon() {
	for i := 0; i < t.col && i < len(t.cols); i++ {
		t.cur.vals[i] = t.cur.vals[i][:len(t.cur.vals[i])-1]
	}
	t.col = 0
}

// end finishes the row, shipping the batch when it is full or the row
// group has its rows.
func (t *table) end() error {
	if t.col != len(t.cols) {
		return fmt.Errorf("row of %d values for %d columns", t.col, len(t.cols))
	}
	t.cur.rows++
	t.inGroup++
	if t.inGroup >= t.maxRows {
		t.inGroup = 0
		t.cur.commit = true
		return t.ship()
	}
	if t.cur.rows == batchRows {
		return t.ship()
	}
	return nil
}

// ship hands the batch to the flusher and takes the other one back,
// waiting for the flusher to finish with it.
func (t *table) ship() error {
	if err := t.fl.send(job{t: t, b: t.cur}); err != nil {
		return err
	}
	t.cur = <-t.free
	return nil
}

// write hands a batch to the column writers (the flusher's work).
func (t *table) write(b *batch) error {
	if err := t.wait(); err != nil {
		return err
	}
	if b.rows > 0 {
		for i, cw := range t.rg.ColumnWriters() {
			if _, err := cw.WriteRowValues(b.vals[i]); err != nil {
				return err
			}
		}
	}
	if b.commit {
		if _, err := t.rg.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// recycle empties a batch the flusher is done with and gives it back.
// The values are not cleared: the only memory they point to is the
// batch's own arena (and the arrays it grew from, until the next rows
// overwrite them).
func (t *table) recycle(b *batch) {
	for i := range b.vals {
		b.vals[i] = b.vals[i][:0]
	}
	b.arena = b.arena[:0]
	b.rows = 0
	b.commit = false
	t.free <- b
}

func (t *table) put(v parquet.Value) {
	if t.col >= len(t.cols) {
		t.col++ // counted, reported by end
		return
	}
	vals := append(t.cur.vals[t.col], v)
	if t.cols[t.col].optional {
		vals[len(vals)-1].SetDefinitionLevel(1)
	}
	t.cur.vals[t.col] = vals
	t.col++
}

// uintList appends a non-empty LIST of UINT64 (columns of list set):
// repetition level 0 starts the row's list, 1 continues it.
func (t *table) uintList(v []uint64) {
	if t.col < len(t.cols) {
		vals := t.cur.vals[t.col]
		for i, x := range v {
			vals = append(vals, parquet.Int64Value(int64(x)).Level(min(i, 1), 1, t.col))
		}
		t.cur.vals[t.col] = vals
	}
	t.col++
}

func (t *table) null() {
	if t.col < len(t.cols) {
		t.cur.vals[t.col] = append(t.cur.vals[t.col], parquet.Value{})
	}
	t.col++
}

// The clrimpl.ColumnAppender methods: the generated AppendColumns calls
// them, one per column.

func (t *table) Bool(v bool) { t.put(parquet.BooleanValue(v)) }

func (t *table) Int(v int64) {
	if t.col < len(t.cols) && t.wide[t.col] {
		t.put(parquet.Int64Value(v))
		return
	}
	t.put(parquet.Int32Value(int32(v)))
}

func (t *table) Uint(v uint64) {
	if t.col < len(t.cols) && t.wide[t.col] {
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
	a := t.cur.arena
	n := len(a)
	a = append(a, b...)
	t.cur.arena = a
	return a[n:len(a):len(a)]
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

// finish writes the rest and the footer (the flusher's work), and
// flushes the file to disk before the trace's commit renames it: a trace
// committed is complete on disk, whatever happens after.
func (t *table) finish(b *batch) error {
	b.commit = true // what is left, as one more row group (none when empty)
	if err := t.write(b); err != nil {
		return err
	}
	err := t.w.Close()
	if err == nil {
		err = t.f.Sync()
	}
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	t.w, t.f = nil, nil
	return err
}

// abort closes the file (once the flusher has stopped); the trace's
// abort removes it with the staging folder.
func (t *table) abort() {
	t.wait()
	if t.w != nil {
		t.w.Close()
		t.f.Close()
		t.w, t.f = nil, nil
	}
}
