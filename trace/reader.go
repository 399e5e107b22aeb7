package trace

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/dynamic"
	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/kernelevents"
	"github.com/clrgo/clrevents/nettrace"
)

// WithExactVersions makes Event.Decode refuse event versions the tables
// do not have, instead of decoding a newer runtime's version with the
// newest older one (the extra fields then come back as payload bytes past
// the template; see Event.DecodeN).
func WithExactVersions() Option { return func(c *config) { c.exact = true } }

// WithEvents sets the tables of generated event types the Reader decodes
// with (Event.Decode, Event.Type, Event.Descriptor), instead of the
// registered ones (clrimpl.Tables: every generated package the program
// links, such as clrevents, registers its table when the program starts).
// Several WithEvents add up; a table given twice counts once, a nil one
// not at all, and WithEvents() with none decodes nothing.
//
// When several tables have an event type, the first in the list decodes
// it: the tables given, in the order given, or by default the registered
// ones, clrevents' first (the packages above this one know the runtime's
// events by its types), then the others in the order they registered.
// The Windows kernel's events and KernelTraceControl's (ETW) are decoded
// with package kernelevents whatever the tables: the Reader needs them
// for the shape of an ETW trace's events (processes, threads, stacks). A
// table that has the event's version comes before one that has only an
// older version of it (see WithExactVersions). To put a table before the
// registered ones rather than instead of them:
//
//	trace.WithEvents(append([]*clrimpl.Table{gcev.Table()}, clrimpl.Tables()...)...)
func WithEvents(tables ...*clrimpl.Table) Option {
	return func(c *config) {
		c.tablesSet = true
		for _, t := range tables {
			if t != nil && !slices.Contains(c.tables, t) {
				c.tables = append(c.tables, t)
			}
		}
	}
}

// Info describes a trace as a whole.
type Info struct {
	Format Format
	// Version is the format version: 1–6 for EventPipe (see
	// nettrace.TraceInfo.Version); for ETL the log header's major.minor
	// OS version as major*100+minor (1000 for Windows 10).
	Version int
	// StartTime is the trace's start as the trace states it: the sync
	// time of an EventPipe trace, the session start of an ETL log.
	StartTime time.Time
	// ClockFrequency is the tick rate of Event.Timestamp in Hz.
	ClockFrequency int64
	// SyncTimestamp is the Timestamp of StartTime: relative times count
	// from it, as TraceEvent's do, and a timestamp ts (an event's, or one
	// in a payload) is at StartTime + (ts - SyncTimestamp) / ClockFrequency
	// seconds, as Event.Time gives it. It is an EventPipe trace's sync
	// point, and an ETL log's header event's timestamp (of merged logs, the
	// earliest).
	SyncTimestamp int64
	// PointerSize is the traced process's (EventPipe) or the logging
	// kernel's (ETL) pointer size; events carry their own.
	PointerSize int
	// ProcessID is the traced process of an EventPipe trace (-1 when the
	// trace does not record it: .NET Core 2.0's); -1 for ETL,
	// which records many.
	ProcessID int64
	// NumProcessors is the processor count, 0 when not recorded.
	NumProcessors int
}

