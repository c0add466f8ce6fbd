package genaiperf

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

func collect(t *testing.T, path string) *formats.Collector {
	t.Helper()
	var c formats.Collector
	if err := ingest.ImportFile(New(), path, ingest.Options{Warn: func(string) {}}, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

// TestSpecDecodingAndCache: vLLM 0.28+ puts the request's
// speculative-decoding counts in the last SSE chunk as root
// metrics.speculative_decoding (PR #48915: num_spec_steps,
// num_draft_tokens, num_accepted_draft_tokens), and the usage chunk's
// prompt_tokens_details.cached_tokens says how much of the prompt came
// from the prefix cache. GenAI-Perf keeps the chunks as the server sent
// them: the classic fixture's usage chunk, given both, yields the
// request's columns (40 steps, 120 drafted, 59 accepted; 16 of 25 prompt
// tokens cached).
func TestSpecDecodingAndCache(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "classic-100-tokens", "profile_export.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	outs := doc["experiments"].([]any)[0].(map[string]any)["requests"].([]any)[0].(map[string]any)["response_outputs"].([]any)
	patched := false
	for _, o := range outs {
		m := o.(map[string]any)
		events := strings.Split(m["response"].(string), "\n\n")
		for i, ev := range events {
			data, ok := strings.CutPrefix(ev, "data: ")
			if !ok || !strings.Contains(data, `"usage"`) {
				continue
			}
			var chunk map[string]any
			if err := json.Unmarshal([]byte(data), &chunk); err != nil {
				t.Fatal(err)
			}
			chunk["usage"].(map[string]any)["prompt_tokens_details"] = map[string]any{"cached_tokens": 16}
			chunk["metrics"] = map[string]any{"speculative_decoding": map[string]any{
				"num_spec_steps": 40, "num_draft_tokens": 120, "num_accepted_draft_tokens": 59, "mean_acceptance_length": 2.475, "draft_acceptance_rate": 59.0 / 120}}
			b, _ := json.Marshal(chunk)
			events[i] = "data: " + string(b)
			patched = true
		}
		m["response"] = strings.Join(events, "\n\n")
	}
	if !patched {
		t.Fatal("no usage chunk in the fixture")
	}
	out, _ := json.Marshal(doc)
	path := filepath.Join(t.TempDir(), "profile_export.json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	c := collect(t, path)
	q := c.Requests[0]
	for _, f := range []struct {
		name string
		got  *int64
		want int64
	}{{"spec_steps", q.SpecSteps, 40}, {"draft_tokens", q.DraftTokens, 120}, {"accepted_tokens", q.AcceptedTokens, 59}, {"cached_input_tokens", q.CachedInputTokens, 16}} {
		if f.got == nil || *f.got != f.want {
			t.Errorf("%s = %v, want %d", f.name, f.got, f.want)
		}
	}
	if q.InputTokens == nil || *q.InputTokens != 25 || q.OutputTokens == nil || *q.OutputTokens != 100 {
		t.Errorf("usage counts %v %v changed by the extra fields", q.InputTokens, q.OutputTokens)
	}
	// the unpatched fixture: none of them (unknown, never 0)
	c = collect(t, filepath.Join("testdata", "classic-100-tokens", "profile_export.json"))
	if q := c.Requests[0]; q.SpecSteps != nil || q.CachedInputTokens != nil {
		t.Errorf("counts invented: steps %v cached %v", q.SpecSteps, q.CachedInputTokens)
	}
}
