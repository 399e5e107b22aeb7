package dataset

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"slices"
	"unsafe"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/delta"
	"github.com/parquet-go/parquet-go/encoding/rle"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/clrgo/clrevents/clrimpl"
)

// A table's values are kept as typed Go slices, one per column (colData),
// and encoded into Parquet pages by the writer below: no parquet.Value per
// cell. parquet-go still makes the schema (the same nodes as before, so
// that the files' schemas are unchanged), its thrift and RLE encoders
// write the metadata and the levels, and its codecs compress; the file
// layout (pages, column chunks, row groups, the footer) is written here.
// Readers see a plain Parquet file: data pages v1, PLAIN values, strings
// dictionary-encoded (RLE_DICTIONARY) unless they are mostly distinct,
// statistics per column chunk, no page indexes.

// physical is the Parquet physical type a column's values are kept as.
type physical uint8

const (
	physBool physical = iota
	physInt32
	physInt64
	physFloat
	physDouble
	physUUID  // FIXED_LEN_BYTE_ARRAY(16)
	physBytes // BYTE_ARRAY
)

func (c column) physical() physical {
	switch c.kind {
	case clrimpl.ColumnBool:
		return physBool
	case clrimpl.ColumnFloat32:
		return physFloat
	case clrimpl.ColumnFloat64:
		return physDouble
	case clrimpl.ColumnGUID:
		return physUUID
	case clrimpl.ColumnString, clrimpl.ColumnBinary, clrimpl.ColumnJSON:
		return physBytes
	}
	if c.kind.Bits() == 64 {
		return physInt64
	}
	return physInt32
}

// span is a byte array value: data[off:off+n] of its column.
type span struct{ off, n uint32 }

// colData holds one column's values of the rows not yet written. Only
// the slice of the column's physical type is used; defs holds the
// definition levels of an optional or list column (a value is kept only
// for a level at the maximum), reps the repetition levels of a list.
type colData struct {
	defs  []uint8
	reps  []uint8
	bools []bool
	i32   []int32
	i64   []int64
	f32   []float32
	f64   []float64
	spans []span
	data  []byte // byte arrays' bytes, or 16 bytes per UUID
}

func (c *colData) reset() {
	c.defs, c.reps, c.bools = c.defs[:0], c.reps[:0], c.bools[:0]
	c.i32, c.i64, c.f32, c.f64 = c.i32[:0], c.i64[:0], c.f32[:0], c.f64[:0]
	c.spans, c.data = c.spans[:0], c.data[:0]
}

// colLens are the lengths of a colData's arrays.
type colLens struct{ defs, reps, bools, i32, i64, f32, f64, spans, data int }

func (c *colData) lens() colLens {
	return colLens{len(c.defs), len(c.reps), len(c.bools), len(c.i32), len(c.i64),
		len(c.f32), len(c.f64), len(c.spans), len(c.data)}
}

// allocLike gives c's arrays room for h's lengths, from a's pool.
func (c *colData) allocLike(a *arrays, h colLens) {
	c.defs = grow(a, c.defs, h.defs)
	c.reps = grow(a, c.reps, h.reps)
	c.bools = grow(a, c.bools, h.bools)
	c.i32 = grow(a, c.i32, h.i32)
	c.i64 = grow(a, c.i64, h.i64)
	c.f32 = grow(a, c.f32, h.f32)
	c.f64 = grow(a, c.f64, h.f64)
	c.spans = grow(a, c.spans, h.spans)
	c.data = grow(a, c.data, h.data)
}

// giveTo puts c's arrays into a's pool and leaves c without arrays.
func (c *colData) giveTo(a *arrays) {
	c.defs, c.reps = give(a, c.defs), give(a, c.reps)
	c.bools = give(a, c.bools)
	c.i32, c.i64 = give(a, c.i32), give(a, c.i64)
	c.f32, c.f64 = give(a, c.f32), give(a, c.f64)
	c.spans, c.data = give(a, c.spans), give(a, c.data)
}

