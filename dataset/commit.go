package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The staging folder (see "Writing, failures and interrupts" in the
// package documentation) and what it holds.
const (
	tempDirName  = "_clrevents_tmp" // in the dataset's folder; engines skip _ folders
	lockName     = "lock"           // its lock file: writers hold it shared
	commitSuffix = ".commit"        // T.commit: the commit record of trace T
	journalHead  = "clrevents commit 1"
	markerText   = "clrevents dataset, layout 1: events/provider=P/event=E/*.parquet, generic/, stacks/, traces/\n"
)

// dirLock is a writer's hold on the staging folder's lock file. Writers
// hold it shared while they may have files in the staging folder; Create
// takes it exclusive, which succeeds only when no other writer is alive,
// to clear what stopped writers left.
type dirLock struct {
	path string
	f    *os.File
}

// take takes the lock, exclusive or shared, waiting for it or not. It
// creates the staging folder and the lock file when they are missing, and
// starts again when the file it locked is no longer the one at the path:
// the last writer's Close removes the file, and a lock on a removed file
// would exclude no one.
func (l *dirLock) take(exclusive, wait bool) (bool, error) {
	for attempt := 0; ; attempt++ {
		if attempt == 100 {
			return false, fmt.Errorf("%s: removed each time it was locked", l.path)
		}
		if l.f == nil {
			if err := os.MkdirAll(filepath.Dir(l.path), 0o777); err != nil {
				return false, err
			}
			f, err := os.OpenFile(l.path, os.O_RDWR|os.O_CREATE, 0o666)
			if errors.Is(err, fs.ErrNotExist) {
				continue // the folder went between the two calls
			}
			if err != nil {
				return false, err
			}
			l.f = f
		}
		ok, err := lockFile(l.f, exclusive, wait)
		if err != nil || !ok {
			return ok, err
		}
		fi, err1 := l.f.Stat()
		pi, err2 := os.Stat(l.path)
		if err1 == nil && err2 == nil && os.SameFile(fi, pi) {
			return true, nil
		}
		l.close()
	}
}

func (l *dirLock) unlock() {
	if l.f != nil {
		unlockFile(l.f)
	}
}

func (l *dirLock) close() {
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// journal is a commit record: the trace, its staging folder and the
// files to move from it, each to its place in the dataset, in the order
// of the renames (the traces table last).
type journal struct {
	trace string
	stage string      // the staging folder's name in the staging area
	files [][2]string // the staged file's name, its path in the dataset (with /)
}

// encode writes the record as text: a line per item, strings quoted, and
// a last line "end" that tells a whole record from one cut short.
func (j *journal) encode() []byte {
	b := []byte(journalHead + "\n")
	b = fmt.Appendf(b, "trace %s\nstage %s\n", strconv.Quote(j.trace), strconv.Quote(j.stage))
	for _, f := range j.files {
		b = fmt.Appendf(b, "file %s %s\n", strconv.Quote(f[0]), strconv.Quote(f[1]))
	}
	return append(b, "end\n"...)
}

// parseJournal reads a commit record; ok is false for one that is not
// whole (its writer stopped while writing it) or names a path outside
// the dataset.
func parseJournal(b []byte) (j journal, ok bool) {
	lines := strings.Split(string(b), "\n")
	if len(lines) < 5 || lines[0] != journalHead || lines[len(lines)-1] != "" || lines[len(lines)-2] != "end" {
		return j, false
	}
	// quoted reads the quoted strings of a line after its keyword.
	quoted := func(line, key string, n int) ([]string, bool) {
		rest, found := strings.CutPrefix(line, key+" ")
		if !found {
			return nil, false
		}
		var out []string
		for i := range n {
			if i > 0 {
				if rest, found = strings.CutPrefix(rest, " "); !found {
					return nil, false
				}
			}
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return nil, false
			}
			s, _ := strconv.Unquote(q)
			out = append(out, s)
			rest = rest[len(q):]
		}
		return out, rest == ""
	}
	single := func(s string) bool { return s != "" && filepath.IsLocal(s) && filepath.Base(s) == s }
	t, ok1 := quoted(lines[1], "trace", 1)
	s, ok2 := quoted(lines[2], "stage", 1)
	if !ok1 || !ok2 || !single(s[0]) {
		return j, false
	}
	j.trace, j.stage = t[0], s[0]
	for _, line := range lines[3 : len(lines)-2] {
		f, ok := quoted(line, "file", 2)
		if !ok || !single(f[0]) || !filepath.IsLocal(filepath.FromSlash(f[1])) ||
			strings.HasPrefix(f[1], tempDirName+"/") || f[1] == MarkerFile {
			return j, false
		}
		j.files = append(j.files, [2]string{f[0], f[1]})
	}
	return j, len(j.files) > 0
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// mkdirs creates dir and the folders above it that are missing, and
// returns those it created, outermost first.
func mkdirs(dir string) ([]string, error) {
	var missing []string
	for p := dir; ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		missing = append(missing, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	var made []string
	for i := len(missing) - 1; i >= 0; i-- {
		err := os.Mkdir(missing[i], 0o777)
		if err == nil {
			made = append(made, missing[i])
		} else if !errors.Is(err, fs.ErrExist) {
			return made, err
		}
	}
	return made, nil
}

// makeFolders makes the folders of the files and returns those it made.
// One after the other: a new dataset's first trace makes dozens, most in
// one parent folder, whose lock lets one in at a time (made at once, from
// a goroutine each, they took 15% of the export's CPU time, most of it
// spinning on that lock, and no less wall time).
func makeFolders(files []*table) ([]string, error) {
	var made []string
	seen := map[string]bool{}
	for _, t := range files {
		dir := filepath.Dir(t.final)
		if seen[dir] {
			continue
		}
		seen[dir] = true
		m, err := mkdirs(dir)
		made = append(made, m...)
		if err != nil {
			return made, err
		}
	}
	return made, nil
}

// removeEmpty removes the folders made, innermost first, as long as they
// are empty.
func removeEmpty(made []string) {
	made = slices.Clone(made)
	slices.SortFunc(made, func(a, b string) int { return len(b) - len(a) }) // a folder's path is longer than its parent's
	for _, dir := range made {
		os.Remove(dir) // fails, and leaves it, when something is in it
	}
}

// ensureMarker writes the marker file when it is missing, whole or not
// at all (a temporary file renamed).
func (d *Dataset) ensureMarker() error {
	p := filepath.Join(d.dir, MarkerFile)
	if exists(p) {
		return nil
	}
	f, err := os.CreateTemp(d.tmp, "marker-*")
	if err != nil {
		return err
	}
	_, err = f.WriteString(markerText)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	d.madeMarker = true
	return nil
}

// recoverLeftovers clears what stopped writers left in the staging folder
// (the caller holds its lock exclusively, so none of them is alive): the
// commits they began are completed, everything else is removed.
func (d *Dataset) recoverLeftovers() error {
	entries, err := os.ReadDir(d.tmp)
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), commitSuffix) {
			if err := d.finishCommit(filepath.Join(d.tmp, e.Name())); err != nil {
				return err
			}
		}
	}
	for _, e := range entries {
		if e.Name() != lockName {
			if err := os.RemoveAll(filepath.Join(d.tmp, e.Name())); err != nil {
				return fmt.Errorf("dataset: removing what a stopped writer left: %w", err)
			}
		}
	}
	return nil
}

