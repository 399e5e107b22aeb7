package jitstats_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/internal/etltest"
	"github.com/clrgo/clrevents/internal/tracetest"
	"github.com/clrgo/clrevents/jitstats"
	"github.com/clrgo/clrevents/trace"
)

// TestProcessIDReused: a process ID the system gave again, within one
// trace (an ETW log of kernel Process events and the runtime's), is two
// processes, each with its own methods and name. Kept as one, the second
// process's methods were the first's, under its name.
func TestProcessIDReused(t *testing.T) {
	real := tracetest.Bytes(t, "../testdata/traces/gcevents.etl.zip")
	base, err := etltest.Origin(real) // 100 ns units
	if err != nil {
		t.Fatal(err)
	}
	jit := func(ms float64, id uint64, name string) [][]byte {
		ts := base + int64(ms*1e4)
		ns, n, sig := clrevents.UTF16Of("App"), clrevents.UTF16Of(name), clrevents.UTF16Of("void  ()")
		return [][]byte{
			etltest.Runtime(&clrevents.MethodJittingStartedV1{MethodID: id, MethodILSize: 10, MethodNamespace: ns, MethodName: n, MethodSignature: sig}, 5, 10, ts),
			etltest.Runtime(&clrevents.MethodLoadVerboseV1{MethodID: id, MethodSize: 100, MethodFlags: clrevents.MethodFlagsJitted, MethodNamespace: ns, MethodName: n, MethodSignature: sig}, 5, 10, ts+10),
		}
	}
	var events [][]byte
	events = append(events, etltest.Process(1, 10, base+1000, "first.exe"))
	events = append(events, jit(0.2, 0x1000, "First")...)
	events = append(events, etltest.Process(2, 10, base+3000, "first.exe"))
	events = append(events, etltest.Process(1, 10, base+4000, "second.exe"))
	events = append(events, jit(0.5, 0x2000, "Second")...)
	events = append(events, jit(0.6, 0x1000, "Again")...) // the same method ID as the first process's
	log, err := etltest.Log(real, events...)
	if err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewReader(bytes.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	a, err := jitstats.Read(r)
	if err != nil {
		t.Fatal(err)
	}
	ps := a.Processes()
	if len(ps) != 2 {
		t.Errorf("%d processes, want 2", len(ps))
	}
	for i, c := range []struct {
		name    string
		methods []string
		startMS float64
	}{
		{"first.exe", []string{"App.First()"}, 0.1},
		{"second.exe", []string{"App.Second()", "App.Again()"}, 0.4},
	} {
		// The process that compiled the method first named.
		var p *jitstats.Process
		for _, q := range ps {
			for _, m := range q.Methods {
				if p == nil && m.Name == c.methods[0] {
					p = q
				}
			}
		}
		if p == nil {
			t.Fatalf("no %s", c.methods[0])
		}
		var names []string
		for _, m := range p.Methods {
			names = append(names, m.Name)
		}
		start, _ := p.Life()
		startMS := float64(start.Sub(a.Origin())) / float64(time.Millisecond)
		if p.PID != 10 || p.Name != c.name || strings.Join(names, " ") != strings.Join(c.methods, " ") || startMS != c.startMS {
			t.Errorf("process %d: pid %d %q started at %v ms, methods %q; want pid 10 %q at %v ms, %q", i, p.PID, p.Name, startMS, names, c.name, c.startMS, c.methods)
		}
	}
	var b strings.Builder
	if err := jitstats.WriteText(&b, a.Origin(), ps, 10); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Process 10 (first.exe, started at 0.100 ms): 1 methods compiled",
		"Process 10 (second.exe, started at 0.400 ms): 2 methods compiled",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
	// The records tell the two apart by process_start_ms.
	b.Reset()
	if err := jitstats.WriteJSONLines(&b, a.Origin(), ps); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var r struct {
			PID    int64   `json:"pid"`
			Start  float64 `json:"process_start_ms"`
			Method string  `json:"method"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d@%.3f %s", r.PID, r.Start, r.Method))
	}
	if want := []string{"10@0.100 App.First()", "10@0.400 App.Second()", "10@0.400 App.Again()"}; !slices.Equal(got, want) {
		t.Errorf("JSON lines (pid@process_start_ms method) %q, want %q", got, want)
	}
}
