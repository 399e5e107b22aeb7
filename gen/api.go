package gen

import (
	"fmt"
	"strings"

	"github.com/clrgo/clrevents/schema"
)

// API lists the exported names Generate makes for m, each with what it
// stands for: an event type, the event it decodes (provider, ID, version
// and symbol) and the name it is shown by (DisplayName, which readers
// filter on); an event type's field, its wire type, its enum and whether
// it is an array; an enum type, its underlying type; an enum's, a
// keyword's or a provider's constant, its value; a family's types, its
// fields' Go types, and its kinds' constants and their values. Two lists
// tell what regenerating from another manifest does to code that uses the
// package: a name that goes breaks it, and a name that stands for
// something else (an event type that decodes another event, a field of
// another type) changes what it does while it still compiles (clrgen diff
// prints them).
func API(m *schema.Model) (map[string]string, error) {
	ir, err := buildIR(m)
	if err != nil {
		return nil, err
	}
	api := map[string]string{}
	for _, p := range ir.providers {
		api[p.constID] = fmt.Sprintf("Provider(%d): %s", p.index, p.lp.Name)
		for _, k := range p.keywords {
			api[k.goName] = fmt.Sprintf("keyword %#x of %s", k.value, p.lp.Name)
		}
		for _, a := range p.kwAliases {
			api[a.goName] = fmt.Sprintf("keyword %#x of %s", a.value, p.lp.Name)
		}
		for _, mp := range p.maps {
			api[mp.goType] = "enum of " + mp.under
			for _, e := range mp.entries {
				api[e.goName] = fmt.Sprintf("%s(%d)", mp.goType, e.value)
			}
		}
		for _, ev := range p.events {
			le := ev.le
			api[ev.goName] = fmt.Sprintf("%s event %d v%d (%s, shown as %s)", p.lp.Name, le.Value, le.Version, le.Symbol, le.DisplayName)
			if ev.scope != nil {
				apiFields(api, ev.goName, ev.scope)
			}
		}
	}
	for _, fam := range ir.families {
		api[fam.fieldsT] = "fields of family " + fam.name
		api[fam.iface] = "events of family " + fam.name
		for _, ff := range fam.fields {
			api[fam.fieldsT+"."+ff.goName] = ff.typ
			if ff.optional {
				api[fam.fieldsT+"."+ff.hasName] = "bool"
			}
		}
		if fam.kindT != "" {
			api[fam.kindT] = "kinds of family " + fam.name
			api[fam.fieldsT+"."+kindFieldName] = fam.kindT
			for _, k := range fam.kinds {
				api[k.goName] = fmt.Sprintf("%s(%d): %s", fam.kindT, k.value, k.label)
			}
		}
	}
	return api, nil
}

// apiFields adds a scope's fields, as owner.Field.
func apiFields(api map[string]string, owner string, s *scopeIR) {
	for _, f := range s.fields {
		var b strings.Builder
		if f.lf.Count.Set {
			b.WriteString("array of ")
		}
		switch {
		case f.elem != nil:
			b.WriteString(f.elem.goName)
			apiFields(api, f.elem.goName, f.elem.scope)
		default:
			b.WriteString(f.lf.Kind.String())
		}
		if f.enum != nil {
			b.WriteString(" as " + f.enum.goType)
		}
		api[owner+"."+f.goName] = b.String()
	}
}

// APITypes gives the Go type of each field API lists, an event type's or a
// family's ("GCGlobalHeapHistoryV4.Reason" → "GCReason",
// "GCGlobalHeapFields.HasValues" → "bool"). A field whose Go type changes
// may break code that uses it even where API's description reads alike: a
// named enum type and its integer type do not mix (f.Reason == GCReasonInduced
// does not compile once Reason is a uint32).
func APITypes(m *schema.Model) (map[string]string, error) {
	ir, err := buildIR(m)
	if err != nil {
		return nil, err
	}
	types := map[string]string{}
	var scope func(owner string, s *scopeIR)
	scope = func(owner string, s *scopeIR) {
		for _, f := range s.fields {
			typ, _ := memberType(f)
			if f.elem != nil {
				typ = f.elem.view
				scope(f.elem.goName, f.elem.scope)
			}
			types[owner+"."+f.goName] = typ
		}
	}
	for _, p := range ir.providers {
		for _, ev := range p.events {
			if ev.scope != nil {
				scope(ev.goName, ev.scope)
			}
		}
	}
	for _, fam := range ir.families {
		for _, ff := range fam.fields {
			types[fam.fieldsT+"."+ff.goName] = ff.typ
			if ff.optional {
				types[fam.fieldsT+"."+ff.hasName] = "bool"
			}
		}
	}
	return types, nil
}

// APICarriers lists, for each family field API lists ("GCStartFields.Depth"),
// the member types that carry it, and for each family's fields type
// ("GCStartFields") every member type, each list in table order. A member
// that carried a field and no longer does decodes with HasX false and X
// zero: code that reads the field still compiles and reads nothing.
func APICarriers(m *schema.Model) (map[string][]string, error) {
	ir, err := buildIR(m)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, fam := range ir.families {
		for _, ev := range fam.members {
			out[fam.fieldsT] = append(out[fam.fieldsT], ev.goName)
		}
		for _, ff := range fam.fields {
			k := fam.fieldsT + "." + ff.goName
			for _, ev := range ff.in {
				out[k] = append(out[k], ev.goName)
			}
		}
	}
	return out, nil
}
