package nettrace

import (
	"errors"
	"io"
	"strconv"
)

// ErrFormat is the sentinel for input that is not a well-formed EventPipe
// trace. Errors returned by the Reader for malformed input satisfy
// errors.Is(err, ErrFormat); errors for input that merely ends early satisfy
// errors.Is(err, io.ErrUnexpectedEOF) instead.
var ErrFormat = errors.New("malformed trace")

// ErrUnsupported is returned (wrapped) for a trace whose version this
// package does not read, e.g. a NetTrace major version above 6.
var ErrUnsupported = errors.New("unsupported trace version")

// Error describes where in the stream a trace could not be read. Block names
// the object or block being read ("EventBlock", "Trace", "MetadataBlock", …)
// and BlockOffset is where it starts; Offset is the byte at fault. All
// offsets count bytes of the (decompressed) trace stream.
type Error struct {
	Block       string // object or block kind; empty for the stream header
	BlockOffset int64  // offset of the block's header
	What        string // the item inside the block, e.g. "event header"; may be empty
	Offset      int64  // offset of that item (or of the fault)
	Msg         string // what is wrong
	Err         error  // ErrFormat, ErrUnsupported or io.ErrUnexpectedEOF

	class errClass // how reading goes on after it (damage.go)
	// kind is the record kind of an error skipped one record at a time
	// (recordDamage), where Msg, which names the record's ID, is not.
	kind string
}

// Error formats e as
//
//	nettrace: EventBlock at offset 123456: event header at 123500: payload size 900 exceeds block (12 bytes left)
func (e *Error) Error() string {
	b := make([]byte, 0, 96+len(e.Msg))
	b = append(b, "nettrace: "...)
	if e.Block != "" {
		b = append(b, e.Block...)
		b = append(b, " at offset "...)
		b = strconv.AppendInt(b, e.BlockOffset, 10)
		b = append(b, ": "...)
	}
	if e.What != "" {
		b = append(b, e.What...)
		b = append(b, " at "...)
		b = strconv.AppendInt(b, e.Offset, 10)
		b = append(b, ": "...)
	} else if e.Block == "" {
		b = append(b, "offset "...)
		b = strconv.AppendInt(b, e.Offset, 10)
		b = append(b, ": "...)
	}
	if e.Err == io.ErrUnexpectedEOF {
		b = append(b, "truncated: "...)
	}
	b = append(b, e.Msg...)
	return string(b)
}

// Unwrap returns the sentinel: ErrFormat, ErrUnsupported or
// io.ErrUnexpectedEOF.
func (e *Error) Unwrap() error { return e.Err }
