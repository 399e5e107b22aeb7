package profile

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/internal/racemode"
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
		b.cpu(1, 2, ts, clrevents.SampleProfilerSampleTypeManaged, ips, 0)
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

// TestRawBlocksReused: a build's sample blocks go to the next one (Build
// releases them once the profile is made): a build of a few samples
// after another allocates bytes, not another 160 KiB block.
func TestRawBlocksReused(t *testing.T) {
	if racemode.Enabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	cycle := func() {
		var rs raws
		for i := range 100 {
			rs.add(raw{ts: int64(i)})
		}
		if rs.n != 100 || rs.at(99).ts != 99 {
			t.Fatalf("raws: n %d, last %d", rs.n, rs.at(99).ts)
		}
		rs.release()
	}
	cycle()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	const n = 100
	for range n {
		cycle()
	}
	runtime.ReadMemStats(&m1)
	if per := (m1.TotalAlloc - m0.TotalAlloc) / n; per > 1<<10 {
		t.Errorf("a build of 100 samples after another allocates %d bytes; a block is %d", per, chunk*int(unsafe.Sizeof(raw{})))
	}
}
