package schema

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// yamlHeader opens every YAML schema file written by MarshalYAML.
const yamlHeader = `# The CLR event schema, imported from %s by "clrgen import".
# Facts only: regenerate it with clrgen import; put corrections in overrides.yaml.
# License: MIT, .NET Foundation and Contributors (the manifest's own license).
`

// MarshalYAML renders s as the checked-in YAML schema: a stable order, one
// line per keyword, opcode, map entry, field and event, so that importing a
// newer manifest shows as a reviewable diff.
func MarshalYAML(s *Schema) ([]byte, error) {
	if i := strings.IndexFunc(s.Source, isControl); i >= 0 {
		// The header's comment would end at a line break in it.
		return nil, fmt.Errorf("schema: source %q has a control character at byte %d", s.Source, i)
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, yamlHeader, s.Source)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(schemaNode(s)); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// LoadYAML reads a YAML schema file.
func LoadYAML(path string) (*Schema, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseYAML(path, data)
}

// ParseYAML parses a YAML schema; name is used in positions. The result is
// validated and in canonical order.
func ParseYAML(name string, data []byte) (*Schema, error) {
	var s Schema
	if err := yaml.Unmarshal(data, &s); err != nil {
		return nil, yamlError(name, err)
	}
	if err := checkKeys(data, reflect.TypeOf(s), basePos(name, 0).File); err != nil {
		return nil, err
	}
	if err := setFile(&s, basePos(name, 0).File); err != nil {
		return nil, err
	}
	canonicalize(&s)
	if err := Validate(&s); err != nil {
		return nil, err
	}
	return &s, nil
}

func yamlError(name string, err error) error {
	if te, ok := err.(*yaml.TypeError); ok && len(te.Errors) > 0 {
		// yaml.v3 messages start with "line N: ".
		var line int
		var msg string
		if _, scanErr := fmt.Sscanf(te.Errors[0], "line %d:", &line); scanErr == nil {
			msg = te.Errors[0][len(fmt.Sprintf("line %d: ", line)):]
			return &Error{Pos: basePos(name, line), What: "YAML", Msg: msg}
		}
	}
	// Syntax errors read "yaml: line N: …".
	var line int
	if _, scanErr := fmt.Sscanf(err.Error(), "yaml: line %d:", &line); scanErr == nil {
		msg := err.Error()[len(fmt.Sprintf("yaml: line %d: ", line)):]
		return &Error{Pos: basePos(name, line), What: "YAML", Msg: msg}
	}
	// yaml.v3 leaves "line N" out when the error is on the first line;
	// a few errors (an unknown anchor, too deep, too many aliases) carry no
	// position at all, and are reported against the whole file.
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line = 1
	for _, lineless := range []string{"unknown anchor", "exceeded max depth", "excessive aliasing"} {
		if strings.Contains(msg, lineless) {
			line = 0
		}
	}
	return &Error{Pos: basePos(name, line), What: "YAML", Msg: msg}
}

// setFile records the file name in every position, and reports list items
// that are empty ("- " with nothing after it: yaml.v3 makes them nil) at the
// line of the node that holds them.
func setFile(s *Schema, file string) error {
	var l errList
	s.SourcePos.File = file
	empty := func(pos Pos, what string) { l.add(Pos{File: file, Line: pos.Line}, what, "empty list item") }
	var fields func(owner Pos, what string, fs []*Field)
	fields = func(owner Pos, what string, fs []*Field) {
		for _, f := range fs {
			if f == nil {
				empty(owner, what)
				continue
			}
			f.Pos.File = file
			fields(f.Pos, what+": field "+f.Name, f.Fields)
		}
	}
	for _, p := range s.Providers {
		if p == nil {
			empty(Pos{Line: 1}, "providers")
			continue
		}
		p.Pos.File = file
		what := "provider " + p.Name
		for _, k := range p.Keywords {
			if k == nil {
				empty(p.Pos, what+": keywords")
				continue
			}
			k.Pos.File = file
		}
		for _, t := range p.Tasks {
			if t == nil {
				empty(p.Pos, what+": tasks")
				continue
			}
			t.Pos.File = file
			for _, o := range t.Opcodes {
				if o == nil {
					empty(t.Pos, "task "+t.Name+": opcodes")
					continue
				}
				o.Pos.File = file
			}
		}
		for _, m := range p.Maps {
			if m == nil {
				empty(p.Pos, what+": maps")
				continue
			}
			m.Pos.File = file
			for _, e := range m.Entries {
				if e == nil {
					empty(m.Pos, "map "+m.Name+": entries")
					continue
				}
				e.Pos.File = file
			}
		}
		for _, t := range p.Templates {
			if t == nil {
				empty(p.Pos, what+": templates")
				continue
			}
			t.Pos.File = file
			fields(t.Pos, "template "+t.TID, t.Fields)
		}
		for _, e := range p.Events {
			if e == nil {
				empty(p.Pos, what+": events")
				continue
			}
			e.Pos.File = file
		}
	}
	return l.err()
}

// The UnmarshalYAML methods record each node's line.

func (s *Schema) UnmarshalYAML(n *yaml.Node) error {
	type plain Schema
	for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "source" {
			s.SourcePos.Line = n.Content[i].Line
		}
	}
	return n.Decode((*plain)(s))
}

