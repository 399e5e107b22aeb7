package etl

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"

	"github.com/clrgo/clrevents/clrimpl"
)

// The manifest a .NET EventSource logs (ManifestData) is an ETW
// instrumentation manifest, simpler than the runtime's: events have no
// symbol, opcodes may be declared once for the provider, and map names
// come from a string table. Only what decoding and naming need is read.

type esManifest struct {
	Providers []esProvider `xml:"instrumentation>events>provider"`
	Strings   []esString   `xml:"localization>resources>stringTable>string"`
}

type esString struct {
	ID    string `xml:"id,attr"`
	Value string `xml:"value,attr"`
}

type esProvider struct {
	Name      string       `xml:"name,attr"`
	GUID      string       `xml:"guid,attr"`
	Keywords  []esKeyword  `xml:"keywords>keyword"`
	Tasks     []esTask     `xml:"tasks>task"`
	Opcodes   []esOpcode   `xml:"opcodes>opcode"`
	ValueMaps []esMap      `xml:"maps>valueMap"`
	BitMaps   []esMap      `xml:"maps>bitMap"`
	Templates []esTemplate `xml:"templates>template"`
	Events    []esEvent    `xml:"events>event"`
}

type esKeyword struct {
	Name string `xml:"name,attr"`
	Mask string `xml:"mask,attr"`
}

type esTask struct {
	Name    string     `xml:"name,attr"`
	Value   string     `xml:"value,attr"`
	Opcodes []esOpcode `xml:"opcodes>opcode"`
}

type esOpcode struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type esMap struct {
	Name    string `xml:"name,attr"`
	Entries []struct {
		Value   string `xml:"value,attr"`
		Message string `xml:"message,attr"`
	} `xml:"map"`
}

type esTemplate struct {
	TID    string   `xml:"tid,attr"`
	Fields []esData `xml:",any"`
}

// esData is a <data> element, or a <struct> holding more of them.
type esData struct {
	XMLName xml.Name
	Name    string   `xml:"name,attr"`
	InType  string   `xml:"inType,attr"`
	OutType string   `xml:"outType,attr"`
	Map     string   `xml:"map,attr"`
	Count   string   `xml:"count,attr"`
	Length  string   `xml:"length,attr"`
	Fields  []esData `xml:",any"`
}

type esEvent struct {
	Value    string `xml:"value,attr"`
	Version  string `xml:"version,attr"`
	Level    string `xml:"level,attr"`
	Keywords string `xml:"keywords,attr"`
	Task     string `xml:"task,attr"`
	Opcode   string `xml:"opcode,attr"`
	Template string `xml:"template,attr"`
	Symbol   string `xml:"symbol,attr"`
}

// describedProvider is a provider of a manifest and its events.
type describedProvider struct {
	guid   clrimpl.GUID
	name   string
	events []*EventSchema
}

// parseEventSourceManifest describes the events of every provider of an
// EventSource's manifest.
func parseEventSourceManifest(data []byte) ([]describedProvider, error) {
	var m esManifest
	if err := xml.NewDecoder(bytes.NewReader(data)).Decode(&m); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	strs := make(map[string]string, len(m.Strings))
	for _, s := range m.Strings {
		strs[s.ID] = s.Value
	}
	var out []describedProvider
	for i := range m.Providers {
		p := &m.Providers[i]
		g, err := clrimpl.ParseGUID(strings.Trim(p.GUID, "{}"))
		if err != nil {
			return nil, fmt.Errorf("manifest: provider %q: guid %q: %w", p.Name, p.GUID, err)
		}
		evs, err := p.describe(g, strs)
		if err != nil {
			return nil, fmt.Errorf("manifest: provider %s: %w", p.Name, err)
		}
		out = append(out, describedProvider{guid: g, name: p.Name, events: evs})
	}
	return out, nil
}

// manifestLevels are the standard levels' values.
var manifestLevels = map[string]uint8{"win:LogAlways": 0, "win:Critical": 1, "win:Error": 2,
	"win:Warning": 3, "win:Informational": 4, "win:Verbose": 5}

// manifestOpcodes are the standard opcodes' values.
var manifestOpcodes = map[string]uint8{"win:Info": 0, "win:Start": 1, "win:Stop": 2, "win:DC_Start": 3,
	"win:DC_Stop": 4, "win:Extension": 5, "win:Reply": 6, "win:Resume": 7, "win:Suspend": 8,
	"win:Send": 9, "win:Receive": 240}

func manifestNumber(s string, bits int, what string) (uint64, error) {
	v, err := strconv.ParseUint(strings.TrimSpace(s), 0, bits)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a %d-bit number", what, s, bits)
	}
	return v, nil
}

