package analyze

import (
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tokentrace/tokentrace/analyze/stats"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"gonum.org/v1/gonum/stat"
)

// DefaultOSLEdges are the output-length bucket edges of e2e_by_osl:
// [0,64) [64,128) … [2048,∞).
var DefaultOSLEdges = []float64{0, 64, 128, 256, 512, 1024, 2048, math.Inf(1)}

// DefaultISLEdges are the input-length bucket edges of ttft_by_isl.
var DefaultISLEdges = []float64{0, 128, 256, 512, 1024, 2048, 4096, 8192, math.Inf(1)}

// Options control report building.
type Options struct {
	// SLO defines a good request for goodput; empty: no goodput section.
	SLO SLO
	// Pool adds a report over all runs pooled.
	Pool bool
	// OSLEdges and ISLEdges override the bucket edges (ascending; the last
	// may be +Inf). Nil: the defaults.
	OSLEdges, ISLEdges []float64
	// Convention picks the convention each run is reported under (one the
	// Analyzer computed); nil: the Analyzer's first convention.
	Convention func(run *formats.Run) convention.Convention
	// Tools is what the importers know of the peer tools (cmd passes
	// convention.NewSet(Canonical, registry.Tools()...)): their reported
	// statistics' mapping (the report's reproduction), their throughputs
	// and headline statistics. Nil: no reproduction, and throughput is
	// undefined where the tables cannot give it.
	Tools *convention.Set
	// Reproduce recomputes the statistics the run's tool reported, when
	// the report's convention is that tool's (package reproduce's
	// Reproducer); nil: no reproduction section.
	Reproduce func(rd *RunData) *Reproduction
	// Percentiles are the probabilities (0 < p < 1, ascending) every
	// metric's summary holds (report --percentiles); nil:
	// stats.DefaultPercentiles (P50, P90, P95, P99).
	Percentiles []float64
	// Select chooses each run's requests by time (report --since, --until,
	// --by, --trim; selection.go); the zero value keeps them all.
	Select Selection
	// WindowNs cuts each run into windows of that width (report --window;
	// windows.go), attributed by start or, with Select.ByEnd, by end; 0:
	// no windows.
	WindowNs int64
	// Top lists each run's Top slowest requests by TTFT and by E2E
	// (report --top); 0: none.
	Top int
	// TimeoutNs is the client's request timeout, the bound of requests
	// without a recorded end in an open-loop run (formats.InFlight); 0:
	// unknown.
	TimeoutNs int64
}

// Analyzer is a formats.Sink that computes every request's metrics under
// one or more Conventions as rows stream by, keeping per request and
// convention only its metrics, and per token gap one number. Report builds
// the run reports.
type Analyzer struct {
	convs []convention.Convention
	runs  []*runAcc
	byID  map[string]*runAcc
	last  *runAcc
	// tokenizer counts re-tokenized N; openTokenizer opens the tokenizer a
	// run recorded (Run.Tokenizer) when no explicit one is set.
	tokenizer     TokenCounter
	openTokenizer func(name string) (TokenCounter, error)
	opened        map[string]openedTokenizer // by runTokenizer (columns.go)
	// fluid are the fluidity deadlines computed per request; gaps is the
	// reused per-token gap buffer.
	fluid []Deadlines
	gaps  []int64
	// fixes are the data-check catalogue's fixes by trap code, applied
	// under the conventions that correct (SetCorrections, corrections.go).
	fixes map[string]convention.Fix
	// budget is the memory budget (SetMemoryBudget, sketch.go); gapLimit
	// the exact gaps it allows over all runs and conventions (0: no
	// limit), exactGaps those kept; sketched once they were moved to
	// sketches (every later gap goes to one).
	budget    int64
	gapLimit  int64
	exactGaps int64
	sketched  bool
	// perTool: compute each run only under the canonical convention and
	// its tool's own (ComputeOwnToolOnly); hint is the tool the next runs
	// come from (formats.ToolHinter).
	perTool bool
	hint    string
	// lastCorr is the last Corrections value correctionCodes split.
	lastCorr      string
	lastCodes     []string
	lastCountOnly bool
}

type runAcc struct {
	id     string
	run    *formats.Run
	tok    TokenCounter
	tokErr string
	per    []convAcc // one per Analyzer convention
	// skip marks the conventions this run is not computed under (nil:
	// every one; ComputeOwnToolOnly)
	skip []bool
	// part is true when the requests are a selection of the run's
	// (--since/--until/--trim): the tool's reported whole-run values do
	// not stand in for what the selection lacks.
	part bool
}

type convAcc struct {
	reqs []RequestMetrics
	// itl is the pooled token gaps in arrival order: full blocks, then the
	// block being filled (see addGaps). Read it with gaps().
	itlBlocks [][]float64
	itl       []float64
	// applied counts, per trap code, the requests whose values a data
	// correction changed under this convention.
	applied map[string]int
	// sketch holds the pooled ITL once the memory budget moved it out of
	// itl (sketch.go); itl is then one request's scratch.
	sketch *itlSketch
	// arena holds itl past arenaFrom gaps (reserve).
	arena *gapArena
}

// itlBlock is the largest number of token gaps per block of the pooled
// ITL store (4 MB). The gaps are kept in blocks while a run streams in —
// each twice the previous one's size, from 1,024, up to itlBlock — not in
// one growing slice: growing that by append holds the old and the new
// array at once (on the 1 GB benchmark run 21 + 26 MB, the peak of the
// whole import), where a new block adds at most 4 MB and copies nothing.
const itlBlock = 1 << 19

