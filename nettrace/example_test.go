package nettrace_test

import (
	"fmt"
	"io"
	"log"

	"github.com/clrgo/clrevents/nettrace"
)

// Open a trace (here a zipped .nettrace from testdata), look at what it says
// about itself, then call Next until io.EOF.
func Example() {
	r, err := nettrace.Open("../testdata/traces/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip")
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()

	info := r.Info()
	fmt.Printf("format %v, version %d, pointer size %d, pid %d\n",
		info.Format, info.Version, info.PointerSize, info.ProcessID)
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		// e and its Payload are reused by the next call to Next. Package
		// clrevents decodes the payloads of CLR events like these.
		fmt.Printf("%s id %d v%d: %d payload bytes\n", e.Provider, e.ID, e.Version, len(e.Payload))
	}
	// Output:
	// format nettrace, version 4, pointer size 8, pid 9832
	// Microsoft-Windows-DotNETRuntimeRundown id 300 v0: 34 payload bytes
	// Microsoft-Windows-DotNETRuntimeRundown id 300 v0: 40 payload bytes
	// Microsoft-Windows-DotNETRuntimeRundown id 300 v0: 40 payload bytes
}
