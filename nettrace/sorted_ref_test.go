package nettrace

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// refTimeOrder is the obvious time order that TimeOrder must match event
// for event and field for field: read in file order, copy every event of a
// stretch (up to the first event after a sequence point) and sort the
// copies stably by timestamp, IsSorted events first among equals (as
// TraceEvent hands an IsSorted event out at once, before those it holds). It returns the events and the error that
// ends the stream.
func refTimeOrder(data []byte, limit int) ([]Event, error) {
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	var out, stretch []Event
	flush := func() {
		slices.SortStableFunc(stretch, func(a, b Event) int {
			switch {
			case a.Timestamp < b.Timestamp:
				return -1
			case a.Timestamp > b.Timestamp:
				return 1
			case a.IsSorted != b.IsSorted && a.IsSorted:
				return -1
			case a.IsSorted != b.IsSorted:
				return 1
			}
			return 0
		})
		out = append(out, stretch...)
		stretch = stretch[:0]
	}
	for len(out)+len(stretch) < limit {
		r.spSeen = false
		ev, err := r.nextRaw()
		if err != nil {
			flush()
			return out, err
		}
		if r.spSeen && r.ver >= 4 {
			flush()
		}
		e := *ev
		e.Payload = bytes.Clone(ev.Payload)
		e.Stack = nil
		if len(ev.Stack) > 0 {
			e.Stack = slices.Clone(ev.Stack)
		}
		onlyHasKey(&e)
		stretch = append(stretch, e)
	}
	flush()
	return out, fmt.Errorf("more than %d events", limit)
}

// checkSameAsRef: TimeOrder gives refTimeOrder's events, every field equal,
// and the same end, releasing at sequence points and at IsSorted marks
// (SetLowLatency) alike.
func checkSameAsRef(t *testing.T, name string, data []byte, limit int) {
	t.Helper()
	want, wantErr := refTimeOrder(data, limit)
	checkSameAs(t, name, data, limit, want, wantErr, false)
	if keepsSortedPromise(data, limit) {
		checkSameAs(t, name+" (low latency)", data, limit, want, wantErr, true)
		return
	}
	// An input that breaks the IsSorted promise (an event earlier than
	// a flagged one before it) may come out in another order: events
	// already handed out cannot be taken back. It must still give the
	// same events and end the same way.
	byOffset := func(evs []Event) []Event {
		evs = slices.Clone(evs)
		slices.SortStableFunc(evs, func(a, b Event) int { return int(a.Offset - b.Offset) })
		return evs
	}
	var got []Event
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		return
	}
	r.SetOrder(TimeOrder)
	r.SetLowLatency(true)
	for len(got) < len(want) {
		ev, err := r.Next()
		if err != nil {
			if wantErr == nil || err.Error() != wantErr.Error() {
				t.Fatalf("%s (low latency, promise broken): ends with %v after %d events, reference with %v after %d", name, err, len(got), wantErr, len(want))
			}
			break
		}
		e := *ev
		e.Payload = bytes.Clone(ev.Payload)
		e.Stack = nil
		if len(ev.Stack) > 0 {
			e.Stack = slices.Clone(ev.Stack)
		}
		onlyHasKey(&e)
		got = append(got, e)
	}
	if !reflect.DeepEqual(byOffset(got), byOffset(want)) {
		t.Fatalf("%s (low latency, promise broken): not the reference's events", name)
	}
}

// keepsSortedPromise reports whether, in file order, no event is earlier
// than an event flagged IsSorted before it (NetTraceFormat.md's promise,
// which low-latency release relies on).
func keepsSortedPromise(data []byte, limit int) bool {
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		return true
	}
	marked, mark := false, int64(0)
	for range limit {
		ev, err := r.Next()
		if err != nil {
			return true
		}
		if r.ver < 4 {
			return true
		}
		if marked && ev.Timestamp < mark {
			return false
		}
		if ev.IsSorted && (!marked || ev.Timestamp > mark) {
			marked, mark = true, ev.Timestamp
		}
	}
	return true
}

func checkSameAs(t *testing.T, name string, data []byte, limit int, want []Event, wantErr error, low bool) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		if wantErr == nil || err.Error() != wantErr.Error() {
			t.Fatalf("%s: NewReader: %v, reference: %v", name, err, wantErr)
		}
		return
	}
	r.SetOrder(TimeOrder)
	r.SetLowLatency(low)
	for i := 0; ; i++ {
		ev, err := r.Next()
		if err != nil {
			if i != len(want) {
				t.Fatalf("%s: %d events, reference %d (ended by %v)", name, i, len(want), err)
			}
			if wantErr == nil || err.Error() != wantErr.Error() {
				t.Fatalf("%s: ends with %v, reference with %v", name, err, wantErr)
			}
			return
		}
		if i >= len(want) {
			if len(want) < limit {
				t.Fatalf("%s: more events than the reference's %d", name, len(want))
			}
			return
		}
		got := *ev
		if len(got.Stack) == 0 {
			got.Stack = nil
		}
		onlyHasKey(&got)
		if !reflect.DeepEqual(got, want[i]) {
			t.Fatalf("%s: event %d:\n got %+v\nwant %+v", name, i, got, want[i])
		}
	}
}

func TestTimeOrderMatchesSort(t *testing.T) {
	for _, name := range []string{"eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip", "eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip"} {
		data := loadTrace(t, filepath.Join(repoTraces, name))
		checkSameAsRef(t, name, data, 1<<30)
		for _, cut := range []int{len(data) / 3, len(data) / 2, len(data) - 10} {
			checkSameAsRef(t, fmt.Sprintf("%s cut at %d", name, cut), data[:cut:cut], 1<<30)
		}
	}
	for _, compress := range []bool{true, false} {
		checkSameAsRef(t, "V6", buildV6(compress), 1<<30)
	}
	if _, err := os.Stat(sharedTraces); err != nil {
		t.Skipf("shared fixtures not available (%v)", err)
	}
	for _, rel := range []string{
		"perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip",
		"perfview/only_managed_samples.nettrace.zip",
		"pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace",
	} {
		checkSameAsRef(t, rel, loadTrace(t, filepath.Join(sharedTraces, rel)), 1<<30)
	}
}

// FuzzTimeOrderMatchesSort: on any input, TimeOrder and the copy-and-sort
// reference give the same events, every field, and the same end.
func FuzzTimeOrderMatchesSort(f *testing.F) {
	arr := loadTrace(f, filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"))
	f.Add(arr[:30000])
	f.Add(buildV6(true))
	f.Add(buildV6(false))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSameAsRef(t, "input", data, 20000)
	})
}

// onlyHasKey keeps of e's StackKey only whether it has one: the keys
// differ from Reader to Reader (StackKey); TestStackKey checks them.
func onlyHasKey(e *Event) {
	e.stackKey = min(e.stackKey, 1)
}
