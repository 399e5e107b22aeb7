package dataset

import (
	"slices"
	"strconv"
	"strings"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/trace"
)

// describedTable is the table of an event the trace describes itself,
// and the payload columns it was made with.
type describedTable struct {
	t    *table
	cols []clrimpl.Column
}

// describedRow writes e as a row of its described table, which it
// returns, and reports whether it did: not when nothing describes e (its
// Descriptor: the trace's own description of it or an EventPipe event's
// metadata), when its payload does not fit the
// description (the generic table then keeps it, with the error, as for
// any event), or when a table of the same name has other columns. The row
// is complete but for end.
func (tw *traceWriter) describedRow(e *trace.Event, seq int64, st *Stats) (*table, bool, error) {
	desc := e.Descriptor()
	if desc == nil {
		return nil, false, nil
	}
	dt, ok, err := tw.describedTableOf(e, desc)
	if !ok || err != nil {
		return nil, ok, err
	}
	t := dt.t
	t.begin()
	if err := tw.header(t, e, seq, nil, st); err != nil {
		return t, true, err
	}
	if err := desc.Fields.AppendColumns(t, e.Payload(), e.PointerSize()); err != nil {
		t.abandon()
		return nil, false, nil
	}
	return t, true, nil
}

// describedTableOf finds or makes the table of e's description, once per
// description; ok is false when a table of the same name has other
// columns.
func (tw *traceWriter) describedTableOf(e *trace.Event, desc *clrimpl.Descriptor) (dt *describedTable, ok bool, err error) {
	if dt, seen := tw.byDesc[desc]; seen {
		return dt, dt != nil, nil
	}
	// A table is made only for an event that fits its description, so
	// that no table holds no rows; later events that do not fit leave
	// their row (table.abandon).
	check, cerr := desc.Fields.AppendJSON(tw.check[:0], e.Payload(), e.PointerSize())
	tw.check = check
	if cerr != nil {
		return nil, false, nil
	}
	cols := desc.Columns
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
			tw.byDesc = map[*clrimpl.Descriptor]*describedTable{}
		}
		dt = &describedTable{t: t, cols: cols}
		tw.described[key] = dt
	case !slices.Equal(dt.cols, cols):
		dt = nil
	}
	tw.byDesc[desc] = dt
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
// column named like a header column, a partition key (provider, event)
// or an earlier column in any case (engines fold case: the kernel's
// TcpIp events' PID against pid) gets
// "_field" appended, and so does the name column of its map after it
// (level_field and level_field_name, not level_name); a column without a
// name (a TraceLogging struct may have none), which engines refuse, is
// "unnamed".
func describedColumns(cols []clrimpl.Column) []column {
	out := append([]column(nil), headerColumns...)
	taken := map[string]bool{}
	for _, c := range headerColumns {
		taken[strings.ToLower(c.name)] = true
	}
	// The hive partition keys of the table's directories: engines that
	// read them (DuckDB by default) put the folder's value in a file
	// column of the same name.
	taken["provider"], taken["event"] = true, true
	prev, prevName := "", "" // the column before, as described and as named
	for _, c := range cols {
		name := c.Name
		switch {
		case name == "":
			name = "unnamed"
		case prev != "" && prev != prevName && name == prev+"_name":
			name = prevName + "_name"
		}
		for taken[strings.ToLower(name)] {
			name += "_field"
		}
		taken[strings.ToLower(name)] = true
		out = append(out, column{name: name, kind: c.Kind})
		prev, prevName = c.Name, name
	}
	return out
}
