package nettrace

import "bytes"

// sizeUndershoot runs when the V3–V5 block just read (into r.blk, from
// the size field at stream offset at, which stated size) is not followed
// by its EndObject tag and holds no block header (sizeOvershoot): the
// size may be damaged, too small, so that the block goes on past it. It
// looks for the first EndObject tag followed by a block header (or by
// the stream's NullReference end, where the input ends) in the next
// searchWindow bytes; when the bytes up to it, taken with the block's,
// read as whole records of the block's kind to the byte (blockTiles), the
// size is what the damage changed: the block is read to there, and the
// size field recorded as a Damage of its 4 bytes that lost no event, and
// it reports true (in strict mode, it returns that damage's error
// instead). Otherwise it leaves the
// block as it was: the damage is after the block, or in it, and the
// older paths (findBack, the search for the next block) go on from there.
// So it does when those bytes hold another block's header (holdsHeader).
//
// It runs only after a block that its EndObject tag does not follow, and
// not when the next block's header follows the tag's byte (the tag
// itself is damaged).
func (r *Reader) sizeUndershoot(kind int, at int64, size uint32) (bool, error) {
	// The bytes at hand, and more only as the search needs them: on a
	// live session the next ones may be minutes away.
	ahead, err := r.s.peekSome(1+maxFSHeader, searchWindow)
	if len(ahead) > 1 && r.nearBlockHeader(ahead[1:]) {
		// The next block's header (its tags, a field of its type or
		// its versions may be damaged too) follows the one byte where
		// the EndObject tag should be: the
		// size is right and the tag damaged. (The search below would
		// take the next block's bytes, its header included, for
		// records of this one.)
		return false, nil
	}
	end := -1
	for i := 0; ; {
		// The tags whose next bytes are at hand, all of them once the
		// input or the window ends: a block header is in its first
		// maxFSHeader bytes.
		lim := len(ahead) - maxFSHeader
		last := err != nil || len(ahead) == searchWindow
		if last {
			lim = len(ahead)
		}
		for ; i < lim; i++ {
			j := bytes.IndexByte(ahead[i:lim], tagEndObject)
			if j < 0 {
				i = lim
				break
			}
			i += j
			if r.blockHeaderAt(ahead[i+1:], 0) || i+2 == len(ahead) && err != nil && ahead[i+1] == tagNullReference {
				end = i
				break
			}
		}
		if end >= 0 || last {
			break
		}
		ahead, err = r.s.peekSome(len(ahead)+1, searchWindow)
	}
	if end < 0 || r.holdsHeader(ahead[:end]) || !r.blockTiles(kind, r.blk, ahead[:end]) {
		return false, nil
	}
	e := r.errf(ErrFormat, "block size", at, "block size %d ends %d bytes before the block's EndObject tag at %d: the size is damaged; the block ends there", size, end, r.s.off+int64(end)).(*Error)
	if err := r.noteDamage(e, at, 4); err != nil {
		return false, err
	}
	r.blk = append(r.blk, ahead[:end]...)
	r.s.discard(end)
	return true, nil
}

// holdsHeader reports whether b holds a block header: bytes that
// sizeUndershoot would add to a block span the start of another block, so
// the block's size is not what the damage changed. (A block whose next
// block was wiped, its header included, is followed by its EndObject tag
// and then by the damage; the search finds the end of the block after
// that one, and the wiped bytes and the intact block, header and all,
// can read as records when only their structure is checked.)
func (r *Reader) holdsHeader(b []byte) bool {
	for i := 0; i < len(b); i++ {
		j := bytes.IndexByte(b[i:], tagBeginPrivateObject)
		if k := bytes.IndexByte(b[i:], tagBeginObject); k >= 0 && (j < 0 || k < j) {
			j = k
		}
		if j < 0 {
			return false
		}
		i += j
		if r.blockHeaderAt(b[i:], 0) {
			return true
		}
	}
	return false
}

