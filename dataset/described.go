package dataset

import (
	"slices"
	"strings"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/trace"
)

// describedTable is the table of an event an ETW log describes itself,
// and the payload columns it was made with.
type describedTable struct {
	t    *table
	cols []clrimpl.Column
}

// describedSchema is the description of e that gives it a table of its
// own: the trace's (etl.Schemas: manifest-based providers, EventSources,
// TraceLogging) or the kernel event layouts of package etl.
func describedSchema(e *trace.Event) *etl.EventSchema {
	if s := e.TraceSchema(); s != nil {
		return s
	}
	if x := e.ETL(); x != nil {
		return etl.KernelSchema(x)
	}
	return nil
}

// describedRow writes e as a row of its described table, which it
// returns, and reports whether it did: not when nothing describes e, when
// its payload does not fit the description (the generic table then keeps
// it, with the error, as for any event), or when a table of the same name
// has other columns. The row is complete but for end.
func (tw *traceWriter) describedRow(e *trace.Event, seq int64, st *Stats) (*table, bool, error) {
	s := describedSchema(e)
	if s == nil {
		return nil, false, nil
	}
	// The row is only begun once the payload is known to fit: a row cut
	// short would leave the table's columns uneven.
	check, cerr := s.AppendJSON(tw.check[:0], e.Payload(), e.PointerSize())
	tw.check = check
	if cerr != nil {
		return nil, false, nil
	}
	cols := s.Columns()
	prov, dir := pathPart(e.Provider()), describedDir(e)
	key := prov + "/" + dir
	dt := tw.described[key]
	if dt == nil {
		t, err := tw.newTable([]string{"events", "provider=" + prov, "event=" + dir}, dir, describedColumns(cols))
		if err != nil {
			return nil, true, err
		}
		if tw.described == nil {
			tw.described = map[string]*describedTable{}
		}
		dt = &describedTable{t: t, cols: cols}
		tw.described[key] = dt
	} else if !slices.Equal(dt.cols, cols) {
		return nil, false, nil
	}
	t := dt.t
	t.begin()
	if err := tw.header(t, e, seq, nil, st); err != nil {
		return t, true, err
	}
	return t, true, s.AppendColumns(t, e.Payload(), e.PointerSize())
}

// describedDir names a described event's table: its name as the JSON
// lines give it, with "/" made "_" ("TcpIp_SendIPV6"). Versions share the
// table, as a trace rarely holds two of one described event; engines read
// the files of several traces together by name (union_by_name), and a
// second layout within one trace goes to the generic table.
func describedDir(e *trace.Event) string { return pathPart(e.Name()) }

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
