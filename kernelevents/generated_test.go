package kernelevents

import (
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/clrgo/clrevents/clrimpl"
)

var ptrSizes = []int{4, 8}

// addrs compares network addresses, which have no Equal method, by value.
var addrs = cmp.Comparer(func(a, b netip.Addr) bool { return a == b })

// TestShownFields checks that the JSON of every event type is valid and
// holds its columns' fields, in their order: those TraceEvent shows.
func TestShownFields(t *testing.T) {
	for _, ev := range sampleEvents() {
		out := ev.AppendJSON(nil)
		dec := json.NewDecoder(strings.NewReader(string(out)))
		var keys []string
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			t.Fatalf("%s: %s is no JSON object", ev.Info(), out)
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				t.Fatalf("%s: %s: %v", ev.Info(), out, err)
			}
			keys = append(keys, tok.(string))
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Fatalf("%s: %s: %v", ev.Info(), out, err)
			}
		}
		var cols []string
		for _, c := range ev.Descriptor().Columns {
			// A map-bound field has a number column and a name column
			// (Flags_name); its JSON member is the name.
			if n := len(cols); n > 0 && c.Name == cols[n-1]+"_name" {
				continue
			}
			cols = append(cols, c.Name)
		}
		if strings.Join(keys, ",") != strings.Join(cols, ",") {
			t.Errorf("%s: JSON keys %v, columns %v", ev.Info(), keys, cols)
		}
	}
	// Every field, as TraceEvent shows them (its StartAddr is version 3's
	// Affinity).
	th := &ThreadStartV3{ProcessID: 4, ThreadID: 8, StackBase: 0x1000, TebBase: 0x2000, BasePriority: 9}
	if got, want := string(th.AppendJSON(nil)), `{"ProcessID":4,"ThreadID":8,"StackBase":"0x1000","StackLimit":"0x0","UserStackBase":"0x0","UserStackLimit":"0x0","Affinity":"0x0","Win32StartAddr":"0x0","TebBase":"0x2000","SubProcessTag":"0x0","BasePriority":9,"PagePriority":0,"IoPriority":0,"ThreadFlags":0}`; got != want {
		t.Errorf("Thread/Start: %s, want %s", got, want)
	}
	// Process flags by name, 0 None, as TraceEvent shows them; the user's
	// SID is left out.
	p := &ProcessStartV4{ProcessID: 7, Flags: 2}
	if got := string(p.AppendJSON(nil)); !strings.Contains(got, `"Flags":"Wow64"`) || strings.Contains(got, "UserSID") || !strings.Contains(got, `"UniqueProcessKey":"0x0"`) {
		t.Errorf("Process/Start: %s", got)
	}
	h := &EventTraceHeaderV2{BufferSize: 65536, UtcOffsetMinutes: 480, EndTime: FileTimeOf(time0)}
	out := string(h.AppendText(nil))
	if !strings.HasPrefix(out, "BufferSize=65536 Version=0 ") || !strings.HasSuffix(out, ` LogFileName="" UtcOffsetMinutes=480`) ||
		!strings.Contains(out, ` EndTime="2023-03-14T00:46:50.701061Z" `) || strings.Contains(out, "StandardName") {
		t.Errorf("EventTrace header text: %s", out)
	}
}

