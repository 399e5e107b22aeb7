package diagnostics

import (
	"fmt"

	"github.com/clrgo/clrevents/trace"
)

// Reader returns a trace.Reader that decodes the session's stream as it
// arrives: events come in time order, each released as soon as the
// stream's ordering marks allow (see trace.NewReader), and
// trace.Reader.Dropped counts the events the runtime dropped. Read until
// io.EOF; after Stop, the rundown arrives and the stream ends.
func (s *Session) Reader(opts ...trace.Option) (*trace.Reader, error) {
	name := fmt.Sprintf("process %d session %#x", s.client.pid, s.ID)
	return trace.NewReader(s, append([]trace.Option{trace.WithName(name)}, opts...)...)
}
