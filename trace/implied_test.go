package trace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/nettrace"
)

func TestImpliedOpcodeNames(t *testing.T) {
	for name, want := range map[string]uint8{
		"RequestStart": 1, "RequestStop": 2, "Start": 1, "Stop": 2,
		"requeststart": 1, "REQUESTSTOP": 2, "TaskSTaRt": 1,
		"StartRequest": 0, "Stopped": 0, "Starting": 0, "": 0, "tart": 0, "top": 0,
		"Request_Start": 1, "RequestStart2": 0,
		// Only ASCII letters fold: "ſ" (U+017F) folds to "s" in Unicode.
		"Requestſtart": 0,
		// Bytes that differ from a letter by the case bit alone.
		"Request\x13tart": 0, "Request\x13top": 0,
	} {
		if got := impliedOpcode(name); got != want {
			t.Errorf("impliedOpcode(%q) = %d, want %d", name, got, want)
		}
	}
}

// TestImpliedOpcodeRule checks which opcode wins: the trace's, given
// explicitly (even 0), then the generated type's, then the name's.
func TestImpliedOpcodeRule(t *testing.T) {
	ev := func(name string, op uint8, has bool) *Event {
		return &Event{nt: &nettrace.Event{Opcode: op, Metadata: &nettrace.Metadata{Name: name, Opcode: op, HasOpcode: has}}}
	}
	for _, c := range []struct {
		e    *Event
		want uint8
	}{
		{ev("RequestStart", 0, false), 1},
		{ev("RequestStop", 0, false), 2},
		{ev("RequestStart", 0, true), 0},   // the trace says 0
		{ev("RequestStart", 9, true), 9},   // the trace says 9
		{ev("RequestStop", 24, false), 24}, // a V6 label list's override
		{ev("Request", 0, false), 0},
		{&Event{nt: &nettrace.Event{}}, 0}, // no metadata
	} {
		m := c.e.nt.Metadata
		if got := c.e.Opcode(); got != c.want {
			t.Errorf("%+v: Opcode %d, want %d", m, got, c.want)
		}
	}
}

// TestImpliedOpcodeTrace reads the EventSource events of the .NET Core 2.0
// trace, whose metadata (NetTrace V3) records no opcode: the events named
// …Start and …Stop are Start and Stop events, as TraceEvent's baseline
// names them (TestEventSource/Request/Start, 28 of them), and no other
// event of a provider without generated types has an opcode. The runtime's
// events keep their generated types' opcodes.
func TestImpliedOpcodeTrace(t *testing.T) {
	name := filepath.Join(sharedDir, "eventpipe-dotnetcore2.0-linux-objver2.netperf.zip")
	baseline := filepath.Join(sharedDir, "eventpipe-dotnetcore2.0-linux-objver2.netperf.baseline.txt")
	if _, err := os.Stat(name); err != nil {
		t.Logf("%v: reading the first 1,300 events (testdata), without TraceEvent's counts", err)
		name, baseline = "../testdata/traces/eventpipe-dotnetcore2.0-linux-objver2.first1300.netperf.zip", ""
	}
	r, err := Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	type key struct {
		prov, name string
		op         uint8
	}
	counts := map[key]int{}
	runtimeOps := map[uint8]int{}
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := clrevents.ProviderByName(e.Provider()); ok {
			if e.Descriptor() != nil {
				runtimeOps[e.Opcode()]++
			}
			continue
		}
		counts[key{e.Provider(), e.Name(), e.Opcode()}]++
	}
	implied := 0
	for k, n := range counts {
		if k.prov == tplProvider {
			continue // their declarations' opcodes (TestTplTrace)
		}
		want := impliedOpcode(k.name)
		if k.op != want {
			t.Errorf("%d events %s/%s have opcode %d, want %d", n, k.prov, k.name, k.op, want)
		}
		if want != 0 {
			implied += n
		}
	}
	if implied == 0 {
		t.Errorf("no event has an opcode its name implies: %v", counts)
	}
	if runtimeOps[0] == len(runtimeOps) {
		t.Errorf("the runtime's events have no opcodes but 0: %v", runtimeOps)
	}
	if baseline == "" {
		return
	}
	// TraceEvent's names: "Provider/Task/Start, count, …" for the events
	// whose name implied Start (the task is the name without it).
	f, err := os.Open(baseline)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	checked := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimPrefix(sc.Text(), "\ufeff")
		full, rest, ok := strings.Cut(line, ", ")
		if !ok {
			continue
		}
		cnt, _, _ := strings.Cut(rest, ", ")
		parts := strings.Split(full, "/")
		if len(parts) != 3 || parts[2] != "Start" && parts[2] != "Stop" {
			continue
		}
		if _, ok := clrevents.ProviderByName(parts[0]); ok {
			continue
		}
		op := uint8(opcodeStart)
		if parts[2] == "Stop" {
			op = opcodeStop
		}
		k := key{parts[0], parts[1] + parts[2], op}
		if _, ok := counts[k]; !ok {
			// TraceEvent knows this provider's events by a parser of its
			// own (TplEventSource: TaskExecute/Start is TaskStarted).
			continue
		}
		want, _ := strconv.Atoi(cnt)
		if counts[k] != want {
			t.Errorf("%s: %d events %s/%s with opcode %d, TraceEvent %d", full, counts[k], k.prov, k.name, k.op, want)
		}
		checked++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if checked != 2 {
		t.Errorf("%d of TraceEvent's Start/Stop names checked, want 2 (Request/Start and Request/Stop)", checked)
	}
}

