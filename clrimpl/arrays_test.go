package clrimpl

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// checkIndexPanic checks that fn panics as an out-of-range slice index does.
func checkIndexPanic(t *testing.T, what string, i int, fn func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		var re runtime.Error
		if err, ok := r.(error); !ok || !errors.As(err, &re) || !strings.Contains(re.Error(), "index out of range") {
			t.Errorf("%s(%d): recovered %v, want an index out of range runtime error", what, i, r)
		}
	}()
	fn()
}

// arrayView is the method set every array view shares.
type arrayView[A any, T any] interface {
	Len() int
	At(int) T
	All() iter.Seq2[int, T]
	AppendTo([]T) []T
	Equal(A) bool
	AppendWire([]byte, int) []byte
	AppendJSON([]byte) []byte
	WireBytes() []byte
	String() string
	MarshalJSON() ([]byte, error)
}

// checkArray checks an array view type against the values vals and their
// wire form.
func checkArray[A arrayView[A, T], T comparable](t *testing.T, name string, of func(...T) A, mk func([]byte) A, size int, vals []T, wire []byte) {
	t.Helper()
	built := of(vals...)
	if got := built.WireBytes(); !bytes.Equal(got, wire) {
		t.Errorf("%sOf(%v).WireBytes() = % x, want % x", name, vals, got, wire)
	}
	buf := bytes.Clone(wire)
	for _, a := range []A{built, mk(buf), mk(append(bytes.Clone(wire), make([]byte, size-1)...))} {
		if a.Len() != len(vals) {
			t.Fatalf("%s: Len() = %d, want %d", name, a.Len(), len(vals))
		}
		for i, v := range vals {
			if got := a.At(i); got != v {
				t.Errorf("%s: At(%d) = %v, want %v", name, i, got, v)
			}
		}
		var all []T
		for i, v := range a.All() {
			if i != len(all) {
				t.Errorf("%s: All yields index %d at position %d", name, i, len(all))
			}
			all = append(all, v)
		}
		if !slices.Equal(all, vals) {
			t.Errorf("%s: All() = %v, want %v", name, all, vals)
		}
		n := 0
		for range a.All() {
			n++
			break
		}
		if n != min(1, len(vals)) {
			t.Errorf("%s: All() did not stop after break", name)
		}
		if got := a.AppendTo([]T{}); !slices.Equal(got, vals) {
			t.Errorf("%s: AppendTo = %v, want %v", name, got, vals)
		}
		if got := a.WireBytes(); !bytes.Equal(got, wire) || cap(got) != len(got) {
			t.Errorf("%s: WireBytes() = % x (cap %d), want % x", name, got, cap(got), wire)
		}
		for _, ptrSize := range []int{4, 8} {
			if got := a.AppendWire([]byte{0xee}, ptrSize); got[0] != 0xee || !bytes.Equal(got[1:], wire) {
				t.Errorf("%s: AppendWire(%d) = % x, want ee % x", name, ptrSize, got, wire)
			}
		}
		if !a.Equal(built) || !built.Equal(a) {
			t.Errorf("%s: not Equal to %sOf(%v)", name, name, vals)
		}
		if len(vals) > 0 && (a.Equal(mk(wire[:len(wire)-size])) || a.Equal(of())) {
			t.Errorf("%s: Equal to a shorter array", name)
		}
		js := a.AppendJSON([]byte("x"))
		if js[0] != 'x' || !json.Valid(js[1:]) {
			t.Errorf("%s: AppendJSON = %s", name, js)
		}
		want := stdJSON(t, vals)
		if _, ok := any(vals).([]uint8); ok { // encoding/json writes []byte in base64
			want = stdJSON(t, any(slices.Collect(func(yield func(int) bool) {
				for _, v := range vals {
					yield(int(any(v).(uint8)))
				}
			})))
		}
		if !bytes.Equal(js[1:], want) {
			t.Errorf("%s: AppendJSON = %s, encoding/json writes %s", name, js[1:], want)
		}
		if mj, err := a.MarshalJSON(); err != nil || !bytes.Equal(mj, want) {
			t.Errorf("%s: MarshalJSON = %s, %v", name, mj, err)
		}
		if got, want := a.String(), fmt.Sprint(vals); got != want {
			t.Errorf("%s: String() = %q, want %q", name, got, want)
		}
		for _, i := range []int{-1, len(vals), len(vals) + 1, 1 << 62, -1 << 63} {
			checkIndexPanic(t, name+".At", i, func() { a.At(i) })
		}
	}

	// The zero value and an empty view are empty and equal.
	var zero A
	if zero.Len() != 0 || !zero.Equal(mk(nil)) || !zero.Equal(of()) || string(zero.AppendJSON(nil)) != "[]" || zero.String() != "[]" {
		t.Errorf("%s: zero value is not an empty array", name)
	}
	for range zero.All() {
		t.Errorf("%s: zero value yields elements", name)
	}
	if mk(make([]byte, size-1)).Len() != 0 {
		t.Errorf("%s: a partial element counts", name)
	}

	// Aliasing: the view follows the payload; AppendTo's copy does not.
	if len(vals) > 0 {
		view := mk(buf)
		kept := view.AppendTo(nil)
		for i := range size {
			buf[i] ^= 0xa5
		}
		if view.At(0) == vals[0] && name != "BoolArray" {
			t.Errorf("%s: view did not change with the payload", name)
		}
		if !view.Equal(mk(buf)) || kept[0] != vals[0] {
			t.Errorf("%s: aliasing broken", name)
		}
		if _ = append(view.WireBytes(), 1); len(buf) > len(wire) {
			t.Errorf("%s: append grew the payload", name)
		}
	}
}