// capBytes is the memory c's arrays hold.
func (c *colData) capBytes() int64 {
	return int64(cap(c.defs) + cap(c.reps) + cap(c.bools) + 4*cap(c.i32) + 8*cap(c.i64) +
		4*cap(c.f32) + 8*cap(c.f64) + 8*cap(c.spans) + cap(c.data))
}

// leaf is what the writer knows of a column.
type leaf struct {
	phys     physical
	unsigned bool
	maxDef   uint8
	maxRep   uint8
	path     []string
	delta    bool
}

// pageCodec compresses pages (parquet-go's compress.Codec has its
// methods).
type pageCodec interface {
	Encode(dst, src []byte) ([]byte, error)
	CompressionCodec() format.CompressionCodec
}

// zstdCodec compresses with an encoder of its own, a trace's. (parquet-go's
// zstd codec keeps its encoders in a pool that the garbage collector
// empties: each new encoder allocated an 8 MB history, 50 MB per run on
// the 62 MB trace.) Its window of 1 MiB holds a page whole; the level is
// the fastest, as before.
type zstdCodec struct{ enc *zstd.Encoder }

func newZstdCodec() pageCodec {
	enc, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.SpeedFastest),
		zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(256<<10),
		zstd.WithZeroFrames(true),
		zstd.WithEncoderCRC(false))
	if err != nil {
		panic("dataset: zstd options: " + err.Error()) // fixed options, checked by every test
	}
	return zstdCodec{enc}
}

// Encode compresses src, but for a page of fewer than 256 bytes (a
// dictionary of one value, levels all alike, a few indexes), which it
// stores in a frame of one raw block: nothing to gain from compressing
// it, and EncodeAll's cost per call to save. Parquet's codec is the
// column chunk's, and parquet-go reads every chunk of a column with the
// first one's, so the frame stays zstd.
func (c zstdCodec) Encode(dst, src []byte) ([]byte, error) {
	if len(src) < 256 {
		dst = append(dst[:0], 0x28, 0xB5, 0x2F, 0xFD, // magic
			0x20,           // single segment, content size in 1 byte, no checksum
			byte(len(src)), // content size
			// the last block, raw, of len(src) bytes
			byte(1|len(src)<<3), byte(len(src)>>5), 0)
		return append(dst, src...), nil
	}
	return c.enc.EncodeAll(src, dst[:0]), nil
}

func (zstdCodec) CompressionCodec() format.CompressionCodec { return format.Zstd }

// pqWriter writes a Parquet file, a row group at a time.
type pqWriter struct {
	*encoder
	w         io.Writer
	off       int64
	leaves    []leaf
	meta      format.FileMetaData // but RowGroups
	rows      int64
	groups    []byte               // the row groups' metadata, thrift-encoded
	chunks    []format.ColumnChunk // a row group's columns, before they are encoded
	ngroups   int
	spillPath string   // where row groups' metadata go beyond groupsLimit
	spill     *os.File // nil until then
	spilled   int64
	pageLimit int // uncompressed bytes per page, about
}

// encoder is what the writers of a trace's tables share, all on the
// trace's flusher: the codec, scratch space and the bytes on their way to
// a file.
type encoder struct {
	codec                   pageCodec
	page, comp, levels, hdr []byte
	idx                     []int32
	dict                    map[string]int32
	dictSpans               []span
	dictLen                 int    // values in the chunk's dictionary
	ints                    ints   // an integer column's dictionary
	out                     []byte // written to the file at the end of each row group
}

