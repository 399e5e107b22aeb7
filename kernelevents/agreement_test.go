package kernelevents_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/kernelevents"
	"github.com/clrgo/clrevents/trace"
)

// The ETW logs whose kernel events the agreement test decodes. The ones in
// ../shared are there only when the checkout sits beside it.
var agreementTraces = []struct {
	path   string
	shared bool
}{
	{"../testdata/traces/gcevents.etl.zip", false},
	{"../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip", false},
	{"../../shared/fixtures/traces/perfview/net.4.5.2.x86.etl.zip", true},
}

// isClassic reports whether e has a classic header: a kernel event or a
// MOF class's (KernelTraceControl's ImageID and SysConfig), whose opcode
// is the event ID kernelevents keys it by.
func isClassic(e *etl.Event) bool {
	switch e.HeaderKind {
	case etl.SystemHeader, etl.CompactSystemHeader, etl.PerfInfoHeader, etl.TraceHeader, etl.InstanceHeader:
		return true
	}
	return false
}

// ptrSize is the event's pointer size as etl's parsers take it.
func ptrSize(e *etl.Event) int {
	if e.PointerSize == 4 {
		return 4
	}
	return 8
}

// decodeKernel decodes e with the generated package: by its class GUID,
// its opcode as the event ID and its version, an unknown newer version
// with the newest older one (as etl's layouts picked the newest not newer
// than the event). ok is false when kernelevents has no type for it.
func decodeKernel(d *kernelevents.Decoder, e *etl.Event) (kernelevents.Event, int, bool, error) {
	if !isClassic(e) {
		return nil, 0, false, nil
	}
	p, ok := kernelevents.ProviderByGUID(e.ProviderGUID)
	if !ok {
		return nil, 0, false, nil
	}
	ev, n, err := d.Decode(p, uint16(e.Opcode), e.Version, ptrSize(e), e.Payload)
	if errors.Is(err, kernelevents.ErrUnknownEvent) {
		return nil, 0, false, nil
	}
	return ev, n, true, err
}

// TestDecodesTraces decodes every kernel event of the ETW logs at hand
// and holds each to its own descriptions: the descriptor writes the
// payload's JSON as the value does, the columns hold the JSON's values,
// a value written again with 4-byte pointers (as a 32-bit kernel logs
// it) decodes to the same JSON, and the log header event states what the
// log's header does.
func TestDecodesTraces(t *testing.T) {
	for _, tr := range agreementTraces {
		t.Run(tr.path[strings.LastIndexByte(tr.path, '/')+1:], func(t *testing.T) {
			if _, err := os.Stat(tr.path); err != nil && tr.shared {
				t.Skipf("%s: not here (../shared sits beside a checkout of the workspace, not a fresh clone)", tr.path)
			}
			decodeTrace(t, tr.path)
		})
	}
}

