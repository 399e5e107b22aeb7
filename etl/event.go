package etl

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/clrgo/clrevents/clrimpl"
)

// HeaderKind says which header an event was written with.
type HeaderKind uint8

// The header kinds found in ETL buffers. Each comes in a 32-bit and a
// 64-bit flavour with the same layout; the flavour sets Event.PointerSize.
const (
	UnknownHeader       HeaderKind = iota
	EventHeader                    // EVENT_HEADER: manifest, EventSource and TraceLogging events (80 bytes + extended items)
	SystemHeader                   // SYSTEM_TRACE_HEADER: kernel events (32 bytes)
	CompactSystemHeader            // compact SYSTEM_TRACE_HEADER without CPU times (24 bytes)
	PerfInfoHeader                 // PERFINFO_TRACE_HEADER: kernel performance events, no PID/TID (16 bytes)
	TraceHeader                    // EVENT_TRACE_HEADER: classic (MOF) events, full header (48 bytes)
	InstanceHeader                 // EVENT_INSTANCE_GUID_HEADER: classic instance events (72 bytes)
	MessageHeader                  // MESSAGE_TRACE_HEADER: WPP trace messages (8 bytes + optional fields)
)

var headerKindNames = [...]string{
	UnknownHeader:       "UnknownHeader",
	EventHeader:         "EventHeader",
	SystemHeader:        "SystemHeader",
	CompactSystemHeader: "CompactSystemHeader",
	PerfInfoHeader:      "PerfInfoHeader",
	TraceHeader:         "TraceHeader",
	InstanceHeader:      "InstanceHeader",
	MessageHeader:       "MessageHeader",
}

// String returns the constant's name.
func (k HeaderKind) String() string {
	if int(k) < len(headerKindNames) {
		return headerKindNames[k]
	}
	return fmt.Sprintf("HeaderKind(%d)", uint8(k))
}

// ExtendedItem is one extended data item of an EVENT_HEADER event, as
// stored: its EVENT_HEADER_EXT_TYPE_* type and its bytes. Data aliases the
// reader's buffer.
type ExtendedItem struct {
	Type uint16
	Data []byte
}

// Event is one event record. The reader reuses the value: an *Event and
// every slice in it (Payload, Extended, Stack) stay valid only until the
// next call to Next. Copy what you keep.
type Event struct {
	// Offset locates the event: the file offset of its buffer plus the
	// event's offset inside the buffer. For a compressed buffer the second
	// part is an offset into the expanded buffer.
	Offset int64
	// Buffer is the index of the event's buffer in file order, from 0. A
	// damaged range the reader had to search past counts as one buffer
	// (see Damage).
	Buffer int
	// Log is the index of the event's log in a Reader that merges
	// several (Merge), 0 otherwise: Offset and Buffer are in that log.
	Log int
	// HeaderKind says which header the event was written with.
	HeaderKind HeaderKind
	// HeaderType is the raw TRACE_HEADER_TYPE_* byte.
	HeaderType uint8

	// ProviderGUID is the provider GUID for EventHeader events, the event
	// class GUID for TraceHeader and InstanceHeader events, the kernel
	// group GUID (see KernelGroupGUID) for system and perfinfo events and
	// the message GUID for MessageHeader events that carry one.
	ProviderGUID clrimpl.GUID

	// The event descriptor. For the classic kinds ID is 0 and Opcode,
	// Version and Level come from the class (Opcode is the event type).
	// MessageHeader events carry their message number in ID.
	ID       uint16
	Version  uint8
	Channel  uint8
	Level    uint8
	Opcode   uint8
	Task     uint16
	Keywords uint64

	// HookID is the kernel hook id (group<<8 | type) of system and
	// perfinfo events, else 0.
	HookID uint16

	// ProcessID and ThreadID come from the header. PerfInfoHeader events
	// have none; they get 0xFFFFFFFF (-1) for both, as Windows reports them.
	ProcessID, ThreadID uint32
	// ProcessorNumber is the processor whose buffer held the event.
	ProcessorNumber uint16

	// Timestamp is the raw timestamp in the log's clock (see
	// LogHeader.ClockType); Time is the same instant as a UTC wall-clock
	// time, computed from the log's start time and clock frequency.
	Timestamp int64
	Time      time.Time

	// PointerSize is 4 or 8: from the event's own 32/64-bit header flag or
	// header type, which is what decoding pointer-sized payload fields needs.
	PointerSize int

	// Flags holds EVENT_HEADER.Flags (Flag*), with Flag32BitHeader or
	// Flag64BitHeader added from the header type when neither is set (as
	// the Windows consumer API does); the classic kinds get
	// FlagClassicHeader and the 32/64-bit flag. Properties holds
	// EVENT_HEADER.EventProperty.
	Flags      uint16
	Properties uint16

	// ProcessorTime is the header's 8-byte CPU time field (KernelTime and
	// UserTime, or ProcessorTime for private sessions), 0 for kinds
	// without one.
	ProcessorTime uint64

	// ActivityID is set for EventHeader events; RelatedActivityID when the
	// event has a related-activity extended item.
	ActivityID, RelatedActivityID clrimpl.GUID

	// InstanceID, ParentInstanceID and ParentGUID are set for
	// InstanceHeader events and events with an instance-info item.
	InstanceID, ParentInstanceID uint32
	ParentGUID                   clrimpl.GUID

	// Sequence is a MessageHeader event's sequence number, if it has one.
	Sequence uint32

	// Stack holds the return addresses of a stack-trace extended item
	// (32-bit addresses are widened), StackMatchID its MatchId.
	Stack        []uint64
	StackMatchID uint64

	// Extended holds the raw extended data items.
	Extended []ExtendedItem

	// Payload is the event's user data. It aliases the reader's buffer.
	Payload []byte
}

