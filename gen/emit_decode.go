package gen

import (
	. "github.com/dave/jennifer/jen"

	"github.com/clrgo/clrevents/schema"
)

// failer emits the return statements of a decode body when the payload is
// bad. Event decoders return a *DecodeError; element decoders return the
// field and offset, and the event's decoder wraps them.
type failer interface {
	// fail: return 0, decodeError("GCStart_V2", "Depth", off, ErrShortPayload);
	// field is the field's name (a literal, or an expression choosing one)
	fail(field, off Code, sentinel string) Code
	// prefix: return 0, shortPrefix("GCStart_V2", len(b), ptrSize, endsGCStartV2)
	prefix(ends Code) Code
	// wrap: the error of element i of a variable-size struct array.
	wrap(field string, i Code, sub, off, err Code) Code
	results(n Code) []Code
}

type eventFail struct{ symbol string }

func (e eventFail) fail(field, off Code, sentinel string) Code {
	return Return(Lit(0), Id("decodeError").Call(Lit(e.symbol), field, off, Id(sentinel)))
}

func (e eventFail) prefix(ends Code) Code {
	return Return(Lit(0), Id("shortPrefix").Call(Lit(e.symbol), Len(Id("b")), Id("ptrSize"), ends))
}

func (e eventFail) wrap(field string, i Code, sub, off, err Code) Code {
	return Return(Lit(0), Id("decodeError").Call(Lit(e.symbol), Qual(implPkg, "ElemPath").Call(Lit(field), i, sub), off, err))
}

func (e eventFail) results(n Code) []Code { return []Code{n, Nil()} }

type elemFail struct{}

func (elemFail) fail(field, off Code, sentinel string) Code {
	return Return(Lit(0), field, off, Id(sentinel))
}

func (elemFail) prefix(ends Code) Code {
	return Block(
		List(Id("f"), Id("o")).Op(":=").Qual(implPkg, "PrefixShort").Call(Len(Id("b")), Id("ptrSize"), ends),
		Return(Lit(0), Id("f"), Id("o"), Id("ErrShortPayload")),
	)
}

func (elemFail) wrap(field string, i Code, sub, off, err Code) Code {
	return Return(Lit(0), Qual(implPkg, "ElemPath").Call(Lit(field), i, sub), off, err)
}

func (elemFail) results(n Code) []Code { return []Code{n, Lit(""), Lit(0), Nil()} }

// decodeBody emits a decoder: one length check for the fixed prefix (per
// pointer size when its offsets depend on it), reads at constant offsets,
// then a cursor over the variable part:
//
//	if len(b) < 24 {
//		return 0, shortPrefix("GCStart_V2", len(b), ptrSize, endsGCStartV2)
//	}
//	_ = b[23]
//	e.Count = binary.LittleEndian.Uint32(b[0:])
//	…
//	return 24, nil
func decodeBody(s *scopeIR, fl failer, checkPtr bool) []Code {
	var out []Code
	if checkPtr {
		out = append(out, If(Id("ptrSize").Op("!=").Lit(4).Op("&&").Id("ptrSize").Op("!=").Lit(8)).Block(
			fl.fail(Lit(""), Lit(0), "ErrPointerSize")))
	}
	variable := s.prefix < len(s.fields)
	prefixPtr := s.size.Ptrs > 0
	if variable {
		out = append(out, Var().Id("off").Int())
	}
	if s.prefix > 0 {
		if prefixPtr {
			out = append(out, If(Id("ptrSize").Op("==").Lit(8)).Block(prefixBlock(s, fl, 8, variable)...).
				Else().Block(prefixBlock(s, fl, 4, variable)...))
		} else {
			out = append(out, prefixBlock(s, fl, 0, variable)...)
		}
	}
	if !variable {
		return append(out, Return(fl.results(sizeExpr(s.size, Id("ptrSize")))...))
	}
	rest := s.fields[s.prefix:]
	for len(rest) > 0 {
		if n := stringRun(rest); n > 1 {
			out = append(out, stringRunBlock(rest[:n], fl))
			rest = rest[n:]
			continue
		}
		out = append(out, cursorField(rest[0], fl)...)
		rest = rest[1:]
	}
	return append(out, Return(fl.results(Id("off"))...))
}