func wireLE(vals ...uint64) func(size int) []byte {
	return func(size int) []byte {
		var b []byte
		for _, v := range vals {
			b = binary.LittleEndian.AppendUint64(b, v)[:len(b)+size]
		}
		return b
	}
}

func TestArrays(t *testing.T) {
	checkArray(t, "Uint8Array", Uint8ArrayOf, MakeUint8Array, 1, []uint8{0, 1, 0x7f, 0xff}, []byte{0, 1, 0x7f, 0xff})
	checkArray(t, "Uint16Array", Uint16ArrayOf, MakeUint16Array, 2, []uint16{0, 1, 0x1234, 0xffff}, wireLE(0, 1, 0x1234, 0xffff)(2))
	checkArray(t, "Uint32Array", Uint32ArrayOf, MakeUint32Array, 4, []uint32{0, 1, 0x12345678, math.MaxUint32}, wireLE(0, 1, 0x12345678, math.MaxUint32)(4))
	checkArray(t, "Uint64Array", Uint64ArrayOf, MakeUint64Array, 8, []uint64{0, 1, 1 << 53, math.MaxUint64}, wireLE(0, 1, 1<<53, math.MaxUint64)(8))
	checkArray(t, "Int32Array", Int32ArrayOf, MakeInt32Array, 4, []int32{0, -1, math.MinInt32, math.MaxInt32}, wireLE(0, 0xffffffff, 0x80000000, 0x7fffffff)(4))
	checkArray(t, "Int64Array", Int64ArrayOf, MakeInt64Array, 8, []int64{0, -1, math.MinInt64, math.MaxInt64}, wireLE(0, math.MaxUint64, 1<<63, 1<<63-1)(8))
	floats := []float64{0, 1.5, -2.25e-7, 1e21, math.MaxFloat64, math.SmallestNonzeroFloat64, 123456789.125}
	var fwire []byte
	for _, f := range floats {
		fwire = binary.LittleEndian.AppendUint64(fwire, math.Float64bits(f))
	}
	checkArray(t, "Float64Array", Float64ArrayOf, MakeFloat64Array, 8, floats, fwire)
	checkArray(t, "BoolArray", BoolArrayOf, MakeBoolArray, 4, []bool{true, false, true}, wireLE(1, 0, 1)(4))
	g1 := MustParseGUID("e13c0d23-ccbc-4e12-931b-d9cc2eee27e4")
	g2 := MustParseGUID("a669021c-c450-4609-a035-5af59af4df18")
	checkArray(t, "GUIDArray", GUIDArrayOf, MakeGUIDArray, 16, []GUID{g1, {}, g2}, slices.Concat(g1[:], make([]byte, 16), g2[:]))
	for _, size := range []int{4, 8} {
		ptrs := []uint64{0, 0x10, 0xfffffffe}
		a := PointerArrayOf(size, ptrs...)
		if a.PtrSize() != size || !bytes.Equal(a.WireBytes(), wireLE(ptrs...)(size)) {
			t.Errorf("PointerArrayOf(%d) = % x", size, a.WireBytes())
		}
	}
}

