package main

import (
	"archive/zip"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// The whole command, in process, over unzipped copies of the shared
// traces (so that inflating the zip is not measured): for profiles
// (-cpuprofile) and for ratios between modes in one run. Whole-process
// ratios are measured with bench/paired (see BENCHMARKS.md, issue 17).

var unzipped sync.Map // zip path → unzipped path

// tempDirs are the directories unzippedTrace made; TestMain removes them
// when the test binary is done (the traces in them are kept across
// benchmarks, so no single benchmark's cleanup may remove them).
var tempDirs sync.Map

func TestMain(m *testing.M) {
	code := m.Run()
	tempDirs.Range(func(dir, _ any) bool {
		os.RemoveAll(dir.(string))
		return true
	})
	os.Exit(code)
}

// unzippedTrace expands the shared trace name (a zip) once per test binary
// into a temporary directory, or skips the benchmark when it is absent.
func unzippedTrace(b *testing.B, name string) string {
	b.Helper()
	zp := filepath.Join("..", "..", "..", "shared", "fixtures", "traces", "perfview", name)
	if p, ok := unzipped.Load(zp); ok {
		return p.(string)
	}
	zr, err := zip.OpenReader(zp)
	if err != nil {
		b.Skip("needs the shared traces: ", err)
	}
	defer zr.Close()
	dir, err := os.MkdirTemp("", "clrdump-bench")
	if err != nil {
		b.Fatal(err)
	}
	tempDirs.Store(dir, true)
	for _, f := range zr.File {
		if f.FileInfo().IsDir() || filepath.Ext(f.Name) == ".txt" {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			b.Fatal(err)
		}
		out := filepath.Join(dir, filepath.Base(f.Name))
		w, err := os.Create(out)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(w, rc); err != nil {
			b.Fatal(err)
		}
		rc.Close()
		w.Close()
		unzipped.Store(zp, out)
		return out
	}
	b.Fatalf("%s holds no trace", zp)
	return ""
}

func BenchmarkClrdump(b *testing.B) {
	const v30 = "eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"
	const v20 = "eventpipe-dotnetcore2.0-linux-objver2.netperf.zip"
	const etl = "net.4.5.2.x86.etl.zip"
	for _, c := range []struct {
		name  string
		trace string
		args  []string
	}{
		{"trace=3.0/stats/order=time", v30, []string{"-stats"}},
		{"trace=3.0/stats/order=file", v30, []string{"-stats", "-order", "file"}},
		{"trace=3.0/format=jsonl", v30, []string{"-format", "jsonl"}},
		{"trace=2.0/format=text", v20, []string{"-format", "text"}},
		{"trace=2.0/format=jsonl", v20, []string{"-format", "jsonl"}},
		{"trace=2.0/format=csv", v20, []string{"-format", "csv"}},
		{"trace=etl/format=jsonl", etl, []string{"-format", "jsonl"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := unzippedTrace(b, c.trace)
			if st, err := os.Stat(p); err == nil {
				b.SetBytes(st.Size())
			}
			args := append(append([]string{}, c.args...), p)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if code := run(args, nil, io.Discard, io.Discard, false); code != 0 {
					b.Fatalf("clrdump %v: exit %d", args, code)
				}
			}
		})
	}
}
