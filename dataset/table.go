package dataset

import (
	"fmt"
	"math"
	"os"
	"reflect"
	"unsafe"

	"github.com/parquet-go/parquet-go"

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
	delta    bool // rising integers, DELTA_BINARY_PACKED (seq and time)
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

// table is one Parquet file being written: in the trace's staging folder
// until the trace's commit renames it into the dataset. Values are
// collected per column in typed slices (colData), a row group at a time.
// A row group ends when the table has maxRows rows, or when the trace's
// tables together hold more than their memory budget and this table
// holds the most (see budget). The row group then goes to the trace's
// flusher, which encodes, compresses and writes it on a goroutine of its
// own, while the trace's reader fills the table's other rowSet.
//
// The fields above the line are the reading side's; the file and the
// Parquet writer are the flusher's alone (the flusher's opener goroutine
// creates them when the table is made, and the flusher waits for it at
// the table's first row group, so even the file system's work is off the
// reading side).
type table struct {
	final, tmp string
	cols       []column
	// derived counts the trace.Derived columns after an event type's
	// payload's.
	derived  int
	phys     []physical
	fl       *flusher
	mem      *budget
	cur      *rowSet      // the rows being filled
	free     chan *rowSet // row sets the flusher is done with
	maxRows  int
	hint     []colLens // the lengths of the last rows shipped
	fixedRow int64     // bytes a row takes in the typed slices, but for byte arrays' bytes
	rowVar   int64     // byte arrays' bytes of the current row
	col      int       // the next column of the current row
	inRow    bool      // a row is begun and not ended: the rows are not to be shipped
	bad      error     // a value that does not fit its column, reported by end
	traceSrc *byte     // the array of the trace column's last value
	a        *arrays   // the trace's arrays (the budget's), nil without a budget

	// The flusher's.
	name    string
	enc     *encoder
	opened  chan error // open's result, once
	ready   bool       // opened was received
	openErr error      // open fails with it (a test's)
	f       *os.File
	w       *pqWriter
}

// rowSet is a set of rows, column by column.
type rowSet struct {
	cols  []colData
	rows  int
	bytes int64 // counted in the budget, buffered or inflight
	held  int64 // the capacity of its arrays while idle
}

// newTable starts the table whose file is written at tmp, to be renamed
// final; a non-nil openErr fails its opening.
func newTable(final, tmp string, name string, cols []column, enc *encoder, rowGroupRows int64, fl *flusher, mem *budget, openErr error) *table {
	t := &table{final: final, tmp: tmp, openErr: openErr,
		name: name, enc: enc, cols: cols, maxRows: int(min(rowGroupRows, math.MaxInt32)), fl: fl, mem: mem,
		phys: make([]physical, len(cols)), free: make(chan *rowSet, 2)}
	for i, c := range cols {
		t.phys[i] = c.physical()
		w := int64(0)
		switch t.phys[i] {
		case physBool:
			w = 1
		case physInt32, physFloat:
			w = 4
		case physInt64, physDouble, physBytes:
			w = 8
		case physUUID:
			w = 16
		}
		if c.optional {
			w++
		}
		t.fixedRow += w
	}
	t.cur = &rowSet{cols: make([]colData, len(cols))}
	t.free <- &rowSet{cols: make([]colData, len(cols))}
	if mem != nil {
		mem.tables = append(mem.tables, t)
		t.a = &mem.arrays
	}
	// Creating files takes system calls that some file systems make
	// slow; they overlap the reading and the other tables' writing
	// instead of holding up either.
	t.opened = make(chan error, 1)
	fl.open(t)
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
	t.f = f
	t.w, err = newPQWriter(f, t.name, t.cols, t.enc, t.tmp+".rowgroups")
	if err != nil {
		f.Close()
		t.f = nil
	}
	return err
}

// pageBufferSize is about the uncompressed size of a page.
const pageBufferSize = 256 << 10

// begin starts a row.
func (t *table) begin() { t.col, t.rowVar, t.inRow = 0, 0, true }

// abandon takes back the values of the row begun, which will not end (a
// payload that stopped fitting its description part way). Only for
// tables without list columns: each column holds one level per row.
func (t *table) abandon() {
	for i := 0; i < t.col && i < len(t.cols); i++ {
		c := &t.cur.cols[i]
		if t.cols[i].optional {
			set := c.defs[len(c.defs)-1] == 1
			c.defs = c.defs[:len(c.defs)-1]
			if !set {
				continue
			}
		}
		switch t.phys[i] {
		case physBool:
			c.bools = c.bools[:len(c.bools)-1]
		case physInt32:
			c.i32 = c.i32[:len(c.i32)-1]
		case physInt64:
			c.i64 = c.i64[:len(c.i64)-1]
		case physFloat:
			c.f32 = c.f32[:len(c.f32)-1]
		case physDouble:
			c.f64 = c.f64[:len(c.f64)-1]
		case physUUID:
			c.data = c.data[:len(c.data)-16]
		case physBytes:
			last := c.spans[len(c.spans)-1]
			c.spans = c.spans[:len(c.spans)-1]
			// Its bytes go too, unless it shares the row before's.
			if n := len(c.spans); int(last.off+last.n) == len(c.data) && (n == 0 || c.spans[n-1] != last) {
				c.data = c.data[:last.off]
			}
		}
	}
	t.col, t.rowVar, t.bad, t.inRow = 0, 0, nil, false
}

// end finishes the row, shipping the rows when the row group is full or
// the trace's tables hold more than their budget.
func (t *table) end() error {
	if t.bad != nil {
		err := t.bad
		t.abandon()
		return err
	}
	if t.col != len(t.cols) {
		return fmt.Errorf("row of %d values for %d columns", t.col, len(t.cols))
	}
	t.inRow = false
	s := t.cur
	s.rows++
	n := t.fixedRow + t.rowVar
	s.bytes += n
	if t.mem == nil {
		if s.rows >= t.maxRows {
			return t.ship()
		}
		return nil
	}
	t.mem.buffered += n
	if s.rows >= t.maxRows {
		return t.ship()
	}
	if t.mem.over() {
		return t.mem.relieve()
	}
	return nil
}

// ship hands the rows to the flusher as a row group and takes the
// table's other rowSet back, waiting for the flusher to finish with it.
func (t *table) ship() error {
	s := t.cur
	if t.mem != nil {
		t.mem.buffered -= s.bytes
		t.mem.inflight.Add(s.bytes)
	}
	// The next rows of this table are likely as many: a row set without
	// arrays gets them in that size at once, instead of growing them.
	if len(t.hint) == 0 {
		t.hint = make([]colLens, len(t.cols))
	}
	for i := range s.cols {
		t.hint[i] = s.cols[i].lens()
	}
	if err := t.fl.send(job{t: t, b: s}); err != nil {
		return err
	}
	t.take()
	return nil
}

// write writes a row set as a row group (the flusher's work).
func (t *table) write(b *rowSet) error {
	if err := t.wait(); err != nil {
		return err
	}
	return t.w.writeRowGroup(b.cols, b.rows)
}

// recycle empties a row set the flusher is done with and gives it back.
// Its arrays are kept for the next rows, counted in the budget as idle.
func (t *table) recycle(b *rowSet) {
	var held int64
	for i := range b.cols {
		b.cols[i].reset()
		held += b.cols[i].capBytes()
	}
	if t.mem != nil {
		b.held = held
		t.mem.idle.Add(held)
		t.mem.inflight.Add(-b.bytes)
		t.mem.signal()
	}
	b.rows, b.bytes = 0, 0
	t.free <- b
}

// take takes back a row set from the flusher, waiting for it.
func (t *table) take() {
	t.cur = <-t.free
	if t.mem != nil {
		t.mem.idle.Add(-t.cur.held)
	}
	if t.cur.held == 0 && len(t.hint) > 0 {
		for i := range t.cur.cols {
			t.cur.cols[i].allocLike(t.a, t.hint[i])
		}
	}
	t.cur.held = 0
}

// idleBytes is what the arrays of the table's idle row set hold (0
// while the flusher has it).
func (t *table) idleBytes() int64 {
	select {
	case b := <-t.free:
		t.free <- b
		return b.held
	default:
		return 0
	}
}

// dropIdle moves the arrays of the table's idle row set, if the flusher
// is done with it, to the trace's pool, for any table, and returns the
// bytes they held.
func (t *table) dropIdle() int64 {
	select {
	case b := <-t.free:
		n := b.held
		if n > 0 {
			for i := range b.cols {
				b.cols[i].giveTo(t.a)
			}
			t.mem.idle.Add(-n)
			b.held = 0
		}
		t.free <- b
		return n
	default:
		return 0
	}
}

// colAt is the column the next value goes to, or nil past the last
// (counted, reported by end).
func (t *table) colAt() *colData {
	if t.col >= len(t.cols) {
		t.col++
		return nil
	}
	c := &t.cur.cols[t.col]
	if t.cols[t.col].optional {
		c.defs = push(t.a, c.defs, 1)
	}
	return c
}

func (t *table) mismatch(what string) {
	if t.bad == nil {
		t.bad = fmt.Errorf("a %s value for column %s of kind %s", what, t.cols[t.col].name, t.cols[t.col].kind)
	}
}

// integer appends v to a numeric or bool column.
func (t *table) integer(v int64, what string) {
	c := t.colAt()
	if c == nil {
		return
	}
	switch t.phys[t.col] {
	case physInt32:
		c.i32 = push(t.a, c.i32, int32(v))
	case physInt64:
		c.i64 = push(t.a, c.i64, v)
	case physBool:
		c.bools = push(t.a, c.bools, v != 0)
	case physFloat:
		c.f32 = push(t.a, c.f32, float32(v))
	case physDouble:
		c.f64 = push(t.a, c.f64, float64(v))
	default:
		t.mismatch(what)
		t.pad(c)
	}
	t.col++
}

// pad appends a zero value to a column given a value of another kind, so
// that the row stays whole until end reports it. (Through the pool, as
// every append: an array append outgrew would leave its block in use.)
func (t *table) pad(c *colData) {
	switch t.phys[t.col] {
	case physUUID:
		var zero [16]byte
		c.data = pushAll(t.a, c.data, zero[:])
	case physBytes:
		c.spans = push(t.a, c.spans, span{})
	case physBool:
		c.bools = push(t.a, c.bools, false)
	case physInt32:
		c.i32 = push(t.a, c.i32, 0)
	case physInt64:
		c.i64 = push(t.a, c.i64, 0)
	case physFloat:
		c.f32 = push(t.a, c.f32, 0)
	case physDouble:
		c.f64 = push(t.a, c.f64, 0)
	}
}

// headerRow is the values of the header columns (headerColumns) of a
// row; negative pid, tid, cpu and stack and zero GUIDs are nulls.
type headerRow struct {
	trace                            []byte
	seq, time                        int64
	id, version, task, opcode, level int32
	keywords                         int64
	pid, tid                         int64
	cpu, size                        int32
	activity, related                clrimpl.GUID
	stack                            int64
	extra                            []byte
}

// appendHeader appends the header columns, which start every row of the
// event and generic tables, straight into their arrays: a fifth of the
// export went to the column by column calls.
func (t *table) appendHeader(h *headerRow) {
	if t.col != 0 || len(t.cols) < len(headerColumns) {
		panic("dataset: appendHeader on a table without the header's columns")
	}
	c := t.cur.cols[:len(headerColumns)]
	t.col = 0
	// The trace's name is the same bytes in every row (traceWriter's
	// nameBytes): the last span again, without comparing them.
	if n := len(c[0].spans); n > 0 && len(h.trace) > 0 && t.traceSrc == unsafe.SliceData(h.trace) && int(c[0].spans[n-1].n) == len(h.trace) {
		c[0].spans = push(t.a, c[0].spans, c[0].spans[n-1])
		t.col = 1
	} else {
		t.Bytes(h.trace)
		t.traceSrc = unsafe.SliceData(h.trace)
	}
	c[1].i64 = push(t.a, c[1].i64, h.seq)
	c[2].i64 = push(t.a, c[2].i64, h.time)
	c[3].i32 = push(t.a, c[3].i32, h.id)
	c[4].i32 = push(t.a, c[4].i32, h.version)
	c[5].i32 = push(t.a, c[5].i32, h.task)
	c[6].i32 = push(t.a, c[6].i32, h.opcode)
	c[7].i32 = push(t.a, c[7].i32, h.level)
	c[8].i64 = push(t.a, c[8].i64, h.keywords)
	optI64(t.a, &c[9], h.pid, h.pid >= 0)
	optI64(t.a, &c[10], h.tid, h.tid >= 0)
	if h.cpu >= 0 {
		c[11].defs = push(t.a, c[11].defs, 1)
		c[11].i32 = push(t.a, c[11].i32, h.cpu)
	} else {
		c[11].defs = push(t.a, c[11].defs, 0)
	}
	c[12].i32 = push(t.a, c[12].i32, h.size)
	optUUID(t.a, &c[13], h.activity)
	optUUID(t.a, &c[14], h.related)
	optI64(t.a, &c[15], h.stack, h.stack >= 0)
	t.col = 16
	if len(h.extra) > 0 {
		t.Bytes(h.extra)
	} else {
		t.null()
	}
}

func optI64(a *arrays, c *colData, v int64, ok bool) {
	if ok {
		c.defs = push(a, c.defs, 1)
		c.i64 = push(a, c.i64, v)
	} else {
		c.defs = push(a, c.defs, 0)
	}
}

func optUUID(a *arrays, c *colData, g clrimpl.GUID) {
	if g.IsZero() {
		c.defs = push(a, c.defs, 0)
		return
	}
	c.defs = push(a, c.defs, 1)
	b := guidBytes(g)
	c.data = pushAll(a, c.data, b[:])
}

// uintList appends a non-empty LIST of UINT64 (columns of list set):
// repetition level 0 starts the row's list, 1 continues it.
func (t *table) uintList(v []uint64) {
	if t.col < len(t.cols) {
		c := &t.cur.cols[t.col]
		c.i64 = grow(t.a, c.i64, len(v))
		c.reps = grow(t.a, c.reps, len(v))
		c.defs = grow(t.a, c.defs, len(v))
		for i, x := range v {
			c.i64 = append(c.i64, int64(x))
			c.reps = append(c.reps, uint8(min(i, 1)))
			c.defs = append(c.defs, 1)
		}
		t.rowVar += int64(len(v)) * 10
	}
	t.col++
}

func (t *table) null() {
	if t.col < len(t.cols) {
		c := &t.cur.cols[t.col]
		if t.cols[t.col].optional {
			c.defs = push(t.a, c.defs, 0)
		} else {
			t.mismatch("null")
			t.pad(c)
		}
	}
	t.col++
}

// The clrimpl.ColumnAppender methods: the generated AppendColumns calls
// them, one per column.

func (t *table) Bool(v bool) {
	x := int64(0)
	if v {
		x = 1
	}
	t.integer(x, "bool")
}

func (t *table) Int(v int64) { t.integer(v, "int") }

func (t *table) Uint(v uint64) { t.integer(int64(v), "uint") }

func (t *table) Float(v float64) {
	c := t.colAt()
	if c == nil {
		return
	}
	switch t.phys[t.col] {
	case physFloat:
		c.f32 = push(t.a, c.f32, float32(v))
	case physDouble:
		c.f64 = push(t.a, c.f64, v)
	default:
		t.mismatch("float")
		t.pad(c)
	}
	t.col++
}

func (t *table) GUID(v clrimpl.GUID) {
	c := t.colAt()
	if c == nil {
		return
	}
	if t.phys[t.col] != physUUID {
		t.mismatch("GUID")
		t.pad(c)
		t.col++
		return
	}
	// The UUID logical type is big-endian (RFC 4122 byte order); a GUID's
	// first three fields are little-endian on the wire.
	b := guidBytes(v)
	c.data = pushAll(t.a, c.data, b[:])
	t.col++
}

// Bytes appends a byte array. A value equal to the column's last one
// shares its bytes (the trace's name, a provider's).
func (t *table) Bytes(v []byte) {
	if m := t.mem; m != nil && len(v) > cap(m.scratch) && len(v) <= maxScratch {
		// A value the caller grew Scratch's buffer for: the next as big
		// fits without growing it again (it is copied below).
		m.scratch = make([]byte, 0, len(v))
	}
	c := t.colAt()
	if c == nil {
		return
	}
	if t.phys[t.col] != physBytes {
		t.mismatch("byte array")
		t.pad(c)
		t.col++
		return
	}
	if n := len(c.spans); n > 0 {
		if last := c.spans[n-1]; int(last.n) == len(v) && string(c.data[last.off:last.off+last.n]) == string(v) {
			c.spans = push(t.a, c.spans, last)
			t.col++
			return
		}
	}
	off := len(c.data)
	c.data = pushAll(t.a, c.data, v)
	c.spans = push(t.a, c.spans, span{uint32(off), uint32(len(v))})
	t.rowVar += int64(len(v))
	t.col++
}

// maxScratch bounds what Scratch's buffer grows to (a value's JSON: a
// bulk event's, 64 KB of payload, is a few hundred KB).
const maxScratch = 4 << 20

// Scratch returns the trace's buffer for building a value to pass to
// Bytes: 64 KiB, grown to the biggest value passed since (up to
// maxScratch).
func (t *table) Scratch() []byte {
	if t.mem != nil {
		return t.mem.scratch[:0]
	}
	return nil
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

// finish writes the rest as a last row group (none when empty) and the
// footer (the flusher's work), and flushes the file to disk before the
// trace's commit renames it: a trace committed is complete on disk,
// whatever happens after.
func (t *table) finish(b *rowSet) error {
	if err := t.write(b); err != nil {
		return err
	}
	defer t.w.closeSpill()
	err := t.w.close()
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
	if t.f != nil {
		t.w.closeSpill()
		t.f.Close()
		t.w, t.f = nil, nil
	}
}
