package gen_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/gen"
)

// method returns the source of a generated method, "func (e *T) Name(".
func method(t *testing.T, src, typ, name string) string {
	t.Helper()
	start := strings.Index(src, "func (e *"+typ+") "+name+"(")
	if start < 0 {
		t.Fatalf("no method %s.%s", typ, name)
	}
	end := strings.Index(src[start:], "\n}\n")
	return src[start : start+end]
}

// TestQuoteTextGUIDs checks that Config.QuoteTextGUIDs writes GUIDs quoted
// in the text form, and that without it they stay bare (clrevents).
func TestQuoteTextGUIDs(t *testing.T) {
	m, err := gen.Load(filepath.Join("testdata", "kernel", "schema.yaml"), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, quote := range []bool{false, true} {
		files, err := gen.Generate(m, gen.Config{Package: "kev", QuoteTextGUIDs: quote})
		if err != nil {
			t.Fatal(err)
		}
		text := method(t, string(files["image_image_gen.go"]), "ImageKernelBaseV1", "AppendText")
		want := "e.Owner.AppendText(dst)"
		if quote {
			want = "e.Owner.AppendJSON(dst)"
		}
		if !strings.Contains(text, want) {
			t.Errorf("QuoteTextGUIDs %v: AppendText does not call %s:\n%s", quote, want, text)
		}
	}
}

// TestKindAliases checks that a package declares the support package's
// FileTime and WBEMSID only when a field has them.
func TestKindAliases(t *testing.T) {
	decl := regexp.MustCompile(`(?m)^\s+(FileTime|WBEMSID|FileTimeOf|WBEMSIDOf|MakeWBEMSID)\s+= clrimpl\.`)
	for c, want := range map[string]int{"kernel": 5, "fixed": 0, "family": 0} {
		files := generateCase(t, filepath.Join("testdata", c))
		if got := len(decl.FindAllString(string(files["package_gen.go"]), -1)); got != want {
			t.Errorf("%s: %d kernel aliases, want %d", c, got, want)
		}
	}
}

// TestShownProvider checks that the descriptor names the provider an event
// is shown under, and the table its own.
func TestShownProvider(t *testing.T) {
	files := generateCase(t, filepath.Join("testdata", "kernel"))
	src := string(files["image_image_gen.go"])
	for _, c := range []struct{ typ, provider string }{{"ImageLoadV2", "Windows Kernel"}, {"ImageKernelBaseV1", "MSNT_SystemTrace"}} {
		re := regexp.MustCompile(`var desc` + c.typ + ` = clrimpl\.Descriptor\{[^}]*?Provider:\s+"([^"]*)"`)
		m := re.FindStringSubmatch(src)
		if m == nil || m[1] != c.provider {
			t.Errorf("%s: descriptor provider %v, want %q", c.typ, m, c.provider)
		}
	}
	if !strings.Contains(string(files["table_gen.go"]), `Name:  "Image"`) {
		t.Errorf("the provider table does not name the provider Image:\n%s", files["table_gen.go"])
	}
}
