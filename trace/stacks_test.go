package trace_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/clrgo/clrevents/clrimpl"

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
	var refs []trace.StackRef
	walks := 0
	s := feedStacks(t, events, func(e *trace.Event, walk bool) {
		if walk {
			walks++
		} else if e.Name() == "PerfInfo/Sample" {
			refs = append(refs, e.StackRef())
		}
	})
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

// TestCreatorStacks: a kernel Thread/Start or Process/Start is logged by
// the thread that creates the thread or process, and its stack walk
// names that thread, as TraceEvent attaches it (ThreadIDforStacks); the
// event's ThreadID and ProcessID are the new thread's, Creator the
// creating one's.
func TestCreatorStacks(t *testing.T) {
	le := binary.LittleEndian
	const thread, process, stackWalk = 0x05, 0x03, 0x18
	const creatorPID, creatorTID = 3988, 2784
	threadStart := func(ts int64, pid, tid uint32) []byte {
		p := le.AppendUint32(le.AppendUint32(nil, pid), tid)
		for range 7 {
			p = le.AppendUint64(p, 0)
		}
		return etltest.System(thread, 1, 2, creatorTID, creatorPID, ts, le.AppendUint32(p, 0))
	}
	processStart := func(ts int64, pid uint32) []byte {
		p := le.AppendUint64(nil, 0xfffffa8000005000)            // UniqueProcessKey
		p = le.AppendUint32(le.AppendUint32(p, pid), creatorPID) // ProcessId, ParentId
		p = le.AppendUint32(le.AppendUint32(p, 1), 0)            // SessionId, ExitStatus
		p = le.AppendUint64(p, 0)                                // DirectoryTableBase
		p = append(p, 0, 0, 0, 0)                                // UserSID: none
		p = append(p, "x.exe\x00"...)
		return etltest.System(process, 1, 3, creatorTID, creatorPID, ts, append(p, 0, 0))
	}
	walk := func(ts int64, frames ...uint64) []byte {
		p := le.AppendUint64(nil, uint64(ts))
		p = le.AppendUint32(le.AppendUint32(p, creatorPID), creatorTID)
		for _, f := range frames {
			p = le.AppendUint64(p, f)
		}
		return etltest.System(stackWalk, 32, 2, creatorTID, creatorPID, ts+1, p)
	}
	type start struct {
		name               string
		pid, tid, cpid, ct int64
		ok                 bool
		ref                trace.StackRef
	}
	var starts []start
	s := feedStacks(t, [][]byte{threadStart(100, 4, 184), walk(100, 0x401000, 0x402000), processStart(200, 1360), walk(200, 0x403000)},
		func(e *trace.Event, _ bool) {
			if n := e.Name(); n == "Thread/Start" || n == "Process/Start" {
				cpid, ctid, ok := e.Creator()
				starts = append(starts, start{n, e.ProcessID(), e.ThreadID(), cpid, ctid, ok, e.StackRef()})
			}
		})
	if len(starts) != 2 {
		t.Fatalf("%d starts: %+v", len(starts), starts)
	}
	want := []struct {
		pid, tid int64
		frames   []uint64
	}{{4, 184, []uint64{0x401000, 0x402000}}, {1360, -1, []uint64{0x403000}}}
	for i, st := range starts {
		if st.pid != want[i].pid || st.tid != want[i].tid || !st.ok || st.cpid != creatorPID || st.ct != creatorTID {
			t.Errorf("%s: process %d thread %d, creator %d/%d (%v); want %d/%d, creator %d/%d",
				st.name, st.pid, st.tid, st.cpid, st.ct, st.ok, want[i].pid, want[i].tid, creatorPID, creatorTID)
		}
		if f, _, ok := s.Stack(st.ref, nil); !ok || !slices.Equal(f, want[i].frames) {
			t.Errorf("%s: stack %#x (%v), want the creator's walk %#x", st.name, f, ok, want[i].frames)
		}
	}
}

