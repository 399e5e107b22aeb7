package symbols

import (
	"fmt"
	"testing"

	"github.com/clrgo/clrevents/clrevents"
)

// BenchmarkRundown takes a rundown of 100,000 methods into a Map (the
// DCEnd events a session's end lists, shaped like those of perfview's
// HeartRateMonitor trace: classes of ten methods, names of 20 characters,
// signatures of 70) and resolves 300 addresses among them, as a profile
// build of a trace with a few hundred samples does.
func BenchmarkRundown(b *testing.B) {
	const n = 100_000
	evs := make([]clrevents.MethodDCEndVerboseV1, n)
	for i := range evs {
		evs[i] = clrevents.MethodDCEndVerboseV1{
			MethodID: uint64(i + 1), ModuleID: uint64(i/5000 + 1), MethodStartAddress: 0x7f0000000000 + 0x100*uint64(i), MethodSize: 0xC0,
			MethodNamespace: clrevents.UTF16Of(fmt.Sprintf("Xamarin.Forms.Platform.Tizen.Renderers.Class%05d", i/10)),
			MethodName:      clrevents.UTF16Of(fmt.Sprintf("UpdateLayoutMethod%02d", i%10)),
			MethodSignature: clrevents.UTF16Of("instance void  (class System.Object,class System.EventArgs,int32,bool)"),
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		m := NewMap()
		for i := range evs {
			m.Observe(1, 0, &evs[i])
		}
		for i := range 300 {
			if _, r := m.Resolve(1, 0x7f0000000000+0x100*uint64(i*331)+8, 1); r != Resolved {
				b.Fatalf("address %d: %v", i, r)
			}
		}
	}
	b.ReportMetric(n, "methods/op")
}
