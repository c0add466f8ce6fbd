package formats

import "reflect"

// rowTable is where a table writer streams one table's rows: a Parquet
// file (*parquetTable), a partitioned dataset (*hiveTable), or an Arrow IPC
// or CSV file (the typed views arrowRows and csvRows). size is the row's
// approximate in-memory size, for batch limits.
type rowTable[T any] interface {
	add(row *T, size int64)
	failed() error
	finish() error
	abort()
}

// tableSink is the Sink the table writers (ParquetWriter, ArrowIPCWriter,
// CSVWriter) share: it checks the Sink contract, drops event text under
// NoText, stamps Run rows, streams rows into the three tables, and gives
// every writer the same lifecycle — the first failed call makes it
// unusable (later calls return that error), Close finishes the tables and
// moves them into place (commit), Abort discards them. Not safe for
// concurrent use.
type tableSink struct {
	noText   bool
	check    sinkChecker
	events   rowTable[Event]
	reqs     rowTable[Request]
	runs     rowTable[Run]
	err      error // sticky
	closed   bool
	finished bool // Finish has completed the tables; Close only commits
	// onRequest and onRun, when set, see each row's run id first (the
	// hive layout numbers parts in run order); commit moves the finished
	// tables into place; cleanup removes what Abort must besides the
	// tables' temporary files.
	onRequest, onRun func(runID string)
	commit           func() error
	cleanup          func()
	// spool holds each run's request rows until its Run row arrives, for
	// the columns that need the run complete (spool.go).
	spool spool
}

// Batch implements Sink: it appends the batch's requests to the requests
// table and their messages to the events table (text and reasoning text
// nulled under NoText). It returns an error if the rows break the Sink
// contract (see ParquetWriter) or if writing fails.
func (w *tableSink) Batch(b *Batch) error { return b.EachRow(w.Request) }

// Request writes one request row and its events, as Batch does a batch's.
func (w *tableSink) Request(r *Request, events []Event) error {
	if err := w.usable(); err != nil {
		return err
	}
	if err := w.check.request(r, events); err != nil {
		return w.fail(err)
	}
	if w.onRequest != nil {
		w.onRequest(r.RunID)
	}
	if err := w.spool.add(r); err != nil {
		return w.fail(err)
	}
	for i := range events {
		e := &events[i]
		if w.noText && (e.Text != nil || e.ReasoningText != nil) {
			c := *e
			c.Text, c.ReasoningText = nil, nil
			e = &c
		}
		w.events.add(e, eventSize(e))
	}
	release(w.events)
	if err := w.events.failed(); err != nil {
		return w.fail(err)
	}
	return nil
}

// addRequest appends a finished request row (spool.flush) to the
// requests table.
func (w *tableSink) addRequest(r *Request) error {
	w.reqs.add(r, requestSize(r))
	release(w.reqs)
	return w.reqs.failed()
}

// Run implements Sink: it appends r to the runs table, filling
// SchemaVersion and TokentraceVersion when zero. It returns an error if r
// breaks the Sink contract (empty or repeated RunID, requests after it) or
// if writing fails.
func (w *tableSink) Run(r *Run) error {
	if err := w.usable(); err != nil {
		return err
	}
	if err := w.check.run(r); err != nil {
		return w.fail(err)
	}
	row := stampRun(r)
	if w.onRun != nil {
		w.onRun(r.RunID)
	}
	w.runs.add(&row, runSize(&row))
	release(w.runs)
	if err := w.runs.failed(); err != nil {
		return w.fail(err)
	}
	if w.spool.runArrived(&row) {
		if err := w.spool.flush(false, w.addRequest); err != nil {
			return w.fail(err)
		}
	}
	return nil
}

