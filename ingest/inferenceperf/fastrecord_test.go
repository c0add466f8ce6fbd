package inferenceperf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/internal/jsonscan"
)

// scanned is what a scan gave: each record (its chunks decoded, so that
// the fast path's literals compare with the reference's strings), the
// count, the cut note and the error.
type scanned struct {
	records []record
	n       int
	cut     string
	err     string
}

func collect(fast bool, data []byte, max int64, limit int, oneByte bool) scanned {
	var out scanned
	fn := func(i int, r *record) error {
		if i != len(out.records) {
			return fmt.Errorf("record index %d after %d records", i, len(out.records))
		}
		c := *r
		if c.chunkLits != nil {
			c.chunks = make([]string, len(c.chunkLits))
			for k := range c.chunkLits {
				c.chunks[k] = string(c.chunkBytes(nil, k))
			}
			c.chunkLits = nil
		}
		out.records = append(out.records, c)
		return nil
	}
	rd := bytes.NewReader(data)
	var err error
	if fast {
		var r io.Reader = rd
		if oneByte {
			r = iotest.OneByteReader(rd)
		}
		out.n, out.cut, err = scanRecords("f.json", r, max, limit, fn)
	} else {
		out.n, out.cut, err = refScan("f.json", ingest.NewJSONDecoder(rd, max), 0, 0, 0, limit, fn)
	}
	if err != nil {
		out.err = err.Error()
		out.records = nil
	}
	return out
}

// sameScan reports how the fast scan differs from the reference.
func sameScan(fast, ref scanned) string {
	if fast.err != ref.err {
		return fmt.Sprintf("error %q, reference %q", fast.err, ref.err)
	}
	if fast.n != ref.n || fast.cut != ref.cut {
		return fmt.Sprintf("%d records, cut %q; reference %d, %q", fast.n, fast.cut, ref.n, ref.cut)
	}
	if len(fast.records) != len(ref.records) {
		return fmt.Sprintf("%d records handed over, reference %d", len(fast.records), len(ref.records))
	}
	for i := range fast.records {
		f, r := fast.records[i], ref.records[i]
		norm := func(x *record) {
			for _, l := range []*[]float64{&x.tokenTimes, &x.chunkTimes} {
				if len(*l) == 0 {
					*l = nil
				}
			}
			if len(x.chunks) == 0 {
				x.chunks = nil
			}
		}
		norm(&f)
		norm(&r)
		if !reflect.DeepEqual(f, r) {
			return fmt.Sprintf("record %d:\n fast %+v\n ref  %+v", i, f, r)
		}
	}
	return ""
}

func checkScan(t *testing.T, data []byte, max int64, limit int) {
	t.Helper()
	ref := collect(false, data, max, limit, false)
	for _, one := range []bool{false, true} {
		if d := sameScan(collect(true, data, max, limit, one), ref); d != "" {
			t.Fatalf("fast scan (one byte reads %v, max %d, limit %d) differs from the reference: %s\ninput %q", one, max, limit, d, clip(string(data), 2000))
		}
	}
}