// finishCommit completes the commit a stopped writer recorded at path:
// the renames it did not get to. A record not whole means the commit had
// not begun, and it is only removed (with the staging folder, by the
// caller). A commit that cannot be completed because a file is neither
// staged nor in place (removed by hand) is taken back instead: the
// trace's files in place are removed.
func (d *Dataset) finishCommit(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	j, ok := parseJournal(b)
	if !ok {
		return os.Remove(path)
	}
	stage := filepath.Join(d.tmp, j.stage)
	whole := true
	for _, f := range j.files {
		if !exists(filepath.Join(stage, f[0])) && !exists(filepath.Join(d.dir, filepath.FromSlash(f[1]))) {
			whole = false
		}
	}
	if !whole {
		for _, f := range j.files {
			if !exists(filepath.Join(stage, f[0])) {
				os.Remove(filepath.Join(d.dir, filepath.FromSlash(f[1])))
			}
		}
		return os.Remove(path)
	}
	fail := func(err error) error {
		return fmt.Errorf("dataset: completing the commit of trace %s, which a writer that stopped began (%s): %w", j.trace, path, err)
	}
	if err := d.ensureMarker(); err != nil {
		return fail(err)
	}
	for _, f := range j.files {
		staged, final := filepath.Join(stage, f[0]), filepath.Join(d.dir, filepath.FromSlash(f[1]))
		if !exists(staged) {
			continue // renamed before the writer stopped
		}
		if _, err := mkdirs(filepath.Dir(final)); err != nil {
			return fail(err)
		}
		if err := os.Rename(staged, final); err != nil {
			return fail(err)
		}
	}
	if err := os.Remove(path); err != nil {
		return fail(err)
	}
	d.recovered = append(d.recovered, j.trace)
	return nil
}

