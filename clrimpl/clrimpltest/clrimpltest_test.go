package clrimpltest

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/clrimpl"
)

// ping is a hand-written event type of one field, Value, a pointer-sized
// integer, with a bug to inject into one of its methods.
type ping struct {
	Value uint64
	bug   string
}

var pingDesc = &clrimpl.Descriptor{
	Provider: "Test-Provider", ID: 7, Version: 1, Name: "Ping_V1", DisplayName: "Ping_V1",
	Columns: []clrimpl.Column{{Name: "Value", Kind: clrimpl.ColumnUint64}},
}

// bug is the bug the next values made have; the table's type makes them.
var bug string

func init() {
	pingDesc.Fields = &clrimpl.EventFields{New: func() clrimpl.Event { return &ping{bug: bug} }}
}

type pingType struct{}

func (pingType) Descriptor() *clrimpl.Descriptor { return pingDesc }
func (pingType) New() clrimpl.Event              { return &ping{bug: bug} }

func (p *ping) Descriptor() *clrimpl.Descriptor { return pingDesc }

func (p *ping) Decode(b []byte, ptr int) (int, error) {
	if ptr != 4 && ptr != 8 && p.bug != "any pointer size" {
		return 0, clrimpl.ErrPointerSize
	}
	if p.bug == "allocates" {
		b = append([]byte(nil), b...)
	}
	if len(b) < ptr {
		if p.bug == "short decodes" {
			return 0, nil
		}
		if p.bug == "bare error" {
			return 0, clrimpl.ErrShortPayload
		}
		return 0, &clrimpl.DecodeError{Package: "test", Event: "Ping_V1", Field: "Value", Offset: 0, Err: clrimpl.ErrShortPayload}
	}
	if ptr == 4 {
		p.Value = uint64(binary.LittleEndian.Uint32(b))
	} else {
		p.Value = binary.LittleEndian.Uint64(b)
	}
	if p.bug == "drops a byte" {
		p.Value &^= 0xff
	}
	if p.bug == "uses all" {
		return len(b), nil
	}
	return ptr, nil
}

func (p *ping) Encode(dst []byte, ptr int) []byte {
	if ptr == 4 {
		return binary.LittleEndian.AppendUint32(dst, uint32(p.Value))
	}
	return binary.LittleEndian.AppendUint64(dst, p.Value)
}

func (p *ping) AppendJSON(dst []byte) []byte {
	dst = strconv.AppendUint(append(dst, `{"Value":`...), p.Value, 10)
	if p.bug == "bad JSON" {
		return dst
	}
	return append(dst, '}')
}

func (p *ping) AppendText(dst []byte) []byte {
	return strconv.AppendUint(append(dst, "Value="...), p.Value, 10)
}

func (p *ping) AppendColumns(a clrimpl.ColumnAppender) {
	if p.bug == "no columns" {
		return
	}
	a.Uint(p.Value)
}

// recorder is a testing.TB that keeps what the checks report.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	panic(r)
}

// run checks one sample of ping with the bug and returns what was
// reported.
func run(t *testing.T, b string, rest []string, samples ...clrimpl.Event) (errs []string) {
	t.Helper()
	bug = b
	defer func() { bug = "" }()
	table := clrimpl.NewTable("test", []clrimpl.ProviderInfo{{Name: "Test-Provider", Short: "Test"}}, []clrimpl.EventType{pingType{}})
	r := &recorder{TB: t}
	defer func() {
		if p := recover(); p != nil && p != r {
			panic(p)
		}
		errs = r.errs
	}()
	Samples(r, table, samples, rest...)
	return r.errs
}

// TestSamples checks that a correct event type passes and that each bug
// is reported, naming what is wrong.
func TestSamples(t *testing.T) {
	if errs := run(t, "", nil, &ping{Value: 0x01020304}); len(errs) != 0 {
		t.Fatalf("a correct type: %q", errs)
	}
	for _, c := range []struct{ bug, want string }{
		{"drops a byte", "encodes to"},
		{"uses all", "with 3 bytes more: decoded 11 bytes"},
		{"bad JSON", "invalid JSON"},
		{"no columns", "appended 0 values for 1 columns"},
		{"bare error", "want a *clrimpl.DecodeError"},
		{"allocates", "Decode allocates"},
		{"any pointer size", "yet it decodes with a pointer size of 6"},
	} {
		errs := run(t, c.bug, nil, &ping{Value: 0x01020304, bug: c.bug})
		if !strings.Contains(strings.Join(errs, "\n"), c.want) {
			t.Errorf("bug %q: reported %q, want a message holding %q", c.bug, errs, c.want)
		}
		for _, e := range errs {
			if !strings.HasPrefix(e, "Test-Provider/Ping_V1") {
				t.Errorf("bug %q: %q does not name the event type", c.bug, e)
			}
		}
	}
	if errs := run(t, "", nil); len(errs) != 1 || !strings.Contains(errs[0], "0 samples for the 1 event types") {
		t.Errorf("no samples: %q", errs)
	}
}

// TestRestLast checks the cuts of a type whose payload decodes when cut:
// an error unless its last field is named as taking the rest, and then
// only when what it decoded is the bytes before the cut.
func TestRestLast(t *testing.T) {
	ev := func() clrimpl.Event { return &ping{Value: 1, bug: "short decodes"} }
	errs := run(t, "short decodes", nil, ev())
	if !strings.Contains(strings.Join(errs, "\n"), "cut at 0 of 4: <nil>; want a *clrimpl.DecodeError") {
		t.Errorf("a cut that decodes, not named: %q", errs)
	}
	errs = run(t, "short decodes", []string{"Ping_V1"}, ev())
	if !strings.Contains(strings.Join(errs, "\n"), "cut at 0 of 4: decoded 0 bytes (0 at the cut before), to a value that does not encode to them") {
		t.Errorf("a cut that decodes to a value that is not the bytes before it: %q", errs)
	}
}
