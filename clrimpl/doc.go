// Package clrimpl is the runtime that generated event packages stand on,
// as protoc-gen-go's output stands on protoimpl: what every generated
// package shares, and what readers of events need without depending on
// any one generated package.
//
// Programs rarely import it: a generated package (clrevents, or one that
// `clrgen generate` writes for a subset of the events) re-exports its
// types under its own name (clrevents.UTF16 is clrimpl.UTF16), so a
// user's code names only the generated package. The format readers
// (nettrace, etl) and the layers above them import it instead of a
// generated package.
//
// # For everyone
//
//   - GUID (ParseGUID, MustParseGUID, GUIDFromFields).
//   - The views a decoded event's strings and arrays are: UTF16, Ansi,
//     Binary and the arrays (Uint32Array, PointerArray, …), with their
//     constructors (UTF16Of, MakeUTF16, …); ReadUTF16Z and ReadAnsiZ read
//     NUL-terminated strings from a payload.
//   - The value types of the Windows kernel's events: FileTime, WBEMSID (a
//     user's SID behind a TOKEN_USER), network addresses as netip.Addr
//     (AppendAddr, AppendJSONAddr), and TrimNUL for fixed character arrays.
//   - The errors: ErrShortPayload and the other sentinels, DecodeError,
//     UnknownEventError.
//   - What describes an event: Descriptor and FieldWriter (for generated
//     types and for descriptions a trace carries alike), the columns
//     (Column, ColumnKind, ColumnAppender), Level, Opcode, ProviderInfo.
//   - What generated packages offer readers: Event (a value of any
//     generated event type), EventType (one type: its Descriptor and New),
//     Table (one package's types, looked up by provider, ID and version;
//     each generated package's Table function returns its own) and
//     Tables (every generated package the program links, as they
//     registered at initialization).
//   - The JSON and text helpers any writer of event fields may use
//     (AppendJSONString, AppendJSONHex, …, AppendFlags, AppendHex,
//     AppendUnknown), so that every writer writes the same JSON.
//   - GenVersion, MinVersion, MaxVersion: the versions of generated code
//     this clrimpl supports.
//
// # For generated code only
//
// The rest is called by code that clrgen generates, and its documentation
// says so ("For generated code only"). It lives in the files named
// genonly_*.go: the payload checks and reads of the decoders
// (FieldEnd, ShortPrefix, ArrayLen, ReadPtr, ReadIPv4, WBEMSIDLen, …,
// NewDecodeError), the wire writers of the encoders (AppendPtr,
// AppendUTF16Z, AppendWBEMSID, AppendFixed, …), the making and
// registering of a package's table (NewTable, Register, EventFields,
// ProviderIndex, …) and the types of the compile-time version check
// (RuntimeTooOld, GeneratedCodeTooOld). They are exported because
// generated code lives in other packages; their contracts (bounds the
// caller has checked, tables made once at initialization) are those of
// generated code, and they may change with GenVersion. Everything
// event-specific stays in the generated code.
//
// # Versions
//
// Every generated package checks at compile time that it fits the
// clrimpl it is built with: code generated for a newer clrimpl fails with
// "constant -1 overflows clrimpl.RuntimeTooOld", code older than this
// clrimpl supports with "constant -1 overflows
// clrimpl.GeneratedCodeTooOld". Regenerating with the clrgen of the
// module one builds with fixes both.
//
// It imports only the standard library, so a generated package needs
// nothing but this module.
//
// # Tests of generated code
//
// Package clrimpltest holds the checks of a generated package's own
// tests: clrgen generate -tests writes a value of every event type and a
// test and a benchmark that run clrimpltest.Samples and
// clrimpltest.BenchmarkDecode over them.
package clrimpl
