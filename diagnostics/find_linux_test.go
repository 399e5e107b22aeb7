package diagnostics

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFindContainer: a process in a container, TMPDIR=/xt in its
// environment, PID 7 in its namespace: its socket is found through
// /proc/PID/root.
func TestFindContainer(t *testing.T) {
	root := shortTempDir(t)
	p := filepath.Join(root, "123")
	sockDir := filepath.Join(p, "root", "xt")
	if err := os.MkdirAll(sockDir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(p, "environ"), []byte("A=1\x00TMPDIR=/xt\x00B=2\x00"), 0o644)
	os.WriteFile(filepath.Join(p, "status"), []byte("Name:\tdotnet\nNSpid:\t123\t7\n"), 0o644)
	sock := filepath.Join(sockDir, "dotnet-diagnostic-7-99-socket")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	os.WriteFile(filepath.Join(sockDir, "dotnet-diagnostic-7-98-socket"), nil, 0o644) // not a socket
	fs := procfs{root: root}
	got, err := fs.find(123)
	if err != nil || got != sock {
		t.Fatalf("find = %q, %v; want %q", got, err, sock)
	}
	procs, err := fs.processes()
	if err != nil || len(procs) != 1 || procs[0].PID != 123 {
		t.Fatalf("processes = %+v, %v", procs, err)
	}
	if _, err := fs.find(124); !errors.Is(err, ErrNoProcess) {
		t.Errorf("missing pid: %v", err)
	}
	// A PID not in /proc whose socket is in our TMPDIR (a process in
	// another PID namespace sharing /tmp) is still found.
	tmp := shortTempDir(t)
	t.Setenv("TMPDIR", tmp)
	ln2, err := net.Listen("unix", filepath.Join(tmp, "dotnet-diagnostic-124-5-socket"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln2.Close()
	if got, err := fs.find(124); err != nil || got != filepath.Join(tmp, "dotnet-diagnostic-124-5-socket") {
		t.Errorf("pid 124 via TMPDIR: %q, %v", got, err)
	}
	if pid, ok := parseSocketName("dotnet-diagnostic-42-1700000000-socket"); !ok || pid != 42 {
		t.Errorf("parseSocketName = %d, %v", pid, ok)
	}
	for _, bad := range []string{"dotnet-diagnostic-42-socket", "dotnet-diagnostic-x-1-socket", "dotnet-diagnostic-42-1-sock"} {
		if _, ok := parseSocketName(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
	if n := parseNSpid([]byte("NSpid:\t5\n"), 5); n != 5 {
		t.Errorf("parseNSpid = %d", n)
	}
}

// TestFindLongRoot: a socket the runtime could bind in its TMPDIR, whose
// path through /proc/PID/root is longer than a Unix socket address
// holds, is taken from the TMPDIR itself when the process shares our PID
// namespace; not reachable otherwise, the error says why.
func TestFindLongRoot(t *testing.T) {
	tmp := shortTempDir(t)
	sock := filepath.Join(tmp, "dotnet-diagnostic-321-1234567-socket")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// A /proc whose PID directory sits deep enough that root/TMPDIR/name
	// runs past 107 bytes; its root is the real one.
	root := filepath.Join(t.TempDir(), strings.Repeat("p", 60))
	p := filepath.Join(root, "321")
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/", filepath.Join(p, "root")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(p, "environ"), []byte("TMPDIR="+tmp+"\x00"), 0o644)
	status := filepath.Join(p, "status")
	os.WriteFile(status, []byte("NSpid:\t321\n"), 0o644)
	fs := procfs{root: root}
	if long := filepath.Join(p, "root", sock); len(long) <= maxSocketPath {
		t.Fatalf("the path through the root is %d bytes: the test needs more than %d", len(long), maxSocketPath)
	}
	if got, err := fs.find(321); err != nil || got != sock {
		t.Fatalf("find = %q, %v; want %q", got, err, sock)
	}
	// In a PID namespace of its own (PID 5 there), only the root reaches
	// its socket.
	ln5, err := net.Listen("unix", filepath.Join(tmp, "dotnet-diagnostic-5-1234567-socket"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln5.Close()
	os.WriteFile(status, []byte("NSpid:\t321\t5\n"), 0o644)
	t.Setenv("TMPDIR", t.TempDir())
	if _, err := fs.find(321); !errors.Is(err, ErrNoEndpoint) || !strings.Contains(err.Error(), "more than the 107 a Unix socket address holds") {
		t.Fatalf("find in another namespace: %v", err)
	}
}

// TestStaleSocket: a socket file nothing listens on (its runtime was
// killed) is ErrNoProcess, naming the file.
func TestStaleSocket(t *testing.T) {
	sock := filepath.Join(shortTempDir(t), "dotnet-diagnostic-999-1-socket")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	_, err = NewClientAddress(999, sock).ProcessInfo(context.Background())
	if !errors.Is(err, ErrNoProcess) || !strings.Contains(err.Error(), "its runtime has exited, leaving its socket (dial unix "+sock) {
		t.Fatalf("ProcessInfo on a stale socket: %v", err)
	}
}

// fakeHost makes a /proc of n processes that share one TMPDIR (their
// roots are the real one), each with a socket there, among other files.
func fakeHost(tb testing.TB, n, others int) procfs {
	tmp := shortTempDir(tb)
	root := tb.TempDir()
	for i := range others {
		os.WriteFile(filepath.Join(tmp, "other-"+strconv.Itoa(i)), nil, 0o644)
	}
	for pid := 1000; pid < 1000+n; pid++ {
		p := filepath.Join(root, strconv.Itoa(pid))
		os.MkdirAll(p, 0o755)
		os.Symlink("/", filepath.Join(p, "root"))
		os.WriteFile(filepath.Join(p, "environ"), []byte("TMPDIR="+tmp+"\x00"), 0o644)
		os.WriteFile(filepath.Join(p, "status"), []byte("NSpid:\t"+strconv.Itoa(pid)+"\n"), 0o644)
		ln, err := net.Listen("unix", filepath.Join(tmp, "dotnet-diagnostic-"+strconv.Itoa(pid)+"-1-socket"))
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { ln.Close() })
	}
	return procfs{root: root}
}

// TestProcessesShared: a pass finds every process of a shared TMPDIR,
// listing it once.
func TestProcessesShared(t *testing.T) {
	fs := fakeHost(t, 40, 100)
	procs, err := fs.processes()
	if err != nil || len(procs) != 40 || procs[0].PID != 1000 || procs[39].PID != 1039 {
		t.Fatalf("processes = %d, %v", len(procs), err)
	}
	for _, p := range procs {
		if filepath.Base(p.Address) != "dotnet-diagnostic-"+strconv.Itoa(p.PID)+"-1-socket" {
			t.Fatalf("process %d: %s", p.PID, p.Address)
		}
	}
}

// BenchmarkProcesses: a discovery pass over 300 processes whose TMPDIR
// (shared) holds 3,000 other files; "each" is a pass that lists the
// directory for each process, as passes did before the listings were
// kept.
func BenchmarkProcesses(b *testing.B) {
	fs := fakeHost(b, 300, 3000)
	b.Run("pass", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if procs, _ := fs.processes(); len(procs) != 300 {
				b.Fatal(len(procs))
			}
		}
	})
	b.Run("each", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for pid := 1000; pid < 1300; pid++ {
				if _, err := fs.find(pid); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// TestFindStartTime: the key in a socket's name is its runtime's start
// time (field 22 of /proc/PID/stat). A container that shares the host's
// /tmp binds its runtime's socket under the PID the runtime has in the
// container (7); the host's process 7, another process, sees that socket
// through its own root too: it is not its socket, its start differing,
// and was listed and traced as process 7. The container's process, host
// PID 4567, keeps it.
func TestFindStartTime(t *testing.T) {
	root := shortTempDir(t)
	shared := shortTempDir(t) // the /tmp both see
	for _, pr := range []struct {
		pid         int
		nspid, stat string
	}{
		{7, "7", "7 (kworker/0:1 (x)) S 2 0 0 0 -1 69238880 0 0 0 0 0 0 0 0 20 0 1 0 25 0 0"},
		{4567, "4567\t7", "4567 (dotnet) S 1 4567 4567 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 9 0 1234 0 0"},
	} {
		p := filepath.Join(root, strconv.Itoa(pr.pid))
		if err := os.MkdirAll(filepath.Join(p, "root"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(shared, filepath.Join(p, "root", "tmp")); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(p, "status"), []byte("Name:\tx\nNSpid:\t"+pr.nspid+"\n"), 0o644)
		os.WriteFile(filepath.Join(p, "stat"), []byte(pr.stat+"\n"), 0o644)
	}
	t.Setenv("TMPDIR", shortTempDir(t)) // nothing in this process's own
	ln, err := net.Listen("unix", filepath.Join(shared, "dotnet-diagnostic-7-1234-socket"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	fs := procfs{root: root}
	if got, err := fs.find(4567); err != nil || filepath.Base(got) != "dotnet-diagnostic-7-1234-socket" {
		t.Errorf("find(4567) = %q, %v; want the container's socket", got, err)
	}
	if got, err := fs.find(7); !errors.Is(err, ErrNoEndpoint) {
		t.Errorf("find(7) = %q, %v; want no endpoint (the socket is of another process's start)", got, err)
	}
	if procs, err := fs.processes(); err != nil || len(procs) != 1 || procs[0].PID != 4567 {
		t.Errorf("processes = %+v, %v; want 4567 alone", procs, err)
	}
	// A key of 0 (the runtime could not read its start) and a process
	// whose start /proc does not give match any.
	if n := parseStartTime([]byte("12 (a) b) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 987 20")); n != 987 {
		t.Errorf("parseStartTime = %d, want 987", n)
	}
	if n := parseStartTime([]byte("12 (a) R 1")); n != 0 {
		t.Errorf("parseStartTime of a short line = %d, want 0", n)
	}
}

// TestFindDsrouter: dotnet-dsrouter forwards a runtime's diagnostic
// connections (a device's, a browser's) through a socket named
// dotnet-diagnostic-dsrouter-PID-KEY-socket, with its own PID, beside its
// own runtime's socket: the newer of the two is the process's, the
// forwarding one on a tie, as the .NET client takes it (before, the
// forwarding socket was not seen: "no such process").
func TestFindDsrouter(t *testing.T) {
	root := shortTempDir(t)
	tmp := shortTempDir(t)
	p := filepath.Join(root, "4242")
	if err := os.MkdirAll(filepath.Join(p, "root"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(tmp, filepath.Join(p, "root", "tmp")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(p, "stat"), []byte("4242 (dotnet-dsrouter) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 9 0 50 0 0\n"), 0o644)
	t.Setenv("TMPDIR", shortTempDir(t))
	fs := procfs{root: root}
	listen := func(name string, mtime time.Time) string {
		path := filepath.Join(tmp, name)
		ln, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return path
	}
	at := time.Now().Add(-time.Hour)
	fwd := listen("dotnet-diagnostic-dsrouter-4242-77-socket", at)
	if got, err := fs.find(4242); err != nil || filepath.Base(got) != filepath.Base(fwd) {
		t.Errorf("the forwarding socket alone: %q, %v; want %q", got, err, fwd)
	}
	own := listen("dotnet-diagnostic-4242-50-socket", at.Add(time.Minute))
	if got, err := fs.find(4242); err != nil || filepath.Base(got) != filepath.Base(own) {
		t.Errorf("its runtime's socket newer: %q, %v; want %q", got, err, own)
	}
	os.Chtimes(own, at, at)
	if got, err := fs.find(4242); err != nil || filepath.Base(got) != filepath.Base(fwd) {
		t.Errorf("a tie: %q, %v; want the forwarding socket %q", got, err, fwd)
	}
	if pid, ok := parseSocketName("dotnet-diagnostic-dsrouter-4242-77-socket"); !ok || pid != 4242 {
		t.Errorf("parseSocketName(dsrouter) = %d, %v", pid, ok)
	}
}