// TestNetworkFields checks ports in network byte order and addresses, as
// the wire holds them and as JSON and text show them.
func TestNetworkFields(t *testing.T) {
	e := &TcpIpRecvV2{PID: 7, Size: 100, Daddr: netip.MustParseAddr("10.1.2.3"), Saddr: netip.MustParseAddr("192.168.0.9"), Dport: 443, Sport: 50000, Seqnum: 1, Connid: 0xfeed}
	b := e.Encode(nil, 8)
	if string(b[8:12]) != "\x0a\x01\x02\x03" || string(b[16:18]) != "\x01\xbb" {
		t.Errorf("wire: % x", b)
	}
	want := `{"PID":7,"size":100,"daddr":"10.1.2.3","saddr":"192.168.0.9","dport":443,"sport":50000,"seqnum":1,"connid":"0xfeed"}`
	if got := string(e.AppendJSON(nil)); got != want {
		t.Errorf("JSON %s\nwant %s", got, want)
	}
	if got := string(e.AppendText(nil)); got != `PID=7 size=100 daddr="10.1.2.3" saddr="192.168.0.9" dport=443 sport=50000 seqnum=1 connid=0xfeed` {
		t.Errorf("text %s", got)
	}
	v6 := &TcpIpSendIPV6V2{Daddr: netip.MustParseAddr("fe80::1"), Saddr: netip.MustParseAddr("::ffff:1.2.3.4")}
	var back TcpIpSendIPV6V2
	if _, err := back.Decode(v6.Encode(nil, 4), 4); err != nil || back.Daddr != v6.Daddr || back.Saddr != v6.Saddr {
		t.Errorf("IPv6 round trip: %v %v %v", back.Daddr, back.Saddr, err)
	}
	if got := string(back.AppendJSON(nil)); !strings.Contains(got, `"daddr":"fe80::1","saddr":"::ffff:1.2.3.4"`) {
		t.Errorf("IPv6 JSON %s", got)
	}
	// The zero value writes zero addresses and shows none.
	var zero TcpIpRecvV2
	if b := zero.Encode(nil, 8); len(b) != 32 {
		t.Errorf("zero value: %d bytes", len(b))
	}
	if got := string(zero.AppendJSON(nil)); !strings.Contains(got, `"daddr":"","saddr":""`) {
		t.Errorf("zero value JSON %s", got)
	}
}

// TestFixedCharacterArrays checks that a NUL-padded array is shown up to
// its first NUL, keeps every byte, and is written to its exact size.
func TestFixedCharacterArrays(t *testing.T) {
	raw := make([]byte, 0, 512)
	raw = append(raw, clrimpl.UTF16Of("HOST").Bytes()...)
	raw = append(raw, 0, 0, 'x', 0) // garbage after the terminator
	raw = append(raw, make([]byte, 512-len(raw))...)
	cpu := &SystemConfigCPUV2{MHz: 3000, ComputerName: clrimpl.MakeUTF16(raw), DomainName: UTF16Of("CORP")}
	b := cpu.Encode(nil, 8)
	if len(b) != 20+512+268+8 {
		t.Fatalf("CPU payload of %d bytes", len(b))
	}
	var back SystemConfigCPUV2
	if _, err := back.Decode(b, 8); err != nil {
		t.Fatal(err)
	}
	if back.ComputerName.Len() != 256 || back.ComputerName.TrimNUL().String() != "HOST" || back.DomainName.TrimNUL().String() != "CORP" {
		t.Errorf("ComputerName %q (%d), DomainName %q", back.ComputerName.TrimNUL(), back.ComputerName.Len(), back.DomainName.TrimNUL())
	}
	if got := string(back.AppendJSON(nil)); !strings.Contains(got, `"ComputerName":"HOST","DomainName":"CORP"`) {
		t.Errorf("JSON %s", got)
	}
	if string(back.Encode(nil, 8)) != string(b) {
		t.Error("re-encoding differs: the bytes after the terminator were lost")
	}
}

