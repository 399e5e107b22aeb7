package kernelevents_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/kernelevents"
	"github.com/clrgo/clrevents/trace"
)

// The ETW logs whose kernel events the agreement test decodes. The ones in
// ../shared are there only when the checkout sits beside it.
var agreementTraces = []struct {
	path   string
	shared bool
}{
	{"../testdata/traces/gcevents.etl.zip", false},
	{"../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip", false},
	{"../../shared/fixtures/traces/perfview/net.4.5.2.x86.etl.zip", true},
}

// isClassic reports whether e has a classic header: a kernel event or a
// MOF class's (KernelTraceControl's ImageID and SysConfig), whose opcode
// is the event ID kernelevents keys it by.
func isClassic(e *etl.Event) bool {
	switch e.HeaderKind {
	case etl.SystemHeader, etl.CompactSystemHeader, etl.PerfInfoHeader, etl.TraceHeader, etl.InstanceHeader:
		return true
	}
	return false
}

// ptrSize is the event's pointer size as etl's parsers take it.
func ptrSize(e *etl.Event) int {
	if e.PointerSize == 4 {
		return 4
	}
	return 8
}

// decodeKernel decodes e with the generated package: by its class GUID,
// its opcode as the event ID and its version, an unknown newer version
// with the newest older one (as etl's layouts picked the newest not newer
// than the event). ok is false when kernelevents has no type for it.
func decodeKernel(d *kernelevents.Decoder, e *etl.Event) (kernelevents.Event, int, bool, error) {
	if !isClassic(e) {
		return nil, 0, false, nil
	}
	p, ok := kernelevents.ProviderByGUID(e.ProviderGUID)
	if !ok {
		return nil, 0, false, nil
	}
	ev, n, err := d.Decode(p, uint16(e.Opcode), e.Version, ptrSize(e), e.Payload)
	if errors.Is(err, kernelevents.ErrUnknownEvent) {
		return nil, 0, false, nil
	}
	return ev, n, true, err
}

// agreement counts what one trace's comparison saw.
type agreement struct {
	compared map[string]int // events whose outputs and values agreed, by display name
	values   map[string]int // of them, events whose parsed values were compared too
	neither  map[string]int // kernel events neither side decodes
}

// TestAgreementWithETL decodes every kernel event of the ETW logs at hand
// with kernelevents and with package etl's parsers, layouts and
// AppendKernelFields, and holds them to the same JSON and text byte for
// byte, the same column values as the JSON's, and the same parsed values
// (processes, threads, addresses, frames, names). An event etl decodes
// that kernelevents does not, or the other way round, fails the test.
func TestAgreementWithETL(t *testing.T) {
	for _, tr := range agreementTraces {
		t.Run(tr.path[strings.LastIndexByte(tr.path, '/')+1:], func(t *testing.T) {
			if _, err := os.Stat(tr.path); err != nil && tr.shared {
				t.Skipf("%s: not here (../shared sits beside a checkout of the workspace, not a fresh clone)", tr.path)
			}
			a := agreeTrace(t, tr.path)
			total := 0
			var lines []string
			for _, n := range sortedKeys(a.compared) {
				total += a.compared[n]
				lines = append(lines, fmt.Sprintf("%6d %s (values: %d)", a.compared[n], n, a.values[n]))
			}
			for _, n := range sortedKeys(a.neither) {
				lines = append(lines, fmt.Sprintf("%6d %s: described by neither", a.neither[n], n))
			}
			t.Logf("%d kernel events agree:\n%s", total, strings.Join(lines, "\n"))
			if total == 0 {
				t.Fatal("no kernel event compared")
			}
		})
	}
}

