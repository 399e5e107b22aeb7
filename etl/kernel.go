package etl

import (
	"encoding/binary"
	"fmt"

	"github.com/clrgo/clrevents/clrimpl"
)

// The payloads of the NT kernel logger's events that CPU profiles of an
// ETW trace need: CPU samples, the stacks the kernel walks for them, the
// threads' processes and the images (native modules) loaded in each
// process. The layouts are those of the kernel's MOF classes
// (PerfInfo_SampledProfile, StackWalk_Event, StackWalk_Key,
// StackWalk_TypeGroup1, Thread_TypeGroup1, Image_Load), with pointers of
// the event's PointerSize. Each Parse function checks the event's hook
// (group and opcode) and length and reports a short payload with the
// event's offset.

// Kernel hook groups (the high byte of HookID) and opcodes used here.
const (
	GroupEventTrace   = 0x00
	GroupDiskIO       = 0x01
	GroupPageFault    = 0x02
	GroupProcess      = 0x03
	GroupFileIO       = 0x04
	GroupThread       = 0x05
	GroupTcpIP        = 0x06
	GroupUdpIP        = 0x08
	GroupSystemConfig = 0x0B
	GroupPerfInfo     = 0x0F
	GroupImage        = 0x14
	GroupStackWalk    = 0x18

	// Thread and Image opcodes (Process's are the same).
	OpStart   = 1 // Thread/Start
	OpEnd     = 2 // Thread/End, Image/Unload
	OpDCStart = 3 // rundown at the trace's start
	OpDCEnd   = 4 // rundown at the trace's end
	OpLoad    = 10
	OpDefunct = 39 // Process/Defunct: a process that exited, still referenced

	OpSampledProfile  = 46 // PerfInfo/Sample
	OpCollectionStart = 73 // PerfInfo: a profile source's interval

	OpStack          = 32 // StackWalk/Stack: the frames themselves
	OpKeyCreate      = 34 // StackWalk: a cached stack's frames
	OpKeyDelete      = 35
	OpKeyRundown     = 36
	OpStackKeyKernel = 37 // StackWalk: the key of an event's kernel frames
	OpStackKeyUser   = 38 // StackWalk: the key of an event's user frames
)

// KernelGroup is the event class (hook group) of a kernel logger event:
// the high byte of HookID, but for image loads, which the kernel logs with
// the Process group's hook 0x030A and which belong to the Image class (as
// ProviderGUID, ImageLoadGUID, says).
func (e *Event) KernelGroup() uint8 {
	if e.HookID == hookImageLoad {
		return GroupImage
	}
	return uint8(e.HookID >> 8)
}

// hookImageLoad is the hook of an image load: group Process, type 10.
const hookImageLoad = 0x030A

// IsKernel reports whether e is a kernel logger event of the event class
// (KernelGroup) and, when op is not negative, the opcode.
func (e *Event) IsKernel(group uint8, op int) bool {
	switch e.HeaderKind {
	case SystemHeader, CompactSystemHeader, PerfInfoHeader:
	default:
		return false
	}
	return e.KernelGroup() == group && (op < 0 || int(e.Opcode) == op)
}

// SampledProfile is a CPU sample (PerfInfo/Sample): the address the
// processor was executing and the thread it was running.
type SampledProfile struct {
	IP       uint64
	ThreadID uint32
	// Count is the number of samples this event stands for (1 but when
	// the kernel coalesced them).
	Count uint16
}

// ParseSampledProfile reads a PerfInfo/Sample event.
func ParseSampledProfile(e *Event) (SampledProfile, error) {
	if !e.IsKernel(GroupPerfInfo, OpSampledProfile) {
		return SampledProfile{}, e.notKernel("PerfInfo/Sample")
	}
	p, ps := e.Payload, e.ptrSize()
	if len(p) < ps+6 {
		return SampledProfile{}, e.short("PerfInfo/Sample", ps+6)
	}
	return SampledProfile{IP: ptr(p, 0, ps), ThreadID: binary.LittleEndian.Uint32(p[ps:]), Count: binary.LittleEndian.Uint16(p[ps+4:])}, nil
}

