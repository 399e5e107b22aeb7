package trace

import (
	"fmt"
	"strconv"
	"time"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/dynamic"
	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/nettrace"
	"github.com/clrgo/clrevents/trace/internal/rawaccess"
)

// Event is one event, in the same shape for every format: accessor
// methods give its time, provider, name, IDs, process, thread, CPU,
// payload, stack and activity IDs whatever the trace's format, Decode
// gives its generated type (from the Reader's tables, see WithEvents) and
// Descriptor what describes its fields. The accessors read the format
// reader's record in place, so Next copies nothing; an Event and every
// slice it returns (Payload, Stack) are valid until the next call to Next.
// Strings stay valid.
type Event struct {
	r   *Reader
	res *resolved // what the provider (and, for EventPipe, the event) resolve to
	// typ is the event type of (provider, ID, version) in the Reader's
	// tables; noType for events none has.
	typ typeRef
	nt  *nettrace.Event
	et  *etl.Event
	// dyn is the trace's own description of an ETW event outside the
	// tables and the kernel, or nil, once dynDone (etwDescription).
	dyn     *dynamic.Description
	dynDone bool
	// generated says Descriptor gave a generated type's.
	generated bool
	// ids says whether pid and tid replace the header's, for a kernel
	// event (kernelIDs), or are not known yet.
	ids      idState
	pid, tid int64
}

type idState uint8

const (
	idsHeader  idState = iota // the header's
	idsUnknown                // a kernel event's, not looked at yet
	idsKernel                 // pid and tid
	// idsCreated: pid and tid, of a kernel Thread or Process event, which
	// the thread that made it logs (the creator, for a Start): the
	// header's thread is the one the event's stack walks name.
	idsCreated
)

// settleIDs settles a kernel event's process and thread, once; it reports
// whether they replace the header's.
func (e *Event) settleIDs() bool {
	if e.ids == idsUnknown {
		e.ids = idsHeader
		if pid, tid, created, ok := e.kernelIDs(); ok {
			e.pid, e.tid, e.ids = pid, tid, idsKernel
			if created {
				e.ids = idsCreated
			}
		}
	}
	return e.ids >= idsKernel
}

// Format is the format of the trace the event was read from.
func (e *Event) Format() Format {
	if e.et != nil {
		return ETL
	}
	if e.r != nil {
		return e.r.format
	}
	return UnknownFormat
}

// Time is the event's wall-clock time (UTC).
func (e *Event) Time() time.Time {
	if e.nt != nil {
		return e.nt.Time()
	}
	return e.et.Time
}

// Timestamp is the raw clock value Time comes from: QPC ticks on Windows,
// nanoseconds on Linux and macOS (see Info.ClockFrequency).
func (e *Event) Timestamp() int64 {
	if e.nt != nil {
		return e.nt.Timestamp
	}
	return e.et.Timestamp
}

// Provider is the provider's name. When neither the trace nor the tables
// name it (an ETW provider of no table and not the kernel's), it is the
// GUID in its canonical text form.
func (e *Event) Provider() string {
	if k := e.res.kernel; k != nil && k.msnt[e.et.Opcode] {
		return msntProvider
	}
	return e.res.provider
}

// ProviderGUID is the provider's GUID (for EventPipe, as the trace states
// it or as EventSource derives it from the name).
func (e *Event) ProviderGUID() clrimpl.GUID {
	if e.nt != nil {
		return e.nt.ProviderGUID
	}
	return e.et.ProviderGUID
}

// Name is the event's name: the manifest symbol for events of a generated
// type ("GCStart_V2"; see Type), the trace's own name for EventSource events,
// "Task/Opcode" for known kernel events and the image identity events of
// kernel sessions as TraceEvent names them ("EventTrace" for the log
// header, "Process/Start", "ImageID/DbgID_RSDS"), the name TraceEvent
// gives an ETW event the trace describes itself (see Descriptor), else
// empty.
func (e *Event) Name() string {
	if e.et != nil {
		if k := e.res.kernel; k != nil {
			return k.eventName(e.et.Opcode)
		}
		if k := e.res.class; k != nil {
			return k.eventName(e.et.Opcode)
		}
	}
	if d := e.typeDescriptor(); d != nil {
		return d.Name
	}
	if e.nt != nil {
		return e.nt.Name
	}
	if d := e.etwDescription(); d != nil {
		return d.Name
	}
	return ""
}

// ID is the event's ID within its provider.
func (e *Event) ID() uint16 {
	if e.nt != nil {
		return e.nt.ID
	}
	return e.et.ID
}

