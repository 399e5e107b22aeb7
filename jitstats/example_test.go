package jitstats_test

import (
	"fmt"
	"time"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/jitstats"
)

// Observe takes decoded events from anywhere (a live session, another
// reader, a test), with their time, process and thread: here a method
// compiled at tier 0, then again at tier 1 on the background thread.
func ExampleAnalyzer_Observe() {
	a := jitstats.NewAnalyzer()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a.SetOrigin(t0)
	at := func(ms int, tid int64, ev clrevents.Event) {
		a.Observe(t0.Add(time.Duration(ms)*time.Millisecond), 4242, tid, ev)
	}
	ns, name, sig := clrevents.UTF16Of("Shop.Cart"), clrevents.UTF16Of("Total"), clrevents.UTF16Of("float64  ()")
	flags := func(t clrevents.OptimizationTier) clrevents.MethodFlags {
		return clrevents.MethodFlagsJitted | clrevents.MethodFlags(t)<<7 // the tier is in bits 7-9
	}
	at(10, 1, &clrevents.MethodJittingStartedV1{MethodID: 0x7f00, MethodILSize: 56, MethodNamespace: ns, MethodName: name, MethodSignature: sig})
	at(12, 1, &clrevents.MethodLoadVerboseV2{MethodID: 0x7f00, MethodSize: 210, MethodFlags: flags(clrevents.TierQuickJitted), MethodNamespace: ns, MethodName: name, MethodSignature: sig})
	at(900, 9, &clrevents.MethodJittingStartedV1{MethodID: 0x7f00, MethodILSize: 56, MethodNamespace: ns, MethodName: name, MethodSignature: sig})
	at(907, 9, &clrevents.MethodLoadVerboseV2{MethodID: 0x7f00, MethodSize: 96, MethodFlags: flags(clrevents.TierOptimizedTier1), MethodNamespace: ns, MethodName: name, MethodSignature: sig})

	for _, p := range a.Processes() {
		for _, m := range p.Methods {
			fmt.Printf("%s on thread %d: %s, %v, %d bytes of IL -> %d bytes\n", m.Name, m.ThreadID, m.TierName(), m.JitTime, m.ILSize, m.NativeSize)
		}
		s := p.Summary()
		fmt.Printf("process %d: %d compiles, %v in the JIT\n", p.PID, s.All.Count, s.All.JitTime)
	}
	// Output:
	// Shop.Cart.Total() on thread 1: QuickJitted, 2ms, 56 bytes of IL -> 210 bytes
	// Shop.Cart.Total() on thread 9: OptimizedTier1, 7ms, 56 bytes of IL -> 96 bytes
	// process 4242: 2 compiles, 9ms in the JIT
}
