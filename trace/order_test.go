package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestThreadOrder: in ThreadOrder every trace gives the events TimeOrder
// gives, the events each thread logged in time order (an EventPipe
// sampler's samples of other threads are the sampler's); an EventPipe
// trace in its stored order (nothing merged), an ETL log, from a file or
// a pipe, in time order.
func TestThreadOrder(t *testing.T) {
	paths := allTraces(t)
	if m, _ := filepath.Glob("../testdata/pyroscope-dotnetdiag/*.nettrace"); len(m) > 0 {
		paths = append(paths, m...)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			byTime := openAll(t, path)
			byThread := openAll(t, path, WithOrder(ThreadOrder))
			want := openAll(t, path, WithOrder(FileOrder))
			isETL := strings.Contains(path, ".etl")
			if isETL {
				want = byTime
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				r, err := NewReader(onlyReader{bytes.NewReader(data)}, WithOrder(ThreadOrder))
				if err != nil {
					t.Fatal(err)
				}
				piped := readAll(t, r)
				r.Close()
				if !slices.Equal(piped, byTime) {
					t.Errorf("through a pipe: %d events, not those of time order", len(piped))
				}
			}
			if !slices.Equal(byThread, want) {
				t.Fatalf("%d events, not the %d of %s", len(byThread), len(want), map[bool]string{true: "time order", false: "file order"}[isETL])
			}
			if len(byThread) != len(byTime) {
				t.Fatalf("%d events, time order %d", len(byThread), len(byTime))
			}
			r, err := Open(path, WithOrder(ThreadOrder))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			last := map[[2]int64]int64{} // by process and logging thread
			for i := 0; ; i++ {
				e, err := r.Next()
				if err != nil {
					break
				}
				k := [2]int64{e.ProcessID(), e.ThreadID()}
				if nt := e.nt; nt != nil && nt.CaptureThreadID != 0 {
					k[1] = int64(nt.CaptureThreadID)
				}
				if p, ok := last[k]; ok && e.Timestamp() < p {
					t.Fatalf("event %d (%s at %d) comes after thread %d's event at %d", i, e.Name(), e.Timestamp(), k[1], p)
				}
				last[k] = e.Timestamp()
			}
			t.Logf("%d events, %d logging threads", len(byThread), len(last))
		})
	}
}

// TestOrderString names the orders.
func TestOrderString(t *testing.T) {
	for o, want := range map[Order]string{TimeOrder: "time", FileOrder: "file", ThreadOrder: "thread"} {
		if o.String() != want {
			t.Errorf("%d: %q, want %q", o, o.String(), want)
		}
	}
}
