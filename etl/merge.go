package etl

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// merged is the state of a Reader made by Merge: the logs it reads as one.
type merged struct {
	logs  []*Reader
	names []string // for errors: each log's file name, or "log N"
	ev    []*Event // each log's next event, nil once it has ended
	need  []bool   // the log's event went out: read its next before merging
	ended []error  // what ended each log: nil while it has events, io.EOF, or its final error
}

// Merge returns a Reader that reads logs as one log, their events merged
// by timestamp, as the Windows consumer API merges the logs of one
// ProcessTrace call and TraceEvent the files of a merged session: a
// kernel session's log and a user session's written side by side
// (PerfView's X.etl and X.kernel.etl before it merges them, xperf's
// kernel.etl and user.etl), or the logs of a Visual Studio diagnostics
// session. Events with equal timestamps come in the order of logs. Each
// Event's Log is the index of its log in logs; Offset and Buffer stay
// positions in that log's file.
//
// The logs must be in TimeOrder (Open, or NewReader on an io.ReaderAt),
// not yet read, and on one clock: the same ClockType and Frequency (the
// logs of one machine's sessions are). Next then gives every event of
// every log; Time is reckoned for all of them from the merged Header:
// its StartTime is the earliest log's start, paired with the earliest
// header event's timestamp, as TraceEvent reckons a merged session's
// times. The merged Header is otherwise the first log's, with EndTime the
// latest end, PointerSize the largest, and BuffersWritten, EventsLost and
// BuffersLost summed; Logs gives each log's own.
//
// Damage in one log loses only what it touched: the other logs' events
// all come, and Next ends with a *DamageError listing every log's damage
// (each record's Log says whose, and its error names the log). SetStrict
// applies to every log. Close closes every log.
func Merge(logs ...*Reader) (*Reader, error) {
	if len(logs) == 0 {
		return nil, errors.New("etl: Merge needs at least one log")
	}
	m := &merged{
		logs:  logs,
		names: make([]string, len(logs)),
		ev:    make([]*Event, len(logs)),
		need:  make([]bool, len(logs)),
		ended: make([]error, len(logs)),
	}
	for i, l := range logs {
		m.names[i] = l.name
		if m.names[i] == "" {
			m.names[i] = "log " + strconv.Itoa(i)
		}
		m.need[i] = true
	}
	first := logs[0].Header()
	for i, l := range logs {
		switch {
		case l.started || l.finished:
			return nil, fmt.Errorf("etl: Merge: %s has been read from already", m.names[i])
		case l.order != TimeOrder:
			return nil, fmt.Errorf("etl: Merge: %s is read in %v; merging needs each log in TimeOrder (an io.ReaderAt)", m.names[i], l.order)
		case l.merged != nil:
			return nil, fmt.Errorf("etl: Merge: %s is a merge of logs itself", m.names[i])
		}
		if h := l.Header(); h.ClockType != first.ClockType || h.Frequency != first.Frequency {
			return nil, fmt.Errorf("etl: Merge: %s and %s are on different clocks (%s, %s): their timestamps do not compare",
				m.names[0], m.names[i], clockName(first), clockName(h))
		}
	}
	r := &Reader{order: TimeOrder, merged: m}
	h := *first
	for _, l := range logs[1:] {
		lh := l.Header()
		if !lh.StartTime.IsZero() && (h.StartTime.IsZero() || lh.StartTime.Before(h.StartTime)) {
			h.StartTime = lh.StartTime
		}
		if lh.EndTime.After(h.EndTime) {
			h.EndTime = lh.EndTime
		}
		h.HeaderTimestamp = min(h.HeaderTimestamp, lh.HeaderTimestamp)
		h.PointerSize = max(h.PointerSize, lh.PointerSize)
		h.BuffersWritten += lh.BuffersWritten
		h.EventsLost += lh.EventsLost
		h.BuffersLost += lh.BuffersLost
	}
	r.hdr = h
	r.clk = newClock(&r.hdr)
	for _, l := range logs {
		l.clk = r.clk // each log reckons its events' times on the merged clock
	}
	return r, nil
}

// SetName names the log in the errors of a Reader that merges it with
// others (Merge): its file name, or an archive's and its member's. Open
// names the logs it opens; without a name, a log is "log N", its index
// in Merge's arguments.
func (r *Reader) SetName(name string) { r.name = name }

// clockName describes a log's clock for errors.
func clockName(h *LogHeader) string {
	switch h.ClockType {
	case ClockQPC:
		return fmt.Sprintf("QPC at %d Hz", h.Frequency)
	case ClockSystemTime:
		return "system time"
	case ClockCPUCycle:
		return fmt.Sprintf("CPU cycles at %d MHz", h.CPUSpeedMHz)
	}
	return fmt.Sprintf("clock type %d at %d Hz", h.ClockType, h.Frequency)
}