// reserve makes room in the current block for a request with events
// messages before its gaps are appended (a request may still append more;
// the block then grows, alone). Once a run has arenaFrom gaps, they move
// to an arena (gapArena: address space reserved for arenaCap gaps where
// the system allows it), where they grow without blocks or copies and
// gaps() has nothing to join: 8 bytes a gap.
func (p *convAcc) reserve(events int, arenaCap int) {
	need := 2*events + 64
	if cap(p.itl)-len(p.itl) >= need {
		return
	}
	if p.arena == nil && arenaCap > 0 && p.itlLen()+need > arenaFrom {
		if a := newGapArena(max(arenaCap, p.itlLen()+need)); a != nil {
			p.arena = a
			all := a.floats()
			for i, b := range p.itlBlocks {
				all = append(all, b...)
				p.itlBlocks[i] = nil
			}
			p.itl, p.itlBlocks = append(all, p.itl...), nil
			if cap(p.itl)-len(p.itl) >= need {
				return
			}
		}
	}
	size := max(need, min(itlBlock, 2*cap(p.itl)), 1024)
	if len(p.itl) > 0 {
		p.itlBlocks = append(p.itlBlocks, p.itl)
	}
	p.itl = make([]float64, 0, size)
}

// itlLen is the number of pooled gaps held.
func (p *convAcc) itlLen() int {
	n := len(p.itl)
	for _, b := range p.itlBlocks {
		n += len(b)
	}
	return n
}

// arenaFrom is the run's gaps past which they move to an arena (a
// variable for the tests).
var arenaFrom = 1 << 22

// gaps returns the pooled token gaps as one slice, joining the blocks the
// first time (after the import: the blocks are freed as the slice takes
// their place).
func (p *convAcc) gaps() []float64 {
	if p.sketch != nil {
		return p.sketch.values()
	}
	if len(p.itlBlocks) == 0 {
		return p.itl
	}
	n := len(p.itl)
	for _, b := range p.itlBlocks {
		n += len(b)
	}
	flat := make([]float64, 0, n)
	for i, b := range p.itlBlocks {
		flat = append(flat, b...)
		p.itlBlocks[i] = nil
	}
	p.itl, p.itlBlocks = append(flat, p.itl...), nil
	return p.itl
}

// maxReserve bounds the requests StartRun makes room for (a run's own
// count, which a damaged file could overstate): about 120 MB of metrics
// per convention; a larger run grows past it as usual.
const maxReserve = 1 << 18

// NewAnalyzer returns an Analyzer computing under each of convs (at least
// one; reports use the first unless Options.Convention picks another).
func NewAnalyzer(convs ...convention.Convention) *Analyzer {
	if len(convs) == 0 {
		convs = []convention.Convention{Canonical}
	}
	return &Analyzer{convs: convs, byID: map[string]*runAcc{}}
}

// SetTokenizer makes every run count re-tokenized N with tok.
func (a *Analyzer) SetTokenizer(tok TokenCounter) { a.tokenizer = tok }

// SetTokenizerOpener lets runs that recorded their tokenizer (Run.Tokenizer,
// known before their first request through formats.RunStarter) use it when
// no explicit tokenizer is set; open returns an error for names it cannot
// load offline.
func (a *Analyzer) SetTokenizerOpener(open func(name string) (TokenCounter, error)) {
	a.openTokenizer = open
}

// SetFluidity makes the Analyzer compute each request's fluidity-index
// (FluidityIndex) under each of ds as rows stream by (the per-token gaps
// are not kept), so SLO constraints and gates on fluidity(…) can use it.
// Call it before the first request.
func (a *Analyzer) SetFluidity(ds []Deadlines) { a.fluid = ds }

// Conventions returns the conventions the Analyzer computes under.
func (a *Analyzer) Conventions() []convention.Convention { return a.convs }

func (a *Analyzer) acc(id string) *runAcc {
	if a.last != nil && a.last.id == id {
		return a.last
	}
	r := a.byID[id]
	if r == nil {
		r = &runAcc{id: id, per: make([]convAcc, len(a.convs)), tok: a.tokenizer}
		if a.perTool && a.hint != "" {
			r.skip = a.skipFor(a.hint)
		}
		if a.sketched {
			for i := range r.per {
				r.per[i].sketch = newITLSketch()
			}
		}
		a.byID[id] = r
		a.runs = append(a.runs, r)
	}
	a.last = r
	return r
}

// StartRun implements formats.RunStarter: it opens the tokenizer the run
// recorded, when there is no explicit one, and, when the run says how
// many requests it has (RequestCount, up to maxReserve), makes room for
// their metrics at once (no growing copies of the per-request metrics).
func (a *Analyzer) StartRun(r *formats.Run) error {
	acc := a.acc(r.RunID)
	if n := min(r.RequestCount, maxReserve); n > 0 {
		for i := range acc.per {
			if p := &acc.per[i]; cap(p.reqs) == 0 && (acc.skip == nil || !acc.skip[i]) {
				p.reqs = make([]RequestMetrics, 0, n)
			}
		}
	}
	if acc.tok == nil && a.openTokenizer != nil && r.Tokenizer != "" {
		tok, err := a.runTokenizer(r.Tokenizer)
		if err != nil {
			acc.tokErr = fmt.Sprintf("tokenizer %q recorded by the run is not available: %v", r.Tokenizer, err)
		} else {
			acc.tok = tok
		}
	}
	return nil
}

// Batch implements formats.Sink: it computes every request of b under
// each convention the run is computed under.
func (a *Analyzer) Batch(b *formats.Batch) error {
	acc := a.acc(b.RunID)
	srv := serverKinds(b)
	for i := range b.Len() {
		a.compute(acc, b, i, srv)
	}
	return nil
}

// Request computes one request row (tests; Batch computes a batch). The
// events' run id, key and index are taken from r and their position.
func (a *Analyzer) Request(r *formats.Request, events []formats.Event) error {
	ev := make([]formats.Event, len(events))
	for j := range events {
		ev[j] = events[j]
		ev[j].RunID, ev[j].RequestKey, ev[j].Index = r.RunID, r.RequestKey, int32(j)
	}
	if len(ev) == 0 {
		ev = nil
	}
	return formats.SendRow(a, r, ev)
}

