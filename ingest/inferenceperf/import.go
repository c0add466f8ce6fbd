package inferenceperf

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// Notes that state inference-perf's definitions.
const (
	notePromServer = "prometheus.* statistics are the model server's own Prometheus metrics, queried by inference-perf with PromQL over the stage's window (histogram_quantile over rate(…[window]); the window runs past the stage's end by the scrape interval and a buffer): server-side numbers, not client measurements, and not recomputable from the client's requests"
	notePromZero   = "inference-perf's Prometheus client writes 0.0 for a query that failed or matched no series (execute_query), so a 0 here may mean \"no data\""
	noteNs         = "start_time, end_time and the chunk and token times (time.perf_counter() seconds, a monotonic clock) are converted to whole ns: a gap of a few µs can be off by 1–2 ns"
	noteSummaryNo  = "summary only: nothing to recompute"
)

// runPlan is one run the import makes.
type runPlan struct {
	id      string
	stage   *int
	pooled  bool // the summary over every stage
	adapter string
	life    *summaryFile // lifecycle report
	prom    *summaryFile // Prometheus report
	// requests routed here, and what became of them
	requests int64
	statuses map[string]int
	errors   map[string]int
	hasRaw   bool
	// traps counts the requests each data check corrected (traps.go)
	traps map[string]*trapTally
	// vals are the shared value checks of its requests; unplaced counts
	// those whose times they left unknown
	vals     ingest.Values
	unplaced int
}

// runImport is one Import call.
type runImport struct {
	g     *group
	in    *ingest.Input // the input being imported, one of g's files
	label string
	opt   ingest.Options
	sink  *formats.RowWriter
	spool string // temporary copy of a per-request input read from a pipe

	cfg           *config
	summary       *summaryFile
	stages        map[int]*summaryFile
	adapters      map[string]*summaryFile
	adapterStages map[adapterStage]*summaryFile
	promSummary   *summaryFile
	promStages    map[int]*summaryFile

	plans  []*runPlan
	byID   map[string]*runPlan
	pooled *runPlan

	raw *rawFile
}

func (im *runImport) run() error {
	defer func() {
		if im.spool != "" {
			os.Remove(im.spool)
		}
	}()
	if err := im.readReports(); err != nil {
		return err
	}
	if im.g.perRequest != "" {
		raw, err := im.readRawPass1(im.g.perRequest)
		if err != nil {
			return err
		}
		im.raw = raw
		if raw.cut != "" {
			ingest.NewNotes(im.g.perRequest, im.opt).WarnOnly(raw.cut)
		}
		if len(raw.unknown) > 0 {
			ingest.NewNotes(im.g.perRequest, im.opt).WarnOnly("unknown keys ignored: " + countList(raw.unknown))
		}
	}
	im.planRuns()
	if im.raw != nil {
		if err := im.emitRequests(); err != nil {
			return err
		}
	}
	return im.emitRuns()
}

// readReports reads the config and every summary report of the group.
func (im *runImport) readReports() error {
	g := im.g
	if g.config != "" {
		im.cfg = readConfig(g.config, im.opt)
	}
	var err error
	read := func(path string, prom bool) *summaryFile {
		if err != nil || path == "" {
			return nil
		}
		var s *summaryFile
		s, err = readSummary(im.in, im.opt, path, prom)
		if err == nil {
			if s.cut != "" {
				// s.cut starts with the base name ("x.json is cut after …")
				ingest.NewNotes(path, im.opt).WarnOnly(strings.TrimPrefix(s.cut, filepath.Base(path)+" is "))
			}
			if len(s.unknown) > 0 {
				ingest.NewNotes(path, im.opt).WarnOnly("keys inference-perf does not write (imported): " + strings.Join(s.unknown, ", "))
			}
		}
		return s
	}
	im.summary = read(g.summary, false)
	im.promSummary = read(g.promSummary, true)
	im.stages, im.promStages = map[int]*summaryFile{}, map[int]*summaryFile{}
	im.adapters, im.adapterStages = map[string]*summaryFile{}, map[adapterStage]*summaryFile{}
	for _, n := range sortedInts(g.stages) {
		im.stages[n] = read(g.stages[n], false)
	}
	for _, n := range sortedInts(g.promStages) {
		im.promStages[n] = read(g.promStages[n], true)
	}
	for _, a := range sortedKeys(g.adapters) {
		im.adapters[a] = read(g.adapters[a], false)
	}
	for _, k := range g.sortedAdapterStages() {
		im.adapterStages[k] = read(g.adapterStages[k], false)
	}
	return err
}

