package nettrace_test

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/clrgo/clrevents/nettrace"
)

// A copy that stopped part way: the Checker says where, and in what.
func ExampleChecker() {
	data, err := os.ReadFile("../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace")
	if err != nil {
		panic(err)
	}
	var c nettrace.Checker
	var copied bytes.Buffer
	io.Copy(io.MultiWriter(&copied, &c), bytes.NewReader(data[:100000]))
	fmt.Println(c.Close())

	c = nettrace.Checker{}
	c.Write(data)
	fmt.Println(c.Close(), c.Version())
	// Output:
	// the stream ended in the middle of an EventBlock at byte 96,797 (3,899-byte block, 3,172 bytes read)
	// <nil> 4
}
