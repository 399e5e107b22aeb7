package simruntime

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strconv"
	"unicode/utf16"

	"github.com/clrgo/clrevents/nettrace"
)

// Counter is one EventCounters value a simulated System.Runtime reports.
type Counter struct {
	Name, DisplayName, Units string // as EventSource reports them ("cpu-usage", "CPU Usage", "%")
	// Increment is true for an incrementing counter (a rate: the payload
	// has Increment and DisplayRateTimeScale), false for a mean counter.
	Increment bool
	Value     float64 // Mean, or Increment for a rate
	// Dropped makes the sequence numbers skip this many events before
	// this one, as when the runtime's buffer was full.
	Dropped uint32
}

// CountersTrace builds a NetTrace V6 stream in which System.Runtime
// reports the given counters once per interval, as the runtime's
// EventCounters events describe them in their metadata: EventSource.Write
// of an object whose Payload property holds the fields EventSource
// writes, the object described as one field without a name (EventPipe
// metadata gives a Write call's argument no name). live is the length of
// the part before the last interval's end: the end-of-stream block
// follows. It is written from NetTraceFormat.md, for tests.
func CountersTrace(pid int, intervals [][]Counter) (trace []byte, live int) {
	return countersTrace(pid, intervals, CounterFields)
}

// FlatCountersTrace is CountersTrace with the events' fields laid out as
// an ETW log's TraceLogging description lays them out: the argument's
// Payload property is the event's own field.
func FlatCountersTrace(pid int, intervals [][]Counter) (trace []byte, live int) {
	return countersTrace(pid, intervals, func(fs []Field) []Field { return []Field{{Name: "Payload", Type: TypeObject, Fields: fs}} })
}

// CounterFields describes an EventCounters event's argument as the
// runtime's EventPipe metadata does: one unnamed object holding the
// Payload object whose fields are fs.
func CounterFields(fs []Field) []Field {
	return []Field{{Name: "", Type: TypeObject, Fields: []Field{{Name: "Payload", Type: TypeObject, Fields: fs}}}}
}

func countersTrace(pid int, intervals [][]Counter, shape func([]Field) []Field) (trace []byte, live int) {
	mean, sum := counterFields()
	var w v6w
	w.header(pid)
	w.metadata("System.Runtime", "EventCounters", shape(mean), shape(sum))
	w.threads(pid)
	for _, iv := range intervals {
		var events []v6Event
		for _, c := range iv {
			meta, p := counterPayload(nil, c)
			events = append(events, v6Event{meta: meta, payload: p, dropped: c.Dropped})
		}
		w.events(events)
		w.ts += 10_000_000
	}
	live = w.b.Len()
	w.end()
	return w.b.Bytes(), live
}

// counterFields returns the fields of the EventCounters Payload object
// of a mean counter and of an incrementing counter, as EventSource
// describes them.
func counterFields() (mean, sum []Field) {
	str := func(n string) Field { return Field{Name: n, Type: TypeString} }
	dbl := func(n string) Field { return Field{Name: n, Type: TypeDouble} }
	mean = []Field{str("Name"), str("DisplayName"), dbl("Mean"), dbl("StandardDeviation"),
		{Name: "Count", Type: TypeInt32}, dbl("Min"), dbl("Max"), {Name: "IntervalSec", Type: TypeSingle}, str("Series"), str("CounterType"),
		str("Metadata"), str("DisplayUnits")}
	sum = []Field{str("Name"), str("DisplayName"), str("DisplayRateTimeScale"), dbl("Increment"),
		{Name: "IntervalSec", Type: TypeSingle}, str("Metadata"), str("Series"), str("CounterType"), str("DisplayUnits")}
	return mean, sum
}

// counterPayload appends c's EventCounters payload to p: meta is 1 for a
// mean counter's fields, 2 for an incrementing counter's.
func counterPayload(p []byte, c Counter) (meta uint32, _ []byte) {
	meta = 1
	if c.Increment {
		meta = 2
		p = appendUTF16(p, c.Name)
		p = appendUTF16(p, c.DisplayName)
		p = appendUTF16(p, "00:00:01")
		p = binary.LittleEndian.AppendUint64(p, math.Float64bits(c.Value))
		p = binary.LittleEndian.AppendUint32(p, math.Float32bits(1))
		p = appendUTF16(p, "")
		p = appendUTF16(p, "Interval=1000")
		p = appendUTF16(p, "Sum")
		p = appendUTF16(p, c.Units)
		return meta, p
	}
	p = appendUTF16(p, c.Name)
	p = appendUTF16(p, c.DisplayName)
	for _, v := range []float64{c.Value, 0} {
		p = binary.LittleEndian.AppendUint64(p, math.Float64bits(v))
	}
	p = binary.LittleEndian.AppendUint32(p, 1)
	for _, v := range []float64{c.Value, c.Value} {
		p = binary.LittleEndian.AppendUint64(p, math.Float64bits(v))
	}
	p = binary.LittleEndian.AppendUint32(p, math.Float32bits(1))
	p = appendUTF16(p, "Interval=1000")
	p = appendUTF16(p, "Mean")
	p = appendUTF16(p, "")
	p = appendUTF16(p, c.Units)
	return meta, p
}

