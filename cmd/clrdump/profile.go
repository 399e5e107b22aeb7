package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"

	"github.com/clrgo/clrevents/internal/numfmt"
	"github.com/clrgo/clrevents/profile"
	"github.com/clrgo/clrevents/trace"
)

// Profiles (-profile):
//
//	clrdump -profile cpu|alloc|contention|exception -format pprof|folded|speedscope [-o FILE] [-managed-only] [-pid N] TRACE
//
// builds a profile (package profile) instead of printing events: CPU and
// thread time (from an ETW log the kernel's CPU samples, pprof type "cpu";
// from EventPipe the SampleProfiler's samples of every managed thread,
// running or waiting, pprof type "wall", each sample labelled state=managed
// or state=external for go tool pprof -tagfocus), allocations (GCAllocationTick and
// AllocationSampled; a process with both is counted from AllocationSampled
// alone), lock contention or exceptions, each with its managed stacks. -format defaults to folded;
// folded and speedscope go to standard output without -o, pprof (binary)
// needs -o. -managed-only leaves out CPU time outside managed code; -pid
// keeps one process (without it, or with -pid -1, every process; an ETW
// trace's -pid 0 is its idle processors; of an ID the system gave again
// within the trace, every process that had it, each under its own root
// frame). A trace without the events the
// profile needs is an error that says what to enable, or which processes
// have them when -pid left them out.
//
// After writing the profile, clrdump says on stderr how many frames did
// not resolve to a method, and why, one reason a clause:
//
//	clrdump: app.etl: 199,149 of 233,564 frames: native code, named by its module only; 239 of 233,564 frames: no method covers the address

// profileFlags are the flags of -profile mode.
type profileFlags struct {
	kind        string
	out         string
	managedOnly bool
}

// addProfileFlags registers -profile, -o and -managed-only.
func addProfileFlags(fs *flag.FlagSet) *profileFlags {
	pf := &profileFlags{}
	fs.StringVar(&pf.kind, "profile", "", "build a profile instead of printing events: cpu, alloc, contention or exception (-format pprof, folded or speedscope)")
	fs.StringVar(&pf.out, "o", "", "with -profile or -report: write to this file instead of standard output (- for standard output; -format pprof needs it); with -format parquet: the dataset directory")
	fs.BoolVar(&pf.managedOnly, "managed-only", false, "with -profile cpu: leave out time outside managed code")
	return pf
}

// run runs -profile mode after the flags were parsed; it returns -1
// when -profile was not given.
func (pf *profileFlags) run(fs *flag.FlagSet, format string, pid int64, rd reading, stdin io.Reader, stdout, stderr io.Writer) int {
	if pf.kind == "" {
		switch {
		case pf.managedOnly:
			fmt.Fprintf(stderr, "clrdump: -managed-only goes with -profile cpu\n")
			return exitUsage
		case pf.out != "":
			fmt.Fprintf(stderr, "clrdump: -o goes with -profile, -report or -format parquet (the events themselves go to standard output)\n")
			return exitUsage
		}
		return -1
	}
	kind, err := profile.ParseKind(pf.kind)
	if err != nil {
		fmt.Fprintf(stderr, "clrdump: -profile: %v\n", err)
		return exitUsage
	}
	if !isSet(fs, "format") {
		format = "folded"
	}
	switch format {
	case "folded", "speedscope":
	case "pprof":
		if pf.out == "" {
			fmt.Fprintf(stderr, "clrdump: -format pprof writes a binary file: give it with -o FILE\n")
			return exitUsage
		}
	default:
		fmt.Fprintf(stderr, "clrdump: unknown -format %q with -profile (want pprof, folded or speedscope)\n", format)
		return exitUsage
	}
	if pf.managedOnly && kind != profile.CPU {
		fmt.Fprintf(stderr, "clrdump: -managed-only goes with -profile cpu\n")
		return exitUsage
	}
	if !oneTrace(fs, stderr) {
		return exitUsage
	}
	if err := checkOut(pf.out); err != nil {
		fmt.Fprintf(stderr, "clrdump: %v\n", err)
		return exitError
	}
	// A profile needs each thread's events in order, not the trace's.
	src, err := rd.open(fs.Arg(0), stdin, trace.WithOrder(trace.ThreadOrder))
	if err != nil {
		fmt.Fprintf(stderr, "clrdump: %v\n", err)
		return exitError
	}
	defer src.Close()
	o := profile.Options{Kind: kind, ManagedOnly: pf.managedOnly}
	if pid >= 0 {
		o.PIDs = []int64{pid} // -pid 0: the idle processors of an ETW trace
	}
	p, lost := profile.Build(src, o)
	lost = withDropped(lost, src)
	if p == nil {
		return reportLost(stderr, lost)
	}
	err = writeOut(pf.out, stdout, func(bw *bufio.Writer) error {
		switch format {
		case "folded":
			return p.WriteFolded(bw)
		case "speedscope":
			return p.WriteSpeedscope(bw)
		}
		return p.WritePprof(bw)
	})
	if err != nil {
		fmt.Fprintf(stderr, "clrdump: %v\n", err)
		return exitError
	}
	if note := p.Map.Unresolved(); note != "" {
		fmt.Fprintf(stderr, "clrdump: %s: %s\n", src.Name(), note)
	}
	if n := p.ExternalSamples + p.ManagedSamples; n > 0 {
		fmt.Fprintf(stderr, "clrdump: %s: thread time, not CPU time: the runtime samples every managed thread, running or waiting; %s of the %s samples are of threads outside managed code (in native code, or waiting)\n",
			src.Name(), numfmt.Thousands(int64(p.ExternalSamples)), numfmt.Thousands(int64(n)))
	}
	// The profile of what was read is written; what the trace lost, after.
	return reportLost(stderr, lost)
}
