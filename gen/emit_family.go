package gen

import (
	"fmt"
	"strings"

	. "github.com/dave/jennifer/jen"
)

// familyTypes emits, for every family, its fields struct, its interface and
// the accessor on each member (see family.go for how families are made).
func (g *pkgIR) familyTypes(f *File) {
	for _, fam := range g.families {
		g.familyKind(f, fam)
		g.familyFields(f, fam)
		g.familyInterface(f, fam)
		for _, ev := range fam.members {
			g.familyAccessor(f, fam, ev)
		}
	}
}

// familyFields emits the union of the members' fields:
//
//	type GCStartFields struct {
//		Count    uint32
//		HasDepth bool
//		Depth    uint32
//		…
//	}
func (g *pkgIR) familyFields(f *File, fam *familyIR) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s holds the fields of the %s family of events, whatever the member type. ", fam.fieldsT, fam.name)
	b.WriteString("Members: " + memberList(fam.members) + ".\n")
	b.WriteString("A field that not every member carries comes with a HasX field, true when ")
	b.WriteString("the decoded event had it. Strings and arrays alias the payload the event ")
	b.WriteString("was decoded from.")
	if len(fam.conflicts) > 0 {
		var ns []string
		for _, c := range fam.conflicts {
			ns = append(ns, c.goName+" ("+conflictTypes(c)+")")
		}
		b.WriteString("\nLeft out, their Go types differ across members: " + strings.Join(ns, ", ") + ".")
	}
	docComment(f, wrap(b.String(), 80))
	var fields []Code
	if fam.kindT != "" {
		for _, l := range strings.Split(wrap(fmt.Sprintf("%s tells which event of the family this is, whatever its version and provider (see %s).", kindFieldName, fam.kindT), 76), "\n") {
			fields = append(fields, Comment(l))
		}
		fields = append(fields, Id(kindFieldName).Id(fam.kindT))
	}
	for _, ff := range fam.fields {
		if ff.optional {
			fields = append(fields, Comment(fmt.Sprintf("%s tells whether the event had %s.", ff.hasName, ff.goName)), Id(ff.hasName).Bool())
		}
		for _, l := range strings.Split(wrap(famFieldDoc(fam, ff), 76), "\n") {
			fields = append(fields, Comment(l))
		}
		fields = append(fields, Id(ff.goName).Add(typeCode(ff.typ)))
	}
	f.Type().Id(fam.fieldsT).Struct(fields...)
	f.Line()
}

