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
	jobs  chan job
	opens chan *table // for the opener
	wg    sync.WaitGroup

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
	// A trace may open a table for each of hundreds of event types in its
	// first milliseconds (an ETW log's rundown): the opener's queue holds
	// them rather than a goroutine each.
	f := &flusher{jobs: make(chan job, 64), opens: make(chan *table, 512)}
	f.wg.Add(2)
	go f.run()
	go f.opener()
	return f
}

// opener creates the tables' files, one after the other: they are in
// one folder, whose lock lets one creation in at a time (a goroutine
// each, as before, spent CPU time spinning on it).
func (f *flusher) opener() {
	defer f.wg.Done()
	for t := range f.opens {
		t.opened <- t.open()
	}
}

// open has t's file created by the opener, or by a goroutine of its own
// while the opener has a queue.
func (f *flusher) open(t *table) {
	select {
	case f.opens <- t:
	default:
		go func() { t.opened <- t.open() }()
	}
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
	close(f.opens)
	f.wg.Wait()
	return f.failed()
}

// budget bounds the memory a trace's tables hold: the rows they collect
// (buffered, the reading side's), those shipped to the flusher and not
// yet written (inflight), the arrays of the row sets the flusher has
// given back (idle, kept for the table's next rows so that a big table
// does not grow its arrays again for each row group) and what the
// trace's pool of arrays could let go (arrays.bytes: its wholly free
// slabs and the arrays it keeps whole). When the four together pass
// limit, the table holding the most ships its rows as a row group, idle
// arrays go to the pool and the pool lets slabs and arrays go, or the
// reading side waits for the flusher (relieve).
// So the memory follows the limit, not the trace's size or its number
// of tables, and a big table's row groups stay large while small tables
// keep theirs to the end.
type budget struct {
	limit    int64
	buffered int64 // the reading side's
	inflight atomic.Int64
	idle     atomic.Int64
	tables   []*table
	done     chan struct{} // a job finished (capacity 1)
	// scratch is the tables' Scratch: they copy what is appended to it.
	scratch []byte
	arrays  arrays // the reading side's
}

func newBudget(limit int64) *budget {
	return &budget{limit: limit, done: make(chan struct{}, 1), scratch: make([]byte, 0, 64<<10), arrays: arrays{order: slabOrderFor(limit)}}
}

func (m *budget) over() bool {
	return m.buffered+m.inflight.Load()+m.idle.Load()+m.arrays.bytes > m.limit
}

// signal tells a waiting relieve that the flusher has finished a job
// (the flusher's).
func (m *budget) signal() {
	select {
	case m.done <- struct{}{}:
	default:
	}
}

// relieve ships row groups, the biggest first, moves idle arrays to the
// pool, lets the pool's wholly free slabs and kept arrays go (arrays.trim)
// and waits for the flusher, until the tables are within the limit again.
func (m *budget) relieve() error {
	for m.over() {
		if m.buffered > m.limit/2 && m.biggest() != nil {
			if err := m.biggest().ship(); err != nil {
				return err
			}
			continue
		}
		// The biggest idle arrays go to the pool, until a quarter of
		// the limit is left: busy tables keep theirs.
		for m.idle.Load() > m.limit/4 {
			var big *table
			var most int64
			for _, t := range m.tables {
				if h := t.idleBytes(); h > most {
					big, most = t, h
				}
			}
			if big == nil {
				break
			}
			big.dropIdle()
		}
		// The pool keeps what the limit leaves room for.
		if over := m.buffered + m.inflight.Load() + m.idle.Load() + m.arrays.bytes - m.limit; over > 0 && m.arrays.bytes > 0 {
			m.arrays.trim(max(0, m.arrays.bytes-over))
			continue
		}
		if m.inflight.Load() > 0 {
			<-m.done // every job ends with a signal, failed or not
			continue
		}
		if big := m.biggest(); big != nil {
			if err := big.ship(); err != nil {
				return err
			}
			continue
		}
		return nil
	}
	return nil
}

// biggest is the table whose rows take the most bytes, nil when none has
// rows. A table in the middle of a row is passed over: the event's table
// while its stack gets a row of the stacks table.
func (m *budget) biggest() *table {
	var big *table
	for _, t := range m.tables {
		if t.cur.rows > 0 && !t.inRow && (big == nil || t.cur.bytes > big.cur.bytes) {
			big = t
		}
	}
	return big
}
