package monitor

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/internal/simruntime"
)

// TestConfigChecks: a -poll too short or negative, and TLS with one of
// its two files, are errors naming the flag, before anything is served; a
// -listen without a port is that error (it was taken for an address
// beyond loopback, which needs a token).
func TestConfigChecks(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Poll: time.Millisecond}, "-poll 1ms: at least 100ms"},
		{Config{Poll: -time.Second}, "-poll -1s: at least 100ms"},
		{Config{Poll: time.Second, TLSCert: "c.pem"}, "-tls-cert c.pem without -tls-key"},
		{Config{Poll: time.Second, TLSKey: "k.pem"}, "-tls-key k.pem without -tls-cert"},
		{Config{Listen: "127.0.0.1"}, "listen address 127.0.0.1: missing port in address"},
		{Config{Listen: "localhost"}, "listen address localhost: missing port in address"},
		{Config{Listen: "[::1]"}, "listen address [::1]: missing port in address"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := c.cfg.Serve(ctx, func(string, ...any) {})
		cancel()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
}

// TestFindPIDs: with -pid the monitor looks for those processes alone,
// and says when one is not found, once, and when it is found again.
func TestFindPIDs(t *testing.T) {
	tmp, err := os.MkdirTemp("", "clrm")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	t.Setenv("TMPDIR", tmp)
	me := os.Getpid()
	var logs []string
	discover := findPIDs([]int{me}, func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) })
	for range 2 {
		if found, err := discover(); err != nil || len(found) != 0 {
			t.Fatalf("no socket yet: %v, %v", found, err)
		}
	}
	if len(logs) != 1 || !strings.Contains(logs[0], "process "+strconv.Itoa(me)+" (given with -pid): not found: ") {
		t.Fatalf("logs %q, want one line saying the process was not found", logs)
	}
	sock := filepath.Join(tmp, fmt.Sprintf("dotnet-diagnostic-%d-%d-socket", me, simruntime.SocketKey(me)))
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if found, err := discover(); err != nil || len(found) != 1 || found[0].Address != sock {
		t.Fatalf("with its socket: %+v, %v", found, err)
	}
	if len(logs) != 2 || !strings.HasSuffix(logs[1], "found at "+sock) {
		t.Fatalf("logs %q, want it found at %s", logs, sock)
	}
}
