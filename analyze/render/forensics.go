package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tokentrace/tokentrace/analyze"
)

// MaxTextListed is how many failures a text or Markdown report lists
// before referring to the JSON report for the rest.
const MaxTextListed = 20

// clockFmt formats times of one run for a human: wall-clock times in loc
// (a Unix clock), else seconds from the run's first start.
type clockFmt struct {
	wall  bool
	loc   *time.Location
	t0    int64
	dated bool // the run spans more than one day in loc: times carry dates
}

func newClockFmt(rr *analyze.RunReport, loc *time.Location) clockFmt {
	if loc == nil {
		loc = time.UTC
	}
	c := clockFmt{wall: rr.ClockDomain == "unix", loc: loc}
	if rr.FirstStartNs != nil {
		c.t0 = *rr.FirstStartNs
	}
	return c
}

// zone names loc for headers: "UTC", "Europe/Paris".
func (c clockFmt) zone() string {
	if !c.wall {
		return "s from the first start"
	}
	return c.loc.String()
}

// date is the day of the run's first start ("2026-07-29").
func (c clockFmt) date() string { return time.Unix(0, c.t0).In(c.loc).Format("2006-01-02") }

// at formats a time: "22:44:07.928" (with the date when the run spans
// days), or "+2007.5 s" on a clock without wall time.
func (c clockFmt) at(ns int64) string {
	if !c.wall {
		return fmt.Sprintf("+%.1f s", float64(ns-c.t0)/1e9)
	}
	t := time.Unix(0, ns).In(c.loc)
	if c.dated {
		return t.Format("2006-01-02 15:04:05.000")
	}
	return t.Format("15:04:05.000")
}

// short formats a window edge: "22:40:00" (no milliseconds when whole).
func (c clockFmt) short(ns int64) string {
	if !c.wall {
		return fmt.Sprintf("+%g s", float64(ns-c.t0)/1e9)
	}
	t := time.Unix(0, ns).In(c.loc)
	layout := "15:04:05"
	if t.Nanosecond() != 0 {
		layout = "15:04:05.000"
	}
	if c.dated {
		layout = "2006-01-02 " + layout
	}
	return t.Format(layout)
}

// spanDays sets dated when from and to fall on different days in loc.
func (c *clockFmt) spanDays(from, to int64) {
	if c.wall && time.Unix(0, from).In(c.loc).YearDay() != time.Unix(0, to).In(c.loc).YearDay() {
		c.dated = true
	}
}

// writeForensics writes a run's forensic sections: the selection, the
// load in flight, failures on the clock and their bursts, the slowest
// requests, the windows, the ITL tail against prefills and the series.
func writeForensics(w io.Writer, rr *analyze.RunReport, md bool, loc *time.Location, line func(string, ...any)) {
	if rr.FirstStartNs == nil {
		return
	}
	c := newClockFmt(rr, loc)
	if w := rr.Windows; w != nil && len(w.Items) > 0 {
		c.spanDays(w.Items[0].StartNs, w.Items[len(w.Items)-1].StartNs)
	}
	if f := rr.Failures; f != nil && len(f.Requests) > 0 && f.Requests[len(f.Requests)-1].StartNs != nil {
		c.spanDays(c.t0, *f.Requests[len(f.Requests)-1].StartNs)
	}
	if s := rr.Selection; s != nil {
		writeSelection(s, c, line)
	}
	if f := rr.InFlight; f != nil {
		conc := ""
		if f.Concurrency > 0 {
			conc = fmt.Sprintf(" (closed loop, concurrency %d)", f.Concurrency)
		}
		unk := ""
		if f.UnknownEnd > 0 {
			unk = fmt.Sprintf("; %d request(s) without a recorded end counted until a bound: %s (formats/SCHEMA.md, Requests in flight)", f.UnknownEnd, analyze.DescribeBounds(f.Bounds))
		}
		busy := ""
		if b := float64(f.BusyShare); b > 0 && b < 0.995 {
			busy = fmt.Sprintf(" · %s while busy (%s of the run)", num(float64(f.ActiveMean)), Pct(b))
		}
		line("in flight: max %d · mean %s over the run (time-weighted P50 %g, P99 %g)%s%s%s", f.Max, num(float64(f.MeanOverRun)),
			float64(f.P50), float64(f.P99), busy, conc, unk)
	}
	if f := rr.Failures; f != nil && len(f.Requests) > 0 {
		writeFailures(w, f, c, md, line)
	}
	if s := rr.Slowest; s != nil {
		writeSlowest(w, s, c, md)
	}
	if ws := rr.Windows; ws != nil {
		writeWindows(w, ws, c, md, line)
	}
	if in := rr.Interference; in != nil && in.TailGaps > 0 {
		line("ITL tail vs prefills: %d of %d gaps ≥ P99 (%s) had another request's first token inside (%s; %s expected by chance for gaps of those lengths; %s of all %d gaps)",
			in.WithPrefill, in.TailGaps, Duration(float64(in.ThresholdMs)), Pct(float64(in.Share)), Pct(float64(in.ExpectedShare)), Pct(float64(in.AllShare)), in.AllGaps)
	}
	if len(rr.Series) > 0 {
		var parts []string
		for _, s := range rr.Series {
			p := fmt.Sprintf("%s (%d label set(s), %d points", clean(s.Metric, md), s.LabelSets, s.Points)
			if s.Run != rr.RunID {
				p += ", from run " + clean(s.Run, md)
			}
			parts = append(parts, p+")")
		}
		if len(parts) > 8 {
			parts = append(parts[:8], fmt.Sprintf("… %d more in the JSON report", len(parts)-8))
		}
		line("series beside the run: %s", strings.Join(parts, ", "))
	}
}