// newPQWriter writes the file's magic and prepares its metadata from the
// schema parquet-go makes for cols.
func newPQWriter(w io.Writer, name string, cols []column, enc *encoder, spillPath string) (*pqWriter, error) {
	if enc == nil {
		enc = &encoder{codec: &parquet.Uncompressed}
	}
	p := &pqWriter{encoder: enc, w: w, pageLimit: pageBufferSize, spillPath: spillPath}
	schema := newSchema(name, cols)
	p.meta = format.FileMetaData{
		Version:   2,
		CreatedBy: "clrevents version dataset(build v2)",
	}
	var walk func(name string, n parquet.Node, root bool)
	walk = func(name string, n parquet.Node, root bool) {
		typ := n.Type()
		e := format.SchemaElement{Name: name}
		if !root {
			switch {
			case n.Repeated():
				e.RepetitionType.Set(format.Repeated)
			case n.Optional():
				e.RepetitionType.Set(format.Optional)
			default:
				e.RepetitionType.Set(format.Required)
			}
		}
		if lt := typ.LogicalType(); lt != nil {
			e.LogicalType = *lt
		}
		if l := int32(typ.Length()); l > 0 {
			e.TypeLength.Set(l)
		}
		if !n.Leaf() {
			e.NumChildren.Set(int32(len(n.Fields())))
		}
		if pt := typ.PhysicalType(); pt != nil {
			e.Type.Set(*pt)
		}
		if ct := typ.ConvertedType(); ct != nil {
			e.ConvertedType.Set(*ct)
		}
		p.meta.Schema = append(p.meta.Schema, e)
		if n.Leaf() {
			p.meta.ColumnOrders = append(p.meta.ColumnOrders, *typ.ColumnOrder())
			return
		}
		for _, f := range n.Fields() {
			walk(f.Name(), f, false)
		}
	}
	walk(name, schema, true)
	if len(p.meta.ColumnOrders) != len(cols) {
		return nil, fmt.Errorf("schema of %d leaves for %d columns", len(p.meta.ColumnOrders), len(cols))
	}
	for _, c := range cols {
		l := leaf{phys: c.physical(), path: []string{c.name}, unsigned: c.kind.Unsigned(), delta: c.delta && c.physical() == physInt64}
		if c.optional {
			l.maxDef++
		}
		if c.list {
			l.maxDef++
			l.maxRep++
			l.path = append(l.path, "list", "element")
		}
		p.leaves = append(p.leaves, l)
	}
	_, err := w.Write([]byte("PAR1"))
	p.off = 4
	return p, err
}

// write adds b to the bytes on their way to the file.
func (p *pqWriter) write(b []byte) error {
	p.out = append(p.out, b...)
	p.off += int64(len(b))
	if len(p.out) >= 1<<20 {
		return p.flushOut()
	}
	return nil
}

func (p *pqWriter) flushOut() error {
	_, err := p.w.Write(p.out)
	p.out = p.out[:0]
	return err
}

// writeRowGroup writes rows rows of cols as a row group.
func (p *pqWriter) writeRowGroup(cols []colData, rows int) error {
	if rows == 0 {
		return nil
	}
	if cap(p.chunks) < len(cols) {
		p.chunks = make([]format.ColumnChunk, 0, len(cols))
	}
	// The chunks' array is the writer's, used again: the row group is
	// kept encoded.
	rg := format.RowGroup{NumRows: int64(rows), FileOffset: p.off, Ordinal: int16(min(p.ngroups, math.MaxInt16)),
		Columns: p.chunks[:0]}
	for i := range cols {
		cc, err := p.writeChunk(&p.leaves[i], &cols[i], rows)
		if err != nil {
			return fmt.Errorf("column %s: %w", p.leaves[i].path[0], err)
		}
		rg.TotalByteSize += cc.MetaData.TotalUncompressedSize
		rg.TotalCompressedSize += cc.MetaData.TotalCompressedSize
		rg.Columns = append(rg.Columns, cc)
	}
	// Kept encoded (tens of bytes a column) rather than as structs
	// (hundreds): a file of a long trace has thousands of row groups.
	var err error
	if p.groups, err = appendRowGroup(p.groups, &rg); err != nil {
		return err
	}
	p.ngroups++
	p.rows += int64(rows)
	if len(p.groups) >= groupsLimit {
		if err := p.spillGroups(); err != nil {
			return err
		}
	}
	return p.flushOut()
}

