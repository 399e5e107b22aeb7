// Command clrdump decodes a .NET runtime trace: an EventPipe file
// (.nettrace, .netperf) or a Windows ETW log (.etl), zipped or not. CLR
// events decode through the generated clrevents package; EventSource events
// decode from the trace's own metadata; anything else prints its payload in
// hex.
//
// Usage:
//
//	clrdump [flags] FILE
//
// Output formats (-format):
//
//	text   one event a line: time, provider/event, pid/tid, then Name=value fields
//	jsonl  one JSON object a line: time, provider, event, id, version, pid, tid, fields
//	csv    long form, one row per field: index,time,provider,event,id,version,pid,tid,field,value
//	       (an event without fields has one row with field and value empty)
//
// -stats prints, instead, the count and payload bytes of each event type.
// Events come in timestamp order, as TraceEvent gives them; -order file
// keeps an EventPipe file's stored order (cheaper: nothing is held back).
//
// Exit status: 0 when everything decoded; 1 when an event failed to decode
// or the file could not be read to the end (after printing what could be);
// 2 for a usage error.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clrgo/clrevents/clrevents"
)

const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, isTerminal(os.Stderr)))
}

type options struct {
	format   string
	provider string
	event    string
	keyword  uint64
	pid, tid int64
	limit    int
	stats    bool
	order    string
	progress bool
}

