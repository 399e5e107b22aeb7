package nettrace

import (
	"bytes"
	"encoding/binary"

	"github.com/clrgo/clrevents/clrimpl"
)

// v6Writer writes NetTrace V6 streams, written from NetTraceFormat.md, to
// test the reader against. It is deliberately literal: every field is
// written the way the spec lists it.
type v6Writer struct {
	buf bytes.Buffer
	ptr int
	// times, where set, is the range the next event block's header
	// states instead of its events' least and greatest timestamps.
	times *[2]int64
	// metaHeader, where set, is the metadata blocks' undefined header
	// (what HeaderSize counts); else 3 bytes.
	metaHeader []byte
}

type kv struct{ k, v string }

func newV6Writer(ptr int, minor uint32, kvs ...kv) *v6Writer {
	w := &v6Writer{ptr: ptr}
	w.buf.WriteString("Nettrace")
	w.buf.Write(u32(0))
	w.buf.Write(u32(6))
	w.buf.Write(u32(minor))
	var b []byte
	// SyncTimeUTC 2024-02-29 13:14:15.678 (a Thursday), ticks, frequency.
	for _, v := range []uint16{2024, 2, 4, 29, 13, 14, 15, 678} {
		b = binary.LittleEndian.AppendUint16(b, v)
	}
	b = binary.LittleEndian.AppendUint64(b, 1_000_000)
	b = binary.LittleEndian.AppendUint64(b, 10_000_000)
	b = append(b, u32(uint32(ptr))...)
	b = append(b, u32(uint32(len(kvs)))...)
	for _, p := range kvs {
		b = appendStr(b, p.k)
		b = appendStr(b, p.v)
	}
	w.block(kindTrace, b)
	return w
}

func (w *v6Writer) block(kind int, body []byte) {
	w.buf.Write(u32(uint32(len(body)) | uint32(kind)<<24))
	w.buf.Write(body)
}

func (w *v6Writer) end() []byte {
	w.block(kindEndOfStream, nil)
	return w.buf.Bytes()
}

func u32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

