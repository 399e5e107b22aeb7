package gen

import (
	. "github.com/dave/jennifer/jen"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/schema"
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

// kindAliases are the support package's types that a package declares
// under its own name only when one of its fields has the kind, so that a
// package without them (clrevents) declares no name it does not use; the
// names are reserved in every package alike.
var kindAliases = []struct {
	kind  schema.Kind
	types []string
	vars  []string
}{
	{schema.KindFileTime, []string{"FileTime"}, []string{"FileTimeOf"}},
	{schema.KindWBEMSID, []string{"WBEMSID"}, []string{"WBEMSIDOf", "MakeWBEMSID"}},
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
	versionCheck(f)
	f.Comment("pkgName is the package's name, as its errors give it.")
	f.Const().Id("pkgName").Op("=").Lit(pkg)
	f.Line()

	f.Comment("The support package's types, under this package's name.")
	types, vars := aliasTypes, aliasVars
	for _, k := range kindAliases {
		if g.kinds[k.kind] {
			types = append(append([]string(nil), types...), k.types...)
			vars = append(append([]string(nil), vars...), k.vars...)
		}
	}
	var defs []Code
	for _, t := range types {
		defs = append(defs, Id(t).Op("=").Qual(implPkg, t))
	}
	f.Type().Defs(defs...)
	f.Line()
	f.Comment("The support package's sentinel errors and constructors.")
	defs = nil
	for _, v := range vars {
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

// genVersion is the version of clrimpl the generated code is written for
// (clrimpl.GenVersion; tests change it to check the check).
var genVersion = clrimpl.GenVersion

// versionCheck emits the compile-time check that the generated code and
// the clrimpl it builds with fit (see clrimpl.GenVersion):
//
//	const (
//		_ = clrimpl.RuntimeTooOld(clrimpl.MaxVersion - 1)       // …
//		_ = clrimpl.GeneratedCodeTooOld(1 - clrimpl.MinVersion) // …
//	)
func versionCheck(f *File) {
	f.Commentf("This code was generated for version %d of clrimpl: it does not compile", genVersion)
	f.Comment("with a clrimpl too old or too new for it (see clrimpl.GenVersion).")
	f.Const().Defs(
		Id("_").Op("=").Qual(implPkg, "RuntimeTooOld").Call(Qual(implPkg, "MaxVersion").Op("-").Lit(genVersion)).
			Comment("update github.com/clrgo/clrevents, or regenerate with the clrgen of the one you build with"),
		Id("_").Op("=").Qual(implPkg, "GeneratedCodeTooOld").Call(Lit(genVersion).Op("-").Qual(implPkg, "MinVersion")).
			Comment("regenerate with the clrgen of the github.com/clrgo/clrevents you build with"),
	)
	f.Line()
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
//
//	type Event interface { clrimpl.Event; Info() *EventInfo }
//	type EventInfo struct { Provider Provider; ID uint16; …; desc *clrimpl.Descriptor; fields *clrimpl.EventFields }
//	func (i *EventInfo) Descriptor() *clrimpl.Descriptor
//	func (i *EventInfo) New() clrimpl.Event
func (g *pkgIR) shellEvent(f *File) {
	f.Comment("Event is implemented by every generated event type (one per provider,")
	f.Comment("event ID and version): the methods every generated package's events")
	f.Comment("have (clrimpl.Event: Decode, Encode, AppendJSON, AppendText,")
	f.Comment("AppendColumns, Descriptor) and Info. Views inside a decoded event alias")
	f.Comment("the payload it was decoded from.")
	f.Type().Id("Event").Interface(
		Qual(implPkg, "Event"),
		Comment("Info describes the event: provider, ID, version, task, opcode, level"),
		Comment("and keywords."),
		Id("Info").Params().Op("*").Id("EventInfo"),
	)
	f.Line()
	f.Comment("EventInfo describes one (provider, event ID, version). It is the event")
	f.Comment("type as the package's Table holds it (a clrimpl.EventType).")
	f.Type().Id("EventInfo").Struct(
		Id("Provider").Id("Provider"),
		Id("ID").Uint16(),
		Id("Version").Uint8(),
		Id("Name").String().Comment(`the manifest symbol, e.g. "GCStart_V2"`),
		Comment(`DisplayName is the event's name as TraceEvent and PerfView show it:`),
		Comment(`from the manifest's task and opcode messages ("GC/Start"), or the`),
		Comment(`schema's displayName where TraceEvent names it otherwise ("GC/BulkNode").`),
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
		Line(),
		Id("desc").Op("*").Qual(implPkg, "Descriptor"),
		Id("fields").Op("*").Qual(implPkg, "EventFields"),
	)
	f.Line()
	f.Comment("New returns a new zero value of the event's Go type; it is also an Event")
	f.Comment("of this package.")
	f.Func().Params(Id("i").Op("*").Id("EventInfo")).Id("New").Params().Qual(implPkg, "Event").Block(Return(Id("i").Dot("fields").Dot("New").Call()))
	f.Line()
	f.Comment("Descriptor describes the event type as readers of any generated package")
	f.Comment("see it. It is made once and shared; its Fields writes payloads of the")
	f.Comment("type by decoding each into a pooled value, and is safe for concurrent use.")
	f.Func().Params(Id("i").Op("*").Id("EventInfo")).Id("Descriptor").Params().Op("*").Qual(implPkg, "Descriptor").Block(Return(Id("i").Dot("desc")))
	f.Line()
	f.Comment(`String returns "provider/symbol".`)
	f.Func().Params(Id("i").Op("*").Id("EventInfo")).Id("String").Params().String().Block(
		Return(Id("i").Dot("Provider").Dot("String").Call().Op("+").Lit("/").Op("+").Id("i").Dot("Name")),
	)
	f.Line()
	f.Comment("Events lists every event of the package, by provider, ID and version.")
	f.Comment("The slice is shared: do not modify it.")
	f.Func().Id("Events").Params().Index().Op("*").Id("EventInfo").Block(Return(Id("eventTable").Index(Op(":"))))
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
	g.shellTable(f)
	f.Comment("Lookup describes (p, id, version), if the package has it.")
	f.Func().Id("Lookup").Params(Id("p").Id("Provider"), Id("id").Uint16(), Id("version").Uint8()).Params(Op("*").Id("EventInfo"), Bool()).Block(
		Id("i").Op(":=").Id("table").Dot("Find").Call(Int().Call(Id("p")), Id("id"), Id("version")),
		If(Id("i").Op("<").Lit(0)).Block(Return(Nil(), False())),
		Return(Id("eventTable").Index(Id("i")), True()),
	)
	f.Line()
}

// shellTable emits the package's clrimpl.Table, its registration and the
// function that returns it:
//
//	var table = clrimpl.NewTable(pkgName, providerTable[:], …)
//	func init() { clrimpl.Register(table) }
//	func Table() *clrimpl.Table { return table }
func (g *pkgIR) shellTable(f *File) {
	f.Comment("table indexes eventTable by provider, ID and version; its indexes are")
	f.Comment("eventTable's.")
	f.Var().Id("table").Op("=").Func().Params().Op("*").Qual(implPkg, "Table").Block(
		Id("types").Op(":=").Make(Index().Qual(implPkg, "EventType"), Len(Id("eventTable"))),
		For(Id("i").Op(":=").Range().Id("eventTable")).Block(
			Id("types").Index(Id("i")).Op("=").Id("eventTable").Index(Id("i")),
		),
		Return(Qual(implPkg, "NewTable").Call(Id("pkgName"), Id("providerTable").Index(Op(":")), Id("types"))),
	).Call()
	f.Line()
	f.Func().Id("init").Params().Block(Qual(implPkg, "Register").Call(Id("table")))
	f.Line()
	f.Comment("Table returns the package's event table, the types of Events: what a")
	f.Comment("reader decodes this package's events through. The package registers it")
	f.Comment("when the program starts, so clrimpl.Tables lists it.")
	f.Func().Id("Table").Params().Op("*").Qual(implPkg, "Table").Block(Return(Id("table")))
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
		Id("i").Op(":=").Id("table").Dot("Find").Call(Int().Call(Id("p")), Id("id"), Id("version")),
		If(Id("i").Op("<").Lit(0).Op("&&").Id("d").Dot("OlderVersions")).Block(
			Id("i").Op("=").Id("table").Dot("FindOlder").Call(Int().Call(Id("p")), Id("id"), Id("version")),
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
			Id("ev").Op("=").Id("eventTable").Index(Id("i")).Dot("fields").Dot("New").Call().Assert(Id("Event")),
			Id("d").Dot("slots").Index(Id("i")).Op("=").Id("ev"),
		),
		List(Id("n"), Id("err")).Op(":=").Id("ev").Dot("Decode").Call(Id("payload"), Id("ptrSize")),
		If(Id("err").Op("!=").Nil()).Block(Return(Nil(), Lit(0), Id("err"))),
		Return(Id("ev"), Id("n"), Nil()),
	)
	f.Line()
}