// TestUserSID decodes a process's SID behind its TOKEN_USER at both
// pointer sizes, and no SID.
func TestUserSID(t *testing.T) {
	sid := []byte{1, 5, 0, 0, 0, 0, 0, 5, 21, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0xe9, 3, 0, 0}
	p := &ProcessStartV4{ProcessID: 4, UserSID: WBEMSIDOf(sid), ImageFileName: AnsiOf("a.exe"), CommandLine: UTF16Of("a b")}
	for _, ptr := range ptrSizes {
		var back ProcessStartV4
		if _, err := back.Decode(p.Encode(nil, ptr), ptr); err != nil {
			t.Fatal(err)
		}
		if got := back.UserSID.String(); got != "S-1-5-21-1-2-3-1001" {
			t.Errorf("ptr %d: SID %s", ptr, got)
		}
		if back.ImageFileName.String() != "a.exe" || back.CommandLine.String() != "a b" {
			t.Errorf("ptr %d: fields after the SID: %q %q", ptr, back.ImageFileName, back.CommandLine)
		}
	}
	none := &ProcessStartV4{ImageFileName: AnsiOf("b.exe")}
	b := none.Encode(nil, 8)
	if string(b[36:40]) != "\x00\x00\x00\x00" || string(b[40:46]) != "b.exe\x00" {
		t.Errorf("no SID: % x", b)
	}
	var back ProcessStartV4
	if _, err := back.Decode(b, 8); err != nil || !back.UserSID.IsEmpty() || back.ImageFileName.String() != "b.exe" {
		t.Errorf("no SID: %v %v %q", err, back.UserSID, back.ImageFileName)
	}
}

// TestStackFrames checks that a stack's frames take the rest of the
// payload, whole pointers only.
func TestStackFrames(t *testing.T) {
	s := &StackWalkStackV2{EventTimeStamp: 99, StackProcess: 4, StackThread: 8, Stack: clrimpl.PointerArrayOf(8, 0x7ff1, 0x7ff2, 0x7ff3)}
	b := s.Encode(nil, 4)
	if len(b) != 16+12 {
		t.Fatalf("%d bytes", len(b))
	}
	var back StackWalkStackV2
	n, err := back.Decode(append(b, 0xAA), 4) // a byte short of a fourth frame
	if err != nil || n != len(b) || back.Stack.Len() != 3 || back.Stack.At(2) != 0x7ff3 {
		t.Errorf("n=%d err=%v frames %v", n, err, back.Stack)
	}
	if got := string(back.AppendText(nil)); got != `EventTimeStamp=99 StackProcess=4 StackThread=8 Stack=["0x7ff1","0x7ff2","0x7ff3"]` {
		t.Errorf("text %s", got)
	}
}

func TestDecoder(t *testing.T) {
	d := NewDecoder()
	for _, ev := range sampleEvents() {
		info := ev.Info()
		for _, ptr := range ptrSizes {
			payload := ev.Encode(nil, ptr)
			got, n, err := d.Decode(info.Provider, info.ID, info.Version, ptr, payload)
			if err != nil || n != len(payload) || got.Info() != info {
				t.Fatalf("%s: Decode = %v, %d, %v", info, got, n, err)
			}
			if diff := cmp.Diff(ev, got, addrs); diff != "" {
				t.Errorf("%s ptr %d: (-want +got)\n%s", info, ptr, diff)
			}
			if allocs := testing.AllocsPerRun(10, func() { d.Decode(info.Provider, info.ID, info.Version, ptr, payload) }); allocs != 0 {
				t.Errorf("%s: Decoder.Decode allocates %v times", info, allocs)
			}
		}
	}
	if _, _, err := d.Decode(ProviderFileIo, 37, 3, 8, make([]byte, 40)); !errors.Is(err, ErrUnknownEvent) {
		t.Errorf("FileIO/MapFile, which the schema lacks: %v", err)
	}
}

// TestOlderVersions decodes a version the schema lacks with the newest
// older one, as etl's layouts did: SystemConfig/CPU version 3 appends
// fields to version 2.
func TestOlderVersions(t *testing.T) {
	v2 := &SystemConfigCPUV2{MHz: 3408, NumberOfProcessors: 8, ComputerName: UTF16Of("PC"), DomainName: UTF16Of("WG")}
	payload := append(v2.Encode(nil, 8), make([]byte, 20)...)
	d := NewDecoder()
	if _, _, err := d.Decode(ProviderSystemConfig, 10, 3, 8, payload); !errors.Is(err, ErrUnknownEvent) {
		t.Fatalf("v3 without OlderVersions: %v", err)
	}
	d.OlderVersions = true
	ev, n, err := d.Decode(ProviderSystemConfig, 10, 3, 8, payload)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Info().Version != 2 || len(payload)-n != 20 {
		t.Errorf("decoded as version %d with %d extra bytes, want 2 and 20", ev.Info().Version, len(payload)-n)
	}
}

