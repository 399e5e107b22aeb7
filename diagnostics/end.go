package diagnostics

import (
	"context"
	"os"
	"sync/atomic"
	"time"
)

// stopCommandTimeout bounds sending StopTracing when EndOn stops a
// session (its answer, which comes after the stream's end, is bounded by
// the drain).
var stopCommandTimeout = 10 * time.Second

// An Ending is the end of a session that EndOn watches for. Its fields
// are set once Release returns.
type Ending struct {
	// Stopped is true when stop came and StopTracing was sent; StopErr is
	// the error of sending it or the runtime's answer (Session.WaitStop),
	// unless quit came too.
	Stopped bool
	StopErr error
	// Quit is true when quit came before Release: the session was closed
	// at once, and its stream ended where it was.
	Quit bool

	s                    *Session
	stopWatch, quitWatch func() bool
	stopDone, quitDone   chan struct{}
	quit                 atomic.Bool
}

// EndOn ends the session as dotnet-trace ends one, on two steps a caller
// signals (the first and the second SIGINT, say). When stop is done, it
// calls stopping (when not nil) and Stop, with drain bounding the rest of
// the stream: a reader of the stream then gets the rundown and the
// stream's end. When quit is done, before the stream has ended, it
// closes the session at once: the stream ends where it is. Release the
// Ending when the stream has ended.
func (s *Session) EndOn(stop, quit context.Context, drain time.Duration, stopping func()) *Ending {
	e := &Ending{s: s, stopDone: make(chan struct{}), quitDone: make(chan struct{})}
	e.stopWatch = context.AfterFunc(stop, func() {
		defer close(e.stopDone)
		if stopping != nil {
			stopping()
		}
		c, cancel := context.WithTimeout(quit, stopCommandTimeout)
		defer cancel()
		e.Stopped, e.StopErr = true, s.Stop(c, drain)
	})
	e.quitWatch = context.AfterFunc(quit, func() {
		defer close(e.quitDone)
		e.quit.Store(true)
		s.Close()
	})
	return e
}

// Release stops watching for stop and quit, waits for what they began to
// finish (the runtime's answer to StopTracing among it: release the
// Ending once the stream has ended), and sets Stopped, StopErr and Quit.
func (e *Ending) Release() {
	if !e.stopWatch() {
		<-e.stopDone
	}
	if !e.quitWatch() {
		<-e.quitDone
	}
	e.Quit = e.quit.Load()
	if e.Stopped && e.StopErr == nil && !e.Quit {
		e.StopErr = e.s.WaitStop()
	}
}

// Steps turns interrupts (SIGINT and SIGTERM, as signal.Notify delivers
// them) into the two steps that end a session as dotnet-trace ends one
// (EndOn): the first interrupt ends Stop, asking to finish (stop the
// session and take the rest of the stream, the rundown); the next ends
// Quit, asking to quit at once. Once the program finishes on its own (a
// duration passed, enough events came) and says so (Finishing), the
// first interrupt ends Quit.
type Steps struct {
	Stop, Quit context.Context
	ending     atomic.Bool // the next interrupt quits
	release    func()
}

// NewSteps watches interrupts until Release.
func NewSteps(interrupts <-chan os.Signal) *Steps {
	s := &Steps{}
	var cancelStop, cancelQuit context.CancelFunc
	s.Stop, cancelStop = context.WithCancel(context.Background())
	s.Quit, cancelQuit = context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-interrupts:
				if s.ending.Swap(true) {
					cancelQuit()
					return
				}
				cancelStop()
			case <-done:
				return
			}
		}
	}()
	s.release = func() {
		close(done)
		cancelStop()
		cancelQuit()
	}
	return s
}

// Finishing says the program has begun to finish on its own: the next
// interrupt quits.
func (s *Steps) Finishing() { s.ending.Store(true) }

// Release stops watching the interrupts and ends Stop and Quit.
func (s *Steps) Release() { s.release() }
