package nettrace

import (
	"math/bits"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/dynamic"
)

// Format says which container a trace uses.
type Format uint8

const (
	// FormatNetPerf is the .NET Core 2.x ".netperf" layout: a
	// FastSerialization stream without the Nettrace magic, holding either a
	// "Microsoft.DotNet.Runtime.EventPipeFile" object (versions 1 and 2) or
	// a "Trace" object version 3 followed by EventBlocks.
	FormatNetPerf Format = iota + 1
	// FormatNetTrace is the ".nettrace" layout that starts with the
	// "Nettrace" magic: versions 4 and 5 (FastSerialization objects) and 6
	// (plain blocks).
	FormatNetTrace
)

// String returns "netperf" or "nettrace".
func (f Format) String() string {
	switch f {
	case FormatNetPerf:
		return "netperf"
	case FormatNetTrace:
		return "nettrace"
	}
	return "unknown"
}

// TraceInfo is what the trace says about itself in its Trace object or
// block.
type TraceInfo struct {
	Format Format // netperf or nettrace
	// Version is the file format version: 1 or 2 (EventPipeFile object
	// version, .NET Core 2.0), 3 (.NET Core 2.1), 4 (NetTrace through
	// FastSerialization; what the spec calls V5 only adds metadata tags and
	// is read as 4), or 6.
	Version int
	// MinorVersion is the NetTrace V6 minor version; 0 before V6.
	MinorVersion int
	// ObjectVersion is the version of the FastSerialization Trace (or
	// EventPipeFile) object; 0 for V6, which has no objects.
	ObjectVersion int

	SyncTime     time.Time // wall clock (UTC) at SyncTimeQPC
	SyncTimeQPC  int64     // timestamp, in ticks, taken at SyncTime
	QPCFrequency int64     // ticks per second

	// PointerSize is the size of a pointer in bytes in the traced process
	// (V6: on the traced machine). Version 1/2 traces do not record it; they
	// were only written on 64-bit Linux, and 8 is reported.
	PointerSize int
	// ProcessID is the traced process (V6: the "ProcessId" key); -1 when
	// the trace does not record it (V1/V2, a V6 trace without the key).
	ProcessID int64
	// NumProcessors is the processor count (V6: "HardwareThreadCount").
	NumProcessors int
	// ExpectedCPUSamplingRate is as recorded (V6: "ExpectedCPUSamplingRate").
	ExpectedCPUSamplingRate int64
	// KeyValues holds the V6 trace block's key/value pairs; nil before V6.
	KeyValues map[string]string

	// recip is floor(2^64 / recipFor), so that TicksToTime can divide by
	// the frequency with a multiplication, and syncSec/syncNsec are
	// SyncTime in Unix time; the reader sets them.
	recipFor, recip   uint64
	syncSec, syncNsec int64
}

// setReciprocal precomputes the frequency's reciprocal for TicksToTime.
func (ti *TraceInfo) setReciprocal() {
	f := uint64(ti.QPCFrequency)
	if ti.QPCFrequency > 1 {
		ti.recipFor = f
		ti.recip, _ = bits.Div64(1, 0, f) // 2^64 / f, f > 1 so it fits
		ti.syncSec, ti.syncNsec = ti.SyncTime.Unix(), int64(ti.SyncTime.Nanosecond())
	}
}

// TicksToTime converts a timestamp in ticks to wall-clock time using the
// trace's sync time and frequency. It does not allocate.
func (ti *TraceInfo) TicksToTime(ticks int64) time.Time {
	if ti.QPCFrequency <= 0 {
		return ti.SyncTime
	}
	ns := ti.ticksToNanos(ticks)
	if ti.recipFor == uint64(ti.QPCFrequency) && ns > -(1<<62) && ns < 1<<62 {
		// From the sync time's Unix seconds: half the cost of Time.Add.
		n := ti.syncNsec + ns
		return time.Unix(ti.syncSec+n/1e9, n%1e9).UTC()
	}
	return ti.SyncTime.Add(time.Duration(ns))
}

