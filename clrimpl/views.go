package clrimpl

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"unicode/utf8"
)

// Views: the string and blob types of decoded events.
//
// A view aliases the payload it was decoded from: it holds a sub-slice of the
// payload buffer, not a copy. It is valid only while that buffer is, and it
// changes if the buffer is overwritten (trace readers reuse their buffers
// from one event to the next). To keep the value, convert it with String or
// copy it with Clone. Reading a view never allocates, except String, which
// returns a fresh Go string, and Clone.

const (
	surrHi    = 0xd800 // first high (leading) surrogate
	surrLo    = 0xdc00 // first low (trailing) surrogate
	surrEnd   = 0xe000 // one past the last low surrogate
	surrSelf  = 0x10000
	runeError = '\uFFFD'
)

// cloneBytes copies b into a new slice whose capacity is its length; nil
// stays nil.
func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	c := make([]byte, len(b))
	copy(c, b)
	return c
}

// UTF16 is a win:UnicodeString: UTF-16LE text as it is on the wire, without
// its NUL terminator.
//
// A UTF16 decoded from a payload aliases the payload's bytes: it is valid
// only while the payload buffer is, and it changes if that buffer is reused.
// String and Clone return copies that stay valid. The zero value is the empty
// string. Two UTF16 values are compared with Equal, which go-cmp uses.
type UTF16 struct {
	b []byte // even length
}

// UTF16Of encodes the Go (UTF-8) string s as UTF-16LE; invalid UTF-8 bytes
// become U+FFFD. It allocates; it is meant for building payloads.
func UTF16Of(s string) UTF16 {
	n := 0
	for _, r := range s {
		if r >= surrSelf {
			n += 4
		} else {
			n += 2
		}
	}
	b := make([]byte, 0, n)
	for _, r := range s {
		if r >= surrSelf {
			r -= surrSelf
			b = binary.LittleEndian.AppendUint16(b, uint16(surrHi+(r>>10)))
			b = binary.LittleEndian.AppendUint16(b, uint16(surrLo+(r&0x3ff)))
		} else {
			b = binary.LittleEndian.AppendUint16(b, uint16(r))
		}
	}
	return UTF16{b}
}

// MakeUTF16 wraps raw UTF-16LE bytes without copying them. An odd trailing
// byte is dropped. The view aliases raw.
func MakeUTF16(raw []byte) UTF16 {
	n := len(raw) &^ 1
	return UTF16{raw[:n:n]}
}

// Bytes returns the raw UTF-16LE bytes, without terminator. The slice
// aliases the payload; its capacity is its length, so appending to it never
// overwrites the payload.
func (s UTF16) Bytes() []byte { return s.b }

// Len returns the length of s in UTF-16 code units.
func (s UTF16) Len() int { return len(s.b) >> 1 }

// IsEmpty reports whether s has no code units.
func (s UTF16) IsEmpty() bool { return len(s.b) == 0 }

// At returns the i'th code unit. It panics if i is out of range.
func (s UTF16) At(i int) uint16 {
	if uint(i) >= uint(s.Len()) {
		_ = s.b[:s.Len()][i] // panics as a slice index does
	}
	return binary.LittleEndian.Uint16(s.b[2*i : 2*i+2])
}

// decodeUTF16 decodes the code point at the start of b (len(b) >= 2), as
// unicode/utf16.Decode does: an unpaired surrogate is U+FFFD. It returns the
// rune and the number of bytes it used, 2 or 4.
func decodeUTF16(b []byte) (rune, int) {
	u := rune(b[0]) | rune(b[1])<<8
	if u < surrHi || u >= surrEnd {
		return u, 2
	}
	if u < surrLo && len(b) >= 4 {
		u2 := rune(b[2]) | rune(b[3])<<8
		if surrLo <= u2 && u2 < surrEnd {
			return surrSelf + (u-surrHi)<<10 + (u2 - surrLo), 4
		}
	}
	return runeError, 2
}

// asciiQuad reports whether v, eight payload bytes read little-endian, holds
// four ASCII code units.
func asciiQuad(v uint64) bool { return v&0xff80ff80ff80ff80 == 0 }

// packQuad is the four bytes of an asciiQuad's code units, in order.
func packQuad(v uint64) uint32 {
	v = (v | v>>8) & 0x0000ffff0000ffff
	return uint32(v | v>>16)
}