func agreeTrace(t *testing.T, path string) agreement {
	r, err := etl.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	a := agreement{compared: map[string]int{}, values: map[string]int{}, neither: map[string]int{}}
	d := kernelevents.NewDecoder()
	d.OlderVersions = true
	var etlJSON, etlText, genJSON, genText []byte
	failures := 0
	fail := func(e *etl.Event, format string, args ...any) {
		t.Helper()
		failures++
		if failures <= 20 {
			t.Errorf("event at offset %d (class %s opcode %d version %d, %d bytes): %s", e.Offset, e.ProviderGUID, e.Opcode, e.Version, len(e.Payload), fmt.Sprintf(format, args...))
		}
	}
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			var de *etl.DamageError
			if errors.As(err, &de) {
				continue
			}
			t.Fatal(err)
		}
		var etlOK, etlTextOK bool
		etlJSON, etlOK = e.AppendKernelFields(etlJSON[:0], true)
		etlText, etlTextOK = e.AppendKernelFields(etlText[:0], false)
		ev, n, known, decErr := decodeKernel(d, e)
		genOK := known && decErr == nil
		switch {
		case !known && !etlOK:
			if isClassic(e) {
				a.neither[fmt.Sprintf("%s opcode %d version %d", e.ProviderGUID, e.Opcode, e.Version)]++
			}
			continue
		case etlOK != etlTextOK:
			fail(e, "etl writes JSON (%v) but not text (%v), or the other way round", etlOK, etlTextOK)
			continue
		case etlOK && !genOK:
			fail(e, "etl decodes it (%s) but kernelevents does not (known %v): %v", etlJSON, known, decErr)
			continue
		case !etlOK && genOK:
			fail(e, "kernelevents decodes it (%s) but etl does not", ev.AppendJSON(nil))
			continue
		case !etlOK:
			continue // neither decodes this payload
		}
		name := ev.Info().DisplayName
		if n > len(e.Payload) {
			fail(e, "%s: decoded %d of %d bytes", name, n, len(e.Payload))
		}
		genJSON = ev.AppendJSON(genJSON[:0])
		genText = ev.AppendText(genText[:0])
		if !bytes.Equal(genJSON, etlJSON) {
			fail(e, "%s: JSON differs:\n etl %s\n gen %s", name, etlJSON, genJSON)
			continue
		}
		if !bytes.Equal(genText, etlText) {
			fail(e, "%s: text differs:\n etl %s\n gen %s", name, etlText, genText)
			continue
		}
		// The descriptor writes the payload as the value does.
		if out, err := ev.Descriptor().Fields.AppendJSON(nil, e.Payload, ptrSize(e)); err != nil || !bytes.Equal(out, genJSON) {
			fail(e, "%s: the descriptor's JSON %s (%v) is not the value's %s", name, out, err, genJSON)
		}
		if msg := columnsMatchJSON(ev, genJSON); msg != "" {
			fail(e, "%s: %s", name, msg)
		}
		if ptrSize(e) == 8 {
			if msg := agree32(e, ev); msg != "" {
				fail(e, "%s, written with 4-byte pointers: %s", name, msg)
			}
		}
		if h, ok := ev.(*kernelevents.EventTraceHeaderV2); ok {
			if msg := sameHeader(r.Header(), h); msg != "" {
				fail(e, "%s: %s", name, msg)
			}
			a.values[name]++
		}
		if ok, msg := sameValues(e, ev); msg != "" {
			fail(e, "%s: %s", name, msg)
		} else if ok {
			a.values[name]++
		}
		a.compared[name]++
	}
	return a
}

