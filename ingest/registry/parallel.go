package registry

import (
	"errors"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// maxWorkers caps the default number of files read at once
// (ingest.Options.Parallel = 0): decoding a file is CPU-bound, and more
// workers than cores only add buffered runs.
const maxWorkers = 4

// workerCount is how many of n files to read at once under opt.
func workerCount(opt ingest.Options, n int) int {
	w := opt.Parallel
	if w <= 0 {
		w = min(runtime.GOMAXPROCS(0), maxWorkers)
	}
	return max(1, min(w, n))
}

// forEach calls fn(i) for every i in [0, n) on up to workers goroutines,
// in increasing order of i as each goroutine becomes free, and returns
// when all calls have. stop, when not nil, is asked before each call: once
// it returns true for i, the larger indexes are not called (the caller
// has an answer that makes them moot, such as an earlier error).
func forEach(n, workers int, stop func(i int) bool, fn func(i int)) {
	if workers <= 1 {
		for i := 0; i < n; i++ {
			if stop != nil && stop(i) {
				return
			}
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || (stop != nil && stop(i)) {
					return
				}
				fn(i)
			}
		})
	}
	wg.Wait()
}

// bufferBudget bounds the bytes of rows held by the runs decoded ahead of
// the one being delivered (about unsafe.Sizeof of each row and its text):
// a run that would pass it waits for its turn and then streams straight
// to the sink. 32 MiB hold several small runs (a 20-request AIPerf run of
// 400-token streams is about 1 MB of rows) and leave large ones streaming.
// A variable for the tests.
var bufferBudget int64 = 32 << 20

// aheadPerWorker is how many runs each worker may have decoded beyond the
// one being delivered.
const aheadPerWorker = 2

// errStopped is what a run decoded ahead gets from its sink once Import
// has stopped (an earlier job failed): it ends that import early; the
// error is not reported.
var errStopped = errors.New("import stopped")

// importParallel is Import's path for several jobs on several workers:
// each job is decoded on a worker into a recorder, and the jobs' rows,
// warnings and tool hints reach sink in the jobs' order, as Import's
// serial loop sends them: the job whose turn it is (every job before it
// delivered) streams straight into sink, from its worker; a job decoded
// ahead of its turn is held (copied: producers reuse their rows) and
// replayed when its turn comes, or — past bufferBudget — waits for its
// turn and then streams. At most aheadPerWorker×workers jobs are in hand
// beyond the one delivered. The first error in job order is returned,
// after the rows its job sent before it; later jobs are stopped and their
// rows dropped, and every job's Input is closed before importParallel
// returns.
func importParallel(jobs []Job, opts []ingest.Options, workers int, sink formats.Sink) error {
	n := len(jobs)
	inputs := make([]*ingest.Input, n)
	for i := range jobs {
		inputs[i], jobs[i].input = jobs[i].input, nil
	}
	recs := make([]*recorder, n)
	for i := range recs {
		recs[i] = &recorder{sink: sink, warn: opts[i].Warn, turn: make(chan struct{}), done: make(chan struct{})}
	}
	quit := make(chan struct{})
	slots := make(chan struct{}, aheadPerWorker*workers)
	var buffered atomic.Int64
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				select {
				case slots <- struct{}{}:
				case <-quit:
					return
				}
				i := int(next.Add(1) - 1)
				if i >= n {
					<-slots
					return
				}
				r := recs[i]
				r.quit, r.buffered = quit, &buffered
				o := opts[i]
				if o.Warn != nil {
					o.Warn = r.warnf
				}
				r.add(op{kind: opHint, msg: jobs[i].Importer.Name()})
				j := jobs[i]
				j.input = inputs[i]
				r.err = importJob(j, o, r)
				close(r.done)
			}
		})
	}
	stop := func() {
		close(quit)
		wg.Wait()
		// the inputs Resolve kept open of the jobs never started
		for i := int(min(next.Load(), int64(n))); i < n; i++ {
			if inputs[i] != nil {
				inputs[i].Close()
			}
		}
	}
	for i, r := range recs {
		close(r.turn)
		<-r.done
		err := r.err
		if !r.direct { // decoded whole before its turn: replay it here
			if e := r.flush(); e != nil && err == nil {
				err = e
			}
		}
		recs[i] = nil
		<-slots
		if err != nil {
			stop()
			return err
		}
	}
	stop()
	return nil
}

// opKind is what a recorded call was.
type opKind uint8

const (
	opHint     opKind = iota // formats.ToolHint (msg: the tool)
	opStartRun               // formats.StartRun
	opBatch                  // Sink.Batch
	opRun                    // Sink.Run
	opWarn                   // Options.Warn (msg)
)

// op is one recorded call.
type op struct {
	kind opKind
	msg  string
	b    *formats.Batch
	run  *formats.Run
}

