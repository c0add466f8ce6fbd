package sse

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
)

// fastSeeds are chunk shapes the fast path must answer (want true) or
// leave to encoding/json (false).
var fastSeeds = []struct {
	json string
	fast bool
}{
	{`{"id":"cmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant"},"logprobs":null,"finish_reason":null}]}`, true},
	{`{"id":"cmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi \"there\"\n\u00e9"},"logprobs":null,"finish_reason":null}]}`, true},
	{`{"id":"x","choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}]}`, true},
	{`{"id":"x","choices":[],"usage":{"prompt_tokens":12,"total_tokens":15,"completion_tokens":3}}`, true},
	{`{"id":"x","choices":[{"delta":{"reasoning_content":"think"}}],"usage":{"completion_tokens":3,"completion_tokens_details":{"reasoning_tokens":2}}}`, true},
	{`{"id":"x","choices":[{"delta":{"reasoning":"r","content":null}}]}`, true},
	{`{"choices":[{"text":"abc","finish_reason":null},{"text":"second"}]}`, true},
	{`{"choices":[{"message":{"role":"assistant","content":"whole"}}]}`, true},
	{` {"usage":null,"choices":null} `, true},
	{`{"id":5,"choices":[{"delta":null,"message":{"role":"assistant"}}]}`, true},
	{`{"ID":"x","choices":[]}`, false},                            // case-insensitive match
	{`{"id":"a","id":"b"}`, false},                                // repeated field
	{`{"error":{"message":"boom","code":500}}`, false},            // an error
	{`{"object":"error","message":"m","code":400}`, false},        // vLLM error
	{`{"choices":[{"delta":{"content":[{"text":"a"}]}}]}`, false}, // parts
	{`{"usage":{"completion_tokens":3.0}}`, false},                // not an integer
	{`{"choices":[{"delta":{"content":"a"}}]} x`, false},          // trailing data
	{`{"choices":[{"delta":{"content":"a\u0000"}}]}`, true},
	{"{\"choices\":[{\"delta\":{\"content\":\"a\x01\"}}]}", false}, // control character
	{"{\"id\":\"\xff\"}", false},                                   // invalid UTF-8
	{`{"choices":[null]}`, false},
	{`{"\u0069d":"x"}`, false}, // escaped key
	{`{"choices":[{"delta":{"content":"a"}}],"usage":{"prompt_tokens":-0,"completion_tokens":99999999999999999999}}`, false},
}

func TestClassifyFastAgrees(t *testing.T) {
	for _, c := range fastSeeds {
		fast, ok := classifyFast(c.json)
		if ok != c.fast {
			t.Errorf("%s: fast path answered %v, want %v", c.json, ok, c.fast)
		}
		if slow := classifySlow(c.json); ok && !reflect.DeepEqual(fast, slow) {
			t.Errorf("%s:\nfast %+v\nslow %+v", c.json, fast, slow)
		}
	}
	// A real vLLM stream: every message takes the fast path and agrees.
	b, err := os.ReadFile("../../testdata/server-logs/openai-sse-vllm-issue6083/stream-capture.txt")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range Parse([]Read{{Data: string(b)}}) {
		if !m.HasData || !strings.HasPrefix(strings.TrimSpace(m.Data), "{") {
			continue
		}
		fast, ok := classifyFast(m.Data)
		if !ok {
			t.Errorf("fast path declined %s", m.Data)
			continue
		}
		if slow := classifySlow(m.Data); !reflect.DeepEqual(fast, slow) {
			t.Errorf("%s:\nfast %+v\nslow %+v", m.Data, fast, slow)
		}
		if fast.Kind == formats.KindContent {
			n++
		}
	}
	if n == 0 {
		t.Error("no content chunk in the capture")
	}
}

// FuzzClassifyFast: whenever the fast path answers, it equals the
// encoding/json path.
func FuzzClassifyFast(f *testing.F) {
	for _, c := range fastSeeds {
		f.Add(c.json)
	}
	f.Fuzz(func(t *testing.T, data string) {
		fast, ok := classifyFast(data)
		if !ok {
			return
		}
		if slow := classifySlow(data); !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\nfast %+v\nslow %+v", data, fast, slow)
		}
	})
}

// TestPlainASCII: the word-at-a-time test agrees with the byte table on
// every byte value at every position of a 17-byte string.
func TestPlainASCII(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 17; pos++ {
			b := []byte("abcdefghijklmnopq")
			b[pos] = byte(c)
			want := true
			for _, x := range b {
				if strStop[x] {
					want = false
				}
			}
			if got := plainASCII(string(b)); got != want {
				t.Fatalf("byte %#x at %d: %v, want %v", c, pos, got, want)
			}
		}
	}
}
