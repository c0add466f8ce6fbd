package formats

// Batch bounds of a RowWriter (and the importers' own batches): a batch is
// handed on once it holds BatchRequests requests or BatchMessages
// messages, whichever comes first — large enough that the per-batch work
// of a sink is noise, small enough that a batch stays in the caches.
const (
	BatchRequests = 1024
	BatchMessages = 1 << 18
	// BatchBytes bounds about the bytes a batch holds (ApproxBytes):
	// 2 MiB.
	BatchBytes = 2 << 20
)

// RowWriter is how a producer that builds one row at a time writes to a
// Sink: it appends each row to a batch (Batch.AppendRow) and hands the
// batch on when it is full, when a row of another run comes, and before a
// Run row, a StartRun or Flush. It implements the Sink's optional
// interfaces (RunStarter, ToolHinter, EventColumnSelector) by forwarding
// them. Call Flush when done: a run's requests that no Run row followed
// are held until then.
type RowWriter struct {
	sink Sink
	b    *Batch
}

// NewRowWriter returns a RowWriter writing to s.
func NewRowWriter(s Sink) *RowWriter { return &RowWriter{sink: s, b: NewBatch("")} }

// Request appends r and its events (in arrival order; nil for sources
// without per-message data). r and ev are copied: the caller may reuse
// them. It fails when the sink failed on an earlier batch, or when r
// cannot be held (AppendRow).
func (w *RowWriter) Request(r *Request, ev []Event) error {
	if w.b.Len() > 0 && r.RunID != w.b.RunID {
		if err := w.Flush(); err != nil {
			return err
		}
	}
	if w.b.Len() == 0 {
		w.b.Reset(r.RunID)
	}
	if err := w.b.AppendRow(r, ev); err != nil {
		return err
	}
	// the strings of r may be the producer's, reused after this call
	i := w.b.Len() - 1
	q := &w.b.Req
	for _, c := range q.strings() {
		if i < len(c.V) && c.V[i] != "" {
			c.V[i] = cloneString(c.V[i])
		}
	}
	if w.b.Len() >= BatchRequests || w.b.Msg.Len() >= BatchMessages || w.b.ApproxBytes() >= BatchBytes {
		return w.Flush()
	}
	return nil
}

// Run hands on the pending batch, then r.
func (w *RowWriter) Run(r *Run) error {
	if err := w.Flush(); err != nil {
		return err
	}
	return w.sink.Run(r)
}

// Flush hands on the pending batch, if any.
func (w *RowWriter) Flush() error {
	if w.b.Len() == 0 {
		return nil
	}
	err := w.sink.Batch(w.b)
	w.b.Reset("")
	return err
}

// StartRun implements RunStarter: the pending batch first.
func (w *RowWriter) StartRun(r *Run) error {
	if err := w.Flush(); err != nil {
		return err
	}
	return StartRun(w.sink, r)
}

// ToolHint implements ToolHinter.
func (w *RowWriter) ToolHint(tool string) { ToolHint(w.sink, tool) }

// EventColumns implements EventColumnSelector.
func (w *RowWriter) EventColumns(r *Run) EventColumns { return EventColumnsOf(w.sink, r) }

// Batch implements Sink: a producer holding a RowWriter may also hand on
// whole batches (the pending rows first).
func (w *RowWriter) Batch(b *Batch) error {
	if err := w.Flush(); err != nil {
		return err
	}
	return w.sink.Batch(b)
}

// RowSink is a consumer that works one row at a time (a test's sink, a
// debugging dump); Rows adapts it to a Sink.
type RowSink interface {
	Request(r *Request, ev []Event) error
	Run(r *Run) error
}

// Rows returns a Sink that hands every request of each batch to s as a
// row (Batch.EachRow), and forwards s's optional interfaces when it has
// them.
func Rows(s RowSink) Sink { return rowsSink{s} }

type rowsSink struct{ s RowSink }

func (r rowsSink) Batch(b *Batch) error { return b.EachRow(r.s.Request) }
func (r rowsSink) Run(run *Run) error   { return r.s.Run(run) }
func (r rowsSink) StartRun(run *Run) error {
	if rs, ok := r.s.(RunStarter); ok {
		return rs.StartRun(run)
	}
	return nil
}
func (r rowsSink) ToolHint(tool string) {
	if h, ok := r.s.(ToolHinter); ok {
		h.ToolHint(tool)
	}
}
func (r rowsSink) EventColumns(run *Run) EventColumns {
	if cs, ok := r.s.(EventColumnSelector); ok {
		return cs.EventColumns(run)
	}
	return AllEventColumns
}

// SendRow sends one request row and its events to s at once, as a batch
// of one (tests, and producers of a handful of rows).
func SendRow(s Sink, r *Request, ev []Event) error {
	b := NewBatch(r.RunID)
	if err := b.AppendRow(r, ev); err != nil {
		return err
	}
	return s.Batch(b)
}
