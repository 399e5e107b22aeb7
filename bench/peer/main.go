// Command peer measures clrevents against its Go peer,
// github.com/pyroscope-io/dotnetdiag v1.2.1, with both readers in one
// binary: the ratios of issue 27's table.
//
// Run it from the repository's root with
//
//	make bench-peer
//
// or, the same, from this directory with
//
//	go run . [-rounds 15] [-batch 150ms] [-run REGEXP]
//
// It is a module of its own (it requires the peer), so the main module's
// go vet ./... and go test ./... do not build it.
//
// # What it measures
//
// Each row is a pair of sides, A and B, and its figure is the ratio of
// their CPU times, A/B. The process runs on one core (GOMAXPROCS=1); the
// CPU time is the process's (user and system, getrusage), so it includes
// the garbage collector's work. A side's batch repeats its pass enough
// times to take about -batch (calibrated once, after a warm-up pass), after
// a runtime.GC that starts it from a clean heap. The rounds are
// interleaved: each round measures every row once, both sides one after
// the other, A first in even rounds and B first in odd ones, so that a
// burst of load from elsewhere on a shared machine falls on both sides of a
// pair alike. The table gives the median of the per-round ratios, their
// quartiles and their extremes. Absolute times (ms per pass) are printed
// for orientation only; they depend on the machine and its load.
//
// Rows:
//
//   - time-order / peer: every event header through package trace in time
//     order (clrdump's default), against the peer reading the same trace.
//   - file-order / peer: the same in file order.
//   - file-order / sum and file-order / sum1: file order against summing
//     the trace's bytes from memory as 64-bit words, with four accumulators
//     (about as fast as a loop reads memory) and with one (each addition
//     waits for the one before): floors that any reader pays to touch the
//     input once.
//   - nettrace-time / peer and nettrace-file / peer: the format reader,
//     package nettrace, alone.
//   - process-time-order / peer and process-file-order / peer: the same
//     as whole processes, this program run as a child (-child) that reads
//     the trace file once from disk, through a buffered reader for the
//     peer; CPU time of the child. Start-up (about the same for both
//     sides, the same binary) is counted.
//   - program-time-order / peer and program-file-order / peer: the same
//     with a program of each side's own, as a user would write it:
//     cmd/ourchild links only package trace, cmd/peerchild only the peer
//     (both built from this module when the harness starts). Each side's
//     start-up is its own: on a small trace it is most of the run.
//   - profile peer / ours: the peer's SampleProfiler (its Samples, the
//     folded stacks) against profile.Build with Kind CPU and Folded, the
//     reader in file order, as clrdump -profile cpu reads EventPipe; on
//     the traces with samples (single-thread, webapp, 3.0, managed and
//     those given with -trace).
//   - parquet / jsonl: whole processes of the clrdump command, built from
//     this checkout: -format parquet -o DIR against -format jsonl into a
//     file, CPU time of the child (user and system) and its peak RSS.
//     The file system's work is in it: a dataset is dozens of files and
//     folders where jsonl writes one file, so the row moves with the file
//     system's state (on an ext4 without a journal, making files just
//     after thousands were deleted, by a test run or a benchmark, costs
//     up to a fifth more). Compare builds by turns (alternate).
//
// The children of the process and program rows run with GOMAXPROCS=1 in
// their environment, which the runtime reads as it starts (a call to
// runtime.GOMAXPROCS in the child would stop the world and hand back the
// other processor's caches: about 0.3 ms and 150 page faults of start-up
// that neither reader has).
//
// "Reading the headers" means, for us, trace.Reader.Next and the header
// accessors Timestamp, ThreadID, ID and Payload of every event; for the
// peer, a Stream with only its event handler set and the same header
// fields (but the event ID, which only its metadata gives) read from each
// event: the least it can do, so the hardest comparison for us. Row
// peer-handlers measures it with all four handlers set (metadata kept in
// a map by ID, each event's metadata looked up, stack and sequence point
// blocks parsed, as its SampleProfiler does). In process, both read the
// trace from memory (a bytes.Reader).
//
// # Traces
//
//   - 3.0: the .NET Core 3.0 trace in testdata/traces
//     (eventpipe-dotnetcore3.0-win-x64-objver4, 105,540 events, 4.8 MB),
//     unzipped in memory.
//   - webapp and single-thread: the peer's own golden traces
//     (dotnet-5.0-SampleProfiler-webapp, 3.6 MB, from the peer module's
//     nettrace/testdata, found with go list -m; single-thread is also in
//     this repository's testdata).
//   - 5.0: the .NET 5 trace in testdata/traces
//     (eventpipe-dotnetcore5.0-win-x64-arraytypes, 0.5 MB): a small trace,
//     where what a reader costs to make and to end shows.
//   - managed: only_managed_samples.nettrace from ../shared (0.5 MB, a
//     .NET 5 sample profile).
//   - 2.0: the 62 MB .NET Core 2.0 netperf from ../shared (Parquet row
//     only; the peer cannot read netperf files).
//
// A trace that is absent is skipped with the reason. -trace NAME=FILE (or
// FILE; repeatable) adds an EventPipe trace of your own (a .nettrace file
// or a .zip holding one): the header, process, program, profile and
// Parquet rows run on it too, so that the ratios can be checked on traces
// the harness has never seen, e.g.
//
//	go run . -trace server=/data/server.nettrace -run server
package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"
)