// TestLookup checks the table against the facts of the schema: classes by
// GUID, events by opcode, and their names as TraceEvent shows them.
func TestLookup(t *testing.T) {
	for _, c := range []struct {
		guid         string
		opcode       uint16
		version      uint8
		name         string
		provider     string
		display      string
		opcodeNumber Opcode
	}{
		{"3d6fa8d1-fe05-11d0-9dda-00c04fd7ba7c", 3, 3, "ThreadDCStart_V3", "Windows Kernel", "Thread/DCStart", OpcodeDCStart},
		{"3d6fa8d0-fe05-11d0-9dda-00c04fd7ba7c", 39, 4, "ProcessDefunct_V4", "Windows Kernel", "Process/Defunct", 39},
		{"ce1dbfb4-137e-4da6-87b0-3f59aa102cbc", 46, 2, "PerfInfoSample_V2", "Windows Kernel", "PerfInfo/Sample", 46},
		{"def2fe46-7bd6-4b80-bd94-f57fe20d0ce3", 32, 2, "StackWalkStack_V2", "Windows Kernel", "StackWalk/Stack", 32},
		{"68fdd900-4a3e-11d1-84f4-0000f80464e3", 0, 2, "EventTraceHeader_V2", "Windows Kernel", "EventTrace", 0},
		{"3d6fa8d3-fe05-11d0-9dda-00c04fd7ba7c", 32, 2, "MemoryHardFault_V2", "Windows Kernel", "Memory/HardFault", 32},
		{"2cb15d1d-5fc1-11d2-abe1-00a0c911f518", 33, 2, "ImageKernelBase_V2", "MSNT_SystemTrace", "Image/KernelBase", 33},
		{"2cb15d1d-5fc1-11d2-abe1-00a0c911f518", 2, 2, "ImageUnload_V2", "Windows Kernel", "Image/Unload", 2},
		{"b3e675d7-2554-4f18-830b-2762732560de", 36, 2, "DbgID_RSDS_V2", "KernelTraceControl", "ImageID/DbgID_RSDS", 36},
		{"b3e675d7-2554-4f18-830b-2762732560de", 0, 2, "ImageID_V2", "KernelTraceControl", "ImageID", 0},
		{"9b79ee91-b5fd-41c0-a243-4248e266e9d0", 35, 0, "VolumeMapping_V0", "Windows Kernel", "SysConfig/VolumeMapping", 35},
		{"9a280ac0-c8e0-11d1-84e2-00c04fb998a2", 34, 2, "TcpIpTCPCopyIPV6_V2", "Windows Kernel", "TcpIp/TCPCopyIPV6", 34},
	} {
		p, ok := ProviderByGUID(MustParseGUID(c.guid))
		if !ok {
			t.Errorf("no class %s", c.guid)
			continue
		}
		info, ok := Lookup(p, c.opcode, c.version)
		if !ok || info.Name != c.name {
			t.Errorf("Lookup(%s, %d, %d) = %v, want %s", p, c.opcode, c.version, info, c.name)
			continue
		}
		d := info.Descriptor()
		if d.Provider != c.provider || d.DisplayName != c.display || info.Opcode != c.opcodeNumber || d.ID != c.opcode || d.ProviderGUID != p.GUID() {
			t.Errorf("%s: provider %q, name %q, opcode %d, ID %d, GUID %s", c.name, d.Provider, d.DisplayName, info.Opcode, d.ID, d.ProviderGUID)
		}
		if typ, ok := Table().Lookup("Windows Kernel", MustParseGUID(c.guid), c.opcode, c.version); !ok || typ.Descriptor() != d {
			t.Errorf("Table().Lookup by the shown name and the class GUID: %v %v", typ, ok)
		}
	}
}

// time0 is the end time of the log testdata/traces/gcevents.etl.zip.
var time0 = time.Date(2023, 3, 14, 0, 46, 50, 701061000, time.UTC)
