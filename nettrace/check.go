package nettrace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/clrgo/clrevents/internal/numfmt"
)

// A Checker checks the framing of a NetTrace stream as it is written to
// it, for a program that copies a stream (from a live session, say) and
// wants to know whether what it copied is a whole trace. It follows
// NetTraceFormat.md and NetTraceFormat_v5.md for the versions a runtime
// sends over its diagnostics channel: V4 and V5 (the "Nettrace" magic, the
// "!FastSerialization.1" header, then FastSerialization objects: their
// begin and end tags, type names and versions, block sizes and the zero
// padding to a 4-byte stream offset, up to the NullReference tag that
// ends the stream) and V6 (the "Nettrace" header with its versions, then
// blocks up to the EndOfStream block).
//
// It checks the framing only, never the events inside a block: a stream
// it accepts can still hold a bad event, which Reader reports. It keeps
// no more than one object header (at most 64 bytes) whatever the stream
// holds, so its memory is constant, and its verdict does not depend on
// how the stream is split into writes. The zero value is ready to use.
//
// Write checks the bytes as they come and returns the first fault it
// finds; Close says whether the stream, ending there, is whole.
type Checker struct {
	off      int64 // bytes written so far
	ver      int   // 4 (FastSerialization: V4, V5) or 6; 0 until the header is read
	state    checkState
	hdr      [64]byte // the item being read: header, object header, Trace fields
	have     int      // bytes of it in hdr
	need     int      // bytes it takes
	skip     int64    // bytes of a block's content still to come
	itemOff  int64    // where the item being read starts
	item     string   // what it is, for errors: "EventBlock", "object header", …; "" for a V6 block of an unknown kind
	kind     int      // the V6 block's kind
	size     int64    // its declared content size (blocks)
	objTag   byte     // BeginObject or BeginPrivateObject, for the end tag that follows
	blocks   int      // whole blocks (objects) read after the Trace object or block; -1 before its end
	last     string   // the last whole block's item
	lastKind int
	err      error // the verdict, once there is one
	closed   bool
}

type checkState uint8

const (
	csMagic       checkState = iota // "Nettrace"
	csAfterMagic                    // a zero word (V6) or FastSerialization's int32 20
	csFSHeader                      // the rest of "\x14\0\0\0!FastSerialization.1"
	csV6Header                      // the zero word, major and minor version
	csObject                        // a BeginObject tag, or the NullReference that ends the stream
	csObjHeader                     // tags, version, minimum reader version, type name length
	csObjName                       // the type name and the type's EndObject tag
	csTraceFields                   // the Trace object's 48 bytes
	csBlockSize                     // a block object's int32 size
	csPadding                       // zeros to a 4-byte stream offset
	csContent                       // a block's content (skipped)
	csEndObject                     // the object's EndObject tag
	csV6Block                       // a V6 block header
	csEnd                           // the end-of-stream tag or block was read
)

// The stream header of V4 and V5 after the magic.
const fsHeader = "\x14\x00\x00\x00!FastSerialization.1"

// A CheckError is a Checker's verdict on a stream that is not a whole
// NetTrace stream. Its message says what was seen and at which byte, e.g.
//
//	the stream ended in the middle of an EventBlock at byte 1,234,567 (65,536-byte block, 12,000 bytes read)
type CheckError struct {
	Offset int64  // where the item at fault starts (0 for the stream header)
	Item   string // what it is: "stream header", "object header", "EventBlock", "block header", …
	Msg    string // the whole message
	// Err is io.ErrUnexpectedEOF for a stream that ended early (its bytes
	// so far are a good beginning), ErrUnsupported for a version or format
	// the Checker does not know, ErrFormat for anything else.
	Err error
}

// Error returns the message.
func (e *CheckError) Error() string { return e.Msg }

// Unwrap returns io.ErrUnexpectedEOF, ErrUnsupported or ErrFormat.
func (e *CheckError) Unwrap() error { return e.Err }

var errCheckerClosed = errors.New("nettrace: Write to a closed Checker")