// prefixBlock reads the fixed prefix for one pointer size (0: the prefix
// has no pointers).
func prefixBlock(s *scopeIR, fl failer, ptr int, variable bool) []Code {
	at := func(sz schema.Size) int { return sz.At(ptr) }
	n := at(s.size)
	out := []Code{
		If(Len(Id("b")).Op("<").Lit(n)).Block(fl.prefix(Id(s.endsVar))),
		Id("_").Op("=").Id("b").Index(Lit(n - 1)),
	}
	ptrCode := Id("ptrSize")
	if ptr != 0 {
		ptrCode = Lit(ptr)
	}
	for _, f := range s.fields[:s.prefix] {
		off := at(f.lf.Offset)
		out = append(out, Id("e").Dot(f.goName).Op("=").Add(readFixed(f, Lit(off), Lit(off+at(f.lf.Size)), ptr, ptrCode)))
	}
	if variable {
		out = append(out, Id("off").Op("=").Lit(n))
	}
	return out
}

// endsVar emits the table of where the fields of a scope's fixed prefix
// end, which the error of a short payload names the field from, once per
// event or element type (nothing when the scope has no fixed prefix):
//
//	var endsGCStartV2 = []clrimpl.FieldEnd{
//		{Name: "Count", Bytes: 4},
//		…
//	}
func endsVar(f *File, s *scopeIR, what string) {
	if s.prefix == 0 {
		return
	}
	var rows []Code
	for _, fl := range s.fields[:s.prefix] {
		end := fl.lf.Offset.Add(fl.lf.Size)
		row := []Code{Id("Name").Op(":").Lit(fl.lf.Name), Id("Bytes").Op(":").Lit(end.Bytes)}
		if end.Ptrs != 0 {
			row = append(row, Id("Ptrs").Op(":").Lit(end.Ptrs))
		}
		rows = append(rows, Values(row...))
	}
	f.Commentf("%s is where the fixed fields of %s end, for the error of a short payload.", s.endsVar, what)
	f.Var().Id(s.endsVar).Op("=").Index().Qual(implPkg, "FieldEnd").Custom(Options{Open: "{", Close: "}", Separator: ",", Multi: true}, rows...)
	f.Line()
}

// readFixed reads a field of fixed size between from and to; ptr is the
// pointer size when known (else 0, and ptrCode is the variable).
func readFixed(f *fieldIR, from, to *Statement, ptr int, ptrCode Code) Code {
	lf := f.lf
	sl := Id("b").Index(from.Clone().Op(":").Add(to))
	switch {
	case f.elem != nil:
		return Id(f.elem.view).Values(Dict{Id("b"): sl, Id("ptrSize"): ptrCode})
	case lf.IsArray():
		t, _ := arrayType(lf.Kind)
		if lf.Kind == schema.KindPointer {
			return Qual(implPkg, "Make"+t).Call(sl, ptrCode)
		}
		return Qual(implPkg, "Make"+t).Call(sl)
	case lf.Kind == schema.KindUTF16:
		return Qual(implPkg, "MakeUTF16").Call(sl)
	case lf.Kind == schema.KindAnsi:
		return Qual(implPkg, "MakeAnsi").Call(sl)
	case lf.Kind == schema.KindBinary:
		return Qual(implPkg, "MakeBinary").Call(sl)
	}
	v := readScalar(lf.Kind, from, ptr)
	if f.enum != nil {
		return Id(f.enum.goType).Call(v)
	}
	return v
}

// readScalar reads one fixed-size scalar at off:
//
//	binary.LittleEndian.Uint32(b[off:])
func readScalar(k schema.Kind, off *Statement, ptr int) Code {
	le := func(fn string) *Statement {
		return Qual(binaryPkg, "LittleEndian").Dot(fn).Call(Id("b").Index(off.Clone().Op(":")))
	}
	switch k {
	case schema.KindUint8:
		return Id("b").Index(off)
	case schema.KindInt8:
		return Int8().Call(Id("b").Index(off))
	case schema.KindUint16:
		return le("Uint16")
	case schema.KindInt16:
		return Int16().Call(le("Uint16"))
	case schema.KindUint32:
		return le("Uint32")
	case schema.KindInt32:
		return Int32().Call(le("Uint32"))
	case schema.KindUint64:
		return le("Uint64")
	case schema.KindInt64:
		return Int64().Call(le("Uint64"))
	case schema.KindFloat32:
		return Qual("math", "Float32frombits").Call(le("Uint32"))
	case schema.KindFloat64:
		return Qual("math", "Float64frombits").Call(le("Uint64"))
	case schema.KindBool:
		return Qual(implPkg, "ReadBool").Call(Id("b"), off)
	case schema.KindGUID:
		return Qual(implPkg, "ReadGUID").Call(Id("b"), off)
	case schema.KindPort:
		return Qual(binaryPkg, "BigEndian").Dot("Uint16").Call(Id("b").Index(off.Clone().Op(":")))
	case schema.KindIPv4:
		return Qual(implPkg, "ReadIPv4").Call(Id("b"), off)
	case schema.KindIPv6:
		return Qual(implPkg, "ReadIPv6").Call(Id("b"), off)
	case schema.KindFileTime:
		return Qual(implPkg, "FileTime").Call(Int64().Call(le("Uint64")))
	case schema.KindPointer:
		switch ptr {
		case 8:
			return le("Uint64")
		case 4:
			return Uint64().Call(le("Uint32"))
		}
		return Qual(implPkg, "ReadPtr").Call(Id("b"), off, Id("ptrSize"))
	}
	panic("readScalar: " + k.String())
}