// movedBlock runs when the V3–V5 block just read (into r.blk, after pad
// bytes of padding, kept in r.padBuf) is not followed by its EndObject
// tag, while the reader took its padding from the stream offset without
// checking it (no damage before it asked for that). A block is padded
// for the offset its writer wrote it at: one that damage moved (blocks
// swapped, or copied elsewhere) has the padding of its old place, and
// read with its new place's, its content is off by a byte or more, and
// its end too. It puts the padding and the block back into the stream
// and asks findPad, as after damage, for the padding that fits the block
// (its content's start, and its EndObject tag and the next header where
// its size says). When that is another, and the block read with it is
// followed by its EndObject tag and the next header and reads as whole
// records of its kind (blockTiles; a size that damage made 1 to 3 bytes
// larger fits another padding's framing too, but not its records), the
// block was moved: it is read so, the padding recorded as a Damage of
// its bytes that lost no event, and the blocks after it are checked as
// after damage (the phase), until one is where it was written; it
// reports true. Otherwise the block is read again as it was, and it
// reports false. In strict mode it returns that damage's error.
func (r *Reader) movedBlock(kind int, size uint32, pad int) (bool, error) {
	back := append(append(r.backBuf[:0], r.padBuf[:pad]...), r.blk...)
	r.backBuf = back[:0]
	r.s.unread(back)
	at := r.s.off
	if p := r.findPad(kind, pad, size); p != pad {
		var err error
		if err = r.s.readSmall(r.padBuf[:p]); err == nil {
			r.blkOff = r.s.off
			r.blk, err = r.s.readBlock(r.blk, int(size))
		}
		if err == nil && r.framed() && r.blockTiles(kind, r.blk, nil) {
			e := r.errf(ErrFormat, "block padding", at, "%d bytes of padding, not the %d its stream offset gives: the block was written at another offset (blocks moved); read with them", p, pad).(*Error)
			if err := r.noteDamage(e, at, int64(p)); err != nil {
				return false, err
			}
			r.phase = r.blkOff & 3
			r.drops.moved = true
			return true, nil
		}
		// Not moved: back as it was.
		back := append(append(r.backBuf[:0], r.padBuf[:p]...), r.blk...)
		r.backBuf = back[:0]
		r.s.unread(back)
	}
	// The bytes were read once already: they are there.
	r.s.readSmall(r.padBuf[:pad])
	r.blkOff = r.s.off
	r.blk, _ = r.s.readBlock(r.blk, int(size))
	return false, nil
}

// blockTiles reports whether a V3–V5 block of the given kind whose
// content is a followed by b reads as whole records of its kind, ending
// at its end: stacks (first ID, count, then each stack's size and
// bytes), a sequence point's threads (timestamp, count, 12 bytes a
// thread), or event records (V4+: after the block's header; in
// compressed headers, read as compressedHeader reads them
// (readCompressed), each followed by its payload). It checks the sizes
// and the structure, not the values.
func (r *Reader) blockTiles(kind int, a, b []byte) bool {
	c := a
	if len(b) > 0 {
		c = make([]byte, 0, len(a)+len(b))
		c = append(append(c, a...), b...)
	}
	switch kind {
	case kindStack:
		cur := cursor{b: c}
		cur.u32()
		n := cur.u32()
		ps := r.info.PointerSize
		for k := uint32(0); k < n && !cur.bad; k++ {
			size := int(cur.u32())
			if size%ps != 0 {
				return false
			}
			cur.bytes(size)
		}
		return n > 0 && !cur.bad && cur.left() == 0
	case kindSequencePt:
		return len(c) >= 12 && int64(len(c)) == 12+12*int64(le32(c[8:]))
	case kindEvent, kindMetadata:
	default:
		return false
	}
	if r.ver == 3 {
		// Records with their sizes: 56 bytes of header, the payload,
		// the stack's size and bytes.
		for len(c) > 0 {
			if len(c) < 60 {
				return false
			}
			total := int64(le32(c)) + 4
			pay := int64(le32(c[52:]))
			if total < 60 || total > int64(len(c)) || 56+pay+4 > total || 56+pay+4+int64(le32(c[56+pay:])) > total {
				return false
			}
			c = c[total:]
		}
		return true
	}
	if len(c) < 4 {
		return false
	}
	hs := int(le16(c))
	if hs < 20 || hs > len(c) || le16(c[2:]) > 1 {
		return false
	}
	compressed := le16(c[2:])&1 != 0
	cur := cursor{b: c, i: hs}
	var h evHeader // the fields a compressed header leaves out are the one before's
	for cur.left() > 0 && !cur.bad {
		if !compressed {
			// EventSize, counting the header's 80 bytes and the payload
			// (PayloadSize, at 76) and its padding.
			if cur.left() < 80 {
				return false
			}
			e := c[cur.i:]
			total := int64(le32(e)) + 4
			if total < 80 || total > int64(cur.left()) || int64(le32(e[76:])) > total-80 {
				return false
			}
			cur.i += int(total)
			continue
		}
		h.readCompressed(&cur, false) // V4 and V5
		cur.bytes(int(h.payloadSize))
	}
	return !cur.bad
}