var (
	rounds      = flag.Int("rounds", 15, "interleaved rounds")
	batch       = flag.Duration("batch", 150*time.Millisecond, "CPU time a side's batch aims at")
	runRE       = flag.String("run", "", "only the rows whose name/trace matches this regular expression")
	rootDir     = flag.String("root", "../..", "the clrevents checkout")
	shared      = flag.String("shared", "", "the shared fixtures' traces directory (default: ROOT/../shared/fixtures/traces)")
	cpuprof     = flag.String("cpuprofile", "", "instead of measuring, run side -side of the selected in-process rows for -for and write a CPU profile here")
	profSide    = flag.String("side", "a", "with -cpuprofile: the side to profile, a or b")
	profFor     = flag.Duration("for", 5*time.Second, "with -cpuprofile: how long to run each selected row")
	list        = flag.Bool("list", false, "list the rows and exit")
	extraTraces traceFlags
	child       = flag.String("child", "", "read the trace file given as the argument once, as side ours-time, ours-file or peer, and exit (the whole-process rows run this program so)")
)

func init() {
	flag.Var(&extraTraces, "trace", "an EventPipe trace of your own to measure on, as NAME=FILE or FILE (a .nettrace file, or a .zip holding one); repeatable. Its rows are the header, process and program rows, the profile and the Parquet rows")
}

// side is one half of a row: a pass in this process (run) or a child
// process (proc).
type side struct {
	label string
	run   func() uint64
	proc  func() (cpu time.Duration, rss int64)
}

// row is a pair of sides; its figure is A's CPU time over B's.
type row struct {
	name, trace string
	a, b        side
	k           [2]int       // passes per batch
	cpu         [2][]float64 // seconds per pass, one a round
	rss         [2][]int64   // peak RSS (KiB) of the child, one a round
	ratio       []float64
}

func (r *row) key() string { return r.name + "/" + r.trace }

// sink takes what each pass adds up, so that the compiler keeps the work.
var sink uint64

func main() {
	flag.Parse()
	if *child != "" {
		// On the processors the parent's environment gives (one).
		if flag.NArg() != 1 {
			fatalf("-child needs one trace file")
		}
		childMain(*child, flag.Arg(0))
		return
	}
	runtime.GOMAXPROCS(1)
	env, err := setup()
	if err != nil {
		fatalf("%v", err)
	}
	defer env.cleanup()
	rows := env.rows()
	if *runRE != "" {
		re, err := regexp.Compile(*runRE)
		if err != nil {
			fatalf("-run: %v", err)
		}
		rows = slices.DeleteFunc(rows, func(r *row) bool { return !re.MatchString(r.key()) })
	}
	if *list {
		for _, r := range rows {
			fmt.Printf("%-40s %s / %s\n", r.key(), r.a.label, r.b.label)
		}
		return
	}
	if len(rows) == 0 {
		fatalf("no rows to run")
	}
	for _, r := range rows {
		if r.a.proc != nil || r.b.proc != nil {
			if err := env.buildPrograms(); err != nil {
				fatalf("%v", err)
			}
			break
		}
	}
	if *cpuprof != "" {
		runProfile(rows)
		return
	}
	load0 := loadavg()
	start := time.Now()
	fmt.Printf("# %s, GOMAXPROCS=%d, %s, %d CPUs; clrevents at %s\n", runtime.Version(), runtime.GOMAXPROCS(0), cpuModel(), runtime.NumCPU(), env.commit)
	fmt.Printf("# %s; load average before: %s\n", start.UTC().Format(time.RFC3339), load0)
	for _, s := range env.skipped {
		fmt.Printf("# skipped: %s\n", s)
	}
	// Warm-up and calibration.
	for _, r := range rows {
		for i, s := range [2]side{r.a, r.b} {
			r.k[i] = 1
			if s.run == nil {
				s.proc()
				continue
			}
			s.run()
			t := measure(s, 1)
			if t > 0 {
				r.k[i] = max(1, int(batch.Seconds()/t+0.5))
			}
		}
	}
	for round := range *rounds {
		for _, r := range rows {
			var t [2]float64
			var rss [2]int64
			for j := range 2 {
				i := j
				if round%2 == 1 {
					i = 1 - j
				}
				s := [2]side{r.a, r.b}[i]
				if s.proc != nil {
					c, m := s.proc()
					t[i], rss[i] = c.Seconds(), m
				} else {
					t[i] = measure(s, r.k[i])
				}
			}
			for i := range 2 {
				r.cpu[i] = append(r.cpu[i], t[i])
				r.rss[i] = append(r.rss[i], rss[i])
			}
			r.ratio = append(r.ratio, t[0]/t[1])
		}
		fmt.Fprintf(os.Stderr, "round %d of %d, load %s\n", round+1, *rounds, loadavg())
	}
	fmt.Printf("# %d rounds in %s; load average after: %s (checksum %x)\n\n", *rounds, time.Since(start).Round(time.Second), loadavg(), sink)
	report(rows)
}

