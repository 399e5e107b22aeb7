package trace

import (
	"strconv"
	"sync"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/dynamic"
	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/kernelevents"
)

// The Windows kernel's events and those KernelTraceControl adds to a
// kernel session are decoded with package kernelevents, whatever tables
// the Reader was given: the front door needs their facts (which process
// a thread is in, which executable a process runs, a sample's thread, a
// stack walk's event) for the shape of every event of an ETW trace. This
// file names them as TraceEvent does, gives each its process and thread
// as TraceEvent does, and keeps the thread and process maps.

// kernelProvider is the name TraceEvent gives the NT kernel logger's
// events ("Windows Kernel/EventTrace" for the log header).
const kernelProvider = "Windows Kernel"

// kernelGroup names one kernel event class (a hook group) and the opcodes
// of it that traces commonly hold.
type kernelGroup struct {
	task string
	// opcodes names the opcodes kernelevents has no type for; the names
	// of those it has are its types' (nameOpcodes).
	opcodes map[uint8]string
	names   map[uint8]string // "Task/Opcode", built once
	// msnt holds the opcodes TraceEvent shows under the kernel's MOF
	// provider name, msntProvider, rather than kernelProvider: the ones its
	// kernel parser leaves to the MOF descriptions (the kernelevents types
	// whose descriptors name that provider).
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

// The kernel event classes by hook group (the GUIDs are etl's), under
// the task names TraceEvent gives them, with the opcodes that TraceEvent
// (PerfView) names and kernelevents does not decode, by TraceEvent's
// names (an opcode of neither is "Task/Opcode(N)"). The names of the
// events kernelevents decodes are its types' display names.
func newKernelGroups() map[uint8]*kernelGroup {
	return map[uint8]*kernelGroup{
		0x00: {task: "EventTrace", opcodes: map[uint8]string{80: "PartitionInfoExtension"}},
		0x01: {task: "DiskIO", opcodes: map[uint8]string{34: "DriverMajorFunctionCall", 35: "DriverMajorFunctionReturn", 37: "DriverCompletionRoutine",
			52: "DriverCompleteRequest", 53: "DriverCompleteRequestReturn"}},
		0x02: {task: "Memory", opcodes: map[uint8]string{35: "InMemory", 73: "PFMappedSectionCreate", 76: "SessionDCStop", 79: "PFMappedSectionDelete",
			100: "HeapRangeRundown", 101: "HeapRangeCreate", 102: "HeapRangeReserve", 103: "HeapRangeRelease", 104: "HeapRangeDestroy",
			105: "ImageLoadBacked", 112: "SystemMemInfo", 115: "InMemoryStoreFault", 117: "InMemoryActive", 118: "PageAccess",
			119: "PageRelease", 120: "RangeAccess", 121: "RangeRelease", 122: "Combine", 123: "KernelMemUsage", 124: "MMStats",
			125: "ProcessMemInfo", 126: "MemInfoSessionWS", 127: "VirtualRotate", 128: "VirtualAllocDCStart", 129: "VirtualAllocDCStop",
			130: "PageAccess", 131: "RemoveFromWS", 132: "WSSharableRundown", 133: "InMemoryActiveRundown"}},
		0x03: {task: "Process", opcodes: map[uint8]string{11: "Terminate"}},
		0x04: {task: "FileIO", opcodes: map[uint8]string{37: "MapFile", 38: "UnmapFile", 39: "MapFileDCStart", 40: "MapFileDCStop"}},
		0x05: {task: "Thread", opcodes: map[uint8]string{37: "CompCS", 62: "Enqueue", 63: "Dequeue"}},
		0x06: {task: "TcpIp", opcodes: map[uint8]string{19: "ARPCopy", 20: "FullACK", 21: "PartACK", 22: "DupACK"}},
		0x08: {task: "UdpIp", opcodes: map[uint8]string{17: "Fail"}},
		0x09: {task: "Registry"},
		0x0B: {task: "SystemConfig", opcodes: map[uint8]string{14: "Video", 21: "IRQ"}},
		0x0F: {task: "PerfInfo", opcodes: map[uint8]string{34: "Mark", 47: "PMCSample", 50: "ISR", 55: "BatchedSample", 58: "DebuggerEnabled"}},
		0x10: {task: "HeapTrace", opcodes: map[uint8]string{32: "Create", 33: "Alloc", 34: "ReAlloc", 35: "Destroy", 36: "Free", 37: "Expand",
			38: "SnapShot", 42: "Contract", 43: "Lock", 44: "Unlock", 45: "Validate", 46: "Walk"}},
		0x11: {task: "Object", opcodes: map[uint8]string{34: "DuplicateHandle", 39: "HandleDCEnd"}},
		0x14: {task: "Image"},
		0x17: {task: "CritSecTrace", opcodes: map[uint8]string{34: "Collision", 35: "Initialize"}},
		0x18: {task: "StackWalk"},
		0x1A: {task: "ALPC"},
		0x1B: {task: "SplitIo", opcodes: map[uint8]string{32: "VolMgr"}},
		0x1C: {task: "ThreadPoolTrace", opcodes: map[uint8]string{32: "CBEnqueue", 33: "CBDequeue", 34: "CBStart", 35: "CBStop", 36: "CBCancel",
			37: "PoolCreate", 38: "PoolClose", 39: "ThreadMinSet", 40: "ThreadMaxSet"}},
	}
}

// kernelClasses are the kernel's classes and the other classic classes
// an ETW log's events are named by, built when an ETW log first needs
// them: a program that reads only EventPipe traces does not build them
// (20 classes' maps of names, from every kernelevents type, were most of
// package trace's start-up: 143 of its 147 allocations).
type kernelClasses struct {
	// groups are the kernel's classes by hook group.
	groups map[uint8]*kernelGroup
	// byGUID maps each kernel class GUID to its group.
	byGUID map[clrimpl.GUID]*kernelGroup
	// other names, by opcode, the events of the classic (MOF) classes of
	// otherProviders, as TraceEvent does ("ImageID/DbgID_RSDS"):
	// kernelevents' display names, and these.
	other map[clrimpl.GUID]*kernelGroup
}

var etwClasses = sync.OnceValue(func() *kernelClasses {
	c := &kernelClasses{groups: newKernelGroups()}
	c.byGUID = make(map[clrimpl.GUID]*kernelGroup, len(c.groups))
	for g, k := range c.groups {
		if guid := etl.KernelGroupGUID(g); !guid.IsZero() {
			k.nameOpcodes(guid)
			c.byGUID[guid] = k
		}
	}
	c.other = map[clrimpl.GUID]*kernelGroup{
		imageIDGUID:          newClass("ImageID", imageIDGUID, map[uint8]string{32: "None"}),
		dynamic.MetaDataGUID: newClass("MetaData", dynamic.MetaDataGUID, map[uint8]string{32: "EventInfo", 33: "EventMapInfo"}),
		sysConfigGUID:        newClass("SysConfig", sysConfigGUID, nil),
		winSatGUID:           newClass("WinSat", winSatGUID, nil),
	}
	return c
})

// nameOpcodes builds names: kernelevents' display names of the class's
// types, then "Task/Opcode" for the other opcodes.
func (k *kernelGroup) nameOpcodes(class clrimpl.GUID) {
	k.names = make(map[uint8]string, len(k.opcodes))
	for _, info := range kernelevents.Events() {
		if d := info.Descriptor(); d.ProviderGUID == class {
			k.names[uint8(d.Opcode)] = d.DisplayName
			if d.Provider == msntProvider {
				if k.msnt == nil {
					k.msnt = map[uint8]bool{}
				}
				k.msnt[uint8(d.Opcode)] = true
			}
		}
	}
	for op, name := range k.opcodes {
		k.names[op] = k.task + "/" + name
	}
}

func newClass(task string, class clrimpl.GUID, opcodes map[uint8]string) *kernelGroup {
	k := &kernelGroup{task: task, opcodes: opcodes}
	k.nameOpcodes(class)
	return k
}

// kernelGroupOf returns the kernel class with GUID g, or nil.
func kernelGroupOf(g clrimpl.GUID) *kernelGroup { return etwClasses().byGUID[g] }

// The classes of KernelTraceControl's image identity events, and of the
// system description and WinSAT assessment a merge adds.
var (
	imageIDGUID   = kernelevents.ProviderImageID.GUID()
	sysConfigGUID = kernelevents.ProviderSysConfig.GUID()
	winSatGUID    = kernelevents.ProviderWinSat.GUID()
)

// otherProviders names ETW providers that PerfView's kernel sessions log
// beside the kernel's classes, as TraceEvent names them; made at the first
// look-up (an ETW event of a provider outside the kernel's classes).
var otherProviders = sync.OnceValue(func() map[clrimpl.GUID]string {
	return map[clrimpl.GUID]string{
		imageIDGUID:          "KernelTraceControl", // image identity (ImageID, DbgID_RSDS)
		dynamic.MetaDataGUID: "KernelTraceControl", // the merge's event descriptions
		sysConfigGUID:        kernelProvider,       // the merge's system paths and volumes
		winSatGUID:           "KernelTraceControl", // the merge's WinSAT assessment
		clrimpl.MustParseGUID("edd08927-9cc4-4e65-b970-c2560fb5c289"): "Microsoft-Windows-Kernel-File",
	}
})

// The kernel classes whose events the Reader keeps maps of.
var (
	threadGUID  = kernelevents.ProviderThread.GUID()
	processGUID = kernelevents.ProviderProcess.GUID()
)

// classicID is the event ID an ETW event has in the tables: a classic
// (MOF) event has none, and the tables key it by its opcode, as
// kernelevents does; other events by their ID.
func classicID(e *etl.Event) uint16 {
	switch e.HeaderKind {
	case etl.SystemHeader, etl.CompactSystemHeader, etl.PerfInfoHeader, etl.TraceHeader, etl.InstanceHeader:
		return uint16(e.Opcode)
	}
	return e.ID
}

// kernelValue decodes a kernel or KernelTraceControl event with its
// kernelevents type, the newest that is not newer than the event (the
// kernel only appends fields to a class), into the Reader's value of the
// type (ownValue: the payload's paths as they are, not userPaths'); nil
// when kernelevents has none or the payload does not fit it.
func (e *Event) kernelValue() clrimpl.Event {
	ref := e.typ
	if !ref.ok() {
		ref = e.r.find(e.res.provs, classicID(e.et), e.et.Version, true)
		if !ref.ok() {
			return nil
		}
	}
	v := e.r.ownValue(ref)
	if _, err := v.Decode(e.et.Payload, e.et.PointerSize); err != nil {
		return nil
	}
	return v
}

// noteKernel keeps what a Thread or Process Start or DCStart event says:
// the thread's process, for the CPU samples that follow, and the
// executable's name (Event.ProcessName); and the names FileIO and
// registry events give files and keys (noteName).
func (r *Reader) noteKernel(e *Event) {
	x := e.et
	if x.Opcode != 1 && x.Opcode != 3 {
		// FileIO's naming opcodes (0, 32, 35, 36, 64) and the
		// registry's (10 to 27) are not 1 or 3.
		if x.Opcode == 0 || x.Opcode >= 10 && x.Opcode <= 36 || x.Opcode == 64 {
			r.noteName(e)
		}
		return
	}
	if x.ProviderGUID != threadGUID && x.ProviderGUID != processGUID {
		return
	}
	switch v := e.kernelValue().(type) {
	case kernelevents.ThreadEvent:
		t := v.ThreadFields()
		if r.threads == nil {
			r.threads = map[uint32]uint32{}
		}
		r.threads[t.ThreadID] = t.ProcessID
	case kernelevents.ProcessEvent:
		p := v.ProcessFields()
		if name := p.ImageFileName.String(); name != "" {
			if r.procNames == nil {
				r.procNames = map[int64]string{}
			}
			r.procNames[int64(p.ProcessID)] = name
		}
	}
}

// headerOr is a disk I/O's process and thread as TraceEvent fixes them
// up: the header's where it names them, else the payload's issuing thread
// and that thread's process from the trace's Thread events.
func (e *Event) headerOr(issuing uint32) (pid, tid int64, ok bool) {
	t := issuing
	if e.et.ThreadID != 0xFFFFFFFF {
		t = e.et.ThreadID
	}
	pid, tid, ok = e.threadsProcess(t)
	if e.et.ProcessID != 0xFFFFFFFF {
		pid = int64(e.et.ProcessID)
	}
	return pid, tid, ok
}

// threadsProcess is thread tid and its process from the trace's Thread
// events so far, or, for a thread that was running before they began,
// from the first that ends it (endNames: a circular or cut log's); -1
// when none names it.
func (e *Event) threadsProcess(tid uint32) (pid, t int64, ok bool) {
	if p, known := e.r.threads[tid]; known {
		return int64(p), int64(tid), true
	}
	if p, known := e.r.endedThread(tid, e.et.Timestamp); known {
		return p, int64(tid), true
	}
	return -1, int64(tid), true
}

// kernelIDs is the process and thread a kernel event is about, as
// TraceEvent gives them: a CPU sample's thread from its payload and that
// thread's process from the trace's Thread events before it (noteKernel),
// or for the logging program's thread from the log header;
// a stack walk's and a Thread event's from their payloads; an Image or
// Process event's process from its payload, with no thread, but for an
// Image Load, which is the loading process's and thread's (the header's,
// where it names them); a process's counters'
// (Process/PerfCtr and PerfCtrRundown) and a service's (SystemConfig/
// Services, whose thread is the header's) from their payloads; a disk
// I/O's the header's, or where it names none the issuing thread from the
// payload and its process from the Thread events (headerOr; a buffer
// flush the same, and a file operation's with version 2's TTID or
// version 3's IssuingThreadId, and a context switch's with the new
// thread); a ready thread's (Dispatcher/ReadyThread) the header's, its
// process where the header names none the readying thread's from the
// Thread events; a thread name's from its payload; a hard
// fault's thread from its payload and its process from the Thread events;
// a TcpIp or UdpIp event's process from its payload, with no thread. ok
// is false for other events, which keep their header's. created is true
// for a Thread or Process event, which the thread that made it logs (the
// header's: the one its stack walks name).
func (e *Event) kernelIDs() (pid, tid int64, created, ok bool) {
	switch v := e.kernelValue().(type) {
	case *kernelevents.PerfInfoSampleV2:
		pid, tid, ok = e.threadsProcess(v.ThreadID)
		return pid, tid, false, ok
	case *kernelevents.StackWalkStackV2:
		return int64(v.StackProcess), int64(v.StackThread), false, true
	case kernelevents.StackWalkKeyRefEvent:
		f := v.StackWalkKeyRefFields()
		return int64(f.StackProcess), int64(f.StackThread), false, true
	case kernelevents.ThreadEvent:
		f := v.ThreadFields()
		return int64(f.ProcessID), int64(f.ThreadID), true, true
	case kernelevents.ImageEvent:
		f := v.ImageFields()
		pid, tid := int64(f.ProcessID), int64(-1)
		if f.Kind == kernelevents.KindImageLoad {
			// A load is the loading process's and thread's, as its header
			// says (a driver's payload names process 0).
			if e.et.ThreadID != 0xFFFFFFFF {
				tid = int64(e.et.ThreadID)
			}
			if e.et.ProcessID != 0xFFFFFFFF {
				pid = int64(e.et.ProcessID)
			}
		}
		return pid, tid, false, true
	case kernelevents.ProcessEvent:
		return int64(v.ProcessFields().ProcessID), -1, true, true
	case kernelevents.ProcessCountersEvent:
		return int64(v.ProcessCountersFields().ProcessID), -1, false, true
	case *kernelevents.SystemConfigServicesV2:
		// The service's process; the thread is the header's (the
		// logging session's rundown).
		tid := int64(-1)
		if e.et.ThreadID != 0xFFFFFFFF {
			tid = int64(e.et.ThreadID)
		}
		return int64(v.ProcessID), tid, false, true
	case kernelevents.DiskIOEvent:
		if f := v.DiskIOFields(); f.HasIssuingThreadId {
			pid, tid, ok = e.headerOr(f.IssuingThreadId)
			return pid, tid, false, ok
		}
	case kernelevents.DiskIOInitEvent:
		if f := v.DiskIOInitFields(); f.HasIssuingThreadId {
			pid, tid, ok = e.headerOr(f.IssuingThreadId)
			return pid, tid, false, ok
		}
	case *kernelevents.DiskIOFlushBuffersV3:
		pid, tid, ok = e.headerOr(v.IssuingThreadId)
		return pid, tid, false, ok
	case *kernelevents.MemoryHardFaultV2:
		pid, tid, ok = e.threadsProcess(v.TThreadId)
		return pid, tid, false, ok
	case *kernelevents.ThreadCSwitchV2:
		pid, tid, ok = e.headerOr(v.NewThreadID)
		return pid, tid, false, ok
	case *kernelevents.DispatcherReadyThreadV2:
		// The readying thread's, as the header names it, and where the
		// header names no process, that thread's.
		if e.et.ThreadID != 0xFFFFFFFF {
			pid, tid, ok = e.headerOr(e.et.ThreadID)
			return pid, tid, false, ok
		}
	case *kernelevents.ThreadSetNameV2:
		return int64(v.ProcessID), int64(v.ThreadID), false, true
	case kernelevents.TcpIpEvent:
		return int64(v.TcpIpFields().PID), -1, false, true
	case kernelevents.TcpIpConnectEvent:
		return int64(v.TcpIpConnectFields().PID), -1, false, true
	case kernelevents.TcpIpV6Event:
		return int64(v.TcpIpV6Fields().PID), -1, false, true
	case kernelevents.TcpIpV6ConnectEvent:
		return int64(v.TcpIpV6ConnectFields().PID), -1, false, true
	case kernelevents.UdpIpEvent:
		return int64(v.UdpIpFields().PID), -1, false, true
	case kernelevents.UdpIpV6Event:
		return int64(v.UdpIpV6Fields().PID), -1, false, true
	case *kernelevents.TcpIpSendV2:
		return int64(v.PID), -1, false, true
	case *kernelevents.TcpIpSendIPV6V2:
		return int64(v.PID), -1, false, true
	default:
		if t, isOp := fileOpThread(v); isOp {
			pid, tid, ok = e.headerOr(t)
			return pid, tid, false, ok
		}
	}
	return 0, 0, false, false
}

// fileOpThread is a file system operation's issuing thread (version 3's
// IssuingThreadId, or version 2's pointer-sized TTID); isOp is false for
// other events.
func fileOpThread(v clrimpl.Event) (tid uint32, isOp bool) {
	var v3 bool
	var ttid uint64
	switch v := v.(type) {
	case kernelevents.FileIOCreateEvent:
		f := v.FileIOCreateFields()
		v3, tid, ttid = f.HasIssuingThreadId, f.IssuingThreadId, f.TTID
	case kernelevents.FileIOSimpleOpEvent:
		f := v.FileIOSimpleOpFields()
		v3, tid, ttid = f.HasIssuingThreadId, f.IssuingThreadId, f.TTID
	case kernelevents.FileIOReadWriteEvent:
		f := v.FileIOReadWriteFields()
		v3, tid, ttid = f.HasIssuingThreadId, f.IssuingThreadId, f.TTID
	case kernelevents.FileIOInfoEvent:
		f := v.FileIOInfoFields()
		v3, tid, ttid = f.HasIssuingThreadId, f.IssuingThreadId, f.TTID
	case kernelevents.FileIODirEnumEvent:
		f := v.FileIODirEnumFields()
		v3, tid, ttid = f.HasIssuingThreadId, f.IssuingThreadId, f.TTID
	default:
		return 0, false
	}
	if !v3 {
		tid = uint32(ttid)
	}
	return tid, true
}
