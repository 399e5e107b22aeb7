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
			srcs = append(srcs, data[b.off+bufferHeaderSize:b.end])
			saved = append(saved, int(usedSize(data[b.off:])))
		}
	}
	if len(srcs) == 0 {
		tb.Fatal("no compressed buffers in the logs")
	}
	return srcs, saved
}

// TestLZ77MatchesReference expands every compressed buffer of the real
// logs with decompressLZ77 and with refLZ77, whole and cut short, with
// smaller limits, and after a header prefix in dst.
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
// decoder and, for scale, with the slow reference.
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

// refLZ77 is a plain, slow reading of [MS-XCA] 2.4 (Plain LZ77
// decompression), written apart from decompressLZ77 as the reference it
// must agree with, byte for byte and error for error: a flag word, then
// for each of its bits, high to low, a literal or a match token whose
// length may go on in a shared nibble, a byte, 16 bits and 32 bits; every
// output byte appended one at a time.
func refLZ77(dst, src []byte, limit int) ([]byte, error) {
	out, own := dst, len(dst)
	pos := 0
	take := func(n int) (uint64, bool) {
		if len(src)-pos < n {
			return 0, false
		}
		var v uint64
		for k := n - 1; k >= 0; k-- {
			v = v<<8 | uint64(src[pos+k])
		}
		pos += n
		return v, true
	}
	shared := -1 // the byte whose high nibble the next long match takes
	extra := func() (int, error) {
		var nib uint64
		if shared >= 0 {
			nib, shared = uint64(src[shared]>>4), -1
		} else {
			shared = pos
			b, ok := take(1)
			if !ok {
				return 0, errLZ77Truncated
			}
			nib = b & 0xf
		}
		if nib < 15 {
			return int(nib), nil
		}
		b, ok := take(1)
		if !ok {
			return 0, errLZ77Truncated
		}
		if b < 255 {
			return 15 + int(b), nil
		}
		w, ok := take(2)
		if !ok {
			return 0, errLZ77Truncated
		}
		if w == 0 {
			if w, ok = take(4); !ok {
				return 0, errLZ77Truncated
			}
		}
		if w < 15+7 {
			return 0, errLZ77Length
		}
		return int(w) - 7, nil
	}
	for pos < len(src) {
		flags, ok := take(4)
		if !ok {
			return out, errLZ77Truncated
		}
		for bit := 31; bit >= 0; bit-- {
			if pos == len(src) {
				return out, nil
			}
			if flags>>bit&1 == 0 {
				if len(out) >= limit {
					return out, errLZ77Overflow
				}
				out = append(out, src[pos])
				pos++
				continue
			}
			tok, ok := take(2)
			if !ok {
				return out, errLZ77Truncated
			}
			length := int(tok&7) + 3
			if tok&7 == 7 {
				more, err := extra()
				if err != nil {
					return out, err
				}
				length += more
			}
			back := int(tok>>3) + 1
			if back > len(out)-own {
				return out, errLZ77Offset
			}
			if length > limit-len(out) {
				return out, errLZ77Overflow
			}
			for range length {
				out = append(out, out[len(out)-back])
			}
		}
	}
	return out, nil
}
