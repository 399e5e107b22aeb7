// Command clrgen maintains the CLR event schema: it imports the runtime's
// event manifest (ClrEtwAll.man) into the checked-in YAML schema, compares
// two schemas or manifests so that a runtime upgrade can be reviewed, and
// lists the events a schema describes.
//
// Usage:
//
//	clrgen import [-o schema/clr.yaml] MANIFEST
//	clrgen diff OLD NEW
//	clrgen list [-schema FILE] [-provider substr] [-name glob] [-format text|tsv]
//	clrgen generate [-schema FILE] [-providers GLOB] [-events GLOB] [-keywords MASK] [-package NAME] [-o DIR] ...
//
// The schema, its extra providers and the overrides are built into clrgen,
// so list and generate work in any directory; -schema takes a YAML schema
// or a ClrEtwAll.man manifest instead. In a module of your own (Go 1.24 or
// later), make clrgen a tool of the module:
//
//	go get -tool github.com/clrgo/clrevents/cmd/clrgen@latest
//
// and a file gcev/gen.go holding
//
//	//go:generate go tool clrgen generate -providers "*DotNETRuntime" -events "GC*" -package gcev -o .
//
// makes gcev, on go generate, a package of just the runtime's GC events.
// The Windows kernel's events are a schema of their own, also built in:
//
//	clrgen generate -schema builtin:kernel.yaml -extra none -overrides none -quote-text-guids -events 'Process*,Thread*' -package kev -o kev
//
// makes kev, the kernel's process and thread events (package kernelevents
// holds them all).
//
// Exit status: 0 on success, 1 when an input fails to load (the error names
// file:line), 2 on a usage error. diff exits as diff(1) does: 0 when the
// inputs describe the same events, 1 when they differ, 2 on trouble.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// command is one subcommand of clrgen.
type command struct {
	name    string
	summary string // one line, for the command list
	usage   string // the synopsis after "clrgen "
	// run runs the command c (itself) with the arguments after its name
	// and returns the exit status.
	run func(c *command, args []string, stdout, stderr io.Writer) int
}

// commands is the subcommand table. To add a subcommand, define it in its own
// file and add it here.
var commands = []*command{
	importCommand,
	diffCommand,
	listCommand,
	generateCommand,
}

// Exit statuses.
const (
	exitOK    = 0
	exitInput = 1 // an input failed to load
	exitUsage = 2 // bad command line

	// diff follows diff(1): 1 when the inputs differ, 2 for trouble.
	exitDiffer  = 1
	exitTrouble = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches args (without the program name) to a subcommand and returns
// the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		printUsage(stdout)
		return exitOK
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(c, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "clrgen: unknown command %q\n", args[0])
	printUsage(stderr)
	return exitUsage
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, "usage: clrgen <command> [arguments]\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
}

// newFlags returns a flag set for c that reports to stderr.
func newFlags(c *command, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("clrgen "+c.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: clrgen %s\n", c.usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args; done is true when the command should stop with
// status (help was asked for, or the flags were bad).
func parseFlags(fs *flag.FlagSet, args []string) (status int, done bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, true
		}
		return exitUsage, true
	}
	return exitOK, false
}

// usageError reports a bad command line for c and returns exitUsage.
func usageError(c *command, stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "clrgen %s: %s\n", c.name, fmt.Sprintf(format, args...))
	fmt.Fprintf(stderr, "usage: clrgen %s\n", c.usage)
	return exitUsage
}

// inputError prints err, whose lines start with file:line, and returns
// exitInput.
func inputError(stderr io.Writer, err error) int {
	fmt.Fprintln(stderr, err)
	return exitInput
}
