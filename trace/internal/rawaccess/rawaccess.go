// Package rawaccess connects package trace to trace/raw: trace sets these
// functions when it is initialised, so raw can reach the format readers'
// records without trace exporting them.
package rawaccess

import (
	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/nettrace"
)

// Event returns the format reader's record of a *trace.Event: one of the
// two is nil.
var Event func(e any) (*nettrace.Event, *etl.Event)

// Reader returns the format reader of a *trace.Reader: one of the two is
// nil.
var Reader func(r any) (*nettrace.Reader, *etl.Reader)
