package etl

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/clrgo/clrevents/internal/baseline"
)

// TestKernelSchema: kernel events without a parser decode by their MOF
// layout, by version, with pointers of the event's size; a payload too
// short for its layout keeps its hex form (AppendKernelFields says no).
func TestKernelSchema(t *testing.T) {
	read := pl{}.u32(1).u32(0x60043).u32(20480).u32(0).u64(5669618688).ptr(0xfffff8a0016b9140, 8).ptr(0xfffffa83033b3680, 8).u64(109469)
	v3 := append(append(pl{}, read...), pl{}.u32(2784)...)
	ip6 := func(last byte) pl { b := make(pl, 16); b[0], b[1], b[15] = 0x20, 0x01, last; return b }
	send := pl{}.u32(4).u32(65652)
	send = append(append(send, ip6(1)...), ip6(2)...)
	send = send.u16(0xbd01).u16(0x16fa).u32(1534).u32(1534).u32(0).ptr(0, 4)
	udp := pl{}.u32(2108).u32(391).u32(0x4d00800a).u32(0x3700800a).u16(0xaefa).u16(0x6c07).u32(0).ptr(0, 8)
	for _, c := range []struct {
		name string
		e    *Event
		want string
	}{
		{"DiskIO/Read v2", kev(GroupDiskIO, 10, 8, read),
			`{"DiskNumber":1,"IrpFlags":"0x60043","TransferSize":20480,"Reserved":0,"ByteOffset":5669618688,"FileObject":"0xfffff8a0016b9140","Irp":"0xfffffa83033b3680","HighResResponseTime":109469}`},
		{"DiskIO/Read v3", withVersion(kev(GroupDiskIO, 10, 8, v3), 3),
			`{"DiskNumber":1,"IrpFlags":"0x60043","TransferSize":20480,"Reserved":0,"ByteOffset":5669618688,"FileObject":"0xfffff8a0016b9140","Irp":"0xfffffa83033b3680","HighResResponseTime":109469,"IssuingThreadId":2784}`},
		{"TcpIp/SendIPV6, 32-bit", kev(GroupTcpIP, 26, 4, send),
			`{"PID":4,"size":65652,"daddr":"2001::1","saddr":"2001::2","dport":445,"sport":64022,"startime":1534,"endtime":1534,"seqnum":0,"connid":"0x0"}`},
		{"UdpIp/Send", kev(GroupUdpIP, 10, 8, udp),
			`{"PID":2108,"size":391,"daddr":"10.128.0.77","saddr":"10.128.0.55","dport":64174,"sport":1900,"seqnum":0,"connid":"0x0"}`},
		{"EventTrace/RundownComplete", kev(GroupEventTrace, 8, 8, nil), `{}`},
		{"SystemConfig/Power", kev(GroupSystemConfig, 16, 8, pl{0, 0, 0, 0, 1, 0, 0, 0}), `{"S1":0,"S2":0,"S3":0,"S4":0,"S5":1}`},
		{"ImageID", &Event{HeaderKind: TraceHeader, ProviderGUID: ImageIDGUID, Opcode: OpImageID, PointerSize: 8,
			Payload: append(pl{}.u64(0x77710000).u64(1404928).u32(4).u32(1343270522), 'n', 0, 0, 0)},
			`{"ImageBase":"0x77710000","ImageSize":1404928,"ProcessID":4,"TimeDateStamp":1343270522,"OriginalFileName":"n"}`},
	} {
		out, ok := c.e.AppendKernelFields(nil, true)
		if !ok || string(out) != c.want {
			t.Errorf("%s:\n got %s (%v)\nwant %s", c.name, out, ok, c.want)
		}
	}
	if out, ok := kev(GroupDiskIO, 10, 8, read[:30]).AppendKernelFields(nil, true); ok {
		t.Errorf("short DiskIO/Read decoded: %s", out)
	}
	if KernelSchema(withVersion(kev(GroupDiskIO, 10, 8, read), 1)) != nil {
		t.Error("a layout for DiskIO version 1, older than any known")
	}
	if txt, ok := kev(GroupUdpIP, 10, 8, udp).AppendKernelFields(nil, false); !ok || string(txt[:30]) != `PID=2108 size=391 daddr="10.12` {
		t.Errorf("text form: %s", txt)
	}
}

func withVersion(e *Event, v uint8) *Event { e.Version = v; return e }

// TestHeaderEventFields: the log header event's fields (EventTrace, the
// TRACE_LOGFILE_HEADER) are every field of TraceEvent's line for it, with
// its values: gcevents on any clone, the 4.5.2 trace with ../shared.
func TestHeaderEventFields(t *testing.T) {
	cases := []struct{ name, trace, baseline string }{{"gcevents", gcZip, gcBaseline}}
	if _, err := os.Stat(netZip); err == nil {
		cases = append(cases, struct{ name, trace, baseline string }{"net.4.5.2", netZip, netBaseline})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bl, err := baseline.ParseFile(c.baseline)
			if err != nil {
				t.Fatal(err)
			}
			line := headerLine(t, bl)
			r := mustReader(t, unzipETL(t, c.trace))
			e, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			out, ok := e.AppendKernelFields(nil, true)
			if !ok {
				t.Fatalf("header event (hook %#x) has no fields", e.HookID)
			}
			d := json.NewDecoder(bytes.NewReader(out))
			d.UseNumber()
			var fields map[string]any
			if err := d.Decode(&fields); err != nil {
				t.Fatalf("%s: %v", out, err)
			}
			for _, f := range line.Fields {
				name := f.Name
				v, ok := fields[name]
				if !ok {
					t.Errorf("no field %s (ours: %s)", name, out)
					continue
				}
				if !baseline.SameValue(v, f.Value) {
					t.Errorf("%s = %v, baseline %s", name, v, f.Value)
				}
			}
			if len(fields) != len(line.Fields) {
				t.Errorf("%d fields, baseline %d: %s", len(fields), len(line.Fields), out)
			}
		})
	}
}