// jsonSafeQuad reports whether v, eight payload bytes read little-endian,
// holds four ASCII code units that JSON writes unescaped: none below 0x20,
// none '"' or '\\'. In each 16-bit lane, x - k borrows into the lane's top
// bit exactly when x < k (x < 0x80, so the top bit starts clear); a borrow
// into the lane above happens only after a lane below has matched.
func jsonSafeQuad(v uint64) bool {
	const ones, high = 0x0001000100010001, 0x8000800080008000
	if v&0xff80ff80ff80ff80 != 0 {
		return false
	}
	q := v ^ ('"' * ones)
	bs := v ^ ('\\' * ones)
	return ((v-0x20*ones)|(q-ones)|(bs-ones))&high == 0
}

// utf8Len returns the length of s's UTF-8 encoding.
func (s UTF16) utf8Len() int {
	n := 0
	for b := s.b; len(b) >= 2; {
		r, size := decodeUTF16(b)
		b = b[size:]
		n += utf8.RuneLen(r)
	}
	return n
}

// String decodes s to a Go string. Unpaired surrogates become U+FFFD, as with
// unicode/utf16.Decode. It allocates the result (once).
func (s UTF16) String() string {
	if len(s.b) == 0 {
		return ""
	}
	// A code unit takes at most 3 bytes of UTF-8 (a surrogate pair takes 4
	// for two units), so short strings are decoded on the stack and copied
	// once into the result.
	var buf [192]byte
	if len(s.b)/2*3 <= len(buf) {
		return string(s.AppendUTF8(buf[:0]))
	}
	var sb strings.Builder
	sb.Grow(s.utf8Len())
	b := s.b
	for len(b) >= 2 {
		if b[1] == 0 && b[0] < utf8.RuneSelf {
			sb.WriteByte(b[0])
			b = b[2:]
			continue
		}
		r, size := decodeUTF16(b)
		sb.WriteRune(r)
		b = b[size:]
	}
	return sb.String()
}

// AppendUTF8 appends s decoded to UTF-8 to dst, with unpaired surrogates as
// U+FFFD. It does not allocate when dst has room.
func (s UTF16) AppendUTF8(dst []byte) []byte {
	b := s.b
	if len(b) >= 16 {
		// ASCII, most of what traces hold, eight code units at a time
		// into room made once (they take at most half their bytes).
		dst = slices.Grow(dst, len(b)/2)
		for len(b) >= 16 {
			v, w := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
			if !asciiQuad(v | w) {
				break
			}
			n := len(dst)
			dst = dst[:n+8]
			binary.LittleEndian.PutUint64(dst[n:], uint64(packQuad(v))|uint64(packQuad(w))<<32)
			b = b[16:]
		}
	}
	for len(b) >= 2 {
		if len(b) >= 8 {
			if v := binary.LittleEndian.Uint64(b); asciiQuad(v) {
				dst = append(dst, byte(v), byte(v>>16), byte(v>>32), byte(v>>48))
				b = b[8:]
				continue
			}
		}
		switch u := uint16(b[0]) | uint16(b[1])<<8; {
		case u < 0x80:
			dst = append(dst, byte(u))
		case u < 0x800:
			dst = append(dst, 0xc0|byte(u>>6), 0x80|byte(u)&0x3f)
		case u < surrHi || u >= surrEnd:
			dst = append(dst, 0xe0|byte(u>>12), 0x80|byte(u>>6)&0x3f, 0x80|byte(u)&0x3f)
		default:
			r, size := decodeUTF16(b)
			dst = utf8.AppendRune(dst, r)
			b = b[size:]
			continue
		}
		b = b[2:]
	}
	return dst
}

// Equal reports whether s and o hold the same code units. It lets
// github.com/google/go-cmp compare views without options.
func (s UTF16) Equal(o UTF16) bool { return bytes.Equal(s.b, o.b) }

// EqualString reports whether s decodes to str, that is s.String() == str,
// without allocating.
func (s UTF16) EqualString(str string) bool {
	b := s.b
	j := 0
	for len(b) >= 2 {
		if b[1] == 0 && b[0] < utf8.RuneSelf {
			if j >= len(str) || str[j] != b[0] {
				return false
			}
			j++
			b = b[2:]
			continue
		}
		r, size := decodeUTF16(b)
		b = b[size:]
		r2, size2 := utf8.DecodeRuneInString(str[j:])
		if r2 != r || size2 != utf8.RuneLen(r) {
			return false
		}
		j += size2
	}
	return j == len(str)
}

