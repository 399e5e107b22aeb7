package kernelevents

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"unicode/utf16"
)

// utf16le is s in UTF-16, little-endian, NUL-terminated.
func utf16le(s string) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = binary.LittleEndian.AppendUint16(b, u)
	}
	return append(b, 0, 0)
}

// chunk is an LZNT1 chunk of data, compressed or stored.
func chunk(compressed bool, data ...byte) []byte {
	h := uint16(0x3000 | (len(data) - 1))
	if compressed {
		h |= 0x8000
	}
	return append(binary.LittleEndian.AppendUint16(nil, h), data...)
}

func TestWinSatXML(t *testing.T) {
	// A stored chunk, then a compressed one: "<a>" then, as literals and
	// a copy, "<b/>" repeated.
	doc := "<a><b/><b/><b/></a>"
	raw := utf16le(doc)
	stored := chunk(false, raw[:6]...) // "<a>"
	// The second chunk: the 8 bytes of "<b/>" as literals, then a copy of
	// 16 bytes from 8 back, then "</a>" and the NUL as literals.
	rest := raw[6:]
	var data []byte
	data = append(data, 0x00) // eight literals
	data = append(data, rest[:8]...)
	// One copy, then the 10 literal bytes of "</a>" and the NUL, in two
	// flag groups: bit 0 the copy, bits 1-7 literals; then three literals.
	// With 8 bytes written the displacement takes 4 bits: 16-3 in the
	// low 12, 8-1 in the high 4.
	tok := uint16((8-1)<<12 | (16 - 3))
	data = append(data, 0x01)
	data = binary.LittleEndian.AppendUint16(data, tok)
	data = append(data, rest[24:31]...)
	data = append(data, 0x00)
	data = append(data, rest[31:]...)
	src := append(stored, chunk(true, data...)...)
	src = append(src, 0, 0, 0xAA) // the end marker, then bytes it ignores
	got, err := WinSatXML(src, uint32(len(raw)))
	if err != nil || got != doc {
		t.Fatalf("WinSatXML: %q, %v; want %q", got, err, doc)
	}

	for _, c := range []struct {
		name string
		src  []byte
		size uint32
		want string
	}{
		{"signature", []byte{0x05, 0x40, 'x'}, 1, "header 0x4005 has not the signature 3"},
		{"short chunk", chunk(false, 'a', 'b', 'c')[:4], 3, "chunk at byte 0: 3 bytes of data, 2 left"},
		{"copy first", chunk(true, 0x01, 0x00, 0x00), 3, "a copy from 1 bytes back, 0 written"},
		{"copy too far", chunk(true, 0x02, 'a', 0x00, 0x10), 4, "a copy from 2 bytes back, 1 written"},
		{"token cut", chunk(true, 0x02, 'a', 0x00), 4, "a copy token cut short"},
		{"past size", chunk(false, 'a', 'b', 'c', 'd'), 2, "4 bytes stored past the document's 2"},
		{"copy past size", chunk(true, 0x02, 'a', 0x05, 0x00), 4, "a copy of 8 bytes past the chunk's 4096 bytes or the document's 4"},
		{"short of size", chunk(false, 'a', 0), 4, "expands to 2 bytes, the event says 4"},
		{"size unbacked", chunk(false, 'a', 0), 1 << 30, "4 bytes compressed cannot expand to the 1073741824 bytes the event says"},
	} {
		_, err := WinSatXML(c.src, c.size)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "WinSAT document: ") {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
		if c.name != "short of size" && c.name != "size unbacked" && !errors.Is(err, errLZNT1) {
			t.Errorf("%s: %v does not wrap errLZNT1", c.name, err)
		}
	}
}

// FuzzWinSatXML: any bytes and size give a document or an error, never
// more bytes than the size, and nothing panics.
func FuzzWinSatXML(f *testing.F) {
	f.Add(chunk(false, utf16le("<a/>")...), uint32(10))
	f.Add(chunk(true, 0x02, 'a', 0x00, 0x00, 'b'), uint32(5))
	f.Add([]byte{0, 0}, uint32(0))
	f.Fuzz(func(t *testing.T, src []byte, size uint32) {
		size %= 1 << 20
		s, err := WinSatXML(src, size)
		if err == nil && len(utf16.Encode([]rune(s)))*2 > int(size) {
			t.Fatalf("%d UTF-16 bytes from a document of %d", len(s), size)
		}
		out, _ := appendLZNT1(nil, src, int(size))
		if len(out) > int(size) {
			t.Fatalf("appendLZNT1 wrote %d bytes past its limit %d", len(out), size)
		}
	})
}
