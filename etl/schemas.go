package etl

import (
	"fmt"

	"github.com/clrgo/clrevents/clrimpl"
)

// Schemas collects the event descriptions a trace carries for providers
// outside the CLR schema, as they go by: KernelTraceControl's EventInfo
// and EventMapInfo events (what TDH knew on the recording machine about
// every manifest-based provider the trace holds, such as
// Microsoft-Windows-Kernel-File or Microsoft-Windows-DNS-Client), the
// manifests .NET EventSources log as their ManifestData event (ID 65534),
// in one or more chunks, and the metadata TraceLogging events carry. Feed
// it every event in order (Observe); Lookup then gives the schema of the
// events it describes. The zero value is
// ready to use. It is not safe for concurrent use.
type Schemas struct {
	events    map[schemaKey]*EventSchema
	maps      map[mapKey]*Map
	providers map[clrimpl.GUID]string
	chunks    map[clrimpl.GUID]*manifestChunks
	// tl holds each TraceLogging event's schema by provider and metadata
	// (nil when the metadata does not parse).
	tl map[clrimpl.GUID]map[string]*EventSchema
}

type schemaKey struct {
	guid    clrimpl.GUID
	id      uint16 // the opcode for classic events
	version uint8
	classic bool
}

type mapKey struct {
	guid clrimpl.GUID
	name string
}

// manifestChunks gathers a manifest logged in several ManifestData events.
type manifestChunks struct {
	total int
	parts [][]byte
	have  int
}

// ManifestDataID and ManifestDataOpcode identify the event in which an
// EventSource logs its manifest.
const (
	ManifestDataID     = 0xFFFE
	ManifestDataOpcode = 0xFE
)

// manifestHeader is the ManifestData envelope: format, major and minor
// version, magic (0x5B), total chunks (uint16), chunk number (uint16).
const manifestHeader = 8

// manifestSchema describes the ManifestData event itself, as TraceEvent
// shows it.
var manifestSchema = []Field{
	{Name: "Format", In: InUInt8, Count: 1, CountField: -1, LengthField: -1},
	{Name: "MajorVersion", In: InUInt8, Count: 1, CountField: -1, LengthField: -1},
	{Name: "MinorVersion", In: InUInt8, Count: 1, CountField: -1, LengthField: -1},
	{Name: "Magic", In: InUInt8, Count: 1, CountField: -1, LengthField: -1},
	{Name: "TotalChunks", In: InUInt16, Count: 1, CountField: -1, LengthField: -1},
	{Name: "ChunkNumber", In: InUInt16, Count: 1, CountField: -1, LengthField: -1},
}

// IsManifestData reports whether e is an EventSource's ManifestData event.
func (e *Event) IsManifestData() bool {
	return e.HeaderKind == EventHeader && e.ID == ManifestDataID && e.Opcode == ManifestDataOpcode
}

// Observe takes in e if it describes events (an EventInfo, EventMapInfo
// or ManifestData event, or the first TraceLogging event of a provider,
// which names it) and reports whether it was one. A description that
// does not parse is an error naming the event's offset; the events it
// would have described stay undescribed.
func (s *Schemas) Observe(e *Event) (bool, error) {
	if e.HeaderKind == EventHeader && len(e.Extended) > 0 && !e.IsManifestData() {
		traits, ok := e.ExtendedItem(ExtProvTraits)
		if !ok {
			return false, nil
		}
		if _, known := s.providers[e.ProviderGUID]; known {
			return false, nil
		}
		name, ok := tlProviderName(traits)
		if !ok {
			return false, fmt.Errorf("etl: TraceLogging event at offset %d: its provider traits name no provider", e.Offset)
		}
		s.init()
		s.providers[e.ProviderGUID] = name
		return true, nil
	}
	switch {
	case e.ProviderGUID == MetaDataGUID && e.HeaderKind == TraceHeader:
		switch e.Opcode {
		case OpEventInfo:
			es, err := ParseEventInfo(e)
			if err != nil {
				return true, err
			}
			s.add(es)
			return true, nil
		case OpEventMapInfo:
			g, m, err := ParseEventMapInfo(e)
			if err != nil {
				return true, err
			}
			s.addMap(g, m)
			return true, nil
		}
	case e.IsManifestData():
		return true, s.manifestChunk(e)
	}
	return false, nil
}

// Lookup returns the schema of e, or nil when the trace has not
// described it (so far). An EventSource's ManifestData event has one too.
func (s *Schemas) Lookup(e *Event) *EventSchema {
	if e.HeaderKind == EventHeader && len(e.Extended) > 0 {
		if meta, ok := e.ExtendedItem(ExtEventSchemaTL); ok {
			return s.traceLogging(e, meta)
		}
	}
	if s.events == nil {
		return nil
	}
	k := schemaKey{guid: e.ProviderGUID, id: e.ID, version: e.Version}
	if e.HeaderKind == TraceHeader || e.HeaderKind == InstanceHeader {
		k.id, k.classic = uint16(e.Opcode), true
	}
	return s.events[k]
}

