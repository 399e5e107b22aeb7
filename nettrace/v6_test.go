package nettrace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/clrimpl"
)

var (
	guidA    = clrimpl.MustParseGUID("11111111-2222-3333-4444-555555555555")
	guidB    = clrimpl.MustParseGUID("66666666-7777-8888-9999-aaaaaaaaaaaa")
	guidProv = clrimpl.MustParseGUID("01234567-89ab-cdef-0123-456789abcdef")
	syncV6   = time.Date(2024, 2, 29, 13, 14, 15, 678e6, time.UTC)
)

var workFields = []Field{
	{Name: "Count", Type: TypeInt32},
	{Name: "Msg", Type: TypeNullTerminatedUTF16String},
	{Name: "Vals", Type: TypeArray, Elem: &Field{Type: TypeUInt16}},
	{Name: "Pt", Type: TypeObject, Fields: []Field{{Name: "X", Type: TypeInt32}, {Name: "Y", Type: TypeInt32}}},
	{Name: "D", Type: TypeVarInt},
	{Name: "U", Type: TypeVarUInt},
	{Name: "F", Type: TypeFixedLengthArray, Elem: &Field{Type: TypeByte}, Count: 3},
	{Name: "B", Type: TypeBoolean8},
	{Name: "S", Type: TypeFixedLengthArray, Elem: &Field{Type: TypeUTF8CodeUnit}, Count: 2},
	{Name: "R", Type: TypeRelLoc, Elem: &Field{Type: TypeUInt16}},
	{Name: "L", Type: TypeDataLoc, Elem: &Field{Type: TypeUInt32}},
	{Name: "G", Type: TypeGUID},
	{Name: "Z", Type: TypeBoolean32},
	{Name: "Dbl", Type: TypeDouble},
	{Name: "T", Type: TypeDateTime},
}

const workJSON = `{"Count":42,"Msg":"hé\"","Vals":[1,2],"Pt":{"X":3,"Y":-4},"D":-5,"U":300,"F":[7,8,9],"B":true,"S":"ok",` +
	`"R":[10,11],"L":[12],"G":"11111111-2222-3333-4444-555555555555","Z":false,"Dbl":1.5,"T":"2024-02-29T13:14:15.678Z"}`

const workText = `Count=42 Msg="hé\"" Vals=[1 2] Pt={X=3 Y=-4} D=-5 U=300 F=[7 8 9] B=true S="ok" ` +
	`R=[10 11] L=[12] G="11111111-2222-3333-4444-555555555555" Z=false Dbl=1.5 T="2024-02-29T13:14:15.678Z"`

// workPayload encodes a payload for workFields.
func workPayload() []byte {
	le := binary.LittleEndian
	var b []byte
	b = le.AppendUint32(b, 42)
	b = append(b, utf16z("hé\"")...)
	b = le.AppendUint16(b, 2)
	b = le.AppendUint16(b, 1)
	b = le.AppendUint16(b, 2)
	b = le.AppendUint32(b, 3)
	b = le.AppendUint32(b, uint32(0xFFFFFFFC)) // -4
	b = binary.AppendUvarint(b, 9)             // zig-zag -5
	b = binary.AppendUvarint(b, 300)
	b = append(b, 7, 8, 9, 1, 'o', 'k')
	rAt := len(b)
	b = append(b, 0, 0, 0, 0) // RelLoc, patched below
	lAt := len(b)
	b = append(b, 0, 0, 0, 0) // DataLoc, patched below
	b = append(b, guidA[:]...)
	b = le.AppendUint32(b, 0)
	b = le.AppendUint64(b, math.Float64bits(1.5))
	b = le.AppendUint64(b, uint64((syncV6.Unix()+11644473600)*1e7+int64(syncV6.Nanosecond()/100)))
	rData := len(b)
	b = le.AppendUint16(b, 10)
	b = le.AppendUint16(b, 11)
	lData := len(b)
	b = le.AppendUint32(b, 12)
	le.PutUint32(b[rAt:], 4<<16|uint32(rData-(rAt+4)))
	le.PutUint32(b[lAt:], 4<<16|uint32(lData))
	return b
}