// perRequestFiles are the bundled per-request files.
func perRequestFiles(t testing.TB) [][]byte {
	files, _ := filepath.Glob("testdata/*/per_request_lifecycle_metrics.json")
	more, _ := filepath.Glob("../../testdata/inference-perf/*/per_request_lifecycle_metrics.json")
	var out [][]byte
	for _, f := range append(files, more...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	if len(out) < 5 {
		t.Fatalf("only %d per-request files", len(out))
	}
	return out
}

// scanEdges are inputs at the fast path's hand-over points.
var scanEdges = []string{
	``, ` `, `[`, `[]`, `[] `, `[] x`, `[]]`, `{}`, `null`, `[null]`, `[1]`, `[{}`, `[{},`, `[{}, ]`, `[{},, {}]`,
	`[{"start_time": 1, "end_time": 2}]`,
	`[{"start_time": 1, "end_time": 2}] `,
	`[{"start_time": 1, "end_time": 2}]  [`,
	`[{"start_time": 1, "end_time": 2}`,
	`[{"start_time": 1, "end_time": 2},`,
	`[{"start_time": 1, "end_time": 2}, {"start_time": 1, "end_time"`,
	`[{"start_time": 1, "end_time": 2} {"start_time": 1, "end_time": 2}]`,
	`[{"start_time": 1, "end_time": 2, "start_time": 3}]`,
	`[{"start_\u0074ime": 1, "end_time": 2}]`,
	`[{"start_time": "1", "end_time": 2e400}]`,
	`[{"start_time": 1, "end_time": 2, "info": {"response_metrics": {"chunk_times": [1, "2"], "response_chunks": ["a", null]}}}]`,
	`[{"start_time": 1, "end_time": 2, "info": {"response_metrics": {"chunk_times": [1, 2], "response_chunks": ["a\u00e9\ud800", "\"b\\\/\n"]}}}]`,
	`[{"start_time": 1, "end_time": 2, "info": {"response_metrics": {"chunk_times": [1, 2e999], "output_token_times": [01]}}}]`,
	`[{"start_time": 1, "end_time": 2, "info": {"response_metrics": {"chunk_times": [], "response_chunks": []}, "request_metrics": {"text": {"input_tokens": 3}, "image": {}}}}]`,
	`[{"start_time": 1, "end_time": 2, "info": {"response_info": {"output_tokens": 3, "server_usage": {"prompt_tokens": 1, "prompt_tokens": 2}}}}]`,
	"[{\"start_time\": 1, \"end_time\": 2, \"response\": \"a\x01\"}]",
	"[{\"start_time\": 1, \"end_time\": 2, \"response\": \"\xff\xfe\"}]",
	`[{"start_time": 1, "end_time": 2, "x": [[[[[[{"y": tru}]]]]]]}]`,
	`[{"start_time": 1, "end_time": 2, "stage_id": 0}, {"start_time": 3, "end_time": 4, "stage_id": 1}]`,
}

// TestFastScanMatches: on every bundled per-request file, cut at many
// places, and on the hand-over edges, the fast scan gives the reference's
// records, count, cut note and error, with every cap and limit tried.
func TestFastScanMatches(t *testing.T) {
	for _, e := range scanEdges {
		for _, max := range []int64{ingest.DefaultMaxValueBytes, 40, 10} {
			for _, limit := range []int{-1, 0, 1} {
				checkScan(t, []byte(e), max, limit)
			}
		}
	}
	fastTook := 0
	for _, b := range perRequestFiles(t) {
		checkScan(t, b, ingest.DefaultMaxValueBytes, -1)
		checkScan(t, b, 2000, -1)
		checkScan(t, b, ingest.DefaultMaxValueBytes, 2)
		step := max(len(b)/40, 1)
		for cut := 0; cut < len(b); cut += step {
			checkScan(t, b[:cut], ingest.DefaultMaxValueBytes, -1)
		}
		n := 0
		s := scanner{Scanner: jsonscan.Scanner{B: b}}
		s.WS()
		if s.Eat('[') {
			s.WS()
			for {
				if _, ok := s.object(0); !ok {
					break
				}
				n++
				s.WS()
				if !s.Eat(',') {
					break
				}
				s.WS()
			}
		}
		fastTook += n
	}
	if fastTook < 20 {
		t.Fatalf("the fast path took only %d bundled records", fastTook)
	}
}

// FuzzFastScan holds the fast scan to the reference on any input, read
// whole and one byte at a time, under a cap and a limit.
func FuzzFastScan(f *testing.F) {
	for _, e := range scanEdges {
		f.Add([]byte(e), uint16(0), int8(-1))
	}
	for _, b := range perRequestFiles(f) {
		if len(b) < 20000 {
			f.Add(b, uint16(0), int8(-1))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, max uint16, limit int8) {
		m := int64(max)
		if m == 0 {
			m = ingest.DefaultMaxValueBytes
		}
		checkScan(t, data, m, int(limit))
	})
}

// chunkSamples are chunks as servers send them, and the fast path's edges.
var chunkSamples = []string{
	`{"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":" we","logprobs":null,"finish_reason":null,"stop_reason":null}]}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}`,
	`{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
	`{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"reasoning_content":"hm"}}]}`,
	`{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"reasoning":"hm","reasoning_content":""}}]}`,
	`{"id":"chatcmpl-1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":1}}`,
	`{"id":"chatcmpl-1","choices":[],"usage":{"prompt_tokens":1}}`,
	`{"type":"content_block_delta","delta":{"type":"text_delta","text":"Hello"}}`,
	`{"id":"x","choices":[{"text":"a"},{"text":5}]}`,
	`{"id":5,"choices":[{"text":"a"}]}`,
	`{"ID":"x","choices":[{"text":"a"}]}`,
	`{"id":"x","Choices":[{"text":"a"}]}`,
	`{"id":"x","choices":[{"TEXT":"a"}]}`,
	`{"id":"x","choices":[{"text":"a","text":"b"}]}`,
	`{"id":"x","choices":[null,{"text":"b"}]}`,
	`{"id":null,"choices":null,"delta":null}`,
	`{"id":"x","choices":[{"text":"caf\u00e9 \"q\""}]}`,
	"{\"id\":\"x\",\"choices\":[{\"text\":\"\xff\"}]}",
	`{"id":"x","choices":[{"text":null,"delta":{"content":"c"}}]}`,
	`{"id":"x","choices":[{"text":"","delta":{"content":"c"}}]}`,
	`{"id":"x","choices":[{"text":"a"}]} x`,
	`{"id":"x","choices":[{"text":"a"}]`,
	`[1]`, `null`, `"s"`, ``, `{}`, `{"delta":{"Text":"a"}}`, `{"choices":{}}`, `{"choices":[{"delta":[]}]}`,
	`{"id":"x","choices":[{"text":"a","finish_reason":"length"}],"k":{"nested":[1,2,{"a":null}]}}`,
	`{"id":"x","choices":[{"text":"a"}],"reaſoning":1}`,
	`{"id":"x","choices":[{"delta":{"reaſoning":"r"}}]}`,
}

func checkChunk(t *testing.T, data string) {
	t.Helper()
	kind, hasChoices, text, reasoning, finish, id := chunkEvent(data)
	want := chunkInfo{kind, hasChoices, text, reasoning, finish, id}
	if got, _, ok := fastChunk([]byte(data)); ok && got != want {
		t.Fatalf("fastChunk(%q) = %+v, chunkEvent %+v", data, got, want)
	}
}

// TestFastChunk: where fastChunk answers it answers as chunkEvent, and
// it answers for the common chunks.
func TestFastChunk(t *testing.T) {
	for _, c := range chunkSamples {
		checkChunk(t, c)
	}
	for _, c := range chunkSamples[:8] {
		if _, _, ok := fastChunk([]byte(c)); !ok {
			t.Errorf("fastChunk does not take %q", c)
		}
	}
}

// TestChunkMemo: a stream of chunks differing in their text is answered
// from the memo, as chunkEvent answers each.
func TestChunkMemo(t *testing.T) {
	var m chunkMemo
	hits := 0
	for i, text := range []string{" we", " for", "é", "", `\"`, " a", "\xff", " b", " c"} {
		data := `{"id":"cmpl-1","choices":[{"index":0,"text":"` + text + `","finish_reason":null}]}`
		kind, hasChoices, tx, reasoning, finish, id := chunkEvent(data)
		want := chunkInfo{kind, hasChoices, tx, reasoning, finish, id}
		_, memo := m.reuse([]byte(data))
		if got := m.classify([]byte(data)); got != want {
			t.Fatalf("chunk %d %q: memo %+v, chunkEvent %+v", i, data, got, want)
		}
		if memo {
			hits++
		}
	}
	if hits < 4 {
		t.Fatalf("memo answered %d chunks, want ≥ 4", hits)
	}
	var stream []string
	for _, text := range []string{" we", " for", "é", "", `\"`, " a", "\xff", " b", " c", "\u00e9", "d"} {
		stream = append(stream, `{"id":"cmpl-1","choices":[{"index":0,"text":"`+text+`","finish_reason":null}]}`)
	}
	checkMemo(t, stream)
	// the literal template answers the plain chunks
	lits := make([][]byte, 4)
	for i := range lits {
		lits[i], _ = json.Marshal(fmt.Sprintf(`{"id":"c","choices":[{"text":" t%d"}]}`, i))
	}
	var lm chunkMemo
	for i := range lits {
		_, _, ok := lm.reuseLit(lits[i])
		if ok != (i > 0) {
			t.Fatalf("literal %d: template answered %v", i, ok)
		}
		lm.chunk(&record{chunkLits: lits}, i)
	}
}

