package etl

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/clrgo/clrevents/internal/baseline"
)

// kev is a kernel event with a system header of the hook group and
// opcode, pointers of ps bytes, and payload p.
func kev(group, op uint8, ps int, p []byte) *Event {
	return &Event{HeaderKind: SystemHeader, HookID: uint16(group)<<8 | uint16(op), Opcode: op, Version: 2, PointerSize: ps, Payload: p, Offset: 4096}
}

type pl []byte

// errOf is a parser's error, its value dropped.
func errOf[T any](_ T, err error) error { return err }

func (b pl) u16(v uint16) pl { return binary.LittleEndian.AppendUint16(b, v) }
func (b pl) u32(v uint32) pl { return binary.LittleEndian.AppendUint32(b, v) }
func (b pl) u64(v uint64) pl { return binary.LittleEndian.AppendUint64(b, v) }
func (b pl) ptr(v uint64, ps int) pl {
	if ps == 4 {
		return b.u32(uint32(v))
	}
	return b.u64(v)
}
func (b pl) wstr(s string) pl {
	for _, r := range s {
		b = b.u16(uint16(r))
	}
	return b.u16(0)
}

func TestParseKernel(t *testing.T) {
	for _, ps := range []int{4, 8} {
		t.Run(strconv.Itoa(8*ps)+"bit", func(t *testing.T) {
			s, err := ParseSampledProfile(kev(GroupPerfInfo, OpSampledProfile, ps, pl{}.ptr(0x7ff01234, ps).u32(77).u16(3).u16(0)))
			if err != nil || s != (SampledProfile{IP: 0x7ff01234, ThreadID: 77, Count: 3}) {
				t.Errorf("SampledProfile = %+v, %v", s, err)
			}
			iv, err := ParseSampleInterval(kev(GroupPerfInfo, OpCollectionStart, ps, pl{}.u32(0).u32(5000).u32(10000).wstr("Timer")))
			if err != nil || iv != (SampleInterval{0, 5000, 10000}) {
				t.Errorf("SampleInterval = %+v, %v", iv, err)
			}
			ref, err := ParseStackRef(kev(GroupStackWalk, OpStack, ps, pl{}.u64(123456).u32(10).u32(77).ptr(0x1000, ps).ptr(0x2000, ps).ptr(0x3000, ps)))
			if fr := ref.Frames(nil); err != nil || ref.EventTimestamp != 123456 || ref.ProcessID != 10 || ref.ThreadID != 77 || !ref.HasFrames() || len(fr) != 3 || fr[0] != 0x1000 || fr[2] != 0x3000 {
				t.Errorf("Stack = %+v %x, %v", ref, fr, err)
			}
			for _, op := range []uint8{OpStackKeyKernel, OpStackKeyUser} {
				ref, err := ParseStackRef(kev(GroupStackWalk, op, ps, pl{}.u64(99).u32(10).u32(77).ptr(0xabc0, ps)))
				if err != nil || ref.Key != 0xabc0 || ref.Kernel != (op == OpStackKeyKernel) || ref.HasFrames() {
					t.Errorf("op %d: StackKey = %+v, %v", op, ref, err)
				}
			}
			def, err := ParseStackDef(kev(GroupStackWalk, OpKeyRundown, ps, pl{}.ptr(0xabc0, ps).ptr(0x10, ps).ptr(0x20, ps)))
			if fr := def.Frames(nil); err != nil || def.Key != 0xabc0 || len(fr) != 2 || fr[1] != 0x20 {
				t.Errorf("KeyRundown = %+v %x, %v", def, fr, err)
			}
			th, err := ParseThread(kev(GroupThread, OpDCStart, ps, pl{}.u32(10).u32(77).ptr(0, ps)))
			if err != nil || th != (ThreadInfo{10, 77}) {
				t.Errorf("Thread = %+v, %v", th, err)
			}
			img := pl{}.ptr(0x10000000, ps).ptr(0x5000, ps).u32(10).u32(0xc0ffee).u32(0x5f000000).u32(0).ptr(0x10000000, ps).u32(0).u32(0).u32(0).u32(0).wstr(`\Device\HarddiskVolume2\Windows\System32\ntdll.dll`)
			im, err := ParseImage(kev(GroupImage, OpLoad, ps, img))
			if err != nil || im.Base != 0x10000000 || im.Size != 0x5000 || im.ProcessID != 10 || im.Checksum != 0xc0ffee || im.TimeDateStamp != 0x5f000000 ||
				im.DefaultBase != 0x10000000 || !strings.HasSuffix(im.FileName.String(), `System32\ntdll.dll`) {
				t.Errorf("Image = %+v, %v", im, err)
			}
			for _, v := range []uint8{3, 4} {
				for _, withSID := range []bool{false, true} {
					pr := pl{}.ptr(0xfffffa80, ps).u32(3644).u32(3508).u32(1).u32(259).ptr(0x1000, ps)
					if v == 4 {
						pr = pr.u32(0) // Flags
					}
					if withSID {
						pr = pr.ptr(0xfffff8a0, ps).ptr(0, ps)                  // TOKEN_USER
						pr = append(pr, 1, 2, 0, 0, 0, 0, 0, 5).u32(21).u32(42) // S-1-5-21-42
					} else {
						pr = pr.u32(0)
					}
					pr = append(append(pr, "Test.x86.exe"...), 0).wstr(`Test.x86.exe -n 3`).wstr("").wstr("")
					e := kev(GroupProcess, OpDCStart, ps, pr)
					e.Version = v
					got, err := ParseProcess(e)
					if err != nil || got.ProcessID != 3644 || got.ParentID != 3508 || got.SessionID != 1 || got.ExitStatus != 259 ||
						got.ImageFileName != "Test.x86.exe" || got.CommandLine.String() != "Test.x86.exe -n 3" {
						t.Errorf("Process v%d (SID %v) = %+v %q, %v", v, withSID, got, got.CommandLine.String(), err)
					}
					for _, n := range []int{10, len(pr) - 40, len(pr) - 8} {
						cut := kev(GroupProcess, OpDCStart, ps, pr[:n])
						cut.Version = v
						if _, err := ParseProcess(cut); err == nil || !strings.Contains(err.Error(), "offset 4096") || strings.Contains(err.Error(), "version") {
							t.Errorf("Process v%d cut to %d bytes: %v", v, n, err)
						}
					}
				}
			}
			// Every cut short of the fixed part is an error naming the
			// offset; so is a file name without its terminator.
			for n := range 3*ps + 32 {
				if _, err := ParseImage(kev(GroupImage, OpLoad, ps, img[:n])); err == nil || !strings.Contains(err.Error(), "offset 4096") {
					t.Fatalf("Image cut to %d bytes: %v", n, err)
				}
			}
			if _, err := ParseImage(kev(GroupImage, OpLoad, ps, img[:len(img)-2])); err == nil {
				t.Error("Image without a terminated file name: no error")
			}
		})
	}
	// Wrong hooks and short payloads.
	if _, err := ParseSampledProfile(kev(GroupThread, OpSampledProfile, 8, make([]byte, 16))); err == nil || !strings.Contains(err.Error(), "not a kernel PerfInfo/Sample") {
		t.Errorf("wrong group: %v", err)
	}
	if _, err := ParseSampledProfile(&Event{HeaderKind: EventHeader, HookID: 0x0F2E, Opcode: 46, PointerSize: 8, Payload: make([]byte, 16)}); err == nil {
		t.Error("an EventHeader event parsed as a kernel sample")
	}
	for _, c := range []struct {
		name string
		err  error
	}{
		{"sample", errOf(ParseSampledProfile(kev(GroupPerfInfo, OpSampledProfile, 8, make([]byte, 13))))},
		{"interval", errOf(ParseSampleInterval(kev(GroupPerfInfo, OpCollectionStart, 8, make([]byte, 11))))},
		{"stack", errOf(ParseStackRef(kev(GroupStackWalk, OpStack, 8, make([]byte, 15))))},
		{"key", errOf(ParseStackRef(kev(GroupStackWalk, OpStackKeyUser, 8, make([]byte, 20))))},
		{"def", errOf(ParseStackDef(kev(GroupStackWalk, OpKeyDelete, 8, make([]byte, 7))))},
		{"thread", errOf(ParseThread(kev(GroupThread, OpStart, 8, make([]byte, 7))))},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), "at offset 4096") || !strings.Contains(c.err.Error(), "want at least") {
			t.Errorf("%s: short payload: %v", c.name, c.err)
		}
	}
	old := kev(GroupImage, OpLoad, 8, make([]byte, 100))
	old.Version = 1
	if _, err := ParseImage(old); err == nil || !strings.Contains(err.Error(), "version 1") {
		t.Errorf("Image version 1: %v", err)
	}
}