// groupsLimit is the most bytes of row group metadata a writer keeps in
// memory: beyond, they go to a file beside the table's (spill), read back
// into the footer. The footer grows with the trace (6 MB over the 42
// tables of a 241 MB trace), the memory does not.
const groupsLimit = 64 << 10

func (p *pqWriter) spillGroups() error {
	if p.spill == nil {
		if p.spillPath == "" {
			return nil // (a writer without a place to spill keeps them)
		}
		f, err := os.OpenFile(p.spillPath, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if err != nil {
			return err
		}
		p.spill = f
	}
	n, err := p.spill.Write(p.groups)
	p.spilled += int64(n)
	p.groups = p.groups[:0]
	return err
}

// closeSpill closes and removes the spill file, if any.
func (p *pqWriter) closeSpill() {
	if p.spill != nil {
		p.spill.Close()
		os.Remove(p.spillPath)
		p.spill = nil
	}
}

// footHead and footTail are FileMetaData's fields before and after its
// row groups (field 4).
type footHead struct {
	Version int32                              `thrift:"1,required"`
	Schema  thrift.Slice[format.SchemaElement] `thrift:"2,required"`
	NumRows int64                              `thrift:"3,required"`
}

type footTail struct {
	CreatedBy    string                           `thrift:"6,optional"`
	ColumnOrders thrift.Slice[format.ColumnOrder] `thrift:"7,optional"`
}

// close writes the footer: FileMetaData in thrift's compact protocol,
// put together from its fields before the row groups, the row groups
// encoded as they were written, and the fields after.
func (p *pqWriter) close() error {
	head, err := thrift.Marshal(new(thrift.CompactProtocol), &footHead{p.meta.Version, p.meta.Schema, p.rows})
	if err != nil {
		return err
	}
	tail, err := thrift.Marshal(new(thrift.CompactProtocol), &footTail{p.meta.CreatedBy, p.meta.ColumnOrders})
	if err != nil {
		return err
	}
	if len(head) == 0 || head[len(head)-1] != 0 || len(tail) == 0 || tail[0]>>4 != 6 {
		return fmt.Errorf("unexpected thrift encoding of the footer")
	}
	b := head[:len(head)-1]  // without its stop field
	b = append(b, 1<<4|0x09) // field 4 (3+1), a list
	const structType = 0x0C
	if p.ngroups < 15 {
		b = append(b, byte(p.ngroups)<<4|structType)
	} else {
		b = append(b, 0xF0|structType)
		b = binary.AppendUvarint(b, uint64(p.ngroups))
	}
	var size int64 // the footer's
	if p.spill != nil {
		// The row groups spilled, between the head and those in memory.
		defer p.closeSpill()
		if err := p.write(b); err != nil {
			return err
		}
		if err := p.flushOut(); err != nil {
			return err
		}
		if _, err := p.spill.Seek(0, io.SeekStart); err != nil {
			return err
		}
		n, err := io.Copy(p.w, p.spill)
		if err == nil && n != p.spilled {
			err = fmt.Errorf("%s: read %d bytes of %d", p.spillPath, n, p.spilled)
		}
		if err != nil {
			return err
		}
		p.off += n
		size += int64(len(b)) + n
		b = b[:0]
	}
	b = append(b, p.groups...)
	b = append(b, 2<<4|tail[0]&0x0F) // field 6 follows field 4
	b = append(b, tail[1:]...)
	size += int64(len(b))
	b = binary.LittleEndian.AppendUint32(b, uint32(size))
	if err := p.write(append(b, "PAR1"...)); err != nil {
		return err
	}
	return p.flushOut()
}

// chunkStats tracks a column chunk's statistics.
type chunkStats struct {
	nulls    int64
	min, max []byte
}

func (p *pqWriter) writeChunk(l *leaf, c *colData, rows int) (format.ColumnChunk, error) {
	levels := rows
	if l.maxDef > 0 {
		levels = len(c.defs)
	}
	nvals := 0
	switch l.phys {
	case physBool:
		nvals = len(c.bools)
	case physInt32:
		nvals = len(c.i32)
	case physInt64:
		nvals = len(c.i64)
	case physFloat:
		nvals = len(c.f32)
	case physDouble:
		nvals = len(c.f64)
	case physUUID:
		nvals = len(c.data) / 16
	case physBytes:
		nvals = len(c.spans)
	}
	if l.maxDef == 0 && nvals != levels || l.maxRep > 0 && len(c.reps) != levels {
		return format.ColumnChunk{}, fmt.Errorf("%d values for %d rows", nvals, rows)
	}
	var st chunkStats
	st.nulls = int64(levels - nvals)
	md := format.ColumnMetaData{
		Codec:        p.codec.CompressionCodec(),
		NumValues:    int64(levels),
		PathInSchema: l.path,
	}
	start := p.off
	var encs []format.Encoding
	if l.maxDef > 0 {
		encs = append(encs, format.RLE)
	}
	valueEnc := format.Plain
	dict, constant := false, false
	switch l.phys {
	case physBool:
		md.Type = format.Boolean
	case physInt32:
		md.Type = format.Int32
		st.min, st.max = int32Bounds(c.i32, l.unsigned)
	case physInt64:
		md.Type = format.Int64
		st.min, st.max = int64Bounds(c.i64, l.unsigned)
	case physFloat:
		md.Type = format.Float
	case physDouble:
		md.Type = format.Double
	case physUUID:
		md.Type = format.FixedLenByteArray
	case physBytes:
		md.Type = format.ByteArray
		dict = p.dictionary(c)
		if dict {
			st.min, st.max = spanBounds(c.data, p.dictSpans)
		}
	}
	// An integer column of one value in the chunk (a table's event ID,
	// version, level, keywords, often its process and payload size) is a
	// dictionary of that value: a few bytes instead of every value to
	// compress.
	intDict := false
	if (l.phys == physInt32 || l.phys == physInt64) && st.min != nil {
		switch {
		case bytes.Equal(st.min, st.max):
			constant, dict = true, true
		case !l.delta:
			dict = p.ints.number(c, l.phys, &p.idx)
			intDict = dict
		}
	}
	switch {
	case constant:
		p.dictLen = 1
	case intDict:
		p.dictLen = p.ints.n
	default:
		p.dictLen = len(p.dictSpans)
	}
	raw := c.capBytesUsed(l.phys)
	if dict {
		md.DictionaryPageOffset = p.off
		var err error
		switch {
		case constant:
			err = p.writeConstDictPage(st.min, &md)
		case intDict:
			err = p.writeIntDictPage(l.phys, &md)
		default:
			err = p.writeDictPage(c, &md)
		}
		if err != nil {
			return format.ColumnChunk{}, err
		}
		valueEnc = format.RLEDictionary
	}
	if l.delta && !dict {
		// seq and time rise: their differences take a few bits where
		// their values take 64, and zstd had little to take from the
		// time's low bytes (845 KB compressed to 672 KB on the 3.0 trace).
		valueEnc = format.DeltaBinaryPacked
		encs = append(encs, format.DeltaBinaryPacked)
	} else {
		encs = append(encs, format.Plain)
	}
	if dict {
		encs = append(encs, format.RLEDictionary)
	}
	md.Encoding = encs
	md.Statistics = format.Statistics{NullCount: st.nulls, MinValue: st.min, MaxValue: st.max}
	md.DataPageOffset = p.off

	// Pages of about pageLimit bytes, each whole rows.
	perLevel := max(1, int(raw/int64(max(levels, 1))))
	pageLevels := max(1024, p.pageLimit/perLevel)
	v0 := 0
	for l0 := 0; l0 < levels; {
		l1 := min(levels, l0+pageLevels)
		if l.maxRep > 0 {
			for l1 < levels && c.reps[l1] != 0 {
				l1++
			}
		}
		v1 := v0 + (l1 - l0)
		if l.maxDef > 0 {
			v1 = v0
			for _, d := range c.defs[l0:l1] {
				if d == l.maxDef {
					v1++
				}
			}
		}
		if err := p.writeDataPage(l, c, l0, l1, v0, v1, valueEnc, constant, &md); err != nil {
			return format.ColumnChunk{}, err
		}
		l0, v0 = l1, v1
	}
	return format.ColumnChunk{FileOffset: start, MetaData: md}, nil
}

// capBytesUsed is about how many bytes c's values take.
func (c *colData) capBytesUsed(ph physical) int64 {
	n := int64(len(c.defs) + len(c.reps))
	switch ph {
	case physBool:
		n += int64(len(c.bools))
	case physInt32:
		n += 4 * int64(len(c.i32))
	case physInt64:
		n += 8 * int64(len(c.i64))
	case physFloat:
		n += 4 * int64(len(c.f32))
	case physDouble:
		n += 8 * int64(len(c.f64))
	case physUUID:
		n += int64(len(c.data))
	case physBytes:
		for _, s := range c.spans {
			n += 4 + int64(s.n)
		}
	}
	return n
}

// dictionary numbers the distinct values of a byte array column
// (p.idx, p.dictSpans) and reports whether a dictionary is worth it: not
// for values mostly distinct (method names, JSON).
func (p *pqWriter) dictionary(c *colData) bool {
	if p.dict == nil {
		p.dict = map[string]int32{}
	}
	clear(p.dict)
	p.idx, p.dictSpans = p.idx[:0], p.dictSpans[:0]
	prev, prevIdx := span{}, int32(-1)
	for i, s := range c.spans {
		if s == prev && prevIdx >= 0 {
			p.idx = append(p.idx, prevIdx)
			continue
		}
		var key string
		if s.n > 0 {
			key = unsafe.String(&c.data[s.off], int(s.n))
		}
		k, ok := p.dict[key]
		if !ok {
			k = int32(len(p.dictSpans))
			p.dict[key] = k
			p.dictSpans = append(p.dictSpans, s)
			if i >= 1024 && len(p.dictSpans) > i/2 {
				clear(p.dict) // its keys point into c.data
				return false
			}
		}
		p.idx = append(p.idx, k)
		prev, prevIdx = s, k
	}
	clear(p.dict)
	return len(p.dictSpans) <= len(c.spans)/2+64
}

// writeConstDictPage writes the dictionary of a column of one value v
// (PLAIN-encoded).
func (p *pqWriter) writeConstDictPage(v []byte, md *format.ColumnMetaData) error {
	p.page = append(p.page[:0], v...)
	return p.writeDict(1, md)
}

// writeDict writes p.page as a dictionary page of n PLAIN values.
func (p *pqWriter) writeDict(n int, md *format.ColumnMetaData) error {
	var h format.PageHeader
	h.Type = format.DictionaryPage
	h.DictionaryPageHeader.Set(format.DictionaryPageHeader{NumValues: int32(n), Encoding: format.Plain})
	return p.writePage(&h, p.page, md)
}

// writeIntDictPage writes the dictionary of an integer column
// (PLAIN-encoded).
func (p *pqWriter) writeIntDictPage(ph physical, md *format.ColumnMetaData) error {
	b := p.page[:0]
	for _, v := range p.ints.vals[:p.ints.n] {
		if ph == physInt32 {
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		} else {
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
	}
	p.page = b
	return p.writeDict(p.ints.n, md)
}

func (p *pqWriter) writeDictPage(c *colData, md *format.ColumnMetaData) error {
	b := p.page[:0]
	for _, s := range p.dictSpans {
		b = binary.LittleEndian.AppendUint32(b, s.n)
		b = append(b, c.data[s.off:s.off+s.n]...)
	}
	p.page = b
	return p.writeDict(len(p.dictSpans), md)
}

// writeDataPage writes levels [l0,l1) and values [v0,v1) as a data page.
func (p *pqWriter) writeDataPage(l *leaf, c *colData, l0, l1, v0, v1 int, enc format.Encoding, constant bool, md *format.ColumnMetaData) error {
	b := p.page[:0]
	var err error
	if l.maxRep > 0 {
		if b, err = p.appendLevels(b, c.reps[l0:l1], l.maxRep); err != nil {
			return err
		}
	}
	if l.maxDef > 0 {
		if b, err = p.appendLevels(b, c.defs[l0:l1], l.maxDef); err != nil {
			return err
		}
	}
	switch {
	case constant:
		// Bit width 1, then one RLE run of index 0 (none on a page of
		// nulls).
		b = append(b, 1)
		if v1 > v0 {
			b = binary.AppendUvarint(b, uint64(v1-v0)<<1)
			b = append(b, 0)
		}
	case enc == format.RLEDictionary:
		w := max(1, bits.Len32(uint32(p.dictLen-1)))
		b = append(b, byte(w))
		e := rle.Encoding{BitWidth: w}
		out, err := e.EncodeInt32(p.levels[:0], p.idx[v0:v1])
		if err != nil {
			return err
		}
		p.levels = out
		b = append(b, out...)
	case l.phys == physBool:
		var acc byte
		for i, v := range c.bools[v0:v1] {
			if v {
				acc |= 1 << (i & 7)
			}
			if i&7 == 7 {
				b = append(b, acc)
				acc = 0
			}
		}
		if (v1-v0)&7 != 0 {
			b = append(b, acc)
		}
	case l.phys == physInt32:
		b = append(b, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(c.i32[v0:v1]))), 4*(v1-v0))...)
	case enc == format.DeltaBinaryPacked:
		out, err := (&delta.BinaryPackedEncoding{}).EncodeInt64(p.levels[:0], c.i64[v0:v1])
		if err != nil {
			return err
		}
		p.levels = out
		b = append(b, out...)
	case l.phys == physInt64:
		b = append(b, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(c.i64[v0:v1]))), 8*(v1-v0))...)
	case l.phys == physFloat:
		for _, v := range c.f32[v0:v1] {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
	case l.phys == physDouble:
		for _, v := range c.f64[v0:v1] {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
	case l.phys == physUUID:
		b = append(b, c.data[16*v0:16*v1]...)
	case l.phys == physBytes:
		// Room for the page at once: appended value by value, a page of
		// wide values grew the buffer through every size below it.
		n := 0
		for _, s := range c.spans[v0:v1] {
			n += 4 + int(s.n)
		}
		b = slices.Grow(b, n)
		for _, s := range c.spans[v0:v1] {
			b = binary.LittleEndian.AppendUint32(b, s.n)
			b = append(b, c.data[s.off:s.off+s.n]...)
		}
	}
	p.page = b
	var h format.PageHeader
	h.Type = format.DataPage
	h.DataPageHeader.Set(format.DataPageHeader{
		NumValues:               int32(l1 - l0),
		Encoding:                enc,
		DefinitionLevelEncoding: format.RLE,
		RepetitionLevelEncoding: format.RLE,
	})
	return p.writePage(&h, b, md)
}

