package etl

import (
	"encoding/binary"
	"errors"
	"slices"
)

// errLZ77 values say why a compressed buffer could not be expanded.
var (
	errLZ77Truncated = errors.New("compressed data ends inside a token")
	errLZ77Offset    = errors.New("match refers before the start of the output")
	errLZ77Overflow  = errors.New("expands past the buffer's stated size")
	errLZ77Length    = errors.New("bad match length encoding")
)

// decompressLZ77 expands src, compressed with the "Plain LZ77" algorithm of
// [MS-XCA] section 2.3 (COMPRESSION_FORMAT_XPRESS, which is what ETW uses
// for EVENT_TRACE_COMPRESSED_MODE files), appending to dst. Matches may only
// refer to bytes it produced itself, not to dst's original contents. The
// result never grows past limit bytes in total: data that would expand
// further is an error. dst is reused when it has room, so steady-state
// decompression does not allocate.
//
// The format is a sequence of 32-bit little-endian flag words, each followed
// by the 32 items it describes, most significant bit first: a clear bit is a
// literal byte, a set bit a 16-bit match token (offset-1 in the top 13 bits,
// length-3 in the low 3) with the length extended through a shared nibble, a
// byte, a 16-bit and a 32-bit field when it saturates.
//
// A short match (up to 16 bytes, at least 8 back) is copied two words at
// a time when the output has room, and a longer one that overlaps its own
// output by copies that double: 1.03 to 1.09 times as fast as copying a
// byte at a time on the real logs' buffers (BENCHMARKS.md). The tests hold
// it to refLZ77, a plain reading of the format written apart from it
// (TestLZ77MatchesReference, FuzzLZ77). Copying runs of literals at once
// was tried and was slower: the runs in real logs are a few bytes.
func decompressLZ77(dst, src []byte, limit int) ([]byte, error) {
	out := dst
	base := len(dst)
	in := 0
	var flags uint32
	nflags := 0
	halfByte := -1 // position of a length byte whose high nibble is pending
	for {
		if nflags == 0 {
			if in == len(src) {
				return out, nil
			}
			if len(src)-in < 4 {
				return out, errLZ77Truncated
			}
			flags = binary.LittleEndian.Uint32(src[in:])
			in += 4
			nflags = 32
		}
		nflags--
		if flags&(1<<uint(nflags)) == 0 {
			if in == len(src) {
				return out, nil
			}
			if len(out) >= limit {
				return out, errLZ77Overflow
			}
			out = append(out, src[in])
			in++
			continue
		}
		if in == len(src) {
			return out, nil
		}
		if len(src)-in < 2 {
			return out, errLZ77Truncated
		}
		tok := int(binary.LittleEndian.Uint16(src[in:]))
		in += 2
		length := tok & 7
		offset := tok>>3 + 1
		if length == 7 {
			if halfByte < 0 {
				if in == len(src) {
					return out, errLZ77Truncated
				}
				length = int(src[in] & 0xf)
				halfByte = in
				in++
			} else {
				length = int(src[halfByte] >> 4)
				halfByte = -1
			}
			if length == 15 {
				if in == len(src) {
					return out, errLZ77Truncated
				}
				length = int(src[in])
				in++
				if length == 255 {
					if len(src)-in < 2 {
						return out, errLZ77Truncated
					}
					length = int(binary.LittleEndian.Uint16(src[in:]))
					in += 2
					if length == 0 {
						if len(src)-in < 4 {
							return out, errLZ77Truncated
						}
						length = int(binary.LittleEndian.Uint32(src[in:]))
						in += 4
					}
					if length < 15+7 {
						return out, errLZ77Length
					}
					length -= 15 + 7
				}
				length += 15
			}
			length += 7
		}
		length += 3
		if offset > len(out)-base {
			return out, errLZ77Offset
		}
		if length > limit-len(out) {
			return out, errLZ77Overflow
		}
		start := len(out) - offset
		if n := len(out); offset >= 8 && length <= 16 && cap(out)-n >= 16 {
			// A short match at least a word back, with room for two
			// words: copied a word at a time (the second word's source
			// is written by then). What lands past the match is past
			// len(out), overwritten by what comes next.
			out = out[:n+16]
			binary.LittleEndian.PutUint64(out[n:], binary.LittleEndian.Uint64(out[start:]))
			binary.LittleEndian.PutUint64(out[n+8:], binary.LittleEndian.Uint64(out[start+8:]))
			out = out[:n+length]
			continue
		}
		if offset >= length {
			out = append(out, out[start:start+length]...)
			continue
		}
		// Overlapping: the match repeats the last offset bytes. Each copy
		// takes all that is written from start on, a whole number of
		// repeats, so the copies double.
		n := len(out)
		out = slices.Grow(out, length)[:n+length]
		for i := 0; i < length; {
			i += copy(out[n+i:], out[start:n+i])
		}
	}
}
