package monitor_test

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clrgo/clrevents/internal/simruntime"
	"github.com/clrgo/clrevents/monitor"
)

// TestWindowNotAttached: a window on a process that /processes lists but
// that has no monitoring session is 409, naming the process's state and,
// for one that failed to attach, the error; 404 stays for a process not
// listed. (Both were 404 "no such process monitored", of a process listed
// a request earlier.)
func TestWindowNotAttached(t *testing.T) {
	h := newHost(t)
	srv, err := simruntime.Start(h.dir, simruntime.Config{PID: 740001, CollectError: simruntime.EFail, DisambigKey: 740001})
	if err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	h.sims[740001] = &sim{srv: srv, w: &simruntime.Workload{PID: 740001}}
	h.mu.Unlock()

	// Process 740002 stays attaching until release: its monitoring
	// stream (whose header the attach reads) holds back its first byte.
	const slow = 740002
	w := &simruntime.Workload{PID: slow}
	release := make(chan struct{})
	var once sync.Once
	stream := func(req *simruntime.Collect, out io.Writer, stop, closed <-chan struct{}) {
		if sessionKind(req) == "monitor" {
			select {
			case <-release:
			case <-closed:
				return
			}
		}
		w.Stream(req, out, stop, closed)
	}
	h.startWith(simruntime.Config{PID: slow, Stream: stream, Entrypoint: "Sim.App", DisambigKey: slow}, w)

	s := serve(t, h, monitor.Options{}, monitor.Access{})
	t.Cleanup(func() { once.Do(func() { close(release) }) }) // before the server stops
	waitFor(t, 5*time.Second, "740001 failed, 740002 attaching", func() bool {
		ps := processes(t, s)
		return ps[740001].State == monitor.StateFailed && ps[slow].State == monitor.StateAttaching
	})
	for _, path := range []string{"/debug/pprof/profile", "/debug/pprof/allocs", "/debug/pprof/mutex", "/trace"} {
		code, b := get(t, s.url+path+"?pid=740001&seconds=1")
		if body := string(b); code != http.StatusConflict || !strings.Contains(body, "process 740001") ||
			!strings.Contains(body, "failed") || !strings.Contains(body, "0x80004005") {
			t.Errorf("%s of a process that failed to attach: %d %s, want 409 naming the state and the error", path, code, b)
		}
		code, b = get(t, s.url+path+"?pid=740002&seconds=1")
		if body := string(b); code != http.StatusConflict || !strings.Contains(body, "process 740002") || !strings.Contains(body, "attaching") {
			t.Errorf("%s of a process attaching: %d %s, want 409 naming the state", path, code, b)
		}
		if code, b := get(t, s.url+path+"?pid=740009&seconds=1"); code != http.StatusNotFound || !strings.Contains(string(b), "no such process monitored") {
			t.Errorf("%s of a process not listed: %d %s, want 404", path, code, b)
		}
	}
	once.Do(func() { close(release) })
	attached(t, s, slow)
	if code, b := get(t, s.url+"/debug/pprof/mutex?pid=740002&seconds=1"); code != 200 {
		t.Errorf("once attached: %d %s", code, b)
	}
}
