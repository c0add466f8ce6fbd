package llmperf

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// Notes that state LLMPerf's definitions (ray-project/llmperf@f1d6bed47e45
// token_benchmark_ray.py, src/llmperf/common_metrics.py and
// src/llmperf/ray_clients/openai_chat_completions_client.py;
// ray-project/llmperf issue #35).
const (
	noteBOS      = "number_output_tokens counts the Llama-2 tokenizer's BOS token (LLMPerf encodes the generated text with hf-internal-testing/llama-tokenizer, which prepends BOS; llmperf issue #35): output_tokens = number_output_tokens − 1 for successful rows, reported_output_tokens keeps the raw count"
	noteISL      = "input_tokens = number_input_tokens, the prompt length LLMPerf sampled as its target (Llama-2 tokenizer), not a count of the prompt sent"
	noteNoEvents = "LLMPerf keeps no per-message times and no start time: no events, start_ns null; first_token/first_content = ttft_s (first chunk with non-empty delta.content), stream_end = end_to_end_latency_s (after [DONE] and the body's close)"
)

// importRows imports an individual-responses array and its summary.
//
// The array is decoded one element at a time from in (each element one
// value for ingest.Options.MaxValue);
// the parsed rows (a dozen numbers each) are kept until the end because
// the version — which decides whether last-token offsets can be recovered
// — is a property of the whole file. An array cut short yields its complete
// elements, Run.Truncated and a note naming the cut (passed to opt.Warn
// prefixed with the path). A companion summary that cannot be read is
// reported in a note (its path and byte position) and otherwise ignored.
func importRows(in *ingest.Input, label string, opt ingest.Options, sink formats.Sink) error {
	path := in.Path
	notes := ingest.NewNotes(path, opt)
	var sum *summary
	if sp := summaryPath(path); sp != "" && ingest.Exists(sp) {
		s, err := readSummary(in, opt, sp)
		if err != nil {
			notes.WarnNamed(err.Error())
		} else {
			sum = s
		}
	}
	vals := &ingest.Values{}
	set, cut, err := readRows(path, in, in.MaxValue(), vals)
	if err != nil {
		return err
	}
	if cut != "" {
		notes.Warn(cut) // the note names the record; the warning names the file too
	}
	src, err := in.SourceFile("raw")
	if err != nil {
		return err
	}
	var ts *int64
	if sum != nil {
		ts = sum.timestamp
	}
	rows := set.rows
	conv := detectConvention(rows, ts)
	// The requests are built in batches, each sent in turn: a run's
	// requests are never all held as columns on top of the rows.
	start := baseRun(label, sum)
	start.RequestCount = int64(len(rows))
	if err := formats.StartRun(sink, &start); err != nil {
		return err
	}
	var lt lastTokenStats
	bos := bosCounter{}
	b := formats.NewBatch(label)
	for lo := 0; lo < len(rows); lo += formats.BatchRequests {
		b.Reset(label)
		for i := lo; i < min(lo+formats.BatchRequests, len(rows)); i++ {
			set.addRequest(b, &rows[i], int64(i), conv.divideByTokens, &lt)
		}
		bos.add(b)
		if err := sink.Batch(b); err != nil {
			return err
		}
	}
	run := baseRun(label, sum)
	if c, ok := bos.check(); ok {
		run.Checks = append(run.Checks, c)
	}
	run.Checks = append(run.Checks, vals.Checks()...)
	vals.Warn(notes.WarnOnly, "")
	run.SourceFiles = append([]formats.SourceFile{src}, run.SourceFiles...)
	run.Convention = conv.name
	run.RequestCount = int64(len(rows))
	run.Truncated = cut != ""
	run.Notes = append(append(run.Notes, notes.Lines...), rowNotes(set, conv, &lt)...)
	return sink.Run(&run)
}

// baseRun is the Run row with what the summary says, if there is one.
// LLMPerf always streams and always runs a fixed number of concurrent
// requests (num_concurrent_requests threads).
func baseRun(label string, s *summary) formats.Run {
	run := formats.Run{
		RunID:             label,
		Tool:              Name,
		Streaming:         ingest.Ptr(true),
		LoadMode:          "concurrency",
		TokentraceVersion: formats.Version,
		SchemaVersion:     formats.SchemaVersion,
	}
	if s != nil {
		run.ToolVersion = s.version
		run.Model = s.model
		run.Concurrency = s.conc
		run.ConfigJSON = s.configJSON
		run.Reported = s.reported
		run.SourceFiles = []formats.SourceFile{s.src}
		run.Notes = append(run.Notes, s.notes...)
	}
	return run
}