// EventPipe metadata field types (NetTraceFormat.md's TypeCode), for
// Field.Type.
const (
	TypeObject  = 1
	TypeBoolean = 3
	TypeInt32   = 9
	TypeInt64   = 11
	TypeUInt64  = 12
	TypeSingle  = 13
	TypeDouble  = 14
	TypeString  = 18 // UTF-16, NUL-terminated
)

// Field is a field of an EventSource event as its metadata describes it:
// its name and type, and for an Object its fields.
type Field struct {
	Name   string
	Type   byte
	Fields []Field
}

// EventSourceTrace builds a NetTrace V6 stream in which provider logs the
// event named event once per payload, its fields described by its
// metadata as fields. It is written from NetTraceFormat.md, for tests.
func EventSourceTrace(pid int, provider, event string, fields []Field, payloads ...[]byte) []byte {
	var w v6w
	w.header(pid)
	w.metadata(provider, event, fields)
	w.threads(pid)
	var events []v6Event
	for _, p := range payloads {
		events = append(events, v6Event{meta: 1, payload: p})
	}
	w.events(events)
	w.end()
	return w.b.Bytes()
}

// v6Event is an event of an event block: its metadata ID and payload,
// and how many events the runtime dropped before it.
type v6Event struct {
	meta    uint32
	payload []byte
	dropped uint32
}

// header writes the stream header and the trace block.
func (w *v6w) header(pid int) {
	w.b.WriteString("Nettrace")
	w.b.Write(make([]byte, 4))
	w.u32(6)
	w.u32(0)
	var tb []byte
	for _, v := range []uint16{2026, 11, 1, 23, 12, 0, 0, 0} {
		tb = binary.LittleEndian.AppendUint16(tb, v)
	}
	tb = binary.LittleEndian.AppendUint64(tb, 1_000_000)
	tb = binary.LittleEndian.AppendUint64(tb, 10_000_000)
	tb = binary.LittleEndian.AppendUint32(tb, 8)
	tb = binary.LittleEndian.AppendUint32(tb, 1)
	tb = appendUTF8(tb, "ProcessId")
	tb = appendUTF8(tb, strconv.Itoa(pid))
	w.block(1, tb)
	w.ts = 2_000_000
}

// metadata writes a metadata block of one record per field list, with
// IDs from 1, each the event named event of provider.
func (w *v6w) metadata(provider, event string, lists ...[]Field) {
	var mb []byte
	mb = binary.LittleEndian.AppendUint16(mb, 0) // no header bytes
	for i, fs := range lists {
		var r []byte
		r = binary.AppendUvarint(r, uint64(i+1))
		r = appendUTF8(r, provider)
		r = binary.AppendUvarint(r, 0)
		r = appendUTF8(r, event)
		r = appendFields(r, fs)
		r = binary.LittleEndian.AppendUint16(r, 0) // no optional metadata
		mb = binary.LittleEndian.AppendUint16(mb, uint16(len(r)))
		mb = append(mb, r...)
	}
	w.block(3, mb)
}

// appendFields appends a V6 field list: the count, then each field's
// length, name and type (an Object's fields after it).
func appendFields(b []byte, fs []Field) []byte {
	b = binary.LittleEndian.AppendUint16(b, uint16(len(fs)))
	for _, x := range fs {
		var g []byte
		g = appendUTF8(g, x.Name)
		g = append(g, x.Type)
		if x.Type == TypeObject {
			g = appendFields(g, x.Fields)
		}
		b = binary.LittleEndian.AppendUint16(b, uint16(len(g)))
		b = append(b, g...)
	}
	return b
}

// threads writes the thread block: thread 1 of process pid, OS thread 4242.
func (w *v6w) threads(pid int) {
	var th []byte
	row := binary.AppendUvarint(nil, 1)
	row = binary.AppendUvarint(append(row, 2), uint64(pid))
	row = binary.AppendUvarint(append(row, 3), 4242)
	th = binary.LittleEndian.AppendUint16(th, uint16(len(row)))
	th = append(th, row...)
	w.block(6, th)
}

// events writes an event block of events on thread 1, a tick apart.
func (w *v6w) events(events []v6Event) {
	var eb []byte
	eb = binary.LittleEndian.AppendUint16(eb, 20)
	eb = binary.LittleEndian.AppendUint16(eb, 0)
	eb = binary.LittleEndian.AppendUint64(eb, uint64(w.ts))
	eb = binary.LittleEndian.AppendUint64(eb, uint64(w.ts+int64(len(events))-1)) // the last event's
	for i, ev := range events {
		w.seq += 1 + ev.dropped
		meta := ev.meta
		if i != 0 {
			// The high bit marks an event not sorted (the runtime's block
			// writer): a batch's first event is sorted, the others not.
			meta |= 0x80000000
		}
		var h []byte
		h = binary.LittleEndian.AppendUint32(h, meta)
		h = binary.LittleEndian.AppendUint32(h, w.seq)
		h = binary.LittleEndian.AppendUint64(h, 1)
		h = binary.LittleEndian.AppendUint64(h, 1)
		h = binary.LittleEndian.AppendUint32(h, 0)
		h = binary.LittleEndian.AppendUint32(h, 0)
		h = binary.LittleEndian.AppendUint64(h, uint64(w.ts))
		h = binary.LittleEndian.AppendUint32(h, 0)
		h = binary.LittleEndian.AppendUint32(h, uint32(len(ev.payload)))
		eb = binary.LittleEndian.AppendUint32(eb, uint32(len(h)+len(ev.payload)))
		eb = append(eb, h...)
		eb = append(eb, ev.payload...)
		w.ts++
	}
	w.block(2, eb)
}