// buildV6 writes the V6 trace the round-trip test reads.
func buildV6(compress bool) []byte {
	w := newV6Writer(8, 3,
		kv{"HardwareThreadCount", "16"}, kv{"ProcessId", "1234"}, kv{"ExpectedCPUSamplingRate", "1000"}, kv{"MachineName", "box"})
	w.block(42, []byte("a block kind from the future"))
	w.threads(
		wThread{index: 1, name: "main", pid: 1234, tid: 5555, attrs: []kv{{"role", "ui"}}},
		wThread{index: 2, pid: 4321, tid: 6666},
	)
	var opt []byte
	for _, o := range [][]byte{optOpcode(1), optKeywords(0xF0), optLevel(4), optVersion(2), optTemplate("{Count} items"),
		optDesc("does work"), optKV("area", "test"), optGUID(guidProv)} {
		opt = append(opt, o...)
	}
	w.metadata(
		wMeta{id: 1, provider: "MyProvider", eventID: 7, name: "Work", fields: workFields, opt: opt, tail: []byte{1, 2, 3}},
		wMeta{id: 2, provider: rt, eventID: 85, opt: append(optVersion(0), optLevel(4)...)},
	)
	w.stacks(1, []uint64{0x1000, 0x2000}, []uint64{0x3000})
	var trace [16]byte
	copy(trace[:], "0123456789abcdef")
	w.labelLists(1,
		[][]byte{labActivity(guidA), labRelated(guidB)},
		[][]byte{labOpcode(9), labKeywords(0xABC), labLevel(1), labVersion(7), labStr("k", "v"), labInt("n", -3), labTrace(trace), labSpan(99)},
	)
	work := workPayload()
	w.events(compress,
		wEvent{meta: 1, seq: 1, thread: 1, capThread: 1, proc: 2, stack: 1, ts: 1_000_500, label: 1, sorted: true, payload: work},
		wEvent{meta: 2, seq: 2, thread: 2, capThread: 1, proc: 2, stack: 2, ts: 1_001_000, label: 2},
		wEvent{meta: 2, seq: 5, thread: 2, capThread: 2, proc: 3, ts: 1_002_000, payload: []byte{1, 2, 3}},
	)
	w.events(!compress,
		wEvent{meta: 1, seq: 6, thread: 1, capThread: 1, stack: 2, ts: 2_000_000, label: 1, sorted: true, payload: work},
	)
	w.sequencePoint(3_000_000, 3, 1, 6, 2, 5)
	w.threads(wThread{index: 1, pid: 1234, tid: 7777})
	w.metadata(wMeta{id: 1, provider: "Other", eventID: 3, name: "Again", fields: []Field{{Name: "V", Type: TypeInt64}}})
	w.events(compress,
		wEvent{meta: 1, seq: 1, thread: 1, capThread: 1, ts: 3_000_001, payload: binary.LittleEndian.AppendUint64(nil, 77)},
	)
	w.removeThreads(1, 1)
	return w.end()
}