// rowNotes describes the import for the run's notes.
func rowNotes(set *rowSet, conv version, lt *lastTokenStats) []string {
	rows := set.rows
	if len(rows) == 0 {
		return []string{"the array holds no requests"}
	}
	ok, failed, empty := 0, 0, 0
	codes := map[string]int{}
	gen, unknown := set.genText, set.unknown
	for i := range rows {
		r := &rows[i]
		_, timed := seconds(r.ttft, r.is(hasTTFT))
		switch {
		case r.is(isFailed):
			failed++
			codes[set.codeName(r)]++
		case (!r.is(hasOut) || r.nOut <= 1) && !timed:
			empty++
		default:
			ok++
		}
	}
	notes := []string{
		fmt.Sprintf("rows: %d (%d ok, %d empty, %d error%s)", len(rows), ok, empty, failed, codeList(codes)),
		"convention " + conv.name + ": " + conv.evidence,
		noteNoEvents, noteBOS, noteISL,
	}
	if empty > 0 {
		notes = append(notes, fmt.Sprintf("%s: %d; LLMPerf's own statistics average in their ttft_s 0 (its initial value, never set), tokentrace gives them no TTFT", noteNoContent, empty))
	}
	notes = append(notes, lastTokenNotes(conv, lt)...)
	if gen > 0 {
		notes = append(notes, fmt.Sprintf("rows carrying GEN_TEXT (the generated text, a leaderboard client's extra key; not imported): %d", gen))
	}
	if len(unknown) > 0 {
		notes = append(notes, "unknown keys ignored: "+countList(unknown))
	}
	return notes
}

// lastTokenNotes says how last-token offsets were found.
func lastTokenNotes(conv version, lt *lastTokenStats) []string {
	var notes []string
	if lt.fromITL > 0 {
		notes = append(notes, fmt.Sprintf("rows with last_token_offset_ns = inter_token_latency_s × number_output_tokens (LLMPerf divides the sum of content-chunk gaps, t_last − start, by its token count): %d", lt.fromITL))
	}
	if lt.undivided > 0 {
		notes = append(notes, fmt.Sprintf("failed rows with an undivided inter_token_latency_s (t_last − start; the leaderboard's validity-checked rows), used as last_token_offset_ns: %d", lt.undivided))
	}
	if lt.fromList > 0 {
		notes = append(notes, fmt.Sprintf("rows with a list-valued inter_token_latency_s (a fork's gap list): %d; last_token_offset_ns = its sum, reported_itl_ms = its mean", lt.fromList))
	}
	if lt.outOfRange > 0 {
		notes = append(notes, fmt.Sprintf("rows whose recovered last-content time falls outside [ttft, e2e], last_token_offset_ns left null: %d", lt.outOfRange))
	}
	if lt.ambiguous > 0 {
		notes = append(notes, fmt.Sprintf("failed rows whose inter_token_latency_s fits both as divided and undivided, last_token_offset_ns left null: %d", lt.ambiguous))
	}
	if lt.notRecoverable > 0 {
		why := "inter_token_latency_s is missing"
		if !conv.divideByTokens {
			why = conv.noLastToken
		}
		notes = append(notes, fmt.Sprintf("rows with last_token_offset_ns left null because %s: %d", why, lt.notRecoverable))
	}
	if lt.noTiming > 0 {
		notes = append(notes, fmt.Sprintf("rows without timing (ttft_s or end_to_end_latency_s is 0, missing, or an offending value the run's data checks left null): %d", lt.noTiming))
	}
	return notes
}

// codeName is a failed row's code as text.
func (s *rowSet) codeName(r *row) string {
	if r.is(hasCode) {
		return fmt.Sprint(r.errorCode)
	}
	if t := s.errorType(r); t != "" {
		return t
	}
	return "?"
}

// codeList renders error codes with counts: ": code 429 ×130".
func codeList(codes map[string]int) string {
	if len(codes) == 0 {
		return ""
	}
	return ": code " + countList(codes)
}

// countList renders "a ×2, b ×1" sorted by key.
func countList(m map[string]int) string {
	var parts []string
	for k, n := range m {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// importSummaryOnly imports a summary with no individual-responses file
// beside it: a Run with Reported and the configuration, no requests.
func importSummaryOnly(in *ingest.Input, label string, opt ingest.Options, sink formats.Sink) error {
	path := in.Path
	s, err := readSummary(in, opt, path)
	if err != nil {
		return err
	}
	run := baseRun(label, s)
	conv := detectConvention(nil, s.timestamp)
	run.Convention = conv.name
	run.Notes = append([]string{"summary only: nothing to recompute", "convention " + conv.name + ": " + conv.evidence}, run.Notes...)
	ingest.NewNotes(path, opt).WarnOnly("summary only: nothing to recompute")
	return sink.Run(&run)
}
