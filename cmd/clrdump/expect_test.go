package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/expect from clrdump's current output")

// expectDir holds the committed outputs: whole files for outputs up to
// inlineMax bytes, and SHA256SUMS for all of them, so that the outputs of
// the large shared traces are pinned too without committing megabytes.
const (
	expectDir = "testdata/expect"
	sumsFile  = expectDir + "/SHA256SUMS"
	inlineMax = 64 << 10
)

// expectModes are the outputs pinned for each trace.
var expectModes = []struct {
	name string
	args []string
}{
	{"jsonl", []string{"-format", "jsonl"}},
	{"file-order.jsonl", []string{"-format", "jsonl", "-order", "file"}},
	{"text", []string{"-format", "text"}},
	{"csv", []string{"-format", "csv"}},
	{"stats", []string{"-stats"}},
}

// TestExpectedOutputs runs clrdump over every trace in the repository (and
// in ../shared when it is beside the checkout) in each output mode and
// holds the output to the committed expectation, byte for byte: a speed-up
// must not change what clrdump writes. After an intended change, run
//
//	go test ./cmd/clrdump -run TestExpectedOutputs -update
//
// and review the diff of testdata/expect.
func TestExpectedOutputs(t *testing.T) {
	traces, err := filepath.Glob("../../testdata/traces/*.zip")
	if err != nil || len(traces) == 0 {
		t.Fatalf("no repository traces: %v", err)
	}
	shared, _ := filepath.Glob("../../../shared/fixtures/traces/*/*")
	var sharedTraces []string
	for _, p := range shared {
		if strings.HasSuffix(p, ".zip") || strings.HasSuffix(p, ".nettrace") {
			sharedTraces = append(sharedTraces, p)
		}
	}
	if len(sharedTraces) == 0 {
		t.Log("../shared/fixtures is not beside the checkout: only the repository's traces are checked")
	}
	sums, err := readSums(sumsFile)
	if err != nil && !*update {
		t.Fatal(err)
	}
	if sums == nil {
		sums = map[string]string{}
	}
	checked := 0
	for _, group := range []struct {
		prefix string
		paths  []string
	}{{"", traces}, {"shared/", sharedTraces}} {
		for _, path := range group.paths {
			for _, m := range expectModes {
				key := group.prefix + filepath.Base(path) + "." + m.name
				args := append(slices.Clone(m.args), path)
				h := sha256.New()
				var head bytes.Buffer
				var errb bytes.Buffer
				code := run(args, strings.NewReader(""), teeLimit{h, &head, inlineMax + 1}, &errb, false)
				if code != exitOK {
					t.Errorf("clrdump %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
					continue
				}
				sum := hex.EncodeToString(h.Sum(nil))
				inline := group.prefix == "" && head.Len() <= inlineMax
				if *update {
					sums[key] = sum
					if inline {
						if err := os.WriteFile(filepath.Join(expectDir, key), head.Bytes(), 0o644); err != nil {
							t.Fatal(err)
						}
					}
					continue
				}
				want, ok := sums[key]
				if !ok {
					t.Errorf("clrdump %s: no expectation %s in %s; run with -update to add it", strings.Join(args, " "), key, sumsFile)
					continue
				}
				if sum == want {
					checked++
					continue
				}
				msg := fmt.Sprintf("clrdump %s: output differs from the expectation (sha256 %s, want %s)", strings.Join(args, " "), sum[:12], want[:12])
				if inline {
					if exp, err := os.ReadFile(filepath.Join(expectDir, key)); err == nil {
						msg += "\n" + firstDifference(exp, head.Bytes())
					}
				}
				t.Error(msg + "\nif the change is intended, run go test ./cmd/clrdump -run TestExpectedOutputs -update and review the diff")
			}
		}
	}
	if *update {
		if err := writeSums(sumsFile, sums); err != nil {
			t.Fatal(err)
		}
		return
	}
	if checked == 0 {
		t.Fatal("no output was checked")
	}
	t.Logf("%d outputs byte-identical to the expectations", checked)
}

// teeLimit writes everything to h and the first max bytes to head.
type teeLimit struct {
	h    io.Writer
	head *bytes.Buffer
	max  int
}

func (w teeLimit) Write(p []byte) (int, error) {
	w.h.Write(p)
	if room := w.max - w.head.Len(); room > 0 {
		w.head.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// firstDifference names the first line where got differs from want.
func firstDifference(want, got []byte) string {
	wl := strings.SplitAfter(string(want), "\n")
	gl := strings.SplitAfter(string(got), "\n")
	for i := range max(len(wl), len(gl)) {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("first difference at line %d:\n want %q\n got  %q", i+1, w, g)
		}
	}
	return "the outputs differ only beyond the first bytes"
}

// readSums reads a sha256sum-style file: "<hex>  <name>" per line.
func readSums(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 {
			return nil, fmt.Errorf("%s:%d: want \"<sha256>  <name>\", got %q", path, line, sc.Text())
		}
		sums[name] = sum
	}
	return sums, sc.Err()
}

func writeSums(path string, sums map[string]string) error {
	names := make([]string, 0, len(sums))
	for n := range sums {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s  %s\n", sums[n], n)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