// ExtendedItem returns the data of the first extended item of type t.
func (e *Event) ExtendedItem(t uint16) ([]byte, bool) {
	for i := range e.Extended {
		if e.Extended[i].Type == t {
			return e.Extended[i].Data, true
		}
	}
	return nil, false
}

// errEndOfBuffer marks padding: the rest of the buffer holds no events.
var errEndOfBuffer = fmt.Errorf("end of buffer")

var le = binary.LittleEndian

// parseEvent decodes the event at buf[pos:] into e and returns its size
// (before 8-byte alignment). buf ends at the buffer's used end. It returns
// errEndOfBuffer at padding. logPtr is the log's pointer size, for kinds
// that state none.
func parseEvent(e *Event, buf []byte, pos int, logPtr int) (size int, err error) {
	if len(buf)-pos < 4 {
		if len(buf)-pos == 0 {
			return 0, errEndOfBuffer
		}
		return 0, fmt.Errorf("%d bytes left, too few for an event header", len(buf)-pos)
	}
	b := buf[pos:]
	marker := le.Uint32(b)
	if marker == 0xFFFFFFFF || marker == 0 {
		return 0, errEndOfBuffer
	}
	htype := b[2]
	mflags := b[3]
	if mflags&markerTraceHeader == 0 {
		return 0, fmt.Errorf("marker %#08x is not a trace header", marker)
	}

	e.HeaderType = htype
	e.Extended = e.Extended[:0]
	e.Stack = e.Stack[:0]
	e.StackMatchID = 0
	e.RelatedActivityID = clrimpl.GUID{}
	e.ActivityID = clrimpl.GUID{}
	e.InstanceID, e.ParentInstanceID, e.ParentGUID = 0, 0, clrimpl.GUID{}
	e.Sequence = 0
	e.HookID = 0
	e.ID, e.Version, e.Channel, e.Level, e.Opcode, e.Task, e.Keywords = 0, 0, 0, 0, 0, 0, 0
	e.Properties = 0
	e.ProcessorTime = 0

	if mflags&markerMessage != 0 {
		return parseMessage(e, b, logPtr)
	}

	var hsize int
	ptr := 8
	switch htype {
	case typeSystem32, typeSystem64:
		e.HeaderKind, hsize = SystemHeader, systemHeaderSize
	case typeCompact32, typeCompact64:
		e.HeaderKind, hsize = CompactSystemHeader, compactHeaderSize
	case typePerfInfo32, typePerfInfo64:
		e.HeaderKind, hsize = PerfInfoHeader, perfInfoHeaderSize
	case typeFullHeader32, typeFullHeader64:
		e.HeaderKind, hsize = TraceHeader, traceHeaderSize
	case typeInstance32, typeInstance64:
		e.HeaderKind, hsize = InstanceHeader, instanceHeaderSize
	case typeEventHeader32, typeEventHeader64:
		e.HeaderKind, hsize = EventHeader, eventHeaderSize
	default:
		e.HeaderKind = UnknownHeader
		return 0, fmt.Errorf("unsupported event header type %d (marker %#08x)", htype, marker)
	}
	switch htype {
	case typeSystem32, typeCompact32, typePerfInfo32, typeFullHeader32, typeInstance32, typeEventHeader32:
		ptr = 4
	}

	if len(b) < hsize {
		return 0, fmt.Errorf("%v event: %d bytes left, too few for its %d-byte header", e.HeaderKind, len(b), hsize)
	}
	switch e.HeaderKind {
	case SystemHeader, CompactSystemHeader, PerfInfoHeader:
		// Version (2), type, flags, then the packet: Size (2), HookId (2).
		size = int(le.Uint16(b[4:]))
	default:
		size = int(le.Uint16(b[0:]))
	}
	if size < hsize {
		return 0, fmt.Errorf("%v event size %d is smaller than its %d-byte header", e.HeaderKind, size, hsize)
	}
	if size > len(b) {
		return 0, fmt.Errorf("%v event size %d runs past the buffer's used end (%d bytes left)", e.HeaderKind, size, len(b))
	}
	b = b[:size]

	switch e.HeaderKind {
	case SystemHeader, CompactSystemHeader, PerfInfoHeader:
		e.Version = uint8(le.Uint16(b[0:]))
		e.HookID = le.Uint16(b[6:])
		e.Opcode = uint8(e.HookID)
		e.ProviderGUID = kernelGroupGUID[e.KernelGroup()]
		e.Flags = FlagClassicHeader
		if e.HeaderKind == PerfInfoHeader {
			e.ProcessID, e.ThreadID = 0xFFFFFFFF, 0xFFFFFFFF
			e.Timestamp = int64(le.Uint64(b[8:]))
		} else {
			e.ThreadID = le.Uint32(b[8:])
			e.ProcessID = le.Uint32(b[12:])
			e.Timestamp = int64(le.Uint64(b[16:]))
			if e.HeaderKind == SystemHeader {
				e.ProcessorTime = le.Uint64(b[24:])
			}
		}
	case TraceHeader, InstanceHeader:
		// Size (2), type, flags, Class {Type, Level, Version (2)}.
		e.Opcode = b[4]
		e.Level = b[5]
		e.Version = uint8(le.Uint16(b[6:]))
		e.ThreadID = le.Uint32(b[8:])
		e.ProcessID = le.Uint32(b[12:])
		e.Timestamp = int64(le.Uint64(b[16:]))
		copy(e.ProviderGUID[:], b[24:40])
		e.ProcessorTime = le.Uint64(b[40:])
		e.Flags = FlagClassicHeader
		if e.HeaderKind == InstanceHeader {
			e.InstanceID = le.Uint32(b[48:])
			e.ParentInstanceID = le.Uint32(b[52:])
			copy(e.ParentGUID[:], b[56:72])
		}
	case EventHeader:
		e.Flags = le.Uint16(b[4:])
		e.Properties = le.Uint16(b[6:])
		e.ThreadID = le.Uint32(b[8:])
		e.ProcessID = le.Uint32(b[12:])
		e.Timestamp = int64(le.Uint64(b[16:]))
		copy(e.ProviderGUID[:], b[24:40])
		e.ID = le.Uint16(b[40:])
		e.Version = b[42]
		e.Channel = b[43]
		e.Level = b[44]
		e.Opcode = b[45]
		e.Task = le.Uint16(b[46:])
		e.Keywords = le.Uint64(b[48:])
		e.ProcessorTime = le.Uint64(b[56:])
		copy(e.ActivityID[:], b[64:80])
		switch {
		case e.Flags&Flag64BitHeader != 0:
			ptr = 8
		case e.Flags&Flag32BitHeader != 0:
			ptr = 4
		case ptr == 4:
			// The header type alone says 32-bit (relogged and older
			// logs); report it in Flags as the Windows API does.
			e.Flags |= Flag32BitHeader
		default:
			e.Flags |= Flag64BitHeader
		}
		if e.Flags&FlagExtendedInfo != 0 {
			n, err := parseExtended(e, b[hsize:])
			if err != nil {
				return 0, err
			}
			hsize += n
		}
	}
	if e.HeaderKind != EventHeader {
		if ptr == 8 {
			e.Flags |= Flag64BitHeader
		} else {
			e.Flags |= Flag32BitHeader
		}
	}
	e.PointerSize = ptr
	e.Payload = b[hsize:size:size]
	return size, nil
}

