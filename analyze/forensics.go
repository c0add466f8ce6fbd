package analyze

import (
	"fmt"
	"math"

	"github.com/tokentrace/tokentrace/analyze/stats"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// forensics is the per-run state Report builds before a run's report:
// its requests on the clock (over every request of the run) and, with a
// selection, which requests are kept.
type forensics struct {
	rt     *runTimes
	keep   []bool // nil: all
	sel    *SelectionReport
	selErr string // why the selection could not apply to this run
}

// prepareForensics places acc's requests on the clock and applies
// opt.Select. A run without start times cannot be selected: its report
// covers all of its requests and says why (a warning), as do series-only
// runs.
func (a *Analyzer) prepareForensics(acc *runAcc, opt Options) (*forensics, *runAcc, error) {
	var reqs []RequestMetrics
	if len(acc.per) > 0 {
		reqs = acc.per[0].reqs // every convention's requests are index-aligned
	}
	f := &forensics{rt: newRunTimes(acc.run, reqs, opt.TimeoutNs)}
	if !opt.Select.Active() || len(reqs) == 0 {
		return f, acc, nil
	}
	if !f.rt.hasStart {
		f.selErr = "the run has no request start times: --since, --until and --trim do not apply; every request is reported"
		return f, acc, nil
	}
	keep, rep, err := selectRequests(acc.run, reqs, f.rt, opt.Select)
	if err != nil {
		return nil, nil, err
	}
	f.keep, f.sel = keep, rep
	return f, filterAcc(acc, keep), nil
}

// addForensics fills rr's forensic sections: the clock, the selection, the
// load in flight, failures on the clock, the slowest requests (opt.Top),
// windows (opt.WindowNs), prefill interference and the server series
// beside the run. full is the run's every request (under convention ci),
// sel the selected ones (the report's).
func (a *Analyzer) addForensics(rr *RunReport, f *forensics, full, sel *runAcc, ci int, c convention.Convention, opt Options) error {
	if f.selErr != "" {
		rr.Warnings = append(rr.Warnings, Warning{Code: "selection_not_applied", Message: f.selErr})
	}
	rt := f.rt
	if !rt.hasStart {
		return nil
	}
	rr.ClockDomain = rt.clock
	rr.FirstStartNs = i64ptr(rt.t0)
	rr.Selection = f.sel
	rr.InFlight = inFlightReport(full.run, rt)
	// the series-only runs (no requests) whose series seriesFor may
	// attach: only those, so that a file of 4,000 runs does not build a
	// list of 4,000 for each (quadratic)
	var others []*formats.Run
	for _, o := range a.runs {
		if o.run != nil && o.run.RequestCount == 0 && (len(o.run.Series) > 0 || len(o.run.Load) > 0) {
			others = append(others, o.run)
		}
	}
	pts, sums := seriesFor(full.run, others, rt.clock, rt.t0, rt.tLast)
	if len(sums) > 0 {
		rr.Series = sums
	}
	eng := NewEngineState(pts, rt.clock)
	allReqs := full.per[ci].reqs
	rr.Failures = failures(allReqs, f.keep, rt, eng)
	if opt.Top > 0 {
		rr.Slowest = slowest(allReqs, f.keep, rt, eng, opt.Top)
	}
	selReqs, selITL := sel.per[ci].reqs, sel.per[ci].gaps()
	if opt.WindowNs > 0 {
		fullITL := full.per[ci].gaps()
		w, err := windows(c, allReqs, fullITL, f.keep, rt, opt.WindowNs, opt.Select.ByEnd, opt.SLO)
		if err != nil {
			return fmt.Errorf("run %q: %w", rr.RunID, err)
		}
		rr.Windows = w
	}
	if isStreaming(full.run, selReqs) && c.ITL != convention.ITLPerRequestMean {
		thr := rr.Metrics.Of(ITL).Value(0.99)
		if math.IsNaN(thr) {
			thr = stats.Percentile(stats.SortedCopy(selITL), 0.99, stats.Method(c.Percentile))
		}
		rr.Interference = interference(selReqs, selITL, allReqs, thr, rt)
	}
	return nil
}