// addr formats an address as the baseline does: 0x and at least eight
// hexadecimal digits.
func addr(v uint64) string { return fmt.Sprintf("0x%08x", v) }

// TestKernelPayloadsBaseline compares the parsed kernel payloads of the
// 4.5.2 trace with TraceEvent's values on the baseline's PerfInfo/Sample
// and Image/DCStart lines.
func TestKernelPayloadsBaseline(t *testing.T) {
	data := netETL(t)
	bl, err := baseline.ParseFile(netBaseline)
	if err != nil {
		t.Fatal(err)
	}
	r := mustReader(t, data)
	type key struct {
		ms  string
		len int
	}
	type proc struct {
		Process
		cmd string // CommandLine aliases the reader's buffer
	}
	samples, images, procs, dbgs := map[key]SampledProfile{}, map[key]Image{}, map[key]proc{}, map[key]DbgID{}
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		k := key{baseline.FormatMSec(r.RelativeMSec(e.Timestamp)), len(e.Payload)}
		switch {
		case e.IsKernel(GroupPerfInfo, OpSampledProfile):
			s, err := ParseSampledProfile(e)
			if err != nil {
				t.Fatal(err)
			}
			samples[k] = s
		case e.IsKernel(GroupProcess, OpDCStart), e.IsKernel(GroupProcess, OpStart):
			pr, err := ParseProcess(e)
			if err != nil {
				t.Fatal(err)
			}
			procs[k] = proc{pr, pr.CommandLine.String()}
		case e.ProviderGUID == ImageIDGUID && e.Opcode == OpDbgIDRSDS:
			d, err := ParseDbgID(e)
			if err != nil {
				t.Fatal(err)
			}
			dbgs[k] = d
		case e.IsKernel(GroupImage, OpDCStart):
			im, err := ParseImage(e)
			if err != nil {
				t.Fatal(err)
			}
			if _, dup := images[k]; !dup {
				images[k] = im
			}
		}
	}
	checked := 0
	for _, b := range bl.Events {
		k := key{b.MSecText, b.DataLen}
		want := map[string]string{}
		switch b.FullName() {
		case "Windows Kernel/PerfInfo/Sample":
			s, ok := samples[k]
			if !ok {
				t.Errorf("line %d: no sample at %s ms", b.Line, b.MSecText)
				continue
			}
			want["InstructionPointer"] = addr(s.IP)
			want["Count"] = strconv.Itoa(int(s.Count))
		case "Windows Kernel/Process/DCStart", "Windows Kernel/Process/Start":
			pr, ok := procs[k]
			if !ok {
				t.Errorf("line %d: no process at %s ms", b.Line, b.MSecText)
				continue
			}
			want["ProcessID"] = n0(int64(pr.ProcessID))
			want["ParentID"] = n0(int64(pr.ParentID))
			want["ImageFileName"] = cut20(pr.ImageFileName)
			want["CommandLine"] = cut20(pr.cmd)
			want["ExitStatus"] = n0(int64(pr.ExitStatus))
			want["SessionID"] = n0(int64(int32(pr.SessionID)))
		case "KernelTraceControl/ImageID/DbgID_RSDS":
			d, ok := dbgs[k]
			if !ok {
				t.Errorf("line %d: no DbgID_RSDS at %s ms", b.Line, b.MSecText)
				continue
			}
			want["ImageBase"] = addr(d.Base)
			want["GuidSig"] = cut20(d.GUID.String())
			want["Age"] = n0(int64(d.Age))
			want["PDBFileName"] = cut20(d.PDBFileName)
		case "Windows Kernel/Image/DCStart":
			im, ok := images[k]
			if !ok {
				t.Errorf("line %d: no image at %s ms", b.Line, b.MSecText)
				continue
			}
			want["ImageBase"] = addr(im.Base)
			want["ImageSize"] = n0(int64(im.Size))
			want["ImageChecksum"] = n0(int64(im.Checksum))
			want["DefaultBase"] = addr(im.DefaultBase)
			if b.PID != int64(im.ProcessID) {
				t.Errorf("line %d: image process %d, baseline PID %d", b.Line, im.ProcessID, b.PID)
			}
		default:
			continue
		}
		for name, w := range want {
			if got, _ := b.Field(name); got != w {
				t.Errorf("line %d: %s %s = %s, baseline %s", b.Line, b.FullName(), name, w, got)
			}
		}
		checked++
	}
	if checked < 5 {
		t.Fatalf("only %d baseline lines checked", checked)
	}
	t.Logf("%d baseline lines checked", checked)
}