func (p *esProvider) describe(g clrimpl.GUID, strs map[string]string) ([]*EventSchema, error) {
	maps := map[string]*Map{}
	for k, list := range [][]esMap{p.ValueMaps, p.BitMaps} {
		for _, em := range list {
			m := &Map{Name: em.Name, Bits: k == 1}
			for _, e := range em.Entries {
				v, err := manifestNumber(e.Value, 64, "map "+em.Name)
				if err != nil {
					return nil, err
				}
				name := e.Message
				if id, ok := strings.CutPrefix(name, "$(string."); ok {
					name = strs[strings.TrimSuffix(id, ")")]
				}
				m.Entries = append(m.Entries, MapEntry{Value: v, Name: name})
			}
			m.prepare()
			maps[m.Name] = m
		}
	}
	keywords := map[string]uint64{}
	for _, k := range p.Keywords {
		v, err := manifestNumber(k.Mask, 64, "keyword "+k.Name)
		if err != nil {
			return nil, err
		}
		keywords[k.Name] = v
	}
	shared := map[string]uint8{}
	for _, o := range p.Opcodes {
		v, err := manifestNumber(o.Value, 8, "opcode "+o.Name)
		if err != nil {
			return nil, err
		}
		shared[o.Name] = uint8(v)
	}
	type task struct {
		value   uint16
		opcodes map[string]uint8
	}
	tasks := map[string]task{}
	for _, t := range p.Tasks {
		v, err := manifestNumber(t.Value, 16, "task "+t.Name)
		if err != nil {
			return nil, err
		}
		tk := task{value: uint16(v), opcodes: map[string]uint8{}}
		for _, o := range t.Opcodes {
			ov, err := manifestNumber(o.Value, 8, "opcode "+o.Name)
			if err != nil {
				return nil, err
			}
			tk.opcodes[o.Name] = uint8(ov)
		}
		tasks[t.Name] = tk
	}
	templates := map[string][]esData{}
	for _, t := range p.Templates {
		templates[t.TID] = t.Fields
	}
	var out []*EventSchema
	for _, ev := range p.Events {
		id, err := manifestNumber(ev.Value, 16, "event value")
		if err != nil {
			return nil, err
		}
		es := &EventSchema{ProviderGUID: g, Provider: p.Name, ID: uint16(id), TaskName: ev.Task,
			Level: manifestLevels[ev.Level]}
		if ev.Version != "" {
			v, err := manifestNumber(ev.Version, 8, "event "+ev.Value+" version")
			if err != nil {
				return nil, err
			}
			es.Version = uint8(v)
		}
		for _, kw := range strings.Fields(ev.Keywords) {
			es.Keywords |= keywords[kw]
		}
		tk, hasTask := tasks[ev.Task]
		es.Task = tk.value
		op, ok := manifestOpcodes[ev.Opcode]
		if !ok && hasTask {
			op, ok = tk.opcodes[ev.Opcode]
		}
		if !ok {
			op = shared[ev.Opcode]
		}
		es.Opcode, es.OpcodeName = op, trimWin(ev.Opcode)
		if ev.Template != "" {
			if es.Fields, err = manifestFields(templates[ev.Template], maps, 0); err != nil {
				return nil, fmt.Errorf("event %d: %w", id, err)
			}
			prepareFields(es.Fields)
		}
		es.Name = ev.Symbol
		es.setName()
		out = append(out, es)
	}
	return out, nil
}

// inTypes maps a manifest's inType names to TDH's numbers.
var inTypes = map[string]InType{
	"win:UnicodeString": InUnicodeString, "win:AnsiString": InAnsiString,
	"win:Int8": InInt8, "win:UInt8": InUInt8, "win:Int16": InInt16, "win:UInt16": InUInt16,
	"win:Int32": InInt32, "win:UInt32": InUInt32, "win:Int64": InInt64, "win:UInt64": InUInt64,
	"win:Float": InFloat, "win:Double": InDouble, "win:Boolean": InBoolean, "win:Binary": InBinary,
	"win:GUID": InGUID, "win:Pointer": InPointer, "win:FILETIME": InFileTime,
	"win:SYSTEMTIME": InSystemTime, "win:SID": InSID, "win:HexInt32": InHexInt32, "win:HexInt64": InHexInt64,
	"win:CountedUnicodeString": InManifestCountedString, "win:CountedAnsiString": InManifestCountedAnsiString,
	"win:CountedBinary": InManifestCountedBinary,
}

var outTypes = map[string]OutType{
	"win:HexInt8": OutHexInt8, "win:HexInt16": OutHexInt16, "win:HexInt32": OutHexInt32, "win:HexInt64": OutHexInt64,
	"win:Port": OutPort, "win:IPv4": OutIPv4, "win:IPv6": OutIPv6, "win:SocketAddress": OutSocketAddress,
	"win:HResult": OutHResult, "win:NTStatus": OutNTStatus, "win:Win32Error": OutWin32Error,
}

// manifestFields turns a template's <data> and <struct> elements into
// fields: a count or length names an earlier field of the same level, or
// is a number.
func manifestFields(ds []esData, maps map[string]*Map, depth int) ([]Field, error) {
	if depth > maxStructDepth {
		return nil, fmt.Errorf("structs nested too deep")
	}
	out := make([]Field, 0, len(ds))
	for _, d := range ds {
		f := Field{Name: d.Name, Out: outTypes[d.OutType], MapName: d.Map, Map: maps[d.Map],
			Count: 1, CountField: -1, LengthField: -1}
		ref := func(s, what string) (int, int, error) {
			for j := range out {
				if out[j].Name == s {
					return 0, j, nil
				}
			}
			v, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || v < 0 {
				return 0, 0, fmt.Errorf("field %s: %s %q is neither an earlier field nor a number", d.Name, what, s)
			}
			return v, -1, nil
		}
		var err error
		if d.Count != "" {
			if f.Count, f.CountField, err = ref(d.Count, "count"); err != nil {
				return nil, err
			}
			f.Array = f.CountField >= 0 || f.Count > 1
		}
		if d.Length != "" {
			if f.Length, f.LengthField, err = ref(d.Length, "length"); err != nil {
				return nil, err
			}
		}
		switch d.XMLName.Local {
		case "struct":
			if f.Fields, err = manifestFields(d.Fields, maps, depth+1); err != nil {
				return nil, err
			}
			if len(f.Fields) == 0 {
				return nil, fmt.Errorf("struct %s has no fields", d.Name)
			}
		case "data":
			in, ok := inTypes[d.InType]
			if !ok {
				return nil, fmt.Errorf("field %s: inType %q is not one this package decodes", d.Name, d.InType)
			}
			f.In = in
		default:
			continue // <UserData> and the like: not payload
		}
		out = append(out, f)
	}
	return out, nil
}
