package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/sweep"
)

func loadText(load string) string { return sweep.ShortLoad(load) }

// latencyCols are the latency columns of a sweep table.
var latencyCols = []struct {
	x *analyze.Metric
	p float64
}{{analyze.TTFT, 0.5}, {analyze.TTFT, 0.99}, {analyze.TPOT, 0.5}, {analyze.TPOT, 0.99}, {analyze.E2E, 0.5}, {analyze.E2E, 0.99}}

func writeSweeps(w io.Writer, c *Comparison, md bool) {
	sw := c.Sweeps
	if md {
		fmt.Fprint(w, "### sweeps\n\n")
	} else {
		fmt.Fprintln(w, "== sweeps ==")
	}
	for _, s := range sw.Series {
		title := "series " + clean(s.Key, md)
		if md {
			fmt.Fprintf(w, "#### %s\n\n", title)
		} else {
			fmt.Fprintln(w, title)
		}
		for _, cv := range s.Curves {
			writeCurve(w, sw, cv, md)
		}
		for _, u := range s.Unloaded {
			l := "not a load level (no configured concurrency or rate), left out of the curve: " + clean(u, md)
			if md {
				l = "- " + l
			}
			fmt.Fprintln(w, l)
		}
		if anyCapacity(s.Capacity) {
			var parts []string
			for i, r := range s.Capacity {
				v := fmtVal(r.RateRPS, "req/s")
				if r.AtLeast {
					v = "≥ " + v
				}
				if i > 0 {
					v += " (" + pctChange(float64(r.Change)) + ")"
				}
				parts = append(parts, clean(r.Label, md)+" "+v)
			}
			l := fmt.Sprintf("max rate meeting the SLO (%s of requests within %s): %s", fmtPct(float64(sw.Target))+"%", clean(sw.SLO, md), strings.Join(parts, ", "))
			if md {
				l = "**" + l + "**\n"
			}
			fmt.Fprintln(w, l)
		}
		fmt.Fprintln(w)
	}
	legend := []string{
		"req/s, out tok/s: achieved throughput (the runs' mean); tok/s/user: 1000 / P50 TPOT, the median request's decode rate; P: on the Pareto frontier of tok/s/user against out tok/s" + perGPU(sw.GPUs),
		fmt.Sprintf("knee: Kneedle (Satopää et al. 2011, S=%g) on P99 E2E against req/s; none below %d load levels", sweep.KneeSensitivity, sweep.MinKneeLevels),
	}
	if sw.CostPerHour > 0 {
		what := fmt.Sprintf("$%s per hour for the deployment", strconv.FormatFloat(float64(sw.CostPerHour), 'f', -1, 64))
		if sw.GPUs > 0 {
			what = fmt.Sprintf("$%s per GPU-hour × %s", strconv.FormatFloat(float64(sw.CostPerHour), 'f', -1, 64), plural(sw.GPUs, "GPU"))
		}
		legend = append(legend, "$/M out, $/M total: "+what+" / 3600 / tokens per second × 10⁶")
	}
	for _, l := range legend {
		if md {
			fmt.Fprintf(w, "%s\n\n", l)
		} else {
			fmt.Fprintln(w, l)
		}
	}
}

func perGPU(g int) string {
	if g > 0 {
		return " per GPU (" + plural(g, "GPU") + ")"
	}
	return ""
}

