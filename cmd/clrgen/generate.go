package main

import (
	"errors"
	"fmt"
	"go/token"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/clrgo/clrevents/gen"
	"github.com/clrgo/clrevents/schema"
)

var generateCommand = &command{
	name:    "generate",
	summary: "generate a package of typed decoders (*_gen.go) from the schema, or a subset of it",
	usage:   "generate [-schema FILE] [-extra FILE|none]... [-overrides FILE|none] [-strict] [-providers GLOB]... [-events GLOB]... [-keywords MASK] [-package NAME] [-o DIR] [-tests] [-quote-text-guids] [-command TEXT] [-v]",
	run:     runGenerate,
}

// runGenerate writes the generated files into the output folder, touching
// only files whose bytes change and removing *_gen.go files it no longer
// makes. A generator bug that emits code gofmt cannot parse leaves
// NAME.broken beside the output and prints the numbered source.
//
// With no -schema it generates from the schema built into clrgen (the
// checked-in schema/clr.yaml, schema/extra.yaml and schema/overrides.yaml),
// so it works in any directory; -schema builtin:kernel.yaml is the built-in
// schema of the Windows kernel's events (schema/kernel.yaml), which has no
// extra schema or overrides of its own.
func runGenerate(c *command, args []string, stdout, stderr io.Writer) int {
	fs := newFlags(c, stderr)
	schemaPath := fs.String("schema", "", "the schema: a YAML schema or a ClrEtwAll.man manifest (default: the one built into clrgen); builtin:kernel.yaml for the Windows kernel's events")
	extra := pathList{gen.BuiltinExtra}
	fs.Var(&extra, "extra", "a schema of providers the manifest lacks, in the YAML format; repeatable; none for none (default: the built-in SampleProfiler and EventPipe providers)")
	overrides := fs.String("overrides", gen.BuiltinOverrides, "corrections to apply instead of the built-in ones (a copy of schema/overrides.yaml to start from: real manifests need its goNames); none for none")
	strict := fs.Bool("strict", false, "an override that does not apply to the schema is an error (default: skipped, with a note)")
	var providers, events globList
	fs.Var(&providers, "providers", "only providers whose name matches `GLOB` (case-insensitive); repeatable or comma-separated")
	fs.Var(&events, "events", "only events whose manifest symbol matches `GLOB`; repeatable or comma-separated")
	keywords := fs.String("keywords", "", "only events with any of these keyword bits (`MASK`, hex or decimal)")
	out := fs.String("o", "clrevents", "the package folder to write")
	pkg := fs.String("package", "", "the package name (default: the last element of -o)")
	tests := fs.Bool("tests", false, "also write samples_gen_test.go: a value of every event type, and a test and a benchmark of the generated code over them (see clrimpl/clrimpltest)")
	quoteGUIDs := fs.Bool("quote-text-guids", false, "write GUIDs quoted in the text form, as TraceEvent-style tools show them (the kernel's events)")
	verbose := fs.Bool("v", false, "report what was written and the figures")
	command := fs.String("command", "", "the command the files' header names as the way to regenerate them (default: this clrgen command line)")
	if st, done := parseFlags(fs, args); done {
		return st
	}
	if fs.NArg() != 0 {
		return usageError(c, stderr, "unexpected arguments %q", fs.Args())
	}
	name := *pkg
	if name == "" {
		abs, err := filepath.Abs(*out)
		if err != nil {
			return inputError(stderr, err)
		}
		name = filepath.Base(abs)
	}
	if !token.IsIdentifier(name) || name == "_" {
		return usageError(c, stderr, "package name %q is not a Go identifier (letters, digits and _, not starting with a digit, not a keyword); name one with -package", name)
	}
	if name == "main" {
		return usageError(c, stderr, "package name main: the generated code is a library, and a main package needs a func main; name another with -package (or -o a directory of another name)")
	}
	cfg := gen.LoadConfig{Schema: *schemaPath, Strict: *strict, Overrides: *overrides}
	if cfg.Overrides == "none" {
		cfg.Overrides = ""
	}
	cfg.Extra = extra.paths()
	cfg.Subset = schema.Subset{Providers: providers, Events: events}
	if *keywords != "" {
		k, err := strconv.ParseUint(*keywords, 0, 64)
		switch {
		case errors.Is(err, strconv.ErrRange):
			return usageError(c, stderr, "-keywords %q is more than a 64-bit mask holds", *keywords)
		case err != nil || k == 0:
			return usageError(c, stderr, "-keywords %q is not a non-zero number", *keywords)
		}
		cfg.Subset.Keywords = k
	}
	for _, fl := range []struct {
		name  string
		globs globList
	}{{"providers", providers}, {"events", events}} {
		for _, g := range fl.globs {
			if _, err := path.Match(g, ""); err != nil { // the syntax schema.Subset takes
				return usageError(c, stderr, "-%s %q: bad glob: %v", fl.name, g, err)
			}
		}
	}
	start := time.Now()
	m, skipped, err := gen.LoadWith(cfg)
	for _, s := range skipped {
		fmt.Fprintf(stderr, "clrgen: skipped override: %v\n", s)
	}
	if err != nil {
		return inputError(stderr, err)
	}
	src := gen.Sources(cfg.Schema, cfg.Overrides, cfg.Extra...)
	files, err := gen.Generate(m, gen.Config{Package: name, Sources: src, Tests: *tests, QuoteTextGUIDs: *quoteGUIDs, Command: headerCommand(*command, args)})
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
		fmt.Fprintf(stdout, "clrgen: package %s: %d event types, %d files, %d lines in %v; %d written, %d removed\n",
			name, types, len(files), lines, time.Since(start).Round(time.Millisecond), len(written), len(removed))
	}
	return exitOK
}

func headerCommand(flag string, args []string) string {
	if flag != "" {
		return flag
	}
	return commandLine(args)
}

// commandLine is the generate command as a shell would take it back, for
// the generated files' header, without -v: it changes nothing generated,
// and a run with it would otherwise rewrite every file.
func commandLine(args []string) string {
	parts := []string{"clrgen", "generate"}
	for _, a := range args {
		if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); name == "v" && strings.HasPrefix(a, "-") {
			continue // -v, --v, -v=false: a boolean flag takes no separate value
		}
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./,:+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// pathList is a repeatable flag of paths; the first Set replaces the
// default.
type pathList []string

func (l *pathList) String() string { return strings.Join(*l, ",") }

// paths are the schemas the flag names; "none" drops those before it.
func (l pathList) paths() []string {
	var out []string
	for _, x := range l {
		if x == "none" {
			out = nil
			continue
		}
		out = append(out, x)
	}
	return out
}

func (l *pathList) Set(s string) error {
	if len(*l) == 1 && (*l)[0] == gen.BuiltinExtra {
		*l = nil
	}
	*l = append(*l, s)
	return nil
}

// globList is a repeatable flag of comma-separated globs.
type globList []string

func (l *globList) String() string { return strings.Join(*l, ",") }

func (l *globList) Set(s string) error {
	for _, g := range strings.Split(s, ",") {
		if g = strings.TrimSpace(g); g != "" {
			*l = append(*l, g)
		}
	}
	return nil
}
