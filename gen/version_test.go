package gen_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/gen"
)

// TestVersionCheck generates a package as a clrgen one version ahead of
// this clrimpl would, and one a version behind what it supports, and checks
// that go build and go vet stop on the generated check with the error that
// says which side is too old; the package generated for this version
// builds.
func TestVersionCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: builds generated packages")
	}
	generate := func(version int) map[string][]byte {
		defer gen.SetVersion(version)()
		files := generateCase(t, filepath.Join("testdata", "fixed"))
		delete(files, "samples_gen_test.go")
		return files
	}
	cases := []struct {
		pkg     string
		version int
		want    string // "" builds
	}{
		{"current", clrimpl.GenVersion, ""},
		{"newer", clrimpl.MaxVersion + 1, "constant -1 overflows clrimpl.RuntimeTooOld"},
		{"older", clrimpl.MinVersion - 1, "constant -1 overflows clrimpl.GeneratedCodeTooOld"},
	}
	pkgs := map[string]map[string][]byte{}
	for _, c := range cases {
		pkgs[c.pkg] = generate(c.version)
		if want := fmt.Sprintf("generated for version %d of clrimpl", c.version); !bytes.Contains(pkgs[c.pkg]["package_gen.go"], []byte(want)) {
			t.Fatalf("%s: package_gen.go does not say %q", c.pkg, want)
		}
	}
	dir := tempModule(t, pkgs)
	for _, c := range cases {
		for _, cmd := range []string{"build", "vet"} {
			out, err := goOutput(dir, cmd, "./"+c.pkg)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("go %s of the code generated for this version: %v\n%s", cmd, err, out)
			case c.want != "" && err == nil:
				t.Errorf("go %s of the code generated for version %d builds with clrimpl %d…%d", cmd, c.version, clrimpl.MinVersion, clrimpl.MaxVersion)
			case c.want != "" && !(strings.Contains(out, "package_gen.go:") && strings.Contains(out, c.want)):
				t.Errorf("go %s of the code generated for version %d: %v\n%s\nwant an error at package_gen.go: %s", cmd, c.version, err, out, c.want)
			default:
				t.Logf("go %s ./%s: %v\n%s", cmd, c.pkg, err, out)
			}
		}
	}
}

// goOutput runs the go command in dir, offline, and returns its output.
func goOutput(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOPROXY=off", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	return string(out), err
}
