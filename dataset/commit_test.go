package dataset

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/clrgo/clrevents/trace"
)

// The traces of these tests: small ones of the repository, and a copy of
// the SampleProfiler trace cut in the middle of a block, which fails part
// way when read in strict mode (nettrace: "EventBlock at offset 196745:
// truncated"), as write reads them.
const (
	sample     = "../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace"
	gcETL      = "../testdata/traces/gcevents.etl.zip"
	checkpoint = "../testdata/traces/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip"
)

// truncated writes the first 200,000 bytes of the SampleProfiler trace
// to a file, which fails after about 17,000 events.
func truncated(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "truncated.nettrace")
	if err := os.WriteFile(p, b[:200000], 0o666); err != nil {
		t.Fatal(err)
	}
	return p
}

// write writes the trace at path into d under its path, read in strict
// mode: the first damage is an error.
func write(t *testing.T, d *Dataset, ctx context.Context, path string) (Stats, error) {
	t.Helper()
	src, err := trace.Open(path, trace.WithStrict())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	return d.WriteTrace(ctx, path, src)
}

// writeAs adds the trace at path to d under name.
func writeAs(t *testing.T, d *Dataset, name, path string) error {
	t.Helper()
	src, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	_, err = d.WriteTrace(context.Background(), name, src)
	return err
}

