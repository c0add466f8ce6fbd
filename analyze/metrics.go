package analyze

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// TokenCounter counts the tokens of a text (a re-tokenized output count).
// analyze/tokenizer provides implementations.
type TokenCounter interface {
	Name() string
	Count(text string, addSpecial bool) (int, error)
}

// RequestMetrics are one request's metrics under a Convention. Times are in
// milliseconds; NaN means undefined (no such event, or the formula does not
// apply), never zero.
type RequestMetrics struct {
	// RequestKey is the request's formats.Request.RequestKey (its 0-based
	// position in its run: with the run id, its key in the tables); plots
	// name a drawn request by it.
	RequestKey int64
	Status     string
	// Counted is true when the request is in the convention's completed set
	// (Convention.Completed): latency statistics are over counted requests.
	Counted bool
	// StartNs is the request's start in its clock (valid when HasStart).
	StartNs  int64
	HasStart bool
	TTFTMs   float64 // start → first response
	TTFOMs   float64 // start → first content message
	TTSTMs   float64 // first → second response
	E2EMs    float64 // start → the convention's E2E end
	// LastResponseMs is start → last response (the end of the TPOT span).
	LastResponseMs float64
	// StreamEndMs is start → the stream's end.
	StreamEndMs float64
	// TPOTMs is the convention's TPOT formula; NaN where undefined.
	TPOTMs float64
	// ITLMeanMs is (last − first response)/(N − 1), the per-request ITL of
	// ITLPerRequestMean conventions.
	ITLMeanMs float64
	// OutputTokens is N (NaN when unknown) and OutputSource where it came
	// from; TPOTTokens is the TPOT divisor's N.
	OutputTokens float64
	OutputSource string
	TPOTTokens   float64
	// InputTokens is the ISL (NaN when unknown); InputReported the tool's
	// own per-request ISL.
	InputTokens   float64
	InputReported float64
	InputUsage    float64
	// OutputUsage is the server's completion_tokens (NaN when absent).
	OutputUsage float64
	// ErrorCode of a failed request (valid when HasErrorCode).
	ErrorCode    int64
	HasErrorCode bool
	// HasReasoning is true when the request produced reasoning tokens.
	HasReasoning bool
	// TokensPerMessageKnown is true when every gap's token count was known.
	TokensPerMessageKnown bool
	// Responses is the number of responses; Messages of messages.
	Responses int
	Messages  int
	// TokenizerErr records why a tokenizer count was unavailable.
	TokenizerErr string
	// RetokenizedBelow is true when the re-tokenized output count
	// (RetokenizedN) was below the token messages (Responses): the
	// retokenized_below_messages check (traps.go).
	RetokenizedBelow bool
	RetokenizedN     float64
	// Error summarizes a failed or cancelled request's error ("" otherwise):
	// the key errors are grouped by (numbers but status codes as N);
	// ErrorText is the first line of the message itself.
	Error     ErrorKey
	ErrorText string
	// NonStreaming marks a request of a non-streaming run in a pooled
	// report: its TPOT, TTST and ITL are left out.
	NonStreaming bool
	// MaxITLMs is the largest gap between two consecutive responses of the
	// request, in ms (the worst stall a reader saw); NaN with fewer than
	// two responses.
	MaxITLMs float64
	// Fluidity holds the request's fluidity-index under each pair of
	// deadlines the Analyzer was given (SetFluidity); NaN where the request
	// has no responses.
	Fluidity []FluidityValue
	// ITLSamples is how many pooled ITL samples ComputeRequest appended for
	// this request, in token order (0 under ITLPerRequestMean); plots use
	// it to give each pooled gap its position in the output.
	ITLSamples int
	// Key is the request's RequestKey; ID the id a reader knows it by:
	// its SourceID, else XRequestID, ResponseID, ServerRequestID ("" when
	// none).
	Key int64
	ID  string
	// EndOffsetNs is when the client was done with the request, from its
	// start (formats.RequestEnd: stream end, else last or first token); −1
	// when the source records no end.
	EndOffsetNs int64
	// ServerQueueNs is the server's queue time of a joined request
	// (Request.ServerQueueNs); −1 when unknown.
	ServerQueueNs int64
	// DispatchDelayMs is start − intended start (Request.ScheduledStartNs)
	// in ms; NaN where the request has no intended start or no start.
	DispatchDelayMs float64
	// CachedInputTokens is the prompt tokens read from the prefix cache
	// (Request.CachedInputTokens); NaN when unknown.
	CachedInputTokens float64
	// SpecSteps, DraftTokens and AcceptedTokens are the request's
	// speculative-decoding counts (Request.SpecSteps, …); NaN when unknown.
	SpecSteps, DraftTokens, AcceptedTokens float64
	// SessionID and TurnIndex place the request in its session
	// (Request.SessionID, TurnIndex; "" and −1 when unknown).
	SessionID string
	TurnIndex int64
	// FromSchedule: TTFT, TTFO and E2E are measured from the intended
	// start (a LatencyFromSchedule convention), so they already hold the
	// dispatch delay.
	FromSchedule bool
}