func (p *Provider) UnmarshalYAML(n *yaml.Node) error {
	type plain Provider
	p.Pos.Line = n.Line
	return n.Decode((*plain)(p))
}

func (k *Keyword) UnmarshalYAML(n *yaml.Node) error {
	type plain Keyword
	k.Pos.Line = n.Line
	return n.Decode((*plain)(k))
}

func (t *Task) UnmarshalYAML(n *yaml.Node) error {
	type plain Task
	t.Pos.Line = n.Line
	return n.Decode((*plain)(t))
}

func (o *Opcode) UnmarshalYAML(n *yaml.Node) error {
	type plain Opcode
	o.Pos.Line = n.Line
	return n.Decode((*plain)(o))
}

func (m *Map) UnmarshalYAML(n *yaml.Node) error {
	type plain Map
	m.Pos.Line = n.Line
	if err := n.Decode((*plain)(m)); err != nil {
		return err
	}
	if len(m.Entries) == 0 {
		m.Entries = nil // "entries: []" is nil as from XML
	}
	return nil
}

func (e *MapEntry) UnmarshalYAML(n *yaml.Node) error {
	type plain MapEntry
	e.Pos.Line = n.Line
	return n.Decode((*plain)(e))
}

func (t *Template) UnmarshalYAML(n *yaml.Node) error {
	type plain Template
	t.Pos.Line = n.Line
	if err := n.Decode((*plain)(t)); err != nil {
		return err
	}
	if len(t.Fields) == 0 {
		t.Fields = nil // "fields: []", an empty template, is nil as from XML
	}
	return nil
}

func (f *Field) UnmarshalYAML(n *yaml.Node) error {
	type plain Field
	f.Pos.Line = n.Line
	return n.Decode((*plain)(f))
}

func (e *Event) UnmarshalYAML(n *yaml.Node) error {
	type plain Event
	e.Pos.Line = n.Line
	return n.Decode((*plain)(e))
}

// Node building. Each helper returns the node for one construct.

func mapping(flow bool, kv ...*yaml.Node) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Content: kv}
	if flow {
		n.Style = yaml.FlowStyle
	}
	return n
}

func seq(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Content: items}
}

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func num(v uint64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatUint(v, 10)}
}

func hexnum(v uint64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: "0x" + strconv.FormatUint(v, 16)}
}

// kvs appends key/value pairs, leaving out empty strings.
func kvs(dst []*yaml.Node, pairs ...any) []*yaml.Node {
	for i := 0; i < len(pairs); i += 2 {
		k := pairs[i].(string)
		switch v := pairs[i+1].(type) {
		case string:
			if v != "" {
				dst = append(dst, str(k), str(v))
			}
		case *yaml.Node:
			if v != nil {
				dst = append(dst, str(k), v)
			}
		default:
			panic(fmt.Sprintf("kvs: %T", v))
		}
	}
	return dst
}

