package interp_test

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/gen"
	"github.com/clrgo/clrevents/schema"
	"github.com/clrgo/clrevents/schema/interp"
)

const runtime = "Microsoft-Windows-DotNETRuntime"

func load(t *testing.T) *interp.Decoder {
	t.Helper()
	m, err := gen.Load("../clr.yaml", "../overrides.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d, err := interp.New(m)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func le32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
func le64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }

// gcStart is a GCStart_V2 payload (Count, Depth, Reason, Type,
// ClrInstanceID, ClientSequenceNumber) built by hand.
func gcStart() []byte {
	b := le32(nil, 7)   // Count
	b = le32(b, 2)      // Depth
	b = le32(b, 1)      // Reason: Induced
	b = le32(b, 0x99)   // Type: no such GCType
	b = append(b, 3, 0) // ClrInstanceID
	return le64(b, 42)  // ClientSequenceNumber
}

func TestDecodeFixedEvent(t *testing.T) {
	d := load(t)
	p := append(gcStart(), 0xAA, 0xBB) // two bytes a newer runtime added
	v, n, err := d.Decode(runtime, 1, 2, 8, p)
	if err != nil {
		t.Fatal(err)
	}
	if n != 26 {
		t.Errorf("used %d bytes, want 26 (the template), leaving 2", n)
	}
	if v.Event.Symbol != "GCStart_V2" {
		t.Errorf("event %s", v.Event.Symbol)
	}
	if got := v.Get("Count").Uint; got != 7 {
		t.Errorf("Count = %d", got)
	}
	if got := v.Get("Reason").Text(); got != "Induced" {
		t.Errorf("Reason = %q, want Induced", got)
	}
	if got := v.Get("Type").Text(); got != "GCType(0x99)" {
		t.Errorf("Type = %q, want GCType(0x99)", got)
	}
	want := `{"Count":7,"Depth":2,"Reason":"Induced","Type":"GCType(0x99)","ClrInstanceID":3,"ClientSequenceNumber":42}`
	if got := string(v.AppendJSON(nil)); got != want {
		t.Errorf("JSON\n got %s\nwant %s", got, want)
	}
}

func TestDecodeShortNamesField(t *testing.T) {
	d := load(t)
	_, _, err := d.Decode(runtime, 1, 2, 8, gcStart()[:10])
	var de *interp.DecodeError
	if !errors.As(err, &de) || !errors.Is(err, interp.ErrShortPayload) {
		t.Fatalf("err = %v, want a short-payload DecodeError", err)
	}
	// Bytes 8..11 are Reason; a 10-byte payload cuts it.
	if de.Event != "GCStart_V2" || de.Field != "Reason" || de.Offset != 8 {
		t.Errorf("error names %s %q at %d, want GCStart_V2 \"Reason\" at 8", de.Event, de.Field, de.Offset)
	}
	if !strings.Contains(err.Error(), `field "Reason" at byte 8`) {
		t.Errorf("message %q", err)
	}
}

// bulkMoved is a GCBulkMovedObjectRanges payload: Index, Count,
// ClrInstanceID, then Count elements of two pointers and a UInt64.
func bulkMoved(ptr int, count uint32, elems int) []byte {
	b := le32(nil, 0)
	b = le32(b, count)
	b = append(b, 1, 0)
	for i := 0; i < elems; i++ {
		for _, v := range []uint64{0x1000 + uint64(i), 0x2000 + uint64(i)} {
			if ptr == 4 {
				b = le32(b, uint32(v))
			} else {
				b = le64(b, v)
			}
		}
		b = le64(b, uint64(16*(i+1)))
	}
	return b
}

func TestDecodeStructArray(t *testing.T) {
	d := load(t)
	for _, ptr := range []int{4, 8} {
		p := bulkMoved(ptr, 2, 2)
		v, n, err := d.Decode(runtime, 22, 0, ptr, p)
		if err != nil {
			t.Fatal(err)
		}
		if n != len(p) || n != 10+2*(2*ptr+8) {
			t.Errorf("ptr %d: used %d of %d", ptr, n, len(p))
		}
		vals := v.Get("Values")
		if vals.Len() != 2 || vals.Kind != schema.KindStruct {
			t.Fatalf("ptr %d: %d elements", ptr, vals.Len())
		}
		if got := vals.Elems[1].Get("NewRangeBase").Uint; got != 0x2001 {
			t.Errorf("ptr %d: element 1 NewRangeBase = %#x", ptr, got)
		}
		want := `{"Index":0,"Count":2,"ClrInstanceID":1,"Values":[{"OldRangeBase":"0x1000","NewRangeBase":"0x2000","RangeLength":16},{"OldRangeBase":"0x1001","NewRangeBase":"0x2001","RangeLength":32}]}`
		if got := string(v.AppendJSON(nil)); got != want {
			t.Errorf("ptr %d: JSON\n got %s\nwant %s", ptr, got, want)
		}
	}
}

// TestHostileCount: a count the payload cannot back is an error before
// anything is allocated for it.
func TestHostileCount(t *testing.T) {
	d := load(t)
	p := bulkMoved(8, 0xFFFFFFFF, 1)
	allocs := testing.AllocsPerRun(10, func() {
		_, _, err := d.Decode(runtime, 22, 0, 8, p)
		if !errors.Is(err, interp.ErrCountTooLarge) {
			t.Fatalf("err = %v, want ErrCountTooLarge", err)
		}
	})
	if allocs > 8 {
		t.Errorf("%v allocations for a hostile count", allocs)
	}
}

func TestPointerSizeAndUnknown(t *testing.T) {
	d := load(t)
	if _, _, err := d.Decode(runtime, 22, 0, 5, bulkMoved(8, 0, 0)); !errors.Is(err, interp.ErrPointerSize) {
		t.Errorf("pointer size 5: %v", err)
	}
	// GCStart_V2 has no pointer: any pointer size decodes it.
	if _, _, err := d.Decode(runtime, 1, 2, 5, gcStart()); err != nil {
		t.Errorf("pointer size 5 on a pointer-free event: %v", err)
	}
	if _, _, err := d.Decode(runtime, 1, 200, 8, nil); !errors.Is(err, interp.ErrUnknownEvent) {
		t.Errorf("unknown version: %v", err)
	}
	if _, _, err := d.Decode("NoSuchProvider", 1, 2, 8, nil); !errors.Is(err, interp.ErrUnknownEvent) {
		t.Errorf("unknown provider: %v", err)
	}
}

func TestStringsAndUTF16(t *testing.T) {
	d := load(t)
	// ExecutionCheckpointDCEnd (rundown 300): ClrInstanceID, Name, Timestamp.
	name := []byte{'R', 0, 'T', 0, 0x3D, 0xD8, 0, 0} // "RT" + an unpaired surrogate, then NUL
	p := append([]byte{9, 0}, name...)
	p = le64(p, 5)
	v, n, err := d.Decode("Microsoft-Windows-DotNETRuntimeRundown", 300, 0, 8, p)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(p) {
		t.Errorf("used %d of %d", n, len(p))
	}
	s := v.Get("Name")
	if s.String() != "RT\uFFFD" || interp.ValidUTF16(s.Raw) {
		t.Errorf("Name = %q (valid %v)", s.String(), interp.ValidUTF16(s.Raw))
	}
	if !interp.ValidUTF16([]byte{'a', 0, 0x3D, 0xD8, 0x00, 0xDE}) {
		t.Error("a surrogate pair is valid UTF-16")
	}
	// No terminator.
	if _, _, err := d.Decode("Microsoft-Windows-DotNETRuntimeRundown", 300, 0, 8, p[:6]); !errors.Is(err, interp.ErrUnterminatedString) {
		t.Errorf("unterminated: %v", err)
	}
}
