package clrimpl

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// Wire helpers called by the generated decoders and encoders. All payload
// data is little-endian. Every read helper is safe for any input: it either
// checks bounds itself or documents that its caller has.

// ReadUTF16Z reads a NUL-terminated win:UnicodeString that starts at off.
// The terminator is a zero UTF-16 code unit at an even distance from off: a
// zero byte pair straddling two code units (say 'A' then U+0100, bytes 41 00
// 00 01) does not end the string. It returns the string without its
// terminator, aliasing b, and the offset just past the terminator. ok is
// false when there is no terminator or off is outside [0, len(b)].
func ReadUTF16Z(b []byte, off int) (s UTF16, next int, ok bool) {
	if off < 0 || off > len(b) {
		return UTF16{}, 0, false
	}
	const ones, high = 0x0001000100010001, 0x8000800080008000
	p := b[off:]
	// Whole 16-byte blocks (eight code units) first: vectorised where the
	// platform allows (indexZeroUnit), then the tail.
	if len(p) >= 16 {
		if i := indexZeroUnit(p); i >= 0 {
			i += off
			return UTF16{b[off:i:i]}, i + 2, true
		}
		p = p[len(p)&^15:]
	}
	// The lowest set bit of (v - 0x0001…) &^ v & 0x8000… marks the first
	// zero 16-bit lane of v; lanes above it may be marked falsely by the
	// borrow, never below.
	if len(p) >= 8 {
		v := binary.LittleEndian.Uint64(p)
		if t := (v - ones) &^ v & high; t != 0 {
			i := len(b) - len(p) + bits.TrailingZeros64(t)>>4<<1
			return UTF16{b[off:i:i]}, i + 2, true
		}
		p = p[8:]
	}
	for ; len(p) >= 2; p = p[2:] {
		if p[0] == 0 && p[1] == 0 {
			i := len(b) - len(p)
			return UTF16{b[off:i:i]}, i + 2, true
		}
	}
	return UTF16{}, 0, false
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

// ReadAnsiZ reads a NUL-terminated win:AnsiString that starts at off. It
// returns the string without its terminator, aliasing b, and the offset just
// past the terminator. ok is false when there is no terminator or off is
// outside [0, len(b)].
func ReadAnsiZ(b []byte, off int) (s Ansi, next int, ok bool) {
	if off < 0 || off > len(b) {
		return Ansi{}, 0, false
	}
	n := bytes.IndexByte(b[off:], 0)
	if n < 0 {
		return Ansi{}, 0, false
	}
	end := off + n
	return Ansi{b[off:end:end]}, end + 1, true
}

// ArrayLen returns the byte length count*elemSize of an array of count
// fixed-size elements starting at off, and ok=true when it fits in b:
// off+count*elemSize <= len(b). count comes from the payload and may be
// anything up to 2^64-1; the multiplication cannot overflow here. ok is false
// when off is outside [0, len(b)] or elemSize is not positive. It never
// allocates, so a hostile count costs nothing.
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

// ReadPtr reads a win:Pointer at off: 4 bytes when ptrSize is 4, 8 bytes
// otherwise (decoders reject sizes other than 4 and 8 with ErrPointerSize
// before reading). The caller has checked bounds.
func ReadPtr(b []byte, off int, ptrSize int) uint64 {
	if ptrSize == 4 {
		return uint64(binary.LittleEndian.Uint32(b[off:]))
	}
	return binary.LittleEndian.Uint64(b[off:])
}

// AppendPtr appends v as a win:Pointer of ptrSize bytes: the 4-byte form
// truncates v to uint32; any size other than 4 writes 8 bytes.
func AppendPtr(dst []byte, v uint64, ptrSize int) []byte {
	if ptrSize == 4 {
		return binary.LittleEndian.AppendUint32(dst, uint32(v))
	}
	return binary.LittleEndian.AppendUint64(dst, v)
}

// AppendUTF16Z appends s's UTF-16LE bytes and a 2-byte NUL terminator.
func AppendUTF16Z(dst []byte, s UTF16) []byte {
	return append(append(dst, s.b...), 0, 0)
}

// AppendAnsiZ appends s's bytes and a NUL terminator.
func AppendAnsiZ(dst []byte, s Ansi) []byte {
	return append(append(dst, s.b...), 0)
}

// AppendBool appends a win:Boolean: 4 bytes, 1 or 0.
func AppendBool(dst []byte, v bool) []byte {
	var u byte
	if v {
		u = 1
	}
	return append(dst, u, 0, 0, 0)
}

// ReadBool reads a win:Boolean (4 bytes) at off: any non-zero value is true.
// The caller has checked bounds.
func ReadBool(b []byte, off int) bool {
	return binary.LittleEndian.Uint32(b[off:]) != 0
}

// ReadGUID reads a win:GUID (16 bytes) at off. The caller has checked bounds.
func ReadGUID(b []byte, off int) GUID {
	return GUID(b[off : off+16])
}

// AppendGUID appends g's 16 wire bytes.
func AppendGUID(dst []byte, g GUID) []byte {
	return append(dst, g[:]...)
}

// ValidPtrSize reports whether ptrSize is 4 or 8; decoders return
// ErrPointerSize when it is not.
func ValidPtrSize(ptrSize int) bool {
	return ptrSize == 4 || ptrSize == 8
}
