package analyze

import (
	"fmt"
	"time"

	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// RunData is one run's per-request data under one convention, as the
// Analyzer holds it after the rows streamed by: what plots draw from. It
// shares the Analyzer's slices; callers must not modify them.
type RunData struct {
	// Run is the run's row (provenance, source files, notes).
	Run *formats.Run
	// Convention is the convention the data was computed under.
	Convention convention.Convention
	// Streaming is the run's Streaming flag, or — when the source does not
	// say — whether any request received more than one response (the rule
	// the report uses).
	Streaming bool
	// Requests are every request's metrics (all statuses) in arrival order.
	Requests []RequestMetrics
	// ITL are the pooled ITL samples in ms, in request order and, within a
	// request, in token order: request i contributed Requests[i].ITLSamples
	// consecutive values. Empty under ITLPerRequestMean.
	ITL []float64
	// ITLSketched is true when the run's pooled ITL was over the memory
	// budget (Analyzer.SetMemoryBudget): ITL is then a representative
	// sample of ITLSketchPoints values read from a DDSketch, with no
	// per-request order; ITLCount is the real number of gaps.
	ITLSketched bool
	ITLCount    int
	// Values are the report's samples per metric of the Table: the exact
	// values each Summary of the run's report was computed from
	// (Values[ITL] is the pooled ITL of a streaming run; streaming-only
	// metrics are absent for non-streaming runs).
	Values map[*Metric][]float64
	// Weights are the values' weights under a weighted percentile method
	// (absent otherwise); Counted is the number of requests in the
	// convention's completed set.
	Weights map[*Metric][]float64
	Counted int
	// Report is the run's report, for the data Subjects returns (nil
	// otherwise).
	Report *RunReport
	// Corrected counts, per data-check code, the requests a correction
	// changed under the convention (nil when none).
	Corrected map[string]int
	// TokenizerErr says why re-tokenized counts were unavailable ("" when
	// they were, or were not needed).
	TokenizerErr string
	// PairOSL and PairE2E are the counted requests' (OSL, E2E) pairs the
	// report's e2e_by_osl buckets and fit use (NaN where undefined).
	PairOSL, PairE2E []float64
}

// RunData returns the data of the run with id runID under the convention
// named convention (one the Analyzer computed; RunReport.Convention.Name
// says which one a report used). It fails for an unknown run, a run whose
// Run row never arrived, or a convention the Analyzer did not compute.
func (a *Analyzer) RunData(runID, convention string) (*RunData, error) {
	acc := a.byID[runID]
	if acc == nil {
		return nil, fmt.Errorf("run %q: not seen by the analyzer", runID)
	}
	if acc.run == nil {
		return nil, fmt.Errorf("run %q: requests without a run row", runID)
	}
	ci := a.index(convention)
	if ci < 0 || a.skipped(runID, ci) {
		return nil, fmt.Errorf("run %q: convention %q was not computed", runID, convention)
	}
	c := a.convs[ci]
	reqs, itl := acc.per[ci].reqs, acc.per[ci].gaps()
	streaming := isStreaming(acc.run, reqs)
	return runData(acc.run, c, streaming, &acc.per[ci], itl, Sample(c, reqs, itl, streaming)), nil
}

// runData assembles a RunData from what a report computed.
func runData(run *formats.Run, c convention.Convention, streaming bool, p *convAcc, itl []float64, s *Samples) *RunData {
	return &RunData{
		Run: run, Convention: c, Streaming: streaming, Requests: p.reqs, ITL: itl,
		Values: s.Values, Weights: s.Weights, Counted: s.Counted, PairOSL: s.pairOSL, PairE2E: s.pairE2E,
		Corrected: p.applied, TokenizerErr: s.tokErr,
		ITLSketched: p.sketch != nil, ITLCount: itlCount(p, itl),
	}
}

// itlCount is the number of pooled ITL gaps: the sketch's count when
// sketched, else the sample's length.
func itlCount(p *convAcc, itl []float64) int {
	if p.sketch != nil {
		return int(p.sketch.n)
	}
	return len(itl)
}

// RunRow returns the Run row of the run with id runID (nil when it never
// arrived).
func (a *Analyzer) RunRow(runID string) *formats.Run {
	if acc := a.byID[runID]; acc != nil {
		return acc.run
	}
	return nil
}

// RunIDs are the ids of the runs the Analyzer saw, in order of first
// appearance.
func (a *Analyzer) RunIDs() []string {
	out := make([]string, len(a.runs))
	for i, acc := range a.runs {
		out[i] = acc.id
	}
	return out
}

// Subjects builds the report under opt and returns, beside it, the data a
// gate or a comparison is computed on: every run under its report
// convention, or — with pool and more than one run — the pooled runs as
// one "pooled" run; with opt.Select, each run's selected requests only.
// Each RunData's Report is that run's (or the pooled) report. It fails
// where Report fails.
func (a *Analyzer) Subjects(opt Options, pool bool) (*Report, []*RunData, error) {
	opt.Pool = pool && len(a.runs) > 1
	rep, accs, err := a.report(opt)
	if err != nil {
		return nil, nil, err
	}
	data := func(acc *runAcc, ci int, rr *RunReport) *RunData {
		reqs, itl := acc.per[ci].reqs, acc.per[ci].gaps()
		st := isStreaming(acc.run, reqs)
		rd := runData(acc.run, a.convs[ci], st, &acc.per[ci], itl, Sample(a.convs[ci], reqs, itl, st))
		rd.Report = rr
		return rd
	}
	if opt.Pool {
		ci, err := a.pick(opt, a.runs[0].run)
		if err != nil {
			return nil, nil, err
		}
		return rep, []*RunData{data(poolAcc(ci, accs, len(a.convs)), ci, rep.Pooled)}, nil
	}
	var out []*RunData
	for i, acc := range accs {
		ci, err := a.pick(opt, acc.run)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, data(acc, ci, rep.Runs[i]))
	}
	return rep, out, nil
}

