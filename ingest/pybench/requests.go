package pybench

import (
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// reasonCodes maps HTTP reason phrases to status codes: both tools store
// aiohttp's response.reason as the error of a request answered with a
// non-200 status ("Too Many Requests").
var reasonCodes = func() map[string]int64 {
	m := map[string]int64{}
	for c := 100; c < 600; c++ {
		if s := http.StatusText(c); s != "" {
			m[strings.ToLower(s)] = int64(c)
		}
	}
	return m
}()

// exceptionLine matches the last line of a Python traceback: the exception
// class, optionally dotted, then ": message" or nothing.
var exceptionLine = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?::|$)`)

// ErrorClass classifies a request's error text as the tools write it: an
// HTTP reason phrase (response.reason of a non-200 reply) gives the status
// code and type "http"; a Python traceback
// ("".join(traceback.format_exception(...))) gives the exception class of
// its last line as the type; other texts (vLLM's "Never received a valid
// chunk to calculate TTFT…") give neither.
func ErrorClass(text string) (code *int64, typ string) {
	t := strings.TrimSpace(text)
	if c, ok := reasonCodes[strings.ToLower(t)]; ok {
		return ingest.Ptr(c), "http"
	}
	if !strings.Contains(t, "Traceback (most recent call last)") {
		return nil, ""
	}
	lines := strings.Split(t, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" {
			continue
		}
		if m := exceptionLine.FindStringSubmatch(l); m != nil {
			return nil, m[1]
		}
		break
	}
	return nil, ""
}

// Rebuilt counts what RebuildEvents did over a run.
type Rebuilt struct {
	// Requests is the number of requests whose events were rebuilt.
	Requests int
	// Merged is the number of multi-token messages found by MergeEqual.
	Merged int
	// Unplaced is the number of requests whose events were not rebuilt
	// because a gap was unknown (NaN: an offending value Column and
	// Columns recorded, or null): the messages after it cannot be placed.
	Unplaced int
}

// RebuildEvents rebuilds a streamed reply's messages from the tool's
// per-request times: the first at ttftNs, each later one a gap of itls
// (seconds) after the one before it, every offset the previous one plus
// math.Round(gap·1e9), so each rebuilt gap is within half a nanosecond of
// the tool's. Events are content messages with choices (has_choices); their
// text, byte sizes and token counts are unknown, except that:
//
//   - text, when not nil, is the whole reply's text and goes on the last
//     event (the concatenation of the events' texts is then the reply, which
//     is what re-tokenization reads; per-message text is not recorded);
//   - merge (SGLang's native backend, which splits a chunk of k new tokens
//     into k equal gaps of gap/k) joins each run of exactly equal
//     consecutive gaps into one message of k tokens arriving after the whole
//     gap; every later event then carries its token count, and the first
//     one carries firstTokens when that is positive (else its count is
//     unknown).
//
// The events are appended to out[:0] and returned. When a gap is not a
// finite non-negative number (NaN: unknown) no event is rebuilt — a 0-ns
// gap would be a wrong number — and out[:0] is returned, counted in
// st.Unplaced: the caller sets the request's offsets from its own fields.
func RebuildEvents(out []formats.Event, runID string, key int64, ttftNs int64, itls []float64, text *string, merge bool, firstTokens int64, st *Rebuilt) []formats.Event {
	out = out[:0]
	if !GapsKnown(itls) {
		st.Unplaced++
		return out
	}
	// Each event is written field by field into its slot: appending a
	// whole Event copies its pointers with the collector's bulk barrier,
	// which cost as much as the rest of the import at 100k requests.
	if cap(out) < len(itls)+1 {
		out = make([]formats.Event, 0, len(itls)+1)
	}
	put := func(index int32, off int64, tokens *int32) {
		out = out[:index+1]
		e := &out[index]
		e.RunID, e.RequestKey, e.Index, e.ReadIndex, e.OffsetNs = runID, key, index, index, off
		e.Kind, e.HasChoices, e.Tokens, e.Bytes = formats.KindContent, true, tokens, 0
		e.Text, e.ReasoningText, e.FinishReason = nil, nil, ""
	}
	var first *int32
	if merge && firstTokens > 0 {
		first = ingest.Ptr(int32(min(firstTokens, 1<<30)))
	}
	put(0, ttftNs, first)
	off := ttftNs
	for i := 0; i < len(itls); {
		g := itls[i]
		k := 1
		if merge {
			for i+k < len(itls) && itls[i+k] == g {
				k++
			}
		}
		ns, _ := SecondsNs(g * float64(k)) // known: GapsKnown
		off += ns
		var tokens *int32
		if merge {
			tokens = ingest.Ptr(int32(k))
			if k > 1 {
				st.Merged++
			}
		}
		put(int32(len(out)), off, tokens)
		i += k
	}
	if text != nil && *text != "" {
		out[len(out)-1].Text = text
	}
	st.Requests++
	return out
}

// GapsKnown reports whether every gap is a finite number in [0, a day]
// (in seconds): what RebuildEvents can place.
func GapsKnown(itls []float64) bool {
	for _, g := range itls {
		if ingest.Classify(g, ingest.MaxIn(ingest.Seconds)) != ingest.Valid {
			return false
		}
	}
	return true
}

// Aligned checks that the per-request arrays (name → length) are
// index-aligned. It returns their names sorted and their common length
// (-1 when there are none), or an error listing every length.
func Aligned(lengths map[string]int) (names []string, n int, err error) {
	for k := range lengths {
		names = append(names, k)
	}
	sort.Strings(names)
	n = -1
	for _, k := range names {
		switch {
		case n < 0:
			n = lengths[k]
		case lengths[k] != n:
			parts := make([]string, len(names))
			for i, k := range names {
				parts[i] = fmt.Sprintf("%s %d", k, lengths[k])
			}
			return names, -1, fmt.Errorf("the per-request arrays differ in length (%s): they must be index-aligned", strings.Join(parts, ", "))
		}
	}
	return names, n, nil
}
