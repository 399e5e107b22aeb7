package layers

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const mod = "github.com/clrgo/clrevents/"

// formatOnly are the packages only the front door may import: the format
// readers and the escape hatch to their records.
var formatOnly = []string{mod + "nettrace", mod + "etl", mod + "trace/raw"}

// frontDoor may import them: the front door itself, the live sessions
// that turn the IPC stream into a trace (layer 2), and what tests and
// tools build trace files with.
var frontDoor = []string{
	mod + "trace",
	mod + "trace/raw",
	mod + "trace/internal/rawaccess",
	mod + "diagnostics",
	mod + "internal/etltest",
	mod + "internal/simruntime",
	mod + "internal/tracecut",
}

// generated are the generated packages (layer 0 output).
var generated = []string{mod + "clrevents", mod + "kernelevents"}

type pkg struct {
	path    string
	imports []string // direct, of the package's non-test files
	deps    []string // all, transitively
}

func list(t *testing.T) []pkg {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command in PATH")
	}
	cmd := exec.Command("go", "list", "-deps=false", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}", "github.com/clrgo/clrevents/...")
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var pkgs []pkg
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 3 {
			t.Fatalf("go list line %q", line)
		}
		pkgs = append(pkgs, pkg{f[0], strings.Fields(f[1]), strings.Fields(f[2])})
	}
	if len(pkgs) < 30 {
		t.Fatalf("go list listed %d packages:\n%s", len(pkgs), out)
	}
	return pkgs
}

// outside reports whether the package path is not the standard library's:
// its first element has a dot (a module path), as vendored packages and
// the standard library's own (crypto/internal/entropy/v1.0.0) do not.
func outside(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return strings.Contains(first, ".")
}

// violations returns what breaks the layering among pkgs, and how many
// packages above the front door it looked at.
func violations(pkgs []pkg) (bad []string, above int) {
	for _, p := range pkgs {
		if !slices.Contains(frontDoor, p.path) {
			for _, imp := range p.imports {
				if slices.Contains(formatOnly, imp) {
					bad = append(bad, p.path+" imports "+imp+": above the front door, import trace (and trace/raw only outside the library)")
				}
			}
			above++
		}
		switch p.path {
		case mod + "nettrace", mod + "etl", mod + "dynamic":
			for _, d := range p.deps {
				if slices.Contains(generated, d) {
					bad = append(bad, p.path+" depends on the generated package "+d+": format readers and descriptions use clrimpl only")
				}
				if outside(d) && !strings.HasPrefix(d, mod) {
					bad = append(bad, p.path+" depends on "+d+": format readers and descriptions use the standard library and clrimpl only")
				}
			}
		case mod + "clrimpl", mod + "clrimpl/clrimpltest":
			for _, d := range p.deps {
				if outside(d) && d != mod+"clrimpl" {
					bad = append(bad, strings.TrimPrefix(p.path, mod)+" depends on "+d+": the runtime of generated code and the checks of its tests are standard library only")
				}
			}
		}
	}
	return bad, above
}

// TestLayers: above the front door (symbols, profiles, reports, datasets,
// metrics, the commands, anything new) no package imports a format
// reader or trace/raw; the format readers and the dynamic descriptions
// depend on no generated package (only clrimpl) and on no other module;
// clrimpl on the standard library alone, and clrimpltest on it and
// clrimpl.
func TestLayers(t *testing.T) {
	bad, above := violations(list(t))
	for _, b := range bad {
		t.Error(b)
	}
	if above < 20 {
		t.Errorf("%d packages checked above the front door", above)
	}
}

// TestLayersCatch: the check sees each kind of break.
func TestLayersCatch(t *testing.T) {
	bad, _ := violations([]pkg{
		{path: mod + "profile", imports: []string{mod + "trace", mod + "etl"}},
		{path: mod + "cmd/clrdump", imports: []string{mod + "trace/raw"}},
		{path: mod + "etl", deps: []string{mod + "clrimpl", mod + "clrevents"}},
		{path: mod + "nettrace", deps: []string{mod + "clrimpl", "github.com/klauspost/compress/flate"}},
		{path: mod + "clrimpl", deps: []string{"strings", "github.com/google/go-cmp/cmp"}},
		{path: mod + "clrimpl/clrimpltest", deps: []string{"testing", mod + "clrimpl", mod + "clrevents"}},
		{path: mod + "trace", imports: []string{mod + "etl", mod + "nettrace"}, deps: []string{mod + "kernelevents"}},
	})
	if len(bad) != 6 {
		t.Errorf("%d breaks found, want 6:\n%s", len(bad), strings.Join(bad, "\n"))
	}
}