// FuzzKernelPayloads: no payload makes a kernel parser panic or read out of
// bounds, and what parses stays within the payload.
func FuzzKernelPayloads(f *testing.F) {
	f.Add([]byte{}, uint8(OpSampledProfile), false, uint8(2))
	f.Add(make([]byte, 90), uint8(OpDCStart), true, uint8(4))
	f.Add(append(make([]byte, 60), 'a', 0, 0, 0), uint8(OpLoad), true, uint8(2))
	f.Add(make([]byte, 40), uint8(OpStack), true, uint8(2))
	f.Add(make([]byte, 24), uint8(OpKeyRundown), false, uint8(2))
	f.Add(make([]byte, 24), uint8(OpStackKeyUser), true, uint8(2))
	// A Latin-1 PDB name: each byte becomes two in the Go string.
	f.Add(append(append(make([]byte, 32), bytes.Repeat([]byte{0xe9}, 40)...), 0), uint8(OpDbgIDRSDS), true, uint8(2))
	f.Fuzz(func(t *testing.T, p []byte, op uint8, wide bool, version uint8) {
		ps := 4
		if wide {
			ps = 8
		}
		for _, g := range []uint8{GroupPerfInfo, GroupStackWalk, GroupThread, GroupImage, GroupProcess, GroupDiskIO, GroupPageFault, GroupTcpIP, GroupUdpIP} {
			e := kev(g, op, ps, p)
			e.Version = version
			ParseSampledProfile(e)
			ParseSampleInterval(e)
			if r, err := ParseStackRef(e); err == nil && len(r.Frames(nil))*ps > len(p) {
				t.Fatalf("%d frames from %d bytes", len(r.Frames(nil)), len(p))
			}
			if d, err := ParseStackDef(e); err == nil && len(d.Frames(nil))*ps > len(p) {
				t.Fatalf("%d frames from %d bytes", len(d.Frames(nil)), len(p))
			}
			ParseThread(e)
			e.IssuingThread()
			e.NetworkProcess()
			c := *e
			c.HeaderKind, c.ProviderGUID = TraceHeader, ImageIDGUID
			// A PDB name byte that is not UTF-8 reads as Latin-1 and
			// takes two bytes in Go, so count characters.
			if d, err := ParseDbgID(&c); err == nil && utf8.RuneCountInString(d.PDBFileName) > len(p) {
				t.Fatal("PDB name longer than the payload")
			}
			if out, ok := c.AppendKernelFields(nil, true); ok && !json.Valid(out) {
				t.Fatalf("invalid JSON %s", out)
			}
			if out, ok := e.AppendKernelFields(nil, true); ok && !json.Valid(out) {
				t.Fatalf("invalid JSON %s", out)
			}
			e.AppendKernelFields(nil, false)
			if im, err := ParseImage(e); err == nil && len(im.FileName.Bytes()) > len(p) {
				t.Fatal("file name longer than the payload")
			}
			if pr, err := ParseProcess(e); err == nil && len(pr.ImageFileName)+len(pr.CommandLine.Bytes()) > len(p) {
				t.Fatal("names longer than the payload")
			}
		}
	})
}

