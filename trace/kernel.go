package trace

import (
	"strconv"
	"strings"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/dynamic"
	"github.com/clrgo/clrevents/etl"
)

// kernelProvider is the name TraceEvent gives the NT kernel logger's
// events ("Windows Kernel/EventTrace" for the log header).
const kernelProvider = "Windows Kernel"

// kernelGroup names one kernel event class (a hook group) and the opcodes
// of it that traces commonly hold.
type kernelGroup struct {
	task    string
	opcodes map[uint8]string
	names   map[uint8]string // "Task/Opcode", built once
	// msnt holds the opcodes TraceEvent shows under the kernel's MOF
	// provider name, msntProvider, rather than kernelProvider: the ones its
	// kernel parser leaves to the MOF descriptions.
	msnt map[uint8]bool
}

// msntProvider is the kernel logger's MOF provider name.
const msntProvider = "MSNT_SystemTrace"

// eventName is the event's name as TraceEvent prints it: the task alone
// for opcode 0 (the EventTrace header), else "Task/Opcode", with the
// number for an opcode not in the table.
func (k *kernelGroup) eventName(op uint8) string {
	if n, ok := k.names[op]; ok {
		return n
	}
	return k.task + "/Opcode(" + strconv.Itoa(int(op)) + ")"
}

// The kernel event classes by hook group (the GUIDs are etl's), with the
// opcodes of the Windows kernel logger's MOF classes that PerfView and
// TraceEvent name.
var kernelGroups = map[uint8]*kernelGroup{
	0x00: {task: "EventTrace", opcodes: map[uint8]string{0: "", 5: "Extension", 8: "RundownComplete", 32: "EndExtension", 80: "PartitionInfoExtension"}},
	0x01: {task: "DiskIO", opcodes: map[uint8]string{10: "Read", 11: "Write", 12: "ReadInit", 13: "WriteInit", 14: "FlushBuffers", 15: "FlushInit"}},
	0x02: {task: "PageFault", opcodes: map[uint8]string{10: "TransitionFault", 11: "DemandZeroFault", 12: "CopyOnWrite", 13: "GuardPageFault", 14: "HardPageFault", 15: "AccessViolation", 32: "Memory/HardFault", 98: "VirtualAlloc", 99: "VirtualFree"}},
	0x03: {task: "Process", opcodes: map[uint8]string{1: "Start", 2: "Stop", 3: "DCStart", 4: "DCStop", 11: "Terminate", 32: "PerfCtr", 33: "PerfCtrRundown", 39: "Defunct"}},
	0x04: {task: "FileIO", opcodes: map[uint8]string{0: "Name", 32: "FileCreate", 35: "FileDelete", 36: "FileRundown", 64: "Create", 65: "Cleanup", 66: "Close", 67: "Read", 68: "Write"}},
	0x05: {task: "Thread", opcodes: map[uint8]string{1: "Start", 2: "Stop", 3: "DCStart", 4: "DCStop", 36: "CSwitch", 50: "ReadyThread", 72: "SetName"}},
	0x06: {task: "TcpIp", opcodes: map[uint8]string{10: "Send", 11: "Recv", 12: "Connect", 13: "Disconnect", 14: "Retransmit", 15: "Accept", 16: "Reconnect", 17: "Fail", 18: "TCPCopy", 26: "SendIPV6", 27: "RecvIPV6", 28: "ConnectIPV6", 29: "DisconnectIPV6", 30: "RetransmitIPV6", 31: "AcceptIPV6"}},
	0x08: {task: "UdpIp", opcodes: map[uint8]string{10: "Send", 11: "Recv", 26: "SendIPV6", 27: "RecvIPV6"}},
	0x09: {task: "Registry", opcodes: map[uint8]string{10: "Create", 11: "Open", 12: "Delete", 13: "Query", 14: "SetValue", 16: "QueryValue"}},
	0x0B: {task: "SystemConfig", opcodes: map[uint8]string{10: "CPU", 11: "PhyDisk", 12: "LogDisk", 13: "NIC", 14: "Video", 15: "Services", 16: "Power", 17: "Network", 22: "PnP", 23: "IDEChannel", 25: "Platform"},
		msnt: map[uint8]bool{25: true}},
	0x0F: {task: "PerfInfo", opcodes: map[uint8]string{46: "Sample", 51: "SysClEnter", 52: "SysClExit", 67: "ThreadedDPC", 68: "ISR", 69: "DPC", 73: "CollectionStart", 74: "CollectionEnd"}},
	0x10: {task: "Heap"},
	0x11: {task: "Object"},
	0x14: {task: "Image", opcodes: map[uint8]string{2: "Unload", 3: "DCStart", 4: "DCStop", 10: "Load", 33: "KernelBase"},
		msnt: map[uint8]bool{33: true}},
	0x17: {task: "CritSec"},
	0x18: {task: "StackWalk", opcodes: map[uint8]string{32: "Stack", 34: "KeyCreate", 35: "KeyDelete", 36: "KeyRundown", 37: "StackKeyKernel", 38: "StackKeyUser"}},
	0x1A: {task: "ALPC"},
	0x1B: {task: "SplitIO"},
	0x1C: {task: "ThreadPool"},
}

