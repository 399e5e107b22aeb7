package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/clrgo/clrevents/nettrace"
	"github.com/clrgo/clrevents/profile"
	"github.com/clrgo/clrevents/symbols"
)

// Profiles (-profile):
//
//	clrdump -profile cpu|alloc|contention|exception -format pprof|folded|speedscope [-o FILE] [-managed-only] [-pid N] TRACE
//
// builds a profile (package profile) instead of printing events: CPU and
// thread time from the SampleProfiler, allocations, lock contention or
// exceptions, each with its managed stacks. -format defaults to folded;
// folded and speedscope go to standard output without -o, pprof (binary)
// needs -o. -managed-only leaves out CPU time outside managed code; -pid
// keeps one process. A trace without the events the profile needs is an
// error that says what to enable.

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
	fs.StringVar(&pf.out, "o", "", "with -profile or -report: write to this file instead of standard output (-format pprof needs it); with -format parquet: the dataset directory")
	fs.BoolVar(&pf.managedOnly, "managed-only", false, "with -profile cpu: leave out time outside managed code")
	return pf
}

// run runs -profile mode after the flags were parsed; it returns -1
// when -profile was not given.
func (pf *profileFlags) run(fs *flag.FlagSet, format string, pid int64, stdin io.Reader, stdout, stderr io.Writer) int {
	if pf.kind == "" {
		if pf.out != "" || pf.managedOnly {
			fmt.Fprintf(stderr, "clrdump: -o and -managed-only go with -profile\n")
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
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	src, err := openTrace(fs.Arg(0), stdin)
	if err != nil {
		fmt.Fprintf(stderr, "clrdump: %v\n", err)
		return exitError
	}
	defer src.Close()
	if nt := src.NetTrace(); nt != nil {
		// A profile needs each thread's events in order, which file order
		// gives; time order would only cost a merge.
		nt.SetOrder(nettrace.FileOrder)
	}
	p, err := profile.Build(src, profile.Options{Kind: kind, ManagedOnly: pf.managedOnly, PID: pid})
	if err != nil {
		fmt.Fprintf(stderr, "clrdump: %v\n", err)
		return exitError
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
	if note := unresolvedNote(p.Map); note != "" {
		fmt.Fprintf(stderr, "clrdump: %s: %s\n", src.Name(), note)
	}
	return exitOK
}

// unresolvedNote says how many frames did not resolve and why, and how
// many are native code named by module only; "" when every frame resolved
// to a method.
func unresolvedNote(m *symbols.Map) string {
	c := m.Counts()
	var total, unresolved int64
	var parts, out []string
	for r := symbols.Reason(0); r < symbols.NumReasons; r++ {
		total += c[r]
		if r != symbols.Resolved && r != symbols.Native && c[r] > 0 {
			unresolved += c[r]
			parts = append(parts, fmt.Sprintf("%s %d", r, c[r]))
		}
	}
	if c[symbols.Native] > 0 {
		out = append(out, fmt.Sprintf("%d of %d frames in native images, named by module only", c[symbols.Native], total))
	}
	if unresolved > 0 {
		out = append(out, fmt.Sprintf("%d of %d frames unresolved (%s)", unresolved, total, strings.Join(parts, ", ")))
	}
	return strings.Join(out, "; ")
}
