package clrimpl

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"iter"
	"math"
	"slices"
	"strconv"
)

// Array views: the count= arrays of fixed-size elements in event payloads.
//
// Like the string views, an array view aliases the payload it was decoded
// from: it is valid only while the payload buffer is, and it changes if the
// buffer is overwritten. Copy the elements out with AppendTo to keep them.
// Nothing here allocates except the *Of constructors, String, MarshalJSON,
// and the Append methods when their destination is too small.
//
// The zero value of each array view is empty and ready to use.

// Uint8Array is a view of a count= array of win:UInt8 (one byte each).
//
// An array view aliases the payload's bytes: it is valid only while the
// payload buffer is, and it changes if that buffer is reused. AppendTo copies
// the elements out. The zero value is an empty array.
type Uint8Array struct {
	b []byte
}

// MakeUint8Array wraps raw wire bytes without copying them. Trailing bytes that
// do not make a whole element are ignored. The view aliases raw.
func MakeUint8Array(raw []byte) Uint8Array {
	n := len(raw)
	return Uint8Array{raw[:n:n]}
}

// Uint8ArrayOf returns an array holding v, encoded for the wire. It allocates; it
// is meant for building payloads.
func Uint8ArrayOf(v ...uint8) Uint8Array {
	return Uint8Array{cloneBytes(v)}
}

// Len returns the number of elements.
func (a Uint8Array) Len() int { return len(a.b) }

// At returns the i'th element. It panics, as a slice index does, when i is out
// of range.
func (a Uint8Array) At(i int) uint8 {
	return a.b[i]
}

// All returns an iterator over the index and value of each element.
func (a Uint8Array) All() iter.Seq2[int, uint8] {
	return func(yield func(int, uint8) bool) {
		for i, v := range a.b {
			if !yield(i, v) {
				return
			}
		}
	}
}

// AppendTo appends the elements to dst and returns the extended slice.
func (a Uint8Array) AppendTo(dst []uint8) []uint8 {
	return append(dst, a.b...)
}

// Equal reports whether a and o hold the same elements. It lets github.com/google/go-cmp
// compare array views without options.
func (a Uint8Array) Equal(o Uint8Array) bool {
	return bytes.Equal(a.b, o.b)
}

// AppendWire appends the array's wire bytes, its raw bytes unchanged. ptrSize
// is ignored: it matters only for PointerArray.
func (a Uint8Array) AppendWire(dst []byte, ptrSize int) []byte { return append(dst, a.b...) }

// WireBytes returns the raw wire bytes. The slice aliases the payload; its
// capacity is its length.
func (a Uint8Array) WireBytes() []byte { return a.b }

// String formats the elements as fmt formats a slice of them, [1 2 3]. It
// allocates.
func (a Uint8Array) String() string {
	return fmt.Sprint(a.AppendTo(nil))
}

// AppendJSON appends a as a JSON array. It does not allocate when dst has
// room.
func (a Uint8Array) AppendJSON(dst []byte) []byte {
	dst = append(dst, '[')
	for i, v := range a.b {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendJSONUint(dst, uint64(v))
	}
	return append(dst, ']')
}

// MarshalJSON implements encoding/json.Marshaler with AppendJSON.
func (a Uint8Array) MarshalJSON() ([]byte, error) { return a.AppendJSON(nil), nil }

// Uint16Array is a view of a count= array of win:UInt16 (2-byte little-endian
// elements on the wire).
//
// An array view aliases the payload's bytes: it is valid only while the
// payload buffer is, and it changes if that buffer is reused. AppendTo copies
// the elements out. The zero value is an empty array.
type Uint16Array struct {
	b []byte // len a multiple of 2
}

// MakeUint16Array wraps raw wire bytes without copying them. Trailing bytes that
// do not make a whole element are ignored. The view aliases raw.
func MakeUint16Array(raw []byte) Uint16Array {
	n := len(raw) &^ 1
	return Uint16Array{raw[:n:n]}
}

// Uint16ArrayOf returns an array holding v, encoded for the wire. It allocates; it
// is meant for building payloads.
func Uint16ArrayOf(v ...uint16) Uint16Array {
	b := make([]byte, 0, len(v)*2)
	for _, v := range v {
		b = binary.LittleEndian.AppendUint16(b, v)
	}
	return Uint16Array{b}
}

// Len returns the number of elements.
func (a Uint16Array) Len() int { return len(a.b) >> 1 }

// At returns the i'th element. It panics, as a slice index does, when i is out
// of range.
func (a Uint16Array) At(i int) uint16 {
	if uint(i) >= uint(a.Len()) {
		_ = a.b[:a.Len()][i] // panics as a slice index does
	}
	b := a.b[i*2 : i*2+2]
	return binary.LittleEndian.Uint16(b)
}