// agree32 writes ev with 4-byte pointers, as a 32-bit kernel or process
// logs it, and checks that etl's parsers and kernelevents read that
// payload alike. The log header says its own pointer size, which etl
// follows, so it says 4 too.
func agree32(e *etl.Event, ev kernelevents.Event) string {
	if h, ok := ev.(*kernelevents.EventTraceHeaderV2); ok {
		h32 := *h
		h32.PointerSize = 4
		ev = &h32
	}
	e32 := *e
	e32.PointerSize = 4
	e32.Payload = ev.Encode(nil, 4)
	etlJSON, ok := e32.AppendKernelFields(nil, true)
	if !ok {
		return "etl does not decode it"
	}
	got := ev.Info().New()
	if _, err := got.Decode(e32.Payload, 4); err != nil {
		return err.Error()
	}
	if genJSON := got.AppendJSON(nil); !bytes.Equal(genJSON, etlJSON) {
		return fmt.Sprintf("JSON differs:\n etl %s\n gen %s", etlJSON, genJSON)
	}
	if ok, msg := sameValues(&e32, got.(kernelevents.Event)); ok && msg != "" {
		return msg
	}
	return ""
}

// sameValues compares what etl's parsers read from e with the decoded
// value's fields; compared is false for events no parser reads.
func sameValues(e *etl.Event, ev kernelevents.Event) (compared bool, msg string) {
	diff := func(what string, etlV, genV any) string {
		if fmt.Sprint(etlV) != fmt.Sprint(genV) {
			return fmt.Sprintf("%s: etl %v, kernelevents %v", what, etlV, genV)
		}
		return ""
	}
	first := func(ms ...string) string {
		for _, m := range ms {
			if m != "" {
				return m
			}
		}
		return ""
	}
	switch v := ev.(type) {
	case *kernelevents.PerfInfoSampleV2:
		s, err := etl.ParseSampledProfile(e)
		if err != nil {
			return true, err.Error()
		}
		return true, first(diff("IP", s.IP, v.InstructionPointer), diff("ThreadID", s.ThreadID, v.ThreadID), diff("Count", s.Count, v.Count))
	case kernelevents.CollectionStartEvent:
		s, err := etl.ParseSampleInterval(e)
		if err != nil {
			return true, err.Error()
		}
		f := v.CollectionStartFields()
		return true, first(diff("Source", s.Source, f.Source), diff("NewInterval", s.NewInterval, f.NewInterval), diff("OldInterval", s.OldInterval, f.OldInterval))
	case *kernelevents.StackWalkStackV2:
		s, err := etl.ParseStackRef(e)
		if err != nil {
			return true, err.Error()
		}
		return true, first(diff("EventTimestamp", s.EventTimestamp, int64(v.EventTimeStamp)), diff("ProcessID", s.ProcessID, v.StackProcess),
			diff("ThreadID", s.ThreadID, v.StackThread), diff("HasFrames", s.HasFrames(), true),
			diff("Frames", s.Frames(nil), v.Stack.AppendTo(nil)))
	case kernelevents.StackWalkKeyRefEvent:
		s, err := etl.ParseStackRef(e)
		if err != nil {
			return true, err.Error()
		}
		f := v.StackWalkKeyRefFields()
		return true, first(diff("EventTimestamp", s.EventTimestamp, int64(f.EventTimeStamp)), diff("ProcessID", s.ProcessID, f.StackProcess),
			diff("ThreadID", s.ThreadID, f.StackThread), diff("Key", s.Key, f.StackKey),
			diff("Kernel", s.Kernel, f.Kind == kernelevents.KindStackWalkStackKeyKernel))
	case kernelevents.StackWalkKeyDefEvent:
		s, err := etl.ParseStackDef(e)
		if err != nil {
			return true, err.Error()
		}
		f := v.StackWalkKeyDefFields()
		return true, first(diff("Key", s.Key, f.StackKey), diff("Frames", s.Frames(nil), f.Stack.AppendTo(nil)))
	case kernelevents.ThreadEvent:
		s, err := etl.ParseThread(e)
		if err != nil {
			return true, err.Error()
		}
		f := v.ThreadFields()
		return true, first(diff("ProcessID", s.ProcessID, f.ProcessID), diff("ThreadID", s.ThreadID, f.ThreadID))
	case kernelevents.ProcessEvent:
		s, err := etl.ParseProcess(e)
		if err != nil {
			return true, err.Error()
		}
		f := v.ProcessFields()
		return true, first(diff("ProcessID", s.ProcessID, f.ProcessID), diff("ParentID", s.ParentID, f.ParentID),
			diff("SessionID", int32(s.SessionID), f.SessionID), diff("ExitStatus", s.ExitStatus, f.ExitStatus),
			diff("ImageFileName", s.ImageFileName, f.ImageFileName.String()), diff("CommandLine", s.CommandLine.String(), f.CommandLine.String()))
	case kernelevents.ImageEvent:
		s, err := etl.ParseImage(e)
		if err != nil {
			return true, err.Error()
		}
		f := v.ImageFields()
		return true, first(diff("Base", s.Base, f.ImageBase), diff("Size", s.Size, f.ImageSize), diff("ProcessID", s.ProcessID, f.ProcessID),
			diff("Checksum", s.Checksum, f.ImageChecksum), diff("TimeDateStamp", s.TimeDateStamp, f.TimeDateStamp),
			diff("DefaultBase", s.DefaultBase, f.DefaultBase), diff("FileName", s.FileName.String(), f.FileName.String()))
	case kernelevents.DbgIDRSDSEvent:
		s, err := etl.ParseDbgID(e)
		if err != nil {
			return true, err.Error()
		}
		f := v.DbgIDRSDSFields()
		return true, first(diff("Base", s.Base, f.ImageBase), diff("ProcessID", s.ProcessID, f.ProcessID), diff("GUID", s.GUID, f.GuidSig),
			diff("Age", s.Age, f.Age), diff("PDBFileName", s.PDBFileName, f.PDBFileName.String()))
	case kernelevents.DiskIOEvent:
		tid, ok := e.IssuingThread()
		f := v.DiskIOFields()
		return true, first(diff("IssuingThread ok", ok, f.HasIssuingThreadId), diff("IssuingThread", tid, f.IssuingThreadId))
	case kernelevents.DiskIOInitEvent:
		tid, ok := e.IssuingThread()
		f := v.DiskIOInitFields()
		return true, first(diff("IssuingThread ok", ok, f.HasIssuingThreadId), diff("IssuingThread", tid, f.IssuingThreadId))
	case *kernelevents.MemoryHardFaultV2:
		tid, ok := e.IssuingThread()
		return true, first(diff("IssuingThread ok", ok, true), diff("IssuingThread", tid, v.TThreadId))
	case kernelevents.TcpIpEvent, kernelevents.TcpIpConnectEvent, kernelevents.TcpIpV6Event, kernelevents.TcpIpV6ConnectEvent,
		kernelevents.UdpIpEvent, kernelevents.UdpIpV6Event, *kernelevents.TcpIpSendV2, *kernelevents.TcpIpSendIPV6V2:
		pid, ok := e.NetworkProcess()
		return true, first(diff("NetworkProcess ok", ok, true), diff("NetworkProcess", pid, binaryPID(ev)))
	case *kernelevents.TcpIpFailV2:
		_, ok := e.NetworkProcess()
		return true, diff("NetworkProcess ok", ok, false)
	}
	return false, ""
}

