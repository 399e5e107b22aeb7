package nettrace

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// firstObject is the header of the stream's first object as the runtimes
// write it for one format version, and what they write after it: the
// header of the first block (V3–V4), or event records (V1/V2).
type firstObject struct {
	netTrace bool   // after the Nettrace magic (V4, V5), or bare (.netperf)
	name     string // the type name
	version  int
	hdr      []byte // the whole header, tags to EndObject tag
	// The first block's tag, version and minimum reader version (V3–V4);
	// blockTag 0: event records follow (V1/V2).
	blockTag            byte
	blockVer, blockMinV uint32
}

// firstObjects are the first objects' headers the runtimes write, in
// every trace of the repository's and the shared fixtures: .nettrace
// (V4, V5: .NET Core 3.0 to .NET 8): tags 5 5 1, Trace, version 4,
// minimum reader version 4, then blocks of version 2, minimum 2;
// .netperf of .NET Core 2.1 (V3): tags 4 4 1, Trace, version 3, minimum
// 0, then blocks of version 1, minimum 0; .netperf of .NET Core 2.0
// (V2, and V1 before it): tags 4 4 1, EventPipeFile, version 2 (1),
// minimum 0, then event records.
var firstObjects = []firstObject{
	{netTrace: true, name: "Trace", version: 4, hdr: objectHeader(tagBeginPrivateObject, 4, 4, "Trace"), blockTag: tagBeginPrivateObject, blockVer: 2, blockMinV: 2},
	{name: "Trace", version: 3, hdr: objectHeader(tagBeginObject, 3, 0, "Trace"), blockTag: tagBeginObject, blockVer: 1, blockMinV: 0},
	{name: "Microsoft.DotNet.Runtime.EventPipeFile", version: 2, hdr: objectHeader(tagBeginObject, 2, 0, "Microsoft.DotNet.Runtime.EventPipeFile")},
	{name: "Microsoft.DotNet.Runtime.EventPipeFile", version: 1, hdr: objectHeader(tagBeginObject, 1, 0, "Microsoft.DotNet.Runtime.EventPipeFile")},
}

// objectHeader makes a FastSerialization object header.
func objectHeader(tag byte, version, minVersion uint32, name string) []byte {
	h := []byte{tag, tag, tagNullReference}
	h = binary.LittleEndian.AppendUint32(h, version)
	h = binary.LittleEndian.AppendUint32(h, minVersion)
	h = binary.LittleEndian.AppendUint32(h, uint32(len(name)))
	h = append(h, name...)
	return append(h, tagEndObject)
}

