package gen

import (
	. "github.com/dave/jennifer/jen"
)

// aliasTypes are the support package's types that generated code and its
// users name as the package's own: the views, GUID, the errors.
var aliasTypes = []string{
	"GUID", "UTF16", "Ansi", "Binary",
	"Uint8Array", "Uint16Array", "Uint32Array", "Uint64Array", "Int32Array", "Int64Array",
	"Float64Array", "BoolArray", "GUIDArray", "PointerArray",
	"DecodeError", "UnknownEventError", "ProviderInfo", "Level", "Opcode",
	"Column", "ColumnKind", "ColumnAppender",
}

// aliasVars are the support package's sentinel errors and constructors,
// re-exported so that users of one generated package need import no other.
var aliasVars = []string{
	"ErrShortPayload", "ErrUnterminatedString", "ErrPointerSize", "ErrUnknownEvent", "ErrCountTooLarge",
	"ParseGUID", "MustParseGUID", "GUIDFromFields",
	"UTF16Of", "MakeUTF16", "AnsiOf", "MakeAnsi", "BinaryOf", "MakeBinary",
}

// shell emits what every generated package declares over the support
// package: the package name its errors give, aliases of the support types,
// the Event interface, EventInfo, Provider, the lookups and the Decoder.
//
//	const pkgName = "gcev"
//	type UTF16 = clrimpl.UTF16
//	type Event interface { Info() *EventInfo; Decode(…) (int, error); … }
//	func (d *Decoder) Decode(p Provider, id uint16, version uint8, ptrSize int, payload []byte) (Event, int, error)
func (g *pkgIR) shell(f *File, pkg string) {
	f.Comment("pkgName is the package's name, as its errors give it.")
	f.Const().Id("pkgName").Op("=").Lit(pkg)
	f.Line()

	f.Comment("The support package's types, under this package's name.")
	var defs []Code
	for _, t := range aliasTypes {
		defs = append(defs, Id(t).Op("=").Qual(implPkg, t))
	}
	f.Type().Defs(defs...)
	f.Line()
	f.Comment("The support package's sentinel errors and constructors.")
	defs = nil
	for _, v := range aliasVars {
		defs = append(defs, Id(v).Op("=").Qual(implPkg, v))
	}
	f.Var().Defs(defs...)
	f.Line()

	g.shellErrors(f)
	g.shellEvent(f)
	f.Comment("FamilyInfo describes a family of event types: the versions of one event,")
	f.Comment("and the runtime and rundown events that share a template (see Families).")
	f.Type().Id("FamilyInfo").Struct(
		Comment(`Name is the family's name: FamilyInfo{Name: "GCStart"} has the`),
		Comment("types GCStartFields and GCStartEvent."),
		Id("Name").String(),
		Comment("Members are the family's event types, by provider, ID and version."),
		Id("Members").Index().Op("*").Id("EventInfo"),
	)
	f.Line()
	f.Comment("Families lists every family, by name.")
	f.Func().Id("Families").Params().Index().Id("FamilyInfo").Block(Return(Id("familyTable").Index(Op(":"))))
	f.Line()
	g.shellProvider(f)
	g.shellDecoder(f)
}

// shellErrors emits the error constructors the decoders call, which name
// the package:
//
//	func decodeError(event, field string, off int, err error) error
//	func shortPrefix(event string, have, ptrSize int, ends []clrimpl.FieldEnd) error
func (g *pkgIR) shellErrors(f *File) {
	f.Comment("decodeError builds the *DecodeError of a decoder of this package.")
	f.Func().Id("decodeError").Params(Id("event").Op(",").Id("field").String(), Id("off").Int(), Id("err").Error()).Error().Block(
		Return(Qual(implPkg, "NewDecodeError").Call(Id("pkgName"), Id("event"), Id("field"), Id("off"), Id("err"))),
	)
	f.Line()
	f.Comment("shortPrefix reports a payload shorter than an event's fixed prefix, naming the field it ends in.")
	f.Func().Id("shortPrefix").Params(Id("event").String(), Id("have").Op(",").Id("ptrSize").Int(), Id("ends").Index().Qual(implPkg, "FieldEnd")).Error().Block(
		Return(Qual(implPkg, "ShortPrefix").Call(Id("pkgName"), Id("event"), Id("have"), Id("ptrSize"), Id("ends"))),
	)
	f.Line()
}

