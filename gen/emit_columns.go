package gen

import (
	. "github.com/dave/jennifer/jen"

	"github.com/clrgo/clrevents/schema"
)

// The columnar form of an event type (see clrimpl/columns.go for the
// flattening rules): its column list and an AppendColumns method that
// hands one row to a clrimpl.ColumnAppender.

// columnsVar emits the event type's column list:
//
//	var columnsGCStartV2 = []clrimpl.Column{{Name: "Count", Kind: clrimpl.ColumnUint32}, …}
func columnsVar(f *File, ev *eventIR) {
	var rows []Code
	for _, fl := range ev.scope.shown {
		for _, c := range fieldColumns(fl) {
			d := Dict{Id("Name"): Lit(c.name), Id("Kind"): Qual(implPkg, c.kind)}
			if c.hex {
				d[Id("Hex")] = True()
			}
			rows = append(rows, Values(d))
		}
	}
	f.Commentf("%s lists the columns of %s (EventInfo.Columns).", columnsVarName(ev), ev.le.Symbol)
	f.Var().Id(columnsVarName(ev)).Op("=").Index().Qual(implPkg, "Column").Values(rows...)
	f.Line()
}

func columnsVarName(ev *eventIR) string { return "columns" + ev.goName }

type columnIR struct {
	name string
	kind string // the clrimpl constant
	hex  bool
}

// fieldColumns is the columns one field becomes, named as the schema names
// the field: one, or two for a map-bound field (its number and its name).
func fieldColumns(fl *fieldIR) []columnIR {
	lf := fl.lf
	if fl.elem != nil || lf.IsArray() {
		return []columnIR{{lf.Name, "ColumnJSON", false}}
	}
	c := columnIR{name: lf.Name, kind: columnKind(lf.Kind), hex: lf.Hex}
	if fl.enum != nil {
		return []columnIR{c, {lf.Name + "_name", "ColumnString", false}}
	}
	return []columnIR{c}
}

// columnKind is the clrimpl column kind of a scalar field kind: the Go
// type's (ColumnUint32, ColumnGUID; pointers are ColumnUint64, ports
// ColumnUint16), strings of either encoding ColumnString, and so are
// addresses, times and SIDs, as their JSON form writes them.
func columnKind(k schema.Kind) string {
	switch g := goKind(k); g {
	case "UTF16", "Ansi", addrType, "FileTime", "WBEMSID":
		return "ColumnString"
	case "invalid":
		panic("columnKind: " + k.String())
	default:
		return "Column" + capitalize(g)
	}
}

// columnsBody emits AppendColumns: one appender call per column, in the
// order of the column list:
//
//	a.Uint(uint64(e.Count))
//	a.Uint(uint64(e.Reason))
//	{
//		b, _ := e.Reason.AppendText(a.Scratch())
//		a.Bytes(b)
//	}
//	a.Bytes(e.Name.AppendUTF8(a.Scratch()))
//	a.Bytes(e.Values.appendJSON(a.Scratch()))
func columnsBody(s *scopeIR) []Code {
	var out []Code
	a := func(method string, arg Code) Code { return Id("a").Dot(method).Call(arg) }
	scratch := Id("a").Dot("Scratch").Call()
	for _, fl := range s.shown {
		lf := fl.lf
		v := Id("e").Dot(fl.goName)
		switch {
		case fl.elem != nil:
			out = append(out, a("Bytes", v.Clone().Dot("appendJSON").Call(scratch)))
			continue
		case lf.IsArray():
			m := "AppendJSON"
			if lf.Hex && (lf.Kind == schema.KindUint32 || lf.Kind == schema.KindUint64 || lf.Kind == schema.KindPointer) {
				m = "AppendJSONHex"
			}
			out = append(out, a("Bytes", v.Clone().Dot(m).Call(scratch)))
			continue
		}
		switch lf.Kind {
		case schema.KindUint8, schema.KindUint16, schema.KindUint32, schema.KindUint64, schema.KindPointer, schema.KindPort:
			out = append(out, a("Uint", Uint64().Call(v)))
		case schema.KindInt8, schema.KindInt16, schema.KindInt32, schema.KindInt64:
			out = append(out, a("Int", Int64().Call(v)))
		case schema.KindFloat32, schema.KindFloat64:
			out = append(out, a("Float", Float64().Call(v)))
		case schema.KindBool:
			out = append(out, a("Bool", v))
		case schema.KindGUID:
			out = append(out, a("GUID", v))
		case schema.KindUTF16, schema.KindAnsi:
			if lf.Padded() {
				out = append(out, a("Bytes", v.Clone().Dot("TrimNUL").Call().Dot("AppendUTF8").Call(scratch)))
			} else {
				out = append(out, a("Bytes", v.Clone().Dot("AppendUTF8").Call(scratch)))
			}
		case schema.KindIPv4, schema.KindIPv6:
			out = append(out, a("Bytes", Qual(implPkg, "AppendAddr").Call(scratch, v)))
		case schema.KindFileTime, schema.KindWBEMSID:
			out = append(out, a("Bytes", v.Clone().Dot("AppendText").Call(scratch)))
		case schema.KindBinary:
			out = append(out, a("Bytes", v.Clone().Dot("Bytes").Call()))
		default:
			panic("columnsBody: " + lf.Kind.String())
		}
		if fl.enum != nil {
			out = append(out, Block(
				List(Id("b"), Id("_")).Op(":=").Add(v.Clone().Dot("AppendText").Call(scratch)),
				a("Bytes", Id("b")),
			))
		}
	}
	return out
}
