package clrimpl

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"slices"
	"testing"
)

// Fuzz targets for the views on hostile bytes; FuzzDecoder, in package
// clrevents, drives them through every generated decoder.

// FuzzBinary checks the win:Binary view on any bytes.
func FuzzBinary(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0xff, 0x10})
	f.Fuzz(func(t *testing.T, raw []byte) {
		s := MakeBinary(raw)
		if s.Len() != len(raw) || s.IsEmpty() != (len(raw) == 0) || !bytes.Equal(s.Bytes(), raw) || cap(s.Bytes()) != len(raw) {
			t.Fatalf("MakeBinary(% x): Len %d IsEmpty %v Bytes % x", raw, s.Len(), s.IsEmpty(), s.Bytes())
		}
		want := ""
		if len(raw) > 0 {
			want = "0x" + hexLower(raw)
		}
		if got := s.String(); got != want {
			t.Fatalf("MakeBinary(% x).String() = %q, want %q", raw, got, want)
		}
		checkJSONString(t, "Binary.AppendJSON", s.AppendJSON(nil), want)
		if !s.Equal(BinaryOf(raw)) || !s.Equal(s.Clone()) {
			t.Fatalf("MakeBinary(% x) is not Equal to its copies", raw)
		}
	})
}

func hexLower(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

// FuzzReadAnsiZ checks the NUL-terminated win:AnsiString reader against
// bytes.IndexByte, and the view it returns.
func FuzzReadAnsiZ(f *testing.F) {
	f.Add([]byte("abc\x00def"), 0)
	f.Add([]byte("abc\x00"), 3)
	f.Add([]byte("abc"), 0)
	f.Add([]byte("\x00"), -1)
	f.Add([]byte("x\x00\xe9\xff\x00"), 2)
	f.Fuzz(func(t *testing.T, b []byte, off int) {
		b = b[:len(b):len(b)]
		s, next, ok := ReadAnsiZ(b, off)
		wantOK := off >= 0 && off <= len(b) && bytes.IndexByte(b[off:], 0) >= 0
		if ok != wantOK {
			t.Fatalf("ReadAnsiZ(%q, %d): ok = %v, want %v", b, off, ok, wantOK)
		}
		if !ok {
			if next != 0 || s.Len() != 0 {
				t.Fatalf("ReadAnsiZ(%q, %d) failed but returned %q, %d", b, off, s.Bytes(), next)
			}
			return
		}
		end := off + bytes.IndexByte(b[off:], 0)
		if next != end+1 || !bytes.Equal(s.Bytes(), b[off:end]) || cap(s.Bytes()) != len(s.Bytes()) {
			t.Fatalf("ReadAnsiZ(%q, %d) = %q, %d", b, off, s.Bytes(), next)
		}
		checkAnsi(t, s.Bytes())
	})
}

// FuzzArrays checks every fixed-size array view on any bytes: Len, At,
// All, AppendTo, Equal, wire bytes, String and JSON agree with a plain
// little-endian reading of the bytes. The struct-array views and
// iterators are exercised through FuzzDecoder.
func FuzzArrays(f *testing.F) {
	f.Add([]byte{}, int8(8))
	f.Add([]byte{1, 0, 0, 0, 2, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0x80}, int8(4))
	f.Add(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.NaN())), 0x7ff0000000000001), int8(8))
	f.Add(bytes.Repeat([]byte{0xa5}, 33), int8(0))
	f.Fuzz(func(t *testing.T, raw []byte, ptr int8) {
		raw = raw[:len(raw):len(raw)]
		if len(raw) > 0 { // checkArray's reference JSON for []uint8 is null when empty
			checkArray(t, "Uint8Array", Uint8ArrayOf, MakeUint8Array, 1, leVals(raw, 1, func(b []byte) uint8 { return b[0] }), raw)
		}
		checkArray(t, "Uint16Array", Uint16ArrayOf, MakeUint16Array, 2, leVals(raw, 2, binary.LittleEndian.Uint16), whole(raw, 2))
		checkArray(t, "Uint32Array", Uint32ArrayOf, MakeUint32Array, 4, leVals(raw, 4, binary.LittleEndian.Uint32), whole(raw, 4))
		checkArray(t, "Uint64Array", Uint64ArrayOf, MakeUint64Array, 8, leVals(raw, 8, binary.LittleEndian.Uint64), whole(raw, 8))
		checkArray(t, "Int32Array", Int32ArrayOf, MakeInt32Array, 4, leVals(raw, 4, func(b []byte) int32 { return int32(binary.LittleEndian.Uint32(b)) }), whole(raw, 4))
		checkArray(t, "Int64Array", Int64ArrayOf, MakeInt64Array, 8, leVals(raw, 8, func(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) }), whole(raw, 8))
		checkArray(t, "GUIDArray", GUIDArrayOf, MakeGUIDArray, 16, leVals(raw, 16, func(b []byte) GUID { return GUID(b) }), whole(raw, 16))
		checkFloatArray(t, raw)
		checkBoolArray(t, raw)
		checkPointerArray(t, raw, int(ptr))
	})
}

func whole(raw []byte, size int) []byte { return raw[:len(raw)/size*size] }

