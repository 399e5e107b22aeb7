package schema

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// Fuzz targets for the manifest, YAML and overrides loaders. Properties:
// nothing panics or hangs; an error is (or joins) *Error values located in
// the named file, with a line when the input has one to give; a schema that
// loads is valid, lowers, and survives a YAML round trip.

// fuzzName is the file name the fuzzed inputs are parsed as.
const fuzzName = "fuzz.in"

// realManifest is a real manifest; an excerpt of it seeds FuzzParseManifest
// when the shared fixtures are there.
const realManifest = "../../shared/manifests/ClrEtwAll.runtime-main-net10.man"

func addFiles(f *testing.F, pattern string) {
	paths, err := filepath.Glob(pattern)
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// manifestExcerpt cuts the real manifest down to its first provider's
// first few templates and events, closed so that it is well formed.
func manifestExcerpt(data []byte) []byte {
	s := string(data)
	head, rest, ok := strings.Cut(s, "<templates>")
	if !ok {
		return nil
	}
	tpl := strings.Index(rest, "</template>")
	for i := 0; i < 3 && tpl >= 0; i++ {
		next := strings.Index(rest[tpl+1:], "</template>")
		if next < 0 {
			break
		}
		tpl += 1 + next
	}
	if tpl < 0 {
		return nil
	}
	return []byte(head + "<templates>" + rest[:tpl] + "</template></templates><events/></provider></events></instrumentation></instrumentationManifest>\n")
}

func FuzzParseManifest(f *testing.F) {
	addFiles(f, "testdata/*.man")
	addFiles(f, "testdata/broken/*.man")
	if b, err := os.ReadFile(realManifest); err == nil {
		if ex := manifestExcerpt(b); ex != nil {
			f.Add(ex)
		}
	}
	f.Add([]byte(`<instrumentationManifest><a><a><a></a></a></a></instrumentationManifest>`))
	f.Add([]byte("<instrumentationManifest>\n<provider name=\"P\" guid=\"{E13C0D23-CCBC-4E12-931B-D9CC2EEE27E4}\">\n<templates><template tid=\"T\"><data name=\"N\" inType=\"win:GUID\" count=\"2147483647\"/></template></templates>\n<events><event value=\"1\" symbol=\"E\" template=\"T\"/></events></provider></instrumentationManifest>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseManifest(fuzzName, data)
		checkLoaded(t, s, err, data)
	})
}

func FuzzParseYAML(f *testing.F) {
	addFiles(f, "testdata/broken/*.yaml")
	if s, err := LoadManifest("testdata/small.man"); err == nil {
		if y, err := MarshalYAML(s); err == nil {
			f.Add(y)
		}
	}
	// The start of the real schema, up to its second provider (valid), and
	// a cut through the middle of a provider (not).
	if b, err := os.ReadFile("clr.yaml"); err == nil {
		if i := bytes.Index(b[100:], []byte("\n  - name: ")); i > 0 && i < 64<<10 {
			f.Add(b[:100+i+1])
		}
		f.Add(b[:min(len(b), 6000)])
	}
	f.Add([]byte("a: &a [1, 2]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b]\n"))
	f.Add([]byte("providers: [[[[[[[[[[]]]]]]]]]]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseYAML(fuzzName, data)
		checkLoaded(t, s, err, data)
	})
}

func FuzzParseOverrides(f *testing.F) {
	addFiles(f, "testdata/overrides/*.yaml")
	addFiles(f, "overrides.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := ParseOverrides(fuzzName, data)
		if err != nil {
			checkSchemaErr(t, err, data, fuzzName)
			return
		}
		// Applying parsed overrides to a real schema must not panic
		// either; stale overrides are errors.
		s, lerr := LoadManifest("testdata/small.man")
		if lerr != nil {
			t.Fatal(lerr)
		}
		if err := o.Apply(s); err != nil {
			// Stale overrides are located in the overrides; an invalid
			// result, in the schema.
			checkSchemaErr(t, err, data, fuzzName, "small.man")
		}
	})
}

// checkLoaded checks the outcome of loading data.
func checkLoaded(t *testing.T, s *Schema, err error, data []byte) {
	t.Helper()
	if err != nil {
		if s != nil {
			t.Fatalf("a schema and an error: %v", err)
		}
		checkSchemaErr(t, err, data, fuzzName)
		return
	}
	if s == nil {
		t.Fatal("no schema and no error")
	}
	if _, err := Lower(s); err != nil {
		t.Fatalf("loaded schema does not lower: %v", err)
	}
	y, err := MarshalYAML(s)
	if err != nil {
		t.Fatalf("loaded schema does not marshal: %v", err)
	}
	s2, err := ParseYAML(fuzzName, y)
	if err != nil {
		t.Fatalf("loaded schema does not survive a YAML round trip: %v\n%s", err, y)
	}
	if y2, err := MarshalYAML(s2); err != nil || !bytes.Equal(y, y2) {
		t.Fatalf("YAML round trip is not stable (%v):\n%s\n---\n%s", err, y, y2)
	}
}

// lineless lists the yaml.v3 errors that carry no line: they come from its
// reader (byte-level checks), its alias and depth accounting, and its
// alias resolution.
var lineless = []string{
	"control characters are not allowed",
	"invalid leading UTF-8 octet",
	"incomplete UTF-8 octet sequence",
	"invalid trailing UTF-8 octet",
	"invalid Unicode character",
	"invalid UTF-8",
	"excessive aliasing",
	"exceeded max depth",
	"unknown anchor", // yaml.v3 reports it with no line, wherever the alias is
}

