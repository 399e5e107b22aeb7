package trace

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/internal/tracetest"
)

// FuzzNewReader: any input, through a stream, either fails to open with an
// error naming the input, or reads events until io.EOF or an error naming
// it; nothing panics. Seeds: the heads of the shipped traces, zipped,
// gzipped and not, and near-misses of each format's signature.
func FuzzNewReader(f *testing.F) {
	for _, p := range shipped {
		data, err := osReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[:min(len(data), 4096)])
		member := unzipOneF(f, data)
		f.Add(member[:min(len(member), 4096)])
		f.Add(gzipOf(f, member[:min(len(member), 4096)], "t", 1))
	}
	f.Add(twoLogs(f))
	f.Add([]byte("Nettrace"))
	f.Add([]byte("PK\x03\x04"))
	f.Add([]byte{0x1f, 0x8b, 8})
	f.Add(append([]byte{20, 0, 0, 0}, "!FastSerialization.1"...))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data), WithName("fuzz-input"), func(c *config) { c.memMax = 1 << 20 })
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz-input") {
				t.Fatalf("open error does not name the input: %v", err)
			}
			if len(data) == 0 && !errors.Is(err, ErrEmpty) {
				t.Fatalf("empty input: %v", err)
			}
			return
		}
		defer r.Close()
		for i := 0; i < 1<<16; i++ {
			e, err := r.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				if !strings.HasPrefix(err.Error(), "fuzz-input") {
					t.Fatalf("Next error does not name the input: %v", err)
				}
				if r.Format() != ETL {
					return // EventPipe errors end the trace
				}
				continue
			}
			_ = e.Name()
			_ = e.Time()
			_, _ = e.ProcessID(), e.ThreadID() // a kernel event's come from its payload
			_, _ = e.Decode()
		}
	})
}

// twoLogs returns a zip of two logs to be merged: the first buffer of each
// of the diagnostics session's first two logs (cut short of what their
// headers count).
func twoLogs(f *testing.F) []byte {
	names, logs := tracetest.Members(f, diagZip)
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for i := range 2 {
		w, err := zw.Create(names[i])
		if err != nil {
			f.Fatal(err)
		}
		w.Write(logs[i][:min(len(logs[i]), 64<<10)])
	}
	if err := zw.Close(); err != nil {
		f.Fatal(err)
	}
	return b.Bytes()
}
