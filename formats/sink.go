package formats

// Sink receives the rows an importer (or a table reader) produces, as a
// stream. A run's requests arrive contiguously (requests of different runs
// are never interleaved), each with its events; the run's Run row follows
// them — possibly only after later runs' requests, because an importer may
// learn a run's metadata only at the end of its file (perf_analyzer writes
// "version" and "endpoint" after all experiments).
//
// A Sink must not retain the events slice or the *Request after the call
// returns: producers reuse them. Copy what you keep.
type Sink interface {
	// Request receives one request and its events in arrival order (nil for
	// sources without per-message data).
	Request(r *Request, events []Event) error
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

func (t tee) Request(r *Request, ev []Event) error {
	for _, s := range t {
		if err := s.Request(r, ev); err != nil {
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

// Collector is a Sink that keeps every row in memory. For tests and small
// inputs only: it holds all events.
type Collector struct {
	Runs     []Run
	Requests []Request
	Events   []Event
}

// Request implements Sink.
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
	ei, ri := 0, 0
	for i := range c.Runs {
		for ri < len(c.Requests) && c.Requests[ri].RunID == c.Runs[i].RunID {
			start := ei
			for ei < len(c.Events) && c.Events[ei].RunID == c.Requests[ri].RunID && c.Events[ei].RequestKey == c.Requests[ri].RequestKey {
				ei++
			}
			if err := s.Request(&c.Requests[ri], c.Events[start:ei]); err != nil {
				return err
			}
			ri++
		}
		if err := s.Run(&c.Runs[i]); err != nil {
			return err
		}
	}
	return nil
}
