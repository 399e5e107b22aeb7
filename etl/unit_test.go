package etl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/clrgo/clrevents/clrimpl"
)

func TestLZ77(t *testing.T) {
	le := binary.LittleEndian
	// flags: literal 'a', 'b', then a match of offset 2 length 10
	// (overlapping: "ababababab"), then a match with the shared-nibble
	// length (7 -> nibble 5 -> 3+7+5 = 15), offset 1.
	//
	// token builds a match token: offset-1 in the top 13 bits, the length
	// field (length-3, or lenExtended when more length follows) in the low 3.
	token := func(offset, lengthField int) uint16 { return uint16((offset-1)<<3 | lengthField) }
	const (
		lenExtended = 7
		lowNibble   = 0 // extends the first extended match: 3+7+0 = 10
		highNibble  = 5 // kept for the next extended match: 3+7+5 = 15
	)
	var src []byte
	src = le.AppendUint32(src, 0b0011<<28)
	src = append(src, 'a', 'b')
	src = le.AppendUint16(src, token(2, lenExtended))
	src = append(src, highNibble<<4|lowNibble) // the shared nibble byte, low nibble first
	src = le.AppendUint16(src, token(1, lenExtended))
	got, err := decompressLZ77(nil, src, 1000)
	if err != nil {
		t.Fatal(err)
	}
	want := "ab" + "ababababab" + "bbbbbbbbbbbbbbb"
	if string(got) != want {
		t.Fatalf("got %q, want %q", got, want)
	}

	// Long lengths: nibble 15, then a byte, then 255 -> 16-bit length.
	src = src[:0]
	src = le.AppendUint32(src, 0b011<<29)
	src = append(src, 'x')
	src = le.AppendUint16(src, token(1, lenExtended))
	src = append(src, 0x0f, 20)                       // 3 + 7 + 15 + 20 = 45
	src = le.AppendUint16(src, token(1, lenExtended)) // the high nibble of 0x0f: 0 -> 3 + 7 + 0
	got, err = decompressLZ77(nil, src, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1+45+3+7 {
		t.Fatalf("got %d bytes", len(got))
	}

	// Errors, not panics.
	for name, c := range map[string]struct {
		src   []byte
		limit int
		want  error
	}{
		"offset before start": {append(le.AppendUint32(nil, 1<<31), 0x08, 0), 100, errLZ77Offset},
		"over the limit":      {append(le.AppendUint32(nil, 0), bytes.Repeat([]byte{'z'}, 32)...), 10, errLZ77Overflow},
		"short flags":         {[]byte{1, 2}, 100, errLZ77Truncated},
		"short token":         {append(le.AppendUint32(nil, 1<<31), 7), 100, errLZ77Truncated},
		"bad long length":     {append(append(le.AppendUint32(nil, 0b01<<30), 'q'), 7, 0, 0x0f, 255, 3, 0), 1000, errLZ77Length},
	} {
		if _, err := decompressLZ77(nil, c.src, c.limit); !errors.Is(err, c.want) {
			t.Errorf("%s: err %v, want %v", name, err, c.want)
		}
	}
}

// eventHeader builds an EVENT_HEADER event with optional extended items.
func eventHeader(ptr32 bool, flags uint16, ts int64, ext [][2][]byte, payload []byte) []byte {
	le := binary.LittleEndian
	b := make([]byte, eventHeaderSize)
	b[2] = typeEventHeader64
	if ptr32 {
		b[2] = typeEventHeader32
	}
	b[3] = markerTraceHeader | markerEventTrace
	if len(ext) > 0 {
		flags |= FlagExtendedInfo
	}
	le.PutUint16(b[4:], flags)
	le.PutUint32(b[8:], 22)  // TID
	le.PutUint32(b[12:], 11) // PID
	le.PutUint64(b[16:], uint64(ts))
	copy(b[24:], runtimeGUID[:])
	le.PutUint16(b[40:], 1) // ID
	b[42] = 2               // version
	for i, x := range ext {
		item := make([]byte, 8)
		le.PutUint16(item[2:], le.Uint16(x[0]))
		if i < len(ext)-1 {
			le.PutUint16(item[4:], 1)
		}
		le.PutUint16(item[6:], uint16(len(x[1])))
		item = append(item, x[1]...)
		for len(item)%8 != 0 {
			item = append(item, 0)
		}
		b = append(b, item...)
	}
	b = append(b, payload...)
	le.PutUint16(b[0:], uint16(len(b)))
	return b
}

// gcStartTS is the gcevents log header's timestamp, the session's start.
func gcStartTS(t *testing.T) int64 {
	var ev Event
	if _, err := parseEvent(&ev, gcBuffers(t)[0], bufferHeaderSize, 8); err != nil {
		t.Fatal(err)
	}
	return ev.Timestamp
}

// withBuffer appends a buffer holding events for processor proc to the
// gcevents header buffer; the log header's NumberOfProcessors is raised
// above proc where it is not (a machine with that many).
func withBuffer(t *testing.T, proc uint16, events ...[]byte) []byte {
	hdr := gcBuffers(t)[0]
	buf := make([]byte, bufferHeaderSize)
	for _, e := range events {
		buf = append(buf, e...)
		for len(buf)%8 != 0 {
			buf = append(buf, 0)
		}
	}
	used := len(buf)
	for len(buf) < 4096 {
		buf = append(buf, 0xff)
	}
	binary.LittleEndian.PutUint32(buf[0:], uint32(len(buf)))
	binary.LittleEndian.PutUint32(buf[4:], uint32(used))
	binary.LittleEndian.PutUint16(buf[40:], proc)
	binary.LittleEndian.PutUint16(buf[52:], BufferFlagProcessorIndex)
	h := append([]byte(nil), hdr...)
	// The log header's BuffersWritten: gcevents' first buffer and ours.
	var ev Event
	if _, err := parseEvent(&ev, h, bufferHeaderSize, 8); err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(h, ev.Payload[:64])
	binary.LittleEndian.PutUint32(h[at+36:], 2)
	if n := binary.LittleEndian.Uint32(h[at+12:]); uint32(proc) >= n {
		binary.LittleEndian.PutUint32(h[at+12:], uint32(proc)+1)
	}
	return append(h, buf...)
}

func TestExtendedItems(t *testing.T) {
	u16 := func(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }
	related := clrimpl.MustParseGUID("01234567-89ab-cdef-0123-456789abcdef")
	stack32 := binary.LittleEndian.AppendUint64(nil, 0x77)
	stack32 = binary.LittleEndian.AppendUint32(stack32, 0x1000)
	stack32 = binary.LittleEndian.AppendUint32(stack32, 0x2000)
	tsid := []byte{5, 0, 0}
	// Times after the session's start (the gcevents header's): no event
	// precedes it.
	t0 := gcStartTS(t)
	e1 := eventHeader(true, 0, t0+6000, [][2][]byte{
		{u16(ExtRelatedActivityID), related[:]},
		{u16(ExtTSID), tsid},
		{u16(ExtStackTrace32), stack32},
	}, []byte("payload"))
	data := withBuffer(t, 300, e1)
	r := mustReader(t, data)
	var got *Event
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.ProcessorNumber == 300 {
			got = e
			break
		}
	}
	if got == nil {
		t.Fatal("event not found")
	}
	if got.PointerSize != 4 || got.Flags&Flag32BitHeader == 0 || got.RelatedActivityID != related ||
		got.StackMatchID != 0x77 || len(got.Stack) != 2 || got.Stack[1] != 0x2000 ||
		string(got.Payload) != "payload" || len(got.Extended) != 3 || got.ProcessID != 11 || got.ThreadID != 22 || got.ID != 1 || got.Version != 2 {
		t.Errorf("event %+v", got)
	}
	if d, ok := got.ExtendedItem(ExtTSID); !ok || !bytes.Equal(d, tsid) {
		t.Errorf("TS id item %x %v", d, ok)
	}
	if got.Time.Sub(r.Header().StartTime) != time.Duration(t0+6000-r.Header().HeaderTimestamp)*100 {
		t.Errorf("time %v", got.Time)
	}

	// An item that runs past the event.
	bad := eventHeader(false, 0, t0+6000, [][2][]byte{{u16(ExtSID), make([]byte, 40)}}, nil)
	binary.LittleEndian.PutUint16(bad[eventHeaderSize+6:], 400)
	r = mustFileOrder(t, withBuffer(t, 1, bad))
	_, err := readUntilErr(r, 100)
	if err == nil || err == io.EOF {
		t.Fatalf("err %v", err)
	}
}