// InFlight counts the run's requests in flight over time (formats.InFlight
// with the run's closed-loop concurrency and timeoutNs, the client's
// request timeout or 0): the step function, the per-request result
// (index-aligned with Requests) and the run's first start; ok is false
// when no request has a start time.
func (rd *RunData) InFlight(timeoutNs int64) (steps []formats.Step, res formats.InFlightResult, t0 int64, ok bool) {
	rt := newRunTimes(rd.Run, rd.Requests, timeoutNs)
	return rt.steps, rt.inflight, rt.t0, rt.hasStart
}

// Windows cuts the run into windows of widthNs as report --window does
// (WindowsReport), attributed by start (or end with byEnd), with goodput
// under slo when it has constraints; nil without start times.
func (rd *RunData) Windows(widthNs int64, byEnd bool, slo SLO, timeoutNs int64) (*WindowsReport, error) {
	rt := newRunTimes(rd.Run, rd.Requests, timeoutNs)
	if !rt.hasStart {
		return nil, nil
	}
	return windows(rd.Convention, rd.Requests, rd.ITL, nil, rt, widthNs, byEnd, slo)
}

// AutoWindowNs is the window width plots use when none is given: the
// smallest of 1 s, 2 s, 5 s, 10 s, 15 s, 30 s, 1 m, 2 m, 5 m, 10 m, 15 m,
// 30 m, 1 h, 2 h, 6 h, 12 h, 1 d that cuts spanNs into at most
// min(40, max(4, requests/10)) windows: about ten requests a window where
// the run has them, 40 windows at most.
func AutoWindowNs(spanNs int64, requests int) int64 {
	most := int64(min(40, max(4, requests/10)))
	for _, d := range []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
		time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
		time.Hour, 2 * time.Hour, 6 * time.Hour, 12 * time.Hour} {
		if spanNs/int64(d) < most {
			return int64(d)
		}
	}
	return int64(24 * time.Hour)
}

// Span is the run's first start and last recorded time (start or end), in
// its clock; ok false without start times.
func (rd *RunData) Span() (from, to int64, ok bool) {
	rt := newRunTimes(rd.Run, rd.Requests, 0)
	return rt.t0, rt.tLast, rt.hasStart
}
