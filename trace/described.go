package trace

import (
	"fmt"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/dynamic"
	"github.com/clrgo/clrevents/etl"
)

// Descriptor returns what describes the event's fields, as one
// clrimpl.Descriptor whatever describes them: the generated type Decode
// decodes the event with (its Type, or the older version of it Decode
// falls back to; see WithEvents and WithExactVersions), else an EventPipe
// event's EventSource metadata, the description an ETW log carries of the
// event (KernelTraceControl's TDH descriptions of manifest-based
// providers such as Microsoft-Windows-Kernel-File, the manifests of .NET
// EventSources, TraceLogging metadata; a description applies from the
// event that carries it on, as the events go by). The kernel's events
// and KernelTraceControl's are of kernelevents' types. It is nil for an
// event nothing describes.
// AppendJSON and AppendText write fields through it, and so do the
// dataset's tables and clrdump's outputs.
//
// The Descriptor of a generated type is the type's own (the same pointer
// as its EventType's and its values'); its Fields decodes each payload
// into a value of its own, so it does not disturb Decode's values.
// Another description's Task and Opcode are the event's (Task, Opcode):
// where the trace's metadata leaves them out and TraceEvent declares them
// (the Task Parallel Library's, the Start and Stop of EventSource events
// named so), the Descriptor is a copy that has them, one per description,
// task and opcode.
func (e *Event) Descriptor() *clrimpl.Descriptor {
	if ref := e.decodeType(); ref.ok() {
		e.generated = true
		return e.r.eventType(ref).Descriptor()
	}
	switch {
	case e.nt != nil:
		if m := e.nt.Metadata; m != nil {
			if d := m.Describe(); d != nil {
				return e.agreeing(d.Descriptor())
			}
			if e.r != nil && e.describedEmpty() {
				return e.agreeing(e.r.emptyDescription(m).Descriptor())
			}
		}
	case e.et != nil:
		if d := e.etwDescription(); d != nil {
			return e.agreeing(d.Descriptor())
		}
	}
	return nil
}

// agreeing returns description d of the event, or, where its task or
// opcode is not the event's (Task, Opcode: what the trace's metadata
// leaves out and TraceEvent declares, such as the Task Parallel
// Library's tasks or the Start of an EventSource event named …Start; an
// ETW header's, such as an EventSource's ManifestData task), a copy with
// the event's, made once per description, task and opcode.
func (e *Event) agreeing(d *clrimpl.Descriptor) *clrimpl.Descriptor {
	task, op := e.Task(), e.Opcode()
	if d.Task == task && uint8(d.Opcode) == op || e.r == nil {
		return d
	}
	k := agreeKey{d, task, op}
	c, ok := e.r.agreed[k]
	if !ok {
		c = new(clrimpl.Descriptor)
		*c = *d
		c.Task, c.Opcode = task, clrimpl.Opcode(op)
		if e.r.agreed == nil {
			e.r.agreed = map[agreeKey]*clrimpl.Descriptor{}
		}
		e.r.agreed[k] = c
	}
	return c
}

// agreeKey is a description, and the task and opcode an event of it has.
type agreeKey struct {
	d    *clrimpl.Descriptor
	task uint16
	op   uint8
}

// etwDescription is the description an ETW trace carries of an event of
// a provider outside the tables and the kernel's classes, looked up once
// per event.
func (e *Event) etwDescription() *dynamic.Description {
	if !e.dynDone {
		e.dynDone = true
		if len(e.res.provs) == 0 && e.res.kernel == nil && e.res.class == nil {
			e.dyn = e.r.lookupETL(e.et)
		}
	}
	return e.dyn
}

// isManifestData reports whether e is an EventSource's ManifestData event.
func isManifestData(e *etl.Event) bool {
	return e.HeaderKind == etl.EventHeader && e.ID == dynamic.ManifestDataID && e.Opcode == dynamic.ManifestDataOpcode
}

// observeETL takes in e if it describes events (an EventInfo, EventMapInfo
// or ManifestData event, or the first TraceLogging event of a provider,
// which names it) and reports whether it was one. A description that
// does not parse is an error naming the event's offset; the events it
// would have described stay undescribed.
func (r *Reader) observeETL(e *etl.Event) (bool, error) {
	if e.HeaderKind == etl.EventHeader && len(e.Extended) > 0 && !isManifestData(e) {
		traits, ok := e.ExtendedItem(etl.ExtProvTraits)
		if !ok {
			return false, nil
		}
		named, err := r.descs.AddProviderTraits(e.ProviderGUID, traits)
		if err != nil {
			return false, fmt.Errorf("etl: TraceLogging event at offset %d: %w", e.Offset, err)
		}
		return named, nil
	}
	var err error
	switch {
	case e.ProviderGUID == dynamic.MetaDataGUID && e.HeaderKind == etl.TraceHeader && e.Opcode == dynamic.OpEventInfo:
		err = r.descs.AddEventInfo(e.Payload)
	case e.ProviderGUID == dynamic.MetaDataGUID && e.HeaderKind == etl.TraceHeader && e.Opcode == dynamic.OpEventMapInfo:
		err = r.descs.AddEventMapInfo(e.Payload)
	case isManifestData(e):
		err = r.descs.AddManifestData(e.ProviderGUID, e.ID, e.Version, e.Opcode, e.Payload)
	default:
		return false, nil
	}
	if err != nil {
		err = fmt.Errorf("etl: event at offset %d: %w", e.Offset, err)
	}
	return true, err
}

// lookupETL finds the description of an ETW event: its TraceLogging
// metadata's, or what the trace described (so far) of its provider's
// event (of its class's opcode, for a classic event).
func (r *Reader) lookupETL(e *etl.Event) *dynamic.Description {
	if e.HeaderKind == etl.EventHeader && len(e.Extended) > 0 {
		if meta, ok := e.ExtendedItem(etl.ExtEventSchemaTL); ok {
			traits, _ := e.ExtendedItem(etl.ExtProvTraits)
			return r.descs.TraceLogging(dynamic.Header{ProviderGUID: e.ProviderGUID, ID: e.ID, Version: e.Version,
				Opcode: e.Opcode, Task: e.Task, Level: e.Level, Keywords: e.Keywords}, meta, traits)
		}
	}
	if e.HeaderKind == etl.TraceHeader || e.HeaderKind == etl.InstanceHeader {
		return r.descs.LookupClassic(e.ProviderGUID, e.Opcode, e.Version)
	}
	return r.descs.Lookup(e.ProviderGUID, e.ID, e.Version)
}
