package diagnostics_test

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/clrgo/clrevents/diagnostics"
)

// Collect a CPU profile of a process for ten seconds and decode it live.
func Example() {
	ctx := context.Background()
	cl, err := diagnostics.NewClient(12345)
	if err != nil {
		fmt.Println(err) // "process 12345: no such process", …
		return
	}
	cfg, _ := diagnostics.Profile("cpu-sampling")
	s, err := cl.StartSession(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	time.AfterFunc(10*time.Second, func() { s.Stop(ctx, 30*time.Second) })
	r, err := s.Reader()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(e.Time(), e.Provider(), e.Name())
	}
	fmt.Println("dropped:", r.Dropped())
}

// Providers as dotnet-trace's --providers takes them.
func ExampleParseProviders() {
	ps, _ := diagnostics.ParseProviders("Microsoft-Windows-DotNETRuntime:0x1:4,System.Runtime::5:EventCounterIntervalSec=1")
	for _, p := range ps {
		fmt.Println(p)
	}
	// Output:
	// Microsoft-Windows-DotNETRuntime:0x1:4
	// System.Runtime:0xFFFFFFFFFFFFFFFF:5:EventCounterIntervalSec=1
}