// familyKind emits the kinds of a family whose members mean more than one
// thing (see kindLabel):
//
//	type MethodLoadUnloadVerboseKind uint8
//	const (
//		KindMethodLoadVerbose MethodLoadUnloadVerboseKind = 1
//		…
//	)
//	func (k MethodLoadUnloadVerboseKind) String() string
func (g *pkgIR) familyKind(f *File, fam *familyIR) {
	if fam.kindT == "" {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s tells the events of the %s family apart by what they mean (%s.%s): ", fam.kindT, fam.name, fam.fieldsT, kindFieldName)
	b.WriteString("by their opcode, or by task and opcode for a standard opcode such as win:Start. ")
	b.WriteString("The versions of an event are one kind, and so are events of two providers with the same opcode ")
	b.WriteString("(the runtime's and the rundown's DCStart). The zero value is no kind. ")
	b.WriteString("Compare it with the constants: their names stay when a newer manifest adds events, their numbers may not.")
	docComment(f, wrap(b.String(), 80))
	f.Type().Id(fam.kindT).Uint8()
	f.Line()
	var defs []Code
	for _, k := range fam.kinds {
		for _, l := range strings.Split(wrap(fmt.Sprintf("%s is the kind of %s.", k.goName, memberList(k.members)), 76), "\n") {
			defs = append(defs, Comment(l))
		}
		defs = append(defs, Id(k.goName).Id(fam.kindT).Op("=").Lit(k.value))
	}
	f.Const().Defs(defs...)
	f.Line()
	var cases []Code
	for _, k := range fam.kinds {
		cases = append(cases, Case(Id(k.goName)).Block(Return(Lit(k.label))))
	}
	f.Commentf("String returns the kind's name, %q, or %s(0x…) for a value without one.", fam.kinds[0].label, fam.kindT)
	f.Func().Params(Id("k").Id(fam.kindT)).Id("String").Params().String().Block(
		Switch(Id("k")).Block(cases...),
		Return(String().Call(Qual(implPkg, "AppendUnknown").Call(Nil(), Lit(fam.kindT), Uint64().Call(Id("k"))))),
	)
	f.Line()
}

func famFieldDoc(fam *familyIR, ff *famField) string {
	var b strings.Builder
	b.WriteString(ff.goName)
	var missing []*eventIR
	for _, ev := range fam.members {
		if ff.src[ev] == nil {
			missing = append(missing, ev)
		}
	}
	switch {
	case !ff.optional:
		b.WriteString(" is carried by every member")
	case len(missing) < len(ff.in):
		b.WriteString(" is carried by every member but " + typeNames(missing))
	default:
		b.WriteString(" is carried by " + typeNames(ff.in))
	}
	// The members' own types, when they differ from the family's.
	var from []string
	for _, ev := range ff.in {
		if t, _ := memberType(ff.src[ev]); t != ff.typ && !contains(from, t) {
			from = append(from, t)
		}
	}
	if len(from) > 0 {
		b.WriteString("; converted to " + ff.typ + " from " + strings.Join(from, ", "))
	}
	if ff.untyped != "" {
		b.WriteString(" (" + ff.untyped + ")")
	}
	b.WriteString(".")
	return b.String()
}

func typeNames(evs []*eventIR) string {
	var ns []string
	for _, ev := range evs {
		ns = append(ns, ev.goName)
	}
	return strings.Join(ns, ", ")
}

func conflictTypes(ff *famField) string {
	var ns []string
	for _, ev := range ff.in {
		t, _ := memberType(ff.src[ev])
		ns = append(ns, t+" in "+ev.goName)
	}
	return strings.Join(ns, ", ")
}

// familyInterface emits the family's interface:
//
//	type GCStartEvent interface {
//		Event
//		GCStartFields() GCStartFields
//	}
func (g *pkgIR) familyInterface(f *File, fam *familyIR) {
	docComment(f, wrap(fmt.Sprintf("%s is implemented by every member of the %s family (see %s).", fam.iface, fam.name, fam.fieldsT), 80))
	f.Type().Id(fam.iface).Interface(
		Id("Event"),
		Comment(fmt.Sprintf("%s returns the event's fields in the family's form.", fam.fieldsT)),
		Id(fam.fieldsT).Params().Id(fam.fieldsT),
	)
	f.Line()
}

// familyAccessor emits a member's accessor:
//
//	func (e *GCStartV1) GCStartFields() GCStartFields {
//		return GCStartFields{Count: e.Count, HasDepth: true, Depth: e.Depth, …}
//	}
//
// and, in a family with kinds, Kind: KindMethodLoadVerbose.
func (g *pkgIR) familyAccessor(f *File, fam *familyIR, ev *eventIR) {
	d := Dict{}
	if fam.kindT != "" {
		d[Id(kindFieldName)] = Id(fam.kindOf[ev].goName)
	}
	for _, ff := range fam.fields {
		src := ff.src[ev]
		if src == nil {
			continue
		}
		v := Id("e").Dot(src.goName)
		if t, _ := memberType(src); t != ff.typ {
			v = typeCode(ff.typ).Call(v)
		}
		d[Id(ff.goName)] = v
		if ff.optional {
			d[Id(ff.hasName)] = True()
		}
	}
	f.Comment(fmt.Sprintf("%s returns the fields of %s in the form of the %s family.", fam.fieldsT, ev.le.Symbol, fam.name))
	f.Func().Params(Id("e").Op("*").Id(ev.goName)).Id(fam.fieldsT).Params().Id(fam.fieldsT).Block(
		Return(Id(fam.fieldsT).Values(d)),
	)
	f.Line()
}

// familyTable emits the list of families:
//
//	var familyTable = [...]FamilyInfo{{Name: "GCStart", Members: []*EventInfo{&infoGCStart, …}}, …}
func (g *pkgIR) familyTable(f *File) {
	var rows []Code
	for _, fam := range g.families {
		var ms []Code
		for _, ev := range fam.members {
			ms = append(ms, Op("&").Id(infoVarName(ev)))
		}
		rows = append(rows, Values(Dict{
			Id("Name"):    Lit(fam.name),
			Id("Members"): Index().Op("*").Id("EventInfo").Values(ms...),
		}))
	}
	f.Var().Id("familyTable").Op("=").Index(Op("...")).Id("FamilyInfo").Values(rows...)
}

// wrap breaks text into lines of at most width bytes at spaces, keeping
// the line breaks it has.
func wrap(text string, width int) string {
	var out []string
	for _, para := range strings.Split(text, "\n") {
		line := ""
		for _, w := range strings.Fields(para) {
			if line != "" && len(line)+1+len(w) > width {
				out = append(out, line)
				line = w
				continue
			}
			if line != "" {
				line += " "
			}
			line += w
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}
