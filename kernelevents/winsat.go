package kernelevents

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf16"
)

// WinSatXML expands the XML document of a WinSAT assessment event
// (WinSatWinSPRV0, WinSatMetricsV0, WinSatSystemConfigV0, which a merged
// kernel log holds): compressed is the event's CompressedXml bytes
// (CompressedXml.WireBytes()), size its UncompressedSize. The document is
// UTF-16 compressed with LZNT1 ([MS-XCA] 2.5); WinSatXML returns it as a
// string, up to its first NUL. An error says where the compressed bytes
// stop making sense; size is never allocated beyond what compressed can
// expand to.
func WinSatXML(compressed []byte, size uint32) (string, error) {
	// A chunk takes at least 3 bytes and expands to at most 4,096.
	if most := (uint64(len(compressed))/3 + 1) * lznt1Chunk; uint64(size) > most {
		return "", fmt.Errorf("WinSAT document: %d bytes compressed cannot expand to the %d bytes the event says", len(compressed), size)
	}
	out, err := appendLZNT1(make([]byte, 0, size), compressed, int(size))
	if err != nil {
		return "", fmt.Errorf("WinSAT document: %w", err)
	}
	if len(out) != int(size) {
		return "", fmt.Errorf("WinSAT document: expands to %d bytes, the event says %d", len(out), size)
	}
	units := make([]uint16, 0, len(out)/2)
	for i := 0; i+1 < len(out); i += 2 {
		u := binary.LittleEndian.Uint16(out[i:])
		if u == 0 {
			break
		}
		units = append(units, u)
	}
	return string(utf16.Decode(units)), nil
}

// lznt1Chunk is the most bytes an LZNT1 chunk expands to.
const lznt1Chunk = 4096

// errLZNT1 is wrapped by the errors of appendLZNT1.
var errLZNT1 = errors.New("LZNT1")

// appendLZNT1 appends to dst the expansion of src, LZNT1-compressed
// ([MS-XCA] 2.5): chunks, each a 16-bit header (its data's length less 1
// in the low 12 bits, the signature 3 in the next 3, and whether the data
// is compressed in the top bit) and that data, up to a header of 0 or the
// end of src. Compressed data is groups of a flag byte and eight items, in
// the order of its bits from the lowest: a literal byte for a 0, for a 1 a
// 16-bit copy token, whose displacement takes as many high bits as the
// chunk's output so far needs (at least 4) and whose length (less 3) the
// rest. It stops with an error past limit bytes of output.
func appendLZNT1(dst, src []byte, limit int) ([]byte, error) {
	base := len(dst)
	for pos := 0; pos+2 <= len(src); {
		hdr := binary.LittleEndian.Uint16(src[pos:])
		if hdr == 0 {
			break
		}
		if hdr&0x7000 != 0x3000 {
			return dst, fmt.Errorf("%w: chunk at byte %d: header %#04x has not the signature 3", errLZNT1, pos, hdr)
		}
		n := int(hdr&0x0FFF) + 1
		if pos+2+n > len(src) {
			return dst, fmt.Errorf("%w: chunk at byte %d: %d bytes of data, %d left", errLZNT1, pos, n, len(src)-pos-2)
		}
		data := src[pos+2 : pos+2+n]
		if hdr&0x8000 == 0 {
			if len(dst)-base+n > limit {
				return dst, fmt.Errorf("%w: chunk at byte %d: %d bytes stored past the document's %d", errLZNT1, pos, n, limit)
			}
			dst = append(dst, data...)
		} else {
			var err error
			if dst, err = expandChunk(dst, data, base, limit); err != nil {
				return dst, fmt.Errorf("%w: chunk at byte %d: %w", errLZNT1, pos, err)
			}
		}
		pos += 2 + n
	}
	return dst, nil
}

// expandChunk appends the expansion of one compressed chunk's data.
func expandChunk(dst, data []byte, base, limit int) ([]byte, error) {
	start := len(dst)
	for i := 0; i < len(data); {
		flags := data[i]
		i++
		for bit := 0; bit < 8 && i < len(data); bit++ {
			done := len(dst) - start
			if flags&(1<<bit) == 0 {
				if done == lznt1Chunk || len(dst)-base == limit {
					return dst, fmt.Errorf("byte %d: a literal past the chunk's %d bytes or the document's %d", i, lznt1Chunk, limit)
				}
				dst = append(dst, data[i])
				i++
				continue
			}
			if i+2 > len(data) {
				return dst, fmt.Errorf("byte %d: a copy token cut short", i)
			}
			tok := binary.LittleEndian.Uint16(data[i:])
			lenBits := uint(12)
			for p := done - 1; p >= 0x10; p >>= 1 {
				lenBits--
			}
			length := int(tok&(1<<lenBits-1)) + 3
			disp := int(tok>>lenBits) + 1
			if disp > done {
				return dst, fmt.Errorf("byte %d: a copy from %d bytes back, %d written", i, disp, done)
			}
			if done+length > lznt1Chunk || len(dst)-base+length > limit {
				return dst, fmt.Errorf("byte %d: a copy of %d bytes past the chunk's %d bytes or the document's %d", i, length, lznt1Chunk, limit)
			}
			for k := 0; k < length; k++ {
				dst = append(dst, dst[len(dst)-disp])
			}
			i += 2
		}
	}
	return dst, nil
}