// Write checks p, the next bytes of the stream. It always consumes all of
// p; the error is the first fault found so far (a *CheckError), and once
// there is one every later Write returns it.
func (c *Checker) Write(p []byte) (int, error) {
	n := len(p)
	if c.closed {
		if c.err != nil {
			return n, c.err
		}
		return n, errCheckerClosed
	}
	if c.need == 0 && c.state == csMagic {
		c.need = 8
	}
	for len(p) > 0 && c.err == nil {
		if c.state == csEnd {
			c.fail(ErrFormat, "", c.off, "the stream goes on after its end at byte %s", numfmt.Thousands(c.off))
			break
		}
		if c.skip > 0 {
			k := int64(len(p))
			if k > c.skip {
				k = c.skip
			}
			c.skip -= k
			c.off += k
			p = p[k:]
			if c.skip == 0 {
				c.contentDone()
			}
			continue
		}
		k := copy(c.hdr[c.have:c.need], p)
		c.have += k
		c.off += int64(k)
		p = p[k:]
		if c.have == c.need {
			c.step()
		}
	}
	return n, c.err
}

// Err returns the first fault found so far, nil if the stream is good up
// to here.
func (c *Checker) Err() error { return c.err }

// Close ends the stream where it is and returns the verdict: nil if it is
// a whole NetTrace stream (its end-of-stream tag or block was read and
// nothing followed), else a *CheckError that says what was wrong or where
// the stream was cut. Calling it again returns the same verdict.
func (c *Checker) Close() error {
	if c.closed || c.err != nil {
		c.closed = true
		return c.err
	}
	c.closed = true
	if c.state == csEnd {
		return nil
	}
	c.truncated()
	return c.err
}

// Offset returns how many bytes have been checked.
func (c *Checker) Offset() int64 { return c.off }

// Version returns the stream's NetTrace version once its header has been
// read: 4 for V4 and V5 (which share their framing), 6 for V6; 0 before
// that, and for a stream that does not begin as a NetTrace stream.
func (c *Checker) Version() int { return c.ver }

// expect makes the next item n bytes long, read into hdr.
func (c *Checker) expect(s checkState, n int) {
	c.state, c.have, c.need = s, 0, n
}

func (c *Checker) fail(sentinel error, item string, at int64, format string, args ...any) {
	c.err = &CheckError{Offset: at, Item: item, Msg: fmt.Sprintf(format, args...), Err: sentinel}
}

