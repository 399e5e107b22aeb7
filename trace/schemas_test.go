package trace

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/internal/baseline"
	"github.com/clrgo/clrevents/kernelevents"
)

// openNet452 opens the shared 4.5.2 trace and its TraceEvent baseline, or
// skips the test when ../shared is not beside the checkout.
func openNet452(t *testing.T) (*Reader, *baseline.File) {
	t.Helper()
	const dir = "../../shared/fixtures/traces/perfview/"
	if _, err := os.Stat(dir + "net.4.5.2.x86.etl.zip"); err != nil {
		t.Skip("shared traces absent (../shared beside the checkout)")
	}
	bl, err := baseline.ParseFile(dir + "net.4.5.2.x86.baseline.txt")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir + "net.4.5.2.x86.etl.zip")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, bl
}

// lineKey finds an event's baseline line: its time as TraceEvent prints
// it, its full name and its payload size.
type lineKey struct {
	ms, name string
	len      int
}

// fieldsByLine reads r to the end and decodes, as JSON, the fields of the
// events fields gives some for, by lineKey.
func fieldsByLine(t *testing.T, r *Reader, fields func(e *Event) ([]byte, bool)) map[lineKey][]map[string]any {
	t.Helper()
	got := map[lineKey][]map[string]any{}
	for {
		e, err := r.Next()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		out, ok := fields(e)
		if !ok {
			continue
		}
		d := json.NewDecoder(bytes.NewReader(out))
		d.UseNumber()
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			t.Fatalf("%s/%s at offset %d: invalid JSON %s", e.Provider(), e.Name(), e.Offset(), out)
		}
		k := lineKey{baseline.FormatMSec(r.et.RelativeMSec(e.Timestamp())), e.Provider() + "/" + e.Name(), len(e.Payload())}
		got[k] = append(got[k], m)
	}
}

// compareFields compares the values of b's fields that ours name too
// (unless skip says TraceEvent shows one its own way) with any of the
// events at b's time, name and size; it counts the values compared.
func compareFields(t *testing.T, b *baseline.Event, cands []map[string]any, skip func(field string) bool) int {
	t.Helper()
	n := 0
	for _, f := range b.Fields {
		if _, ours := cands[0][f.Name]; !ours || skip(f.Name) {
			continue
		}
		match := false
		for _, c := range cands {
			match = match || baseline.SameValue(c[f.Name], f.Value)
		}
		if !match {
			t.Errorf("line %d: %s %s = %v, baseline %s", b.Line, b.FullName(), f.Name, cands[0][f.Name], f.Value)
		}
		n++
	}
	return n
}

// TestTraceSchemasBaseline: the 4.5.2 trace's events of providers outside
// the schema and the kernel, which it describes itself (KernelTraceControl's
// EventInfo events, the manifests of PerfView's and the framework's
// EventSources), have TraceEvent's provider and event names, TraceEvent's
// counts, and the field values TraceEvent prints.
func TestTraceSchemasBaseline(t *testing.T) {
	r, bl := openNet452(t)
	counts := map[string]int{}
	got := fieldsByLine(t, r, func(e *Event) ([]byte, bool) {
		// Described by the trace: a descriptor, not a kernel layout's.
		s := e.Descriptor()
		if s == nil || kernelType(e) {
			return nil, false
		}
		counts[e.Provider()+"/"+e.Name()]++
		out, err := s.Fields.AppendJSON(nil, e.Payload(), e.PointerSize())
		if err != nil {
			t.Errorf("%s/%s at offset %d: %v", e.Provider(), e.Name(), e.Offset(), err)
		}
		return out, err == nil
	})
	// MSNT_SystemTrace is where TraceEvent puts two kernel events its
	// kernel parser leaves out (Image/KernelBase, SystemConfig/Platform):
	// kernel events, not described by the trace.
	outside := func(p string) bool {
		return p != "Windows Kernel" && p != "KernelTraceControl" && p != "MSNT_SystemTrace" &&
			!strings.HasPrefix(p, "Microsoft-Windows-DotNETRuntime")
	}
	lines, values := 0, 0
	for i := range bl.Events {
		b := &bl.Events[i]
		if !outside(b.Provider) {
			continue
		}
		lines++
		cands := got[lineKey{b.MSecText, b.FullName(), b.DataLen}]
		if len(cands) == 0 {
			t.Errorf("line %d: no described %s at %s ms with %d bytes", b.Line, b.FullName(), b.MSecText, b.DataLen)
			continue
		}
		// TraceEvent decodes Kernel-File with a parser of its own: other
		// field names, and paths with drive letters.
		if b.Provider == "Microsoft-Windows-Kernel-File" {
			continue
		}
		// PayloadLength is TraceEvent's, not the payload's.
		values += compareFields(t, b, cands, func(f string) bool { return f == "PayloadLength" })
		for _, f := range b.Fields {
			if _, ok := cands[0][f.Name]; !ok && f.Name != "PayloadLength" {
				t.Errorf("line %d: %s has no field %s (ours: %v)", b.Line, b.FullName(), f.Name, cands[0])
			}
		}
	}
	for name, n := range bl.Counts {
		if p, _, _ := strings.Cut(name, "/"); outside(p) && counts[name] != n {
			t.Errorf("%d %s events, baseline %d", counts[name], name, n)
		}
	}
	if lines < 50 || values < 100 {
		t.Fatalf("only %d baseline lines and %d values compared", lines, values)
	}
	t.Logf("%d baseline lines, %d values compared", lines, values)
}

