package main

import (
	"bytes"
	"io"

	"github.com/clrgo/clrevents/schema"
)

var diffCommand = &command{
	name:    "diff",
	summary: "list what changed between two manifests or YAML schemas; exit 1 when they differ",
	usage:   "diff OLD NEW",
	run:     runDiff,
}

// runDiff prints what changed from OLD to NEW, grouped by provider and
// section. Like diff(1), it exits 0 when the inputs describe the same
// events, 1 when they differ and 2 when an input fails to load or the
// command line is wrong.
func runDiff(c *command, args []string, stdout, stderr io.Writer) int {
	fs := newFlags(c, stderr)
	if st, done := parseFlags(fs, args); done {
		return st
	}
	if fs.NArg() != 2 {
		return usageError(c, stderr, "want OLD and NEW, have %d arguments", fs.NArg())
	}
	old, err := schema.Load(fs.Arg(0))
	if err != nil {
		inputError(stderr, err)
		return exitTrouble
	}
	new, err := schema.Load(fs.Arg(1))
	if err != nil {
		inputError(stderr, err)
		return exitTrouble
	}
	var buf bytes.Buffer
	if err := schema.Diff(old, new).Write(&buf); err != nil {
		inputError(stderr, err)
		return exitTrouble
	}
	if _, err := stdout.Write(buf.Bytes()); err != nil {
		inputError(stderr, err)
		return exitTrouble
	}
	if buf.Len() > 0 {
		return exitDiffer
	}
	return exitOK
}
