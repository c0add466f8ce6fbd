package sse

import (
	"math/rand/v2"
	"os"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the parser in one read and again cut
// into random reads (seeded by cut), and checks that
//
//   - nothing panics, including Classify on the messages and ClassifyBody,
//     LooksLikeSSE and SkipPreamble on the whole input;
//   - every message's ReadIndex is a fed read, non-decreasing, and its
//     TimeNs is that read's time;
//   - Bytes are positive and sum to at most the input length;
//   - the messages' contents (Data, HasData, Event, ID, Comment) do not
//     depend on how the input was cut, and Bytes move by at most one byte
//     between neighbours (a "\r\n" split across reads, see Message.Bytes).
func FuzzParse(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: [DONE]\n\n"), uint64(1))
	f.Add([]byte("\n      \n\r\n: keep\r\n\r\nevent: error\rdata: e\r\r"), uint64(2))
	f.Add([]byte("data: a\r\n\r\ndata: b"), uint64(3))
	b, err := os.ReadFile("../../testdata/server-logs/openai-sse-vllm-issue6083/stream-capture.txt")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b, uint64(4))
	f.Fuzz(func(t *testing.T, data []byte, cut uint64) {
		whole := Parse([]Read{{Data: string(data), TimeNs: 7}})
		split := splitReads(string(data), cut)
		parts := Parse(split)
		checkMessages(t, whole, []Read{{Data: string(data), TimeNs: 7}})
		checkMessages(t, parts, split)
		if len(whole) != len(parts) {
			t.Fatalf("%d messages in one read, %d when cut: %+v vs %+v", len(whole), len(parts), whole, parts)
		}
		for i := range whole {
			w, p := whole[i], parts[i]
			if w.Data != p.Data || w.HasData != p.HasData || w.Event != p.Event || w.ID != p.ID || w.Comment != p.Comment {
				t.Fatalf("message %d differs: %+v vs %+v", i, w, p)
			}
			if d := w.Bytes - p.Bytes; d < -1 || d > 1 {
				t.Fatalf("message %d bytes %d vs %d", i, w.Bytes, p.Bytes)
			}
			_ = Classify(&w)
		}
		_ = ClassifyBody(string(data))
		_, _ = LooksLikeSSE(string(data))
		if p := SkipPreamble(string(data)); len(p) > len(data) {
			t.Fatal("SkipPreamble grew its input")
		}
	})
}

// splitReads cuts s into 1..8 reads at random places.
func splitReads(s string, seed uint64) []Read {
	r := rand.New(rand.NewPCG(seed, seed>>32))
	var out []Read
	for len(s) > 0 && len(out) < 7 {
		n := r.IntN(len(s) + 1)
		out = append(out, Read{Data: s[:n], TimeNs: int64(len(out) + 1)})
		s = s[n:]
	}
	return append(out, Read{Data: s, TimeNs: int64(len(out) + 1)})
}

func checkMessages(t *testing.T, msgs []Message, reads []Read) {
	t.Helper()
	total, last := 0, 0
	for _, r := range reads {
		total += len(r.Data)
	}
	sum := 0
	for i, m := range msgs {
		if m.ReadIndex < last || m.ReadIndex >= len(reads) {
			t.Fatalf("message %d read index %d (previous %d, %d reads)", i, m.ReadIndex, last, len(reads))
		}
		if m.TimeNs != reads[m.ReadIndex].TimeNs {
			t.Fatalf("message %d time %d, read time %d", i, m.TimeNs, reads[m.ReadIndex].TimeNs)
		}
		if m.Bytes <= 0 {
			t.Fatalf("message %d has %d bytes", i, m.Bytes)
		}
		last = m.ReadIndex
		sum += m.Bytes
	}
	if sum > total {
		t.Fatalf("messages hold %d bytes of %d", sum, total)
	}
}