// ErrorKey groups failed requests in a report: status, code, type and the
// first line of the message.
type ErrorKey struct {
	Status  string `json:"status"`
	Code    string `json:"code,omitempty"`
	Type    string `json:"type,omitempty"`
	Message string `json:"message,omitempty"`
}

// digitRuns are replaced by "N" in the key that groups error messages, so
// that "Output too few tokens 102" and "… 59" are one kind of error —
// except HTTP status codes (statusCode), which name the kind.
var digitRuns = regexp.MustCompile(`[0-9]+`)

// statusBefore matches the text just before a status code: the message's
// start, or "HTTP", "HTTP/1.1", "status", "status code", "code", "error"
// and a separator.
var statusBefore = regexp.MustCompile(`(?i)(^|\b(https?(/[0-9.]+)?|status( code)?|code|error))[\s:=#]*$`)

// httpVersion matches the text before the digits of an HTTP version.
var httpVersion = regexp.MustCompile(`(?i)\bhttps?/([0-9]+\.)?$`)

// errorGroupKey is message with its numbers replaced by N, HTTP status
// codes kept: "524: A timeout occurred" stays, "took 1234 ms" becomes
// "took N ms".
func errorGroupKey(message string) string {
	var b strings.Builder
	last := 0
	for _, loc := range digitRuns.FindAllStringIndex(message, -1) {
		i, j := loc[0], loc[1]
		b.WriteString(message[last:i])
		d := message[i:j]
		if n, err := strconv.Atoi(d); err == nil && len(d) == 3 && n >= 100 && n <= 599 && statusBefore.MatchString(message[:i]) ||
			httpVersion.MatchString(message[:i]) {
			b.WriteString(d)
		} else {
			b.WriteString("N")
		}
		last = j
	}
	b.WriteString(message[last:])
	return b.String()
}

// firstLine returns s's first non-blank line, cut at n runes; for an HTML
// error page (a proxy's 5xx body) its <title>. It reads at most the first
// firstLineWindow bytes of s: its work is bounded whatever the text's
// length (a 200 MB error text took gigabytes when it was lowered and
// split whole).
func firstLine(s string, n int) string {
	if len(s) > firstLineWindow {
		s = s[:firstLineWindow]
	}
	if strings.HasPrefix(strings.TrimSpace(s), "<") {
		low := strings.ToLower(s)
		if i := strings.Index(low, "<title>"); i >= 0 {
			if j := strings.Index(low[i:], "</title>"); j > 0 {
				s = "HTML page: " + strings.TrimSpace(s[i+len("<title>"):i+j])
			}
		}
	}
	for s != "" {
		l, rest, _ := strings.Cut(s, "\n")
		if l = strings.TrimSpace(l); l != "" {
			return formats.CutRunes(l, n)
		}
		s = rest
	}
	return ""
}

