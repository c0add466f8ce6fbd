package slo

import (
	"fmt"
	"math"
	"strings"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/compare"
)

// baselineMatch pairs each gated run with the baseline runs of its
// configuration, by the keys `tokentrace compare` matches runs by
// (compare.ConfigOf, compare.Match): CI's gate and a human's comparison
// look at the same pairs.
type baselineMatch struct {
	keys   []string
	pooled *subject
	// byKey are the baseline's runs by configuration key (warm-up runs
	// left out); several configurations make the baseline a set to match
	// against, one configuration the single point every run is compared
	// with.
	byKey map[string][]*subject
	order []string
}

// matchBaseline prepares the baseline's runs for matching.
func matchBaseline(baseline *analyze.Analyzer, opt analyze.Options, keys []string, pooled *subject) (*baselineMatch, error) {
	if keys == nil {
		keys = compare.Keys
	}
	subs, _, err := subjects(baseline, opt, false)
	if err != nil {
		return nil, err
	}
	m := &baselineMatch{keys: keys, pooled: pooled, byKey: map[string][]*subject{}}
	for _, s := range subs {
		if compare.Warmup(s.run) {
			continue
		}
		k := compare.ConfigOf(s.run).Key(keys)
		if m.byKey[k] == nil {
			m.order = append(m.order, k)
		}
		m.byKey[k] = append(m.byKey[k], s)
	}
	return m, nil
}

// of returns the baseline subject run s is compared with, and a note: a
// baseline of one configuration is every run's baseline (the note says
// when the configurations differ); a baseline of several is matched by
// configuration, its runs of s's configuration pooled (nil and why when
// it has none). A pooled gated subject (pooled) is compared with the
// whole baseline pooled.
func (m *baselineMatch) of(s *subject, pooled bool) (*subject, string) {
	if len(m.order) <= 1 || pooled || s.run == nil {
		if len(m.order) == 1 && s.run != nil && !pooled {
			if k := compare.ConfigOf(s.run).Key(m.keys); k != m.order[0] {
				return m.pooled, fmt.Sprintf("the baseline's configuration (%s) differs from the run's (%s): compared anyway, the baseline having one configuration", m.order[0], k)
			}
		}
		return m.pooled, ""
	}
	k := compare.ConfigOf(s.run).Key(m.keys)
	runs := m.byKey[k]
	if len(runs) == 0 {
		return nil, fmt.Sprintf("no baseline run has the run's configuration (%s); the baseline's: %s (match by fewer keys with --match or --ignore)", k, strings.Join(m.order, "; "))
	}
	return poolSubjects(runs), ""
}

// poolSubjects pools several runs of one configuration into one subject:
// their requests and token gaps, and for run-level metrics their counts
// summed (goodput, error rate) and rates averaged (throughput, goodput
// rate).
func poolSubjects(subs []*subject) *subject {
	if len(subs) == 1 {
		return subs[0]
	}
	var names []string
	for _, s := range subs {
		names = append(names, s.name)
	}
	first := subs[0]
	p := &subject{name: strings.Join(names, "+"), c: first.c, tools: first.tools}
	run := *first.run
	run.RunID, run.Reported = p.name, nil
	p.run = &run
	rr := *first.rr
	rr.RunID = p.name
	rr.Requests = analyze.RequestCounts{}
	var good, total int
	var goodRate, out, reqs, dur []float64
	withGoodput := false
	rr.Warnings = nil
	for _, s := range subs {
		for _, m := range s.reqs {
			m.NonStreaming = !s.streaming
			p.reqs = append(p.reqs, m)
		}
		if s.streaming {
			p.itl = append(p.itl, s.itl...)
		}
		p.streaming = p.streaming || s.streaming
		c := s.rr.Requests
		rr.Requests.Total += c.Total
		rr.Requests.Completed += c.Completed
		rr.Requests.Empty += c.Empty
		rr.Requests.Failed += c.Failed
		rr.Requests.Cancelled += c.Cancelled
		rr.Requests.TPOTUndefined += c.TPOTUndefined
		if g := s.rr.Goodput; g != nil {
			withGoodput = true
			good += g.Good
			total += g.Total
			goodRate = append(goodRate, float64(g.RequestsPerS))
		}
		out = append(out, float64(s.rr.Throughput.OutputTokensPerS))
		reqs = append(reqs, float64(s.rr.Throughput.RequestsPerS))
		dur = append(dur, float64(s.rr.Throughput.DurationS))
		rr.Warnings = append(rr.Warnings, s.rr.Warnings...)
	}
	rr.Requests.ErrorRate = analyze.F(ratio(rr.Requests.Failed+rr.Requests.Cancelled, rr.Requests.Total))
	rr.Throughput.OutputTokensPerS, rr.Throughput.RequestsPerS, rr.Throughput.DurationS = analyze.F(mean(out)), analyze.F(mean(reqs)), analyze.F(mean(dur))
	if withGoodput {
		g := *first.rr.Goodput
		g.Good, g.Total, g.Fraction, g.RequestsPerS = good, total, analyze.F(ratio(good, total)), analyze.F(mean(goodRate))
		rr.Goodput = &g
	}
	p.rr = &rr
	return p
}

func ratio(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