// Logs returns the headers of the logs a Reader reads: a merged Reader's
// (Merge), in the order they were given, or the one log's.
func (r *Reader) Logs() []*LogHeader {
	if r.merged == nil {
		return []*LogHeader{&r.hdr}
	}
	hs := make([]*LogHeader, len(r.merged.logs))
	for i, l := range r.merged.logs {
		hs[i] = l.Header()
	}
	return hs
}

// nextMerged is Next for a merged Reader.
func (r *Reader) nextMerged() (*Event, error) {
	if r.fatal != nil {
		return nil, r.fatal
	}
	if r.finished {
		return nil, r.final
	}
	m := r.merged
	if !r.started {
		r.started = true
		for _, l := range m.logs {
			l.SetStrict(r.strict)
		}
	}
	best := -1
	for i, l := range m.logs {
		if m.need[i] {
			m.need[i] = false
			e, err := l.Next()
			if err != nil {
				m.ev[i] = nil
				m.ended[i] = err
				if l.fatal != nil {
					// An I/O error, or strict mode's first damage: it
					// ends the merged log too.
					r.fatal = m.logErr(i, err)
					return nil, r.fatal
				}
				continue // the log's end: io.EOF or its final error
			}
			m.ev[i] = e
		}
		if e := m.ev[i]; e != nil && (best < 0 || e.Timestamp < m.ev[best].Timestamp) {
			best = i
		}
	}
	if best < 0 {
		r.finishMerged()
		return nil, r.final
	}
	e := m.ev[best]
	m.ev[best] = nil
	m.need[best] = true
	e.Log = best
	return e, nil
}

// finishMerged makes the final error of a merged Reader from its logs'.
func (r *Reader) finishMerged() {
	r.finished = true
	m := r.merged
	r.damage = r.mergedDamage()
	var stops []error
	for i, err := range m.ended {
		var de *DamageError
		switch {
		case err == nil || err == io.EOF:
		case errors.As(err, &de):
			if de.Stopped != nil {
				stops = append(stops, de.Stopped)
			}
		default:
			// A log that ended early without damage: Open's zipped log
			// whose data failed part way.
			stops = append(stops, m.logErr(i, err))
		}
	}
	stopped := errors.Join(stops...)
	switch {
	case len(r.damage) > 0:
		r.final = &DamageError{Damage: slices.Clone(r.damage), Stopped: stopped}
	case stopped != nil:
		r.final = stopped
	default:
		r.final = io.EOF
	}
}

// mergedDamage returns every log's damage, in the order of the logs, each
// record marked with its log and its error naming it.
func (r *Reader) mergedDamage() []Damage {
	var all []Damage
	for i, l := range r.merged.logs {
		for _, d := range l.Damage() {
			d.Log = i
			if d.Err != nil {
				fe := *d.Err
				fe.Log = r.merged.names[i]
				d.Err = &fe
			}
			all = append(all, d)
		}
	}
	return all
}

// logErr names log i in an error it returned.
func (m *merged) logErr(i int, err error) error {
	var fe *FormatError
	if errors.As(err, &fe) && fe.Log == "" {
		c := *fe
		c.Log = m.names[i]
		return &c
	}
	if strings.Contains(err.Error(), m.names[i]) {
		return err
	}
	return fmt.Errorf("%s: %w", m.names[i], err)
}

// closeMerged closes every log of a merged Reader.
func (r *Reader) closeMerged() error {
	var errs []error
	for _, l := range r.merged.logs {
		errs = append(errs, l.Close())
	}
	return errors.Join(errs...)
}

// Siblings returns the logs that TraceEvent reads together with the ETL
// file name when it opens it (ETWTraceEventSource's MergeAll): name itself,
// then, from the same folder, the files named as name without its ".etl"
// followed by ".kernel*.etl", ".clr*.etl" and ".user*.etl", each group in
// name order: the logs a PerfView or Visual Studio collection writes
// side by side before merging them (X.etl, X.kernel.etl, X.clrRundown.etl;
// diaghub.etl, diaghub.kernel.1.etl, diaghub.user_paged.1.etl). A name
// without the ".etl" extension has no siblings.
func Siblings(name string) ([]string, error) {
	if !strings.EqualFold(filepath.Ext(name), ".etl") {
		return []string{name}, nil
	}
	dir, file := filepath.Split(name)
	base := file[:len(file)-len(".etl")]
	entries, err := os.ReadDir(dirOrDot(dir))
	if err != nil {
		return nil, err
	}
	out := []string{name}
	for _, kind := range []string{".kernel", ".clr", ".user"} {
		prefix := strings.ToLower(base + kind)
		for _, e := range entries {
			n := e.Name()
			l := strings.ToLower(n)
			if e.Type().IsRegular() && strings.HasPrefix(l, prefix) && strings.HasSuffix(l, ".etl") && len(l) >= len(prefix)+len(".etl") && l != strings.ToLower(file) {
				out = append(out, filepath.Join(dir, n))
			}
		}
	}
	return out, nil
}

func dirOrDot(dir string) string {
	if dir == "" {
		return "."
	}
	return dir
}
