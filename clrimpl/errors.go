package clrimpl

import (
	"errors"
	"strconv"
)

// Sentinel errors. Decoders return them wrapped in a *DecodeError that names
// the event, the field and the byte offset; test for them with errors.Is.
var (
	// ErrShortPayload means the payload ends before a field does.
	ErrShortPayload = errors.New("payload too short")

	// ErrUnterminatedString means a NUL-terminated string (win:UnicodeString
	// or win:AnsiString) runs to the end of the payload without its
	// terminator. It is also ErrShortPayload: errors.Is(err,
	// ErrShortPayload) holds for it.
	ErrUnterminatedString error = &shortError{"string has no terminator"}

	// ErrPointerSize means the pointer size given to a decoder was neither
	// 4 nor 8.
	ErrPointerSize = errors.New("pointer size must be 4 or 8")

	// ErrUnknownEvent means the (provider, event ID, version) triple is not
	// in the schema the package was generated from.
	ErrUnknownEvent = errors.New("event not in schema")

	// ErrCountTooLarge means an array's count (or a blob's length), read from
	// the payload, asks for more bytes than the payload holds. It is also
	// ErrShortPayload.
	ErrCountTooLarge error = &shortError{"count exceeds payload"}
)

// shortError is a sentinel that is a kind of ErrShortPayload.
type shortError struct{ msg string }

// Error returns the message.
func (e *shortError) Error() string { return e.msg }

// Is makes errors.Is(e, ErrShortPayload) hold.
func (e *shortError) Is(target error) bool { return target == ErrShortPayload }

// DecodeError is the error a decoder returns for a payload it cannot decode.
// It says which event and field failed and where in the payload the field
// starts; Err is one of the sentinel errors above.
type DecodeError struct {
	Package string // the generated package, e.g. "clrevents"
	Event   string // manifest symbol, e.g. "GCStart_V2"
	Field   string // field path, e.g. "Depth" or "Values[3].Name"; may be empty
	Offset  int    // byte offset in the payload where the field starts
	Err     error  // one of the sentinels
}

// Error formats e as
//
//	clrevents: GCStart_V2: field "Depth" at byte 4: payload too short
func (e *DecodeError) Error() string {
	b := make([]byte, 0, 64+len(e.Package)+len(e.Event)+len(e.Field))
	if e.Package != "" {
		b = append(b, e.Package...)
		b = append(b, ": "...)
	}
	if e.Event != "" {
		b = append(b, e.Event...)
		b = append(b, ": "...)
	}
	if e.Field != "" {
		b = append(b, "field "...)
		b = strconv.AppendQuote(b, e.Field)
		b = append(b, ' ')
	}
	b = append(b, "at byte "...)
	b = strconv.AppendInt(b, int64(e.Offset), 10)
	b = append(b, ": "...)
	if e.Err != nil {
		b = append(b, e.Err.Error()...)
	} else {
		b = append(b, "decode error"...)
	}
	return string(b)
}

// Unwrap returns e.Err, so errors.Is(err, ErrShortPayload) works on a
// *DecodeError.
func (e *DecodeError) Unwrap() error { return e.Err }
