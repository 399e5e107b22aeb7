package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clrgo/clrevents/profile"
	"github.com/clrgo/clrevents/trace"
)

// env is what the rows need: the traces in memory, and for the Parquet
// row the clrdump command and the traces as files.
type env struct {
	root    string
	commit  string
	tmp     string
	traces  map[string][]byte // in memory, unzipped
	files   map[string]string // unzipped, for whole processes
	self    string            // this program, run as a child by the process rows
	names   []string          // the traces of the header rows, in the table's order
	clrdump string
	// The child programs of the program rows, each linking one reader.
	ourChild, peerChild string
	gnuTime             string // GNU time, for peak RSS; "" when absent
	skipped             []string
}

// The traces, by their names in the table.
const (
	trace30      = "3.0"
	traceWebapp  = "webapp"
	traceSingle  = "single-thread"
	trace50      = "5.0"
	traceManaged = "managed"
	trace20      = "2.0"
)

// headerTraces are the traces of the header rows, in the table's order;
// those given with -trace follow.
var headerTraces = []string{trace30, traceWebapp, traceSingle, trace50, traceManaged}

// traceFlags are the traces given with -trace, as NAME=FILE or FILE (named
// by its base name).
type traceFlags []string

func (t *traceFlags) String() string { return strings.Join(*t, ",") }