// firstLineWindow is how much of a message firstLine reads: 64 KiB.
const firstLineWindow = 64 << 10

// ptrMs is *p ns in ms, NaN for nil.
func ptrMs(p *int64) float64 {
	if p == nil {
		return math.NaN()
	}
	return float64(*p) / 1e6
}

func nsToMs(c *formats.Int64s, i int) float64 {
	if v, ok := c.Get(i); ok {
		return float64(v) / 1e6
	}
	return math.NaN()
}

func optI(c *formats.Int64s, i int) float64 {
	if v, ok := c.Get(i); ok {
		return float64(v)
	}
	return math.NaN()
}

func optF(c *formats.Float64s, i int) float64 {
	if v, ok := c.Get(i); ok {
		return v
	}
	return math.NaN()
}

// resps are one request's responses under a convention, as parallel
// slices: each one's arrival offset, the tokens it carried (nil: every
// count unknown; -1: this one unknown), and its texts (only when a
// tokenizer will count them). A request whose messages are all its
// responses, one per message and with no count, has off pointing into
// the batch's own offsets (no copy).
type resps struct {
	off    []int64
	tokens []int32
	text   [][]string
	// own and ownTok are the pooled arrays behind off and tokens when
	// they are copies
	own    []int64
	ownTok []int32
}

func (r *resps) n() int { return len(r.off) }

// tok is response j's token count (-1 unknown).
func (r *resps) tok(j int) int {
	if r.tokens == nil {
		return -1
	}
	return int(r.tokens[j])
}

// respBufs pools ComputeBatch's response buffers.
var respBufs = sync.Pool{New: func() any { return new(resps) }}

// serverKinds marks the kind codes of b that are server-side ("server.*":
// no message the client received); nil when b has none.
func serverKinds(b *formats.Batch) (t *[256]bool) {
	for i, k := range b.DictKinds() {
		if formats.IsServerKind(k) {
			if t == nil {
				t = new([256]bool)
			}
			t[int(formats.MsgDict)+i] = true
		}
	}
	return t
}

// msgs is one request's client messages in a batch: the range [lo, hi)
// of its message columns, without the server-side kinds (srv).
type msgs struct {
	b      *formats.Batch
	lo, hi int
	srv    *[256]bool
	n      int // client messages
}

func newMsgs(b *formats.Batch, i int, srv *[256]bool) msgs {
	lo, hi := b.Messages(i)
	m := msgs{b: b, lo: lo, hi: hi, srv: srv, n: hi - lo}
	if srv != nil {
		for _, k := range b.Msg.Kind[lo:hi] {
			if srv[k] {
				m.n--
			}
		}
	}
	return m
}

// client reports whether message j is one the client received.
func (m *msgs) client(j int) bool { return m.srv == nil || !m.srv[m.b.Msg.Kind[j]] }

