package gen_test

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/clrgo/clrevents/gen"
)

func generateFrom(t *testing.T, schemaFile string) map[string][]byte {
	t.Helper()
	m, err := gen.Load(schemaFile, overridesPath)
	if err != nil {
		t.Fatal(err)
	}
	files, err := gen.Generate(m, gen.Config{Package: "clrevents", Sources: gen.Sources(schemaFile, overridesPath), Tests: true})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func sameFiles(t *testing.T, what string, a, b map[string][]byte) {
	t.Helper()
	for _, n := range sortedKeys(a) {
		if _, ok := b[n]; !ok {
			t.Errorf("%s: %s is generated only once", what, n)
		} else if !bytes.Equal(a[n], b[n]) {
			t.Errorf("%s: %s differs: %s", what, n, firstDiff(string(a[n]), string(b[n])))
		}
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			t.Errorf("%s: %s is generated only once", what, n)
		}
	}
}

var (
	committedOnce  sync.Once
	committedFiles map[string][]byte
)

// generateCommitted generates from schema/clr.yaml and overrides.yaml once
// for the tests that compare with it.
func generateCommitted(t *testing.T) map[string][]byte {
	t.Helper()
	committedOnce.Do(func() { committedFiles = generateFrom(t, schemaPath) })
	if committedFiles == nil {
		t.Fatal("generating from schema/clr.yaml failed")
	}
	return committedFiles
}

// TestDeterministic generates the real package twice and compares the bytes.
func TestDeterministic(t *testing.T) {
	sameFiles(t, "two runs", generateCommitted(t), generateFrom(t, schemaPath))
}

// shuffledKeys are the YAML sequences whose order carries no meaning: the
// schema sorts them on load. Fields are not among them: their order is the
// wire order.
var shuffledKeys = map[string]bool{
	"providers": true, "keywords": true, "tasks": true, "opcodes": true,
	"maps": true, "entries": true, "templates": true, "events": true,
}

// shuffleYAML shuffles, in place, the content of every sequence of mappings
// under a key of shuffledKeys, and returns how many sequences it shuffled.
// An event's own list of keyword names (a sequence of scalars) keeps its
// manifest order, which the doc comments show.
func shuffleYAML(n *yaml.Node, r *rand.Rand) int {
	count := 0
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Kind == yaml.SequenceNode && shuffledKeys[k.Value] && len(v.Content) > 1 && v.Content[0].Kind == yaml.MappingNode {
				r.Shuffle(len(v.Content), func(i, j int) { v.Content[i], v.Content[j] = v.Content[j], v.Content[i] })
				count++
			}
		}
	}
	for _, c := range n.Content {
		count += shuffleYAML(c, r)
	}
	return count
}

// TestOrderIndependent shuffles the providers, events, templates, maps, map
// entries, keywords, tasks and opcodes of schema/clr.yaml and generates
// again: the schema canonicalizes order, so the bytes are the same.
func TestOrderIndependent(t *testing.T) {
	want := generateCommitted(t)
	data, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range []uint64{1} {
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		n := shuffleYAML(&doc, rand.New(rand.NewPCG(seed, 0)))
		if n < 20 {
			t.Fatalf("shuffled only %d sequences", n)
		}
		out, err := yaml.Marshal(&doc)
		if err != nil {
			t.Fatal(err)
		}
		// Same base name, so the header is the same.
		p := filepath.Join(t.TempDir(), filepath.Base(schemaPath))
		if err := os.WriteFile(p, out, 0o644); err != nil {
			t.Fatal(err)
		}
		sameFiles(t, "shuffled schema", want, generateFrom(t, p))
	}
}
