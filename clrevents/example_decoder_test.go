package clrevents_test

import (
	"fmt"
	"io"
	"log"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/nettrace"
)

// Read a real EventPipe trace and decode its CLR events. The trace is the
// small .NET 6 capture shipped in testdata; TraceEvent's baseline for it shows
// the first checkpoint as Name="RuntimeInit" Timestamp="11,111,925,598,665".
func ExampleDecoder() {
	r, err := nettrace.Open("../testdata/traces/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip")
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	dec := clrevents.NewDecoder()
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		p, ok := clrevents.ProviderByName(e.Provider)
		if !ok {
			continue // not a CLR provider
		}
		ev, _, err := dec.Decode(p, e.ID, e.Version, e.PointerSize, e.Payload)
		if err != nil {
			log.Fatal(err) // names the event, the field and the byte offset
		}
		switch ev := ev.(type) {
		case *clrevents.ExecutionCheckpointDCEnd:
			fmt.Println(ev.Info().Name, ev.Name.String(), ev.Timestamp)
		}
	}
	// Output:
	// ExecutionCheckpointDCEnd RuntimeInit 11111925598665
	// ExecutionCheckpointDCEnd RuntimeSuspend 11111925877436
	// ExecutionCheckpointDCEnd RuntimeResumed 11111925880297
}