// responses selects the convention's responses from a request's
// messages into out; their text is kept only withText (a tokenizer will
// count it).
func responses(c convention.Convention, m msgs, out *resps, withText bool) {
	col := &m.b.Msg
	if !withText && m.n == m.hi-m.lo && c.Responses == convention.ResponsesTokens && len(col.Tokens.V) <= m.lo &&
		(c.ResponseUnit != convention.UnitRead || len(col.ReadIndex) <= m.lo) {
		// every message a token message, each its own response with no
		// count (a gap-list format's timeline): the offsets themselves
		all := true
		for _, k := range col.Kind[m.lo:m.hi] {
			if !k.CarriesTokens() {
				all = false
				break
			}
		}
		if all {
			out.off, out.tokens, out.text = col.OffsetNs[m.lo:m.hi:m.hi], nil, nil
			return
		}
	}
	out.off, out.tokens, out.text = out.own[:0], out.ownTok[:0], out.text[:0]
	known := false
	lastRead := int32(-1)
	for j := m.lo; j < m.hi; j++ {
		if !m.client(j) {
			continue
		}
		k := col.Kind[j]
		var keep bool
		switch c.Responses {
		case convention.ResponsesTokens:
			keep = k.CarriesTokens()
		case convention.ResponsesContent:
			keep = k == formats.MsgContent
		case convention.ResponsesChoices:
			keep = col.Choices.Get(j)
		}
		if !keep {
			continue
		}
		tok := int32(-1)
		if t, ok := col.Tokens.Get(j); ok {
			tok, known = t, true
		}
		var texts []string
		if withText {
			if t, ok := col.Text.Get(j); ok {
				texts = append(texts, t)
			}
			if c.TokenizeReasoning {
				if t, ok := col.ReasoningText.Get(j); ok {
					texts = append(texts, t)
				}
			}
		}
		read := m.b.ReadOf(j, m.lo)
		if n := len(out.off); c.ResponseUnit == convention.UnitRead && read == lastRead && n > 0 {
			if out.tokens[n-1] >= 0 && tok >= 0 {
				out.tokens[n-1] += tok
			} else {
				out.tokens[n-1] = -1
			}
			if withText {
				out.text[n-1] = append(out.text[n-1], texts...)
			}
			continue
		}
		lastRead = read
		out.off = append(out.off, col.OffsetNs[j])
		out.tokens = append(out.tokens, tok)
		if withText {
			out.text = append(out.text, texts)
		}
	}
	out.own, out.ownTok = out.off, out.tokens
	if !known {
		out.tokens = nil
	}
}

// ComputeRequest returns r's metrics under c and appends r's pooled ITL
// samples (ms) to itl, returning the extended slice: ComputeBatch on a
// batch of one row. events are r's events in arrival order; sources
// without per-message data pass nil. Their run id, key and index are
// taken from r and their position.
func ComputeRequest(c convention.Convention, r *formats.Request, events []formats.Event, tok TokenCounter, itl []float64) (RequestMetrics, []float64) {
	b := formats.NewBatch(r.RunID)
	ev := make([]formats.Event, len(events))
	for j := range events {
		ev[j] = events[j]
		ev[j].RunID, ev[j].RequestKey, ev[j].Index = r.RunID, r.RequestKey, int32(j)
	}
	if len(ev) == 0 {
		ev = nil
	}
	row := *r
	if _, ok := formats.StatusCodeOf(row.Status); !ok {
		row.Status = ""
	}
	if err := b.AppendRow(&row, ev); err != nil {
		panic(err) // run id, keys and indexes are set above
	}
	m, itl := ComputeBatch(c, b, 0, serverKinds(b), tok, itl)
	m.Status = r.Status
	return m, itl
}

// ComputeBatch returns the metrics of request i of b under c and appends
// its pooled ITL samples (ms) to itl, returning the extended slice. srv
// marks b's server-side kinds (serverKinds; nil: none): those messages
// are no responses the client received (a server row's). A request
// without messages gets its metrics from its own offsets (first token or
// first content, second token, last token). tok re-tokenizes text for
// CountTokenizer; nil when no tokenizer is available.
func ComputeBatch(c convention.Convention, b *formats.Batch, i int, srv *[256]bool, tok TokenCounter, itl []float64) (RequestMetrics, []float64) {
	m, itl := computeBatch(c, b, i, srv, tok, itl)
	if c.LatencyFrom == convention.LatencyFromSchedule && !math.IsNaN(m.DispatchDelayMs) {
		// measured from the intended start: the first response, E2E and
		// the stream's end move by the dispatch delay; the gaps between
		// responses (TTST, TPOT, ITL) do not
		d := m.DispatchDelayMs
		m.TTFTMs, m.TTFOMs, m.E2EMs, m.LastResponseMs, m.StreamEndMs = m.TTFTMs+d, m.TTFOMs+d, m.E2EMs+d, m.LastResponseMs+d, m.StreamEndMs+d
		m.FromSchedule = true
	}
	return m, itl
}

