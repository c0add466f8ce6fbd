package analyze

import (
	"math"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
)

// Server-side events (kind "server.*", ingest/serverlog) are no messages
// the client received: under every convention a server row with them gets
// no TTFT, E2E, message or token count from them, and a client row's
// metrics are the same with or without server events mixed in.
func TestServerEventsIgnored(t *testing.T) {
	srv := func(kind string, off int64, i int32) formats.Event {
		return formats.Event{RunID: "s", Index: i, ReadIndex: i, OffsetNs: off, Kind: kind}
	}
	server := &formats.Request{RunID: "s", Status: formats.StatusOK, ServerKind: "triton.trace", ServerClockDomain: formats.ClockMonotonic,
		ServerArrivalNs: ptrI(5_000), ServerTTFTNs: ptrI(3_000_475)}
	sev := []formats.Event{srv("server.request_start", 0, 0), srv("server.compute_start", 299_754, 1),
		srv("server.infer_response_complete", 3_000_475, 2), srv("server.http_send_end", 3_125_547, 3)}

	start := int64(1_700_000_000_000_000_000)
	client := &formats.Request{RunID: "c", Status: formats.StatusOK, StartNs: &start, ClockDomain: formats.ClockUnix,
		FirstTokenOffsetNs: ptrI(20_000_000), SecondTokenOffsetNs: ptrI(30_000_000), LastTokenOffsetNs: ptrI(50_000_000),
		StreamEndOffsetNs: ptrI(51_000_000), OutputTokens: ptrI(3), OutputTokensSource: formats.SourceServerUsage,
		MessageCount: 5, TokenMessageCount: 3}
	txt := "a"
	cev := []formats.Event{
		{RunID: "c", Index: 0, ReadIndex: 0, OffsetNs: 10_000_000, Kind: formats.KindRole, HasChoices: true},
		{RunID: "c", Index: 1, ReadIndex: 1, OffsetNs: 20_000_000, Kind: formats.KindContent, HasChoices: true, Text: &txt},
		{RunID: "c", Index: 2, ReadIndex: 2, OffsetNs: 30_000_000, Kind: formats.KindContent, HasChoices: true, Text: &txt},
		{RunID: "c", Index: 3, ReadIndex: 3, OffsetNs: 50_000_000, Kind: formats.KindContent, HasChoices: true, Text: &txt},
		{RunID: "c", Index: 4, ReadIndex: 4, OffsetNs: 51_000_000, Kind: formats.KindDone},
	}
	// the same client events with server events interleaved (as a joined
	// table set could present them), read indices kept distinct
	var mixed []formats.Event
	for i, e := range cev {
		s := srv("server.queue_start", e.OffsetNs-1_000, int32(100+i))
		s.RunID, s.ReadIndex = "c", int32(100+i)
		mixed = append(mixed, s, e)
	}

	same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
	for _, c := range tools.Profiles() {
		m, _ := ComputeRequest(c, server, sev, nil, nil)
		if !math.IsNaN(m.TTFTMs) || !math.IsNaN(m.E2EMs) || m.Messages != 0 || !math.IsNaN(m.OutputTokens) {
			t.Errorf("%s: server row with server events: TTFT %v E2E %v messages %d output tokens %v; want NaN, NaN, 0, NaN",
				c.Name, m.TTFTMs, m.E2EMs, m.Messages, m.OutputTokens)
		}
		want, _ := ComputeRequest(c, client, cev, nil, nil)
		got, _ := ComputeRequest(c, client, mixed, nil, nil)
		if !same(got.TTFTMs, want.TTFTMs) || !same(got.E2EMs, want.E2EMs) || !same(got.TPOTMs, want.TPOTMs) ||
			!same(got.ITLMeanMs, want.ITLMeanMs) || !same(got.OutputTokens, want.OutputTokens) || got.Messages != want.Messages ||
			got.OutputSource != want.OutputSource {
			t.Errorf("%s: client metrics with server events %+v, without %+v", c.Name, got, want)
		}
		if c.Name == Canonical.Name && (want.TTFTMs != 20 || want.Messages != 5) {
			t.Errorf("canonical client TTFT %v ms, messages %d; want 20, 5", want.TTFTMs, want.Messages)
		}
	}

	// through the Analyzer (Sink) too
	a := NewAnalyzer(Canonical)
	if err := a.Request(server, sev); err != nil {
		t.Fatal(err)
	}
	if m := a.acc("s").per[0].reqs[0]; !math.IsNaN(m.TTFTMs) || m.Messages != 0 {
		t.Errorf("Analyzer: server row TTFT %v messages %d", m.TTFTMs, m.Messages)
	}
}

func ptrI(v int64) *int64 { return &v }
