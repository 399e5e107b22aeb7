package trace

import (
	"encoding/xml"
	"io"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/internal/baseline"
	"github.com/clrgo/clrevents/kernelevents"
)

// TestKernelIDsBaseline: the names, processes and threads of the 4.5.2
// trace's kernel events that package etl parses agree with TraceEvent's
// baseline lines (PerfInfo/Sample, Thread, Image and Process events, the
// processes' counters, disk I/O, hard faults, TCP and UDP, services), and
// the kernel's and KernelTraceControl's events have TraceEvent's names, in
// TraceEvent's numbers.
func TestKernelIDsBaseline(t *testing.T) {
	r, bl := openNet452(t)
	type key struct {
		ms, name string
		len      int
	}
	type ids struct {
		pid, tid int64
		pname    string
	}
	got := map[key][]ids{}
	er := r.et
	// A sample's process comes from its thread's Thread event; the
	// threads' rundown at the start of the trace may come after the first
	// samples, which then have process -1.
	firstThread := map[int64]float64{}
	counts, ktc := map[string]int{}, map[string]int{}
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.Provider() == "KernelTraceControl" {
			ktc[e.Name()]++
		}
		if e.Provider() == "MSNT_SystemTrace" {
			counts["MSNT_SystemTrace/"+e.Name()]++
		}
		if e.Provider() != "Windows Kernel" {
			continue
		}
		ms := er.RelativeMSec(e.Timestamp())
		if _, seen := firstThread[e.ThreadID()]; !seen && strings.HasPrefix(e.Name(), "Thread/") {
			firstThread[e.ThreadID()] = ms
		}
		counts[e.Name()]++
		k := key{baseline.FormatMSec(ms), e.Name(), len(e.Payload())}
		got[k] = append(got[k], ids{e.ProcessID(), e.ThreadID(), e.ProcessName()})
	}
	checked, lines, named := 0, 0, 0
	for _, b := range bl.Events {
		if b.Provider != "Windows Kernel" {
			continue
		}
		switch task, _, _ := strings.Cut(b.Name, "/"); {
		case b.Name == "PerfInfo/Sample", b.Name == "Memory/HardFault", b.Name == "SystemConfig/Services", task == "Thread", task == "Image", task == "Process",
			task == "TcpIp", task == "UdpIp", task == "DiskIO" && b.Name != "DiskIO/FlushBuffers":
		default:
			continue
		}
		checked++
		lines++
		cands, ok := got[key{b.MSecText, b.Name, b.DataLen}]
		if !ok {
			t.Errorf("line %d: no %s at %s ms with %d bytes", b.Line, b.Name, b.MSecText, b.DataLen)
			continue
		}
		match := false
		for _, c := range cands {
			// TraceEvent's process name is the executable's without its
			// extension.
			if c.pid == b.PID && c.tid == b.TID && (c.pname == "" || strings.TrimSuffix(c.pname, path.Ext(c.pname)) == b.PName) {
				match = true
				if c.pname != "" {
					named++
				}
			}
			if first, ok := firstThread[c.tid]; b.Name == "PerfInfo/Sample" && c.pid == -1 && c.tid == b.TID && ok && first > b.MSec {
				match = true // before the thread's Thread event
			}
		}
		if !match {
			t.Errorf("line %d: %s at %s ms: pid/tid %v, baseline %d/%d", b.Line, b.Name, b.MSecText, cands, b.PID, b.TID)
		}
	}
	// Every kernel event name TraceEvent counts, with its count. The
	// events TraceLog consumes (thread rundown, stack walks, file rundown)
	// are not in its counts, and its count of CPU samples (6,810 of the
	// trace's 88,809, 82,128 of them on the idle threads) comes after
	// TraceLog's processing, which is not reproduced here.
	for name, n := range bl.Counts {
		if strings.HasPrefix(name, "MSNT_SystemTrace/") && counts[name] != n {
			t.Errorf("%d %s events, baseline %d", counts[name], name, n)
		}
		task, ok := strings.CutPrefix(name, "Windows Kernel/")
		if ok && task != "PerfInfo/Sample" {
			if counts[task] != n {
				t.Errorf("%d %s events, baseline %d", counts[task], task, n)
			}
			checked++
		}
		if task, ok := strings.CutPrefix(name, "KernelTraceControl/"); ok {
			if ktc[task] != n {
				t.Errorf("%d KernelTraceControl/%s events, baseline %d", ktc[task], task, n)
			}
			checked++
		}
	}
	if named < lines*3/4 {
		t.Errorf("only %d of %d lines' processes named", named, lines)
	}
	if checked < 20 {
		t.Fatalf("only %d lines checked", checked)
	}
	t.Logf("%d checks: %d kernel lines (%d with the process's name), the rest counts", checked, lines, named)
}

