package nettrace

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkOrder reads the .NET Core 3.0 trace (4.8 MB, ../shared) and
// the .NET 5 arraytypes trace (0.5 MB, where what a Reader costs to make
// and to end shows) in file and in time order, a new Reader each time.
func BenchmarkOrder(b *testing.B) {
	traces := []struct{ name, path string }{
		{"3.0", filepath.Join(sharedTraces, "perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip")},
		{"5.0", filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip")},
	}
	for _, tr := range traces {
		if _, err := os.Stat(tr.path); err != nil {
			b.Run(tr.name, func(b *testing.B) { b.Skip("needs the shared traces: ", err) })
			continue
		}
		data := loadTrace(b, tr.path)
		for _, o := range []Order{FileOrder, TimeOrder} {
			b.Run(tr.name+"/"+o.String(), func(b *testing.B) {
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
}
