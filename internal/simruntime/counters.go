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
// EventCounters events describe them in their metadata (a "Payload"
// object with the fields EventSource writes). live is the length of the
// part before the last interval's end: the end-of-stream block follows.
// It is written from NetTraceFormat.md, for tests.
func CountersTrace(pid int, intervals [][]Counter) (trace []byte, live int) {
	var w v6w
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

	str := func(n string) field { return field{n, 18} }
	dbl := func(n string) field { return field{n, 14} }
	meanFields := []field{str("Name"), str("DisplayName"), dbl("Mean"), dbl("StandardDeviation"),
		{"Count", 9}, dbl("Min"), dbl("Max"), {"IntervalSec", 13}, str("Series"), str("CounterType"),
		str("Metadata"), str("DisplayUnits")}
	sumFields := []field{str("Name"), str("DisplayName"), str("DisplayRateTimeScale"), dbl("Increment"),
		{"IntervalSec", 13}, str("Metadata"), str("Series"), str("CounterType"), str("DisplayUnits")}
	var mb []byte
	mb = binary.LittleEndian.AppendUint16(mb, 0) // no header bytes
	for id, fs := range [][]field{1: meanFields, 2: sumFields} {
		if fs == nil {
			continue
		}
		var r []byte
		r = binary.AppendUvarint(r, uint64(id))
		r = appendUTF8(r, "System.Runtime")
		r = binary.AppendUvarint(r, 0)
		r = appendUTF8(r, "EventCounters")
		r = binary.LittleEndian.AppendUint16(r, 1) // one field: Payload, an object
		var f []byte
		f = appendUTF8(f, "Payload")
		f = append(f, 1)
		f = binary.LittleEndian.AppendUint16(f, uint16(len(fs)))
		for _, x := range fs {
			var g []byte
			g = appendUTF8(g, x.name)
			g = append(g, x.typ)
			f = binary.LittleEndian.AppendUint16(f, uint16(len(g)))
			f = append(f, g...)
		}
		r = binary.LittleEndian.AppendUint16(r, uint16(len(f)))
		r = append(r, f...)
		r = binary.LittleEndian.AppendUint16(r, 0) // no optional metadata
		mb = binary.LittleEndian.AppendUint16(mb, uint16(len(r)))
		mb = append(mb, r...)
	}
	w.block(3, mb)

	var th []byte
	row := binary.AppendUvarint(nil, 1)
	row = binary.AppendUvarint(append(row, 2), uint64(pid))
	row = binary.AppendUvarint(append(row, 3), 4242)
	th = binary.LittleEndian.AppendUint16(th, uint16(len(row)))
	th = append(th, row...)
	w.block(6, th)

	ts := int64(2_000_000)
	seq := uint32(0)
	for _, iv := range intervals {
		var eb []byte
		eb = binary.LittleEndian.AppendUint16(eb, 20)
		eb = binary.LittleEndian.AppendUint16(eb, 0)
		eb = binary.LittleEndian.AppendUint64(eb, uint64(ts))
		eb = binary.LittleEndian.AppendUint64(eb, uint64(ts+int64(len(iv))))
		for i, c := range iv {
			seq += 1 + c.Dropped
			var p []byte
			meta := uint32(1)
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
			} else {
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
			}
			if i == 0 {
				meta |= 0x80000000 // IsSorted: a batch's first event
			}
			var h []byte
			h = binary.LittleEndian.AppendUint32(h, meta)
			h = binary.LittleEndian.AppendUint32(h, seq)
			h = binary.LittleEndian.AppendUint64(h, 1)
			h = binary.LittleEndian.AppendUint64(h, 1)
			h = binary.LittleEndian.AppendUint32(h, 0)
			h = binary.LittleEndian.AppendUint32(h, 0)
			h = binary.LittleEndian.AppendUint64(h, uint64(ts))
			h = binary.LittleEndian.AppendUint32(h, 0)
			h = binary.LittleEndian.AppendUint32(h, uint32(len(p)))
			eb = binary.LittleEndian.AppendUint32(eb, uint32(len(h)+len(p)))
			eb = append(eb, h...)
			eb = append(eb, p...)
			ts++
		}
		w.block(2, eb)
		ts += 10_000_000
	}
	live = w.b.Len()
	var sp []byte
	sp = binary.LittleEndian.AppendUint64(sp, uint64(ts))
	sp = binary.LittleEndian.AppendUint32(sp, 0)
	sp = binary.LittleEndian.AppendUint32(sp, 1)
	sp = binary.AppendUvarint(sp, 1)
	sp = binary.AppendUvarint(sp, uint64(seq))
	w.block(4, sp)
	w.block(0, nil)
	return w.b.Bytes(), live
}

type field struct {
	name string
	typ  byte
}

type v6w struct{ b bytes.Buffer }

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