// Version is the event's version.
func (e *Event) Version() uint8 {
	if e.nt != nil {
		return e.nt.Version
	}
	return e.et.Version
}

// Level is the event's level (1 critical … 5 verbose), from the trace, or
// from its generated type where the trace does not record it.
func (e *Event) Level() uint8 {
	if e.et != nil {
		return e.et.Level
	}
	if l := e.nt.Level; l != 0 {
		return l
	}
	if d := e.typeDescriptor(); d != nil {
		return uint8(d.Level)
	}
	return 0
}

// Keywords are the event's keyword bits, from the trace, or from its
// generated type where the trace records none.
func (e *Event) Keywords() uint64 {
	if e.et != nil {
		return e.et.Keywords
	}
	if k := e.nt.Keywords; k != 0 {
		return k
	}
	if d := e.typeDescriptor(); d != nil {
		return d.Keywords
	}
	return 0
}

// ProcessID is the process the event is about; -1 when the trace does not
// say. For the ETW kernel events package etl parses it is TraceEvent's:
// the payload's process (a CPU sample's: its thread's, from the trace's
// Thread events), not the logging thread's. A thread that was running
// before the log's Thread events began (a circular log, which has lost
// the rundown at its start, or a cut one) is named by the first event that
// ends it, the rundown at the log's end among them, as TraceEvent names
// it: on the first event of such a thread the Reader reads the log once
// more for them (an ETL file, an archive's or a merge's logs; a stream
// read once cannot be read again, and its events keep -1 until a Thread
// event names their thread).
func (e *Event) ProcessID() int64 {
	if e.nt != nil {
		return int64(e.nt.ProcessID)
	}
	return e.etwProcessID()
}

// etwProcessID is ProcessID of an ETW event (apart, so that ProcessID
// inlines).
func (e *Event) etwProcessID() int64 {
	if e.ids != idsHeader && e.settleIDs() {
		return e.pid
	}
	if e.et.ProcessID == 0xFFFFFFFF {
		return -1
	}
	return int64(e.et.ProcessID)
}

// ProcessName is the executable's name of the event's process
// ("Test.x86.exe"), where the trace has given it (an ETW trace's kernel
// Process events so far, or for a process running before they began, the
// first that ends it: see ProcessID); "" otherwise.
func (e *Event) ProcessName() string {
	if e.r == nil {
		return ""
	}
	if e.et == nil {
		return e.r.procNames[e.ProcessID()]
	}
	return e.r.processName(e.ProcessID(), e.et.Timestamp)
}

// processName is the executable's name of process pid at time ts of an
// ETW trace: its kernel Process events' so far, else the first that ends
// it; "" if none names it.
func (r *Reader) processName(pid, ts int64) string {
	if name, ok := r.procNames[pid]; ok || pid < 0 || !r.kernelSeen {
		return name
	}
	return r.endedProcess(pid, ts)
}

// ThreadID is the thread the event is about; -1 when the trace does not
// say. For the ETW kernel events package etl parses it is TraceEvent's (see
// ProcessID).
func (e *Event) ThreadID() int64 {
	if e.nt != nil {
		return int64(e.nt.ThreadID)
	}
	return e.etwThreadID()
}

// etwThreadID is ThreadID of an ETW event (apart, so that ThreadID
// inlines).
func (e *Event) etwThreadID() int64 {
	if e.ids != idsHeader && e.settleIDs() {
		return e.tid
	}
	if e.et.ThreadID == 0xFFFFFFFF {
		return -1
	}
	return int64(e.et.ThreadID)
}

// Creator is the process and thread that created the thread or process
// a kernel Thread/Start or Process/Start event of an ETW log announces
// (the thread that logged it: TraceEvent's ParentProcessID and
// ParentThreadID of a thread's start), where ProcessID and ThreadID are
// the new one's. ok is false for other events, and where the log does
// not say.
func (e *Event) Creator() (pid, tid int64, ok bool) {
	if e.et == nil || !e.settleIDs() || e.ids != idsCreated || e.et.Opcode != 1 ||
		e.et.ThreadID == 0xFFFFFFFF || e.et.ProcessID == 0xFFFFFFFF {
		return -1, -1, false
	}
	return int64(e.et.ProcessID), int64(e.et.ThreadID), true
}