// Reader reads events from a trace of any format, in one shape. It is not
// safe for concurrent use.
type Reader struct {
	cfg     config
	format  Format
	nt      *nettrace.Reader
	et      *etl.Reader
	closers []func() error
	info    Info
	// stopped is the error a zipped member's data stopped at: an ETL
	// log's, before its end (a checksum, damaged compressed data; the log
	// is read up to it), an EventPipe trace's when the rest of its data
	// is read after the trace's end (finish). Next reports it at the end.
	stopped error
	// finish reads a zipped EventPipe trace's member to its end once the
	// trace has ended, and returns what its checks found.
	finish func() error

	ev Event
	// ts holds the generated packages' tables events decode with (and
	// what they resolve; shared by Readers over the registered tables);
	// values holds one reused value per event type of each table (made on
	// the first decode of the type), and ownValues the Reader's own
	// (ownValue).
	ts                *readerTables
	values, ownValues [][]clrimpl.Event
	// provCache is what a provider's name and GUID find in the tables.
	provCache map[provKey][]provRef

	// EventPipe: what each metadata record resolves to, by metadata ID
	// (checked against the record, since V6 may reuse IDs).
	metaCache []metaEntry
	metaMap   map[metaKey]*resolved
	metaByPtr map[*nettrace.Metadata]*resolved
	metaHash  [64]metaEntry // large IDs, before the map
	// ETW: recently seen provider GUIDs.
	guidCache []guidEntry
	// emptyDescs describe the EventSource events declared without
	// arguments (emptyDescription), by metadata record.
	emptyDescs map[*nettrace.Metadata]*dynamic.Description
	// threads maps an ETW trace's threads to their processes, from its
	// kernel Thread events so far.
	threads map[uint32]uint32
	// procNames are the executables' names from its kernel Process events
	// so far.
	procNames map[int64]string
	// objNames are the names its FileIO and registry events gave files
	// and registry keys so far, by address (names.go); nil until one
	// does.
	objNames map[uint64]string
	// drives turns kernel paths into drive letters, from its SysConfig
	// events so far (drives.go); nil until one.
	drives *drives
	// agreed holds the copies of descriptions that take the task and
	// opcode of their events (Event.agreeing).
	agreed map[agreeKey]*clrimpl.Descriptor
	// pathUTF8 and pathUTF16 are userPaths' buffers: a path as UTF-8,
	// and the UTF-16 it turns into.
	pathUTF8, pathUTF16 []byte
	// kernelSeen: an ETW trace has had kernel events (a kernel log's
	// processes can be named at its end: endNames).
	kernelSeen bool
	// endsRead: endNames has been looked for (ends), nil if not found.
	endsRead bool
	endNames *endNames
	guidNext int
	// descs holds the descriptions an ETW trace carries of providers
	// outside the tables (KernelTraceControl's EventInfo events, the
	// manifests of .NET EventSources, TraceLogging metadata).
	descs dynamic.Descriptions
	// displayNames are EventPipe events' DisplayName strings, made once.
	displayNames map[displayKey]string
}

// resolved is what a provider (and, for EventPipe, an event) maps to.
type resolved struct {
	// provs are the provider in the tables that have it, in the order of
	// the tables; empty when none has it.
	provs    []provRef
	provider string // the name to show
	// EventPipe: the event's type in the tables, and (when none has its
	// version) the newest older version's.
	typ, older typeRef
	// desc is typ's Descriptor, or older's when typ names none (nil when
	// neither names one): the accessors that fall back on the type's
	// facts (Task, Opcode, Level, Name) read it for every event, and it is
	// fixed once typ is.
	desc *clrimpl.Descriptor
	// EventPipe: the type Decode decodes with (typ, else older) and its
	// table, or nil; DecodeType and DecodeTypeIn answer from them without
	// going through the Reader's tables (the profile builder asks for
	// every event). Fixed once typ is, like desc.
	decType  clrimpl.EventType
	decTable *clrimpl.Table
	kernel   *kernelGroup // a kernel event class
	class    *kernelGroup // another classic (MOF) class with opcode names
}

// provRef is a provider of one of the Reader's tables: the index of the
// table in readerTables.tables and of the provider in Table.Providers.
type provRef struct{ t, p int32 }

// typeRef is an event type of one of the Reader's tables: the index of the
// table in readerTables.tables plus one, and of the type in the table. The
// zero typeRef, noType, names none.
type typeRef struct{ t, i int32 }

var noType typeRef

// ok reports whether ref names a type.
func (ref typeRef) ok() bool { return ref.t > 0 }

// find finds event (id, version) of the provider in the first table that
// has it; with older, the newest older version in the first table that
// has one.
func (r *Reader) find(provs []provRef, id uint16, version uint8, older bool) typeRef {
	for _, pr := range provs {
		t := r.ts.tables[pr.t]
		var i int
		if older {
			i = t.FindOlder(int(pr.p), id, version)
		} else {
			i = t.Find(int(pr.p), id, version)
		}
		if i >= 0 {
			return typeRef{pr.t + 1, int32(i)}
		}
	}
	return noType
}