func TestFloat64ArraySpecials(t *testing.T) {
	nan := math.NaN()
	a := Float64ArrayOf(nan, math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0)
	if got := string(a.AppendJSON(nil)); got != "[null,null,null,-0,0]" {
		t.Errorf("AppendJSON = %s", got)
	}
	if !math.IsNaN(a.At(0)) || !math.IsInf(a.At(1), 1) || math.Signbit(a.At(4)) || !math.Signbit(a.At(3)) {
		t.Errorf("At = %v", a.AppendTo(nil))
	}
	// Equal compares bits: NaN equals itself, -0 is not +0.
	if !a.Equal(Float64ArrayOf(nan, math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0)) {
		t.Error("Float64Array with NaN is not Equal to itself")
	}
	if Float64ArrayOf(0).Equal(Float64ArrayOf(math.Copysign(0, -1))) {
		t.Error("Float64Array: +0 Equal -0")
	}
}

func TestBoolArrayNonCanonical(t *testing.T) {
	a := MakeBoolArray(wireLE(2, 0, 0x80000000, 0x100)(4))
	if got := a.AppendTo(nil); !slices.Equal(got, []bool{true, false, true, true}) {
		t.Errorf("AppendTo = %v", got)
	}
	if !a.Equal(BoolArrayOf(true, false, true, true)) {
		t.Error("non-canonical true is not Equal to 1")
	}
	if a.Equal(BoolArrayOf(true, true, true, true)) || a.Equal(BoolArrayOf(true, false, true)) {
		t.Error("BoolArray.Equal ignores a difference")
	}
	// AppendWire keeps the raw bytes.
	if got := a.AppendWire(nil, 8); !bytes.Equal(got, a.WireBytes()) {
		t.Errorf("AppendWire = % x", got)
	}
}

