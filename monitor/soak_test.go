package monitor_test

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/internal/simruntime"
	"github.com/clrgo/clrevents/monitor"
)

// TestSoak drives two simulated processes at a high event rate through the
// monitor for a bounded time (20 s; CLREVENTS_SOAK=5m for longer, skipped
// with -short), scraping /metrics and /processes and taking a profile
// window now and then, and checks that the heap stops growing: HeapInuse
// after a GC at the end is within 25% (and 4 MB) of the midpoint's, and
// the resident memory within 25% (and 16 MB).
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak test runs 20 s: skipped with -short")
	}
	d := 20 * time.Second
	if v := os.Getenv("CLREVENTS_SOAK"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			t.Fatalf("CLREVENTS_SOAK=%q: %v", v, err)
		}
	}
	h := newHost(t)
	a := h.start(500001, &simruntime.Workload{Rate: 40000, ExceptionTypes: 200})
	b := h.start(500002, &simruntime.Workload{Rate: 10000, DropPerTick: 1})
	s := serve(t, h, monitor.Options{CounterInterval: 0.5}, monitor.Access{})
	attached(t, s, 500001, 500002)

	heap := func() (inuse uint64, rss uint64) {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		st, _ := os.ReadFile("/proc/self/status")
		for _, l := range strings.Split(string(st), "\n") {
			if f := strings.Fields(l); len(f) == 3 && f[0] == "VmRSS:" && f[2] == "kB" {
				kb, _ := strconv.ParseUint(f[1], 10, 64)
				rss = kb << 10
			}
		}
		return ms.HeapInuse, rss
	}
	start := time.Now()
	startEvents := a.w.Stats().Events + b.w.Stats().Events
	h0, rss0 := heap()
	var mid, rssMid uint64
	windows := 0
	for i := 0; time.Since(start) < d; i++ {
		families(t, s)
		processes(t, s)
		if i%20 == 10 {
			if code, body := get(t, s.url+"/debug/pprof/profile?pid=500001&seconds=1"); code != 200 {
				t.Fatalf("profile window: %d %s", code, body)
			}
			windows++
		}
		if mid == 0 && time.Since(start) > d/2 {
			mid, rssMid = heap()
		}
		time.Sleep(200 * time.Millisecond)
	}
	elapsed := time.Since(start)
	end, rssEnd := heap()
	ps := processes(t, s)
	read := ps[500001].EventsRead + ps[500002].EventsRead
	written := a.w.Stats().Events + b.w.Stats().Events - startEvents
	t.Logf("%v: %d events written (%.0f/s), %d read in all, %d dropped (as the workload skips them), %d profile windows",
		elapsed.Round(time.Second), written, float64(written)/elapsed.Seconds(), read, ps[500002].EventsDropped, windows)
	t.Logf("HeapInuse after GC: start %.1f MB, mid %.1f MB, end %.1f MB; VmRSS: start %.1f MB, mid %.1f MB, end %.1f MB",
		mb(h0), mb(mid), mb(end), mb(rss0), mb(rssMid), mb(rssEnd))
	if end > mid+max(mid/4, 4<<20) {
		t.Errorf("the heap grew from %.1f MB at the midpoint to %.1f MB at the end", mb(mid), mb(end))
	}
	// The process's resident memory too (where /proc says it: Linux).
	if rssMid > 0 && rssEnd > rssMid+max(rssMid/4, 16<<20) {
		t.Errorf("the resident memory grew from %.1f MB at the midpoint to %.1f MB at the end", mb(rssMid), mb(rssEnd))
	}
	if float64(written)/elapsed.Seconds() < 10000 { // about 38,000 here; a loaded machine writes fewer
		t.Errorf("only %.0f events/s: the soak did not run at a high rate", float64(written)/elapsed.Seconds())
	}
	// Each process's stream was read as fast as it came.
	if lag := int64(written) - int64(read); lag > int64(written)/5 && written > 0 {
		t.Errorf("read %d of %d events", read, written)
	}
}

func mb(n uint64) float64 { return float64(n) / (1 << 20) }