// CPU is the processor number, or -1 where the trace does not record one
// (EventPipe before NetTrace V4; .NET 5+ runtimes often write "unknown").
// In NetTrace V4 and V5 the header's processor is the capture thread's,
// the thread that wrote the event: for an event it wrote of another
// thread (SampleProfiler's ThreadSample, whose thread is the sampled one)
// it is the sampler's processor, not the event's thread's, so CPU is -1,
// as TraceEvent leaves it unset.
func (e *Event) CPU() int {
	if e.et != nil {
		return int(e.et.ProcessorNumber)
	}
	v := e.r.info.Version
	if v < 4 || e.nt.ProcessorNumber == 0xFFFFFFFF || v < 6 && e.nt.ThreadID != e.nt.CaptureThreadID {
		return -1
	}
	return int(e.nt.ProcessorNumber)
}

// PointerSize is 4 or 8: the size of pointer-sized payload fields.
func (e *Event) PointerSize() int {
	if e.nt != nil {
		return e.nt.PointerSize
	}
	return e.et.PointerSize
}

// Payload is the event's data, aliasing the reader's buffers.
func (e *Event) Payload() []byte {
	if e.nt != nil {
		return e.nt.Payload
	}
	return e.et.Payload
}

// Stack is the event's stack as instruction pointers, innermost first,
// when the trace recorded one with the event (EventPipe stacks, ETW stack
// extended items); nil otherwise. It aliases the reader's buffers. The
// stacks a Windows kernel session walks for its events (CPU samples
// among them) come after the event, as late as the trace's end: Stacks
// matches them to their events.
func (e *Event) Stack() []uint64 {
	var s []uint64
	if e.nt != nil {
		s = e.nt.Stack
	} else {
		s = e.et.Stack
	}
	if len(s) == 0 {
		return nil // the format readers reuse their slices: one may be empty
	}
	return s
}

// StackKey identifies the event's stack in the process: two events, of one
// Reader or several, with the same nonzero StackKey have the same Stack, so
// that what is made of a stack (its frames, a profile's sample) can be kept
// by key instead of comparing addresses again. Equal stacks may still have
// different keys (an EventPipe runtime writes its stacks again after each
// sequence point). It is 0 when the event has no stack, carries it inline
// (NetTrace before V4) or comes from an ETW log.
func (e *Event) StackKey() uint64 {
	if e.nt != nil {
		return e.nt.StackKey()
	}
	return 0
}

// ActivityID is the event's activity ID; zero when absent.
func (e *Event) ActivityID() clrimpl.GUID {
	if e.nt != nil {
		return e.nt.ActivityID
	}
	return e.et.ActivityID
}

// RelatedActivityID is the event's related activity ID; zero when absent.
func (e *Event) RelatedActivityID() clrimpl.GUID {
	if e.nt != nil {
		return e.nt.RelatedActivityID
	}
	return e.et.RelatedActivityID
}

// Offset is the byte offset of the event in the (decompressed) file.
func (e *Event) Offset() int64 {
	if e.nt != nil {
		return e.nt.Offset
	}
	return e.et.Offset
}

// Type returns the generated event type of the event's provider, ID and
// version in the Reader's tables (see WithEvents: the first table that has
// it), if one has that version. It decodes nothing. A newer version of a
// known event than the tables hold has no Type, but Decode may still
// decode it (see DecodeN), with DecodeType.
func (e *Event) Type() (clrimpl.EventType, bool) {
	if !e.typ.ok() {
		return nil, false
	}
	return e.r.eventType(e.typ), true
}

// typeDescriptor is the Descriptor of the event's Type, or nil. An
// EventPipe event's type is its resolved record's (a classic ETW event's
// is found by its opcode, every event), whose descriptor is kept there.
//
// A newer version of an event than the tables hold, which Decode decodes
// with the newest older version, has that version's descriptor here: its
// name, task and opcode are the older version's.
func (e *Event) typeDescriptor() *clrimpl.Descriptor {
	if res := e.res; res != nil && e.typ == res.typ && (res.desc != nil || e.nt != nil) {
		return res.desc
	}
	ref := e.typ
	if !ref.ok() {
		if ref = e.decodeType(); !ref.ok() {
			return nil
		}
	}
	return e.r.eventType(ref).Descriptor()
}

// DecodeType returns the generated type Decode decodes the event with:
// its Type, or, for a newer version of a known event than the tables
// hold, the newest older version's (unless the Reader was made
// WithExactVersions). Code that looks for events by their generated type
// (a type switch, a set of EventInfos) sees a newer runtime's events with
// it, as Decode gives them. It decodes nothing.
func (e *Event) DecodeType() (clrimpl.EventType, bool) {
	if e.nt != nil && e.res.decType != nil {
		return e.res.decType, true
	}
	ref := e.decodeType()
	if !ref.ok() {
		return nil, false
	}
	return e.r.eventType(ref), true
}