// checkMemo classifies the chunks of a stream three ways — decoded
// (classify), as a record's decoded chunks and as the literals the fast
// path splits (chunk) — against chunkEvent, with their decoded lengths.
func checkMemo(t *testing.T, stream []string) {
	t.Helper()
	lits := make([][]byte, len(stream))
	for i, d := range stream {
		q, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		lits[i] = q
	}
	var m1, m2, m3 chunkMemo
	for i, d := range stream {
		want := string(appendUnquoted(nil, lits[i])) // as encoding/json decodes the literal
		kind, hasChoices, tx, reasoning, finish, id := chunkEvent(want)
		wantC := chunkInfo{kind, hasChoices, tx, reasoning, finish, id}
		if got := m1.classify([]byte(d)); d == want && got != wantC {
			t.Fatalf("memo on %q = %+v, chunkEvent %+v", d, got, wantC)
		}
		if got, n := m2.chunk(&record{chunks: stream}, i); d == want && (got != wantC || n != len(d)) {
			t.Fatalf("memo on chunk %q = %+v (%d bytes), chunkEvent %+v", d, got, n, wantC)
		}
		if got, n := m3.chunk(&record{chunkLits: lits}, i); got != wantC || n != len(want) {
			t.Fatalf("memo on literal %s = %+v (%d bytes), chunkEvent %+v (%d bytes)", lits[i], got, n, wantC, len(want))
		}
	}
}