// traceLogging returns the schema of a TraceLogging event, parsing its
// metadata the first time it is seen.
func (s *Schemas) traceLogging(e *Event, meta []byte) *EventSchema {
	byMeta := s.tl[e.ProviderGUID]
	if es, ok := byMeta[string(meta)]; ok {
		return es
	}
	es, err := ParseTraceLogging(e)
	if err != nil {
		es = nil
	} else if es.Provider == "" {
		es.Provider = s.providers[e.ProviderGUID]
	}
	if s.tl == nil {
		s.tl = make(map[clrimpl.GUID]map[string]*EventSchema)
	}
	if byMeta == nil {
		byMeta = make(map[string]*EventSchema)
		s.tl[e.ProviderGUID] = byMeta
	}
	byMeta[string(meta)] = es
	return es
}

// ProviderName returns the name the trace's descriptions give provider g.
func (s *Schemas) ProviderName(g clrimpl.GUID) (string, bool) {
	name, ok := s.providers[g]
	return name, ok
}

func (s *Schemas) init() {
	if s.events == nil {
		s.events = make(map[schemaKey]*EventSchema)
		s.maps = make(map[mapKey]*Map)
		s.providers = make(map[clrimpl.GUID]string)
	}
}

func (s *Schemas) add(es *EventSchema) {
	s.init()
	k := schemaKey{guid: es.ProviderGUID, id: es.ID, version: es.Version}
	if es.Classic {
		k.id, k.classic = uint16(es.Opcode), true
	}
	linkMaps(es.Fields, func(name string) *Map { return s.maps[mapKey{es.ProviderGUID, name}] })
	s.events[k] = es
	if es.Provider != "" {
		s.providers[es.ProviderGUID] = es.Provider
	}
}

// addMap keeps m and binds it to the fields of g's events that name it.
func (s *Schemas) addMap(g clrimpl.GUID, m *Map) {
	s.init()
	s.maps[mapKey{g, m.Name}] = m
	for k, es := range s.events {
		if k.guid == g {
			linkMaps(es.Fields, func(name string) *Map {
				if name == m.Name {
					return m
				}
				return nil
			})
		}
	}
}

func linkMaps(fs []Field, find func(string) *Map) {
	for i := range fs {
		f := &fs[i]
		if f.MapName != "" && f.Map == nil {
			f.Map = find(f.MapName)
		}
		linkMaps(f.Fields, find)
	}
}

// manifestChunk keeps one ManifestData chunk and, once a provider's
// manifest is whole, describes its events.
func (s *Schemas) manifestChunk(e *Event) error {
	s.init()
	g := e.ProviderGUID
	ms := &EventSchema{ProviderGUID: g, ID: e.ID, Version: e.Version, Opcode: e.Opcode,
		Name: "ManifestData", Fields: manifestSchema, Provider: s.providers[g]}
	s.events[schemaKey{guid: g, id: e.ID, version: e.Version}] = ms
	p := e.Payload
	if len(p) < manifestHeader || p[3] != 0x5B {
		return fmt.Errorf("etl: ManifestData event at offset %d: no manifest envelope", e.Offset)
	}
	total, n := int(le.Uint16(p[4:])), int(le.Uint16(p[6:]))
	if total == 0 || n >= total {
		return fmt.Errorf("etl: ManifestData event at offset %d: chunk %d of %d", e.Offset, n, total)
	}
	if s.chunks == nil {
		s.chunks = make(map[clrimpl.GUID]*manifestChunks)
	}
	c := s.chunks[g]
	if c == nil || c.total != total || n == 0 {
		// A manifest starts again at chunk 0 (each session that enables
		// the source logs it anew).
		c = &manifestChunks{total: total, parts: make([][]byte, total)}
		s.chunks[g] = c
	}
	if c.parts[n] == nil {
		c.have++
	}
	c.parts[n] = append([]byte(nil), p[manifestHeader:]...)
	if c.have < c.total {
		return nil
	}
	delete(s.chunks, g)
	var xml []byte
	for _, part := range c.parts {
		xml = append(xml, part...)
	}
	described, err := parseEventSourceManifest(xml)
	if err != nil {
		return fmt.Errorf("etl: ManifestData event at offset %d: %w", e.Offset, err)
	}
	for _, p := range described {
		s.providers[p.guid] = p.name
		if p.guid == g {
			ms.Provider = p.name
		}
		for _, es := range p.events {
			s.add(es)
		}
	}
	return nil
}
