// Package join matches client requests (benchmark traces) with server
// records (ingest/serverlog rows) and estimates the clock offset between
// the two sides.
//
// # Matching, in order
//
//  1. trace_id: the client's W3C traceparent trace-id equals the server
//     record's trace id (vLLM, TGI and SGLang parent their spans on an
//     incoming traceparent). Quality "trace_id".
//  2. request id: the client's X-Request-Id or response id equals the
//     server's request id after normalization (vLLM's OpenAI serving layer,
//     _base_request_id in vllm-project/vllm, commit not recorded): vLLM turns
//     X-Request-Id "abc" into "chatcmpl-abc" / "cmpl-abc", appends "-<i>" per
//     prompt (V0: "-0") and, for its engine-internal id, "-<8 hex>". Each id
//     is compared exactly first, then with those prefixes and suffixes
//     removed; a key shared by two records of one side is ambiguous and not
//     used. Quality "request_id".
//  3. time window: the remaining records are matched on time when both
//     sides have one. The offset θ (server clock − client clock) comes from
//     the id-matched pairs (median of server arrival − client send), else
//     from a vote over candidate pairs whose token counts agree (the
//     densest Window-wide cluster of their differences), else — both
//     clocks wall ("unix") — 0 (clocks assumed synchronized). A pair is a
//     candidate when |server arrival − client send − θ| ≤ Window and its
//     token counts do not disagree (input exact, output ±1; TGI's output
//     count is inference_time / time_per_token); candidates are taken
//     closest first, each record once. Quality "time_tokens" when at least
//     one token count was compared, else "time".
//
// # Clock offset
//
// Over the matched pairs with a server arrival and a client start, d =
// server arrival − client send. The report gives the median of d (the
// offset plus the client→server network and client overhead), and the
// interval of offsets consistent with every pair: θ ≤ min(d + r) (the
// server cannot receive before the client sends; r is the resolution of
// the server's arrival time, ArrivalResolutionNs: a log line stamped to
// the second was received up to 1 s after its stamp) and θ ≥ max(server end
// − client end) (the server cannot finish after the client received the
// end). The median of d is NOT an estimate of θ inside that interval: d is
// θ plus the client→server delay, so with exact times the median is at or
// above the upper bound by construction. An empty interval means the
// clocks drifted or a pair is wrong; it is reported, never forced.
package join

import (
	"math"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/tokentrace/tokentrace/formats"
)

// Client is what the join needs of a client request.
type Client struct {
	RunID string
	Key   int64
	// StartNs is the send time in Clock (nil: unknown).
	StartNs *int64
	Clock   string
	// EndNs is the last message's arrival (stream end), from StartNs.
	EndOffNs                        *int64
	XRequestID, ResponseID, TraceID string
	InputTokens, OutputTokens       *int64
}

// ClientOf extracts the join fields of a client row.
func ClientOf(r *formats.Request) Client {
	end := r.StreamEndOffsetNs
	if end == nil {
		end = r.LastTokenOffsetNs
	}
	return Client{RunID: r.RunID, Key: r.RequestKey, StartNs: r.StartNs, Clock: r.ClockDomain, EndOffNs: end,
		XRequestID: r.XRequestID, ResponseID: r.ResponseID, TraceID: r.TraceID, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens}
}

// Options control matching.
type Options struct {
	// Window is the time-window tolerance (default 2 s: log timestamps of
	// 1 s resolution plus network).
	Window time.Duration
	// NoTime disables time-window matching.
	NoTime bool
}

// Pair is one match: indices into the client and server slices.
type Pair struct {
	Client, Server int
	Quality        string
}

// Offset is the clock-offset estimate between one client clock and one
// server clock domain.
type Offset struct {
	ClientClock string `json:"client_clock"`
	ServerClock string `json:"server_clock"`
	// N pairs had both times.
	N int `json:"n"`
	// MedianNs is the median of server arrival − client send.
	MedianNs int64 `json:"median_ns"`
	// LoNs, HiNs bound the offsets consistent with every pair (LoNs is null
	// when no pair has both ends); Consistent is LoNs ≤ HiNs (the interval
	// is not empty).
	LoNs       *int64 `json:"lo_ns"`
	HiNs       int64  `json:"hi_ns"`
	Consistent bool   `json:"consistent"`
	// ResolutionNs is the coarsest resolution of the pairs' server arrival
	// times (ArrivalResolutionNs; 0: exact), already added into HiNs.
	ResolutionNs int64 `json:"resolution_ns"`
}

