package nettrace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/clrgo/clrevents/clrimpl"
)

// v5Blob is one event blob with an uncompressed header, as
// NetTraceFormat_v5.md ("Uncompressed events") lists it and the runtime
// writes it (ep_event_block_base_write_event): an 80-byte header
// (EventSize, MetadataId, SequenceNumber, ThreadId, CaptureThreadId,
// ProcessorNumber, StackId, TimeStamp, ActivityID, RelatedActivityID,
// PayloadSize), the payload, then zero padding to 4 bytes.
type v5Blob struct {
	meta, seq         uint32
	thread, capThread uint64
	proc, stack       uint32
	ts                int64
	activity, related clrimpl.GUID
	sorted            bool
	payload           []byte
}

func (e v5Blob) append(b []byte) []byte {
	le := binary.LittleEndian
	start := len(b)
	b = le.AppendUint32(b, 0) // EventSize, below
	m := e.meta
	if !e.sorted {
		m |= 1 << 31 // the high bit marks an event not sorted
	}
	b = le.AppendUint32(b, m)
	b = le.AppendUint32(b, e.seq)
	b = le.AppendUint64(b, e.thread)
	b = le.AppendUint64(b, e.capThread)
	b = le.AppendUint32(b, e.proc)
	b = le.AppendUint32(b, e.stack)
	b = le.AppendUint64(b, uint64(e.ts))
	b = append(b, e.activity[:]...)
	b = append(b, e.related[:]...)
	b = le.AppendUint32(b, uint32(len(e.payload)))
	if len(b)-start != 80 {
		panic("header is not 80 bytes")
	}
	b = append(b, e.payload...)
	for (len(b)-start)%4 != 0 {
		b = append(b, 0)
	}
	le.PutUint32(b[start:], uint32(len(b)-start-4))
	return b
}

// v5BlockHeader is an EventBlock's or MetadataBlock's header: HeaderSize
// 20, Flags 0 (headers not compressed), MinTimestamp, MaxTimestamp.
func v5BlockHeader(lo, hi int64) []byte {
	le := binary.LittleEndian
	b := le.AppendUint16(nil, 20)
	b = le.AppendUint16(b, 0)
	b = le.AppendUint64(b, uint64(lo))
	return le.AppendUint64(b, uint64(hi))
}

// v5Metadata is a V4/V5 metadata payload: int32 MetadataId, utf16z
// ProviderName, int32 EventId, utf16z EventName, int64 Keywords, int32
// Version, int32 Level, then the V1 field list.
func v5Metadata(id uint32, provider string, eventID uint32, name string, fields ...Field) []byte {
	le := binary.LittleEndian
	b := le.AppendUint32(nil, id)
	b = append(b, utf16z(provider)...)
	b = le.AppendUint32(b, eventID)
	b = append(b, utf16z(name)...)
	b = le.AppendUint64(b, 0x10)
	b = le.AppendUint32(b, 2) // version
	b = le.AppendUint32(b, 4) // level
	b = le.AppendUint32(b, uint32(len(fields)))
	for _, f := range fields {
		b = le.AppendUint32(b, uint32(f.Type))
		b = append(b, utf16z(f.Name)...)
	}
	return b
}

