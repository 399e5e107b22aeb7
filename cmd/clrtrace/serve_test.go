package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clrgo/clrevents/internal/simruntime"
)

// syncBuffer is a stderr that the test reads while run writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServe runs clrtrace serve with args and returns its URL, its
// stderr, the signal channel and its exit status.
func startServe(t *testing.T, args ...string) (string, *syncBuffer, chan os.Signal, chan int) {
	t.Helper()
	sigs := make(chan os.Signal, 2)
	stderr := &syncBuffer{}
	code := make(chan int, 1)
	go func() { code <- run(sigs, append([]string{"serve", "-poll", "100ms"}, args...), io.Discard, stderr) }()
	re := regexp.MustCompile(`serving (https?://[^ ]+)`)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			return m[1], stderr, sigs, code
		}
		select {
		case c := <-code:
			t.Fatalf("clrtrace serve exited %d: %s", c, stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("clrtrace serve did not start: %s", stderr)
	return "", nil, nil, nil
}

// TestServe: clrtrace serve finds the simulated process as clrtrace ps
// does, serves it, and exits 0 at SIGTERM after stopping its session.
func TestServe(t *testing.T) {
	w := &simruntime.Workload{}
	s := sim(t, simruntime.Config{Stream: w.Stream, CommandLine: "/usr/share/dotnet/dotnet /app/web.dll", ClrVersion: "8.0.11"})
	url, stderr, sigs, code := startServe(t, "-listen", "127.0.0.1:0", "-pid", pid)
	var procs []struct {
		PID         int    `json:"pid"`
		CommandLine string `json:"commandLine"`
		State       string `json:"state"`
		EventsRead  int    `json:"eventsRead"`
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(procs) == 0 || procs[0].EventsRead == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("not attached: %+v\n%s", procs, stderr)
		}
		time.Sleep(50 * time.Millisecond)
		resp, err := http.Get(url + "/processes")
		if err != nil {
			t.Fatal(err)
		}
		json.NewDecoder(resp.Body).Decode(&procs)
		resp.Body.Close()
	}
	if procs[0].PID != os.Getpid() || procs[0].CommandLine != "/usr/share/dotnet/dotnet /app/web.dll" || procs[0].State != "attached" {
		t.Errorf("%+v", procs)
	}
	sigs <- syscall.SIGTERM
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit %d after SIGTERM: %s", c, stderr)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no exit within 20 s of SIGTERM")
	}
	stops := 0
	for _, r := range s.Requests() {
		if r.Set == 2 && r.ID == 1 {
			stops++
		}
	}
	if stops == 0 {
		t.Errorf("no StopTracing at SIGTERM: %s", stderr)
	}
}

// TestServeAccess: beyond loopback only with a token, which requests must
// carry and which is never printed.
func TestServeAccess(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	var stderr syncBuffer
	if c := run(nil, []string{"serve", "-listen", "0.0.0.0:0"}, io.Discard, &stderr); c != 1 || !strings.Contains(stderr.String(), "needs a token") {
		t.Errorf("0.0.0.0 without a token: exit %d: %s", c, stderr.String())
	}
	if c := run(nil, []string{"serve", "-pid", "x"}, io.Discard, io.Discard); c != 2 {
		t.Errorf("-pid x: exit %d", c)
	}
	const token = "tok-8e1f3d"
	file := filepath.Join(t.TempDir(), "token")
	os.WriteFile(file, []byte(token+"\n"), 0o600)
	url, out, sigs, code := startServe(t, "-listen", "127.0.0.1:0", "-token-file", file)
	for _, c := range []struct {
		auth string
		want int
	}{{"", 401}, {"Bearer nope", 401}, {"Bearer " + token, 200}} {
		req, _ := http.NewRequest("GET", url+"/metrics", nil)
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%q: %d, want %d", c.auth, resp.StatusCode, c.want)
		}
	}
	sigs <- syscall.SIGINT
	if c := <-code; c != 0 {
		t.Errorf("exit %d", c)
	}
	if strings.Contains(out.String(), token) {
		t.Errorf("the token was printed: %s", out)
	}
}
