package damagetest

import (
	"bytes"
	"testing"
	"time"

	"github.com/clrgo/clrevents/internal/simruntime"
	"github.com/clrgo/clrevents/internal/tracetest"
)

// FuzzLayers runs every layer above the front door but the Parquet export
// (whose files make it slow) over inputs the fuzzer derives from small
// traces, with TestLayersOnGarbledTraces' checks: coverage guides it to
// the values and orders of events that random garbling seldom gives.
func FuzzLayers(f *testing.F) {
	f.Add(workloadTrace(f))
	for _, c := range []struct {
		path string
		n    int
	}{
		{"../../testdata/traces/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip", 1 << 20},
		{"../../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip", 24 << 10},
		{"../../testdata/traces/eventpipe-dotnetcore2.0-linux-objver2.first1300.netperf.zip", 24 << 10},
		{"../../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace", 24 << 10},
		{"../../testdata/traces/universal-synthetic.nettrace", 1 << 20},
	} {
		data := tracetest.Bytes(f, c.path)
		f.Add(data[:min(len(data), c.n)])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkLayers(t, "fuzz input", data, false) // no intact trace to hold its spans to
	})
}

// workloadTrace is 60 ms of the simulated runtime's session with GCs,
// compiles, exceptions, lock waits, CPU samples with stacks and a rundown:
// a small NetTrace V6 trace with every event the layers read.
func workloadTrace(f *testing.F) []byte {
	w := &simruntime.Workload{PID: 4242, JitMethods: 4, Tick: 5 * time.Millisecond}
	req := &simruntime.Collect{
		Version:        5,
		Format:         1,
		Stackwalk:      true,
		RundownKeyword: 0x80020139,
		Providers: []simruntime.Provider{
			{Name: "Microsoft-Windows-DotNETRuntime", Keywords: 0x1 | 0x10 | 0x8000 | 0x4000 | 0x10000, Level: 5},
			{Name: "Microsoft-DotNETCore-SampleProfiler"},
		},
	}
	var b bytes.Buffer
	stop, closed := make(chan struct{}), make(chan struct{})
	time.AfterFunc(60*time.Millisecond, func() { close(stop) })
	w.Stream(req, &b, stop, closed)
	if b.Len() == 0 {
		f.Fatal("the simulated runtime wrote nothing")
	}
	return b.Bytes()
}