func appendVar(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

func appendStr(b []byte, s string) []byte {
	b = appendVar(b, uint64(len(s)))
	return append(b, s...)
}

// wField builds a V6 field description.
func appendFieldsV6(b []byte, fields []Field) []byte {
	b = binary.LittleEndian.AppendUint16(b, uint16(len(fields)))
	for i := range fields {
		var f []byte
		f = appendStr(f, fields[i].Name)
		f = appendTypeV6(f, &fields[i])
		b = binary.LittleEndian.AppendUint16(b, uint16(len(f)))
		b = append(b, f...)
	}
	return b
}

func appendTypeV6(b []byte, f *Field) []byte {
	b = append(b, byte(f.Type))
	switch f.Type {
	case TypeArray, TypeFixedLengthArray, TypeRelLoc, TypeDataLoc:
		b = appendTypeV6(b, f.Elem)
		if f.Type == TypeFixedLengthArray {
			b = binary.LittleEndian.AppendUint16(b, f.Count)
		}
	case TypeObject:
		b = appendFieldsV6(b, f.Fields)
	}
	return b
}

// wMeta is a metadata row to write.
type wMeta struct {
	id       uint32
	provider string
	eventID  uint32
	name     string
	fields   []Field
	opt      []byte // optional metadata, already encoded
	tail     []byte // undefined bytes after the optional metadata
}

func (w *v6Writer) metadata(rows ...wMeta) {
	hdr := []byte{0xAA, 0xBB, 0xCC} // undefined header bytes
	if w.metaHeader != nil {
		hdr = w.metaHeader
	}
	b := binary.LittleEndian.AppendUint16(nil, uint16(len(hdr))) // header size
	b = append(b, hdr...)
	for _, m := range rows {
		var r []byte
		r = appendVar(r, uint64(m.id))
		r = appendStr(r, m.provider)
		r = appendVar(r, uint64(m.eventID))
		r = appendStr(r, m.name)
		r = appendFieldsV6(r, m.fields)
		r = binary.LittleEndian.AppendUint16(r, uint16(len(m.opt)))
		r = append(r, m.opt...)
		r = append(r, m.tail...)
		b = binary.LittleEndian.AppendUint16(b, uint16(len(r)))
		b = append(b, r...)
	}
	w.block(kindMetadata, b)
}

// Optional metadata items.
func optOpcode(v uint8) []byte    { return []byte{1, v} }
func optKeywords(v uint64) []byte { return binary.LittleEndian.AppendUint64([]byte{3}, v) }
func optTemplate(s string) []byte { return appendStr([]byte{4}, s) }
func optDesc(s string) []byte     { return appendStr([]byte{5}, s) }
func optKV(k, v string) []byte    { return appendStr(appendStr([]byte{6}, k), v) }
func optGUID(g clrimpl.GUID) []byte {
	return append([]byte{7}, g[:]...)
}
func optLevel(v uint8) []byte   { return []byte{8, v} }
func optVersion(v uint8) []byte { return []byte{9, v} }

type wThread struct {
	index    uint64
	name     string
	pid, tid uint64
	attrs    []kv
}

func (w *v6Writer) threads(ts ...wThread) {
	var b []byte
	for _, t := range ts {
		r := appendVar(nil, t.index)
		if t.name != "" {
			r = appendStr(append(r, 1), t.name)
		}
		if t.pid != 0 {
			r = appendVar(append(r, 2), t.pid)
		}
		if t.tid != 0 {
			r = appendVar(append(r, 3), t.tid)
		}
		for _, a := range t.attrs {
			r = appendStr(appendStr(append(r, 4), a.k), a.v)
		}
		b = binary.LittleEndian.AppendUint16(b, uint16(len(r)))
		b = append(b, r...)
	}
	w.block(kindThread, b)
}

func (w *v6Writer) removeThreads(pairs ...uint64) {
	var b []byte
	for i := 0; i+1 < len(pairs); i += 2 {
		b = appendVar(b, pairs[i])
		b = appendVar(b, pairs[i+1])
	}
	w.block(kindRemoveThread, b)
}

func (w *v6Writer) stacks(first uint32, stacks ...[]uint64) {
	b := append(u32(first), u32(uint32(len(stacks)))...)
	for _, s := range stacks {
		b = append(b, u32(uint32(len(s)*w.ptr))...)
		for _, ip := range s {
			if w.ptr == 4 {
				b = append(b, u32(uint32(ip))...)
			} else {
				b = binary.LittleEndian.AppendUint64(b, ip)
			}
		}
	}
	w.block(kindStack, b)
}

// labelLists writes a LabelListBlock; each list is given as encoded labels
// (the writer sets the last label's high bit).
func (w *v6Writer) labelLists(first uint32, lists ...[][]byte) {
	b := append(u32(first), u32(uint32(len(lists)))...)
	for _, l := range lists {
		for i, lab := range l {
			lab = bytes.Clone(lab)
			if i == len(l)-1 {
				lab[0] |= 0x80
			}
			b = append(b, lab...)
		}
	}
	w.block(kindLabelList, b)
}

func labActivity(g clrimpl.GUID) []byte { return append([]byte{1}, g[:]...) }
func labRelated(g clrimpl.GUID) []byte  { return append([]byte{2}, g[:]...) }
func labTrace(id [16]byte) []byte       { return append([]byte{3}, id[:]...) }
func labSpan(v uint64) []byte           { return binary.LittleEndian.AppendUint64([]byte{4}, v) }
func labStr(k, v string) []byte         { return appendStr(appendStr([]byte{5}, k), v) }
func labInt(k string, v int64) []byte {
	return appendVar(appendStr([]byte{6}, k), uint64(v<<1)^uint64(v>>63))
}
func labOpcode(v uint8) []byte    { return []byte{7, v} }
func labKeywords(v uint64) []byte { return binary.LittleEndian.AppendUint64([]byte{8}, v) }
func labLevel(v uint8) []byte     { return []byte{9, v} }
func labVersion(v uint8) []byte   { return []byte{10, v} }

// wEvent is an event to write.
type wEvent struct {
	meta      uint32
	seq       uint32
	thread    uint64
	capThread uint64
	proc      uint32
	stack     uint32
	ts        int64
	label     uint32
	sorted    bool
	payload   []byte
}

// events writes an EventBlock, with compressed headers if compress.
func (w *v6Writer) events(compress bool, evs ...wEvent) {
	var minTS, maxTS int64
	if len(evs) > 0 {
		minTS, maxTS = evs[0].ts, evs[0].ts
	}
	for _, e := range evs {
		minTS, maxTS = min(minTS, e.ts), max(maxTS, e.ts)
	}
	if w.times != nil {
		minTS, maxTS = w.times[0], w.times[1]
		w.times = nil
	}
	b := binary.LittleEndian.AppendUint16(nil, 24) // header size, with 4 reserved bytes
	flags := uint16(0)
	if compress {
		flags = 1
	}
	b = binary.LittleEndian.AppendUint16(b, flags)
	b = binary.LittleEndian.AppendUint64(b, uint64(minTS))
	b = binary.LittleEndian.AppendUint64(b, uint64(maxTS))
	b = append(b, 0, 0, 0, 0)
	var prev wEvent
	for _, e := range evs {
		if !compress {
			m := e.meta
			if !e.sorted {
				m |= 0x80000000 // not sorted, as the runtime marks it
			}
			var h []byte
			h = append(h, u32(m)...)
			h = append(h, u32(e.seq)...)
			h = binary.LittleEndian.AppendUint64(h, e.thread)
			h = binary.LittleEndian.AppendUint64(h, e.capThread)
			h = append(h, u32(e.proc)...)
			h = append(h, u32(e.stack)...)
			h = binary.LittleEndian.AppendUint64(h, uint64(e.ts))
			h = append(h, u32(e.label)...)
			h = append(h, u32(uint32(len(e.payload)))...)
			b = append(b, u32(uint32(len(h)+len(e.payload)))...)
			b = append(b, h...)
			b = append(b, e.payload...)
			continue
		}
		var f byte
		var h []byte
		if e.meta != prev.meta {
			f |= 1
			h = appendVar(h, uint64(e.meta))
		}
		if e.seq != prev.seq+1 || e.capThread != prev.capThread || e.proc != prev.proc {
			f |= 2
			h = appendVar(h, uint64(e.seq-prev.seq-1))
			h = appendVar(h, e.capThread)
			h = appendVar(h, uint64(e.proc))
		}
		if e.thread != prev.thread {
			f |= 4
			h = appendVar(h, e.thread)
		}
		if e.stack != prev.stack {
			f |= 8
			h = appendVar(h, uint64(e.stack))
		}
		h = appendVar(h, uint64(e.ts-prev.ts))
		if e.label != prev.label {
			f |= 16
			h = appendVar(h, uint64(e.label))
		}
		if e.sorted {
			f |= 64
		}
		if len(e.payload) != len(prev.payload) {
			f |= 128
			h = appendVar(h, uint64(len(e.payload)))
		}
		b = append(b, f)
		b = append(b, h...)
		b = append(b, e.payload...)
		prev = e
	}
	w.block(kindEvent, b)
}

// sequencePoint writes a SequencePointBlock with (index, seq) pairs.
func (w *v6Writer) sequencePoint(ts int64, flags uint32, pairs ...uint64) {
	b := binary.LittleEndian.AppendUint64(nil, uint64(ts))
	b = append(b, u32(flags)...)
	b = append(b, u32(uint32(len(pairs)/2))...)
	for i := 0; i+1 < len(pairs); i += 2 {
		b = appendVar(b, pairs[i])
		b = appendVar(b, pairs[i+1])
	}
	w.block(kindSequencePt, b)
}
