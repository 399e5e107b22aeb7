package clrimpl

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"strconv"
	"time"
)

// The value types of the Windows kernel's events (MOF classes) that the
// CLR manifest has no use for: FILETIME stamps, the user SIDs of process
// events, network addresses, and the fixed character arrays of the system
// configuration events (TrimNUL).

// FileTime is a Windows FILETIME (win:FILETIME): a time in 100 ns ticks
// since 1601-01-01 UTC. The zero value is no time.
type FileTime int64

// fileTimeEpoch is 1601-01-01 in Unix seconds.
const fileTimeEpoch = -11644473600

// FileTimeOf returns t as a FileTime, to 100 ns; the zero time.Time gives
// 0.
func FileTimeOf(t time.Time) FileTime {
	if t.IsZero() {
		return 0
	}
	return FileTime((t.Unix()-fileTimeEpoch)*10_000_000 + int64(t.Nanosecond()/100))
}

// Time returns t as a UTC time.Time; 0 gives the zero time.Time.
func (t FileTime) Time() time.Time {
	if t == 0 {
		return time.Time{}
	}
	return time.Unix(int64(t)/10_000_000+fileTimeEpoch, int64(t)%10_000_000*100).UTC()
}

// AppendText appends t as RFC 3339 with nanoseconds, in UTC
// ("2023-03-14T00:46:50.701061Z"; 0 is "0001-01-01T00:00:00Z"). It does
// not allocate when dst has room.
func (t FileTime) AppendText(dst []byte) []byte {
	return t.Time().AppendFormat(dst, time.RFC3339Nano)
}

// AppendJSON appends t as AppendText writes it, quoted.
func (t FileTime) AppendJSON(dst []byte) []byte {
	return append(t.AppendText(append(dst, '"')), '"')
}

// String returns t as AppendText writes it.
func (t FileTime) String() string { return string(t.AppendText(nil)) }

// WBEMSID is a user's security identifier as the kernel's events carry it
// (the MOF classes' extension("Sid"), TDH's WBEM SID): a TOKEN_USER
// structure (a pointer to the SID and its attributes, two pointers long)
// followed by the SID itself, or 4 zero bytes when there is no SID.
//
// A WBEMSID decoded from a payload aliases the payload's bytes. The zero
// value is no SID.
type WBEMSID struct {
	b   []byte // the wire form
	ptr int    // the pointer size it was read with
}

// MakeWBEMSID wraps the wire form raw (as WBEMSIDLen measures it) of
// pointer size ptrSize without copying it. The view aliases raw.
func MakeWBEMSID(raw []byte, ptrSize int) WBEMSID {
	return WBEMSID{b: raw[:len(raw):len(raw)], ptr: ptrSize}
}

// WBEMSIDOf returns the WBEMSID of a SID's bytes (revision, sub-authority
// count, 6-byte identifier authority, 4 bytes a sub-authority), encoded
// with 8-byte pointers; an empty sid gives no SID. It allocates; it is
// meant for building payloads.
func WBEMSIDOf(sid []byte) WBEMSID {
	if len(sid) == 0 {
		return WBEMSID{}
	}
	b := make([]byte, 16, 16+len(sid))
	b[0] = 1 // the TOKEN_USER's pointer: not zero, or the SID would be none
	return WBEMSID{b: append(b, sid...), ptr: 8}
}

// SID returns the SID's bytes, nil when there is none. The slice aliases
// the payload.
func (s WBEMSID) SID() []byte {
	if len(s.b) <= 2*s.ptr {
		return nil
	}
	return s.b[2*s.ptr:]
}

// IsEmpty reports whether there is no SID.
func (s WBEMSID) IsEmpty() bool { return s.SID() == nil }

// Bytes returns the wire form. The slice aliases the payload.
func (s WBEMSID) Bytes() []byte { return s.b }

// Equal reports whether both hold the same SID, whatever their pointer
// sizes.
func (s WBEMSID) Equal(o WBEMSID) bool { return bytes.Equal(s.SID(), o.SID()) }

// AppendText appends the SID in its string form, "S-1-5-21-…-1001";
// nothing when there is none. It does not allocate when dst has room.
func (s WBEMSID) AppendText(dst []byte) []byte {
	b := s.SID()
	if len(b) < 8 {
		return dst
	}
	var auth uint64
	for _, c := range b[2:8] {
		auth = auth<<8 | uint64(c)
	}
	dst = append(dst, 'S', '-')
	dst = strconv.AppendUint(dst, uint64(b[0]), 10)
	dst = append(dst, '-')
	dst = strconv.AppendUint(dst, auth, 10)
	for k := 8; k+4 <= len(b); k += 4 {
		dst = append(dst, '-')
		dst = strconv.AppendUint(dst, uint64(binary.LittleEndian.Uint32(b[k:])), 10)
	}
	return dst
}

// AppendJSON appends the SID's string form quoted ("" when there is none).
func (s WBEMSID) AppendJSON(dst []byte) []byte {
	return append(s.AppendText(append(dst, '"')), '"')
}

// String returns the SID's string form, "" when there is none.
func (s WBEMSID) String() string { return string(s.AppendText(nil)) }

// Clone returns a copy of s that no longer aliases the payload.
func (s WBEMSID) Clone() WBEMSID { return WBEMSID{b: cloneBytes(s.b), ptr: s.ptr} }

// AppendAddr appends a network address as text ("10.0.0.1",
// "fe80::1"); nothing for the zero netip.Addr.
func AppendAddr(dst []byte, a netip.Addr) []byte {
	if !a.IsValid() {
		return dst
	}
	return a.AppendTo(dst)
}

// AppendJSONAddr appends a network address as AppendAddr writes it,
// quoted.
func AppendJSONAddr(dst []byte, a netip.Addr) []byte {
	return append(AppendAddr(append(dst, '"'), a), '"')
}

// TrimNUL returns s up to its first NUL character: the string a fixed,
// NUL-padded character array holds.
func (s UTF16) TrimNUL() UTF16 {
	for j := 0; j+1 < len(s.b); j += 2 {
		if s.b[j] == 0 && s.b[j+1] == 0 {
			return UTF16{s.b[:j:j]}
		}
	}
	return s
}

// TrimNUL returns s up to its first NUL byte: the string a fixed,
// NUL-padded character array holds.
func (s Ansi) TrimNUL() Ansi {
	if i := bytes.IndexByte(s.b, 0); i >= 0 {
		return Ansi{s.b[:i:i]}
	}
	return s
}
