package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/schema"
)

const (
	smallMan  = "../../schema/testdata/small.man"
	brokenMan = "../../schema/testdata/broken/count_missing.man"
	checkedIn = "../../schema/clr.yaml"
	sharedDir = "../../../shared/manifests"
)

// clrgen runs the command in-process.
func clrgen(args ...string) (status int, stdout, stderr string) {
	var o, e bytes.Buffer
	status = run(args, &o, &e)
	return status, o.String(), e.String()
}

func shared(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(sharedDir, name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("needs the real manifests in %s (present in CI, not in a fresh clone): %v", sharedDir, err)
	}
	return p
}

func TestUsage(t *testing.T) {
	tests := []struct {
		args     []string
		status   int
		out, err string // substrings; "" means must be empty
	}{
		{nil, 2, "", "usage: clrgen <command>"},
		{[]string{"frob"}, 2, "", `unknown command "frob"`},
		{[]string{"help"}, 0, "usage: clrgen <command>", ""},
		{[]string{"import"}, 2, "", "usage: clrgen import [-o schema/clr.yaml] MANIFEST"},
		{[]string{"import", "a", "b"}, 2, "", "want one MANIFEST, have 2 arguments"},
		{[]string{"import", "-x", "a"}, 2, "", "flag provided but not defined: -x"},
		{[]string{"diff", "a"}, 2, "", "usage: clrgen diff OLD NEW"},
		{[]string{"list", "-format", "csv", "-schema", smallMan}, 2, "", `-format "csv": want text or tsv`},
		{[]string{"list", "-name", "[", "-schema", smallMan}, 2, "", `-name "["`},
		{[]string{"list", "extra"}, 2, "", "unexpected arguments"},
		{[]string{"list", "-h"}, 0, "", "usage: clrgen list"},
	}
	for _, tt := range tests {
		st, out, errOut := clrgen(tt.args...)
		if st != tt.status {
			t.Errorf("clrgen %q: status %d, want %d (stderr %q)", tt.args, st, tt.status, errOut)
		}
		for _, c := range []struct{ got, want, name string }{{out, tt.out, "stdout"}, {errOut, tt.err, "stderr"}} {
			if c.want == "" && c.got != "" {
				t.Errorf("clrgen %q: unexpected %s %q", tt.args, c.name, c.got)
			}
			if !strings.Contains(c.got, c.want) {
				t.Errorf("clrgen %q: %s %q lacks %q", tt.args, c.name, c.got, c.want)
			}
		}
	}
	// Every command in the table is listed by help.
	_, out, _ := clrgen("help")
	for _, c := range commands {
		if !strings.Contains(out, "  "+c.name+" ") {
			t.Errorf("help does not list %s", c.name)
		}
	}
}

