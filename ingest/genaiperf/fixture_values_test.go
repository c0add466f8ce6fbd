package genaiperf

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// wantReq holds hand-computed values for one request of a fixture. Offsets
// are in ms from the request start; -1 means null.
type wantReq struct {
	status                                 string
	first, firstContent, second, last, end float64
	msgs, tokenMsgs                        int64
	out                                    int64 // -1: null
	outSrc                                 string
	in, reasoning                          int64 // -1: null
	maxTokens                              int64 // -1: null
	errText                                string
	errCode                                int64  // 0: null
	kinds                                  string // event kinds, space-separated; "" to skip
	reads                                  string // event read indices, space-separated; "" to skip
}

// TestFixtureValues checks each hand-made fixture against values computed
// by hand from its definition in fixtures_test.go.
func TestFixtureValues(t *testing.T) {
	const u, cc = formats.SourceServerUsage, formats.SourceChunkCount
	tests := map[string][]wantReq{
		"vllm-chat-stream": {
			{status: "ok", first: 150, firstContent: 150, second: 180, last: 210, end: 242, msgs: 7, tokenMsgs: 3,
				out: 3, outSrc: u, in: 12, reasoning: -1, maxTokens: 16,
				kinds: "role content content content empty usage done", reads: "0 1 2 3 4 5 6"},
			{status: "ok", first: 130, firstContent: 130, second: 170, last: 170, end: 172, msgs: 5, tokenMsgs: 2,
				out: 2, outSrc: cc, in: -1, reasoning: -1, maxTokens: 16},
		},
		"split-and-merged-reads": {
			{status: "ok", first: 100, firstContent: 100, second: 160, last: 160, end: 190, msgs: 7, tokenMsgs: 3,
				out: 3, outSrc: u, in: 7, reasoning: -1, maxTokens: 8,
				kinds: "role content content content empty usage done", reads: "0 0 2 2 3 3 3"},
			{status: "ok", first: 300, firstContent: 300, second: 350, last: 350, end: 400, msgs: 4, tokenMsgs: 2,
				out: 2, outSrc: cc, in: -1, reasoning: -1, maxTokens: 8,
				kinds: "other content content done", reads: "0 1 2 3"},
		},
		"reasoning-then-content": {
			{status: "ok", first: 200, firstContent: 900, second: 250, last: 900, end: 952, msgs: 7, tokenMsgs: 3,
				out: 40, outSrc: u, in: 20, reasoning: 35, maxTokens: 64,
				kinds: "role reasoning reasoning content empty usage done"},
		},
		"error-mid-stream": {
			{status: "error", first: 200, firstContent: 200, second: -1, last: 200, end: 300, msgs: 3, tokenMsgs: 1,
				out: 1, outSrc: cc, in: -1, reasoning: -1, maxTokens: 16, errText: "upstream connection reset", errCode: 502,
				kinds: "role content error"},
			{status: "error", first: -1, firstContent: -1, second: -1, last: -1, end: 40, msgs: 1, tokenMsgs: 0,
				out: -1, in: -1, reasoning: -1, maxTokens: 16, errText: "Rate limit exceeded", errCode: 429, kinds: "error"},
			{status: "error", first: -1, firstContent: -1, second: -1, last: -1, end: 30, msgs: 1, tokenMsgs: 0,
				out: 0, outSrc: cc, in: -1, reasoning: -1, maxTokens: 16,
				errText: "This model's maximum context length is 4096 tokens", errCode: 400, kinds: "error"},
		},
		// a tool call is generated output: ok, the first call fragment is
		// the first token, the usage's 8 tokens the count
		"tool-call-only": {
			{status: "ok", first: 150, firstContent: -1, second: 170, last: 190, end: 202, msgs: 7, tokenMsgs: 3,
				out: 8, outSrc: u, in: 16, reasoning: -1, maxTokens: 16, kinds: "role tool_call tool_call tool_call empty usage done"},
		},
		"no-content": {
			{status: "empty", first: -1, firstContent: -1, second: -1, last: -1, end: 152, msgs: 4, tokenMsgs: 0,
				out: 0, outSrc: u, in: 5, reasoning: -1, maxTokens: 16, kinds: "role empty usage done"},
			{status: "empty", first: -1, firstContent: -1, second: -1, last: -1, end: 95, msgs: 2, tokenMsgs: 0,
				out: 0, outSrc: cc, in: -1, reasoning: -1, maxTokens: 16, kinds: "role done"},
		},
		"completions-stream": {
			{status: "ok", first: 100, firstContent: 100, second: 140, last: 180, end: 201, msgs: 5, tokenMsgs: 3,
				out: 3, outSrc: cc, in: -1, reasoning: -1, maxTokens: 3, kinds: "content content content empty done"},
		},
		"truncated": {
			{status: "ok", first: 150, firstContent: 150, second: -1, last: 150, end: 160, msgs: 3, tokenMsgs: 1,
				out: 1, outSrc: cc, in: -1, reasoning: -1, maxTokens: 4},
			{status: "ok", first: 150, firstContent: 150, second: -1, last: 150, end: 160, msgs: 3, tokenMsgs: 1,
				out: 1, outSrc: cc, in: -1, reasoning: -1, maxTokens: 4},
		},
		"two-experiments": {
			{status: "ok", first: 100, firstContent: 100, second: 120, last: 120, end: 120, msgs: 4, tokenMsgs: 2,
				out: 2, outSrc: cc, in: -1, reasoning: -1, maxTokens: 4, reads: "0 0 1 1"},
			{status: "ok", first: 110, firstContent: 110, second: -1, last: 110, end: 111, msgs: 3, tokenMsgs: 1,
				out: 1, outSrc: cc, in: -1, reasoning: -1, maxTokens: 4},
			{status: "ok", first: 300, firstContent: 300, second: -1, last: 300, end: 350, msgs: 2, tokenMsgs: 1,
				out: 1, outSrc: cc, in: -1, reasoning: -1, maxTokens: 4},
			{status: "ok", first: 310, firstContent: 310, second: 360, last: 360, end: 361, msgs: 3, tokenMsgs: 2,
				out: 2, outSrc: cc, in: -1, reasoning: -1, maxTokens: 4},
		},
		"triton-text-output": {
			{status: "ok", first: 100, firstContent: 100, second: 130, last: 170, end: 171, msgs: 4, tokenMsgs: 3,
				out: 3, outSrc: cc, in: -1, reasoning: -1, maxTokens: 8, kinds: "content content content empty"},
		},
		"classic-100-tokens": {
			{status: "ok", first: 500, firstContent: 500, second: 500 + 700.0/99, last: 1200, end: 1201, msgs: 104, tokenMsgs: 100,
				out: 100, outSrc: u, in: 25, reasoning: -1, maxTokens: 100},
		},
	}
	for name, reqs := range tests {
		t.Run(name, func(t *testing.T) {
			res := importCase(t, filepath.Join("testdata", name), ingest.Options{})
			if len(res.Requests) != len(reqs) {
				t.Fatalf("%d requests, want %d", len(res.Requests), len(reqs))
			}
			ev := res.Events
			for i, w := range reqs {
				r := res.Requests[i]
				n := int(r.MessageCount)
				checkRequest(t, fmt.Sprintf("request %d", i), &r, w, ev[:n])
				ev = ev[n:]
			}
		})
	}
}