// SampleInterval is a PerfInfo/CollectionStart event: the interval of a
// profile source (source 0 is the timer CPU samples come from), in 100 ns
// units.
type SampleInterval struct {
	Source, NewInterval, OldInterval uint32
}

// ParseSampleInterval reads a PerfInfo/CollectionStart event.
func ParseSampleInterval(e *Event) (SampleInterval, error) {
	if !e.IsKernel(GroupPerfInfo, OpCollectionStart) {
		return SampleInterval{}, e.notKernel("PerfInfo/CollectionStart")
	}
	p := e.Payload
	if len(p) < 12 {
		return SampleInterval{}, e.short("PerfInfo/CollectionStart", 12)
	}
	le := binary.LittleEndian
	return SampleInterval{Source: le.Uint32(p), NewInterval: le.Uint32(p[4:]), OldInterval: le.Uint32(p[8:])}, nil
}

// StackRef is what a stack walk event says of the event it belongs to:
// that event's timestamp, process and thread, and either its frames
// (StackWalk/Stack) or the key of cached frames (StackKeyKernel,
// StackKeyUser), defined by a StackDef before or after it.
type StackRef struct {
	EventTimestamp      int64
	ProcessID, ThreadID uint32
	// Key is the cache key of a StackKeyKernel or StackKeyUser event;
	// Kernel tells which.
	Key    uint64
	Kernel bool
	// Frames are the addresses, innermost first, of a StackWalk/Stack
	// event: its payload, PointerSize bytes each (see Frames).
	frames []byte
	ps     int
}

// Frames appends the addresses of a StackWalk/Stack event to dst.
func (s *StackRef) Frames(dst []uint64) []uint64 { return appendPtrs(dst, s.frames, s.ps) }

// HasFrames reports whether the event held its frames (StackWalk/Stack)
// rather than a key.
func (s *StackRef) HasFrames() bool { return s.frames != nil }

// ParseStackRef reads a StackWalk/Stack, StackKeyKernel or StackKeyUser
// event.
func ParseStackRef(e *Event) (StackRef, error) {
	const what = "StackWalk/Stack, StackKeyKernel or StackKeyUser"
	if !e.IsKernel(GroupStackWalk, -1) {
		return StackRef{}, e.notKernel(what)
	}
	p, ps := e.Payload, e.ptrSize()
	if len(p) < 16 {
		return StackRef{}, e.short(what, 16)
	}
	le := binary.LittleEndian
	s := StackRef{EventTimestamp: int64(le.Uint64(p)), ProcessID: le.Uint32(p[8:]), ThreadID: le.Uint32(p[12:]), ps: ps}
	switch e.Opcode {
	case OpStack:
		s.frames = p[16 : 16+(len(p)-16)/ps*ps]
	case OpStackKeyKernel, OpStackKeyUser:
		if len(p) < 16+ps {
			return StackRef{}, e.short(what, 16+ps)
		}
		s.Key, s.Kernel = ptr(p, 16, ps), e.Opcode == OpStackKeyKernel
	default:
		return StackRef{}, e.notKernel(what)
	}
	return s, nil
}

// StackDef is a cached stack's definition (StackWalk KeyCreate,
// KeyDelete or KeyRundown): a key and its frames. References to the key
// (StackKeyKernel, StackKeyUser) made while it was cached resolve to the
// frames of the definition that follows them: the kernel writes a
// definition when it drops the key from its cache (KeyDelete) and for
// every key still cached when the trace stops (KeyRundown); a key may be
// reused after it was deleted.
type StackDef struct {
	Key    uint64
	frames []byte
	ps     int
}

// Frames appends the definition's addresses, innermost first, to dst.
func (s *StackDef) Frames(dst []uint64) []uint64 { return appendPtrs(dst, s.frames, s.ps) }

