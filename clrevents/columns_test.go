package clrevents

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/clrimpl"
)

// checkingAppender records one row and checks each call against the
// column list's kinds.
type checkingAppender struct {
	cols    []Column
	i       int
	errs    []string
	vals    []any
	scratch []byte
}

// next checks the next column's kind and returns its index, or -1.
func (c *checkingAppender) next(ok bool, call string) int {
	if c.i >= len(c.cols) {
		c.errs = append(c.errs, fmt.Sprintf("%s past the %d columns", call, len(c.cols)))
		return -1
	}
	if !ok {
		c.errs = append(c.errs, fmt.Sprintf("column %s (%s) got %s", c.cols[c.i].Name, c.cols[c.i].Kind, call))
	}
	c.i++
	if c.vals == nil {
		return -1 // not recording: nothing is boxed, so nothing allocates
	}
	return c.i - 1
}

func (c *checkingAppender) kind() ColumnKind {
	if c.i < len(c.cols) {
		return c.cols[c.i].Kind
	}
	return 0
}

func (c *checkingAppender) Bool(v bool) {
	if i := c.next(c.kind() == clrimpl.ColumnBool, "Bool"); i >= 0 {
		c.vals[i] = v
	}
}

func (c *checkingAppender) Int(v int64) {
	if i := c.next(c.kind().Signed(), "Int"); i >= 0 {
		c.vals[i] = v
	}
}

func (c *checkingAppender) Uint(v uint64) {
	if i := c.next(c.kind().Unsigned(), "Uint"); i >= 0 {
		c.vals[i] = v
	}
}

func (c *checkingAppender) Float(v float64) {
	if i := c.next(c.kind() == clrimpl.ColumnFloat32 || c.kind() == clrimpl.ColumnFloat64, "Float"); i >= 0 {
		c.vals[i] = v
	}
}

func (c *checkingAppender) GUID(v GUID) {
	if i := c.next(c.kind() == clrimpl.ColumnGUID, "GUID"); i >= 0 {
		c.vals[i] = v
	}
}

func (c *checkingAppender) Bytes(v []byte) {
	k := c.kind()
	if i := c.next(k == clrimpl.ColumnString || k == clrimpl.ColumnBinary || k == clrimpl.ColumnJSON, "Bytes"); i >= 0 {
		c.vals[i] = string(v)
	}
}

func (c *checkingAppender) Scratch() []byte { return c.scratch[:0] }

// TestAppendColumns: for every event type, AppendColumns makes exactly one
// call per column of EventInfo.Columns, of the column's kind; the values
// are those of AppendJSON (hex fields as numbers, enums as number and
// name, arrays as the JSON array itself); nothing allocates.
func TestAppendColumns(t *testing.T) {
	for _, ev := range sampleEvents() {
		info := ev.Info()
		c := &checkingAppender{cols: info.Columns, vals: make([]any, len(info.Columns)), scratch: make([]byte, 0, 4096)}
		ev.AppendColumns(c)
		if c.i != len(info.Columns) {
			c.errs = append(c.errs, fmt.Sprintf("%d calls for %d columns", c.i, len(info.Columns)))
		}
		if len(c.errs) > 0 {
			t.Errorf("%s: %s", info, strings.Join(c.errs, "; "))
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(ev.AppendJSON(nil), &obj); err != nil {
			t.Fatalf("%s: %v", info, err)
		}
		for i, col := range info.Columns {
			name, isName := strings.CutSuffix(col.Name, "_name")
			raw, ok := obj[name]
			if !ok {
				t.Errorf("%s: column %s has no JSON field", info, col.Name)
				continue
			}
			if isName {
				if want, _ := strconv.Unquote(string(raw)); c.vals[i] != want {
					t.Errorf("%s: %s = %q, JSON has %s", info, col.Name, c.vals[i], raw)
				}
				continue
			}
			if got, want := columnJSON(col, c.vals[i]), string(raw); got != want && !isEnumJSON(info.Columns, i, raw) {
				t.Errorf("%s: %s = %s, JSON has %s", info, col.Name, got, want)
			}
		}
		c.vals = nil
		if allocs := testing.AllocsPerRun(10, func() { c.i = 0; ev.AppendColumns(c) }); allocs != 0 {
			t.Errorf("%s: AppendColumns allocates %v times", info, allocs)
		}
	}
}

// isEnumJSON: the number column of a map-bound field, whose JSON is the
// name (checked through the name column).
func isEnumJSON(cols []Column, i int, raw json.RawMessage) bool {
	return i+1 < len(cols) && cols[i+1].Name == cols[i].Name+"_name" && strings.HasPrefix(string(raw), `"`)
}

// columnJSON writes a recorded column value as AppendJSON writes the field.
func columnJSON(col Column, v any) string {
	switch v := v.(type) {
	case uint64:
		if col.Hex {
			return `"0x` + strconv.FormatUint(v, 16) + `"`
		}
		return strconv.FormatUint(v, 10)
	case int64:
		if col.Hex {
			return `"0x` + strconv.FormatUint(uint64(v)&(1<<col.Kind.Bits()-1), 16) + `"`
		}
		return strconv.FormatInt(v, 10)
	case GUID:
		return `"` + v.String() + `"`
	case string:
		switch col.Kind {
		case clrimpl.ColumnJSON:
			return v
		case clrimpl.ColumnBinary:
			return `"0x` + fmt.Sprintf("%x", v) + `"`
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
