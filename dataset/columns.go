package dataset

import (
	"github.com/clrgo/clrevents/clrimpl"
)

// headerColumns start every row of the event and generic tables. Their
// names are lower case with underscores, and no field's Go name matches
// one in any case (engines such as DuckDB fold case): a field named ID or
// Size exists, so the header says event_id and payload_size.
var headerColumns = []column{
	{name: "trace", kind: clrimpl.ColumnString},
	{name: "seq", kind: clrimpl.ColumnInt64, delta: true},
	{name: "time", kind: clrimpl.ColumnInt64, time: true, delta: true},
	{name: "event_id", kind: clrimpl.ColumnUint16},
	{name: "event_version", kind: clrimpl.ColumnUint8},
	{name: "task", kind: clrimpl.ColumnUint16},
	{name: "opcode", kind: clrimpl.ColumnUint8},
	{name: "level", kind: clrimpl.ColumnUint8},
	{name: "keywords", kind: clrimpl.ColumnUint64},
	{name: "pid", kind: clrimpl.ColumnInt64, optional: true},
	{name: "tid", kind: clrimpl.ColumnInt64, optional: true},
	{name: "cpu", kind: clrimpl.ColumnInt32, optional: true},
	{name: "payload_size", kind: clrimpl.ColumnInt32},
	{name: "activity", kind: clrimpl.ColumnGUID, optional: true},
	{name: "related_activity", kind: clrimpl.ColumnGUID, optional: true},
	{name: "stack_id", kind: clrimpl.ColumnInt64, optional: true},
	{name: "extra", kind: clrimpl.ColumnBinary, optional: true},
}

// HeaderColumns are the names of the columns that start every row of the
// event and generic tables, in order.
func HeaderColumns() []string {
	out := make([]string, len(headerColumns))
	for i, c := range headerColumns {
		out[i] = c.name
	}
	return out
}

// eventColumns are the columns of a generated event type's table: the
// header, then the payload's, named as describedColumns names them (the
// kernel's TcpIp events have a PID; no CLR event has a field named like
// a header column).
func eventColumns(payload []clrimpl.Column) []column { return describedColumns(payload) }

var genericColumns = append(append([]column(nil), headerColumns...),
	column{name: "provider", kind: clrimpl.ColumnString},
	column{name: "event", kind: clrimpl.ColumnString},
	column{name: "fields", kind: clrimpl.ColumnJSON, optional: true},
	column{name: "error", kind: clrimpl.ColumnString, optional: true},
	column{name: "payload", kind: clrimpl.ColumnBinary, optional: true},
)

// stacksColumns: one row per distinct stack of a trace.
var stacksColumns = []column{
	{name: "trace", kind: clrimpl.ColumnString},
	{name: "stack_id", kind: clrimpl.ColumnInt64},
	{name: "ips", kind: clrimpl.ColumnUint64, list: true}, // innermost first
}

var tracesColumns = []column{
	{name: "trace", kind: clrimpl.ColumnString},
	{name: "format", kind: clrimpl.ColumnString},
	{name: "format_version", kind: clrimpl.ColumnInt32},
	{name: "start_time", kind: clrimpl.ColumnInt64, time: true},
	{name: "clock_frequency", kind: clrimpl.ColumnInt64},
	{name: "pointer_size", kind: clrimpl.ColumnInt32},
	{name: "pid", kind: clrimpl.ColumnInt64, optional: true},
	{name: "processors", kind: clrimpl.ColumnInt32},
	{name: "events", kind: clrimpl.ColumnInt64},
	{name: "decode_errors", kind: clrimpl.ColumnInt64},
	{name: "damaged_bytes", kind: clrimpl.ColumnInt64},
	{name: "damage", kind: clrimpl.ColumnString, optional: true},
	{name: "dropped", kind: clrimpl.ColumnInt64},
	{name: "lost_buffers", kind: clrimpl.ColumnInt64},
}