// Valid reports whether s is well-formed UTF-16: every surrogate is paired.
func (s UTF16) Valid() bool {
	for b := s.b; len(b) >= 2; {
		u := uint16(b[0]) | uint16(b[1])<<8
		switch {
		case u < surrHi || u >= surrEnd:
			b = b[2:]
		case u < surrLo && len(b) >= 4 && b[3]&0xfc == 0xdc:
			b = b[4:]
		default:
			return false
		}
	}
	return true
}

// AppendJSON appends s as a quoted JSON string literal: the same bytes
// encoding/json produces for s.String() with HTML escaping off (unpaired
// surrogates are \ufffd). It does not allocate when dst has room.
func (s UTF16) AppendJSON(dst []byte) []byte {
	dst = append(dst, '"')
	b := s.b
	for len(b) >= 2 {
		if len(b) >= 8 {
			if v := binary.LittleEndian.Uint64(b); jsonSafeQuad(v) {
				dst = append(dst, byte(v), byte(v>>16), byte(v>>32), byte(v>>48))
				b = b[8:]
				continue
			}
		}
		if b[1] == 0 && b[0] < utf8.RuneSelf {
			if c := b[0]; jsonSafe[c] {
				dst = append(dst, c)
			} else {
				dst = appendJSONEscapedASCII(dst, c)
			}
			b = b[2:]
			continue
		}
		r, size := decodeUTF16(b)
		b = b[size:]
		dst = appendJSONRune(dst, r)
	}
	return append(dst, '"')
}

// Clone returns a copy of s that no longer aliases the payload.
func (s UTF16) Clone() UTF16 { return UTF16{cloneBytes(s.b)} }

// MarshalJSON implements encoding/json.Marshaler with AppendJSON.
func (s UTF16) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }

// Ansi is a win:AnsiString: bytes in the writer's code page, without the NUL
// terminator. Bytes that form valid UTF-8 are read as UTF-8, and every other
// byte as Latin-1 (ISO 8859-1).
//
// An Ansi decoded from a payload aliases the payload's bytes: it is valid
// only while the payload buffer is, and it changes if that buffer is reused.
// String and Clone return copies that stay valid. The zero value is the empty
// string.
type Ansi struct {
	b []byte
}

// AnsiOf returns an Ansi holding the bytes of s (its UTF-8, which String
// reads back unchanged). It allocates; it is meant for building payloads. s
// should not contain NUL, which would end the string on the wire.
func AnsiOf(s string) Ansi {
	b := make([]byte, len(s))
	copy(b, s)
	return Ansi{b}
}

// MakeAnsi wraps raw bytes without copying them. The view aliases raw.
func MakeAnsi(raw []byte) Ansi { return Ansi{raw[:len(raw):len(raw)]} }

// Bytes returns the raw bytes, without terminator. The slice aliases the
// payload; its capacity is its length.
func (s Ansi) Bytes() []byte { return s.b }

// Len returns the length of s in bytes.
func (s Ansi) Len() int { return len(s.b) }

// IsEmpty reports whether s has no bytes.
func (s Ansi) IsEmpty() bool { return len(s.b) == 0 }

// decodeAnsi decodes the character at the start of b (non-empty): a valid
// UTF-8 sequence, or else one byte read as Latin-1.
func decodeAnsi(b []byte) (rune, int) {
	if c := b[0]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	r, size := utf8.DecodeRune(b)
	if r == utf8.RuneError && size == 1 {
		return rune(b[0]), 1
	}
	return r, size
}

// String decodes s to a Go string: valid UTF-8 as it is, other bytes as
// Latin-1. It allocates the result.
func (s Ansi) String() string {
	if utf8.Valid(s.b) {
		return string(s.b)
	}
	n := 0
	for b := s.b; len(b) > 0; {
		r, size := decodeAnsi(b)
		b = b[size:]
		n += utf8.RuneLen(r)
	}
	var sb strings.Builder
	sb.Grow(n)
	for b := s.b; len(b) > 0; {
		r, size := decodeAnsi(b)
		b = b[size:]
		sb.WriteRune(r)
	}
	return sb.String()
}

// AppendUTF8 appends s decoded to UTF-8 to dst (valid UTF-8 as it is, other
// bytes as Latin-1). It does not allocate when dst has room.
func (s Ansi) AppendUTF8(dst []byte) []byte {
	if utf8.Valid(s.b) {
		return append(dst, s.b...)
	}
	for b := s.b; len(b) > 0; {
		r, size := decodeAnsi(b)
		if size > 1 || r < utf8.RuneSelf {
			dst = append(dst, b[:size]...)
		} else {
			dst = utf8.AppendRune(dst, r)
		}
		b = b[size:]
	}
	return dst
}

