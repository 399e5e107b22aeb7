package trace_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/clrgo/clrevents/internal/etltest"
	"github.com/clrgo/clrevents/internal/tracetest"
	"github.com/clrgo/clrevents/trace"
)

// TestStacks: the kernel's stack walks reach the events they name, in
// every form the kernel logs them (frames inline; keys defined before by
// KeyCreate, after by KeyDelete and KeyRundown, or never), kernel frames
// before user frames; an event no walk names has none; a walk's process
// is its own, and a thread's process comes from the Thread events.
func TestStacks(t *testing.T) {
	le := binary.LittleEndian
	u64s := func(b []byte, vs ...uint64) []byte {
		for _, v := range vs {
			b = le.AppendUint64(b, v)
		}
		return b
	}
	const (
		perfInfo, stackWalk, thread = 0x0F, 0x18, 0x05
		kA, kU, kC, kX              = 0xfffffa8000001000, 0xfffffa8000002000, 0xfffffa8000003000, 0xfffffa8000004000
		kern                        = 0xfffff80000000000
	)
	sample := func(ts int64, tid uint32, ip uint64) []byte {
		p := u64s(nil, ip)
		p = le.AppendUint32(p, tid)
		return etltest.System(perfInfo, 46, 2, 0, 0, ts, le.AppendUint32(p, 1))
	}
	ref := func(ts int64, op uint8, tid uint32, rest ...uint64) []byte {
		p := le.AppendUint64(nil, uint64(ts))
		p = le.AppendUint32(le.AppendUint32(p, 10), tid)
		return etltest.System(stackWalk, op, 2, 0, 0, ts+1, u64s(p, rest...))
	}
	keyDef := func(ts int64, op uint8, key uint64, frames ...uint64) []byte {
		return etltest.System(stackWalk, op, 2, 0, 0, ts, u64s(nil, append([]uint64{key}, frames...)...))
	}
	threadStart := func(ts int64, pid, tid uint32) []byte {
		p := le.AppendUint32(le.AppendUint32(nil, pid), tid)
		return etltest.System(thread, 1, 2, 0, 0, ts, le.AppendUint32(u64s(p, 0, 0, 0, 0, 0, 0, 0), 0))
	}
	events := [][]byte{
		threadStart(0, 20, 55),
		sample(100, 77, kern+0x10), // A: both parts by key, defined later
		ref(100, 37, 77, kA),
		ref(100, 38, 77, kU),
		sample(200, 77, 0x400050), // B: frames inline
		ref(200, 32, 77, 0x400050, 0x77000020),
		sample(300, 55, 0x400060),      // C: no walk
		keyDef(400, 34, kC, kern+0x30), // D: a key created before its use
		sample(500, 77, kern+0x30),
		ref(500, 37, 77, kC),
		keyDef(550, 35, kX, kern), // the definition of a key no walk used
		keyDef(600, 35, kA, kern+0x10, kern+0x20),
		keyDef(700, 36, kU, 0x77000010, 0x400010),
	}
	log, err := etltest.Log(tracetest.Bytes(t, "../testdata/traces/gcevents.etl.zip"), events...)
	if err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewReader(bytes.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	var s trace.Stacks
	var refs []trace.StackRef
	walks := 0
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if s.Add(e) {
			walks++
		} else if e.Name() == "PerfInfo/Sample" {
			refs = append(refs, e.StackRef())
		}
	}
	if walks != 8 || len(refs) != 4 || s.Len() != 3 {
		t.Fatalf("%d walk events, %d samples, %d events walked", walks, len(refs), s.Len())
	}
	type got struct {
		Frames []uint64
		PID    int64
		OK     bool
	}
	want := []got{
		{[]uint64{kern + 0x10, kern + 0x20, 0x77000010, 0x400010}, 10, true},
		{[]uint64{0x400050, 0x77000020}, 10, true},
		{nil, 20, false}, // thread 55 is in process 20
		{[]uint64{kern + 0x30}, 10, true},
	}
	for i, ref := range refs {
		f, pid, ok := s.Stack(ref, nil)
		if diff := cmp.Diff(want[i], got{f, pid, ok}); diff != "" {
			t.Errorf("sample %d (-want +got):\n%s", i, diff)
		}
	}
	if pid := s.ThreadProcess(55); pid != 20 {
		t.Errorf("thread 55 in process %d", pid)
	}
	if pid := s.ThreadProcess(9); pid != -1 {
		t.Errorf("thread 9 in process %d", pid)
	}
	if (trace.StackRef{}) != (&trace.Event{}).StackRef() {
		t.Error("an event of no trace has a StackRef")
	}
}
