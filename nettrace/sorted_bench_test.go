package nettrace

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkOrder reads the .NET Core 3.0 trace (../shared) in file and in
// time order.
func BenchmarkOrder(b *testing.B) {
	p := filepath.Join(sharedTraces, "perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip")
	if _, err := os.Stat(p); err != nil {
		b.Skip("needs the shared traces: ", err)
	}
	data := loadTrace(b, p)
	for _, o := range []Order{FileOrder, TimeOrder} {
		b.Run(o.String(), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				r, err := NewReader(bytes.NewReader(data))
				if err != nil {
					b.Fatal(err)
				}
				r.SetOrder(o)
				for {
					if _, err := r.Next(); err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
