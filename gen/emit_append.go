package gen

import (
	. "github.com/dave/jennifer/jen"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/schema"
)

type appendMode int

const (
	modeJSON appendMode = iota
	modeText
)

// appendBody emits AppendJSON or AppendText: constant key text, then each
// value, with no allocation, for the fields the scope shows, keyed by their
// schema names:
//
//	dst = append(dst, `{"Count":`...)
//	dst = appendJSONUint(dst, uint64(e.Count))
//	dst = append(dst, `,"Reason":`...)
//	dst = e.Reason.appendJSON(dst)
//	return append(dst, '}')
func (g *pkgIR) appendBody(s *scopeIR, mode appendMode) []Code {
	var out []Code
	for i, f := range s.shown {
		name := f.lf.Name
		if mode == modeJSON {
			name = string(clrimpl.AppendJSONString(nil, name))
		}
		var key string
		switch {
		case mode == modeJSON && i == 0:
			key = `{` + name + `:`
		case mode == modeJSON:
			key = `,` + name + `:`
		case i == 0:
			key = name + "="
		default:
			key = " " + name + "="
		}
		out = append(out, Id("dst").Op("=").Append(Id("dst"), Lit(key).Op("...")))
		out = append(out, g.appendValue(f, mode))
	}
	switch {
	case mode == modeJSON && len(s.shown) == 0:
		out = append(out, Return(Append(Id("dst"), Lit("{}").Op("..."))))
	case mode == modeJSON:
		out = append(out, Return(Append(Id("dst"), LitRune('}'))))
	default:
		out = append(out, Return(Id("dst")))
	}
	return out
}

// appendValue emits the statement appending one field's value.
func (g *pkgIR) appendValue(f *fieldIR, mode appendMode) Code {
	lf := f.lf
	v := Id("e").Dot(f.goName)
	set := func(c Code) Code { return Id("dst").Op("=").Add(c) }
	switch {
	case f.elem != nil:
		return set(v.Dot("appendJSON").Call(Id("dst")))
	case lf.IsArray():
		if lf.Hex && (lf.Kind == schema.KindUint32 || lf.Kind == schema.KindUint64 || lf.Kind == schema.KindPointer) {
			return set(v.Dot("AppendJSONHex").Call(Id("dst")))
		}
		return set(v.Dot("AppendJSON").Call(Id("dst")))
	case f.enum != nil:
		if mode == modeJSON {
			return set(v.Dot("appendJSON").Call(Id("dst")))
		}
		return List(Id("dst"), Id("_")).Op("=").Add(v.Dot("AppendText").Call(Id("dst")))
	}
	switch lf.Kind {
	case schema.KindUint8, schema.KindUint16, schema.KindUint32, schema.KindUint64, schema.KindPointer:
		return set(appendUint(v, lf.Hex, mode))
	case schema.KindInt8, schema.KindInt16, schema.KindInt32, schema.KindInt64:
		if lf.Hex {
			// A signed field printed in hex shows its bits.
			return set(appendUint(Id(unsignedOf(lf.Kind)).Call(v), true, mode))
		}
		if mode == modeJSON {
			return set(Qual(implPkg, "AppendJSONInt").Call(Id("dst"), Int64().Call(v)))
		}
		return set(Qual("strconv", "AppendInt").Call(Id("dst"), Int64().Call(v), Lit(10)))
	case schema.KindFloat32, schema.KindFloat64:
		if mode == modeJSON {
			return set(Qual(implPkg, "AppendJSONFloat").Call(Id("dst"), Float64().Call(v)))
		}
		return set(Qual("strconv", "AppendFloat").Call(Id("dst"), Float64().Call(v), LitRune('g'), Lit(-1), Lit(64)))
	case schema.KindBool:
		if mode == modeJSON {
			return set(Qual(implPkg, "AppendJSONBool").Call(Id("dst"), v))
		}
		return set(Qual("strconv", "AppendBool").Call(Id("dst"), v))
	case schema.KindGUID:
		if mode == modeJSON || g.quoteGUIDs {
			return set(v.Dot("AppendJSON").Call(Id("dst")))
		}
		return set(v.Dot("AppendText").Call(Id("dst")))
	case schema.KindUTF16, schema.KindAnsi:
		if lf.Padded() {
			return set(v.Dot("TrimNUL").Call().Dot("AppendJSON").Call(Id("dst")))
		}
		return set(v.Dot("AppendJSON").Call(Id("dst")))
	case schema.KindBinary, schema.KindFileTime, schema.KindWBEMSID:
		return set(v.Dot("AppendJSON").Call(Id("dst")))
	case schema.KindPort:
		return set(appendUint(v, false, mode))
	case schema.KindIPv4, schema.KindIPv6:
		return set(Qual(implPkg, "AppendJSONAddr").Call(Id("dst"), v))
	}
	panic("appendValue: " + lf.Kind.String())
}

func appendUint(v Code, hex bool, mode appendMode) Code {
	switch {
	case hex && mode == modeJSON:
		return Qual(implPkg, "AppendJSONHex").Call(Id("dst"), Uint64().Call(v))
	case hex:
		return Qual(implPkg, "AppendHex").Call(Id("dst"), Uint64().Call(v))
	case mode == modeJSON:
		return Qual(implPkg, "AppendJSONUint").Call(Id("dst"), Uint64().Call(v))
	}
	return Qual("strconv", "AppendUint").Call(Id("dst"), Uint64().Call(v), Lit(10))
}

func unsignedOf(k schema.Kind) string {
	switch k {
	case schema.KindInt8:
		return "uint8"
	case schema.KindInt16:
		return "uint16"
	case schema.KindInt32:
		return "uint32"
	}
	return "uint64"
}
