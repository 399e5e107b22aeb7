package nettrace

import (
	"encoding/binary"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/clrgo/clrevents/clrimpl"
)

// cursor reads little-endian values from a byte slice. The first read past
// the end (or of a malformed value) sets bad and remembers where; later reads
// return zero values, so a parser can read a whole structure and check once.
type cursor struct {
	b    []byte
	i    int
	bad  bool
	badI int    // index of the failed read
	why  string // what failed, if not a plain short read
}

func (c *cursor) left() int { return len(c.b) - c.i }

func (c *cursor) fail(why string) {
	if !c.bad {
		c.bad = true
		c.badI = c.i
		c.why = why
	}
}

func (c *cursor) need(n int) bool {
	if c.bad {
		return false
	}
	if n < 0 || n > len(c.b)-c.i {
		c.fail("")
		return false
	}
	return true
}

func (c *cursor) u8() uint8 {
	if !c.need(1) {
		return 0
	}
	v := c.b[c.i]
	c.i++
	return v
}

func (c *cursor) u16() uint16 {
	if !c.need(2) {
		return 0
	}
	v := binary.LittleEndian.Uint16(c.b[c.i:])
	c.i += 2
	return v
}

func (c *cursor) u32() uint32 {
	if !c.need(4) {
		return 0
	}
	v := binary.LittleEndian.Uint32(c.b[c.i:])
	c.i += 4
	return v
}

func (c *cursor) u64() uint64 {
	if !c.need(8) {
		return 0
	}
	v := binary.LittleEndian.Uint64(c.b[c.i:])
	c.i += 8
	return v
}

func (c *cursor) guid() clrimpl.GUID {
	var g clrimpl.GUID
	if c.need(16) {
		copy(g[:], c.b[c.i:])
		c.i += 16
	}
	return g
}

func (c *cursor) bytes(n int) []byte {
	if !c.need(n) {
		return nil
	}
	v := c.b[c.i : c.i+n : c.i+n]
	c.i += n
	return v
}

// varu64 reads a LEB128 unsigned integer of at most 10 bytes.
func (c *cursor) varu64() uint64 {
	if c.bad {
		return 0
	}
	if c.i < len(c.b) && c.b[c.i] < 0x80 {
		v := c.b[c.i]
		c.i++
		return uint64(v)
	}
	v, n := uvarint(c.b[c.i:])
	if n <= 0 {
		if n == 0 {
			c.fail("")
		} else {
			c.fail("varint overflows 64 bits")
		}
		return 0
	}
	c.i += n
	return v
}

// varu32 reads a LEB128 unsigned integer that must fit in 32 bits.
func (c *cursor) varu32() uint32 {
	at := c.i
	v := c.varu64()
	if v > 0xFFFFFFFF {
		c.i = at
		c.fail("varint overflows 32 bits")
		return 0
	}
	return uint32(v)
}

// uvarint decodes a LEB128 value; n is the byte count, 0 if b ends first,
// negative if the value overflows 64 bits.
func uvarint(b []byte) (v uint64, n int) {
	var shift uint
	for i, x := range b {
		if i == 10 {
			return 0, -1
		}
		if i == 9 && x > 1 {
			return 0, -1
		}
		v |= uint64(x&0x7f) << shift
		if x < 0x80 {
			return v, i + 1
		}
		shift += 7
	}
	return 0, 0
}

// utf8str reads a varuint32-length-prefixed UTF-8 string (V6).
func (c *cursor) utf8str() string {
	n := c.varu32()
	if c.bad {
		return ""
	}
	b := c.bytes(int(n))
	if c.bad {
		return ""
	}
	return string(b)
}

// utf16z reads a NUL-terminated UTF-16LE string and returns it as UTF-8.
func (c *cursor) utf16z() string {
	if c.bad {
		return ""
	}
	for j := c.i; j+2 <= len(c.b); j += 2 {
		if c.b[j] == 0 && c.b[j+1] == 0 {
			s := decodeUTF16(c.b[c.i:j])
			c.i = j + 2
			return s
		}
	}
	c.fail("string has no terminator")
	return ""
}

// decodeUTF16 converts UTF-16LE bytes (even length) to a UTF-8 string.
func decodeUTF16(b []byte) string {
	ascii := true
	for i := 0; i+1 < len(b); i += 2 {
		if b[i+1] != 0 || b[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		// One allocation, the string's (a byte slice converted would be
		// two).
		var sb strings.Builder
		sb.Grow(len(b) / 2)
		for i := 0; i+1 < len(b); i += 2 {
			sb.WriteByte(b[i])
		}
		return sb.String()
	}
	return string(appendUTF16(nil, b))
}

// appendUTF16 appends the UTF-8 form of UTF-16LE bytes b to dst; unpaired
// surrogates become U+FFFD.
func appendUTF16(dst, b []byte) []byte {
	for i := 0; i+1 < len(b); i += 2 {
		u := rune(binary.LittleEndian.Uint16(b[i:]))
		if utf16.IsSurrogate(u) {
			if u < 0xDC00 && i+3 < len(b) {
				u2 := rune(binary.LittleEndian.Uint16(b[i+2:]))
				if r := utf16.DecodeRune(u, u2); r != utf8.RuneError {
					dst = utf8.AppendRune(dst, r)
					i += 2
					continue
				}
			}
			u = utf8.RuneError
		}
		dst = utf8.AppendRune(dst, u)
	}
	return dst
}
