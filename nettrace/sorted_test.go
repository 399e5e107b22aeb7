package nettrace

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type orderedEvent struct {
	offset    int64
	thread    uint64
	timestamp int64
	id        uint16
	payload   uint32 // CRC of the payload
	stack     int
}

func readOrdered(t *testing.T, data []byte, o Order) ([]orderedEvent, error) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	r.SetOrder(o)
	var out []orderedEvent
	for {
		e, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		// Order holds within the thread that wrote the events (a sample's
		// ThreadID is the sampled thread, its writer the sampler).
		writer := e.CaptureThreadID
		if writer == 0 {
			writer = e.ThreadID
		}
		out = append(out, orderedEvent{e.Offset, writer, e.Timestamp, e.ID, crc32.ChecksumIEEE(e.Payload), len(e.Stack)})
	}
}

// checkTimeOrder: TimeOrder gives the same events as FileOrder (payloads
// and stacks included), with timestamps that never go back, and each
// writing thread's events in their file order.
func checkTimeOrder(t *testing.T, name string, data []byte) {
	file, err := readOrdered(t, data, FileOrder)
	if err != nil {
		t.Fatalf("%s: file order: %v", name, err)
	}
	byTime, err := readOrdered(t, data, TimeOrder)
	if err != nil {
		t.Fatalf("%s: time order: %v", name, err)
	}
	if len(byTime) != len(file) {
		t.Fatalf("%s: %d events in time order, %d in file order", name, len(byTime), len(file))
	}
	seen := map[int64]orderedEvent{}
	for _, e := range file {
		seen[e.offset] = e
	}
	perThread := map[uint64][]int64{}
	for _, e := range file {
		perThread[e.thread] = append(perThread[e.thread], e.offset)
	}
	next := map[uint64]int{}
	for i, e := range byTime {
		if f, ok := seen[e.offset]; !ok || f != e {
			t.Fatalf("%s: event %d (offset %d) is not the file's event there: %+v vs %+v", name, i, e.offset, e, f)
		}
		delete(seen, e.offset)
		if i > 0 && e.timestamp < byTime[i-1].timestamp {
			t.Fatalf("%s: event %d at %d goes back in time from %d", name, i, e.timestamp, byTime[i-1].timestamp)
		}
		if want := perThread[e.thread][next[e.thread]]; want != e.offset {
			t.Fatalf("%s: thread %d: event at offset %d comes before offset %d", name, e.thread, e.offset, want)
		}
		next[e.thread]++
	}
}

func TestTimeOrderRepoTraces(t *testing.T) {
	for _, name := range []string{"eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip", "eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip"} {
		checkTimeOrder(t, name, loadTrace(t, filepath.Join(repoTraces, name)))
	}
	for _, compress := range []bool{true, false} {
		checkTimeOrder(t, "V6", buildV6(compress))
	}
}

func TestTimeOrderSharedTraces(t *testing.T) {
	if _, err := os.Stat(sharedTraces); err != nil {
		t.Skipf("shared fixtures not available (%v); they live in ../shared next to the repository", err)
	}
	for _, rel := range []string{
		"perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip",
		"perfview/only_managed_samples.nettrace.zip",
		"pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace",
		"perfview/eventpipe-dotnetcore2.1-linux-x64-objver3.netperf.zip", // no sequence points: file order
	} {
		checkTimeOrder(t, rel, loadTrace(t, filepath.Join(sharedTraces, rel)))
	}
}

// TestTimeOrderTruncated: a cut trace gives events of the file, then the
// truncation error, in time order too.
func TestTimeOrderTruncated(t *testing.T) {
	data := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"))
	full, _ := readOrdered(t, data, FileOrder)
	seen := map[int64]orderedEvent{}
	for _, e := range full {
		seen[e.offset] = e
	}
	for _, cut := range []int{len(data) / 3, len(data) / 2, len(data) - 10} {
		got, err := readOrdered(t, data[:cut:cut], TimeOrder)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("cut at %d: %v, want a truncation error", cut, err)
		}
		if len(got) == 0 {
			t.Errorf("cut at %d: no events", cut)
		}
		for _, e := range got {
			if seen[e.offset] != e {
				t.Fatalf("cut at %d: event at offset %d is not the file's", cut, e.offset)
			}
		}
	}
}

// TestTimeOrderAllocs: holding and sorting reuse their buffers, so a whole
// pass allocates about as little as in file order.
func TestTimeOrderAllocs(t *testing.T) {
	data := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"))
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	r.SetOrder(TimeOrder)
	n := 0
	for ; n < 300; n++ { // warm up: the first stretch sizes the buffers
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := r.Next(); err != nil && err != io.EOF {
			t.Fatal(err)
		}
	})
	if allocs > 0.05 {
		t.Errorf("%.3f allocations per event in time order", allocs)
	}
}

// TestTimeOrderMetadataRedefined: an ID given new metadata in the middle of
// a stretch names the new metadata from then on, in time order as in file
// order, though the events come out of the order in which they were read.
func TestTimeOrderMetadataRedefined(t *testing.T) {
	w := newV6Writer(8, 0)
	w.threads(wThread{index: 1, tid: 1})
	w.metadata(wMeta{id: 1, provider: "P", eventID: 1, name: "A"})
	w.events(true, wEvent{meta: 1, thread: 1, capThread: 1, seq: 1, ts: 20})
	w.metadata(wMeta{id: 1, provider: "P", eventID: 2, name: "B"})
	w.events(true, wEvent{meta: 1, thread: 1, capThread: 1, seq: 2, ts: 10}, wEvent{meta: 1, thread: 1, capThread: 1, seq: 3, ts: 30})
	data := w.end()
	for _, tc := range []struct {
		order Order
		want  string
	}{{FileOrder, "A@20 B@10 B@30"}, {TimeOrder, "B@10 A@20 B@30"}} {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		r.SetOrder(tc.order)
		var got []string
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%v: %v", tc.order, err)
			}
			got = append(got, fmt.Sprintf("%s@%d", e.Name, e.Timestamp))
			if want := uint16(map[string]int{"A": 1, "B": 2}[e.Name]); e.ID != want {
				t.Errorf("%v: %s has ID %d, want %d", tc.order, e.Name, e.ID, want)
			}
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("%v: got %s, want %s", tc.order, g, tc.want)
		}
	}
}
