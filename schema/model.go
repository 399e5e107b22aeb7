package schema

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// Pos is where a node was read: a file name (base name only, so generated
// output does not depend on the checkout path) and a 1-based line.
type Pos struct {
	File string
	Line int
	// Via, when not nil, is the override that changed the node (a field's
	// attributes, an event's Go name): an error about the node names both
	// places, since the value at fault may be the override's.
	Via *Pos
}

func (p Pos) String() string {
	var s string
	switch {
	case p.Line == 0 && p.File != "":
		s = p.File // the whole file: the parser gave no line
	case p.File == "":
		s = fmt.Sprintf("line %d", p.Line)
	default:
		s = fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	if p.Via != nil {
		s += " (as changed by " + p.Via.String() + ")"
	}
	return s
}

// via is p noted as changed by the override at o.
func (p Pos) via(o Pos) Pos {
	o.Via = nil
	p.Via = &o
	return p
}

func basePos(file string, line int) Pos { return Pos{File: filepath.Base(file), Line: line} }

// Schema is one manifest's worth of providers.
type Schema struct {
	// Source names the manifest the schema was imported from (base name).
	Source    string      `yaml:"source"`
	Providers []*Provider `yaml:"providers"`
	// SourcePos is where Source was read: the manifest itself, or the line
	// of the source key in a YAML schema.
	SourcePos Pos `yaml:"-"`
}

// Provider is an ETW provider: one <provider> element.
type Provider struct {
	Name   string `yaml:"name"`
	GUID   string `yaml:"guid"` // canonical lower-case form without braces
	Symbol string `yaml:"symbol"`
	// DisplayName, when set, is the provider name events of the provider
	// are shown under, where it is not Name: TraceEvent shows every event
	// class of the Windows kernel under "Windows Kernel", while each class
	// is a provider of its own here (its GUID). Manifests never set it.
	DisplayName string `yaml:"displayName,omitempty"`

	Keywords  []*Keyword  `yaml:"keywords,omitempty"`
	Tasks     []*Task     `yaml:"tasks,omitempty"`
	Maps      []*Map      `yaml:"maps,omitempty"`
	Templates []*Template `yaml:"templates,omitempty"`
	Events    []*Event    `yaml:"events,omitempty"`

	Pos Pos `yaml:"-"`
}

// Keyword is a named 64-bit mask.
type Keyword struct {
	Name   string `yaml:"name"`
	Mask   uint64 `yaml:"mask"`
	Symbol string `yaml:"symbol,omitempty"`
	// Aliases are former names of the keyword, kept where a newer
	// manifest renamed it (GCHeapCollectKeyword, now
	// ManagedHeapCollectKeyword): each is generated as a deprecated
	// constant of the same mask, so that code written against an older
	// manifest's package still compiles. Manifests never set it; an
	// override does (keywordAliases).
	Aliases []string `yaml:"aliases,omitempty,flow"`
	Pos     Pos      `yaml:"-"`
}

// Task groups events; its opcodes are local to it.
type Task struct {
	Name      string `yaml:"name"`
	Value     uint16 `yaml:"value"`
	Symbol    string `yaml:"symbol,omitempty"`
	EventGUID string `yaml:"eventGUID,omitempty"`
	// Message is the task's display name from the manifest's string
	// table ("GC" for GarbageCollection), as TraceEvent names events.
	Message string    `yaml:"message,omitempty"`
	Opcodes []*Opcode `yaml:"opcodes,omitempty"`
	Pos     Pos       `yaml:"-"`
}

// Opcode is a task-local opcode, or one of the standard win: opcodes.
type Opcode struct {
	Name   string `yaml:"name"`
	Value  uint8  `yaml:"value"`
	Symbol string `yaml:"symbol,omitempty"`
	// Message is the opcode's display name from the string table
	// ("RestartEEStart" for GCRestartEEBegin).
	Message string `yaml:"message,omitempty"`
	Pos     Pos    `yaml:"-"`
}

// MapKind says whether a map's values are exclusive (valueMap) or flags
// (bitMap).
type MapKind string

const (
	ValueMap MapKind = "valueMap"
	BitMap   MapKind = "bitMap"
)

// Map is a valueMap or bitMap; entry names come from the manifest's string
// table.
type Map struct {
	Name    string      `yaml:"name"`
	Kind    MapKind     `yaml:"kind"`
	Entries []*MapEntry `yaml:"entries"`
	Pos     Pos         `yaml:"-"`
}

// MapEntry is one value of a map and its name.
type MapEntry struct {
	Value uint64 `yaml:"value"`
	Name  string `yaml:"name"`
	Pos   Pos    `yaml:"-"`
}

// Template is the payload layout shared by one or more events.
type Template struct {
	TID    string   `yaml:"tid"`
	Fields []*Field `yaml:"fields"`
	// FamilyName, when set, is the Go name of the family of events the
	// template belongs to, instead of the one the rule derives (see
	// FamilyKey). Manifests never set it; an override does, where the
	// derived name would clash.
	FamilyName string `yaml:"familyName,omitempty"`
	// Show, when set, lists the fields an event's JSON, text and column
	// forms write, in that order: the fields TraceEvent shows (its
	// PayloadNames), where those are not every field in wire order. The
	// fields it leaves out are still decoded and encoded. Manifests never
	// set it; the kernel's MOF classes do, where TraceEvent shows a few
	// fields of a larger layout, or one out of wire order.
	Show []string `yaml:"show,omitempty,flow"`
	Pos  Pos      `yaml:"-"`
}

var familyVersion = regexp.MustCompile(`_V[0-9]+$`)

// FamilyKey is what groups templates into a family of events: the template
// name without a trailing _V<digits> and without any "Rundown".
// MethodLoadUnloadRundownVerbose_V1 → MethodLoadUnloadVerbose.
func FamilyKey(tid string) string {
	return strings.ReplaceAll(StripVersion(tid), "Rundown", "")
}

// StripVersion removes a trailing _V<digits>: GCStart_V2 → GCStart.
func StripVersion(s string) string { return familyVersion.ReplaceAllString(s, "") }

// Field is a <data> element, or a <struct> element when Fields is set.
//
// Count and Length keep the manifest's text: a field name, or a literal
// number. Lower resolves them.
type Field struct {
	Name    string `yaml:"name"`
	InType  string `yaml:"inType,omitempty"`
	OutType string `yaml:"outType,omitempty"`
	Map     string `yaml:"map,omitempty"`
	Count   string `yaml:"count,omitempty"`
	Length  string `yaml:"length,omitempty"`
	Struct  bool   `yaml:"struct,omitempty"`
	// Align "natural" lays a struct's elements out as a C compiler does:
	// each field at a multiple of its size (a pointer's for pointers), the
	// element padded to its widest field. Manifests never say it; an
	// override does, where the runtime writes raw structs.
	Align string `yaml:"align,omitempty"`
	// Rest makes the field an array of as many whole elements as the rest
	// of the payload holds (the frames of a kernel stack walk event): it
	// ends the template, and bytes past its last whole element are left
	// over. Manifests never set it; the kernel's MOF classes do.
	Rest bool `yaml:"rest,omitempty"`
	// Walk says the field, an array of pointers, is a call stack
	// (innermost first) that belongs to the event logged just before this
	// one on the same thread: the CLR's stack walk events, which the
	// runtime logs after an event when the Stack keyword is on. Generated
	// types with such a field implement clrimpl.StackWalk. Manifests never
	// set it; an override does.
	Walk   bool     `yaml:"walk,omitempty"`
	Fields []*Field `yaml:"fields,omitempty"`
	Pos    Pos      `yaml:"-"`
}

// Event is one <event> element: a (value, version) of a provider.
type Event struct {
	Value    uint16   `yaml:"value"`
	Version  uint8    `yaml:"version"`
	Symbol   string   `yaml:"symbol"`
	Task     string   `yaml:"task,omitempty"`
	Opcode   string   `yaml:"opcode,omitempty"`
	Level    string   `yaml:"level,omitempty"`
	Keywords []string `yaml:"keywords,omitempty"`
	Channel  string   `yaml:"channel,omitempty"`
	Template string   `yaml:"template,omitempty"`
	// GoName, when set, is the Go type name to use instead of the one the
	// naming rule derives from Symbol. Manifests never set it; an override
	// does, where two symbols would make the same Go name.
	GoName string `yaml:"goName,omitempty"`
	// DisplayProvider, when set, is the provider name this event is shown
	// under, where it is not its provider's (DisplayName, else Name):
	// TraceEvent shows the few kernel events it decodes by their MOF
	// description under "MSNT_SystemTrace". Manifests never set it.
	DisplayProvider string `yaml:"displayProvider,omitempty"`
	// DisplayName, when set, is the name TraceEvent shows the event by,
	// where its parsers do not make it from the task's and opcode's
	// messages ("GC/BulkNode" for the task GC and opcode GCBulkNode).
	// Manifests never set it; an override does.
	DisplayName string `yaml:"displayName,omitempty"`
	Pos         Pos    `yaml:"-"`
}

// StandardLevels are the win: levels every manifest may name.
var StandardLevels = []struct {
	Name  string
	Value uint8
}{
	{"win:LogAlways", 0},
	{"win:Critical", 1},
	{"win:Error", 2},
	{"win:Warning", 3},
	{"win:Informational", 4},
	{"win:Verbose", 5},
}

// StandardOpcodes are the win: opcodes every manifest may name.
var StandardOpcodes = []struct {
	Name  string
	Value uint8
}{
	{"win:Info", 0},
	{"win:Start", 1},
	{"win:Stop", 2},
	{"win:DC_Start", 3},
	{"win:DC_Stop", 4},
	{"win:Extension", 5},
	{"win:Reply", 6},
	{"win:Resume", 7},
	{"win:Suspend", 8},
	{"win:Send", 9},
	{"win:Receive", 240},
}

// Provider returns the provider with the given name, or nil.
func (s *Schema) Provider(name string) *Provider {
	for _, p := range s.Providers {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Template returns the template with the given tid, or nil.
func (p *Provider) Template(tid string) *Template {
	for _, t := range p.Templates {
		if t.TID == tid {
			return t
		}
	}
	return nil
}

// Map returns the map with the given name, or nil.
func (p *Provider) Map(name string) *Map {
	for _, m := range p.Maps {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// Task returns the task with the given name, or nil.
func (p *Provider) Task(name string) *Task {
	for _, t := range p.Tasks {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Keyword returns the keyword with the given name, or nil.
func (p *Provider) Keyword(name string) *Keyword {
	for _, k := range p.Keywords {
		if k.Name == name {
			return k
		}
	}
	return nil
}

// Event returns the event with the given symbol, or nil.
func (p *Provider) Event(symbol string) *Event {
	for _, e := range p.Events {
		if e.Symbol == symbol {
			return e
		}
	}
	return nil
}