func decodeTrace(t *testing.T, path string) {
	r, err := etl.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	d := kernelevents.NewDecoder()
	d.OlderVersions = true
	failures := 0
	fail := func(e *etl.Event, format string, args ...any) {
		t.Helper()
		failures++
		if failures <= 20 {
			t.Errorf("event at offset %d (class %s opcode %d version %d, %d bytes): %s", e.Offset, e.ProviderGUID, e.Opcode, e.Version, len(e.Payload), fmt.Sprintf(format, args...))
		}
	}
	decoded := map[string]int{}
	var genJSON []byte
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			var de *etl.DamageError
			if errors.As(err, &de) {
				continue
			}
			t.Fatal(err)
		}
		ev, n, known, decErr := decodeKernel(d, e)
		if !known || decErr != nil {
			continue
		}
		name := ev.Info().DisplayName
		if n > len(e.Payload) {
			fail(e, "%s: decoded %d of %d bytes", name, n, len(e.Payload))
		}
		genJSON = ev.AppendJSON(genJSON[:0])
		if out, err := ev.Descriptor().Fields.AppendJSON(nil, e.Payload, ptrSize(e)); err != nil || !bytes.Equal(out, genJSON) {
			fail(e, "%s: the descriptor's JSON %s (%v) is not the value's %s", name, out, err, genJSON)
		}
		if msg := columnsMatchJSON(ev, genJSON); msg != "" {
			fail(e, "%s: %s", name, msg)
		}
		if h, ok := ev.(*kernelevents.EventTraceHeaderV2); ok {
			if msg := sameHeader(r.Header(), h); msg != "" {
				fail(e, "%s: %s", name, msg)
			}
		} else if ptrSize(e) == 8 && !bigPointers(ev) {
			got := ev.Info().New()
			if _, err := got.Decode(ev.Encode(nil, 4), 4); err != nil || !bytes.Equal(got.AppendJSON(nil), genJSON) {
				fail(e, "%s, written with 4-byte pointers: %s (%v), want %s", name, got.AppendJSON(nil), err, genJSON)
			}
		}
		decoded[name]++
	}
	if len(decoded) == 0 || failures > 0 {
		t.Fatalf("%d failures; decoded %v", failures, decoded)
	}
	t.Logf("%d kernel event types decoded: %v", len(decoded), decoded)
}

// bigPointers reports whether one of ev's pointer-sized values does not
// fit 4 bytes (a 64-bit address), so that a 32-bit form cannot hold it.
func bigPointers(ev kernelevents.Event) bool {
	b8 := ev.Encode(nil, 8)
	b4 := ev.Encode(nil, 4)
	got := ev.Info().New()
	if _, err := got.Decode(b4, 4); err != nil {
		return true
	}
	return !bytes.Equal(got.Encode(nil, 8), b8)
}

// sameHeader compares the log header etl read with the decoded header
// event.
func sameHeader(want *etl.LogHeader, h *kernelevents.EventTraceHeaderV2) string {
	got := []any{h.BufferSize, h.Version, h.ProviderVersion, h.NumberOfProcessors, h.EndTime.Time(), h.TimerResolution,
		h.MaxFileSize, h.LogFileMode, h.BuffersWritten, h.StartBuffers, h.PointerSize, h.EventsLost, h.CPUSpeed,
		h.UtcOffsetMinutes, h.BootTime.Time(), h.PerfFreq, h.StartTime.Time(), h.ReservedFlags, h.BuffersLost,
		h.SessionName.String(), h.LogFileName.String()}
	w := []any{want.BufferSize, want.Version, want.ProviderVersion, want.NumberOfProcessors, want.EndTime, want.TimerResolution,
		want.MaximumFileSize, want.LogFileMode, want.BuffersWritten, want.StartBuffers, want.PointerSize, want.EventsLost, want.CPUSpeedMHz,
		want.UTCOffsetMinutes, want.BootTime, want.PerfFreq, want.StartTime, want.ClockType, want.BuffersLost,
		want.SessionName, want.LogFileName}
	if g, ww := fmt.Sprint(got...), fmt.Sprint(w...); g != ww {
		return fmt.Sprintf("header values differ:\n etl %s\n gen %s", ww, g)
	}
	return ""
}