// ParseStackDef reads a StackWalk KeyCreate, KeyDelete or KeyRundown event.
func ParseStackDef(e *Event) (StackDef, error) {
	const what = "StackWalk KeyCreate, KeyDelete or KeyRundown"
	if !e.IsKernel(GroupStackWalk, -1) || e.Opcode < OpKeyCreate || e.Opcode > OpKeyRundown {
		return StackDef{}, e.notKernel(what)
	}
	p, ps := e.Payload, e.ptrSize()
	if len(p) < ps {
		return StackDef{}, e.short(what, ps)
	}
	return StackDef{Key: ptr(p, 0, ps), frames: p[ps : ps+(len(p)-ps)/ps*ps], ps: ps}, nil
}

// ThreadInfo is a Thread Start, End, DCStart or DCEnd event: which
// process a thread belongs to, from when it starts to when it ends.
type ThreadInfo struct {
	ProcessID, ThreadID uint32
}

// ParseThread reads a Thread Start, End, DCStart or DCEnd event.
func ParseThread(e *Event) (ThreadInfo, error) {
	if !e.IsKernel(GroupThread, -1) || e.Opcode < OpStart || e.Opcode > OpDCEnd {
		return ThreadInfo{}, e.notKernel("Thread Start, End, DCStart or DCEnd")
	}
	p := e.Payload
	if len(p) < 8 {
		return ThreadInfo{}, e.short("Thread", 8)
	}
	return ThreadInfo{ProcessID: binary.LittleEndian.Uint32(p), ThreadID: binary.LittleEndian.Uint32(p[4:])}, nil
}

// Process is a Process Start, End, DCStart or DCEnd event.
type Process struct {
	ProcessID, ParentID, SessionID uint32
	ExitStatus                     int32
	// ImageFileName is the executable's file name (test.exe), as the
	// kernel writes it (ANSI, usually ASCII).
	ImageFileName string
	// CommandLine is the process's command line.
	CommandLine clrimpl.UTF16
}

// ParseProcess reads a Process Start, End, DCStart, DCEnd or Defunct event
// of version 3 or 4 (Windows Vista on; version 4 adds Flags).
func ParseProcess(e *Event) (Process, error) {
	if !e.IsKernel(GroupProcess, -1) || (e.Opcode < OpStart || e.Opcode > OpDCEnd) && e.Opcode != OpDefunct {
		return Process{}, e.notKernel("Process Start, End, DCStart, DCEnd or Defunct")
	}
	if e.Version < 3 || e.Version > 4 {
		return Process{}, fmt.Errorf("etl: Process event at offset %d: version %d (want 3 or 4)", e.Offset, e.Version)
	}
	p, ps := e.Payload, e.ptrSize()
	// UniqueProcessKey, ProcessId, ParentId, SessionId, ExitStatus,
	// DirectoryTableBase, Flags (version 4), UserSID, ImageFileName,
	// CommandLine, and in version 4 two more strings.
	off := 2*ps + 16
	if e.Version == 4 {
		off += 4
	}
	if len(p) < off+4 {
		return Process{}, e.short("Process", off+4)
	}
	le := binary.LittleEndian
	pr := Process{ProcessID: le.Uint32(p[ps:]), ParentID: le.Uint32(p[ps+4:]), SessionID: le.Uint32(p[ps+8:]), ExitStatus: int32(le.Uint32(p[ps+12:]))}
	// The user's SID: 4 zero bytes when there is none, else a TOKEN_USER
	// (a pointer and a 32-bit value, padded to two pointers) followed by
	// the SID (revision, sub-authority count, 6-byte authority, 4 bytes a
	// sub-authority).
	if le.Uint32(p[off:]) == 0 {
		off += 4
	} else {
		tok := 2 * ps
		if len(p) < off+tok+8 {
			return Process{}, e.short("Process", off+tok+8)
		}
		off += tok + 8 + 4*int(p[off+tok+1])
	}
	if off > len(p) {
		return Process{}, e.short("Process", off)
	}
	end := off
	for end < len(p) && p[end] != 0 {
		end++
	}
	if end == len(p) {
		return Process{}, fmt.Errorf("etl: Process event at offset %d: ImageFileName at payload offset %d has no terminator", e.Offset, off)
	}
	pr.ImageFileName = string(p[off:end])
	cmd, _, ok := clrimpl.ReadUTF16Z(p, end+1)
	if !ok {
		return Process{}, fmt.Errorf("etl: Process event at offset %d: CommandLine at payload offset %d has no terminator", e.Offset, end+1)
	}
	pr.CommandLine = cmd
	return pr, nil
}