// TestWinSat: a merged log's WinSAT assessment (three events of
// KernelTraceControl's class WinSat in SelfDescribingSingleEvent.etl.zip)
// is named as TraceEvent names it, decodes with kernelevents' types, and
// its compressed documents expand (kernelevents.WinSatXML) to well-formed
// XML of the size each event states, rooted where the event's name says.
func TestWinSat(t *testing.T) {
	r, err := Open("../testdata/traces/SelfDescribingSingleEvent.etl.zip")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var roots []string
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.Provider() != "KernelTraceControl" || !strings.HasPrefix(e.Name(), "WinSat/") {
			continue
		}
		v, err := e.Decode()
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		var size uint32
		var comp []byte
		switch v := v.(type) {
		case *kernelevents.WinSatWinSPRV0:
			size, comp = v.UncompressedSize, v.CompressedXml.WireBytes()
		case *kernelevents.WinSatMetricsV0:
			size, comp = v.UncompressedSize, v.CompressedXml.WireBytes()
		case *kernelevents.WinSatSystemConfigV0:
			size, comp = v.UncompressedSize, v.CompressedXml.WireBytes()
		default:
			t.Fatalf("%s decodes to a %T", e.Name(), v)
		}
		doc, err := kernelevents.WinSatXML(comp, size)
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		d := xml.NewDecoder(strings.NewReader(doc))
		var root string
		for {
			tok, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: the document is not XML: %v", e.Name(), err)
			}
			if s, ok := tok.(xml.StartElement); ok && root == "" {
				root = s.Name.Local
			}
		}
		if want := strings.TrimPrefix(e.Name(), "WinSat/"); root != want || len(doc) < 500 {
			t.Errorf("%s: a document of %d characters rooted at %q", e.Name(), len(doc), root)
		}
		roots = append(roots, root)
	}
	if want := []string{"WinSPR", "Metrics", "SystemConfig"}; !slices.Equal(roots, want) {
		t.Errorf("WinSat documents %v, want %v", roots, want)
	}
}

// TestDiskIOHeaderFirst: a disk I/O event whose header names its thread
// and process keeps them, as TraceEvent's fix-up does; only one whose
// header names none takes the issuing thread from its payload (6 of the
// x86 log's WriteInit events were given their payload's issuing thread,
// 44 in process 4, where the header said thread 412, or the idle thread).
func TestDiskIOHeaderFirst(t *testing.T) {
	r, _ := openNet452(t)
	checked, fromPayload := 0, 0
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.Provider() != "Windows Kernel" || !strings.HasPrefix(e.Name(), "DiskIO/") {
			continue
		}
		h := e.et
		if h.ThreadID == 0xFFFFFFFF {
			fromPayload++
			continue
		}
		checked++
		if e.ThreadID() != int64(h.ThreadID) || h.ProcessID != 0xFFFFFFFF && e.ProcessID() != int64(h.ProcessID) {
			t.Errorf("%s at %d: pid %d tid %d; its header says pid %d tid %d", e.Name(), e.Timestamp(), e.ProcessID(), e.ThreadID(), int32(h.ProcessID), h.ThreadID)
		}
	}
	if checked == 0 {
		t.Fatal("no disk I/O event with a thread in its header")
	}
	t.Logf("%d disk I/O events with their header's IDs, %d with the payload's", checked, fromPayload)
}

// TestSyncTimestampETL: an ETL log's Info gives the sync point its events'
// times count from (the header event's timestamp; it said none), so that
// a timestamp in a payload converts to a time as Event.Time converts the
// event's own.
func TestSyncTimestampETL(t *testing.T) {
	for _, path := range []string{"../testdata/traces/gcevents.etl.zip", "../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip"} {
		r, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		info := r.Info()
		n := 0
		for {
			e, err := r.Next()
			if err != nil {
				break
			}
			n++
			d := time.Duration(float64(e.Timestamp()-info.SyncTimestamp) * 1e9 / float64(info.ClockFrequency))
			if got := info.StartTime.Add(d); got.Sub(e.Time()).Abs() > time.Microsecond {
				t.Fatalf("%s: event %d at %v; StartTime + (Timestamp - SyncTimestamp) / ClockFrequency gives %v", path, n, e.Time(), got)
			}
		}
		r.Close()
		if n == 0 {
			t.Fatalf("%s: no events", path)
		}
	}
}

// TestImageIDDecoded: every KernelTraceControl image identity event of
// the diagnostics session decodes, DbgPPDB, DbgDeterm and None among them
// (531 of them were "ImageID/Opcode(38)" and "(40)" with a hex payload).
func TestImageIDDecoded(t *testing.T) {
	r, err := Open("../testdata/traces/diaghub-dotnetcore3.1-win-x64-diagsession.cut.zip")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	names := map[string]int{}
	for {
		e, err := r.Next()
		if err != nil {
			break
		}
		if e.Provider() != "KernelTraceControl" || !strings.HasPrefix(e.DisplayName(), "ImageID") {
			continue // its MetaData events describe others: no payload to decode
		}
		if _, err := e.Decode(); err != nil {
			t.Fatalf("%s (opcode %d): %v", e.Name(), e.Opcode(), err)
		}
		names[e.DisplayName()]++
	}
	if names["ImageID/DbgPPDB"] == 0 || names["ImageID/DbgDeterm"] == 0 || names["ImageID/None"] == 0 {
		t.Errorf("image identity events by name: %v", names)
	}
}

// TestHeaderThreadProcess: the log header event names the logging
// program's thread and process, so that thread's CPU samples before the
// thread rundown have their process (TraceEvent gives 3988 to the x86
// log's first samples, which were -1).
func TestHeaderThreadProcess(t *testing.T) {
	r, _ := openNet452(t)
	h := r.et.Header()
	n := 0
	for {
		e, err := r.Next()
		if err != nil {
			break
		}
		if e.Name() != "PerfInfo/Sample" || e.ThreadID() != int64(h.HeaderThreadID) {
			continue
		}
		n++
		if e.ProcessID() != int64(h.HeaderProcessID) {
			t.Fatalf("sample %d of thread %d: process %d, want the header's %d", n, e.ThreadID(), e.ProcessID(), h.HeaderProcessID)
		}
	}
	if n == 0 {
		t.Fatal("no CPU sample of the header's thread")
	}
}
