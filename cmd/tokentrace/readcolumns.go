package main

import "github.com/tokentrace/tokentrace/formats"

// The sinks that wrap an Analyzer or a Decomposer pass on which events
// columns they read (formats.EventColumnSelector), so that reading tables
// skips the others — the generated text above all (formats.ReadTables).

// EventColumns implements formats.EventColumnSelector for the wrapped
// sink. The run keeps its original id: the choice of columns does not
// depend on it, and renaming here would assign ids before the rows arrive.
func (r *renamer) EventColumns(run *formats.Run) formats.EventColumns {
	return formats.EventColumnsOf(r.sink, run)
}

// EventColumns implements formats.EventColumnSelector: what the
// Decomposer reads.
func (j *joinedSink) EventColumns(run *formats.Run) formats.EventColumns {
	return j.dec.EventColumns(run)
}

// EventColumns implements formats.EventColumnSelector: join keys come from
// requests only.
func (k *keySink) EventColumns(*formats.Run) formats.EventColumns { return 0 }
