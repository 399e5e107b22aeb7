package readme

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clrgo/clrevents/internal/simruntime"
)

// elsewhere are the README's commands that this test does not run, each
// with what runs it instead. A command in the README that is neither run
// here nor listed fails the test, and so does a listed one the README no
// longer shows.
var elsewhere = map[string]string{
	"go test ./...": ".ci/run runs it",
	"go get github.com/clrgo/clrevents@latest":                                                                "cmd/clrgen's TestREADMEUserModule runs it in a new user module",
	"go install github.com/clrgo/clrevents/cmd/clrdump@latest github.com/clrgo/clrevents/cmd/clrtrace@latest": "cmd/clrgen's TestREADMEUserModule checks that it names this module's commands",
	"go get -tool github.com/clrgo/clrevents/cmd/clrgen@latest":                                               "cmd/clrgen's TestREADMEUserModule runs it in a new user module",
	"go generate ./...": "make check-generate (in .ci/run) runs it here; cmd/clrgen's TestREADMEUserModule in a user module",
	"make bench":        "bench/run measures with it; make bench-smoke runs every benchmark once",
	"make bench-smoke":  ".ci/run runs it",
	"make bench-peer":   ".ci/run runs bench/peer's tests: both readers see the same events, and every row runs once",
	"make fuzz":         ".ci/run runs it",
	"go tool pprof -top 'http://localhost:52323/debug/pprof/profile?pid=1234&seconds=10'": "monitor's TestServe (pprof-url) runs go tool pprof -top on a simulated process's profile URL",
}

// command is one command of the README, with its line.
type command struct {
	line int
	text string
}

// readmeCommands returns the commands of README.md's indented code blocks
// (fenced blocks hold Go and SQL, not commands), continuation lines
// joined and comments stripped.
func readmeCommands(t *testing.T) []command {
	t.Helper()
	f, err := os.Open("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds []command
	sc := bufio.NewScanner(f)
	fenced, prevBlank, inBlock := false, true, false
	var cur *command
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		indented := strings.HasPrefix(line, "    ") && !fenced
		if !indented {
			inBlock = false
		} else if prevBlank {
			inBlock = true
		}
		prevBlank = strings.TrimSpace(line) == ""
		if !inBlock || !indented {
			continue
		}
		text := strings.TrimSpace(line)
		if i := strings.Index(text, " # "); i >= 0 {
			text = strings.TrimSpace(text[:i])
		}
		if cur != nil {
			cur.text += " " + strings.TrimSuffix(text, "\\")
			if !strings.HasSuffix(text, "\\") {
				cmds = append(cmds, *cur)
				cur = nil
			}
			continue
		}
		if !isCommand(text) {
			continue
		}
		if strings.HasSuffix(text, "\\") {
			cur = &command{n, strings.TrimSpace(strings.TrimSuffix(text, "\\"))}
			continue
		}
		cmds = append(cmds, command{n, text})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for i := range cmds {
		cmds[i].text = strings.Join(strings.Fields(cmds[i].text), " ")
	}
	return cmds
}

func isCommand(s string) bool {
	for _, p := range []string{"go ", "make ", "cat "} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

var goRun = regexp.MustCompile(`go run \./cmd/(\w+)`)

// TestREADMECommands runs every `go run ./cmd/…` command the README shows,
// with the commands built once, in a directory that holds the repository's
// testdata and a copy of its schema, and stand-ins for what the README
// leaves to the reader: TRACE is a shipped trace, the fleet's traces are
// shipped ones, path/to/ClrEtwAll.man is the shipped manifest, and process
// 1234 is a simulated runtime (internal/simruntime) streaming a shipped
// capture. Each must exit 0 and write what it says it writes.
func TestREADMECommands(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: building and running every README command takes a minute")
	}
	cmds := readmeCommands(t)
	if len(cmds) < 20 {
		t.Fatalf("found %d commands in README.md; the parser is broken", len(cmds))
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin, "./cmd/clrdump", "./cmd/clrtrace", "./cmd/clrgen")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	work := setupWork(t, root)
	listed := map[string]bool{}
	for _, c := range cmds {
		if !goRun.MatchString(c.text) {
			if _, ok := elsewhere[c.text]; !ok {
				t.Errorf("README.md:%d: %q is neither run by this test nor listed with what runs it", c.line, c.text)
			}
			listed[c.text] = true
			continue
		}
		t.Run(strconv.Itoa(c.line), func(t *testing.T) {
			runCommand(t, c, bin, work)
		})
	}
	for text := range elsewhere {
		if !listed[text] {
			t.Errorf("%q is listed as run elsewhere, but README.md no longer shows it", text)
		}
	}
}

// setupWork makes the directory the commands run in.
func setupWork(t *testing.T, root string) string {
	t.Helper()
	work := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(filepath.Join(root, "testdata"), filepath.Join(work, "testdata")))
	// A copy of the schema: the README's import writes schema/clr.yaml.
	must(os.MkdirAll(filepath.Join(work, "schema"), 0o755))
	schema, err := os.ReadFile(filepath.Join(root, "schema", "clr.yaml"))
	must(err)
	must(os.WriteFile(filepath.Join(work, "schema", "clr.yaml"), schema, 0o644))
	// path/to/ClrEtwAll.man: the shipped .NET 10 manifest, the schema's source.
	gz, err := os.Open(filepath.Join(root, "testdata", "manifests", "ClrEtwAll.runtime-main-net10.man.gz"))
	must(err)
	defer gz.Close()
	zr, err := gzip.NewReader(gz)
	must(err)
	man, err := io.ReadAll(zr)
	must(err)
	must(os.MkdirAll(filepath.Join(work, "path", "to"), 0o755))
	must(os.WriteFile(filepath.Join(work, "path", "to", "ClrEtwAll.man"), man, 0o644))
	// fleet/SERVICE/HOST.nettrace: shipped EventPipe traces.
	for dst, src := range map[string]string{
		"fleet/checkout-api/host1.nettrace": "testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace",
		"fleet/search/host1.nettrace":       "testdata/traces/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip",
	} {
		b, err := os.ReadFile(filepath.Join(root, src))
		must(err)
		must(os.MkdirAll(filepath.Join(work, filepath.Dir(dst)), 0o755))
		must(os.WriteFile(filepath.Join(work, dst), b, 0o644))
	}
	return work
}