func TestV6RoundTrip(t *testing.T) {
	for _, compress := range []bool{true, false} {
		data := buildV6(compress)
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		in := r.Info()
		wantInfo := TraceInfo{Format: FormatNetTrace, Version: 6, MinorVersion: 3, SyncTime: syncV6, SyncTimeQPC: 1_000_000,
			QPCFrequency: 10_000_000, PointerSize: 8, ProcessID: 1234, NumProcessors: 16, ExpectedCPUSamplingRate: 1000,
			KeyValues: map[string]string{"HardwareThreadCount": "16", "ProcessId": "1234", "ExpectedCPUSamplingRate": "1000", "MachineName": "box"}}
		wantInfo.setReciprocal()
		if !reflect.DeepEqual(*in, wantInfo) {
			t.Errorf("info\n got %+v\nwant %+v", *in, wantInfo)
		}
		var evs []Event
		var jsons []string
		for {
			ev, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("compress=%v: %v", compress, err)
			}
			e := *ev
			e.Stack = append([]uint64(nil), ev.Stack...)
			e.Payload = append([]byte(nil), ev.Payload...)
			evs = append(evs, e)
			j, err := ev.Metadata.AppendJSON(nil, ev.Payload)
			if err != nil {
				t.Errorf("event %d: %v", len(evs), err)
			}
			jsons = append(jsons, string(j))
		}
		if len(evs) != 5 {
			t.Fatalf("%d events, want 5", len(evs))
		}
		e := evs[0]
		if e.Provider != "MyProvider" || e.ProviderGUID != guidProv || e.ID != 7 || e.Name != "Work" || e.Version != 2 ||
			e.Level != 4 || e.Opcode != 1 || e.Keywords != 0xF0 {
			t.Errorf("event 0 identity: %+v", e)
		}
		if e.ThreadID != 5555 || e.CaptureThreadID != 5555 || e.ProcessID != 1234 || e.ProcessorNumber != 2 ||
			e.SequenceNumber != 1 || !e.IsSorted || e.Timestamp != 1_000_500 || !e.Time().Equal(syncV6.Add(50*time.Microsecond)) {
			t.Errorf("event 0 header: %+v", e)
		}
		if e.Thread == nil || e.Thread.Name != "main" || e.Thread.Attributes["role"] != "ui" {
			t.Errorf("event 0 thread %+v", e.Thread)
		}
		if e.ActivityID != guidA || e.RelatedActivityID != guidB || e.StackID != 1 || !reflect.DeepEqual(e.Stack, []uint64{0x1000, 0x2000}) {
			t.Errorf("event 0 labels/stack: %+v", e)
		}
		m := e.Metadata
		if m.MessageTemplate != "{Count} items" || m.Description != "does work" || m.Attributes["area"] != "test" || !m.HasOpcode {
			t.Errorf("metadata %+v", m)
		}
		if !reflect.DeepEqual(m.Fields, workFields) {
			t.Errorf("fields\n got %+v\nwant %+v", m.Fields, workFields)
		}
		if jsons[0] != workJSON {
			t.Errorf("JSON\n got %s\nwant %s", jsons[0], workJSON)
		}
		if txt, err := m.AppendText(nil, e.Payload); err != nil || string(txt) != workText {
			t.Errorf("text\n got %s (%v)\nwant %s", txt, err, workText)
		}

		e = evs[1]
		if e.Provider != rt || e.ProviderGUID.String() != "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4" || e.ID != 85 || e.Name != "" {
			t.Errorf("event 1 identity: %+v", e)
		}
		// Label list 2 overrides opcode, keywords, level and version.
		if e.Opcode != 9 || e.Keywords != 0xABC || e.Level != 1 || e.Version != 7 || !e.ActivityID.IsZero() {
			t.Errorf("event 1 overrides: %+v", e)
		}
		l := e.Labels
		if l == nil || !l.HasTraceID || string(l.TraceID[:]) != "0123456789abcdef" || l.SpanID != 99 ||
			!reflect.DeepEqual(l.Other, []Label{{Key: "k", String: "v"}, {Key: "n", Int: -3, IsInt: true}}) {
			t.Errorf("event 1 labels %+v", l)
		}
		if e.ThreadID != 6666 || e.CaptureThreadID != 5555 || e.ProcessID != 4321 || e.SequenceNumber != 2 || e.IsSorted ||
			!reflect.DeepEqual(e.Stack, []uint64{0x3000}) || jsons[1] != "{}" {
			t.Errorf("event 1: %+v", e)
		}

		e = evs[2]
		if e.SequenceNumber != 5 || e.CaptureThreadID != 6666 || e.ProcessorNumber != 3 || e.StackID != 0 || len(e.Stack) != 0 ||
			e.Labels != nil || !bytes.Equal(e.Payload, []byte{1, 2, 3}) || e.Level != 4 || e.Version != 0 {
			t.Errorf("event 2: %+v", e)
		}
		e = evs[3]
		if e.SequenceNumber != 6 || e.ThreadID != 5555 || !e.IsSorted || !reflect.DeepEqual(e.Stack, []uint64{0x3000}) || jsons[3] != workJSON {
			t.Errorf("event 3: %+v", e)
		}
		// After the flushing sequence point: metadata id 1 and thread 1 are
		// new. (Stack 1 is gone too: an event that refers to it is
		// damage, TestV6Errors.)
		e = evs[4]
		if e.Provider != "Other" || e.Name != "Again" || e.ThreadID != 7777 || e.StackID != 0 || len(e.Stack) != 0 ||
			jsons[4] != `{"V":77}` || e.ProviderGUID != EventSourceGUID("Other") {
			t.Errorf("event 4: %+v %s", e, jsons[4])
		}
	}
}