// TestIssuingThreadAndNetworkProcess: the thread of disk I/O and hard
// faults, and the process of TCP and UDP events, from their payloads.
func TestIssuingThreadAndNetworkProcess(t *testing.T) {
	for _, ps := range []int{4, 8} {
		read := pl{}.u32(0).u32(0).u32(4096).u32(0).u64(1<<20).ptr(0xf11e, ps).ptr(0x1a, ps).u64(99).u32(2784)
		initEv := pl{}.ptr(0x1a, ps).u32(3992)
		fault := pl{}.u64(1).u64(2).ptr(0x7770, ps).ptr(0xf11e, ps).u32(55).u32(4096)
		for _, c := range []struct {
			e     *Event
			want  uint32
			after int // payload bytes after the thread
		}{
			{kev(GroupDiskIO, 10, ps, read), 2784, 0},
			{kev(GroupDiskIO, 11, ps, read), 2784, 0},
			{kev(GroupDiskIO, 12, ps, initEv), 3992, 0},
			{kev(GroupDiskIO, 15, ps, initEv), 3992, 0},
			{kev(GroupPageFault, 32, ps, fault), 55, 4},
		} {
			if tid, ok := c.e.IssuingThread(); !ok || tid != c.want {
				t.Errorf("%d-byte pointers, hook %#x: %d %v, want %d", ps, c.e.HookID, tid, ok, c.want)
			}
			c.e.Payload = c.e.Payload[:len(c.e.Payload)-c.after-1]
			if _, ok := c.e.IssuingThread(); ok {
				t.Errorf("hook %#x: a thread from a short payload", c.e.HookID)
			}
		}
	}
	if _, ok := kev(GroupDiskIO, 14, 8, make([]byte, 64)).IssuingThread(); ok {
		t.Error("FlushBuffers: a thread")
	}
	for _, c := range []struct {
		e  *Event
		ok bool
	}{
		{kev(GroupTcpIP, 26, 8, pl{}.u32(4).u32(65652)), true},
		{kev(GroupUdpIP, 11, 8, pl{}.u32(4).u32(84)), true},
		{kev(GroupTcpIP, 17, 8, pl{}.u16(1).u16(2)), false}, // Fail: no PID
		{kev(GroupTcpIP, 10, 8, pl{}.u16(4)), false},        // short
		{kev(GroupDiskIO, 10, 8, pl{}.u32(4)), false},
	} {
		if pid, ok := c.e.NetworkProcess(); ok != c.ok || ok && pid != 4 {
			t.Errorf("hook %#x: %d %v", c.e.HookID, pid, ok)
		}
	}
}

