package render

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/stats"
)

// writeServerJoin renders the server_join section (text or Markdown).
func writeServerJoin(w io.Writer, sj *analyze.ServerJoin, md bool) {
	fmt.Fprintln(w)
	head := "Server join"
	if md {
		head = "### " + head
	}
	fmt.Fprintln(w, head)
	qs := make([]string, 0, len(sj.Matched))
	for q := range sj.Matched {
		qs = append(qs, q)
	}
	sort.Strings(qs)
	var parts []string
	total := 0
	for _, q := range qs {
		parts = append(parts, fmt.Sprintf("%s %d", q, sj.Matched[q]))
		total += sj.Matched[q]
	}
	fmt.Fprintf(w, "  matched %d of %d client requests and %d server records (%s); unmatched: %d client, %d server\n",
		total, sj.ClientRequests, sj.ServerRecords, strings.Join(parts, ", "), sj.UnmatchedClients, sj.UnmatchedServers)
	for _, o := range sj.ClockOffsets {
		lo, hi := float64(o.LoMs), float64(o.HiMs)
		var bounds string
		switch {
		case math.IsNaN(lo):
			bounds = fmt.Sprintf("θ ≤ %s ms (no lower bound: no pair has the server's end time)", num(hi))
		case o.Consistent:
			bounds = fmt.Sprintf("%s ≤ θ ≤ %s ms", num(lo), num(hi))
		default:
			bounds = fmt.Sprintf("NONE (%s > %s ms): no single offset fits every pair — the clocks drifted, or a pair is wrong", num(lo), num(hi))
		}
		if r := float64(o.ResolutionMs); r > 0 {
			bounds += fmt.Sprintf("; the bound includes the server stamps' %s ms resolution", num(r))
		}
		fmt.Fprintf(w, "  clock %s→%s, %d pairs: server arrival − client send median %s ms (the clock offset plus the client→server delay)\n",
			o.ClientClock, o.ServerClock, o.N, num(float64(o.MedianMs)))
		fmt.Fprintf(w, "    offsets θ = server clock − client clock allowed by every pair: %s\n", bounds)
	}
	d := sj.Decomposition
	if d != nil && d.N > 0 {
		t := &table{md: md}
		t.add("part (ms)", "n", "mean", "p50", "p90", "p99", "max")
		for _, r := range []struct {
			name string
			s    stats.Summary
		}{{"TTFT (client)", d.TTFTMs}, {"queue (server)", d.QueueMs}, {"prefill (server)", d.PrefillMs}, {"remainder", d.RemainderMs},
			{"E2E (client)", d.E2EMs}, {"decode (E2E − TTFT)", d.DecodeMs}, {"decode (server)", d.ServerDecodeMs}} {
			t.add(r.name, fmt.Sprint(r.s.N), num(r.s.Mean), num(r.s.Value(0.5)), num(r.s.Value(0.9)), num(r.s.Value(0.99)), num(r.s.Max))
		}
		t.write(w)
		if d.Tail != nil {
			fmt.Fprintf(w, "  TTFT tail (%d requests ≥ P99 %s ms): queue %.1f%%, prefill %.1f%%, remainder %.1f%% of their TTFT — driven by %s\n",
				d.Tail.N, num(float64(d.Tail.ThresholdMs)), 100*float64(d.Tail.QueueShare), 100*float64(d.Tail.PrefillShare), 100*float64(d.Tail.RemainderShare), d.Tail.Driver)
		}
	}
	for _, n := range sj.Notes {
		fmt.Fprintln(w, "  note:", cleanN(n, md, 400))
	}
	for _, x := range d.Warnings() {
		fmt.Fprintln(w, "  warning:", cleanN(x, md, 400))
	}
}