// commitFiles moves the finished files of the trace from its staging folder
// into the dataset. The commit point is the record T.commit written
// whole: before it, the trace is not in the dataset (an error or a stop
// leaves the staging folder, removed by abort or by the next Create);
// after it, the trace is, whether the renames finish here or, after a
// stop, in the next Create. keep reports that an error left the record,
// whose staging folder must then stay too.
func (tw *traceWriter) commitFiles() (keep bool, err error) {
	d := tw.d
	jpath := filepath.Join(d.tmp, tw.file+commitSuffix)
	jf, err := os.OpenFile(jpath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if errors.Is(err, fs.ErrExist) {
		return false, fmt.Errorf("another writer is adding this trace to the dataset now (%s exists)", jpath)
	}
	if err != nil {
		return false, err
	}
	drop := func(err error) (bool, error) {
		jf.Close()
		os.Remove(jpath)
		return false, err
	}
	if err := tw.at("claim", 0); err != nil {
		return drop(err)
	}
	// The identity's claim: of writers committing copies of the trace
	// under other names, one at a time checks the identity and commits.
	// It goes once the identity's file is in place, or the commit is
	// given up; a record left for the next Create keeps it, as a stop
	// does (that Create removes it with the rest).
	claim, err := tw.id.claim(d.tmp, tw.name)
	if err != nil {
		return drop(err)
	}
	drop = func(err error) (bool, error) {
		jf.Close()
		os.Remove(jpath)
		os.Remove(claim)
		return false, err
	}
	// The traces table last: a trace whose row is in traces is whole,
	// whatever a reader sees during the renames. The identity's file
	// before it.
	idf, err := tw.id.stage(tw.stage, tw.name)
	if err != nil {
		return drop(err)
	}
	order := append(append(tw.all[1:len(tw.all):len(tw.all)], idf), tw.all[0])
	j := journal{trace: tw.name, stage: filepath.Base(tw.stage)}
	if err := tw.id.check(); err != nil {
		return drop(err) // another writer committed the trace meanwhile
	}
	if err := tw.checkName(); err != nil {
		return drop(err) // another trace committed under the name meanwhile
	}
	for _, t := range order {
		rel, err := filepath.Rel(d.dir, t.final)
		if err != nil {
			return drop(err)
		}
		j.files = append(j.files, [2]string{filepath.Base(t.tmp), filepath.ToSlash(rel)})
	}
	_, err = jf.Write(j.encode())
	if err == nil {
		err = jf.Sync()
	}
	if err != nil {
		return drop(err)
	}
	// From here the record is closed: giving up removes it and the claim.
	undo := func(err error) (bool, error) {
		os.Remove(jpath)
		os.Remove(claim)
		return false, err
	}
	if err := jf.Close(); err != nil {
		return undo(err)
	}
	// The commit point: from here on the trace goes in.
	if err := tw.at("journal", 0); err != nil {
		return undo(err)
	}
	if err := d.ensureMarker(); err != nil {
		return undo(err)
	}
	made, err := makeFolders(order)
	if err != nil {
		removeEmpty(made)
		return undo(err)
	}
	for i, t := range order {
		err := tw.at("rename", i)
		if err == nil {
			err = os.Rename(t.tmp, t.final)
		}
		if err == nil {
			continue
		}
		// Take back the files renamed, so that the trace is not in the
		// dataset; if that fails too, the record stays and the next
		// Create completes the trace instead.
		for k := i - 1; k >= 0; k-- {
			if rerr := os.Rename(order[k].final, order[k].tmp); rerr != nil {
				return true, fmt.Errorf("%w; taking the trace's files back failed too (%v): the next Create of the dataset completes the trace from %s", err, rerr, jpath)
			}
		}
		removeEmpty(made)
		return undo(err)
	}
	tw.at("renamed", 0) // (a test's stop after the renames)
	// Done: a record left here (a failed removal, a stop) makes the next
	// Create find every file in place, and only remove the record.
	os.Remove(jpath)
	os.Remove(claim)
	os.RemoveAll(tw.stage)
	return false, nil
}

// at calls the test hook, if any, at a stage of writing the trace.
func (tw *traceWriter) at(stage string, i int) error {
	if tw.d.hook == nil {
		return nil
	}
	return tw.d.hook(tw.name, stage, i)
}

// holdsTraces reports whether the dataset has a trace: a file in traces.
func (d *Dataset) holdsTraces() bool {
	entries, _ := os.ReadDir(filepath.Join(d.dir, "traces"))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".parquet") && !strings.HasPrefix(e.Name(), ".") {
			return true
		}
	}
	return false
}