// Close finishes the three tables (batches, footers, fsync) and moves them
// into place, replacing previous tables. If a run had requests but no Run
// row, if an earlier call failed, or if anything here fails, Close removes
// the temporary files, leaves previous tables untouched and returns the
// error. Each file is replaced atomically; the renames follow one another
// only after all data is on disk (should one fail, the directory holds
// files of two writes, which ReadTables detects through
// tokentrace.import_id). Calling Close again returns the same result;
// Close after Abort returns nil, or the error that preceded the Abort.
func (w *tableSink) Close() error {
	if w.closed {
		if w.err == errClosed {
			return nil
		}
		return w.err
	}
	err := w.Finish()
	if err == nil {
		err = w.commit()
	}
	if err != nil {
		w.fail(err)
		w.Abort()
		return err
	}
	w.closed = true
	return nil
}

// Finish completes the tables — the last rows encoded, footers written,
// temporary files closed, the encoders' buffers released — without moving
// them into place; after it the writer takes no more rows, and Close only
// commits (or Abort discards). Calling it before work that may still fail
// frees the writer's memory for that work: analyze finishes the tables,
// computes the report, then commits. On error the writer is aborted.
// Calling it again returns the first call's result.
func (w *tableSink) Finish() error {
	if w.finished || w.closed {
		if w.err == errClosed {
			return nil
		}
		return w.err
	}
	err := w.err
	if err == nil {
		err = w.check.finish()
	}
	if err == nil {
		err = w.spool.flush(true, w.addRequest)
	}
	if err == nil {
		err = cmpErr(w.events.finish(), w.reqs.finish(), w.runs.finish())
	}
	if err != nil {
		w.fail(err)
		w.Abort()
		return err
	}
	w.finished = true
	return nil
}

// Abort discards everything written: it closes and removes the temporary
// files, leaving any previous tables in the directory untouched. It is safe
// to call at any time, more than once, and after Close (then it does
// nothing).
func (w *tableSink) Abort() {
	if w.closed {
		return
	}
	w.closed = true
	if w.err == nil {
		w.err = errClosed
	}
	if w.events != nil {
		w.events.abort()
	}
	if w.reqs != nil {
		w.reqs.abort()
	}
	if w.runs != nil {
		w.runs.abort()
	}
	w.spool.abort()
	if w.cleanup != nil {
		w.cleanup()
	}
}

func (w *tableSink) usable() error {
	if (w.closed || w.finished) && w.err == nil {
		return errClosed
	}
	return w.err
}

func (w *tableSink) fail(err error) error {
	if w.err == nil {
		w.err = err
	}
	return w.err
}

// release hands the rows a Parquet table still batches to the encoder,
// which copies their values, so that the writer keeps no reference into the
// rows the caller passed once a Sink call returns. Strings in those rows
// are often substrings of a much larger buffer (the GenAI-Perf importer's
// rows point into each request's whole unescaped response text, ~130 KB):
// a batch of 1,024 request rows kept alive ~130 MB of them on the 250 MB
// benchmark run. Arrow IPC and CSV tables copy (or write) each row in add.
func release[T any](t rowTable[T]) {
	switch t := any(t).(type) {
	case requestRows:
		release(t.rowTable)
	case *parquetTable[T]:
		t.writeBatch()
	case *hiveTable[T]:
		if t.cur != nil {
			t.cur.writeBatch()
			if t.err == nil {
				t.err = t.cur.err
			}
		}
	}
}

// arrowRows and csvRows are typed views of the reflection-driven Arrow IPC
// and CSV tables.
type arrowRows[T any] struct{ *arrowTable }

func (a arrowRows[T]) add(row *T, size int64) { a.arrowTable.add(reflect.ValueOf(row).Elem(), size) }
func (a arrowRows[T]) failed() error          { return a.err }

type csvRows[T any] struct{ *csvTable }

func (c csvRows[T]) add(row *T, _ int64) { c.csvTable.add(reflect.ValueOf(row).Elem()) }
func (c csvRows[T]) failed() error       { return c.err }

// requestRows writes Request rows as requestRow, the derived columns
// filled (newRequestRow).
type requestRows struct{ rowTable[requestRow] }

func (t requestRows) add(r *Request, size int64) {
	row := newRequestRow(r)
	t.rowTable.add(&row, size)
}
