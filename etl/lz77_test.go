package etl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"testing"
)

// compressedBuffers returns the compressed data and expanded size of each
// compressed buffer of the contention log in testdata (and of the 4.5.2
// log in ../shared when it is there).
func compressedBuffers(tb testing.TB) (srcs [][]byte, saved []int) {
	tb.Helper()
	logs := [][]byte{unzipETL(tb, contentionZip)}
	if net, err := readZipETL(netZip); err == nil {
		logs = append(logs, net)
	}
	for _, data := range logs {
		for _, b := range etlBuffers(tb, data) {
			if !b.compressed {
				continue
			}
			s := int(binary.LittleEndian.Uint32(data[b.off+4:]))
			if s == 0 {
				s = int(binary.LittleEndian.Uint32(data[b.off+48:]))
			}
			srcs = append(srcs, data[b.off+bufferHeaderSize:b.end])
			saved = append(saved, s)
		}
	}
	if len(srcs) == 0 {
		tb.Fatal("no compressed buffers in the logs")
	}
	return srcs, saved
}

// TestLZ77MatchesReference expands every compressed buffer of the real
// logs with decompressLZ77 and with refLZ77, the plain decoder it was
// before literal runs and doubling copies, whole and cut short, and after
// a header prefix in dst.
func TestLZ77MatchesReference(t *testing.T) {
	srcs, saved := compressedBuffers(t)
	for i, src := range srcs {
		for _, cut := range []int{len(src), len(src) / 2, len(src) - 3, 5} {
			for _, limit := range []int{saved[i], saved[i] / 3, 8} {
				checkLZ77(t, src[:max(cut, 0)], limit, nil)
				checkLZ77(t, src[:max(cut, 0)], limit+bufferHeaderSize, bytes.Repeat([]byte{0xee}, bufferHeaderSize))
			}
		}
	}
	t.Logf("%d compressed buffers", len(srcs))
}

func checkLZ77(t testing.TB, src []byte, limit int, dst []byte) {
	t.Helper()
	want, wantErr := refLZ77(slices.Clone(dst), src, limit)
	got, err := decompressLZ77(slices.Clone(dst), src, limit)
	if !bytes.Equal(got, want) || !errors.Is(err, wantErr) || (err == nil) != (wantErr == nil) {
		t.Fatalf("%d bytes, limit %d, %d before: got %d bytes, %v; the reference %d bytes, %v", len(src), limit, len(dst), len(got), err, len(want), wantErr)
	}
}

// FuzzLZ77 compares decompressLZ77 with refLZ77 on any input and limit.
func FuzzLZ77(f *testing.F) {
	le := binary.LittleEndian
	f.Add(append(le.AppendUint32(nil, 0b0011<<28), 'a', 'b', 0x0f, 0, 5, 0x07, 0), 100, 0)
	f.Add(append(le.AppendUint32(nil, 0), bytes.Repeat([]byte{'z'}, 40)...), 10, 3)
	f.Add(append(le.AppendUint32(nil, 0x7fffffff), 'q', 0x07, 0, 0x0f, 255, 0, 0, 1, 0, 0, 0), 1<<16, 0)
	f.Fuzz(func(t *testing.T, src []byte, limit int, prefix int) {
		if limit > 1<<20 || limit < -1 || prefix < 0 || prefix > 64 {
			return
		}
		checkLZ77(t, src, limit, make([]byte, prefix))
	})
}

// BenchmarkLZ77 expands the real logs' compressed buffers, with the
// decoder and with the reference.
func BenchmarkLZ77(b *testing.B) {
	srcs, saved := compressedBuffers(b)
	for _, d := range []struct {
		name string
		f    func(dst, src []byte, limit int) ([]byte, error)
	}{{"decoder=decompressLZ77", decompressLZ77}, {"decoder=reference", refLZ77}} {
		b.Run(d.name, func(b *testing.B) {
			var out []byte
			total := 0
			for i, src := range srcs {
				o, err := d.f(out[:0], src, saved[i])
				if err != nil {
					b.Fatal(err)
				}
				total += len(o)
				out = o
			}
			b.SetBytes(int64(total))
			b.ReportAllocs()
			for b.Loop() {
				for i, src := range srcs {
					out, _ = d.f(out[:0], src, saved[i])
				}
			}
		})
	}
}

// refLZ77 is decompressLZ77 as it was, a literal and a byte of an
// overlapping match at a time: the reference the faster one must agree
// with.
func refLZ77(dst, src []byte, limit int) ([]byte, error) {
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
		if offset >= length {
			out = append(out, out[start:start+length]...)
			continue
		}
		// Overlapping copy: the match repeats the last offset bytes.
		n := len(out)
		out = slices.Grow(out, length)[:n+length]
		for i := 0; i < length; i++ {
			out[n+i] = out[start+i]
		}
	}
}
