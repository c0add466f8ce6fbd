package aiperf

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tokentrace/tokentrace/ingest"
)

// TestSessionsAndCache: AIPerf's record metadata gives each request its
// session (x_correlation_id, the conversation instance; not
// conversation_id, the dataset's, which repeats), turn (turn_index) and
// parent (parent_correlation_id, AIPerf 2026's agent trees), and the
// record's usage_prompt_cache_read_tokens its cached input. On the bundled
// 524 run (AIPerf 0.10.0: one turn per conversation) the records are
// regrouped into sessions of four turns, every other session spawned by
// the one before, as a multi-turn agent run writes them.
func TestSessionsAndCache(t *testing.T) {
	src := filepath.Join("..", "..", "testdata", "aiperf", "llama31-8b-cloudflare-agent-c2-524errors", "profile_export.jsonl")
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cached := map[int]int64{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<24)
	for i := 0; sc.Scan(); i++ {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		md := rec["metadata"].(map[string]any)
		md["conversation_id"] = fmt.Sprintf("dataset_%d", i%3) // the dataset's: repeats across sessions
		md["x_correlation_id"] = fmt.Sprintf("agent_%03d", i/4)
		md["turn_index"] = i % 4
		if (i/4)%2 == 1 {
			md["parent_correlation_id"] = fmt.Sprintf("agent_%03d", i/4-1)
		}
		if m, ok := rec["metrics"].(map[string]any)[tagCacheRead].(map[string]any); ok {
			cached[i] = int64(m["value"].(float64))
		}
		b, _ := json.Marshal(rec)
		out.Write(append(b, '\n'))
	}
	path := filepath.Join(t.TempDir(), "profile_export.jsonl")
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	c, _ := importFile(t, path, "agents")
	if len(c.Requests) != 100 || len(cached) != 87 {
		t.Fatalf("%d requests, %d with a cached count", len(c.Requests), len(cached))
	}
	for _, q := range c.Requests {
		i := int(q.RequestKey)
		if want := fmt.Sprintf("agent_%03d", i/4); q.SessionID != want || q.TurnIndex == nil || *q.TurnIndex != int64(i%4) {
			t.Errorf("request %d: session %q turn %v, want %s/%d", i, q.SessionID, q.TurnIndex, want, i%4)
		}
		if wantParent := map[bool]string{false: "", true: fmt.Sprintf("agent_%03d", i/4-1)}[(i/4)%2 == 1]; q.ParentID != wantParent {
			t.Errorf("request %d: parent %q, want %q", i, q.ParentID, wantParent)
		}
		n, ok := cached[i]
		switch {
		case ok && (q.CachedInputTokens == nil || *q.CachedInputTokens != n):
			t.Errorf("request %d: cached %v, want %d", i, q.CachedInputTokens, n)
		case !ok && q.CachedInputTokens != nil:
			t.Errorf("request %d without a cache count: cached %d, want null", i, *q.CachedInputTokens)
		}
	}
}

// TestOddTurnIndex: a turn_index that is no integer ("1", 1.5) or is
// negative does not refuse the record: the request is imported without a
// turn, and the run's value checks count the field.
func TestOddTurnIndex(t *testing.T) {
	src := filepath.Join("..", "..", "testdata", "aiperf", "llama31-8b-cloudflare-chatbot-c1", "profile_export.jsonl")
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(raw, []byte("\n"))
	var out bytes.Buffer
	for i, l := range lines {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal(l, &rec); err != nil {
			t.Fatal(err)
		}
		md := rec["metadata"].(map[string]any)
		switch i {
		case 1:
			md["turn_index"] = "1"
		case 2:
			md["turn_index"] = 1.5
		case 3:
			md["turn_index"] = -2
		}
		b, _ := json.Marshal(rec)
		out.Write(append(b, '\n'))
	}
	path := filepath.Join(t.TempDir(), "profile_export.jsonl")
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	c, _ := importFile(t, path, "odd")
	if len(c.Requests) != 20 {
		t.Fatalf("%d requests, want the 20 records", len(c.Requests))
	}
	for _, k := range []int{1, 2, 3} {
		if q := c.Requests[k]; q.TurnIndex != nil {
			t.Errorf("request %d: turn %d from an odd turn_index", k, *q.TurnIndex)
		}
	}
	if q := c.Requests[0]; q.TurnIndex == nil || *q.TurnIndex != 0 {
		t.Errorf("request 0: turn %v, want 0", q.TurnIndex)
	}
	counted := map[string]int64{}
	for _, ch := range c.Runs[0].Checks {
		if ch.Field == "metadata.turn_index" {
			counted[ch.Code] += ch.Requests
		}
	}
	if counted[ingest.CheckNotInteger] != 2 || counted[ingest.CheckNegative] != 1 {
		t.Errorf("checks %v, want 2 not-integer and 1 negative", counted)
	}
}
