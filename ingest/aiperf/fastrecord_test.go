package aiperf

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/ingest/internal/jsonscan"
)

// sameRecord reports how fast differs from the reference ref ("" when it
// does not): metadata, error, and every metric's raw value, unit and (for
// a list the fast path parsed) the numbers floatList reads from the raw
// value.
func sameRecord(fast, ref *record) string {
	if !reflect.DeepEqual(fast.Metadata, ref.Metadata) {
		return "metadata"
	}
	if !reflect.DeepEqual(fast.Error, ref.Error) {
		return "error"
	}
	if (fast.Metrics == nil) != (ref.Metrics == nil) || len(fast.Metrics) != len(ref.Metrics) {
		return "metrics count"
	}
	for name, rm := range ref.Metrics {
		fm, ok := fast.Metrics[name]
		if !ok || !bytes.Equal(fm.Value, rm.Value) || fm.Unit != rm.Unit {
			return "metric " + name
		}
		if fm.listOK {
			want, ok := floatList(rm.Value)
			if !ok || len(want) != len(fm.list) {
				return "list " + name
			}
			for i := range want {
				if math.Float64bits(want[i]) != math.Float64bits(fm.list[i]) {
					return "list " + name
				}
			}
		}
	}
	return ""
}

// checkFast decodes line both ways: where the fast path takes a line the
// reference must take it too and give the same record.
func checkFast(t *testing.T, line []byte) (fastTook bool) {
	t.Helper()
	fast, ok := fastDecodeRecord(line)
	ref, err := decodeRecord(line)
	if !ok {
		return false
	}
	if err != nil {
		t.Fatalf("fast path took a line the reference rejects (%v): %q", err, line)
	}
	if d := sameRecord(fast, ref); d != "" {
		t.Fatalf("fast path differs from the reference in %s: %q", d, line)
	}
	return true
}

// TestFastRecordCorpus: every record line of the bundled AIPerf runs is
// taken by the fast path, identical to encoding/json's.
func TestFastRecordCorpus(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/aiperf/*/profile_export.jsonl")
	more, _ := filepath.Glob("testdata/*/profile_export.jsonl")
	n := 0
	for _, f := range append(files, more...) {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<26)
		for sc.Scan() {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			if _, err := decodeRecord(line); err != nil {
				continue // a damaged fixture's line: the reference's error
			}
			if !checkFast(t, line) {
				t.Errorf("%s: a valid record the fast path declined: %.200s", f, line)
			}
			n++
		}
		fh.Close()
	}
	if n < 100 {
		t.Fatalf("%d records checked", n)
	}
}

// TestFastRecordDeclines: lines the fast path must leave to the reference.
func TestFastRecordDeclines(t *testing.T) {
	for _, line := range []string{
		`{"metrics":{}}`,                      // no metadata
		`{"Metadata":{"request_start_ns":1}}`, // a name matching only case-insensitively
		`{"metadata":{},"metrics":{"a":{"value":[1,,2]}}}`,
		`{"metadata":{}} x`,                    // data after the object
		`{"metadata":{},"x":"a\u00"}`,          // a broken escape in a skipped value
		`{"metadata":{},"metrics":{"a\n":{}}}`, // an escape in a name
		`{"metadata":{},"metrics":{"a":{"Value":1}}}`,
	} {
		if _, ok := fastDecodeRecord([]byte(line)); ok {
			t.Errorf("fast path took %q", line)
		}
	}
	// and these it takes, as the reference does
	for _, line := range []string{
		`{"metadata":{"request_start_ns":1760000000000000000,"benchmark_phase":"profiling"},"metrics":{"inter_chunk_latency":{"value":[1.5, 2e-3 ,-0.0],"unit":"ms"},"x":{"value":null},"u":null},"error":null,"extra":[{"a":"\u00e9\n"},true,false,null,1e5]}`,
		`{"metadata":{},"metrics":{"inter_chunk_latency":{"value":[1,null,"2"],"unit":"ms"}}}`,
		`{"metadata":null,"metadata":{"x_request_id":"b"},"metrics":null}`,
		`{"metadata":{"x_request_id":"a"},"metadata":{"turn_index":2},"metrics":{"a":{"value":1}},"metrics":{"b":{"value":[2]}}}`,
		`{"metadata":{},"metrics":{"a":{"value":1}},"metrics":null,"metrics":{"c":{"value":[1],"value":[2,3],"unit":"s","unit":"ms"}}}`,
		`{"metadata":{"session_num":-3,"x_request_id":"a","x_request_id":"b","request_end_ns":null,"was_cancelled":true},"metadata":{"session_num":null,"turn_index":9223372036854775807}}`,
		`{"metadata":{"session_num":4,"Turn_index":1,"benchmark_phase":null,"was_cancelled":null,"x_correlation_id":"\u00e9"}}`,
	} {
		if !checkFast(t, []byte(line)) {
			t.Errorf("fast path declined %q", line)
		}
	}
}