func checkRequest(t *testing.T, where string, r *formats.Request, w wantReq, events []formats.Event) {
	t.Helper()
	offsets := []struct {
		name string
		got  *int64
		want float64
	}{
		{"first_token", r.FirstTokenOffsetNs, w.first},
		{"first_content", r.FirstContentOffsetNs, w.firstContent},
		{"second_token", r.SecondTokenOffsetNs, w.second},
		{"last_token", r.LastTokenOffsetNs, w.last},
		{"stream_end", r.StreamEndOffsetNs, w.end},
	}
	for _, o := range offsets {
		if !offsetIs(o.got, o.want) {
			t.Errorf("%s: %s_offset_ns = %s, want %v ms", where, o.name, show(o.got), o.want)
		}
	}
	if r.Status != w.status || r.MessageCount != w.msgs || r.TokenMessageCount != w.tokenMsgs {
		t.Errorf("%s: status %s, messages %d, token messages %d; want %s, %d, %d", where, r.Status, r.MessageCount, r.TokenMessageCount, w.status, w.msgs, w.tokenMsgs)
	}
	if !intIs(r.OutputTokens, w.out) || r.OutputTokensSource != w.outSrc {
		t.Errorf("%s: output_tokens %s (%s), want %d (%s)", where, show(r.OutputTokens), r.OutputTokensSource, w.out, w.outSrc)
	}
	if !intIs(r.InputTokens, w.in) || !intIs(r.ReasoningTokens, w.reasoning) || !intIs(r.MaxTokens, w.maxTokens) {
		t.Errorf("%s: input %s reasoning %s max_tokens %s; want %d %d %d", where, show(r.InputTokens), show(r.ReasoningTokens), show(r.MaxTokens), w.in, w.reasoning, w.maxTokens)
	}
	if r.ErrorText != w.errText || (w.errCode == 0) != (r.ErrorCode == nil) || (r.ErrorCode != nil && *r.ErrorCode != w.errCode) {
		t.Errorf("%s: error %q code %s, want %q %d", where, r.ErrorText, show(r.ErrorCode), w.errText, w.errCode)
	}
	var kinds, reads []string
	for i, e := range events {
		if e.RequestKey != r.RequestKey || e.RunID != r.RunID || int(e.Index) != i {
			t.Errorf("%s: event %d keyed %s/%d index %d", where, i, e.RunID, e.RequestKey, e.Index)
		}
		kinds = append(kinds, e.Kind)
		reads = append(reads, fmt.Sprint(e.ReadIndex))
	}
	if w.kinds != "" && strings.Join(kinds, " ") != w.kinds {
		t.Errorf("%s: kinds %q, want %q", where, strings.Join(kinds, " "), w.kinds)
	}
	if w.reads != "" && strings.Join(reads, " ") != w.reads {
		t.Errorf("%s: read indices %q, want %q", where, strings.Join(reads, " "), w.reads)
	}
}

