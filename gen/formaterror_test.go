package gen_test

import (
	"errors"
	"go/format"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/gen"
)

// TestFormatError checks what clrgen shows for code the generator emitted
// but gofmt rejects: the file name and the cause in Error, and the source
// with line numbers, so the line gofmt names can be found. (A valid schema
// cannot provoke one without a generator bug, so the error is built here
// from real gofmt output.)
func TestFormatError(t *testing.T) {
	src := "package clrevents\n\nfunc f() {\n\treturn )\n}\n"
	_, ferr := format.Source([]byte(src))
	if ferr == nil {
		t.Fatal("the broken source formats")
	}
	err := error(&gen.FormatError{File: "x_gen.go", Source: []byte(src), Err: ferr})
	var fe *gen.FormatError
	if !errors.As(err, &fe) {
		t.Fatal("errors.As finds no *FormatError")
	}
	if got := err.Error(); !strings.HasPrefix(got, "gen: x_gen.go does not format: ") || !strings.Contains(got, "4:") {
		t.Errorf("Error() = %q, want the file name and gofmt's line 4", got)
	}
	want := "    1  package clrevents\n" +
		"    2  \n" +
		"    3  func f() {\n" +
		"    4  \treturn )\n" +
		"    5  }\n"
	if got := fe.Numbered(); !strings.HasPrefix(got, want) {
		t.Errorf("Numbered() =\n%s\nwant\n%s", got, want)
	}
	// Line numbers stay aligned past 9999 lines.
	long := strings.Repeat("x\n", 10001)
	lines := strings.Split(strings.TrimSuffix((&gen.FormatError{Source: []byte(long)}).Numbered(), "\n"), "\n")
	if len(lines) != 10002 || lines[0] != "    1  x" || lines[10000] != "10001  x" {
		t.Errorf("Numbered of 10001 lines: %d lines, first %q, line 10001 %q", len(lines), lines[0], lines[10000])
	}
}