// kernelType reports whether e is of one of kernelevents' types.
func kernelType(e *Event) bool {
	typ, ok := e.Type()
	if !ok {
		return false
	}
	_, ok = typ.(*kernelevents.EventInfo)
	return ok
}

// TestKernelSchemasBaseline: the kernel's events and KernelTraceControl's
// (processes, threads, images and their PDBs, CPU samples and stack
// walks, disk and file I/O, TCP and UDP, hard faults, process counters,
// system configuration, the log header), written by kernelevents' types,
// give the values TraceEvent's baseline prints for every field both name.
func TestKernelSchemasBaseline(t *testing.T) {
	r, bl := openNet452(t)
	got := fieldsByLine(t, r, func(e *Event) ([]byte, bool) {
		if !kernelType(e) {
			return nil, false
		}
		out, err := e.AppendJSON(nil)
		if err != nil {
			t.Errorf("%s/%s at offset %d: %v", e.Provider(), e.Name(), e.Offset(), err)
			return nil, false
		}
		return out, true
	})
	// Fields TraceEvent shows other than as the payload holds them.
	differ := map[string]bool{
		// Flag names, with the priority bits (0x60000) taken out.
		"Windows Kernel/DiskIO/Read IrpFlags": true, "Windows Kernel/DiskIO/Write IrpFlags": true,
		"Windows Kernel/DiskIO/FlushBuffers IrpFlags": true,
		// The name of the process ProcessID names, from TraceEvent's
		// process table (without ".exe"); the payload's is often empty.
		"Windows Kernel/SystemConfig/Services ProcessName": true,
		// TraceEvent reads it at offset 12, inside the 64-bit ImageSize;
		// the payload's ProcessID at offset 16 is the image's process.
		"KernelTraceControl/ImageID ProcessID": true,
	}
	for _, op := range []string{"Load", "Unload", "DCStart", "DCStop"} {
		// TraceEvent turns the kernel's device paths into drive letters
		// (\Device\HarddiskVolume2\ and \SystemRoot\ to C:\Windows\);
		// the payload holds the kernel's (Reader.UserPath turns them:
		// TestUserPathBaseline).
		differ["Windows Kernel/Image/"+op+" FileName"] = true
		// TraceEvent declares it an int32; the class, a uint32.
		differ["Windows Kernel/Image/"+op+" TimeDateStamp"] = true
	}
	lines, values := 0, 0
	for i := range bl.Events {
		b := &bl.Events[i]
		cands, ok := got[lineKey{b.MSecText, b.FullName(), b.DataLen}]
		if !ok {
			continue
		}
		lines++
		values += compareFields(t, b, cands, func(f string) bool { return differ[b.FullName()+" "+f] })
	}
	if lines < 170 || values < 1000 {
		t.Fatalf("only %d baseline lines, %d values compared", lines, values)
	}
	t.Logf("%d baseline lines, %d values compared", lines, values)
}