// eventType returns the type ref names.
func (r *Reader) eventType(ref typeRef) clrimpl.EventType {
	return r.ts.tables[ref.t-1].Type(int(ref.i))
}

// value returns the Reader's value of the type ref names, made on first
// use: what Decode hands out.
func (r *Reader) value(ref typeRef) clrimpl.Event { return r.slot(&r.values, ref) }

// ownValue is value for the Reader's own reading of kernel events
// (kernelValue): a value of its own, so that what it decodes, with the
// kernel's paths, is not what a caller holds from Decode.
func (r *Reader) ownValue(ref typeRef) clrimpl.Event { return r.slot(&r.ownValues, ref) }

// slot returns the value in values of the type ref names, made on first
// use.
func (r *Reader) slot(values *[][]clrimpl.Event, ref typeRef) clrimpl.Event {
	if *values == nil {
		*values = make([][]clrimpl.Event, len(r.ts.tables))
	}
	vs := (*values)[ref.t-1]
	if vs == nil {
		vs = make([]clrimpl.Event, r.ts.tables[ref.t-1].Len())
		(*values)[ref.t-1] = vs
	}
	ev := vs[ref.i]
	if ev == nil {
		ev = r.eventType(ref).New()
		vs[ref.i] = ev
	}
	return ev
}

// Tables returns the tables the Reader decodes with (see WithEvents):
// those given or registered, and kernelevents' when they lack it. The
// slice is the caller's.
func (r *Reader) Tables() []*clrimpl.Table { return slices.Clone(r.ts.tables) }

type metaKey struct {
	meta     *nettrace.Metadata
	provider string
	id       uint16
	version  uint8
}

type metaEntry struct {
	meta *nettrace.Metadata
	res  *resolved
}

type guidEntry struct {
	guid clrimpl.GUID
	res  *resolved
}

func newReader(c *config, format Format, closers []func() error) *Reader {
	r := &Reader{cfg: *c, format: format, closers: closers}
	var ts *readerTables
	if c.tablesSet {
		ts = newReaderTables(slices.Clone(c.tables), 0)
	} else {
		ts = registeredTables()
	}
	r.ts = ts
	r.ev.r = r
	return r
}

// readerTables is what a Reader decodes with: tables, the first nsearch
// of them searched for providers (all but kernelevents' when the Reader
// added it), kernelevents' at ktab, which decodes the kernel's classes.
// A Reader does not change them, so Readers over the registered tables
// share one, and with it what an EventPipe event's provider, ID and
// version resolve to in the tables (resolveEvent): a program that reads
// many traces (a collector's windows, a dataset's traces) resolves each
// kind of event once.
type readerTables struct {
	tables  []*clrimpl.Table
	nsearch int
	ktab    int32
	version uint64 // clrimpl.TablesVersion of the registered tables

	mu       sync.Mutex
	resolved map[resolveKey]*resolved
}

func newReaderTables(tables []*clrimpl.Table, version uint64) *readerTables {
	ts := &readerTables{tables: tables, nsearch: len(tables), version: version}
	kt := kernelevents.Table()
	if i := slices.Index(tables, kt); i >= 0 {
		ts.ktab = int32(i)
	} else {
		ts.ktab = int32(len(tables))
		ts.tables = append(tables, kt)
	}
	return ts
}

// registered: the readerTables of the registered tables, made again
// when a table has been registered since.
var registered atomic.Pointer[readerTables]

func registeredTables() *readerTables {
	v := clrimpl.TablesVersion()
	if ts := registered.Load(); ts != nil && ts.version == v {
		return ts
	}
	// A table registered between the two calls makes the next Reader
	// build them again, nothing worse.
	ts := newReaderTables(ownFirst(clrimpl.Tables()), v)
	registered.Store(ts)
	return ts
}

