package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLinksCLREvents: clrtrace links the generated CLR package, whose table
// registers itself: the trace readers decode with the registered tables,
// and package trace links no generated package of its own.
func TestLinksCLREvents(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command in PATH")
	}
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if deps := strings.Fields(string(out)); !slices.Contains(deps, "github.com/clrgo/clrevents/clrevents") {
		t.Errorf("clrtrace does not link clrevents: its trace readers would decode no CLR event; go list -deps: %v", deps)
	}
}
