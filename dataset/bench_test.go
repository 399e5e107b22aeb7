package dataset

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/clrgo/clrevents/internal/tracetest"
	"github.com/clrgo/clrevents/trace"
)

// BenchmarkWriteTrace writes the .NET Core 3.0 trace (105,540 events in
// 42 tables, unzipped into memory first) as a dataset of its own, files,
// folders and fsyncs included: what `clrdump -format parquet` does but
// start-up, in one process, so that a change to the export can be
// measured by turns against another test binary with less noise than
// whole processes give.
func BenchmarkWriteTrace(b *testing.B) {
	raw := tracetest.Bytes(b, "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip")
	base := b.TempDir()
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		d, err := Create(filepath.Join(base, fmt.Sprint(i)), Options{})
		if err != nil {
			b.Fatal(err)
		}
		src, err := trace.NewReader(bytes.NewReader(raw))
		if err != nil {
			b.Fatal(err)
		}
		st, err := d.WriteTrace(context.Background(), "objver4", src)
		if err != nil {
			b.Fatal(err)
		}
		src.Close()
		if err := d.Close(); err != nil {
			b.Fatal(err)
		}
		if st.Events != 105540 {
			b.Fatalf("%d events, want 105540", st.Events)
		}
	}
}