// sameHeader compares the log header etl read with the decoded header
// event.
func sameHeader(want *etl.LogHeader, h *kernelevents.EventTraceHeaderV2) string {
	got := []any{h.BufferSize, h.Version, h.ProviderVersion, h.NumberOfProcessors, h.EndTime.Time(), h.TimerResolution,
		h.MaxFileSize, h.LogFileMode, h.BuffersWritten, h.StartBuffers, h.PointerSize, h.EventsLost, h.CPUSpeed,
		h.UtcOffsetMinutes, h.BootTime.Time(), h.PerfFreq, h.StartTime.Time(), h.ReservedFlags, h.BuffersLost,
		h.SessionName.String(), h.LogFileName.String()}
	w := []any{want.BufferSize, want.Version, want.ProviderVersion, want.NumberOfProcessors, want.EndTime, want.TimerResolution,
		want.MaximumFileSize, want.LogFileMode, want.BuffersWritten, want.StartBuffers, want.PointerSize, want.EventsLost, want.CPUSpeedMHz,
		want.UTCOffsetMinutes, want.BootTime, want.PerfFreq, want.StartTime, want.ClockType, want.BuffersLost,
		want.SessionName, want.LogFileName}
	if g, ww := fmt.Sprint(got...), fmt.Sprint(w...); g != ww {
		return fmt.Sprintf("header values differ:\n etl %s\n gen %s", ww, g)
	}
	return ""
}