func TestImport(t *testing.T) {
	out := filepath.Join(t.TempDir(), "clr.yaml")
	st, stdout, stderr := clrgen("import", "-o", out, smallMan)
	if st != 0 || stdout != "" || stderr != "" {
		t.Fatalf("import: status %d, stdout %q, stderr %q", st, stdout, stderr)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	s, err := schema.LoadManifest(smallMan)
	if err != nil {
		t.Fatal(err)
	}
	want, err := schema.MarshalYAML(s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("import wrote:\n%s\nwant:\n%s", got, want)
	}

	// Unchanged bytes: the file is not rewritten.
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(out, old, old); err != nil {
		t.Fatal(err)
	}
	if st, _, stderr := clrgen("import", "-o", out, smallMan); st != 0 {
		t.Fatalf("second import: %d %s", st, stderr)
	}
	if fi, err := os.Stat(out); err != nil || !fi.ModTime().Equal(old) {
		t.Errorf("unchanged import rewrote the file (mtime %v)", fi.ModTime())
	}
	// Changed bytes: rewritten.
	if err := os.WriteFile(out, []byte("stale\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, _, _ := clrgen("import", "-o", out, smallMan); st != 0 {
		t.Fatal("third import failed")
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, want) {
		t.Errorf("stale file not replaced")
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".clr.yaml.*")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}

	// -o - writes to stdout.
	if st, stdout, _ := clrgen("import", "-o", "-", smallMan); st != 0 || stdout != string(want) {
		t.Errorf("import -o -: status %d, %d bytes", st, len(stdout))
	}
}

func TestImportErrors(t *testing.T) {
	out := filepath.Join(t.TempDir(), "clr.yaml")
	st, stdout, stderr := clrgen("import", "-o", out, brokenMan)
	want := `count_missing.man:25: template T: field "X": count="Nope" names no earlier field of the same template or struct` + "\n"
	if st != 1 || stdout != "" || stderr != want {
		t.Errorf("broken manifest: status %d, stdout %q, stderr %q; want 1, stderr %q", st, stdout, stderr, want)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a failed import wrote %s", out)
	}
	if st, _, stderr := clrgen("import", "-o", out, "no-such.man"); st != 1 || !strings.Contains(stderr, "no-such.man") {
		t.Errorf("missing manifest: status %d, stderr %q", st, stderr)
	}
}

// TestImportCheckedIn: importing the newest real manifest reproduces
// schema/clr.yaml byte for byte.
func TestImportCheckedIn(t *testing.T) {
	man := shippedManifest(t)
	st, stdout, stderr := clrgen("import", "-o", "-", man)
	if st != 0 {
		t.Fatalf("import: %d %s", st, stderr)
	}
	want, err := os.ReadFile(checkedIn)
	if err != nil {
		t.Fatal(err)
	}
	if stdout != string(want) {
		t.Error(staleSchema(filepath.Base(man)))
	}
}

// pinnedDir holds the gzipped copy of the manifest schema/clr.yaml was
// imported from, under the name its source: key gives.
const pinnedDir = "../../testdata/manifests"

// staleSchema is TestImportCheckedIn's message when importing the pinned
// manifest, source, does not give schema/clr.yaml: either clr.yaml was
// edited (import the manifest again), or a newer manifest was imported
// under the same name without pinning it.
func staleSchema(source string) string {
	pinned := filepath.Join("testdata/manifests", source+".gz")
	return fmt.Sprintf("stale schema/clr.yaml: importing %s, the manifest its source: key names, gives another schema.\n"+
		"If clr.yaml was edited, import the manifest again:\n"+
		"\tgzip -dc %s > /tmp/%s && go run ./cmd/clrgen import -o schema/clr.yaml /tmp/%s\n"+
		"If a newer %s was imported, pin it:\n"+
		"\tgzip -9 -c path/to/%s > %s\n"+
		"(see the README's \"Regenerating after a new runtime\" for the tests pinned to its counts)",
		pinned, pinned, source, source, source, source, pinned)
}

// shippedManifest unzips testdata's copy of the manifest schema/clr.yaml
// was imported from (its source: key names it; the one in ../shared, byte
// for byte, when ../shared has it) under its own name.
func shippedManifest(t *testing.T) string {
	t.Helper()
	s, err := schema.LoadYAML(checkedIn)
	if err != nil {
		t.Fatal(err)
	}
	pinned := filepath.Join(pinnedDir, s.Source+".gz")
	f, err := os.Open(pinned)
	if err != nil {
		t.Fatalf("schema/clr.yaml was imported from %s, which testdata/manifests does not pin: %v\npin it: gzip -9 -c path/to/%s > testdata/manifests/%s.gz, and add it to testdata/PROVENANCE.md", s.Source, err, s.Source, s.Source)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), s.Source)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if shared, err := os.ReadFile(filepath.Join(sharedDir, s.Source)); err == nil && string(shared) != string(data) {
		t.Fatalf("testdata/manifests holds a different %s from ../shared's", s.Source)
	}
	return p
}

