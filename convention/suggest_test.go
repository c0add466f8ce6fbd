package convention

import "testing"

func TestSuggest(t *testing.T) {
	names := []string{"tokentrace", "genai-perf", "llmperf", "vllm-bench", "convention", "format"}
	for _, c := range []struct{ word, want string }{
		{"tokentrase", "tokentrace"}, // one substitution
		{"TokenTrace", ""},           // the same name: nothing to suggest
		{"genaiperf", "genai-perf"},  // one insertion
		{"llmprf", "llmperf"},
		{"vllm", "vllm-bench"}, // a prefix
		{"fromat", "format"},   // a transposition is two edits
		{"xyz", ""},
		{"", ""},
		{"zzzzzzzzzzzz", ""},
	} {
		if got := Suggest(c.word, names); got != c.want {
			t.Errorf("Suggest(%q) = %q, want %q", c.word, got, c.want)
		}
	}
	if got := DidYouMean("llmprf", names); got != `; did you mean "llmperf"?` {
		t.Errorf("DidYouMean: %q", got)
	}
}