// parseExtended reads the extended data items that follow an EVENT_HEADER.
// On disk each item is {Reserved1 uint16, ExtType uint16, Linkage uint16
// (bit 0: another item follows), DataSize uint16} then DataSize bytes,
// padded to 8 bytes (as etl-parser reads SID and TS-id items of real logs;
// in the test logs every item's size is a multiple of 8). It returns the
// bytes the items take.
func parseExtended(e *Event, b []byte) (int, error) {
	pos := 0
	for {
		if len(b)-pos < extItemHeaderSize {
			return 0, fmt.Errorf("extended item at +%d: %d bytes left, too few for its header", eventHeaderSize+pos, len(b)-pos)
		}
		typ := le.Uint16(b[pos+2:])
		link := le.Uint16(b[pos+4:])
		n := int(le.Uint16(b[pos+6:]))
		start := pos + extItemHeaderSize
		if n > len(b)-start {
			return 0, fmt.Errorf("extended item at +%d: type %d data size %d runs past the event (%d bytes left)", eventHeaderSize+pos, typ, n, len(b)-start)
		}
		data := b[start : start+n : start+n]
		e.Extended = append(e.Extended, ExtendedItem{Type: typ, Data: data})
		switch typ {
		case ExtRelatedActivityID:
			if n >= 16 {
				copy(e.RelatedActivityID[:], data)
			}
		case ExtInstanceInfo:
			if n >= 24 {
				e.InstanceID = le.Uint32(data)
				e.ParentInstanceID = le.Uint32(data[4:])
				copy(e.ParentGUID[:], data[8:24])
			}
		case ExtStackTrace32:
			if n >= 8 {
				e.StackMatchID = le.Uint64(data)
				for i := 8; i+4 <= n; i += 4 {
					e.Stack = append(e.Stack, uint64(le.Uint32(data[i:])))
				}
			}
		case ExtStackTrace64:
			if n >= 8 {
				e.StackMatchID = le.Uint64(data)
				for i := 8; i+8 <= n; i += 8 {
					e.Stack = append(e.Stack, le.Uint64(data[i:]))
				}
			}
		}
		// Every item, the last too, is padded to 8 bytes; the payload
		// follows.
		pos = min(align8(start+n), len(b))
		if link&1 == 0 {
			return pos, nil
		}
	}
}

