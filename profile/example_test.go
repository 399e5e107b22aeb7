package profile_test

import (
	"cmp"
	"fmt"
	"log"
	"slices"
	"strings"

	"github.com/clrgo/clrevents/profile"
	"github.com/clrgo/clrevents/trace"
)

// A CPU profile of a .NET 5 sampling trace: its three heaviest stacks, in
// CPU time (the folded form's value). p.WritePprof writes the same profile
// for go tool pprof.
func ExampleBuild() {
	r, err := trace.Open("../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace")
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	p, err := profile.Build(r, profile.Options{Kind: profile.CPU, ManagedOnly: true})
	if err != nil {
		log.Fatal(err)
	}
	type stack struct {
		frames string
		nanos  int64
	}
	var stacks []stack
	for frames, v := range p.Folded() {
		stacks = append(stacks, stack{frames, v})
	}
	slices.SortFunc(stacks, func(a, b stack) int {
		return cmp.Or(cmp.Compare(b.nanos, a.nanos), strings.Compare(a.frames, b.frames))
	})
	for _, s := range stacks[:3] {
		frames := strings.Split(s.frames, ";") // root first
		caller, leaf := frames[len(frames)-2], frames[len(frames)-1]
		fmt.Printf("%.0f ms in %s, called by %s\n", float64(s.nanos)/1e6, leaf, caller)
	}
	// Output:
	// 6505 ms in mvc-hello-world!Example.Program.Work(int32), called by mvc-hello-world!Example.Program.Slow()
	// 1638 ms in mvc-hello-world!Example.Program.Work(int32), called by mvc-hello-world!Example.Program.Fast()
	// 11 ms in mvc-hello-world!Example.Program.Slow(), called by mvc-hello-world!Example.Program.Main(class System.String[])
}