// clreventsPath is the import path of the generated CLR package.
const clreventsPath = "github.com/clrgo/clrevents/clrevents"

// ownFirst puts package clrevents' table first among the registered ones,
// the others after it in the order they registered. The packages above
// this one (profiles, the GC and JIT models, symbols, metrics) know the
// runtime's events by clrevents' types; a program that also links a
// generated package of its own with some of the same events (a subset, a
// newer manifest's) would otherwise, when its import path sorts before
// clrevents' and so registers first, take those events from them. Its
// package still decodes what clrevents lacks (a newer version: the table
// with the event's version comes first), and WithEvents puts it first.
func ownFirst(tables []*clrimpl.Table) []*clrimpl.Table {
	for i, t := range tables {
		if i > 0 && t.Len() > 0 && typePkg(t.Type(0)) == clreventsPath {
			return append(append([]*clrimpl.Table{t}, tables[:i]...), tables[i+1:]...)
		}
	}
	return tables
}

// typePkg is the import path of the package that declares the type of v
// (or of what it points to).
func typePkg(v any) string {
	t := reflect.TypeOf(v)
	if t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return ""
	}
	return t.PkgPath()
}

func newNetTrace(nr *nettrace.Reader, format Format, c *config, closers ...func() error) *Reader {
	r := newReader(c, format, closers)
	r.nt = nr
	if c.order == TimeOrder {
		nr.SetOrder(nettrace.TimeOrder) // FileOrder and ThreadOrder: as stored
	}
	nr.SetStrict(c.strict)
	ti := nr.Info()
	r.info = Info{
		Format: format, Version: ti.Version, StartTime: ti.SyncTime, ClockFrequency: ti.QPCFrequency,
		SyncTimestamp: ti.SyncTimeQPC, PointerSize: ti.PointerSize, ProcessID: ti.ProcessID, NumProcessors: ti.NumProcessors,
	}
	return r
}

func newETL(er *etl.Reader, c *config, closers ...func() error) *Reader {
	r := newReader(c, ETL, closers)
	r.et = er
	if er.Order() == etl.TimeOrder {
		// A log read with random access is merged by time whatever
		// was asked (WithOrder): Order says so.
		r.cfg.order = TimeOrder
	}
	er.SetStrict(c.strict)
	h := er.Header()
	major, minor := h.OSVersion()
	ptr := int(h.PointerSize)
	if ptr != 4 && ptr != 8 {
		ptr = 8
	}
	r.info = Info{
		Format: ETL, Version: major*100 + minor, StartTime: h.StartTime, ClockFrequency: h.Frequency,
		SyncTimestamp: h.HeaderTimestamp, PointerSize: ptr, ProcessID: -1, NumProcessors: int(h.NumberOfProcessors),
	}
	// The header event names its thread's process: the logging
	// program's thread, whose CPU samples may come before the thread
	// rundown does.
	if tid, pid := h.HeaderThreadID, h.HeaderProcessID; tid != 0 && tid != 0xFFFFFFFF && pid != 0xFFFFFFFF {
		r.threads = map[uint32]uint32{tid: pid}
	}
	return r
}

// Info describes the trace.
func (r *Reader) Info() Info { return r.info }

// Dropped returns how many events the trace's writer dropped: for
// EventPipe, the runtime, as the trace's per-thread sequence numbers show
// them (see nettrace.Reader.Dropped; it grows as the trace is read and is
// complete at io.EOF); for an ETL log, its ETW session, as the log's
// header counts them (EventsLost, of merged logs the sum; known from the
// start).
func (r *Reader) Dropped() uint64 {
	if r.nt != nil {
		return r.nt.Dropped()
	}
	if r.et != nil {
		return uint64(r.et.Header().EventsLost)
	}
	return 0
}

// LostBuffers returns, for an ETL log, how many whole buffers of events
// its ETW session could not write (the log header's BuffersLost, of
// merged logs the sum): their events, which no count gives, are not in
// the trace, nor in Dropped. 0 for other traces.
func (r *Reader) LostBuffers() uint64 {
	if r.et != nil {
		return uint64(r.et.Header().BuffersLost)
	}
	return 0
}

