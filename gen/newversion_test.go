package gen_test

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/gen"
	"github.com/clrgo/clrevents/schema"
)

// readNet10 returns the text of the checked-in .NET 10 manifest.
func readNet10(t *testing.T) string {
	t.Helper()
	f, err := os.Open(net10Manifest)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// newVersion is a version of an event a newer runtime might add: a copy of
// the event's element with a new version, symbol and template, and the new
// template, a copy of an existing one changed by edit.
type newVersion struct {
	symbol, newSymbol string // the event copied and its new symbol
	version           string
	tid, newTID       string // the template copied and the new one
	edit              func(body string) string
}

// appendData is a newVersion edit that appends data elements to a
// template, as the runtime grows an event.
func appendData(data string) func(string) string {
	return func(body string) string {
		if i := strings.Index(body, "<UserData>"); i >= 0 {
			return body[:i] + data + "\n" + body[i:]
		}
		i := strings.LastIndex(body, "</template>")
		return body[:i] + data + "\n" + body[i:]
	}
}

// withVersions writes the checked-in .NET 10 manifest with the new
// versions added into a temporary folder and returns its path: a newer
// runtime's manifest, made as the audit made ClrEtwAll.future-*.man.
func withVersions(t *testing.T, vs ...newVersion) string {
	t.Helper()
	man := readNet10(t)
	for _, v := range vs {
		tre := regexp.MustCompile(`(?s)<template tid="` + regexp.QuoteMeta(v.tid) + `">.*?</template>`)
		body := tre.FindString(man)
		if body == "" {
			t.Fatalf("no template %s in the manifest", v.tid)
		}
		nb := strings.Replace(body, `tid="`+v.tid+`"`, `tid="`+v.newTID+`"`, 1)
		nb = v.edit(nb)
		man = strings.Replace(man, body, body+"\n"+nb, 1)
		ere := regexp.MustCompile(`<event [^>]*symbol="` + regexp.QuoteMeta(v.symbol) + `"[^>]*/>`)
		ev := ere.FindString(man)
		if ev == "" {
			t.Fatalf("no event %s in the manifest", v.symbol)
		}
		ne := regexp.MustCompile(`version="[0-9]+"`).ReplaceAllString(ev, `version="`+v.version+`"`)
		ne = strings.Replace(ne, `template="`+v.tid+`"`, `template="`+v.newTID+`"`, 1)
		ne = strings.Replace(ne, `symbol="`+v.symbol+`"`, `symbol="`+v.newSymbol+`"`, 1)
		if ne == ev || !strings.Contains(ne, v.newTID) {
			t.Fatalf("event %s: the copy %s names no new template", v.symbol, ne)
		}
		man = strings.Replace(man, ev, ev+"\n"+ne, 1)
	}
	p := filepath.Join(t.TempDir(), "ClrEtwAll.future.man")
	if err := os.WriteFile(p, []byte(man), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The audit's two newer runtimes: GCFitBucketInfo_V1 (event 209 version 1)
// and GCGlobalHeapHistory_V5 (205 v5), each its older template with a field
// appended.
var (
	futureFit = newVersion{symbol: "GCFitBucketInfo", newSymbol: "GCFitBucketInfo_V1", version: "1",
		tid: "GCFitBucketInfo", newTID: "GCFitBucketInfo_V1",
		edit: appendData(`<data name="Generation" inType="win:UInt32" />`)}
	futureV5 = newVersion{symbol: "GCGlobalHeapHistory_V4", newSymbol: "GCGlobalHeapHistory_V5", version: "5",
		tid: "GCGlobalHeap_V4", newTID: "GCGlobalHeap_V5",
		edit: appendData(`<data name="TotalSOHStableSize" inType="win:UInt64" />`)}
)

func loadFuture(t *testing.T, strict bool, vs ...newVersion) (*schema.Model, []error, error) {
	t.Helper()
	return gen.LoadWith(gen.LoadConfig{
		Schema:    withVersions(t, vs...),
		Extra:     []string{gen.BuiltinExtra},
		Overrides: gen.BuiltinOverrides,
		Strict:    strict,
	})
}

func lEvent(t *testing.T, m *schema.Model, provider, symbol string) *schema.LEvent {
	t.Helper()
	for _, p := range m.Providers {
		if p.Name != provider {
			continue
		}
		for _, e := range p.Events {
			if e.Symbol == symbol {
				return e
			}
		}
	}
	t.Fatalf("no event %s of %s in the model", symbol, provider)
	return nil
}

// layout describes a lowered field list by name, kind and offset (at 8-byte
// pointers), struct elements included.
func layout(fs []*schema.LField) []string {
	var out []string
	for _, f := range fs {
		d := f.Name + " " + f.Kind.String()
		if f.Map != nil {
			d += " map " + f.Map.Name
		}
		if f.Fixed {
			d += " at " + f.Offset.String()
		}
		out = append(out, d)
		for _, e := range layout(f.Elem) {
			out = append(out, f.Name+"."+e)
		}
	}
	return out
}

// TestNewVersionKeepsCorrections: a newer runtime's new version of an
// event, whose template begins with the older version's, gets the older
// version's corrections (GCFitBucketInfo's padding, GCGlobalHeapHistory's
// enum maps) and its display name, with -strict and without a word.
func TestNewVersionKeepsCorrections(t *testing.T) {
	m, skipped, err := loadFuture(t, true, futureFit, futureV5)
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) > 0 {
		t.Errorf("skipped: %v", skipped)
	}
	const rt = "Microsoft-Windows-DotNETRuntime"
	for _, c := range []struct{ old, new, extra string }{
		{"GCFitBucketInfo", "GCFitBucketInfo_V1", "Generation uint32"},
		{"GCGlobalHeapHistory_V4", "GCGlobalHeapHistory_V5", "TotalSOHStableSize uint64"},
	} {
		o, n := lEvent(t, m, rt, c.old), lEvent(t, m, rt, c.new)
		want := layout(o.Template.Fields)
		got := layout(n.Template.Fields)
		if len(got) != len(want)+1 || strings.Join(got[:len(want)], "\n") != strings.Join(want, "\n") || !strings.HasPrefix(got[len(want)], c.extra) {
			t.Errorf("%s's fields:\n\t%s\nwant %s's and %s:\n\t%s", c.new, strings.Join(got, "\n\t"), c.old, c.extra, strings.Join(want, "\n\t"))
		}
		if n.DisplayName != o.DisplayName {
			t.Errorf("%s is shown as %q, %s as %q: want one name for every version", c.new, n.DisplayName, c.old, o.DisplayName)
		}
	}
	if d := lEvent(t, m, rt, "GCFitBucketInfo_V1").DisplayName; d != "GC/FitBucketInfo" {
		t.Errorf("GCFitBucketInfo_V1 is shown as %q, want GC/FitBucketInfo", d)
	}
}

// TestNewVersionNotAnExtension: a newer version whose template does not
// begin with a corrected older one's gets no corrections; -strict stops
// with an error naming the override's file:line and the event, and without
// it the miss is reported as a skipped override.
func TestNewVersionNotAnExtension(t *testing.T) {
	reordered := futureFit
	reordered.edit = func(body string) string {
		// Generation first: the old fields no longer begin the template.
		return strings.Replace(body, `<data name="ClrInstanceID"`, `<data name="Generation" inType="win:UInt32" />
                        <data name="ClrInstanceID"`, 1)
	}
	_, _, err := loadFuture(t, true, reordered)
	if err == nil {
		t.Fatal("a new version that does not extend a corrected one: no error with Strict")
	}
	want := regexp.MustCompile(`^overrides\.yaml:[0-9]+: override of Microsoft-Windows-DotNETRuntime template GCFitBucketInfo: event GCFitBucketInfo_V1 \(ClrEtwAll\.future\.man:[0-9]+, event 209 version 1\), a newer version of GCFitBucketInfo, has template GCFitBucketInfo_V1, whose fields as the manifest gives them do not begin with those of GCFitBucketInfo: the correction is not carried to it; correct GCFitBucketInfo_V1 in overrides of its own$`)
	if !want.MatchString(err.Error()) {
		t.Errorf("error:\n%v\nwant one matching\n%s", err, want)
	}
	m, skipped, err := loadFuture(t, false, reordered)
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) != 1 || !want.MatchString(skipped[0].Error()) {
		t.Errorf("skipped %v, want one matching\n%s", skipped, want)
	}
	v1 := lEvent(t, m, "Microsoft-Windows-DotNETRuntime", "GCFitBucketInfo_V1")
	if v1.DisplayName != "GC/FitBucketInfo" {
		t.Errorf("GCFitBucketInfo_V1 is shown as %q, want GC/FitBucketInfo: a display name goes by event ID", v1.DisplayName)
	}
	for _, l := range layout(v1.Template.Fields) {
		if strings.Contains(l, "Padding") {
			t.Errorf("the correction was carried to a template it does not fit: %s", l)
		}
	}
}

// TestNewVersionKeepsFamilyStruct: a newer version carrying the same struct
// as the older one (GCGlobalHeapHistory_V5's Values, as V4's) gets aliases of
// the older version's element types, so that the family keeps the field, of
// the type it had, and the names stand as they were.
func TestNewVersionKeepsFamilyStruct(t *testing.T) {
	m, _, err := gen.LoadWith(gen.LoadConfig{
		Schema:    withVersions(t, futureV5),
		Extra:     []string{gen.BuiltinExtra},
		Overrides: gen.BuiltinOverrides,
		Strict:    true,
		Subset:    schema.Subset{Events: []string{"GCGlobalHeap*"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	files, err := gen.Generate(m, gen.Config{Package: "gcev", Sources: "future"})
	if err != nil {
		t.Fatal(err)
	}
	fams := goFamilies(t, files)
	for k, want := range map[string]string{
		"GCGlobalHeapFields.Values":    "GCGlobalHeapHistoryV4ValuesArray",
		"GCGlobalHeapFields.HasValues": "bool",
		"GCGlobalHeapFields.Reason":    "GCReason",
	} {
		if got := fams.fields[k]; got != want {
			t.Errorf("%s is %q, want %q", k, got, want)
		}
	}
	src := string(files["runtime_garbagecollection_gen.go"])
	for _, decl := range []string{
		"type GCGlobalHeapHistoryV4ValuesElem struct {",
		"type GCGlobalHeapHistoryV4ValuesArray struct {",
		"func GCGlobalHeapHistoryV4ValuesArrayOf(",
		"type GCGlobalHeapHistoryV5ValuesElem = GCGlobalHeapHistoryV4ValuesElem\n",
		"type GCGlobalHeapHistoryV5ValuesArray = GCGlobalHeapHistoryV4ValuesArray\n",
		"func GCGlobalHeapHistoryV5ValuesArrayOf(elems ...GCGlobalHeapHistoryV5ValuesElem) GCGlobalHeapHistoryV5ValuesArray {",
	} {
		if !strings.Contains(src, "\n"+decl) {
			t.Errorf("the generated package lacks %q", decl)
		}
	}
}