// All returns an iterator over the index and value of each element.
func (a Uint16Array) All() iter.Seq2[int, uint16] {
	return func(yield func(int, uint16) bool) {
		for i := range a.Len() {
			if !yield(i, a.At(i)) {
				return
			}
		}
	}
}

// AppendTo appends the elements to dst and returns the extended slice.
func (a Uint16Array) AppendTo(dst []uint16) []uint16 {
	dst = slices.Grow(dst, a.Len())
	for b := a.b; len(b) >= 2; b = b[2:] {
		dst = append(dst, binary.LittleEndian.Uint16(b))
	}
	return dst
}

// Equal reports whether a and o hold the same elements. It lets github.com/google/go-cmp
// compare array views without options.
func (a Uint16Array) Equal(o Uint16Array) bool {
	return bytes.Equal(a.b, o.b)
}

// AppendWire appends the array's wire bytes, its raw bytes unchanged. ptrSize
// is ignored: it matters only for PointerArray.
func (a Uint16Array) AppendWire(dst []byte, ptrSize int) []byte { return append(dst, a.b...) }

// WireBytes returns the raw wire bytes. The slice aliases the payload; its
// capacity is its length.
func (a Uint16Array) WireBytes() []byte { return a.b }

// String formats the elements as fmt formats a slice of them, [1 2 3]. It
// allocates.
func (a Uint16Array) String() string {
	return fmt.Sprint(a.AppendTo(nil))
}

// AppendJSON appends a as a JSON array. It does not allocate when dst has
// room.
func (a Uint16Array) AppendJSON(dst []byte) []byte {
	dst = append(dst, '[')
	for b := a.b; len(b) >= 2; b = b[2:] {
		if len(b) < len(a.b) {
			dst = append(dst, ',')
		}
		v := binary.LittleEndian.Uint16(b)
		dst = AppendJSONUint(dst, uint64(v))
	}
	return append(dst, ']')
}

// MarshalJSON implements encoding/json.Marshaler with AppendJSON.
func (a Uint16Array) MarshalJSON() ([]byte, error) { return a.AppendJSON(nil), nil }

// Uint32Array is a view of a count= array of win:UInt32 (4-byte little-endian
// elements on the wire).
//
// An array view aliases the payload's bytes: it is valid only while the
// payload buffer is, and it changes if that buffer is reused. AppendTo copies
// the elements out. The zero value is an empty array.
type Uint32Array struct {
	b []byte // len a multiple of 4
}

// MakeUint32Array wraps raw wire bytes without copying them. Trailing bytes that
// do not make a whole element are ignored. The view aliases raw.
func MakeUint32Array(raw []byte) Uint32Array {
	n := len(raw) &^ 3
	return Uint32Array{raw[:n:n]}
}