// TestDeferredUserStacks: the user-mode part the kernel logs once, for
// the last event of a thread's stay in the kernel, completes the walks
// of the events before it that had kernel-mode frames alone, inline or
// by key, as TraceEvent's TraceLog completes them.
func TestDeferredUserStacks(t *testing.T) {
	le := binary.LittleEndian
	const perfInfo, stackWalk = 0x0F, 0x18
	const kern = 0xfffff80000000000
	const kK, kU = 0xfffffa8000001000, 0xfffffa8000002000
	sample := func(ts int64, tid uint32) []byte {
		p := le.AppendUint64(nil, kern)
		p = le.AppendUint32(p, tid)
		return etltest.System(perfInfo, 46, 2, 0, 0, ts, le.AppendUint32(p, 1))
	}
	inline := func(ts int64, tid uint32, frames ...uint64) []byte {
		p := le.AppendUint64(nil, uint64(ts))
		p = le.AppendUint32(le.AppendUint32(p, 10), tid)
		for _, f := range frames {
			p = le.AppendUint64(p, f)
		}
		return etltest.System(stackWalk, 32, 2, 0, 0, ts+1, p)
	}
	keyRef := func(ts int64, op uint8, tid uint32, key uint64) []byte {
		p := le.AppendUint64(nil, uint64(ts))
		p = le.AppendUint32(le.AppendUint32(p, 10), tid)
		return etltest.System(stackWalk, op, 2, 0, 0, ts+1, le.AppendUint64(p, key))
	}
	keyDef := func(ts int64, key uint64, frames ...uint64) []byte {
		p := le.AppendUint64(nil, key)
		for _, f := range frames {
			p = le.AppendUint64(p, f)
		}
		return etltest.System(stackWalk, 34, 2, 0, 0, ts, p) // KeyCreate
	}
	var refs []trace.StackRef
	s := feedStacks(t, [][]byte{
		sample(100, 77), inline(100, 77, kern+0x10), // kernel frames alone
		sample(200, 77), inline(200, 77, kern+0x20),
		inline(200, 77, 0x400020, 0x77000020),                 // the user part, logged once
		sample(300, 78), inline(300, 78, kern+0x30, 0x400030), // whole: nothing deferred
		sample(310, 80), inline(310, 80, kern+0x50), // kernel frames alone, then
		sample(320, 80), inline(320, 80, 0x400050), // a sample of user code: its own
		keyDef(350, kK, kern+0x40), keyDef(360, kU, 0x400040),
		sample(400, 79), keyRef(400, 37, 79, kK),
		sample(500, 79), keyRef(500, 37, 79, kK), keyRef(500, 38, 79, kU),
	}, func(e *trace.Event, walk bool) {
		if !walk && e.Name() == "PerfInfo/Sample" {
			refs = append(refs, e.StackRef())
		}
	})
	want := [][]uint64{
		{kern + 0x10, 0x400020, 0x77000020},
		{kern + 0x20, 0x400020, 0x77000020},
		{kern + 0x30, 0x400030},
		{kern + 0x50},
		{0x400050},
		{kern + 0x40, 0x400040},
		{kern + 0x40, 0x400040},
	}
	if len(refs) != len(want) {
		t.Fatalf("%d samples", len(refs))
	}
	for i, ref := range refs {
		if f, _, ok := s.Stack(ref, nil); !ok || !slices.Equal(f, want[i]) {
			t.Errorf("sample %d: %#x (%v), want %#x", i, f, ok, want[i])
		}
	}
}

// feedStacks reads a log of events (in testdata's gcevents log's frame),
// giving each to a Stacks and then to fn, with whether it was a walk.
func feedStacks(t *testing.T, events [][]byte, fn func(e *trace.Event, walk bool)) *trace.Stacks {
	t.Helper()
	log, err := etltest.Log(tracetest.Bytes(t, "../testdata/traces/gcevents.etl.zip"), events...)
	if err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewReader(bytes.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	var s trace.Stacks
	for {
		e, err := r.Next()
		if err == io.EOF {
			return &s
		}
		if err != nil {
			t.Fatal(err)
		}
		fn(e, s.Add(e))
	}
}

// TestKernelProviderStacks: a kernel-mode provider's events whose stacks
// (extended data) end in the kernel get the user-mode part Windows logs
// when the thread goes back to user mode (Kernel-EventTracing's event
// 18, opcode 24), each of the thread's stay, as TraceEvent's TraceLog
// joins them; Add reports that event as a stack's. A stack that reaches
// user mode (a user-mode provider's, whose stack begins with the kernel's
// logging frames) is whole, and an event of another thread, or of a
// later stay, gets nothing more.
func TestKernelProviderStacks(t *testing.T) {
	const k1, k2, u1, u2 = 0xfffff80000001000, 0xfffff80000002000, 0x7ff000001000, 0x7ff000002000
	provider := clrimpl.MustParseGUID("11111111-2222-3333-4444-555555555555")
	tracing := clrimpl.MustParseGUID("b675ec37-bdb6-4648-bc92-f3fdc74d3ca2")
	ev := func(id uint16, tid uint32, ts int64, frames ...uint64) []byte {
		return etltest.WithStack(etltest.Event(provider, id, 0, 0, 0, tid, 1234, ts, nil), frames...)
	}
	log, err := etltest.Log(tracetest.Bytes(t, "../testdata/traces/gcevents.etl.zip"),
		ev(1, 77, 100, k1, k2), // the kernel half: waits
		ev(2, 77, 101, k2),     // another of the same stay
		ev(3, 88, 102, k1),     // another thread's: gets nothing here
		etltest.WithStack(etltest.Event(tracing, 18, 0, 24, 0, 77, 1234, 103, nil), u1, u2),
		ev(4, 77, 104, k1, k2, u1), // a user-mode provider's: whole as it is
		ev(5, 77, 105, k1),         // a later stay: nothing comes
	)
	if err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewReader(bytes.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var s trace.Stacks
	refs := map[uint16]trace.StackRef{}
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
		}
		if e.ProviderGUID() == provider {
			refs[e.ID()] = e.StackRef()
		}
	}
	if walks != 1 {
		t.Errorf("Add reported %d stack events, want 1 (event 18)", walks)
	}
	for id, want := range map[uint16][]uint64{1: {k1, k2, u1, u2}, 2: {k2, u1, u2}, 3: {k1}, 5: {k1}} {
		got, _, ok := s.Stack(refs[id], nil)
		if !ok || !slices.Equal(got, want) {
			t.Errorf("event %d: stack %#x (%v), want %#x", id, got, ok, want)
		}
	}
	if _, _, ok := s.Stack(refs[4], nil); ok {
		t.Errorf("event 4, whose stack reached user mode, has a walk: Event.Stack is its whole")
	}
}