func TestParseDbgID(t *testing.T) {
	for _, ps := range []int{4, 8} {
		guid := []byte{0xdf, 0xd8, 0x83, 0xec, 0x59, 0x55, 0xe0, 0x46, 0xb6, 0x30, 0x13, 0x3e, 0xbd, 0x97, 0x92, 0x66}
		p := append(append(pl{}.ptr(0x77710000, ps).u32(4), guid...).u32(2), "wntdll.pdb\x00"...)
		e := &Event{HeaderKind: TraceHeader, ProviderGUID: ImageIDGUID, Opcode: OpDbgIDRSDS, PointerSize: ps, Payload: p, Offset: 4096}
		d, err := ParseDbgID(e)
		if err != nil || d.Base != 0x77710000 || d.ProcessID != 4 || d.GUID.String() != "ec83d8df-5559-46e0-b630-133ebd979266" || d.Age != 2 || d.PDBFileName != "wntdll.pdb" {
			t.Errorf("%d-byte pointers: %+v, %v", ps, d, err)
		}
		out, ok := e.AppendKernelFields(nil, true)
		if want := `{"ImageBase":"0x77710000","ProcessID":4,"GuidSig":"ec83d8df-5559-46e0-b630-133ebd979266","Age":2,"PDBFileName":"wntdll.pdb"}`; !ok || string(out) != want {
			t.Errorf("fields %s, want %s", out, want)
		}
		for _, n := range []int{ps + 23, len(p) - 1} {
			e.Payload = p[:n]
			if _, err := ParseDbgID(e); err == nil || !strings.Contains(err.Error(), "offset 4096") {
				t.Errorf("cut to %d bytes: %v", n, err)
			}
		}
	}
	if _, err := ParseDbgID(kev(GroupImage, OpDbgIDRSDS, 8, make([]byte, 64))); err == nil {
		t.Error("a kernel Image event parsed as DbgID_RSDS")
	}
}