func computeBatch(c convention.Convention, b *formats.Batch, i int, srv *[256]bool, tok TokenCounter, itl []float64) (RequestMetrics, []float64) {
	q := &b.Req
	ms := newMsgs(b, i, srv)
	nan := math.NaN()
	status := q.Status[i]
	m := RequestMetrics{
		RequestKey: q.Key[i], Status: status.String(), TTFTMs: nan, TTFOMs: nsToMs(&q.FirstContentOffsetNs, i), TTSTMs: nan, E2EMs: nan,
		LastResponseMs: nan, StreamEndMs: nsToMs(&q.StreamEndOffsetNs, i), TPOTMs: nan, ITLMeanMs: nan,
		OutputTokens: nan, TPOTTokens: nan, InputTokens: optI(&q.InputTokens, i), InputReported: optF(&q.ReportedInputTokens, i),
		InputUsage: nan, OutputUsage: nan, Messages: ms.n, MaxITLMs: nan, DispatchDelayMs: nan,
		CachedInputTokens: optI(&q.CachedInputTokens, i), TurnIndex: -1,
		SpecSteps: optI(&q.SpecSteps, i), DraftTokens: optI(&q.DraftTokens, i), AcceptedTokens: optI(&q.AcceptedTokens, i),
	}
	if id := q.SessionID.Get(i); id != "" {
		m.SessionID = strings.Clone(id) // the batch is reused once the call returns
		if t, ok := q.TurnIndex.Get(i); ok {
			m.TurnIndex = t
		}
	}
	if q.InputTokensSource.Get(i) == formats.SourceServerUsage {
		m.InputUsage = m.InputTokens
	}
	outSource := q.OutputTokensSource.Get(i)
	if outSource == formats.SourceServerUsage {
		m.OutputUsage = optI(&q.OutputTokens, i)
	}
	if v, ok := q.StartNs.Get(i); ok {
		m.StartNs, m.HasStart = v, true
		if sched, ok := q.ScheduledStartNs.Get(i); ok {
			m.DispatchDelayMs = float64(v-sched) / 1e6
		}
	}
	m.Key, m.EndOffsetNs, m.ServerQueueNs = q.Key[i], -1, -1
	if v, ok := q.ServerQueueNs.Get(i); ok && !b.IsServerRow(i) {
		m.ServerQueueNs = v
	}
	for _, col := range [...]*formats.Strings{&q.SourceID, &q.XRequestID, &q.ResponseID, &q.ServerRequestID} {
		if id := col.Get(i); id != "" {
			// a copy: the batch is reused once the call returns
			m.ID = strings.Clone(id)
			break
		}
	}
	if end, ok := b.RequestEnd(i); ok {
		m.EndOffsetNs = end - m.StartNs
	}
	if v, ok := q.ErrorCode.Get(i); ok {
		m.ErrorCode, m.HasErrorCode = v, true
	}
	if status.Failed() {
		m.ErrorText = strings.Clone(firstLine(q.ErrorText.Get(i), 120)) // a copy, as ID above
		m.Error = ErrorKey{Status: m.Status, Type: strings.Clone(q.ErrorType.Get(i)), Message: errorGroupKey(m.ErrorText)}
		if m.HasErrorCode {
			m.Error.Code = strconv.FormatInt(m.ErrorCode, 10)
		}
	}
	if v, ok := q.ReasoningTokens.Get(i); ok && v > 0 {
		m.HasReasoning = true
	}
	if !m.HasReasoning {
		col := &b.Msg
		for j := ms.lo; j < ms.hi; j++ {
			if !ms.client(j) {
				continue
			}
			if col.Kind[j] == formats.MsgReasoning {
				m.HasReasoning = true
				break
			}
			if t, ok := col.ReasoningText.Get(j); ok && t != "" {
				m.HasReasoning = true
				break
			}
		}
	}

	// a pooled buffer: one request's responses are garbage after it
	resp := respBufs.Get().(*resps)
	resp.off, resp.tokens = nil, nil
	defer func() {
		clear(resp.text) // drop text references
		resp.off, resp.text = nil, resp.text[:0]
		respBufs.Put(resp)
	}()
	// firstNs and lastNs are the first and last responses' offsets (-1:
	// none), kept in whole ns so TPOT is computed (and rounded) in ns as the
	// tools do.
	firstNs, lastNs := int64(-1), int64(-1)
	if ms.n > 0 {
		withText := tok != nil && (slices.Contains(c.OutputTokens, convention.CountTokenizer) || slices.Contains(c.TPOTCount, convention.CountTokenizer))
		responses(c, ms, resp, withText)
		n := resp.n()
		m.Responses = n
		if n > 0 {
			firstNs, lastNs = resp.off[0], resp.off[n-1]
			m.TTFTMs = float64(firstNs) / 1e6
			m.LastResponseMs = float64(lastNs) / 1e6
		}
		if n > 1 {
			m.TTSTMs = float64(resp.off[1]-resp.off[0]) / 1e6
		}
	} else {
		// No per-message data: the request's own offsets.
		first := &q.FirstTokenOffsetNs
		if c.Responses == convention.ResponsesContent {
			first = &q.FirstContentOffsetNs
		}
		m.TTFTMs = nsToMs(first, i)
		m.LastResponseMs = nsToMs(&q.LastTokenOffsetNs, i)
		if v, ok := first.Get(i); ok {
			firstNs = v
		}
		if v, ok := q.LastTokenOffsetNs.Get(i); ok {
			lastNs = v
		}
		f, ok1 := q.FirstTokenOffsetNs.Get(i)
		s, ok2 := q.SecondTokenOffsetNs.Get(i)
		if ok1 && ok2 {
			m.TTSTMs = float64(s-f) / 1e6
		}
		m.Responses = int(q.TokenMessageCount[i])
	}
	switch c.E2EEnd {
	case convention.E2ELastResponse:
		m.E2EMs = m.LastResponseMs
	case convention.E2EStreamEnd:
		m.E2EMs = m.StreamEndMs
	}

	switch c.Completed {
	case convention.CompletedOK:
		m.Counted = status == formats.CodeOK
	case convention.CompletedWithContent:
		m.Counted = status == formats.CodeOK && q.FirstContentOffsetNs.Has(i)
	case convention.CompletedNoError:
		m.Counted = status == formats.CodeOK || status == formats.CodeEmpty
	}

	m.OutputTokens, m.OutputSource, m.TokenizerErr = count(c, c.OutputTokens, b, i, outSource, ms, resp, tok)
	retokenizedFloor(c, &m)
	m.TPOTTokens = m.OutputTokens
	if c.TPOTCount != nil {
		m.TPOTTokens, _, _ = count(c, c.TPOTCount, b, i, outSource, ms, resp, tok)
	}

	// TPOT, in ns then ms.
	from := firstNs
	if c.TPOTFrom == convention.TPOTFromRequestStart {
		from = 0
	}
	div := m.TPOTTokens
	if c.TPOTDivisor == convention.DivideNMinus1 {
		div--
	}
	if div > 0 && (c.TPOTDivisor == convention.DivideN || m.TPOTTokens > 1) && from >= 0 && lastNs >= 0 {
		ns := float64(lastNs-from) / div
		switch c.TPOTRounding {
		case convention.RoundWholeNs:
			ns = math.RoundToEven(ns)
		case convention.RoundFloorNs:
			ns = math.Floor(ns)
		}
		m.TPOTMs = ns / 1e6
	}
	if m.OutputTokens > 1 {
		m.ITLMeanMs = (m.LastResponseMs - m.TTFTMs) / (m.OutputTokens - 1)
	}

	// Pooled ITL samples. Under ITLTokenZeroGaps the first chunk's extra
	// tokens share its arrival time: k − 1 zero gaps.
	itlStart := len(itl)
	nr := resp.n()
	m.TokensPerMessageKnown = nr > 0
	if c.ITL == convention.ITLTokenZeroGaps && nr > 0 && resp.tok(0) > 1 {
		for j := 1; j < resp.tok(0); j++ {
			itl = append(itl, 0)
		}
	}
	if resp.tokens == nil && nr > 1 && c.ITL != convention.ITLPerRequestMean {
		// no counts: one gap per pair of responses, in one loop
		m.TokensPerMessageKnown = false
		off := resp.off
		maxGap := int64(math.MinInt64)
		for i := 1; i < nr; i++ {
			g := off[i] - off[i-1]
			maxGap = max(maxGap, g)
			itl = append(itl, float64(g)/1e6)
		}
		m.MaxITLMs = float64(maxGap) / 1e6
		m.ITLSamples = len(itl) - itlStart
		return m, itl
	}
	for i := 1; i < nr; i++ {
		gap := float64(resp.off[i]-resp.off[i-1]) / 1e6
		if i == 1 || gap > m.MaxITLMs {
			m.MaxITLMs = gap
		}
		k := resp.tok(i)
		if k < 0 {
			m.TokensPerMessageKnown = false
		}
		switch {
		case c.ITL == convention.ITLPooledTokenSplit && k > 1:
			for j := 0; j < k; j++ {
				itl = append(itl, gap/float64(k))
			}
		case c.ITL == convention.ITLTokenZeroGaps && k > 1:
			itl = append(itl, gap)
			for j := 1; j < k; j++ {
				itl = append(itl, 0)
			}
		case c.ITL == convention.ITLPerRequestMean:
			// one value per request, kept in ITLMeanMs
		default:
			itl = append(itl, gap)
		}
	}
	m.ITLSamples = len(itl) - itlStart
	return m, itl
}