// Format returns the trace's format.
func (r *Reader) Format() Format { return r.format }

// Order is the order the Reader gives events in (WithOrder; TimeOrder by
// default): TimeOrder for an ETL log read from a file whatever was asked
// (see FileOrder).
func (r *Reader) Order() Order { return r.cfg.order }

// Name returns the name errors give for the input.
func (r *Reader) Name() string { return r.cfg.name }

// Started reports whether Next has handed out an event. A Reader read
// from already no longer gives the trace from its start, which the
// analyses built on it (gcstats, jitstats, profile) need: they refuse one,
// rather than report that the trace lacks what was read before them.
func (r *Reader) Started() bool { return r.ev.nt != nil || r.ev.et != nil }

// Close releases the file and removes temporary copies. Next must not be
// called after Close: what it returns then depends on the format (events
// still in a buffer, then an error, or io.EOF). It does not close
// an io.Reader given to NewReader.
func (r *Reader) Close() error {
	var err error
	if r.nt != nil {
		err = r.nt.Close()
	}
	if r.et != nil {
		err = errors.Join(err, r.et.Close())
	}
	for _, c := range r.closers {
		err = errors.Join(err, c())
	}
	r.closers = nil
	return err
}

// Next returns the next event, or io.EOF after the last one. The Event and
// its slices are valid until the next call. Errors name the input and
// where in it the problem is.
//
// A damaged trace loses only what the damage touched: the format reader
// skips a block or buffer that does not parse (and, where the damage broke
// the framing, searches for the next one), Damage records each skipped
// range, and Next returns a *DamageError (errors.Is(err, ErrDamaged))
// after the last event it could read, instead of io.EOF; a trace cut short
// yields every whole event and ends the same way, with a record that runs
// to the cut. Only what cannot be read on ends the trace early: a damaged
// stream or log header (Open and NewReader fail), an unsupported version,
// an I/O error. WithStrict stops at the first damage instead. The error
// that ends the trace comes again on every later call.
func (r *Reader) Next() (*Event, error) {
	if r.nt != nil {
		e, err := r.nt.Next()
		if err != nil {
			return nil, r.wrap(err)
		}
		// The event's resolved type, from the cache by metadata ID
		// without a call when it is there (resolveMeta). Only what
		// changes is written: of an EventPipe reader's Event, only res
		// and typ (from one kind of event to another), nt (the format
		// reader hands out one Event) and the flags Descriptor sets.
		// While the GC marks, each pointer written costs a write
		// barrier.
		var res *resolved
		if m, id := e.Metadata, int(e.MetadataID); m != nil && id < len(r.metaCache) && r.metaCache[id].meta == m && m.EventID == e.ID && m.Version == e.Version {
			res = r.metaCache[id].res
		} else {
			res = r.resolveMeta(e)
		}
		ev := &r.ev
		if ev.res != res {
			ev.res, ev.typ = res, res.typ
		}
		if ev.nt != e {
			ev.nt = e
		}
		ev.generated = false
		return ev, nil
	}
	e, err := r.et.Next()
	if err != nil {
		return nil, r.wrap(err)
	}
	r.fromETL(e)
	return &r.ev, nil
}

func (r *Reader) wrap(err error) error {
	if f := r.finish; f != nil {
		r.finish = nil
		var nd *nettrace.DamageError
		if err == io.EOF || errors.As(err, &nd) && nd.Stopped == nil {
			r.stopped = f()
		}
	}
	if err == io.EOF && r.stopped == nil {
		return err
	}
	if d := r.damageError(err); d != nil {
		return d
	}
	if err == io.EOF {
		err = r.stopped
	}
	return fmt.Errorf("%s: %w", r.cfg.name, err)
}