func TestMessageAndClassicHeaders(t *testing.T) {
	le := binary.LittleEndian
	// A WPP message with sequence, GUID, timestamp and system info.
	msg := make([]byte, 8)
	msg[3] = markerTraceHeader | markerMessage
	le.PutUint16(msg[4:], 42)
	le.PutUint16(msg[6:], messageSequence|messageGUID|messageTimestamp|messageSystemInfo)
	msg = le.AppendUint32(msg, 9)
	msg = append(msg, privateGUID[:]...)
	t0 := gcStartTS(t) // no event precedes the session's start
	msg = le.AppendUint64(msg, uint64(t0+7000))
	msg = le.AppendUint32(msg, 33) // TID
	msg = le.AppendUint32(msg, 44) // PID
	msg = append(msg, "hi"...)
	le.PutUint16(msg[0:], uint16(len(msg)))

	// An instance header (classic) event.
	inst := make([]byte, instanceHeaderSize)
	inst[2], inst[3] = typeInstance32, markerTraceHeader|markerEventTrace
	inst[4], inst[5], inst[6] = 12, 4, 3 // type (opcode), level, version
	le.PutUint64(inst[16:], uint64(t0+8000))
	copy(inst[24:], rundownGUID[:])
	le.PutUint32(inst[48:], 5)
	le.PutUint32(inst[52:], 6)
	inst = append(inst, 1, 2, 3)
	le.PutUint16(inst[0:], uint16(len(inst)))

	// A compact system header event.
	compact := make([]byte, compactHeaderSize)
	le.PutUint16(compact[0:], 3)
	compact[2], compact[3] = typeCompact64, markerTraceHeader|markerEventTrace
	le.PutUint16(compact[6:], 0x0524) // Thread group, type 36
	le.PutUint32(compact[8:], 77)
	le.PutUint64(compact[16:], uint64(t0+9000))
	compact = append(compact, 9, 9)
	le.PutUint16(compact[4:], uint16(len(compact)))

	r := mustFileOrder(t, withBuffer(t, 2, msg, inst, compact))
	all := readAll(t, r)
	if len(all) != 5 {
		t.Fatalf("%d events", len(all))
	}
	m, i, c := all[2], all[3], all[4]
	if m.Kind != MessageHeader || m.ID != 42 || m.GUID != privateGUID || m.TS != t0+7000 || m.TID != 33 || m.PID != 44 || string(m.Payload) != "hi" {
		t.Errorf("message %+v", m)
	}
	if i.Kind != InstanceHeader || i.Opcode != 12 || i.Version != 3 || i.GUID != rundownGUID || i.Ptr != 4 || i.DataLen != 3 {
		t.Errorf("instance %+v", i)
	}
	if c.Kind != CompactSystemHeader || c.GUID != ThreadGUID || c.Opcode != 36 || c.HookID != 0x0524 || c.TID != 77 || c.DataLen != 2 || c.Ptr != 8 {
		t.Errorf("compact %+v", c)
	}
	if HeaderKind(99).String() != "HeaderKind(99)" || InstanceHeader.String() != "InstanceHeader" || Order(7).String() != "Order(7)" {
		t.Error("String methods")
	}
}
