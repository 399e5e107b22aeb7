package metrics_test

import (
	"fmt"
	"io"
	"log"

	_ "github.com/clrgo/clrevents/clrevents" // the CLR's event types, to decode with
	"github.com/clrgo/clrevents/metrics"
	"github.com/clrgo/clrevents/trace"
	"github.com/prometheus/client_golang/prometheus"
)

// Turn a trace file's events into Prometheus metrics: here the GCs of a
// .NET Core 3.0 application. A live session (diagnostics.Session.Reader)
// is fed the same way, as its events come.
func Example() {
	r, err := trace.Open("../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip")
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	set := metrics.New(metrics.Options{})
	reg := prometheus.NewRegistry()
	reg.MustRegister(set) // serve it with promhttp.HandlerFor(reg, …)
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		set.Add(e)
	}
	mfs, err := reg.Gather()
	if err != nil {
		log.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "dotnet_gc_collections_total" && mf.GetName() != "dotnet_gc_pause_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := ""
			for _, l := range m.GetLabel() {
				labels += " " + l.GetName() + "=" + l.GetValue()
			}
			switch {
			case m.Counter != nil:
				fmt.Printf("%s%s %v\n", mf.GetName(), labels, m.Counter.GetValue())
			case m.Histogram != nil:
				fmt.Printf("%s%s count %d\n", mf.GetName(), labels, m.Histogram.GetSampleCount())
			}
		}
	}
	// Output:
	// dotnet_gc_collections_total generation=gen0 pid=10064 process= 473
	// dotnet_gc_collections_total generation=gen1 pid=10064 process= 5
	// dotnet_gc_collections_total generation=gen2 pid=10064 process= 0
	// dotnet_gc_pause_seconds pid=10064 process= count 478
}