func schemaNode(s *Schema) *yaml.Node {
	ps := seq()
	for _, p := range s.Providers {
		ps.Content = append(ps.Content, providerNode(p))
	}
	return mapping(false, kvs(nil, "source", s.Source, "providers", ps)...)
}

func providerNode(p *Provider) *yaml.Node {
	kv := kvs(nil, "name", p.Name, "guid", p.GUID, "symbol", p.Symbol, "displayName", p.DisplayName)
	if len(p.Keywords) > 0 {
		ks := seq()
		for _, k := range p.Keywords {
			ks.Content = append(ks.Content, mapping(true, kvs(nil, "name", k.Name, "mask", hexnum(k.Mask), "symbol", k.Symbol)...))
		}
		kv = kvs(kv, "keywords", ks)
	}
	if len(p.Tasks) > 0 {
		ts := seq()
		for _, t := range p.Tasks {
			tk := kvs(nil, "name", t.Name, "value", num(uint64(t.Value)), "symbol", t.Symbol, "eventGUID", t.EventGUID, "message", t.Message)
			if len(t.Opcodes) > 0 {
				os := seq()
				for _, o := range t.Opcodes {
					os.Content = append(os.Content, mapping(true, kvs(nil, "name", o.Name, "value", num(uint64(o.Value)), "symbol", o.Symbol, "message", o.Message)...))
				}
				tk = kvs(tk, "opcodes", os)
			}
			ts.Content = append(ts.Content, mapping(false, tk...))
		}
		kv = kvs(kv, "tasks", ts)
	}
	if len(p.Maps) > 0 {
		ms := seq()
		for _, m := range p.Maps {
			es := seq()
			for _, e := range m.Entries {
				es.Content = append(es.Content, mapping(true, kvs(nil, "value", hexnum(e.Value), "name", e.Name)...))
			}
			ms.Content = append(ms.Content, mapping(false, kvs(nil, "name", m.Name, "kind", string(m.Kind), "entries", es)...))
		}
		kv = kvs(kv, "maps", ms)
	}
	if len(p.Templates) > 0 {
		ts := seq()
		for _, t := range p.Templates {
			tk := kvs(nil, "tid", t.TID, "familyName", t.FamilyName)
			if len(t.Show) > 0 {
				sh := seq()
				sh.Style = yaml.FlowStyle
				for _, n := range t.Show {
					sh.Content = append(sh.Content, str(n))
				}
				tk = kvs(tk, "show", sh)
			}
			ts.Content = append(ts.Content, mapping(false, kvs(tk, "fields", fieldsNode(t.Fields))...))
		}
		kv = kvs(kv, "templates", ts)
	}
	if len(p.Events) > 0 {
		es := seq()
		for _, e := range p.Events {
			ek := kvs(nil, "value", num(uint64(e.Value)), "version", num(uint64(e.Version)), "symbol", e.Symbol,
				"task", e.Task, "opcode", e.Opcode, "level", e.Level)
			if len(e.Keywords) > 0 {
				ks := seq()
				ks.Style = yaml.FlowStyle
				for _, k := range e.Keywords {
					ks.Content = append(ks.Content, str(k))
				}
				ek = kvs(ek, "keywords", ks)
			}
			ek = kvs(ek, "channel", e.Channel, "template", e.Template, "displayProvider", e.DisplayProvider, "displayName", e.DisplayName)
			es.Content = append(es.Content, mapping(true, ek...))
		}
		kv = kvs(kv, "events", es)
	}
	return mapping(false, kv...)
}

func fieldsNode(fs []*Field) *yaml.Node {
	out := seq()
	for _, f := range fs {
		kv := kvs(nil, "name", f.Name, "inType", f.InType, "outType", f.OutType, "map", f.Map,
			"count", f.Count, "length", f.Length)
		if f.Rest {
			kv = append(kv, str("rest"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
		}
		if f.Walk {
			kv = append(kv, str("walk"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
		}
		if f.Struct {
			kv = append(kv, str("struct"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
			kv = kvs(kv, "align", f.Align)
			kv = kvs(kv, "fields", fieldsNode(f.Fields))
			out.Content = append(out.Content, mapping(false, kv...))
			continue
		}
		out.Content = append(out.Content, mapping(true, kv...))
	}
	return out
}
