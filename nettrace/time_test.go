package nettrace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// readTimes reads data in order o and returns its events' offsets and
// timestamps, and the final error.
func readTimes(t *testing.T, data []byte, o Order) (offs, times []int64, err error) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	r.SetOrder(o)
	for range 1 << 20 {
		e, err := r.Next()
		if err != nil {
			return offs, times, err
		}
		offs, times = append(offs, e.Offset), append(times, e.Timestamp)
	}
	t.Fatal("no end")
	return
}

// TestGarbledTimestampV2: the runtimes that wrote NetTrace V1–V3 wrote
// every event in time order. A .NET Core 2.0 trace's event whose timestamp
// was garbled (forward or back, by a year or by a second; the trace's first
// event, one in the middle, the one before its last) is left out on its own, one Damage
// of its record that lost one event; every other event is read as in the
// intact trace. Before the check the event was delivered with its time: a
// flipped bit gave a copy of this trace a span of 187 years.
func TestGarbledTimestampV2(t *testing.T) {
	data := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore2.0-linux-objver2.first1300.netperf.zip"))
	offs, times, err := readTimes(t, data, FileOrder)
	if err != io.EOF || len(offs) < 1000 {
		t.Fatalf("intact: %d events, %v", len(offs), err)
	}
	r, _ := NewReader(bytes.NewReader(data))
	f := r.Info().QPCFrequency
	// Not the last event: garbled forward, nothing after it shows it.
	for _, i := range []int{0, len(offs) / 2, len(offs) - 2} {
		for _, shift := range []int64{365 * 24 * 3600 * f, -365 * 24 * 3600 * f, f, -f} {
			bad := bytes.Clone(data)
			binary.LittleEndian.PutUint64(bad[offs[i]+12:], uint64(times[i]+shift))
			for _, o := range []Order{FileOrder, TimeOrder} {
				name := fmt.Sprintf("event %d of %d moved by %d ticks, %v", i, len(offs), shift, o)
				gotOffs, gotTimes, err := readTimes(t, bad, o)
				var de *DamageError
				if !errors.As(err, &de) || len(de.Damage) != 1 {
					t.Fatalf("%s: final error %v, want one damage record", name, err)
				}
				if d := de.Damage[0]; d.Offset != offs[i] || d.Events != 1 || d.Length <= 56 || !strings.Contains(d.Err.Error(), "timestamp") {
					t.Errorf("%s: damage %+v (%v), want the record at %d, one event", name, d, d.Err, offs[i])
				}
				wantOffs := slices.Delete(slices.Clone(offs), i, i+1)
				wantTimes := slices.Delete(slices.Clone(times), i, i+1)
				if !slices.Equal(gotOffs, wantOffs) || !slices.Equal(gotTimes, wantTimes) {
					t.Errorf("%s: %d events, want the %d others as they were", name, len(gotOffs), len(wantOffs))
				}
			}
		}
	}
}

// sessionV6 writes a V6 trace whose session starts at sync (QPC ticks, 10
// MHz) with three event blocks of three events, at sync plus 100 to 900
// ticks; the second block's header states the range at times (nil: its
// events'), and its first event is at first instead.
func sessionV6(sync int64, times *[2]int64, first int64) []byte {
	w := newV6Writer(8, 0)
	w.threads(wThread{index: 1, pid: 1, tid: 10})
	w.metadata(wMeta{id: 1, provider: "P", eventID: 1, name: "E"})
	seq := uint32(0)
	for b := range 3 {
		var evs []wEvent
		for i := range 3 {
			seq++
			ts := sync + int64(100*(3*b+i+1))
			if b == 1 && i == 0 {
				ts = first
			}
			evs = append(evs, wEvent{meta: 1, seq: seq, thread: 1, capThread: 1, ts: ts})
		}
		if b == 1 {
			w.times = times
		}
		w.events(true, evs...)
	}
	out := w.end()
	// The trace block's sync time: after the 20-byte stream header, the
	// block's 4-byte header and the 16-byte SYSTEMTIME.
	binary.LittleEndian.PutUint64(out[40:], uint64(sync))
	return out
}