// parseMessage reads a MESSAGE_TRACE_HEADER event (WPP): {Size uint16,
// Reserved, Version, MessageNumber uint16, OptionFlags uint16} followed by
// the optional fields the flags select, in this order: sequence (uint32),
// GUID or component id (uint32), timestamp (int64), thread and process id.
func parseMessage(e *Event, b []byte, logPtr int) (int, error) {
	e.HeaderKind = MessageHeader
	size := int(le.Uint16(b[0:]))
	if size < messageHeaderSize {
		return 0, fmt.Errorf("message event size %d is smaller than its %d-byte header", size, messageHeaderSize)
	}
	if size > len(b) {
		return 0, fmt.Errorf("message event size %d runs past the buffer's used end (%d bytes left)", size, len(b))
	}
	b = b[:size]
	e.ID = le.Uint16(b[4:])
	opts := le.Uint16(b[6:])
	e.ProviderGUID = clrimpl.GUID{}
	e.ProcessID, e.ThreadID = 0xFFFFFFFF, 0xFFFFFFFF
	e.Timestamp = 0
	pos := messageHeaderSize
	need := func(n int) bool { return size-pos >= n }
	if opts&messageSequence != 0 {
		if !need(4) {
			return 0, fmt.Errorf("message event too short for its sequence number")
		}
		e.Sequence = le.Uint32(b[pos:])
		pos += 4
	}
	if opts&messageGUID != 0 {
		if !need(16) {
			return 0, fmt.Errorf("message event too short for its GUID")
		}
		copy(e.ProviderGUID[:], b[pos:pos+16])
		pos += 16
	} else if opts&messageComponentID != 0 {
		if !need(4) {
			return 0, fmt.Errorf("message event too short for its component id")
		}
		pos += 4
	}
	if opts&messageTimestamp != 0 {
		if !need(8) {
			return 0, fmt.Errorf("message event too short for its timestamp")
		}
		e.Timestamp = int64(le.Uint64(b[pos:]))
		pos += 8
	}
	if opts&messageSystemInfo != 0 {
		if !need(8) {
			return 0, fmt.Errorf("message event too short for its thread and process ids")
		}
		e.ThreadID = le.Uint32(b[pos:])
		e.ProcessID = le.Uint32(b[pos+4:])
		pos += 8
	}
	e.PointerSize = logPtr
	e.Flags = FlagTraceMessage
	if logPtr == 4 {
		e.Flags |= Flag32BitHeader
	} else {
		e.Flags |= Flag64BitHeader
	}
	e.Payload = b[pos:size:size]
	return size, nil
}

func align8(n int) int { return (n + 7) &^ 7 }
