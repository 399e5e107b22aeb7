package trace

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/nettrace"
)

// WithExactVersions makes Event.Decode refuse event versions the schema
// does not have, instead of decoding a newer runtime's version with the
// newest older one (the extra fields then come back as payload bytes past
// the template; see Event.DecodeN).
func WithExactVersions() Option { return func(c *config) { c.exact = true } }

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
	// PointerSize is the traced process's (EventPipe) or the logging
	// kernel's (ETL) pointer size; events carry their own.
	PointerSize int
	// ProcessID is the traced process of an EventPipe trace; -1 for ETL,
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

	ev  Event
	dec *clrevents.Decoder

	// EventPipe: what each metadata record resolves to, by metadata ID
	// (checked against the record, since V6 may reuse IDs).
	metaCache []metaEntry
	metaMap   map[metaKey]*resolved
	metaByPtr map[*nettrace.Metadata]*resolved
	metaHash  [64]metaEntry // large IDs, before the map
	// ETW: recently seen provider GUIDs.
	guidCache []guidEntry
	// threads maps an ETW trace's threads to their processes, from its
	// kernel Thread events so far.
	threads map[uint32]uint32
	// procNames are the executables' names from its kernel Process events
	// so far.
	procNames map[int64]string
	guidNext  int
	// schemas holds the descriptions an ETW trace carries of providers
	// outside the schema (KernelTraceControl's EventInfo events, the
	// manifests of .NET EventSources).
	schemas etl.Schemas
}

// resolved is what a provider (and, for EventPipe, an event) maps to.
type resolved struct {
	prov     clrevents.Provider // invalid when not in the schema
	provider string             // the name to show
	info     *clrevents.EventInfo
	kernel   *kernelGroup // a kernel event class
	class    *kernelGroup // another classic (MOF) class with opcode names
}

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
	guid clrevents.GUID
	res  *resolved
}

func newReader(c *config, format Format, closers []func() error) *Reader {
	dec := clrevents.NewDecoder()
	dec.OlderVersions = !c.exact
	r := &Reader{cfg: *c, format: format, closers: closers, dec: dec}
	r.ev.r = r
	return r
}

func newNetTrace(nr *nettrace.Reader, format Format, c *config, closers ...func() error) *Reader {
	r := newReader(c, format, closers)
	r.nt = nr
	if c.order == TimeOrder {
		nr.SetOrder(nettrace.TimeOrder)
	}
	nr.SetStrict(c.strict)
	ti := nr.Info()
	r.info = Info{
		Format: format, Version: ti.Version, StartTime: ti.SyncTime, ClockFrequency: ti.QPCFrequency,
		PointerSize: ti.PointerSize, ProcessID: ti.ProcessID, NumProcessors: ti.NumProcessors,
	}
	return r
}

func newETL(er *etl.Reader, c *config, closers ...func() error) *Reader {
	r := newReader(c, ETL, closers)
	r.et = er
	er.SetStrict(c.strict)
	h := er.Header()
	major, minor := h.OSVersion()
	ptr := int(h.PointerSize)
	if ptr != 4 && ptr != 8 {
		ptr = 8
	}
	r.info = Info{
		Format: ETL, Version: major*100 + minor, StartTime: h.StartTime, ClockFrequency: h.Frequency,
		PointerSize: ptr, ProcessID: -1, NumProcessors: int(h.NumberOfProcessors),
	}
	return r
}

// Info describes the trace.
func (r *Reader) Info() Info { return r.info }

// Dropped returns how many events the runtime dropped, as an EventPipe
// trace's per-thread sequence numbers show them (see
// nettrace.Reader.Dropped); it grows as the trace is read and is complete
// at io.EOF. It is 0 for ETL logs, whose lost events this package does not
// count.
func (r *Reader) Dropped() uint64 {
	if r.nt != nil {
		return r.nt.Dropped()
	}
	return 0
}

// Format returns the trace's format.
func (r *Reader) Format() Format { return r.format }

// Name returns the name errors give for the input.
func (r *Reader) Name() string { return r.cfg.name }

// NetTrace returns the EventPipe format reader, or nil for ETL.
func (r *Reader) NetTrace() *nettrace.Reader { return r.nt }

// ETL returns the ETW format reader, or nil for EventPipe.
func (r *Reader) ETL() *etl.Reader { return r.et }