// checkSchemaErr checks that err is, or joins, *Error values located in
// one of files, with a line whenever the message is not one of lineless.
func checkSchemaErr(t *testing.T, err error, data []byte, files ...string) {
	t.Helper()
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	lines := yamlLines(data)
	for _, e := range errs {
		if e.Error() == "too many errors" {
			continue
		}
		var se *Error
		if !errors.As(e, &se) {
			t.Fatalf("error %q (%T) is not a *schema.Error", e, e)
		}
		if !slices.Contains(files, se.Pos.File) {
			t.Fatalf("error %q names file %q, want one of %q", e, se.Pos.File, files)
		}
		if se.Pos.File == fuzzName && se.Pos.Line > lines+1 {
			t.Fatalf("error %q: line %d, input has %d", e, se.Pos.Line, lines)
		}
		if se.Pos.Line <= 0 && !linelessOK(se.Msg) {
			t.Fatalf("error %q has no line", e)
		}
	}
}

func linelessOK(msg string) bool {
	for _, s := range lineless {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// withDeadline runs fn and fails the test if it does not return within d.
func withDeadline(t *testing.T, d time.Duration, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("did not finish within %v", d)
	}
}

// Memory bounds for hostile schema inputs (runtime.MemStats.TotalAlloc
// growth while loading): an input whose numbers claim gigabytes (huge
// counts and lengths, an alias bomb) may cost at most fixedBound; one that
// is merely large and deep may cost at most perByte bytes per input byte,
// plus fixedBound (encoding/xml and yaml.v3 allocate for every token).
const (
	fixedBound = 16 << 20
	perByte    = 100
)

// allocated returns the bytes fn allocated.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHostileSchemaInputs: deep nesting, an alias bomb and huge literals
// give errors (with a line, where the input has one to give) quickly and
// within the bounds above. (Nested structs cost O(depth²) before the
// nesting limit of 48c7014: 411 MB for these 180 KB.)
func TestHostileSchemaInputs(t *testing.T) {
	const depth = 200_000
	deepXML := "<instrumentationManifest>\n" + strings.Repeat("<x>", depth) + strings.Repeat("</x>", depth) + "\n</instrumentationManifest>\n"
	deepStruct := "<instrumentationManifest><provider name=\"P\" guid=\"{E13C0D23-CCBC-4E12-931B-D9CC2EEE27E4}\"><templates><template tid=\"T\">\n" +
		strings.Repeat("<struct name=\"S\" count=\"1\">", 5000) + "<data name=\"N\" inType=\"win:UInt8\"/>" + strings.Repeat("</struct>", 5000) +
		"\n</template></templates><events><event value=\"1\" symbol=\"E\" template=\"T\"/></events></provider></instrumentationManifest>\n"
	hugeCount := "<instrumentationManifest>\n<provider name=\"P\" guid=\"{E13C0D23-CCBC-4E12-931B-D9CC2EEE27E4}\">\n<templates><template tid=\"T\">\n" +
		"<data name=\"N\" inType=\"win:GUID\" count=\"18446744073709551616\"/>\n" +
		"<data name=\"B\" inType=\"win:Binary\" length=\"99999999999999999999\"/>\n" +
		"</template></templates>\n<events><event value=\"1\" symbol=\"E\" template=\"T\"/></events></provider></instrumentationManifest>\n"
	deepYAML := "providers: " + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "\n"
	var bomb strings.Builder
	bomb.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		bomb.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := range 10 {
			if j > 0 {
				bomb.WriteString(", ")
			}
			bomb.WriteString("*a" + string(rune('0'+i-1)))
		}
		bomb.WriteString("]\n")
	}
	bomb.WriteString("providers: *a9\n")
	for _, tc := range []struct {
		name string
		yaml bool
		data string
		line bool // the error must carry a line
		big  bool // bound by size (perByte), not fixedBound
	}{
		{"200000 nested XML elements", false, deepXML, true, true},
		{"5000 nested structs", false, deepStruct, true, true},
		{"counts beyond 64 bits", false, hugeCount, true, false},
		{"200000 nested YAML sequences", true, deepYAML, false, true},
		{"YAML alias bomb (10^10 nodes)", true, bomb.String(), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			grew := allocated(func() {
				withDeadline(t, 20*time.Second, func() {
					if tc.yaml {
						_, err = ParseYAML(fuzzName, []byte(tc.data))
					} else {
						_, err = ParseManifest(fuzzName, []byte(tc.data))
					}
				})
			})
			bound := uint64(fixedBound)
			if tc.big {
				bound += perByte * uint64(len(tc.data))
			}
			t.Logf("%d-byte input: allocated %d bytes (bound %d); %v", len(tc.data), grew, bound, firstLine(err))
			if err != nil {
				checkSchemaErr(t, err, []byte(tc.data), fuzzName)
			}
			var se *Error
			if tc.line && (!errors.As(err, &se) || se.Pos.Line <= 0) {
				t.Errorf("error %v has no line", err)
			}
			if grew > bound {
				t.Errorf("allocated %d bytes, more than the %d-byte bound", grew, bound)
			}
		})
	}
}

func firstLine(err error) string {
	if err == nil {
		return "no error"
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// yamlLines counts lines as YAML does: "\r\n", a lone "\r" and "\n" each
// end a line, and so do NEL, LS and PS in UTF-8 input.
func yamlLines(data []byte) int {
	n := 1
	for i := 0; i < len(data); i++ {
		switch {
		case data[i] == '\n':
			n++
		case data[i] == '\r':
			n++
			if i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
		case bytes.HasPrefix(data[i:], []byte("\u0085")), bytes.HasPrefix(data[i:], []byte("\u2028")), bytes.HasPrefix(data[i:], []byte("\u2029")):
			n++
		}
	}
	return n
}