// Image is an Image Load, Unload, DCStart or DCEnd event: a native module
// mapped into a process (process 0 for the kernel's own modules).
type Image struct {
	Base, Size    uint64
	ProcessID     uint32
	Checksum      uint32
	TimeDateStamp uint32
	DefaultBase   uint64
	// FileName is the image's path as the kernel names it
	// (\Device\HarddiskVolume2\Windows\System32\ntdll.dll).
	FileName clrimpl.UTF16
}

// ParseImage reads an Image Load, Unload, DCStart or DCEnd event of
// version 2 or later (Windows Vista on).
func ParseImage(e *Event) (Image, error) {
	if !e.IsKernel(GroupImage, -1) || !(e.Opcode == OpLoad || (e.Opcode >= OpEnd && e.Opcode <= OpDCEnd)) {
		return Image{}, e.notKernel("Image Load, Unload, DCStart or DCEnd")
	}
	if e.Version < 2 {
		return Image{}, fmt.Errorf("etl: Image event at offset %d: version %d (want 2 or later)", e.Offset, e.Version)
	}
	p, ps := e.Payload, e.ptrSize()
	// ImageBase, ImageSize, ProcessId, ImageChecksum, TimeDateStamp,
	// Reserved0 (signature level and type in version 3), DefaultBase,
	// Reserved1-4, FileName.
	fixed := 3*ps + 8*4
	if len(p) < fixed {
		return Image{}, e.short("Image", fixed)
	}
	le := binary.LittleEndian
	im := Image{Base: ptr(p, 0, ps), Size: ptr(p, ps, ps), ProcessID: le.Uint32(p[2*ps:]),
		Checksum: le.Uint32(p[2*ps+4:]), TimeDateStamp: le.Uint32(p[2*ps+8:]), DefaultBase: ptr(p, 2*ps+16, ps)}
	name, _, ok := clrimpl.ReadUTF16Z(p, fixed)
	if !ok {
		return Image{}, fmt.Errorf("etl: Image event at offset %d: FileName at payload offset %d has no terminator", e.Offset, fixed)
	}
	im.FileName = name
	return im, nil
}

// ptrSize is the event's pointer size, 8 unless it is 4.
func (e *Event) ptrSize() int {
	if e.PointerSize == 4 {
		return 4
	}
	return 8
}

// IssuingThread is the thread a disk I/O or a hard page fault is about,
// as its payload says: DiskIO Read and Write (IssuingThreadId after the
// disk number, flags, size, offset, file object, IRP and response time),
// ReadInit, WriteInit and FlushInit (after the IRP), and
// PageFault/HardFault (TThreadId after the times, the address and the
// file object). ok is false for other events and short payloads.
func (e *Event) IssuingThread() (tid uint32, ok bool) {
	ps := e.ptrSize()
	off := -1
	switch g := e.KernelGroup(); {
	case !e.IsKernel(g, -1):
	case g == GroupDiskIO && (e.Opcode == 10 || e.Opcode == 11): // Read, Write
		off = 16 + 8 + 2*ps + 8
	case g == GroupDiskIO && (e.Opcode == 12 || e.Opcode == 13 || e.Opcode == 15): // ReadInit, WriteInit, FlushInit
		off = ps
	case g == GroupPageFault && e.Opcode == 32: // HardFault
		off = 16 + 2*ps
	}
	if off < 0 || len(e.Payload) < off+4 {
		return 0, false
	}
	return binary.LittleEndian.Uint32(e.Payload[off:]), true
}

