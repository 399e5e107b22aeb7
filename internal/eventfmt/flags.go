package eventfmt

import (
	"flag"
	"fmt"
	"path"
	"strconv"
)

// FilterFlags are the event filter flags of the commands that print
// events (clrdump, clrtrace watch), declared once by AddFilterFlags:
// -provider, -event, -keyword, -pid and -tid set the Filter, -n the Limit.
type FilterFlags struct {
	Filter
	// Limit is -n: stop after this many events are printed; 0 prints all.
	Limit   int
	keyword string
}

// AddFilterFlags registers the filter flags on fs. After fs.Parse, call
// Parse.
func AddFilterFlags(fs *flag.FlagSet) *FilterFlags {
	f := &FilterFlags{}
	fs.StringVar(&f.Provider, "provider", "", "only providers whose name matches this glob (case-insensitive), e.g. '*Rundown'")
	fs.StringVar(&f.Event, "event", "", "only events whose name matches this glob: the manifest symbol ('GC*', 'Method*Verbose*') or TraceEvent's Task/Opcode name ('GC/Start', 'Method/*', 'Request/Start')")
	fs.StringVar(&f.keyword, "keyword", "", "only events with any of these keyword bits (hex or decimal; 0 is no filter)")
	fs.Int64Var(&f.PID, "pid", -1, "only events of this process")
	fs.Int64Var(&f.TID, "tid", -1, "only events of this thread")
	fs.IntVar(&f.Limit, "n", 0, "stop after this many events are printed (0: all)")
	return f
}

// Parse reads -keyword into Filter.Keyword and checks the globs and -n;
// the error names the flag whose value is bad.
func (f *FilterFlags) Parse() error {
	if err := f.CheckNumbers(); err != nil {
		return err
	}
	if f.keyword != "" {
		k, err := strconv.ParseUint(f.keyword, 0, 64)
		if err != nil {
			return fmt.Errorf("-keyword %q: not a number (hex or decimal)", f.keyword)
		}
		f.Keyword = k
	}
	for _, g := range [...][2]string{{"provider", f.Provider}, {"event", f.Event}} {
		if _, err := path.Match(g[1], ""); err != nil {
			return fmt.Errorf("-%s %q: bad glob", g[0], g[1])
		}
	}
	return nil
}

// CheckNumbers checks -n, -pid and -tid alone, for modes that read them
// without the other filters (clrdump's reports and profiles): a negative
// count, or an ID below -1, is a mistake, not "all".
func (f *FilterFlags) CheckNumbers() error {
	if f.Limit < 0 {
		return fmt.Errorf("-n %d: want a count, or 0 for all", f.Limit)
	}
	if f.PID < -1 {
		return fmt.Errorf("-pid %d: want a process ID, or -1 for all", f.PID)
	}
	if f.TID < -1 {
		return fmt.Errorf("-tid %d: want a thread ID, or -1 for all", f.TID)
	}
	return nil
}
