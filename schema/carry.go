package schema

import (
	"fmt"
	"sort"
)

// Carrying corrections to newer versions.
//
// Overrides name templates and event symbols, and a newer runtime adds a
// version of an event with a template and a symbol of its own (X_V<n+1>),
// which no override names. The runtime grows an event by appending fields,
// so when the newer version's template, as the manifest gives it, begins
// with the fields of the older version's (names, in-types, counts, lengths
// and struct members alike), the older one's corrections describe the newer
// one's fields too: they are carried to it. A newer version whose template
// is not such an extension of a corrected older one gets nothing carried,
// and is reported at each correction it misses (an error, or a skipped
// override when lenient), unless overrides correct its template themselves.
// Display names carry by (provider, event ID), extension or not: TraceEvent
// shows every version of an event by one name.

// templateOp is one correction applied to one template: the override as
// applied (Template names the template).
type templateOp struct {
	o    *Override
	kind string // "field", "insert" or "fields"
	path string // the field path: Field or InsertAfter
}

// carrier remembers what carrying needs while overrides are applied: the
// templates' fields as the schema gave them, and the corrections applied to
// each template.
type carrier struct {
	raw      map[*Provider]map[string][]*Field
	explicit map[*Provider]map[string][]templateOp
}

func newCarrier(s *Schema) *carrier {
	c := &carrier{raw: map[*Provider]map[string][]*Field{}, explicit: map[*Provider]map[string][]templateOp{}}
	for _, p := range s.Providers {
		m := map[string][]*Field{}
		for _, t := range p.Templates {
			m[t.TID] = copyFields(t.Fields, t.Pos)
		}
		c.raw[p] = m
		c.explicit[p] = map[string][]templateOp{}
	}
	return c
}

// record notes that o (Template set) applied to p's template.
func (c *carrier) record(p *Provider, o *Override) {
	op := templateOp{o: o}
	switch {
	case len(o.Fields) > 0:
		op.kind = "fields"
	case o.InsertAfter != "":
		op.kind, op.path = "insert", o.InsertAfter
	default:
		op.kind, op.path = "field", o.Field
	}
	c.explicit[p][o.Template] = append(c.explicit[p][o.Template], op)
}

// applyTemplateOp applies one template correction to p.
func applyTemplateOp(o *Override, p *Provider, l *errList) {
	switch {
	case len(o.Fields) > 0:
		applyFields(o, p, l)
	case o.InsertAfter != "":
		applyInsert(o, p, l)
	default:
		applyField(o, p, l)
	}
}

// carry gives newer versions of corrected events their older versions'
// corrections and display names (see above).
func (c *carrier) carry(s *Schema, l *errList) {
	for _, p := range s.Providers {
		inEffect := map[string][]templateOp{}
		for tid, ops := range c.explicit[p] {
			inEffect[tid] = append([]templateOp(nil), ops...)
		}
		for _, versions := range eventsByID(p) {
			for i := 1; i < len(versions); i++ {
				older, ev := versions[i-1], versions[i]
				if ev.DisplayName == "" && older.DisplayName != "" {
					ev.DisplayName = older.DisplayName
				}
				if older.Template == ev.Template || ev.Template == "" && older.Template == "" {
					continue
				}
				ops := inEffect[older.Template]
				if len(ops) == 0 {
					continue
				}
				if !extends(c.raw[p][ev.Template], c.raw[p][older.Template], ops) {
					if len(c.explicit[p][ev.Template]) > 0 {
						continue // corrected in overrides of its own
					}
					reported := map[*Override]bool{}
					for _, op := range ops {
						if reported[op.o] {
							continue
						}
						reported[op.o] = true
						l.skip(op.o.Pos, fmt.Sprintf("override of %s template %s", p.Name, op.o.Template),
							"%s (%s, event %d version %d), a newer version of %s, has template %s, whose fields as the manifest gives them do not begin with those of %s: the correction is not carried to it; correct %s in overrides of its own",
							eventWhat(ev), ev.Pos, ev.Value, ev.Version, older.Symbol, templateName(ev.Template), older.Template, templateName(ev.Template))
					}
					continue
				}
				for _, op := range ops {
					if hasOp(c.explicit[p][ev.Template], op) {
						continue
					}
					one := *op.o
					one.Template = ev.Template
					scratch := errList{lenient: true}
					applyTemplateOp(&one, p, &scratch)
					if len(scratch.errs) > 0 {
						l.errs = append(l.errs, scratch.errs...)
					}
					// A correction the newer template already satisfies
					// (scratch.skipped) is in effect all the same.
					inEffect[ev.Template] = append(inEffect[ev.Template], templateOp{o: &one, kind: op.kind, path: op.path})
				}
			}
		}
	}
}

func templateName(tid string) string {
	if tid == "" {
		return "(none)"
	}
	return tid
}

// hasOp reports whether ops corrects the same thing as op.
func hasOp(ops []templateOp, op templateOp) bool {
	for _, x := range ops {
		if x.kind == op.kind && x.path == op.path {
			return true
		}
	}
	return false
}

// eventsByID groups p's events by event ID, each group in version order,
// the groups in ID order.
func eventsByID(p *Provider) [][]*Event {
	by := map[uint16][]*Event{}
	for _, e := range p.Events {
		by[e.Value] = append(by[e.Value], e)
	}
	ids := make([]int, 0, len(by))
	for id := range by {
		ids = append(ids, int(id))
	}
	sort.Ints(ids)
	out := make([][]*Event, 0, len(ids))
	for _, id := range ids {
		g := by[uint16(id)]
		sort.SliceStable(g, func(i, j int) bool { return g[i].Version < g[j].Version })
		out = append(out, g)
	}
	return out
}

// extends reports whether newer begins with older's fields (the raw
// templates): the runtime grew the event by appending. A template the
// manifest leaves empty, given its fields by an override, is extended only
// by another empty one.
func extends(newer, older []*Field, ops []templateOp) bool {
	for _, op := range ops {
		if op.kind == "fields" && len(newer) > 0 {
			return false
		}
	}
	if len(newer) < len(older) {
		return false
	}
	for i, f := range older {
		if !sameField(newer[i], f) {
			return false
		}
	}
	return true
}

func sameField(a, b *Field) bool {
	if a.Name != b.Name || a.InType != b.InType || a.Count != b.Count || a.Length != b.Length || a.Struct != b.Struct || len(a.Fields) != len(b.Fields) {
		return false
	}
	for i := range a.Fields {
		if !sameField(a.Fields[i], b.Fields[i]) {
			return false
		}
	}
	return true
}
