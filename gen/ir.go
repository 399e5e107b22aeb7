package gen

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	. "github.com/dave/jennifer/jen"

	"github.com/clrgo/clrevents/schema"
)

// The IR is the lowered schema with every Go name resolved. The emitters
// walk only this.

type pkgIR struct {
	providers []*provIR
	events    []*eventIR           // table order: provider, id, version
	families  []*familyIR          // by name
	kinds     map[schema.Kind]bool // the wire kinds of every field, for the aliases the package needs
	// quoteGUIDs writes GUIDs quoted in the text form (Config.QuoteTextGUIDs).
	quoteGUIDs bool
}

type provIR struct {
	lp       *schema.LProvider
	index    int
	short    string
	constID  string // ProviderRuntime
	kwType   string // RuntimeKeywords
	keywords []named
	// kwAliases are the keywords' former names (Keyword.Aliases), each
	// with the keyword constant it stands for.
	kwAliases []kwAlias
	tasks     []*taskIR
	maps      []*mapIR
	events    []*eventIR
}

type kwAlias struct {
	named       // the former name's constant, value and name
	of    named // the keyword's
}

type named struct {
	goName string
	name   string
	value  uint64
}

type taskIR struct {
	t       *schema.Task
	goConst string
	opcodes []named
}

type mapIR struct {
	lm      *schema.LMap
	goType  string
	under   string  // Go underlying type
	entries []named // one constant per name (the first value of a name)
	byValue []named // one name per value (the first name of a value), for printing
	bitmap  bool
}

type eventIR struct {
	le       *schema.LEvent
	prov     *provIR
	goName   string
	file     string
	scope    *scopeIR
	hasPtr   bool // any pointer-sized field anywhere in the payload
	taskName string
	opName   string
	family   *familyIR // nil when in none
}

// scopeIR is a template's or a struct element's fields.
type scopeIR struct {
	owner   string // for messages
	endsVar string // the FieldEnd table of the fixed prefix: endsGCStartV2
	fields  []*fieldIR
	prefix  int         // fields with fixed offsets
	size    schema.Size // their total size
	tail    schema.Size // padding after the last field (aligned elements)
	// shown are the fields the JSON, text and column forms write, in
	// their order (the template's Shown; every field of an element).
	shown []*fieldIR
}

type fieldIR struct {
	lf     *schema.LField
	goName string
	enum   *mapIR
	elem   *elemIR // struct fields
	count  *fieldIR
	length *fieldIR
}

type elemIR struct {
	goName string // element type
	view   string // XArray (fixed) or XIter (variable)
	fixed  bool
	scope  *scopeIR
	min    int // smallest possible element, bytes
	// canon, when set, is the identical element type of an older member
	// of the same family (shareElems): goName and view are then aliases
	// of its types, and its constructor wraps canon's.
	canon *elemIR
}

// typeView is the Go type the view is: its own, or its canon's.
func (el *elemIR) typeView() string {
	if el.canon != nil {
		return el.canon.view
	}
	return el.view
}