// step handles the complete item in hdr[:need].
func (c *Checker) step() {
	h := c.hdr[:c.need]
	switch c.state {
	case csMagic:
		if string(h) == "Nettrace" {
			c.need = 12 // and the word after it
			c.state = csAfterMagic
			return
		}
		if string(h) == fsHeader[:8] {
			c.fail(ErrUnsupported, "stream header", 0, "a NetPerf stream (the .NET Core 2.x format), not NetTrace: it begins with %s", hexBytes(h, true))
			return
		}
		c.fail(ErrFormat, "stream header", 0, "not a nettrace stream: it begins with %s", hexBytes(h, true))
	case csAfterMagic:
		if binary.LittleEndian.Uint32(h[8:]) == 0 {
			c.need, c.state = 20, csV6Header
			return
		}
		c.need, c.state = 8+len(fsHeader), csFSHeader
	case csFSHeader:
		if string(h[8:]) != fsHeader {
			c.fail(ErrFormat, "stream header", 0, "not a nettrace stream: the Nettrace magic is followed by %s, neither a V6 header nor \"!FastSerialization.1\"", hexBytes(h[8:], true))
			return
		}
		c.ver, c.blocks = 4, -1
		c.beginObject()
	case csV6Header:
		major, minor := binary.LittleEndian.Uint32(h[12:]), binary.LittleEndian.Uint32(h[16:])
		switch {
		case major < 6:
			c.fail(ErrFormat, "stream header", 0, "not a nettrace stream: a V6-style header with major version %d", major)
			return
		case major > 6:
			c.fail(ErrUnsupported, "stream header", 0, "NetTrace version %d.%d: a version newer than this program reads (6)", major, minor)
			return
		}
		c.ver, c.blocks = 6, -1
		c.beginV6Block()
	case csObject:
		switch h[0] {
		case tagNullReference:
			if c.blocks < 0 {
				c.fail(ErrFormat, "object header", c.itemOff, "the stream ends at byte %s before its Trace object", numfmt.Thousands(c.itemOff))
				return
			}
			c.state = csEnd
		case tagBeginObject, tagBeginPrivateObject:
			c.objTag = h[0]
			c.state, c.need = csObjHeader, 15
		default:
			c.fail(ErrFormat, "object header", c.itemOff, "the stream is not well-formed at byte %s: found %02x where an object (05) or the end-of-stream tag (01) should begin", numfmt.Thousands(c.itemOff), h[0])
		}
	case csObjHeader:
		if h[1] != c.objTag || h[2] != tagNullReference {
			c.fail(ErrFormat, "object header", c.itemOff, "the stream is not well-formed at byte %s: an object header begins %s, not %02x %02x 01", numfmt.Thousands(c.itemOff), hexBytes(h[:3], false), c.objTag, c.objTag)
			return
		}
		n := binary.LittleEndian.Uint32(h[11:])
		if n == 0 || n > 48 {
			c.fail(ErrFormat, "object header", c.itemOff, "the stream is not well-formed at byte %s: an object's type name is %d bytes long", numfmt.Thousands(c.itemOff), n)
			return
		}
		c.state, c.need = csObjName, 15+int(n)+1
	case csObjName:
		c.objectType(h)
	case csTraceFields:
		ptr := binary.LittleEndian.Uint32(h[32:])
		if ptr != 4 && ptr != 8 {
			c.fail(ErrFormat, "Trace", c.itemOff, "the stream is not well-formed: the Trace object at byte %s gives a pointer size of %d, not 4 or 8", numfmt.Thousands(c.itemOff), int32(ptr))
			return
		}
		c.expect(csEndObject, 1)
	case csBlockSize:
		size := binary.LittleEndian.Uint32(h)
		if size > maxObjectSize {
			c.fail(ErrFormat, c.item, c.itemOff, "the stream is not well-formed: the %s at byte %s declares %s bytes (more than %s)", c.item, numfmt.Thousands(c.itemOff), numfmt.Thousands(int64(size)), numfmt.Thousands(maxObjectSize))
			return
		}
		c.size = int64(size)
		if pad := int((4 - c.off%4) % 4); pad > 0 {
			c.expect(csPadding, pad)
			return
		}
		c.content()
	case csPadding:
		for i, b := range h {
			if b != 0 {
				c.fail(ErrFormat, c.item, c.itemOff, "the stream is not well-formed: the %s at byte %s has %02x in its padding at byte %s, not 00", c.item, numfmt.Thousands(c.itemOff), b, numfmt.Thousands(c.off-int64(len(h)-i)))
				return
			}
		}
		c.content()
	case csEndObject:
		if h[0] != tagEndObject {
			c.fail(ErrFormat, c.item, c.itemOff, "the stream is not well-formed: the %s at byte %s is followed by %02x, not its end tag (06)", c.item, numfmt.Thousands(c.itemOff), h[0])
			return
		}
		if c.blocks >= 0 {
			c.last = c.item
		}
		c.blocks++
		c.beginObject()
	case csV6Block:
		x := binary.LittleEndian.Uint32(h)
		size, kind := int64(x&0xFFFFFF), int(x>>24)
		c.item, c.kind = "", kind
		if kind < len(v6BlockNames) {
			c.item = v6BlockNames[kind]
		}
		switch {
		case c.blocks < 0 && kind != kindTrace:
			c.fail(ErrFormat, c.item, c.itemOff, "not a nettrace stream: the first block, at byte %s, is %s, not a TraceBlock", numfmt.Thousands(c.itemOff), article(c.name()))
			return
		case c.blocks >= 0 && kind == kindTrace:
			c.fail(ErrFormat, c.item, c.itemOff, "the stream is not well-formed: a second TraceBlock at byte %s", numfmt.Thousands(c.itemOff))
			return
		}
		c.size = size
		c.content()
	}
}