// firstObjectFix runs before the stream's first object's header (V1–V5)
// is read. When that header is one the reader does not take (a version
// it does not read, a type name, its length or the end tag wrong) but is,
// in every other field, the header one format version's writers write
// (firstObjects), and what follows is what that version's writers write
// after it (the Trace object's fields, with a pointer size of 4 or 8,
// then its EndObject tag and the first block's header, of that version's
// tags, block version and minimum reader version, and a block name this
// reader knows; or, after an EventPipeFile header, a credible event
// record and the next), the one field that differs is damaged: it
// returns that version's header, and the header is read as it, the field
// set aside as r.firstBad, a Damage of its bytes that lost no event.
// Else it returns nil and the header is read as it stands (and fails as
// it did).
//
// The minimum reader version must be that version's: a writer of a
// newer format, which a reader of this version cannot read, raises it
// (FastSerialization's rule), so such a trace still fails with
// ErrUnsupported, as one does whose blocks are not that version's.
// (No writer wrote another first-object version before V6, which left
// FastSerialization: a .nettrace's Trace object is version 4 from .NET
// Core 3.0 on.) A header with two fields damaged, its tags included
// (readFSTypeHeader takes damaged tags alone), is not taken.
func (r *Reader) firstObjectFix() *firstObject {
	h, _ := r.s.peek(maxFSHeader)
	if firstObjectReads(h) {
		return nil
	}
	nt := r.info.Format == FormatNetTrace
	for i := range firstObjects {
		fo := &firstObjects[i]
		if fo.netTrace != nt || len(h) < len(fo.hdr) || !bytes.Equal(h[:3], fo.hdr[:3]) || !bytes.Equal(h[7:11], fo.hdr[7:11]) {
			continue
		}
		n := len(fo.name)
		type field struct {
			at, end int
			what    string
		}
		var bad []field
		for _, f := range []field{{3, 7, "version"}, {11, 15, "type name length"}, {15, 15 + n, "type name"}, {15 + n, 16 + n, "end tag"}} {
			if !bytes.Equal(h[f.at:f.end], fo.hdr[f.at:f.end]) {
				bad = append(bad, f)
			}
		}
		if len(bad) != 1 || !r.firstObjectFollows(fo) {
			continue
		}
		f := bad[0]
		at := r.s.off
		r.blkHdrOff, r.blkName = at, ""
		var what string
		switch f.what {
		case "version":
			what = fmt.Sprintf("object version %d", int32(le32(h[3:])))
		case "type name length":
			what = fmt.Sprintf("type name length %d, not %d,", le32(h[11:]), n)
		case "type name":
			what = fmt.Sprintf("type name %q, not %q,", h[15:15+n], fo.name)
		default:
			what = fmt.Sprintf("byte %d after the type name, not the EndObject tag,", h[15+n])
		}
		follows := fmt.Sprintf("followed by version %d's blocks", fo.version)
		if fo.blockTag == 0 {
			follows = "followed by event records"
		}
		r.firstBad = r.errf(ErrFormat, "object header", at+int64(f.at),
			"%s in a header that is otherwise a version %d %s's, and %s: the field is damaged; read as version %d's",
			what, fo.version, fsTypeName(fo.name), follows, fo.version).(*Error)
		r.firstBadLen = int64(f.end - f.at)
		return fo
	}
	return nil
}

// fsTypeName is the short name errors give a first object's type.
func fsTypeName(name string) string {
	if name == "Trace" {
		return name
	}
	return "EventPipeFile"
}

// firstObjectReads reports whether readFSTrace takes the first object's
// header h as it stands: tags right (or damaged alone: firstObjectRest),
// its type name framed, and Trace of version 3 or 4 or EventPipeFile of
// version 1 or 2.
func firstObjectReads(h []byte) bool {
	if len(h) < 15 {
		return false
	}
	tag := h[0]
	if (tag != tagBeginObject && tag != tagBeginPrivateObject || h[1] != tag || h[2] != tagNullReference) && !firstObjectRest(h) {
		return false
	}
	v, n := int32(le32(h[3:])), le32(h[11:])
	if n > 48 || len(h) < 15+int(n)+1 || h[15+n] != tagEndObject {
		return false
	}
	switch string(h[15 : 15+n]) {
	case "Trace":
		return v >= 3 && v <= 4
	case "Microsoft.DotNet.Runtime.EventPipeFile":
		return v >= 1 && v <= 2
	}
	return false
}

// firstObjectFollows reports whether what follows the first object's
// header, when it is fo's, is what fo's writers write after it.
func (r *Reader) firstObjectFollows(fo *firstObject) bool {
	l := len(fo.hdr)
	if fo.blockTag == 0 {
		// int32 forward reference, the sync time; then event records.
		b, _ := r.s.peek(searchWindow)
		return len(b) > l+36 && r.v2Record(b[l+36:], r.s.off+int64(l+36), 1, 0)
	}
	// The Trace object's 48 bytes of fields, its EndObject tag, the
	// first block's header.
	b, _ := r.s.peek(l + 48 + 1 + maxFSHeader)
	if len(b) < l+48+1+15 {
		return false
	}
	ptr := le32(b[l+32:])
	blk := b[l+49:]
	return (ptr == 4 || ptr == 8) && b[l+48] == tagEndObject && blockHeader(blk, false) &&
		blk[0] == fo.blockTag && le32(blk[3:]) == fo.blockVer && le32(blk[7:]) == fo.blockMinV
}