// planRuns lays out the runs: stages in order, adapters, then the summary
// run, and routes the per-request records.
func (im *runImport) planRuns() {
	im.byID = map[string]*runPlan{}
	add := func(p *runPlan) *runPlan {
		if q := im.byID[p.id]; q != nil {
			return q
		}
		p.statuses, p.errors = map[string]int{}, map[string]int{}
		im.plans = append(im.plans, p)
		im.byID[p.id] = p
		return p
	}
	stageIDs := map[int]bool{}
	for n := range im.stages {
		stageIDs[n] = true
	}
	for n := range im.promStages {
		stageIDs[n] = true
	}
	if im.raw != nil && im.raw.allStageIDs {
		for _, l := range im.raw.lites {
			stageIDs[*l.stage] = true
		}
	}
	for _, n := range sortedInts(stageIDs) {
		add(&runPlan{id: fmt.Sprintf("%s/stage_%d", im.label, n), stage: ingest.Ptr(n), life: im.stages[n], prom: im.promStages[n]})
	}
	for _, a := range sortedKeys(im.adapters) {
		add(&runPlan{id: im.label + "/adapter_" + a, adapter: a, life: im.adapters[a]})
	}
	for _, k := range im.g.sortedAdapterStages() {
		add(&runPlan{id: fmt.Sprintf("%s/adapter_%s/stage_%d", im.label, k.adapter, k.stage), adapter: k.adapter, stage: ingest.Ptr(k.stage), life: im.adapterStages[k]})
	}
	needPooled := im.summary != nil || im.promSummary != nil || len(im.plans) == 0
	if im.raw != nil && !im.assignToStages() {
		needPooled = true
	}
	if needPooled {
		im.pooled = add(&runPlan{id: im.label, pooled: true, life: im.summary, prom: im.promSummary})
	}
	if im.raw != nil && im.raw.assign == nil {
		im.raw.assign = make([]*runPlan, len(im.raw.lites))
		for i := range im.raw.assign {
			im.raw.assign[i] = im.pooled
		}
	}
	if im.raw != nil {
		for _, p := range im.raw.assign {
			p.hasRaw = true
			p.requests++
		}
	}
}

// assignToStages routes every record to its stage run, when the file
// allows it (see the package documentation), and says how or why not in
// the notes of the runs concerned.
func (im *runImport) assignToStages() bool {
	raw := im.raw
	n := len(raw.lites)
	if n == 0 {
		return false
	}
	if raw.allStageIDs {
		raw.assign = make([]*runPlan, n)
		for i, l := range raw.lites {
			raw.assign[i] = im.byID[fmt.Sprintf("%s/stage_%d", im.label, *l.stage)]
		}
		raw.assignNote = "requests routed to their stage runs by each record's stage_id"
		return true
	}
	ids := sortedInts(im.stages)
	why := ""
	counts := make([]int, len(ids))
	total := 0
	for i, id := range ids {
		c, ok := im.stages[id].value("load_summary", "count")
		if !ok || c < 0 || c != math.Trunc(c) {
			why = fmt.Sprintf("stage_%d_lifecycle_metrics.json has no load_summary.count", id)
			break
		}
		counts[i] = int(c)
		total += int(c)
	}
	switch {
	case len(ids) == 0:
		return false // no stage report: the requests belong to the summary run
	case why != "":
	case raw.cut != "":
		why = "the per-request file is cut short"
	case len(ids) > 0 && ids[len(ids)-1] != len(ids)-1:
		why = fmt.Sprintf("stage reports %v are not stages 0…%d", ids, len(ids)-1)
	case total != n:
		why = fmt.Sprintf("the stage reports count %d requests (load_summary.count), the per-request file holds %d", total, n)
	}
	if why == "" {
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return raw.lites[order[a]].start < raw.lites[order[b]].start })
		assign := make([]*runPlan, n)
		at := 0
		prevEnd := math.Inf(-1)
		for gi, id := range ids {
			p := im.byID[fmt.Sprintf("%s/stage_%d", im.label, id)]
			groupEnd := math.Inf(-1)
			for k := 0; k < counts[gi]; k++ {
				l := raw.lites[order[at]]
				if k == 0 && l.start < prevEnd && why == "" {
					why = fmt.Sprintf("after sorting by start time, stage %d's first request starts before stage %d's last request ends, so the stages cannot be told apart", id, ids[gi-1])
				}
				groupEnd = math.Max(groupEnd, l.end)
				assign[order[at]] = p
				at++
			}
			if counts[gi] > 0 {
				prevEnd = groupEnd
			}
		}
		if why == "" {
			raw.assign = assign
			raw.assignNote = "requests routed to the stage runs by start time: sorted by start_time, the records split into consecutive groups of the stages' load_summary.count, and each stage's last request ended before the next stage's first request started (inference-perf runs its stages one after another: loadgen run_stage waits for every request of a stage)"
			return true
		}
	}
	raw.assignNote = "requests not routed to stages (" + why + "): they are all in run " + im.label
	ingest.NewNotes(im.g.perRequest, im.opt).WarnOnly(raw.assignNote)
	return false
}

