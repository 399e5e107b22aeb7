// Command clrgen maintains the CLR event schema: it imports the runtime's
// event manifest (ClrEtwAll.man) into the checked-in YAML schema, compares
// two schemas or manifests so that a runtime upgrade can be reviewed, and
// lists the events a schema describes.
//
// Usage:
//
//	clrgen import [-o schema/clr.yaml] MANIFEST
//	clrgen diff OLD NEW
//	clrgen list [-schema schema/clr.yaml] [-provider substr] [-name glob] [-format text|tsv]
//
// Exit status: 0 on success, 1 when an input fails to load (the error names
// file:line), 2 on a usage error.
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
