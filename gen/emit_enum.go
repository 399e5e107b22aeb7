package gen

import (
	"fmt"
	"sort"
	"strings"

	. "github.com/dave/jennifer/jen"

	"github.com/clrgo/clrevents/schema"
)

// providerEnums emits a provider's keywords, tasks, opcodes and maps.
func (g *pkgIR) providerEnums(f *File, pr *provIR) {
	g.keywords(f, pr)
	g.tasks(f, pr)
	for _, m := range pr.maps {
		g.enumType(f, pr, m)
	}
}

// keywords emits a provider's keyword flags:
//
//	type RuntimeKeywords uint64
//	const RuntimeGCKeyword RuntimeKeywords = 0x1
//	func (k RuntimeKeywords) AppendText(b []byte) ([]byte, error)
func (g *pkgIR) keywords(f *File, pr *provIR) {
	f.Commentf("%s are the keywords of %s, a 64-bit flag set.", pr.kwType, pr.lp.Name)
	f.Type().Id(pr.kwType).Uint64()
	f.Line()
	if len(pr.keywords) > 0 {
		var defs []Code
		for _, k := range pr.keywords {
			defs = append(defs, Comment(k.name), Id(k.goName).Id(pr.kwType).Op("=").Add(hexCode(k.value)))
		}
		f.Const().Defs(defs...)
		f.Line()
	}
	g.keywordAliases(f, pr)
	// Keywords are never payload fields, so they get no appendJSON.
	g.flagMethods(f, pr.kwType, lowerFirst(pr.kwType)+"Names", pr.keywords, "", false)
}

// keywordAliases emits the keywords' former names as deprecated constants
// of the same value:
//
//	const (
//		// GCHeapCollectKeyword is the former name of ManagedHeapCollectKeyword …
//		//
//		// Deprecated: use RuntimeManagedHeapCollectKeyword.
//		RuntimeGCHeapCollectKeyword = RuntimeManagedHeapCollectKeyword
//	)
func (g *pkgIR) keywordAliases(f *File, pr *provIR) {
	if len(pr.kwAliases) == 0 {
		return
	}
	var defs []Code
	for _, a := range pr.kwAliases {
		defs = append(defs,
			Commentf("%s is the former name of %s (0x%x), which a newer manifest renamed.", a.name, a.of.name, a.value),
			Comment(""),
			Commentf("Deprecated: use %s, the same keyword.", a.of.goName),
			Id(a.goName).Id(pr.kwType).Op("=").Id(a.of.goName))
	}
	f.Const().Defs(defs...)
	f.Line()
}

// tasks emits task and opcode constants:
//
//	const RuntimeTaskGarbageCollection uint16 = 1
//	const RuntimeOpcodeGarbageCollectionGCRestartEEEnd Opcode = 132
func (g *pkgIR) tasks(f *File, pr *provIR) {
	if len(pr.tasks) == 0 {
		return
	}
	var defs []Code
	for _, t := range pr.tasks {
		defs = append(defs, Commentf("%s task of %s.", t.t.Name, pr.lp.Name), Id(t.goConst).Uint16().Op("=").Lit(int(t.t.Value)))
	}
	f.Const().Defs(defs...)
	f.Line()
	defs = nil
	for _, t := range pr.tasks {
		for _, o := range t.opcodes {
			defs = append(defs, Commentf("%s opcode of task %s.", o.name, t.t.Name), Id(o.goName).Id("Opcode").Op("=").Lit(int(o.value)))
		}
	}
	if len(defs) > 0 {
		f.Const().Defs(defs...)
		f.Line()
	}
}

// enumType emits a valueMap or a bitMap as a typed constant set:
//
//	type GCReason uint32
//	const GCReasonInduced GCReason = 0x1
//	func (v GCReason) String() string
//	func (v GCReason) AppendText(b []byte) ([]byte, error)
func (g *pkgIR) enumType(f *File, pr *provIR, m *mapIR) {
	kind := "values"
	if m.bitmap {
		kind = "flags"
	}
	f.Commentf("%s holds the %s of %s in %s.", m.goType, kind, m.lm.Name, pr.lp.Name)
	f.Type().Id(m.goType).Id(m.under)
	f.Line()
	if len(m.entries) > 0 {
		var defs []Code
		for _, e := range m.entries {
			defs = append(defs, Id(e.goName).Id(m.goType).Op("=").Add(hexCode(e.value)))
		}
		f.Const().Defs(defs...)
		f.Line()
	}
	if m.bitmap {
		zero := ""
		var nz []named
		for _, e := range m.byValue {
			if e.value == 0 {
				zero = e.name
			} else {
				nz = append(nz, e)
			}
		}
		g.flagMethods(f, m.goType, lowerFirst(m.goType)+"Names", nz, zero, true)
		return
	}
	// Values: a switch over every value; the first name of a value wins.
	var cases []Code
	for _, e := range m.byValue {
		cases = append(cases, Case(hexCode(e.value)).Block(Return(Append(Id("b"), Lit(e.name).Op("...")), Nil())))
	}
	cases = append(cases, Default().Block(Return(Qual(implPkg, "AppendUnknown").Call(Id("b"), Lit(m.goType), Uint64().Call(Id("v"))), Nil())))
	f.Comment("AppendText appends the value's name, or TypeName(0x…) for a value the map lacks.")
	f.Func().Params(Id("v").Id(m.goType)).Id("AppendText").Params(Id("b").Index().Byte()).Params(Index().Byte(), Error()).Block(
		Switch(Id("v")).Block(cases...),
	)
	f.Line()
	g.enumCommon(f, m.goType, true)
}

