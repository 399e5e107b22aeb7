package schema

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// LoadManifest reads a ClrEtwAll.man-style XML manifest from a file.
func LoadManifest(path string) (*Schema, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseManifest(path, data)
}

// ParseManifest parses manifest XML. name is used in positions (its base
// name). The result is validated (see Validate) and in canonical order.
func ParseManifest(name string, data []byte) (*Schema, error) {
	if err := utf16File(name, data); err != nil {
		return nil, err
	}
	root, err := parseXMLTree(name, data)
	if err != nil {
		return nil, err
	}
	var l errList
	strs := stringTable(root)
	s := &Schema{Source: basePos(name, 0).File, SourcePos: basePos(name, 0)}
	for _, pn := range root.all("provider") {
		s.Providers = append(s.Providers, loadProvider(pn, strs, &l))
	}
	if len(s.Providers) == 0 {
		l.add(root.pos, "instrumentationManifest", "no <provider> element")
	}
	if err := l.err(); err != nil {
		return nil, err
	}
	canonicalize(s)
	if err := Validate(s); err != nil {
		return nil, err
	}
	return s, nil
}

// maxXMLDepth bounds element nesting. A manifest nests about eight deep
// (instrumentationManifest, instrumentation, events, provider, templates,
// template, struct, data); the bound keeps hostile input from building a
// tree that costs far more memory than the file.
const maxXMLDepth = 32

// xnode is an XML element with the line it starts on.
type xnode struct {
	name  string // local name
	attrs []xml.Attr
	kids  []*xnode
	pos   Pos
}

func (n *xnode) attr(name string) (string, bool) {
	for _, a := range n.attrs {
		if a.Name.Local == name && (a.Name.Space == "" || a.Name.Space == n.name) {
			return strings.TrimSpace(a.Value), true
		}
	}
	return "", false
}

func (n *xnode) get(name string) string { v, _ := n.attr(name); return v }

func (n *xnode) child(name string) *xnode {
	for _, k := range n.kids {
		if k.name == name {
			return k
		}
	}
	return nil
}

// all returns every descendant element named name, in document order.
func (n *xnode) all(name string) []*xnode {
	var out []*xnode
	var walk func(*xnode)
	walk = func(x *xnode) {
		for _, k := range x.kids {
			if k.name == name {
				out = append(out, k)
				continue
			}
			walk(k)
		}
	}
	walk(n)
	return out
}

func parseXMLTree(name string, data []byte) (*xnode, error) {
	lineAt := lineIndex(data)
	d := xml.NewDecoder(bytes.NewReader(data))
	var stack []*xnode
	var root *xnode
	for {
		off := d.InputOffset()
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			line := lineAt(d.InputOffset())
			if se, ok := err.(*xml.SyntaxError); ok {
				line = se.Line
				err = fmt.Errorf("%s", se.Msg)
			}
			return nil, &Error{Pos: basePos(name, line), What: "XML", Msg: err.Error()}
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) >= maxXMLDepth {
				return nil, &Error{Pos: basePos(name, lineAt(off)), What: "<" + t.Name.Local + ">",
					Msg: fmt.Sprintf("elements nest deeper than %d", maxXMLDepth)}
			}
			n := &xnode{name: t.Name.Local, attrs: t.Attr, pos: basePos(name, lineAt(off))}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.kids = append(p.kids, n)
			} else if root == nil {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	if root == nil {
		return nil, &Error{Pos: basePos(name, 1), What: "XML", Msg: "no root element"}
	}
	if root.name != "instrumentationManifest" {
		return nil, &Error{Pos: root.pos, What: "<" + root.name + ">", Msg: "root element is not <instrumentationManifest>"}
	}
	return root, nil
}

// lineIndex returns a function from byte offset to 1-based line.
func lineIndex(data []byte) func(int64) int {
	var starts []int64
	starts = append(starts, 0)
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, int64(i+1))
		}
	}
	return func(off int64) int {
		return sort.Search(len(starts), func(i int) bool { return starts[i] > off })
	}
}

func stringTable(root *xnode) map[string]string {
	m := make(map[string]string)
	for _, st := range root.all("stringTable") {
		for _, s := range st.kids {
			if s.name == "string" {
				m[s.get("id")] = s.get("value")
			}
		}
	}
	return m
}