// ArrivalResolutionNs is the resolution of a server row's arrival time
// (ns; 0 when exact to the ns or µs of its source): vLLM request-log lines
// are stamped to the second ("MM-DD HH:MM:SS", vllm/logger.py), unless
// KServe-wrapped (milliseconds, recognized by a sub-second part); Ollama's
// GIN line and llama.cpp's 2024 print_timings "timestamp" are seconds (the
// arrival = stamp − duration inherits that); TGI's RFC 3339 stamp has µs.
// Spans, Triton traces, SGLang's received_time and llama.cpp's elapsed
// prefix are finer than the join needs (0). The true arrival lies in
// [ServerArrivalNs, ServerArrivalNs + resolution).
func ArrivalResolutionNs(s *formats.Request) int64 {
	switch s.ServerKind {
	case "vllm.request_log":
		if s.ServerArrivalNs != nil && *s.ServerArrivalNs%1e9 != 0 {
			return 1e6
		}
		return 1e9
	case "ollama.gin", "llamacpp.print_timings":
		return 1e9
	case "tgi.success":
		return 1e3
	}
	return 0
}

// Result is the outcome of Match.
type Result struct {
	Pairs []Pair
	// ByQuality counts pairs by quality.
	ByQuality map[string]int
	// UnmatchedClients, UnmatchedServers count records left without a
	// partner.
	UnmatchedClients, UnmatchedServers int
	// Ambiguous counts id keys shared by several records of one side.
	Ambiguous int
	Offsets   []Offset
	// ThetaNs is the offset used for time matching, per server clock.
	ThetaNs map[string]int64
	Notes   []string
}

var (
	reHex32      = regexp.MustCompile(`^[0-9a-f]{32}$`)
	reTraceparnt = regexp.MustCompile(`^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$`)
	reEngSuffix  = regexp.MustCompile(`-[0-9a-f]{8}$`)
	reIdxSuffix  = regexp.MustCompile(`-\d{1,3}$`)
)

// TraceKey returns the 32-hex trace id of a trace id or traceparent; "" if
// it is neither.
func TraceKey(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if reHex32.MatchString(s) {
		return s
	}
	if m := reTraceparnt.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
}

// IDKeys returns id's match keys, most exact first: the id, then without
// the "chatcmpl-"/"cmpl-" prefix, without vLLM's engine suffix "-<8 hex>"
// and without a per-prompt "-<i>" suffix.
func IDKeys(id string) []string {
	id = strings.TrimSpace(id)
	if id == "" {
		return nil
	}
	keys := []string{id}
	addK := func(k string) {
		if k == "" {
			return
		}
		for _, x := range keys {
			if x == k {
				return
			}
		}
		keys = append(keys, k)
	}
	bases := []string{id}
	for _, p := range []string{"chatcmpl-", "cmpl-"} {
		if strings.HasPrefix(id, p) {
			bases = append(bases, strings.TrimPrefix(id, p))
		}
	}
	for _, b := range bases {
		addK(b)
		if reEngSuffix.MatchString(b) {
			addK(reEngSuffix.ReplaceAllString(b, ""))
		}
		if reIdxSuffix.MatchString(b) {
			addK(reIdxSuffix.ReplaceAllString(b, ""))
		}
	}
	return keys
}

// outTokens is a server row's output count, TGI's derived from its
// integer-division time per token.
func outTokens(s *formats.Request) *int64 {
	if s.OutputTokens != nil {
		return s.OutputTokens
	}
	if s.ServerKind == "tgi.success" && s.ServerInferenceNs != nil && s.ServerTimePerTokenNs != nil && *s.ServerTimePerTokenNs > 0 {
		n := *s.ServerInferenceNs / *s.ServerTimePerTokenNs
		return &n
	}
	return nil
}

// tokens compares counts: compared is true when at least one pair of counts
// was known on both sides, ok false when one disagrees.
func tokens(c *Client, s *formats.Request) (compared, ok bool) {
	ok = true
	if c.InputTokens != nil && s.InputTokens != nil {
		compared = true
		ok = ok && *c.InputTokens == *s.InputTokens
	}
	if o := outTokens(s); c.OutputTokens != nil && o != nil {
		compared = true
		d := *c.OutputTokens - *o
		ok = ok && d >= -1 && d <= 1
	}
	return
}

