package plots

import (
	"bufio"
	"container/heap"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/formats"
)

// WritePerfetto writes runs as a Chrome trace-event JSON file (the
// "JSON Object Format" of the Trace Event Format document, which Perfetto
// — ui.perfetto.dev, offline once loaded — and chrome://tracing open):
//
//   - one process per run (pid = its position + 1, named "run ID
//     (TOOL)"), one thread per concurrency slot ("slot N"): requests are
//     placed, in start order, into the lowest-numbered slot free at their
//     start (its last request ended, or was bounded as formats.InFlight
//     bounds an unrecorded end), so a closed-loop run of concurrency C has
//     C slots;
//   - per request, complete slices ("ph": "X", category "request"):
//     "queue" (the server's queue time, when a server log was joined),
//     "prefill" (start, after the queue, to the first token) and "decode"
//     (first to last token); a request without a first token gets one
//     slice named after its outcome ("error 524", "cancelled", "empty"),
//     to its recorded end or, marked "(end not recorded)", to its bound;
//     args carry its request key, id, TTFT, E2E and the requests in flight
//     at its start;
//   - an instant marker ("ph": "I", category "failure") for each failed,
//     cancelled and empty request, at its recorded end, else at its start;
//   - counter tracks ("ph": "C"): "in flight" and "in flight, end not
//     recorded" per run, and each of the run's series (runs.series, and
//     runs.load as vllm_log:*) as "METRIC{LABELS}";
//   - series-only runs (a Prometheus dump, a GPU telemetry file) as
//     processes of counters only (series); a NaN or infinite sample has
//     no JSON number and is left out, counted in the trace's metadata.
//
// Times ("ts", "dur") are µs in each run's clock: Unix-clock runs and
// series line up on one wall-clock axis; a monotonic run starts where its
// clock was. Runs without start times add only their process name, and a
// request without a start is left out (both counted in the trace's
// "metadata"). inputs are the runs with their data (plots.Input); series
// are the series-only runs. The writer keeps per run what the report
// holds anyway, plus the slot of each request.
func WritePerfetto(w io.Writer, inputs []Input, series []*formats.Run) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	tw := &traceWriter{w: bw}
	tw.raw(`{"displayTimeUnit":"ms","traceEvents":[`)
	pid := 0
	omitted := 0
	for _, in := range inputs {
		pid++
		name := "run " + in.label()
		if in.Report.Tool != "" {
			name += " (" + formats.SafeText(in.Report.Tool) + ")"
		}
		tw.meta("process_name", pid, 0, name)
		tw.meta("process_sort_index", pid, 0, pid)
		if in.Data == nil {
			continue
		}
		n, err := tw.run(pid, in)
		if err != nil {
			return err
		}
		omitted += n
	}
	for _, r := range series {
		pid++
		tw.meta("process_name", pid, 0, "series "+formats.SafeText(r.RunID)+" ("+formats.SafeText(r.Tool)+")")
		tw.meta("process_sort_index", pid, 0, pid)
		tw.series(pid, formats.AllSeries(r))
	}
	tw.raw(fmt.Sprintf(`],"metadata":{"generator":%s,"requests_without_start":%d,"series_points_not_finite":%d}}`+"\n",
		jsonString("tokentrace "+formats.Version), omitted, tw.nonFinite))
	if tw.err != nil {
		return tw.err
	}
	return bw.Flush()
}

type traceWriter struct {
	w   *bufio.Writer
	n   int
	err error
	// nonFinite counts series points left out: NaN and ±Inf are no JSON
	// numbers (the trace's metadata says how many).
	nonFinite int
}

func (t *traceWriter) raw(s string) {
	if t.err == nil {
		_, t.err = t.w.WriteString(s)
	}
}

// event writes one event object (fields already JSON).
func (t *traceWriter) event(fields string) {
	if t.n > 0 {
		t.raw(",\n")
	} else {
		t.raw("\n")
	}
	t.n++
	t.raw("{" + fields + "}")
}

func (t *traceWriter) meta(name string, pid, tid int, arg any) {
	var v string
	switch a := arg.(type) {
	case string:
		v = `{"name":` + jsonString(a) + `}`
	case int:
		v = `{"sort_index":` + strconv.Itoa(a) + `}`
	}
	t.event(fmt.Sprintf(`"name":%q,"ph":"M","pid":%d,"tid":%d,"ts":0,"args":%s`, name, pid, tid, v))
}

// us writes ns as µs with three decimals, exactly.
func us(ns int64) string {
	if ns < 0 {
		return "-" + us(-ns)
	}
	return strconv.FormatInt(ns/1000, 10) + "." + fmt.Sprintf("%03d", ns%1000)
}

func jsonString(s string) string { return strconv.Quote(formats.SafeText(s)) }

func jsonNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "null"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// slotHeap orders busy slots by the end of their request.
type slotHeap [][2]int64 // (end ns, slot)

func (h slotHeap) Len() int { return len(h) }
func (h slotHeap) Less(i, j int) bool {
	return h[i][0] < h[j][0] || h[i][0] == h[j][0] && h[i][1] < h[j][1]
}
func (h slotHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *slotHeap) Push(x any)   { *h = append(*h, x.([2]int64)) }
func (h *slotHeap) Pop() any     { old := *h; x := old[len(old)-1]; *h = old[:len(old)-1]; return x }

// freeHeap holds the free slot numbers, lowest first.
type freeHeap []int64