// measure runs k passes of s after a GC and returns the CPU seconds per
// pass.
func measure(s side, k int) float64 {
	runtime.GC()
	t0 := cputime()
	for range k {
		sink += s.run()
	}
	return (cputime() - t0).Seconds() / float64(k)
}

func report(rows []*row) {
	fmt.Printf("| row | trace | A / B | median | q1–q3 | min–max | A ms | B ms |\n")
	fmt.Printf("|---|---|---|---:|---|---|---:|---:|\n")
	for _, r := range rows {
		q := quartiles(r.ratio)
		fmt.Printf("| %s | %s | %s / %s | **%.3f** | %.3f–%.3f | %.3f–%.3f | %.2f | %.2f |\n",
			r.name, r.trace, r.a.label, r.b.label, q[2], q[1], q[3], q[0], q[4],
			quartiles(r.cpu[0])[2]*1e3, quartiles(r.cpu[1])[2]*1e3)
	}
	for _, r := range rows {
		if r.a.proc == nil || r.rss[0][0] == 0 {
			continue
		}
		fmt.Printf("\npeak RSS, %s (median of %d): %s %.1f MiB, %s %.1f MiB\n", r.key(), len(r.rss[0]),
			r.a.label, medianInt(r.rss[0])/1024, r.b.label, medianInt(r.rss[1])/1024)
	}
}

// runProfile runs one side of each in-process row for -for under the CPU
// profiler.
func runProfile(rows []*row) {
	f, err := os.Create(*cpuprof)
	if err != nil {
		fatalf("%v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fatalf("%v", err)
	}
	for _, r := range rows {
		s := r.a
		if *profSide == "b" {
			s = r.b
		}
		if s.run == nil {
			continue
		}
		passes := 0
		c0 := cputime()
		for t0 := time.Now(); time.Since(t0) < *profFor; passes++ {
			sink += s.run()
		}
		fmt.Fprintf(os.Stderr, "%s, %s: %d passes, %.3f ms of CPU each\n", r.key(), s.label, passes, (cputime()-c0).Seconds()*1e3/float64(passes))
	}
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil {
		fatalf("%v", err)
	}
}

// quartiles returns the minimum, first quartile, median, third quartile
// and maximum of x (linear interpolation between order statistics).
func quartiles(x []float64) [5]float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	at := func(p float64) float64 {
		if len(s) == 0 {
			return 0
		}
		f := p * float64(len(s)-1)
		i := int(f)
		if i+1 >= len(s) {
			return s[len(s)-1]
		}
		return s[i] + (f-float64(i))*(s[i+1]-s[i])
	}
	return [5]float64{at(0), at(0.25), at(0.5), at(0.75), at(1)}
}

func medianInt(x []int64) float64 {
	f := make([]float64, len(x))
	for i, v := range x {
		f[i] = float64(v)
	}
	return quartiles(f)[2]
}

func cputime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "peer: "+format+"\n", args...)
	os.Exit(1)
}

// readTrace reads a trace file; of a zip archive, the trace in it.
func readTrace(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil || !strings.HasSuffix(path, ".zip") {
		return data, err
	}
	return unzipMember(data, path)
}
