package symbols_test

import (
	"fmt"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/symbols"
)

// The map learns where each method's code is from the runtime's module and
// method events (load, unload and rundown, every version), then names any
// address at any time: a sampled instruction pointer, an allocation site.
// With a trace, Map.Add takes its events; Observe takes events decoded
// elsewhere, here written out by hand.
func ExampleMap_Resolve() {
	m := symbols.NewMap()
	const pid = 4242
	m.Observe(pid, 100, &clrevents.ModuleLoadV2{ModuleID: 0x10, AssemblyID: 0x20,
		ModuleILPath: clrevents.UTF16Of(`C:\app\Shop.dll`)})
	m.Observe(pid, 110, &clrevents.MethodLoadVerboseV2{MethodID: 0x7f00, ModuleID: 0x10,
		MethodStartAddress: 0x7ffe_1000, MethodSize: 0x80,
		MethodNamespace: clrevents.UTF16Of("Shop.Cart"), MethodName: clrevents.UTF16Of("Total"),
		MethodSignature: clrevents.UTF16Of("float64  ()")})

	for _, q := range []struct {
		addr uint64
		ts   int64
	}{
		{0x7ffe_1042, 120}, // inside Total, after it was compiled
		{0x7ffe_1042, 105}, // the same address before
		{0x7ffe_2000, 120}, // no method there
	} {
		id, why := m.Resolve(pid, q.addr, q.ts)
		fmt.Printf("%#x at %d: %v (%v)\n", q.addr, q.ts, m.Frame(id), why)
	}
	// Output:
	// 0x7ffe1042 at 120: Shop!Shop.Cart.Total() (resolved)
	// 0x7ffe1042 at 105: ?!? (no method live at that time)
	// 0x7ffe2000 at 120: ?!? (no method covers the address)
}
