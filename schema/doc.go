// Package schema is the model of the CLR event manifest (ClrEtwAll.man): the
// providers, their events, templates, maps, keywords, tasks and opcodes, as
// facts a decoder needs. The same model describes the Windows kernel's MOF
// event classes (kernel.yaml: a provider per class, the opcode as the event
// ID), with the few things they add: the names TraceEvent shows events and
// providers under (Provider.DisplayName, Event.DisplayProvider), the fields
// it shows (Template.Show), arrays that take the rest of the payload
// (Field.Rest), and their types (ports, addresses, FILETIME, mof:SizeT,
// mof:Sid, NUL-padded character arrays: InTypes, OutTypes).
//
// Begin with LoadYAML, which reads the checked-in schema/clr.yaml (or
// LoadManifest for the XML manifest); apply the corrections in
// schema/overrides.yaml with LoadOverrides and Overrides.Apply; then call
// Lower. The Schema is the manifest as written; the lowered Model has every
// name resolved and every field's wire kind, size and offset, and is what
// the generator and package interp walk. (gen.Load does all three steps.)
//
// Loading validates: every node remembers where it came from (Pos), so an
// error about bad input reads "ClrEtwAll.man:1234: event GCStart_V2: …".
//
// Microsoft's message and description prose is not part of the model; names
// of events, fields and map values are, and they never change on import.
package schema