// decodeType is the type Decode decodes the event with: its Type, or,
// when the tables lack its version and the Reader was not made
// WithExactVersions, the newest older version of the event the first
// table that has one has.
func (e *Event) decodeType() typeRef {
	if e.typ.ok() || e.r == nil || e.r.cfg.exact || len(e.res.provs) == 0 {
		return e.typ
	}
	if e.nt != nil {
		return e.res.older
	}
	return e.r.find(e.res.provs, classicID(e.et), e.Version(), true)
}

// DecodeTypeIn is DecodeType in table t alone: the event's type in t, or,
// for a version t lacks (unless the Reader was made WithExactVersions),
// the newest older version t has; false when t has neither or is not
// among the Reader's tables. Code built on one generated package's types
// (as this module's analyses are on clrevents') finds the runtime's events
// with it whatever else the program links: a package of one's own
// generated from a newer manifest has a new version of an event, which
// Decode and DecodeType give as that package's type; here it is still the
// older version t has. It decodes nothing.
func (e *Event) DecodeTypeIn(t *clrimpl.Table) (clrimpl.EventType, bool) {
	if e.nt != nil && e.res.decTable == t && t != nil {
		return e.res.decType, true
	}
	ref := e.decodeTypeIn(t)
	if !ref.ok() {
		return nil, false
	}
	return e.r.eventType(ref), true
}

// DecodeIn decodes the event with DecodeTypeIn's type, as Decode does with
// DecodeType's (into the Reader's one value of that type; an event t does
// not have returns clrimpl.ErrUnknownEvent).
func (e *Event) DecodeIn(t *clrimpl.Table) (clrimpl.Event, error) {
	ref := e.decodeTypeIn(t)
	if !ref.ok() {
		return nil, clrimpl.ErrUnknownEvent
	}
	ev := e.r.value(ref)
	if _, err := ev.Decode(e.Payload(), e.PointerSize()); err != nil {
		return nil, e.decodeError(err)
	}
	e.r.userPaths(ev)
	return ev, nil
}

// decodeTypeIn is decodeType in table t alone. Decode's own type is the
// answer when it is t's (every event, when t is the first table); else t
// is searched for the event's version, then an older one.
func (e *Event) decodeTypeIn(t *clrimpl.Table) typeRef {
	ref := e.decodeType()
	if e.r == nil || ref.ok() && e.r.ts.tables[ref.t-1] == t {
		return ref
	}
	if e.res == nil {
		return noType
	}
	var id uint16
	var version uint8
	switch {
	case e.nt != nil:
		id, version = e.nt.ID, e.nt.Version
	case e.et != nil:
		id, version = classicID(e.et), e.et.Version
	default:
		return noType
	}
	for _, pr := range e.res.provs {
		if e.r.ts.tables[pr.t] != t {
			continue
		}
		one := [1]provRef{pr}
		if ref := e.r.find(one[:], id, version, false); ref.ok() || e.r.cfg.exact {
			return ref
		}
		return e.r.find(one[:], id, version, true)
	}
	return noType
}

// Decode decodes the payload into the event's generated type, from the
// tables the Reader decodes with (see WithEvents; the values are of the
// generated packages' own types, such as *clrevents.GCStartV2, so a type
// switch on them works). It reuses one value per type (valid until the
// next Decode of the same type; strings and arrays inside it alias the
// payload) and allocates nothing in steady state. An event no table has
// returns clrimpl.ErrUnknownEvent (clrevents.ErrUnknownEvent is the
// same error): itself when a table has the event's provider, else an
// error that wraps it and says that no table has the provider (a program
// that links package trace alone decodes none of the runtime's events:
// link package clrevents); a payload that does not fit its type returns a
// *DecodeError naming the event, the field and the byte offset. A newer
// version of a known event than the tables hold decodes as the newest
// older version, unless the Reader was made WithExactVersions. In an ETW
// log that names its volumes, the paths TraceEvent shows with drive
// letters decode with them, as Reader.UserPath turns them: the FileName
// of the kernel's Image events and of FileIO's Name, FileCreate,
// FileDelete, FileRundown, Create, DirEnum and DirNotify (Payload keeps
// the kernel's bytes).
func (e *Event) Decode() (clrimpl.Event, error) {
	ev, _, err := e.DecodeN()
	return ev, err
}