// compute computes request i of b under each of the run's conventions.
func (a *Analyzer) compute(acc *runAcc, b *formats.Batch, i int, srv *[256]bool) {
	corrections := a.fixes != nil && b.Req.Corrections.Get(i) != ""
	for ci, c := range a.convs {
		if acc.skip != nil && acc.skip[ci] {
			continue
		}
		var m RequestMetrics
		p := &acc.per[ci]
		lo, hi := b.Messages(i)
		p.reserve(hi-lo, a.arenaCap())
		n := len(p.itl)
		cb, cj, csrv := b, i, srv
		var restore *countsSaved
		if corrections {
			if codes, countOnly := a.correctionCodes(b.Req.Corrections.Get(i)); countOnly {
				restore = a.countFixes(c, p, b, i, codes)
			} else {
				cb, cj, csrv = a.correctedRow(c, p, b, i)
			}
		}
		m, p.itl = ComputeBatch(c, cb, cj, csrv, acc.tok, p.itl)
		if restore != nil {
			restore.put(b, i)
		}
		if !m.Counted {
			// ITL pools the gaps of the convention's completed requests
			// only (CONVENTIONS.md), not a failed request's partial stream.
			p.itl = p.itl[:n]
			m.ITLSamples = 0
		}
		switch {
		case p.sketch != nil:
			p.sketch.addAll(p.itl[n:])
			p.itl = p.itl[:0]
		default:
			a.exactGaps += int64(len(p.itl) - n)
		}
		if len(a.fluid) > 0 {
			a.gaps = tokenGaps(c, newMsgs(cb, cj, csrv), a.gaps)
			m.Fluidity = make([]FluidityValue, len(a.fluid))
			for j, d := range a.fluid {
				m.Fluidity[j] = FluidityValue{Deadlines: d, Index: math.NaN()}
				if len(a.gaps) > 0 {
					m.Fluidity[j].Index, _, _ = FluidityIndex(a.gaps, d)
				}
			}
		}
		if len(p.reqs) == cap(p.reqs) && len(p.reqs) >= 1024 {
			// double (append grows a large slice by ~1.25×: at 100k
			// requests of ~450 bytes that was 0.4 s of copying and
			// page faults); a small one append doubles itself
			p.reqs = slices.Grow(p.reqs, len(p.reqs))
		}
		p.reqs = append(p.reqs, m)
	}
	if a.gapLimit > 0 && !a.sketched && a.exactGaps > a.gapLimit {
		a.sketchAll()
	}
}

// correctedRow is request i of b with the fixes of its data checks
// applied under c (corrected), as a batch of one row, its server kinds,
// and the codes counted in p.
func (a *Analyzer) correctedRow(c convention.Convention, p *convAcc, b *formats.Batch, i int) (*formats.Batch, int, *[256]bool) {
	r := b.Row(i)
	ev := b.AppendEvents(nil, i)
	if len(ev) == 0 {
		ev = nil
	}
	cr, cev, applied := a.corrected(c, &r, ev)
	for _, code := range applied {
		if p.applied == nil {
			p.applied = map[string]int{}
		}
		p.applied[code]++
	}
	if cr == &r && len(applied) == 0 {
		return b, i, serverKinds(b)
	}
	one := formats.NewBatch(b.RunID)
	for j := range cev {
		cev[j].Index = int32(j) // a dropped message renumbers the rest
	}
	if err := one.AppendRow(cr, cev); err != nil {
		panic(err) // the row came from a batch
	}
	return one, 0, serverKinds(one)
}

// Run implements formats.Sink.
func (a *Analyzer) Run(r *formats.Run) error {
	cp := *r
	a.acc(r.RunID).run = &cp
	return nil
}

// index returns the position of the convention named name.
func (a *Analyzer) index(name string) int {
	for i, c := range a.convs {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// Report builds the report of every run seen, in order of first
// appearance. It fails when an SLO constrains a metric a run cannot measure
// at all (TPOT on a non-streaming run), naming the constraint and the run,
// when a run's Run row never arrived, or when Options.Convention picks a
// convention the Analyzer did not compute.
func (a *Analyzer) Report(opt Options) (*Report, error) {
	rep, _, err := a.report(opt)
	return rep, err
}

// report is Report, also returning each run's selected requests (the runs'
// own accumulators without a selection), in the order of rep.Runs.
func (a *Analyzer) report(opt Options) (*Report, []*runAcc, error) {
	rep := &Report{SchemaVersion: ReportSchemaVersion, Runs: []*RunReport{}}
	accs := make([]*runAcc, len(a.runs)) // each run's selected requests
	rep.Runs = make([]*RunReport, len(a.runs))
	errs := make([]error, len(a.runs))
	// each run's report reads only its own accumulator (and the
	// Analyzer's settings): the runs are reported on every processor, in
	// turn, and the first error in run order is returned
	forEachRun(len(a.runs), func(i int) {
		rep.Runs[i], accs[i], errs[i] = a.oneRunReport(a.runs[i], opt)
	})
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	if opt.Pool && len(a.runs) > 0 {
		rr, err := a.pooled(opt, accs, rep.Runs)
		if err != nil {
			return nil, nil, err
		}
		rep.Pooled = rr
	}
	return rep, accs, nil
}

// oneRunReport is the report of one run and its selected requests.
func (a *Analyzer) oneRunReport(acc *runAcc, opt Options) (*RunReport, *runAcc, error) {
	if acc.run == nil {
		return nil, nil, fmt.Errorf("run %q: requests without a run row", acc.id)
	}
	ci, err := a.pick(opt, acc.run)
	if err != nil {
		return nil, nil, err
	}
	f, sel, err := a.prepareForensics(acc, opt) // forensics.go
	if err != nil {
		return nil, nil, err
	}
	rr, err := a.runReport(a.convs[ci], sel, ci, opt)
	if err != nil {
		return nil, nil, err
	}
	if err := a.addForensics(rr, f, acc, sel, ci, a.convs[ci], opt); err != nil {
		return nil, nil, err
	}
	return rr, sel, nil
}

// forEachRun calls fn(0) … fn(n−1) on up to GOMAXPROCS goroutines (on
// this one when n is 1), returning when every call has.
func forEachRun(n int, fn func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		})
	}
	wg.Wait()
}

func (a *Analyzer) pick(opt Options, run *formats.Run) (int, error) {
	if opt.Convention == nil {
		return 0, nil
	}
	c := opt.Convention(run)
	i := a.index(c.Name)
	if i < 0 || a.skipped(run.RunID, i) {
		return 0, fmt.Errorf("run %q: convention %q was not computed", run.RunID, c.Name)
	}
	return i, nil
}

