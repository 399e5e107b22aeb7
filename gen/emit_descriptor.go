package gen

import (
	. "github.com/dave/jennifer/jen"
)

// What an event type gives readers of any generated package: its
// clrimpl.Descriptor and the FieldWriter behind it.

func infoVarName(ev *eventIR) string   { return "info" + ev.goName }
func descVarName(ev *eventIR) string   { return "desc" + ev.goName }
func fieldsVarName(ev *eventIR) string { return "fields" + ev.goName }

// descriptorMethod emits the event type's Descriptor method:
//
//	func (*GCStartV2) Descriptor() *clrimpl.Descriptor { return &descGCStartV2 }
func descriptorMethod(f *File, ev *eventIR) {
	f.Commentf("Descriptor describes %s, as readers of any generated package see it.", ev.le.Symbol)
	f.Func().Params(Op("*").Id(ev.goName)).Id("Descriptor").Params().Op("*").Qual(implPkg, "Descriptor").Block(
		Return(Op("&").Id(descVarName(ev))),
	)
	f.Line()
}

// descriptorVars emits the event type's EventInfo, its descriptor and its
// field writer, made once and shared, beside the type so that adding an
// event type changes no other type's file:
//
//	var infoGCStartV2 = EventInfo{Provider: ProviderRuntime, ID: 1, Version: 2, …, desc: &descGCStartV2, fields: &fieldsGCStartV2}
//	var descGCStartV2 = clrimpl.Descriptor{Provider: "Microsoft-Windows-DotNETRuntime", ID: 1, Version: 2, …, Fields: &fieldsGCStartV2}
//	var fieldsGCStartV2 = clrimpl.EventFields{New: func() clrimpl.Event { return new(GCStartV2) }}
func descriptorVars(f *File, ev *eventIR) {
	le := ev.le
	task, taskName := 0, ""
	if le.TaskRef != nil {
		task, taskName = int(le.TaskRef.Value), le.TaskRef.Name
	}
	var guid []Code
	for _, b := range ev.prov.lp.GUIDBytes {
		guid = append(guid, Lit(int(b)))
	}
	f.Commentf("%s describes %s (%s.Info).", infoVarName(ev), le.Symbol, ev.goName)
	f.Var().Id(infoVarName(ev)).Op("=").Id("EventInfo").Values(Dict{
		Id("Provider"):    Id(ev.prov.constID),
		Id("ID"):          Lit(int(le.Value)),
		Id("Version"):     Lit(int(le.Version)),
		Id("Name"):        Lit(le.Symbol),
		Id("DisplayName"): Lit(le.DisplayName),
		Id("TypeName"):    Lit(ev.goName),
		Id("Task"):        Lit(task),
		Id("TaskName"):    Lit(taskName),
		Id("Opcode"):      Lit(int(le.OpcodeValue)),
		Id("OpcodeName"):  Lit(le.Opcode),
		Id("Level"):       Lit(int(le.LevelValue)),
		Id("Keywords"):    hexCode(le.KeywordsMask),
		Id("Columns"):     Id(columnsVarName(ev)),
		Id("desc"):        Op("&").Id(descVarName(ev)),
		Id("fields"):      Op("&").Id(fieldsVarName(ev)),
	})
	f.Line()
	f.Commentf("%s describes %s (EventInfo.Descriptor).", descVarName(ev), le.Symbol)
	f.Var().Id(descVarName(ev)).Op("=").Qual(implPkg, "Descriptor").Values(Dict{
		Id("Provider"):     Lit(le.ShownProvider),
		Id("ProviderGUID"): Id("GUID").Values(guid...),
		Id("ID"):           Lit(int(le.Value)),
		Id("Version"):      Lit(int(le.Version)),
		Id("Name"):         Lit(le.Symbol),
		Id("DisplayName"):  Lit(le.DisplayName),
		Id("Task"):         Lit(task),
		Id("Opcode"):       Lit(int(le.OpcodeValue)),
		Id("Level"):        Lit(int(le.LevelValue)),
		Id("Keywords"):     hexCode(le.KeywordsMask),
		Id("Columns"):      Id(columnsVarName(ev)),
		Id("Fields"):       Op("&").Id(fieldsVarName(ev)),
	})
	f.Line()
	f.Commentf("%s writes the fields of %s payloads (its Descriptor's Fields).", fieldsVarName(ev), le.Symbol)
	f.Var().Id(fieldsVarName(ev)).Op("=").Qual(implPkg, "EventFields").Values(Dict{
		Id("New"): Func().Params().Qual(implPkg, "Event").Block(Return(New(Id(ev.goName)))),
	})
	f.Line()
}