// appendLevels appends levels as a data page v1 has them: their length,
// then the RLE/bit-packed hybrid.
func (p *pqWriter) appendLevels(b []byte, levels []uint8, maxLevel uint8) ([]byte, error) {
	e := rle.Encoding{BitWidth: bits.Len8(maxLevel)}
	out, err := e.EncodeLevels(p.levels[:0], levels)
	if err != nil {
		return b, err
	}
	p.levels = out
	b = binary.LittleEndian.AppendUint32(b, uint32(len(out)))
	return append(b, out...), nil
}

// writePage compresses body and writes it with its header.
func (p *pqWriter) writePage(h *format.PageHeader, body []byte, md *format.ColumnMetaData) error {
	comp, err := p.codec.Encode(p.comp[:0], body)
	if err != nil {
		return err
	}
	p.comp = comp
	h.UncompressedPageSize = int32(len(body))
	h.CompressedPageSize = int32(len(comp))
	hdr := appendPageHeader(p.hdr[:0], h)
	p.hdr = hdr
	md.TotalUncompressedSize += int64(len(hdr) + len(body))
	md.TotalCompressedSize += int64(len(hdr) + len(comp))
	if err := p.write(hdr); err != nil {
		return err
	}
	return p.write(comp)
}

// appendPageHeader appends h in thrift's compact protocol, without
// reflection (thrift.Marshal was 2% of an export): only the fields a data
// page v1 or a dictionary page of ours has (TestPageHeader decodes it with
// parquet-go's thrift).
func appendPageHeader(b []byte, h *format.PageHeader) []byte {
	const (
		i32    = 5
		strct  = 12
		stop   = 0
		delta1 = 1 << 4
	)
	i32f := func(b []byte, delta byte, v int32) []byte {
		b = append(b, delta<<4|i32)
		return binary.AppendUvarint(b, uint64(uint32(v<<1)^uint32(v>>31)))
	}
	b = i32f(b, 1, int32(h.Type))
	b = i32f(b, 1, h.UncompressedPageSize)
	b = i32f(b, 1, h.CompressedPageSize)
	if d, ok := h.DataPageHeader.Get(); ok {
		b = append(b, 2<<4|strct) // field 5
		b = i32f(b, 1, d.NumValues)
		b = i32f(b, 1, int32(d.Encoding))
		b = i32f(b, 1, int32(d.DefinitionLevelEncoding))
		b = i32f(b, 1, int32(d.RepetitionLevelEncoding))
		b = append(b, stop)
	} else if d, ok := h.DictionaryPageHeader.Get(); ok {
		b = append(b, 4<<4|strct) // field 7
		b = i32f(b, 1, d.NumValues)
		b = i32f(b, 1, int32(d.Encoding))
		b = append(b, stop)
	}
	return append(b, stop)
}