// Uint32ArrayOf returns an array holding v, encoded for the wire. It allocates; it
// is meant for building payloads.
func Uint32ArrayOf(v ...uint32) Uint32Array {
	b := make([]byte, 0, len(v)*4)
	for _, v := range v {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	return Uint32Array{b}
}

// Len returns the number of elements.
func (a Uint32Array) Len() int { return len(a.b) >> 2 }

// At returns the i'th element. It panics, as a slice index does, when i is out
// of range.
func (a Uint32Array) At(i int) uint32 {
	if uint(i) >= uint(a.Len()) {
		_ = a.b[:a.Len()][i] // panics as a slice index does
	}
	b := a.b[i*4 : i*4+4]
	return binary.LittleEndian.Uint32(b)
}

// All returns an iterator over the index and value of each element.
func (a Uint32Array) All() iter.Seq2[int, uint32] {
	return func(yield func(int, uint32) bool) {
		for i := range a.Len() {
			if !yield(i, a.At(i)) {
				return
			}
		}
	}
}

// AppendTo appends the elements to dst and returns the extended slice.
func (a Uint32Array) AppendTo(dst []uint32) []uint32 {
	dst = slices.Grow(dst, a.Len())
	for b := a.b; len(b) >= 4; b = b[4:] {
		dst = append(dst, binary.LittleEndian.Uint32(b))
	}
	return dst
}

// Equal reports whether a and o hold the same elements. It lets github.com/google/go-cmp
// compare array views without options.
func (a Uint32Array) Equal(o Uint32Array) bool {
	return bytes.Equal(a.b, o.b)
}

// AppendWire appends the array's wire bytes, its raw bytes unchanged. ptrSize
// is ignored: it matters only for PointerArray.
func (a Uint32Array) AppendWire(dst []byte, ptrSize int) []byte { return append(dst, a.b...) }

// WireBytes returns the raw wire bytes. The slice aliases the payload; its
// capacity is its length.
func (a Uint32Array) WireBytes() []byte { return a.b }

// String formats the elements as fmt formats a slice of them, [1 2 3]. It
// allocates.
func (a Uint32Array) String() string {
	return fmt.Sprint(a.AppendTo(nil))
}

// AppendJSON appends a as a JSON array. It does not allocate when dst has
// room.
func (a Uint32Array) AppendJSON(dst []byte) []byte {
	dst = append(dst, '[')
	for b := a.b; len(b) >= 4; b = b[4:] {
		if len(b) < len(a.b) {
			dst = append(dst, ',')
		}
		v := binary.LittleEndian.Uint32(b)
		dst = AppendJSONUint(dst, uint64(v))
	}
	return append(dst, ']')
}

// AppendJSONHex appends a as a JSON array of quoted lower-case hex strings,
// ["0x1f","0x0"], for fields whose outType is win:HexInt32 or win:HexInt64.
// It does not allocate when dst has room.
func (a Uint32Array) AppendJSONHex(dst []byte) []byte {
	dst = append(dst, '[')
	for b := a.b; len(b) >= 4; b = b[4:] {
		if len(b) < len(a.b) {
			dst = append(dst, ',')
		}
		dst = AppendJSONHex(dst, uint64(binary.LittleEndian.Uint32(b)))
	}
	return append(dst, ']')
}

// MarshalJSON implements encoding/json.Marshaler with AppendJSON.
func (a Uint32Array) MarshalJSON() ([]byte, error) { return a.AppendJSON(nil), nil }

// Uint64Array is a view of a count= array of win:UInt64 (8-byte little-endian
// elements on the wire).
//
// An array view aliases the payload's bytes: it is valid only while the
// payload buffer is, and it changes if that buffer is reused. AppendTo copies
// the elements out. The zero value is an empty array.
type Uint64Array struct {
	b []byte // len a multiple of 8
}

// MakeUint64Array wraps raw wire bytes without copying them. Trailing bytes that
// do not make a whole element are ignored. The view aliases raw.
func MakeUint64Array(raw []byte) Uint64Array {
	n := len(raw) &^ 7
	return Uint64Array{raw[:n:n]}
}

// Uint64ArrayOf returns an array holding v, encoded for the wire. It allocates; it
// is meant for building payloads.
func Uint64ArrayOf(v ...uint64) Uint64Array {
	b := make([]byte, 0, len(v)*8)
	for _, v := range v {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return Uint64Array{b}
}

// Len returns the number of elements.
func (a Uint64Array) Len() int { return len(a.b) >> 3 }

// At returns the i'th element. It panics, as a slice index does, when i is out
// of range.
func (a Uint64Array) At(i int) uint64 {
	if uint(i) >= uint(a.Len()) {
		_ = a.b[:a.Len()][i] // panics as a slice index does
	}
	b := a.b[i*8 : i*8+8]
	return binary.LittleEndian.Uint64(b)
}

// All returns an iterator over the index and value of each element.
func (a Uint64Array) All() iter.Seq2[int, uint64] {
	return func(yield func(int, uint64) bool) {
		for i := range a.Len() {
			if !yield(i, a.At(i)) {
				return
			}
		}
	}
}

// AppendTo appends the elements to dst and returns the extended slice.
func (a Uint64Array) AppendTo(dst []uint64) []uint64 {
	dst = slices.Grow(dst, a.Len())
	for b := a.b; len(b) >= 8; b = b[8:] {
		dst = append(dst, binary.LittleEndian.Uint64(b))
	}
	return dst
}

// Equal reports whether a and o hold the same elements. It lets github.com/google/go-cmp
// compare array views without options.
func (a Uint64Array) Equal(o Uint64Array) bool {
	return bytes.Equal(a.b, o.b)
}

// AppendWire appends the array's wire bytes, its raw bytes unchanged. ptrSize
// is ignored: it matters only for PointerArray.
func (a Uint64Array) AppendWire(dst []byte, ptrSize int) []byte { return append(dst, a.b...) }

// WireBytes returns the raw wire bytes. The slice aliases the payload; its
// capacity is its length.
func (a Uint64Array) WireBytes() []byte { return a.b }

// String formats the elements as fmt formats a slice of them, [1 2 3]. It
// allocates.
func (a Uint64Array) String() string {
	return fmt.Sprint(a.AppendTo(nil))
}

// AppendJSON appends a as a JSON array. It does not allocate when dst has
// room.
func (a Uint64Array) AppendJSON(dst []byte) []byte {
	dst = append(dst, '[')
	for b := a.b; len(b) >= 8; b = b[8:] {
		if len(b) < len(a.b) {
			dst = append(dst, ',')
		}
		v := binary.LittleEndian.Uint64(b)
		dst = AppendJSONUint(dst, v)
	}
	return append(dst, ']')
}

// AppendJSONHex appends a as a JSON array of quoted lower-case hex strings,
// ["0x1f","0x0"], for fields whose outType is win:HexInt32 or win:HexInt64.
// It does not allocate when dst has room.
func (a Uint64Array) AppendJSONHex(dst []byte) []byte {
	dst = append(dst, '[')
	for b := a.b; len(b) >= 8; b = b[8:] {
		if len(b) < len(a.b) {
			dst = append(dst, ',')
		}
		dst = AppendJSONHex(dst, uint64(binary.LittleEndian.Uint64(b)))
	}
	return append(dst, ']')
}

// MarshalJSON implements encoding/json.Marshaler with AppendJSON.
func (a Uint64Array) MarshalJSON() ([]byte, error) { return a.AppendJSON(nil), nil }

// Int32Array is a view of a count= array of win:Int32 (4-byte little-endian
// elements on the wire).
//
// An array view aliases the payload's bytes: it is valid only while the
// payload buffer is, and it changes if that buffer is reused. AppendTo copies
// the elements out. The zero value is an empty array.
type Int32Array struct {
	b []byte // len a multiple of 4
}

// MakeInt32Array wraps raw wire bytes without copying them. Trailing bytes that
// do not make a whole element are ignored. The view aliases raw.
func MakeInt32Array(raw []byte) Int32Array {
	n := len(raw) &^ 3
	return Int32Array{raw[:n:n]}
}

// Int32ArrayOf returns an array holding v, encoded for the wire. It allocates; it
// is meant for building payloads.
func Int32ArrayOf(v ...int32) Int32Array {
	b := make([]byte, 0, len(v)*4)
	for _, v := range v {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return Int32Array{b}
}

// Len returns the number of elements.
func (a Int32Array) Len() int { return len(a.b) >> 2 }

// At returns the i'th element. It panics, as a slice index does, when i is out
// of range.
func (a Int32Array) At(i int) int32 {
	if uint(i) >= uint(a.Len()) {
		_ = a.b[:a.Len()][i] // panics as a slice index does
	}
	b := a.b[i*4 : i*4+4]
	return int32(binary.LittleEndian.Uint32(b))
}

// All returns an iterator over the index and value of each element.
func (a Int32Array) All() iter.Seq2[int, int32] {
	return func(yield func(int, int32) bool) {
		for i := range a.Len() {
			if !yield(i, a.At(i)) {
				return
			}
		}
	}
}

// AppendTo appends the elements to dst and returns the extended slice.
func (a Int32Array) AppendTo(dst []int32) []int32 {
	dst = slices.Grow(dst, a.Len())
	for b := a.b; len(b) >= 4; b = b[4:] {
		dst = append(dst, int32(binary.LittleEndian.Uint32(b)))
	}
	return dst
}

// Equal reports whether a and o hold the same elements. It lets github.com/google/go-cmp
// compare array views without options.
func (a Int32Array) Equal(o Int32Array) bool {
	return bytes.Equal(a.b, o.b)
}

// AppendWire appends the array's wire bytes, its raw bytes unchanged. ptrSize
// is ignored: it matters only for PointerArray.
func (a Int32Array) AppendWire(dst []byte, ptrSize int) []byte { return append(dst, a.b...) }

// WireBytes returns the raw wire bytes. The slice aliases the payload; its
// capacity is its length.
func (a Int32Array) WireBytes() []byte { return a.b }

// String formats the elements as fmt formats a slice of them, [1 2 3]. It
// allocates.
func (a Int32Array) String() string {
	return fmt.Sprint(a.AppendTo(nil))
}

// AppendJSON appends a as a JSON array. It does not allocate when dst has
// room.
func (a Int32Array) AppendJSON(dst []byte) []byte {
	dst = append(dst, '[')
	for b := a.b; len(b) >= 4; b = b[4:] {
		if len(b) < len(a.b) {
			dst = append(dst, ',')
		}
		v := int32(binary.LittleEndian.Uint32(b))
		dst = AppendJSONInt(dst, int64(v))
	}
	return append(dst, ']')
}

// MarshalJSON implements encoding/json.Marshaler with AppendJSON.
func (a Int32Array) MarshalJSON() ([]byte, error) { return a.AppendJSON(nil), nil }

// Int64Array is a view of a count= array of win:Int64 (8-byte little-endian
// elements on the wire).
//
// An array view aliases the payload's bytes: it is valid only while the
// payload buffer is, and it changes if that buffer is reused. AppendTo copies
// the elements out. The zero value is an empty array.
type Int64Array struct {
	b []byte // len a multiple of 8
}

// MakeInt64Array wraps raw wire bytes without copying them. Trailing bytes that
// do not make a whole element are ignored. The view aliases raw.
func MakeInt64Array(raw []byte) Int64Array {
	n := len(raw) &^ 7
	return Int64Array{raw[:n:n]}
}

// Int64ArrayOf returns an array holding v, encoded for the wire. It allocates; it
// is meant for building payloads.
func Int64ArrayOf(v ...int64) Int64Array {
	b := make([]byte, 0, len(v)*8)
	for _, v := range v {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	return Int64Array{b}
}

// Len returns the number of elements.
func (a Int64Array) Len() int { return len(a.b) >> 3 }

// At returns the i'th element. It panics, as a slice index does, when i is out
// of range.
func (a Int64Array) At(i int) int64 {
	if uint(i) >= uint(a.Len()) {
		_ = a.b[:a.Len()][i] // panics as a slice index does
	}
	b := a.b[i*8 : i*8+8]
	return int64(binary.LittleEndian.Uint64(b))
}

// All returns an iterator over the index and value of each element.
func (a Int64Array) All() iter.Seq2[int, int64] {
	return func(yield func(int, int64) bool) {
		for i := range a.Len() {
			if !yield(i, a.At(i)) {
				return
			}
		}
	}
}

// AppendTo appends the elements to dst and returns the extended slice.
func (a Int64Array) AppendTo(dst []int64) []int64 {
	dst = slices.Grow(dst, a.Len())
	for b := a.b; len(b) >= 8; b = b[8:] {
		dst = append(dst, int64(binary.LittleEndian.Uint64(b)))
	}
	return dst
}

// Equal reports whether a and o hold the same elements. It lets github.com/google/go-cmp
// compare array views without options.
func (a Int64Array) Equal(o Int64Array) bool {
	return bytes.Equal(a.b, o.b)
}

// AppendWire appends the array's wire bytes, its raw bytes unchanged. ptrSize
// is ignored: it matters only for PointerArray.
func (a Int64Array) AppendWire(dst []byte, ptrSize int) []byte { return append(dst, a.b...) }

// WireBytes returns the raw wire bytes. The slice aliases the payload; its
// capacity is its length.
func (a Int64Array) WireBytes() []byte { return a.b }

// String formats the elements as fmt formats a slice of them, [1 2 3]. It
// allocates.
func (a Int64Array) String() string {
	return fmt.Sprint(a.AppendTo(nil))
}

// AppendJSON appends a as a JSON array. It does not allocate when dst has
// room.
func (a Int64Array) AppendJSON(dst []byte) []byte {
	dst = append(dst, '[')
	for b := a.b; len(b) >= 8; b = b[8:] {
		if len(b) < len(a.b) {
			dst = append(dst, ',')
		}
		v := int64(binary.LittleEndian.Uint64(b))
		dst = AppendJSONInt(dst, v)
	}
	return append(dst, ']')
}

// MarshalJSON implements encoding/json.Marshaler with AppendJSON.
func (a Int64Array) MarshalJSON() ([]byte, error) { return a.AppendJSON(nil), nil }

// Float64Array is a view of a count= array of win:Double (8-byte little-endian
// elements on the wire).
//
// An array view aliases the payload's bytes: it is valid only while the
// payload buffer is, and it changes if that buffer is reused. AppendTo copies
// the elements out. The zero value is an empty array.
type Float64Array struct {
	b []byte // len a multiple of 8
}

// MakeFloat64Array wraps raw wire bytes without copying them. Trailing bytes that
// do not make a whole element are ignored. The view aliases raw.
func MakeFloat64Array(raw []byte) Float64Array {
	n := len(raw) &^ 7
	return Float64Array{raw[:n:n]}
}

// Float64ArrayOf returns an array holding v, encoded for the wire. It allocates; it
// is meant for building payloads.
func Float64ArrayOf(v ...float64) Float64Array {
	b := make([]byte, 0, len(v)*8)
	for _, v := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return Float64Array{b}
}

// Len returns the number of elements.
func (a Float64Array) Len() int { return len(a.b) >> 3 }

// At returns the i'th element. It panics, as a slice index does, when i is out
// of range.
func (a Float64Array) At(i int) float64 {
	if uint(i) >= uint(a.Len()) {
		_ = a.b[:a.Len()][i] // panics as a slice index does
	}
	b := a.b[i*8 : i*8+8]
	return math.Float64frombits(binary.LittleEndian.Uint64(b))
}

// All returns an iterator over the index and value of each element.
func (a Float64Array) All() iter.Seq2[int, float64] {
	return func(yield func(int, float64) bool) {
		for i := range a.Len() {
			if !yield(i, a.At(i)) {
				return
			}
		}
	}
}

// AppendTo appends the elements to dst and returns the extended slice.
func (a Float64Array) AppendTo(dst []float64) []float64 {
	dst = slices.Grow(dst, a.Len())
	for b := a.b; len(b) >= 8; b = b[8:] {
		dst = append(dst, math.Float64frombits(binary.LittleEndian.Uint64(b)))
	}
	return dst
}

// Equal reports whether a and o hold the same elements, compared bit for bit
// (so a NaN equals itself and -0 differs from +0). It lets github.com/google/go-cmp
// compare array views without options.
func (a Float64Array) Equal(o Float64Array) bool {
	return bytes.Equal(a.b, o.b)
}

// AppendWire appends the array's wire bytes, its raw bytes unchanged. ptrSize
// is ignored: it matters only for PointerArray.
func (a Float64Array) AppendWire(dst []byte, ptrSize int) []byte { return append(dst, a.b...) }

// WireBytes returns the raw wire bytes. The slice aliases the payload; its
// capacity is its length.
func (a Float64Array) WireBytes() []byte { return a.b }

// String formats the elements as fmt formats a slice of them, [1 2 3]. It
// allocates.
func (a Float64Array) String() string {
	return fmt.Sprint(a.AppendTo(nil))
}

// AppendJSON appends a as a JSON array. It does not allocate when dst has
// room.
func (a Float64Array) AppendJSON(dst []byte) []byte {
	dst = append(dst, '[')
	for b := a.b; len(b) >= 8; b = b[8:] {
		if len(b) < len(a.b) {
			dst = append(dst, ',')
		}
		v := math.Float64frombits(binary.LittleEndian.Uint64(b))
		dst = AppendJSONFloat(dst, v)
	}
	return append(dst, ']')
}

// MarshalJSON implements encoding/json.Marshaler with AppendJSON.
func (a Float64Array) MarshalJSON() ([]byte, error) { return a.AppendJSON(nil), nil }

// BoolArray is a view of a count= array of win:Boolean (4-byte little-endian
// elements on the wire; any non-zero value is true).
//
// An array view aliases the payload's bytes: it is valid only while the
// payload buffer is, and it changes if that buffer is reused. AppendTo copies
// the elements out. The zero value is an empty array.
type BoolArray struct {
	b []byte // len a multiple of 4
}

// MakeBoolArray wraps raw wire bytes without copying them. Trailing bytes that
// do not make a whole element are ignored. The view aliases raw.
func MakeBoolArray(raw []byte) BoolArray {
	n := len(raw) &^ 3
	return BoolArray{raw[:n:n]}
}

// BoolArrayOf returns an array holding v, encoded for the wire. It allocates; it
// is meant for building payloads.
func BoolArrayOf(v ...bool) BoolArray {
	b := make([]byte, 0, len(v)*4)
	for _, v := range v {
		b = AppendBool(b, v)
	}
	return BoolArray{b}
}

// Len returns the number of elements.
func (a BoolArray) Len() int { return len(a.b) >> 2 }

// At returns the i'th element. It panics, as a slice index does, when i is out
// of range.
func (a BoolArray) At(i int) bool {
	if uint(i) >= uint(a.Len()) {
		_ = a.b[:a.Len()][i] // panics as a slice index does
	}
	b := a.b[i*4 : i*4+4]
	return binary.LittleEndian.Uint32(b) != 0
}

// All returns an iterator over the index and value of each element.
func (a BoolArray) All() iter.Seq2[int, bool] {
	return func(yield func(int, bool) bool) {
		for i := range a.Len() {
			if !yield(i, a.At(i)) {
				return
			}
		}
	}
}

// AppendTo appends the elements to dst and returns the extended slice.
func (a BoolArray) AppendTo(dst []bool) []bool {
	dst = slices.Grow(dst, a.Len())
	for b := a.b; len(b) >= 4; b = b[4:] {
		dst = append(dst, binary.LittleEndian.Uint32(b) != 0)
	}
	return dst
}

// Equal reports whether a and o hold the same elements, as booleans (any
// non-zero wire value is true). It lets github.com/google/go-cmp
// compare array views without options.
func (a BoolArray) Equal(o BoolArray) bool {
	if len(a.b) != len(o.b) {
		return false
	}
	for i := 0; i+4 <= len(a.b) && i+4 <= len(o.b); i += 4 {
		if (binary.LittleEndian.Uint32(a.b[i:]) != 0) != (binary.LittleEndian.Uint32(o.b[i:]) != 0) {
			return false
		}
	}
	return true
}

// AppendWire appends the array's wire bytes, its raw bytes unchanged. ptrSize
// is ignored: it matters only for PointerArray.
func (a BoolArray) AppendWire(dst []byte, ptrSize int) []byte { return append(dst, a.b...) }

// WireBytes returns the raw wire bytes. The slice aliases the payload; its
// capacity is its length.
func (a BoolArray) WireBytes() []byte { return a.b }

// String formats the elements as fmt formats a slice of them, [1 2 3]. It
// allocates.
func (a BoolArray) String() string {
	return fmt.Sprint(a.AppendTo(nil))
}

// AppendJSON appends a as a JSON array. It does not allocate when dst has
// room.
func (a BoolArray) AppendJSON(dst []byte) []byte {
	dst = append(dst, '[')
	for b := a.b; len(b) >= 4; b = b[4:] {
		if len(b) < len(a.b) {
			dst = append(dst, ',')
		}
		v := binary.LittleEndian.Uint32(b) != 0
		dst = AppendJSONBool(dst, v)
	}
	return append(dst, ']')
}

// MarshalJSON implements encoding/json.Marshaler with AppendJSON.
func (a BoolArray) MarshalJSON() ([]byte, error) { return a.AppendJSON(nil), nil }

// GUIDArray is a view of a count= array of win:GUID (16-byte elements in the
// Windows layout GUID describes).
//
// An array view aliases the payload's bytes: it is valid only while the
// payload buffer is, and it changes if that buffer is reused. AppendTo copies
// the elements out. The zero value is an empty array.
type GUIDArray struct {
	b []byte // len a multiple of 16
}

// MakeGUIDArray wraps raw wire bytes without copying them. Trailing bytes that
// do not make a whole element are ignored. The view aliases raw.
func MakeGUIDArray(raw []byte) GUIDArray {
	n := len(raw) &^ 15
	return GUIDArray{raw[:n:n]}
}

// GUIDArrayOf returns an array holding v, encoded for the wire. It allocates; it
// is meant for building payloads.
func GUIDArrayOf(v ...GUID) GUIDArray {
	b := make([]byte, 0, len(v)*16)
	for _, v := range v {
		b = append(b, v[:]...)
	}
	return GUIDArray{b}
}

// Len returns the number of elements.
func (a GUIDArray) Len() int { return len(a.b) >> 4 }

// At returns the i'th element. It panics, as a slice index does, when i is out
// of range.
func (a GUIDArray) At(i int) GUID {
	if uint(i) >= uint(a.Len()) {
		_ = a.b[:a.Len()][i] // panics as a slice index does
	}
	b := a.b[i*16 : i*16+16]
	return GUID(b[:16])
}

// All returns an iterator over the index and value of each element.
func (a GUIDArray) All() iter.Seq2[int, GUID] {
	return func(yield func(int, GUID) bool) {
		for i := range a.Len() {
			if !yield(i, a.At(i)) {
				return
			}
		}
	}
}

// AppendTo appends the elements to dst and returns the extended slice.
func (a GUIDArray) AppendTo(dst []GUID) []GUID {
	dst = slices.Grow(dst, a.Len())
	for b := a.b; len(b) >= 16; b = b[16:] {
		dst = append(dst, GUID(b[:16]))
	}
	return dst
}

// Equal reports whether a and o hold the same elements. It lets github.com/google/go-cmp
// compare array views without options.
func (a GUIDArray) Equal(o GUIDArray) bool {
	return bytes.Equal(a.b, o.b)
}

// AppendWire appends the array's wire bytes, its raw bytes unchanged. ptrSize
// is ignored: it matters only for PointerArray.
func (a GUIDArray) AppendWire(dst []byte, ptrSize int) []byte { return append(dst, a.b...) }

// WireBytes returns the raw wire bytes. The slice aliases the payload; its
// capacity is its length.
func (a GUIDArray) WireBytes() []byte { return a.b }

// String formats the elements as fmt formats a slice of them, [1 2 3]. It
// allocates.
func (a GUIDArray) String() string {
	return fmt.Sprint(a.AppendTo(nil))
}

// AppendJSON appends a as a JSON array. It does not allocate when dst has
// room.
func (a GUIDArray) AppendJSON(dst []byte) []byte {
	dst = append(dst, '[')
	for b := a.b; len(b) >= 16; b = b[16:] {
		if len(b) < len(a.b) {
			dst = append(dst, ',')
		}
		v := GUID(b[:16])
		dst = v.AppendJSON(dst)
	}
	return append(dst, ']')
}

// MarshalJSON implements encoding/json.Marshaler with AppendJSON.
func (a GUIDArray) MarshalJSON() ([]byte, error) { return a.AppendJSON(nil), nil }

// PointerArray is a view of a count= array of win:Pointer: 4-byte or 8-byte
// little-endian elements on the wire, depending on the pointer size of the
// event. Values are uint64 whatever the size.
//
// An array view aliases the payload's bytes: it is valid only while the
// payload buffer is, and it changes if that buffer is reused. AppendTo copies
// the elements out. The zero value is an empty array.
type PointerArray struct {
	b    []byte // len a multiple of the element size
	is32 bool   // 4-byte elements; the zero value has 8-byte ones
}

// MakePointerArray wraps raw wire bytes of ptrSize-byte elements without
// copying them. ptrSize 4 means 4-byte elements; any other value means 8
// (decoders reject sizes other than 4 and 8 with ErrPointerSize first).
// Trailing bytes that do not make a whole element are ignored. The view
// aliases raw.
func MakePointerArray(raw []byte, ptrSize int) PointerArray {
	if ptrSize == 4 {
		n := len(raw) &^ 3
		return PointerArray{raw[:n:n], true}
	}
	n := len(raw) &^ 7
	return PointerArray{raw[:n:n], false}
}

// PointerArrayOf returns an array holding v as ptrSize-byte elements (4, or
// else 8); with 4, values are truncated to 32 bits. It allocates; it is meant
// for building payloads.
func PointerArrayOf(ptrSize int, v ...uint64) PointerArray {
	if ptrSize != 4 {
		ptrSize = 8
	}
	b := make([]byte, 0, len(v)*ptrSize)
	for _, v := range v {
		b = AppendPtr(b, v, ptrSize)
	}
	return PointerArray{b, ptrSize == 4}
}

// PtrSize returns the size of the elements on the wire, 4 or 8.
func (a PointerArray) PtrSize() int {
	if a.is32 {
		return 4
	}
	return 8
}

// Len returns the number of elements.
func (a PointerArray) Len() int {
	if a.is32 {
		return len(a.b) >> 2
	}
	return len(a.b) >> 3
}

// At returns the i'th element. It panics, as a slice index does, when i is out
// of range.
func (a PointerArray) At(i int) uint64 {
	if uint(i) >= uint(a.Len()) {
		_ = a.b[:a.Len()][i] // panics as a slice index does
	}
	if a.is32 {
		return uint64(binary.LittleEndian.Uint32(a.b[i*4 : i*4+4]))
	}
	return binary.LittleEndian.Uint64(a.b[i*8 : i*8+8])
}

// All returns an iterator over the index and value of each element.
func (a PointerArray) All() iter.Seq2[int, uint64] {
	return func(yield func(int, uint64) bool) {
		for i := range a.Len() {
			if !yield(i, a.At(i)) {
				return
			}
		}
	}
}

// AppendTo appends the elements to dst and returns the extended slice.
func (a PointerArray) AppendTo(dst []uint64) []uint64 {
	dst = slices.Grow(dst, a.Len())
	if a.is32 {
		for b := a.b; len(b) >= 4; b = b[4:] {
			dst = append(dst, uint64(binary.LittleEndian.Uint32(b)))
		}
		return dst
	}
	for b := a.b; len(b) >= 8; b = b[8:] {
		dst = append(dst, binary.LittleEndian.Uint64(b))
	}
	return dst
}

// Equal reports whether a and o hold the same values, whatever their
// element sizes: a 4-byte and an 8-byte array with the same values are
// Equal. It lets github.com/google/go-cmp compare array views without
// options.
func (a PointerArray) Equal(o PointerArray) bool {
	if a.is32 == o.is32 {
		return bytes.Equal(a.b, o.b)
	}
	n := a.Len()
	if n != o.Len() {
		return false
	}
	for i := range n {
		if a.At(i) != o.At(i) {
			return false
		}
	}
	return true
}

// AppendWire appends the array's wire bytes for pointers of ptrSize bytes
// (4, or else 8), converting from the view's own size when they differ;
// converting to 4 bytes truncates values to 32 bits.
func (a PointerArray) AppendWire(dst []byte, ptrSize int) []byte {
	if (ptrSize == 4) == a.is32 {
		return append(dst, a.b...)
	}
	dst = slices.Grow(dst, a.Len()*ptrSize)
	for i := range a.Len() {
		dst = AppendPtr(dst, a.At(i), ptrSize)
	}
	return dst
}

// WireBytes returns the raw wire bytes. The slice aliases the payload; its
// capacity is its length.
func (a PointerArray) WireBytes() []byte { return a.b }

// String formats the values like a slice, in hex: [0x7ffd1234 0x0]. It
// allocates.
func (a PointerArray) String() string {
	b := make([]byte, 0, 2+a.Len()*19)
	b = append(b, '[')
	for i := range a.Len() {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, '0', 'x')
		b = strconv.AppendUint(b, a.At(i), 16)
	}
	return string(append(b, ']'))
}

// AppendJSON appends a as a JSON array of quoted lower-case hex strings,
// ["0x7ffd1234","0x0"]. It does not allocate when dst has room.
func (a PointerArray) AppendJSON(dst []byte) []byte {
	dst = append(dst, '[')
	for i := range a.Len() {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendJSONHex(dst, a.At(i))
	}
	return append(dst, ']')
}

// AppendJSONHex is AppendJSON: pointers are always written in hex.
func (a PointerArray) AppendJSONHex(dst []byte) []byte { return a.AppendJSON(dst) }

// MarshalJSON implements encoding/json.Marshaler with AppendJSON.
func (a PointerArray) MarshalJSON() ([]byte, error) { return a.AppendJSON(nil), nil }
