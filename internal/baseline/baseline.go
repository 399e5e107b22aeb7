// Package baseline parses the ETW event dumps that PerfView's TraceEvent
// test suite keeps as baselines (GeneralParsing.cs writes them), such as
// gcevents.baseline.txt and net.4.5.2.x86.baseline.txt, so tests can compare
// a decoder's output with TraceEvent's.
//
// A baseline has one line per dumped event (at most five per event name),
//
//	EVENT 8,184.674: Microsoft-Windows-DotNETRuntime/Runtime/Start PID=179596; TID=168672; PName=Process(179596); ProceNum=4; DataLen=203; ClrInstanceID=8; Sku=CoreClr; …
//
// then one line per event name with its total count,
//
//	COUNT Microsoft-Windows-DotNETRuntime/GC/Start:2
//
// The time is TraceEvent's TimeStampRelativeMSec formatted "n3" (en-US
// thousands separators, rounded to a microsecond). Payload values are
// TraceEvent's PayloadString: thousands separators, hex pointers, enum
// names, DateTimes as "yy/MM/dd HH:mm:ss.ffffff" in UTC; any value longer
// than 20 characters is cut to 20 and "..." is appended.
package baseline

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Field is one payload field=value pair of an event line, in line order.
type Field struct {
	Name  string
	Value string
}

// Event is one EVENT line.
type Event struct {
	Line     int     // 1-based line number in the file
	MSecText string  // the time as written, e.g. "8,184.674"
	MSec     float64 // the time in milliseconds since the session start
	// Provider is the provider name ("Microsoft-Windows-DotNETRuntime",
	// "Windows Kernel", …), Name the event name after the first slash
	// ("GC/Start", "EventTrace", "Runtime/Start", …).
	Provider string
	Name     string
	// Task and Opcode split Name at its first slash; Opcode is empty when
	// the name has no slash.
	Task, Opcode string
	PID, TID     int64 // -1 when TraceEvent shows -1
	PName        string
	ProcNum      int
	DataLen      int
	Fields       []Field // payload fields in order, after DataLen
}

// FullName returns "Provider/Name", the key of the COUNT lines.
func (e *Event) FullName() string { return e.Provider + "/" + e.Name }

// Field returns the value of the named payload field.
func (e *Event) Field(name string) (string, bool) {
	for _, f := range e.Fields {
		if f.Name == name {
			return f.Value, true
		}
	}
	return "", false
}

// Truncated reports whether a value was cut by the dumper (it ends in
// "..." after 20 characters), so only its first 20 characters compare.
// Characters, not bytes: "Microsoft® Windows® ..." is cut too.
func Truncated(v string) bool { return utf8.RuneCountInString(v) == 23 && strings.HasSuffix(v, "...") }

// TruncatedPrefix is the part of a Truncated value the dumper kept.
func TruncatedPrefix(v string) string {
	n := 0
	for i := range v {
		if n == 20 {
			return v[:i]
		}
		n++
	}
	return v
}

// File is a parsed baseline.
type File struct {
	Events []Event
	// Counts maps "Provider/Name" to the total number of such events
	// TraceEvent saw (it dumps only the first five).
	Counts map[string]int
}

// ParseFile reads and parses the baseline at path.
func ParseFile(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s:%w", path, err)
	}
	return b, nil
}

// Parse parses a baseline. Errors name the line: "12: …".
func Parse(r io.Reader) (*File, error) {
	out := &File{Counts: map[string]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		if n == 1 {
			line = strings.TrimPrefix(line, "\ufeff")
		}
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "COUNT "):
			rest := line[len("COUNT "):]
			i := strings.LastIndexByte(rest, ':')
			if i < 0 {
				return nil, fmt.Errorf("%d: COUNT line without ':'", n)
			}
			c, err := strconv.Atoi(rest[i+1:])
			if err != nil {
				return nil, fmt.Errorf("%d: COUNT: %v", n, err)
			}
			out.Counts[rest[:i]] = c
		case strings.HasPrefix(line, "EVENT "):
			e, err := parseEvent(line)
			if err != nil {
				return nil, fmt.Errorf("%d: %v", n, err)
			}
			e.Line = n
			out.Events = append(out.Events, e)
		default:
			return nil, fmt.Errorf("%d: neither an EVENT nor a COUNT line", n)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// ParseMSec parses TraceEvent's "n3" time text ("8,184.674").
func ParseMSec(s string) (float64, error) {
	return strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
}

// ParseInt parses an integer written with thousands separators
// ("-1", "65,536").
func ParseInt(s string) (int64, error) {
	return strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64)
}

func parseEvent(line string) (Event, error) {
	var e Event
	rest := line[len("EVENT "):]
	i := strings.Index(rest, ": ")
	if i < 0 {
		return e, fmt.Errorf("no ': ' after the time")
	}
	e.MSecText = rest[:i]
	ms, err := ParseMSec(e.MSecText)
	if err != nil {
		return e, fmt.Errorf("time %q: %v", e.MSecText, err)
	}
	e.MSec = ms
	rest = rest[i+2:]
	j := strings.Index(rest, " PID=")
	if j < 0 {
		return e, fmt.Errorf("no PID= after the event name")
	}
	full := rest[:j]
	k := strings.IndexByte(full, '/')
	if k < 0 {
		return e, fmt.Errorf("event name %q has no provider part", full)
	}
	e.Provider, e.Name = full[:k], full[k+1:]
	e.Task, e.Opcode = e.Name, ""
	if t := strings.IndexByte(e.Name, '/'); t >= 0 {
		e.Task, e.Opcode = e.Name[:t], e.Name[t+1:]
	}
	pairs := splitPairs(rest[j+1:])
	fixed := []string{"PID", "TID", "PName", "ProceNum", "DataLen"}
	if len(pairs) < len(fixed) {
		return e, fmt.Errorf("%d fields, want at least PID, TID, PName, ProceNum, DataLen", len(pairs))
	}
	for x, name := range fixed {
		if pairs[x].Name != name {
			return e, fmt.Errorf("field %d is %q, want %q", x, pairs[x].Name, name)
		}
	}
	if e.PID, err = ParseInt(pairs[0].Value); err != nil {
		return e, fmt.Errorf("PID: %v", err)
	}
	if e.TID, err = ParseInt(pairs[1].Value); err != nil {
		return e, fmt.Errorf("TID: %v", err)
	}
	e.PName = pairs[2].Value
	v, err := ParseInt(pairs[3].Value)
	if err != nil {
		return e, fmt.Errorf("ProceNum: %v", err)
	}
	e.ProcNum = int(v)
	if v, err = ParseInt(pairs[4].Value); err != nil {
		return e, fmt.Errorf("DataLen: %v", err)
	}
	e.DataLen = int(v)
	e.Fields = pairs[len(fixed):]
	return e, nil
}