// TestStaleSchemaMessage: the message names the manifest clr.yaml says it
// was imported from, whatever it is, and how to pin a newer one; it never
// sends the maintainer back to an older manifest.
func TestStaleSchemaMessage(t *testing.T) {
	msg := staleSchema("ClrEtwAll.runtime-main-net11.man")
	for _, want := range []string{
		"importing testdata/manifests/ClrEtwAll.runtime-main-net11.man.gz, the manifest its source: key names",
		"go run ./cmd/clrgen import -o schema/clr.yaml /tmp/ClrEtwAll.runtime-main-net11.man",
		"gzip -9 -c path/to/ClrEtwAll.runtime-main-net11.man > testdata/manifests/ClrEtwAll.runtime-main-net11.man.gz",
		"Regenerating after a new runtime",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "net10") {
		t.Errorf("message names another manifest:\n%s", msg)
	}
}

// writeChanged writes small.man's schema, with one event level changed, as
// YAML under a name that does not say .yaml: the kind is told by content.
func writeChanged(t *testing.T) string {
	t.Helper()
	s, err := schema.LoadManifest(smallMan)
	if err != nil {
		t.Fatal(err)
	}
	s.Provider("Test-Runtime").Event("GCPerHeap").Level = "win:Informational"
	data, err := schema.MarshalYAML(s)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "changed.schema")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDiff(t *testing.T) {
	// Identical inputs, in either form: no output, status 0.
	for _, args := range [][]string{{smallMan, smallMan}, {checkedIn, checkedIn}} {
		if st, stdout, stderr := clrgen(append([]string{"diff"}, args...)...); st != 0 || stdout != "" || stderr != "" {
			t.Errorf("diff %v: status %d, stdout %q, stderr %q", args, st, stdout, stderr)
		}
	}
	changed := writeChanged(t)
	st, stdout, stderr := clrgen("diff", smallMan, changed)
	want := "provider Test-Runtime\n  events changed:\n    ~ GCPerHeap (4 v0): level win:Verbose → win:Informational\n"
	// Different inputs: status 1, as diff(1).
	if st != 1 || stdout != want || stderr != "" {
		t.Errorf("diff small changed: status %d, stdout %q, stderr %q; want 1, %q", st, stdout, stderr, want)
	}
	// A broken input: status 2 and its file:line.
	st, stdout, stderr = clrgen("diff", smallMan, brokenMan)
	if st != 2 || stdout != "" || !strings.HasPrefix(stderr, "count_missing.man:25: ") {
		t.Errorf("diff with broken input: status %d, stdout %q, stderr %q", st, stdout, stderr)
	}
	st, _, stderr = clrgen("diff", "../../schema/testdata/broken/type.yaml", smallMan)
	if st != 2 || !strings.HasPrefix(stderr, "type.yaml:8: ") {
		t.Errorf("diff with broken YAML: status %d, stderr %q", st, stderr)
	}
}

