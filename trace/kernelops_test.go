package trace_test

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/internal/etltest"
	"github.com/clrgo/clrevents/internal/eventfmt"
	"github.com/clrgo/clrevents/kernelevents"
	"github.com/clrgo/clrevents/trace"
)

// TestKernelOperations: context switches, thread names, file system and
// registry operations are decoded and named as TraceEvent names them,
// and get their process and thread as TraceEvent fixes them up: a context
// switch is the new thread's, a file operation the issuing thread's
// (version 2's pointer-sized TTID, version 3's IssuingThreadId) where
// the header names none, each with its process from the Thread events;
// a thread's name is the thread's; a registry operation and an
// operation's end keep their header's. A header that names the thread
// and process wins over the payload. An image's load is the loading
// process's (the header's), its unload the payload's process's. A ready
// thread (Dispatcher/ReadyThread) is the header's, its process where the
// header names none the readying thread's, and it derives its awakened
// thread's process; page faults and virtual memory operations keep their
// header's, under TraceEvent's names (Memory/…, VirtualMem/…), as do
// interrupts, DPCs, system calls, handles and ALPC messages.
func TestKernelOperations(t *testing.T) {
	le := binary.LittleEndian
	const (
		thread, fileIO, registry = 0x05, 0x04, 0x09
		pageFault, perfInfo      = 0x02, 0x0F
		object, alpc             = 0x11, 0x1A
		load, image              = 0x03, 0x14 // the kernel logs image loads with the Process group's hook
		none                     = 0xFFFFFFFF
		pid, tid                 = 20, 55
	)
	threadStart := func(ts int64) []byte {
		p := le.AppendUint32(le.AppendUint32(nil, pid), tid)
		for range 7 {
			p = le.AppendUint64(p, 0)
		}
		return etltest.System(thread, 1, 2, 0, 0, ts, le.AppendUint32(p, 0))
	}
	kernel := func(group, op, version uint8, htid, hpid uint32, ts int64, ev kernelevents.Event) []byte {
		return etltest.System(group, op, version, htid, hpid, ts, ev.Encode(nil, 8))
	}
	type want struct {
		name     string
		pid, tid int64
		text     string // in AppendText's output; "" for an event kernelevents does not decode
	}
	events := [][]byte{
		threadStart(10),
		kernel(thread, 36, 2, none, none, 20, &kernelevents.ThreadCSwitchV2{NewThreadID: tid, OldThreadID: 0, NewThreadPriority: 9,
			OldThreadWaitReason: 6, OldThreadWaitMode: 1, OldThreadState: 5, NewThreadWaitTime: 0x10}),
		kernel(fileIO, 67, 3, none, none, 30, &kernelevents.FileIOReadV3{Offset: 4096, IrpPtr: 0xffffa00000001000, FileObject: 0xffffa00000002000,
			FileKey: 0xffffa00000003000, IssuingThreadId: tid, IoSize: 512}),
		kernel(fileIO, 64, 2, none, none, 40, &kernelevents.FileIOCreateV2{IrpPtr: 0xffffa00000001000, TTID: tid, FileObject: 0xffffa00000002000,
			CreateOptions: 0x01000020, ShareAccess: 3, FileName: kernelevents.UTF16Of(`\Device\HarddiskVolume3\x.txt`)}),
		kernel(fileIO, 64, 3, 77, 30, 45, &kernelevents.FileIOCreateV3{IssuingThreadId: tid, FileName: kernelevents.UTF16Of(`\y`)}),
		kernel(fileIO, 72, 3, none, none, 50, &kernelevents.FileIODirEnumV3{FileKey: 0xffffa00000004000, IssuingThreadId: tid, Length: 616,
			InfoClass: 37, FileName: kernelevents.UTF16Of("*")}),
		kernel(fileIO, 76, 2, 66, none, 55, &kernelevents.FileIOOperationEndV2{IrpPtr: 0xffffa00000001000, NtStatus: -1073741772}),
		kernel(thread, 72, 2, none, none, 60, &kernelevents.ThreadSetNameV2{ProcessID: pid, ThreadID: tid, ThreadName: kernelevents.UTF16Of("worker")}),
		kernel(registry, 11, 2, tid, pid, 70, &kernelevents.RegistryOpenV2{InitialTime: 65, Status: 0xC0000034, KeyHandle: 0xffffb00000000010,
			KeyName: kernelevents.UTF16Of(`SOFTWARE\Contoso`)}),
		kernel(thread, 50, 2, none, none, 80, &kernelevents.DispatcherReadyThreadV2{AwakenedThreadID: tid, AdjustReason: 1, AdjustIncrement: 2, Flags: 5}),
		kernel(thread, 50, 2, tid, none, 81, &kernelevents.DispatcherReadyThreadV2{AwakenedThreadID: 99, AdjustReason: 2, Flags: 8}),
		kernel(pageFault, 11, 2, tid, pid, 82, &kernelevents.MemoryDemandZeroFaultV2{VirtualAddress: 0x7ff000001000, ProgramCounter: 0x7ff800001234}),
		kernel(pageFault, 98, 2, tid, pid, 83, &kernelevents.VirtualMemAllocV2{BaseAddr: 0x1f0000, Length: 65536, ProcessID: 30, Flags: 0x3000}),
		kernel(pageFault, 99, 2, tid, pid, 84, &kernelevents.VirtualMemFreeV2{BaseAddr: 0x1f0000, Length: 4096, ProcessID: pid, Flags: 0x4001}),
		etltest.System(fileIO, 37, 3, tid, pid, 90, make([]byte, 40)),
		kernel(perfInfo, 66, 2, tid, pid, 91, &kernelevents.PerfInfoThreadedDPCV2{InitialTime: 90, Routine: 0xfffff80000201000}),
		kernel(perfInfo, 67, 2, tid, pid, 92, &kernelevents.PerfInfoISRV2{InitialTime: 91, Routine: 0xfffff80000202000, ReturnValue: 1, Vector: 0x51}),
		kernel(perfInfo, 68, 2, tid, pid, 93, &kernelevents.PerfInfoDPCV2{InitialTime: 92, Routine: 0xfffff80000203000}),
		kernel(perfInfo, 69, 2, tid, pid, 94, &kernelevents.PerfInfoTimerDPCV2{InitialTime: 93, Routine: 0xfffff80000204000}),
		kernel(perfInfo, 51, 2, tid, pid, 95, &kernelevents.PerfInfoSysClEnterV2{SysCallAddress: 0xfffff80000205000}),
		kernel(perfInfo, 52, 2, tid, pid, 96, &kernelevents.PerfInfoSysClExitV2{SysCallNtStatus: 0xC0000022}),
		etltest.System(perfInfo, 55, 2, tid, pid, 97, make([]byte, 16)),
		kernel(object, 32, 2, tid, pid, 98, &kernelevents.ObjectCreateHandleV2{Object: 0xffffc00000001000, Handle: 0x1a4, ObjectType: 7}),
		kernel(object, 37, 2, tid, pid, 99, &kernelevents.ObjectTypeDCEndV2{ObjectType: 7, ObjectTypeName: kernelevents.UTF16Of("Process")}),
		kernel(alpc, 33, 2, tid, pid, 100, &kernelevents.ALPCSendMessageV0{MessageID: 4711}), // a newer version, decoded as version 0
		kernel(alpc, 36, 0, tid, pid, 101, &kernelevents.ALPCWaitForNewMessageV0{IsServerPort: 1, PortName: kernelevents.AnsiOf(`\RPC Control\lsasspirpc`)}),
		kernel(load, 10, 2, 8, 4, 100, &kernelevents.ImageLoadV2{ImageBase: 0xfffff80000100000, ProcessID: 0, FileName: kernelevents.UTF16Of(`\SystemRoot\x.sys`)}),
		kernel(load, 10, 2, tid, pid, 110, &kernelevents.ImageLoadV2{ImageBase: 0x7ff800000000, ProcessID: pid, FileName: kernelevents.UTF16Of(`C:\x.dll`)}),
		kernel(image, 2, 2, 8, 4, 120, &kernelevents.ImageUnloadV2{ImageBase: 0x7ff800000000, ProcessID: pid, FileName: kernelevents.UTF16Of(`C:\x.dll`)}),
	}
	wants := []want{
		{"Thread/Start", pid, tid, "ProcessID=20"},
		{"Thread/CSwitch", pid, tid, "OldThreadID=0 NewThreadID=55 NewThreadPriority=9 OldThreadPriority=0 NewThreadQuantum=0 OldThreadQuantum=0 OldThreadWaitReason=UserRequest OldThreadWaitMode=Swappable OldThreadState=Wait OldThreadWaitIdealProcessor=0 NewThreadWaitTime=0x10"},
		{"FileIO/Read", pid, tid, "Offset=4096 IrpPtr=0xffffa00000001000 FileObject=0xffffa00000002000 FileKey=0xffffa00000003000 IoSize=512 IoFlags=0"},
		{"FileIO/Create", pid, tid, `CreateOptions=0x1000020 FileAttributes=0x0 ShareAccess=0x3 FileName="\\Device\\HarddiskVolume3\\x.txt"`},
		{"FileIO/Create", 30, 77, `FileName="\\y"`},
		{"FileIO/DirEnum", pid, tid, `FileKey=0xffffa00000004000 Length=616 InfoClass=37 FileIndex=0 FileName="*"`},
		{"FileIO/OperationEnd", -1, 66, "NtStatus=-1073741772"},
		{"Thread/SetName", pid, tid, `ThreadName="worker"`},
		{"Registry/Open", pid, tid, `Status=0xc0000034 KeyHandle=0xffffb00000000010 KeyName="SOFTWARE\\Contoso" Index=0 InitialTime=65`},
		// The header's thread and process; a ready thread's process, where
		// the header names none, the readying thread's; Reserved not shown.
		{"Dispatcher/ReadyThread", -1, -1, "AwakenedThreadID=55 AdjustReason=Unwait AdjustIncrement=2 Flags=ReadiedFromDPC|ProcessSwappedOut AwakenedProcessID=20"},
		{"Dispatcher/ReadyThread", pid, tid, "AwakenedThreadID=99 AdjustReason=Boost AdjustIncrement=0 Flags=0x8 AwakenedProcessID=-1"},
		{"Memory/DemandZeroFault", pid, tid, "VirtualAddress=0x7ff000001000 ProgramCounter=0x7ff800001234"},
		{"VirtualMem/Alloc", pid, tid, "BaseAddr=0x1f0000 Length=65536 Flags=MEM_COMMIT|MEM_RESERVE"}, // not the owner's ProcessID
		{"VirtualMem/Free", pid, tid, "BaseAddr=0x1f0000 Length=4096 Flags=MEM_DECOMMIT|0x1"},
		{"FileIO/MapFile", pid, tid, ""},
		// Interrupts and DPCs as [MS "DPC class", "ISR class"] and
		// TraceEvent number them, with the header's thread and process.
		{"PerfInfo/ThreadedDPC", pid, tid, "InitialTime=90 Routine=0xfffff80000201000"},
		{"PerfInfo/ISR", pid, tid, "InitialTime=91 Routine=0xfffff80000202000 ReturnValue=1 Vector=81"},
		{"PerfInfo/DPC", pid, tid, "InitialTime=92 Routine=0xfffff80000203000"},
		{"PerfInfo/TimerDPC", pid, tid, "InitialTime=93 Routine=0xfffff80000204000"},
		{"PerfInfo/SysClEnter", pid, tid, "SysCallAddress=0xfffff80000205000"},
		{"PerfInfo/SysClExit", pid, tid, "SysCallNtStatus=0xc0000022"},
		{"PerfInfo/BatchedSample", pid, tid, ""},
		{"Object/CreateHandle", pid, tid, "Object=0xffffc00000001000 Handle=0x1a4 ObjectType=7"},
		{"Object/TypeDCEnd", pid, tid, `ObjectType=7 ObjectTypeName="Process"`},
		{"ALPC/SendMessage", pid, tid, "MessageID=4711"},
		{"ALPC/WaitForNewMessage", pid, tid, `IsServerPort=1 PortName="\\RPC Control\\lsasspirpc"`},
		{"Image/Load", 4, 8, `FileName="\\SystemRoot\\x.sys"`}, // a driver: the header's process, not the payload's 0
		{"Image/Load", pid, tid, "ProcessID=20"},
		{"Image/Unload", pid, -1, "ProcessID=20"}, // the payload's process
	}
	i := 0
	feedStacks(t, events, func(e *trace.Event, _ bool) {
		if e.Provider() != "Windows Kernel" || e.Name() == "EventTrace" || strings.HasPrefix(e.Name(), "EventTrace/") {
			return
		}
		if i >= len(wants) {
			t.Errorf("unexpected event %s", e.Name())
			return
		}
		w := wants[i]
		i++
		// As clrdump writes it: the payload's fields, then the values
		// derived from other events.
		dec := eventfmt.Decode(e)
		if (dec.Event == nil || dec.Err != nil) != (w.text == "") {
			t.Errorf("%s: decoded %v, %v", w.name, dec.Event, dec.Err)
		}
		text := eventfmt.AppendText(nil, e, &dec)
		if e.DisplayName() != w.name || e.ProcessID() != w.pid || e.ThreadID() != w.tid || !strings.Contains(string(text), w.text) {
			t.Errorf("event %d: %s pid %d tid %d %s\nwant %s pid %d tid %d with %s", i-1, e.DisplayName(), e.ProcessID(), e.ThreadID(), text,
				w.name, w.pid, w.tid, w.text)
		}
	})
	if i != len(wants) {
		t.Errorf("%d kernel events, want %d", i, len(wants))
	}
}

