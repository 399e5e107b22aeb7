package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clrgo/clrevents/gen"
)

var generateCommand = &command{
	name:    "generate",
	summary: "generate the clrevents package (*_gen.go) from the schema and overrides",
	usage:   "generate [-schema schema/clr.yaml] [-extra schema/extra.yaml]... [-overrides schema/overrides.yaml] [-o clrevents] [-package clrevents] [-tests=true] [-v]",
	run:     runGenerate,
}

// runGenerate writes the generated files into the output folder, touching
// only files whose bytes change and removing *_gen.go files it no longer
// makes. A generator bug that emits code gofmt cannot parse leaves
// NAME.broken beside the output and prints the numbered source.
func runGenerate(c *command, args []string, stdout, stderr io.Writer) int {
	fs := newFlags(c, stderr)
	schemaPath := fs.String("schema", "schema/clr.yaml", "the YAML schema, or a ClrEtwAll.man manifest")
	var extra pathList
	fs.Var(&extra, "extra", "a schema of providers the manifest lacks, in the YAML format; repeatable")
	overrides := fs.String("overrides", "schema/overrides.yaml", "corrections to apply; empty for none")
	out := fs.String("o", "clrevents", "the package folder to write")
	pkg := fs.String("package", "clrevents", "the package name")
	tests := fs.Bool("tests", true, "also write the generated sample-value test file")
	verbose := fs.Bool("v", false, "report what was written and the figures")
	if st, done := parseFlags(fs, args); done {
		return st
	}
	if fs.NArg() != 0 {
		return usageError(c, stderr, "unexpected arguments %q", fs.Args())
	}
	start := time.Now()
	m, err := gen.Load(*schemaPath, *overrides, extra...)
	if err != nil {
		return inputError(stderr, err)
	}
	files, err := gen.Generate(m, gen.Config{Package: *pkg, Sources: gen.Sources(*schemaPath, *overrides, extra...), Tests: *tests})
	var fe *gen.FormatError
	if errors.As(err, &fe) {
		broken := filepath.Join(*out, fe.File+".broken")
		_ = os.WriteFile(broken, fe.Source, 0o644)
		fmt.Fprintf(stderr, "%v\nthe unformatted source is in %s:\n%s", err, broken, fe.Numbered())
		return exitInput
	}
	if err != nil {
		return inputError(stderr, err)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return inputError(stderr, err)
	}
	written, removed, err := gen.WriteDir(*out, files)
	if err != nil {
		return inputError(stderr, err)
	}
	if *verbose {
		lines, types := 0, 0
		for _, src := range files {
			for _, b := range src {
				if b == '\n' {
					lines++
				}
			}
		}
		for _, p := range m.Providers {
			types += len(p.Events)
		}
		fmt.Fprintf(stdout, "clrgen: %d event types, %d files, %d lines in %v; %d written, %d removed\n",
			types, len(files), lines, time.Since(start).Round(time.Millisecond), len(written), len(removed))
	}
	return exitOK
}

// pathList is a repeatable flag of paths.
type pathList []string

func (l *pathList) String() string { return strings.Join(*l, ",") }

func (l *pathList) Set(s string) error {
	*l = append(*l, s)
	return nil
}
