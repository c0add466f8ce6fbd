package convention

import (
	"fmt"
	"sort"
	"strings"
)

// A Trap is one entry of tokentrace's data-check catalogue: a known way a
// tool's per-request data is wrong (a bug the tool shipped), or a value
// that cannot be right, with how tokentrace detects it and what it does
// about it. Importers define their tools' traps (Tool.Traps) and detect
// them while reading, recording each in Run.Checks and, where the values
// are corrected, the code in the affected requests' Corrections; traps
// seen only once a run is analysed are detected by analyze. The catalogue
// is generated into analyze/TRAPS.md (Catalogue).
type Trap struct {
	// Code is the stable code reports and tables use ("vllm_ttft_in_itls").
	Code string
	// Title says in one line what is wrong, for the reports' data-check
	// lines ("vLLM's completions client appended each TTFT to its ITL
	// list").
	Title string
	// Tools names the tools and versions it applies to.
	Tools string
	// Signature is the data signature that detects it; Threshold the
	// numbers of a heuristic signature ("" when exact).
	Signature, Threshold string
	// Action is what tokentrace does; Effect says it in words (which
	// value is corrected from what, or set to null).
	Action Action
	Effect string
	// Fix is how the analysis corrects a request that names the code in
	// its Corrections (FixNone when the importer's own correction is the
	// whole fix, or nothing is corrected).
	Fix Fix
	// Metrics are the report metrics it affects ("ttft_ms", "e2e_ms"; a
	// run-level quantity by its name, "output_throughput").
	Metrics []string
	// Reproduction says why the tool's own number for those metrics can
	// differ from tokentrace's recomputation under the tool's convention
	// on the data as written ("" when Effect says it): the reason a
	// reproduction item that differs is given.
	Reproduction string
	// Routine marks a property of every file of the tool (or version)
	// that the data fully determines and tokentrace corrects exactly
	// (LLMPerf's BOS in every count): reported like any check, but not
	// counted by the data_warnings gate, which would otherwise fail on
	// every run of that tool. Explanations (ActionExplain) are not
	// counted either.
	Routine bool
	// Incomplete marks a check that finds the run's results cover only
	// part of the run, or none of it (the tool said so, or it measured no
	// request): gate fails such a run with a "results complete" result,
	// whatever gates it was given, as it fails a truncated input.
	Incomplete bool
	// Source is the public record of the bug: issue and pull-request URLs.
	Source string
	// Test names the test that reproduces it on a small input in the
	// tool's real layout, as "package/path TestName".
	Test string
}

// Action is what tokentrace does about a trap.
type Action string

const (
	// ActionCorrect: the canonical value is corrected from the raw fields,
	// which the tables keep.
	ActionCorrect Action = "correct"
	// ActionNull: the value is set to null (unknown), never 0.
	ActionNull Action = "null"
	// ActionFlag: the value cannot be corrected from the data; it is
	// flagged (a warning names the requests).
	ActionFlag Action = "flag"
	// ActionExplain: not a bug: the report says why two numbers differ.
	ActionExplain Action = "explain"
	// ActionReject: the file cannot be right as a whole (a time column in
	// another unit than the tool writes): the import fails with an error
	// naming the file and the position, and no run is made of it.
	ActionReject Action = "reject"
)

// Fix is how the analysis applies a trap's correction to a request that
// names it in Request.Corrections (only under conventions that correct:
// Convention.Corrections).
type Fix string

const (
	// FixNone: nothing to do at analysis time.
	FixNone Fix = ""
	// FixPhantomSecondGap: the gap before the second response repeats the
	// TTFT: it is removed (the second response dropped, every later one
	// earlier by its gap).
	FixPhantomSecondGap Fix = "phantom_second_gap"
	// FixFirstNotToken: the first response carried no token (a role-only
	// chunk): the second response is the first token.
	FixFirstNotToken Fix = "first_not_token"
	// FixCountNotStuck: the tool's output count is the requested length,
	// not what was generated: N comes from a tokenizer, else the number of
	// token messages (a lower bound), never from the tool's count or the
	// requested length.
	FixCountNotStuck Fix = "count_not_stuck"
	// FixCountFromImport: the importer corrected the count in
	// output_tokens (the raw one is in reported_output_tokens); without
	// corrections the raw count is used.
	FixCountFromImport Fix = "count_from_import"
	// FixNotTokenTimes: the tool timed messages that carried no token
	// ([DONE], the blank line after each SSE message, the role-only chunk)
	// as token arrivals; the importer kept those times as token-carrying
	// events and marked them with tokens = 0: they are no responses (TTFT,
	// E2E, TPOT and ITL are taken over the others).
	FixNotTokenTimes Fix = "not_token_times"
	// FixBOSPerChunk: the tool's per-message token counts (events.tokens)
	// each include one BOS token: a message counted k ≥ 2 carried k − 1,
	// and an output count summed from them (output_tokens from the tool,
	// tool_reported) is the sum of the corrected counts.
	FixBOSPerChunk Fix = "bos_per_chunk"
)

// WithTraps adds traps that belong to no one tool — the checks every
// importer shares (ingest) and those seen only once a run is analysed
// (analyze) — to the set's catalogue, and returns the set.
func (s *Set) WithTraps(traps ...Trap) *Set {
	s.traps = append(s.traps, traps...)
	return s
}

// Fixes returns the fix of every trap of the set's catalogue by code.
func (s *Set) Fixes() map[string]Fix {
	out := map[string]Fix{}
	for _, t := range s.Traps() {
		out[t.Code] = t.Fix
	}
	return out
}

// Traps is the set's catalogue sorted by code: every tool's traps and
// those added with WithTraps.
func (s *Set) Traps() []Trap {
	if s == nil {
		return nil
	}
	var out []Trap
	for _, t := range s.tools {
		out = append(out, t.Traps...)
	}
	out = append(out, s.traps...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}

// Trap returns the catalogue's trap called code.
func (s *Set) Trap(code string) (Trap, bool) {
	for _, t := range s.Traps() {
		if t.Code == code {
			return t, true
		}
	}
	return Trap{}, false
}

// Catalogue renders traps as one Markdown table: code, tools and versions,
// what is wrong and its signature (and threshold), action and effect,
// metrics, source, test. analyze/TRAPS.md embeds it between CatalogueBegin
// and CatalogueEnd.
func Catalogue(traps []Trap) string {
	cell := strings.NewReplacer("|", "\\|", "\n", " ").Replace
	var b strings.Builder
	b.WriteString("| code | tools | what is wrong; signature | action: effect | metrics | source | test |\n|---|---|---|---|---|---|---|\n")
	for _, t := range traps {
		sig := t.Title + "; " + t.Signature
		if t.Threshold != "" {
			sig += " (threshold: " + t.Threshold + ")"
		}
		effect := t.Effect
		if t.Reproduction != "" {
			effect += ". Under the tool's convention: " + t.Reproduction
		}
		action := "**" + string(t.Action) + "**"
		if t.Routine {
			action += " (routine: not counted by data_warnings)"
		}
		if t.Incomplete {
			action += " (gate fails the run: results complete)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s: %s | %s | %s | `%s` |\n", t.Code, cell(t.Tools), cell(sig), action, cell(effect),
			strings.Join(t.Metrics, ", "), cell(t.Source), t.Test)
	}
	return b.String()
}

// Markers around the generated catalogue in analyze/TRAPS.md.
const (
	CatalogueBegin = "<!-- traps-table:begin (generated by go test ./analyze -run TestTrapsDoc -update) -->"
	CatalogueEnd   = "<!-- traps-table:end -->"
)