func TestTplEvent(t *testing.T) {
	for id, want := range map[uint16]tplTaskOp{
		1: {1, 1}, 2: {1, 2}, 7: {6, 9}, 8: {3, 1}, 9: {3, 2}, 10: {4, 9}, 11: {4, 2}, 12: {7, 9},
		13: {65521, 0}, 16: {65518, 0}, 18: {9, 2}, 27: {65507, 0},
	} {
		if got, ok := tplEvent(id); !ok || got != want {
			t.Errorf("tplEvent(%d) = %v, %v; want %v", id, got, ok, want)
		}
	}
	for _, id := range []uint16{0, 19, 26, 28, 1000, 65535} {
		if got, ok := tplEvent(id); ok {
			t.Errorf("tplEvent(%d) = %v, true; want none", id, got)
		}
	}
	ev := func(provider string, id uint16, name string, op uint8, has bool) *Event {
		return &Event{nt: &nettrace.Event{Opcode: op, Metadata: &nettrace.Metadata{Provider: provider, EventID: id, Name: name, Opcode: op, HasOpcode: has}}}
	}
	for _, c := range []struct {
		e        *Event
		task     uint16
		opcode   uint8
		whatCase string
	}{
		{ev(tplProvider, 8, "TaskStarted", 0, false), 3, 1, "TaskStarted, no opcode in the trace"},
		{ev(tplProvider, 10, "TaskWaitBegin", 0, false), 4, 9, "TaskWaitBegin"},
		{ev(tplProvider, 8, "TaskStarted", 1, true), 3, 1, "a V5 trace's opcode"},
		{ev(tplProvider, 8, "TaskStarted", 0, true), 3, 0, "the trace says 0"},
		{ev(tplProvider, 19, "TaskWaitContinuationStarted", 0, false), 0, 0, "an event the table lacks"},
		{ev(tplProvider, 40, "SomethingStart", 0, false), 0, 1, "an event the table lacks, named …Start"},
		{ev("MySource", 8, "TaskStarted", 0, false), 0, 0, "another provider's event 8"},
	} {
		if task, op := c.e.Task(), c.e.Opcode(); task != c.task || op != c.opcode {
			t.Errorf("%s: task %d, opcode %d; want %d, %d", c.whatCase, task, op, c.task, c.opcode)
		}
	}
}