// TestAppendKernelFields: each parsed kind as JSON (valid, TraceEvent's
// field names) and as Name=value pairs; other events are left alone.
func TestAppendKernelFields(t *testing.T) {
	for _, c := range []struct {
		e          *Event
		json, text string
	}{
		{kev(GroupPerfInfo, OpSampledProfile, 8, pl{}.ptr(0xfffff80021561f43, 8).u32(2784).u16(1).u16(0)),
			`{"InstructionPointer":"0xfffff80021561f43","ThreadID":2784,"Count":1}`,
			`InstructionPointer=0xfffff80021561f43 ThreadID=2784 Count=1`},
		{kev(GroupStackWalk, OpStack, 4, pl{}.u64(99).u32(10).u32(77).ptr(0x1000, 4).ptr(0x2000, 4)),
			`{"EventTimeStamp":99,"StackProcess":10,"StackThread":77,"Stack":["0x1000","0x2000"]}`,
			`EventTimeStamp=99 StackProcess=10 StackThread=77 Stack=["0x1000","0x2000"]`},
		{kev(GroupStackWalk, OpStackKeyUser, 8, pl{}.u64(99).u32(10).u32(77).ptr(0xabc0, 8)),
			`{"EventTimeStamp":99,"StackProcess":10,"StackThread":77,"StackKey":"0xabc0"}`, ""},
		{kev(GroupStackWalk, OpKeyDelete, 8, pl{}.ptr(0xabc0, 8).ptr(0x10, 8)),
			`{"StackKey":"0xabc0","Stack":["0x10"]}`, ""},
		{kev(GroupThread, OpStart, 8, pl{}.u32(10).u32(77)),
			`{"ProcessID":10,"ThreadID":77}`, `ProcessID=10 ThreadID=77`},
		{kev(GroupImage, OpLoad, 8, pl{}.ptr(0x10000000, 8).ptr(0x5000, 8).u32(10).u32(7).u32(8).u32(0).ptr(0x10000000, 8).u32(0).u32(0).u32(0).u32(0).wstr(`C:\a "b".dll`)),
			`{"ImageBase":"0x10000000","ImageSize":20480,"ProcessID":10,"ImageChecksum":7,"TimeDateStamp":8,"DefaultBase":"0x10000000","FileName":"C:\\a \"b\".dll"}`, ""},
	} {
		got, ok := c.e.AppendKernelFields([]byte("x"), true)
		if !ok || string(got) != "x"+c.json || !json.Valid(got[1:]) {
			t.Errorf("hook %#x: %s (%v), want %s", c.e.HookID, got, ok, c.json)
		}
		if c.text != "" {
			if got, _ := c.e.AppendKernelFields(nil, false); string(got) != c.text {
				t.Errorf("hook %#x text: %s, want %s", c.e.HookID, got, c.text)
			}
		}
	}
	for _, e := range []*Event{
		kev(GroupPerfInfo, OpSampledProfile, 8, make([]byte, 3)), // short
		kev(0x04, 64, 8, make([]byte, 40)),                       // FileIO: not parsed here
		{HeaderKind: EventHeader, HookID: 0x0F2E, Opcode: 46, PointerSize: 8, Payload: make([]byte, 16)},
	} {
		if got, ok := e.AppendKernelFields([]byte("x"), true); ok || string(got) != "x" {
			t.Errorf("hook %#x: %q %v, want dst unchanged and false", e.HookID, got, ok)
		}
	}
}