// runCommand runs one README command and checks its result.
func runCommand(t *testing.T, c command, bin, work string) {
	text := goRun.ReplaceAllString(c.text, filepath.Join(bin, "$1"))
	text = strings.ReplaceAll(text, " TRACE", " testdata/traces/gcevents.etl.zip")
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	interrupt := false // runs until ^C
	serve := strings.HasSuffix(text, "clrtrace serve")
	if strings.Contains(text, "clrtrace") {
		// A simulated runtime as process 1234 (our own PID, so that no
		// process of this machine is taken for it), found through TMPDIR.
		pid := strconv.Itoa(os.Getpid())
		text = strings.ReplaceAll(text, "-p 1234", "-p "+pid)
		text = strings.ReplaceAll(text, "-duration 30s", "-duration 1s")
		dir := t.TempDir()
		env = append(env, "TMPDIR="+dir)
		cfg := simruntime.Config{PID: os.Getpid(), CommandLine: "/usr/share/dotnet/dotnet /app/web.dll", ChunkDelay: time.Millisecond}
		if serve {
			// Any free port; a simulated application that streams until
			// stopped.
			text = strings.Replace(text, " serve", " serve -listen 127.0.0.1:0", 1)
			w := &simruntime.Workload{}
			cfg.Stream = w.Stream
		} else if strings.Contains(text, " counters ") {
			cfg.Trace, cfg.Live = simruntime.CountersTrace(os.Getpid(), [][]simruntime.Counter{
				{{Name: "cpu-usage", DisplayName: "CPU Usage", Units: "%", Value: 12.5}},
				{{Name: "cpu-usage", DisplayName: "CPU Usage", Units: "%", Value: 3}},
			})
		} else {
			data, live, err := simruntime.RealTrace("../../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace")
			if err != nil {
				t.Fatal(err)
			}
			cfg.Trace, cfg.Live = data, live
		}
		s, err := simruntime.Start(dir, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		// watch, counters, and collect without -duration run until ^C.
		interrupt = serve || strings.Contains(text, " watch ") || strings.Contains(text, " counters ") ||
			strings.Contains(text, " collect ") && !strings.Contains(text, "-duration")
	}
	if strings.Contains(text, "fleet/checkout-api/new.nettrace") {
		// A trace that arrives after the dataset was made.
		b, err := os.ReadFile("../../testdata/traces/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, "fleet/checkout-api/new.nettrace"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args, stdin := words(t, text, work)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir, cmd.Env, cmd.WaitDelay = work, env, 5*time.Second
	if stdin != "" {
		f, err := os.Open(filepath.Join(work, stdin))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdin = f
	}
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if interrupt {
		// Stop it with ^C once it has printed (or written), as a user would.
		o := outputFile(args)
		written := func() bool {
			if serve {
				return strings.Contains(errb.String(), "attached")
			}
			if o == "" {
				return out.Len() > 0
			}
			st, err := os.Stat(filepath.Join(work, o))
			return err == nil && st.Size() > 0
		}
		deadline := time.Now().Add(30 * time.Second)
		for !written() && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGINT)
	}
	err := cmd.Wait()
	if err != nil {
		t.Fatalf("README.md:%d: %s: %v\nstdout: %.2000s\nstderr: %.2000s", c.line, c.text, err, out.String(), errb.String())
	}
	t.Logf("%s: %d bytes out, %d bytes on stderr", c.text, out.Len(), errb.Len())
	if o := outputFile(args); o != "" {
		if st, err := os.Stat(filepath.Join(work, o)); err != nil || st.Size() == 0 && !st.IsDir() {
			t.Errorf("README.md:%d: %s: no %s written (%v)", c.line, c.text, o, err)
		}
	} else if serve {
		// serve logs to stderr: it attached to the process, and stopped.
		if !strings.Contains(errb.String(), "attached") || !strings.Contains(errb.String(), "detached") {
			t.Errorf("README.md:%d: %s: no attach and detach logged\nstderr: %.2000s", c.line, c.text, errb.String())
		}
	} else if out.Len() == 0 && !strings.Contains(text, " diff ") { // diff prints nothing when the two agree
		t.Errorf("README.md:%d: %s: printed nothing\nstderr: %.2000s", c.line, c.text, errb.String())
	}
}

// words splits a command as sh would for the README's commands: words,
// single and double quotes, globs expanded in dir, and "cat FILE | cmd"
// (the file becomes the command's standard input).
func words(t *testing.T, text, dir string) (args []string, stdin string) {
	t.Helper()
	if rest, ok := strings.CutPrefix(text, "cat "); ok {
		file, cmd, found := strings.Cut(rest, " | ")
		if !found {
			t.Fatalf("%q: cat without a pipe", text)
		}
		args, _ = words(t, cmd, dir)
		return args, strings.TrimSpace(file)
	}
	var cur strings.Builder
	quoted, inWord := false, false
	var quote byte
	flush := func() {
		if !inWord {
			return
		}
		w := cur.String()
		if !quoted && strings.ContainsAny(w, "*?[") {
			m, err := filepath.Glob(filepath.Join(dir, w))
			if err != nil || len(m) == 0 {
				t.Fatalf("%q: the glob %s matches nothing", text, w)
			}
			for _, p := range m {
				rel, _ := filepath.Rel(dir, p)
				args = append(args, rel)
			}
		} else {
			args = append(args, w)
		}
		cur.Reset()
		quoted, inWord = false, false
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, quoted, inWord = c, true, true
		case c == ' ':
			flush()
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return args, ""
}

// outputFile returns the file or directory a command writes with -o.
func outputFile(args []string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "-o" {
			return args[i+1]
		}
	}
	return ""
}

// syncBuffer is a buffer the test reads while the command writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Len()
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