func buildIR(m *schema.Model) (*pkgIR, error) {
	p := &pkgIR{kinds: map[schema.Kind]bool{}}
	var n names
	n.reserveShell()
	for i, lp := range m.Providers {
		pr := &provIR{lp: lp, index: i}
		short, err := ProviderShort(lp.Name)
		if err != nil {
			n.fail(lp.Pos, "provider "+lp.Name, err)
			continue
		}
		pr.short = short
		pr.constID = "Provider" + short
		n.declare(pr.constID, "provider "+lp.Name, lp.Pos)
		pr.kwType = short + "Keywords"
		n.declare(pr.kwType, "keywords of "+lp.Name, lp.Pos)
		for _, k := range lp.Keywords {
			g, err := GoName(k.Name)
			if err != nil {
				n.fail(k.Pos, "keyword "+k.Name, err)
				continue
			}
			id := short + g
			n.declare(id, "keyword "+k.Name, k.Pos)
			kw := named{id, k.Name, k.Mask}
			pr.keywords = append(pr.keywords, kw)
			for _, a := range k.Aliases {
				ag, err := GoName(a)
				if err != nil {
					n.fail(k.Pos, "keyword "+k.Name+": alias "+a, err)
					continue
				}
				n.declare(short+ag, "keyword "+k.Name+": alias "+a, k.Pos)
				pr.kwAliases = append(pr.kwAliases, kwAlias{named{short + ag, a, k.Mask}, kw})
			}
		}
		for _, t := range lp.Tasks {
			g, err := GoName(t.Name)
			if err != nil {
				n.fail(t.Pos, "task "+t.Name, err)
				continue
			}
			ti := &taskIR{t: t, goConst: short + "Task" + g}
			n.declare(ti.goConst, "task "+t.Name, t.Pos)
			for _, o := range t.Opcodes {
				og, err := GoName(o.Name)
				if err != nil {
					n.fail(o.Pos, "opcode "+o.Name, err)
					continue
				}
				id := short + "Opcode" + g + og
				n.declare(id, "opcode "+t.Name+"/"+o.Name, o.Pos)
				ti.opcodes = append(ti.opcodes, named{id, o.Name, uint64(o.Value)})
			}
			pr.tasks = append(pr.tasks, ti)
		}
		maps := map[*schema.LMap]*mapIR{}
		for _, lm := range lp.Maps {
			tn, err := MapTypeName(short, lm.Name)
			if err != nil {
				n.fail(lm.Pos, "map "+lm.Name, err)
				continue
			}
			mi := &mapIR{lm: lm, goType: tn, under: goKind(lm.Kind), bitmap: lm.Map.Kind == schema.BitMap}
			n.declare(tn, "map "+lm.Name, lm.Pos)
			seen := map[string]bool{}
			seenValue := map[uint64]bool{}
			for _, e := range lm.Entries {
				if !seenValue[e.Value] {
					seenValue[e.Value] = true
					mi.byValue = append(mi.byValue, named{name: e.Name, value: e.Value})
				}
				g, err := GoName(e.Name)
				if err != nil {
					n.fail(e.Pos, "map "+lm.Name+" value "+e.Name, err)
					continue
				}
				if seen[g] {
					// The same name for two values (the manifest does this
					// for aliases): the constant names the first.
					continue
				}
				seen[g] = true
				n.declare(tn+g, "map "+lm.Name+" value "+e.Name, e.Pos)
				mi.entries = append(mi.entries, named{tn + g, e.Name, e.Value})
			}
			pr.maps = append(pr.maps, mi)
			maps[lm] = mi
		}
		for _, le := range lp.Events {
			ev := &eventIR{le: le, prov: pr}
			g, err := GoName(le.Symbol)
			if le.GoName != "" {
				g, err = le.GoName, nil // an explicit name from the overrides
			}
			if err != nil {
				n.fail(le.Pos, "event "+le.Symbol, err)
				continue
			}
			ev.goName = g
			n.declare(g, "event "+le.Symbol, le.Pos)
			ev.taskName = le.Task
			ev.opName = le.Opcode
			ev.file = fileName(short, le.Task)
			ev.scope = &scopeIR{owner: "event " + le.Symbol}
			if le.Template != nil {
				ev.scope = buildScope(le.Template.Fields, le.Template.PrefixLen, le.Template.PrefixSize,
					"event "+le.Symbol, g, maps, &n)
				ev.scope.shown = shownOf(ev.scope, le.Template.Shown)
			}
			markKinds(ev.scope, p.kinds)
			ev.hasPtr = scopeHasPtr(ev.scope)
			pr.events = append(pr.events, ev)
			p.events = append(p.events, ev)
		}
		p.providers = append(p.providers, pr)
	}
	p.shareElems()
	p.buildFamilies(&n)
	if len(n.errs) > 0 {
		return nil, errors.Join(n.errs...)
	}
	return p, nil
}

