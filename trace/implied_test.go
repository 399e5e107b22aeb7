package trace

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/clrevents"
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
