package dataset

import (
	"fmt"
	"sync"
)

// flusher is the goroutine of a trace that writes its tables' batches:
// Parquet's encoding, compression and the file system, about half the
// work of an export, run beside the reading and decoding. Jobs run in the
// order they are sent, so a table's batches and row groups keep theirs.
type flusher struct {
	jobs chan job
	wg   sync.WaitGroup

	mu  sync.Mutex
	err error // the first failure; later jobs are only recycled
}

// job is a batch to write into t, or with last set, t's final batch
// followed by its footer.
type job struct {
	t    *table
	b    *batch
	last bool
}

func newFlusher() *flusher {
	// Room for a batch of every table of a busy trace: the reading side
	// waits only when the flusher is that far behind.
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