// binaryPID is the PID field of a TcpIp or UdpIp event: the first 4
// bytes of its payload.
func binaryPID(ev kernelevents.Event) uint32 {
	b := ev.Encode(nil, 8)
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// columnsMatchJSON checks that the event's columns hold what its JSON
// holds, as clrdump's CSV writes both: numbers as they are (hex columns
// as 0x…), strings without quotes, JSON columns as they are.
func columnsMatchJSON(ev kernelevents.Event, js []byte) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(js, &m); err != nil {
		return fmt.Sprintf("JSON %s does not parse: %v", js, err)
	}
	c := &textAppender{cols: ev.Descriptor().Columns}
	ev.AppendColumns(c)
	if c.i != len(c.cols) {
		return fmt.Sprintf("%d column values for %d columns", c.i, len(c.cols))
	}
	if len(c.cols) != len(m) {
		return fmt.Sprintf("%d columns for %d JSON members", len(c.cols), len(m))
	}
	for i, col := range c.cols {
		raw, ok := m[col.Name]
		if !ok {
			return fmt.Sprintf("column %s is no JSON member", col.Name)
		}
		want := string(raw)
		var s string
		if json.Unmarshal(raw, &s) == nil {
			want = s
		}
		if c.vals[i] != want {
			return fmt.Sprintf("column %s is %q, its JSON %s", col.Name, c.vals[i], raw)
		}
	}
	return ""
}

// textAppender keeps each column's value as text, the way clrdump's CSV
// writes it.
type textAppender struct {
	cols []clrimpl.Column
	vals []string
	i    int
}

func (c *textAppender) add(s string) {
	c.vals = append(c.vals, s)
	c.i++
}

func (c *textAppender) hex() bool { return c.i < len(c.cols) && c.cols[c.i].Hex }

func (c *textAppender) Bool(v bool) { c.add(strconv.FormatBool(v)) }
func (c *textAppender) Int(v int64) {
	if c.hex() {
		c.add("0x" + strconv.FormatUint(uint64(v), 16))
		return
	}
	c.add(strconv.FormatInt(v, 10))
}
func (c *textAppender) Uint(v uint64) {
	if c.hex() {
		c.add("0x" + strconv.FormatUint(v, 16))
		return
	}
	c.add(strconv.FormatUint(v, 10))
}
func (c *textAppender) Float(v float64)     { c.add(strconv.FormatFloat(v, 'g', -1, 64)) }
func (c *textAppender) GUID(v clrimpl.GUID) { c.add(v.String()) }
func (c *textAppender) Bytes(v []byte)      { c.add(string(v)) }
func (c *textAppender) Scratch() []byte     { return nil }