// FuzzFastRecord: on any line the fast path either declines or gives the
// reference's record.
func FuzzFastRecord(f *testing.F) {
	f.Add([]byte(`{"metadata":{"request_start_ns":1,"request_end_ns":2},"metrics":{"inter_chunk_latency":{"value":[1.25,3],"unit":"ms"},"time_to_first_token":{"value":91.1,"unit":"ms"}},"error":{"code":524,"type":"x","message":"m"}}`))
	f.Add([]byte(`{"metadata":{},"metrics":{"a":{"value":[0.1,1e400],"unit":"ms"}}}`))
	f.Add([]byte(`{"metadata":{"was_cancelled":true},"metrics":{"a":{"unit":"ms","value":"12"}},"z":{"q":[]}}`))
	f.Add([]byte(`{"metadata":{"session_num":-3,"turn_index":7,"x_request_id":"a","x_request_id":"b","request_end_ns":null,"timestamp_ns":"12","was_cancelled":true,"credit_phase":"warmup","other":{"x":[1]}},"metadata":{"session_num":null,"conversation_id":"c"},"metrics":{}}`))
	f.Add([]byte(`{"metadata":{"session_num":1.0,"Turn_index":1,"benchmark_phase":null,"was_cancelled":null,"x_correlation_id":"\u00e9"}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		checkFast(t, line)
	})
}

// BenchmarkDecodeRecord: one synthetic record of 400 inter-chunk values,
// the reference (encoding/json and floatList) against the fast path.
func BenchmarkDecodeRecord(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString(`{"metadata":{"session_num":0,"x_request_id":"64a13be4-31eb-4ac0-8b58-c9375c0db974","request_start_ns":1760000000000000000,"request_end_ns":1760000008780623882,"benchmark_phase":"profiling","was_cancelled":false},"metrics":{"output_sequence_length":{"value":409,"unit":"tokens"},"request_latency":{"value":8780.517349,"unit":"ms"},"time_to_first_token":{"value":164.714975,"unit":"ms"},"inter_chunk_latency":{"value":[`)
	for i := 0; i < 400; i++ {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString("21.290636")
	}
	buf.WriteString(`],"unit":"ms"}}}`)
	line := buf.Bytes()
	b.SetBytes(int64(len(line)))
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			rec, _ := decodeRecord(line)
			floatList(rec.Metrics["inter_chunk_latency"].Value)
		}
	})
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			fastDecodeRecord(line)
		}
	})
}

// FuzzFastNumber: the scanner's number reader takes a number exactly when
// the reader it replaced did — the longest run of number characters,
// valid JSON number grammar (jsonscan.ValidNumber), parsed by strconv.ParseFloat
// without error — and gives ParseFloat's bits, on its exact fast path and
// off it.
func FuzzFastNumber(f *testing.F) {
	for _, s := range []string{"21.290636", "76.81288099999999", "0.019895419000022233", "-1234567890123456789e-40", "0", "-0", "-0.0", "1e22", "9007199254740993", "9007199254740992.5",
		"123456789012345678901234", "0.000000000000000000000001", "1e-400", "1e400", "1.7976931348623157e308",
		"4.9e-324", "01", "1.", ".5", "-", "1e", "1e+5", "1E-5", "1.5-3", "00.1", "0.1e23", "12345678901234567e-22", "0A", "2,3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		s := scanner{Scanner: jsonscan.Scanner{B: []byte(tok)}}
		got, ok := s.number()
		n := 0
		for n < len(tok) && strings.IndexByte("0123456789.-+eE", tok[n]) >= 0 {
			n++
		}
		ref := tok[:n]
		want, err := strconv.ParseFloat(ref, 64)
		refOK := n > 0 && jsonscan.ValidNumber([]byte(ref)) && err == nil
		if ok != refOK {
			t.Fatalf("%q: fast ok %v, reference %v (%q, ParseFloat err %v)", tok, ok, refOK, ref, err)
		}
		if ok && (math.Float64bits(got) != math.Float64bits(want) || s.I != n) {
			t.Fatalf("%q: fast %v (%#x, read %d), ParseFloat %v (%#x, %d)", tok, got, math.Float64bits(got), s.I, want, math.Float64bits(want), n)
		}
	})
}

// TestFastNumberExact: values on either side of the exact path's bounds
// (2^53 digits, 10^±22) agree with strconv.ParseFloat bit for bit.
func TestFastNumberExact(t *testing.T) {
	for _, tok := range []string{"9007199254740991", "9007199254740992", "9007199254740993", "900719925474099.3",
		"1e22", "1e23", "3e-22", "3e-23", "0.0000000000000000000001", "0.00000000000000000000001", "19.895419", "164.714975",
		"8780.517349", "1234567890123456789", "12345678901234567890", "-45.468263"} {
		s := scanner{Scanner: jsonscan.Scanner{B: []byte(tok)}}
		got, ok := s.number()
		want, err := strconv.ParseFloat(tok, 64)
		if !ok || err != nil || math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("%q: fast %v %v, ParseFloat %v %v", tok, got, ok, want, err)
		}
	}
}

// TestMetaFastPath: AIPerf's metadata objects (the corpus's shape) are read
// by the scanner itself, not handed to encoding/json, with every field set.
func TestMetaFastPath(t *testing.T) {
	obj := `{"session_num":0,"x_request_id":"64a1","x_correlation_id":"cfd4","conversation_id":"session_000000","turn_index":2,"credit_issued_ns":1759999999999998900,"request_start_ns":1760000000000000000,"request_ack_ns":1,"request_end_ns":1760000008780623882,"worker_id":"w","benchmark_phase":"profiling","was_cancelled":false,"agent_depth":0}`
	s := scanner{Scanner: jsonscan.Scanner{B: []byte(obj)}}
	var m *recordMeta
	if !s.meta(&m) || s.I != len(obj) {
		t.Fatalf("meta declined (at %d)", s.I)
	}
	zero, two := int64(0), int64(2)
	want := &recordMeta{SessionNum: metaInt{v: &zero}, XRequestID: "64a1", XCorrelationID: "cfd4", ConversationID: "session_000000", TurnIndex: metaInt{v: &two},
		RequestStartNs: []byte("1760000000000000000"), RequestEndNs: []byte("1760000008780623882"), CreditIssuedNs: []byte("1759999999999998900"),
		BenchmarkPhase: "profiling"}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("got %+v\nwant %+v", *m, *want)
	}
}
