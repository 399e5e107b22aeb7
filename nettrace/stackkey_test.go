package nettrace

import (
	"bytes"
	"io"
	"path/filepath"
	"slices"
	"testing"
)

// TestStackKey checks StackKey's promise on a trace with a stack on most
// events and a sequence point every few hundred KB (the 3.0 trace): in
// both orders, events with one nonzero key have one stack, an event has a
// key exactly when it has a stack, keys are shared (a trace's samples
// repeat their stacks within a stretch), and two Readers, one after the
// other or at once, never give one key to different stacks.
func TestStackKey(t *testing.T) {
	data := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"))
	type seen struct {
		stacks map[uint64][]uint64
		events int // with a stack
	}
	// note checks ev's key against the stacks seen under it so far.
	note := func(t *testing.T, ev *Event, into *seen) {
		t.Helper()
		k := ev.StackKey()
		if (k != 0) != (len(ev.Stack) > 0) {
			t.Fatalf("event at %d: StackKey %#x with %d IPs", ev.Offset, k, len(ev.Stack))
		}
		if k == 0 {
			return
		}
		into.events++
		if have, ok := into.stacks[k]; !ok {
			into.stacks[k] = slices.Clone(ev.Stack)
		} else if !slices.Equal(have, ev.Stack) {
			t.Fatalf("event at %d (stack ID %d): StackKey %#x was given to stack %x, now to %x", ev.Offset, ev.StackID, k, have, ev.Stack)
		}
	}
	read := func(t *testing.T, r *Reader, into *seen) {
		t.Helper()
		for {
			ev, err := r.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			note(t, ev, into)
		}
	}
	for _, o := range []Order{FileOrder, TimeOrder} {
		t.Run(o.String(), func(t *testing.T) {
			all := seen{stacks: map[uint64][]uint64{}}
			// Two Readers in turn (the second reuses the first's
			// buffers), then two at once: every key is checked against
			// every stack any of them gave it.
			for range 2 {
				r, err := NewReader(bytes.NewReader(data))
				if err != nil {
					t.Fatal(err)
				}
				r.SetOrder(o)
				read(t, r, &all)
			}
			a, err := NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			b, err := NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			a.SetOrder(o)
			b.SetOrder(o)
			for {
				ea, errA := a.Next()
				eb, errB := b.Next()
				if errA != nil || errB != nil {
					if errA != io.EOF || errB != io.EOF {
						t.Fatalf("the two Readers ended with %v and %v", errA, errB)
					}
					break
				}
				note(t, ea, &all)
				note(t, eb, &all)
				if ea.StackKey() != 0 && ea.StackKey() == eb.StackKey() {
					t.Fatalf("two Readers gave the event at %d the same StackKey %#x", ea.Offset, ea.StackKey())
				}
			}
			if all.events < 4*10000 {
				t.Fatalf("%d events with a stack in four reads; the trace has more", all.events)
			}
			// Keys are worth keeping things by: far fewer than events.
			if len(all.stacks)*4 > all.events {
				t.Errorf("%d keys for %d events with a stack: keys are not shared", len(all.stacks), all.events)
			}
			t.Logf("%d keys for %d events with a stack", len(all.stacks), all.events)
		})
	}
}

// TestStackKeyV6: in a V6 trace whose stack IDs are defined again after a
// sequence point with other addresses, each event's key goes with its own
// stack, in both orders: one key for the events of a stack ID before the
// sequence point, another after it.
func TestStackKeyV6(t *testing.T) {
	w := newV6Writer(8, 0, kv{"ProcessId", "1234"})
	w.threads(wThread{index: 1, pid: 1234, tid: 10})
	w.metadata(wMeta{id: 1, provider: rt, eventID: 85, opt: optVersion(0)})
	w.stacks(1, []uint64{0xA1, 0xA2}, []uint64{0xB1})
	w.events(true,
		wEvent{meta: 1, seq: 1, thread: 1, capThread: 1, stack: 1, ts: 10},
		wEvent{meta: 1, seq: 2, thread: 1, capThread: 1, stack: 2, ts: 20},
		wEvent{meta: 1, seq: 3, thread: 1, capThread: 1, stack: 1, ts: 30},
	)
	w.sequencePoint(40, 0, 1, 3)
	w.stacks(1, []uint64{0xC1}, []uint64{0xD1, 0xD2, 0xD3})
	w.events(true,
		wEvent{meta: 1, seq: 4, thread: 1, capThread: 1, stack: 1, ts: 50},
		wEvent{meta: 1, seq: 5, thread: 1, capThread: 1, stack: 2, ts: 60},
		wEvent{meta: 1, seq: 6, thread: 1, capThread: 1, stack: 1, ts: 70},
		wEvent{meta: 1, seq: 7, thread: 1, capThread: 1, ts: 80},
	)
	data := w.end()
	for _, o := range []Order{FileOrder, TimeOrder} {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		r.SetOrder(o)
		var keys []uint64
		stacks := map[uint64][]uint64{}
		for {
			ev, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			k := ev.StackKey()
			keys = append(keys, k)
			if have, ok := stacks[k]; ok && !slices.Equal(have, ev.Stack) {
				t.Fatalf("%v: StackKey %#x for %x and %x", o, k, have, ev.Stack)
			}
			stacks[k] = slices.Clone(ev.Stack)
		}
		if len(keys) != 7 || keys[0] != keys[2] || keys[3] != keys[5] || keys[0] == keys[3] || keys[1] == keys[4] || keys[0] == keys[1] || keys[6] != 0 {
			t.Errorf("%v: keys %#x; want events 1 and 3 to share one, 4 and 6 another, every other apart, none for the last", o, keys)
		}
		if !slices.Equal(stacks[keys[3]], []uint64{0xC1}) || !slices.Equal(stacks[keys[0]], []uint64{0xA1, 0xA2}) {
			t.Errorf("%v: stacks by key %x", o, stacks)
		}
	}
}