// ComputeOwnToolOnly makes the Analyzer compute each run that arrives
// after a tool hint (formats.ToolHint: the registry gives one before each
// input) only under its conventions without a tool (the canonical one)
// and the hinted tool's own profiles — what report --convention tool
// needs, instead of every profile of every tool for every request. A run
// whose tool has no profile among the Analyzer's, or that comes without a
// hint (tables read back), is computed under every convention.
func (a *Analyzer) ComputeOwnToolOnly() { a.perTool = true }

// ToolHint implements formats.ToolHinter.
func (a *Analyzer) ToolHint(tool string) { a.hint = tool }

// skipFor is the skip mask of a run of tool (nil when no convention is
// the tool's: compute every one).
func (a *Analyzer) skipFor(tool string) []bool {
	skip := make([]bool, len(a.convs))
	own := false
	for i, c := range a.convs {
		switch {
		case c.Tool == tool:
			own = true
		case c.Tool != "":
			skip[i] = true
		}
	}
	if !own {
		return nil
	}
	return skip
}

// skipped reports whether run id was not computed under convention i.
func (a *Analyzer) skipped(id string, i int) bool {
	acc := a.byID[id]
	return acc != nil && acc.skip != nil && acc.skip[i]
}

func (a *Analyzer) pooled(opt Options, accs []*runAcc, reports []*RunReport) (*RunReport, error) {
	ci, err := a.pick(opt, accs[0].run)
	if err != nil {
		return nil, err
	}
	pool := poolAcc(ci, accs, len(a.convs))
	var durations float64
	withDuration := 0
	var timed []RequestMetrics // requests of runs with a duration: the throughput numerators
	for _, acc := range accs {
		if d, _ := Duration(a.convs[ci], acc.per[ci].reqs); !math.IsNaN(d) {
			durations += d
			withDuration++
			timed = append(timed, acc.per[ci].reqs...)
		}
	}
	if withDuration == 0 {
		durations = math.NaN()
	}
	rr, err := a.runReport(a.convs[ci], pool, ci, opt)
	if err != nil {
		return nil, err
	}
	// Pooled throughput: Σ over runs of their own durations (runs of a
	// sweep are sequential and their clocks need not agree).
	rr.Throughput = ComputeThroughput(a.convs[ci], timed, durations)
	if rr.Goodput != nil {
		// good requests per second: the good requests of the runs with a
		// duration, over the sum of those durations (as throughput)
		good, _ := countGood(opt.SLO, timed)
		rr.Goodput.RequestsPerS = F(div(float64(good), durations))
	}
	rr.Warnings = append(rr.Warnings, a.poolWarnings()...)
	rr.BetweenRuns = a.betweenRuns(ci, accs, reports)
	thr := fmt.Sprintf("throughput counts the requests of the %d runs with start times over the sum of their durations", withDuration)
	if withDuration == 0 {
		thr = "no run has start times, so pooled throughput is undefined"
	}
	rr.Warnings = append(rr.Warnings, Warning{Code: "pooled", Message: fmt.Sprintf("pooled over %d runs; %s; TPOT, TTST and ITL come from streaming runs only", len(accs), thr)})
	return rr, nil
}

// poolAcc merges the runs' requests and gaps under convention ci (of
// nconv) into one run "pooled"; requests of non-streaming runs are marked
// so their TPOT, TTST and ITL stay out.
func poolAcc(ci int, accs []*runAcc, nconv int) *runAcc {
	pool := &runAcc{id: "pooled", per: make([]convAcc, nconv)}
	tools, models := []string{}, []string{}
	run := &formats.Run{RunID: "pooled"}
	stream := false
	sketched := false // past the memory budget every run's ITL is a sketch
	nreqs, ngaps := 0, 0
	for _, acc := range accs {
		sketched = sketched || acc.per[ci].sketch != nil
		nreqs += len(acc.per[ci].reqs)
	}
	if !sketched {
		for _, acc := range accs {
			if isStreaming(acc.run, acc.per[ci].reqs) {
				ngaps += len(acc.per[ci].gaps())
			}
		}
	}
	pool.per[ci].reqs = make([]RequestMetrics, 0, nreqs)
	pool.per[ci].itl = make([]float64, 0, ngaps)
	for _, acc := range accs {
		p := &pool.per[ci]
		runStreams := isStreaming(acc.run, acc.per[ci].reqs)
		stream = stream || runStreams
		for _, m := range acc.per[ci].reqs {
			m.NonStreaming = !runStreams
			p.reqs = append(p.reqs, m)
		}
		if runStreams {
			if sketched {
				// merge the runs' sketches (a representative sample is
				// no sample of the run's size)
				if p.sketch == nil {
					p.sketch = newITLSketch()
				}
				p.sketch.merge(acc.per[ci].sketch)
			} else {
				p.itl = append(p.itl, acc.per[ci].gaps()...)
			}
		}
		tools = appendUnique(tools, acc.run.Tool)
		models = appendUnique(models, acc.run.Model)
	}
	run.Tool = strings.Join(tools, "+")
	run.Model = strings.Join(models, "+")
	run.Streaming = &stream
	pool.run = run
	return pool
}

