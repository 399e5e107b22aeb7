package dynamic

import (
	"encoding/binary"
	"math"
	"math/bits"
	"net/netip"
	"strconv"
	"time"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// appendFloatG appends v in strconv's shortest 'g' form at bitSize's
// precision; NaN and the infinities, which JSON has no number for, as
// quoted strings.
func appendFloatG(dst []byte, v float64, bitSize int) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		dst = append(dst, '"')
		dst = strconv.AppendFloat(dst, v, 'g', -1, bitSize)
		return append(dst, '"')
	}
	return strconv.AppendFloat(dst, v, 'g', -1, bitSize)
}

// fileTimeEpoch is 1601-01-01 in Unix seconds.
const fileTimeEpoch = -11644473600

// fileTime converts a FILETIME (100 ns since 1601) to a UTC time; 0 gives
// the zero time.
func fileTime(ft int64) time.Time {
	if ft == 0 {
		return time.Time{}
	}
	return time.Unix(ft/10_000_000+fileTimeEpoch, (ft%10_000_000)*100).UTC()
}

// systemTime converts a SYSTEMTIME: year, month, day of week, day, hour,
// minute, second, milliseconds, each a uint16. ok is false when the parts
// are not a date and time (a year outside 1 to 9999, a month 0 or 13, the
// 31st of a 30-day month, an hour of 24, …; all zeros, "not set", among
// them), which TraceEvent's DateTime refuses: time.Date would carry them
// over into another, plausible date. The day of the week is not checked,
// as TraceEvent does not.
func systemTime(b []byte) (t time.Time, ok bool) {
	u := func(i int) int { return int(le.Uint16(b[2*i:])) }
	y, mo, d, h, mi, s, ms := u(0), u(1), u(3), u(4), u(5), u(6), u(7)
	if y < 1 || y > 9999 || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59 || ms > 999 {
		return time.Time{}, false
	}
	t = time.Date(y, time.Month(mo), d, h, mi, s, ms*1e6, time.UTC)
	return t, t.Day() == d // a day past the month's end moves to the next
}

// appendSystemTime appends a SYSTEMTIME in RFC 3339, or when its parts are
// not a date (systemTime) the parts as stored, "YYYY-MM-DD hh:mm:ss.mmm"
// (all zeros for an unset one), which no reader of times takes for one;
// quoted when quote is set.
func appendSystemTime(dst, b []byte, quote bool) []byte {
	if quote {
		dst = append(dst, '"')
	}
	if t, ok := systemTime(b); ok {
		dst = t.AppendFormat(dst, time.RFC3339Nano)
	} else {
		u := func(i int) uint64 { return uint64(le.Uint16(b[2*i:])) }
		for _, p := range [...]struct {
			part, width int
			sep         byte // after it; 0 for none
		}{{0, 4, '-'}, {1, 2, '-'}, {3, 2, ' '}, {4, 2, ':'}, {5, 2, ':'}, {6, 2, '.'}, {7, 3, 0}} {
			dst = appendPadded(dst, u(p.part), p.width)
			if p.sep != 0 {
				dst = append(dst, p.sep)
			}
		}
	}
	if quote {
		dst = append(dst, '"')
	}
	return dst
}