// leftOutLabel names the reasons of analyze.LeftOutKind.
var leftOutLabel = map[string]string{"before_since": "before --since", "after_until": "after --until",
	"warm_up": "in the warm-up (--trim)", "cool_down": "in the cool-down (--trim)", "no_start_time": "without a start time"}

func writeSelection(s *analyze.SelectionReport, c clockFmt, line func(string, ...any)) {
	edge := func(p *int64) string {
		if p == nil {
			return "…"
		}
		return c.at(*p)
	}
	zone := ""
	if c.wall {
		zone = " " + c.zone()
	}
	if t := s.Trim; t != nil {
		if t.Mode == "auto" {
			line("steady state (--trim auto): the longest stretch with at least %d of the peak %d requests in flight (ratio %g, SGLang's rule); %s trimmed at the head, %s at the tail",
				t.Threshold, t.PeakInFlight, float64(t.Ratio), Duration(1000*float64(t.HeadS)), Duration(1000*float64(t.TailS)))
		} else {
			line("steady state (--trim): %s trimmed at the head, %s at the tail", Duration(1000*float64(t.HeadS)), Duration(1000*float64(t.TailS)))
		}
		if t.WarmupExcluded != "" {
			line("  %s", t.WarmupExcluded)
		}
	}
	var out []string
	for _, l := range s.LeftOut {
		out = append(out, fmt.Sprintf("%d %s", l.Count, leftOutLabel[l.Reason]))
	}
	left := "none left out"
	if len(out) > 0 {
		left = "left out: " + strings.Join(out, ", ") + " (request keys in the JSON report)"
	}
	line("selection: requests by %s in [%s, %s)%s: %d kept; %s", s.By, edge(s.FromNs), edge(s.ToNs), zone, s.Kept, left)
}

