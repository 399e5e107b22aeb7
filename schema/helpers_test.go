package schema

import (
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sharedDir holds the real manifests. It is outside the repository (CI has
// it; a fresh clone does not), so tests that need it skip without it.
const sharedDir = "../../shared/manifests"

// The three real manifests, oldest first.
const (
	man2016  = "ClrEtwAll.perfview-2016.man"
	man2021  = "ClrEtwAll.runtimelab-2021-09.man"
	manNet10 = "ClrEtwAll.runtime-main-net10.man"
)

var realManifests = []string{man2016, man2021, manNet10}

// sharedPath returns the path of a file in sharedDir, or skips the test when
// it is absent.
func sharedPath(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(sharedDir, name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("needs the real manifests in %s (present in CI, not in a fresh clone): %v", sharedDir, err)
	}
	return p
}

// loadShared loads a real manifest, skipping when it is absent.
func loadShared(t *testing.T, name string) *Schema {
	t.Helper()
	s, err := LoadManifest(sharedPath(t, name))
	if err != nil {
		t.Fatalf("LoadManifest(%s): %v", name, err)
	}
	return s
}

// loadCheckedIn loads schema/clr.yaml, which every clone has.
func loadCheckedIn(t *testing.T) *Schema {
	t.Helper()
	s, err := LoadYAML("clr.yaml")
	if err != nil {
		t.Fatalf("LoadYAML(clr.yaml): %v", err)
	}
	return s
}

func loadSmall(t *testing.T) *Schema {
	t.Helper()
	s, err := LoadManifest("testdata/small.man")
	if err != nil {
		t.Fatalf("LoadManifest(testdata/small.man): %v", err)
	}
	return s
}

// xmlCounts counts elements by local name in each <provider> of a manifest,
// with encoding/xml alone: an expectation independent of the loader.
// Elements under <UserData> are not counted.
func xmlCounts(t *testing.T, path string) map[string]map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := xml.NewDecoder(f)
	out := map[string]map[string]int{}
	var cur map[string]int
	userData := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			switch {
			case tk.Name.Local == "provider":
				cur = map[string]int{}
				for _, a := range tk.Attr {
					if a.Name.Local == "name" {
						out[a.Value] = cur
					}
				}
			case tk.Name.Local == "UserData":
				userData++
			case cur != nil && userData == 0:
				cur[tk.Name.Local]++
			}
		case xml.EndElement:
			switch tk.Name.Local {
			case "provider":
				cur = nil
			case "UserData":
				userData--
			}
		}
	}
	return out
}

// lineOf returns the 1-based line of the first line of a file containing
// substr, for checking positions independently of the loader.
func lineOf(t *testing.T, path, substr string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, substr) {
			return i + 1
		}
	}
	t.Fatalf("%s: no line contains %q", path, substr)
	return 0
}
