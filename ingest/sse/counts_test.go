package sse

import "testing"

// TestCountsOfTheWrongTypeAreUnknown: a token count written as a string,
// a fraction, a bool or a number past int64 is no count — nil, never the
// 0 encoding/json leaves behind — in usage (prompt, completion, cached)
// and in vLLM's metrics.speculative_decoding; integers are read.
func TestCountsOfTheWrongTypeAreUnknown(t *testing.T) {
	for _, bad := range []string{`"16"`, `16.5`, `true`, `1e30`, `99999999999999999999`, `null`, `{}`} {
		data := `{"id":"x","choices":[],"usage":{"prompt_tokens":` + bad + `,"completion_tokens":` + bad +
			`,"prompt_tokens_details":{"cached_tokens":` + bad + `}},"metrics":{"speculative_decoding":{"num_spec_steps":` + bad + `,"num_draft_tokens":3,"num_accepted_draft_tokens":` + bad + `}}}`
		p := ClassifyJSON(data)
		if p.Usage == nil || p.Spec == nil {
			t.Fatalf("%s: usage %v spec %v", bad, p.Usage, p.Spec)
		}
		for name, v := range map[string]*int64{"prompt_tokens": p.Usage.PromptTokens, "completion_tokens": p.Usage.CompletionTokens,
			"cached_tokens": p.Usage.CachedTokens, "num_spec_steps": p.Spec.SpecSteps, "num_accepted_draft_tokens": p.Spec.AcceptedTokens} {
			if v != nil {
				t.Errorf("%s = %s: read as %d", name, bad, *v)
			}
		}
		if p.Spec.DraftTokens == nil || *p.Spec.DraftTokens != 3 {
			t.Errorf("%s: num_draft_tokens 3 read as %v", bad, p.Spec.DraftTokens)
		}
	}
	p := ClassifyJSON(`{"id":"x","choices":[],"usage":{"prompt_tokens":25,"completion_tokens":100,"prompt_tokens_details":{"cached_tokens":16}}}`)
	if p.Usage == nil || p.Usage.PromptTokens == nil || *p.Usage.PromptTokens != 25 || p.Usage.CachedTokens == nil || *p.Usage.CachedTokens != 16 {
		t.Errorf("integer counts: %+v", p.Usage)
	}
}