// countExpr is the element count of an array or the length of a string:
// uint64(e.Count), or a literal.
func countExpr(ref schema.Ref, field *fieldIR) Code {
	if field != nil {
		return Uint64().Call(Id("e").Dot(field.goName))
	}
	return Uint64().Call(Lit(ref.Lit))
}

// isUTF16Z tells whether f is a NUL-terminated UTF-16 string.
func isUTF16Z(f *fieldIR) bool {
	lf := f.lf
	return lf.Kind == schema.KindUTF16 && f.elem == nil && !lf.IsArray() && !lf.Length.Set
}

// stringRun is the number of NUL-terminated UTF-16 strings that fields
// starts with, one after another.
func stringRun(fields []*fieldIR) int {
	n := 0
	for n < len(fields) && isUTF16Z(fields[n]) {
		n++
	}
	return n
}

// stringRunBlock reads consecutive NUL-terminated UTF-16 strings with one
// scan for all their terminators (a run such as MethodNamespace,
// MethodName, MethodSignature):
//
//	{
//		var z [3]int
//		n, next := clrimpl.UTF16ZEnds(b, off, z[:])
//		if n < 3 {
//			return 0, decodeError("MethodLoadVerbose_V1", [...]string{"MethodNamespace", …}[n], next, ErrUnterminatedString)
//		}
//		e.MethodNamespace = clrimpl.MakeUTF16(b[off:z[0]:z[0]])
//		e.MethodName = clrimpl.MakeUTF16(b[z[0]+2 : z[1] : z[1]])
//		…
//		off = next
//	}
//
// The error names the string without a terminator and the offset where it
// starts, as one ReadUTF16Z per field would.
func stringRunBlock(run []*fieldIR, fl failer) Code {
	k := len(run)
	var names []Code
	for _, f := range run {
		names = append(names, Lit(f.lf.Name))
	}
	out := []Code{
		Var().Id("z").Index(Lit(k)).Int(),
		List(Id("n"), Id("next")).Op(":=").Qual(implPkg, "UTF16ZEnds").Call(Id("b"), Id("off"), Id("z").Index(Op(":"))),
		If(Id("n").Op("<").Lit(k)).Block(
			fl.fail(Index(Op("...")).String().Values(names...).Index(Id("n")), Id("next"), "ErrUnterminatedString")),
	}
	for i, f := range run {
		start := Id("off")
		if i > 0 {
			start = Id("z").Index(Lit(i - 1)).Op("+").Lit(2)
		}
		end := Id("z").Index(Lit(i))
		out = append(out, Id("e").Dot(f.goName).Op("=").Qual(implPkg, "MakeUTF16").Call(
			Id("b").Index(start.Op(":").Add(end.Clone()).Op(":").Add(end))))
	}
	return Block(append(out, Id("off").Op("=").Id("next"))...)
}