// Decoder returns the Decoder that Event.Decode uses, for settings such as
// OlderVersions.
func (r *Reader) Decoder() *clrevents.Decoder { return r.dec }

// Close releases the file and removes temporary copies. It does not close
// an io.Reader given to NewReader.
func (r *Reader) Close() error {
	var errs []error
	if r.nt != nil {
		errs = append(errs, r.nt.Close())
	}
	if r.et != nil {
		errs = append(errs, r.et.Close())
	}
	for _, c := range r.closers {
		errs = append(errs, c())
	}
	r.closers = nil
	return errors.Join(errs...)
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
		r.fromNetTrace(e)
		return &r.ev, nil
	}
	e, err := r.et.Next()
	if err != nil {
		return nil, r.wrap(err)
	}
	r.fromETL(e)
	return &r.ev, nil
}

func (r *Reader) wrap(err error) error {
	if err == io.EOF {
		return err
	}
	if d := r.damageError(err); d != nil {
		return d
	}
	return fmt.Errorf("%s: %w", r.cfg.name, err)
}

func (r *Reader) fromNetTrace(e *nettrace.Event) {
	res := r.resolveMeta(e)
	// Only what changes is written: of an EventPipe reader's Event, only
	// res and info (from one kind of event to another) and nt (the format
	// reader hands out one Event). While the GC marks, each pointer
	// written costs a write barrier.
	ev := &r.ev
	if ev.res != res {
		ev.res, ev.info = res, res.info
	}
	if ev.nt != e {
		ev.nt = e
	}
}

// resolveMeta maps an EventPipe event to the schema through its metadata
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

// resolveEvent finds a provider by name, then by GUID, and the event in it.
func (r *Reader) resolveEvent(name string, guid clrevents.GUID, id uint16, version uint8) *resolved {
	res := &resolved{prov: noProvider, provider: name}
	p, ok := clrevents.ProviderByName(name)
	if !ok && !guid.IsZero() {
		p, ok = clrevents.ProviderByGUID(guid)
	}
	if ok {
		res.prov = p
		if res.provider == "" {
			res.provider = p.String()
		}
		res.info, _ = clrevents.Lookup(p, id, version)
	}
	if res.provider == "" && !guid.IsZero() {
		res.provider = guid.String()
	}
	return res
}

// noProvider is an invalid clrevents.Provider: the event is not in the
// schema.
const noProvider = clrevents.Provider(255)

func (r *Reader) fromETL(e *etl.Event) {
	if e.ProviderGUID == etl.MetaDataGUID || e.ID == etl.ManifestDataID || len(e.Extended) > 0 {
		// A description that does not parse leaves its events undescribed;
		// the event itself is still delivered.
		if ok, _ := r.schemas.Observe(e); ok {
			r.guidCache = r.guidCache[:0] // a provider may have a name now
			r.guidNext = 0
		}
	}
	res := r.resolveGUID(e.ProviderGUID)
	var info *clrevents.EventInfo
	var dyn *etl.EventSchema
	if res.prov.Valid() {
		info, _ = clrevents.Lookup(res.prov, e.ID, e.Version)
	} else if res.kernel == nil && res.class == nil {
		dyn = r.schemas.Lookup(e)
	}
	r.ev = Event{r: r, res: res, info: info, et: e, dyn: dyn}
	if res.kernel != nil {
		r.noteThread(e)
		r.noteProcess(e)
		r.ev.ids = idsUnknown // found on the first ProcessID or ThreadID
	}
}

// resolveGUID maps an ETW provider GUID to the schema or the kernel table,
// keeping the last few answers.
func (r *Reader) resolveGUID(g clrevents.GUID) *resolved {
	for i := range r.guidCache {
		if r.guidCache[i].guid == g {
			return r.guidCache[i].res
		}
	}
	res := &resolved{prov: noProvider}
	if p, ok := clrevents.ProviderByGUID(g); ok {
		res.prov, res.provider = p, p.String()
	} else if k := kernelGroupOf(g); k != nil {
		res.kernel, res.provider = k, kernelProvider
	} else if name, ok := otherProviders[g]; ok {
		res.provider, res.class = name, otherClasses[g]
	} else if name, ok := r.schemas.ProviderName(g); ok {
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