func writeCurve(w io.Writer, sw *sweep.Result, cv sweep.Curve, md bool) {
	if md {
		fmt.Fprintf(w, "%s\n\n", clean(cv.Label, md))
	} else {
		fmt.Fprintln(w, clean(cv.Label, md))
	}
	header := []string{"load", "runs", "req/s", "out tok/s"}
	if sw.GPUs > 0 {
		header = append(header, "out tok/s/GPU")
	}
	header = append(header, "tok/s/user")
	// one unit per metric, its P50 and P99 columns alike (docs/OUTPUT.md)
	units := map[*analyze.Metric]string{}
	for _, l := range latencyCols {
		var vals []float64
		for _, p := range cv.Points {
			for _, q := range []float64{0.5, 0.99} {
				vals = append(vals, float64(p.Latency[sweep.LatencyKey(l.x, q)]))
			}
		}
		units[l.x] = ColumnUnit(vals...)
	}
	for _, l := range latencyCols {
		header = append(header, fmt.Sprintf("%s P%g %s", l.x.Label, l.p*100, units[l.x]))
	}
	withSLO := sw.SLO != ""
	if withSLO {
		header = append(header, "SLO met")
	}
	if sw.CostPerHour > 0 {
		header = append(header, "$/M out", "$/M total")
	}
	header = append(header, "P")
	tb := &table{md: md}
	tb.add(header...)
	for _, p := range cv.Points {
		tput := num(float64(p.OutputTokensPerS))
		if p.Reported {
			tput += "*"
		}
		row := []string{clean(loadText(p.Load), md), strconv.Itoa(len(p.Runs)), num(float64(p.RequestsPerS)), tput}
		if sw.GPUs > 0 {
			row = append(row, num(float64(p.OutputTokensPerSPerGPU)))
		}
		row = append(row, num(float64(p.PerUserTokensPerS)))
		for _, l := range latencyCols {
			row = append(row, Cell(float64(p.Latency[sweep.LatencyKey(l.x, l.p)]), units[l.x]))
		}
		if withSLO {
			row = append(row, Pct(float64(p.Attainment)))
		}
		if c := p.Cost; c != nil {
			row = append(row, dollars(c.PerMillionOutput), dollars(c.PerMillionTotal))
		}
		mark := ""
		if p.Pareto {
			mark = "P"
		}
		tb.add(append(row, mark)...)
	}
	tb.write(w)
	var notes []string
	for _, p := range cv.Points {
		if p.Reported {
			notes = append(notes, "* the tool's own reported throughput (the run has no request start times)")
			break
		}
	}
	if k := cv.Knee; k != nil {
		notes = append(notes, fmt.Sprintf("knee: %s (%s, P99 E2E %s)", clean(loadText(k.Load), md), fmtVal(k.RequestsPerS, "req/s"), Duration(float64(k.E2EP99Ms))))
	} else {
		notes = append(notes, "knee: none ("+cv.KneeWhy+")")
	}
	if c := cv.Capacity; c != nil && !anyAttainment(cv.Points) {
		notes = append(notes, "capacity: not computed: no load level has per-request data to check the SLO on")
	} else if c != nil {
		s := "capacity: " + fmtVal(c.RateRPS, "req/s")
		if c.AtLeast {
			s = "capacity: ≥ " + fmtVal(c.RateRPS, "req/s")
		}
		if c.GPUs > 0 && !math.IsNaN(float64(c.PerGPURateRPS)) {
			s += fmt.Sprintf(" (%s per GPU)", fmtVal(c.PerGPURateRPS, "req/s"))
		}
		if cc := cv.CostAtCapacity; cc != nil {
			s += fmt.Sprintf(", at it %s per M output tokens, %s per M total", dollars(cc.PerMillionOutput), dollars(cc.PerMillionTotal))
		}
		if c.Note != "" {
			s += " — " + c.Note
		}
		notes = append(notes, CutWords(s, LineLimit))
	}
	for _, n := range notes {
		if md {
			fmt.Fprintf(w, "- %s\n", n)
		} else {
			fmt.Fprintln(w, n)
		}
	}
	fmt.Fprintln(w)
}

func anyCapacity(rows []sweep.CapacityRow) bool {
	for _, r := range rows {
		if !math.IsNaN(float64(r.RateRPS)) {
			return true
		}
	}
	return false
}

func anyAttainment(pts []sweep.Point) bool {
	for _, p := range pts {
		if !math.IsNaN(float64(p.Attainment)) {
			return true
		}
	}
	return false
}

func dollars(v analyze.F) string {
	if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
		return "–"
	}
	return "$" + strconv.FormatFloat(float64(v), 'f', 3, 64)
}

// writeSweepCSV appends the sweeps to a comparison's CSV after a blank
// line, as a second table with its own header: one record per side and
// load level.
func writeSweepCSV(w io.Writer, c *Comparison) error {
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	f := func(v analyze.F) string {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return ""
		}
		return strconv.FormatFloat(float64(v), 'g', -1, 64)
	}
	header := []string{"series", "side", "load", "runs", "requests_per_s", "output_tokens_per_s", "total_tokens_per_s", "output_tokens_per_s_per_gpu", "per_user_tokens_per_s"}
	for _, l := range latencyCols {
		header = append(header, sweep.LatencyKey(l.x, l.p))
	}
	header = append(header, "attainment", "pareto", "knee", "cost_per_million_output_tokens", "cost_per_million_total_tokens")
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, s := range c.Sweeps.Series {
		for _, cv := range s.Curves {
			for _, p := range cv.Points {
				rec := []string{s.Key, cv.Label, p.Load, strconv.Itoa(len(p.Runs)), f(p.RequestsPerS), f(p.OutputTokensPerS), f(p.TotalTokensPerS), f(p.OutputTokensPerSPerGPU), f(p.PerUserTokensPerS)}
				for _, l := range latencyCols {
					rec = append(rec, f(p.Latency[sweep.LatencyKey(l.x, l.p)]))
				}
				knee := cv.Knee != nil && cv.Knee.Load == p.Load
				rec = append(rec, f(p.Attainment), strconv.FormatBool(p.Pareto), strconv.FormatBool(knee))
				if p.Cost != nil {
					rec = append(rec, f(p.Cost.PerMillionOutput), f(p.Cost.PerMillionTotal))
				} else {
					rec = append(rec, "", "")
				}
				for i := range rec {
					rec[i] = csvSafe(rec[i])
				}
				if err := cw.Write(rec); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