// TestUncompressedV5 reads a NetTrace V5 trace whose metadata and event
// blocks have uncompressed headers, written as the spec says: every
// event, in both orders, with its header's fields and its payload. The
// reader took the header for 84 bytes, not 80: it rejected every record,
// and so lost the metadata block and every event.
func TestUncompressedV5(t *testing.T) {
	le := binary.LittleEndian
	w := newFSWriter()
	// A sync time that is a date (2024-02-29, a Thursday), QPC 1,000,000
	// at 10 MHz.
	st := w.b[len(w.b)-49:]
	for i, v := range []uint16{2024, 2, 4, 29, 13, 14, 15, 678} {
		le.PutUint16(st[2*i:], v)
	}
	le.PutUint64(st[16:], 1_000_000)
	le.PutUint64(st[24:], 10_000_000)

	// Metadata payloads of 4n+2 and 4n bytes: the first is padded.
	md := v5BlockHeader(0, 0)
	md = v5Blob{sorted: true, payload: v5Metadata(1, "MySource", 7, "Int", Field{Name: "V", Type: TypeInt32})}.append(md)
	md = v5Blob{sorted: true, payload: v5Metadata(2, "MySource", 8, "Text", Field{Name: "S", Type: TypeNullTerminatedUTF16String})}.append(md)
	if len(v5Metadata(1, "MySource", 7, "Int", Field{Name: "V", Type: TypeInt32}))%4 == 0 {
		t.Fatal("the first metadata payload needs padding for the test to mean something")
	}
	w.block("MetadataBlock", md)

	// Stack 1: two frames.
	sb := le.AppendUint32(nil, 1)
	sb = le.AppendUint32(sb, 1)
	sb = le.AppendUint32(sb, 16)
	sb = le.AppendUint64(sb, 0x1111)
	sb = le.AppendUint64(sb, 0x2222)
	w.block("StackBlock", sb)

	act := clrimpl.GUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	var rel clrimpl.GUID
	rel[0], rel[15] = 0xAA, 0xBB
	evs := []v5Blob{
		{meta: 1, seq: 1, thread: 42, capThread: 42, proc: 3, stack: 1, ts: 1_000_400, sorted: true, payload: le.AppendUint32(nil, 0x11111111)},
		{meta: 2, seq: 2, thread: 42, capThread: 42, proc: 3, ts: 1_000_500, activity: act, related: rel, payload: utf16z("hi")}, // 6 bytes
		{meta: 1, seq: 3, thread: 42, capThread: 42, proc: 3, ts: 1_000_600, payload: le.AppendUint32(nil, 0x33333333)},
		{meta: 2, seq: 1, thread: 77, capThread: 77, proc: 1, ts: 1_000_450, sorted: true, payload: utf16z("thread 77")}, // 20 bytes
		{meta: 1, seq: 2, thread: 77, capThread: 77, proc: 1, stack: 1, ts: 1_000_550, payload: le.AppendUint32(nil, 0x55555555)},
	}
	eb := v5BlockHeader(1_000_400, 1_000_600)
	for _, e := range evs {
		eb = e.append(eb)
	}
	w.block("EventBlock", eb)
	sp := le.AppendUint64(nil, 1_000_700)
	sp = le.AppendUint32(sp, 2)
	sp = le.AppendUint64(sp, 42)
	sp = le.AppendUint32(sp, 3)
	sp = le.AppendUint64(sp, 77)
	sp = le.AppendUint32(sp, 2)
	w.block("SPBlock", sp)
	data := w.end()
	if err := check(data); err != nil {
		t.Fatalf("Checker: %v", err)
	}

	// What each event must come out as: its header's fields, its name,
	// its payload (without the padding) and its fields decoded.
	want := func(e v5Blob) string {
		name, fields := "Int", fmt.Sprintf(`{"V":%d}`, int32(le.Uint32(e.payload)))
		var stack []uint64
		if e.meta == 2 {
			name = "Text"
			fields = fmt.Sprintf(`{"S":%q}`, string(bytes.ReplaceAll(e.payload[:len(e.payload)-2], []byte{0}, nil)))
		}
		if e.stack == 1 {
			stack = []uint64{0x1111, 0x2222}
		}
		return fmt.Sprintf("MySource/%s id=%d v2 seq=%d thread=%d/%d proc=%d ts=%d sorted=%v act=%v rel=%v stack=%x payload=% x %s",
			name, 6+e.meta, e.seq, e.thread, e.capThread, e.proc, e.ts, e.sorted, e.activity, e.related, stack, e.payload, fields)
	}
	for _, o := range []Order{FileOrder, TimeOrder} {
		t.Run(o.String(), func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(data))
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
					t.Fatalf("after %d events: %v", len(got), err)
				}
				j, err := e.Metadata.AppendJSON(nil, e.Payload)
				if err != nil {
					t.Errorf("event %d: %v", len(got), err)
				}
				got = append(got, fmt.Sprintf("%s/%s id=%d v%d seq=%d thread=%d/%d proc=%d ts=%d sorted=%v act=%v rel=%v stack=%x payload=% x %s",
					e.Provider, e.Name, e.ID, e.Version, e.SequenceNumber, e.ThreadID, e.CaptureThreadID, e.ProcessorNumber,
					e.Timestamp, e.IsSorted, e.ActivityID, e.RelatedActivityID, e.Stack, e.Payload, j))
			}
			order := slices.Clone(evs)
			if o == TimeOrder {
				slices.SortStableFunc(order, func(a, b v5Blob) int { return int(a.ts - b.ts) })
			}
			var wants []string
			for _, e := range order {
				wants = append(wants, want(e))
			}
			if !slices.Equal(got, wants) {
				t.Errorf("events:\n got %q\nwant %q", got, wants)
			}
			if d := r.Damage(); len(d) != 0 || r.Dropped() != 0 {
				t.Errorf("damage %v, dropped %d; want none", d, r.Dropped())
			}
		})
	}
}