// TestKernelEventNames: a kernel event kernelevents does not decode is
// named as TraceEvent names it, by its class's task name there and the
// opcode's name (PerfView's "HeapTrace/Alloc", "Memory/ImageLoadBacked"),
// or its number for an opcode TraceEvent does not name either.
func TestKernelEventNames(t *testing.T) {
	const none = 0xFFFFFFFF
	cases := []struct {
		group, op uint8
		name      string
	}{
		{0x01, 34, "DiskIO/DriverMajorFunctionCall"},
		{0x02, 105, "Memory/ImageLoadBacked"},
		{0x02, 130, "Memory/PageAccess"},
		{0x02, 200, "Memory/Opcode(200)"},
		{0x05, 62, "Thread/Enqueue"},
		{0x06, 22, "TcpIp/DupACK"},
		{0x08, 17, "UdpIp/Fail"},
		{0x0B, 21, "SystemConfig/IRQ"},
		{0x10, 33, "HeapTrace/Alloc"},
		{0x11, 32, "Object/CreateHandle"},
		{0x17, 34, "CritSecTrace/Collision"},
		{0x1A, 33, "ALPC/SendMessage"},
		{0x1B, 32, "SplitIo/VolMgr"},
		{0x1C, 34, "ThreadPoolTrace/CBStart"},
		{0x1C, 99, "ThreadPoolTrace/Opcode(99)"},
	}
	var events [][]byte
	for i, c := range cases {
		events = append(events, etltest.System(c.group, c.op, 2, none, none, int64(10+i), make([]byte, 24)))
	}
	i := 0
	feedStacks(t, events, func(e *trace.Event, _ bool) {
		if e.Provider() != "Windows Kernel" || e.Name() == "EventTrace" || strings.HasPrefix(e.Name(), "EventTrace/") {
			return
		}
		if i < len(cases) && e.DisplayName() != cases[i].name {
			t.Errorf("group %#x opcode %d: %q, want %q", cases[i].group, cases[i].op, e.DisplayName(), cases[i].name)
		}
		i++
	})
	if i != len(cases) {
		t.Errorf("%d kernel events, want %d", i, len(cases))
	}
}