// baseRun is a Run row with what the config and the records say.
func (im *runImport) baseRun(id string) formats.Run {
	run := formats.Run{
		RunID:             id,
		Tool:              Name,
		TokentraceVersion: formats.Version,
		SchemaVersion:     formats.SchemaVersion,
	}
	c := im.cfg
	run.Model = c.str("server", "model_name")
	run.Tokenizer = c.str("tokenizer", "pretrained_model_name_or_path")
	if b, ok := c.boolean("api", "streaming"); ok {
		run.Streaming = ingest.Ptr(b)
	}
	switch c.str("api", "type") {
	case "completion":
		run.Endpoint = "v1/completions"
	case "chat":
		run.Endpoint = "v1/chat/completions"
	}
	if c != nil {
		run.ConfigJSON = c.configJSON
	}
	if r := im.raw; r != nil {
		if _, several := r.models.Check(); several || run.Model == "" {
			// the requests' own names, all of them, over the config's one
			run.Model = r.models.Name()
		}
		if run.Streaming == nil && r.stream != nil {
			run.Streaming = ingest.Ptr(*r.stream)
		}
		if run.Endpoint == "" && r.chat != nil {
			run.Endpoint = map[bool]string{true: "v1/chat/completions", false: "v1/completions"}[*r.chat]
		}
	}
	return run
}

// timing returns the run's timing and its evidence: the per-request
// records of the run's directory when there are any (the most direct
// evidence, and not blurred by a cut report), else the run's lifecycle
// report, else the summary's.
func (im *runImport) timing(p *runPlan) (timing, string) {
	if im.raw != nil && im.raw.timing != timingUnknown {
		return im.raw.timing, im.raw.timingWhy
	}
	for _, s := range []*summaryFile{p.life, im.summary} {
		if t, why := summaryTiming(s); t != timingUnknown {
			return t, why
		}
	}
	return timingUnknown, ""
}

// runRow builds the Run row of p.
func (im *runImport) runRow(p *runPlan) formats.Run {
	run := im.baseRun(p.id)
	var notes []string
	if p.requests == 0 {
		notes = append(notes, noteSummaryNo)
	}
	t, why := im.timing(p)
	run.Convention = t.convention()
	if why != "" {
		notes = append(notes, "convention "+run.Convention+": "+why)
	} else {
		notes = append(notes, "convention "+run.Convention+": the files do not tell the inference-perf version")
	}
	if tn := t.note(); tn != "" {
		notes = append(notes, tn)
	}
	if p.hasRaw {
		run.SourceFiles = append(run.SourceFiles, im.raw.src)
		run.ClockDomain = formats.ClockMonotonic
	}
	promChecks := nullPromZeros(p)
	for _, s := range []*summaryFile{p.life, p.prom} {
		if s == nil {
			continue
		}
		run.SourceFiles = append(run.SourceFiles, s.src)
		run.Reported = append(run.Reported, s.reported...)
		if s.cut != "" {
			run.Truncated = true
			notes = append(notes, s.cut)
		}
		if len(s.unknown) > 0 {
			notes = append(notes, filepath.Base(s.path)+": keys inference-perf does not write (imported as reported): "+strings.Join(s.unknown, ", "))
		}
		if len(s.arrays) > 0 {
			notes = append(notes, filepath.Base(s.path)+": lists not imported (not statistics): "+strings.Join(s.arrays, ", "))
		}
	}
	if p.life != nil {
		run.LoadMode, run.Concurrency, run.RequestRateRPS = loadOf(p.life)
	}
	if run.LoadMode == "" && p.stage != nil && p.adapter == "" {
		run.LoadMode, run.Concurrency, run.RequestRateRPS = im.configStageLoad(*p.stage)
	}
	if p.pooled && (p.life != nil || p.prom != nil) {
		switch n := len(im.stagePlans()); {
		case n == 1:
			notes = append(notes, fmt.Sprintf("summary over the run's one stage (run %s)", im.stagePlans()[0]))
		case n > 1:
			notes = append(notes, fmt.Sprintf("summary over all %d stages (runs %s): its load is theirs", n, strings.Join(im.stagePlans(), ", ")))
		}
	}
	if p.prom != nil {
		notes = append(notes, im.promNotes(p)...)
	}
	if p.hasRaw {
		notes = append(notes, im.rawNotes(p)...)
		run.Truncated = run.Truncated || im.raw.cut != ""
	} else if im.raw != nil && im.raw.assignNote != "" && p.pooled {
		notes = append(notes, im.raw.assignNote)
	}
	if im.cfg != nil {
		run.SourceFiles = append(run.SourceFiles, im.cfg.src)
		notes = append(notes, im.cfg.notes...)
		if lt := im.cfg.str("load", "type"); lt != "" {
			notes = append(notes, "config load.type: "+lt)
		}
		if b, ok := im.cfg.boolean("report", "request_lifecycle", "use_server_output_tokens"); ok && b {
			notes = append(notes, "config report.request_lifecycle.use_server_output_tokens: true — inference-perf's N (TPOT, NTPOT, throughput) is the server's completion_tokens where the server reported it")
		}
		if b, ok := im.cfg.boolean("report", "request_lifecycle", "per_request"); ok && b && im.g.perRequest == "" {
			notes = append(notes, "the config asks for per-request reports (report.request_lifecycle.per_request: true) but no per_request_lifecycle_metrics.json is beside it")
		}
	}
	if len(im.g.sessions) > 0 && p.pooled {
		var names []string
		for _, s := range im.g.sessions {
			names = append(names, filepath.Base(s))
		}
		notes = append(notes, "session reports not imported: "+strings.Join(names, ", "))
	}
	run.RequestCount = p.requests
	run.Notes = notes
	run.Checks = append(append(im.runChecks(p, t), p.vals.Checks()...), promChecks...)
	if ch := goodputCheck(p.life); ch != nil {
		run.Checks = append(run.Checks, *ch)
	}
	if r := im.raw; r != nil && run.LoadMode == "concurrency" && run.Concurrency != nil && !p.pooled {
		if ch := overshootCheck(p, r.lites, r.assign, *run.Concurrency); ch != nil {
			run.Checks = append(run.Checks, *ch)
		}
	}
	if r := im.raw; r != nil {
		if ch, ok := r.models.Check(); ok {
			run.Checks = append(run.Checks, ch)
		}
	}
	return run
}

