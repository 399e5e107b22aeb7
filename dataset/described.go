package dataset

import (
	"slices"
	"strconv"
	"strings"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/nettrace"
	"github.com/clrgo/clrevents/trace"
)

// describedTable is the table of an event the trace describes itself,
// and the payload columns it was made with.
type describedTable struct {
	t    *table
	cols []clrimpl.Column
}

// description is what gives an event a table of its own: the trace's
// own description of it (etl.Schemas for an ETW log: manifest-based
// providers, EventSource manifests, TraceLogging; an EventPipe event's
// metadata fields), or package etl's layout of a kernel event.
type description struct {
	s   *etl.EventSchema   // or
	m   *nettrace.Metadata // the description
	p   []byte             // the payload
	ptr int
}

func describe(e *trace.Event) (description, bool) {
	s := e.TraceSchema()
	if s == nil && e.ETL() != nil {
		s = etl.KernelSchema(e.ETL())
	}
	if s != nil {
		return description{s: s, p: e.Payload(), ptr: e.PointerSize()}, true
	}
	if m := e.Metadata(); m != nil && len(m.Fields) > 0 && m.FieldsErr == nil {
		return description{m: m, p: e.Payload()}, true
	}
	return description{}, false
}

// descKey finds an event's table by its description and name: a kernel
// layout serves several opcodes (DiskIO Read and Write), each its own
// table; other descriptions are one event's.
type descKey struct {
	desc any
	name string
}

func (d *description) key(e *trace.Event) descKey {
	if d.s != nil {
		return descKey{d.s, e.Name()}
	}
	return descKey{d.m, e.Name()}
}

func (d *description) columns() []clrimpl.Column {
	if d.s != nil {
		return d.s.Columns()
	}
	return d.m.Columns()
}

// check appends the payload as JSON, which fails where a row would.
func (d *description) check(dst []byte) ([]byte, error) {
	if d.s != nil {
		return d.s.AppendJSON(dst, d.p, d.ptr)
	}
	return d.m.AppendJSON(dst, d.p)
}

func (d *description) row(a clrimpl.ColumnAppender) error {
	if d.s != nil {
		return d.s.AppendColumns(a, d.p, d.ptr)
	}
	return d.m.AppendColumns(a, d.p)
}

// describedRow writes e as a row of its described table, which it
// returns, and reports whether it did: not when nothing describes e, when
// its payload does not fit the description (the generic table then keeps
// it, with the error, as for any event), or when a table of the same name
// has other columns. The row is complete but for end.
func (tw *traceWriter) describedRow(e *trace.Event, seq int64, st *Stats) (*table, bool, error) {
	desc, ok := describe(e)
	if !ok {
		return nil, false, nil
	}
	dt, ok, err := tw.describedTableOf(e, &desc)
	if !ok || err != nil {
		return nil, ok, err
	}
	t := dt.t
	t.begin()
	if err := tw.header(t, e, seq, nil, st); err != nil {
		return t, true, err
	}
	if err := desc.row(t); err != nil {
		t.abandon()
		return nil, false, nil
	}
	return t, true, nil
}

// describedTableOf finds or makes the table of e's description, once per
// description; ok is false when a table of the same name has other
// columns.
func (tw *traceWriter) describedTableOf(e *trace.Event, desc *description) (dt *describedTable, ok bool, err error) {
	k := desc.key(e)
	if dt, seen := tw.byDesc[k]; seen {
		return dt, dt != nil, nil
	}
	// A table is made only for an event that fits its description, so
	// that no table holds no rows; later events that do not fit leave
	// their row (table.abandon).
	check, cerr := desc.check(tw.check[:0])
	tw.check = check
	if cerr != nil {
		return nil, false, nil
	}
	cols := desc.columns()
	prov, dir := pathPart(e.Provider()), describedDir(e)
	key := prov + "/" + dir
	dt = tw.described[key]
	switch {
	case dt == nil:
		t, err := tw.newTable([]string{"events", "provider=" + prov, "event=" + dir}, dir, describedColumns(cols))
		if err != nil {
			return nil, true, err
		}
		if tw.described == nil {
			tw.described = map[string]*describedTable{}
			tw.byDesc = map[descKey]*describedTable{}
		}
		dt = &describedTable{t: t, cols: cols}
		tw.described[key] = dt
	case !slices.Equal(dt.cols, cols):
		dt = nil
	}
	tw.byDesc[k] = dt
	return dt, dt != nil, nil
}

// describedDir names a described event's table: its name as the JSON
// lines give it, with "/" made "_" ("TcpIp_SendIPV6"). Versions share the
// table, as a trace rarely holds two of one described event; engines read
// the files of several traces together by name (union_by_name), and a
// second layout within one trace goes to the generic table.
func describedDir(e *trace.Event) string {
	name := e.Name()
	if name == "" {
		name = "id" + strconv.Itoa(int(e.ID())) + "_v" + strconv.Itoa(int(e.Version()))
	}
	return pathPart(name)
}

// pathPart makes a name fit a directory name and a hive partition value.
func pathPart(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '/' || r == '\\' || r == '=' || r == ':' || r < 0x20:
			return '_'
		}
		return r
	}, s)
}

// describedColumns are the header columns, then the payload's. A payload
// column named like a header column or an earlier column in any case
// (engines fold case: TcpIp's PID against pid) gets "_field" appended.
func describedColumns(cols []clrimpl.Column) []column {
	out := append([]column(nil), headerColumns...)
	taken := map[string]bool{}
	for _, c := range headerColumns {
		taken[strings.ToLower(c.name)] = true
	}
	for _, c := range cols {
		name := c.Name
		for taken[strings.ToLower(name)] {
			name += "_field"
		}
		taken[strings.ToLower(name)] = true
		out = append(out, column{name: name, kind: c.Kind})
	}
	return out
}