// ticksToNanos is the signed time from the sync point in nanoseconds,
// clamped to the int64 range.
func (ti *TraceInfo) ticksToNanos(ticks int64) int64 {
	d := ticks - ti.SyncTimeQPC
	neg := d < 0
	u := uint64(d)
	if neg {
		u = uint64(-d)
	}
	f := uint64(ti.QPCFrequency)
	var ns uint64
	hi, lo := bits.Mul64(u, 1e9)
	switch {
	case 1e9%f == 0 && u <= (1<<63-1)/(1e9/f):
		// 1 GHz (ns clocks), 10 MHz (Windows QPC): no division.
		ns = u * (1e9 / f)
	case hi == 0 && f == ti.recipFor:
		// lo / f with the reciprocal: the estimate is the quotient or one
		// less; one comparison makes it exact.
		ns, _ = bits.Mul64(lo, ti.recip)
		if lo-ns*f >= f {
			ns++
		}
	case hi >= f: // the quotient overflows: clamp
		ns = 1<<63 - 1
	default:
		ns, _ = bits.Div64(hi, lo, f)
	}
	if ns > 1<<63-1 {
		ns = 1<<63 - 1
	}
	if neg {
		return -int64(ns)
	}
	return int64(ns)
}

// Event is one event record. The Reader reuses one Event: it, and every
// slice in it (Payload, Stack), are valid only until the next call to Next.
// Strings and the Metadata, Thread and Labels pointers stay valid for as long
// as the caller keeps them (they are not reused), but Metadata, Thread and
// Labels are shared and must not be modified. The Event itself is the
// Reader's: do not write to it (copy it to change it), since the Reader
// writes only the fields that change from one event to the next.
type Event struct {
	// Offset is the byte offset of the event record (its header) in the
	// decompressed stream.
	Offset int64
	// MetadataID is the metadata record the event refers to. In version 1/2
	// traces it is the stream offset of the metadata event.
	MetadataID uint32

	Provider     string       // provider name, e.g. "Microsoft-Windows-DotNETRuntime"
	ProviderGUID clrimpl.GUID // see ProviderGUID
	ID           uint16       // event ID within the provider (see Metadata.EventID)
	Version      uint8        // event version
	Level        uint8        // from the metadata (V6: a label list may override it)
	Opcode       uint8        // from the metadata (V6: a label list may override it); 0 if unknown
	Keywords     uint64       // from the metadata (V6: a label list may override it)
	Name         string       // event name from the metadata; often empty for CLR events

	// ThreadID is the OS thread the event is about; CaptureThreadID the OS
	// thread that wrote it (set equal to ThreadID before NetTrace V4, which
	// records only one). In V6 both are resolved through the thread table;
	// CaptureThreadID is 0 if the capture thread is not in it.
	ThreadID, CaptureThreadID uint64
	// ProcessID is the process that raised the event: the trace's process
	// before V6, the thread's process in V6 (else the trace's);
	// math.MaxUint64 (int64 -1) when the trace does not record it.
	ProcessID       uint64
	ProcessorNumber uint32 // processor of the capture thread; 0 before V4; .NET 5+ often writes 0xFFFFFFFF (unknown)
	SequenceNumber  uint32 // per capture thread; 0 before V4
	IsSorted        bool   // the header's IsSorted flag (V4+)

	// Timestamp is the raw clock value, in ticks: QPC on Windows,
	// nanoseconds on Linux and macOS. Time converts it.
	Timestamp int64

	// ActivityID and RelatedActivityID are from the event header (V1–V5)
	// or the event's label list (V6); zero when absent.
	ActivityID, RelatedActivityID clrimpl.GUID

	// StackID is the stack table row (V4+); 0 for none or inline stacks.
	StackID uint32
	// Stack holds the instruction pointers of the event's stack, innermost
	// first, from the stack table (V4+) or inline in the event (V1–V3).
	Stack []uint64
	// stackKey identifies Stack's table row (StackKey).
	stackKey uint64
	// PointerSize is the trace's pointer size, 4 or 8; CLR payloads lay out
	// pointer-sized fields with it.
	PointerSize int

	// Payload is the event's payload, aliasing the Reader's buffer.
	Payload []byte

	// Metadata is the parsed metadata record for the event.
	Metadata *Metadata
	// Thread is the V6 thread table row for ThreadID; nil before V6.
	Thread *Thread
	// Labels is the V6 label list the event refers to; nil when none.
	Labels *LabelList

	// info is the trace's, for Time.
	info *TraceInfo
}