func TestV6Errors(t *testing.T) {
	base := func() *v6Writer {
		w := newV6Writer(4, 0)
		w.threads(wThread{index: 1, tid: 1})
		w.metadata(wMeta{id: 1, provider: "P", eventID: 1})
		return w
	}
	for _, tc := range []struct {
		name string
		make func() []byte
		want string
	}{
		{"unknown thread", func() []byte {
			w := base()
			w.events(true, wEvent{meta: 1, thread: 9, capThread: 1, seq: 1})
			return w.end()
		}, "thread index 9"},
		{"removed thread", func() []byte {
			w := base()
			w.removeThreads(1, 0)
			w.events(false, wEvent{meta: 1, thread: 1, capThread: 1, seq: 1})
			return w.end()
		}, "thread index 1"},
		{"unknown label list", func() []byte {
			w := base()
			w.events(true, wEvent{meta: 1, thread: 1, capThread: 1, seq: 1, label: 5})
			return w.end()
		}, "label list 5"},
		{"label lists flushed", func() []byte {
			w := base()
			w.labelLists(1, [][]byte{labSpan(1)})
			w.sequencePoint(0, 0)
			w.events(true, wEvent{meta: 1, thread: 1, capThread: 1, seq: 1, label: 1})
			return w.end()
		}, "label list 1"},
		{"unknown stack", func() []byte {
			w := base()
			w.stacks(1, []uint64{0x1000})
			w.events(true, wEvent{meta: 1, thread: 1, capThread: 1, seq: 1, stack: 2})
			return w.end()
		}, "stack id 2"},
		{"stacks flushed", func() []byte {
			w := base()
			w.stacks(1, []uint64{0x1000})
			w.sequencePoint(0, 0)
			w.events(true, wEvent{meta: 1, thread: 1, capThread: 1, seq: 1, stack: 1})
			return w.end()
		}, "stack id 1"},
		{"metadata flushed", func() []byte {
			w := base()
			w.sequencePoint(0, 2)
			w.events(true, wEvent{meta: 1, thread: 1, capThread: 1, seq: 1})
			return w.end()
		}, "metadata id 1"},
		{"threads flushed", func() []byte {
			w := base()
			w.sequencePoint(0, 1)
			w.events(true, wEvent{meta: 1, thread: 1, capThread: 1, seq: 1})
			return w.end()
		}, "thread index 1"},
		{"no end of stream", func() []byte {
			w := base()
			w.events(true, wEvent{meta: 1, thread: 1, capThread: 1, seq: 1})
			return w.buf.Bytes()
		}, "truncated"},
		{"bad optional metadata", func() []byte {
			w := newV6Writer(8, 0)
			w.metadata(wMeta{id: 1, provider: "P", opt: []byte{99}})
			return w.end()
		}, "unknown optional metadata kind 99"},
		{"RelLoc of strings", func() []byte {
			w := newV6Writer(8, 0)
			w.metadata(wMeta{id: 1, provider: "P", fields: []Field{{Name: "x", Type: TypeRelLoc, Elem: &Field{Type: TypeNullTerminatedUTF16String}}}})
			return w.end()
		}, "fixed-size element"},
		{"odd stack", func() []byte {
			w := base()
			b := append(u32(1), u32(1)...)
			b = append(b, u32(3)...)
			w.block(kindStack, append(b, 1, 2, 3))
			return w.end()
		}, "pointers"},
		{"major version 7", func() []byte {
			b := newV6Writer(8, 0).end()
			binary.LittleEndian.PutUint32(b[12:], 7)
			return b
		}, "major version 7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			r, err := NewReader(bytes.NewReader(tc.make()))
			if err == nil {
				for err == nil {
					_, err = r.Next()
				}
			}
			if err == io.EOF || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
			if !errors.Is(err, ErrFormat) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, ErrUnsupported) {
				t.Errorf("error %v has no sentinel", err)
			}
		})
	}
}

// TestV6Truncated cuts a V6 trace at every byte.
func TestV6Truncated(t *testing.T) {
	data := buildV6(true)
	full := readAll(t, data)
	for cut := 0; cut < len(data); cut++ {
		r, err := NewReader(bytes.NewReader(data[:cut]))
		if err != nil {
			if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "truncated") {
				t.Fatalf("cut at %d: NewReader: %v", cut, err)
			}
			continue
		}
		n := 0
		for {
			ev, err := r.Next()
			if err != nil {
				if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "truncated") {
					t.Fatalf("cut at %d: %v", cut, err)
				}
				break
			}
			if ev.Offset != full[n] || ev.Offset >= int64(cut) {
				t.Fatalf("cut at %d: event at %d", cut, ev.Offset)
			}
			n++
		}
	}
}

// TestV6PointerSize4 checks 4-byte stacks.
func TestV6PointerSize4(t *testing.T) {
	w := newV6Writer(4, 0)
	w.threads(wThread{index: 1, tid: 1})
	w.metadata(wMeta{id: 1, provider: "P", eventID: 1})
	w.stacks(10, []uint64{0xdeadbeef, 0x1234})
	w.events(true, wEvent{meta: 1, thread: 1, capThread: 1, seq: 1, stack: 10})
	r, err := NewReader(bytes.NewReader(w.end()))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if ev.PointerSize != 4 || !reflect.DeepEqual(ev.Stack, []uint64{0xdeadbeef, 0x1234}) {
		t.Errorf("pointer size %d stack %x", ev.PointerSize, ev.Stack)
	}
}