// TestTplTrace: the .NET Core 2.0 trace's TplEventSource events (NetTrace
// V3: no task or opcode in the metadata) have the tasks and opcodes
// TraceEvent gives them: its baseline names them Task/Opcode
// ("TaskExecute/Start", 82 events), and each name's events are as many as
// TraceEvent counted, the first at its time on its thread.
func TestTplTrace(t *testing.T) {
	name := filepath.Join(sharedDir, "eventpipe-dotnetcore2.0-linux-objver2.netperf.zip")
	baseline := filepath.Join(sharedDir, "eventpipe-dotnetcore2.0-linux-objver2.netperf.baseline.txt")
	if _, err := os.Stat(name); err != nil {
		t.Skipf("%v: the only trace with TplEventSource events and TraceEvent's baseline of them is in ../shared", err)
	}
	// TplEventSource's task names (TraceEvent's), and the opcodes'.
	taskNames := map[uint16]string{1: "Loop", 2: "Invoke", 3: "TaskExecute", 4: "TaskWait", 5: "ForkJoin",
		6: "TaskScheduled", 7: "AwaitTaskContinuationScheduled", 8: "TraceOperation", 9: "TraceSynchronousWork"}
	opNames := map[uint8]string{1: "Start", 2: "Stop", 9: "Send"}
	r, err := Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	type first struct {
		n    int
		msec string
		tid  int64
	}
	ours := map[string]*first{}
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.Provider() != tplProvider {
			continue
		}
		te := e.Name() // TraceEvent names an event of a task EventSource gave it after the event
		if task, ok := taskNames[e.Task()]; ok {
			te = task
			if op := opNames[e.Opcode()]; op != "" {
				te += "/" + op
			}
		}
		f := ours[te]
		if f == nil {
			info := r.Info()
			ms := float64(e.Timestamp()-info.SyncTimestamp) * 1000 / float64(info.ClockFrequency)
			f = &first{msec: fmt.Sprintf("%.4f", ms), tid: e.ThreadID()}
			ours[te] = f
		}
		f.n++
	}
	b, err := os.ReadFile(baseline)
	if err != nil {
		t.Fatal(err)
	}
	attr := regexp.MustCompile(`MSec= *"([^"]*)".*? TID="([^"]*)"`)
	checked := 0
	for _, line := range strings.Split(strings.TrimPrefix(string(b), "\ufeff"), "\n") {
		full, rest, ok := strings.Cut(strings.TrimRight(line, "\r"), ", ")
		te, found := strings.CutPrefix(full, tplProvider+"/")
		if !ok || !found {
			continue
		}
		cnt, xml, _ := strings.Cut(rest, ", ")
		want, _ := strconv.Atoi(cnt)
		f := ours[te]
		if f == nil {
			t.Errorf("%s: TraceEvent has %d events, we name none so (ours: %v)", full, want, ours)
			continue
		}
		checked++
		if f.n != want {
			t.Errorf("%s: %d events, TraceEvent %d", full, f.n, want)
		}
		if m := attr.FindStringSubmatch(xml); m == nil || m[1] != f.msec || m[2] != strconv.FormatInt(f.tid, 10) {
			t.Errorf("%s: the first at %s ms on thread %d; TraceEvent's %v", full, f.msec, f.tid, m)
		}
	}
	if checked != 7 {
		t.Errorf("%d of TraceEvent's TplEventSource names checked, want 7", checked)
	}
}