// appendPadded appends v in decimal with at least width digits.
func appendPadded(dst []byte, v uint64, width int) []byte {
	var buf [20]byte
	s := strconv.AppendUint(buf[:0], v, 10)
	for n := len(s); n < width; n++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// appendTime appends t (UTC) in RFC 3339 with nanoseconds, followed by
// quote unless it is 0.
func appendTime(dst []byte, t time.Time, quote byte) []byte {
	dst = t.UTC().AppendFormat(dst, time.RFC3339Nano)
	if quote != 0 {
		dst = append(dst, quote)
	}
	return dst
}

// appendDateTime appends an EventSource DateTime (a FILETIME): a time in
// RFC 3339 (UTC), quoted if quote is set, or a bare number when it is
// outside the years 1601 to 9999.
func appendDateTime(dst []byte, ft int64, quote bool) []byte {
	if ft < 0 || ft > 2650467743999999999 { // beyond year 9999
		return strconv.AppendInt(dst, ft, 10)
	}
	t := time.Unix(fileTimeEpoch+ft/1e7, (ft%1e7)*100).UTC()
	if !quote {
		return t.AppendFormat(dst, time.RFC3339Nano)
	}
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"')
}

// appendDecimal appends a 16-byte System.Decimal (flags, hi32, lo32,
// mid32) as a decimal number, quoted if quote is set.
func appendDecimal(dst []byte, b []byte, quote bool) []byte {
	flags := le.Uint32(b[0:])
	hi := uint64(le.Uint32(b[4:]))
	lo := uint64(le.Uint32(b[12:]))<<32 | uint64(le.Uint32(b[8:]))
	scale := min(int(flags>>16&0xFF), 28)
	// The 96-bit magnitude hi:lo in decimal, from the last digit.
	var buf [40]byte
	n := len(buf)
	for {
		var r uint64
		hi, r = bits.Div64(0, hi, 10)
		lo, r = bits.Div64(r, lo, 10)
		n--
		buf[n] = byte('0' + r)
		if hi == 0 && lo == 0 {
			break
		}
	}
	for len(buf)-n <= scale {
		n--
		buf[n] = '0'
	}
	s := buf[n:]
	if quote {
		dst = append(dst, '"')
	}
	if flags&0x80000000 != 0 {
		dst = append(dst, '-')
	}
	dst = append(dst, s[:len(s)-scale]...)
	if scale > 0 {
		dst = append(dst, '.')
		dst = append(dst, s[len(s)-scale:]...)
	}
	if quote {
		dst = append(dst, '"')
	}
	return dst
}

// appendSID appends a SID as "S-1-5-21-…" (nothing for none).
func appendSID(dst, b []byte) []byte {
	if len(b) < 8 {
		return dst
	}
	var auth uint64
	for _, c := range b[2:8] {
		auth = auth<<8 | uint64(c)
	}
	dst = append(dst, "S-"...)
	dst = strconv.AppendUint(dst, uint64(b[0]), 10)
	dst = append(dst, '-')
	dst = strconv.AppendUint(dst, auth, 10)
	for k := 8; k+4 <= len(b); k += 4 {
		dst = append(dst, '-')
		dst = strconv.AppendUint(dst, uint64(le.Uint32(b[k:])), 10)
	}
	return dst
}

// appendIPv4 appends 4 bytes in network order as an address.
func appendIPv4(dst, b []byte) []byte { return netip.AddrFrom4([4]byte(b)).AppendTo(dst) }

// appendAddress appends binary data a format says is an address, and
// reports whether it was one.
func appendAddress(dst []byte, format Format, b []byte) ([]byte, bool) {
	switch {
	case format == FormatIPv6 && len(b) == 16:
		return netip.AddrFrom16([16]byte(b)).AppendTo(dst), true
	case format == FormatIPv4 && len(b) == 4:
		return appendIPv4(dst, b), true
	case format == FormatSocketAddress:
		return appendSocketAddress(dst, b)
	}
	return dst, false
}

// appendSocketAddress appends a SOCKADDR_IN or SOCKADDR_IN6 as
// "a.b.c.d:port" or "[v6]:port".
func appendSocketAddress(dst, b []byte) ([]byte, bool) {
	if len(b) < 2 {
		return dst, false
	}
	switch le.Uint16(b) {
	case 2: // AF_INET
		if len(b) >= 8 {
			return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), binary.BigEndian.Uint16(b[2:])).AppendTo(dst), true
		}
	case 23: // AF_INET6
		if len(b) >= 24 {
			return netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[8:24])), binary.BigEndian.Uint16(b[2:])).AppendTo(dst), true
		}
	}
	return dst, false
}

// appendJSONUTF8 appends UTF-8 bytes b as a quoted JSON string, escaped
// as encoding/json escapes; an invalid byte becomes U+FFFD.
func appendJSONUTF8(dst []byte, b []byte) []byte {
	dst = append(dst, '"')
	for len(b) > 0 {
		c := b[0]
		if c < utf8.RuneSelf {
			b = b[1:]
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c >= 0x20:
				dst = append(dst, c)
			case c == '\b':
				dst = append(dst, '\\', 'b')
			case c == '\f':
				dst = append(dst, '\\', 'f')
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			continue
		}
		r, n := utf8.DecodeRune(b)
		b = b[n:]
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			continue
		}
		dst = utf8.AppendRune(dst, r)
	}
	return append(dst, '"')
}

// appendValidUTF8 appends b with each invalid byte as U+FFFD, as
// appendJSONUTF8 reads it.
func appendValidUTF8(dst, b []byte) []byte {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		b = b[n:]
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}

// uvarint decodes a LEB128 uint64 of at most 10 bytes; n is 0 when b ends
// first and -1 when the value overflows.
func uvarint(b []byte) (v uint64, n int) {
	var shift uint
	for i, x := range b {
		if i == 10 || i == 9 && x > 1 {
			return 0, -1
		}
		v |= uint64(x&0x7f) << shift
		if x < 0x80 {
			return v, i + 1
		}
		shift += 7
	}
	return 0, 0
}