// TestUncompressedIsSorted: in an uncompressed event header the metadata
// ID's high bit marks an event that is not sorted (the runtime's block
// writer sets it for those; TraceEvent reads it so). The reader took the
// bit the other way round, and released held events in low-latency time
// order at the wrong marks.
func TestUncompressedIsSorted(t *testing.T) {
	w := newV6Writer(8, 0)
	w.threads(wThread{index: 1, pid: 1234, tid: 7777})
	w.metadata(wMeta{id: 1, provider: "P", eventID: 1, name: "E"})
	w.events(false,
		wEvent{meta: 1, seq: 1, thread: 1, capThread: 1, ts: 1_000_100, sorted: true},
		wEvent{meta: 1, seq: 2, thread: 1, capThread: 1, ts: 1_000_200},
	)
	data := w.end()
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var got []bool
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		highBit := data[e.Offset+7]&0x80 != 0 // the metadata ID's, after the event size
		if e.IsSorted == highBit || e.MetadataID != 1 {
			t.Errorf("event at %d: IsSorted %v with the high bit %v, metadata ID %d; want the bit clear exactly when sorted, ID 1",
				e.Offset, e.IsSorted, highBit, e.MetadataID)
		}
		got = append(got, e.IsSorted)
	}
	if len(got) != 2 || !got[0] || got[1] {
		t.Errorf("IsSorted %v, want [true false]", got)
	}
}

// TestV6EventIDAbove16Bits: a V6 metadata row's EventId is a varuint32,
// and a writer may give one above 65535. TraceEvent keeps the row and its
// events with the ID's low 16 bits (EventPipeMetadata.cs stores it as a
// ushort); so does the reader. It took such a row for damage, and lost
// every event that referred to it.
func TestV6EventIDAbove16Bits(t *testing.T) {
	for _, compress := range []bool{true, false} {
		for _, o := range []Order{FileOrder, TimeOrder} {
			w := newV6Writer(8, 0)
			w.threads(wThread{index: 1, pid: 10, tid: 20})
			w.metadata(wMeta{id: 1, provider: "BigIds", eventID: 70000, name: "E", fields: []Field{{Name: "V", Type: TypeInt32}}},
				wMeta{id: 2, provider: "BigIds", eventID: 5, name: "Small", fields: []Field{{Name: "V", Type: TypeInt32}}},
				wMeta{id: 3, provider: "BigIds", eventID: 1 << 31, name: "Huge"})
			w.events(compress,
				wEvent{meta: 1, seq: 1, thread: 1, capThread: 1, ts: 1_000_100, sorted: true, payload: []byte{1, 0, 0, 0}},
				wEvent{meta: 2, seq: 2, thread: 1, capThread: 1, ts: 1_000_200, payload: []byte{2, 0, 0, 0}},
				wEvent{meta: 1, seq: 3, thread: 1, capThread: 1, ts: 1_000_300, payload: []byte{3, 0, 0, 0}},
				wEvent{meta: 3, seq: 4, thread: 1, capThread: 1, ts: 1_000_400},
			)
			r, err := NewReader(bytes.NewReader(w.end()))
			if err != nil {
				t.Fatal(err)
			}
			r.SetOrder(o)
			var got []string
			for {
				e, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("compress %v, %v: after %v: %v", compress, o, got, err)
				}
				got = append(got, fmt.Sprintf("%s/%s id=%d meta=%d payload=% x", e.Provider, e.Name, e.ID, e.Metadata.EventID, e.Payload))
			}
			want := []string{
				"BigIds/E id=4464 meta=4464 payload=01 00 00 00",
				"BigIds/Small id=5 meta=5 payload=02 00 00 00",
				"BigIds/E id=4464 meta=4464 payload=03 00 00 00",
				"BigIds/Huge id=0 meta=0 payload=",
			}
			if !slices.Equal(got, want) {
				t.Errorf("compress %v, %v: events\n got %q\nwant %q", compress, o, got, want)
			}
			if d := r.Damage(); len(d) != 0 {
				t.Errorf("compress %v, %v: damage %v, want none", compress, o, d)
			}
		}
	}
}
