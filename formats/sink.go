package formats

// Sink receives what an importer (or a table reader) produces, as a
// stream of batches (Batch: some requests of one run, columnar, with
// their messages) and Run rows. A run's requests arrive contiguously, in
// arrival order (batches of different runs are never interleaved); the
// run's Run row follows them — possibly only after later runs' requests,
// because an importer may learn a run's metadata only at the end of its
// file (perf_analyzer writes "version" and "endpoint" after all
// experiments).
//
// A Sink must not retain the batch or the *Run after the call returns:
// producers reuse them. Copy what you keep. A Sink that forwards a batch
// may change it first (a wrapper renaming its run, nulling a value a check
// refused): the producer resets it after the call.
//
// A producer that builds one row at a time writes through a RowWriter.
type Sink interface {
	// Batch receives requests of one run (b.RunID) and their messages.
	Batch(b *Batch) error
	// Run receives the run after all of its requests.
	Run(r *Run) error
}

// RunStarter is an optional Sink extension. A producer that knows some of a
// run's metadata before its first request (the tool, the tokenizer it
// counted with, whether it streamed) passes it to StartRun before that
// request; the complete row still arrives through Run. Analyzers use it to
// prepare per-run state, such as opening the tokenizer a run recorded.
type RunStarter interface {
	StartRun(r *Run) error
}

// StartRun calls s.StartRun when s implements RunStarter.
func StartRun(s Sink, r *Run) error {
	if rs, ok := s.(RunStarter); ok {
		return rs.StartRun(r)
	}
	return nil
}

// ToolHinter is an optional Sink extension: the importer that is about to
// send rows names its tool (the registry calls it before each input), so
// a sink can prepare for that tool's runs (an Analyzer computing each run
// under its own tool's conventions only). A sink that does not get a hint
// must do what it would do for any tool.
type ToolHinter interface {
	ToolHint(tool string)
}

// ToolHint calls s.ToolHint when s implements ToolHinter.
func ToolHint(s Sink, tool string) {
	if h, ok := s.(ToolHinter); ok {
		h.ToolHint(tool)
	}
}

// Tee returns a Sink that forwards every row to each of sinks in order,
// stopping at the first error.
func Tee(sinks ...Sink) Sink { return tee(sinks) }

type tee []Sink

func (t tee) Batch(b *Batch) error {
	for _, s := range t {
		if err := s.Batch(b); err != nil {
			return err
		}
	}
	return nil
}

func (t tee) ToolHint(tool string) {
	for _, s := range t {
		ToolHint(s, tool)
	}
}

func (t tee) StartRun(r *Run) error {
	for _, s := range t {
		if err := StartRun(s, r); err != nil {
			return err
		}
	}
	return nil
}

func (t tee) Run(r *Run) error {
	for _, s := range t {
		if err := s.Run(r); err != nil {
			return err
		}
	}
	return nil
}

// Collector is a Sink that keeps every row in memory, as rows. For tests
// and small inputs only: it holds all events.
type Collector struct {
	Runs     []Run
	Requests []Request
	Events   []Event
}

// Batch implements Sink.
func (c *Collector) Batch(b *Batch) error {
	for i := range b.Len() {
		r := b.Row(i)
		c.Requests = append(c.Requests, cloneRequest(r))
		n := len(c.Events)
		c.Events = b.AppendEvents(c.Events, i)
		for j := n; j < len(c.Events); j++ {
			cloneEvent(&c.Events[j])
		}
	}
	return nil
}

// Request appends one row (for tests that build a Collector by hand).
func (c *Collector) Request(r *Request, ev []Event) error {
	c.Requests = append(c.Requests, *r)
	c.Events = append(c.Events, ev...)
	return nil
}

// Run implements Sink.
func (c *Collector) Run(r *Run) error {
	c.Runs = append(c.Runs, *r)
	return nil
}

// Replay sends the collected rows to s in Sink order.
func (c *Collector) Replay(s Sink) error {
	w := NewRowWriter(s)
	ei, ri := 0, 0
	for i := range c.Runs {
		for ri < len(c.Requests) && c.Requests[ri].RunID == c.Runs[i].RunID {
			start := ei
			for ei < len(c.Events) && c.Events[ei].RunID == c.Requests[ri].RunID && c.Events[ei].RequestKey == c.Requests[ri].RequestKey {
				ei++
			}
			if err := w.Request(&c.Requests[ri], c.Events[start:ei]); err != nil {
				return err
			}
			ri++
		}
		if err := w.Run(&c.Runs[i]); err != nil {
			return err
		}
	}
	return w.Flush()
}

// Clone returns a copy of r whose strings and pointers share nothing
// with r (Batch.Row's strings share the batch's memory).
func (r *Request) Clone() Request { return cloneRequest(*r) }

// cloneRequest returns r with its strings copied out of the batch's
// memory and its pointers fresh.
func cloneRequest(r Request) Request {
	for _, p := range []*string{&r.RunID, &r.SourceID, &r.XRequestID, &r.ResponseID, &r.TraceID, &r.ErrorType, &r.ErrorText,
		&r.ClockDomain, &r.ScheduledStartSource, &r.InputTokensSource, &r.OutputTokensSource, &r.ServerKind, &r.ServerSource, &r.ServerRequestID,
		&r.ServerClockDomain, &r.MatchQuality, &r.ServerFinishReason, &r.Corrections, &r.EndBoundRule, &r.SessionID, &r.ParentID} {
		*p = cloneString(*p)
	}
	for _, p := range []**int64{&r.ErrorCode, &r.StartNs, &r.ScheduledStartNs, &r.FirstTokenOffsetNs, &r.FirstContentOffsetNs, &r.SecondTokenOffsetNs,
		&r.LastTokenOffsetNs, &r.StreamEndOffsetNs, &r.InputTokens, &r.OutputTokens, &r.ReasoningTokens, &r.MaxTokens,
		&r.CachedInputTokens, &r.TurnIndex, &r.SpecSteps, &r.DraftTokens, &r.AcceptedTokens, &r.ServerArrivalNs, &r.ServerQueueNs, &r.ServerPrefillNs, &r.ServerDecodeNs, &r.ServerInferenceNs, &r.ServerTTFTNs,
		&r.ServerE2ENs, &r.ServerTimePerTokenNs, &r.InFlightAtStart, &r.EndBoundOffsetNs} {
		if *p != nil {
			v := **p
			*p = &v
		}
	}
	for _, p := range []**float64{&r.ReportedTTFTMs, &r.ReportedTTFOMs, &r.ReportedTTSTMs, &r.ReportedE2EMs, &r.ReportedITLMs,
		&r.ReportedOutputTokens, &r.ReportedInputTokens, &r.ReportedOutputTokensPS} {
		if *p != nil {
			v := **p
			*p = &v
		}
	}
	return r
}

// cloneEvent copies e's strings out of the batch's memory.
func cloneEvent(e *Event) {
	e.RunID, e.Kind, e.FinishReason = cloneString(e.RunID), cloneString(e.Kind), cloneString(e.FinishReason)
	if e.Text != nil {
		s := cloneString(*e.Text)
		e.Text = &s
	}
	if e.ReasoningText != nil {
		s := cloneString(*e.ReasoningText)
		e.ReasoningText = &s
	}
}

func cloneString(s string) string {
	if s == "" {
		return ""
	}
	return string([]byte(s))
}
