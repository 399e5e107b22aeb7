package etl

import (
	"sort"
	"testing"
	"time"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/internal/baseline"
)

// traceTime formats a time as the baseline dumper does:
// "yy/MM/dd HH:mm:ss.ffffff" in UTC.
func traceTime(t time.Time) string {
	return t.UTC().Format("06/01/02 15:04:05.000000")
}

// checkHeader compares Header() with the baseline's EventTrace header line.
// headerLine is the baseline's line for the log header event.
func headerLine(t *testing.T, bl *baseline.File) *baseline.Event {
	t.Helper()
	for i := range bl.Events {
		if bl.Events[i].FullName() == "Windows Kernel/EventTrace" {
			return &bl.Events[i]
		}
	}
	t.Fatal("baseline has no Windows Kernel/EventTrace line")
	return nil
}

func checkHeader(t *testing.T, r *Reader, bl *baseline.File) {
	t.Helper()
	line := headerLine(t, bl)
	h := r.Header()
	if line.MSec != 0 {
		t.Errorf("header line at %v ms, want 0", line.MSec)
	}
	if int64(h.HeaderProcessID) != line.PID || int64(h.HeaderThreadID) != line.TID || line.ProcNum != 0 || h.DataLen != line.DataLen {
		t.Errorf("header event PID/TID/DataLen = %d/%d/%d, baseline %d/%d/%d (ProceNum %d)",
			h.HeaderProcessID, h.HeaderThreadID, h.DataLen, line.PID, line.TID, line.DataLen, line.ProcNum)
	}
	want := map[string]string{
		"BufferSize":         n0(int64(h.BufferSize)),
		"Version":            n0(int64(h.Version)),
		"ProviderVersion":    n0(int64(h.ProviderVersion)),
		"NumberOfProcessors": n0(int64(h.NumberOfProcessors)),
		"EndTime":            cut20(traceTime(h.EndTime)),
		"TimerResolution":    n0(int64(h.TimerResolution)),
		"MaxFileSize":        n0(int64(h.MaximumFileSize)),
		"LogFileMode":        n0(int64(h.LogFileMode)),
		"BuffersWritten":     n0(int64(h.BuffersWritten)),
		"StartBuffers":       n0(int64(h.StartBuffers)),
		"PointerSize":        n0(int64(h.PointerSize)),
		"EventsLost":         n0(int64(h.EventsLost)),
		"CPUSpeed":           n0(int64(h.CPUSpeedMHz)),
		"BootTime":           cut20(traceTime(h.BootTime)),
		"PerfFreq":           n0(h.PerfFreq),
		"StartTime":          cut20(traceTime(h.StartTime)),
		"ReservedFlags":      n0(int64(h.ClockType)),
		"BuffersLost":        n0(int64(h.BuffersLost)),
		"SessionName":        cut20(h.SessionName),
		"LogFileName":        cut20(h.LogFileName),
		"UtcOffsetMinutes":   n0(int64(h.UTCOffsetMinutes)),
	}
	seen := 0
	for _, f := range line.Fields {
		w, ok := want[f.Name]
		if !ok {
			t.Errorf("baseline header field %s=%s is not checked", f.Name, f.Value)
			continue
		}
		seen++
		if w != f.Value {
			t.Errorf("header %s = %q, baseline %q", f.Name, w, f.Value)
		}
	}
	if seen != len(want) {
		t.Errorf("baseline header line has %d of the %d fields", seen, len(want))
	}
}

type clrKey struct {
	guid clrimpl.GUID
	id   uint16
}

// checkCLR finds every CLR event line of the baseline in our TimeOrder
// read and checks time, PID, TID, processor, DataLen, the order of the
// dumped events of each type and the per-type counts. It returns the
// matched events by baseline line.
func checkCLR(t *testing.T, r *Reader, bl *baseline.File) map[int]ev {
	t.Helper()
	var ours []ev
	for _, e := range readAll(t, r) {
		if e.GUID == runtimeGUID || e.GUID == rundownGUID || e.GUID == privateGUID {
			ours = append(ours, e)
		}
	}
	type sig struct {
		guid     clrimpl.GUID
		ms       string
		pid, tid int64
		proc     int
		n        int
	}
	index := map[sig][]int{}
	for i, e := range ours {
		s := sig{e.GUID, baseline.FormatMSec(r.RelativeMSec(e.TS)), int64(int32(e.PID)), int64(int32(e.TID)), int(e.Proc), e.DataLen}
		index[s] = append(index[s], i)
	}
	matched := map[int]ev{}
	names := map[string]map[uint16]bool{} // baseline name -> our IDs
	lines := 0
	for _, b := range bl.Events {
		g, ok := clrProviders[b.Provider]
		if !ok {
			continue
		}
		lines++
		s := sig{g, b.MSecText, b.PID, b.TID, b.ProcNum, b.DataLen}
		c := index[s]
		if len(c) == 0 {
			t.Errorf("line %d: %s at %s ms PID=%d TID=%d ProceNum=%d DataLen=%d: no such event in our read",
				b.Line, b.FullName(), b.MSecText, b.PID, b.TID, b.ProcNum, b.DataLen)
			continue
		}
		e := ours[c[0]]
		matched[b.Line] = e
		if names[b.FullName()] == nil {
			names[b.FullName()] = map[uint16]bool{}
		}
		for _, i := range c {
			names[b.FullName()][ours[i].ID] = true
		}
	}
	if lines == 0 {
		t.Fatal("no CLR lines in the baseline")
	}
	// Each name whose matches pin one event ID: the dumped events are the
	// first ones of that ID, in our order, and the counts agree.
	byID := map[clrKey][]ev{}
	for _, e := range ours {
		if traceLogDrops(e) {
			continue
		}
		k := clrKey{e.GUID, e.ID}
		byID[k] = append(byID[k], e)
	}
	var checkedNames []string
	for name, ids := range names {
		if len(ids) != 1 {
			continue
		}
		var id uint16
		for i := range ids {
			id = i
		}
		var prov string
		var dumped []baseline.Event
		for _, b := range bl.Events {
			if b.FullName() == name {
				dumped = append(dumped, b)
				prov = b.Provider
			}
		}
		all := byID[clrKey{clrProviders[prov], id}]
		if got, want := len(all), bl.Counts[name]; got != want {
			t.Errorf("%s (id %d): %d events, baseline COUNT %d", name, id, got, want)
		}
		for k, b := range dumped {
			if k >= len(all) {
				break
			}
			e := all[k]
			if baseline.FormatMSec(r.RelativeMSec(e.TS)) != b.MSecText || int64(int32(e.PID)) != b.PID || int64(int32(e.TID)) != b.TID || int(e.Proc) != b.ProcNum || e.DataLen != b.DataLen {
				t.Errorf("%s #%d (line %d): ours %s ms PID=%d TID=%d ProceNum=%d DataLen=%d, baseline %s ms PID=%d TID=%d ProceNum=%d DataLen=%d",
					name, k+1, b.Line, baseline.FormatMSec(r.RelativeMSec(e.TS)), int32(e.PID), int32(e.TID), e.Proc, e.DataLen,
					b.MSecText, b.PID, b.TID, b.ProcNum, b.DataLen)
			}
		}
		checkedNames = append(checkedNames, name)
	}
	sort.Strings(checkedNames)
	t.Logf("%d CLR baseline lines matched; order and COUNT checked for %d event names", len(matched), len(checkedNames))
	return matched
}

