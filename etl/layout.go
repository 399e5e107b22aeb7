package etl

import "github.com/clrgo/clrevents/clrimpl"

// Sizes of the fixed structures, in bytes.
const (
	bufferHeaderSize   = 72 // WMI_BUFFER_HEADER
	systemHeaderSize   = 32 // SYSTEM_TRACE_HEADER
	compactHeaderSize  = 24 // SYSTEM_TRACE_HEADER without KernelTime/UserTime
	perfInfoHeaderSize = 16 // PERFINFO_TRACE_HEADER
	traceHeaderSize    = 48 // EVENT_TRACE_HEADER
	instanceHeaderSize = 72 // EVENT_INSTANCE_GUID_HEADER
	eventHeaderSize    = 80 // EVENT_HEADER
	messageHeaderSize  = 8  // MESSAGE_TRACE_HEADER
	extItemHeaderSize  = 8  // on-disk EVENT_HEADER_EXTENDED_DATA_ITEM head

	// maxBufferSize bounds the size of one buffer, stated or expanded. ETW
	// itself limits buffers to 16 MB.
	maxBufferSize = 64 << 20
)

// TRACE_HEADER_TYPE_* values: byte 2 of an event's first word.
const (
	typeSystem32      = 1
	typeSystem64      = 2
	typeCompact32     = 3
	typeCompact64     = 4
	typeFullHeader32  = 10
	typeInstance32    = 11
	typeTimed         = 12
	typeError         = 13
	typeWnodeHeader   = 14
	typeMessage       = 15
	typePerfInfo32    = 16
	typePerfInfo64    = 17
	typeEventHeader32 = 18
	typeEventHeader64 = 19
	typeFullHeader64  = 20
	typeInstance64    = 21
)

// Marker flag bits: byte 3 of an event's first word.
const (
	markerTraceHeader = 0x80 // TRACE_HEADER_FLAG
	markerEventTrace  = 0x40 // TRACE_HEADER_EVENT_TRACE
	markerMessage     = 0x10 // TRACE_MESSAGE
)

// Buffer flags (WMI_BUFFER_HEADER.BufferFlag, ETW_BUFFER_FLAG_*).
const (
	BufferFlagFlushMarker      = 0x0001 // the buffer was flushed
	BufferFlagEventsLost       = 0x0002 // events were lost while this buffer was current
	BufferFlagBufferLost       = 0x0004 // buffers were lost before this one
	BufferFlagRTBacklogCorrupt = 0x0008
	BufferFlagRTBacklog        = 0x0010
	BufferFlagProcessorIndex   = 0x0020 // ClientContext holds a 16-bit processor index
	BufferFlagCompressed       = 0x0040 // the data after the header is LZ77-compressed
)

// Buffer types (WMI_BUFFER_HEADER.BufferType, ETW_BUFFER_TYPE_*).
const (
	BufferTypeGeneric     = 0 // ordinary events
	BufferTypeRundown     = 1 // rundown events
	BufferTypeCtxSwap     = 2 // context switches
	BufferTypeRefTime     = 3 // reference time
	BufferTypeHeader      = 4 // the first buffer, with the log header
	BufferTypeBatched     = 5 // batched events
	BufferTypeEmptyMarker = 6 // an empty marker buffer
	BufferTypeDbgInfo     = 7 // debug information
)

// Event header flags (EVENT_HEADER.Flags, EVENT_HEADER_FLAG_*). Events
// read from the older header kinds get FlagClassicHeader plus the 32- or
// 64-bit flag, as the Windows consumer API reports them.
const (
	FlagExtendedInfo   = 0x0001 // extended data items follow the header
	FlagPrivateSession = 0x0002 // logged by a private session
	FlagStringOnly     = 0x0004 // the payload is one NUL-terminated UTF-16 string
	FlagTraceMessage   = 0x0008 // a WPP trace message
	FlagNoCPUTime      = 0x0010 // ProcessorTime holds no CPU times
	Flag32BitHeader    = 0x0020 // logged by a 32-bit process: 4-byte pointers
	Flag64BitHeader    = 0x0040 // logged by a 64-bit process: 8-byte pointers
	FlagDecodeGUID     = 0x0080 // decode with the provider's decode GUID
	FlagClassicHeader  = 0x0100 // a classic (pre-Vista) header kind
	FlagProcessorIndex = 0x0200 // the processor number is a 16-bit index
)

// Extended data item types (EVENT_HEADER_EXT_TYPE_*).
const (
	ExtRelatedActivityID = 0x0001 // GUID
	ExtSID               = 0x0002 // SID of the logging user
	ExtTSID              = 0x0003 // uint32 terminal session id
	ExtInstanceInfo      = 0x0004 // uint32 instance id, uint32 parent instance id, parent GUID
	ExtStackTrace32      = 0x0005 // uint64 MatchId, then uint32 return addresses
	ExtStackTrace64      = 0x0006 // uint64 MatchId, then uint64 return addresses
	ExtPEBSIndex         = 0x0007 // uint64
	ExtPMCCounters       = 0x0008 // uint64 counters
	ExtPSMKey            = 0x0009
	ExtEventKey          = 0x000A // uint64
	ExtEventSchemaTL     = 0x000B // TraceLogging metadata
	ExtProvTraits        = 0x000C // provider traits (name, group GUID, ...)
	ExtProcessStartKey   = 0x000D // uint64
	ExtControlGUID       = 0x000E
	ExtQPCDelta          = 0x000F
	ExtContainerID       = 0x0010
	ExtStackKey32        = 0x0011
	ExtStackKey64        = 0x0012
)