// kernelByGUID maps each kernel class GUID to its group.
var kernelByGUID = func() map[clrimpl.GUID]*kernelGroup {
	m := make(map[clrimpl.GUID]*kernelGroup, len(kernelGroups))
	for g, k := range kernelGroups {
		k.nameOpcodes()
		if guid := etl.KernelGroupGUID(g); !guid.IsZero() {
			m[guid] = k
		}
	}
	return m
}()

// nameOpcodes builds names: "Task/Opcode", the task alone for "", and
// an opcode's name as it is when it has a task of its own ("Memory/HardFault"
// in the PageFault class, as TraceEvent names it).
func (k *kernelGroup) nameOpcodes() {
	k.names = make(map[uint8]string, len(k.opcodes))
	for op, name := range k.opcodes {
		switch {
		case name == "":
			k.names[op] = k.task
		case strings.Contains(name, "/"):
			k.names[op] = name
		default:
			k.names[op] = k.task + "/" + name
		}
	}
}

func newClass(task string, opcodes map[uint8]string) *kernelGroup {
	k := &kernelGroup{task: task, opcodes: opcodes}
	k.nameOpcodes()
	return k
}

// kernelGroupOf returns the kernel class with GUID g, or nil.
func kernelGroupOf(g clrimpl.GUID) *kernelGroup { return kernelByGUID[g] }

// otherProviders names ETW providers that PerfView's kernel sessions log
// beside the kernel's classes, as TraceEvent names them.
var otherProviders = map[clrimpl.GUID]string{
	etl.ImageIDGUID:      "KernelTraceControl", // image identity (ImageID, DbgID_RSDS)
	dynamic.MetaDataGUID: "KernelTraceControl", // the merge's event descriptions
	etl.SysConfigGUID:    kernelProvider,       // the merge's system paths and volumes
	clrimpl.MustParseGUID("edd08927-9cc4-4e65-b970-c2560fb5c289"): "Microsoft-Windows-Kernel-File",
}

// otherClasses names, by opcode, the events of the classic (MOF) classes
// of otherProviders, as TraceEvent does ("ImageID/DbgID_RSDS").
var otherClasses = map[clrimpl.GUID]*kernelGroup{
	etl.ImageIDGUID: newClass("ImageID", map[uint8]string{etl.OpImageID: "", etl.OpImageIDNone: "None",
		etl.OpDbgIDRSDS: "DbgID_RSDS", etl.OpDbgIDILRSDS: "DbgID_ILRSDS", etl.OpFileVersion: "FileVersion"}),
	dynamic.MetaDataGUID: newClass("MetaData", map[uint8]string{32: "EventInfo", 33: "EventMapInfo"}),
	etl.SysConfigGUID:    newClass("SysConfig", map[uint8]string{32: "BuildInfo", 33: "SystemPaths", 34: "UnknownVolume", 35: "VolumeMapping"}),
}