// flagMethods emits String/AppendText for a flag type through a table
// (and appendJSON when json is set, for types that payload fields use):
//
//	var gcRootFlagsNames = []flagName{{0x1, "Pinning"}, …}
func (g *pkgIR) flagMethods(f *File, typ, table string, entries []named, zero string, json bool) {
	var rows []Code
	sorted := append([]named(nil), entries...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].value < sorted[j].value })
	for _, e := range sorted {
		rows = append(rows, Values(Dict{Id("Value"): hexCode(e.value), Id("Name"): Lit(e.name)}))
	}
	f.Var().Id(table).Op("=").Index().Qual(implPkg, "FlagName").Values(rows...)
	f.Line()
	f.Comment("AppendText appends the names of the set flags joined by |, unknown bits in hex.")
	f.Func().Params(Id("v").Id(typ)).Id("AppendText").Params(Id("b").Index().Byte()).Params(Index().Byte(), Error()).Block(
		Return(Qual(implPkg, "AppendFlags").Call(Id("b"), Uint64().Call(Id("v")), Id(table), Lit(zero)), Nil()),
	)
	f.Line()
	g.enumCommon(f, typ, json)
}

// enumCommon emits String and, when json is set, appendJSON in terms of
// AppendText:
//
//	func (v GCReason) String() string
//	func (v GCReason) appendJSON(b []byte) []byte
func (g *pkgIR) enumCommon(f *File, typ string, json bool) {
	f.Func().Params(Id("v").Id(typ)).Id("String").Params().String().Block(
		List(Id("b"), Id("_")).Op(":=").Id("v").Dot("AppendText").Call(Nil()),
		Return(String().Call(Id("b"))),
	)
	f.Line()
	if !json {
		return
	}
	f.Func().Params(Id("v").Id(typ)).Id("appendJSON").Params(Id("b").Index().Byte()).Index().Byte().Block(
		Id("b").Op("=").Append(Id("b"), LitRune('"')),
		List(Id("b"), Id("_")).Op("=").Id("v").Dot("AppendText").Call(Id("b")),
		Return(Append(Id("b"), LitRune('"'))),
	)
	f.Line()
}

// hexCode renders an unsigned constant in hex: 0x800000.
func hexCode(v uint64) Code { return Op(fmt.Sprintf("0x%x", v)) }

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return string(s[0]|0x20) + s[1:]
}

// table emits the provider and event tables and the standard levels and
// opcodes.
func (g *pkgIR) table(f *File) {
	var defs []Code
	for _, pr := range g.providers {
		defs = append(defs, Commentf("%s is %s.", pr.constID, pr.lp.Name), Id(pr.constID).Id("Provider").Op("=").Lit(pr.index))
	}
	f.Const().Defs(defs...)
	f.Line()
	var rows []Code
	for _, pr := range g.providers {
		var gb []Code
		for _, b := range pr.lp.GUIDBytes {
			gb = append(gb, Lit(int(b)))
		}
		rows = append(rows, Values(Dict{
			Id("Name"): Lit(pr.lp.Name), Id("Short"): Lit(pr.short), Id("GUID"): Id("GUID").Values(gb...),
		}))
	}
	f.Var().Id("providerTable").Op("=").Index(Op("...")).Id("ProviderInfo").Values(rows...)
	f.Line()

	for _, std := range []struct {
		typ   string
		names []struct {
			Name  string
			Value uint8
		}
	}{{"Level", schema.StandardLevels}, {"Opcode", schema.StandardOpcodes}} {
		defs = nil
		for _, c := range std.names {
			n, _ := standardName(c.Name)
			defs = append(defs, Id(std.typ+n).Id(std.typ).Op("=").Lit(int(c.Value)))
		}
		f.Commentf("The standard ETW %ss.", strings.ToLower(std.typ))
		f.Const().Defs(defs...)
		f.Line()
	}

	var refs []Code
	for _, ev := range g.events {
		refs = append(refs, Op("&").Id(infoVarName(ev)))
	}
	f.Comment("eventTable lists the package's event types by provider, ID and version;")
	f.Comment("each is declared beside its Go type.")
	f.Var().Id("eventTable").Op("=").Index(Op("...")).Op("*").Id("EventInfo").Custom(Options{Open: "{", Close: "}", Separator: ",", Multi: true}, refs...)
	f.Line()
}