// TestEventBeforeSessionStart: no event precedes the session's start that
// the trace header states. A block whose header states a garbled range (one
// wide enough for anything, or none) no longer lets through an event from
// before the start: the event and the rest of its block (whose times are
// deltas from it) are lost, as for an event outside a stated range, and
// the other blocks read as before. A start garbled forward, past every
// event, is never confirmed by a block's range and costs nothing.
func TestEventBeforeSessionStart(t *testing.T) {
	const sync = 5_000_000_000 // 500 s into the clock
	intact := sessionV6(sync, nil, sync+400)
	offs, times, err := readTimes(t, intact, FileOrder)
	if err != io.EOF || len(offs) != 9 {
		t.Fatalf("intact: %d events, %v", len(offs), err)
	}
	// The error says what the block's header states and, where the
	// reader began the range at the session's start instead, that bound
	// (it gave that bound as the range the header states).
	const floor = "4999990000, the trace's sync time less a millisecond, where the reader begins the block's range"
	for _, c := range []struct {
		name  string
		times *[2]int64
		first int64
		msg   string
	}{
		{"a garbled wide range", &[2]int64{1, 1 << 62}, 1000,
			"timestamp 1000 is before " + floor + " (its header states [1, 4611686018427387904])"},
		{"no range", &[2]int64{0, 0}, 1000,
			"timestamp 1000 is before " + floor + " (its header states none)"},
		{"a range before the start", &[2]int64{1000, 1000}, 1000,
			"timestamp 1000 is before " + floor + " (its header states [1000, 1000])"},
		{"a range that begins before the start", &[2]int64{sync - 100_000, sync + 600}, sync - 100_000,
			"timestamp 4999900000 is before " + floor + " (its header states [4999900000, 5000000600])"},
		{"above a range that begins before the start", &[2]int64{sync - 100_000, sync + 500}, sync + 550,
			"timestamp 5000000550 is outside the block's range [4999900000, 5000000500] that its header states"},
		{"below a range that begins after the start", &[2]int64{sync + 450, sync + 600}, sync + 400,
			"timestamp 5000000400 is outside the block's range [5000000450, 5000000600] that its header states"},
	} {
		for _, o := range []Order{FileOrder, TimeOrder} {
			name := fmt.Sprintf("%s, %v", c.name, o)
			gotOffs, gotTimes, err := readTimes(t, sessionV6(sync, c.times, c.first), o)
			var de *DamageError
			if !errors.As(err, &de) || len(de.Damage) != 1 || !strings.HasSuffix(de.Damage[0].Err.Error(), ": "+c.msg) {
				t.Errorf("%s: final error %v, want the block's damage at its first event: %s", name, err, c.msg)
			}
			want := slices.Concat(times[:3], times[6:])
			if !slices.Equal(gotTimes, want) || len(gotOffs) != 6 {
				t.Errorf("%s: times %v, want %v", name, gotTimes, want)
			}
		}
	}
	// The header's start garbled forward, past every event: nothing lost.
	late := sessionV6(sync, nil, sync+400)
	binary.LittleEndian.PutUint64(late[40:], uint64(sync*1000))
	if _, got, err := readTimes(t, late, FileOrder); err != io.EOF || !slices.Equal(got, times) {
		t.Errorf("start garbled forward: times %v, %v; want %v", got, err, times)
	}
}

