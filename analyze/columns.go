package analyze

import (
	"slices"

	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// ComputeColumns are the events columns ComputeRequest (and TokenGaps)
// read when no tokenizer counts the text: read_index (UnitRead grouping),
// offset_ns, kind (token-carrying and server.* events), has_choices
// (ResponsesChoices), tokens (per-message counts) and reasoning_text
// (whether a request produced reasoning). A tokenizer also needs text.
const ComputeColumns = formats.ColReadIndex | formats.ColOffsetNs | formats.ColKind | formats.ColHasChoices |
	formats.ColTokens | formats.ColReasoningText

// EventColumns implements formats.EventColumnSelector: ComputeColumns, plus
// text when the run may have a tokenizer (SetTokenizer, or a tokenizer
// the run recorded that the opener of SetTokenizerOpener loads) and one of
// the Analyzer's conventions counts N with it. Table readers then skip the
// generated text, the largest column, for a report that does not
// re-tokenize.
func (a *Analyzer) EventColumns(r *formats.Run) formats.EventColumns {
	cols := ComputeColumns
	if !a.countsWithTokenizer() {
		return cols
	}
	if a.tokenizer != nil {
		return cols | formats.ColText
	}
	if a.openTokenizer != nil && r.Tokenizer != "" {
		if tok, _ := a.runTokenizer(r.Tokenizer); tok != nil {
			return cols | formats.ColText
		}
	}
	return cols
}

// countsWithTokenizer reports whether a convention's output or TPOT count
// may come from CountTokenizer.
func (a *Analyzer) countsWithTokenizer() bool {
	for _, c := range a.convs {
		if slices.Contains(c.OutputTokens, convention.CountTokenizer) || slices.Contains(c.TPOTCount, convention.CountTokenizer) {
			return true
		}
	}
	return false
}

// runTokenizer opens the tokenizer a run recorded through the opener of
// SetTokenizerOpener, once per name (EventColumns asks before StartRun).
func (a *Analyzer) runTokenizer(name string) (TokenCounter, error) {
	if res, ok := a.opened[name]; ok {
		return res.tok, res.err
	}
	tok, err := a.openTokenizer(name)
	if a.opened == nil {
		a.opened = map[string]openedTokenizer{}
	}
	a.opened[name] = openedTokenizer{tok, err}
	return tok, err
}

type openedTokenizer struct {
	tok TokenCounter
	err error
}

// EventColumns implements formats.EventColumnSelector: ComputeColumns
// (the Decomposer computes without a tokenizer).
func (d *Decomposer) EventColumns(*formats.Run) formats.EventColumns { return ComputeColumns }
