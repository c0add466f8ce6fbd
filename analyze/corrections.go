package analyze

import (
	"strings"

	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// SetCorrections gives the Analyzer the data-check catalogue's fixes by
// trap code (convention.Set.Fixes) and whether they are applied: a
// request naming a trap in Request.Corrections is corrected under the
// conventions that correct (Convention.Corrections, tokentrace's own)
// when enabled — report --no-corrections passes false, and the numbers
// are then those of the data as the tool wrote it. Call it before the
// first request. Without it no fix is known and the stored data is read
// as it is.
func (a *Analyzer) SetCorrections(fixes map[string]convention.Fix, enabled bool) {
	a.fixes = fixes
	if !enabled {
		// the report then names the choice: corrections false
		for i := range a.convs {
			a.convs[i].Corrections = false
		}
	}
}

// corrected returns the request and events c computes on: r and events as
// stored, or copies with the fixes of the request's traps applied (when c
// corrects and corrections are enabled) or, for the counts an importer
// corrected itself (FixCountFromImport), undone (when not). applied lists
// the codes whose fix changed something.
func (a *Analyzer) corrected(c convention.Convention, r *formats.Request, events []formats.Event) (*formats.Request, []formats.Event, []string) {
	if r.Corrections == "" || a.fixes == nil {
		return r, events, nil
	}
	apply := c.Corrections // false for every convention once SetCorrections(…, false)
	var applied []string
	cp := *r
	evCopied := false
	copyEvents := func() {
		if !evCopied {
			events = append([]formats.Event(nil), events...)
			evCopied = true
		}
	}
	for code := range strings.SplitSeq(r.Corrections, ",") {
		switch fix := a.fixes[code]; {
		case fix == convention.FixCountFromImport && apply:
			applied = append(applied, code) // corrected at import: listed
		case fix == convention.FixCountFromImport && !apply:
			// the importer corrected output_tokens; the tool's own count is
			// the raw one
			if cp.ReportedOutputTokens != nil {
				n := int64(*cp.ReportedOutputTokens)
				cp.OutputTokens, cp.OutputTokensSource = &n, formats.SourceToolReported
			}
		case !apply:
		case fix == convention.FixCountNotStuck:
			// the stuck count is the tool's (and the requested length):
			// N from a tokenizer, else the token messages
			cp.OutputTokens, cp.OutputTokensSource, cp.ReportedOutputTokens, cp.MaxTokens = nil, "", nil, nil
			applied = append(applied, code)
		case fix == convention.FixPhantomSecondGap:
			copyEvents()
			if dropSecondToken(events) {
				events = events[:len(events)-1]
				applied = append(applied, code)
			}
		case fix == convention.FixFirstNotToken:
			copyEvents()
			if firstNotToken(events) {
				applied = append(applied, code)
			}
		case fix == convention.FixNotTokenTimes:
			copyEvents()
			if notTokenTimes(events) {
				applied = append(applied, code)
			}
		case fix == convention.FixBOSPerChunk:
			copyEvents()
			if n, ok := bosPerChunk(events); ok {
				if cp.OutputTokensSource == formats.SourceToolReported && n >= 0 {
					cp.OutputTokens = &n
				}
				applied = append(applied, code)
			}
		}
	}
	if evCopied {
		formats.FillFromEvents(&cp, events)
		if cp.OutputTokensSource == formats.SourceChunkCount {
			n := cp.TokenMessageCount
			cp.OutputTokens = &n
		}
	}
	return &cp, events, applied
}

// correctionCodes splits a request's Corrections into its codes and says
// whether every fix they name changes counts only (FixCountFromImport,
// FixCountNotStuck: countFixes applies them in place); the last answer
// is kept, since a run's requests mostly share their corrections.
func (a *Analyzer) correctionCodes(corr string) ([]string, bool) {
	if corr == a.lastCorr && a.lastCodes != nil {
		return a.lastCodes, a.lastCountOnly
	}
	corr = strings.Clone(corr) // the key outlives the batch
	codes := strings.Split(corr, ",")
	countOnly := true
	for _, code := range codes {
		switch a.fixes[code] {
		case convention.FixCountFromImport, convention.FixCountNotStuck, "":
		default:
			countOnly = false
		}
	}
	a.lastCorr, a.lastCodes, a.lastCountOnly = corr, codes, countOnly
	return codes, countOnly
}

// countsSaved are the count columns of one request that countFixes
// changed, to put back once it is computed.
type countsSaved struct {
	out, max       int64
	hasOut, hasMax bool
	rep            float64
	hasRep         bool
	src            string
}

func saveCounts(b *formats.Batch, i int) *countsSaved {
	q := &b.Req
	s := &countsSaved{src: q.OutputTokensSource.Get(i)}
	s.out, s.hasOut = q.OutputTokens.Get(i)
	s.max, s.hasMax = q.MaxTokens.Get(i)
	s.rep, s.hasRep = q.ReportedOutputTokens.Get(i)
	return s
}

// put restores request i's counts.
func (s *countsSaved) put(b *formats.Batch, i int) {
	q := &b.Req
	setOpt(&q.OutputTokens, i, s.out, s.hasOut)
	setOpt(&q.MaxTokens, i, s.max, s.hasMax)
	if s.hasRep {
		q.ReportedOutputTokens.Set(i, s.rep)
	} else {
		q.ReportedOutputTokens.Null(i)
	}
	q.OutputTokensSource.Set(i, s.src)
}

func setOpt(c *formats.Int64s, i int, v int64, ok bool) {
	if ok {
		c.Set(i, v)
	} else {
		c.Null(i)
	}
}

// countFixes applies in place, to request i of b, the count fixes of
// codes under c — what corrected does for them on a row — counting the
// applied codes in p; it returns what to restore after computing (nil
// when nothing changed).
func (a *Analyzer) countFixes(c convention.Convention, p *convAcc, b *formats.Batch, i int, codes []string) *countsSaved {
	apply := c.Corrections
	var saved *countsSaved
	q := &b.Req
	for _, code := range codes {
		switch fix := a.fixes[code]; {
		case fix == convention.FixCountFromImport && apply:
			p.count(code)
		case fix == convention.FixCountFromImport && !apply:
			if rep, ok := q.ReportedOutputTokens.Get(i); ok {
				if saved == nil {
					saved = saveCounts(b, i)
				}
				q.OutputTokens.Set(i, int64(rep))
				q.OutputTokensSource.Set(i, formats.SourceToolReported)
			}
		case !apply:
		case fix == convention.FixCountNotStuck:
			if saved == nil {
				saved = saveCounts(b, i)
			}
			q.OutputTokens.Null(i)
			q.OutputTokensSource.Set(i, "")
			q.ReportedOutputTokens.Null(i)
			q.MaxTokens.Null(i)
			p.count(code)
		}
	}
	return saved
}

// count counts one request a correction under code changed.
func (p *convAcc) count(code string) {
	if p.applied == nil {
		p.applied = map[string]int{}
	}
	p.applied[code]++
}

// dropSecondToken removes the second token-carrying event of events in
// place (the slice's last element is then a leftover the caller drops),
// moving every later event earlier by its gap; false when there is none.
func dropSecondToken(events []formats.Event) bool {
	first, second := -1, -1
	for i := range events {
		if events[i].CarriesTokens() {
			if first < 0 {
				first = i
			} else {
				second = i
				break
			}
		}
	}
	if second < 0 {
		return false
	}
	gap := events[second].OffsetNs - events[first].OffsetNs
	// the text it carried (an importer may put a reply's whole text on one
	// message) stays with the first token
	events[first].Text = joinText(events[first].Text, events[second].Text)
	events[first].ReasoningText = joinText(events[first].ReasoningText, events[second].ReasoningText)
	copy(events[second:], events[second+1:])
	for i := second; i < len(events)-1; i++ {
		events[i].OffsetNs -= gap
		events[i].Index--
		events[i].ReadIndex--
	}
	return true
}

// joinText is a followed by b (nil when both are).
func joinText(a, b *string) *string {
	switch {
	case b == nil:
		return a
	case a == nil:
		return b
	}
	s := *a + *b
	return &s
}

// firstNotToken marks the first token-carrying event as a role-only
// message (it carried no token); false when there is none or it is the
// only one.
func firstNotToken(events []formats.Event) bool {
	n := 0
	for i := range events {
		if events[i].CarriesTokens() {
			n++
		}
	}
	if n < 2 {
		return false
	}
	first := -1
	for i := range events {
		if !events[i].CarriesTokens() {
			continue
		}
		if first < 0 {
			first = i
			continue
		}
		// any text it carried moves to the (new) first token
		events[i].Text = joinText(events[first].Text, events[i].Text)
		events[i].ReasoningText = joinText(events[first].ReasoningText, events[i].ReasoningText)
		events[first].Kind, events[first].Text, events[first].ReasoningText = formats.KindRole, nil, nil
		return true
	}
	return false
}

// notTokenTimes marks the token-carrying events whose tokens an importer
// set to 0 (times the tool took for messages that carried no token) as
// carrying none (kind other); false when there is none.
func notTokenTimes(events []formats.Event) bool {
	changed := false
	for i := range events {
		if e := &events[i]; e.CarriesTokens() && e.Tokens != nil && *e.Tokens == 0 {
			e.Kind, e.Text, e.ReasoningText = formats.KindOther, nil, nil
			changed = true
		}
	}
	return changed
}

// bosPerChunk takes one BOS token off every token-carrying event that
// counted k ≥ 2 tokens (new pointers: the caller's events share the
// originals) and returns the corrected sum over the token-carrying events,
// -1 when one of their counts is unknown; false when no count changed.
func bosPerChunk(events []formats.Event) (int64, bool) {
	changed := false
	sum := int64(0)
	for i := range events {
		e := &events[i]
		if !e.CarriesTokens() {
			continue
		}
		if e.Tokens == nil {
			sum = -1
			continue
		}
		k := *e.Tokens
		if k >= 2 {
			k--
			e.Tokens = &k
			changed = true
		}
		if sum >= 0 {
			sum += int64(k)
		}
	}
	return sum, changed
}
