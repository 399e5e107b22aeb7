package main

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/clrgo/clrevents/gen"
	"github.com/clrgo/clrevents/schema"
)

var diffCommand = &command{
	name:    "diff",
	summary: "list what changed between two manifests or YAML schemas; exit 1 when they differ",
	usage:   "diff OLD NEW",
	run:     runDiff,
}

// runDiff prints what changed from OLD to NEW, grouped by provider and
// section, then what that does to the Go package generate makes of them
// (writeAPIDiff). Like diff(1), it exits 0 when the inputs describe the same
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
	if err := writeAPIDiff(&buf, fs.Arg(0), fs.Arg(1)); err != nil {
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

// writeAPIDiff writes what regenerating from newPath instead of oldPath
// does to the names of the package generate makes, with its built-in
// overrides (gen.API): the names that go, which break code that uses
// them; the fields whose Go type changes (gen.APITypes), which may break
// it; the names that stand for something else, which code still
// compiles with and which then do another thing (an event type that
// decodes another event, a field of another type, a constant of another
// value); and how many are new. Nothing when the names stand as they
// were.
func writeAPIDiff(w io.Writer, oldPath, newPath string) error {
	// As generate makes the package with its defaults: the built-in
	// extra providers (which take provider constants) and overrides.
	api := func(path string) (api, types map[string]string, carriers map[string][]string, err error) {
		m, _, err := gen.LoadWith(gen.LoadConfig{Schema: path, Extra: []string{gen.BuiltinExtra}, Overrides: gen.BuiltinOverrides})
		if err != nil {
			return nil, nil, nil, err
		}
		if api, err = gen.API(m); err != nil {
			return nil, nil, nil, err
		}
		if types, err = gen.APITypes(m); err != nil {
			return nil, nil, nil, err
		}
		carriers, err = gen.APICarriers(m)
		return api, types, carriers, err
	}
	oldAPI, oldTypes, oldCarriers, err := api(oldPath)
	if err != nil {
		return err
	}
	newAPI, newTypes, newCarriers, err := api(newPath)
	if err != nil {
		return err
	}
	var gone, retyped, changed, added, lost []string
	// A family field that members of both packages carried and no longer
	// carry: HasX is false for them now, and X reads zero.
	for name, was := range oldCarriers {
		fam, _, isField := strings.Cut(name, ".")
		now, ok := newCarriers[name]
		if !isField || !ok {
			continue // a family, or a field that is gone
		}
		var left []string
		for _, ev := range was {
			if contains(newCarriers[fam], ev) && !contains(now, ev) {
				left = append(left, ev)
			}
		}
		if len(left) > 0 {
			lost = append(lost, fmt.Sprintf("  ~ %s: no longer carried by %s (carried by %s)\n", name, strings.Join(left, ", "), strings.Join(now, ", ")))
		}
	}
	for name, was := range oldAPI {
		now, ok := newAPI[name]
		switch {
		case !ok:
			gone = append(gone, fmt.Sprintf("  - %s: %s\n", name, was))
		case oldTypes[name] != newTypes[name]:
			l := fmt.Sprintf("  ~ %s: %s, now %s", name, was, now)
			if was != oldTypes[name] || now != newTypes[name] {
				l += fmt.Sprintf(" (Go type %s, now %s)", oldTypes[name], newTypes[name])
			}
			retyped = append(retyped, l+"\n")
		case now != was:
			changed = append(changed, fmt.Sprintf("  ~ %s: %s, now %s\n", name, was, now))
		}
	}
	for name := range newAPI {
		if _, ok := oldAPI[name]; !ok {
			added = append(added, name)
		}
	}
	if len(gone)+len(retyped)+len(changed)+len(added)+len(lost) == 0 {
		return nil
	}
	sort.Strings(lost)
	sort.Strings(gone)
	sort.Strings(retyped)
	sort.Strings(changed)
	sort.Strings(added)
	fmt.Fprintf(w, "Go names (as generate makes them, with the built-in overrides):\n")
	if len(gone) > 0 {
		fmt.Fprintf(w, "%d gone: code that uses them no longer compiles\n", len(gone))
		io.WriteString(w, strings.Join(gone, ""))
	}
	if len(retyped) > 0 {
		fmt.Fprintf(w, "%d of another Go type: code that uses them may no longer compile (a named enum type and its integer type do not mix), or does another thing\n", len(retyped))
		io.WriteString(w, strings.Join(retyped, ""))
	}
	if len(changed) > 0 {
		fmt.Fprintf(w, "%d that stand for something else: code that uses them compiles, and does another thing\n", len(changed))
		io.WriteString(w, strings.Join(changed, ""))
	}
	if len(lost) > 0 {
		fmt.Fprintf(w, "%d carried by fewer members: code that uses them compiles, and finds HasX false and X zero for those members\n", len(lost))
		io.WriteString(w, strings.Join(lost, ""))
	}
	if len(added) > 0 {
		// The new types and constants by name, and the new fields of
		// types that were there before (a new type's fields go with it).
		had := map[string]bool{} // the types of the old package, element types included
		for n := range oldAPI {
			owner, _, _ := strings.Cut(n, ".")
			had[owner] = true
		}
		var top []string
		for _, n := range added {
			if owner, _, isField := strings.Cut(n, "."); isField && !had[owner] {
				continue
			}
			top = append(top, n)
		}
		const most = 24
		more := ""
		if len(top) > most {
			more = fmt.Sprintf(", and %d more", len(top)-most)
			top = top[:most]
		}
		fmt.Fprintf(w, "%d new (fields included): %s%s\n", len(added), strings.Join(top, ", "), more)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