// The setters below write a field only when its value changes: while the
// garbage collector marks, each pointer written costs a write barrier,
// and most events share their metadata's strings, their thread and label
// list, and often their stack, with the event before.

// setMeta sets Metadata, Provider and Name from m.
func (e *Event) setMeta(m *Metadata) {
	if e.Metadata != m {
		e.Metadata = m
		if !sameString(e.Provider, m.Provider) {
			e.Provider = m.Provider
		}
		if !sameString(e.Name, m.Name) {
			e.Name = m.Name
		}
	}
}

// setThread sets Thread and Labels.
func (e *Event) setThread(t *Thread, l *LabelList) {
	if e.Thread != t {
		e.Thread = t
	}
	if e.Labels != l {
		e.Labels = l
	}
}

// StackKey identifies the event's stack table row in the process: two
// events, of one Reader or of several, with the same nonzero StackKey have
// the same Stack, so what is made of a stack (its frames, a profile's
// sample) can be kept by key instead of comparing the addresses again.
// Equal stacks may have different keys: after a sequence point the runtime
// writes its stacks again, under new rows. It is 0 when the event has no
// stack, or carries it inline (V1–V3). The key is valid as long as the
// process runs, and means nothing to another process.
func (e *Event) StackKey() uint64 { return e.stackKey }

// stackGens numbers the stack tables of every Reader of the process:
// a StackKey is a table's number and the row's offset in it.
var stackGens atomic.Uint64

// stackKey is the StackKey of the row at offset off of table gen, or 0
// when the row is empty (n is 0).
func stackKey(gen uint64, off, n uint32) uint64 {
	if n == 0 {
		return 0
	}
	return gen<<32 | uint64(off)
}

// setStack sets Stack to s; an empty s leaves an empty Stack as it is
// (nil or not).
func (e *Event) setStack(s []uint64) {
	if len(s) != len(e.Stack) || len(s) > 0 && (&s[0] != &e.Stack[0] || cap(s) != cap(e.Stack)) {
		e.Stack = s
	}
}

// sameString says whether a and b are the same string in memory.
func sameString(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}

// Time is the event's wall-clock time (UTC), from Timestamp and the
// trace's sync time and clock frequency (TraceInfo.TicksToTime). It is
// computed when asked for: ordering events needs only Timestamp. For an
// Event that no Reader made, it is the zero Time.
func (e *Event) Time() time.Time {
	if e.info == nil {
		return time.Time{}
	}
	return e.info.TicksToTime(e.Timestamp)
}