func run(args []string, stdout, stderr io.Writer, progress bool) int {
	fs := flag.NewFlagSet("clrdump", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var keyword string
	fs.StringVar(&o.format, "format", "text", "output: text, jsonl or csv")
	fs.StringVar(&o.provider, "provider", "", "only providers whose name matches this glob (case-insensitive), e.g. '*Rundown'")
	fs.StringVar(&o.event, "event", "", "only events whose name matches this glob, e.g. 'GC*' or 'Method*Verbose*'")
	fs.StringVar(&keyword, "keyword", "", "only events with any of these keyword bits (hex or decimal)")
	fs.Int64Var(&o.pid, "pid", -1, "only events of this process")
	fs.Int64Var(&o.tid, "tid", -1, "only events of this thread")
	fs.IntVar(&o.limit, "n", 0, "stop after this many events are printed (0: all)")
	fs.BoolVar(&o.stats, "stats", false, "print counts and payload bytes per event type instead of events")
	fs.StringVar(&o.order, "order", "time", "event order: time (by timestamp, as TraceEvent gives them) or file (as stored; EventPipe only, ETL logs always come in time order)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: clrdump [flags] FILE\n\nDecodes a .nettrace, .netperf or .etl trace (or a .zip holding one).\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	switch o.format {
	case "text", "jsonl", "csv":
	default:
		fmt.Fprintf(stderr, "clrdump: unknown -format %q (want text, jsonl or csv)\n", o.format)
		return exitUsage
	}
	if keyword != "" {
		k, err := strconv.ParseUint(keyword, 0, 64)
		if err != nil {
			fmt.Fprintf(stderr, "clrdump: -keyword %q is not a number\n", keyword)
			return exitUsage
		}
		o.keyword = k
	}
	if o.order != "time" && o.order != "file" {
		fmt.Fprintf(stderr, "clrdump: unknown -order %q (want time or file)\n", o.order)
		return exitUsage
	}
	for _, g := range []string{o.provider, o.event} {
		if _, err := path.Match(g, ""); err != nil {
			fmt.Fprintf(stderr, "clrdump: bad glob %q\n", g)
			return exitUsage
		}
	}
	o.progress = progress

	src, err := openSource(fs.Arg(0), o.order == "time")
	if err != nil {
		fmt.Fprintf(stderr, "clrdump: %v\n", err)
		return exitError
	}
	defer src.close()
	w := bufio.NewWriterSize(stdout, 1<<16)
	// A newer runtime's event versions decode as the newest version the
	// schema has, with the new fields shown as extra bytes.
	dec := clrevents.NewDecoder()
	dec.OlderVersions = true
	d := &dumper{o: o, w: w, stderr: stderr, dec: dec}
	status := d.dump(src)
	if err := w.Flush(); err != nil {
		fmt.Fprintf(stderr, "clrdump: %v\n", err)
		return exitError
	}
	return status
}

type typeKey struct {
	provider string
	name     string
}

type typeStats struct {
	count, bytes int64
}

type dumper struct {
	o      options
	w      *bufio.Writer
	stderr io.Writer
	dec    *clrevents.Decoder
	buf    []byte
	obj    []byte // the JSON fields of the CSV row being written
	stats  map[typeKey]*typeStats
	// errs counts events that failed to decode.
	errs    int
	printed int
	read    int64
}

func (d *dumper) dump(src source) int {
	var rec record
	var lastProgress time.Time
	status := exitOK
	if d.o.stats {
		d.stats = map[typeKey]*typeStats{}
	}
	for {
		err := src.next(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			d.clearProgress()
			fmt.Fprintf(d.stderr, "clrdump: %v\n", err)
			status = exitError
			break
		}
		d.read++
		if d.o.progress && d.read%4096 == 0 && time.Since(lastProgress) > 250*time.Millisecond {
			lastProgress = time.Now()
			fmt.Fprintf(d.stderr, "\r%d events, offset %.1f MB", d.read, float64(rec.offset)/1e6)
		}
		if !d.keep(&rec) {
			continue
		}
		d.event(&rec)
		if d.o.limit > 0 && d.printed >= d.o.limit {
			break
		}
	}
	d.clearProgress()
	if d.o.stats {
		d.writeStats()
	}
	if d.errs > 0 {
		fmt.Fprintf(d.stderr, "clrdump: %d events did not decode\n", d.errs)
		status = exitError
	}
	return status
}

func (d *dumper) clearProgress() {
	if d.o.progress && d.read >= 4096 {
		fmt.Fprintf(d.stderr, "\r%60s\r", "")
	}
}

// keep applies the filters that need no decoding.
func (d *dumper) keep(r *record) bool {
	if d.o.pid >= 0 && r.pid != uint64(d.o.pid) {
		return false
	}
	if d.o.tid >= 0 && r.tid != uint64(d.o.tid) {
		return false
	}
	if d.o.keyword != 0 && r.keywords&d.o.keyword == 0 {
		return false
	}
	if d.o.provider != "" {
		if ok, _ := path.Match(strings.ToLower(d.o.provider), strings.ToLower(providerName(r))); !ok {
			return false
		}
	}
	return true
}

func providerName(r *record) string {
	if r.provider != "" {
		return r.provider
	}
	return r.guid.String()
}

// decoded is what one event became.
type decoded struct {
	name  string
	ev    clrevents.Event // a CLR event, or nil
	extra int             // payload bytes past the template
	err   error
}

func (d *dumper) decode(r *record) decoded {
	var p clrevents.Provider
	var ok bool
	if r.provider != "" {
		p, ok = clrevents.ProviderByName(r.provider)
	}
	if !ok && !r.guid.IsZero() {
		p, ok = clrevents.ProviderByGUID(r.guid)
	}
	if ok {
		ev, n, err := d.dec.Decode(p, r.id, r.version, r.ptrSize, r.payload)
		switch {
		case err == nil:
			return decoded{name: ev.Info().Name, ev: ev, extra: len(r.payload) - n}
		case !errors.Is(err, clrevents.ErrUnknownEvent):
			name := fmt.Sprintf("id%d/v%d", r.id, r.version)
			if info, known := clrevents.Lookup(p, r.id, r.version); known {
				name = info.Name
			}
			return decoded{name: name, err: err}
		}
	}
	switch {
	case r.name != "":
		return decoded{name: r.name}
	case r.meta != nil && r.meta.Name != "":
		return decoded{name: r.meta.Name}
	}
	return decoded{name: fmt.Sprintf("id%d/v%d", r.id, r.version)}
}

func (d *dumper) event(r *record) {
	dec := d.decode(r)
	if d.o.event != "" {
		if ok, _ := path.Match(d.o.event, dec.name); !ok {
			return
		}
	}
	if dec.err != nil {
		d.errs++
	}
	d.printed++
	if d.o.stats {
		k := typeKey{providerName(r), dec.name}
		s := d.stats[k]
		if s == nil {
			s = &typeStats{}
			d.stats[k] = s
		}
		s.count++
		s.bytes += int64(len(r.payload))
		return
	}
	switch d.o.format {
	case "text":
		d.writeText(r, &dec)
	case "jsonl":
		d.writeJSON(r, &dec)
	case "csv":
		d.writeCSV(r, &dec)
	}
}

func (d *dumper) writeStats() {
	keys := make([]typeKey, 0, len(d.stats))
	var total, bytes int64
	for k, s := range d.stats {
		keys = append(keys, k)
		total += s.count
		bytes += s.bytes
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := d.stats[keys[i]], d.stats[keys[j]]
		if a.count != b.count {
			return a.count > b.count
		}
		if keys[i].provider != keys[j].provider {
			return keys[i].provider < keys[j].provider
		}
		return keys[i].name < keys[j].name
	})
	fmt.Fprintf(d.w, "%10s %12s  %s\n", "count", "bytes", "provider/event")
	for _, k := range keys {
		s := d.stats[k]
		fmt.Fprintf(d.w, "%10d %12d  %s/%s\n", s.count, s.bytes, k.provider, k.name)
	}
	fmt.Fprintf(d.w, "%10d %12d  total (%d types)\n", total, bytes, len(keys))
}
