// Package columntest holds a clrimpl.ColumnAppender for tests that look at
// the rows a columnar writer would get.
package columntest

import (
	"fmt"

	"github.com/clrgo/clrevents/clrimpl"
)

// Recorder keeps each value it is given as text, in order: numbers and
// booleans as fmt prints them, GUIDs in canonical form, bytes as a string.
type Recorder struct{ Vals []string }

func (r *Recorder) Bool(v bool)         { r.Vals = append(r.Vals, fmt.Sprint(v)) }
func (r *Recorder) Int(v int64)         { r.Vals = append(r.Vals, fmt.Sprint(v)) }
func (r *Recorder) Uint(v uint64)       { r.Vals = append(r.Vals, fmt.Sprint(v)) }
func (r *Recorder) Float(v float64)     { r.Vals = append(r.Vals, fmt.Sprint(v)) }
func (r *Recorder) GUID(v clrimpl.GUID) { r.Vals = append(r.Vals, v.String()) }
func (r *Recorder) Bytes(v []byte)      { r.Vals = append(r.Vals, string(v)) }
func (r *Recorder) Scratch() []byte     { return nil }