func buildScope(fs []*schema.LField, prefix int, size schema.Size, owner, typeName string, maps map[*schema.LMap]*mapIR, n *names) *scopeIR {
	s := &scopeIR{owner: owner, endsVar: "ends" + typeName, prefix: prefix, size: size}
	defer func() { s.shown = s.fields }()
	byLF := map[*schema.LField]*fieldIR{}
	fieldNames := map[string]*schema.LField{}
	for _, lf := range fs {
		f := &fieldIR{lf: lf}
		byLF[lf] = f
		g, err := GoName(lf.Name)
		if err != nil {
			n.fail(lf.Pos, owner+": field "+lf.Name, err)
			g = "X"
		}
		if methodNames[g] {
			n.fail(lf.Pos, owner+": field "+lf.Name, fmt.Errorf("its Go name %s is a method of the event type", g))
		}
		if prev := fieldNames[g]; prev != nil {
			n.fail(lf.Pos, owner+": field "+lf.Name, fmt.Errorf("its Go field name %s is already used by field %s (%s)", g, prev.Name, prev.Pos))
		}
		fieldNames[g] = lf
		f.goName = g
		if lf.Map != nil {
			f.enum = maps[lf.Map]
		}
		if lf.Count.Field != nil {
			f.count = byLF[lf.Count.Field]
		}
		if lf.Length.Field != nil {
			f.length = byLF[lf.Length.Field]
		}
		if lf.Kind == schema.KindStruct {
			el := &elemIR{goName: typeName + g + "Elem", fixed: lf.ElemFixed}
			if el.fixed {
				el.view = typeName + g + "Array"
			} else {
				el.view = typeName + g + "Iter"
			}
			n.declare(el.goName, owner+": struct "+lf.Name, lf.Pos)
			n.declare(el.view, owner+": struct "+lf.Name, lf.Pos)
			n.declare(el.view+"Of", owner+": struct "+lf.Name+", constructor "+el.view+"Of", lf.Pos)
			el.scope = buildScope(lf.Elem, lf.ElemPrefix, lf.ElemSize, owner+": struct "+lf.Name, el.goName, maps, n)
			el.scope.tail = lf.ElemTail
			el.min = lf.ElemSize.At(4)
			if el.min == 0 {
				n.fail(lf.Pos, owner+": struct "+lf.Name, fmt.Errorf("an element could take no bytes, so a count could not be checked against the payload"))
			}
			f.elem = el
		} else if lf.IsArray() {
			if _, ok := arrayType(lf.Kind); !ok {
				n.fail(lf.Pos, owner+": field "+lf.Name, fmt.Errorf("arrays of %s are not supported", lf.Kind))
			}
		}
		s.fields = append(s.fields, f)
	}
	return s
}

// shownOf is the fields of s that shown (a template's Shown) lists, in
// its order.
func shownOf(s *scopeIR, shown []*schema.LField) []*fieldIR {
	by := map[*schema.LField]*fieldIR{}
	for _, f := range s.fields {
		by[f.lf] = f
	}
	out := make([]*fieldIR, 0, len(shown))
	for _, lf := range shown {
		out = append(out, by[lf])
	}
	return out
}

// markKinds notes the wire kinds of s's fields, elements' included.
func markKinds(s *scopeIR, kinds map[schema.Kind]bool) {
	for _, f := range s.fields {
		kinds[f.lf.Kind] = true
		if f.elem != nil {
			markKinds(f.elem.scope, kinds)
		}
	}
}

func scopeHasPtr(s *scopeIR) bool {
	for _, f := range s.fields {
		switch {
		case f.lf.Kind == schema.KindPointer, f.lf.Kind == schema.KindWBEMSID:
			return true
		case f.elem != nil && scopeHasPtr(f.elem.scope):
			return true
		}
	}
	return false
}

// fileName groups events by provider and task: runtime_garbagecollection_gen.go.
func fileName(short, task string) string {
	if task == "" {
		task = "events"
	}
	return strings.ToLower(short) + "_" + strings.ToLower(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, task)) + "_gen.go"
}

func goKind(k schema.Kind) string {
	switch k {
	case schema.KindUint8:
		return "uint8"
	case schema.KindUint16, schema.KindPort:
		return "uint16"
	case schema.KindUint32:
		return "uint32"
	case schema.KindUint64, schema.KindPointer:
		return "uint64"
	case schema.KindInt8:
		return "int8"
	case schema.KindInt16:
		return "int16"
	case schema.KindInt32:
		return "int32"
	case schema.KindInt64:
		return "int64"
	case schema.KindFloat32:
		return "float32"
	case schema.KindFloat64:
		return "float64"
	case schema.KindBool:
		return "bool"
	case schema.KindGUID:
		return "GUID"
	case schema.KindUTF16:
		return "UTF16"
	case schema.KindAnsi:
		return "Ansi"
	case schema.KindBinary:
		return "Binary"
	case schema.KindIPv4, schema.KindIPv6:
		return addrType
	case schema.KindFileTime:
		return "FileTime"
	case schema.KindWBEMSID:
		return "WBEMSID"
	}
	return "invalid"
}

