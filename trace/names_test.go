package trace_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/internal/etltest"
	"github.com/clrgo/clrevents/internal/eventfmt"
	"github.com/clrgo/clrevents/internal/tracetest"
	"github.com/clrgo/clrevents/kernelevents"
	"github.com/clrgo/clrevents/trace"
)

// TestKernelNames: a file operation gets the name of its file as
// TraceEvent's fileIDToName gives it (FileName; DirectoryName for a
// directory listing): its FileKey's name, else its FileObject's, from
// the FileIO events that name them before it (Name, FileCreate, the
// FileObject of a Create), or, for an address that only a rundown at
// the log's end names, that rundown's name, which holds from the log's
// start; a later name replaces an earlier one from its event on. A disk
// I/O and a hard fault get their FileObject's (TraceEvent's FileKey's)
// name. A registry event's KeyName is its payload's for a key operation
// that names one, else the name its KeyHandle was given (the
// registry's KCBCreate, a rundown to TraceEvent, from the log's start);
// a context switch's old thread has the process the Thread events give
// it. clrdump's text, JSON and CSV forms show these after the payload's
// fields, under TraceEvent's names (KeyHandleName for a registry
// event's KeyName: the payload's field is KeyName).
func TestKernelNames(t *testing.T) {
	le := binary.LittleEndian
	const (
		thread, fileIO, registry, diskIO, pageFault = 0x05, 0x04, 0x09, 0x01, 0x02
		none                                        = 0xFFFFFFFF
		k1, k2, k3, o2                              = 0xffffa00000001000, 0xffffa00000002000, 0xffffa00000003000, 0xffffa00000009000
		h1, h2                                      = 0xffffb00000000010, 0xffffb00000000020
		early, b, bKey, bRenamed                    = `\Device\HarddiskVolume3\early.txt`, `\Device\HarddiskVolume3\b.txt`, `\Device\HarddiskVolume3\b-key.txt`, `\Device\HarddiskVolume3\b2.txt`
	)
	threadStart := func(pid, tid uint32, ts int64) []byte {
		p := le.AppendUint32(le.AppendUint32(nil, pid), tid)
		for range 7 {
			p = le.AppendUint64(p, 0)
		}
		return etltest.System(thread, 1, 2, 0, 0, ts, le.AppendUint32(p, 0))
	}
	kernel := func(group, op, version uint8, ts int64, ev kernelevents.Event) []byte {
		return etltest.System(group, op, version, 55, 20, ts, ev.Encode(nil, 8))
	}
	u := kernelevents.UTF16Of
	events := [][]byte{
		etltest.Process(1, 20, 5, "app.exe"),
		etltest.Process(1, 21, 6, "other.exe"),
		threadStart(20, 55, 10),
		threadStart(21, 56, 11),
		kernel(fileIO, 67, 3, 20, &kernelevents.FileIOReadV3{FileKey: k1, FileObject: 0xffffa00000008000, IoSize: 1}), // named by the rundown at 70
		kernel(fileIO, 64, 3, 30, &kernelevents.FileIOCreateV3{FileObject: o2, FileName: u(b)}),
		kernel(fileIO, 68, 3, 40, &kernelevents.FileIOWriteV3{FileKey: k2, FileObject: o2, IoSize: 2}), // by its FileObject
		kernel(fileIO, 0, 2, 50, &kernelevents.FileIONameV2{FileObject: k2, FileName: u(bKey)}),
		kernel(fileIO, 66, 3, 60, &kernelevents.FileIOCloseV3{FileKey: k2, FileObject: o2}), // by its FileKey first
		kernel(fileIO, 72, 3, 65, &kernelevents.FileIODirEnumV3{FileKey: k3, FileName: u("*")}),
		kernel(fileIO, 36, 2, 70, &kernelevents.FileIOFileRundownV2{FileObject: k1, FileName: u(early)}),
		kernel(fileIO, 36, 2, 71, &kernelevents.FileIOFileRundownV2{FileObject: k2, FileName: u(bRenamed)}), // named before: from here on
		kernel(fileIO, 67, 3, 80, &kernelevents.FileIOReadV3{FileKey: k2, FileObject: o2, IoSize: 3}),
		kernel(diskIO, 10, 3, 85, &kernelevents.DiskIOReadV3{FileObject: k1, TransferSize: 4096, IssuingThreadId: 55}),
		kernel(pageFault, 32, 2, 88, &kernelevents.MemoryHardFaultV2{FileObject: k3, TThreadId: 55}),
		kernel(registry, 16, 2, 95, &kernelevents.RegistryQueryValueV2{KeyHandle: h1, KeyName: u("Version")}), // named by the KCBCreate at 110
		kernel(registry, 22, 2, 110, &kernelevents.RegistryKCBCreateV2{KeyHandle: h1, KeyName: u(`\REGISTRY\MACHINE\SOFTWARE`)}),
		kernel(registry, 11, 2, 120, &kernelevents.RegistryOpenV2{KeyHandle: h2}),
		kernel(registry, 25, 2, 130, &kernelevents.RegistryKCBRundownEndV2{KeyHandle: h2, KeyName: u(`\REGISTRY\USER`)}),
		kernel(registry, 27, 2, 140, &kernelevents.RegistryCloseV2{KeyHandle: h2}),
		kernel(registry, 11, 2, 150, &kernelevents.RegistryOpenV2{KeyHandle: h1, KeyName: u(`Contoso`)}),
		kernel(thread, 36, 2, 160, &kernelevents.ThreadCSwitchV2{NewThreadID: 55, OldThreadID: 56}),
		kernel(thread, 36, 2, 170, &kernelevents.ThreadCSwitchV2{NewThreadID: 56, OldThreadID: 99}),
	}
	type want struct {
		name    string
		file    string // FileName; "-" for none
		key     string // KeyName; "-" for none
		oldPID  int64  // OldProcess; -2 for none
		oldName string
		text    string // in clrdump's text line; "" for no derived values
	}
	wants := []want{
		{"FileIO/Read", early, "-", -2, "", `FileName="\\Device\\HarddiskVolume3\\early.txt"`},
		{"FileIO/Create", b, "-", -2, "", ""},
		{"FileIO/Write", b, "-", -2, "", `IoFlags=0 FileName="\\Device\\HarddiskVolume3\\b.txt"`},
		{"FileIO/Name", bKey, "-", -2, "", ""},
		{"FileIO/Close", bKey, "-", -2, "", `FileName="\\Device\\HarddiskVolume3\\b-key.txt"`},
		{"FileIO/DirEnum", "", "-", -2, "", `FileName="*" DirectoryName=""`},
		{"FileIO/FileRundown", early, "-", -2, "", ""},
		{"FileIO/FileRundown", bRenamed, "-", -2, "", ""},
		{"FileIO/Read", bRenamed, "-", -2, "", `FileName="\\Device\\HarddiskVolume3\\b2.txt"`},
		{"DiskIO/Read", early, "-", -2, "", `FileName="\\Device\\HarddiskVolume3\\early.txt"`},
		{"Memory/HardFault", "", "-", -2, "", `FileName=""`},
		{"Registry/QueryValue", "-", `\REGISTRY\MACHINE\SOFTWARE`, -2, "", `KeyHandleName="\\REGISTRY\\MACHINE\\SOFTWARE"`},
		{"Registry/KCBCreate", "-", `\REGISTRY\MACHINE\SOFTWARE`, -2, "", `KeyHandleName="\\REGISTRY\\MACHINE\\SOFTWARE"`},
		{"Registry/Open", "-", "", -2, "", `KeyHandleName=""`},
		{"Registry/KCBRundownEnd", "-", `\REGISTRY\USER`, -2, "", `KeyHandleName="\\REGISTRY\\USER"`},
		{"Registry/Close", "-", `\REGISTRY\USER`, -2, "", `KeyHandleName="\\REGISTRY\\USER"`},
		{"Registry/Open", "-", "Contoso", -2, "", `KeyHandleName="Contoso"`},
		{"Thread/CSwitch", "-", "-", 21, "other.exe", `OldProcessID=21 OldProcessName="other.exe"`},
		{"Thread/CSwitch", "-", "-", -1, "", `OldProcessID=-1 OldProcessName=""`},
	}
	var csv eventfmt.CSV
	i := 0
	feedStacks(t, events, func(e *trace.Event, _ bool) {
		if e.Provider() != "Windows Kernel" || e.Name() == "EventTrace" || strings.HasPrefix(e.Name(), "EventTrace/") ||
			strings.HasPrefix(e.Name(), "Process/") || e.Name() == "Thread/Start" {
			return
		}
		if i >= len(wants) {
			t.Errorf("unexpected event %s", e.Name())
			return
		}
		w := wants[i]
		i++
		file, fok := e.FileName()
		key, kok := e.KeyName()
		oldPID, oldName, ook := e.OldProcess()
		if !fok {
			file = "-"
		}
		if !kok {
			key = "-"
		}
		if !ook {
			oldPID = -2
		}
		if e.DisplayName() != w.name || file != w.file || key != w.key || oldPID != w.oldPID || oldName != w.oldName {
			t.Errorf("event %d: %s file %q key %q old %d %q\nwant %s file %q key %q old %d %q", i-1, e.DisplayName(), file, key, oldPID, oldName,
				w.name, w.file, w.key, w.oldPID, w.oldName)
		}
		dec := eventfmt.Decode(e)
		text := string(eventfmt.AppendText(nil, e, &dec))
		derived := e.AppendDerived(nil)
		if w.text == "" {
			if len(derived) != 0 {
				t.Errorf("event %d %s: derived %v, want none", i-1, w.name, derived)
			}
			return
		}
		if !strings.HasSuffix(text, " "+w.text+"\n") {
			t.Errorf("event %d %s: text %q, want it to end with %q", i-1, w.name, text, w.text)
		}
		js := string(eventfmt.AppendJSON(nil, e, &dec))
		rows := string(csv.Append(nil, int64(i), e, &dec))
		for _, d := range derived {
			val := d.Str
			if d.IsInt {
				val = strconv.FormatInt(d.Int, 10)
			}
			if !strings.Contains(js, `"`+d.Name+`":`) || !strings.Contains(rows, ","+d.Name+","+csvValue(val)+"\n") {
				t.Errorf("event %d %s: %s not in its JSON line or CSV rows:\n%s%s", i-1, w.name, d.Name, js, rows)
			}
		}
		if !bytes.HasSuffix([]byte(js), []byte("}}\n")) {
			t.Errorf("event %d %s: JSON %s", i-1, w.name, js)
		}
	})
	if i != len(wants) {
		t.Errorf("%d kernel events, want %d", i, len(wants))
	}

	// Read as a stream in file order, which cannot be read twice, the log's end is not
	// known: the first Read, whose file only the rundown after it names,
	// has no name.
	log, err := etltest.Log(tracetest.Bytes(t, "../testdata/traces/gcevents.etl.zip"), events...)
	if err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewReader(struct{ io.Reader }{bytes.NewReader(log)}, trace.WithOrder(trace.FileOrder))
	if err != nil {
		t.Fatal(err)
	}
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatalf("no FileIO/Read: %v", err)
		}
		if e.DisplayName() == "FileIO/Read" {
			if name, ok := e.FileName(); !ok || name != "" {
				t.Errorf("streamed: FileName %q, %v; want \"\", true", name, ok)
			}
			break
		}
	}
}

// csvValue is v as a CSV field, quoted where it holds a quote, comma or
// newline.
func csvValue(v string) string {
	if strings.ContainsAny(v, "\",\n") {
		return `"` + strings.ReplaceAll(v, `"`, `""`) + `"`
	}
	return v
}
