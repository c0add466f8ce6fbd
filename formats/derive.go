package formats

// FillFromEvents sets the request fields that follow from its events (the
// importers call it on every request with per-message data, the analysis
// after a data correction):
// MessageCount, TokenMessageCount, the first-token, first-content,
// second-token, last-token and stream-end offsets, and — unless the request
// is already marked error or cancelled — Status: "error" when an error event
// arrived, "ok" when at least one message carried generated tokens, else
// "empty". A StreamEndOffsetNs already set by the importer (a stream-close
// time the tool recorded) is kept when it is later than the last event.
func FillFromEvents(r *Request, events []Event) {
	r.MessageCount = int64(len(events))
	r.TokenMessageCount = 0
	r.FirstTokenOffsetNs, r.FirstContentOffsetNs, r.SecondTokenOffsetNs, r.LastTokenOffsetNs = nil, nil, nil, nil
	sawError := false
	last := int64(-1) // the last token message's offset
	for i := range events {
		e := &events[i]
		if e.Kind == KindError {
			sawError = true
		}
		if !e.CarriesTokens() {
			continue
		}
		r.TokenMessageCount++
		off := e.OffsetNs
		switch r.TokenMessageCount {
		case 1:
			r.FirstTokenOffsetNs = i64p(off)
		case 2:
			r.SecondTokenOffsetNs = i64p(off)
		}
		if e.Kind == KindContent && r.FirstContentOffsetNs == nil {
			r.FirstContentOffsetNs = i64p(off)
		}
		last = off
	}
	if r.TokenMessageCount > 0 {
		r.LastTokenOffsetNs = i64p(last)
	}
	if n := len(events); n > 0 {
		last := events[n-1].OffsetNs
		if r.StreamEndOffsetNs == nil || *r.StreamEndOffsetNs < last {
			r.StreamEndOffsetNs = i64p(last)
		}
	}
	if r.Status == StatusError || r.Status == StatusCancelled {
		return
	}
	switch {
	case sawError:
		r.Status = StatusError
	case r.TokenMessageCount > 0:
		r.Status = StatusOK
	default:
		r.Status = StatusEmpty
	}
}

func i64p(v int64) *int64 { return &v }

// FillOutputCount sets a completed request's unknown output length to its
// number of token messages (source chunk_count), the last of the
// canonical sources (SCHEMA.md output_tokens): so a notebook reading
// requests.output_tokens gets the N the report uses. A request with no
// token message, or not completed, keeps a null.
func FillOutputCount(r *Request) {
	if r.OutputTokens == nil && r.Status == StatusOK && r.TokenMessageCount > 0 {
		n := r.TokenMessageCount
		r.OutputTokens, r.OutputTokensSource = &n, SourceChunkCount
	}
}

// WithOutputCount returns a Sink that applies FillOutputCount to every
// request before s receives it (the registry's imports go through it).
func WithOutputCount(s Sink) Sink { return outputCountSink{s} }

type outputCountSink struct{ s Sink }

func (o outputCountSink) Batch(b *Batch) error {
	for i := range b.Len() {
		b.FillOutputCount(i)
	}
	return o.s.Batch(b)
}

func (o outputCountSink) Run(r *Run) error { return o.s.Run(r) }

func (o outputCountSink) StartRun(r *Run) error { return StartRun(o.s, r) }

func (o outputCountSink) ToolHint(tool string) { ToolHint(o.s, tool) }

func (o outputCountSink) EventColumns(r *Run) EventColumns { return EventColumnsOf(o.s, r) }