func writeFailures(w io.Writer, f *analyze.FailureReport, c clockFmt, md bool, line func(string, ...any)) {
	var bursts []string
	for _, b := range f.Bursts {
		if b.Count < 2 {
			continue
		}
		kind := b.Kind
		if b.OtherKinds > 0 {
			kind += fmt.Sprintf(" (+%d of other kinds)", b.OtherKinds)
		}
		zone := ""
		if c.wall {
			zone = " " + c.zone()
		}
		bursts = append(bursts, fmt.Sprintf("%d failures %s–%s%s, %s", b.Count, c.at(b.FromNs), c.at(b.ToNs), zone, clean(kind, md)))
	}
	for _, b := range bursts {
		line("burst: %s", b)
	}
	t := &table{md: md}
	head := "start (" + c.zone() + ")"
	if c.wall && !c.dated {
		head = "start (" + c.zone() + ", " + c.date() + ")"
	}
	t.add("failures on the clock", head, "key", "id", "status", "waited", "in flight", "message")
	for i, r := range f.Requests {
		if i == MaxTextListed {
			break
		}
		at := "–"
		if r.StartNs != nil {
			at = c.at(*r.StartNs)
		}
		status := r.Status
		if r.Code != "" {
			status += " " + r.Code
		}
		waited := "–"
		switch {
		case !math.IsNaN(float64(r.DurationMs)):
			waited = Duration(float64(r.DurationMs))
		case r.HeldBoundRule != "":
			waited = "≤ " + Duration(float64(r.HeldBoundMs)) + " (" + r.HeldBoundRule + ")"
		}
		inf := "–"
		if r.StartNs != nil {
			inf = strconv.FormatInt(r.InFlightAtStart, 10)
		}
		t.add(strconv.Itoa(i+1), at, strconv.FormatInt(r.Key, 10), cleanN(r.ID, md, 24), clean(status, md), clean(waited, md), inf, cleanN(r.Message, md, 60))
	}
	t.write(w)
	if n := len(f.Requests) + f.Omitted - MaxTextListed; n > 0 {
		line("  … %d more failed, cancelled or empty requests in the JSON report", n)
	}
}

func writeSlowest(w io.Writer, s *analyze.SlowestReport, c clockFmt, md bool) {
	for _, l := range []struct {
		title string
		rows  []analyze.ListedRequest
	}{{"slowest by TTFT", s.ByTTFT}, {"slowest by E2E", s.ByE2E}} {
		var ttft, e2e []float64
		for _, r := range l.rows {
			ttft, e2e = append(ttft, float64(r.TTFTMs)), append(e2e, float64(r.E2EMs))
		}
		tu, eu := ColumnUnit(ttft...), ColumnUnit(e2e...) // a unit per column
		t := &table{md: md}
		t.add(l.title, "start ("+c.zone()+")", "key", "id", "TTFT "+tu, "E2E "+eu, "in flight", "engine waiting", "KV cache %")
		for i, r := range l.rows {
			at := "–"
			if r.StartNs != nil {
				at = c.at(*r.StartNs)
			}
			t.add(strconv.Itoa(i+1), at, strconv.FormatInt(r.Key, 10), cleanN(r.ID, md, 24), Cell(float64(r.TTFTMs), tu), Cell(float64(r.E2EMs), eu),
				strconv.FormatInt(r.InFlightAtStart, 10), num(float64(r.EngineWaiting)), num(float64(r.EngineKVCachePct)))
		}
		t.write(w)
	}
}

