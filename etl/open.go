package etl

import (
	"fmt"
	"io"
	"os"

	"github.com/clrgo/clrevents/internal/ziptrace"
)

// inMemoryLimit is the largest zipped .etl that Open expands into memory;
// larger ones go to a temporary file that Close removes.
const inMemoryLimit = 256 << 20

// Open opens an ETL file for reading in TimeOrder: a .etl file, a zip
// archive (.zip, .etl.zip, or any file starting with a zip signature)
// holding exactly one .etl, possibly in a folder (gcevents.etl.zip holds
// gcevents/PerfViewData.etl), or a gzipped .etl (.etl.gz). An archive cut
// short, without its directory, is read from the member's local header: the
// log's events before the cut, then a *DamageError wrapping ErrTruncated. A
// member whose data fails part way (damaged compressed bytes, a checksum) is
// read up to the failure, which the final error reports (a DamageError's
// Stopped, after damage). Close closes the file and removes any temporary
// copy.
//
// Logs written side by side are read as one, merged by time (Merge), as
// TraceEvent reads them: a file X.etl together with the X.kernel*.etl,
// X.clr*.etl and X.user*.etl beside it (Siblings), and an archive holding
// several .etl files and no other trace (a Visual Studio .diagsession's
// logs). Logs then says which logs were read. To read one file alone, give
// NewReader the opened file.
func Open(name string) (*Reader, error) {
	names, err := Siblings(name)
	if err != nil || len(names) == 1 {
		return openOne(name)
	}
	return openMerged(len(names), func(i int) (*Reader, error) {
		l, err := openOne(names[i])
		if err != nil && i > 0 {
			err = fmt.Errorf("%w (a log beside %s, which is read with it, as TraceEvent reads them)", err, name)
		}
		return l, err
	})
}

// openMerged opens n logs with open and merges them; on an error it
// closes those it opened.
func openMerged(n int, open func(i int) (*Reader, error)) (*Reader, error) {
	logs := make([]*Reader, 0, n)
	closeAll := func() {
		for _, l := range logs {
			l.Close()
		}
	}
	for i := range n {
		l, err := open(i)
		if err != nil {
			closeAll()
			return nil, err
		}
		logs = append(logs, l)
	}
	r, err := Merge(logs...)
	if err != nil {
		closeAll()
		return nil, err
	}
	return r, nil
}

// openOne opens one file: a log, or an archive.
func openOne(name string) (*Reader, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	var sig [4]byte
	n, _ := io.ReadFull(f, sig[:])
	if n == 4 && string(sig[:]) == "PK\x03\x04" || ziptrace.IsGzip(sig[:n]) {
		r, err := openZip(f, name)
		if err != nil {
			f.Close()
			return nil, err
		}
		return r, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	r, err := NewReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	r.closer = f
	r.name = name
	return r, nil
}

func openZip(f *os.File, name string) (*Reader, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	found, err := ziptrace.Find(f, st.Size(), name, ".etl")
	if err != nil {
		return nil, err
	}
	if found.Logs == nil {
		r, err := openMember(found, name)
		if err != nil {
			return nil, err
		}
		return r, f.Close()
	}
	r, err := openMerged(len(found.Logs), func(i int) (*Reader, error) { return openMember(found.Logs[i], name) })
	if err != nil {
		return nil, err
	}
	return r, f.Close()
}

// openMember expands an archive's log member and opens the copy.
func openMember(found *ziptrace.Found, name string) (*Reader, error) {
	rc, err := found.Open()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", found.Where(name), err)
	}
	defer rc.Close()
	where := found.Where(name)
	// The data ends where the member's fails (a cut, a checksum): what
	// came before is read, and the failure is the final error's.
	src, stopped := ziptrace.UntilError(rc)
	sp, err := ziptrace.Spool(src, found.Size, inMemoryLimit, "", where)
	if err != nil {
		return nil, err
	}
	r, err := NewReaderAt(sp, sp.Size)
	if err != nil {
		sp.Close()
		if stop := stopped(); stop != nil {
			return nil, fmt.Errorf("%s: %w", where, stop)
		}
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if stop := stopped(); stop != nil {
		r.stopped = fmt.Errorf("%s: %w", where, stop)
	}
	r.name = where
	// The expanded copy is all the Reader needs: the archive can go.
	r.closer = closerFunc(func() error { return sp.Close() })
	return r, nil
}

type closerFunc func() error

func (c closerFunc) Close() error { return c() }
