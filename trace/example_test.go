package trace_test

import (
	"fmt"
	"io"
	"log"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/kernelevents"
	"github.com/clrgo/clrevents/trace"
)

// summarize reads any trace with the same code: an EventPipe .nettrace
// here, a Windows ETW .etl there, both zipped.
func summarize(path string) error {
	r, err := trace.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	var events, clr, kernel int
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		events++
		ev, err := e.Decode()
		if err != nil {
			continue // not a generated type's (an EventSource's), or a bad payload
		}
		switch ev.(type) {
		case clrevents.Event:
			clr++
		case kernelevents.Event:
			kernel++
		}
		switch ev := ev.(type) {
		case *clrevents.GCStartV2:
			fmt.Printf("- pid %d: GC #%d, gen %d, %v\n", e.ProcessID(), ev.Count, ev.Depth, ev.Reason)
		case *clrevents.ExecutionCheckpointDCEnd:
			fmt.Printf("- pid %d: checkpoint %s\n", e.ProcessID(), ev.Name.String())
		}
	}
	fmt.Printf("%s: %d events, %d CLR events, %d kernel events\n", r.Format(), events, clr, kernel)
	return nil
}

func Example() {
	for _, path := range []string{
		"../testdata/traces/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip",
		"../testdata/traces/gcevents.etl.zip",
	} {
		if err := summarize(path); err != nil {
			log.Fatal(err)
		}
	}
	// Output:
	// - pid 9832: checkpoint RuntimeInit
	// - pid 9832: checkpoint RuntimeSuspend
	// - pid 9832: checkpoint RuntimeResumed
	// nettrace: 3 events, 3 CLR events, 0 kernel events
	// - pid 179596: GC #1, gen 1, Induced
	// - pid 179596: GC #2, gen 2, Induced
	// etl: 71 events, 69 CLR events, 1 kernel events
}

// One case handles every version of every method-verbose event: the
// runtime's MethodLoadVerbose and MethodUnloadVerbose (V0–V2) and the
// rundown's MethodDCStartVerbose and MethodDCEndVerbose (V0–V2).
func Example_methodNames() {
	r, err := trace.Open("../testdata/traces/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip")
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	methods, tier1 := 0, 0
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		ev, err := e.Decode()
		if err != nil {
			continue
		}
		switch ev := ev.(type) {
		case clrevents.MethodLoadUnloadVerboseEvent:
			m := ev.MethodLoadUnloadVerboseFields()
			if methods < 3 {
				fmt.Printf("%s: %s.%s at %#x (%d bytes)\n", ev.Info().Name,
					m.MethodNamespace.String(), m.MethodName.String(), m.MethodStartAddress, m.MethodSize)
			}
			if m.OptimizationTier() == clrevents.TierOptimizedTier1 {
				tier1++
			}
			methods++
		}
	}
	fmt.Printf("%d methods, %d of them at tier 1\n", methods, tier1)
	// Output:
	// MethodDCEndVerbose_V1: Microsoft.Diagnostics.Tracing.Parsers.SymbolTraceEventParser.EnumerateTemplates at 0x7ffd98a90890 (3367 bytes)
	// MethodDCEndVerbose_V1: Microsoft.Diagnostics.Tracing.Parsers.Symbol.DbgIDRSDSTraceData..ctor at 0x7ffd98a91610 (229 bytes)
	// MethodDCEndVerbose_V1: Microsoft.Diagnostics.Tracing.Parsers.Symbol.ImageIDTraceData..ctor at 0x7ffd98a91720 (229 bytes)
	// 1499 methods, 7 of them at tier 1
}

// The stacks of an ETW log's exceptions: the runtime walks each thrown
// exception's stack and logs the frames after it, so they are asked for
// once the log has been read.
func ExampleStacks() {
	r, err := trace.Open("../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip")
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	var stacks trace.Stacks
	var thrown []trace.StackRef
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		if stacks.Add(e) {
			continue // a stack walk
		}
		if ev, err := e.Decode(); err == nil {
			if _, ok := ev.(*clrevents.ExceptionThrownV1); ok {
				thrown = append(thrown, e.StackRef())
			}
		}
	}
	stacks.Close()
	for _, ref := range thrown {
		frames, _, ok := stacks.Stack(ref, nil)
		fmt.Printf("exception: walked %v, %d frames\n", ok, len(frames))
	}
	// Output:
	// exception: walked true, 37 frames
}