// resolveMeta maps an EventPipe event to the tables through its metadata
// record, once per record.
func (r *Reader) resolveMeta(e *nettrace.Event) *resolved {
	if m := e.Metadata; m != nil && m.EventID == e.ID && m.Version == e.Version {
		if id := int(e.MetadataID); id < len(r.metaCache) {
			if slot := &r.metaCache[id]; slot.meta == m {
				return slot.res
			}
		} else if slot := &r.metaHash[hashID(e.MetadataID)]; slot.meta == m {
			return slot.res
		}
	}
	return r.resolveMetaSlow(e)
}

func (r *Reader) resolveMetaSlow(e *nettrace.Event) *resolved {
	m := e.Metadata
	if m != nil && m.EventID == e.ID && m.Version == e.Version {
		if id := int(e.MetadataID); id < 1<<16 {
			if id >= len(r.metaCache) {
				r.metaCache = append(r.metaCache, make([]metaEntry, id+1-len(r.metaCache))...)
			}
			r.metaCache[id] = metaEntry{meta: m, res: r.resolveEvent(e.Provider, e.ProviderGUID, e.ID, e.Version)}
			return r.metaCache[id].res
		}
		// Metadata IDs are stream offsets before NetTrace V3.
		res, ok := r.metaByPtr[m]
		if !ok {
			if r.metaByPtr == nil {
				r.metaByPtr = make(map[*nettrace.Metadata]*resolved)
			}
			res = r.resolveEvent(e.Provider, e.ProviderGUID, e.ID, e.Version)
			r.metaByPtr[m] = res
		}
		r.metaHash[hashID(e.MetadataID)] = metaEntry{meta: m, res: res}
		return res
	}
	// No record, or a V6 label that overrode the version.
	k := metaKey{m, e.Provider, e.ID, e.Version}
	if res, ok := r.metaMap[k]; ok {
		return res
	}
	if r.metaMap == nil {
		r.metaMap = make(map[metaKey]*resolved)
	}
	res := r.resolveEvent(e.Provider, e.ProviderGUID, e.ID, e.Version)
	r.metaMap[k] = res
	return res
}

// hashID picks a metaHash slot for a metadata ID (Fibonacci hashing).
func hashID(id uint32) uint32 { return (id * 0x9E3779B1) >> 26 }

// resolveEvent finds a provider in the tables, by name, then by GUID, and
// the event in it.
func (r *Reader) resolveEvent(name string, guid clrimpl.GUID, id uint16, version uint8) *resolved {
	k := resolveKey{name, guid, id, version, r.cfg.exact}
	ts := r.ts
	ts.mu.Lock()
	res, ok := ts.resolved[k]
	ts.mu.Unlock()
	if ok {
		return res
	}
	res = r.resolveEventIn(name, guid, id, version)
	ts.mu.Lock()
	if len(ts.resolved) < maxResolved {
		if ts.resolved == nil {
			ts.resolved = make(map[resolveKey]*resolved)
		}
		ts.resolved[k] = res
	}
	ts.mu.Unlock()
	return res
}

// resolveKey is what resolveEvent's answer depends on, besides the
// tables.
type resolveKey struct {
	name    string
	guid    clrimpl.GUID
	id      uint16
	version uint8
	exact   bool
}

// maxResolved bounds the answers readerTables keeps (about 100 bytes
// each, and the provider name): Readers over the registered tables share
// them for the life of the program, and the names come from the traces.
const maxResolved = 4096

func (r *Reader) resolveEventIn(name string, guid clrimpl.GUID, id uint16, version uint8) *resolved {
	res := &resolved{provider: name}
	res.provs = r.providers(name, guid)
	if len(res.provs) > 0 {
		if res.provider == "" {
			res.provider = r.providerName(res.provs[0])
		}
		res.typ = r.find(res.provs, id, version, false)
		if res.typ.ok() {
			res.desc = r.eventType(res.typ).Descriptor()
		}
		if !res.typ.ok() && !r.cfg.exact {
			res.older = r.find(res.provs, id, version, true)
			if res.older.ok() {
				// A newer version is named, and its task and opcode
				// are, as the older one it decodes with.
				res.desc = r.eventType(res.older).Descriptor()
			}
		}
		if dec := res.typ; dec.ok() || res.older.ok() {
			if !dec.ok() {
				dec = res.older
			}
			res.decType, res.decTable = r.eventType(dec), r.ts.tables[dec.t-1]
		}
	}
	if res.provider == "" && !guid.IsZero() {
		res.provider = guid.String()
	}
	return res
}