func loadProvider(pn *xnode, strs map[string]string, l *errList) *Provider {
	p := &Provider{Name: pn.get("name"), Symbol: pn.get("symbol"), Pos: pn.pos}
	what := "provider " + p.Name
	if p.Name == "" {
		l.add(pn.pos, "provider", "missing name")
	}
	g, err := canonicalGUID(pn.get("guid"))
	if err != nil {
		l.add(pn.pos, what, "guid: %v", err)
	}
	p.GUID = g
	for _, sec := range pn.kids {
		switch sec.name {
		case "keywords":
			for _, k := range sec.kids {
				mask, err := parseUint(k.get("mask"), 64)
				if err != nil {
					l.add(k.pos, "keyword "+k.get("name"), "mask: %v", err)
				}
				p.Keywords = append(p.Keywords, &Keyword{Name: k.get("name"), Mask: mask, Symbol: k.get("symbol"), Pos: k.pos})
			}
		case "tasks":
			for _, t := range sec.kids {
				v, err := parseUint(t.get("value"), 16)
				if err != nil {
					l.add(t.pos, "task "+t.get("name"), "value: %v", err)
				}
				task := &Task{Name: t.get("name"), Value: uint16(v), Symbol: t.get("symbol"), Pos: t.pos}
				task.Message = loadMessage(t, strs, "task "+task.Name, l)
				if eg, ok := t.attr("eventGUID"); ok {
					task.EventGUID, err = canonicalGUID(eg)
					if err != nil {
						l.add(t.pos, "task "+task.Name, "eventGUID: %v", err)
					}
				}
				if ops := t.child("opcodes"); ops != nil {
					for _, o := range ops.kids {
						op := loadOpcode(o, l)
						op.Message = loadMessage(o, strs, "opcode "+op.Name, l)
						task.Opcodes = append(task.Opcodes, op)
					}
				}
				p.Tasks = append(p.Tasks, task)
			}
		case "maps":
			for _, m := range sec.kids {
				p.Maps = append(p.Maps, loadMap(m, strs, l))
			}
		case "templates":
			for _, t := range sec.kids {
				tpl := &Template{TID: t.get("tid"), Pos: t.pos}
				tpl.Fields = loadFields(t, "template "+tpl.TID, l)
				p.Templates = append(p.Templates, tpl)
			}
		case "events":
			for _, e := range sec.kids {
				p.Events = append(p.Events, loadEvent(e, l))
			}
		case "opcodes", "channels", "levels":
			l.add(sec.pos, what, "provider-level <%s> is not supported", sec.name)
		default:
			l.add(sec.pos, what, "unknown element <%s>", sec.name)
		}
	}
	return p
}

// loadMessage resolves an element's optional message attribute through
// the string table.
func loadMessage(n *xnode, strs map[string]string, what string, l *errList) string {
	ref, ok := n.attr("message")
	if !ok {
		return ""
	}
	s, ok := resolveString(ref, strs)
	if !ok {
		l.add(n.pos, what, "message %q is not in the string table", ref)
	}
	return s
}

func loadOpcode(o *xnode, l *errList) *Opcode {
	v, err := parseUint(o.get("value"), 8)
	if err != nil {
		l.add(o.pos, "opcode "+o.get("name"), "value: %v", err)
	}
	return &Opcode{Name: o.get("name"), Value: uint8(v), Symbol: o.get("symbol"), Pos: o.pos}
}

func loadMap(m *xnode, strs map[string]string, l *errList) *Map {
	mp := &Map{Name: m.get("name"), Pos: m.pos}
	switch m.name {
	case "valueMap":
		mp.Kind = ValueMap
	case "bitMap":
		mp.Kind = BitMap
	default:
		l.add(m.pos, "map "+mp.Name, "unknown map kind <%s>", m.name)
	}
	for _, e := range m.kids {
		if e.name != "map" {
			l.add(e.pos, "map "+mp.Name, "unexpected <%s>", e.name)
			continue
		}
		v, err := parseUint(e.get("value"), 64)
		if err != nil {
			l.add(e.pos, "map "+mp.Name, "value: %v", err)
		}
		msg := e.get("message")
		name, ok := resolveString(msg, strs)
		if !ok {
			l.add(e.pos, "map "+mp.Name, "message %q is not in the string table", msg)
		}
		mp.Entries = append(mp.Entries, &MapEntry{Value: v, Name: name, Pos: e.pos})
	}
	return mp
}

// resolveString turns "$(string.Id)" into the string table's value.
func resolveString(ref string, strs map[string]string) (string, bool) {
	if strings.HasPrefix(ref, "$(string.") && strings.HasSuffix(ref, ")") {
		v, ok := strs[ref[len("$(string."):len(ref)-1]]
		return v, ok
	}
	return ref, ref != ""
}

var knownFieldAttrs = map[string]bool{"name": true, "inType": true, "outType": true, "map": true, "count": true, "length": true}

