package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/clrgo/clrevents/bench/peer/hdr"
	"github.com/clrgo/clrevents/bench/peer/hdr/ours"
	"github.com/clrgo/clrevents/bench/peer/hdr/peer"
	"github.com/clrgo/clrevents/nettrace"
	"github.com/clrgo/clrevents/trace"
	dnettrace "github.com/pyroscope-io/dotnetdiag/nettrace"
	"github.com/pyroscope-io/dotnetdiag/nettrace/profiler"
)

// headers is what a pass over a trace's event headers adds up.
type headers = hdr.Sums

// ourHeaders reads every event of an EventPipe trace through package trace
// in order o, with the header fields a consumer looks at.
func ourHeaders(data []byte, o trace.Order) headers {
	return ourHeadersFrom(bytes.NewReader(data), o)
}

// ourHeadersFrom is ourHeaders reading from in.
func ourHeadersFrom(in io.Reader, o trace.Order) headers {
	h, err := ours.Read(in, o)
	if err != nil {
		fatalf("%v", err)
	}
	return h
}

// netHeaders is ourHeaders with the format reader, package nettrace.
func netHeaders(data []byte, timeOrder bool) headers {
	r, err := nettrace.NewReader(bytes.NewReader(data))
	if err != nil {
		fatalf("ours: %v", err)
	}
	if timeOrder {
		r.SetOrder(nettrace.TimeOrder)
	}
	var h headers
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fatalf("ours: %v", err)
		}
		h.Events++
		h.TS += uint64(e.Timestamp)
		h.TID += e.ThreadID
		h.IDs += uint64(e.ID)
		h.Payload += uint64(len(e.Payload))
	}
	return h
}

// peerAll reads every event of the trace with the peer, as a user who
// wants each event's header and what kind of event it is: metadata kept by
// ID and looked up per event; stack and sequence point blocks parsed (the
// handlers are set, as its profiler sets them).
func peerAll(data []byte) headers {
	h, err := peerAllErr(data)
	if err != nil {
		fatalf("%v", err)
	}
	return h
}

// peerAllErr is peerAll, returning its error.
func peerAllErr(data []byte) (headers, error) {
	var h headers
	s := dnettrace.NewStream(bytes.NewReader(data))
	if _, err := s.Open(); err != nil {
		return h, fmt.Errorf("peer: %w", err)
	}
	md := make(map[int32]*dnettrace.Metadata)
	var stacks, sps int
	s.MetadataHandler = func(m *dnettrace.Metadata) error {
		md[m.Header.MetaDataID] = m
		return nil
	}
	s.StackBlockHandler = func(b *dnettrace.StackBlock) error {
		stacks += len(b.Stacks)
		return nil
	}
	s.SequencePointBlockHandler = func(b *dnettrace.SequencePointBlock) error {
		sps += len(b.Threads)
		return nil
	}
	s.EventHandler = func(b *dnettrace.Blob) error {
		m := md[b.Header.MetadataID]
		if m == nil {
			return fmt.Errorf("event with undefined metadata %d", b.Header.MetadataID)
		}
		h.Events++
		h.TS += uint64(b.Header.TimeStamp)
		h.TID += uint64(b.Header.ThreadID)
		h.IDs += uint64(m.Header.EventID)
		h.Payload += uint64(b.Payload.Len())
		return nil
	}
	if err := peer.Drain(s); err != nil {
		return h, err
	}
	sink += uint64(stacks + sps)
	return h, nil
}

// sameEvents checks that both readers see the same events in the trace
// (how many, and the sums of their timestamps, threads, event IDs and
// payload sizes), in both of our orders: the ratios compare the same work
// only then. TestSameEvents checks the harness's own traces so; setup
// checks those given with -trace.
func sameEvents(data []byte) error {
	want, err := peerAllErr(data)
	if err != nil {
		return err
	}
	for _, o := range []trace.Order{trace.FileOrder, trace.TimeOrder} {
		got, err := ours.Read(bytes.NewReader(data), o)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("the readers disagree: ours in %v %+v, the peer %+v", o, got, want)
		}
	}
	return nil
}

// peerProfile builds the peer's CPU profile (its SampleProfiler, every
// thread's time, managed and native) and takes its folded samples.
func peerProfile(data []byte) uint64 {
	s := dnettrace.NewStream(bytes.NewReader(data))
	tr, err := s.Open()
	if err != nil {
		fatalf("peer: %v", err)
	}
	p := profiler.NewSampleProfiler(tr)
	s.EventHandler = p.EventHandler
	s.MetadataHandler = p.MetadataHandler
	s.StackBlockHandler = p.StackBlockHandler
	s.SequencePointBlockHandler = p.SequencePointBlockHandler
	if err := peer.Drain(s); err != nil {
		fatalf("%v", err)
	}
	var n uint64
	for k, v := range p.Samples() {
		n += uint64(len(k)) + uint64(v)
	}
	return n
}

// sumWords sums b as little-endian 64-bit words with four accumulators
// (and the last bytes one at a time): about as fast as a loop in Go reads
// the input from memory, the floor of any reader.
func sumWords(b []byte) uint64 {
	var s0, s1, s2, s3 uint64
	for len(b) >= 32 {
		s0 += binary.LittleEndian.Uint64(b)
		s1 += binary.LittleEndian.Uint64(b[8:])
		s2 += binary.LittleEndian.Uint64(b[16:])
		s3 += binary.LittleEndian.Uint64(b[24:])
		b = b[32:]
	}
	return s0 + s1 + s2 + s3 + sumWords1(b)
}

// sumWords1 is sumWords with one accumulator, a word after the other: each
// addition waits for the one before.
func sumWords1(b []byte) uint64 {
	var n uint64
	for len(b) >= 8 {
		n += binary.LittleEndian.Uint64(b)
		b = b[8:]
	}
	for _, x := range b {
		n += uint64(x)
	}
	return n
}

// peerEvents reads every event of the trace with the peer, with only its
// event handler set: the least the peer can do to hand out each event's
// header (it then neither parses metadata, stack nor sequence point
// blocks), and so the hardest comparison for us.
func peerEvents(data []byte) headers {
	return peerEventsFrom(bytes.NewReader(data))
}

// peerEventsFrom is peerEvents reading from in.
func peerEventsFrom(in io.Reader) headers {
	h, err := peer.Read(in)
	if err != nil {
		fatalf("%v", err)
	}
	return h
}