// betweenRuns is the spread over runs of each run's own P99 of TTFT, TPOT,
// ITL and E2E (runs without samples of a metric are left out of it).
func (a *Analyzer) betweenRuns(ci int, accs []*runAcc, reports []*RunReport) map[string]Spread {
	out := map[string]Spread{}
	var tail []*Metric
	for _, x := range Table {
		if x.Tail {
			tail = append(tail, x)
		}
	}
	runs := make([][]string, len(tail))
	p99 := make([][]float64, len(tail))
	for i, acc := range accs {
		// a run's P99 is its report's when the report has it (the same
		// requests, convention and method: reports[i] is accs[i]'s);
		// otherwise the run's values are sampled once and each metric
		// summarized as the report would
		var rr *RunReport
		if i < len(reports) && reports[i].RunID == acc.run.RunID && reports[i].Convention.Name == a.convs[ci].Name {
			// (a run reported under its own convention, --convention
			// tool, does not hold the pooled convention's P99)
			rr = reports[i]
		}
		var s *Samples
		for j, x := range tail {
			v, n, ok := quantileOf(rr, x, 0.99)
			switch {
			case ok && n == 0:
				continue
			case !ok:
				if s == nil {
					reqs := acc.per[ci].reqs
					s = Sample(a.convs[ci], reqs, acc.per[ci].gaps(), isStreaming(acc.run, reqs))
				}
				// the run report's own rule (Samples.Summary: weighted
				// under a weighted percentile method), so that the P99
				// does not depend on whether the report lists P99
				sum := s.Summary(x, a.convs[ci], []float64{0.99})
				if sum.N == 0 {
					continue
				}
				q, _ := sum.Quantile(0.99)
				v = q.Value
			}
			runs[j] = append(runs[j], acc.run.RunID)
			p99[j] = append(p99[j], v)
		}
	}
	for j, x := range tail {
		if len(p99[j]) > 0 {
			out[x.Key] = spreadOf(runs[j], p99[j])
		}
	}
	return out
}

// quantileOf is the quantile at p of metric x in rr (nil: none) and the
// count of values it came from; ok is false when rr's summary of x does
// not have it.
func quantileOf(rr *RunReport, x *Metric, p float64) (v float64, n int, ok bool) {
	if rr == nil {
		return 0, 0, false
	}
	for _, m := range rr.Metrics {
		if m.Metric == x {
			q, ok := m.Summary.Quantile(p)
			return q.Value, m.Summary.N, ok
		}
	}
	return 0, 0, false
}

