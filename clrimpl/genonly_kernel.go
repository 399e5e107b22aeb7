package clrimpl

import (
	"encoding/binary"
	"net/netip"
)

// The reads and writes of the kernel events' value types (kernel.go) that
// generated decoders and encoders call. For generated code only (see the
// package doc).

// ReadIPv4 reads an IPv4 address (4 bytes in network order) at off. The
// caller has checked bounds.
//
// For generated code only.
func ReadIPv4(b []byte, off int) netip.Addr { return netip.AddrFrom4([4]byte(b[off : off+4])) }

// ReadIPv6 reads an IPv6 address (16 bytes) at off. The caller has
// checked bounds.
//
// For generated code only.
func ReadIPv6(b []byte, off int) netip.Addr { return netip.AddrFrom16([16]byte(b[off : off+16])) }

// AppendIPv4 appends a's 4 bytes in network order: an IPv4 address, or
// one mapped into IPv6; zeros for anything else.
//
// For generated code only.
func AppendIPv4(dst []byte, a netip.Addr) []byte {
	if a = a.Unmap(); a.Is4() {
		v := a.As4()
		return append(dst, v[:]...)
	}
	return append(dst, 0, 0, 0, 0)
}

// AppendIPv6 appends a's 16 bytes (an IPv4 address mapped into IPv6);
// zeros for the zero netip.Addr.
//
// For generated code only.
func AppendIPv6(dst []byte, a netip.Addr) []byte {
	if !a.IsValid() {
		return append(dst, make([]byte, 16)...)
	}
	v := a.As16()
	return append(dst, v[:]...)
}

// WBEMSIDLen measures the WBEMSID at off: 4 bytes when its first 4 are
// zero (no SID), else the TOKEN_USER (2*ptrSize bytes) and the SID (8
// bytes and 4 a sub-authority, their count in the SID's second byte). ok
// is false when b does not hold it all.
//
// For generated code only.
func WBEMSIDLen(b []byte, off, ptrSize int) (n int, ok bool) {
	if off < 0 || len(b)-off < 4 {
		return 0, false
	}
	if binary.LittleEndian.Uint32(b[off:]) == 0 {
		return 4, true
	}
	n = 2*ptrSize + 8
	if len(b)-off < n {
		return 0, false
	}
	n += 4 * int(b[off+2*ptrSize+1])
	return n, len(b)-off >= n
}

// AppendWBEMSID appends s's wire form for the pointer size: its bytes as
// read when the pointer size is the same, else a TOKEN_USER of that
// size (the pointer, truncated or widened, and the attributes) and the
// SID; 4 zero bytes when there is no SID.
//
// For generated code only.
func AppendWBEMSID(dst []byte, s WBEMSID, ptrSize int) []byte {
	if ptrSize != 4 {
		ptrSize = 8 // as AppendPtr: any size other than 4 is 8
	}
	sid := s.SID()
	switch {
	case sid == nil:
		return append(dst, 0, 0, 0, 0)
	case ptrSize == s.ptr:
		return append(dst, s.b...)
	}
	p := ReadPtr(s.b, 0, s.ptr)
	if ptrSize == 4 && uint32(p) == 0 {
		p = 1 // a token pointer of zero would read back as no SID
	}
	dst = AppendPtr(dst, p, ptrSize)
	dst = append(dst, s.b[s.ptr:s.ptr+4]...)
	dst = append(dst, make([]byte, ptrSize-4)...)
	return append(dst, sid...)
}

// AppendFixed appends raw cut or NUL-padded to exactly n bytes: the wire
// form of a fixed character array.
//
// For generated code only.
func AppendFixed(dst, raw []byte, n int) []byte {
	if len(raw) >= n {
		return append(dst, raw[:n]...)
	}
	dst = append(dst, raw...)
	return append(dst, make([]byte, n-len(raw))...)
}