func (h freeHeap) Len() int           { return len(h) }
func (h freeHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h freeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *freeHeap) Push(x any)        { *h = append(*h, x.(int64)) }
func (h *freeHeap) Pop() any          { old := *h; x := old[len(old)-1]; *h = old[:len(old)-1]; return x }

// run writes one run's slots, slices, markers and counters; it returns the
// number of requests left out (no start).
func (t *traceWriter) run(pid int, in Input) (int, error) {
	rd := in.Data
	steps, res, _, ok := rd.InFlight(in.TimeoutNs)
	if !ok {
		return len(rd.Requests), nil
	}
	reqs := rd.Requests
	order := make([]int, 0, len(reqs))
	omitted := 0
	for i := range reqs {
		if reqs[i].HasStart {
			order = append(order, i)
		} else {
			omitted++
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return reqs[order[a]].StartNs < reqs[order[b]].StartNs })
	busy, free := &slotHeap{}, &freeHeap{}
	var slots int64
	for _, i := range order {
		m := &reqs[i]
		for busy.Len() > 0 && (*busy)[0][0] <= m.StartNs {
			heap.Push(free, heap.Pop(busy).([2]int64)[1])
		}
		var slot int64
		if free.Len() > 0 {
			slot = heap.Pop(free).(int64)
		} else {
			slots++
			slot = slots
			t.meta("thread_name", pid, int(slot), fmt.Sprintf("slot %d", slot))
			t.meta("thread_sort_index", pid, int(slot), int(slot))
		}
		end := res.EndNs[i]
		if end < m.StartNs {
			end = m.StartNs
		}
		heap.Push(busy, [2]int64{end, slot})
		t.request(pid, int(slot), m, end, res.Rule[i], res.AtStart[i])
	}
	// counters: in flight and its bounded part
	for _, s := range steps {
		t.event(fmt.Sprintf(`"name":"in flight","ph":"C","pid":%d,"tid":0,"ts":%s,"args":{"requests":%d}`, pid, us(s.TimeNs), s.Count))
	}
	if res.Unknown > 0 {
		for _, s := range steps {
			t.event(fmt.Sprintf(`"name":"in flight, end not recorded","ph":"C","pid":%d,"tid":0,"ts":%s,"args":{"requests":%d}`, pid, us(s.TimeNs), s.Bounded))
		}
	}
	t.series(pid, formats.AllSeries(rd.Run))
	return omitted, t.err
}

// request writes one request's slices and, for a failure, its marker.
func (t *traceWriter) request(pid, tid int, m *analyze.RequestMetrics, end int64, rule string, inFlight int64) {
	args := fmt.Sprintf(`{"request_key":%d,"id":%s,"status":%s,"ttft_ms":%s,"e2e_ms":%s,"in_flight_at_start":%d}`,
		m.Key, jsonString(m.ID), jsonString(m.Status), jsonNum(m.TTFTMs), jsonNum(m.E2EMs), inFlight)
	slice := func(name string, from, to int64, a string) {
		t.event(fmt.Sprintf(`"name":%s,"cat":"request","ph":"X","pid":%d,"tid":%d,"ts":%s,"dur":%s,"args":%s`,
			jsonString(name), pid, tid, us(from), us(max(to-from, 0)), a))
	}
	at := m.StartNs
	if m.ServerQueueNs >= 0 {
		slice("queue", at, at+m.ServerQueueNs, args)
		at += m.ServerQueueNs
	}
	failed := m.Status == formats.StatusError || m.Status == formats.StatusCancelled || m.Status == formats.StatusEmpty
	outcome := m.Status
	if m.Error.Code != "" {
		outcome += " " + m.Error.Code
	}
	if !math.IsNaN(m.TTFTMs) {
		first := m.StartNs + int64(math.Round(m.TTFTMs*1e6))
		slice("prefill", at, max(first, at), args)
		last := m.StartNs + int64(math.Round(m.LastResponseMs*1e6))
		if !math.IsNaN(m.LastResponseMs) && last > first {
			slice("decode", first, last, args)
		}
	} else {
		name := outcome
		if rule != formats.EndRecorded {
			name += " (end not recorded)"
		}
		slice(name, at, max(end, at), args)
	}
	if failed {
		when := m.StartNs
		if m.EndOffsetNs >= 0 {
			when = m.StartNs + m.EndOffsetNs
		}
		held := "null"
		if rule != formats.EndRecorded {
			held = jsonNum(float64(end-m.StartNs) / 1e6)
		}
		t.event(fmt.Sprintf(`"name":%s,"cat":"failure","ph":"I","s":"t","pid":%d,"tid":%d,"ts":%s,"args":{"request_key":%d,"id":%s,"message":%s,"held_bound_ms":%s,"held_bound_rule":%s}`,
			jsonString(outcome), pid, tid, us(when), m.Key, jsonString(m.ID), jsonString(m.ErrorText), held, jsonString(rule)))
	}
}

// series writes each point as a counter event "METRIC{LABELS}".
func (t *traceWriter) series(pid int, pts []formats.SeriesPoint) {
	for _, p := range pts {
		name := p.Metric
		if p.Labels != "" {
			name += "{" + p.Labels + "}"
		}
		if p.Unit != "" {
			name += " (" + p.Unit + ")"
		}
		v := jsonNum(p.Value)
		if v == "null" {
			t.nonFinite++
			continue
		}
		t.event(fmt.Sprintf(`"name":%s,"cat":"series","ph":"C","pid":%d,"tid":0,"ts":%s,"args":{"value":%s}`, jsonString(name), pid, us(p.TimeNs), v))
	}
}