func writeWindows(w io.Writer, ws *analyze.WindowsReport, c clockFmt, md bool, line func(string, ...any)) {
	t := &table{md: md}
	width := time.Duration(ws.WidthS * 1e9).String()
	if strings.HasSuffix(width, "m0s") {
		width = strings.TrimSuffix(width, "0s")
	}
	if strings.HasSuffix(width, "h0m") {
		width = strings.TrimSuffix(width, "0m")
	}
	zone := c.zone()
	if c.wall && !c.dated {
		zone += ", " + c.date()
	}
	// a unit per metric (TTFT's three columns share one): docs/OUTPUT.md
	var ttftV, e2eV, itlV []float64
	for _, x := range ws.Items {
		ttftV = append(ttftV, float64(x.TTFT.P50), float64(x.TTFT.P90), float64(x.TTFT.P99), float64(x.TTFT.Max))
		e2eV = append(e2eV, float64(x.E2E.P99), float64(x.E2E.Max))
		itlV = append(itlV, float64(x.ITLP99Ms))
	}
	tu, eu, iu := ColumnUnit(ttftV...), ColumnUnit(e2eV...), ColumnUnit(itlV...)
	t.add(fmt.Sprintf("windows of %s by %s (%s)", width, ws.By, zone), "n", "ok", "failed", "TTFT P50 "+tu, "TTFT P90 "+tu, "TTFT P99 "+tu,
		"E2E P99 "+eu, "ITL P99 "+iu, "out tok/s", "goodput", "in flight mean / max")
	few := false
	stat := func(v, mx analyze.F, n int, u string) string {
		if n == 0 {
			return "–"
		}
		if math.IsNaN(float64(v)) {
			few = true
			return Cell(float64(mx), u) + "*"
		}
		return Cell(float64(v), u)
	}
	for _, x := range ws.Items {
		gp := "–"
		if x.Goodput != nil && x.Started > 0 {
			gp = Pct(float64(x.Goodput.Fraction))
		}
		itl := "–"
		if x.ITLN > 0 {
			itl = Cell(float64(x.ITLP99Ms), iu)
			if math.IsNaN(float64(x.ITLP99Ms)) {
				itl, few = "few*", true
			}
		}
		t.add(c.short(x.StartNs), strconv.Itoa(x.Started), strconv.Itoa(x.Completed), strconv.Itoa(x.Failed+x.Cancelled),
			stat(x.TTFT.P50, x.TTFT.Max, x.TTFT.N, tu), stat(x.TTFT.P90, x.TTFT.Max, x.TTFT.N, tu), stat(x.TTFT.P99, x.TTFT.Max, x.TTFT.N, tu),
			stat(x.E2E.P99, x.E2E.Max, x.E2E.N, eu), itl, num(float64(x.OutputTokensPerS)), gp,
			fmt.Sprintf("%s / %d", num(float64(x.InFlightMean)), x.InFlightMax))
	}
	t.write(w)
	if few {
		line("  * the window's max: it holds fewer values than the percentile needs (P90: 10, P99: 100)")
	}
}

// WriteWindowsCSV writes every run's windows as one CSV table (RFC 4180,
// a header line; null is an empty field): run_id, the window's start
// (start_ns, start RFC 3339 on a Unix clock, offset_s), its counts, the
// TTFT, TPOT and E2E n/P50/P90/P99/max (ms), itl_p99_ms, itl_n,
// output_tokens_per_s, goodput (good, fraction, requests_per_s),
// in_flight_mean and in_flight_max, few. Runs without windows add no
// rows.
func WriteWindowsCSV(w io.Writer, rep *analyze.Report) error {
	cw := csv.NewWriter(w)
	head := []string{"run_id", "width_s", "by", "start_ns", "start", "offset_s", "started", "completed", "failed", "cancelled", "empty"}
	for _, m := range []string{"ttft_ms", "tpot_ms", "e2e_ms"} {
		for _, s := range []string{"n", "p50", "p90", "p99", "max"} {
			head = append(head, m+"_"+s)
		}
	}
	head = append(head, "itl_p99_ms", "itl_n", "output_tokens_per_s", "goodput_good", "goodput_fraction", "goodput_requests_per_s", "in_flight_mean", "in_flight_max", "few")
	if err := cw.Write(head); err != nil {
		return err
	}
	f := func(v analyze.F) string {
		x := float64(v)
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return ""
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	for _, rr := range rep.Runs {
		ws := rr.Windows
		if ws == nil {
			continue
		}
		for _, x := range ws.Items {
			row := []string{csvSafe(rr.RunID), strconv.FormatFloat(ws.WidthS, 'g', -1, 64), ws.By, strconv.FormatInt(x.StartNs, 10), x.Start, f(x.OffsetS),
				strconv.Itoa(x.Started), strconv.Itoa(x.Completed), strconv.Itoa(x.Failed), strconv.Itoa(x.Cancelled), strconv.Itoa(x.Empty)}
			for _, s := range []analyze.WindowStat{x.TTFT, x.TPOT, x.E2E} {
				row = append(row, strconv.Itoa(s.N), f(s.P50), f(s.P90), f(s.P99), f(s.Max))
			}
			gg, gf, gr := "", "", ""
			if g := x.Goodput; g != nil {
				gg, gf, gr = strconv.Itoa(g.Good), f(g.Fraction), f(g.RateS)
			}
			row = append(row, f(x.ITLP99Ms), strconv.Itoa(x.ITLN), f(x.OutputTokensPerS), gg, gf, gr, f(x.InFlightMean), strconv.Itoa(x.InFlightMax), strconv.FormatBool(x.Few))
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