func (t *traceFlags) Set(v string) error {
	name, file, ok := strings.Cut(v, "=")
	if !ok {
		file, name = v, strings.TrimSuffix(strings.TrimSuffix(filepath.Base(v), ".zip"), ".nettrace")
	}
	if name == "" || file == "" {
		return fmt.Errorf("want NAME=FILE or FILE, not %q", v)
	}
	if slices.Contains(headerTraces, name) || name == trace20 {
		return fmt.Errorf("%s: the name of a trace of the harness's own; name it with NAME=FILE", name)
	}
	if strings.ContainsAny(name, `/\`) {
		return fmt.Errorf("%q: a name, not a path (it names a file in a temporary directory)", name)
	}
	for _, x := range *t {
		if n, _, _ := strings.Cut(x, "="); n == name {
			return fmt.Errorf("%s: given twice; name them with NAME=FILE", name)
		}
	}
	*t = append(*t, name+"="+file)
	return nil
}

func setup() (*env, error) {
	root, err := filepath.Abs(*rootDir)
	if err != nil {
		return nil, err
	}
	if b, err := os.ReadFile(filepath.Join(root, "go.mod")); err != nil || !bytes.HasPrefix(b, []byte("module github.com/clrgo/clrevents\n")) {
		return nil, fmt.Errorf("%s is not the clrevents checkout (-root)", root)
	}
	sh := *shared
	if sh == "" {
		sh = filepath.Join(root, "..", "shared", "fixtures", "traces")
	}
	e := &env{root: root, traces: map[string][]byte{}, files: map[string]string{}}
	if e.self, err = os.Executable(); err != nil {
		return nil, err
	}
	e.commit = "unknown commit"
	if out, err := exec.Command("git", "-C", root, "describe", "--always", "--dirty").Output(); err == nil {
		e.commit = strings.TrimSpace(string(out))
	}
	e.tmp, err = os.MkdirTemp("", "clrevents-peer-")
	if err != nil {
		return nil, err
	}
	add := func(name, path string) {
		data, err := readTrace(path)
		if err != nil {
			e.skipped = append(e.skipped, fmt.Sprintf("trace %s: %v", name, err))
			return
		}
		e.traces[name] = data
		if !strings.HasSuffix(path, ".zip") {
			e.files[name] = path
		}
	}
	add(trace30, filepath.Join(root, "testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"))
	add(traceSingle, filepath.Join(root, "testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace"))
	add(trace50, filepath.Join(root, "testdata/traces/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"))
	if _, err := os.Stat(sh); err != nil {
		e.skipped = append(e.skipped, fmt.Sprintf("trace %s: %v (the shared fixtures are not beside the checkout)", traceManaged, err))
	} else {
		add(traceManaged, filepath.Join(sh, "perfview/only_managed_samples.nettrace.zip"))
	}
	if dir, err := peerDir(); err != nil {
		e.skipped = append(e.skipped, fmt.Sprintf("trace %s: the peer module's directory: %v", traceWebapp, err))
	} else {
		add(traceWebapp, filepath.Join(dir, "nettrace/testdata/dotnet-5.0-SampleProfiler-webapp.golden.nettrace"))
	}
	e.names = slices.Clone(headerTraces)
	for _, t := range extraTraces {
		name, file, _ := strings.Cut(t, "=")
		data, err := readTrace(file)
		if err == nil {
			err = sameEvents(data)
		}
		if err != nil {
			return nil, fmt.Errorf("-trace %s: %v", t, err)
		}
		e.traces[name] = data
		if !strings.HasSuffix(file, ".zip") {
			e.files[name] = file
		}
		e.names = append(e.names, name)
	}
	// Whole processes read files: the zipped traces unzipped, and the
	// shared 2.0 netperf.
	for _, t := range e.names {
		if _, ok := e.files[t]; ok {
			continue
		}
		if data, ok := e.traces[t]; ok {
			p := filepath.Join(e.tmp, t+".nettrace")
			if err := os.WriteFile(p, data, 0o644); err != nil {
				return nil, err
			}
			e.files[t] = p
		}
	}
	if data, err := readTrace(filepath.Join(sh, "perfview/eventpipe-dotnetcore2.0-linux-objver2.netperf.zip")); err != nil {
		e.skipped = append(e.skipped, fmt.Sprintf("trace %s (parquet row): %v (the shared fixtures are not beside the checkout)", trace20, err))
	} else {
		p := filepath.Join(e.tmp, "2.0.netperf")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return nil, err
		}
		e.files[trace20] = p
	}
	return e, nil
}

func (e *env) cleanup() { os.RemoveAll(e.tmp) }

// buildPrograms builds, once, what the whole-process rows run besides this
// program: the clrdump command of the checkout and the child programs of
// the program rows (cmd/ourchild and cmd/peerchild of this module).
func (e *env) buildPrograms() error {
	if e.clrdump != "" {
		return nil
	}
	dir := moduleDir()
	for _, b := range []struct {
		dst      *string
		dir, pkg string
	}{{&e.clrdump, e.root, "./cmd/clrdump"}, {&e.ourChild, dir, "./cmd/ourchild"}, {&e.peerChild, dir, "./cmd/peerchild"}} {
		p := filepath.Join(e.tmp, filepath.Base(b.pkg))
		cmd := exec.Command("go", "build", "-o", p, b.pkg)
		cmd.Dir = b.dir
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building %s in %s: %v", b.pkg, b.dir, err)
		}
		*b.dst = p
	}
	if t, err := exec.LookPath("/usr/bin/time"); err == nil && exec.Command(t, "-f", "%M", "-o", os.DevNull, "true").Run() == nil {
		e.gnuTime = t
	} else {
		e.skipped = append(e.skipped, "peak RSS of the parquet rows: no GNU time at /usr/bin/time")
	}
	return nil
}

// peerDir is the directory of the peer module in the module cache.
func peerDir() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/pyroscope-io/dotnetdiag").Output()
	if err != nil {
		return "", err
	}
	d := strings.TrimSpace(string(out))
	if d == "" {
		return "", fmt.Errorf("not downloaded")
	}
	return d, nil
}

func unzipMember(data []byte, name string) ([]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, ".nettrace") || strings.HasSuffix(f.Name, ".netperf") {
			rc, err := f.Open()
			if err != nil {
				return nil, err
			}
			defer rc.Close()
			return io.ReadAll(rc)
		}
	}
	return nil, fmt.Errorf("%s: no trace in the archive", name)
}

// rows lists every row whose traces are at hand, in the table's order.
func (e *env) rows() []*row {
	var rows []*row
	for _, t := range e.names {
		data, ok := e.traces[t]
		if !ok {
			continue
		}
		peer := side{"peer", func() uint64 { return peerEvents(data).Total() }, nil}
		rows = append(rows,
			&row{name: "time-order", trace: t, a: side{"ours", func() uint64 { return ourHeaders(data, trace.TimeOrder).Total() }, nil}, b: peer},
			&row{name: "file-order", trace: t, a: side{"ours", func() uint64 { return ourHeaders(data, trace.FileOrder).Total() }, nil}, b: peer},
			&row{name: "file-order-sum", trace: t, a: side{"ours", func() uint64 { return ourHeaders(data, trace.FileOrder).Total() }, nil},
				b: side{"sum", func() uint64 { return sumWords(data) }, nil}},
			&row{name: "file-order-sum1", trace: t, a: side{"ours", func() uint64 { return ourHeaders(data, trace.FileOrder).Total() }, nil},
				b: side{"sum1", func() uint64 { return sumWords1(data) }, nil}},
			&row{name: "nettrace-time", trace: t, a: side{"ours", func() uint64 { return netHeaders(data, true).Total() }, nil}, b: peer},
			&row{name: "nettrace-file", trace: t, a: side{"ours", func() uint64 { return netHeaders(data, false).Total() }, nil}, b: peer},
			&row{name: "peer-handlers", trace: t, a: side{"peer-all", func() uint64 { return peerAll(data).Total() }, nil}, b: peer},
		)
	}
	for _, t := range e.names {
		f, ok := e.files[t]
		if !ok {
			continue
		}
		child := func(what string) side {
			return side{what, nil, func() (time.Duration, int64) { return e.childRun(what, f) }}
		}
		prog := func(what string) side {
			return side{what, nil, func() (time.Duration, int64) { return e.programRun(what, f) }}
		}
		rows = append(rows,
			&row{name: "process-time-order", trace: t, a: child("ours-time"), b: child("peer")},
			&row{name: "process-file-order", trace: t, a: child("ours-file"), b: child("peer")},
			&row{name: "program-time-order", trace: t, a: prog("ours-time"), b: prog("peer")},
			&row{name: "program-file-order", trace: t, a: prog("ours-file"), b: prog("peer")},
		)
	}
	for _, t := range append([]string{traceSingle, traceWebapp, trace30, traceManaged}, e.names[len(headerTraces):]...) {
		data, ok := e.traces[t]
		if !ok {
			continue
		}
		if _, err := buildProfile(data); err != nil {
			e.skipped = append(e.skipped, fmt.Sprintf("profile row of trace %s: %v", t, err))
			continue
		}
		rows = append(rows, &row{name: "profile", trace: t,
			a: side{"peer", func() uint64 { return peerProfile(data) }, nil},
			b: side{"ours", func() uint64 { return ourProfile(data) }, nil}})
	}
	for _, t := range append([]string{trace30, trace20}, e.names[len(headerTraces):]...) {
		f, ok := e.files[t]
		if !ok {
			continue
		}
		rows = append(rows, &row{name: "parquet", trace: t,
			a: side{"parquet", nil, func() (time.Duration, int64) { return e.clrdumpRun("parquet", f) }},
			b: side{"jsonl", nil, func() (time.Duration, int64) { return e.clrdumpRun("jsonl", f) }}})
	}
	return rows
}

// clrdumpRun runs clrdump on trace file f: -format parquet into a fresh
// dataset directory, or -format jsonl into a file. The output is removed
// before the run, outside the time measured, which is the child's (user
// and system). Its peak RSS comes from GNU time (/usr/bin/time -f %M),
// when it is installed: the rusage of a child that this process starts
// directly counts this process's own peak, which Linux carries over the
// vfork and exec.
func (e *env) clrdumpRun(format, f string) (time.Duration, int64) {
	out := filepath.Join(e.tmp, "out-"+format)
	if err := os.RemoveAll(out); err != nil {
		fatalf("%v", err)
	}
	args := []string{e.clrdump, "-format", format}
	if format == "parquet" {
		args = append(args, "-o", out)
	}
	args = append(args, f)
	rssFile := filepath.Join(e.tmp, "rss")
	if e.gnuTime != "" {
		args = append([]string{e.gnuTime, "-f", "%M", "-o", rssFile}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	if format != "parquet" {
		w, err := os.Create(out)
		if err != nil {
			fatalf("%v", err)
		}
		defer w.Close()
		cmd.Stdout = w
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		fatalf("%s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	ps := cmd.ProcessState
	var rss int64
	if e.gnuTime != "" {
		b, err := os.ReadFile(rssFile)
		if err != nil {
			fatalf("%v", err)
		}
		if rss, err = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err != nil {
			fatalf("GNU time's output %q: %v", b, err)
		}
	}
	return ps.UserTime() + ps.SystemTime(), rss
}

// childRun runs this program as a child that reads trace file f once
// (childMain) and returns the child's CPU time, user and system.
func (e *env) childRun(what, f string) (time.Duration, int64) {
	return runChild(e.self, "-child", what, f)
}

// programRun runs the child program of side what (ours-time, ours-file or
// peer) on trace file f and returns its CPU time, user and system.
func (e *env) programRun(what, f string) (time.Duration, int64) {
	switch what {
	case "ours-time":
		return runChild(e.ourChild, "time", f)
	case "ours-file":
		return runChild(e.ourChild, "file", f)
	}
	return runChild(e.peerChild, f)
}

// runChild runs a whole-process side's child on one core (GOMAXPROCS=1
// in its environment, which the runtime reads as it starts: a call to
// runtime.GOMAXPROCS in the child would stop the world and hand back the
// other processor's caches, a start-up cost of about 0.3 ms that neither
// reader has) and returns its CPU time, user and system.
func runChild(args ...string) (time.Duration, int64) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		fatalf("%s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	ps := cmd.ProcessState
	return ps.UserTime() + ps.SystemTime(), 0
}

// moduleDir is this harness module's directory, where the child programs
// are built from (against the checkout its go.mod points at): the
// directory its source was built in, or else the working directory.
func moduleDir() string {
	if _, file, _, ok := runtime.Caller(0); ok {
		d := filepath.Dir(file)
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	d, _ := os.Getwd()
	return d
}

// childMain is the child of the whole-process rows: it reads the trace
// file once from disk through a buffered reader, as its side does in
// memory, and exits.
func childMain(what, name string) {
	f, err := os.Open(name)
	if err != nil {
		fatalf("%v", err)
	}
	defer f.Close()
	var h headers
	switch what {
	case "ours-time":
		h = ourHeadersFrom(f, trace.TimeOrder)
	case "ours-file":
		h = ourHeadersFrom(f, trace.FileOrder)
	case "peer":
		h = peerEventsFrom(bufio.NewReaderSize(f, 64<<10))
	default:
		fatalf("-child %q: want ours-time, ours-file or peer", what)
	}
	if h.Events == 0 {
		fatalf("-child %s %s: no events", what, name)
	}
}

// ourProfile builds the CPU profile of an EventPipe trace as clrdump
// -profile cpu does (file order) and folds it.
func ourProfile(data []byte) uint64 {
	n, err := buildProfile(data)
	if err != nil {
		fatalf("ours: %v", err)
	}
	return n
}

// buildProfile is ourProfile, returning its error: a trace without
// samples has no CPU profile.
func buildProfile(data []byte) (uint64, error) {
	r, err := trace.NewReader(bytes.NewReader(data), trace.WithOrder(trace.FileOrder))
	if err != nil {
		return 0, err
	}
	defer r.Close()
	p, err := profile.Build(r, profile.Options{Kind: profile.CPU})
	if err != nil {
		return 0, fmt.Errorf("profile: %w", err)
	}
	var n uint64
	for k, v := range p.Folded() {
		n += uint64(len(k)) + uint64(v)
	}
	return n, nil
}