// beginObject expects the next FastSerialization object, or the end tag.
func (c *Checker) beginObject() {
	c.itemOff, c.item, c.size = c.off, "object header", 0
	c.expect(csObject, 1)
}

// beginV6Block expects the next V6 block header.
func (c *Checker) beginV6Block() {
	c.itemOff, c.item, c.size = c.off, "block header", 0
	c.expect(csV6Block, 4)
}

// objectType checks the object header in h: its type name, the type's
// end tag, and its version.
func (c *Checker) objectType(h []byte) {
	name := h[15 : len(h)-1]
	if h[len(h)-1] != tagEndObject {
		c.fail(ErrFormat, "object header", c.itemOff, "the stream is not well-formed: the object type %q at byte %s is followed by %02x, not its end tag (06)", string(name), numfmt.Thousands(c.itemOff), h[len(h)-1])
		return
	}
	version := int32(binary.LittleEndian.Uint32(h[3:]))
	if c.blocks < 0 {
		if string(name) != "Trace" {
			c.fail(ErrFormat, "object header", c.itemOff, "not a nettrace stream: its first object, at byte %s, is %q, not a Trace", numfmt.Thousands(c.itemOff), string(name))
			return
		}
		if version < 3 || version > 4 {
			c.fail(ErrUnsupported, "Trace", c.itemOff, "a Trace object of version %d at byte %s: this program reads versions 3 (NetPerf's blocks) and 4 (NetTrace V4 and V5)", version, numfmt.Thousands(c.itemOff))
			return
		}
		c.item = "Trace"
		c.expect(csTraceFields, 48)
		return
	}
	switch string(name) {
	case "EventBlock":
		c.item = fsNames[kindEvent]
	case "MetadataBlock":
		c.item = fsNames[kindMetadata]
	case "StackBlock":
		c.item = fsNames[kindStack]
	case "SPBlock":
		c.item = fsNames[kindSequencePt]
	case "Trace":
		c.fail(ErrFormat, "Trace", c.itemOff, "the stream is not well-formed: a second Trace object at byte %s", numfmt.Thousands(c.itemOff))
		return
	default:
		c.fail(ErrFormat, "object header", c.itemOff, "the stream is not well-formed: the object at byte %s is of type %q, none of EventBlock, MetadataBlock, StackBlock, SPBlock", numfmt.Thousands(c.itemOff), string(name))
		return
	}
	switch {
	case version < 0:
		c.fail(ErrFormat, c.item, c.itemOff, "the stream is not well-formed: the %s at byte %s has version %d", c.item, numfmt.Thousands(c.itemOff), version)
		return
	case version > 2 && c.blocks > 0:
		// A writer does not change its blocks' version midway.
		c.fail(ErrFormat, c.item, c.itemOff, "the stream is not well-formed: the %s at byte %s has version %d, after blocks of version 2 or below", c.item, numfmt.Thousands(c.itemOff), version)
		return
	case version > maxNewBlockVersion:
		c.fail(ErrFormat, c.item, c.itemOff, "the stream is not well-formed: the %s at byte %s has version %d, which no writer takes the next step to", c.item, numfmt.Thousands(c.itemOff), version)
		return
	case version > 2:
		c.fail(ErrUnsupported, c.item, c.itemOff, "the %s at byte %s has version %d: this program reads up to 2", c.item, numfmt.Thousands(c.itemOff), version)
		return
	}
	c.expect(csBlockSize, 4)
}

// content skips the current block's content of c.size bytes.
func (c *Checker) content() {
	c.state, c.have, c.need = csContent, 0, 0
	c.skip = c.size
	if c.skip == 0 {
		c.contentDone()
	}
}

// contentDone moves on after a block's content.
func (c *Checker) contentDone() {
	if c.ver == 6 {
		if c.item == v6BlockNames[kindEndOfStream] {
			c.state = csEnd
			return
		}
		if c.blocks >= 0 {
			c.last, c.lastKind = c.item, c.kind
		}
		c.blocks++
		c.beginV6Block()
		return
	}
	c.expect(csEndObject, 1)
}

