package inferenceperf

import (
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// lite is what the first pass keeps of a record.
type lite struct {
	start, end float64
	stage      *int
	// the record's "response" value (respHints)
	respOff, respLen int
	respHash         uint64
}

// rawFile is the first pass over per_request_lifecycle_metrics.json: every
// record validated (so that a damaged file fails before any row is sent),
// with what routing and the notes need.
type rawFile struct {
	path  string
	src   formats.SourceFile
	lites []lite
	// scheduled counts the records with a scheduled_time (their intended
	// starts are imported).
	scheduled int
	seed      maphash.Seed // of the respHints
	cut       string
	// assign routes record i to a run; assignNote says how.
	assign     []*runPlan
	assignNote string

	allStageIDs bool
	gens        map[generation]int
	timing      timing
	timingWhy   string
	// tokensDiffer: some streamed record's token times differ from its
	// chunk times (the report step re-tokenized chunks).
	tokensDiffer bool
	unknown      map[string]int
	multimodal   int
	models       ingest.Models
	stream       *bool
	chat         *bool
	// per-run statistics of the second pass
	inconsistent int
	noEvents     int
	noUsage      int // v0.6+ successful records without the server's usage
	// the first pass's verdicts on the data checks (traps.go)
	lineJudge, msgJudge, bosJudge, countJudge trapJudge
}

// readRawPass1 validates every record and keeps their times. It reads the
// file through im.in when it is the input being imported (else it opens
// it); an input that cannot be read again (a pipe, standard input) is
// copied to a temporary file as it is read, for the later passes.
func (im *runImport) readRawPass1(path string) (*rawFile, error) {
	in := im.in
	if path != in.Path {
		var err error
		if in, err = ingest.Open(path, im.opt); err != nil {
			return nil, err
		}
		defer in.Close()
	}
	raw := &rawFile{path: path, gens: map[generation]int{}, unknown: map[string]int{}, allStageIDs: true, seed: maphash.MakeSeed()}
	var rd io.Reader = in
	if !in.Regular() {
		tmp, err := os.CreateTemp("", "tokentrace-per-request-*.json")
		if err != nil {
			return nil, err
		}
		im.spool = tmp.Name()
		defer tmp.Close()
		rd = io.TeeReader(in, tmp)
	}
	first := true
	_, cut, err := scanRecordsHinted(path, rd, in.MaxValue(), -1, &respHints{seed: raw.seed}, func(i int, r *record) error {
		raw.lites = append(raw.lites, lite{r.start, r.end, r.stageID, r.respOff, r.respLen, r.respHash})
		if r.stageID == nil {
			raw.allStageIDs = false
		}
		if r.sched != nil {
			raw.scheduled++
		}
		raw.gens[r.gen]++
		if first || raw.timing == timingRead && r.gen != genNoInfo {
			raw.timing, raw.timingWhy = recordTiming(r)
			first = false
		}
		if len(r.chunkTimes) > 0 && len(r.tokenTimes) > 0 && !sameTimes(r.chunkTimes, r.tokenTimes) {
			raw.tokensDiffer = true
		}
		raw.judgeTraps(r)
		for _, k := range r.unknown {
			raw.unknown[k]++
		}
		if r.multimodal {
			raw.multimodal++
		}
		raw.models.Add(r.model)
		if raw.stream == nil {
			raw.stream = r.stream
		}
		if raw.chat == nil {
			raw.chat = r.chat
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	raw.cut = cut
	if len(raw.lites) == 0 {
		raw.allStageIDs = false
	}
	if raw.src, err = in.SourceFile("raw"); err != nil {
		return nil, err
	}
	return raw, nil
}

// reread opens the per-request file again for a later pass: the temporary
// copy of an input that cannot be read twice, else the file itself.
func (im *runImport) reread() (io.ReadCloser, error) {
	if im.spool != "" {
		return os.Open(im.spool)
	}
	opt := im.opt
	opt.NoHash = true
	return ingest.Open(im.raw.path, opt)
}

// tokensKnown says whether output_token_times give per-chunk token counts:
// the report step evidently re-tokenized the chunks (some record's token
// times differ from its chunk times), or the config names a tokenizer
// (v0.5+ report steps re-tokenize whenever they have one).
func (im *runImport) tokensKnown() bool {
	if im.raw.tokensDiffer {
		return true
	}
	return im.raw.timing >= timingToken5 && im.cfg.str("tokenizer", "pretrained_model_name_or_path") != ""
}

// emitRequests sends every record to its run. Records of one run must
// arrive together: when the file interleaves runs, it is read once per
// run.
func (im *runImport) emitRequests() error {
	raw := im.raw
	var order []*runPlan
	seen := map[*runPlan]bool{}
	grouped := true
	var last *runPlan
	for _, p := range raw.assign {
		if p != last {
			if seen[p] {
				grouped = false
			}
			seen[p] = true
			order = append(order, p)
			last = p
		}
	}
	if !grouped {
		order = order[:0]
		for _, p := range im.plans {
			if seen[p] {
				order = append(order, p)
			}
		}
	}
	keys := map[*runPlan]int64{}
	started := map[*runPlan]bool{}
	known := im.tokensKnown()
	var cm chunkMemo
	pass := func(only *runPlan) error {
		rd, err := im.reread()
		if err != nil {
			return err
		}
		defer rd.Close()
		hints := &respHints{seed: raw.seed, get: func(i int) (int, int, uint64) {
			if i >= len(raw.lites) {
				return 0, 0, 0
			}
			l := raw.lites[i]
			return l.respOff, l.respLen, l.respHash
		}}
		_, _, err = scanRecordsHinted(raw.path, rd, im.opt.MaxValue(), len(raw.lites), hints, func(i int, r *record) error {
			p := raw.assign[i]
			if only != nil && p != only {
				return nil
			}
			if !started[p] {
				started[p] = true
				start := im.baseRun(p.id)
				start.ClockDomain = formats.ClockMonotonic
				if err := formats.StartRun(im.sink, &start); err != nil {
					return err
				}
			}
			r.checkValues(&p.vals, ingest.Pos{Request: keys[p], At: fmt.Sprintf("record %d", i+1)})
			if r.timesBad {
				p.unplaced++
			}
			if n := max(len(r.tokenTimes), len(r.chunkTimes)); n > 0 {
				if err := im.opt.CheckMessages(int64(n), fmt.Sprintf("%d token or chunk times", n)); err != nil {
					return ingest.Wrap(raw.path, fmt.Sprintf("record %d", i+1), err)
				}
			}
			events, consistent := r.eventsOf(known, im.opt.NoText, &cm)
			if !consistent {
				raw.inconsistent++
			}
			for j := range events {
				events[j].RunID, events[j].RequestKey = p.id, keys[p]
			}
			codes := raw.markTraps(r, keys[p], events, p)
			req := r.toRequest(p.id, keys[p], events, &cm)
			for _, c := range codes {
				req.AddCorrection(c)
			}
			if raw.bosInCount(r, &req) {
				req.AddCorrection(TrapBOSInOutputCount)
				p.tally(TrapBOSInOutputCount, fmt.Sprintf("request %d: output_tokens %g → %d (no server usage)", keys[p], *req.ReportedOutputTokens, *req.OutputTokens))
			}
			if r.streamed && len(events) == 0 && !r.failed && !r.timesBad {
				raw.noEvents++
			}
			if r.gen == genMetrics && !r.failed && r.hasResponse && r.serverCompletion == nil {
				raw.noUsage++
			}
			keys[p]++
			p.statuses[req.Status]++
			if r.failed {
				p.errors[r.errorLabel()]++
			}
			return im.sink.Request(&req, events)
		})
		return err
	}
	if grouped {
		return pass(nil)
	}
	for _, p := range order {
		if err := pass(p); err != nil {
			return err
		}
	}
	return nil
}

// emitRuns sends every Run row.
func (im *runImport) emitRuns() error {
	without := 0
	for _, p := range im.plans {
		if p.requests == 0 {
			without++
		}
	}
	if without > 0 {
		what := fmt.Sprintf("%d runs", without)
		if without == 1 {
			what = "1 run"
		}
		ingest.NewNotes(im.g.primary(), im.opt).WarnOnly("summary only: nothing to recompute (" + what + " without requests)")
	}
	warn := ingest.NewNotes(im.g.primary(), im.opt).WarnOnly
	for _, p := range im.plans {
		run := im.runRow(p)
		p.vals.Warn(warn, run.RunID)
		if err := im.sink.Run(&run); err != nil {
			return err
		}
	}
	return nil
}

// rawNotes describes a run's requests.
func (im *runImport) rawNotes(p *runPlan) []string {
	raw := im.raw
	var notes []string
	var parts []string
	for _, s := range []string{formats.StatusOK, formats.StatusEmpty, formats.StatusError} {
		if n := p.statuses[s]; n > 0 || s != formats.StatusEmpty {
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
		}
	}
	line := fmt.Sprintf("requests: %d (%s)", p.requests, strings.Join(parts, ", "))
	if len(p.errors) > 0 {
		line += ": " + countList(p.errors)
	}
	notes = append(notes, line)
	if raw.scheduled > 0 {
		notes = append(notes, fmt.Sprintf("scheduled_start_ns = scheduled_time (the load generator's intended send time) on %d records of the file", raw.scheduled))
	} else {
		notes = append(notes, "the records have no scheduled_time (inference-perf writes none per request up to 7de5ef2, only load_summary.schedule_delay): no intended starts, so schedule_delay cannot be recomputed and latencies are from the actual send")
	}
	if p.unplaced > 0 {
		notes = append(notes, fmt.Sprintf("records whose times hold an offending value (the run's data checks): %d; kept with their status and counts, without start, offsets or events", p.unplaced))
	}
	if raw.assignNote != "" {
		notes = append(notes, raw.assignNote)
	}
	if raw.cut != "" {
		notes = append(notes, filepath.Base(raw.path)+": "+raw.cut+"; every complete record was imported")
	}
	if len(raw.gens) > 1 {
		var g []string
		for k, n := range raw.gens {
			g = append(g, fmt.Sprintf("%s ×%d", k, n))
		}
		sort.Strings(g)
		notes = append(notes, "records of several layouts: "+strings.Join(g, ", "))
	}
	switch raw.timing {
	case timingLine, timingMessage:
		notes = append(notes, "events: one per output_token_times entry, imported as content events without text — inference-perf kept only the times it counted as token arrivals, not what arrived then (every SSE line ≤v0.2, every SSE message v0.3–v0.4, [DONE] included): latencies recomputed from them as written follow the tool's definitions, not the true token timing; where the data check "+TrapLineTimes+" or "+TrapMessageTimes+" finds the layout, the times that carried no token ([DONE], blank lines, the chat role chunk) have tokens 0 and the canonical convention leaves them out")
	case timingRead:
		notes = append(notes, "v0.1.0 records keep no output-token data: no events, no token counts; successful records are status ok as the tool counted them")
	case timingToken5, timingToken:
		if im.tokensKnown() {
			notes = append(notes, "events: one per recorded content chunk (chunk_times, response_chunks); tokens per chunk = the output_token_times at the chunk's time (inference-perf's report step gives each re-tokenized token its chunk's time)")
		} else {
			notes = append(notes, "events: one per recorded content chunk (chunk_times, response_chunks); token times equal chunk times and the config names no tokenizer, so tokens per chunk are unknown")
		}
		notes = append(notes, "inference-perf records only content-bearing chunks: role-only, usage and [DONE] messages have no time in the file and no event")
		if raw.timing == timingToken5 {
			notes = append(notes, "v0.5 output_tokens (reported_output_tokens) is the per-chunk re-tokenized sum, one BOS per chunk included with Llama-style tokenizers (inference-perf PR #566)")
		}
	}
	if raw.inconsistent > 0 {
		notes = append(notes, fmt.Sprintf("records of the per-request file whose output_token_times do not fit their chunk_times (token counts per chunk left null): %d", raw.inconsistent))
	}
	if raw.noUsage > 0 {
		notes = append(notes, fmt.Sprintf("%s %d (inference-perf's output_tokens section falls back to its own count for them)", noteNoUsage, raw.noUsage))
	}
	if raw.noEvents > 0 {
		notes = append(notes, fmt.Sprintf("streamed successful records of the per-request file without any recorded chunk: %d", raw.noEvents))
	}
	if raw.multimodal > 0 {
		notes = append(notes, fmt.Sprintf("records with image, video or audio metrics (not imported): %d", raw.multimodal))
	}
	if len(raw.unknown) > 0 {
		notes = append(notes, "unknown keys ignored: "+countList(raw.unknown))
	}
	notes = append(notes, noteNs)
	return notes
}

// noteNoUsage begins the note counting v0.6+ records without server usage
// (Tool.Differences names it).
const noteNoUsage = "successful records without the server's usage:"

// countList renders "a ×2, b ×1" sorted by key.
func countList(m map[string]int) string {
	var parts []string
	for k, n := range m {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
