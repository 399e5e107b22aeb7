package gen

import (
	"fmt"
	"strings"

	. "github.com/dave/jennifer/jen"

	"github.com/clrgo/clrevents/schema"
)

const (
	binaryPkg = "encoding/binary"
	// implPkg is the support package that generated code stands on.
	implPkg = "github.com/clrgo/clrevents/clrimpl"
)

// eventType emits an event's struct, its element types and all methods.
func (g *pkgIR) eventType(f *File, ev *eventIR) {
	le := ev.le
	docComment(f, eventDoc(ev))
	f.Type().Id(ev.goName).Struct(structFields(ev.scope)...)
	f.Line()
	for _, fl := range ev.scope.fields {
		switch {
		case fl.elem != nil && fl.elem.canon != nil:
			elemAliases(f, ev, fl)
		case fl.elem != nil:
			g.elemTypes(f, ev, fl)
		}
	}

	// func (*GCStartV2) Info() *EventInfo { return &infoGCStartV2 }
	f.Comment(fmt.Sprintf("Info describes %s.", le.Symbol))
	f.Func().Params(Op("*").Id(ev.goName)).Id("Info").Params().Op("*").Id("EventInfo").Block(
		Return(Op("&").Id(infoVarName(ev))),
	)
	f.Line()
	descriptorMethod(f, ev)

	docComment(f, fmt.Sprintf("Decode reads a %s payload for a pointer size of 4 or 8 and returns the bytes\nit used. Strings and arrays alias b.", le.Symbol))
	f.Func().Params(Id("e").Op("*").Id(ev.goName)).Id("Decode").
		Params(Id("b").Index().Byte(), Id("ptrSize").Int()).Params(Int(), Error()).
		Block(decodeBody(ev.scope, eventFail{symbol: le.Symbol}, ev.hasPtr)...)
	f.Line()
	endsVar(f, ev.scope, le.Symbol)

	f.Comment(fmt.Sprintf("Encode appends the %s wire form for the pointer size.", le.Symbol))
	f.Func().Params(Id("e").Op("*").Id(ev.goName)).Id("Encode").
		Params(Id("dst").Index().Byte(), Id("ptrSize").Int()).Index().Byte().
		Block(encodeBody(ev.scope)...)
	f.Line()

	f.Comment("AppendJSON appends the fields as a JSON object.")
	f.Func().Params(Id("e").Op("*").Id(ev.goName)).Id("AppendJSON").
		Params(Id("dst").Index().Byte()).Index().Byte().
		Block(g.appendBody(ev.scope, modeJSON)...)
	f.Line()

	f.Comment("AppendText appends the fields as Name=value pairs.")
	f.Func().Params(Id("e").Op("*").Id(ev.goName)).Id("AppendText").
		Params(Id("dst").Index().Byte()).Index().Byte().
		Block(g.appendBody(ev.scope, modeText)...)
	f.Line()

	f.Comment("AppendColumns appends the fields to a as one row of the columns Info().Columns lists.")
	f.Func().Params(Id("e").Op("*").Id(ev.goName)).Id("AppendColumns").
		Params(Id("a").Qual(implPkg, "ColumnAppender")).
		Block(columnsBody(ev.scope)...)
	f.Line()
	for _, fl := range ev.scope.fields {
		if fl.lf.Walk {
			// The frames of the event before it on its thread.
			docComment(f, fmt.Sprintf("AppendStackWalk appends %s, the call stack (innermost first) of the event\nlogged just before this one on the same thread, to dst (clrimpl.StackWalk).", fl.goName))
			f.Func().Params(Id("e").Op("*").Id(ev.goName)).Id("AppendStackWalk").
				Params(Id("dst").Index().Uint64()).Index().Uint64().
				Block(Return(Id("e").Dot(fl.goName).Dot("AppendTo").Call(Id("dst"))))
			f.Line()
			break
		}
	}
	columnsVar(f, ev)
	descriptorVars(f, ev)
}