// columnsMatchJSON checks that the event's columns hold what its JSON
// holds, as clrdump's CSV writes both: numbers as they are (hex columns
// as 0x…), strings without quotes, JSON columns as they are.
func columnsMatchJSON(ev kernelevents.Event, js []byte) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(js, &m); err != nil {
		return fmt.Sprintf("JSON %s does not parse: %v", js, err)
	}
	c := &textAppender{cols: ev.Descriptor().Columns}
	ev.AppendColumns(c)
	if c.i != len(c.cols) {
		return fmt.Sprintf("%d column values for %d columns", c.i, len(c.cols))
	}
	// A map-bound field has a number column and a name column
	// (Flags_name); its JSON member is the name.
	names := 0
	for i, col := range c.cols {
		if i > 0 && col.Name == c.cols[i-1].Name+"_name" {
			names++
		}
	}
	if len(c.cols)-names != len(m) {
		return fmt.Sprintf("%d columns (%d of them names) for %d JSON members", len(c.cols), names, len(m))
	}
	for i, col := range c.cols {
		if i+1 < len(c.cols) && c.cols[i+1].Name == col.Name+"_name" {
			continue // checked through its name column
		}
		raw, ok := m[strings.TrimSuffix(col.Name, "_name")]
		if !ok {
			return fmt.Sprintf("column %s is no JSON member", col.Name)
		}
		want := string(raw)
		var s string
		if json.Unmarshal(raw, &s) == nil {
			want = s
		}
		if c.vals[i] != want {
			return fmt.Sprintf("column %s is %q, its JSON %s", col.Name, c.vals[i], raw)
		}
	}
	return ""
}

// textAppender keeps each column's value as text, the way clrdump's CSV
// writes it.
type textAppender struct {
	cols []clrimpl.Column
	vals []string
	i    int
}

func (c *textAppender) add(s string) {
	c.vals = append(c.vals, s)
	c.i++
}

func (c *textAppender) hex() bool { return c.i < len(c.cols) && c.cols[c.i].Hex }

func (c *textAppender) Bool(v bool) { c.add(strconv.FormatBool(v)) }
func (c *textAppender) Int(v int64) {
	if c.hex() {
		c.add("0x" + strconv.FormatUint(uint64(v), 16))
		return
	}
	c.add(strconv.FormatInt(v, 10))
}
func (c *textAppender) Uint(v uint64) {
	if c.hex() {
		c.add("0x" + strconv.FormatUint(v, 16))
		return
	}
	c.add(strconv.FormatUint(v, 10))
}
func (c *textAppender) Float(v float64)     { c.add(strconv.FormatFloat(v, 'g', -1, 64)) }
func (c *textAppender) GUID(v clrimpl.GUID) { c.add(v.String()) }
func (c *textAppender) Bytes(v []byte)      { c.add(string(v)) }
func (c *textAppender) Scratch() []byte     { return nil }

var _ clrimpl.ColumnAppender = (*textAppender)(nil)

// TestNamesAgreeWithTrace checks that every kernel event of the logs at
// hand is named by its descriptor as package trace names it today
// (trace/kernel.go's tables): provider and "Task/Opcode" name.
func TestNamesAgreeWithTrace(t *testing.T) {
	for _, tr := range agreementTraces {
		t.Run(tr.path[strings.LastIndexByte(tr.path, '/')+1:], func(t *testing.T) {
			if _, err := os.Stat(tr.path); err != nil && tr.shared {
				t.Skipf("%s: not here (../shared sits beside a checkout of the workspace, not a fresh clone)", tr.path)
			}
			r, err := trace.Open(tr.path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			d := kernelevents.NewDecoder()
			d.OlderVersions = true
			names := map[string]int{}
			for {
				e, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				p, ok := kernelevents.ProviderByGUID(e.ProviderGUID())
				if !ok {
					continue
				}
				ptr := e.PointerSize()
				if ptr != 4 {
					ptr = 8
				}
				ev, _, err := d.Decode(p, uint16(e.Opcode()), e.Version(), ptr, e.Payload())
				if err != nil {
					continue
				}
				desc := ev.Descriptor()
				if desc.Provider != e.Provider() || desc.DisplayName != e.Name() {
					t.Errorf("%s version %d: kernelevents names it %s/%s, trace %s/%s", ev.Info().Name, e.Version(), desc.Provider, desc.DisplayName, e.Provider(), e.Name())
				}
				names[desc.Provider+"/"+desc.DisplayName]++
			}
			if len(names) == 0 {
				t.Fatal("no kernel event named")
			}
			t.Logf("%d names agree", len(names))
		})
	}
}
