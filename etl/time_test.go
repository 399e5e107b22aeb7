package etl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
)

// TestGarbledTimestamp: an event whose timestamp was garbled (forward or
// back, a buffer's first, middle or last event, by a year or by an hour) is
// left out and recorded as one Damage of its own bytes that lost one event;
// every other event is delivered as in the intact log, and TimeOrder stays
// in time order. Before the check, such an event was delivered with its
// time, which stretched the span of everything read (a GC report's time in
// the trace, a profile's duration) to decades, and in TimeOrder held the
// rest of its buffer back behind it.
func TestGarbledTimestamp(t *testing.T) {
	data := gcETL(t)
	intact := readAll(t, mustFileOrder(t, data))
	// The positions of the events in their buffers.
	first, last := map[int]int{}, map[int]int{}
	for i, e := range intact {
		if _, ok := first[e.Buffer]; !ok {
			first[e.Buffer] = i
		}
		last[e.Buffer] = i
	}
	var picks []int
	for b := range first {
		if b > 0 && last[b]-first[b] >= 2 { // a buffer with three events or more
			picks = append(picks, first[b], (first[b]+last[b])/2, last[b])
		}
	}
	slices.Sort(picks)
	if len(picks) < 6 {
		t.Fatalf("gcevents has %d events in buffers of three or more: too few to test", len(picks))
	}
	freq := int64(mustReader(t, data).Header().Frequency)
	year, hour := 365*24*3600*freq, 3600*freq
	for _, i := range picks {
		for _, shift := range []int64{year, -year, hour, -hour} {
			e := intact[i]
			end := int64(len(data)) // where the event's bytes end at most
			if i+1 < len(intact) && intact[i+1].Buffer == e.Buffer {
				end = intact[i+1].Offset
			}
			bad := bytes.Clone(data)
			at := e.Offset + 16
			if e.Kind == PerfInfoHeader {
				at = e.Offset + 8
			}
			le.PutUint64(bad[at:], uint64(e.TS+shift))
			for _, order := range []Order{FileOrder, TimeOrder} {
				name := fmt.Sprintf("event %d (buffer %d) moved by %d ticks, %v", i, e.Buffer, shift, order)
				r := mustFileOrder(t, bad)
				if order == TimeOrder {
					r = mustReader(t, bad)
				}
				got, err := readUntilErr(r, 10*len(intact))
				var de *DamageError
				if !errors.As(err, &de) || len(de.Damage) != 1 {
					t.Fatalf("%s: final error %v, want one damage record", name, err)
				}
				d := de.Damage[0]
				if d.Buffer != e.Buffer || d.Offset != e.Offset || d.Length < int64(e.DataLen) || d.Length > end-e.Offset || d.Events != 1 ||
					!strings.Contains(d.Err.Error(), "timestamp") {
					t.Errorf("%s: damage %+v (%v), want event %d's bytes, one event", name, d, d.Err, e.Offset)
				}
				want := slices.Delete(slices.Clone(intact), i, i+1)
				if order == TimeOrder {
					slices.SortStableFunc(want, func(a, b ev) int { return int(min(max(a.TS-b.TS, -1), 1)) })
					slices.SortStableFunc(got, func(a, b ev) int { return int(min(max(a.TS-b.TS, -1), 1)) })
					for j := 1; j < len(got); j++ {
						if got[j].TS < got[j-1].TS {
							t.Errorf("%s: event %d at %d after %d", name, j, got[j].TS, got[j-1].TS)
						}
					}
				}
				if len(got) != len(want) {
					t.Fatalf("%s: %d events, want %d", name, len(got), len(want))
				}
				for j := range want {
					if got[j].Offset != want[j].Offset || got[j].TS != want[j].TS || !bytes.Equal(got[j].Payload, want[j].Payload) {
						t.Fatalf("%s: event %d is %+v, want %+v", name, j, got[j], want[j])
					}
				}
			}
		}
	}
}

// TestGarbledHeaderTime: the log header's event is the clock's anchor,
// read as it is: its timestamp garbled, every other event is still read
// (the one after it in its buffer is not measured against it).
func TestGarbledHeaderTime(t *testing.T) {
	data := gcETL(t)
	intact := readAll(t, mustFileOrder(t, data))
	h := intact[0]
	if h.Kind != SystemHeader || h.HookID != 0 {
		t.Fatalf("first event %+v, want the log header", h)
	}
	for _, shift := range []int64{1, -1} {
		bad := bytes.Clone(data)
		le.PutUint64(bad[h.Offset+16:], uint64(h.TS+shift*365*24*3600*int64(mustReader(t, data).Header().Frequency)))
		got, err := readUntilErr(mustFileOrder(t, bad), 10*len(intact))
		if err != io.EOF || len(got) != len(intact) {
			t.Errorf("header's time garbled: %d of %d events, final error %v", len(got), len(intact), err)
		}
	}
}

// TestGarbledRun: events in a row moved forward together. Two are both
// left out (the event after them shows it); a longer run is not told from
// the events around it, but costs no other event: the events after it,
// earlier than the run, agree with each other, and the buffer goes on
// from them instead of losing them one by one as "earlier than the event
// before". (A garbled copy of an ETL log had a method load and the event
// after it moved 96 years together.)
func TestGarbledRun(t *testing.T) {
	data := gcETL(t)
	intact := readAll(t, mustFileOrder(t, data))
	// The longest buffer's events.
	byBuf := map[int][]int{}
	for i, e := range intact {
		byBuf[e.Buffer] = append(byBuf[e.Buffer], i)
	}
	var run []int
	for b, idx := range byBuf {
		if b > 0 && len(idx) > len(run) {
			run = idx
		}
	}
	if len(run) < 8 {
		t.Fatalf("the longest buffer holds %d events: too few to test", len(run))
	}
	// A year, and half a minute: less than the session lasted, so that
	// only the order of the events tells.
	freq := int64(mustReader(t, data).Header().Frequency)
	for _, c := range []struct{ n, shift int64 }{
		{2, 365 * 24 * 3600 * freq}, {3, 365 * 24 * 3600 * freq}, {4, 365 * 24 * 3600 * freq},
		{2, 30 * freq}, {3, 30 * freq}, {4, 30 * freq},
	} {
		n, shift := int(c.n), c.shift
		first := run[2]
		bad := bytes.Clone(data)
		for i := first; i < first+n; i++ {
			e := intact[i]
			at := e.Offset + 16
			if e.Kind == PerfInfoHeader {
				at = e.Offset + 8
			}
			le.PutUint64(bad[at:], uint64(e.TS+shift))
		}
		got, err := readUntilErr(mustFileOrder(t, bad), 10*len(intact))
		if err != io.EOF && !errors.Is(err, ErrDamaged) {
			t.Fatalf("%d moved by %d: %v", n, shift, err)
		}
		// Every event outside the run is read as it was; those of the run
		// are left out (two) or read with their times (more).
		seen := map[int64]ev{}
		for _, e := range got {
			seen[e.Offset] = e
		}
		lost := 0
		for i, e := range intact {
			g, ok := seen[e.Offset]
			inRun := i >= first && i < first+n
			switch {
			case !ok && inRun:
				lost++
			case !ok:
				t.Errorf("%d moved by %d: event %d (outside the run) lost", n, shift, i)
			case !inRun && g.TS != e.TS:
				t.Errorf("%d moved by %d: event %d at %d, want %d", n, shift, i, g.TS, e.TS)
			}
		}
		if n == 2 && lost != 2 {
			t.Errorf("2 moved by %d: %d of them left out, want both", shift, lost)
		}
	}
}