// Equal reports whether s and o hold the same bytes. It lets
// github.com/google/go-cmp compare views without options.
func (s Ansi) Equal(o Ansi) bool { return bytes.Equal(s.b, o.b) }

// EqualString reports whether s decodes to str, that is s.String() == str,
// without allocating.
func (s Ansi) EqualString(str string) bool {
	if len(str) < len(s.b) {
		return false
	}
	if string(s.b) == str {
		return utf8.Valid(s.b)
	}
	j := 0
	for b := s.b; len(b) > 0; {
		r, size := decodeAnsi(b)
		b = b[size:]
		if r < utf8.RuneSelf {
			if j >= len(str) || str[j] != byte(r) {
				return false
			}
			j++
			continue
		}
		r2, size2 := utf8.DecodeRuneInString(str[j:])
		if r2 != r || size2 != utf8.RuneLen(r) {
			return false
		}
		j += size2
	}
	return j == len(str)
}

// AppendJSON appends s as a quoted JSON string literal: the same bytes
// encoding/json produces for s.String() with HTML escaping off. It does not
// allocate when dst has room.
func (s Ansi) AppendJSON(dst []byte) []byte {
	dst = append(dst, '"')
	for b := s.b; len(b) > 0; {
		if c := b[0]; c < utf8.RuneSelf {
			if jsonSafe[c] {
				dst = append(dst, c)
			} else {
				dst = appendJSONEscapedASCII(dst, c)
			}
			b = b[1:]
			continue
		}
		r, size := decodeAnsi(b)
		if size > 1 && r != '\u2028' && r != '\u2029' {
			dst = append(dst, b[:size]...)
		} else {
			dst = appendJSONRune(dst, r)
		}
		b = b[size:]
	}
	return append(dst, '"')
}

// Clone returns a copy of s that no longer aliases the payload.
func (s Ansi) Clone() Ansi { return Ansi{cloneBytes(s.b)} }

// MarshalJSON implements encoding/json.Marshaler with AppendJSON.
func (s Ansi) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }

// Binary is a win:Binary blob.
//
// A Binary decoded from a payload aliases the payload's bytes: it is valid
// only while the payload buffer is, and it changes if that buffer is reused.
// Clone returns a copy that stays valid. The zero value is the empty blob.
type Binary struct {
	b []byte
}

// BinaryOf returns a Binary holding a copy of raw. It allocates; it is meant
// for building payloads.
func BinaryOf(raw []byte) Binary { return Binary{cloneBytes(raw)} }

// MakeBinary wraps raw without copying it. The view aliases raw.
func MakeBinary(raw []byte) Binary { return Binary{raw[:len(raw):len(raw)]} }

// Bytes returns the blob's bytes. The slice aliases the payload; its capacity
// is its length.
func (s Binary) Bytes() []byte { return s.b }

// Len returns the length of the blob in bytes.
func (s Binary) Len() int { return len(s.b) }

// IsEmpty reports whether the blob has no bytes.
func (s Binary) IsEmpty() bool { return len(s.b) == 0 }

// Equal reports whether s and o hold the same bytes. It lets
// github.com/google/go-cmp compare views without options.
func (s Binary) Equal(o Binary) bool { return bytes.Equal(s.b, o.b) }

// AppendHex appends the blob in lower-case hex with a 0x prefix, "0x0a1b";
// nothing for an empty blob. It does not allocate when dst has room.
func (s Binary) AppendHex(dst []byte) []byte {
	if len(s.b) == 0 {
		return dst
	}
	dst = append(dst, '0', 'x')
	for _, c := range s.b {
		dst = append(dst, hexDigits[c>>4], hexDigits[c&0xf])
	}
	return dst
}

// String returns the blob in lower-case hex, "0x0a1b", or "" when it is
// empty. It allocates the result.
func (s Binary) String() string {
	if len(s.b) == 0 {
		return ""
	}
	return string(s.AppendHex(make([]byte, 0, 2+2*len(s.b))))
}

// AppendJSON appends the blob as a JSON string of lower-case hex, "0x0a1b",
// or "" when it is empty. It does not allocate when dst has room.
func (s Binary) AppendJSON(dst []byte) []byte {
	dst = append(dst, '"')
	dst = s.AppendHex(dst)
	return append(dst, '"')
}

// Clone returns a copy of s that no longer aliases the payload.
func (s Binary) Clone() Binary { return Binary{cloneBytes(s.b)} }

// MarshalJSON implements encoding/json.Marshaler with AppendJSON.
func (s Binary) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }
