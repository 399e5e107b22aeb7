package monitor_test

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clrgo/clrevents/internal/simruntime"
	"github.com/clrgo/clrevents/monitor"
)

// lagWriter writes the stream's start at once, what follows lag later,
// and the rest at once on flush: a runtime whose streaming thread writes
// a session's buffers late (it writes each session's on its own schedule,
// and everything at the session's stop).
type lagWriter struct {
	w     io.Writer
	lag   time.Duration
	began bool
	mu    sync.Mutex
	pend  []lagged
	done  chan struct{}
	wg    sync.WaitGroup
}

type lagged struct {
	at time.Time
	b  []byte
}

func newLagWriter(w io.Writer, lag time.Duration) *lagWriter {
	l := &lagWriter{w: w, lag: lag, done: make(chan struct{})}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-l.done:
				return
			case now := <-t.C:
				l.write(now)
			}
		}
	}()
	return l
}

func (l *lagWriter) Write(p []byte) (int, error) {
	if !l.began {
		l.began = true
		return l.w.Write(p)
	}
	l.mu.Lock()
	l.pend = append(l.pend, lagged{time.Now().Add(l.lag), append([]byte(nil), p...)})
	l.mu.Unlock()
	return len(p), nil
}

// write writes what is due by now.
func (l *lagWriter) write(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := 0
	for ; i < len(l.pend) && !l.pend[i].at.After(now); i++ {
		l.w.Write(l.pend[i].b)
	}
	l.pend = l.pend[i:]
}

func (l *lagWriter) flush() {
	close(l.done)
	l.wg.Wait()
	l.write(time.Now().Add(l.lag))
}

// TestWindowNamesItsOwnCompiles: a profile window names the methods
// compiled while it runs, however late the session that names compiled
// methods delivers them. A window's session was the sampler (or the
// allocation or contention events) alone, its frames resolved through the
// code map the other sessions feed; a method compiled in the window whose
// load that session had not yet delivered when the window ended was ?!?
// (the runtime writes a session's events about every 100 ms, a window's
// all at its stop). Here that session's stream lags by 20 s.
func TestWindowNamesItsOwnCompiles(t *testing.T) {
	h := newHost(t)
	kinds := map[int]string{720001: "profile", 720002: "allocs", 720003: "mutex"}
	for pid := range kinds {
		// The JIT compiles its methods from 1.5 s after attach, inside
		// the window.
		w := &simruntime.Workload{PID: pid, JitAfter: 1500 * time.Millisecond}
		stream := func(req *simruntime.Collect, out io.Writer, stop, closed <-chan struct{}) {
			if sessionKind(req) == "names" {
				l := newLagWriter(out, 20*time.Second)
				defer l.flush()
				out = l
			}
			w.Stream(req, out, stop, closed)
		}
		h.startWith(simruntime.Config{PID: pid, Stream: stream, Entrypoint: "Sim.App", DisambigKey: uint64(pid)}, w)
	}
	s := serve(t, h, monitor.Options{}, monitor.Access{})
	attached(t, s, 720001, 720002, 720003)
	var wg sync.WaitGroup
	for pid, path := range kinds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, b := get(t, fmt.Sprintf("%s/debug/pprof/%s?pid=%d&seconds=3", s.url, path, pid))
			if code != 200 {
				t.Errorf("%s: %d %s", path, code, b)
				return
			}
			p, names := functions(t, b)
			unresolved := 0
			for _, x := range p.Sample {
				for _, l := range x.Location {
					if len(l.Line) > 0 && strings.Contains(l.Line[0].Function.Name, "?!?") {
						unresolved++
						break
					}
				}
			}
			if unresolved > 0 || !strings.Contains(names, "Sim.App.Generated.Step") {
				t.Errorf("%s: %d of %d samples with an unresolved frame; functions:\n%s", path, unresolved, len(p.Sample), names)
			}
		}()
	}
	wg.Wait()
}
