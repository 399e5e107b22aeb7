package trace

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
	"testing/iotest"

	"github.com/clrgo/clrevents/kernelevents"
)

const cutLog = "../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip"

// threadEvent is one of a log's Thread events, for TestEndNames' oracle.
type threadEvent struct {
	ts    int64
	start bool
	pid   int64
}

// TestEndNames: a cut log that lost its start's thread rundown names
// most of its sampled threads only in the rundown at its end (DCStop):
// their samples before it have the process that rundown gives (as
// TraceEvent's thread-to-process map for circular logs gives it), and
// only samples of threads the log never names, or taken after the
// thread's end, are left at -1; the process's name comes from the end
// too (Idle, process 0, which the log names only there). Read as a stream, which cannot be read
// twice, they stay -1.
func TestEndNames(t *testing.T) {
	// The oracle: every Thread event, by thread, in time order.
	byTID := map[int64][]threadEvent{}
	type sample struct {
		ts       int64
		tid, pid int64
		name     string
	}
	var samples []sample
	readLog(t, cutLog, func(e *Event) {
		v, err := e.Decode()
		if err != nil {
			return
		}
		switch v := v.(type) {
		case kernelevents.ThreadEvent:
			f := v.ThreadFields()
			op := e.Opcode()
			if op >= 1 && op <= 4 {
				byTID[int64(f.ThreadID)] = append(byTID[int64(f.ThreadID)], threadEvent{e.Timestamp(), op == 1 || op == 3, int64(f.ProcessID)})
			}
		case *kernelevents.PerfInfoSampleV2:
			samples = append(samples, sample{e.Timestamp(), e.ThreadID(), e.ProcessID(), e.ProcessName()})
		}
	})
	var fromEnd, unnamed int
	for _, s := range samples {
		want := int64(-1)
		for _, te := range byTID[s.tid] {
			if te.ts <= s.ts && te.start {
				want = te.pid // named before: not this test's concern
			}
			if te.ts >= s.ts && want == -1 {
				if !te.start {
					want = te.pid
					fromEnd++
				}
				break
			}
		}
		if want == -1 {
			unnamed++
		}
		if s.pid == 0 && s.name != "Idle" {
			// Process 0 is named only by the rundown at the log's end.
			t.Fatalf("sample of thread %d at %d in process 0: its name is %q, want Idle", s.tid, s.ts, s.name)
		}
		if s.pid != want {
			t.Fatalf("sample of thread %d at %d: process %d, want %d (the log's Thread events: %+v)", s.tid, s.ts, s.pid, want, byTID[s.tid])
		}
	}
	if fromEnd < 8000 {
		t.Errorf("%d samples' processes came from the log's end: the cut log should have more than 8,000 (its start's thread rundown is cut)", fromEnd)
	}
	t.Logf("%d samples, %d placed by the log's end, %d of threads it never names or after their end", len(samples), fromEnd, unnamed)

	// A stream read once cannot go back for the end.
	zipped, err := os.ReadFile(cutLog)
	if err != nil {
		t.Fatal(err)
	}
	data := unzipOne(t, zipped)
	r, err := NewReader(iotest.OneByteReader(bytes.NewReader(data)), WithOrder(FileOrder))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var streamed int
	for {
		e, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
		if v, _ := e.Decode(); v != nil && e.ProcessID() == -1 {
			if _, ok := v.(*kernelevents.PerfInfoSampleV2); !ok {
				continue
			}
			streamed++
		}
	}
	if streamed < fromEnd {
		t.Errorf("read as a stream, %d samples have process -1, want at least %d: a stream cannot be read again for its end", streamed, fromEnd)
	}
}

// readLog reads every event of the trace at path through fn.
func readLog(t *testing.T, path string, fn func(e *Event)) {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		e, err := r.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		fn(e)
	}
}