// TestDiffReal reviews the .NET Framework → .NET 10 upgrade through the
// command, manifest against the checked-in YAML.
func TestDiffReal(t *testing.T) {
	old := shared(t, "ClrEtwAll.perfview-2016.man")
	st, stdout, stderr := clrgen("diff", old, checkedIn)
	if st != 1 || stderr != "" {
		t.Fatalf("status %d, stderr %q", st, stderr)
	}
	for _, l := range []string{
		"+ provider Microsoft-DotNETRuntimeMonoProfiler",
		"    + AllocationSampled (303 v0), task AllocationSampling, keywords AllocationSamplingKeyword, 7 fields",
		"    + WaitHandleWaitStart (301 v0)",
		"    + WaitHandleWaitStop (302 v0)",
		"    + ModuleLoad_V3 (152 v3), task CLRLoader",
		"    ~ 0x800000: GCHeapCollectKeyword → ManagedHeapCollectKeyword",
		"    ~ MethodJitInliningFailedAnsi (186 v0): symbol MethodJitInliningFailed → MethodJitInliningFailedAnsi",
	} {
		if !strings.Contains("\n"+stdout, "\n"+l) {
			t.Errorf("diff lacks %q", l)
		}
	}
	if strings.Contains(stdout, "RuntimeGCHeapCollectKeyword") {
		t.Errorf("the diff reports RuntimeGCHeapCollectKeyword, which the alias keeps:\n%s", stdout)
	}
	if strings.Contains(stdout, "removed") || strings.Contains(stdout, "GCStart_V2") {
		t.Errorf("diff reports removals or GCStart_V2:\n%s", stdout)
	}
	schemaPart, goPart, _ := strings.Cut(stdout, "Go names")
	if n := strings.Count(schemaPart, "\n"); n != 246 {
		t.Errorf("diff has %d lines before its Go names, want 246 (see schema's TestDiff2016ToNet10 for the per-section counts)", n)
	}
	// What regenerating does to code that uses the package: the names
	// that go, and those that stand for something else and still compile
	// (the runtime's ANSI inlining and tail-call failures kept their
	// symbols' names for the UTF-16 events that replaced them).
	for _, l := range []string{
		" (as generate makes them, with the built-in overrides):",
		// RuntimeGCHeapCollectKeyword stays, as an alias of
		// RuntimeManagedHeapCollectKeyword (overrides.yaml keywordAliases).
		"4 gone: code that uses them no longer compiles",
		"  - GCRootKindOther: GCRootKind(3)",
		"  - RuntimeFusionKeyword: keyword 0x4 of Microsoft-Windows-DotNETRuntime",
		"  - GCPerHeapHistoryFields.Values: GCPerHeapHistoryValuesArray",
		"8 of another Go type: code that uses them may no longer compile (a named enum type and its integer type do not mix), or does another thing",
		"  ~ MethodJitInliningFailed.FailReason: ansi, now utf16 (Go type Ansi, now UTF16)",
		"  ~ GCGlobalHeapFields.Reason: PrivateGCReason, now GCReason\n",
		"13 that stand for something else: code that uses them compiles, and does another thing",
		"  ~ MethodJitInliningFailed: Microsoft-Windows-DotNETRuntime event 186 v0 (MethodJitInliningFailed, shown as Method/InliningFailed), now Microsoft-Windows-DotNETRuntime event 192 v0 (MethodJitInliningFailed, shown as Method/InliningFailed)",
		"  ~ GCRootKind: enum of uint8, now enum of uint32",
		// Family kinds, provider constants and display names, which
		// the diff did not look at.
		"  ~ KindAppDomainLoad: AppDomainLoadUnloadKind(1): AppDomainLoad, now AppDomainLoadUnloadKind(5): AppDomainLoad",
		// With the built-in extra providers, as generate numbers them.
		"  ~ ProviderRuntime: Provider(2): Microsoft-Windows-DotNETRuntime, now Provider(3): Microsoft-Windows-DotNETRuntime",
		"  ~ PrvDestroyGCHandle: Microsoft-Windows-DotNETRuntimePrivate event 195 v0 (PrvDestroyGCHandle, shown as GC/DestoryGCHandle), now Microsoft-Windows-DotNETRuntimePrivate event 195 v0 (PrvDestroyGCHandle, shown as GC/DestroyGCHandle)",
		"1068 new (fields included): AllocationSampled, ",
	} {
		if !strings.Contains(goPart, l) {
			t.Errorf("the diff's Go names lack %q:\n%s", l, goPart)
		}
	}
}

