package clrevents_test

import (
	"fmt"

	"github.com/clrgo/clrevents/clrevents"
)

// List the methods the JIT compiled while a trace ran: method loads only
// (not unloads, nor the rundown's DCStart and DCEnd, which list code that
// already existed), with the Jitted flag (not ReadyToRun code). The
// payloads here are made with Encode; from a trace they come from
// trace.Event.Decode or a Decoder alike.
func ExampleMethodLoadUnloadVerboseFields() {
	tier1 := clrevents.MethodFlags(clrevents.TierOptimizedTier1) << 7 // bits 7–9 hold the tier
	stream := []clrevents.Event{
		&clrevents.MethodLoadVerboseV2{MethodID: 1, MethodFlags: clrevents.MethodFlagsJitted | tier1,
			MethodNamespace: clrevents.UTF16Of("App.Program"), MethodName: clrevents.UTF16Of("Main")},
		&clrevents.MethodLoadVerboseV2{MethodID: 2, // precompiled (ReadyToRun): not jitted
			MethodNamespace: clrevents.UTF16Of("System.String"), MethodName: clrevents.UTF16Of("Concat")},
		&clrevents.MethodUnloadVerboseV2{MethodID: 1, MethodFlags: clrevents.MethodFlagsJitted,
			MethodNamespace: clrevents.UTF16Of("App.Program"), MethodName: clrevents.UTF16Of("Main")},
		&clrevents.MethodDCEndVerboseV2{MethodID: 3, MethodFlags: clrevents.RundownMethodFlagsJitted, // rundown provider
			MethodNamespace: clrevents.UTF16Of("App.Worker"), MethodName: clrevents.UTF16Of("Run")},
	}
	dec := clrevents.NewDecoder()
	for _, sent := range stream {
		info := sent.Info()
		ev, _, err := dec.Decode(info.Provider, info.ID, info.Version, 8, sent.Encode(nil, 8))
		if err != nil {
			panic(err)
		}
		switch ev := ev.(type) {
		case clrevents.MethodLoadUnloadVerboseEvent:
			m := ev.MethodLoadUnloadVerboseFields()
			fmt.Println(m.Kind, m.MethodFlags)
			if m.Kind == clrevents.KindMethodLoadVerbose && m.MethodFlags&clrevents.MethodFlagsJitted != 0 {
				fmt.Println("jitted:", m.MethodNamespace, m.MethodName, m.OptimizationTier())
			}
		}
	}
	// Output:
	// MethodLoadVerbose Jitted|0x200
	// jitted: App.Program Main OptimizedTier1
	// MethodLoadVerbose 0
	// MethodUnloadVerbose Jitted
	// MethodDCEndVerbose Jitted
}