func leVals[T any](raw []byte, size int, get func([]byte) T) []T {
	out := []T{}
	for b := raw; len(b) >= size; b = b[size:] {
		out = append(out, get(b[:size]))
	}
	return out
}

func checkFloatArray(t *testing.T, raw []byte) {
	t.Helper()
	a := MakeFloat64Array(raw)
	vals := leVals(raw, 8, func(b []byte) uint64 { return binary.LittleEndian.Uint64(b) })
	if a.Len() != len(vals) || !bytes.Equal(a.WireBytes(), whole(raw, 8)) {
		t.Fatalf("Float64Array: Len %d, want %d", a.Len(), len(vals))
	}
	got := a.AppendTo(nil)
	for i, v := range a.All() {
		if math.Float64bits(v) != vals[i] || math.Float64bits(a.At(i)) != vals[i] || math.Float64bits(got[i]) != vals[i] {
			t.Fatalf("Float64Array[%d]: bits differ", i)
		}
	}
	if !a.Equal(MakeFloat64Array(bytes.Clone(raw))) || !a.Equal(Float64ArrayOf(got...)) {
		t.Fatal("Float64Array is not Equal to its copies")
	}
	js := a.AppendJSON(nil)
	var back []*float64
	if err := json.Unmarshal(js, &back); err != nil || len(back) != len(vals) {
		t.Fatalf("Float64Array.AppendJSON = %s: %v", js, err)
	}
	for i, p := range back {
		f := math.Float64frombits(vals[i])
		if math.IsNaN(f) || math.IsInf(f, 0) {
			if p != nil {
				t.Fatalf("Float64Array: %v written as %v, want null", f, *p)
			}
		} else if p == nil || *p != f {
			t.Fatalf("Float64Array: %v does not round-trip through JSON %s", f, js)
		}
	}
	_ = a.String()
}

func checkBoolArray(t *testing.T, raw []byte) {
	t.Helper()
	a := MakeBoolArray(raw)
	vals := leVals(raw, 4, func(b []byte) bool { return binary.LittleEndian.Uint32(b) != 0 })
	if got := a.AppendTo(nil); a.Len() != len(vals) || !slices.Equal(got, vals) {
		t.Fatalf("BoolArray.AppendTo = %v, want %v", got, vals)
	}
	for i, v := range a.All() {
		if v != vals[i] || a.At(i) != v {
			t.Fatalf("BoolArray[%d] = %v, want %v", i, v, vals[i])
		}
	}
	if !a.Equal(BoolArrayOf(vals...)) || !bytes.Equal(a.AppendWire(nil, 8), whole(raw, 4)) {
		t.Fatal("BoolArray is not Equal to its canonical form, or AppendWire changed the bytes")
	}
	var back []bool
	if err := json.Unmarshal(a.AppendJSON(nil), &back); err != nil || !slices.Equal(back, vals) && len(vals) > 0 {
		t.Fatalf("BoolArray.AppendJSON: %v %v", back, err)
	}
	_ = a.String()
}

func checkPointerArray(t *testing.T, raw []byte, ptr int) {
	t.Helper()
	size := 8
	if ptr == 4 {
		size = 4
	}
	a := MakePointerArray(raw, ptr)
	vals := leVals(raw, size, func(b []byte) uint64 {
		if size == 4 {
			return uint64(binary.LittleEndian.Uint32(b))
		}
		return binary.LittleEndian.Uint64(b)
	})
	if a.PtrSize() != size || a.Len() != len(vals) || !bytes.Equal(a.WireBytes(), whole(raw, size)) {
		t.Fatalf("MakePointerArray(%d): PtrSize %d Len %d", ptr, a.PtrSize(), a.Len())
	}
	if got := a.AppendTo(nil); !slices.Equal(got, vals) && len(vals) > 0 {
		t.Fatalf("PointerArray.AppendTo = %x, want %x", got, vals)
	}
	for i, v := range a.All() {
		if v != vals[i] || a.At(i) != v {
			t.Fatalf("PointerArray[%d] = %#x, want %#x", i, v, vals[i])
		}
	}
	// Same size: the bytes; the other size: the values, truncated to 32 bits
	// when narrowing.
	if got := a.AppendWire(nil, size); !bytes.Equal(got, whole(raw, size)) {
		t.Fatalf("PointerArray.AppendWire(%d) changed the bytes", size)
	}
	other := 12 - size
	conv := MakePointerArray(a.AppendWire(nil, other), other)
	if conv.Len() != a.Len() {
		t.Fatalf("PointerArray.AppendWire(%d): %d elements, want %d", other, conv.Len(), a.Len())
	}
	for i, v := range vals {
		if other == 4 {
			v = uint64(uint32(v))
		}
		if conv.At(i) != v {
			t.Fatalf("PointerArray.AppendWire(%d)[%d] = %#x, want %#x", other, i, conv.At(i), v)
		}
	}
	if size == 4 && !conv.Equal(a) {
		t.Fatal("a 4-byte array widened to 8 bytes is not Equal to itself")
	}
	var back []string
	if err := json.Unmarshal(a.AppendJSON(nil), &back); err != nil || len(back) != len(vals) {
		t.Fatalf("PointerArray.AppendJSON: %v %v", back, err)
	}
	_ = a.String()
}
