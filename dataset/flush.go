package dataset

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// flusher is the goroutine of a trace that writes its tables' row groups:
// Parquet's encoding, compression and the file system, about half the
// work of an export, run beside the reading and decoding. Jobs run in the
// order they are sent, so a table's batches and row groups keep theirs.
type flusher struct {
	jobs chan job
	wg   sync.WaitGroup

	mu  sync.Mutex
	err error // the first failure; later jobs are only recycled
}

// job is a row group to write into t, or with last set, t's last rows
// followed by its footer.
type job struct {
	t    *table
	b    *rowSet
	last bool
}

func newFlusher() *flusher {
	// Room for a row group of every table of a busy trace; the budget
	// bounds the memory they hold.
	f := &flusher{jobs: make(chan job, 64)}
	f.wg.Add(1)
	go f.run()
	return f
}

func (f *flusher) run() {
	defer f.wg.Done()
	for j := range f.jobs {
		if f.failed() == nil {
			var err error
			if j.last {
				err = j.t.finish(j.b)
			} else {
				err = j.t.write(j.b)
			}
			if err != nil {
				f.fail(fmt.Errorf("%s: %w", j.t.final, err))
			}
		}
		j.t.recycle(j.b)
	}
}

func (f *flusher) fail(err error) {
	f.mu.Lock()
	if f.err == nil {
		f.err = err
	}
	f.mu.Unlock()
}

func (f *flusher) failed() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// send queues a job, or reports the flusher's failure.
func (f *flusher) send(j job) error {
	if err := f.failed(); err != nil {
		return err
	}
	f.jobs <- j
	return nil
}

// stop waits for every queued job and ends the goroutine; it returns the
// first failure. The tables' files and writers are then the caller's.
func (f *flusher) stop() error {
	close(f.jobs)
	f.wg.Wait()
	return f.failed()
}

// budget bounds the memory a trace's tables hold: the rows they collect
// (buffered, the reading side's) and those shipped to the flusher and not
// yet written (inflight). When the two together pass limit, the table
// holding the most ships its rows as a row group (relieve), and when the
// flusher holds half the limit the reading side waits for it. So the
// memory follows the limit, not the trace's size or its number of
// tables, and a big table's row groups stay large while small tables
// keep theirs to the end.
type budget struct {
	limit    int64
	buffered int64 // the reading side's
	inflight atomic.Int64
	tables   []*table
	done     chan struct{} // a job finished (capacity 1)
}

func newBudget(limit int64) *budget {
	return &budget{limit: limit, done: make(chan struct{}, 1)}
}

func (m *budget) over() bool { return m.buffered+m.inflight.Load() > m.limit }

// signal tells a waiting relieve that the flusher has finished a job
// (the flusher's).
func (m *budget) signal() {
	select {
	case m.done <- struct{}{}:
	default:
	}
}

// relieve ships row groups, the biggest first, and waits for the flusher
// until the tables are within the limit again.
func (m *budget) relieve() error {
	for m.over() {
		if m.buffered > m.limit/2 || m.inflight.Load() == 0 {
			var big *table
			for _, t := range m.tables {
				if t.cur.rows > 0 && (big == nil || t.cur.bytes > big.cur.bytes) {
					big = t
				}
			}
			if big == nil {
				return nil
			}
			if err := big.ship(); err != nil {
				return err
			}
			continue
		}
		<-m.done // every job ends with a signal, failed or not
	}
	return nil
}
