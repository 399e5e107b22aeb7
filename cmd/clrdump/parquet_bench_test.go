package main

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// BenchmarkParquetExport: -format parquet against -format jsonl on the
// 62 MB .NET Core 2.0 trace and the 4.8 MB .NET Core 3.0 trace (both
// unzipped), in one run so that their ratio is measured on the same
// machine state. jsonl is written to io.Discard
// (format=jsonl: the formatting alone) and to a file in a temporary
// directory, as the dataset is (format=jsonl-file: what a user running
// clrdump -format jsonl > FILE waits for). allocs/event is the heap
// allocations of a whole run divided by the trace's events (272,332 and
// 105,540).
func BenchmarkParquetExport(b *testing.B) {
	traces := []struct {
		name, zip string
		events    float64
	}{
		{"2.0", "eventpipe-dotnetcore2.0-linux-objver2.netperf.zip", 272332},
		{"3.0", "eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip", 105540},
	}
	for _, tr := range traces {
		for _, format := range []string{"jsonl", "jsonl-file", "parquet", "parquet-snappy"} {
			b.Run("trace="+tr.name+"/format="+format, func(b *testing.B) {
				benchExport(b, unzippedTrace(b, tr.zip), format, tr.events)
			})
		}
	}
}

func benchExport(b *testing.B, p, format string, events float64) {
	if st, err := os.Stat(p); err == nil {
		b.SetBytes(st.Size())
	}
	b.ReportAllocs()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	for i := 0; i < b.N; i++ {
		var args []string
		var out string
		var stdout io.Writer = io.Discard
		var f *os.File
		switch format {
		case "jsonl":
			args = []string{"-format", "jsonl", p}
		case "jsonl-file":
			args = []string{"-format", "jsonl", p}
			var err error
			if f, err = os.Create(filepath.Join(b.TempDir(), "out.jsonl")); err != nil {
				b.Fatal(err)
			}
			stdout = f
		default:
			out = filepath.Join(b.TempDir(), "ds")
			args = []string{"-format", "parquet", "-o", out, p}
			if format == "parquet-snappy" {
				args = append(args[:2], append([]string{"-compression", "snappy"}, args[2:]...)...)
			}
		}
		if code := run(args, nil, stdout, io.Discard, false); code != 0 {
			b.Fatalf("clrdump %v: exit %d", args, code)
		}
		if f != nil {
			if err := f.Close(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			os.Remove(f.Name())
			b.StartTimer()
		}
		if out != "" {
			b.StopTimer()
			os.RemoveAll(out)
			b.StartTimer()
		}
	}
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(b.N)/events, "allocs/event")
}
