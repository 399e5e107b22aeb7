package profile

import (
	"bytes"
	"os"
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
		p, err := Build(r, Options{Kind: CPU, PID: -1})
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
	b := NewBuilder(Options{Kind: CPU, PID: -1}, 0, 1e9)
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