// FuzzChunkMemo holds fastChunk and the memo to chunkEvent: on any chunk,
// and on a chunk after its variant with another text.
func FuzzChunkMemo(f *testing.F) {
	for _, c := range chunkSamples {
		f.Add(c, " x")
	}
	f.Fuzz(func(t *testing.T, data, text string) {
		checkChunk(t, data)
		checkMemo(t, []string{data, strings.Replace(data, `"a"`, `"`+text+`"`, 1), strings.Replace(data, `" we"`, `"`+text+`"`, 1), data,
			strings.Replace(data, `" we"`, `"`+text+text+`"`, 1)})
	})
}

// BenchmarkScan reads a synthetic v0.6 per-request file of 40 records
// with raw SSE text and 400 chunks each (about 10 MB) and builds their
// events.
func BenchmarkScan(b *testing.B) {
	data := syntheticFile(40, 400)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		var cm chunkMemo
		_, _, err := scanRecords("f.json", bytes.NewReader(data), ingest.DefaultMaxValueBytes, -1, func(i int, r *record) error {
			r.eventsOf(true, false, &cm)
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// syntheticFile writes records records of chunks completions chunks each,
// in inference-perf v0.6's layout.
func syntheticFile(records, chunks int) []byte {
	var bb bytes.Buffer
	bb.WriteString("[\n")
	for i := range records {
		if i > 0 {
			bb.WriteString(",\n")
		}
		var resp, list, times strings.Builder
		for k := range chunks {
			c := fmt.Sprintf(`{"id":"cmpl-%d","object":"text_completion","created":1760000000,"model":"m","choices":[{"index":0,"text":" t%d","logprobs":null,"finish_reason":null,"stop_reason":null}]}`, i, k)
			q, _ := jsonString(c)
			qd, _ := jsonString("data: " + c + "\n\n")
			resp.WriteString(qd[1 : len(qd)-1])
			if k > 0 {
				list.WriteString(", ")
				times.WriteString(", ")
			}
			list.WriteString(q)
			fmt.Fprintf(&times, "%.9f", 4000+float64(i)+float64(k)*0.01)
		}
		fmt.Fprintf(&bb, `{"start_time": %d.0, "end_time": %d.5, "request": "{\"model\": \"m\", \"prompt\": \"p\", \"max_tokens\": %d, \"stream\": true}", "response": "%s", `+
			`"info": {"request_metrics": {"text": {"input_tokens": 128}, "image": null, "video": null, "audio": null}, "response_metrics": {"output_tokens": %d, `+
			`"server_usage": {"prompt_tokens": 128, "completion_tokens": %d}, "response_chunks": [%s], "chunk_times": [%s], "output_token_times": [%s]}, "extra_info": {}, "lora_adapter": null, "labels": {}}, "error": null}`,
			4000+i, 4000+i, chunks, resp.String(), chunks, chunks, list.String(), times.String(), times.String())
	}
	bb.WriteString("\n]\n")
	return bb.Bytes()
}

func jsonString(s string) (string, error) {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String(), nil
}

// TestExactFloat: the fast path gives strconv.ParseFloat's bits where it
// answers.
func TestExactFloat(t *testing.T) {
	for _, s := range []string{"0", "-0", "1", "4000.164714975", "-12.5", "0.1", "0.30000000000000004", "123456789012345", "1234567890123456",
		"9007199254740993", "1.0000000000000000000001", "0.000000000000000000000123", "1e5", "99999999999999.9", "4000.000000001"} {
		want, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := exactFloat([]byte(s)); ok && math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("exactFloat(%s) = %v, ParseFloat %v", s, got, want)
		}
	}
	if _, ok := exactFloat([]byte("4000.164714975")); !ok {
		t.Error("exactFloat does not take a perf_counter time")
	}
}

// FuzzExactFloat holds exactFloat to strconv.ParseFloat.
func FuzzExactFloat(f *testing.F) {
	f.Add(uint64(4000164714975), uint8(9), true)
	f.Fuzz(func(t *testing.T, m uint64, k uint8, neg bool) {
		s := strconv.FormatUint(m, 10)
		if p := int(k) % (len(s) + 1); p > 0 && p < len(s) {
			s = s[:len(s)-p] + "." + s[len(s)-p:]
		}
		if neg {
			s = "-" + s
		}
		if !jsonscan.ValidNumber([]byte(s)) {
			return
		}
		want, _ := strconv.ParseFloat(s, 64)
		if got, ok := exactFloat([]byte(s)); ok && math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("exactFloat(%s) = %v, ParseFloat %v", s, got, want)
		}
	})
}

// FuzzNumbers holds the number lists the scanner reads to encoding/json's.
func FuzzNumbers(f *testing.F) {
	for _, s := range []string{`[4000.164714975, 1, -0, 0.5, 1e3, 12345678901234567, 01]`, `[1760000000.0198953, 0.019895419000022233, 9007199254740993, 1234567890123456789.5, -0.0000000000000000001]`, `[1,2`, `[-]`, `[1.]`, `[1.5e]`, `[0.1,-2.25 , 3]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || data[0] != '[' {
			return
		}
		s := scanner{Scanner: jsonscan.Scanner{B: data}}
		got, ok := s.numbers()
		if !ok {
			return
		}
		var want []float64
		if err := json.Unmarshal(data[:s.I], &want); err != nil {
			t.Fatalf("numbers took %q, encoding/json: %v", data[:s.I], err)
		}
		if len(got) != len(want) {
			t.Fatalf("numbers(%q) = %v, encoding/json %v", data, got, want)
		}
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("numbers(%q) = %v, encoding/json %v", data, got, want)
			}
		}
	})
}

// TestRespHints: the second pass takes each record's "response" as the
// first pass validated it, and validates it again when its bytes changed:
// records and errors stay the reference's.
func TestRespHints(t *testing.T) {
	data := syntheticFile(3, 5)
	var lites []lite
	first := &respHints{seed: maphash.MakeSeed()}
	_, _, err := scanRecordsHinted("f.json", bytes.NewReader(data), ingest.DefaultMaxValueBytes, -1, first, func(i int, r *record) error {
		lites = append(lites, lite{respOff: r.respOff, respLen: r.respLen, respHash: r.respHash})
		return nil
	})
	if err != nil || len(lites) != 3 || lites[0].respLen < 100 {
		t.Fatalf("first pass: %v, %+v", err, lites)
	}
	second := func(data []byte) (scanned, int) {
		h := &respHints{seed: first.seed, get: func(i int) (int, int, uint64) {
			return lites[i].respOff, lites[i].respLen, lites[i].respHash
		}}
		var out scanned
		out.n, out.cut, err = scanRecordsHinted("f.json", bytes.NewReader(data), ingest.DefaultMaxValueBytes, -1, h, func(i int, r *record) error {
			c := *r
			c.chunks = make([]string, len(c.chunkLits))
			for k := range c.chunkLits {
				c.chunks[k] = string(c.chunkBytes(nil, k))
			}
			c.chunkLits = nil
			c.respOff, c.respLen, c.respHash = 0, 0, 0
			out.records = append(out.records, c)
			return nil
		})
		if err != nil {
			out.err, out.records = err.Error(), nil
		}
		return out, h.skipped
	}
	got, skipped := second(data)
	if d := sameScan(got, collect(false, data, ingest.DefaultMaxValueBytes, -1, false)); d != "" || skipped != 3 {
		t.Fatalf("second pass (%d values taken as validated): %s", skipped, d)
	}
	// a control character in the first record's raw SSE text: the value
	// no longer hashes the same and is refused as the reference refuses it
	bad := bytes.Clone(data)
	at := bytes.Index(bad, []byte(`"response": "`)) + len(`"response": "`) + 10
	bad[at] = 0x01
	got, skipped = second(bad)
	ref := collect(false, bad, ingest.DefaultMaxValueBytes, -1, false)
	if got.err == "" || got.err != ref.err || skipped != 0 {
		t.Fatalf("changed value (%d taken as validated): error %q, reference %q", skipped, got.err, ref.err)
	}
}
