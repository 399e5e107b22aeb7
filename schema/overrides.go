package schema

import (
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Overrides are our corrections of known manifest errors, kept as data
// (schema/overrides.yaml) and applied on top of the imported schema at every
// generation. Each says why. An override that matches nothing, or that the
// schema already satisfies, is an error: it has become stale and should go.
//
// Corrections of a template, and display names, carry to the newer versions
// of the same event that no override names (see carry.go): a newer runtime
// adds versions with symbols and templates of their own.
type Overrides struct {
	Entries []*Override `yaml:"overrides"`
	File    string      `yaml:"-"`
}

// Override is one correction. It names one or more providers and exactly one
// target: a map (to add entries), a new map, a template (to change a field's
// attributes, insert fields, or give an empty template its fields), Go
// names, or display names.
type Override struct {
	Why       string   `yaml:"why"`
	Providers []string `yaml:"providers"`

	Map        string      `yaml:"map,omitempty"`
	AddEntries []*MapEntry `yaml:"addEntries,omitempty"`

	// NewMap adds a map the manifest does not define: an enum the
	// runtime's headers give names to but the manifest leaves as bare
	// integers. A field override (set: {map: …}) binds it to fields.
	NewMap *Map `yaml:"newMap,omitempty"`

	// Template, or Templates for the same field of several templates (the
	// versions of one event), names what Field, InsertAfter or Fields
	// changes; Templates only goes with field and set.
	Template  string      `yaml:"template,omitempty"`
	Templates []string    `yaml:"templates,omitempty"`
	Field     string      `yaml:"field,omitempty"` // a path: "Values.Name" for a struct's field
	Set       *FieldPatch `yaml:"set,omitempty"`
	// InsertAfter (a field path) and Insert add fields the manifest leaves
	// out, such as padding the runtime writes inside a struct.
	InsertAfter string   `yaml:"insertAfter,omitempty"`
	Insert      []*Field `yaml:"insert,omitempty"`
	// Fields gives a template the manifest leaves empty its fields: the
	// layout of a raw struct the runtime logs behind an empty template.
	Fields []*Field `yaml:"fields,omitempty"`

	// GoNames gives events (by symbol) explicit Go type names.
	GoNames map[string]string `yaml:"goNames,omitempty"`
	// DisplayNames gives events (by symbol) the names TraceEvent shows
	// them by, where they are not the task's and opcode's messages.
	DisplayNames map[string]string `yaml:"displayNames,omitempty"`
	// FamilyNames gives the families of templates (by template name) an
	// explicit Go name, where the derived one would clash.
	FamilyNames map[string]string `yaml:"familyNames,omitempty"`
	// KeywordAliases keeps former keyword names (the keys) as aliases of
	// the keywords the manifest now names (the values), where it renamed
	// a keyword and kept its mask (see Keyword.Aliases).
	KeywordAliases map[string]string `yaml:"keywordAliases,omitempty"`

	Pos Pos `yaml:"-"`
}

// FieldPatch lists the field attributes an override may change; a nil
// pointer leaves the attribute alone, an empty string clears it.
type FieldPatch struct {
	InType  *string `yaml:"inType,omitempty"`
	OutType *string `yaml:"outType,omitempty"`
	Map     *string `yaml:"map,omitempty"`
	Count   *string `yaml:"count,omitempty"`
	Length  *string `yaml:"length,omitempty"`
	Align   *string `yaml:"align,omitempty"`
	// Walk marks the field as a stack walk of the event before (see
	// Field.Walk).
	Walk *bool `yaml:"walk,omitempty"`
}

func (o *Override) UnmarshalYAML(n *yaml.Node) error {
	type plain Override
	o.Pos.Line = n.Line
	return n.Decode((*plain)(o))
}

// LoadOverrides reads an overrides file.
func LoadOverrides(path string) (*Overrides, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseOverrides(path, data)
}

// ParseOverrides parses overrides YAML; name is used in positions.
func ParseOverrides(name string, data []byte) (*Overrides, error) {
	o := &Overrides{File: basePos(name, 0).File}
	if err := yaml.Unmarshal(data, o); err != nil {
		return nil, yamlError(name, err)
	}
	if err := checkKeys(data, reflect.TypeOf(o), o.File); err != nil {
		return nil, err
	}
	var l errList
	for _, e := range o.Entries {
		if e == nil {
			l.add(Pos{File: o.File, Line: 1}, "overrides", "empty list item")
			continue
		}
		for _, x := range e.AddEntries {
			if x == nil {
				l.add(Pos{File: o.File, Line: e.Pos.Line}, "override", "empty item in addEntries")
			}
		}
		for _, x := range e.Insert {
			if x == nil {
				l.add(Pos{File: o.File, Line: e.Pos.Line}, "override", "empty item in insert")
			}
		}
		if hasNilField(e.Fields) {
			l.add(Pos{File: o.File, Line: e.Pos.Line}, "override", "empty item in fields")
		}
		if e.NewMap != nil {
			for _, x := range e.NewMap.Entries {
				if x == nil {
					l.add(Pos{File: o.File, Line: e.Pos.Line}, "override", "empty item in newMap entries")
				}
			}
		}
	}
	if err := l.err(); err != nil {
		return nil, err
	}
	for _, e := range o.Entries {
		e.Pos.File = o.File
		what := "override"
		switch {
		case strings.TrimSpace(e.Why) == "":
			l.add(e.Pos, what, "every override needs a why")
		case len(e.Providers) == 0:
			l.add(e.Pos, what, "no providers named")
		case countTrue(e.Map != "", e.NewMap != nil, e.Template != "", len(e.Templates) > 0, len(e.GoNames) > 0, len(e.FamilyNames) > 0, len(e.DisplayNames) > 0, len(e.KeywordAliases) > 0) != 1:
			l.add(e.Pos, what, "name exactly one of map, newMap, template, templates, goNames, displayNames, familyNames or keywordAliases")
		case e.Map != "" && len(e.AddEntries) == 0:
			l.add(e.Pos, what, "map %s: nothing to add", e.Map)
		case e.NewMap != nil && (e.NewMap.Name == "" || len(e.NewMap.Entries) == 0):
			l.add(e.Pos, what, "newMap needs a name and entries")
		case e.NewMap != nil && e.NewMap.Kind != ValueMap && e.NewMap.Kind != BitMap:
			l.add(e.Pos, what, "newMap %s: kind %q is neither %s nor %s", e.NewMap.Name, e.NewMap.Kind, ValueMap, BitMap)
		case len(e.Templates) > 0 && (e.Field == "" || e.Set == nil):
			l.add(e.Pos, what, "templates %v: name field and set", e.Templates)
		case e.Template != "" && countTrue(e.Field != "", e.InsertAfter != "", len(e.Fields) > 0) != 1:
			l.add(e.Pos, what, "template %s: name either field (with set), insertAfter (with insert) or fields", e.Template)
		case e.Template != "" && e.Field != "" && e.Set == nil:
			l.add(e.Pos, what, "template %s: field %s needs set", e.Template, e.Field)
		case e.Template != "" && e.InsertAfter != "" && len(e.Insert) == 0:
			l.add(e.Pos, what, "template %s: insertAfter %s needs insert", e.Template, e.InsertAfter)
		}
	}
	if err := l.err(); err != nil {
		return nil, err
	}
	return o, nil
}

// Apply applies the overrides to s in place, then validates the result. An
// override that does not apply (its provider, map, template, field or event
// is absent, or s already says what it says) is an error: for the schema it
// was written for, it has become stale.
func (o *Overrides) Apply(s *Schema) error {
	_, err := o.apply(s, false)
	return err
}

// ApplyLenient is Apply for a schema the overrides were not written for,
// such as an older manifest: the overrides that apply are applied, and those
// that do not are returned, each a located *Error saying why, instead of
// failing. Malformed overrides are still errors.
func (o *Overrides) ApplyLenient(s *Schema) (skipped []error, err error) {
	return o.apply(s, true)
}

func (o *Overrides) apply(s *Schema, lenient bool) ([]error, error) {
	l := errList{lenient: lenient}
	c := newCarrier(s)
	// applyT applies a template correction and, when it applied,
	// remembers it for carrying.
	applyT := func(e *Override, p *Provider) {
		n := l.count()
		applyTemplateOp(e, p, &l)
		if l.count() == n {
			c.record(p, e)
		}
	}
	for _, e := range o.Entries {
		for _, pn := range e.Providers {
			p := s.Provider(pn)
			if p == nil {
				l.skip(e.Pos, "override", "provider %q is not in the schema", pn)
				continue
			}
			switch {
			case e.Map != "":
				applyMap(e, p, &l)
			case e.NewMap != nil:
				applyNewMap(e, p, &l)
			case len(e.Templates) > 0:
				for _, tid := range e.Templates {
					one := *e
					one.Template = tid
					applyT(&one, p)
				}
			case e.Template != "":
				applyT(e, p)
			case len(e.FamilyNames) > 0:
				applyFamilyNames(e, p, &l)
			case len(e.KeywordAliases) > 0:
				applyKeywordAliases(e, p, &l)
			case len(e.DisplayNames) > 0:
				applyEventNames(e.Pos, p, e.DisplayNames, "display name", func(ev *Event) *string { return &ev.DisplayName }, &l)
			default:
				applyEventNames(e.Pos, p, e.GoNames, "Go name", func(ev *Event) *string { return &ev.GoName }, &l)
			}
		}
	}
	if err := l.err(); err != nil {
		return l.skipped, err
	}
	c.carry(s, &l)
	if err := l.err(); err != nil {
		return l.skipped, err
	}
	canonicalize(s)
	return l.skipped, Validate(s)
}

func applyMap(e *Override, p *Provider, l *errList) {
	m := p.Map(e.Map)
	what := fmt.Sprintf("override of %s map %s", p.Name, e.Map)
	if m == nil {
		l.skip(e.Pos, what, "no such map")
		return
	}
	for _, add := range e.AddEntries {
		dup := false
		for _, have := range m.Entries {
			if have.Value == add.Value {
				l.skip(e.Pos, what, "value 0x%x is already in the map as %q: drop this entry", add.Value, have.Name)
				dup = true
			}
		}
		if !dup {
			ne := *add
			ne.Pos = e.Pos
			m.Entries = append(m.Entries, &ne)
		}
	}
}

func applyField(e *Override, p *Provider, l *errList) {
	t := p.Template(e.Template)
	what := fmt.Sprintf("override of %s template %s", p.Name, e.Template)
	if t == nil {
		l.skip(e.Pos, what, "no such template")
		return
	}
	f := findField(t.Fields, strings.Split(e.Field, "."))
	if f == nil {
		l.skip(e.Pos, what, "no field %q", e.Field)
		return
	}
	changed := false
	set := func(dst *string, v *string) {
		if v != nil && *dst != *v {
			*dst = *v
			changed = true
		}
	}
	set(&f.InType, e.Set.InType)
	set(&f.OutType, e.Set.OutType)
	set(&f.Map, e.Set.Map)
	set(&f.Count, e.Set.Count)
	set(&f.Length, e.Set.Length)
	set(&f.Align, e.Set.Align)
	if w := e.Set.Walk; w != nil && f.Walk != *w {
		f.Walk = *w
		changed = true
	}
	if !changed {
		l.skip(e.Pos, what, "field %q already is as the override says: drop it", e.Field)
		return
	}
	f.Pos = f.Pos.via(e.Pos)
}

func findField(fs []*Field, path []string) *Field {
	for _, f := range fs {
		if f.Name != path[0] {
			continue
		}
		if len(path) == 1 {
			return f
		}
		return findField(f.Fields, path[1:])
	}
	return nil
}

// applyEventNames gives p's events (by symbol) the names in names: the
// string field says which (a Go name, a display name), kind what it is.
func applyEventNames(pos Pos, p *Provider, names map[string]string, kind string, field func(*Event) *string, l *errList) {
	syms := make([]string, 0, len(names))
	for s := range names {
		syms = append(syms, s)
	}
	sort.Strings(syms)
	for _, sym := range syms {
		ev := p.Event(sym)
		what := fmt.Sprintf("override of %s event %s", p.Name, sym)
		switch {
		case ev == nil:
			l.skip(pos, what, "no such event")
		case names[sym] == "":
			l.skip(pos, what, "an empty %s", kind)
		case *field(ev) == names[sym]:
			l.skip(pos, what, "%s already %s: drop it", kind, names[sym])
		default:
			*field(ev) = names[sym]
			ev.Pos = ev.Pos.via(pos)
		}
	}
}

func applyFamilyNames(e *Override, p *Provider, l *errList) {
	tids := make([]string, 0, len(e.FamilyNames))
	for t := range e.FamilyNames {
		tids = append(tids, t)
	}
	sort.Strings(tids)
	for _, tid := range tids {
		t := p.Template(tid)
		what := fmt.Sprintf("override of %s template %s", p.Name, tid)
		switch {
		case t == nil:
			l.skip(e.Pos, what, "no such template")
		case t.FamilyName == e.FamilyNames[tid]:
			l.skip(e.Pos, what, "family already named %s: drop it", t.FamilyName)
		default:
			t.FamilyName = e.FamilyNames[tid]
		}
	}
}

func countTrue(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

func applyInsert(e *Override, p *Provider, l *errList) {
	t := p.Template(e.Template)
	what := fmt.Sprintf("override of %s template %s", p.Name, e.Template)
	if t == nil {
		l.skip(e.Pos, what, "no such template")
		return
	}
	path := strings.Split(e.InsertAfter, ".")
	list := &t.Fields
	if len(path) > 1 {
		parent := findField(t.Fields, path[:len(path)-1])
		if parent == nil || !parent.Struct {
			l.skip(e.Pos, what, "no struct %q", strings.Join(path[:len(path)-1], "."))
			return
		}
		list = &parent.Fields
	}
	at := -1
	for i, f := range *list {
		if f.Name == path[len(path)-1] {
			at = i
		}
	}
	if at < 0 {
		l.skip(e.Pos, what, "no field %q", e.InsertAfter)
		return
	}
	for _, nf := range e.Insert {
		for _, f := range *list {
			if f.Name == nf.Name {
				l.skip(e.Pos, what, "field %q is already there: drop this override", nf.Name)
				return
			}
		}
	}
	var ins []*Field
	for _, nf := range e.Insert {
		c := *nf
		c.Pos = e.Pos
		ins = append(ins, &c)
	}
	rest := append(ins, (*list)[at+1:]...)
	*list = append((*list)[:at+1:at+1], rest...)
}

func hasNilField(fs []*Field) bool {
	for _, f := range fs {
		if f == nil || hasNilField(f.Fields) {
			return true
		}
	}
	return false
}

func applyNewMap(e *Override, p *Provider, l *errList) {
	what := fmt.Sprintf("override of %s map %s", p.Name, e.NewMap.Name)
	if p.Map(e.NewMap.Name) != nil {
		l.skip(e.Pos, what, "the map is already defined: drop this override")
		return
	}
	m := &Map{Name: e.NewMap.Name, Kind: e.NewMap.Kind, Pos: e.Pos}
	for _, x := range e.NewMap.Entries {
		c := *x
		c.Pos = e.Pos
		m.Entries = append(m.Entries, &c)
	}
	p.Maps = append(p.Maps, m)
}

// applyFields gives an empty template the override's fields, each a copy
// located at the override.
func applyFields(e *Override, p *Provider, l *errList) {
	t := p.Template(e.Template)
	what := fmt.Sprintf("override of %s template %s", p.Name, e.Template)
	switch {
	case t == nil:
		l.skip(e.Pos, what, "no such template")
	case len(t.Fields) > 0:
		l.skip(e.Pos, what, "the template already has fields: drop this override")
	default:
		t.Fields = copyFields(e.Fields, e.Pos)
	}
}

func copyFields(fs []*Field, pos Pos) []*Field {
	if fs == nil {
		return nil
	}
	out := make([]*Field, len(fs))
	for i, f := range fs {
		c := *f
		c.Pos = pos
		c.Fields = copyFields(f.Fields, pos)
		out[i] = &c
	}
	return out
}

// applyKeywordAliases gives p's keywords (the values) their former names
// (the keys) as aliases. The keyword must be in the schema, and the former
// name must not be: a manifest that still has it needs no alias.
func applyKeywordAliases(e *Override, p *Provider, l *errList) {
	former := make([]string, 0, len(e.KeywordAliases))
	for f := range e.KeywordAliases {
		former = append(former, f)
	}
	sort.Strings(former)
	for _, f := range former {
		name := e.KeywordAliases[f]
		k := p.Keyword(name)
		what := fmt.Sprintf("override of %s keyword %s", p.Name, name)
		switch {
		case f == "" || name == "":
			l.skip(e.Pos, what, "an empty keyword name")
		case k == nil:
			l.skip(e.Pos, what, "no such keyword (the alias %s is for it)", f)
		case p.Keyword(f) != nil:
			l.skip(e.Pos, what, "keyword %s is in the schema itself: drop the alias", f)
		default:
			dup := false
			for _, other := range p.Keywords {
				for _, a := range other.Aliases {
					if a == f {
						l.skip(e.Pos, what, "%s is already an alias of %s: drop this one", f, other.Name)
						dup = true
					}
				}
			}
			if !dup {
				k.Aliases = append(k.Aliases, f)
			}
		}
	}
}
