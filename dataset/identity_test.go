package dataset

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/internal/tracetest"
	"github.com/clrgo/clrevents/trace"
)

// TestSameTraceTwice: a trace is in a dataset once, whatever name it is
// given: a copy under another path, the same file by another spelling of
// its path, or a copy cut short, is refused with an error naming the
// name it was added by, and the dataset is left as it was; another trace
// is added. Each trace leaves one file in IdentityDir holding its name.
func TestSameTraceTwice(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	d, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	member := tracetest.Bytes(t, small)
	add := func(name string, data []byte) error {
		src, err := trace.NewReader(bytes.NewReader(data), trace.WithName(name))
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		_, err = d.WriteTrace(context.Background(), name, src)
		return err
	}
	if err := add("/fleet/a/app.nettrace", member); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"fleet/a/app.nettrace", member},       // another spelling of the path
		{"/copies/app-copy.nettrace", member},  // a copy
		{"/cut/app.nettrace", member[:200000]}, // cut short, holding the first events
	} {
		err := add(c.name, c.data)
		if err == nil || !strings.Contains(err.Error(), `already in the dataset as "/fleet/a/app.nettrace"`) || !strings.HasPrefix(err.Error(), c.name+": ") {
			t.Errorf("%s: %v, want it refused as the trace added as /fleet/a/app.nettrace", c.name, err)
		}
	}
	sameTree(t, "after the same trace was refused", before, snapshot(t, dir))

	// Another trace is added, and has an identity of its own.
	other := tracetest.Bytes(t, "../testdata/traces/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip")
	if err := add("/fleet/a/app.nettrace.2", other); err != nil {
		t.Fatal(err)
	}
	ids, err := os.ReadDir(filepath.Join(dir, IdentityDir))
	if err != nil || len(ids) != 2 {
		t.Fatalf("%s: %v, %v; want two traces' identities", IdentityDir, ids, err)
	}
	names := map[string]bool{}
	for _, e := range ids {
		b, _ := os.ReadFile(filepath.Join(dir, IdentityDir, e.Name()))
		names[string(b)] = true
	}
	if !names["/fleet/a/app.nettrace\n"] || !names["/fleet/a/app.nettrace.2\n"] {
		t.Errorf("identities hold %v", names)
	}
}