// TestGarbledSyncTime: the trace header's SYSTEMTIME names its day of the
// week as well as its date, so a garbled date (a copy of the 2.0 trace had
// its month moved from September to January, and every wall-clock time
// with it) shows: it is recorded as a Damage of its 16 bytes that lost no
// event, and every event is still read (in strict mode, none: it is the
// first damage). A date whose fields agree, or one all zeros (stated by
// no one), records nothing.
func TestGarbledSyncTime(t *testing.T) {
	data := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore2.0-linux-objver2.first1300.netperf.zip"))
	// 2017-09-18 (a Monday), as SYSTEMTIME's first four fields.
	at := bytes.Index(data, []byte{0xe1, 0x07, 9, 0, 1, 0, 18, 0})
	if at < 0 {
		t.Fatal("the trace's sync time is not 2017-09-18")
	}
	offs, _, err := readTimes(t, data, FileOrder)
	if err != io.EOF {
		t.Fatalf("intact: %v", err)
	}
	for _, c := range []struct {
		name string
		at   int // byte within the SYSTEMTIME
		v    byte
	}{
		{"month", 2, 1}, {"day", 6, 20}, {"day of week", 4, 3}, {"day of week", 4, 6}, {"hour", 8, 24}, {"year", 1, 0},
	} {
		bad := bytes.Clone(data)
		bad[at+c.at] = c.v
		got, _, err := readTimes(t, bad, FileOrder)
		var de *DamageError
		if !errors.As(err, &de) || len(de.Damage) != 1 || de.Damage[0].Offset != int64(at) || de.Damage[0].Length != 16 ||
			de.Damage[0].Events != 0 || !strings.Contains(err.Error(), "wall-clock times may be off") {
			t.Errorf("%s garbled: final error %v, want the sync time's damage at %d", c.name, err, at)
		}
		if len(got) != len(offs) {
			t.Errorf("%s garbled: %d events, want %d", c.name, len(got), len(offs))
		}
		// In strict mode it is the first damage: Next stops there.
		r, err := NewReader(bytes.NewReader(bad))
		if err != nil {
			t.Fatal(err)
		}
		r.SetStrict(true)
		var ne *Error
		if _, err := r.Next(); !errors.As(err, &ne) || ne.Offset != int64(at) || errors.As(err, &de) {
			t.Errorf("%s garbled, strict: %v, want the sync time's error", c.name, err)
		}
	}
	// The day of the week counted from Monday = 0, as one-collect's
	// record-trace writes it: 0 for a Monday is a date.
	ok := bytes.Clone(data)
	ok[at+4] = 0
	if got, _, err := readTimes(t, ok, FileOrder); err != io.EOF || len(got) != len(offs) {
		t.Errorf("Monday as day 0: %d events, final error %v; want %d and io.EOF", len(got), err, len(offs))
	}
}

// TestGarbledRunV2: events in a row of a .NET Core 2.0 trace moved forward
// together. Two are both left out (the event after them shows it); a
// longer run is not told from the events around it, but costs no other
// event: the events after it agree with each other, and the trace goes on
// from them instead of losing them one by one as "earlier than the event
// before".
func TestGarbledRunV2(t *testing.T) {
	data := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore2.0-linux-objver2.first1300.netperf.zip"))
	offs, times, err := readTimes(t, data, FileOrder)
	if err != io.EOF {
		t.Fatal(err)
	}
	r, _ := NewReader(bytes.NewReader(data))
	f := r.Info().QPCFrequency
	for _, shift := range []int64{365 * 24 * 3600 * f, f} {
		for _, n := range []int{2, 3, 4} {
			first := len(offs) / 2
			bad := bytes.Clone(data)
			for i := first; i < first+n; i++ {
				binary.LittleEndian.PutUint64(bad[offs[i]+12:], uint64(times[i]+shift))
			}
			gotOffs, gotTimes, err := readTimes(t, bad, FileOrder)
			if err != io.EOF && !errors.Is(err, ErrDamaged) {
				t.Fatalf("%d moved by %d: %v", n, shift, err)
			}
			got := map[int64]int64{}
			for i, o := range gotOffs {
				got[o] = gotTimes[i]
			}
			lost := 0
			for i, o := range offs {
				ts, ok := got[o]
				inRun := i >= first && i < first+n
				switch {
				case !ok && inRun:
					lost++
				case !ok:
					t.Fatalf("%d moved by %d: event %d (outside the run) lost", n, shift, i)
				case !inRun && ts != times[i]:
					t.Fatalf("%d moved by %d: event %d at %d, want %d", n, shift, i, ts, times[i])
				}
			}
			if n == 2 && lost != 2 {
				t.Errorf("2 moved by %d: %d of them left out, want both", shift, lost)
			}
		}
	}
}