func eventDoc(ev *eventIR) string {
	le := ev.le
	var b strings.Builder
	fmt.Fprintf(&b, "%s is the payload of %s: event %d version %d of %s.\n", ev.goName, le.Symbol, le.Value, le.Version, ev.prov.lp.Name)
	var parts []string
	if le.TaskRef != nil {
		parts = append(parts, fmt.Sprintf("task %s (%d)", le.TaskRef.Name, le.TaskRef.Value))
	}
	if le.Opcode != "" {
		parts = append(parts, fmt.Sprintf("opcode %s (%d)", le.Opcode, le.OpcodeValue))
	}
	if le.Level != "" {
		parts = append(parts, fmt.Sprintf("level %s (%d)", le.Level, le.LevelValue))
	}
	if len(le.Keywords) > 0 {
		parts = append(parts, fmt.Sprintf("keywords %s (0x%x)", strings.Join(le.Keywords, ", "), le.KeywordsMask))
	}
	if len(parts) > 0 {
		b.WriteString(capitalize(strings.Join(parts, ", ")) + ".\n")
	}
	if le.Template == nil {
		b.WriteString("It has no payload.")
	} else {
		fmt.Fprintf(&b, "Template %s.", le.Template.TID)
		if ev.hasPtr {
			b.WriteString(" Its layout depends on the pointer size.")
		}
	}
	return b.String()
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// structFields emits the fields of an event or element struct, in wire
// order:
//
//	// Reason is win:UInt32, map GCReasonMap.
//	Reason GCReason
func structFields(s *scopeIR) []Code {
	var out []Code
	for _, f := range s.fields {
		for _, line := range strings.Split(wrap(fieldDoc(f), 72), "\n") {
			out = append(out, Comment(line))
		}
		out = append(out, Id(f.goName).Add(fieldType(f)))
	}
	return out
}

func fieldDoc(f *fieldIR) string {
	lf := f.lf
	var b strings.Builder
	b.WriteString(f.goName + " is ")
	if lf.Kind == schema.KindStruct {
		if f.elem.fixed {
			b.WriteString("an array of fixed-size structs")
		} else {
			b.WriteString("an array of variable-size structs, read through an iterator")
		}
	} else {
		b.WriteString(lf.InType)
		if lf.OutType != "" {
			b.WriteString(" (" + lf.OutType + ")")
		}
	}
	switch lf.Kind {
	case schema.KindPointer, schema.KindWBEMSID:
		b.WriteString(", pointer-sized on the wire")
	case schema.KindPort, schema.KindIPv4:
		b.WriteString(", in network byte order on the wire")
	}
	if lf.Map != nil {
		b.WriteString(", map " + lf.Map.Name)
	}
	if lf.Count.Set {
		if lf.Count.Rest {
			b.WriteString(", as many elements as the rest of the payload holds")
		} else if lf.Count.Field != nil {
			b.WriteString(", " + f.count.goName + " elements")
		} else {
			fmt.Fprintf(&b, ", %d elements", lf.Count.Lit)
		}
	}
	if lf.Length.Set {
		unit := "bytes"
		if lf.Kind == schema.KindUTF16 {
			unit = "UTF-16 code units"
		}
		switch {
		case lf.Length.Field != nil:
			fmt.Fprintf(&b, ", %s %s long", f.length.goName, unit)
		case lf.Padded():
			fmt.Fprintf(&b, ", %d %s long, NUL-padded (shown up to the first NUL: TrimNUL)", lf.Length.Lit, unit)
		default:
			fmt.Fprintf(&b, ", %d %s long", lf.Length.Lit, unit)
		}
	} else if lf.Kind == schema.KindUTF16 || lf.Kind == schema.KindAnsi {
		b.WriteString(", NUL-terminated on the wire")
	}
	if len(lf.Counts) > 0 {
		var ns []string
		for _, c := range lf.Counts {
			ns = append(ns, c.Name)
		}
		b.WriteString("; it sizes " + strings.Join(ns, " and "))
	}
	b.WriteString(".")
	// Views of the payload: what a user keeps past the next event
	// changes under them unless copied.
	switch {
	case lf.Kind == schema.KindUTF16 || lf.Kind == schema.KindAnsi:
		b.WriteString(" It aliases the payload it was decoded from, which a reader reuses for its next event: String copies it.")
	case lf.Kind == schema.KindBinary || lf.Kind == schema.KindStruct || lf.Count.Set:
		b.WriteString(" It aliases the payload it was decoded from, which a reader reuses for its next event.")
	}
	return b.String()
}

// fieldType is a field's Go type.
func fieldType(f *fieldIR) Code {
	lf := f.lf
	switch {
	case f.elem != nil:
		return Id(f.elem.view)
	case lf.IsArray():
		t, _ := arrayType(lf.Kind)
		return Id(t)
	case f.enum != nil:
		return Id(f.enum.goType)
	}
	return typeCode(goKind(lf.Kind))
}

// elemTypes emits a struct array's element type, its view, and their
// methods.
func (g *pkgIR) elemTypes(f *File, ev *eventIR, fl *fieldIR) {
	el := fl.elem
	f.Comment(fmt.Sprintf("%s is one element of %s.%s.", el.goName, ev.goName, fl.goName))
	f.Type().Id(el.goName).Struct(structFields(el.scope)...)
	f.Line()
	for _, sub := range el.scope.fields {
		if sub.elem != nil {
			g.elemTypes(f, ev, sub)
		}
	}
	f.Func().Params(Id("e").Op("*").Id(el.goName)).Id("decode").
		Params(Id("b").Index().Byte(), Id("ptrSize").Int()).Params(Int(), String(), Int(), Error()).
		Block(decodeBody(el.scope, elemFail{}, false)...)
	f.Line()
	endsVar(f, el.scope, ev.goName+"."+fl.goName+" elements")
	f.Func().Params(Id("e").Op("*").Id(el.goName)).Id("encode").
		Params(Id("dst").Index().Byte(), Id("ptrSize").Int()).Index().Byte().
		Block(encodeBody(el.scope)...)
	f.Line()
	f.Func().Params(Id("e").Op("*").Id(el.goName)).Id("appendJSON").
		Params(Id("dst").Index().Byte()).Index().Byte().
		Block(g.appendBody(el.scope, modeJSON)...)
	f.Line()
	f.Func().Params(Id("e").Op("*").Id(el.goName)).Id("equal").
		Params(Id("o").Op("*").Id(el.goName)).Bool().
		Block(equalBody(el.scope)...)
	f.Line()
	if el.fixed {
		g.arrayView(f, ev, fl)
	} else {
		g.iterView(f, ev, fl)
	}
}

// elemAliases emits a struct array's element type and view as aliases of
// the identical types of an older member of the family (elemIR.canon),
// and its constructor as a call of theirs:
//
//	type XV5ValuesElem = XV4ValuesElem
//	type XV5ValuesArray = XV4ValuesArray
//	func XV5ValuesArrayOf(elems ...XV5ValuesElem) XV5ValuesArray { return XV4ValuesArrayOf(elems...) }
func elemAliases(f *File, ev *eventIR, fl *fieldIR) {
	el, c := fl.elem, fl.elem.canon
	f.Comment(fmt.Sprintf("%s is one element of %s.%s: the same type as %s.", el.goName, ev.goName, fl.goName, c.goName))
	f.Type().Id(el.goName).Op("=").Id(c.goName)
	f.Line()
	for _, sub := range el.scope.fields {
		if sub.elem != nil {
			elemAliases(f, ev, sub)
		}
	}
	f.Comment(fmt.Sprintf("%s is the %s array of %s: the same type as %s.", el.view, fl.lf.Name, ev.le.Symbol, c.view))
	f.Type().Id(el.view).Op("=").Id(c.view)
	f.Line()
	f.Comment(fmt.Sprintf("%sOf builds a %s holding elems (encoded with 8-byte pointers), as %sOf does.", el.view, el.view, c.view))
	f.Func().Id(el.view + "Of").Params(Id("elems").Op("...").Id(el.goName)).Id(el.view).Block(
		Return(Id(c.view + "Of").Call(Id("elems").Op("..."))),
	)
	f.Line()
}

// arrayView emits the view of a fixed-size-element struct array:
//
//	type XArray struct{ b []byte; ptrSize int }
//	func (a XArray) Len() int
//	func (a XArray) At(i int) XElem
//	…
func (g *pkgIR) arrayView(f *File, ev *eventIR, fl *fieldIR) {
	el := fl.elem
	v := el.view
	size := fl.lf.ElemSize
	f.Comment(fmt.Sprintf("%s is the %s array of %s: fixed-size elements that alias the payload.", v, fl.lf.Name, ev.le.Symbol))
	f.Type().Id(v).Struct(Id("b").Index().Byte(), Id("ptrSize").Int())
	f.Line()
	viewOf(f, v, el.goName, Dict{Id("b"): Id("b"), Id("ptrSize"): Lit(8)})
	f.Line()
	f.Func().Params(Id("a").Id(v)).Id("elemSize").Params().Int().Block(Return(sizeExpr(size, Id("a").Dot("ptrSize"))))
	f.Line()
	f.Comment("Len is the number of elements.")
	f.Func().Params(Id("a").Id(v)).Id("Len").Params().Int().Block(
		Id("n").Op(":=").Id("a").Dot("elemSize").Call(),
		If(Id("n").Op("==").Lit(0)).Block(Return(Lit(0))), // the zero view of pointer-only elements
		Return(Len(Id("a").Dot("b")).Op("/").Id("n")),
	)
	f.Line()
	f.Comment("At decodes element i; it panics if i is out of range, as a slice index does.")
	f.Func().Params(Id("a").Id(v)).Id("At").Params(Id("i").Int()).Id(el.goName).Block(
		Id("n").Op(":=").Id("a").Dot("elemSize").Call(),
		Var().Id("e").Id(el.goName),
		Id("e").Dot("decode").Call(Id("a").Dot("b").Index(Id("i").Op("*").Id("n").Op(":").Parens(Id("i").Op("+").Lit(1)).Op("*").Id("n")), Id("a").Dot("ptrSize")),
		Return(Id("e")),
	)
	f.Line()
	f.Comment("All yields the elements in order.")
	f.Func().Params(Id("a").Id(v)).Id("All").Params().Qual("iter", "Seq2").Types(Int(), Id(el.goName)).Block(
		Return(Func().Params(Id("yield").Func().Params(Int(), Id(el.goName)).Bool()).Block(
			For(Id("i").Op(":=").Range().Id("a").Dot("Len").Call()).Block(
				If(Op("!").Id("yield").Call(Id("i"), Id("a").Dot("At").Call(Id("i")))).Block(Return()),
			),
		)),
	)
	f.Line()
	f.Comment("Equal reports whether both hold the same element values, whatever their pointer sizes.")
	f.Func().Params(Id("a").Id(v)).Id("Equal").Params(Id("o").Id(v)).Bool().Block(
		If(Id("a").Dot("Len").Call().Op("!=").Id("o").Dot("Len").Call()).Block(Return(False())),
		For(Id("i").Op(":=").Range().Id("a").Dot("Len").Call()).Block(
			List(Id("x"), Id("y")).Op(":=").List(Id("a").Dot("At").Call(Id("i")), Id("o").Dot("At").Call(Id("i"))),
			If(Op("!").Id("x").Dot("equal").Call(Op("&").Id("y"))).Block(Return(False())),
		),
		Return(True()),
	)
	f.Line()
	f.Func().Params(Id("a").Id(v)).Id("appendWire").Params(Id("dst").Index().Byte(), Id("ptrSize").Int()).Index().Byte().Block(
		For(Id("i").Op(":=").Range().Id("a").Dot("Len").Call()).Block(
			Id("e").Op(":=").Id("a").Dot("At").Call(Id("i")),
			Id("dst").Op("=").Id("e").Dot("encode").Call(Id("dst"), Id("ptrSize")),
		),
		Return(Id("dst")),
	)
	f.Line()
	f.Func().Params(Id("a").Id(v)).Id("appendJSON").Params(Id("dst").Index().Byte()).Index().Byte().Block(
		Id("dst").Op("=").Append(Id("dst"), LitRune('[')),
		For(Id("i").Op(":=").Range().Id("a").Dot("Len").Call()).Block(
			If(Id("i").Op(">").Lit(0)).Block(Id("dst").Op("=").Append(Id("dst"), LitRune(','))),
			Id("e").Op(":=").Id("a").Dot("At").Call(Id("i")),
			Id("dst").Op("=").Id("e").Dot("appendJSON").Call(Id("dst")),
		),
		Return(Append(Id("dst"), LitRune(']'))),
	)
	f.Line()
}

// iterView emits the view of a variable-size-element struct array, read
// in order:
//
//	type XIter struct{ b []byte; n, ptrSize int }
//	func (it XIter) Len() int
//	func (it XIter) All() iter.Seq2[int, XElem]
//	…
func (g *pkgIR) iterView(f *File, ev *eventIR, fl *fieldIR) {
	el := fl.elem
	v := el.view
	docComment(f, fmt.Sprintf("%s is the %s array of %s. Its elements differ in size, so they are read in\norder with All. Decode has checked every element; the view aliases the payload.", v, fl.lf.Name, ev.le.Symbol))
	f.Type().Id(v).Struct(Id("b").Index().Byte(), Id("n").Int(), Id("ptrSize").Int())
	f.Line()
	viewOf(f, v, el.goName, Dict{Id("b"): Id("b"), Id("n"): Len(Id("elems")), Id("ptrSize"): Lit(8)})
	f.Line()
	f.Comment("Len is the number of elements.")
	f.Func().Params(Id("it").Id(v)).Id("Len").Params().Int().Block(Return(Id("it").Dot("n")))
	f.Line()
	f.Comment("All yields the elements in order.")
	f.Func().Params(Id("it").Id(v)).Id("All").Params().Qual("iter", "Seq2").Types(Int(), Id(el.goName)).Block(
		Return(Func().Params(Id("yield").Func().Params(Int(), Id(el.goName)).Bool()).Block(
			Id("b").Op(":=").Id("it").Dot("b"),
			For(Id("i").Op(":=").Range().Id("it").Dot("n")).Block(
				Var().Id("e").Id(el.goName),
				List(Id("n"), Id("_"), Id("_"), Err()).Op(":=").Id("e").Dot("decode").Call(Id("b"), Id("it").Dot("ptrSize")),
				If(Err().Op("!=").Nil().Op("||").Op("!").Id("yield").Call(Id("i"), Id("e"))).Block(Return()),
				Id("b").Op("=").Id("b").Index(Id("n").Op(":")),
			),
		)),
	)
	f.Line()
	f.Comment("Equal reports whether both hold the same element values, whatever their pointer sizes.")
	f.Func().Params(Id("it").Id(v)).Id("Equal").Params(Id("o").Id(v)).Bool().Block(
		If(Id("it").Dot("n").Op("!=").Id("o").Dot("n")).Block(Return(False())),
		List(Id("a"), Id("b")).Op(":=").List(Id("it").Dot("b"), Id("o").Dot("b")),
		For(Range().Id("it").Dot("n")).Block(
			Var().Id("x").Op(",").Id("y").Id(el.goName),
			List(Id("n"), Id("_"), Id("_"), Id("err1")).Op(":=").Id("x").Dot("decode").Call(Id("a"), Id("it").Dot("ptrSize")),
			List(Id("m"), Id("_"), Id("_"), Id("err2")).Op(":=").Id("y").Dot("decode").Call(Id("b"), Id("o").Dot("ptrSize")),
			If(Id("err1").Op("!=").Nil().Op("||").Id("err2").Op("!=").Nil().Op("||").Op("!").Id("x").Dot("equal").Call(Op("&").Id("y"))).Block(Return(False())),
			List(Id("a"), Id("b")).Op("=").List(Id("a").Index(Id("n").Op(":")), Id("b").Index(Id("m").Op(":"))),
		),
		Return(True()),
	)
	f.Line()
	f.Func().Params(Id("it").Id(v)).Id("appendWire").Params(Id("dst").Index().Byte(), Id("ptrSize").Int()).Index().Byte().Block(
		For(List(Id("_"), Id("e")).Op(":=").Range().Id("it").Dot("All").Call()).Block(
			Id("dst").Op("=").Id("e").Dot("encode").Call(Id("dst"), Id("ptrSize")),
		),
		Return(Id("dst")),
	)
	f.Line()
	f.Func().Params(Id("it").Id(v)).Id("appendJSON").Params(Id("dst").Index().Byte()).Index().Byte().Block(
		Id("dst").Op("=").Append(Id("dst"), LitRune('[')),
		For(List(Id("i"), Id("e")).Op(":=").Range().Id("it").Dot("All").Call()).Block(
			If(Id("i").Op(">").Lit(0)).Block(Id("dst").Op("=").Append(Id("dst"), LitRune(','))),
			Id("dst").Op("=").Id("e").Dot("appendJSON").Call(Id("dst")),
		),
		Return(Append(Id("dst"), LitRune(']'))),
	)
	f.Line()
}

// viewOf emits a struct-array view's constructor, which encodes the
// elements with 8-byte pointers; fields fills the view:
//
//	func XArrayOf(elems ...XElem) XArray {
//		var b []byte
//		for i := range elems {
//			b = elems[i].encode(b, 8)
//		}
//		return XArray{b: b, ptrSize: 8}
//	}
func viewOf(f *File, view, elem string, fields Dict) {
	f.Comment(fmt.Sprintf("%sOf builds a %s holding elems (encoded with 8-byte pointers).", view, view))
	f.Func().Id(view+"Of").Params(Id("elems").Op("...").Id(elem)).Id(view).Block(
		Var().Id("b").Index().Byte(),
		For(Id("i").Op(":=").Range().Id("elems")).Block(
			Id("b").Op("=").Id("elems").Index(Id("i")).Dot("encode").Call(Id("b"), Lit(8)),
		),
		Return(Id(view).Values(fields)),
	)
}

// sizeExpr is a Size for the pointer size in ptr: 24, or 16 + 2*ptrSize.
func sizeExpr(s schema.Size, ptr Code) Code {
	switch {
	case s.Ptrs == 0:
		return Lit(s.Bytes)
	case s.Bytes == 0 && s.Ptrs == 1:
		return ptr
	case s.Bytes == 0:
		return Lit(s.Ptrs).Op("*").Add(ptr)
	case s.Ptrs == 1:
		return Lit(s.Bytes).Op("+").Add(ptr)
	}
	return Lit(s.Bytes).Op("+").Lit(s.Ptrs).Op("*").Add(ptr)
}

// docComment emits text as // lines (jennifer would make a multi-line
// Comment a /* */ block).
func docComment(f *File, text string) {
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		f.Comment(strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return ' '
			}
			return r
		}, l))
	}
}
