package dataset

import (
	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/trace"
)

// An ETW log's stacks come after their events: the kernel walks an
// event's stack once it is logged and logs the walk as events of its own
// (StackWalk, naming the event by its time and thread, or keys of frames
// it logs as late as the log's end), and the runtime logs a CLRStackWalk
// after an event it walked. When an event's row is written its stack is
// not known, so its stack_id is NULL; the walks are matched to the events
// at the trace's end (trace.Stacks), and the event_stacks table gives
// each walked event's stack by its seq:
//
//	SELECT e.*, coalesce(e.stack_id, w.stack_id) AS stack
//	FROM read_parquet('DIR/events/*/event=GCAllocationTick*/*.parquet', union_by_name=true) e
//	LEFT JOIN read_parquet('DIR/event_stacks/*.parquet') w USING (trace, seq)
//
// Its stacks are rows of the stacks table like the others'.

// eventStacksColumns: one row per event of an ETW log whose stack a walk
// gave.
var eventStacksColumns = []column{
	{name: "trace", kind: clrimpl.ColumnString},
	{name: "seq", kind: clrimpl.ColumnInt64},
	{name: "stack_id", kind: clrimpl.ColumnInt64},
}

// walked is an event that may get a walked stack: its seq, its raw time
// and the reference walks name it by.
type walked struct {
	seq, ts int64
	ref     trace.StackRef
}

// walks keeps an ETW log's stack walks, and the events they may be for.
// A walk names its event within moments of it (the kernel logs it right
// after the event, the runtime right after its own): an event that no
// walk has named a second of trace time later never will be, and is let
// go, so what waits does not grow with the log (the frames of key walks
// may still come at the log's end; the walk names the event at once).
type walks struct {
	stacks  trace.Stacks
	pending []walked // events a walk may yet name, oldest first
	named   []walked // events a walk named
	frames  []uint64
	grace   int64 // a second, in the trace's ticks
	n       int
}

func newWalks(clock int64) *walks {
	if clock <= 0 {
		clock = 10_000_000 // FILETIME's 100 ns
	}
	return &walks{grace: clock}
}

// add feeds the walks an event, and keeps it, when it has no stack of
// its own, as one a walk may be for. A kernel walk names its event by
// its time and thread alone: events logged together (an image's load and
// the identity events KernelTraceControl adds to it) share them, and
// all get the walk's stack.
func (w *walks) add(e *trace.Event, seq int64) {
	if w.stacks.Add(e) || len(e.Stack()) > 0 {
		return
	}
	ref := e.StackRef()
	if ref == (trace.StackRef{}) {
		return
	}
	w.pending = append(w.pending, walked{seq, e.Timestamp(), ref})
	if w.n++; w.n%4096 == 0 {
		w.settle(e.Timestamp())
	}
}

// settle moves the events pending for more than grace at now to named,
// when a walk named them, or lets them go.
func (w *walks) settle(now int64) {
	i := 0
	for ; i < len(w.pending) && now-w.pending[i].ts > w.grace; i++ {
		if _, _, ok := w.stacks.Stack(w.pending[i].ref, w.frames[:0]); ok {
			w.named = append(w.named, w.pending[i])
		}
	}
	w.pending = append(w.pending[:0], w.pending[i:]...)
}

// writeWalked writes the event_stacks rows of the events walks gave a stack.
func (tw *traceWriter) writeWalked(st *Stats) error {
	w := tw.walks
	w.stacks.Close()
	var t *table
	for _, ev := range append(w.named, w.pending...) {
		frames, _, ok := w.stacks.Stack(ev.ref, w.frames[:0])
		w.frames = frames
		if !ok || len(frames) == 0 {
			continue
		}
		if t == nil {
			var err error
			if t, err = tw.newTable([]string{"event_stacks"}, "event_stacks", eventStacksColumns); err != nil {
				return err
			}
		}
		id, err := tw.stackID(frames, st)
		if err != nil {
			return err
		}
		t.begin()
		t.Bytes(tw.nameBytes())
		t.Int(ev.seq)
		t.Int(id)
		if err := t.end(); err != nil {
			return err
		}
		st.WalkedStacks++
	}
	return nil
}