// recorder is the sink (and warning callback) of one job of
// importParallel: it holds the job's calls until the job's turn, then
// passes them on.
type recorder struct {
	sink formats.Sink
	warn func(string)
	// turn is closed when every earlier job has been delivered; done by
	// the worker when the job's import has returned (err).
	turn, done chan struct{}
	err        error
	quit       <-chan struct{}
	buffered   *atomic.Int64 // bytes held by all recorders
	ops        []op
	bytes      int64 // the bytes of ops, counted in buffered
	// direct is set once the recorder has passed its calls on and sends
	// the rest straight to sink (on the worker, during the job's turn).
	direct bool
}

// add records o, or passes it on during the job's turn. A job that would
// hold more than bufferBudget (with the other jobs' rows) waits for its
// turn.
func (r *recorder) add(o op) error {
	if !r.direct {
		select {
		case <-r.turn:
			if err := r.flush(); err != nil {
				return err
			}
		case <-r.quit:
			return errStopped
		default:
			sz := o.size()
			r.ops = append(r.ops, r.clone(o))
			r.bytes += sz
			if r.buffered.Add(sz) <= bufferBudget {
				return nil
			}
			select {
			case <-r.turn:
				return r.flush()
			case <-r.quit:
				return errStopped
			}
		}
	}
	return o.apply(r.sink, r.warn)
}

// flush replays the recorded calls into sink and switches to passing
// calls on.
func (r *recorder) flush() error {
	ops := r.ops
	r.ops, r.direct = nil, true
	r.buffered.Add(-r.bytes)
	r.bytes = 0
	for _, o := range ops {
		if err := o.apply(r.sink, r.warn); err != nil {
			return err
		}
	}
	return nil
}

func (o op) apply(sink formats.Sink, warn func(string)) error {
	switch o.kind {
	case opHint:
		formats.ToolHint(sink, o.msg)
	case opStartRun:
		return formats.StartRun(sink, o.run)
	case opBatch:
		return sink.Batch(o.b)
	case opRun:
		return sink.Run(o.run)
	case opWarn:
		if warn != nil {
			warn(o.msg)
		}
	}
	return nil
}

// Batch implements formats.Sink.
func (r *recorder) Batch(b *formats.Batch) error { return r.add(op{kind: opBatch, b: b}) }

// Run implements formats.Sink.
func (r *recorder) Run(run *formats.Run) error { return r.add(op{kind: opRun, run: run}) }

// StartRun implements formats.RunStarter (passed on to sinks that are
// one).
func (r *recorder) StartRun(run *formats.Run) error { return r.add(op{kind: opStartRun, run: run}) }

// warnf is the job's Options.Warn.
func (r *recorder) warnf(msg string) { _ = r.add(op{kind: opWarn, msg: msg}) }

// size is about the bytes o holds once cloned.
func (o op) size() int64 {
	n := int64(len(o.msg)) + 64
	switch o.kind {
	case opBatch:
		n += o.b.SizeBytes()
	case opRun, opStartRun:
		n += int64(unsafe.Sizeof(formats.Run{})) + int64(len(o.run.ConfigJSON)) +
			64*int64(len(o.run.Notes)+len(o.run.Reported)+len(o.run.Load)+len(o.run.Series)+len(o.run.Checks))
	}
	return n
}

// clone copies what o points to that its producer may reuse or change
// once the call returns (formats.Sink): the request and the values its
// pointers hold, the events (into r's chunks) and theirs, the run row
// whole.
func (r *recorder) clone(o op) op {
	switch o.kind {
	case opBatch:
		o.b = o.b.Clone()
	case opRun, opStartRun:
		o.run = deepCopy(o.run)
	}
	return o
}

// deepCopy copies *p and everything it reaches through pointers, slices
// and maps (strings are shared: they cannot change).
func deepCopy[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := reflect.New(reflect.TypeFor[T]())
	v.Elem().Set(deepValue(reflect.ValueOf(p).Elem()))
	return v.Interface().(*T)
}

func deepValue(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		n := reflect.New(v.Type().Elem())
		n.Elem().Set(deepValue(v.Elem()))
		return n
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		n := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			n.Index(i).Set(deepValue(v.Index(i)))
		}
		return n
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		n := reflect.MakeMapWithSize(v.Type(), v.Len())
		it := v.MapRange()
		for it.Next() {
			n.SetMapIndex(deepValue(it.Key()), deepValue(it.Value()))
		}
		return n
	case reflect.Struct:
		n := reflect.New(v.Type()).Elem()
		n.Set(v)
		for i := range v.NumField() {
			if f := n.Field(i); f.CanSet() {
				f.Set(deepValue(v.Field(i)))
			}
		}
		return n
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		n := reflect.New(v.Type()).Elem()
		n.Set(deepValue(v.Elem()))
		return n
	}
	return v
}
