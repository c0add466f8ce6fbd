// Package reqtest builds hand-made requests for the tests of the analysis
// packages: events at given offsets, the request's derived fields filled
// the way the importers fill them (ingest.FillFromEvents).
package reqtest

import (
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// MS is one millisecond in ns.
const MS = int64(1e6)

// Event is one message of a hand-made request: its offset from the start
// (ns), kind, and the tokens it carried (nil: unknown).
type Event struct {
	Off  int64
	Kind string
	Tok  *int32
}

// Request builds request key of run "r" starting at start (ns, unix
// clock) from events, through FillFromEvents. usage, when not nil, is the
// server's completion_tokens; otherwise N is the token-message count.
func Request(key int64, start int64, events []Event, usage *int64) (formats.Request, []formats.Event) {
	r := formats.Request{RunID: "r", RequestKey: key, StartNs: &start, ClockDomain: formats.ClockUnix}
	out := make([]formats.Event, len(events))
	for i, e := range events {
		out[i] = formats.Event{RunID: "r", RequestKey: key, Index: int32(i), ReadIndex: int32(i), OffsetNs: e.Off, Kind: e.Kind,
			HasChoices: e.Kind != formats.KindUsage && e.Kind != formats.KindDone, Tokens: e.Tok}
	}
	formats.FillFromEvents(&r, out)
	if usage != nil {
		r.OutputTokens, r.OutputTokensSource = usage, formats.SourceServerUsage
	} else if r.TokenMessageCount > 0 {
		r.OutputTokens, r.OutputTokensSource = ingest.Ptr(r.TokenMessageCount), formats.SourceChunkCount
	}
	return r, out
}

// Classic is the brief's request: TTFT 500 ms, 100 one-token content
// messages evenly to 1200 ms (700 ms of decode), behind a role-only first
// chunk at 400 ms and followed by a usage chunk and [DONE]; the server's
// usage says 100. TPOT is 700/99 ms; LLMPerf's E2E/N is 12.00 ms.
func Classic(key, start int64) (formats.Request, []formats.Event) {
	evs := []Event{{400 * MS, formats.KindRole, nil}}
	for i := int64(0); i < 100; i++ {
		evs = append(evs, Event{500*MS + i*700*MS/99, formats.KindContent, nil})
	}
	evs = append(evs, Event{1201 * MS, formats.KindUsage, nil}, Event{1202 * MS, formats.KindDone, nil})
	return Request(key, start, evs, ingest.Ptr(int64(100)))
}
