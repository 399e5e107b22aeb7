package etl_test

import (
	"fmt"
	"io"
	"log"
	"time"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/etl"
)

// Open a log (here a zipped .etl from testdata), look at its header, then
// call Next until io.EOF. The events come in timestamp order, as TraceEvent
// sees them.
func Example() {
	r, err := etl.Open("../testdata/traces/gcevents.etl.zip")
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()

	h := r.Header()
	major, minor := h.OSVersion()
	fmt.Printf("Windows %d.%d build %d, %d processors, pointer size %d\n",
		major, minor, h.ProviderVersion, h.NumberOfProcessors, h.PointerSize)
	fmt.Printf("started %s, %d buffers of %d bytes, order %v\n",
		h.StartTime.Format(time.RFC3339), h.BuffersWritten, h.BufferSize, r.Order())

	var events, clr int
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err) // a *etl.DamageError: damaged buffers were skipped
		}
		events++
		// e and its Payload are reused by the next call to Next. Package
		// clrevents decodes the payloads of CLR events.
		if _, ok := clrevents.ProviderByGUID(e.ProviderGUID); ok {
			clr++
		}
	}
	fmt.Printf("%d events, %d from CLR providers\n", events, clr)
	// Output:
	// Windows 10.0 build 19045, 8 processors, pointer size 8
	// started 2023-03-14T00:46:36Z, 5 buffers of 65536 bytes, order TimeOrder
	// 71 events, 69 from CLR providers
}