func TestConformanceGCEvents(t *testing.T) {
	bl, err := baseline.ParseFile(gcBaseline)
	if err != nil {
		t.Fatal(err)
	}
	r := mustReader(t, gcETL(t))
	checkHeader(t, r, bl)
	checkCLR(t, r, bl)
}

func TestConformanceNet452x86(t *testing.T) {
	data := netETL(t)
	bl, err := baseline.ParseFile(netBaseline)
	if err != nil {
		t.Fatal(err)
	}
	r := mustReader(t, data)
	checkHeader(t, r, bl)
	matched := checkCLR(t, r, bl)
	// Every CLR process in this log is 32-bit (PerfView itself and
	// Test.x86): their events carry the 32-bit header type.
	for line, e := range matched {
		if e.Ptr != 4 || e.Flags&Flag32BitHeader == 0 {
			t.Errorf("line %d: PointerSize %d, flags %#x; want 4 and the 32-bit flag", line, e.Ptr, e.Flags)
		}
	}
	if r.Header().PointerSize != 8 {
		t.Errorf("log PointerSize %d, want 8", r.Header().PointerSize)
	}
}

// TestKernelLines checks the kernel header-level lines of the net baseline
// that are not CLR events but exercise the other header kinds: perfinfo
// (PID/TID -1), system and classic (MOF) headers.
func TestKernelLines(t *testing.T) {
	data := netETL(t)
	bl, err := baseline.ParseFile(netBaseline)
	if err != nil {
		t.Fatal(err)
	}
	r := mustReader(t, data)
	all := readAll(t, r)
	want := map[string]struct {
		guid clrimpl.GUID
		op   uint8
	}{
		"Windows Kernel/EventTrace/EndExtension": {EventTraceGUID, 32},
		"Windows Kernel/EventTrace/Extension":    {EventTraceGUID, 5},
		"Windows Kernel/Process/DCStart":         {ProcessGUID, 3},
		"Windows Kernel/Image/DCStart":           {ImageLoadGUID, 3},
	}
	found := 0
	kinds := map[HeaderKind]int{}
	for _, b := range bl.Events {
		w, ok := want[b.FullName()]
		if !ok {
			continue
		}
		hit := false
		for _, e := range all {
			if e.GUID == w.guid && e.Opcode == w.op && baseline.FormatMSec(r.RelativeMSec(e.TS)) == b.MSecText &&
				int(e.Proc) == b.ProcNum && e.DataLen == b.DataLen {
				// TraceLog fills PID and TID of some kernel events from
				// their payload or its thread table, so those are not
				// compared here.
				if e.Kind == PerfInfoHeader && (e.PID != 0xFFFFFFFF || e.TID != 0xFFFFFFFF) {
					t.Errorf("line %d: perfinfo event with PID/TID %d/%d", b.Line, e.PID, e.TID)
				}
				kinds[e.Kind]++
				hit = true
				break
			}
		}
		if !hit {
			t.Errorf("line %d: %s at %s ms TID=%d ProceNum=%d DataLen=%d not found", b.Line, b.FullName(), b.MSecText, b.TID, b.ProcNum, b.DataLen)
		}
		found++
	}
	t.Logf("header kinds of the kernel lines: %v", kinds)
	if found == 0 {
		t.Fatal("no kernel lines checked")
	}
	t.Logf("%d kernel lines checked", found)
}

func TestMSecZero(t *testing.T) {
	r := mustReader(t, gcETL(t))
	e, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if e.HookID != 0 || e.Timestamp != r.Header().HeaderTimestamp || r.RelativeMSec(e.Timestamp) != 0 {
		t.Fatalf("first event %+v is not the header at 0 ms", e)
	}
	if !e.Time.Equal(r.Header().StartTime) {
		t.Errorf("header event time %v, want StartTime %v", e.Time, r.Header().StartTime)
	}
	if got := r.RelativeMSec(e.Timestamp - 1000); got != 0 {
		t.Errorf("earlier timestamps clamp to 0, got %v", got)
	}
}