// shellEvent emits the Event interface and EventInfo.
func (g *pkgIR) shellEvent(f *File) {
	f.Comment("Event is implemented by every generated event type (one per provider,")
	f.Comment("event ID and version). Views inside a decoded event alias the payload it")
	f.Comment("was decoded from.")
	f.Type().Id("Event").Interface(
		Comment("Info describes the event: provider, ID, version, task, opcode, level"),
		Comment("and keywords."),
		Id("Info").Params().Op("*").Id("EventInfo"),
		Comment("Decode reads the payload for a pointer size of 4 or 8 and returns the"),
		Comment("bytes it used. Bytes past the template (a newer runtime's fields) are"),
		Comment("not an error; a short payload is, naming the event and the field."),
		Id("Decode").Params(Id("payload").Index().Byte(), Id("ptrSize").Int()).Params(Int(), Error()),
		Comment("Encode appends the event's wire form for the pointer size. Count"),
		Comment("and length fields are written as they are set."),
		Id("Encode").Params(Id("dst").Index().Byte(), Id("ptrSize").Int()).Index().Byte(),
		Comment("AppendJSON appends the event's fields as one JSON object, map-bound"),
		Comment("values by name."),
		Id("AppendJSON").Params(Id("dst").Index().Byte()).Index().Byte(),
		Comment("AppendText appends the fields as space-separated Name=value pairs."),
		Id("AppendText").Params(Id("dst").Index().Byte()).Index().Byte(),
		Comment("AppendColumns appends the fields to a as one row of the columns"),
		Comment("EventInfo.Columns lists, one call per column."),
		Id("AppendColumns").Params(Id("a").Id("ColumnAppender")),
	)
	f.Line()
	f.Comment("EventInfo describes one (provider, event ID, version).")
	f.Type().Id("EventInfo").Struct(
		Id("Provider").Id("Provider"),
		Id("ID").Uint16(),
		Id("Version").Uint8(),
		Id("Name").String().Comment(`the manifest symbol, e.g. "GCStart_V2"`),
		Comment(`DisplayName is the event's name as TraceEvent and PerfView show it,`),
		Comment(`from the manifest's task and opcode messages: "GC/Start".`),
		Id("DisplayName").String(),
		Id("TypeName").String().Comment(`the Go type, e.g. "GCStartV2"`),
		Id("Task").Uint16(),
		Id("TaskName").String(),
		Id("Opcode").Id("Opcode"),
		Id("OpcodeName").String(),
		Id("Level").Id("Level"),
		Id("Keywords").Uint64(),
		Comment("Columns are the event's fields as flat typed columns, in the order"),
		Comment("AppendColumns appends them (see ColumnAppender)."),
		Id("Columns").Index().Id("Column"),
		Id("new").Func().Params().Id("Event"),
	)
	f.Line()
	f.Comment("New returns a new zero value of the event's Go type.")
	f.Func().Params(Id("i").Op("*").Id("EventInfo")).Id("New").Params().Id("Event").Block(Return(Id("i").Dot("new").Call()))
	f.Line()
	f.Comment(`String returns "provider/symbol".`)
	f.Func().Params(Id("i").Op("*").Id("EventInfo")).Id("String").Params().String().Block(
		Return(Id("i").Dot("Provider").Dot("String").Call().Op("+").Lit("/").Op("+").Id("i").Dot("Name")),
	)
	f.Line()
	f.Comment("Events lists every event of the package, by provider, ID and version.")
	f.Func().Id("Events").Params().Index().Id("EventInfo").Block(Return(Id("eventTable").Index(Op(":"))))
	f.Line()
}

// shellProvider emits Provider, its methods and the lookups.
func (g *pkgIR) shellProvider(f *File) {
	f.Comment("Provider identifies one of the package's providers.")
	f.Type().Id("Provider").Uint8()
	f.Line()
	p := func() *Statement { return Params(Id("p").Id("Provider")) }
	f.Comment("Info describes p; it panics if p is not a provider of this package.")
	f.Func().Add(p()).Id("Info").Params().Op("*").Id("ProviderInfo").Block(Return(Op("&").Id("providerTable").Index(Id("p"))))
	f.Line()
	f.Comment("Valid reports whether p is a provider of this package.")
	f.Func().Add(p()).Id("Valid").Params().Bool().Block(Return(Int().Call(Id("p")).Op("<").Len(Id("providerTable"))))
	f.Line()
	f.Comment("String returns the provider's name.")
	f.Func().Add(p()).Id("String").Params().String().Block(
		Return(Qual(implPkg, "ProviderString").Call(Id("providerTable").Index(Op(":")), Int().Call(Id("p")))),
	)
	f.Line()
	f.Comment("GUID returns the provider's GUID.")
	f.Func().Add(p()).Id("GUID").Params().Id("GUID").Block(Return(Id("p").Dot("Info").Call().Dot("GUID")))
	f.Line()
	f.Comment("Providers lists the package's providers.")
	f.Func().Id("Providers").Params().Index().Id("ProviderInfo").Block(Return(Id("providerTable").Index(Op(":"))))
	f.Line()
	for _, by := range []struct{ name, fn, param, typ, doc string }{
		{"ProviderByName", "ProviderIndex", "name", "string", `ProviderByName finds a provider by its name, e.g. "Microsoft-Windows-DotNETRuntime".`},
		{"ProviderByGUID", "ProviderIndexByGUID", "g", "GUID", "ProviderByGUID finds a provider by its GUID."},
	} {
		f.Comment(by.doc)
		f.Func().Id(by.name).Params(Id(by.param).Id(by.typ)).Params(Id("Provider"), Bool()).Block(
			List(Id("i"), Id("ok")).Op(":=").Qual(implPkg, by.fn).Call(Id("providerTable").Index(Op(":")), Id(by.param)),
			Return(Id("Provider").Call(Id("i")), Id("ok")),
		)
		f.Line()
	}
	f.Comment("eventIndex finds a row of eventTable by provider, ID and version.")
	f.Var().Id("eventIndex").Op("=").Qual(implPkg, "NewIndex").Call(
		Len(Id("providerTable")), Len(Id("eventTable")),
		Func().Params(Id("i").Int()).Params(Int(), Uint16(), Uint8()).Block(
			Id("e").Op(":=").Op("&").Id("eventTable").Index(Id("i")),
			Return(Int().Call(Id("e").Dot("Provider")), Id("e").Dot("ID"), Id("e").Dot("Version")),
		),
	)
	f.Line()
	f.Comment("Lookup describes (p, id, version), if the package has it.")
	f.Func().Id("Lookup").Params(Id("p").Id("Provider"), Id("id").Uint16(), Id("version").Uint8()).Params(Op("*").Id("EventInfo"), Bool()).Block(
		Id("i").Op(":=").Id("eventIndex").Dot("Lookup").Call(Int().Call(Id("p")), Id("id"), Id("version")),
		If(Id("i").Op("<").Lit(0)).Block(Return(Nil(), False())),
		Return(Op("&").Id("eventTable").Index(Id("i")), True()),
	)
	f.Line()
}

