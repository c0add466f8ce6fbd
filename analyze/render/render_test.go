package render

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/stats"
)

// TestWriteServerJoin: the decomposition table, its tail line and its
// notes, for the decomposition of analyze's TestDecomposer (remainders 30,
// 50 and −20 ms; the 300 ms TTFT is the tail, driven by its 200 ms queue).
func TestWriteServerJoin(t *testing.T) {
	sum := func(xs ...float64) stats.Summary { return stats.Summarize(xs, nil, stats.Linear, 1) }
	d := &analyze.Decomposition{N: 3, NotDecomposable: 2, NegativeRemainder: 1,
		TTFTMs: sum(100, 300, 80), QueueMs: sum(10, 200, 30), PrefillMs: sum(60, 50, 70), RemainderMs: sum(30, 50, -20),
		E2EMs: sum(120, 320, 100), DecodeMs: sum(20, 20, 20), ServerDecodeMs: sum(20, 20, 20),
		Tail: &analyze.TailShare{N: 1, ThresholdMs: 296, QueueShare: analyze.F(200.0 / 300), PrefillShare: analyze.F(50.0 / 300), RemainderShare: analyze.F(50.0 / 300), Driver: "queue"}}
	var buf bytes.Buffer
	writeServerJoin(&buf, &analyze.ServerJoin{Matched: map[string]int{"request_id": 5}, ClientRequests: 6, ServerRecords: 5, Decomposition: d}, false)
	for _, s := range []string{"remainder", "TTFT tail (1 requests ≥ P99 296.0 ms): queue 66.7%, prefill 16.7%, remainder 16.7% of their TTFT — driven by queue",
		"1 of 3 decomposed requests have a negative remainder", "2 joined requests not decomposed"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("rendering lacks %q:\n%s", s, buf.String())
		}
	}
}

// The clock-offset lines say what each number is: the median of server
// arrival − client send is the offset plus the network delay (it may lie
// outside the interval of offsets; that is not an inconsistency), the
// interval's upper bound includes the server stamps' resolution, and an
// empty interval is flagged. Values: the join of
// testdata/joined/aiperf-vllm/vllm-request.log (d = 0, −500, 0 ms, 1 s
// stamps: θ ≤ 500 ms, no lower bound) and of vllm-spans.json (d = 2 ms,
// server end = client end − 2 ms: −2 ≤ θ ≤ 2 ms).
func TestWriteServerJoinClockOffsets(t *testing.T) {
	sj := &analyze.ServerJoin{Matched: map[string]int{"request_id": 3}, ClientRequests: 5, ServerRecords: 3, ClockOffsets: []analyze.ClockOffset{
		{ClientClock: "unix", ServerClock: "local", N: 3, MedianMs: 0, LoMs: analyze.F(math.NaN()), HiMs: 500, ResolutionMs: 1000, Consistent: true},
		{ClientClock: "unix", ServerClock: "unix", N: 4, MedianMs: 2, LoMs: -2, HiMs: 2, Consistent: true},
		{ClientClock: "unix", ServerClock: "monotonic", N: 2, MedianMs: 7, LoMs: 5, HiMs: 3, Consistent: false},
	}}
	var buf bytes.Buffer
	writeServerJoin(&buf, sj, false)
	out := buf.String()
	for _, s := range []string{
		"clock unix→local, 3 pairs: server arrival − client send median 0 ms (the clock offset plus the client→server delay)",
		"offsets θ = server clock − client clock allowed by every pair: θ ≤ 500.0 ms (no lower bound: no pair has the server's end time); the bound includes the server stamps' 1000 ms resolution",
		"clock unix→unix, 4 pairs: server arrival − client send median 2.000 ms",
		"allowed by every pair: -2.000 ≤ θ ≤ 2.000 ms\n",
		"allowed by every pair: NONE (5.000 > 3.000 ms): no single offset fits every pair — the clocks drifted, or a pair is wrong",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("rendering lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "consistent") {
		t.Errorf("rendering still says consistent:\n%s", out)
	}
}

func TestCleanUntrustedStrings(t *testing.T) {
	in := "<script>x</script>|\x1b[31mRED\nFAKE == run pwned ==\r" + string(make([]byte, 0))
	got := clean(in, false)
	if got != "<script>x</script>|?[31mRED?FAKE == run pwned ==?" {
		t.Errorf("text: %q", got)
	}
	if md := clean("<b>|x", true); md != `\<b\>\|x` {
		t.Errorf("markdown: %q", md)
	}
	long := clean(string(make([]rune, 500)), false)
	if n := len([]rune(long)); n != 120 || !strings.HasSuffix(long, "…") {
		t.Errorf("long string cut to %d runes: %q", n, long)
	}
}
