package clrimpl

import "encoding/binary"

// What generated encoders (the Encode methods) call to append a payload's
// wire form, little-endian. For generated code only (see the package doc).

// AppendPtr appends v as a win:Pointer of ptrSize bytes: the 4-byte form
// truncates v to uint32; any size other than 4 writes 8 bytes.
//
// For generated code only.
func AppendPtr(dst []byte, v uint64, ptrSize int) []byte {
	if ptrSize == 4 {
		return binary.LittleEndian.AppendUint32(dst, uint32(v))
	}
	return binary.LittleEndian.AppendUint64(dst, v)
}

// AppendUTF16Z appends s's UTF-16LE bytes and a 2-byte NUL terminator.
//
// For generated code only.
func AppendUTF16Z(dst []byte, s UTF16) []byte {
	return append(append(dst, s.b...), 0, 0)
}

// AppendAnsiZ appends s's bytes and a NUL terminator.
//
// For generated code only.
func AppendAnsiZ(dst []byte, s Ansi) []byte {
	return append(append(dst, s.b...), 0)
}

// AppendBool appends a win:Boolean: 4 bytes, 1 or 0.
//
// For generated code only.
func AppendBool(dst []byte, v bool) []byte {
	var u byte
	if v {
		u = 1
	}
	return append(dst, u, 0, 0, 0)
}

// AppendGUID appends g's 16 wire bytes.
//
// For generated code only.
func AppendGUID(dst []byte, g GUID) []byte {
	return append(dst, g[:]...)
}
