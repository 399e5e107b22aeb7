// Command peerchild reads a trace file once with the Go peer,
// github.com/pyroscope-io/dotnetdiag, through a 64 KiB buffered reader,
// and exits: the other side of the harness's "program" rows, a program
// that links only the peer.
//
//	peerchild FILE
package main

import (
	"bufio"
	"fmt"
	"os"

	"github.com/clrgo/clrevents/bench/peer/hdr/peer"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: peerchild FILE")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	h, err := peer.Read(bufio.NewReaderSize(f, 64<<10))
	if err == nil && h.Events == 0 {
		err = fmt.Errorf("%s: no events", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