// splitPairs splits "A=1; B=x; y; C=3; " into pairs. A piece that does not
// start with a field name and '=' belongs to the previous value (values may
// hold "; ").
func splitPairs(s string) []Field {
	var out []Field
	for _, piece := range strings.Split(s, "; ") {
		if piece == "" {
			continue
		}
		eq := strings.IndexByte(piece, '=')
		if eq > 0 && isName(piece[:eq]) {
			out = append(out, Field{Name: piece[:eq], Value: piece[eq+1:]})
			continue
		}
		if len(out) > 0 {
			out[len(out)-1].Value += "; " + piece
		}
	}
	if len(out) > 0 {
		out[len(out)-1].Value = strings.TrimSuffix(out[len(out)-1].Value, ";")
	}
	return out
}

func isName(s string) bool {
	for _, c := range s {
		if !(c == '_' || c == '.' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return s != ""
}

// FormatMSec formats milliseconds as the dumper does (.NET's
// ToString("n3")): the value is first cut to 15 significant digits, then
// rounded half away from zero to three decimals, with thousands
// separators. 11607.5885 prints as "11,607.589" even though the nearest
// float64 is a little below it, as TraceEvent prints it.
func FormatMSec(ms float64) string {
	neg := ms < 0
	if neg {
		ms = -ms
	}
	e := strconv.FormatFloat(ms, 'e', 14, 64) // d.dddddddddddddde±XX
	mant := e[0:1] + e[2:16]
	exp, _ := strconv.Atoi(e[17:])
	// digits holds the value as an integer count of 0.001 units.
	var digits []byte
	keep := exp + 1 + 3 // digits of mant that are at or above 0.001
	switch {
	case keep <= 0:
		digits = []byte{'0'}
		if keep == 0 && mant[0] >= '5' {
			digits = []byte{'1'}
		}
	case keep >= len(mant):
		digits = []byte(mant)
		for i := len(mant); i < keep; i++ {
			digits = append(digits, '0')
		}
	default:
		digits = []byte(mant[:keep])
		if mant[keep] >= '5' {
			i := len(digits) - 1
			for ; i >= 0 && digits[i] == '9'; i-- {
				digits[i] = '0'
			}
			if i < 0 {
				digits = append([]byte{'1'}, digits...)
			} else {
				digits[i]++
			}
		}
	}
	for len(digits) < 4 {
		digits = append([]byte{'0'}, digits...)
	}
	intPart, frac := string(digits[:len(digits)-3]), string(digits[len(digits)-3:])
	var b strings.Builder
	if neg && strings.Trim(string(digits), "0") != "" {
		b.WriteByte('-')
	}
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	b.WriteByte('.')
	b.WriteString(frac)
	return b.String()
}

// SameValue reports whether ours, a field value as JSON (a number, a
// string, a boolean), is the value TraceEvent printed as want. It undoes
// the printer's forms: thousands separators, hexadecimal where we print
// decimal (or the other way), "True"/"False", flag names joined by ", "
// where we join them by "|", DateTimes as "yy/MM/dd HH:mm:ss.ff" (ours are
// RFC 3339), and the cut to 20 characters.
func SameValue(ours any, want string) bool {
	var s string
	switch v := ours.(type) {
	case string:
		s = v
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			s = t.UTC().Format("06/01/02 15:04:05.000000")
		}
	case float64:
		s = strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		s = strconv.FormatBool(v)
	case json.Number:
		s = v.String()
	default:
		return false
	}
	if Truncated(want) {
		p := TruncatedPrefix(want)
		return strings.HasPrefix(s, p) || strings.HasPrefix(strings.ReplaceAll(s, "|", ", "), p) ||
			strings.HasPrefix(thousands(s), p)
	}
	if s == want || strings.EqualFold(s, want) || strings.ReplaceAll(s, "|", ", ") == want {
		return true
	}
	a, aok := parseNumber(s)
	b, bok := parseNumber(strings.ReplaceAll(want, ",", ""))
	return aok && bok && a == b
}

// thousands writes a decimal integer with en-US thousands separators, as
// the dumper does ("-2,305,843,009"); anything else is returned as it is.
func thousands(s string) string {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return s
	}
	var b strings.Builder
	if len(digits) < len(s) {
		b.WriteByte('-')
	}
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// parseNumber reads a decimal or 0x-prefixed integer, as uint64 bits.
func parseNumber(s string) (uint64, bool) {
	if h, ok := strings.CutPrefix(s, "0x"); ok {
		v, err := strconv.ParseUint(h, 16, 64)
		return v, err == nil
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return uint64(v), true
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}