func loadFields(parent *xnode, owner string, l *errList) []*Field {
	var fs []*Field
	for _, d := range parent.kids {
		switch d.name {
		case "data":
			f := &Field{Name: d.get("name"), InType: d.get("inType"), OutType: d.get("outType"),
				Map: d.get("map"), Count: d.get("count"), Length: d.get("length"), Pos: d.pos}
			for _, a := range d.attrs {
				if !knownFieldAttrs[a.Name.Local] {
					l.add(d.pos, fieldWhat(owner, f.Name), "unsupported attribute %s", a.Name.Local)
				}
			}
			fs = append(fs, f)
		case "struct":
			f := &Field{Name: d.get("name"), Count: d.get("count"), Length: d.get("length"), Struct: true, Pos: d.pos}
			f.Fields = loadFields(d, owner+": struct "+f.Name, l)
			fs = append(fs, f)
		case "UserData":
			// The rendering hint for Event Viewer: not a fact a decoder needs.
		default:
			l.add(d.pos, owner, "unexpected <%s>", d.name)
		}
	}
	return fs
}

func loadEvent(e *xnode, l *errList) *Event {
	ev := &Event{Symbol: e.get("symbol"), Task: e.get("task"), Opcode: e.get("opcode"),
		Level: e.get("level"), Channel: e.get("channel"), Template: e.get("template"), Pos: e.pos}
	what := "event " + ev.Symbol
	if ev.Symbol == "" {
		what = "event value=" + e.get("value")
		l.add(e.pos, what, "missing symbol")
	}
	v, err := parseUint(e.get("value"), 16)
	if err != nil {
		l.add(e.pos, what, "value: %v", err)
	}
	ev.Value = uint16(v)
	if vs, ok := e.attr("version"); ok {
		ver, err := parseUint(vs, 8)
		if err != nil {
			l.add(e.pos, what, "version: %v", err)
		}
		ev.Version = uint8(ver)
	}
	if kws := strings.Fields(e.get("keywords")); len(kws) > 0 {
		ev.Keywords = kws // nil when absent, as from YAML
	}
	return ev
}

func parseUint(s string, bits int) (uint64, error) {
	if s == "" {
		return 0, fmt.Errorf("missing")
	}
	v, err := strconv.ParseUint(s, 0, bits)
	if err != nil {
		article := "a"
		if bits == 8 {
			article = "an"
		}
		return 0, fmt.Errorf("%q is not %s %d-bit unsigned number", s, article, bits)
	}
	return v, nil
}

// canonicalGUID returns g lower-cased without braces, after checking its
// shape.
func canonicalGUID(g string) (string, error) {
	s := strings.TrimSuffix(strings.TrimPrefix(g, "{"), "}")
	if len(s) != 36 {
		return "", fmt.Errorf("%q is not a GUID", g)
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return "", fmt.Errorf("%q is not a GUID", g)
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				return "", fmt.Errorf("%q is not a GUID", g)
			}
		}
	}
	return strings.ToLower(s), nil
}

// canonicalize puts every list that has no meaningful order into a stable
// one, so that a new manifest shows as a small diff. Fields keep wire order.
func canonicalize(s *Schema) {
	sort.SliceStable(s.Providers, func(i, j int) bool { return s.Providers[i].Name < s.Providers[j].Name })
	for _, p := range s.Providers {
		sort.SliceStable(p.Keywords, func(i, j int) bool { return p.Keywords[i].Mask < p.Keywords[j].Mask })
		sort.SliceStable(p.Tasks, func(i, j int) bool { return p.Tasks[i].Value < p.Tasks[j].Value })
		for _, t := range p.Tasks {
			sort.SliceStable(t.Opcodes, func(i, j int) bool { return t.Opcodes[i].Value < t.Opcodes[j].Value })
		}
		sort.SliceStable(p.Maps, func(i, j int) bool { return p.Maps[i].Name < p.Maps[j].Name })
		for _, m := range p.Maps {
			sort.SliceStable(m.Entries, func(i, j int) bool {
				a, b := m.Entries[i], m.Entries[j]
				if a.Value != b.Value {
					return a.Value < b.Value
				}
				return a.Name < b.Name
			})
		}
		sort.SliceStable(p.Templates, func(i, j int) bool { return p.Templates[i].TID < p.Templates[j].TID })
		sort.SliceStable(p.Events, func(i, j int) bool {
			a, b := p.Events[i], p.Events[j]
			if a.Value != b.Value {
				return a.Value < b.Value
			}
			return a.Version < b.Version
		})
	}
}
