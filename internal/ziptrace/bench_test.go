package ziptrace

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"io"
	"os"
	"testing"
)

// BenchmarkInflate reads the trace member of the zipped traces in testdata
// through Find (klauspost/compress's inflater) and through archive/zip's
// own (compress/flate), as bytes of the member a second.
func BenchmarkInflate(b *testing.B) {
	for _, tr := range []struct{ name, path string }{
		{"nettrace", "../../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"},
		{"etl", "../../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip"},
	} {
		data, err := os.ReadFile(tr.path)
		if err != nil {
			b.Fatal(err)
		}
		ra := bytes.NewReader(data)
		b.Run("trace="+tr.name+"/inflater=Find", func(b *testing.B) {
			benchRead(b, func() (io.ReadCloser, error) {
				f, err := Find(ra, int64(len(data)), tr.path, ".nettrace", ".etl")
				if err != nil {
					return nil, err
				}
				return f.Open()
			})
		})
		b.Run("trace="+tr.name+"/inflater=compress-flate", func(b *testing.B) {
			benchRead(b, func() (io.ReadCloser, error) {
				zr, err := zip.NewReader(ra, int64(len(data)))
				if err != nil {
					return nil, err
				}
				zr.RegisterDecompressor(zip.Deflate, flate.NewReader)
				zf, err := Member(zr, tr.path, ".nettrace", ".etl")
				if err != nil {
					return nil, err
				}
				return zf.Open()
			})
		})
	}
}

func benchRead(b *testing.B, open func() (io.ReadCloser, error)) {
	b.ReportAllocs()
	for b.Loop() {
		rc, err := open()
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, rc)
		if err != nil {
			b.Fatal(err)
		}
		rc.Close()
		b.SetBytes(n)
	}
}