// end writes the sequence point and the end-of-stream block.
func (w *v6w) end() {
	var sp []byte
	sp = binary.LittleEndian.AppendUint64(sp, uint64(w.ts))
	sp = binary.LittleEndian.AppendUint32(sp, 0)
	sp = binary.LittleEndian.AppendUint32(sp, 1)
	sp = binary.AppendUvarint(sp, 1)
	sp = binary.AppendUvarint(sp, uint64(w.seq))
	w.block(4, sp)
	w.block(0, nil)
}

type v6w struct {
	b   bytes.Buffer
	ts  int64  // the next event's timestamp
	seq uint32 // the last event's sequence number
}

func (w *v6w) u32(v uint32) { w.b.Write(binary.LittleEndian.AppendUint32(nil, v)) }

func (w *v6w) block(kind int, body []byte) {
	w.u32(uint32(len(body)) | uint32(kind)<<24)
	w.b.Write(body)
}

func appendUTF8(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendUTF16(b []byte, s string) []byte {
	for _, u := range utf16.Encode([]rune(s)) {
		b = binary.LittleEndian.AppendUint16(b, u)
	}
	return append(b, 0, 0)
}

// SplitBeforeRundown returns the offset of the NetTrace V4/V5 block that
// holds the first rundown event of trace (where a runtime's stream stands
// when StopTracing arrives), or len(trace) if it finds none. It looks for
// the last EventBlock object header before firstRundownOffset (the first
// rundown event's stream offset).
func SplitBeforeRundown(trace []byte, firstRundownOffset int64) int {
	if firstRundownOffset <= 0 || firstRundownOffset > int64(len(trace)) {
		return len(trace)
	}
	name := []byte("EventBlock")
	at := bytes.LastIndex(trace[:firstRundownOffset], name)
	// BeginPrivateObject(5) BeginPrivateObject(5) NullReference(1)
	// int32 version, int32 minReaderVersion, int32 length, then the name
	// (BeginObject, 4, in place of 5 is accepted too).
	start := at - 4 - 4 - 4 - 3
	if at < 0 || start < 0 || !isBegin(trace[start]) || !isBegin(trace[start+1]) || trace[start+2] != 1 {
		return len(trace)
	}
	return start
}

func isBegin(tag byte) bool { return tag == 4 || tag == 5 }

// RealTrace reads a real NetTrace V4/V5 file and returns its bytes and the
// offset where a runtime's stream would stand when StopTracing arrives:
// the start of the event block that holds the first rundown event.
func RealTrace(path string) (data []byte, live int, err error) {
	data, err = os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	r, err := nettrace.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, 0, err
	}
	for {
		e, err := r.Next()
		if err != nil {
			return nil, 0, fmt.Errorf("%s: no rundown event: %w", path, err)
		}
		if e.Provider == "Microsoft-Windows-DotNETRuntimeRundown" {
			live = SplitBeforeRundown(data, e.Offset)
			if live >= len(data) {
				return nil, 0, fmt.Errorf("%s: no event block header before the rundown at %d", path, e.Offset)
			}
			return data, live, nil
		}
	}
}

// ExceptionTrace builds a NetTrace V6 stream in which the runtime throws
// an exception of each type in types, each an ExceptionThrown_V1 event
// followed by ExceptionThrownStop (event 256, no fields), as a .NET Core
// runtime fires them when the exception is handled.
func ExceptionTrace(pid int, types ...string) []byte {
	var w v6w
	w.header(pid)
	mb := binary.LittleEndian.AppendUint16(nil, 0) // no header bytes
	for _, x := range []struct {
		id    uint32
		event uint16
		ver   uint8
	}{{1, 80, 1}, {2, 256, 0}} {
		r := binary.AppendUvarint(nil, uint64(x.id))
		r = appendUTF8(r, "Microsoft-Windows-DotNETRuntime")
		r = binary.AppendUvarint(r, uint64(x.event))
		r = appendUTF8(r, "")
		r = appendFields(r, nil)
		r = binary.LittleEndian.AppendUint16(r, 2) // optional metadata: version
		r = append(r, 9, x.ver)
		mb = binary.LittleEndian.AppendUint16(mb, uint16(len(r)))
		mb = append(mb, r...)
	}
	w.block(3, mb)
	w.threads(pid)
	var evs []v6Event
	for _, typ := range types {
		evs = append(evs, v6Event{meta: 1, payload: exceptionPayload(nil, typ)}, v6Event{meta: 2})
	}
	w.events(evs)
	w.end()
	return w.b.Bytes()
}
