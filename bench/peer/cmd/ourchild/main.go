// Command ourchild reads a trace file once with clrevents (package trace)
// and exits: one side of the harness's "program" rows, a program that
// links only our reader, as a user's would.
//
//	ourchild time|file FILE
package main

import (
	"fmt"
	"os"

	"github.com/clrgo/clrevents/bench/peer/hdr/ours"
	"github.com/clrgo/clrevents/trace"
)

func main() {
	if len(os.Args) != 3 || os.Args[1] != "time" && os.Args[1] != "file" {
		fmt.Fprintln(os.Stderr, "usage: ourchild time|file FILE")
		os.Exit(2)
	}
	o := trace.TimeOrder
	if os.Args[1] == "file" {
		o = trace.FileOrder
	}
	f, err := os.Open(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	h, err := ours.Read(f, o)
	if err == nil && h.Events == 0 {
		err = fmt.Errorf("%s: no events", os.Args[2])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
