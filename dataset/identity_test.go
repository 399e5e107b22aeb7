package dataset

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

// TestCopiesAtOnce: copies of one trace under different names, added at
// once by writers of their own (as clrdump processes are, each with its
// Dataset), are committed once: exactly one write succeeds, each other
// one fails as the trace already in the dataset (or, having waited for
// the first writer's claim in vain, as another writer's), and the
// dataset holds one traces file and one identity. Repeated, with and
// without a pause between a writer's commit record and its renames (the
// window in which a second writer found no identity in place and
// committed the trace again: every row twice).
func TestCopiesAtOnce(t *testing.T) {
	member := tracetest.Bytes(t, small)
	const writers = 4
	for round := range 8 {
		pause := round%2 == 0
		dir := filepath.Join(t.TempDir(), "ds")
		var ok atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d, err := Create(dir, Options{Append: true})
				if err != nil {
					t.Error(err)
					return
				}
				defer d.Close()
				if pause {
					d.hook = func(_, stage string, _ int) error {
						if stage == "journal" {
							time.Sleep(30 * time.Millisecond)
						}
						return nil
					}
				}
				name := fmt.Sprintf("/copies/%d/app-%d.nettrace", w, w)
				src, err := trace.NewReader(bytes.NewReader(member), trace.WithName(name))
				if err != nil {
					t.Error(err)
					return
				}
				defer src.Close()
				<-start
				_, err = d.WriteTrace(context.Background(), name, src)
				switch {
				case err == nil:
					ok.Add(1)
				case strings.Contains(err.Error(), "already in the dataset as \"/copies/"),
					strings.Contains(err.Error(), "another writer is adding this trace"):
				default:
					t.Errorf("round %d, %s: %v", round, name, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		traces, _ := os.ReadDir(filepath.Join(dir, "traces"))
		ids, _ := os.ReadDir(filepath.Join(dir, IdentityDir))
		if ok.Load() != 1 || len(traces) != 1 || len(ids) != 1 {
			t.Fatalf("round %d (pause %v): %d writes of %d copies succeeded, %d traces files, %d identities; want 1 each",
				round, pause, ok.Load(), writers, len(traces), len(ids))
		}
		if e, err := os.ReadDir(filepath.Join(dir, tempDirName)); err == nil {
			t.Errorf("round %d: staging folder left: %v", round, e)
		}
	}
}

// TestStaleClaim: a claim on a trace's identity that a stopped writer
// left (ID.claim in the staging folder) keeps a copy of the trace out
// while a live writer holds the dataset, with an error naming the claim
// and the name it was made for, and goes with the next Create that finds
// no writer alive, after which the copy is added.
func TestStaleClaim(t *testing.T) {
	defer func(w time.Duration) { claimWait = w }(claimWait)
	claimWait = 100 * time.Millisecond
	member := tracetest.Bytes(t, small)
	add := func(d *Dataset, name string) error {
		src, err := trace.NewReader(bytes.NewReader(member), trace.WithName(name))
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		_, err = d.WriteTrace(context.Background(), name, src)
		return err
	}
	// The trace's identity, from a dataset of its own.
	other := filepath.Join(t.TempDir(), "other")
	d, err := Create(other, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := add(d, "app.nettrace"); err != nil {
		t.Fatal(err)
	}
	d.Close()
	ids, err := os.ReadDir(filepath.Join(other, IdentityDir))
	if err != nil || len(ids) != 1 {
		t.Fatalf("%v, %v", ids, err)
	}
	claim := ids[0].Name() + claimSuffix

	dir := filepath.Join(t.TempDir(), "ds")
	if err := os.MkdirAll(filepath.Join(dir, tempDirName), 0o777); err != nil {
		t.Fatal(err)
	}
	// A claim made while a writer is alive (live holds the lock):
	// the copy waits for it, then fails.
	live, err := Create(dir, Options{Append: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, tempDirName, claim), []byte("/stopped/app.nettrace\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	err = add(live, "/copies/app.nettrace")
	if err == nil || !strings.Contains(err.Error(), `another writer is adding this trace to the dataset now, as "/stopped/app.nettrace"`) ||
		!strings.Contains(err.Error(), claim+" exists") {
		t.Errorf("copy beside a claim: %v", err)
	}
	if traces, _ := os.ReadDir(filepath.Join(dir, "traces")); len(traces) != 0 {
		t.Errorf("traces: %v", traces)
	}
	live.Close()
	if err := os.MkdirAll(filepath.Join(dir, tempDirName), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, tempDirName, claim), []byte("/stopped/app.nettrace\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	// No writer alive: Create removes the claim, and the copy goes in.
	d, err = Create(dir, Options{Append: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if exists(filepath.Join(dir, tempDirName, claim)) {
		t.Errorf("Create left the stopped writer's claim")
	}
	if err := add(d, "/copies/app.nettrace"); err != nil {
		t.Fatal(err)
	}
	if err := add(d, "/copies/again.nettrace"); err == nil || !strings.Contains(err.Error(), `already in the dataset as "/copies/app.nettrace"`) {
		t.Errorf("a second copy: %v", err)
	}
}

// TestNameTaken: another trace given the name a trace of the dataset has
// (the same relative path in another folder) is refused with an error
// that says so, naming the other trace's file and suggesting a distinct
// name, not as the same trace; so is one that another writer commits
// under the name while it is written. The same trace under its name is
// the same trace. Without identities (a dataset of an earlier version),
// the error says that which trace it is is not known.
func TestNameTaken(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	d, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	const name = "app.nettrace"
	if err := writeAs(t, d, name, small); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "traces", FileName(name))
	before := snapshot(t, dir)
	another := `app.nettrace: another trace is in the dataset under the name "app.nettrace" (` + file + " exists, with identity "
	// Another trace: fewer events than the identity hashes, and more.
	for _, path := range []string{"../testdata/traces/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip",
		"../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace"} {
		err := writeAs(t, d, name, path)
		if err == nil || !strings.HasPrefix(err.Error(), another) || !strings.Contains(err.Error(), "distinct name") ||
			!strings.Contains(err.Error(), "absolute path") || strings.Contains(err.Error(), "already in the dataset") {
			t.Errorf("%s as %s: %v", path, name, err)
		}
	}
	if err := writeAs(t, d, name, small); err == nil || !strings.Contains(err.Error(), `already in the dataset as "app.nettrace": the same trace`) {
		t.Errorf("the same trace again: %v", err)
	}
	sameTree(t, "after the traces were refused", before, snapshot(t, dir))

	// Another writer commits a trace under the name while one is written.
	const late = "late.nettrace"
	other, err := Create(dir, Options{Append: true})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	d.hook = func(_, stage string, _ int) error {
		if stage == "commit" {
			if err := writeAs(t, other, late, "../testdata/traces/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip"); err != nil {
				t.Error(err)
			}
		}
		return nil
	}
	if err := writeAs(t, d, late, "../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace"); err == nil ||
		!strings.HasPrefix(err.Error(), `late.nettrace: another trace is in the dataset under the name "late.nettrace"`) {
		t.Errorf("a trace committed under its name meanwhile: %v", err)
	}
	d.hook = nil

	// Without identities: which trace it is is not known.
	if err := os.RemoveAll(filepath.Join(dir, IdentityDir)); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{small, checkpoint} {
		err := writeAs(t, d, name, path)
		if err == nil || !strings.Contains(err.Error(), `a trace is in the dataset under the name "app.nettrace" (`+file+" exists) with no identity") {
			t.Errorf("%s as %s without identities: %v", path, name, err)
		}
	}
}

// TestCommittedMeanwhile: a writer whose trace another writer committed
// between the identity's check and the name's (two writers adding one
// trace at once: TestSameTraceAtOnce, which meets this rarely) gets the
// error of a trace in the dataset already, not that of a name taken by a
// trace without an identity.
func TestCommittedMeanwhile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	d, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := write(t, d, context.Background(), sample); err != nil {
		t.Fatal(err)
	}
	ids, err := os.ReadDir(filepath.Join(dir, IdentityDir))
	if err != nil || len(ids) != 1 {
		t.Fatalf("%s: %v, %v; want one identity", IdentityDir, ids, err)
	}
	// The second writer, as it stands when its identity's check has passed
	// and the first writer's commit has then ended.
	tw := &traceWriter{d: d, name: sample, file: FileName(sample)}
	tw.id.final = filepath.Join(dir, IdentityDir, ids[0].Name())
	tw.all = []*table{{final: filepath.Join(dir, "traces", tw.file)}}
	if err := tw.checkName(); err == nil || !strings.Contains(err.Error(), "already in the dataset") {
		t.Errorf("checkName: %v, want the trace already in the dataset", err)
	}
}
