package vllmbench

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/internal/testkit"
)

// TestStreamAsGeneral: every fixture and corpus file imports to the same
// rows (runs, requests, events, checks, notes) and errors whether it is
// streamed or read whole, with and without text.
func TestStreamAsGeneral(t *testing.T) {
	var files []string
	for name, f := range fixtures {
		files = append(files, filepath.Join("testdata", name, f))
	}
	for name, f := range corpusFiles {
		files = append(files, filepath.Join(corpus, name, f))
	}
	// a run with offending values, a null list and a numeric string
	dir := t.TempDir()
	odd := filepath.Join(dir, "odd.json")
	os.WriteFile(odd, []byte(`{"backend": "openai-chat", "model_id": "m", "duration": 2, "completed": 3, "ttfts": [0.5, -1, null, 0.25], "itls": [[0.01, NaN, 0.02], null, [], [0.01, -0.5, 0.01, 0.01, 0.01, 0.01]], "output_lens": [3, 0, 1, 6], "errors": ["", "Not Found", "", ""], "generated_texts": ["a", "", "b", "c"]}`), 0o644)
	asString := filepath.Join(dir, "as-string.json")
	os.WriteFile(asString, []byte(`{"backend": "vllm", "model_id": "m", "duration": 2, "ttfts": [0.5, "0.25"], "itls": [[0.01], [0.02]], "output_lens": [2, 2]}`), 0o644)
	files = append(files, odd, asString)
	testkit.SameImports(t, New(), files...)
	// the odd run's checks are there, positioned
	testkit.HasChecks(t, New(), odd, "value_negative ttfts: first request 1 (ttfts[1]): -1", "value_not_finite itls: first request 0 (itls[0][1]): NaN", "value_negative itls: first request 3 (itls[3][1]): -0.5")
}

// TestStreamBeyondFileCap: a result file larger than --max-value-size
// imports when streamed (what is held stays under the cap); what is held
// past the cap is refused.
func TestStreamBeyondFileCap(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"backend": "vllm", "model_id": "m", "duration": 2, "ttfts": [`)
	const n = 2000
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("0.5")
	}
	b.WriteString(`], "itls": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("[" + strings.TrimSuffix(strings.Repeat("0.01, ", 50), ", ") + "]")
	}
	b.WriteString(`], "output_lens": [` + strings.TrimSuffix(strings.Repeat("51, ", n), ", ") + `]}`)
	p := filepath.Join(t.TempDir(), "big.json")
	os.WriteFile(p, []byte(b.String()), 0o644)
	var c formats.Collector
	if err := ingest.ImportFile(New(), p, ingest.Options{MaxValueBytes: 64 << 10}, &c); err != nil || len(c.Requests) != n || len(c.Events) != n*51 {
		t.Fatalf("%d bytes under a 64 KiB cap: %v, %d requests, %d events", b.Len(), err, len(c.Requests), len(c.Events))
	}
	if err := ingest.ImportFile(New(), p, ingest.Options{MaxValueBytes: 8 << 10}, &formats.Collector{}); err == nil || !strings.Contains(err.Error(), "8 KiB cap") {
		t.Errorf("held past an 8 KiB cap: %v", err)
	}
}

// TestStreamBOM: a file that starts with a byte-order mark is read again
// at the right offsets.
func TestStreamBOM(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bom.json")
	os.WriteFile(p, []byte("\xef\xbb\xbf"+`{"backend": "vllm", "model_id": "m", "duration": 2, "ttfts": [0.5, 0.25], "itls": [[0.01, 0.02], [0.03]], "output_lens": [3, 2], "generated_texts": ["ab", "c"]}`), 0o644)
	s, g, errS, errG := testkit.ImportBoth(t, New(), p, ingest.Options{Label: "x"})
	if errS != nil || errG != nil || !reflect.DeepEqual(s.Events, g.Events) || len(s.Events) != 5 || *s.Events[2].Text != "ab" {
		t.Errorf("%v %v: %+v", errS, errG, s.Events)
	}
}
