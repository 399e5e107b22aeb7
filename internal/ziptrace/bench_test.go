package ziptrace

import (
	"bytes"
	"io"
	"os"
	"testing"

	kflate "github.com/klauspost/compress/flate"
)

// BenchmarkInflate reads the trace member of the zipped traces in testdata
// through FindInflate with klauspost/compress's inflater, as package trace
// does, and through Find (compress/flate), as the format readers' Open
// functions do, as bytes of the member a second.
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
		for _, in := range []struct {
			name    string
			inflate func(io.Reader) io.ReadCloser
		}{{"klauspost", kflate.NewReader}, {"compress-flate", nil}} {
			b.Run("trace="+tr.name+"/inflater="+in.name, func(b *testing.B) {
				benchRead(b, func() (io.ReadCloser, error) {
					f, err := FindInflate(ra, int64(len(data)), tr.path, in.inflate, ".nettrace", ".etl")
					if err != nil {
						return nil, err
					}
					return f.Open()
				})
			})
		}
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
