package main

import (
	"fmt"
	"io"
	"path"
	"strings"
	"text/tabwriter"

	"github.com/clrgo/clrevents/gen"
)

var listCommand = &command{
	name:    "list",
	summary: "list events: provider, id, version, symbol, Go type, task, opcode, level, keywords",
	usage:   "list [-schema FILE] [-extra FILE|none]... [-provider substr] [-name glob] [-format text|tsv]",
	run:     runList,
}

// runList prints one line per event of the schema, in schema order
// (provider name, then event id and version), with the Go type that
// generate gives it: the events generate writes from the same -schema and
// -extra (the built-in extra providers by default, whatever the schema).
func runList(c *command, args []string, stdout, stderr io.Writer) int {
	fs := newFlags(c, stderr)
	file := fs.String("schema", "", "the schema: a YAML schema or an XML manifest (default: the one built into clrgen)")
	extra := pathList{gen.BuiltinExtra}
	fs.Var(&extra, "extra", "a schema of providers the manifest lacks, as generate takes it; repeatable; none for none (default: the built-in SampleProfiler and EventPipe providers)")
	provider := fs.String("provider", "", "only providers whose name contains `substr` (case-insensitive)")
	name := fs.String("name", "", "only events whose symbol matches `glob` (path.Match syntax)")
	format := fs.String("format", "text", "output format: text (aligned columns) or tsv")
	if st, done := parseFlags(fs, args); done {
		return st
	}
	if fs.NArg() != 0 {
		return usageError(c, stderr, "unexpected arguments %q", fs.Args())
	}
	if *format != "text" && *format != "tsv" {
		return usageError(c, stderr, "-format %q: want text or tsv", *format)
	}
	if *name != "" {
		if _, err := path.Match(*name, ""); err != nil {
			return usageError(c, stderr, "-name %q: %v", *name, err)
		}
	}
	cfg := gen.LoadConfig{Schema: *file, Overrides: gen.BuiltinOverrides, Extra: extra.paths()}
	m, _, err := gen.LoadWith(cfg)
	if err != nil {
		return inputError(stderr, err)
	}
	names, err := gen.TypeNames(m)
	if err != nil {
		return inputError(stderr, err)
	}
	var w io.Writer = stdout
	var tw *tabwriter.Writer
	sep := "\t"
	if *format == "text" {
		tw = tabwriter.NewWriter(stdout, 0, 8, 2, ' ', 0)
		w = tw
	}
	row := func(cols ...string) {
		if *format == "text" {
			for i, c := range cols {
				if c == "" {
					cols[i] = "-"
				}
			}
		}
		fmt.Fprintln(w, strings.Join(cols, sep))
	}
	row("PROVIDER", "ID", "VERSION", "SYMBOL", "GOTYPE", "TASK", "OPCODE", "LEVEL", "KEYWORDS")
	i := 0
	for _, p := range m.Providers {
		for _, e := range p.Events {
			goName := names[i].GoName
			i++
			if !strings.Contains(strings.ToLower(p.Name), strings.ToLower(*provider)) {
				continue
			}
			if *name != "" {
				if ok, _ := path.Match(*name, e.Symbol); !ok {
					continue
				}
			}
			row(p.Name, fmt.Sprint(e.Value), fmt.Sprint(e.Version), e.Symbol, goName, e.Task, e.Opcode, e.Level,
				strings.Join(e.Keywords, ","))
		}
	}
	if tw != nil {
		if err := tw.Flush(); err != nil {
			return inputError(stderr, err)
		}
	}
	return exitOK
}