// TestDisplayNameRule checks the names TraceEvent makes for EventPipe
// events of no generated type: the opcode's name after the name, less the
// Start or Stop the metadata's opcode (or the name) repeats.
func TestDisplayNameRule(t *testing.T) {
	ev := func(provider, name string, id uint16, mop, op uint8, has bool) *Event {
		m := &nettrace.Metadata{Provider: provider, Name: name, EventID: id, Opcode: mop, HasOpcode: has}
		return &Event{nt: &nettrace.Event{Provider: provider, Name: name, ID: id, Opcode: op, Metadata: m}}
	}
	const tpl = "System.Threading.Tasks.TplEventSource"
	for _, c := range []struct {
		e    *Event
		want string
	}{
		{ev("P", "RequestStart", 1, 0, 0, false), "Request/Start"},
		{ev("P", "RequestStop", 2, 0, 0, false), "Request/Stop"},
		{ev("P", "requestSTOP", 2, 0, 0, false), "request/Stop"},
		{ev("P", "Start", 3, 0, 0, false), "/Start"}, // as TraceEvent trims it
		{ev("P", "Request", 4, 0, 0, false), "Request"},
		{ev("P", "RequestStart", 5, 0, 0, true), "RequestStart"},  // the trace says 0
		{ev("P", "RequestStart", 6, 1, 1, true), "Request/Start"}, // and says Start
		{ev("P", "RequestStart", 6, 2, 2, true), "RequestStart/Stop"},
		{ev("P", "TestEvent3", 7, 24, 24, true), "TestEvent3/24"},
		{ev("P", "Moved", 8, 9, 9, true), "Moved/Transfer"},
		{ev("P", "Resumed", 8, 7, 7, true), "Resumed/Resume"},
		{ev("P", "Sent", 8, 240, 240, true), "Sent/240"},
		// A V6 label's opcode names the suffix; the metadata's trims.
		{ev("P", "WorkStart", 9, 0, 2, true), "WorkStart/Stop"},
		{ev("P", "WorkStart", 9, 1, 0, true), "Work"},
		{ev("P", "", 10, 0, 0, false), "EventID(10)"},
		// TplEventSource: the names of TraceEvent's parser for it.
		{ev(tpl, "TaskStarted", 8, 0, 0, false), "TaskExecute/Start"},
		{ev(tpl, "TaskCompleted", 9, 0, 0, false), "TaskExecute/Stop"},
		{ev(tpl, "TaskWaitBegin", 10, 0, 0, false), "TaskWait/Send"},
		{ev(tpl, "TaskScheduled", 7, 0, 0, false), "TaskScheduled/Send"},
		{ev(tpl, "TaskWaitContinuationComplete", 13, 0, 0, false), "TaskWaitContinuationComplete"},
		{ev(tpl, "ParallelLoopBegin", 1, 0, 0, false), "Loop/Start"},
		{ev(tpl, "TraceOperationEnd", 15, 0, 0, false), "TraceOperation/Stop"},
		{ev(tpl, "SetActivityId", 25, 0, 0, false), "SetActivityId"},
	} {
		if got := c.e.DisplayName(); got != c.want {
			t.Errorf("%s %q (ID %d, metadata opcode %d, opcode %d): DisplayName %q, want %q",
				c.e.nt.Provider, c.e.nt.Name, c.e.nt.ID, c.e.nt.Metadata.Opcode, c.e.nt.Opcode, got, c.want)
		}
	}
}

// TestDescribedEmpty: an EventSource event declared without arguments
// (metadata with no fields) and with no payload has no fields, {} in JSON;
// bytes its metadata does not describe stay undescribed.
func TestDescribedEmpty(t *testing.T) {
	m := &nettrace.Metadata{Provider: "MySource", Name: "TestEmptyEvent", EventID: 5}
	e := &Event{nt: &nettrace.Event{Provider: m.Provider, Name: m.Name, ID: 5, Metadata: m}}
	if got, err := e.AppendJSON(nil); err != nil || string(got) != "{}" {
		t.Errorf("AppendJSON: %q, %v", got, err)
	}
	if got, err := e.AppendText([]byte("x")); err != nil || string(got) != "x" {
		t.Errorf("AppendText: %q, %v", got, err)
	}
	e.nt.Payload = []byte{1}
	if _, err := e.AppendJSON(nil); !errors.Is(err, clrimpl.ErrUnknownEvent) {
		t.Errorf("a payload its metadata does not describe: %v", err)
	}
	e.nt.Payload, m.FieldsErr = nil, errors.New("bad field list")
	if _, err := e.AppendJSON(nil); !errors.Is(err, clrimpl.ErrUnknownEvent) {
		t.Errorf("a field list that did not parse: %v", err)
	}
}

// TestUnrecordedProcess: a .NET Core 2.0 trace records no process ID: its
// events' process is -1, as for any trace that does not say, not 0 (an
// ETW trace's idle process).
func TestUnrecordedProcess(t *testing.T) {
	r, err := Open("../testdata/traces/eventpipe-dotnetcore2.0-linux-objver2.first1300.netperf.zip")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if pid := r.Info().ProcessID; pid != -1 {
		t.Errorf("Info().ProcessID = %d", pid)
	}
	n := 0
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if pid := e.ProcessID(); pid != -1 {
			t.Fatalf("%s/%s: process %d", e.Provider(), e.Name(), pid)
		}
		n++
	}
	if n < 1000 {
		t.Errorf("%d events", n)
	}
}
