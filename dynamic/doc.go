// Package dynamic interprets the descriptions of events that a trace
// carries itself, for the events no generated package describes: one model
// of a described event's fields (Description, Field) and one interpreter
// over it that writes a payload as JSON, as text and as a row of typed
// columns, allocating nothing in steady state. A Description gives a
// clrimpl.Descriptor, the shape every consumer of events uses, whatever
// describes the event.
//
// Four kinds of description feed the model:
//
//   - EventSource metadata in EventPipe traces: package nettrace parses the
//     metadata records (NetTrace V1–V6) and builds a Description of their
//     field lists (nettrace.Metadata.Description).
//   - TDH descriptions in ETW logs: when a trace is merged on the recording
//     machine, KernelTraceControl adds an EventInfo event (the
//     TRACE_EVENT_INFO the Windows TDH API gives for an event) before the
//     first event of each manifest-based provider it can describe, and an
//     EventMapInfo event (EVENT_MAP_INFO) for each value or bit map its
//     fields use (ParseEventInfo, ParseEventMapInfo).
//   - The manifests .NET EventSources log into ETW logs as their
//     ManifestData event (ID 0xFFFE), in one or more chunks
//     (ParseManifest).
//   - TraceLogging (self-describing) events, whose metadata travels in
//     extended data items of each event (ParseTraceLogging).
//
// Descriptions collects the last three as the events of an ETW log go by
// (the caller, package trace, picks the events that carry them out of the
// format reader's records) and finds the Description of each event.
//
// Field values are written as the trace's own tools show them: integers as
// numbers, hexadecimal fields and pointers as "0x…" strings (quoted in
// JSON), map-bound values by name ("A|B" for flags), strings, characters,
// GUIDs, SIDs, network addresses and times (RFC 3339, UTC) as strings,
// binary data as "0x…", arrays as arrays (of characters as one string) and
// structs as objects. A payload that does not fit its description is a
// *FieldError naming the event, the field's path ("Addresses[2].Port") and
// its byte offset; nothing panics or reads out of bounds, and a hostile
// count never makes the interpreter allocate what the payload cannot back.
package dynamic
