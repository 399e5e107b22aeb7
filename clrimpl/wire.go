package clrimpl

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// Reading NUL-terminated strings from a payload, for generated decoders and
// for any code that reads payloads by hand or by a description. Both are
// safe for any input. The other wire helpers, which assume the bounds
// checks of generated code, are in genonly_decode.go and
// genonly_encode.go.

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
