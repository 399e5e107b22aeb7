package nettrace

import (
	"os/exec"
	"strings"
	"testing"
)

// TestRuntimeOnly checks that the reader depends on the runtime package
// clrimpl, never on a generated event package: a program that reads traces
// with a generated subset must not link the whole of clrevents.
func TestRuntimeOnly(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command in PATH")
	}
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	var impl bool
	for _, d := range deps {
		switch d {
		case "github.com/clrgo/clrevents/clrevents":
			t.Errorf("nettrace depends on the generated package %s", d)
		case "github.com/clrgo/clrevents/clrimpl":
			impl = true
		}
	}
	if !impl {
		t.Errorf("nettrace does not depend on clrimpl; go list -deps gave %v", deps)
	}
}
