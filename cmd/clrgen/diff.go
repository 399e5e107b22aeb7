package main

import (
	"io"

	"github.com/clrgo/clrevents/schema"
)

var diffCommand = &command{
	name:    "diff",
	summary: "list what changed between two manifests or YAML schemas",
	usage:   "diff OLD NEW",
	run:     runDiff,
}

// runDiff prints what changed from OLD to NEW, grouped by provider and
// section. Identical schemas print nothing. A difference is not a failure:
// the status is 0 unless an input fails to load.
func runDiff(c *command, args []string, stdout, stderr io.Writer) int {
	fs := newFlags(c, stderr)
	if st, done := parseFlags(fs, args); done {
		return st
	}
	if fs.NArg() != 2 {
		return usageError(c, stderr, "want OLD and NEW, have %d arguments", fs.NArg())
	}
	old, err := loadSchema(fs.Arg(0))
	if err != nil {
		return inputError(stderr, err)
	}
	new, err := loadSchema(fs.Arg(1))
	if err != nil {
		return inputError(stderr, err)
	}
	if err := schema.Diff(old, new).Write(stdout); err != nil {
		return inputError(stderr, err)
	}
	return exitOK
}