// Trace message option flags (TRACE_MESSAGE_*), for MessageHeader events.
const (
	messageSequence    = 0x01
	messageGUID        = 0x02
	messageComponentID = 0x04
	messageTimestamp   = 0x08
	messageSystemInfo  = 0x20
)

// Clock types (TRACE_LOGFILE_HEADER.ReservedFlags).
const (
	ClockRaw        = 0 // treated as QPC
	ClockQPC        = 1 // QueryPerformanceCounter ticks at PerfFreq
	ClockSystemTime = 2 // FILETIME, 100 ns units
	ClockCPUCycle   = 3 // CPU cycle counter at CPUSpeedMHz
)

// Kernel event group GUIDs, as the Windows consumer API and TraceEvent name
// the classic kernel event classes. The high byte of a system event's hook
// id is its group.
var (
	EventTraceGUID   = clrimpl.MustParseGUID("68fdd900-4a3e-11d1-84f4-0000f80464e3") // group 0x00: EventTrace (header, extension, ...)
	DiskIOGUID       = clrimpl.MustParseGUID("3d6fa8d4-fe05-11d0-9dda-00c04fd7ba7c") // group 0x01
	PageFaultGUID    = clrimpl.MustParseGUID("3d6fa8d3-fe05-11d0-9dda-00c04fd7ba7c") // group 0x02 (also VirtualAlloc)
	ProcessGUID      = clrimpl.MustParseGUID("3d6fa8d0-fe05-11d0-9dda-00c04fd7ba7c") // group 0x03
	FileIOGUID       = clrimpl.MustParseGUID("90cbdc39-4a3e-11d1-84f4-0000f80464e3") // group 0x04
	ThreadGUID       = clrimpl.MustParseGUID("3d6fa8d1-fe05-11d0-9dda-00c04fd7ba7c") // group 0x05
	TcpIPGUID        = clrimpl.MustParseGUID("9a280ac0-c8e0-11d1-84e2-00c04fb998a2") // group 0x06
	UdpIPGUID        = clrimpl.MustParseGUID("bf3a50c5-a9c9-4988-a005-2df0b7c80f80") // group 0x08
	RegistryGUID     = clrimpl.MustParseGUID("ae53722e-c863-11d2-8659-00c04fa321a1") // group 0x09
	SystemConfigGUID = clrimpl.MustParseGUID("01853a65-418f-4f36-aefc-dc0f1d2fd235") // group 0x0B
	PerfInfoGUID     = clrimpl.MustParseGUID("ce1dbfb4-137e-4da6-87b0-3f59aa102cbc") // group 0x0F
	HeapGUID         = clrimpl.MustParseGUID("222962ab-6180-4b88-a825-346b75f2a24a") // group 0x10
	ObjectGUID       = clrimpl.MustParseGUID("89497f50-effe-4440-8cf2-ce6b1cdcaca7") // group 0x11
	ImageLoadGUID    = clrimpl.MustParseGUID("2cb15d1d-5fc1-11d2-abe1-00a0c911f518") // group 0x14
	CritSecGUID      = clrimpl.MustParseGUID("3ac66736-cc59-4cff-8115-8df50e39816b") // group 0x17
	StackWalkGUID    = clrimpl.MustParseGUID("def2fe46-7bd6-4b80-bd94-f57fe20d0ce3") // group 0x18
	ALPCGUID         = clrimpl.MustParseGUID("45d8cccd-539f-4b72-a8b7-5c683142609a") // group 0x1A
	SplitIOGUID      = clrimpl.MustParseGUID("d837ca92-12b9-44a5-ad6a-3a65b3578aa8") // group 0x1B
	ThreadPoolGUID   = clrimpl.MustParseGUID("c861d0e2-a2c1-4d36-9f9c-970bab943a12") // group 0x1C
)

// kernelGroupGUID maps a hook group to its event class GUID; groups with no
// known class map to the zero GUID.
var kernelGroupGUID = [256]clrimpl.GUID{
	0x00: EventTraceGUID,
	0x01: DiskIOGUID,
	0x02: PageFaultGUID,
	0x03: ProcessGUID,
	0x04: FileIOGUID,
	0x05: ThreadGUID,
	0x06: TcpIPGUID,
	0x08: UdpIPGUID,
	0x09: RegistryGUID,
	0x0B: SystemConfigGUID,
	0x0F: PerfInfoGUID,
	0x10: HeapGUID,
	0x11: ObjectGUID,
	0x14: ImageLoadGUID,
	0x17: CritSecGUID,
	0x18: StackWalkGUID,
	0x1A: ALPCGUID,
	0x1B: SplitIOGUID,
	0x1C: ThreadPoolGUID,
}

// KernelGroupGUID returns the event class GUID for a kernel hook group (the
// high byte of a system event's hook id), or the zero GUID when the group
// has no known class.
func KernelGroupGUID(group uint8) clrimpl.GUID { return kernelGroupGUID[group] }
