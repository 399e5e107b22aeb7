package feed

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/internal/etltest"
	"github.com/clrgo/clrevents/internal/tracetest"
	"github.com/clrgo/clrevents/kernelevents"
	"github.com/clrgo/clrevents/profile"
	"github.com/clrgo/clrevents/trace"
)

func TestByDisplayName(t *testing.T) {
	rt := []string{"Microsoft-Windows-DotNETRuntime"}
	k := ByDisplayName(rt, map[string]int{"GC/Start": 1, "GC/BulkNode": 2})
	versions := 0
	for typ, v := range k {
		info := typ.(*clrevents.EventInfo)
		switch {
		case v == 1 && strings.HasPrefix(info.Name, "GCStart"):
			versions++
		case v == 2 && info.Name == "GCBulkNode":
		default:
			t.Errorf("%s (%s) is kind %d", info.Name, info.DisplayName, v)
		}
	}
	if versions < 3 || len(k) != versions+1 {
		t.Errorf("%d types, %d of them GCStart's versions", len(k), versions)
	}
	// A name no event of the providers has is a mistake in the table.
	for _, name := range []string{"GC/NoSuchEvent", "Method/ILToNativeMapDCStart"} { // the second is the rundown provider's
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), name) {
					t.Errorf("%s: recovered %v", name, r)
				}
			}()
			ByDisplayName(rt, map[string]int{name: 1})
		}()
	}
}

func TestProcessTitle(t *testing.T) {
	for _, c := range []struct {
		pid  int64
		name string
		want string
	}{
		{1234, "", "Process 1234"},
		{1234, "app.exe", "Process 1234 (app.exe)"},
		{0, "Idle", "Process 0 (Idle)"},
		{-1, "", "Process (not recorded)"},
	} {
		if got := ProcessTitle(c.pid, c.name); got != c.want {
			t.Errorf("ProcessTitle(%d, %q) = %q, want %q", c.pid, c.name, got, c.want)
		}
	}
}

// TestUsable: a Reader whose events a model cannot use is refused with an
// error naming the trace and the reason, before anything is read.
func TestUsable(t *testing.T) {
	const path = "../../testdata/traces/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"
	for _, c := range []struct {
		opts []trace.Option
		want string // "" for usable
	}{
		{nil, ""},
		{[]trace.Option{trace.WithOrder(trace.FileOrder)}, "the events come in file order; the model needs them in time order"},
		{[]trace.Option{trace.WithOrder(trace.ThreadOrder)}, "the events come in thread order"},
		{[]trace.Option{trace.WithEvents(kernelevents.Table())}, "do not include clrevents'"},
		{[]trace.Option{trace.WithEvents(kernelevents.Table(), clrevents.Table())}, ""},
	} {
		r, err := trace.Open(path, c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		err = Usable(r)
		r.Close()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%d options: %v", len(c.opts), err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), path+": ")):
			t.Errorf("%d options: %v, want an error naming the trace that says %q", len(c.opts), err, c.want)
		}
	}
}

// TestUsableStarted: a Reader read from already (here to its end) is
// refused by the models and by the profile build, naming the trace and
// why, instead of their saying that the trace lacks the events
// ("no GC events: record the runtime provider with the GC keyword"); a
// fresh one of the same trace, ETW log or EventPipe, is usable.
func TestUsableStarted(t *testing.T) {
	for _, path := range []string{
		"../../testdata/traces/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip",
		"../../testdata/traces/gcevents.etl.zip",
	} {
		r, err := trace.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if r.Started() || Usable(r) != nil {
			t.Fatalf("%s: a fresh Reader: started %v, %v", path, r.Started(), Usable(r))
		}
		if err := ReadAll(r, func(*trace.Event) {}); err != nil {
			t.Fatal(err)
		}
		err = Usable(r)
		if !r.Started() || err == nil || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), "handed out events already") {
			t.Errorf("%s: a Reader read to its end: started %v, %v", path, r.Started(), err)
		}
		if _, err := profile.Build(r, profile.Options{Kind: profile.CPU}); err == nil || !strings.Contains(err.Error(), "handed out events already") {
			t.Errorf("%s: profile.Build of a Reader read to its end: %v", path, err)
		}
		r.Close()
	}
}

// TestProcesses: a kernel Process/Start for a process ID that has a
// process in the analysis begins a new one, with its own start and exit;
// for an ID whose process the analysis took no event of, it is that
// process's start. All gives them by ID, then in the order they began.
func TestProcesses(t *testing.T) {
	real := tracetest.Bytes(t, "../../testdata/traces/gcevents.etl.zip")
	log, err := etltest.Log(real,
		etltest.Process(2, 20, 1000, "old.exe"), // running when the trace began, no event taken
		etltest.Process(1, 20, 2000, "new.exe"),
		etltest.Process(2, 10, 3000, "first.exe"), // its events were taken (below)
		etltest.Process(1, 10, 4000, "second.exe"),
		etltest.Process(2, 10, 5000, "second.exe"),
		etltest.Process(3, 30, 6000, "running.exe"), // a rundown's DCStart: not a start
	)
	if err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewReader(bytes.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	type proc struct {
		pid  int64
		life *Life
	}
	tab := NewProcesses(func(pid int64, life *Life) *proc { return &proc{pid, life} })
	first := tab.Get(10)
	at := map[int64]time.Time{}
	err = ReadAll(r, func(e *trace.Event) {
		at[e.Timestamp()] = e.Time()
		tab.Note(e)
	})
	if err != nil {
		t.Fatal(err)
	}
	if p := tab.Lookup(10); p != nil {
		t.Fatalf("the latest process of 10 is %v, want one without events", p)
	}
	second := tab.Get(10)
	if tab.Lookup(20) != nil || tab.Lookup(30) != nil {
		t.Errorf("processes made without their events")
	}
	tab.Get(30)
	tab.Get(20)
	tab.Get(5)
	var got []string
	for _, p := range tab.All() {
		got = append(got, fmt.Sprintf("%d %v %v", p.pid, p.life.Start, p.life.Exit))
	}
	var zero time.Time
	want := []string{
		fmt.Sprintf("5 %v %v", zero, zero),
		fmt.Sprintf("10 %v %v", zero, at[3000]),
		fmt.Sprintf("10 %v %v", at[4000], at[5000]),
		fmt.Sprintf("20 %v %v", at[2000], zero),
		fmt.Sprintf("30 %v %v", zero, zero),
	}
	if !slices.Equal(got, want) || tab.All()[1] != first || tab.All()[2] != second {
		t.Errorf("processes\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestTitles: processes of one ID are told apart by their starts.
func TestTitles(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	got := Titles(t0, []Titled{
		{PID: 10, Name: "a.exe"},
		{PID: 10, Name: "a.exe", Start: t0.Add(1500 * time.Microsecond)},
		{PID: 10, Start: t0.Add(2 * time.Second)},
		{PID: 11, Name: "b.exe", Start: t0.Add(time.Second)},
		{PID: -1},
	})
	want := []string{
		"Process 10 (a.exe, start not in the trace)",
		"Process 10 (a.exe, started at 1.500 ms)",
		"Process 10 (started at 2000.000 ms)",
		"Process 11 (b.exe)",
		"Process (not recorded)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("titles\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