// NetworkProcess is the process a TcpIp or UdpIp event is about: the
// first field of every layout but TcpIp/Fail's. ok is false for other
// events and short payloads.
func (e *Event) NetworkProcess() (pid uint32, ok bool) {
	g := e.KernelGroup()
	if !e.IsKernel(g, -1) || g != GroupTcpIP && g != GroupUdpIP || g == GroupTcpIP && e.Opcode == 17 || len(e.Payload) < 4 {
		return 0, false
	}
	return binary.LittleEndian.Uint32(e.Payload), true
}

// The image identity events a kernel session's merge adds (xperf and
// PerfView's KernelTraceControl): classic events of class ImageIDGUID,
// told apart by opcode, logged with each image's rundown and load.
var ImageIDGUID = clrimpl.MustParseGUID("b3e675d7-2554-4f18-830b-2762732560de")

// ImageID opcodes.
const (
	OpImageID     = 0  // ImageID: the image's original file name
	OpDbgIDRSDS   = 36 // ImageID/DbgID_RSDS: the image's PDB
	OpFileVersion = 64 // ImageID/FileVersion
	OpImageIDNone = 32 // ImageID/None
	OpDbgIDILRSDS = 37 // ImageID/DbgID_ILRSDS: an IL image's PDB
)

// DbgID is an ImageID/DbgID_RSDS event: the PDB of the image mapped at
// Base in a process, which a symbol server finds by its GUID and age.
type DbgID struct {
	Base      uint64
	ProcessID uint32
	GUID      clrimpl.GUID
	Age       uint32
	// PDBFileName is the PDB's name as the image records it (ANSI).
	PDBFileName string
}

// ParseDbgID reads an ImageID/DbgID_RSDS (or DbgID_ILRSDS) event.
func ParseDbgID(e *Event) (DbgID, error) {
	if e.ProviderGUID != ImageIDGUID || e.Opcode != OpDbgIDRSDS && e.Opcode != OpDbgIDILRSDS {
		return DbgID{}, fmt.Errorf("etl: event at offset %d is not an ImageID/DbgID_RSDS event", e.Offset)
	}
	p, ps := e.Payload, e.ptrSize()
	if len(p) < ps+24 {
		return DbgID{}, e.short("ImageID/DbgID_RSDS", ps+24)
	}
	d := DbgID{Base: ptr(p, 0, ps), ProcessID: binary.LittleEndian.Uint32(p[ps:]), Age: binary.LittleEndian.Uint32(p[ps+20:])}
	copy(d.GUID[:], p[ps+4:ps+20])
	name, _, ok := clrimpl.ReadAnsiZ(p, ps+24)
	if !ok {
		return DbgID{}, fmt.Errorf("etl: ImageID/DbgID_RSDS event at offset %d: PdbFileName at payload offset %d has no terminator", e.Offset, ps+24)
	}
	d.PDBFileName = name.String()
	return d, nil
}

func (e *Event) notKernel(what string) error {
	return fmt.Errorf("etl: event at offset %d (hook 0x%04x) is not a kernel %s event", e.Offset, e.HookID, what)
}

func (e *Event) short(what string, want int) error {
	return fmt.Errorf("etl: %s event at offset %d: payload of %d bytes, want at least %d", what, e.Offset, len(e.Payload), want)
}

// ptr reads a pointer of ps bytes at off (the caller has checked the
// length).
func ptr(p []byte, off, ps int) uint64 {
	if ps == 4 {
		return uint64(binary.LittleEndian.Uint32(p[off:]))
	}
	return binary.LittleEndian.Uint64(p[off:])
}

func appendPtrs(dst []uint64, b []byte, ps int) []uint64 {
	for off := 0; off+ps <= len(b); off += ps {
		dst = append(dst, ptr(b, off, ps))
	}
	return dst
}