func TestPointerArray(t *testing.T) {
	vals := []uint64{0, 0x10, 0x7ffd1234, 0xffffffff}
	a4, a8 := PointerArrayOf(4, vals...), PointerArrayOf(8, vals...)
	w4, w8 := wireLE(vals...)(4), wireLE(vals...)(8)
	for _, tc := range []struct {
		a    PointerArray
		size int
		wire []byte
	}{
		{a4, 4, w4}, {a8, 8, w8},
		{MakePointerArray(w4, 4), 4, w4}, {MakePointerArray(w8, 8), 8, w8},
		{MakePointerArray(append(bytes.Clone(w4), 1, 2, 3), 4), 4, w4},
		{MakePointerArray(append(bytes.Clone(w8), 1, 2, 3, 4, 5, 6, 7), 8), 8, w8},
	} {
		a := tc.a
		if a.PtrSize() != tc.size || a.Len() != len(vals) || !bytes.Equal(a.WireBytes(), tc.wire) {
			t.Errorf("size %d: PtrSize %d Len %d wire % x", tc.size, a.PtrSize(), a.Len(), a.WireBytes())
		}
		if got := a.AppendTo(nil); !slices.Equal(got, vals) {
			t.Errorf("size %d: AppendTo = %x", tc.size, got)
		}
		var all []uint64
		for i, v := range a.All() {
			if a.At(i) != v {
				t.Errorf("size %d: All and At disagree at %d", tc.size, i)
			}
			all = append(all, v)
		}
		if !slices.Equal(all, vals) {
			t.Errorf("size %d: All = %x", tc.size, all)
		}
		// Equal by value across sizes.
		if !a.Equal(a4) || !a.Equal(a8) || !a4.Equal(a) || !a8.Equal(a) {
			t.Errorf("size %d: not Equal to the same values", tc.size)
		}
		if a.Equal(PointerArrayOf(8, vals[:3]...)) || a.Equal(PointerArrayOf(4, 0, 0x10, 0x7ffd1234, 0xfffffffe)) {
			t.Errorf("size %d: Equal to different values", tc.size)
		}
		// AppendWire converts.
		if got := a.AppendWire([]byte{9}, 4); !bytes.Equal(got, append([]byte{9}, w4...)) {
			t.Errorf("size %d: AppendWire(4) = % x", tc.size, got)
		}
		if got := a.AppendWire([]byte{9}, 8); !bytes.Equal(got, append([]byte{9}, w8...)) {
			t.Errorf("size %d: AppendWire(8) = % x", tc.size, got)
		}
		want := `["0x0","0x10","0x7ffd1234","0xffffffff"]`
		if got := string(a.AppendJSON(nil)); got != want {
			t.Errorf("size %d: AppendJSON = %s, want %s", tc.size, got, want)
		}
		if got := string(a.AppendJSONHex(nil)); got != want {
			t.Errorf("size %d: AppendJSONHex = %s, want %s", tc.size, got, want)
		}
		if got, want := a.String(), "[0x0 0x10 0x7ffd1234 0xffffffff]"; got != want {
			t.Errorf("size %d: String = %q, want %q", tc.size, got, want)
		}
		for _, i := range []int{-1, 4, 1 << 61, 1 << 62} {
			checkIndexPanic(t, "PointerArray.At", i, func() { a.At(i) })
		}
	}

	// 64-bit values: truncated by the 4-byte forms.
	big := PointerArrayOf(8, 0x1122334455667788)
	if got := big.AppendWire(nil, 4); !bytes.Equal(got, []byte{0x88, 0x77, 0x66, 0x55}) {
		t.Errorf("AppendWire(4) of a 64-bit value = % x", got)
	}
	if got := PointerArrayOf(4, 0x1122334455667788).At(0); got != 0x55667788 {
		t.Errorf("PointerArrayOf(4) keeps %#x", got)
	}
	if big.Equal(PointerArrayOf(4, 0x1122334455667788)) {
		t.Error("a truncated pointer is Equal to the full one")
	}

	// The zero value is an empty 8-byte array; sizes other than 4 mean 8.
	var zero PointerArray
	if zero.PtrSize() != 8 || zero.Len() != 0 || !zero.Equal(PointerArrayOf(4)) || string(zero.AppendJSON(nil)) != "[]" {
		t.Error("zero PointerArray is not empty")
	}
	if MakePointerArray(w8, 5).PtrSize() != 8 || PointerArrayOf(0, 1).PtrSize() != 8 {
		t.Error("odd pointer sizes are not taken as 8")
	}

	// Aliasing.
	buf := bytes.Clone(w4)
	v := MakePointerArray(buf, 4)
	buf[4] = 0x20
	if v.At(1) != 0x20 {
		t.Errorf("PointerArray does not alias the payload: %#x", v.At(1))
	}
}

func TestAppendJSONHexArrays(t *testing.T) {
	if got, want := string(Uint32ArrayOf(0, 0x1f, math.MaxUint32).AppendJSONHex(nil)), `["0x0","0x1f","0xffffffff"]`; got != want {
		t.Errorf("Uint32Array.AppendJSONHex = %s, want %s", got, want)
	}
	if got, want := string(Uint64ArrayOf(0x1f, math.MaxUint64).AppendJSONHex([]byte("x"))), `x["0x1f","0xffffffffffffffff"]`; got != want {
		t.Errorf("Uint64Array.AppendJSONHex = %s, want %s", got, want)
	}
	if got := string((Uint64Array{}).AppendJSONHex(nil)); got != "[]" {
		t.Errorf("empty AppendJSONHex = %s", got)
	}
}

