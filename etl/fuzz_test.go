package etl

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"
)

// literalLZ77 encodes b as Plain LZ77 with literals only: valid input for
// decompressLZ77, for building compressed test buffers.
func literalLZ77(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); i += 32 {
		out = binary.LittleEndian.AppendUint32(out, 0)
		out = append(out, b[i:min(i+32, len(b))]...)
	}
	return out
}

// shrink rewrites a log so that every buffer is only as long as its used
// part: a small, valid seed.
func shrink(data []byte) []byte {
	var out []byte
	for off := 0; off+bufferHeaderSize <= len(data); {
		size := int(binary.LittleEndian.Uint32(data[off:]))
		saved := int(binary.LittleEndian.Uint32(data[off+4:]))
		if size < bufferHeaderSize || off+size > len(data) || saved > size {
			break
		}
		b := append([]byte(nil), data[off:off+saved]...)
		binary.LittleEndian.PutUint32(b, uint32(saved))
		out = append(out, b...)
		off += size
	}
	return out
}

// compressAll rewrites a shrunk log with every buffer after the first
// stored compressed.
func compressAll(data []byte) []byte {
	var out []byte
	for off, i := 0, 0; off+bufferHeaderSize <= len(data); i++ {
		size := int(binary.LittleEndian.Uint32(data[off:]))
		b := data[off : off+size]
		off += size
		if i == 0 {
			out = append(out, b...)
			continue
		}
		hdr := append([]byte(nil), b[:bufferHeaderSize]...)
		packed := literalLZ77(b[bufferHeaderSize:])
		binary.LittleEndian.PutUint32(hdr, uint32(bufferHeaderSize+len(packed)))
		binary.LittleEndian.PutUint16(hdr[52:], binary.LittleEndian.Uint16(hdr[52:])|BufferFlagCompressed)
		out = append(out, hdr...)
		out = append(out, packed...)
	}
	return out
}

func TestSeeds(t *testing.T) {
	full := readAll(t, mustReader(t, gcETL(t)))
	for name, data := range map[string][]byte{
		"shrunk":     shrink(gcETL(t)),
		"compressed": compressAll(shrink(gcETL(t))),
	} {
		got := readAll(t, mustReader(t, data))
		if len(got) != len(full) {
			t.Errorf("%s: %d events, want %d", name, len(got), len(full))
			continue
		}
		for i := range got {
			g, w := got[i], full[i]
			if g.TS != w.TS || g.DataLen != w.DataLen || g.PayloadSum != w.PayloadSum || g.Proc != w.Proc {
				t.Errorf("%s: event %d differs", name, i)
				break
			}
		}
	}
}

func FuzzReader(f *testing.F) {
	gc, err := readZipETL(gcZip)
	if err != nil {
		f.Fatal(err)
	}
	small := shrink(gc)
	f.Add(small)
	f.Add(compressAll(small))
	f.Add(small[:len(small)/2])
	// Damaged buffer headers, which send the reader looking for the
	// next buffer: at the next multiple of BufferSize in gcevents, by
	// search in the shrunk copy and in the compressed cut.
	gcBad := bytes.Clone(gc[:3<<16])
	binary.LittleEndian.PutUint32(gcBad[1<<16:], 0xdeadbeef)
	f.Add(gcBad)
	smallBad := bytes.Clone(small)
	binary.LittleEndian.PutUint32(smallBad[binary.LittleEndian.Uint32(small):], 0xdeadbeef)
	f.Add(smallBad)
	if cut, err := readZipETL("../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip"); err == nil {
		n := 0
		for off, i := 0, 0; i < 4; i++ {
			n = off + int(binary.LittleEndian.Uint32(cut[off:]))
			off = n
		}
		cut = bytes.Clone(cut[:n])
		second := int(binary.LittleEndian.Uint32(cut)) + int(binary.LittleEndian.Uint32(cut[binary.LittleEndian.Uint32(cut):]))
		binary.LittleEndian.PutUint32(cut[second:], 0xdeadbeef)
		f.Add(cut)
	}
	if net, err := readZipETL(netZip); err == nil {
		// The header buffer and the first two compressed buffers.
		n := 0
		for off, i := 0, 0; i < 3; i++ {
			n = off + int(binary.LittleEndian.Uint32(net[off:]))
			off = n
		}
		f.Add(net[:n])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Each reader resynchronises (the default): it must still come
		// to a final error, within a number of calls bounded by the
		// input's size, and give it again.
		readers := []func() (*Reader, error){
			func() (*Reader, error) { return NewReader(bytes.NewReader(data)) },
			func() (*Reader, error) { return NewFileOrderReader(io.MultiReader(bytes.NewReader(data))) },
		}
		limit := etlNextBound(len(data))
		for _, open := range readers {
			r, err := open()
			if err != nil {
				continue
			}
			h := r.Header()
			_ = h.StartTime.String()
			for i := 0; ; i++ {
				if i > limit {
					t.Fatalf("no final error after %d calls to Next for %d bytes", limit, len(data))
				}
				e, err := r.Next()
				if err != nil {
					if err.Error() == "" {
						t.Fatal("empty error")
					}
					if err := checkFinal(r, err); err != nil {
						t.Fatal(err)
					}
					break
				}
				if e.PointerSize != 4 && e.PointerSize != 8 {
					t.Fatalf("pointer size %d", e.PointerSize)
				}
				_ = r.RelativeMSec(e.Timestamp)
				_ = e.Time.Unix()
			}
		}
	})
}
