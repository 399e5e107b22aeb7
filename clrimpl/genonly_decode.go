package clrimpl

import (
	"encoding/binary"
	"math/bits"
	"strconv"
)

// What generated decoders call: the checks and reads of a payload whose
// bounds they have checked or that these check, and the errors they
// return. For generated code only (see the package doc); the types they
// read into (views, GUID) and the errors are for everyone.

// FieldEnd is where a fixed-prefix field ends: bytes plus ptrs pointers.
// Generated decoders list them for the error they return on a short
// payload; the hot path never reads them.
//
// For generated code only.
type FieldEnd struct {
	Name  string // the field
	Bytes int    // its end offset, less the pointer-sized fields before and in it
	Ptrs  int    // pointer-sized fields up to its end
}

// PrefixShort names the first prefix field a payload of have bytes cuts,
// and where that field starts.
//
// For generated code only.
func PrefixShort(have, ptrSize int, ends []FieldEnd) (field string, off int) {
	start := 0
	for _, e := range ends {
		end := e.Bytes + e.Ptrs*ptrSize
		if end > have {
			return e.Name, start
		}
		start = end
	}
	return "", have
}

// ShortPrefix is the error of an event whose payload is shorter than its
// fixed prefix.
//
// For generated code only.
func ShortPrefix(pkg, event string, have, ptrSize int, ends []FieldEnd) error {
	f, off := PrefixShort(have, ptrSize, ends)
	return NewDecodeError(pkg, event, f, off, ErrShortPayload)
}

// ElemPath names a field inside element i of a struct array: "Values[3].Name".
//
// For generated code only.
func ElemPath(field string, i uint64, sub string) string {
	p := field + "[" + strconv.FormatUint(i, 10) + "]"
	if sub != "" {
		p += "." + sub
	}
	return p
}

// NewDecodeError builds a *DecodeError for the generated package pkg.
// Generated decoders call it on their
// error paths; it is kept out of line so the hot path stays small.
//
// For generated code only.
//
//go:noinline
func NewDecodeError(pkg, event, field string, off int, err error) error {
	return &DecodeError{Package: pkg, Event: event, Field: field, Offset: off, Err: err}
}

// UTF16ZEnds finds the terminators of len(ends) consecutive NUL-terminated
// win:UnicodeStrings, the first starting at off, in one pass: string i
// ends at ends[i] (its terminator's offset in b) and string i+1 starts at
// ends[i]+2. It returns how many it found and where the next field starts
// (ends[len(ends)-1]+2); when string n (n < len(ends)) has no terminator,
// or off is outside [0, len(b)], it returns n and the offset where string
// n starts. Generated decoders call it for runs of strings such as
// MethodNamespace, MethodName, MethodSignature:
//
//	var z [3]int
//	n, next := clrimpl.UTF16ZEnds(b, off, z[:])
//	e.MethodNamespace = clrimpl.MakeUTF16(b[off:z[0]:z[0]])
//
// For generated code only.
func UTF16ZEnds(b []byte, off int, ends []int) (n, next int) {
	if uint(off) > uint(len(b)) {
		return 0, off
	}
	next = off
	if n = indexZeroUnits(b[off:], off, ends); n > 0 {
		next = ends[n-1] + 2
	}
	return n, next
}

// ArrayLen returns the byte length count*elemSize of an array of count
// fixed-size elements starting at off, and ok=true when it fits in b:
// off+count*elemSize <= len(b). count comes from the payload and may be
// anything up to 2^64-1; the multiplication cannot overflow here. ok is false
// when off is outside [0, len(b)] or elemSize is not positive. It never
// allocates, so a hostile count costs nothing.
//
// For generated code only.
func ArrayLen(b []byte, off int, count uint64, elemSize int) (n int, ok bool) {
	if off < 0 || off > len(b) || elemSize <= 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(count, uint64(elemSize))
	if hi != 0 || lo > uint64(len(b)-off) {
		return 0, false
	}
	return int(lo), true
}

// ValidPtrSize reports whether ptrSize is 4 or 8; decoders return
// ErrPointerSize when it is not.
//
// For generated code only.
func ValidPtrSize(ptrSize int) bool {
	return ptrSize == 4 || ptrSize == 8
}

// ReadPtr reads a win:Pointer at off: 4 bytes when ptrSize is 4, 8 bytes
// otherwise (decoders reject sizes other than 4 and 8 with ErrPointerSize
// before reading). The caller has checked bounds.
//
// For generated code only.
func ReadPtr(b []byte, off int, ptrSize int) uint64 {
	if ptrSize == 4 {
		return uint64(binary.LittleEndian.Uint32(b[off:]))
	}
	return binary.LittleEndian.Uint64(b[off:])
}

// ReadBool reads a win:Boolean (4 bytes) at off: any non-zero value is true.
// The caller has checked bounds.
//
// For generated code only.
func ReadBool(b []byte, off int) bool {
	return binary.LittleEndian.Uint32(b[off:]) != 0
}

// ReadGUID reads a win:GUID (16 bytes) at off. The caller has checked bounds.
//
// For generated code only.
func ReadGUID(b []byte, off int) GUID {
	return GUID(b[off : off+16])
}
