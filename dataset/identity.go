package dataset

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/clrgo/clrevents/trace"
)

// A trace is in a dataset once, whatever name it is given: a copy, or
// another spelling of its path, has another file name (FileName) but the
// same identity, a hash of what the trace says of itself (its format,
// start, clock, process and processors) and of its first events (their
// times, providers, IDs, versions and payloads). Each trace committed
// leaves a file named by its identity in IdentityDir, holding the name it
// was added by; a trace whose identity has one is not added again. A
// trace cut short is the same trace as the whole one when it holds their
// first events.
//
// Writers committing copies of one trace at once (under different names,
// so that their commit records, named by the file name, differ) commit it
// once: each first claims the identity, creating ID.claim in the staging
// folder exclusively, and only then checks that the identity has no file
// and commits; the claim goes once the identity's file is in place. A
// writer that finds the claim waits for it to go, then finds the file in
// place and fails as the trace already in the dataset. A claim a stopped
// writer left goes with the rest of its leftovers, in the next Create
// that finds no other writer alive.
const (
	// IdentityDir is the folder of a dataset, beside its tables, that
	// holds a file per trace named by the trace's identity (engines skip
	// folders whose names begin with _).
	IdentityDir = "_clrevents_traces"
	// identityEvents is how many of its first events a trace's identity
	// hashes.
	identityEvents = 64
	// claimSuffix ends the name of an identity's claim, ID.claim, in
	// the staging folder.
	claimSuffix = ".claim"
)

// claimWait is how long a writer waits for another writer's claim on its
// trace's identity to go (a commit takes milliseconds) before failing.
var claimWait = 10 * time.Second

// identity accumulates a trace's identity.
type identity struct {
	h     hash.Hash
	buf   []byte
	final string // its file in the dataset, named by the identity, once made
}

// event adds an event to the identity.
func (id *identity) event(e *trace.Event) {
	if id.h == nil {
		id.h = fnv.New128a()
	}
	b := id.buf[:0]
	b = binary.LittleEndian.AppendUint64(b, uint64(e.Timestamp()))
	b = append(b, e.Provider()...)
	b = append(b, 0)
	b = binary.LittleEndian.AppendUint16(b, e.ID())
	b = append(b, e.Version())
	b = binary.LittleEndian.AppendUint32(b, uint32(len(e.Payload())))
	b = append(b, e.Payload()...)
	id.buf = b
	id.h.Write(b)
}

// make ends the identity with what the trace says of itself, and returns
// an error when the dataset holds the trace already.
func (id *identity) make(dir string, info trace.Info) error {
	if id.h == nil {
		id.h = fnv.New128a()
	}
	b := id.buf[:0]
	b = append(b, info.Format.String()...)
	b = append(b, 0)
	for _, v := range []int64{int64(info.Version), info.StartTime.UnixNano(), info.ClockFrequency, info.SyncTimestamp,
		int64(info.PointerSize), info.ProcessID, int64(info.NumProcessors)} {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	id.h.Write(b)
	id.final = filepath.Join(dir, IdentityDir, hex.EncodeToString(id.h.Sum(nil)))
	return id.check()
}

// check returns an error when the dataset holds the trace already.
func (id *identity) check() error {
	b, err := os.ReadFile(id.final)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	return fmt.Errorf("already in the dataset as %q: the same trace (its start, process and first events; %s)", strings.TrimSpace(string(b)), id.final)
}

// claim claims the identity for a commit into the dataset whose staging
// folder is tmp, as the writer of the trace named name: it creates
// tmp/ID.claim, which fails while another writer holds it. It waits for
// another writer's claim to go, and returns the error of check as soon
// as the identity has its file (the other writer committed the trace). A
// nil error means the claim is held: the caller checks the identity,
// commits, and then removes the returned path.
func (id *identity) claim(tmp, name string) (string, error) {
	path := filepath.Join(tmp, filepath.Base(id.final)+claimSuffix)
	deadline := time.Now().Add(claimWait)
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			_, err = f.WriteString(name + "\n") // for the message of a writer that waits in vain
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				os.Remove(path)
				return "", fmt.Errorf("claiming the trace's identity: %w", err)
			}
			return path, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("claiming the trace's identity: %w", err)
		}
		if err := id.check(); err != nil {
			return "", err
		}
		if time.Now().After(deadline) {
			other := "another name"
			if b, _ := os.ReadFile(path); len(b) > 0 {
				other = strconv.Quote(strings.TrimSpace(string(b)))
			}
			return "", fmt.Errorf("another writer is adding this trace to the dataset now, as %s, and has not finished in %v (%s exists; if no writer is running, one that stopped left it, and the next Create of the dataset removes it)",
				other, claimWait, path)
		}
		time.Sleep(pause)
	}
}

// stage writes the identity's file into the staging folder, flushed to
// disk, and returns it as a file for the commit to move.
func (id *identity) stage(stage, name string) (*table, error) {
	tmp := filepath.Join(stage, "identity.tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return nil, err
	}
	_, err = f.WriteString(name + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return &table{final: id.final, tmp: tmp}, nil
}

// checkName returns an error when a file of the trace's tables is in the
// dataset under its name already (FileName, or the name versions before
// gave it: Dataset.legacyFile). The caller has checked that the trace's
// identity has no file: the dataset does not hold this trace.
func (tw *traceWriter) checkName() error {
	if old := tw.d.legacyFile(tw.name); old != "" && exists(old) {
		return tw.nameTaken(old)
	}
	for _, t := range tw.all {
		if exists(t.final) {
			return tw.nameTaken(t.final)
		}
	}
	return nil
}

// nameTaken is the error for a trace whose name is taken in the dataset
// by a trace whose file path is: this trace, if its identity's file is
// there now; another one whose identity's file holds
// the name; one without an identity (added by a version that kept none,
// or its identity's file removed), which may be this trace or not; or a
// trace not whole (its traces file absent: a commit a stopped writer
// began and no Create has completed yet, or files removed by hand).
func (tw *traceWriter) nameTaken(path string) error {
	const distinct = "add this one under a distinct name (clrdump: a distinct or absolute path)"
	// This very trace, which another writer committed since its identity
	// was checked (two writers adding one trace at once).
	if err := tw.id.check(); err != nil {
		return err
	}
	dir := filepath.Join(tw.d.dir, IdentityDir)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err == nil && strings.TrimSuffix(string(b), "\n") == tw.name && filepath.Join(dir, e.Name()) != tw.id.final {
			return fmt.Errorf("another trace is in the dataset under the name %q (%s exists, with identity %s; this trace's start, process or first events differ): %s",
				tw.name, path, filepath.Join(dir, e.Name()), distinct)
		}
	}
	traces := filepath.Join(tw.d.dir, "traces", tw.file)
	if path != traces && !exists(traces) && (tw.d.legacyFile(tw.name) == "" || !exists(tw.d.legacyFile(tw.name))) {
		return fmt.Errorf("part of a trace is in the dataset under the name %q (%s exists, not its traces file: a writer committing it now; or one that stopped, whose commit the next Create of the dataset completes; or files removed by hand)", tw.name, path)
	}
	return fmt.Errorf("a trace is in the dataset under the name %q (%s exists) with no identity (added by an earlier version, or its identity's file removed), so whether it is this one is not known: if it is another trace, %s",
		tw.name, path, distinct)
}