// cursorField reads one field of the variable part at off and advances off.
func cursorField(f *fieldIR, fl failer) []Code {
	lf := f.lf
	name := lf.Name
	ptr := Id("ptrSize")
	switch {
	case lf.Count.Rest:
		// As many whole elements as the rest of the payload holds; a
		// partial one is left over.
		unit := Id("ptrSize")
		if lf.Kind != schema.KindPointer {
			sz, _ := lf.Kind.FixedSize()
			unit = Lit(sz.Bytes)
		}
		return []Code{Block(
			Id("n").Op(":=").Parens(Len(Id("b")).Op("-").Id("off")).Op("/").Add(unit).Op("*").Add(unit),
			Id("e").Dot(f.goName).Op("=").Add(readFixed(f, Id("off"), Id("off").Op("+").Id("n"), 0, ptr)),
			Id("off").Op("+=").Id("n"),
		)}
	case lf.Kind == schema.KindWBEMSID:
		return []Code{Block(
			List(Id("n"), Id("ok")).Op(":=").Qual(implPkg, "WBEMSIDLen").Call(Id("b"), Id("off"), ptr),
			If(Op("!").Id("ok")).Block(fl.fail(Lit(name), Id("off"), "ErrShortPayload")),
			Id("e").Dot(f.goName).Op("=").Qual(implPkg, "MakeWBEMSID").Call(Id("b").Index(Id("off").Op(":").Id("off").Op("+").Id("n")), ptr),
			Id("off").Op("+=").Id("n"),
		)}
	case f.elem != nil && !f.elem.fixed:
		// A count of variable-size elements: check the count against the
		// smallest element first, then decode each one to find the end.
		return []Code{Block(
			Id("cnt").Op(":=").Add(countExpr(lf.Count, f.count)),
			If(List(Id("_"), Id("ok")).Op(":=").Qual(implPkg, "ArrayLen").Call(Id("b"), Id("off"), Id("cnt"), Lit(f.elem.min)), Op("!").Id("ok")).Block(
				fl.fail(Lit(name), Id("off"), "ErrCountTooLarge")),
			Id("start").Op(":=").Id("off"),
			For(Id("i").Op(":=").Uint64().Call(Lit(0)), Id("i").Op("<").Id("cnt"), Id("i").Op("++")).Block(
				Var().Id("el").Id(f.elem.goName),
				List(Id("n"), Id("sub"), Id("at"), Err()).Op(":=").Id("el").Dot("decode").Call(Id("b").Index(Id("off").Op(":")), ptr),
				If(Err().Op("!=").Nil()).Block(fl.wrap(name, Id("i"), Id("sub"), Id("off").Op("+").Id("at"), Err())),
				Id("off").Op("+=").Id("n"),
			),
			Id("e").Dot(f.goName).Op("=").Id(f.elem.view).Values(Dict{
				Id("b"): Id("b").Index(Id("start").Op(":").Id("off")), Id("n"): Int().Call(Id("cnt")), Id("ptrSize"): ptr}),
		)}
	case lf.IsArray() || lf.Length.Set:
		// count=/length=: one overflow-safe check of count*size against
		// what is left, then a sub-slice.
		var cnt Code
		var unit Code
		if lf.IsArray() {
			cnt = countExpr(lf.Count, f.count)
			if f.elem != nil {
				unit = sizeExpr(lf.ElemSize, ptr)
			} else if lf.Kind == schema.KindPointer {
				unit = ptr
			} else {
				sz, _ := lf.Kind.FixedSize()
				unit = Lit(sz.Bytes)
			}
		} else {
			cnt = countExpr(lf.Length, f.length)
			unit = Lit(1)
			if lf.Kind == schema.KindUTF16 {
				unit = Lit(2)
			}
		}
		return []Code{Block(
			List(Id("n"), Id("ok")).Op(":=").Qual(implPkg, "ArrayLen").Call(Id("b"), Id("off"), cnt, unit),
			If(Op("!").Id("ok")).Block(fl.fail(Lit(name), Id("off"), "ErrCountTooLarge")),
			Id("e").Dot(f.goName).Op("=").Add(readFixed(f, Id("off"), Id("off").Op("+").Id("n"), 0, ptr)),
			Id("off").Op("+=").Id("n"),
		)}
	case lf.Kind == schema.KindUTF16 || lf.Kind == schema.KindAnsi:
		fn := "ReadUTF16Z"
		if lf.Kind == schema.KindAnsi {
			fn = "ReadAnsiZ"
		}
		return []Code{Block(
			List(Id("s"), Id("next"), Id("ok")).Op(":=").Qual(implPkg, fn).Call(Id("b"), Id("off")),
			If(Op("!").Id("ok")).Block(fl.fail(Lit(name), Id("off"), "ErrUnterminatedString")),
			Id("e").Dot(f.goName).Op("=").Id("s"),
			Id("off").Op("=").Id("next"),
		)}
	}
	// A fixed-size scalar after the variable part.
	sz, _ := lf.Kind.FixedSize()
	size := sizeExpr(sz, ptr)
	read := readScalar(lf.Kind, Id("off"), 0)
	if f.enum != nil {
		read = Id(f.enum.goType).Call(read)
	}
	return []Code{
		If(Len(Id("b")).Op("-").Id("off").Op("<").Add(size)).Block(fl.fail(Lit(name), Id("off"), "ErrShortPayload")),
		Id("e").Dot(f.goName).Op("=").Add(read),
		Id("off").Op("+=").Add(sizeExpr(sz, ptr)),
	}
}