func TestArrayAllocs(t *testing.T) {
	u32 := Uint32ArrayOf(1, 2, 3, 4, 5, 6, 7, 8)
	u64 := Uint64ArrayOf(1, 1<<40, math.MaxUint64)
	f64 := Float64ArrayOf(1.5, math.NaN(), 1e300)
	ptr := PointerArrayOf(4, 1, 2, 3)
	gs := GUIDArrayOf(GUID{1}, GUID{2})
	bs := BoolArrayOf(true, false)
	buf := make([]byte, 0, 1024)
	vals := make([]uint32, 0, 16)
	var sink uint64
	for name, fn := range map[string]func(){
		"Uint32Array.At/Len": func() {
			for i := range u32.Len() {
				sink += uint64(u32.At(i))
			}
		},
		"Uint32Array.All": func() {
			for _, v := range u32.All() {
				sink += uint64(v)
			}
		},
		"PointerArray.All": func() {
			for _, v := range ptr.All() {
				sink += v
			}
		},
		"PointerArray.At":           func() { sink += ptr.At(2) },
		"Uint32Array.AppendTo":      func() { vals = u32.AppendTo(vals[:0]) },
		"Uint32Array.AppendJSON":    func() { buf = u32.AppendJSON(buf[:0]) },
		"Uint64Array.AppendJSONHex": func() { buf = u64.AppendJSONHex(buf[:0]) },
		"Float64Array.AppendJSON":   func() { buf = f64.AppendJSON(buf[:0]) },
		"PointerArray.AppendJSON":   func() { buf = ptr.AppendJSON(buf[:0]) },
		"PointerArray.AppendWire":   func() { buf = ptr.AppendWire(buf[:0], 8) },
		"GUIDArray.AppendJSON":      func() { buf = gs.AppendJSON(buf[:0]) },
		"BoolArray.AppendJSON":      func() { buf = bs.AppendJSON(buf[:0]) },
		"Equal": func() {
			sink += uint64(len(buf))
			if !u32.Equal(u32) || !ptr.Equal(PointerArray{}) && ptr.Len() == 0 {
				sink++
			}
		},
		"Make": func() { sink += uint64(MakeUint32Array(buf).Len() + MakePointerArray(buf, 4).Len()) },
	} {
		if n := testing.AllocsPerRun(100, fn); n != 0 {
			t.Errorf("%s: %v allocs per run, want 0", name, n)
		}
	}
	_ = sink
}

var benchU32 = func() Uint32Array {
	v := make([]uint32, 256)
	for i := range v {
		v[i] = uint32(i * 2654435761)
	}
	return Uint32ArrayOf(v...)
}()

func BenchmarkUint32ArrayAt(b *testing.B) {
	a := benchU32
	b.ReportAllocs()
	b.SetBytes(int64(len(a.WireBytes())))
	for b.Loop() {
		var sum uint32
		for i := range a.Len() {
			sum += a.At(i)
		}
		benchSink += int(sum)
	}
}

func BenchmarkUint32ArrayAll(b *testing.B) {
	a := benchU32
	b.ReportAllocs()
	b.SetBytes(int64(len(a.WireBytes())))
	for b.Loop() {
		var sum uint32
		for _, v := range a.All() {
			sum += v
		}
		benchSink += int(sum)
	}
}

// BenchmarkUint32Slice is the same loop over a plain []uint32, the bound a
// view cannot beat.
func BenchmarkUint32Slice(b *testing.B) {
	v := benchU32.AppendTo(nil)
	b.ReportAllocs()
	b.SetBytes(int64(4 * len(v)))
	for b.Loop() {
		var sum uint32
		for i := range v {
			sum += v[i]
		}
		benchSink += int(sum)
	}
}

func BenchmarkUint32ArrayAppendJSON(b *testing.B) {
	a := benchU32
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	b.SetBytes(int64(len(a.WireBytes())))
	for b.Loop() {
		buf = a.AppendJSON(buf[:0])
	}
}

func ExampleUint32Array() {
	payload := []byte{1, 0, 0, 0, 2, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}
	a := MakeUint32Array(payload)
	for i, v := range a.All() {
		fmt.Print(i, ":", v, " ")
	}
	fmt.Println(a.Len(), a.At(2), string(a.AppendJSON(nil)), string(a.AppendJSONHex(nil)))
	// Output: 0:1 1:2 2:4294967295 3 4294967295 [1,2,4294967295] ["0x1","0x2","0xffffffff"]
}

func ExamplePointerArray() {
	a4 := MakePointerArray([]byte{0x10, 0, 0, 0, 0x20, 0, 0, 0}, 4)
	a8 := PointerArrayOf(8, 0x10, 0x20)
	fmt.Println(a4.Equal(a8), a4, string(a4.AppendJSON(nil)))
	fmt.Printf("% x\n", a4.AppendWire(nil, 8))
	// Output:
	// true [0x10 0x20] ["0x10","0x20"]
	// 10 00 00 00 00 00 00 00 20 00 00 00 00 00 00 00
}