// all lists every file and folder under dir, relative and with /, but
// the staging folder and its lock file while a Dataset has them.
func all(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				t.Error(err)
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel != "." && rel != tempDirName && rel != tempDirName+"/"+lockName {
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// snapshot is every file and folder under dir with, for a file, its size
// and SHA-256: equal snapshots are equal trees, byte for byte.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if e.IsDir() {
			out[filepath.ToSlash(rel)] = "dir"
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = fmt.Sprintf("%d %x", len(b), sha256.Sum256(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// ofTrace reports whether the file rel (a snapshot's key) of the dataset
// in dir is one of the trace named name: its tables' files, and its
// identity's (which holds its name).
func ofTrace(dir, rel, name string) bool {
	if strings.Contains(rel, FileName(name)) {
		return true
	}
	if path.Dir(rel) != IdentityDir {
		return false
	}
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	return err == nil && string(b) == name+"\n"
}

// sameTree fails unless two snapshots are equal, naming the differences.
func sameTree(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	var diffs []string
	for k, v := range before {
		if after[k] != v {
			diffs = append(diffs, fmt.Sprintf("%s: %q, was %q", k, after[k], v))
		}
	}
	for k, v := range after {
		if _, ok := before[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: new (%s)", k, v))
		}
	}
	slices.Sort(diffs)
	if len(diffs) > 0 {
		t.Errorf("%s: the dataset changed:\n%s", what, strings.Join(diffs, "\n"))
	}
}

// traceFiles are the files of the trace given by name in the dataset's
// tables (not the staging folder).
func traceFiles(t *testing.T, dir, name string) []string {
	t.Helper()
	want := FileName(name)
	var out []string
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if e.IsDir() && e.Name() == tempDirName {
			return filepath.SkipDir
		}
		if strings.Contains(e.Name(), want) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// checkWhole fails unless the trace given by name is in the dataset
// entirely: its st.Tables files, each a readable Parquet file, with one
// row per event over the event and generic tables, and its row in
// traces counting them.
func checkWhole(t *testing.T, dir, name string, st Stats) {
	t.Helper()
	files := traceFiles(t, dir, name)
	if len(files) != st.Tables || st.Tables == 0 {
		t.Errorf("%s: %d files in the dataset, want %d: %v", name, len(files), st.Tables, files)
		return
	}
	var rows, traceRows int64
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := f.Stat()
		pf, err := parquet.OpenFile(f, fi.Size())
		if err != nil {
			t.Errorf("%s: %v", p, err)
			f.Close()
			continue
		}
		rel, _ := filepath.Rel(dir, p)
		switch strings.Split(filepath.ToSlash(rel), "/")[0] {
		case "events", "generic":
			rows += pf.NumRows()
		case "traces":
			traceRows += pf.NumRows()
			if r := readRows(t, pf); len(r) != 1 || r[0]["events"] != st.Events {
				t.Errorf("%s: traces row %v, want events %d", p, r, st.Events)
			}
		}
		f.Close()
	}
	if rows != st.Events || traceRows != 1 {
		t.Errorf("%s: %d event rows and %d trace rows, want %d and 1", name, rows, traceRows, st.Events)
	}
}

// readRows reads the int64 columns of every row.
func readRows(t *testing.T, pf *parquet.File) []map[string]int64 {
	t.Helper()
	var out []map[string]int64
	names := pf.Schema().Columns()
	for _, rg := range pf.RowGroups() {
		rows := rg.Rows()
		buf := make([]parquet.Row, 16)
		for {
			n, err := rows.ReadRows(buf)
			for _, row := range buf[:n] {
				m := map[string]int64{}
				for _, v := range row {
					if v.Kind() == parquet.Int64 {
						m[names[v.Column()][0]] = v.Int64()
					}
				}
				out = append(out, m)
			}
			if err != nil {
				break
			}
		}
		rows.Close()
	}
	return out
}

// checkAbsent fails unless nothing of the trace given by name is in the
// dataset.
func checkAbsent(t *testing.T, dir, name string) {
	t.Helper()
	if f := traceFiles(t, dir, name); len(f) > 0 {
		t.Errorf("%s: files in the dataset: %v", name, f)
	}
}

// tables is how many files each trace of these tests makes.
func tables(t *testing.T, path string) Stats {
	t.Helper()
	d, err := Create(filepath.Join(t.TempDir(), "count"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	st, err := write(t, d, context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestFailureInNewDirectory: the only trace of a run into a new directory
// (two levels of it new) fails part way; after Close nothing exists that
// did not: the directories Create made are gone.
func TestFailureInNewDirectory(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "new", "ds")
	d, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	bad := truncated(t)
	_, err = write(t, d, context.Background(), bad)
	if err == nil || !strings.Contains(err.Error(), "offset") || strings.Count(err.Error(), bad) != 1 {
		t.Errorf("err = %v, want the reader's error naming the file (once) and the offset", err)
	}
	if f := all(t, dir); len(f) > 0 {
		t.Errorf("left before Close: %v", f)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if e, _ := os.ReadDir(base); len(e) != 0 {
		t.Errorf("left in %s after Close: %v", base, e)
	}
	// An existing empty directory stays, empty.
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if d, err = Create(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := write(t, d, context.Background(), bad); err == nil {
		t.Error("no error")
	}
	d.Close()
	if e, err := os.ReadDir(dir); err != nil || len(e) != 0 {
		t.Errorf("%s: %v, %v; want it empty", dir, e, err)
	}
}

// TestParallelFailures: traces written at once, one per goroutine, as
// clrdump does, where one fails part way through its events, one fails
// opening its ninth file, and one fails at its third rename (after two
// files are in place, which go back): the good ones are whole and
// readable, the failed ones have nothing in the dataset, and the staging
// folder is empty. Run twice: into a new directory and appending to a
// dataset, which stays byte for byte as it was but for the good traces.
func TestParallelFailures(t *testing.T) {
	good := []string{sample, gcETL, checkpoint, small}
	want := map[string]Stats{}
	for _, g := range good {
		want[g] = tables(t, g)
	}
	bad := truncated(t)
	failOpen := filepath.Join(t.TempDir(), "open-fails.nettrace")
	failRename := filepath.Join(t.TempDir(), "rename-fails.nettrace")
	for _, p := range []string{failOpen, failRename} {
		b, _ := os.ReadFile(sample)
		os.WriteFile(p, b, 0o666)
	}
	injected := errors.New("injected failure")
	for _, appending := range []bool{false, true} {
		t.Run(fmt.Sprint("append=", appending), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ds")
			before := map[string]string{}
			if appending {
				d, err := Create(dir, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := write(t, d, context.Background(), "../testdata/traces/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"); err != nil {
					t.Fatal(err)
				}
				d.Close()
				before = snapshot(t, dir)
				good = good[:len(good)-1] // small is in the dataset: below
			}
			d, err := Create(dir, Options{Append: appending})
			if err != nil {
				t.Fatal(err)
			}
			d.hook = func(name, stage string, i int) error {
				if (name == failOpen && stage == "open" && i == 8) || (name == failRename && stage == "rename" && i == 2) {
					return injected
				}
				return nil
			}
			names := append([]string{bad, failOpen, failRename}, good...)
			if appending {
				names = append(names, small) // already in: fails
			}
			errs := make([]error, len(names))
			var wg sync.WaitGroup
			for i, name := range names {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = write(t, d, context.Background(), name)
				}()
			}
			wg.Wait()
			for i, name := range names {
				ok := slices.Contains(good, name)
				if (errs[i] == nil) != ok {
					t.Errorf("%s: err %v", name, errs[i])
				}
				if ok {
					checkWhole(t, dir, name, want[name])
				} else if name != small {
					checkAbsent(t, dir, name)
				}
			}
			if e, _ := os.ReadDir(filepath.Join(dir, tempDirName)); len(e) != 1 {
				t.Errorf("staging folder holds %v, want only the lock", e)
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			// Besides what was there: the good traces' files, the
			// folders that hold them, and a new dataset's marker.
			after := snapshot(t, dir)
			for k := range after {
				for _, g := range good {
					if ofTrace(dir, k, g) {
						delete(after, k)
						for p := path.Dir(k); p != "."; p = path.Dir(p) {
							if before[p] == "" {
								delete(after, p)
							}
						}
					}
				}
			}
			if !appending {
				delete(after, MarkerFile)
				delete(after, ".")
			}
			if appending {
				sameTree(t, "appending traces of which some fail", before, after)
			} else if len(after) > 0 {
				t.Errorf("besides the good traces: %v", after)
			}
		})
	}
}

// TestAppendFailures: each way an append can fail leaves the dataset
// byte for byte as it was (a listing with sizes and hashes), with no
// folder added: a trace cut short, a file that cannot be created, a
// failure at the first, a middle and the last rename, a trace already
// in the dataset, a context cancelled before, during and at the end of
// the reading.
func TestAppendFailures(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	d, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{gcETL, checkpoint} {
		if _, err := write(t, d, context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	d.Close()
	before := snapshot(t, dir)
	n := tables(t, sample).Tables
	injected := errors.New("injected failure")
	cut := truncated(t)
	for _, c := range []struct {
		name  string
		trace string
		stage string
		i     int
		ctx   int // cancel the context: -1 before, 0 at stage, else never
	}{
		{"truncated", cut, "", 0, 1},
		{"open", sample, "open", 3, 1},
		{"first rename", sample, "rename", 0, 1},
		{"middle rename", sample, "rename", n / 2, 1},
		{"last rename", sample, "rename", n - 1, 1},
		{"already in", gcETL, "", 0, 1},
		{"cancelled before", sample, "", 0, -1},
		{"cancelled reading", sample, "read", 2048, 0},
		{"cancelled after reading", sample, "commit", 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := Create(dir, Options{Append: true})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if c.ctx < 0 {
				cancel()
			}
			d.hook = func(name, stage string, i int) error {
				if stage == c.stage && i == c.i {
					if c.ctx == 0 {
						cancel()
						return nil
					}
					return injected
				}
				return nil
			}
			_, err = write(t, d, ctx, c.trace)
			if err == nil {
				t.Error("no error")
			}
			t.Log(err)
			if c.ctx <= 0 && !errors.Is(err, context.Canceled) {
				t.Errorf("err %v, want context.Canceled", err)
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			sameTree(t, c.name, before, snapshot(t, dir))
		})
	}
}

// TestCancelAtCommit: a context cancelled once the commit has begun (the
// commit record claimed, or whole) does not stop it: the trace is
// written, whole, and WriteTrace says so.
func TestCancelAtCommit(t *testing.T) {
	want := tables(t, sample)
	for _, stage := range []string{"claim", "journal", "rename"} {
		t.Run(stage, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ds")
			d, err := Create(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			ctx, cancel := context.WithCancel(context.Background())
			d.hook = func(_, s string, i int) error {
				if s == stage && i == 0 {
					cancel()
				}
				return nil
			}
			if _, err := write(t, d, ctx, sample); err != nil {
				t.Fatalf("err = %v, want nil: the commit had begun", err)
			}
			checkWhole(t, dir, sample, want)
		})
	}
}

// TestSameTraceAtOnce: one trace written twice at once: exactly one
// write succeeds, and the trace is in the dataset once, whole.
func TestSameTraceAtOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	d, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var ok atomic.Int32
	var st Stats
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := write(t, d, context.Background(), sample)
			if err == nil {
				ok.Add(1)
				st = s
			} else if !strings.Contains(err.Error(), "already in the dataset") {
				t.Errorf("err = %v", err)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 1 {
		t.Fatalf("%d writes succeeded, want 1", ok.Load())
	}
	checkWhole(t, dir, sample, st)
}

// TestJournal: only a whole commit record parses, however it is cut; one
// naming a path outside the dataset's tables does not.
func TestJournal(t *testing.T) {
	j := journal{trace: `C:\traces\a "b".nettrace`, stage: "a.parquet-123",
		files: [][2]string{{"0.tmp", "events/provider=P/event=E/a.parquet"}, {"1.tmp", "traces/a.parquet"}}}
	b := j.encode()
	got, ok := parseJournal(b)
	if !ok || got.trace != j.trace || got.stage != j.stage || !slices.Equal(got.files, j.files) {
		t.Fatalf("parse(encode) = %+v, %v", got, ok)
	}
	for i := range len(b) {
		if _, ok := parseJournal(b[:i]); ok {
			t.Errorf("a record cut after %d of %d bytes parses", i, len(b))
		}
	}
	for _, bad := range []string{"../x.parquet", "/etc/x", tempDirName + "/x", MarkerFile, ""} {
		j := j
		j.files = [][2]string{{"0.tmp", bad}}
		if _, ok := parseJournal(j.encode()); ok {
			t.Errorf("a record renaming to %q parses", bad)
		}
	}
	for _, bad := range []string{"..", "a/b", ""} {
		j := j
		j.stage = bad
		if _, ok := parseJournal(j.encode()); ok {
			t.Errorf("a record with stage %q parses", bad)
		}
	}
}

// TestLiveWriterKept: a second writer of a dataset (another Create, as
// another process would) leaves the first one's staging folder alone
// while the first is writing, and the first then commits its trace; the
// staging folder goes with the last Close.
func TestLiveWriterKept(t *testing.T) {
	if !lockSupported {
		t.Skip("no file locks on this platform: one writer at a time")
	}
	dir := filepath.Join(t.TempDir(), "ds")
	a, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	reading, resume := make(chan bool), make(chan bool)
	a.hook = func(_, stage string, i int) error {
		if stage == "read" && i == 1024 {
			reading <- true
			<-resume
		}
		return nil
	}
	done := make(chan error)
	var st Stats
	go func() {
		var err error
		st, err = write(t, a, context.Background(), sample)
		done <- err
	}()
	<-reading
	b, err := Create(dir, Options{Append: true})
	if err != nil {
		t.Fatal(err)
	}
	stb, err := write(t, b, context.Background(), gcETL)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if !exists(filepath.Join(dir, tempDirName, lockName)) {
		t.Error("the second writer's Close removed the lock file the first holds")
	}
	resume <- true
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	checkWhole(t, dir, sample, st)
	checkWhole(t, dir, gcETL, stb)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(dir, tempDirName)) {
		t.Error("the last Close left the staging folder")
	}
}

// TestClosed: WriteTrace after Close fails and writes nothing.
func TestClosed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	d, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if _, err := write(t, d, context.Background(), gcETL); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("err = %v", err)
	}
	if exists(dir) {
		t.Errorf("%s exists", dir)
	}
}

// crashEnv makes the test binary a writer that stops dead (os.Exit, no
// deferred call, no Close) at a stage: TestCrashChild reads it.
const crashEnv = "CLREVENTS_DATASET_CRASH"

// TestCrashChild is the writer TestCrash starts: unless crashEnv is set,
// it does nothing.
func TestCrashChild(t *testing.T) {
	v := os.Getenv(crashEnv)
	if v == "" {
		return
	}
	var f []string // dir, trace, stage, i
	if err := json.Unmarshal([]byte(v), &f); err != nil || len(f) != 4 {
		fmt.Fprintln(os.Stderr, "bad", crashEnv, v)
		os.Exit(2)
	}
	i, _ := strconv.Atoi(f[3])
	d, err := Create(f[0], Options{Append: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	d.hook = func(_, stage string, n int) error {
		if stage == f[2] && n == i {
			os.Exit(3)
		}
		return nil
	}
	src, err := trace.Open(f[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if _, err := d.WriteTrace(context.Background(), f[1], src); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(4) // the stage was not reached
}

// TestCrash: a writer process that stops dead at each stage of writing a
// trace, into a dataset holding another trace and into a new directory.
// Before the commit point the next Create removes what it left and the
// trace is absent; from the commit point on, the next Create completes
// the renames, the trace is whole and Recovered names it. The other
// trace's files stay byte for byte, and the staging folder goes with
// Close.
func TestCrash(t *testing.T) {
	want := tables(t, sample)
	n := want.Tables
	for _, c := range []struct {
		stage   string
		i       int
		written bool
		new     bool // also into a new directory
	}{
		{"open", 5, false, false},
		{"read", 4096, false, false},
		{"commit", 0, false, true},
		{"claim", 0, false, false},
		{"journal", 0, true, false},
		{"rename", 0, true, true},
		{"rename", n / 2, true, false},
		{"rename", n - 1, true, true},
		{"renamed", 0, true, true},
	} {
		for _, existing := range []bool{true, false} {
			if !existing && !c.new {
				continue
			}
			t.Run(fmt.Sprintf("%s-%d/existing=%v", c.stage, c.i, existing), func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "ds")
				var before map[string]string
				if existing {
					d, err := Create(dir, Options{})
					if err != nil {
						t.Fatal(err)
					}
					if _, err := write(t, d, context.Background(), gcETL); err != nil {
						t.Fatal(err)
					}
					d.Close()
					before = snapshot(t, dir)
				}
				cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
				arg, _ := json.Marshal([]string{dir, sample, c.stage, strconv.Itoa(c.i)})
				cmd.Env = append(os.Environ(), crashEnv+"="+string(arg))
				out, err := cmd.CombinedOutput()
				if code := cmd.ProcessState.ExitCode(); code != 3 {
					t.Fatalf("writer: exit %d, want 3 (stopped at %s %d): %v\n%s", code, c.stage, c.i, err, out)
				}
				// What the stop left: the staging folder; no file of the
				// trace in place before the renames.
				if !exists(filepath.Join(dir, tempDirName)) {
					t.Error("no staging folder left")
				}
				inPlace := len(traceFiles(t, dir, sample))
				if wantIn := map[string]int{"rename": c.i, "renamed": n}[c.stage]; inPlace != wantIn {
					t.Errorf("%d files of the trace in place after the stop, want %d", inPlace, wantIn)
				}
				// Without -append into the new directory: it holds no
				// trace, or the one the commit record puts in, which
				// the refusal names when it completed it.
				d, err := Create(dir, Options{Append: existing})
				recovered := 0
				if !existing && c.written {
					if !errors.Is(err, ErrExists) {
						t.Fatalf("Create after a stopped first commit: %v, want ErrExists", err)
					}
					t.Log(err)
					if strings.Contains(err.Error(), sample) {
						recovered++
					}
					d, err = Create(dir, Options{Append: true})
				}
				if err != nil {
					t.Fatal(err)
				}
				rec := d.Recovered()
				if slices.Equal(rec, []string{sample}) {
					recovered++
				} else if len(rec) > 0 {
					t.Errorf("Recovered = %v", rec)
				}
				if c.written && recovered != 1 || !c.written && recovered != 0 {
					t.Errorf("the trace reported recovered %d times", recovered)
				}
				if c.written {
					checkWhole(t, dir, sample, want)
				} else {
					checkAbsent(t, dir, sample)
				}
				if e, _ := os.ReadDir(filepath.Join(dir, tempDirName)); len(e) != 1 {
					t.Errorf("staging folder after Create: %v, want only the lock", e)
				}
				if err := d.Close(); err != nil {
					t.Fatal(err)
				}
				after := snapshot(t, dir)
				if existing {
					for k := range after {
						if ofTrace(dir, k, sample) || after[k] == "dir" && before[k] == "" {
							delete(after, k) // the trace's files and folders
						}
					}
					sameTree(t, "the dataset beside the stopped trace", before, after)
				} else if !c.written && len(after) != 1 {
					// The directory the stopped writer made stays, empty:
					// nothing tells the next one that it made it.
					t.Errorf("%s left: %v", dir, after)
				}
			})
		}
	}
}

// TestEmptyDataset: a directory holding a marker and empty table
// folders, as a failed run of earlier versions left it, takes traces
// without append: it holds no trace.
func TestEmptyDataset(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	if err := os.MkdirAll(filepath.Join(dir, "events", "provider=P", "event=E"), 0o777); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "traces"), 0o777)
	if err := os.WriteFile(filepath.Join(dir, MarkerFile), []byte(markerText), 0o666); err != nil {
		t.Fatal(err)
	}
	d, err := Create(dir, Options{})
	if err != nil {
		t.Fatalf("Create over a dataset without traces: %v", err)
	}
	st, err := write(t, d, context.Background(), gcETL)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	checkWhole(t, dir, gcETL, st)
	if _, err := Create(dir, Options{}); !errors.Is(err, ErrExists) {
		t.Errorf("Create over a dataset with a trace: %v", err)
	}
}