// noteProcess keeps the executable's name a Process Start or DCStart
// event gives (Event.ProcessName).
func (r *Reader) noteProcess(e *etl.Event) {
	if !e.IsKernel(etl.GroupProcess, etl.OpStart) && !e.IsKernel(etl.GroupProcess, etl.OpDCStart) {
		return
	}
	if p, err := etl.ParseProcess(e); err == nil && p.ImageFileName != "" {
		if r.procNames == nil {
			r.procNames = map[int64]string{}
		}
		r.procNames[int64(p.ProcessID)] = p.ImageFileName
	}
}

// noteThread keeps the process of a thread a Thread Start or DCStart
// event names, for the CPU samples that follow.
func (r *Reader) noteThread(e *etl.Event) {
	if !e.IsKernel(etl.GroupThread, etl.OpStart) && !e.IsKernel(etl.GroupThread, etl.OpDCStart) {
		return
	}
	if t, err := etl.ParseThread(e); err == nil {
		if r.threads == nil {
			r.threads = map[uint32]uint32{}
		}
		r.threads[t.ThreadID] = t.ProcessID
	}
}

// kernelIDs is the process and thread a kernel event is about, as
// TraceEvent gives them, for the events package etl parses: a CPU
// sample's thread from its payload and that thread's process from the
// trace's Thread events before it (noteThread); a stack walk's and a
// Thread event's from their payloads; an Image or Process event's process
// from its payload, with no thread but for an Image Load (the loading
// thread, from the header); a disk I/O's and a hard fault's thread from
// their payloads and its process from the Thread events; a TcpIp or
// UdpIp event's process from its payload, with no thread. ok is false
// for other events, which keep their header's.
func (r *Reader) kernelIDs(e *etl.Event) (pid, tid int64, ok bool) {
	switch e.KernelGroup() {
	case etl.GroupPerfInfo:
		if e.Opcode != etl.OpSampledProfile {
			return 0, 0, false
		}
		s, err := etl.ParseSampledProfile(e)
		if err != nil {
			return 0, 0, false
		}
		p, known := r.threads[s.ThreadID]
		if !known {
			return -1, int64(s.ThreadID), true
		}
		return int64(p), int64(s.ThreadID), true
	case etl.GroupStackWalk:
		if e.Opcode != etl.OpStack && e.Opcode != etl.OpStackKeyKernel && e.Opcode != etl.OpStackKeyUser {
			return 0, 0, false // a cached stack's definition: no process or thread
		}
		s, err := etl.ParseStackRef(e)
		if err != nil {
			return 0, 0, false
		}
		return int64(s.ProcessID), int64(s.ThreadID), true
	case etl.GroupThread:
		t, err := etl.ParseThread(e)
		if err != nil {
			return 0, 0, false
		}
		return int64(t.ProcessID), int64(t.ThreadID), true
	case etl.GroupImage:
		im, err := etl.ParseImage(e)
		if err != nil {
			return 0, 0, false
		}
		tid := int64(-1)
		if e.Opcode == etl.OpLoad && e.ThreadID != 0xFFFFFFFF {
			tid = int64(e.ThreadID)
		}
		return int64(im.ProcessID), tid, true
	case etl.GroupProcess:
		pr, err := etl.ParseProcess(e)
		if err != nil {
			return 0, 0, false
		}
		return int64(pr.ProcessID), -1, true
	case etl.GroupDiskIO, etl.GroupPageFault:
		tid, ok := e.IssuingThread()
		if !ok {
			return 0, 0, false
		}
		p, known := r.threads[tid]
		if !known {
			return -1, int64(tid), true
		}
		return int64(p), int64(tid), true
	case etl.GroupTcpIP, etl.GroupUdpIP:
		pid, ok := e.NetworkProcess()
		if !ok {
			return 0, 0, false
		}
		return int64(pid), -1, true
	}
	return 0, 0, false
}