// addrType is the Go type of a network address field, as goKind names it.
const addrType = "netip.Addr"

// typeCode is the code of a Go type goKind (or a family) names.
func typeCode(t string) *Statement {
	if t == addrType {
		return Qual("net/netip", "Addr")
	}
	return Id(t)
}

// arrayType is the view type of a count= array of k.
func arrayType(k schema.Kind) (string, bool) {
	switch k {
	case schema.KindUint8:
		return "Uint8Array", true
	case schema.KindUint16:
		return "Uint16Array", true
	case schema.KindUint32:
		return "Uint32Array", true
	case schema.KindUint64:
		return "Uint64Array", true
	case schema.KindInt32:
		return "Int32Array", true
	case schema.KindInt64:
		return "Int64Array", true
	case schema.KindFloat64:
		return "Float64Array", true
	case schema.KindBool:
		return "BoolArray", true
	case schema.KindGUID:
		return "GUIDArray", true
	case schema.KindPointer:
		return "PointerArray", true
	}
	return "", false
}

func sortedFiles(m map[string][]*eventIR) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// shareElems makes a struct field's element type the same Go type as the
// first identical one (same field path, same layout, names, kinds and
// enums) among the events of its provider and family, in table order (by
// event ID, then version): the newer versions of an event that carry the
// same struct get aliases of the older version's types, under names of
// their own, so that the family keeps the field and code that handles one
// version's elements handles the others'. Names are per event as always;
// only what they stand for is shared.
func (p *pkgIR) shareElems() {
	for _, pr := range p.providers {
		first := map[string]*elemIR{}
		for _, ev := range pr.events {
			if ev.le.Template == nil {
				continue
			}
			fk := familyKey(ev.le.Template.TID)
			for _, f := range ev.scope.fields {
				if f.elem == nil {
					continue
				}
				k := fk + "\x00" + f.goName + "\x00" + elemSig(f)
				if c := first[k]; c != nil {
					shareElem(f.elem, c)
				} else {
					first[k] = f.elem
				}
			}
		}
	}
}

// shareElem makes el an alias of c, and its nested element types aliases
// of c's (identical, as their signatures are).
func shareElem(el, c *elemIR) {
	el.canon = c
	for i, f := range el.scope.fields {
		if f.elem != nil {
			shareElem(f.elem, c.scope.fields[i].elem)
		}
	}
}

// elemSig describes everything about a struct field's elements that the
// emitters read: two fields with one signature have identical element
// types.
func elemSig(f *fieldIR) string {
	var b strings.Builder
	lf := f.lf
	fmt.Fprintf(&b, "{fixed %v size %v prefix %d tail %v min %d", lf.ElemFixed, lf.ElemSize, lf.ElemPrefix, lf.ElemTail, f.elem.min)
	for _, sf := range f.elem.scope.fields {
		l := sf.lf
		fmt.Fprintf(&b, "; %s %s %q %q %v hex %v walk %v", sf.goName, l.Name, l.InType, l.OutType, l.Kind, l.Hex, l.Walk)
		if sf.enum != nil {
			fmt.Fprintf(&b, " enum %s", sf.enum.goType)
		}
		fmt.Fprintf(&b, " count %s length %s fixed %v size %v offset %v pad %v", refSig(l.Count), refSig(l.Length), l.Fixed, l.Size, l.Offset, l.PadBefore)
		for _, c := range l.Counts {
			fmt.Fprintf(&b, " counts %s", c.Name)
		}
		if sf.elem != nil {
			b.WriteString(" elem " + elemSig(sf))
		}
	}
	b.WriteString("}")
	return b.String()
}

func refSig(r schema.Ref) string {
	switch {
	case !r.Set:
		return "-"
	case r.Rest:
		return "rest"
	case r.Field != nil:
		return "field " + r.Field.Name
	}
	return fmt.Sprint(r.Lit)
}
