package formats

import (
	"bufio"
	"encoding/binary"
	"io"
	"os"
	"reflect"
	"sync"
)

// The request columns that need a run's rows complete (in_flight_at_start,
// end_bound_offset_ns, end_bound_rule: InFlight) are filled by the table
// writers in a second pass: a run's request rows go to a spool file beside
// the tables (".requests-spool.tmp-…", each row in the exact encoding of
// spool_codec.go) as they arrive, their start and end in memory (24 bytes
// a request); when the run's Run row has come (the Sink contract: after
// all of its requests), the columns are computed and the spooled rows
// stream into the requests table. Runs are flushed in the order of their
// first request, so requests keep the order SCHEMA.md states; events are
// written as they arrive. Memory: a 64 KiB buffer per pending run plus the
// spans of the runs not yet flushed. The round trip costs about 2 µs a
// request.

// spoolBuffer is the size of a spool file's write and read buffers.
const spoolBuffer = 64 << 10

// pendingRun is a run whose requests are spooled, waiting for its Run row.
type pendingRun struct {
	id    string
	run   *Run // nil until the Run row arrives
	spans []Span
	file  tempFile
	w     *bufio.Writer
	buf   []byte
}

// spool is the tableSink's queue of pending runs, in first-request order.
// mu guards the files' creation against abort, which an interrupt runs
// from another goroutine (cmd/tokentrace interrupt.go): a spool file is
// either known to abort or not created.
type spool struct {
	dir     string
	mu      sync.Mutex
	aborted bool
	pending []*pendingRun
	byID    map[string]*pendingRun
}

// add spools r (a copy is encoded; nothing of r is kept).
func (s *spool) add(r *Request) error {
	p := s.byID[r.RunID]
	if p == nil {
		s.mu.Lock()
		if s.aborted {
			s.mu.Unlock()
			return errClosed
		}
		if s.byID == nil {
			s.byID = map[string]*pendingRun{}
		}
		p = &pendingRun{id: r.RunID}
		if err := p.file.create(s.dir, "requests-spool"); err != nil {
			s.mu.Unlock()
			return err
		}
		p.w = bufio.NewWriterSize(p.file.f, spoolBuffer)
		s.byID[r.RunID] = p
		s.pending = append(s.pending, p)
		s.mu.Unlock()
	}
	p.buf = requestCodec.append(p.buf[:0], reflect.ValueOf(r).Elem())
	var n [binary.MaxVarintLen64]byte
	if _, err := p.w.Write(n[:binary.PutUvarint(n[:], uint64(len(p.buf)))]); err != nil {
		return p.file.errorf("spool: %w", err)
	}
	if _, err := p.w.Write(p.buf); err != nil {
		return p.file.errorf("spool: %w", err)
	}
	p.spans = append(p.spans, SpanOf(r))
	return nil
}

// runArrived records a run's Run row; it reports whether the run had
// spooled requests.
func (s *spool) runArrived(r *Run) bool {
	if p := s.byID[r.RunID]; p != nil {
		p.run = r
		return true
	}
	return false
}

// flush moves the pending runs whose Run row has arrived, from the head of
// the queue (all of them with all), into add, each row with its in-flight
// columns set.
func (s *spool) flush(all bool, add func(*Request) error) error {
	for len(s.pending) > 0 && (all || s.pending[0].run != nil) {
		p := s.pending[0]
		if err := p.flush(add); err != nil {
			return err
		}
		s.mu.Lock()
		s.pending = s.pending[1:]
		delete(s.byID, p.id)
		s.mu.Unlock()
	}
	return nil
}

// flush computes the run's in-flight columns and streams its spooled rows
// into add; the spool file is removed.
func (p *pendingRun) flush(add func(*Request) error) error {
	defer p.remove()
	if err := p.w.Flush(); err != nil {
		return p.file.errorf("spool: %w", err)
	}
	if _, err := p.file.f.Seek(0, io.SeekStart); err != nil {
		return p.file.errorf("spool: %w", err)
	}
	res := InFlight(p.spans, InFlightOptionsOf(p.run))
	br := bufio.NewReaderSize(p.file.f, spoolBuffer)
	var row Request
	rv := reflect.ValueOf(&row).Elem()
	for i := range p.spans {
		n, err := binary.ReadUvarint(br)
		if err != nil {
			return p.file.errorf("spool: row %d: %w", i, err)
		}
		if uint64(cap(p.buf)) < n {
			p.buf = make([]byte, n)
		}
		p.buf = p.buf[:n]
		if _, err := io.ReadFull(br, p.buf); err != nil {
			return p.file.errorf("spool: row %d: %w", i, err)
		}
		if err := requestCodec.decode(p.buf, rv); err != nil {
			return p.file.errorf("spool: row %d: %w", i, err)
		}
		fillInFlight(&row, p.spans[i], res, i)
		if err := add(&row); err != nil {
			return err
		}
	}
	return nil
}

// fillInFlight sets r's in-flight columns from res (entry i, span s).
func fillInFlight(r *Request, s Span, res InFlightResult, i int) {
	r.InFlightAtStart, r.EndBoundOffsetNs, r.EndBoundRule = nil, nil, EndRecorded
	if !s.HasStart {
		return
	}
	r.InFlightAtStart = i64p(res.AtStart[i])
	if res.Rule[i] != EndRecorded {
		r.EndBoundOffsetNs = i64p(res.EndNs[i] - s.StartNs)
		r.EndBoundRule = res.Rule[i]
	}
}

// remove closes and deletes the spool file.
func (p *pendingRun) remove() {
	if p.file.f != nil {
		p.file.f.Close()
		p.file.f = nil
	}
	if p.file.tmp != "" {
		os.Remove(p.file.tmp)
	}
}

// abort removes every spool file; later adds fail.
func (s *spool) abort() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.aborted = true
	for _, p := range s.pending {
		p.remove()
	}
	s.pending, s.byID = nil, nil
}

// FillInFlight sets the in-flight columns of one run's requests (all of
// them, in any order) as the table writers do: for callers that hold a
// run's rows in memory (tests, the analysis of a joined run).
func FillInFlight(run *Run, reqs []Request) {
	spans := make([]Span, len(reqs))
	for i := range reqs {
		spans[i] = SpanOf(&reqs[i])
	}
	res := InFlight(spans, InFlightOptionsOf(run))
	for i := range reqs {
		fillInFlight(&reqs[i], spans[i], res, i)
	}
}