// truncated sets the verdict for a stream that ends here, before its end.
func (c *Checker) truncated() {
	eof := io.ErrUnexpectedEOF
	switch {
	case c.off == 0:
		c.fail(eof, "stream header", 0, "the stream is empty")
	case c.state == csMagic && !bytes.HasPrefix([]byte("Nettrace"), c.hdr[:c.have]):
		if bytes.HasPrefix([]byte(fsHeader), c.hdr[:c.have]) {
			c.fail(ErrUnsupported, "stream header", 0, "a NetPerf stream (the .NET Core 2.x format), not NetTrace: it begins with %s and ends there", hexBytes(c.hdr[:c.have], false))
			return
		}
		c.fail(ErrFormat, "stream header", 0, "not a nettrace stream: it is only %s long: %s", numfmt.Count(c.off, "byte"), hexBytes(c.hdr[:c.have], false))
	case c.ver == 0:
		c.fail(eof, "stream header", 0, "the stream ended after %s, in the middle of its header", numfmt.Count(c.off, "byte"))
	case c.blocks < 0 && (c.state == csObject || c.state == csV6Block) && c.have == 0:
		c.fail(eof, "stream header", 0, "the stream ended after its header, at byte %s, before the Trace object", numfmt.Thousands(c.off))
	case (c.state == csObject || c.state == csV6Block) && c.have == 0:
		what := "block"
		if c.blocks != 1 {
			what = "blocks"
		}
		c.fail(eof, "", c.off, "the stream ended before the end-of-stream tag, at byte %s, after %s whole %s (the last %s)", numfmt.Thousands(c.off), numfmt.Thousands(int64(c.blocks)), what, article(kindName(c.last, c.lastKind)))
	case c.state == csContent:
		c.fail(eof, c.name(), c.itemOff, "the stream ended in the middle of %s at byte %s (%s-byte block, %s read)", article(c.name()), numfmt.Thousands(c.itemOff), numfmt.Thousands(c.size), numfmt.Count(c.size-c.skip, "byte"))
	case c.state == csEndObject && c.item != "Trace":
		c.fail(eof, c.item, c.itemOff, "the stream ended in the middle of %s at byte %s (all of its %s read, not its end tag)", article(c.item), numfmt.Thousands(c.itemOff), numfmt.Count(c.size, "byte"))
	default:
		// In an object or block header, the Trace fields, a block's size
		// or its padding.
		c.fail(eof, c.item, c.itemOff, "the stream ended in the middle of %s at byte %s (%s of it read)", article(c.item), numfmt.Thousands(c.itemOff), numfmt.Count(c.off-c.itemOff, "byte"))
	}
}

// name returns what the item being read is.
func (c *Checker) name() string { return kindName(c.item, c.kind) }

// kindName returns item, or for a V6 block of a kind this package does
// not know (item ""), "block of kind N": only then is a string made.
func kindName(item string, kind int) string {
	if item == "" {
		return "block of kind " + strconv.Itoa(kind)
	}
	return item
}

func article(item string) string {
	switch item {
	case "Trace":
		return "the Trace object"
	case "object header", "EventBlock", "EndOfStreamBlock", "SPBlock":
		return "an " + item
	}
	return "a " + item
}

// hexBytes shows b as hex bytes, then " …" if more follows, then the
// printable text it holds, if it is mostly text.
func hexBytes(b []byte, more bool) string {
	var s []byte
	text := 0
	for i, x := range b {
		if i > 0 {
			s = append(s, ' ')
		}
		s = fmt.Appendf(s, "%02x", x)
		if x >= 0x20 && x < 0x7f {
			text++
		}
	}
	if more {
		s = append(s, " …"...)
	}
	if len(b) > 0 && text*4 >= len(b)*3 {
		q := make([]byte, 0, len(b))
		for _, x := range b {
			if x < 0x20 || x >= 0x7f {
				x = '.'
			}
			q = append(q, x)
		}
		s = fmt.Appendf(s, " (%q)", q)
	}
	return string(s)
}
