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
func Open(name string) (*Reader, error) {
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
	// The expanded copy is all the Reader needs: let the archive go.
	r.closer = closerFunc(func() error { return sp.Close() })
	return r, f.Close()
}

type closerFunc func() error

func (c closerFunc) Close() error { return c() }