// encodeBody appends each field's wire form:
//
//	dst = binary.LittleEndian.AppendUint32(dst, e.Count)
//	dst = appendUTF16Z(dst, e.Name)
//	return dst
func encodeBody(s *scopeIR) []Code {
	var out []Code
	for _, f := range s.fields {
		if f.lf.PadBefore != (schema.Size{}) {
			out = append(out, appendPad(f.lf.PadBefore))
		}
		out = append(out, Id("dst").Op("=").Add(encodeField(f)))
	}
	if s.tail != (schema.Size{}) {
		out = append(out, appendPad(s.tail))
	}
	return append(out, Return(Id("dst")))
}

// appendPad writes alignment padding, zero bytes (no allocation: the
// compiler extends dst in place):
//
//	dst = append(dst, make([]byte, -4+ptrSize)...)
func appendPad(pad schema.Size) Code {
	return Id("dst").Op("=").Append(Id("dst"), Make(Index().Byte(), sizeExpr(pad, Id("ptrSize"))).Op("..."))
}

func encodeField(f *fieldIR) Code {
	lf := f.lf
	v := Id("e").Dot(f.goName)
	le := func(fn string, x Code) Code { return Qual(binaryPkg, "LittleEndian").Dot(fn).Call(Id("dst"), x) }
	switch {
	case f.elem != nil:
		return v.Dot("appendWire").Call(Id("dst"), Id("ptrSize"))
	case lf.IsArray():
		return v.Dot("AppendWire").Call(Id("dst"), Id("ptrSize"))
	case lf.Padded():
		return Qual(implPkg, "AppendFixed").Call(Id("dst"), v.Dot("Bytes").Call(), Lit(lf.Size.Bytes))
	case lf.Length.Set:
		return Append(Id("dst"), v.Dot("Bytes").Call().Op("..."))
	}
	switch lf.Kind {
	case schema.KindUint8, schema.KindInt8:
		return Append(Id("dst"), Byte().Call(v))
	case schema.KindUint16, schema.KindInt16:
		return le("AppendUint16", Uint16().Call(v))
	case schema.KindUint32, schema.KindInt32:
		return le("AppendUint32", Uint32().Call(v))
	case schema.KindUint64, schema.KindInt64:
		return le("AppendUint64", Uint64().Call(v))
	case schema.KindFloat32:
		return le("AppendUint32", Qual("math", "Float32bits").Call(v))
	case schema.KindFloat64:
		return le("AppendUint64", Qual("math", "Float64bits").Call(v))
	case schema.KindBool:
		return Qual(implPkg, "AppendBool").Call(Id("dst"), v)
	case schema.KindGUID:
		return Qual(implPkg, "AppendGUID").Call(Id("dst"), v)
	case schema.KindPointer:
		return Qual(implPkg, "AppendPtr").Call(Id("dst"), v, Id("ptrSize"))
	case schema.KindPort:
		return Qual(binaryPkg, "BigEndian").Dot("AppendUint16").Call(Id("dst"), v)
	case schema.KindIPv4:
		return Qual(implPkg, "AppendIPv4").Call(Id("dst"), v)
	case schema.KindIPv6:
		return Qual(implPkg, "AppendIPv6").Call(Id("dst"), v)
	case schema.KindFileTime:
		return le("AppendUint64", Uint64().Call(v))
	case schema.KindWBEMSID:
		return Qual(implPkg, "AppendWBEMSID").Call(Id("dst"), v, Id("ptrSize"))
	case schema.KindUTF16:
		return Qual(implPkg, "AppendUTF16Z").Call(Id("dst"), v)
	case schema.KindAnsi:
		return Qual(implPkg, "AppendAnsiZ").Call(Id("dst"), v)
	}
	panic("encodeField: " + lf.Kind.String())
}

// equalBody compares two elements field by field (views by value).
func equalBody(s *scopeIR) []Code {
	var conds []*Statement
	for _, f := range s.fields {
		a, b := Id("e").Dot(f.goName), Id("o").Dot(f.goName)
		if f.elem != nil || f.lf.IsArray() || isView(f.lf.Kind) {
			conds = append(conds, a.Dot("Equal").Call(b))
		} else {
			conds = append(conds, a.Op("==").Add(b))
		}
	}
	if len(conds) == 0 {
		return []Code{Return(True())}
	}
	expr := conds[0]
	for _, c := range conds[1:] {
		expr = expr.Op("&&").Line().Add(c)
	}
	return []Code{Return(expr)}
}

func isView(k schema.Kind) bool {
	return k == schema.KindUTF16 || k == schema.KindAnsi || k == schema.KindBinary
}
