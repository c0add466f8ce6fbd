package join

import (
	"slices"
	"testing"
	"time"

	"github.com/tokentrace/tokentrace/formats"
)

func p(v int64) *int64 { return &v }

func TestIDKeys(t *testing.T) {
	for id, want := range map[string][]string{
		"chatcmpl-a269fdcb7c6ce890-a8a65d16": {"chatcmpl-a269fdcb7c6ce890-a8a65d16", "chatcmpl-a269fdcb7c6ce890", "a269fdcb7c6ce890-a8a65d16", "a269fdcb7c6ce890"},
		"cmpl-abc-0":                         {"cmpl-abc-0", "cmpl-abc", "abc-0", "abc"},
		"req-0001":                           {"req-0001"},
		"":                                   nil,
	} {
		if got := IDKeys(id); !slices.Equal(got, want) {
			t.Errorf("IDKeys(%q) = %q, want %q", id, got, want)
		}
	}
	if TraceKey("00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01") != "0af7651916cd43dd8448eb211c80319c" ||
		TraceKey("0af7651916cd43dd8448eb211c80319c") != "0af7651916cd43dd8448eb211c80319c" || TraceKey("corr-1") != "" {
		t.Error("TraceKey")
	}
}

// server builds a server row.
func server(id, trace string, arrival int64, in, out int64) formats.Request {
	return formats.Request{ServerKind: "vllm.otlp_span", ServerRequestID: id, TraceID: trace, ServerClockDomain: "unix",
		ServerArrivalNs: p(arrival), ServerE2ENs: p(100), InputTokens: p(in), OutputTokens: p(out)}
}