// Metadata describes one kind of event: its provider, ID, version, name and
// payload fields as the trace declares them.
type Metadata struct {
	ID           uint32       // the metadata ID events refer to
	Provider     string       // provider name
	ProviderGUID clrimpl.GUID // from the V6 ProviderGuid tag, else ProviderGUID(Provider)
	// EventID is the event's ID within the provider. The file holds 32
	// bits (an int32 before V6, a varuint32 in V6); an event ID is 16
	// bits, as in ETW, and a larger one is kept as its low 16 bits, as
	// TraceEvent keeps it (70000 is 4464), with its events.
	EventID  uint16
	Version  uint8  // event version
	Name     string // event name; often empty for CLR events
	Keywords uint64 // keyword mask
	Level    uint8  // 1 (critical) to 5 (verbose); 0 when not recorded
	// Opcode is from the V5 opcode tag or V6 optional metadata; 0 when the
	// trace does not say. (TraceEvent then takes Start or Stop from a
	// suffix of the name, and so does package trace's Event.Opcode; this
	// package gives what the trace says.)
	Opcode uint8
	// HasOpcode reports whether the trace gave Opcode explicitly.
	HasOpcode bool

	// Fields describe the payload in wire order. CLR runtime events usually
	// come with no fields: decode those from the manifest instead. The
	// well-known events of Microsoft-Diagnostics-DiagnosticSource (Event,
	// Activity1Start, …), whose key/value arguments the metadata has no
	// type for and which it describes with no fields, get the fields
	// TraceEvent gives them: SourceName, EventName and Arguments, an array
	// of {Key, Value} strings. So do the universal providers' events
	// (Universal.System's whatever they declare, Universal.Events' cpu
	// and cswitch where they declare none): varints and UTF-8 strings, as
	// TraceEvent's parsers read them. Do not modify Fields: it
	// may be shared.
	Fields []Field
	// FieldsErr is set when the field descriptions could not be parsed (a
	// type code this package does not know, say); Fields is then nil and
	// the event's payload is still delivered.
	FieldsErr error

	MessageTemplate string            // V6 optional metadata: message template
	Description     string            // V6 optional metadata: human-readable description
	Attributes      map[string]string // V6 optional metadata: key/value pairs; nil if none

	desc *dynamic.Description // Fields as package dynamic describes them (describe)
}

// TypeCode is the type of an EventSource payload field, as EventPipe
// metadata encodes it (System.TypeCode values plus EventPipe additions).
type TypeCode uint8

// Type codes. Names follow the NetTrace V6 spec; V1–V5 use the same numbers.
const (
	TypeObject                    TypeCode = 1  // nested fields, concatenated
	TypeBoolean32                 TypeCode = 3  // 4-byte bool
	TypeUTF16CodeUnit             TypeCode = 4  // 2-byte char
	TypeSByte                     TypeCode = 5  // int8
	TypeByte                      TypeCode = 6  // uint8
	TypeInt16                     TypeCode = 7  // int16
	TypeUInt16                    TypeCode = 8  // uint16
	TypeInt32                     TypeCode = 9  // int32
	TypeUInt32                    TypeCode = 10 // uint32
	TypeInt64                     TypeCode = 11 // int64
	TypeUInt64                    TypeCode = 12 // uint64
	TypeSingle                    TypeCode = 13 // float32
	TypeDouble                    TypeCode = 14 // float64
	TypeDecimal                   TypeCode = 15 // 16-byte System.Decimal
	TypeDateTime                  TypeCode = 16 // 8-byte FILETIME (UTC), as EventSource writes it
	TypeGUID                      TypeCode = 17 // 16-byte GUID
	TypeNullTerminatedUTF16String TypeCode = 18 // UTF-16LE with a 2-byte terminator
	TypeArray                     TypeCode = 19 // uint16 count, then elements
	TypeVarInt                    TypeCode = 20 // V6: zig-zag varint64
	TypeVarUInt                   TypeCode = 21 // V6: varuint64
	TypeFixedLengthArray          TypeCode = 22 // V6: Count elements
	TypeUTF8CodeUnit              TypeCode = 23 // V6: 1-byte char
	TypeRelLoc                    TypeCode = 24 // V6: uint32 size<<16|offset after the field
	TypeDataLoc                   TypeCode = 25 // V6: uint32 size<<16|offset from payload start
	TypeBoolean8                  TypeCode = 26 // V6: 1-byte bool
)

