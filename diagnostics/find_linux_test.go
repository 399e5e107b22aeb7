package diagnostics

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
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