// Match joins clients with servers.
func Match(clients []Client, servers []formats.Request, opt Options) *Result {
	if opt.Window <= 0 {
		opt.Window = 2 * time.Second
	}
	res := &Result{ByQuality: map[string]int{}, ThetaNs: map[string]int64{}}
	cUsed := make([]bool, len(clients))
	sUsed := make([]bool, len(servers))
	pair := func(ci, si int, q string) {
		cUsed[ci], sUsed[si] = true, true
		res.Pairs = append(res.Pairs, Pair{ci, si, q})
		res.ByQuality[q]++
	}
	// 1. trace ids
	byTrace := map[string][]int{}
	for i := range servers {
		if k := TraceKey(servers[i].TraceID); k != "" {
			byTrace[k] = append(byTrace[k], i)
		}
	}
	for ci := range clients {
		k := TraceKey(clients[ci].TraceID)
		if k == "" {
			continue
		}
		if ss := byTrace[k]; len(ss) == 1 && !sUsed[ss[0]] {
			pair(ci, ss[0], formats.MatchTraceID)
		} else if len(ss) > 1 {
			res.Ambiguous++
		}
	}
	// 2. request ids: index servers by every key, then look clients up by
	// theirs, most exact first
	byKey := map[string][]int{}
	for i := range servers {
		for _, k := range IDKeys(servers[i].ServerRequestID) {
			byKey[k] = append(byKey[k], i)
		}
	}
	for ci := range clients {
		if cUsed[ci] {
			continue
		}
		c := &clients[ci]
	ids:
		for _, id := range []string{c.XRequestID, c.ResponseID} {
			for _, k := range IDKeys(id) {
				ss := byKey[k]
				if len(ss) > 1 {
					res.Ambiguous++
					continue
				}
				if len(ss) == 1 && !sUsed[ss[0]] {
					pair(ci, ss[0], formats.MatchRequestID)
					break ids
				}
			}
		}
	}
	// offsets of the id pairs, per server clock
	theta := map[string][]int64{}
	for _, p := range res.Pairs {
		c, s := &clients[p.Client], &servers[p.Server]
		if c.StartNs != nil && s.ServerArrivalNs != nil {
			theta[s.ServerClockDomain] = append(theta[s.ServerClockDomain], *s.ServerArrivalNs-*c.StartNs)
		}
	}
	for clk, ds := range theta {
		res.ThetaNs[clk] = median(ds)
	}
	// 3. time window
	if !opt.NoTime {
		win := int64(opt.Window)
		type cand struct {
			ci, si   int
			dist     int64
			compared bool
		}
		byClock := map[string][]int{}
		for si := range servers {
			if !sUsed[si] && servers[si].ServerArrivalNs != nil {
				byClock[servers[si].ServerClockDomain] = append(byClock[servers[si].ServerClockDomain], si)
			}
		}
		clocks := make([]string, 0, len(byClock))
		for k := range byClock {
			clocks = append(clocks, k)
		}
		sort.Strings(clocks)
		for _, clk := range clocks {
			ss := byClock[clk]
			th, ok := res.ThetaNs[clk]
			if !ok {
				th, ok = vote(clients, cUsed, servers, ss, win)
				switch {
				case ok:
					res.Notes = append(res.Notes, "server clock "+clk+": offset from a vote over token-compatible candidate pairs (no id-matched pair)")
				case clk == formats.ClockUnix && anyUnixClient(clients):
					th = 0
					res.Notes = append(res.Notes, "server clock unix: no id-matched pair and no token-compatible candidates; client and server wall clocks assumed synchronized (offset 0)")
				default:
					res.Notes = append(res.Notes, "no offset for server clock "+clk+": no id-matched pair and no token-compatible candidates; its records stay unmatched")
					continue
				}
				res.ThetaNs[clk] = th
			}
			var cands []cand
			for _, si := range ss {
				s := &servers[si]
				for ci := range clients {
					c := &clients[ci]
					if cUsed[ci] || c.StartNs == nil {
						continue
					}
					d := *s.ServerArrivalNs - *c.StartNs - th
					if d < -win || d > win {
						continue
					}
					cmp, okT := tokens(c, s)
					if !okT {
						continue
					}
					cands = append(cands, cand{ci, si, abs(d), cmp})
				}
			}
			sort.SliceStable(cands, func(i, j int) bool {
				if cands[i].compared != cands[j].compared {
					return cands[i].compared
				}
				return cands[i].dist < cands[j].dist
			})
			for _, k := range cands {
				if cUsed[k.ci] || sUsed[k.si] {
					continue
				}
				q := formats.MatchTime
				if k.compared {
					q = formats.MatchTimeTokens
				}
				pair(k.ci, k.si, q)
			}
		}
	}
	for _, u := range cUsed {
		if !u {
			res.UnmatchedClients++
		}
	}
	for _, u := range sUsed {
		if !u {
			res.UnmatchedServers++
		}
	}
	sort.Slice(res.Pairs, func(i, j int) bool { return res.Pairs[i].Client < res.Pairs[j].Client })
	res.Offsets = Offsets(clients, servers, res.Pairs)
	return res
}