// int32Bounds are the least and greatest of v, PLAIN-encoded, in the
// column's order (unsigned for UINT columns).
func int32Bounds(v []int32, unsigned bool) (lo, hi []byte) {
	if len(v) == 0 {
		return nil, nil
	}
	a, b := v[0], v[0]
	if unsigned {
		for _, x := range v[1:] {
			if uint32(x) < uint32(a) {
				a = x
			}
			if uint32(x) > uint32(b) {
				b = x
			}
		}
	} else {
		for _, x := range v[1:] {
			a, b = min(a, x), max(b, x)
		}
	}
	return binary.LittleEndian.AppendUint32(nil, uint32(a)), binary.LittleEndian.AppendUint32(nil, uint32(b))
}

func int64Bounds(v []int64, unsigned bool) (lo, hi []byte) {
	if len(v) == 0 {
		return nil, nil
	}
	a, b := v[0], v[0]
	if unsigned {
		for _, x := range v[1:] {
			if uint64(x) < uint64(a) {
				a = x
			}
			if uint64(x) > uint64(b) {
				b = x
			}
		}
	} else {
		for _, x := range v[1:] {
			a, b = min(a, x), max(b, x)
		}
	}
	return binary.LittleEndian.AppendUint64(nil, uint64(a)), binary.LittleEndian.AppendUint64(nil, uint64(b))
}

// spanBounds are the least and greatest of the values (byte order).
func spanBounds(data []byte, vals []span) (lo, hi []byte) {
	if len(vals) == 0 {
		return nil, nil
	}
	a, b := vals[0], vals[0]
	get := func(s span) []byte { return data[s.off : s.off+s.n] }
	for _, s := range vals[1:] {
		if bytes.Compare(get(s), get(a)) < 0 {
			a = s
		}
		if bytes.Compare(get(s), get(b)) > 0 {
			b = s
		}
	}
	if a.n > maxBound || b.n > maxBound {
		return nil, nil // long values serve no pruning
	}
	return bytes.Clone(get(a)), bytes.Clone(get(b))
}

// maxBound is the longest byte array kept as a chunk's bound.
const maxBound = 64