func TestList(t *testing.T) {
	// With the built-in extra providers, as generate writes them from the
	// same schema (list left them out for a -schema of one's own).
	st, stdout, _ := clrgen("list", "-schema", smallMan, "-format", "tsv")
	if st != 0 || !strings.Contains(stdout, "Microsoft-DotNETCore-SampleProfiler\t0\t0\tThreadSample\tThreadSample\t") {
		t.Errorf("list of a schema of one's own lacks the extra providers generate writes:\n%s", stdout)
	}
	st, stdout, stderr := clrgen("list", "-schema", smallMan, "-extra", "none", "-format", "tsv")
	want := "PROVIDER\tID\tVERSION\tSYMBOL\tGOTYPE\tTASK\tOPCODE\tLEVEL\tKEYWORDS\n" +
		"Test-Rundown\t144\t0\tModuleDCStop\tModuleDCStop\t\twin:DC_Stop\twin:LogAlways\tLoaderRundownKeyword\n" +
		"Test-Runtime\t4\t0\tGCPerHeap\tGCPerHeap\tGarbageCollection\tGCHeapStats\twin:Verbose\tGCKeyword\n" +
		"Test-Runtime\t9\t1\tGCStart_V1\tGCStartV1\tGarbageCollection\twin:Start\twin:Informational\tGCKeyword\n" +
		"Test-Runtime\t9\t2\tGCStart_V2\tGCStartV2\tGarbageCollection\twin:Start\twin:Informational\tGCKeyword\n" +
		"Test-Runtime\t15\t0\tBulkType\tBulkType\tCLRLoader\twin:Info\twin:Informational\tGCKeyword,LoaderKeyword\n" +
		"Test-Runtime\t144\t0\tModuleLoad\tModuleLoad\tCLRLoader\twin:DC_Start\twin:Verbose\tLoaderKeyword\n" +
		"Test-Runtime\t190\t0\tMethodILToNativeMap\tMethodILToNativeMap\t\t\twin:Verbose\t\n"
	if st != 0 || stdout != want || stderr != "" {
		t.Errorf("list tsv: status %d, stderr %q, stdout:\n%s\nwant:\n%s", st, stderr, stdout, want)
	}

	st, stdout, _ = clrgen("list", "-schema", smallMan, "-provider", "RUNDOWN")
	want = "PROVIDER      ID   VERSION  SYMBOL        GOTYPE        TASK  OPCODE       LEVEL          KEYWORDS\n" +
		"Test-Rundown  144  0        ModuleDCStop  ModuleDCStop  -     win:DC_Stop  win:LogAlways  LoaderRundownKeyword\n"
	if st != 0 || stdout != want {
		t.Errorf("list -provider RUNDOWN:\n%s\nwant:\n%s", stdout, want)
	}

	st, stdout, _ = clrgen("list", "-schema", checkedIn, "-name", "WaitHandleWait*", "-format", "tsv")
	want = "PROVIDER\tID\tVERSION\tSYMBOL\tGOTYPE\tTASK\tOPCODE\tLEVEL\tKEYWORDS\n" +
		"Microsoft-Windows-DotNETRuntime\t301\t0\tWaitHandleWaitStart\tWaitHandleWaitStart\tWaitHandleWait\twin:Start\twin:Verbose\tWaitHandleKeyword\n" +
		"Microsoft-Windows-DotNETRuntime\t302\t0\tWaitHandleWaitStop\tWaitHandleWaitStop\tWaitHandleWait\twin:Stop\twin:Verbose\tWaitHandleKeyword\n"
	if st != 0 || stdout != want {
		t.Errorf("list -name WaitHandleWait*:\n%s\nwant:\n%s", stdout, want)
	}

	// All events of the checked-in schema: 516 (PROVENANCE.md) and a
	// header; and the 3 of the extra providers, as generate writes them.
	st, stdout, _ = clrgen("list", "-schema", checkedIn, "-extra", "none")
	if n := strings.Count(stdout, "\n"); st != 0 || n != 517 {
		t.Errorf("list of clr.yaml: status %d, %d lines, want 517", st, n)
	}
	st, stdout, _ = clrgen("list", "-schema", checkedIn)
	if n := strings.Count(stdout, "\n"); st != 0 || n != 520 {
		t.Errorf("list of clr.yaml with the extra providers: status %d, %d lines, want 520", st, n)
	}

	st, stdout, stderr = clrgen("list", "-schema", brokenMan)
	if st != 1 || stdout != "" || !strings.HasPrefix(stderr, "count_missing.man:25: ") {
		t.Errorf("list of broken: status %d, stdout %q, stderr %q", st, stdout, stderr)
	}
}