// providers finds a provider in each table, by name, or by GUID when the
// name is empty or not the table's; once per name and GUID.
func (r *Reader) providers(name string, guid clrimpl.GUID) []provRef {
	k := provKey{name, guid}
	if provs, ok := r.provCache[k]; ok {
		return provs
	}
	var provs []provRef
	for i, t := range r.ts.tables[:r.ts.nsearch] {
		if p, ok := t.Provider(name, guid); ok {
			provs = append(provs, provRef{int32(i), int32(p)})
		}
	}
	if r.provCache == nil {
		r.provCache = make(map[provKey][]provRef)
	}
	r.provCache[k] = provs
	return provs
}

type provKey struct {
	name string
	guid clrimpl.GUID
}

// providerName is the name of a provider of the tables.
func (r *Reader) providerName(pr provRef) string {
	return r.ts.tables[pr.t].Providers()[pr.p].Name
}

func (r *Reader) fromETL(e *etl.Event) {
	if e.ProviderGUID == dynamic.MetaDataGUID || e.ID == dynamic.ManifestDataID || len(e.Extended) > 0 {
		// A description that does not parse leaves its events undescribed;
		// the event itself is still delivered.
		if ok, _ := r.observeETL(e); ok {
			r.guidCache = r.guidCache[:0] // a provider may have a name now
			r.guidNext = 0
		}
	}
	res := r.resolveGUID(e.ProviderGUID)
	r.ev = Event{r: r, res: res, typ: r.find(res.provs, classicID(e), e.Version, false), et: e}
	if res.kernel != nil {
		r.kernelSeen = true
		r.noteKernel(&r.ev)
		r.ev.ids = idsUnknown // found on the first ProcessID or ThreadID
	} else if e.ProviderGUID == sysConfigGUID && (e.Opcode == 33 || e.Opcode == 35) {
		r.noteDrive(&r.ev) // SystemPaths, VolumeMapping
	}
}

// resolveGUID maps an ETW provider GUID to the tables or the kernel's
// classes, keeping the last few answers.
func (r *Reader) resolveGUID(g clrimpl.GUID) *resolved {
	for i := range r.guidCache {
		if r.guidCache[i].guid == g {
			return r.guidCache[i].res
		}
	}
	res := &resolved{}
	// The kernel logger's classes and KernelTraceControl's first: their
	// events are named, and their processes and threads found, by the
	// kernel's rules, and decoded with kernelevents whatever the tables.
	if k := kernelGroupOf(g); k != nil {
		res.kernel, res.provider = k, kernelProvider
		res.provs = r.kernelProviders(g)
	} else if name, ok := otherProviders()[g]; ok {
		res.provider, res.class = name, etwClasses().other[g]
		res.provs = r.kernelProviders(g)
	} else if provs := r.providers("", g); len(provs) > 0 {
		res.provs, res.provider = provs, r.providerName(provs[0])
	} else if name, ok := r.descs.ProviderName(g); ok {
		res.provider = name
	} else {
		res.provider = g.String()
	}
	const keep = 16
	if len(r.guidCache) < keep {
		r.guidCache = append(r.guidCache, guidEntry{g, res})
	} else {
		r.guidCache[r.guidNext] = guidEntry{g, res}
		r.guidNext = (r.guidNext + 1) % keep
	}
	return res
}

// kernelProviders is the kernel class g in kernelevents' table, if it has
// it.
func (r *Reader) kernelProviders(g clrimpl.GUID) []provRef {
	if p, ok := r.ts.tables[r.ts.ktab].Provider("", g); ok {
		return []provRef{{r.ts.ktab, int32(p)}}
	}
	return nil
}