var typeNames = [...]string{
	TypeObject: "Object", TypeBoolean32: "Boolean32", TypeUTF16CodeUnit: "UTF16CodeUnit",
	TypeSByte: "SByte", TypeByte: "Byte", TypeInt16: "Int16", TypeUInt16: "UInt16",
	TypeInt32: "Int32", TypeUInt32: "UInt32", TypeInt64: "Int64", TypeUInt64: "UInt64",
	TypeSingle: "Single", TypeDouble: "Double", TypeDecimal: "Decimal", TypeDateTime: "DateTime",
	TypeGUID: "Guid", TypeNullTerminatedUTF16String: "NullTerminatedUTF16String",
	TypeArray: "Array", TypeVarInt: "VarInt", TypeVarUInt: "VarUInt",
	TypeFixedLengthArray: "FixedLengthArray", TypeUTF8CodeUnit: "UTF8CodeUnit",
	TypeRelLoc: "RelLoc", TypeDataLoc: "DataLoc", TypeBoolean8: "Boolean8",
}

// String returns the spec's name for t, or "TypeCode(n)".
func (t TypeCode) String() string {
	if int(t) < len(typeNames) && typeNames[t] != "" {
		return typeNames[t]
	}
	return "TypeCode(" + itoa(int(t)) + ")"
}

// fixedSize returns the wire size of a fixed-size scalar type, or 0.
func (t TypeCode) fixedSize() int {
	switch t {
	case TypeSByte, TypeByte, TypeUTF8CodeUnit, TypeBoolean8:
		return 1
	case TypeInt16, TypeUInt16, TypeUTF16CodeUnit:
		return 2
	case TypeInt32, TypeUInt32, TypeBoolean32, TypeSingle, TypeRelLoc, TypeDataLoc:
		return 4
	case TypeInt64, TypeUInt64, TypeDouble, TypeDateTime:
		return 8
	case TypeGUID, TypeDecimal:
		return 16
	}
	return 0
}

// Field describes one payload field, or (with an empty Name) the element
// type of an array.
type Field struct {
	Name string   // field name; empty for an element type
	Type TypeCode // wire type
	// Elem is the element type of an Array, FixedLengthArray, RelLoc or
	// DataLoc.
	Elem *Field
	// Count is the element count of a FixedLengthArray.
	Count uint16
	// Fields are the members of an Object (a nested struct).
	Fields []Field
}

// Thread is a row of the V6 thread table.
type Thread struct {
	Index      uint64            // the index events use to refer to the thread
	Name       string            // thread name, if given
	ProcessID  uint64            // OS process ID, if given
	ThreadID   uint64            // OS thread ID, if given
	Attributes map[string]string // other key/value information; nil if none
}

// LabelList is a row of the V6 label list table: labels shared by many
// events. The Has* fields say which optional values are present.
type LabelList struct {
	ActivityID, RelatedActivityID       clrimpl.GUID // EventSource activity IDs
	HasActivityID, HasRelatedActivityID bool         // whether the IDs are present
	TraceID                             [16]byte     // W3C trace ID
	HasTraceID                          bool         // whether TraceID is present
	SpanID                              uint64       // W3C span ID
	HasSpanID                           bool         // whether SpanID is present
	// Opcode, Keywords, Level and Version override the metadata's values
	// when the matching Has* flag is set (the Reader applies them to Event).
	Opcode                                       uint8  // opcode override
	Keywords                                     uint64 // keywords override
	Level, Version                               uint8  // level and version overrides
	HasOpcode, HasKeywords, HasLevel, HasVersion bool   // which overrides are present
	// Other holds key/value labels in file order.
	Other []Label
}

// override applies the list's opcode, level, version and keywords, where it
// has them, over the metadata's values.
func (l *LabelList) override(opcode, level, version *uint8, keywords *uint64) {
	if l.HasOpcode {
		*opcode = l.Opcode
	}
	if l.HasLevel {
		*level = l.Level
	}
	if l.HasVersion {
		*version = l.Version
	}
	if l.HasKeywords {
		*keywords = l.Keywords
	}
}

// Label is a key/value label. Exactly one of String or Int is meaningful,
// as IsInt says.
type Label struct {
	Key    string // label name
	String string // value of a string label
	Int    int64  // value of an integer label
	IsInt  bool   // whether the label is an integer label
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	neg := n < 0
	u := uint64(n)
	if neg {
		u = uint64(-n)
	}
	for {
		i--
		b[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
