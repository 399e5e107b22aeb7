package profile

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/trace"
)

// BenchmarkBuildCPU builds the CPU profile of the golden trace from memory,
// reading (in file order, as clrdump does) included, and folds it.
func BenchmarkBuildCPU(b *testing.B) { benchBuild(b, trace.FileOrder) }

// BenchmarkBuildCPUTimeOrder is BenchmarkBuildCPU with the reader in time
// order.
func BenchmarkBuildCPUTimeOrder(b *testing.B) { benchBuild(b, trace.TimeOrder) }

func benchBuild(b *testing.B, o trace.Order) {
	data, err := os.ReadFile(golden)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := trace.NewReader(bytes.NewReader(data), trace.WithOrder(o))
		if err != nil {
			b.Fatal(err)
		}
		p, err := Build(r, Options{Kind: CPU})
		if err != nil {
			b.Fatal(err)
		}
		_ = p.Folded()
		r.Close()
	}
}

// TestSampleZeroAlloc: a sample of a known thread and stack costs no
// allocation (the sample store grows by blocks of 4096).
func TestSampleZeroAlloc(t *testing.T) {
	b := NewBuilder(Options{Kind: CPU}, 0, 1e9)
	ips := []uint64{0x1000, 0x2000, 0x3000, 0x4000}
	ts := int64(1)
	step := func() {
		ts += 1000
		b.cpu(1, 2, ts, clrevents.SampleProfilerSampleTypeManaged, ips)
	}
	step()
	step()
	if n := testing.AllocsPerRun(1000, step); n != 0 {
		t.Errorf("a sample allocates %v times", n)
	}
}

// BenchmarkBuildCPUETW builds the CPU profile of the 4.5.2 ETW trace
// (88,809 kernel samples, 6,806 stack walks) from memory and folds it;
// sub-benchmark read is the reading alone, for the ratio.
func BenchmarkBuildCPUETW(b *testing.B) {
	const name = "../../shared/fixtures/traces/perfview/net.4.5.2.x86.etl.zip"
	zr, err := zip.OpenReader(name)
	if err != nil {
		b.Skip("shared traces absent (../shared beside the checkout)")
	}
	defer zr.Close()
	var data []byte
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, ".etl") {
			rc, err := f.Open()
			if err != nil {
				b.Fatal(err)
			}
			data, err = io.ReadAll(rc)
			rc.Close()
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, build := range []bool{false, true} {
		name := "read"
		if build {
			name = "profile"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				r, err := trace.NewReader(bytes.NewReader(data))
				if err != nil {
					b.Fatal(err)
				}
				if build {
					p, err := Build(r, Options{Kind: CPU})
					if err != nil {
						b.Fatal(err)
					}
					_ = p.Folded()
				} else {
					for {
						if _, err := r.Next(); err != nil {
							break
						}
					}
				}
				r.Close()
			}
		})
	}
}
