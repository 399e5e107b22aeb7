package dataset

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLinksCLREvents: the package links the generated CLR package, whose
// table registers itself, so that the readers WriteTrace is given decode
// the CLR's events by default and every event type has its table (package
// trace links no generated package of its own).
func TestLinksCLREvents(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command in PATH")
	}
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if deps := strings.Fields(string(out)); !slices.Contains(deps, "github.com/clrgo/clrevents/clrevents") {
		t.Errorf("dataset does not link clrevents; go list -deps: %v", deps)
	}
}
