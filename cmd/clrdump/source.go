package main

import (
	"errors"
	"strings"
	"time"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/nettrace"
)

// record is one event from either reader, with what clrdump needs.
type record struct {
	provider string // name, or the GUID in text when the provider is unknown
	guid     clrevents.GUID
	id       uint16
	version  uint8
	opcode   uint8
	level    uint8
	keywords uint64
	pid, tid uint64
	time     time.Time
	ptrSize  int
	payload  []byte
	offset   int64
	// meta is the EventSource metadata of a nettrace event, if any.
	meta *nettrace.Metadata
	name string // the event name the trace itself gives, if any
}

// source reads records; next returns io.EOF at the end.
type source interface {
	next(r *record) error
	close() error
	describe() string
}

// openSource opens a trace: an ETW log when the name says .etl (also
// inside a .zip), else an EventPipe file; a file that is not EventPipe is
// tried as ETW.
func openSource(path string, timeOrder bool) (source, error) {
	if strings.Contains(strings.ToLower(path), ".etl") {
		return openETL(path)
	}
	s, err := openNettrace(path, timeOrder)
	if err != nil && errors.Is(err, nettrace.ErrFormat) {
		if s2, err2 := openETL(path); err2 == nil {
			return s2, nil
		}
	}
	return s, err
}

type nettraceSource struct{ r *nettrace.Reader }

func openNettrace(path string, timeOrder bool) (source, error) {
	r, err := nettrace.Open(path)
	if err != nil {
		return nil, err
	}
	if timeOrder {
		r.SetOrder(nettrace.TimeOrder)
	}
	return &nettraceSource{r}, nil
}

func (s *nettraceSource) next(rec *record) error {
	e, err := s.r.Next()
	if err != nil {
		return err
	}
	*rec = record{
		provider: e.Provider, guid: e.ProviderGUID, id: e.ID, version: e.Version,
		opcode: e.Opcode, level: e.Level, keywords: e.Keywords,
		pid: e.ProcessID, tid: e.ThreadID, time: e.Time, ptrSize: e.PointerSize,
		payload: e.Payload, offset: e.Offset, meta: e.Metadata, name: e.Name,
	}
	return nil
}

func (s *nettraceSource) close() error { return s.r.Close() }

func (s *nettraceSource) describe() string {
	i := s.r.Info()
	return i.Format.String()
}

type etlSource struct{ r *etl.Reader }

func openETL(path string) (source, error) {
	r, err := etl.Open(path)
	if err != nil {
		return nil, err
	}
	return &etlSource{r}, nil
}

func (s *etlSource) next(rec *record) error {
	e, err := s.r.Next()
	if err != nil {
		return err
	}
	name := ""
	if p, ok := clrevents.ProviderByGUID(e.ProviderGUID); ok {
		name = p.String()
	}
	*rec = record{
		provider: name, guid: e.ProviderGUID, id: e.ID, version: e.Version,
		opcode: e.Opcode, level: e.Level, keywords: e.Keywords,
		pid: uint64(e.ProcessID), tid: uint64(e.ThreadID), time: e.Time, ptrSize: e.PointerSize,
		payload: e.Payload, offset: e.Offset,
	}
	return nil
}

func (s *etlSource) close() error { return s.r.Close() }

func (s *etlSource) describe() string { return "ETW log" }