// offsetIs compares an ns offset with ms (-1: null), to the ns.
func offsetIs(got *int64, wantMs float64) bool {
	if wantMs < 0 {
		return got == nil
	}
	return got != nil && *got == int64(wantMs*1e6)
}

func intIs(got *int64, want int64) bool {
	if want < 0 {
		return got == nil
	}
	return got != nil && *got == want
}

func show(p *int64) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

// TestFixtureRuns checks the Run rows of the fixtures.
func TestFixtureRuns(t *testing.T) {
	t.Run("two experiments", func(t *testing.T) {
		res := importCase(t, "testdata/two-experiments", ingest.Options{})
		if len(res.Runs) != 2 {
			t.Fatalf("%d runs", len(res.Runs))
		}
		r1, r2 := res.Runs[0], res.Runs[1]
		if r1.RunID != "two-experiments" || r2.RunID != "two-experiments#2" ||
			*r1.Concurrency != 1 || *r2.Concurrency != 2 || r1.RequestCount != 2 || r2.RequestCount != 2 {
			t.Errorf("runs %+v\n%+v", r1, r2)
		}
		if res.Requests[2].RunID != "two-experiments#2" || res.Requests[2].RequestKey != 0 {
			t.Errorf("request of experiment 1: %+v", res.Requests[2])
		}
		if len(r1.Reported) != 0 || reported(r2, "request_latency", "avg") == nil {
			t.Errorf("summary attached to the wrong run: %d / %d stats", len(r1.Reported), len(r2.Reported))
		}
		if !hasNote(r1, "summary statistics belong to run two-experiments#2") || !hasNote(r1, "window_boundaries: 2 (1 measurement window)") {
			t.Errorf("notes %q", r1.Notes)
		}
		if r1.Tokenizer != "Qwen/Qwen2-7B" || r1.Model != "Qwen-v" || !*r1.Streaming {
			t.Errorf("config fields %+v", r1)
		}
	})
	t.Run("truncated", func(t *testing.T) {
		res := importCase(t, "testdata/truncated", ingest.Options{})
		run := res.Runs[0]
		if !run.Truncated || run.RequestCount != 2 || run.ToolVersion != "" || run.Endpoint != "" {
			t.Errorf("run %+v", run)
		}
		if !hasNote(run, "file ends at byte 2079 inside experiment 0, request 2 (begun at byte 1753; the 2 complete requests before it imported)") {
			t.Errorf("notes %q", run.Notes)
		}
		if len(res.warns) != 1 || !strings.Contains(res.warns[0], "truncated: file ends at byte") {
			t.Errorf("warnings %q", res.warns)
		}
	})
	t.Run("triton", func(t *testing.T) {
		res := importCase(t, "testdata/triton-text-output", ingest.Options{})
		run := res.Runs[0]
		if run.Streaming == nil || !*run.Streaming || run.Endpoint != "" || run.Model != "" || len(run.SourceFiles) != 1 {
			t.Errorf("run %+v", run)
		}
		if e := res.Events[1]; e.Text == nil || *e.Text != " like" || e.Bytes != 5 || e.OffsetNs != 130e6 {
			t.Errorf("event %+v", e)
		}
	})
	t.Run("vLLM stream", func(t *testing.T) {
		res := importCase(t, "testdata/vllm-chat-stream", ingest.Options{})
		run := res.Runs[0]
		if run.Streaming == nil || !*run.Streaming || run.Model != "Qwen-v" || run.ToolVersion != "2.54.0" ||
			run.LoadMode != "concurrency" || run.ConfigJSON != "" || len(run.Reported) != 0 {
			t.Errorf("run %+v", run)
		}
		r := res.Requests[0]
		if r.ResponseID != "cmpl-840312ff78664572bb504e606140b952" || *r.StartNs != t0 {
			t.Errorf("request %+v", r)
		}
		e := res.Events[4] // the finish chunk
		if e.FinishReason != "stop" || e.Text != nil || !e.HasChoices || e.Bytes != int32(len(finishChunk("stop"))) {
			t.Errorf("finish event %+v", e)
		}
		if res.Events[5].HasChoices {
			t.Error("usage chunk has_choices")
		}
	})
	t.Run("completions request rate", func(t *testing.T) {
		run := importCase(t, "testdata/completions-stream", ingest.Options{}).Runs[0]
		if run.LoadMode != "request_rate" || run.RequestRateRPS == nil || *run.RequestRateRPS != 2.5 || run.Concurrency != nil || run.Endpoint != "v1/completions" {
			t.Errorf("run %+v", run)
		}
	})
}