func anyUnixClient(cs []Client) bool {
	for i := range cs {
		if cs[i].Clock == formats.ClockUnix && cs[i].StartNs != nil {
			return true
		}
	}
	return false
}

// vote estimates θ for server records ss with no id pair: the median of
// the largest set of token-compatible differences within one window.
func vote(clients []Client, cUsed []bool, servers []formats.Request, ss []int, win int64) (int64, bool) {
	var ds []int64
	for _, si := range ss {
		s := &servers[si]
		for ci := range clients {
			c := &clients[ci]
			if cUsed[ci] || c.StartNs == nil || c.Clock == "" {
				continue
			}
			if cmp, ok := tokens(c, s); !cmp || !ok {
				continue
			}
			ds = append(ds, *s.ServerArrivalNs-*c.StartNs)
		}
	}
	if len(ds) == 0 {
		return 0, false
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	best, bi, bj := 0, 0, 0
	j := 0
	for i := range ds {
		for j < len(ds) && ds[j]-ds[i] <= win {
			j++
		}
		if j-i > best {
			best, bi, bj = j-i, i, j
		}
	}
	return median(append([]int64(nil), ds[bi:bj]...)), true
}

// Offsets summarizes server arrival − client send over pairs, per
// (client clock, server clock); see the package doc.
func Offsets(clients []Client, servers []formats.Request, pairs []Pair) []Offset {
	type acc struct {
		ds     []int64
		lo     *int64
		hi     int64
		hiInit bool
		res    int64
	}
	m := map[[2]string]*acc{}
	var keys [][2]string
	for _, p := range pairs {
		c, s := &clients[p.Client], &servers[p.Server]
		if c.StartNs == nil || s.ServerArrivalNs == nil {
			continue
		}
		k := [2]string{c.Clock, s.ServerClockDomain}
		a := m[k]
		if a == nil {
			a = &acc{}
			m[k] = a
			keys = append(keys, k)
		}
		d := *s.ServerArrivalNs - *c.StartNs
		a.ds = append(a.ds, d)
		r := ArrivalResolutionNs(s)
		a.res = max(a.res, r)
		if !a.hiInit || d+r < a.hi {
			a.hi, a.hiInit = d+r, true
		}
		if s.ServerE2ENs != nil && c.EndOffNs != nil {
			lo := *s.ServerArrivalNs + *s.ServerE2ENs - (*c.StartNs + *c.EndOffNs)
			if a.lo == nil || lo > *a.lo {
				a.lo = &lo
			}
		}
	}
	var out []Offset
	for _, k := range keys {
		a := m[k]
		o := Offset{ClientClock: k[0], ServerClock: k[1], N: len(a.ds), MedianNs: median(a.ds), LoNs: a.lo, HiNs: a.hi, ResolutionNs: a.res}
		o.Consistent = a.lo == nil || *a.lo <= a.hi
		out = append(out, o)
	}
	return out
}

func median(xs []int64) int64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]int64(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return int64(math.Round((float64(s[n/2-1]) + float64(s[n/2])) / 2))
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// Apply copies the matched server row's server fields and the match
// quality onto the client row c, and the quality onto the server row.
func Apply(c *formats.Request, s *formats.Request, quality string) {
	c.ServerKind, c.ServerSource, c.ServerRequestID = s.ServerKind, s.ServerSource, s.ServerRequestID
	c.ServerClockDomain, c.ServerArrivalNs = s.ServerClockDomain, s.ServerArrivalNs
	c.ServerQueueNs, c.ServerPrefillNs, c.ServerDecodeNs, c.ServerInferenceNs = s.ServerQueueNs, s.ServerPrefillNs, s.ServerDecodeNs, s.ServerInferenceNs
	c.ServerTTFTNs, c.ServerE2ENs, c.ServerTimePerTokenNs = s.ServerTTFTNs, s.ServerE2ENs, s.ServerTimePerTokenNs
	c.ServerFinishReason = s.ServerFinishReason
	c.MatchQuality = quality
	s.MatchQuality = quality
}
