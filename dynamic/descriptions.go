package dynamic

import (
	"errors"
	"fmt"

	"github.com/clrgo/clrevents/clrimpl"
)

// Descriptions collects the event descriptions an ETW log carries, as
// its events go by, and finds the description of each event:
// KernelTraceControl's EventInfo and EventMapInfo events (what TDH knew on
// the recording machine about every manifest-based provider the trace
// holds, such as Microsoft-Windows-Kernel-File or
// Microsoft-Windows-DNS-Client), the manifests .NET EventSources log as
// their ManifestData event, and the metadata TraceLogging events carry.
// The caller feeds it the payloads and extended data items of the events
// that carry descriptions, in order; a description applies from there on.
//
// A Description it returns is never modified: when a map arrives after
// the events that use it, their descriptions are replaced by new ones that
// name the map's values. The zero value is ready to use. It is not safe
// for concurrent use.
type Descriptions struct {
	events    map[descKey]*Description
	maps      map[mapKey]*Map
	providers map[clrimpl.GUID]string
	chunks    map[clrimpl.GUID]*manifestChunks
	// tl holds each TraceLogging event's description by provider and
	// metadata (nil when the metadata does not parse).
	tl map[clrimpl.GUID]map[string]*Description
}

type descKey struct {
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
// EventSource logs its manifest into an ETW session.
const (
	ManifestDataID     = 0xFFFE
	ManifestDataOpcode = 0xFE
)

// manifestHeader is the ManifestData envelope: format, major and minor
// version, magic (0x5B), total chunks (uint16), chunk number (uint16).
const manifestHeader = 8

// manifestFields describes the ManifestData event itself, as TraceEvent
// shows it. Its fields are shared by every ManifestData description, so
// they are prepared here, once.
var manifestDataFields = func() []Field {
	fs := []Field{
		{Name: "Format", Kind: Uint8}, {Name: "MajorVersion", Kind: Uint8}, {Name: "MinorVersion", Kind: Uint8},
		{Name: "Magic", Kind: Uint8}, {Name: "TotalChunks", Kind: Uint16}, {Name: "ChunkNumber", Kind: Uint16},
	}
	prepare(fs)
	return fs
}()

func (s *Descriptions) init() {
	if s.events == nil {
		s.events = make(map[descKey]*Description)
		s.maps = make(map[mapKey]*Map)
		s.providers = make(map[clrimpl.GUID]string)
	}
}

// AddEventInfo takes in the payload of a KernelTraceControl
// MetaData/EventInfo event (ParseEventInfo).
func (s *Descriptions) AddEventInfo(payload []byte) error {
	d, err := ParseEventInfo(payload)
	if err != nil {
		return fmt.Errorf("MetaData/EventInfo: %w", err)
	}
	s.add(d)
	return nil
}

// AddEventMapInfo takes in the payload of a KernelTraceControl
// MetaData/EventMapInfo event (ParseEventMapInfo) and names the values of
// the fields of the provider's events that use the map.
func (s *Descriptions) AddEventMapInfo(payload []byte) error {
	g, m, err := ParseEventMapInfo(payload)
	if err != nil {
		return fmt.Errorf("MetaData/EventMapInfo: %w", err)
	}
	s.init()
	s.maps[mapKey{g, m.Name}] = m
	for k, d := range s.events {
		if k.guid == g {
			if nd := withMaps(d, func(name string) *Map {
				if name == m.Name {
					return m
				}
				return nil
			}); nd != nil {
				nd.Descriptor()
				s.events[k] = nd
			}
		}
	}
	return nil
}

// add keeps d, binding its fields to the maps described so far. The
// descriptions it keeps are fixed (Descriptor) before they are handed out,
// so that the fields they share with the descriptions that replace them
// are never written again.
func (s *Descriptions) add(d *Description) {
	s.init()
	d.Descriptor()
	if nd := withMaps(d, func(name string) *Map { return s.maps[mapKey{d.ProviderGUID, name}] }); nd != nil {
		d = nd
		d.Descriptor()
	}
	k := descKey{guid: d.ProviderGUID, id: d.ID, version: d.Version}
	if d.Classic {
		k.id, k.classic = uint16(d.Opcode), true
	}
	s.events[k] = d
	if d.Provider != "" {
		s.providers[d.ProviderGUID] = d.Provider
	}
}

// withMaps returns a copy of d whose fields without a map have the one
// find gives for their map's name, or nil when find gives none.
func withMaps(d *Description, find func(string) *Map) *Description {
	fs, changed := linkMaps(d.Fields, find)
	if !changed {
		return nil
	}
	return &Description{
		ProviderGUID: d.ProviderGUID, Provider: d.Provider, ID: d.ID, Version: d.Version, Opcode: d.Opcode,
		Task: d.Task, Level: d.Level, Keywords: d.Keywords, TaskName: d.TaskName, OpcodeName: d.OpcodeName,
		Name: d.Name, Fields: fs, Classic: d.Classic,
	}
}

// linkMaps returns fs with the maps find gives bound, copied where
// anything changed; fs itself is left alone.
func linkMaps(fs []Field, find func(string) *Map) ([]Field, bool) {
	var out []Field
	for i := range fs {
		f := fs[i]
		changed := false
		if f.MapName != "" && f.Map == nil {
			if f.Map = find(f.MapName); f.Map != nil {
				changed = true
			}
		}
		if sub, ok := linkMaps(f.Fields, find); ok {
			f.Fields, changed = sub, true
		}
		if f.Elem != nil {
			if e, ok := linkMaps([]Field{*f.Elem}, find); ok {
				f.Elem, changed = &e[0], true
			}
		}
		if changed {
			if out == nil {
				out = append([]Field(nil), fs...)
			}
			out[i] = f
		}
	}
	return out, out != nil
}

// AddManifestData takes in one ManifestData event of the provider g (the
// event's ID, version and opcode as its header gives them): the event
// itself is described from then on, and once a provider's manifest is
// whole (ParseManifest), the events of every provider it describes are.
func (s *Descriptions) AddManifestData(g clrimpl.GUID, id uint16, version, opcode uint8, payload []byte) error {
	s.init()
	ms := &Description{ProviderGUID: g, ID: id, Version: version, Opcode: opcode,
		Name: "ManifestData", Fields: manifestDataFields, Provider: s.providers[g]}
	k := descKey{guid: g, id: id, version: version}
	s.events[k] = ms
	p := payload
	if len(p) < manifestHeader || p[3] != 0x5B {
		return errors.New("ManifestData: no manifest envelope")
	}
	total, n := int(le.Uint16(p[4:])), int(le.Uint16(p[6:]))
	if total == 0 || n >= total {
		return fmt.Errorf("ManifestData: chunk %d of %d", n, total)
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
	described, err := ParseManifest(xml)
	if err != nil {
		return fmt.Errorf("ManifestData: %w", err)
	}
	for _, p := range described {
		s.providers[p.GUID] = p.Name
		if p.GUID == g {
			ms.Provider = p.Name // not handed out yet
		}
		for _, d := range p.Events {
			s.add(d)
		}
	}
	return nil
}

// AddProviderTraits takes in the provider traits item of an event of
// provider g (a TraceLogging event's), which names the provider; it
// reports whether that named a provider not named before.
func (s *Descriptions) AddProviderTraits(g clrimpl.GUID, traits []byte) (bool, error) {
	if _, known := s.providers[g]; known {
		return false, nil
	}
	name, ok := ProviderTraitsName(traits)
	if !ok {
		return false, errors.New("TraceLogging provider traits name no provider")
	}
	s.init()
	s.providers[g] = name
	return true, nil
}

// TraceLogging returns the description of a TraceLogging event from its
// header, its metadata item and its provider traits item (nil if it has
// none), parsing the metadata the first time the provider uses it: later
// events with the same metadata share the description. It returns nil for
// metadata that does not parse. It does not allocate for metadata seen
// before.
func (s *Descriptions) TraceLogging(h Header, meta, traits []byte) *Description {
	byMeta := s.tl[h.ProviderGUID]
	if d, ok := byMeta[string(meta)]; ok {
		return d
	}
	d, err := ParseTraceLogging(h, meta, traits)
	if err != nil {
		d = nil
	} else if d.Provider == "" {
		d.Provider = s.providers[h.ProviderGUID]
	}
	if s.tl == nil {
		s.tl = make(map[clrimpl.GUID]map[string]*Description)
	}
	if byMeta == nil {
		byMeta = make(map[string]*Description)
		s.tl[h.ProviderGUID] = byMeta
	}
	byMeta[string(meta)] = d
	return d
}

// Lookup returns the description of event (id, version) of provider g,
// or nil when the trace has not described it (so far). An EventSource's
// ManifestData event has one too.
func (s *Descriptions) Lookup(g clrimpl.GUID, id uint16, version uint8) *Description {
	return s.events[descKey{guid: g, id: id, version: version}]
}

// LookupClassic returns the description of the events of the classic
// (MOF) event class g with the given opcode and version, or nil.
func (s *Descriptions) LookupClassic(g clrimpl.GUID, opcode, version uint8) *Description {
	return s.events[descKey{guid: g, id: uint16(opcode), version: version, classic: true}]
}

// ProviderName returns the name the trace's descriptions give provider g.
func (s *Descriptions) ProviderName(g clrimpl.GUID) (string, bool) {
	name, ok := s.providers[g]
	return name, ok
}