// appendUnique appends s to list unless it is there already.
func appendUnique[T comparable](list []T, s T) []T {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func (a *Analyzer) runReport(c convention.Convention, acc *runAcc, ci int, opt Options) (*RunReport, error) {
	run := acc.run
	reqs, itl := acc.per[ci].reqs, acc.per[ci].gaps()
	rr := &RunReport{
		RunID:            run.RunID,
		Tool:             run.Tool,
		ToolVersion:      run.ToolVersion,
		Model:            run.Model,
		Streaming:        run.Streaming,
		Convention:       ConventionInfo{Name: c.Name, Choices: c.Choices()},
		PercentileMethod: string(c.Percentile),
		OSLSource:        map[string]int{},
		Reported:         reportedOf(run),
		Warnings:         []Warning{},
		E2EByOSL:         []Bucket{},
		TTFTByISL:        []Bucket{},
	}
	if run.RequestRateRPS != nil {
		rr.ConfiguredRateRPS = *run.RequestRateRPS
	}
	rr.Notes = run.Notes
	if t := opt.Tools.Tool(run.Tool); t != nil {
		rr.Headline = t.Headline
	}
	streaming := isStreaming(run, reqs)
	if rr.Streaming == nil && len(reqs) > 0 { // a summary-only run of unknown kind stays unknown (null)
		rr.Streaming = &streaming
	}
	s := Sample(c, reqs, itl, streaming)
	for i := range reqs {
		m := &reqs[i]
		rr.Requests.Total++
		switch m.Status {
		case formats.StatusOK:
			rr.Requests.Completed++
		case formats.StatusEmpty:
			rr.Requests.Empty++
		case formats.StatusCancelled:
			rr.Requests.Cancelled++
		default:
			rr.Requests.Failed++
		}
		if !m.Counted {
			continue
		}
		if streaming && math.IsNaN(m.TPOTMs) {
			rr.Requests.TPOTUndefined++
		}
		rr.OSLSource[orUnknown(m.OutputSource)]++
	}
	rr.Requests.ErrorRate = F(div(float64(rr.Requests.Failed+rr.Requests.Cancelled), float64(rr.Requests.Total)))
	rr.Errors = errorCounts(reqs)

	rr.Metrics = Metrics{}
	for _, x := range Table {
		if !x.Report {
			continue
		}
		if x.Scheduled && !s.AnyScheduled {
			continue // no intended starts: no such row
		}
		sum := s.Summary(x, c, opt.Percentiles)
		if x.WithReasoning && !s.AnyReasoning {
			// without reasoning it is TTFT under another name
			sum = stats.Summarize(nil, opt.Percentiles, stats.Method(c.Percentile), c.StdDDOF)
		}
		if x == ITL && acc.per[ci].sketch != nil {
			sum = acc.per[ci].sketch.fix(sum, c.StdDDOF)
		}
		rr.Metrics = append(rr.Metrics, MetricSummary{Metric: x, Summary: sum})
	}
	if sk := acc.per[ci].sketch; sk != nil && sk.n > 0 {
		rr.Warnings = append(rr.Warnings, sk.warning(a.budget))
	}

	// Throughput.
	dur, hasStarts := Duration(c, reqs)
	switch {
	case hasStarts && c.Duration != convention.DurationNotRecorded:
		rr.Throughput = ComputeThroughput(c, reqs, dur)
	case acc.part:
		rr.Throughput = reportedThroughput(run, nil)
		if rr.Requests.Total > 0 {
			rr.Warnings = append(rr.Warnings, Warning{Code: "throughput_unavailable", Message: "throughput cannot be recomputed for the selected requests, and the tool's reported value covers the whole run"})
		}
	default:
		rr.Throughput = reportedThroughput(run, opt.Tools.Tool(run.Tool))
		switch {
		case rr.Throughput.Reported && !hasStarts:
			rr.Warnings = append(rr.Warnings, Warning{Code: "throughput_reported", Message: "the source has no request start times: throughput is the tool's own reported value, not recomputed"})
		case rr.Throughput.Reported:
			rr.Warnings = append(rr.Warnings, Warning{Code: "throughput_reported", Message: "this convention's duration (" + string(c.Duration) + ") is not in the files: throughput is the tool's own reported value"})
		case rr.Requests.Total > 0:
			rr.Warnings = append(rr.Warnings, Warning{Code: "throughput_unavailable", Message: "throughput cannot be recomputed under this convention and the tool reported none"})
		}
	}

	// Goodput.
	if len(opt.SLO.Constraints) > 0 {
		g, err := goodput(opt.SLO, run, reqs, streaming, dur)
		if err != nil {
			return nil, err
		}
		rr.Goodput = g
	}

	// Conditioning on length.
	oslEdges, islEdges := opt.OSLEdges, opt.ISLEdges
	if oslEdges == nil {
		oslEdges = DefaultOSLEdges
	}
	if islEdges == nil {
		islEdges = DefaultISLEdges
	}
	rr.E2EByOSL = buckets(s.pairOSL, s.pairE2E, oslEdges, OSL.Name, c.Percentile)
	rr.E2EOSLFit = fit(s.pairOSL, s.pairE2E)
	rr.TTFTByISL = buckets(s.pairISL, s.pairTTFT, islEdges, ISL.Name, c.Percentile)
	rr.Cache, rr.TTFTByCache = cacheReport(reqs, c)
	rr.Sessions, rr.TTFTByTurn = sessionsReport(reqs, c)
	rr.SpecDecode = specDecodeReport(reqs)
	if len(run.Series) > 0 {
		if t0, tLast, ok := runSpan(reqs); ok {
			rr.Energy = energyReport(run, reqs, t0, tLast)
		}
	}
	if w := cacheWarning(rr.Cache); w != nil {
		rr.Warnings = append(rr.Warnings, *w)
	}
	rr.TTFTISLFit = fit(s.pairISL, s.pairTTFT)

	if c.Tool != "" && c.Tool == run.Tool {
		if opt.Reproduce != nil {
			rr.Reproduction = opt.Reproduce(runData(run, c, streaming, &acc.per[ci], itl, s))
		}
	}
	rr.Warnings = append(rr.Warnings, a.warnings(c, run, acc, rr, streaming, s)...)
	rr.Warnings = append(rr.Warnings, a.dataChecks(c, run, &acc.per[ci], rr, s, opt.Tools)...)
	return rr, nil
}

// implausible describes negative latencies among the samples ("" if none):
// a sign of clock trouble or a broken file, never of a fast server.
func implausible(s *Samples) (string, int) {
	var neg, long []string
	total := 0
	for _, x := range Table {
		if !x.Report || x.Unit != "ms" || x.WithReasoning || x == DispatchDelay {
			continue // the latencies: TTFT, TTST, TPOT, ITL, E2E
		}
		q := x.Name
		n, l := 0, 0
		for _, v := range s.Values[x] {
			if math.IsInf(v, 1) && x.FromStart && s.Failed > 0 {
				continue // a failed request counted as +∞, not a value
			}
			switch {
			case v < 0:
				n++
			case v > implausibleMs:
				l++
			}
		}
		total += n + l
		if n > 0 {
			neg = append(neg, fmt.Sprintf("%d negative %s", n, q))
		}
		if l > 0 {
			long = append(long, fmt.Sprintf("%d %s", l, q))
		}
	}
	var parts []string
	if len(neg) > 0 {
		parts = append(parts, "negative latencies ("+strings.Join(neg, ", ")+")")
	}
	if len(long) > 0 {
		parts = append(parts, "latencies over a day ("+strings.Join(long, ", ")+"; a request start or a response time far from the others)")
	}
	if len(parts) == 0 {
		return "", 0
	}
	return strings.Join(parts, "; ") + ": check the source's clocks", total
}

// implausibleMs is the latency no inference request takes: one day.
const implausibleMs = 24 * 3600 * 1000

// errorCounts groups the failed and cancelled requests, most frequent
// first (ties in order of first appearance).
func errorCounts(reqs []RequestMetrics) []ErrorCount {
	out := []ErrorCount{}
	idx := map[ErrorKey]int{}
	first := []string{} // each group's first message as written
	varies := []bool{}
	for i := range reqs {
		k := reqs[i].Error
		if k.Status == "" {
			continue
		}
		j, ok := idx[k]
		if !ok {
			j = len(out)
			idx[k] = j
			out = append(out, ErrorCount{ErrorKey: k})
			first, varies = append(first, reqs[i].ErrorText), append(varies, false)
		} else if reqs[i].ErrorText != first[j] {
			varies[j] = true
		}
		out[j].Count++
	}
	// a group whose messages are all the same shows the message itself
	// ("524: A timeout occurred"); one whose numbers vary, the key with N
	for j := range out {
		if !varies[j] {
			out[j].Message = first[j]
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Count > out[b].Count })
	return out
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// isStreaming is the run's Streaming flag, or — when the source does not
// say — whether any request received more than one response.
func isStreaming(run *formats.Run, reqs []RequestMetrics) bool {
	if run.Streaming != nil {
		return *run.Streaming
	}
	for i := range reqs {
		if reqs[i].Responses > 1 {
			return true
		}
	}
	return false
}

// Duration is the run's span in seconds by the convention's duration rule
// over the requests' metrics; hasStarts is false when no request has a
// start time, and d is NaN without a start or an end. DurationNotRecorded
// gives the canonical span (for goodput per second): callers check the
// rule.
func Duration(c convention.Convention, reqs []RequestMetrics) (d float64, hasStarts bool) {
	var first, last int64
	haveFirst, haveLast := false, false
	for i := range reqs {
		m := &reqs[i]
		if !m.HasStart {
			continue
		}
		hasStarts = true
		endMs := m.LastResponseMs
		switch c.Duration {
		case convention.DurationCompletedSpan:
			if !m.Counted || math.IsNaN(endMs) {
				continue
			}
		case convention.DurationAllSpan:
			endMs = m.StreamEndMs
			if math.IsNaN(endMs) {
				endMs = m.LastResponseMs
			}
		default:
			// first start of any request; end of counted requests
			if !haveFirst || m.StartNs < first {
				first, haveFirst = m.StartNs, true
			}
			if !m.Counted || math.IsNaN(endMs) {
				continue
			}
		}
		if !haveFirst || m.StartNs < first {
			first, haveFirst = m.StartNs, true
		}
		if math.IsNaN(endMs) {
			continue
		}
		end := m.StartNs + int64(math.Round(endMs*1e6))
		if !haveLast || end > last {
			last, haveLast = end, true
		}
	}
	if !haveFirst || !haveLast {
		return math.NaN(), hasStarts
	}
	return float64(last-first) / 1e9, true
}

// ComputeThroughput is the run's throughput over dur seconds under c:
// requests per second (c.ThroughputRequests), output and total tokens per
// second of the counted requests (output undefined when none has a count).
func ComputeThroughput(c convention.Convention, reqs []RequestMetrics, dur float64) Throughput {
	var done, all, outTok, inTok float64
	haveOut, haveIn := false, false
	for i := range reqs {
		m := &reqs[i]
		all++
		if !m.Counted {
			continue
		}
		done++
		if !math.IsNaN(m.OutputTokens) {
			outTok += m.OutputTokens
			haveOut = true
		}
		if !math.IsNaN(m.InputTokens) {
			inTok += m.InputTokens
			haveIn = true
		}
	}
	// Token throughputs are undefined (null), not 0, when no completed
	// request has a count under the convention.
	if !haveOut {
		outTok = math.NaN()
	}
	if !haveIn {
		inTok = 0
	}
	n := done
	if c.ThroughputRequests == convention.ThroughputAllRequests {
		n = all
	}
	return Throughput{
		DurationS:        F(dur),
		RequestsPerS:     F(div(n, dur)),
		OutputTokensPerS: F(div(outTok, dur)),
		TotalTokensPerS:  F(div(outTok+inTok, dur)),
	}
}

func div(a, b float64) float64 {
	if b == 0 || math.IsNaN(b) {
		return math.NaN()
	}
	return a / b
}

func goodput(slo SLO, run *formats.Run, reqs []RequestMetrics, streaming bool, dur float64) (*Goodput, error) {
	for _, c := range slo.Constraints {
		if c.Metric.Streaming && !streaming {
			return nil, fmt.Errorf("slo constraint %q: run %q is not streaming, so %s cannot be measured", c.Text, run.RunID, c.Metric.Name)
		}
	}
	g := &Goodput{SLO: slo.Text, Total: len(reqs)}
	for _, c := range slo.Constraints {
		g.BoundsTPOT = g.BoundsTPOT || c.Metric == TPOT
	}
	g.Good, g.TPOTVacuous = countGood(slo, reqs)
	g.Fraction = F(div(float64(g.Good), float64(g.Total)))
	g.RequestsPerS = F(div(float64(g.Good), dur))
	return g, nil
}

// countGood counts the completed (ok) requests that meet every constraint
// of slo (Constraint.Check), and among them those whose TPOT constraint was
// vacuous (N ≤ 1).
func countGood(slo SLO, reqs []RequestMetrics) (good, tpotVacuous int) {
	for i := range reqs {
		m := &reqs[i]
		if m.Status != formats.StatusOK {
			continue
		}
		ok, vacuous := true, false
		for _, c := range slo.Constraints {
			switch c.Check(m) {
			case Failed:
				ok = false
			case Vacuous:
				vacuous = vacuous || c.Metric == TPOT
			}
			if !ok {
				break
			}
		}
		if ok {
			good++
			if vacuous {
				tpotVacuous++
			}
		}
	}
	return good, tpotVacuous
}

// poolWarnings says when a pool mixes models or tools (its percentiles then
// describe no single deployment) or holds the same input file twice.
func (a *Analyzer) poolWarnings() []Warning {
	var w []Warning
	models, tools := []string{}, []string{}
	seen := map[string]string{}
	var dups []string
	for _, acc := range a.runs {
		models = appendUnique(models, acc.run.Model)
		tools = appendUnique(tools, acc.run.Tool)
		for _, f := range acc.run.SourceFiles {
			if f.SHA256 == "" {
				// not hashed: no other input has its size (registry.Import)
				continue
			}
			if prev, ok := seen[f.SHA256]; ok && prev != acc.run.RunID {
				dups = append(dups, fmt.Sprintf("%s (runs %s and %s)", f.Path, prev, acc.run.RunID))
				continue
			}
			seen[f.SHA256] = acc.run.RunID
		}
	}
	var mixed []string
	if len(models) > 1 {
		mixed = append(mixed, fmt.Sprintf("%d models (%s)", len(models), strings.Join(models, ", ")))
	}
	if len(tools) > 1 {
		mixed = append(mixed, fmt.Sprintf("%d tools (%s)", len(tools), strings.Join(tools, ", ")))
	}
	if len(mixed) > 0 {
		w = append(w, Warning{Code: "pool_mixed", Message: "the pool mixes " + strings.Join(mixed, " and ") + ": its percentiles describe no single deployment; pool repetitions of one setup"})
	}
	if len(dups) > 0 {
		w = append(w, Warning{Code: "pool_duplicate_input", Message: "the same input file is pooled more than once, so its requests count twice: " + strings.Join(dups, "; ")})
	}
	return w
}

// buckets groups y by x into [edges[i], edges[i+1]).
func buckets(x, y, edges []float64, key string, m convention.PercentileMethod) []Bucket {
	out := []Bucket{}
	for i := 0; i+1 < len(edges); i++ {
		var ys []float64
		for j := range x {
			if math.IsNaN(x[j]) || math.IsNaN(y[j]) {
				continue
			}
			if x[j] >= edges[i] && x[j] < edges[i+1] {
				ys = append(ys, y[j])
			}
		}
		s := stats.SortedCopy(ys)
		out = append(out, Bucket{
			Min: edges[i], Max: edges[i+1], N: len(s), keyX: key,
			P50: stats.Percentile(s, 0.5, stats.Method(m)), P90: stats.Percentile(s, 0.9, stats.Method(m)), P99: stats.Percentile(s, 0.99, stats.Method(m)),
		})
	}
	return out
}

// fit is the least-squares line y ≈ a + b·x over points where both are
// defined; nil with fewer than two distinct x.
func fit(x, y []float64) *Fit {
	var xs, ys []float64
	for i := range x {
		if !math.IsNaN(x[i]) && !math.IsNaN(y[i]) {
			xs = append(xs, x[i])
			ys = append(ys, y[i])
		}
	}
	distinct := map[float64]bool{}
	for _, v := range xs {
		distinct[v] = true
	}
	if len(distinct) < 2 {
		return nil
	}
	a, b := stat.LinearRegression(xs, ys, nil, false)
	f := &Fit{InterceptMs: F(a), SlopeMsPerToken: F(b), R2: F(stat.RSquared(xs, ys, nil, a, b)), N: len(xs)}
	switch {
	case f.N < FitMinN:
		f.Why = fmt.Sprintf("too few requests (%d; %d needed)", f.N, FitMinN)
	case float64(f.R2) < FitMinR2:
		f.Why = fmt.Sprintf("length explains little of the spread (R² %.3f < %g)", float64(f.R2), FitMinR2)
	case b <= 0:
		f.Why = "the latency does not grow with length"
	case a < -0.05*stat.Mean(ys, nil):
		f.Why = "a negative intercept: no fixed cost plus a per-token cost fits"
	default:
		f.Explains = true
	}
	return f
}

// reportedOf groups the run's reported statistics by metric.
func reportedOf(run *formats.Run) map[string]Reported {
	out := map[string]Reported{}
	for _, s := range run.Reported {
		r := out[s.Metric]
		if r == nil {
			r = Reported{}
			out[s.Metric] = r
		}
		if s.Unit != "" {
			r["unit"] = s.Unit
		}
		if s.Value != nil {
			r[s.Stat] = F(*s.Value)
		} else {
			r[s.Stat] = s.Text
		}
	}
	return out
}

// reportedThroughput is the throughput the tool reported for the run
// (tool's Throughput statistics), all NaN when it reported none.
func reportedThroughput(run *formats.Run, tool *convention.Tool) Throughput {
	t := Throughput{DurationS: F(math.NaN()), RequestsPerS: F(math.NaN()), OutputTokensPerS: F(math.NaN()), TotalTokensPerS: F(math.NaN())}
	if tool == nil || tool.Throughput == nil {
		return t
	}
	keys := tool.Throughput
	for _, s := range run.Reported {
		if s.Value == nil {
			continue
		}
		switch {
		case s.Metric == keys.OutputMetric && s.Stat == keys.OutputStat:
			t.OutputTokensPerS, t.Reported = F(*s.Value), true
		case s.Metric == keys.RequestMetric && s.Stat == keys.RequestStat:
			t.RequestsPerS, t.Reported = F(*s.Value*keys.RequestScale), true
		}
	}
	return t
}

func (a *Analyzer) warnings(c convention.Convention, run *formats.Run, acc *runAcc, rr *RunReport, streaming bool, s *Samples) []Warning {
	var w []Warning
	if run.Truncated {
		w = append(w, Warning{Code: "truncated_input", Message: "an input file was cut short; every complete request was imported (see the run's notes)"})
	}
	if rr.Requests.Total == 0 && acc.part {
		w = append(w, Warning{Code: "selection_empty", Message: "the selection (--since, --until, --trim) keeps none of the run's requests: every statistic is empty, and the tool's reported values, which cover the whole run, do not stand in"})
	} else if rr.Requests.Total == 0 && len(run.Reported) > 0 {
		w = append(w, Warning{Code: "summary_only", Message: "the source holds the tool's summary only: nothing to recompute; its statistics are under reported"})
	}
	if rr.Requests.Total > 0 && rr.Requests.Completed == 0 {
		w = append(w, Warning{Code: "no_completed_requests", Message: fmt.Sprintf("none of the %d requests completed: latency statistics are empty", rr.Requests.Total)})
	}
	for _, x := range Table {
		if n := rr.Metrics.Of(x).N; x.Tail && n > 0 && n < 100 {
			w = append(w, Warning{Code: "few_samples", Metric: x.Key, Message: fmt.Sprintf("P99 rests on %d samples (fewer than 100): it is close to the maximum, not a 1-in-100 tail", n)})
		}
	}
	counted := rr.Metrics.Of(TTFT).N
	if streaming && counted > 0 {
		switch {
		case rr.Metrics.Of(ITL).N == 0 && s.noEvents:
			w = append(w, Warning{Code: "itl_unavailable", Metric: ITL.Key, Message: "the source has no per-message arrival times, so no inter-token gaps"})
		case !s.tokensKnown && c.ITL != convention.ITLPerRequestMean:
			msg := "tokens per message unknown: each message counts as one ITL sample"
			if s.sumMsgs > 0 && s.sumN > 0 {
				mean, unit := fmt.Sprintf("%.3g", s.sumN/s.sumMsgs), "tokens"
				if mean == "1" {
					unit = "token"
				}
				msg += fmt.Sprintf(" (mean %s %s per message)", mean, unit)
			}
			w = append(w, Warning{Code: "itl_per_message", Metric: ITL.Key, Message: msg})
		}
	}
	if missing := s.Counted - rr.Metrics.Of(E2E).N; s.Counted > 0 && missing > 0 {
		w = append(w, Warning{Code: "e2e_unavailable", Metric: E2E.Key, Message: fmt.Sprintf("%d of %d completed requests have no last-token time (the source records only the stream's end, e.g. LLMPerf 2024-12): their E2E and TPOT are undefined; the tool's own E2E is under reported", missing, s.Counted)})
	}
	if s.tokErr != "" {
		msg := "re-tokenized output counts unavailable: " + s.tokErr
		if acc.tokErr != "" {
			msg = acc.tokErr
		}
		w = append(w, Warning{Code: "tokenizer_unavailable", Metric: OSL.Key, Message: msg})
	}
	if len(rr.OSLSource) > 1 {
		keys := slices.Sorted(maps.Keys(rr.OSLSource))
		w = append(w, Warning{Code: "mixed_osl_sources", Metric: OSL.Key, Message: "output token counts come from several sources: " + strings.Join(keys, ", ")})
	}
	if run.Streaming != nil && !*run.Streaming {
		w = append(w, Warning{Code: "non_streaming", Message: "non-streaming run: TTFT equals E2E as the client saw it; TPOT, TTST and ITL are undefined"})
	}
	return w
}