func TestMatchOrderAndOffset(t *testing.T) {
	const s = int64(1_000_000_000_000)
	clients := []Client{
		{StartNs: p(s), Clock: "unix", TraceID: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", EndOffNs: p(110)},
		{StartNs: p(s + 1e9), Clock: "unix", XRequestID: "abc", EndOffNs: p(110)},
		{StartNs: p(s + 2e9), Clock: "unix", ResponseID: "chatcmpl-zzz", EndOffNs: p(110)},
		{StartNs: p(s + 3e9), Clock: "unix", InputTokens: p(40), OutputTokens: p(8), EndOffNs: p(110)}, // time + tokens
		{StartNs: p(s + 3e9 + 10), Clock: "unix", InputTokens: p(41), OutputTokens: p(8)},              // tokens disagree
		{StartNs: p(s + 9e9), Clock: "unix"},                                                           // nothing near
	}
	servers := []formats.Request{
		server("x1", "0af7651916cd43dd8448eb211c80319c", s+5, 1, 1),
		server("chatcmpl-abc-1a2b3c4d", "", s+1e9+5, 1, 1), // engine suffix
		server("chatcmpl-zzz", "", s+2e9+5, 1, 1),
		server("other", "", s+3e9+5, 40, 9), // output within ±1
		server("lonely", "", s+50e9, 1, 1),
	}
	res := Match(clients, servers, Options{Window: time.Second})
	want := []Pair{{0, 0, "trace_id"}, {1, 1, "request_id"}, {2, 2, "request_id"}, {3, 3, "time_tokens"}}
	if !slices.Equal(res.Pairs, want) {
		t.Fatalf("pairs %v, want %v", res.Pairs, want)
	}
	if res.UnmatchedClients != 2 || res.UnmatchedServers != 1 {
		t.Errorf("unmatched %d/%d", res.UnmatchedClients, res.UnmatchedServers)
	}
	if len(res.Offsets) != 1 {
		t.Fatalf("offsets %v", res.Offsets)
	}
	o := res.Offsets[0]
	// d = 5 ns for every pair; lo = max(arrival + 100 − (start + 110)) = −5
	if o.N != 4 || o.MedianNs != 5 || o.HiNs != 5 || o.LoNs == nil || *o.LoNs != -5 || !o.Consistent {
		t.Errorf("offset %+v lo %v", o, *o.LoNs)
	}
}

// Without any id pair, the offset comes from a vote: a server on another
// clock (llama.cpp elapsed since start) 1 h ahead of the client.
func TestMatchVote(t *testing.T) {
	const off = int64(3600e9)
	var clients []Client
	var servers []formats.Request
	for i := int64(0); i < 4; i++ {
		clients = append(clients, Client{StartNs: p(i * 5e9), Clock: "unix", InputTokens: p(10 + i), OutputTokens: p(20 + i)})
		s := server("", "", i*5e9+off+3e6, 10+i, 20+i)
		s.ServerClockDomain = "elapsed"
		servers = append(servers, s)
	}
	res := Match(clients, servers, Options{})
	if len(res.Pairs) != 4 || res.ByQuality["time_tokens"] != 4 || res.ThetaNs["elapsed"] != off+3e6 {
		t.Fatalf("pairs %v theta %v notes %v", res.Pairs, res.ThetaNs, res.Notes)
	}
	for _, pr := range res.Pairs {
		if pr.Client != pr.Server {
			t.Errorf("pair %v", pr)
		}
	}
}

// An id shared by two server records is ambiguous and not used.
func TestMatchAmbiguous(t *testing.T) {
	clients := []Client{{XRequestID: "dup"}}
	servers := []formats.Request{server("chatcmpl-dup", "", 0, 1, 1), server("dup", "", 0, 1, 1)}
	res := Match(clients, servers, Options{NoTime: true})
	if len(res.Pairs) != 0 || res.Ambiguous == 0 || res.UnmatchedServers != 2 {
		t.Fatalf("%+v", res)
	}
}

// TGI has no output count: it is inference_time / time_per_token.
func TestTGITokens(t *testing.T) {
	s := formats.Request{ServerKind: "tgi.success", ServerInferenceNs: p(355849981), ServerTimePerTokenNs: p(14827082)}
	if n := outTokens(&s); n == nil || *n != 24 {
		t.Fatalf("tokens %v", n)
	}
}

// TGI Success records (no id, output count = inference / time per token)
// are matched by vote on token-compatible pairs; a wall-clock server with
// no counts at all falls back to synchronized clocks.
func TestMatchTGIAndSynchronized(t *testing.T) {
	clients := []Client{
		{StartNs: p(10e9), Clock: "unix", OutputTokens: p(24)},
		{StartNs: p(20e9), Clock: "unix", OutputTokens: p(10)},
	}
	tgi := func(arrival, inf, tpt int64) formats.Request {
		return formats.Request{ServerKind: "tgi.success", ServerClockDomain: "unix", ServerArrivalNs: p(arrival), ServerInferenceNs: p(inf), ServerTimePerTokenNs: p(tpt)}
	}
	servers := []formats.Request{tgi(20e9+7e6, 500e6, 50e6), tgi(10e9+5e6, 355849981, 14827082)}
	res := Match(clients, servers, Options{})
	if want := []Pair{{0, 1, "time_tokens"}, {1, 0, "time_tokens"}}; !slices.Equal(res.Pairs, want) {
		t.Fatalf("pairs %v, want %v (notes %v)", res.Pairs, want, res.Notes)
	}
	gin := []formats.Request{{ServerKind: "ollama.gin", ServerClockDomain: "unix", ServerArrivalNs: p(10e9 + 3e6)}}
	res = Match(clients, gin, Options{})
	if len(res.Pairs) != 1 || res.Pairs[0] != (Pair{0, 0, "time"}) || len(res.Notes) != 1 {
		t.Fatalf("pairs %v notes %v", res.Pairs, res.Notes)
	}
}

// Server arrival times of 1 s resolution (vLLM's request log: the second
// is truncated) widen the upper bound by the resolution: the true arrival
// lies in [logged, logged + 1 s). The case of
// testdata/joined/aiperf-vllm/vllm-request.log: sends at T0, T0 + 0.5 s,
// T0 + 1 s (client and server on one clock, 2 ms network); logged
// arrivals T0, T0, T0 + 1 s, so d = 0, −500, 0 ms. Before, θ ≤ min d =
// −500 ms excluded the true offset 0; now θ ≤ min(d + 1 s) = +500 ms.
func TestOffsetsResolution(t *testing.T) {
	const t0 = int64(1790000000000000000)
	var clients []Client
	var servers []formats.Request
	var pairs []Pair
	for i, x := range []struct{ send, logged int64 }{{t0, t0}, {t0 + 500e6, t0}, {t0 + 1e9, t0 + 1e9}} {
		clients = append(clients, Client{StartNs: p(x.send), Clock: "unix"})
		servers = append(servers, formats.Request{ServerKind: "vllm.request_log", ServerClockDomain: "local", ServerArrivalNs: p(x.logged)})
		pairs = append(pairs, Pair{i, i, "request_id"})
	}
	offs := Offsets(clients, servers, pairs)
	if len(offs) != 1 {
		t.Fatalf("%+v", offs)
	}
	o := offs[0]
	if o.N != 3 || o.MedianNs != 0 || o.HiNs != 500e6 || o.LoNs != nil || o.ResolutionNs != 1e9 || !o.Consistent {
		t.Errorf("offset %+v", o)
	}
	// a KServe-wrapped line carries milliseconds (1 ms resolution): d = 2 ms
	// bounds θ ≤ 2 + 1 ms, tighter than the whole-second pairs' 0 + 1 s;
	// ResolutionNs is the coarsest (1 s)
	servers[1].ServerArrivalNs = p(t0 + 502e6)
	if o := Offsets(clients, servers, pairs)[0]; o.ResolutionNs != 1e9 || o.HiNs != 3e6 {
		t.Errorf("mixed resolution: %+v", o)
	}
	for _, c := range []struct {
		s    formats.Request
		want int64
	}{
		{formats.Request{ServerKind: "vllm.request_log", ServerArrivalNs: p(t0)}, 1e9},
		{formats.Request{ServerKind: "vllm.request_log", ServerArrivalNs: p(t0 + 901e6)}, 1e6},
		{formats.Request{ServerKind: "ollama.gin", ServerArrivalNs: p(t0 + 123)}, 1e9},
		{formats.Request{ServerKind: "llamacpp.print_timings", ServerArrivalNs: p(t0 + 123)}, 1e9},
		{formats.Request{ServerKind: "tgi.success", ServerArrivalNs: p(t0 + 123)}, 1e3},
		{formats.Request{ServerKind: "vllm.otlp_span", ServerArrivalNs: p(t0 + 123)}, 0},
	} {
		if got := ArrivalResolutionNs(&c.s); got != c.want {
			t.Errorf("%s %d: resolution %d, want %d", c.s.ServerKind, *c.s.ServerArrivalNs, got, c.want)
		}
	}
}

// Apply copies every server field onto the client row, the finish reason
// included, and the quality onto both rows.
func TestApplyCopiesServerFields(t *testing.T) {
	arr, q := int64(5), int64(7)
	s := formats.Request{ServerKind: "vllm.otlp_span", ServerSource: "f:record 1 span 1", ServerRequestID: "chatcmpl-1",
		ServerClockDomain: formats.ClockUnix, ServerArrivalNs: &arr, ServerQueueNs: &q, ServerFinishReason: "length"}
	var c formats.Request
	Apply(&c, &s, formats.MatchRequestID)
	if c.ServerKind != s.ServerKind || c.ServerSource != s.ServerSource || c.ServerRequestID != "chatcmpl-1" ||
		c.ServerArrivalNs != &arr || c.ServerQueueNs != &q || c.ServerFinishReason != "length" ||
		c.MatchQuality != formats.MatchRequestID || s.MatchQuality != formats.MatchRequestID {
		t.Errorf("client row after Apply: %+v", c)
	}
}