// editedManifest writes the shipped manifest with edits made under a name
// of its own, and returns its path. Each edit replaces the first old (which
// must occur) after its anchor ("" for the start).
func editedManifest(t *testing.T, name string, edits ...struct{ anchor, old, new string }) string {
	t.Helper()
	data, err := os.ReadFile(shippedManifest(t))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, e := range edits {
		a := strings.Index(text, e.anchor)
		i := -1
		if a >= 0 {
			i = strings.Index(text[a:], e.old)
		}
		if i < 0 {
			t.Fatalf("the shipped manifest lacks %q after %q", e.old, e.anchor)
		}
		text = text[:a+i] + e.new + text[a+i+len(e.old):]
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type edit = struct{ anchor, old, new string }

// TestDiffEnumToInteger: a field that goes from a named enum type to its
// integer type keeps its name, but code that compares it with the enum's
// constants no longer compiles; the diff must not say it does.
func TestDiffEnumToInteger(t *testing.T) {
	newer := editedManifest(t, "ClrEtwAll.nomap.man", edit{"",
		`<data name="BucketKind" inType="win:UInt16" map="GCBucketKindMap" />`,
		`<data name="BucketKind" inType="win:UInt16" />`})
	st, stdout, stderr := clrgen("diff", shippedManifest(t), newer)
	if st != 1 || stderr != "" {
		t.Fatalf("status %d, stderr %q", st, stderr)
	}
	_, goPart, _ := strings.Cut(stdout, "Go names")
	want := "1 of another Go type: code that uses them may no longer compile (a named enum type and its integer type do not mix), or does another thing\n" +
		"  ~ GCFitBucketInfo.BucketKind: uint16 as GCBucketKind, now uint16 (Go type GCBucketKind, now uint16)\n"
	if !strings.Contains(goPart, want) {
		t.Errorf("the diff's Go names lack\n%s\nhave:\n%s", want, goPart)
	}
	if _, compiles, _ := strings.Cut(goPart, "code that uses them compiles"); strings.Contains(compiles, "GCFitBucketInfo.BucketKind:") {
		t.Errorf("the diff says code that uses GCFitBucketInfo.BucketKind still compiles:\n%s", goPart)
	}
}

// TestDiffFamilyFields: the audit's mod.man, GCStart_V2 with Depth renamed
// GCDepth and Count widened. The family field Depth stays (GCStartV1 carries
// it), but GCStartV2 events now decode with HasDepth false: the diff says
// so, and lists the new fields of the types that were there.
func TestDiffFamilyFields(t *testing.T) {
	const v2 = `<template tid="GCStart_V2">`
	newer := editedManifest(t, "ClrEtwAll.mod.man",
		edit{v2, `<data name="Count" inType="win:UInt32"`, `<data name="Count" inType="win:UInt64"`},
		edit{v2, `<data name="Depth" inType="win:UInt32"`, `<data name="GCDepth" inType="win:UInt32"`})
	st, stdout, stderr := clrgen("diff", shippedManifest(t), newer)
	if st != 1 || stderr != "" {
		t.Fatalf("status %d, stderr %q", st, stderr)
	}
	_, goPart, _ := strings.Cut(stdout, "Go names")
	for _, l := range []string{
		"1 gone: code that uses them no longer compiles\n  - GCStartV2.Depth: uint32\n",
		"1 carried by fewer members: code that uses them compiles, and finds HasX false and X zero for those members\n" +
			"  ~ GCStartFields.Depth: no longer carried by GCStartV2 (carried by GCStartV1)\n",
		"3 new (fields included): GCStartFields.GCDepth, GCStartFields.HasGCDepth, GCStartV2.GCDepth\n",
	} {
		if !strings.Contains(goPart, l) {
			t.Errorf("the diff's Go names lack\n%s\nhave:\n%s", l, goPart)
		}
	}
}