var _ clrimpl.ColumnAppender = (*textAppender)(nil)

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestNamesAgreeWithTrace checks that every kernel event of the logs at
// hand is named by its descriptor as package trace names it today
// (trace/kernel.go's tables): provider and "Task/Opcode" name.
func TestNamesAgreeWithTrace(t *testing.T) {
	for _, tr := range agreementTraces {
		t.Run(tr.path[strings.LastIndexByte(tr.path, '/')+1:], func(t *testing.T) {
			if _, err := os.Stat(tr.path); err != nil && tr.shared {
				t.Skipf("%s: not here (../shared sits beside a checkout of the workspace, not a fresh clone)", tr.path)
			}
			r, err := trace.Open(tr.path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			d := kernelevents.NewDecoder()
			d.OlderVersions = true
			names := map[string]int{}
			for {
				e, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				p, ok := kernelevents.ProviderByGUID(e.ProviderGUID())
				if !ok {
					continue
				}
				ptr := e.PointerSize()
				if ptr != 4 {
					ptr = 8
				}
				ev, _, err := d.Decode(p, uint16(e.Opcode()), e.Version(), ptr, e.Payload())
				if err != nil {
					continue
				}
				desc := ev.Descriptor()
				if desc.Provider != e.Provider() || desc.DisplayName != e.Name() {
					t.Errorf("%s version %d: kernelevents names it %s/%s, trace %s/%s", ev.Info().Name, e.Version(), desc.Provider, desc.DisplayName, e.Provider(), e.Name())
				}
				names[desc.Provider+"/"+desc.DisplayName]++
			}
			if len(names) == 0 {
				t.Fatal("no kernel event named")
			}
			t.Logf("%d names agree", len(names))
		})
	}
}

// TestKnownDifferences pins where kernelevents and etl's parsers differ, on
// payloads the logs at hand do not hold: each case must still differ as
// described (if one no longer does, drop it here and from the report to
// the switch-over).
func TestKnownDifferences(t *testing.T) {
	d := kernelevents.NewDecoder()
	d.OlderVersions = true
	process := func(version uint8, image string) *etl.Event {
		p := &kernelevents.ProcessStartV4{ProcessID: 4, ParentID: 1, ImageFileName: kernelevents.MakeAnsi([]byte(image)), CommandLine: kernelevents.UTF16Of("x")}
		return &etl.Event{HeaderKind: etl.SystemHeader, HookID: 0x0301, ProviderGUID: etl.ProcessGUID, Opcode: 1, Version: version, PointerSize: 8, Payload: p.Encode(nil, 8)}
	}
	// An image name that is not UTF-8 (Windows-1252 é): etl writes
	// U+FFFD, kernelevents reads the byte as Latin-1 (as etl already read
	// a PDB's name).
	e := process(4, "caf\xe9.exe")
	etlJSON, _ := e.AppendKernelFields(nil, true)
	ev, _, _, err := decodeKernel(d, e)
	if err != nil || !strings.Contains(string(etlJSON), `"ImageFileName":"caf\ufffd.exe"`) || !strings.Contains(string(ev.AppendJSON(nil)), `"ImageFileName":"café.exe"`) {
		t.Errorf("non-UTF-8 image name: etl %s, kernelevents %s (%v)", etlJSON, ev.AppendJSON(nil), err)
	}
	// A Process version newer than 4: etl refuses it; kernelevents, asked
	// for older versions, decodes it with version 4.
	e = process(5, "a.exe")
	if _, ok := e.AppendKernelFields(nil, true); ok {
		t.Error("etl now decodes Process version 5")
	}
	if ev, _, known, err := decodeKernel(d, e); !known || err != nil || ev.Info().Version != 4 {
		t.Errorf("Process version 5: %v %v", known, err)
	}
	// A Thread version older than 2: etl read its first 8 bytes as process
	// and thread (version 1 has them in that order; version 0 the other
	// way round); kernelevents has no layout before version 2.
	e = &etl.Event{HeaderKind: etl.SystemHeader, HookID: 0x0501, ProviderGUID: etl.ThreadGUID, Opcode: 1, Version: 1, PointerSize: 8, Payload: make([]byte, 8)}
	if _, ok := e.AppendKernelFields(nil, true); !ok {
		t.Error("etl no longer decodes Thread version 1")
	}
	if _, _, known, _ := decodeKernel(d, e); known {
		t.Error("kernelevents now decodes Thread version 1")
	}
}