// DecodeN is Decode that also returns how many payload bytes the type
// used: Payload[n:] is what a newer runtime appended.
func (e *Event) DecodeN() (clrimpl.Event, int, error) {
	ref := e.decodeType()
	if !ref.ok() {
		if e.res != nil && len(e.res.provs) == 0 && e.res.kernel == nil {
			return nil, 0, errNoTable
		}
		return nil, 0, clrimpl.ErrUnknownEvent
	}
	ev := e.r.value(ref)
	n, err := ev.Decode(e.Payload(), e.PointerSize())
	if err != nil {
		return nil, 0, e.decodeError(err)
	}
	e.r.userPaths(ev)
	return ev, n, nil
}

// errNoTable is Decode's error for an event of a provider no table has.
var errNoTable = fmt.Errorf("%w: no event table the Reader decodes with has its provider (the .NET runtime's events are package clrevents': import it, or give its Table to WithEvents)", clrimpl.ErrUnknownEvent)

func (e *Event) decodeError(err error) error {
	return &DecodeError{Name: e.r.cfg.name, Offset: e.Offset(), Err: err}
}

// AppendJSON appends the event's fields as one JSON object, written by
// its Descriptor (its generated type's, as Decode decodes it, the
// kernel's events' too; an EventPipe event's metadata; an ETW log's own
// description). An event nothing describes gives clrimpl.ErrUnknownEvent;
// a payload that does not fit its generated type, a *DecodeError naming
// the event, the field and the offset, and one that does not fit another
// description, the *dynamic.FieldError naming the field and its offset.
// Payload bytes past a generated type are left out (DecodeN says how
// many were used).
func (e *Event) AppendJSON(dst []byte) ([]byte, error) { return e.appendFields(dst, true) }

// AppendText is AppendJSON's text form: the payload's fields as
// space-separated Name=value pairs (strings quoted, maps by name), written
// and failing as AppendJSON does. It writes the fields only: a line of
// clrdump's text output is the event's Time, Provider and Name, pid= and
// tid= (ProcessID, ThreadID), then these pairs, and for an event nothing
// describes (clrimpl.ErrUnknownEvent here) payload=0x followed by the
// Payload in hex.
func (e *Event) AppendText(dst []byte) ([]byte, error) { return e.appendFields(dst, false) }

func (e *Event) appendFields(dst []byte, json bool) ([]byte, error) {
	d := e.Descriptor()
	if d == nil {
		if e.describedEmpty() {
			if json {
				dst = append(dst, "{}"...)
			}
			return dst, nil
		}
		return dst, clrimpl.ErrUnknownEvent
	}
	if e.generated && e.r != nil && e.r.drives != nil && e.et != nil && (d.ProviderGUID == fileIOGUID || d.ProviderGUID == imageGUID) {
		// The paths TraceEvent shows with drive letters (userPaths) are
		// written from the decoded value, which has them.
		if ev, err := e.Decode(); err == nil && pathField(ev) != nil {
			if json {
				return ev.AppendJSON(dst), nil
			}
			return ev.AppendText(dst), nil
		}
	}
	var out []byte
	var err error
	if json {
		out, err = d.Fields.AppendJSON(dst, e.Payload(), e.PointerSize())
	} else {
		out, err = d.Fields.AppendText(dst, e.Payload(), e.PointerSize())
	}
	switch {
	case err == nil:
		return out, nil
	case e.generated:
		return dst, e.decodeError(err)
	}
	return out, err
}

// The format readers' records and readers, for package trace/raw.
func init() {
	rawaccess.Event = func(e any) (*nettrace.Event, *etl.Event) {
		ev := e.(*Event)
		return ev.nt, ev.et
	}
	rawaccess.Reader = func(r any) (*nettrace.Reader, *etl.Reader) {
		rd := r.(*Reader)
		return rd.nt, rd.et
	}
}

// DecodeError is a payload that did not decode: Err names the event, the
// field and the offset in the payload; Name and Offset locate the event in
// the input.
type DecodeError struct {
	Name   string // the input: a path, "standard input", ...
	Offset int64  // the event's byte offset in the (decompressed) file
	Err    error
}

func (e *DecodeError) Error() string {
	return e.Name + ": event at offset " + strconv.FormatInt(e.Offset, 10) + ": " + e.Err.Error()
}

// Unwrap returns the decoder's error.
func (e *DecodeError) Unwrap() error { return e.Err }