// count returns N by the given source order, its source's name, and why a
// tokenizer count was unavailable.
func count(c convention.Convention, sources []convention.CountSource, b *formats.Batch, i int, outSource string, ms msgs, resp *resps, tok TokenCounter) (float64, string, string) {
	q := &b.Req
	tokErr := ""
	out, hasOut := q.OutputTokens.Get(i)
	for _, s := range sources {
		switch s {
		case convention.CountServerUsage:
			if hasOut && outSource == formats.SourceServerUsage {
				return float64(out), string(s), ""
			}
		case convention.CountToolReported:
			if hasOut && outSource == formats.SourceToolReported {
				return float64(out), string(s), ""
			}
		case convention.CountToolRaw:
			if v, ok := q.ReportedOutputTokens.Get(i); ok {
				return v, string(s), ""
			}
		case convention.CountTokenizer:
			if hasOut && strings.HasPrefix(outSource, formats.SourceTokenizerPfx) {
				return float64(out), outSource, ""
			}
			if tok == nil {
				tokErr = "no tokenizer"
				continue
			}
			if ms.n == 0 {
				tokErr = "no generated text in the source"
				continue
			}
			var sb strings.Builder
			hasText := false
			for _, x := range resp.text {
				for _, t := range x {
					sb.WriteString(t)
					hasText = true
				}
			}
			if !hasText && resp.n() > 0 {
				tokErr = "generated text not stored (imported with --no-text?)"
				continue
			}
			n, err := tok.Count(sb.String(), c.SpecialTokens)
			if err != nil {
				tokErr = err.Error()
				continue
			}
			return float64(n), formats.SourceTokenizerPfx + tok.Name(), ""
		case convention.CountResponses:
			if ms.n > 0 {
				return float64(resp.n()), string(s), ""
			}
			if n := q.TokenMessageCount[i]; n > 0 {
				return float64(n), string(s), ""
			}
		case convention.CountSSEMessages:
			if ms.n > 0 {
				n := 0
				kinds := b.Msg.Kind
				for j := ms.lo; j < ms.hi; j++ {
					if k := kinds[j]; ms.client(j) && k != formats.MsgDone && k != formats.MsgOther {
						n++
					}
				}
				return float64(n), string(s), ""
			}
		case convention.CountRequested:
			if v, ok := q.MaxTokens.Get(i); ok {
				return float64(v), string(s), ""
			}
		}
	}
	return math.NaN(), "", tokErr
}