// stagePlans lists the stage runs' ids.
func (im *runImport) stagePlans() []string {
	var out []string
	for _, p := range im.plans {
		if p.stage != nil && p.adapter == "" {
			out = append(out, p.id)
		}
	}
	return out
}

// loadOf reads a stage's load from its report: load_summary.concurrency
// (the concurrent load type, v0.3+) or load_summary.requested_rate.
func loadOf(s *summaryFile) (mode string, conc, rate *float64) {
	if c, ok := s.value("load_summary.concurrency", "value"); ok {
		return "concurrency", ingest.Ptr(c), nil
	}
	if r, ok := s.value("load_summary.requested_rate", "value"); ok {
		return "request_rate", nil, ingest.Ptr(r)
	}
	return "", nil, nil
}

// configStageLoad reads stage n's load from config load.stages, for a
// stage without a lifecycle report.
func (im *runImport) configStageLoad(n int) (mode string, conc, rate *float64) {
	if im.cfg == nil {
		return "", nil, nil
	}
	stages, ok := lookup(im.cfg.tree, "load", "stages").([]any)
	if !ok || n >= len(stages) {
		return "", nil, nil
	}
	st, _ := stages[n].(map[string]any)
	if c, ok := st["concurrency_level"].(float64); ok {
		return "concurrency", ingest.Ptr(c), nil
	}
	if r, ok := st["rate"].(float64); ok {
		return "request_rate", nil, ingest.Ptr(r)
	}
	return "", nil, nil
}

// promNotes describes a run's Prometheus statistics.
func (im *runImport) promNotes(p *runPlan) []string {
	notes := []string{notePromServer}
	if st := im.cfg.str("server", "type"); st != "" {
		notes[0] += " (config server.type: " + st + ")"
	}
	zero, total := 0, 0
	for _, r := range p.prom.reported {
		if r.Value == nil || strings.HasSuffix(r.Metric, "benchmark_time_seconds") {
			continue
		}
		total++
		if *r.Value == 0 {
			zero++
		}
	}
	if zero > 0 {
		notes = append(notes, fmt.Sprintf("%d of %d Prometheus values are 0; %s", zero, total, notePromZero))
	}
	if p.life != nil {
		server, ok1 := p.prom.value("successes", "count")
		client, ok2 := p.life.value("successes", "count")
		if ok1 && ok2 && server != client {
			notes = append(notes, fmt.Sprintf("the server counted %s requests over the query window (prometheus.successes count), the client %s successes: the window and the traffic differ",
				strconv.FormatFloat(server, 'g', -1, 64), strconv.FormatFloat(client, 'g', -1, 64)))
		}
	}
	return notes
}
