package schema

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/clrgo/clrevents/internal/numfmt"
)

// DiffReport lists what changed between two schemas, grouped by provider and
// by section (keywords, tasks, maps, events), so that a runtime upgrade can
// be reviewed at a glance. Identities are stable facts: events by (id,
// version), keywords by mask, tasks by value, map entries by value. A
// renamed template whose fields are unchanged is not a change.
type DiffReport struct {
	Providers []*ProviderDiff
}

// ProviderDiff is one provider's changes. Added or Removed is set when the
// whole provider is new or gone.
type ProviderDiff struct {
	Name           string
	Added, Removed bool
	Sections       []*DiffSection
}

// DiffSection is one kind of change ("events added", …) and its lines.
type DiffSection struct {
	Title string
	Lines []string
}

// Empty reports whether the schemas are the same.
func (r *DiffReport) Empty() bool { return len(r.Providers) == 0 }

// Write prints the report, one line per change.
func (r *DiffReport) Write(w io.Writer) error {
	for _, p := range r.Providers {
		switch {
		case p.Added:
			fmt.Fprintf(w, "+ provider %s\n", p.Name)
		case p.Removed:
			fmt.Fprintf(w, "- provider %s\n", p.Name)
		default:
			fmt.Fprintf(w, "provider %s\n", p.Name)
		}
		for _, s := range p.Sections {
			fmt.Fprintf(w, "  %s:\n", s.Title)
			for _, l := range s.Lines {
				if _, err := fmt.Fprintf(w, "    %s\n", l); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Diff compares two schemas.
func Diff(old, new *Schema) *DiffReport {
	r := &DiffReport{}
	names := map[string]bool{}
	for _, p := range old.Providers {
		names[p.Name] = true
	}
	for _, p := range new.Providers {
		names[p.Name] = true
	}
	for _, n := range sortedKeys(names) {
		a, b := old.Provider(n), new.Provider(n)
		pd := &ProviderDiff{Name: n}
		switch {
		case a == nil:
			pd.Added = true
			a = &Provider{Name: n}
		case b == nil:
			pd.Removed = true
			b = &Provider{Name: n}
		}
		diffProvider(pd, a, b)
		if pd.Added || pd.Removed {
			// A whole provider: its events tell the story; the keyword,
			// task and map lines would only repeat its definition.
			var keep []*DiffSection
			for _, s := range pd.Sections {
				if strings.HasPrefix(s.Title, "events") {
					keep = append(keep, s)
				}
			}
			pd.Sections = keep
		}
		if pd.Added || pd.Removed || len(pd.Sections) > 0 {
			r.Providers = append(r.Providers, pd)
		}
	}
	return r
}

type sections struct {
	pd    *ProviderDiff
	index map[string]*DiffSection
}

func (s *sections) add(title, format string, args ...any) {
	if s.index == nil {
		s.index = map[string]*DiffSection{}
	}
	sec := s.index[title]
	if sec == nil {
		sec = &DiffSection{Title: title}
		s.index[title] = sec
		s.pd.Sections = append(s.pd.Sections, sec)
	}
	sec.Lines = append(sec.Lines, fmt.Sprintf(format, args...))
}

// sectionOrder is the order sections print in, whatever order the changes
// were found in: keywords, tasks, opcodes, maps, map values, events.
var sectionOrder = []string{
	"provider changed",
	"keywords added", "keywords removed", "keywords renamed",
	"tasks added", "tasks removed", "tasks renamed",
	"opcodes added", "opcodes removed", "opcodes renamed",
	"maps added", "maps removed", "maps changed",
	"map values added", "map values removed", "map values renamed",
	"events added", "events removed", "events changed",
}

func sectionRank(title string) int {
	for i, t := range sectionOrder {
		if t == title {
			return i
		}
	}
	return len(sectionOrder)
}

func diffProvider(pd *ProviderDiff, a, b *Provider) {
	s := &sections{pd: pd}
	if a.GUID != b.GUID && !pd.Added && !pd.Removed {
		s.add("provider changed", "guid %s → %s", a.GUID, b.GUID)
	}

	// Keywords, by mask.
	ka, kb := map[uint64]*Keyword{}, map[uint64]*Keyword{}
	for _, k := range a.Keywords {
		ka[k.Mask] = k
	}
	for _, k := range b.Keywords {
		kb[k.Mask] = k
	}
	for _, m := range unionKeys(ka, kb) {
		x, y := ka[m], kb[m]
		switch {
		case x == nil:
			s.add("keywords added", "+ %s 0x%x", y.Name, m)
		case y == nil:
			s.add("keywords removed", "- %s 0x%x", x.Name, m)
		case x.Name != y.Name:
			s.add("keywords renamed", "~ 0x%x: %s → %s", m, x.Name, y.Name)
		}
	}

	// Tasks, by value; their opcodes by value.
	ta, tb := map[uint16]*Task{}, map[uint16]*Task{}
	for _, t := range a.Tasks {
		ta[t.Value] = t
	}
	for _, t := range b.Tasks {
		tb[t.Value] = t
	}
	for _, v := range unionKeys(ta, tb) {
		x, y := ta[v], tb[v]
		switch {
		case x == nil:
			s.add("tasks added", "+ %s (%d)", y.Name, v)
		case y == nil:
			s.add("tasks removed", "- %s (%d)", x.Name, v)
		default:
			if x.Name != y.Name {
				s.add("tasks renamed", "~ %d: %s → %s", v, x.Name, y.Name)
			}
			oa, ob := map[uint8]*Opcode{}, map[uint8]*Opcode{}
			for _, o := range x.Opcodes {
				oa[o.Value] = o
			}
			for _, o := range y.Opcodes {
				ob[o.Value] = o
			}
			for _, ov := range unionKeys(oa, ob) {
				p, q := oa[ov], ob[ov]
				switch {
				case p == nil:
					s.add("opcodes added", "+ %s/%s (%d)", y.Name, q.Name, ov)
				case q == nil:
					s.add("opcodes removed", "- %s/%s (%d)", x.Name, p.Name, ov)
				case p.Name != q.Name:
					s.add("opcodes renamed", "~ %s/%d: %s → %s", y.Name, ov, p.Name, q.Name)
				}
			}
		}
	}

	// Maps, by name; entries by value.
	ma, mb := map[string]*Map{}, map[string]*Map{}
	for _, m := range a.Maps {
		ma[m.Name] = m
	}
	for _, m := range b.Maps {
		mb[m.Name] = m
	}
	for _, n := range unionKeys(ma, mb) {
		x, y := ma[n], mb[n]
		switch {
		case x == nil:
			s.add("maps added", "+ %s (%s, %s)", n, y.Kind, numfmt.Count(int64(len(y.Entries)), "value"))
		case y == nil:
			s.add("maps removed", "- %s", n)
		default:
			if x.Kind != y.Kind {
				s.add("maps changed", "~ %s: %s → %s", n, x.Kind, y.Kind)
			}
			ea, eb := map[uint64]string{}, map[uint64]string{}
			for _, e := range x.Entries {
				ea[e.Value] = e.Name
			}
			for _, e := range y.Entries {
				eb[e.Value] = e.Name
			}
			for _, v := range unionKeys(ea, eb) {
				p, okp := ea[v]
				q, okq := eb[v]
				switch {
				case !okp:
					s.add("map values added", "+ %s 0x%x %s", n, v, q)
				case !okq:
					s.add("map values removed", "- %s 0x%x %s", n, v, p)
				case p != q:
					s.add("map values renamed", "~ %s 0x%x: %s → %s", n, v, p, q)
				}
			}
		}
	}

	// Events, by (id, version).
	type key struct {
		v  uint16
		ve uint8
	}
	ea, eb := map[key]*Event{}, map[key]*Event{}
	for _, e := range a.Events {
		ea[key{e.Value, e.Version}] = e
	}
	for _, e := range b.Events {
		eb[key{e.Value, e.Version}] = e
	}
	keys := map[key]bool{}
	for k := range ea {
		keys[k] = true
	}
	for k := range eb {
		keys[k] = true
	}
	ks := make([]key, 0, len(keys))
	for k := range keys {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if ks[i].v != ks[j].v {
			return ks[i].v < ks[j].v
		}
		return ks[i].ve < ks[j].ve
	})
	for _, k := range ks {
		x, y := ea[k], eb[k]
		switch {
		case x == nil:
			s.add("events added", "+ %s (%d v%d)%s", y.Symbol, k.v, k.ve, describeEvent(b, y))
		case y == nil:
			s.add("events removed", "- %s (%d v%d)", x.Symbol, k.v, k.ve)
		default:
			var ch []string
			cmpStr := func(what, p, q string) {
				if p != q {
					ch = append(ch, fmt.Sprintf("%s %s → %s", what, orNone(p), orNone(q)))
				}
			}
			cmpStr("symbol", x.Symbol, y.Symbol)
			if taskID(a, x) != taskID(b, y) {
				cmpStr("task", x.Task, y.Task)
			}
			if opcodeID(a, x) != opcodeID(b, y) {
				cmpStr("opcode", x.Opcode, y.Opcode)
			}
			cmpStr("level", x.Level, y.Level)
			cmpStr("channel", x.Channel, y.Channel)
			cmpStr("keywords", keywordMasks(a, x), keywordMasks(b, y))
			cmpStr("shown under", shownUnder(a, x), shownUnder(b, y))
			ch = append(ch, diffFields("", templateFields(a, x), templateFields(b, y))...)
			cmpStr("shown fields", strings.Join(templateShow(a, x), ", "), strings.Join(templateShow(b, y), ", "))
			if len(ch) > 0 {
				s.add("events changed", "~ %s (%d v%d): %s", y.Symbol, k.v, k.ve, strings.Join(ch, "; "))
			}
		}
	}
	sort.SliceStable(pd.Sections, func(i, j int) bool {
		return sectionRank(pd.Sections[i].Title) < sectionRank(pd.Sections[j].Title)
	})
}

func describeEvent(p *Provider, e *Event) string {
	var parts []string
	if e.Task != "" {
		parts = append(parts, "task "+e.Task)
	}
	if len(e.Keywords) > 0 {
		parts = append(parts, "keywords "+strings.Join(e.Keywords, "|"))
	}
	fs := templateFields(p, e)
	parts = append(parts, numfmt.Count(int64(len(fs)), "field"))
	return ", " + strings.Join(parts, ", ")
}

// keywordMasks renders an event's keywords as masks, so that renaming a
// keyword (same mask) does not show as a change of every event using it.
func keywordMasks(p *Provider, e *Event) string {
	var m uint64
	for _, n := range e.Keywords {
		if k := p.Keyword(n); k != nil {
			m |= k.Mask
		}
	}
	if m == 0 {
		return ""
	}
	return fmt.Sprintf("0x%x", m)
}

// taskID identifies an event's task by value, so that renaming a task (same
// value) does not show as a change of every event in it.
func taskID(p *Provider, e *Event) string {
	if t := p.Task(e.Task); t != nil {
		return fmt.Sprint(t.Value)
	}
	return e.Task
}

// opcodeID identifies an event's opcode by value, for the same reason.
func opcodeID(p *Provider, e *Event) string {
	if v, ok := standardOpcode(e.Opcode); ok {
		return fmt.Sprint(v)
	}
	if t := p.Task(e.Task); t != nil {
		for _, o := range t.Opcodes {
			if o.Name == e.Opcode {
				return fmt.Sprint(o.Value)
			}
		}
	}
	return e.Opcode
}

// shownUnder is the provider name an event is shown under, where the
// schema says one (the kernel's classes).
func shownUnder(p *Provider, e *Event) string {
	if e.DisplayProvider != "" {
		return e.DisplayProvider
	}
	return p.DisplayName
}

// templateShow is the fields an event's template shows, where it lists
// them.
func templateShow(p *Provider, e *Event) []string {
	if t := p.Template(e.Template); t != nil {
		return t.Show
	}
	return nil
}

func templateFields(p *Provider, e *Event) []*Field {
	if t := p.Template(e.Template); t != nil {
		return t.Fields
	}
	return nil
}

func diffFields(prefix string, a, b []*Field) []string {
	var out []string
	ia := map[string]*Field{}
	for _, f := range a {
		ia[f.Name] = f
	}
	ib := map[string]bool{}
	for i, f := range b {
		ib[f.Name] = true
		g := ia[f.Name]
		if g == nil {
			out = append(out, fmt.Sprintf("field +%s%s at %d (%s)", prefix, f.Name, i, fieldType(f)))
			continue
		}
		if fieldType(f) != fieldType(g) {
			out = append(out, fmt.Sprintf("field %s%s %s → %s", prefix, f.Name, fieldType(g), fieldType(f)))
		}
		if f.Struct && g.Struct {
			out = append(out, diffFields(prefix+f.Name+".", g.Fields, f.Fields)...)
		}
	}
	for _, f := range a {
		if !ib[f.Name] {
			out = append(out, fmt.Sprintf("field -%s%s", prefix, f.Name))
		}
	}
	// Order changes with the same names.
	if len(out) == 0 && len(a) == len(b) {
		for i := range a {
			if a[i].Name != b[i].Name {
				out = append(out, fmt.Sprintf("field order of %s changed", strings.TrimSuffix(prefix, ".")))
				break
			}
		}
	}
	return out
}

func fieldType(f *Field) string {
	var b strings.Builder
	if f.Struct {
		b.WriteString("struct")
	} else {
		b.WriteString(f.InType)
	}
	if f.OutType != "" {
		b.WriteString(" out " + f.OutType)
	}
	if f.Map != "" {
		b.WriteString(" map " + f.Map)
	}
	if f.Count != "" {
		b.WriteString(" count " + f.Count)
	}
	if f.Length != "" {
		b.WriteString(" length " + f.Length)
	}
	if f.Rest {
		b.WriteString(" rest")
	}
	if f.Walk {
		b.WriteString(" walk")
	}
	if f.Align != "" {
		b.WriteString(" align " + f.Align)
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

type ordered interface {
	~string | ~uint8 | ~uint16 | ~uint64
}

func unionKeys[K ordered, V any](a, b map[K]V) []K {
	m := map[K]bool{}
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return sortedKeys(m)
}

func sortedKeys[K ordered](m map[K]bool) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