// shellDecoder emits the Decoder, which reuses one value per event type.
func (g *pkgIR) shellDecoder(f *File) {
	f.Comment("Decoder decodes payloads into typed events, reusing one value per event")
	f.Comment("type: after the first event of each type, decoding allocates nothing. The")
	f.Comment("event it returns is overwritten by the next Decode of the same type. A")
	f.Comment("Decoder is not safe for concurrent use.")
	f.Type().Id("Decoder").Struct(
		Comment("OlderVersions lets an event version the package does not have (from"),
		Comment("a runtime newer than its schema) decode with the newest older"),
		Comment("version of the same event: the fields that version knows decode,"),
		Comment("and the rest come back as extra bytes (len(payload)-n). The event"),
		Comment("returned then reports the older version in Info."),
		Id("OlderVersions").Bool(),
		Line(),
		Id("slots").Index().Id("Event"),
	)
	f.Line()
	f.Comment("NewDecoder returns a Decoder.")
	f.Func().Id("NewDecoder").Params().Op("*").Id("Decoder").Block(
		Return(Op("&").Id("Decoder").Values(Dict{Id("slots"): Make(Index().Id("Event"), Len(Id("eventTable")))})),
	)
	f.Line()
	f.Comment("Decode picks the event type for (p, id, version), decodes payload with")
	f.Comment("the given pointer size (4 or 8) into the Decoder's value for that type,")
	f.Comment("and returns it with the number of payload bytes used; the rest")
	f.Comment("(len(payload)-n) is what a newer runtime appended. An event the package")
	f.Comment("does not have gives an *UnknownEventError (errors.Is ErrUnknownEvent).")
	f.Func().Params(Id("d").Op("*").Id("Decoder")).Id("Decode").Params(
		Id("p").Id("Provider"), Id("id").Uint16(), Id("version").Uint8(), Id("ptrSize").Int(), Id("payload").Index().Byte(),
	).Params(Id("Event"), Int(), Error()).Block(
		Id("i").Op(":=").Id("eventIndex").Dot("Lookup").Call(Int().Call(Id("p")), Id("id"), Id("version")),
		If(Id("i").Op("<").Lit(0).Op("&&").Id("d").Dot("OlderVersions")).Block(
			Id("i").Op("=").Id("eventIndex").Dot("LookupOlder").Call(Int().Call(Id("p")), Id("id"), Id("version")),
		),
		If(Id("i").Op("<").Lit(0)).Block(
			Return(Nil(), Lit(0), Op("&").Id("UnknownEventError").Values(Dict{
				Id("Package"): Id("pkgName"), Id("Provider"): Id("p").Dot("String").Call(), Id("ID"): Id("id"), Id("Version"): Id("version"),
			})),
		),
		If(Id("d").Dot("slots").Op("==").Nil()).Block(
			Id("d").Dot("slots").Op("=").Make(Index().Id("Event"), Len(Id("eventTable"))),
		),
		Id("ev").Op(":=").Id("d").Dot("slots").Index(Id("i")),
		If(Id("ev").Op("==").Nil()).Block(
			Id("ev").Op("=").Id("eventTable").Index(Id("i")).Dot("new").Call(),
			Id("d").Dot("slots").Index(Id("i")).Op("=").Id("ev"),
		),
		List(Id("n"), Id("err")).Op(":=").Id("ev").Dot("Decode").Call(Id("payload"), Id("ptrSize")),
		If(Id("err").Op("!=").Nil()).Block(Return(Nil(), Lit(0), Id("err"))),
		Return(Id("ev"), Id("n"), Nil()),
	)
	f.Line()
}
