package diagnostics

import (
	"context"
	"fmt"

	"github.com/clrgo/clrevents/trace"
)

// Reader returns a trace.Reader that decodes the session's stream as it
// arrives: events come in time order, each released as soon as the
// stream's ordering marks allow (see trace.NewReader), and
// trace.Reader.Dropped counts the events the runtime dropped. Read until
// io.EOF; after Stop, the rundown arrives and the stream ends.
//
// Reader blocks until the stream's first bytes come, which a runtime
// suspended at startup sends only once resumed: use ReaderContext to
// bound the wait.
func (s *Session) Reader(opts ...trace.Option) (*trace.Reader, error) {
	return s.ReaderContext(context.Background(), opts...)
}

// ReaderContext is Reader, except that when ctx ends before the stream's
// beginning has come, it closes the session (the runtime then ends it)
// and returns an error wrapping ctx's error. Once the reader is returned,
// ctx no longer matters.
func (s *Session) ReaderContext(ctx context.Context, opts ...trace.Option) (*trace.Reader, error) {
	name := fmt.Sprintf("process %d session %#x", s.client.pid, s.ID)
	if err := ctx.Err(); err != nil {
		s.Close()
		return nil, fmt.Errorf("%s: %w before the stream began", name, err)
	}
	closed := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		s.Close()
		close(closed)
	})
	r, err := trace.NewReader(s, append([]trace.Option{trace.WithName(name)}, opts...)...)
	if !stop() {
		<-closed
		if err == nil {
			r.Close()
		}
		return nil, fmt.Errorf("%s: %w before the stream began", name, ctx.Err())
	}
	return r, err
}
