package synth_test

import (
	"bytes"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/aiperf"
	"github.com/tokentrace/tokentrace/ingest/genaiperf"
	"github.com/tokentrace/tokentrace/ingest/guidellm"
	"github.com/tokentrace/tokentrace/ingest/inferenceperf"
	"github.com/tokentrace/tokentrace/ingest/llmperf"
	"github.com/tokentrace/tokentrace/ingest/sglangbench"
	"github.com/tokentrace/tokentrace/ingest/vllmbench"
	"github.com/tokentrace/tokentrace/synth"
)

// small is a model with every feature switched on: failures of both kinds,
// frequent stalls, one-token answers (TPOT undefined).
func small() synth.Model {
	m := synth.Default()
	m.Requests, m.Seed = 300, 7
	m.FailureRate, m.StallProb = 0.08, 0.02
	m.OSLMedian, m.OSLSigma, m.OSLMin = 30, 1.2, 1
	return m
}

// TestGenAIPerfRecoversTruth writes a small run, imports it with the real
// GenAI-Perf importer and checks, request by request, that the canonical
// convention recovers the true TTFT, E2E (to the ns), N and TPOT (the same
// float64) of truth.csv, and the true status.
func TestGenAIPerfRecoversTruth(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "profile_export.json")
	var run, truth bytes.Buffer
	if err := synth.WriteGenAIPerf(&run, &truth, small()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, run.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := synth.ReadTruth(&truth)
	if err != nil {
		t.Fatal(err)
	}
	var col formats.Collector
	if err := ingest.ImportFile(genaiperf.New(), path, ingest.Options{}, &col); err != nil {
		t.Fatal(err)
	}
	checkTruth(t, &col, want, true, 0)
}

// TestAIPerfRecoversTruth: the same for AIPerf's profile_export.jsonl,
// whose millisecond floats carry every ns.
func TestAIPerfRecoversTruth(t *testing.T) {
	col, want := importSynth(t, synth.WriteAIPerf, "profile_export.jsonl", aiperf.New())
	checkTruth(t, col, want, true, 0)
}

// TestLLMPerfRecoversTruth: LLMPerf keeps no start times and no last-token
// time, only inter_token_latency_s = (t_last − start)/N_tok in float
// seconds: TTFT and the stream end come back to the ns, E2E (and so TPOT)
// within lastTokenTolNs, and request start times not at all.
func TestLLMPerfRecoversTruth(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := synth.WriteLLMPerfSummary(f, small()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	col, want := importSynthIn(t, dir, synth.WriteLLMPerf, "individual_responses.json", llmperf.New())
	checkTruth(t, col, want, false, lastTokenTolNs)
}

// lastTokenTolNs bounds the error of a last-token time rebuilt from LLMPerf's
// float seconds (ITL · N_tok · 1e9, rounded).
const lastTokenTolNs = 2

type writer func(out, truth io.Writer, m synth.Model) error

func importSynth(t *testing.T, write writer, name string, imp ingest.Importer) (*formats.Collector, []synth.Truth) {
	return importSynthIn(t, t.TempDir(), write, name, imp)
}

func importSynthIn(t *testing.T, dir string, write writer, name string, imp ingest.Importer) (*formats.Collector, []synth.Truth) {
	t.Helper()
	path := filepath.Join(dir, name)
	var run, truth bytes.Buffer
	if err := write(&run, &truth, small()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, run.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := synth.ReadTruth(&truth)
	if err != nil {
		t.Fatal(err)
	}
	var col formats.Collector
	if err := ingest.ImportFile(imp, path, ingest.Options{}, &col); err != nil {
		t.Fatal(err)
	}
	return &col, want
}

// checkTruth compares imported requests with truth.csv, request by request,
// under the canonical convention. tolNs is the error allowed on the last
// token's time (0: exact); hasStart says the format keeps start times.
func checkTruth(t *testing.T, col *formats.Collector, want []synth.Truth, hasStart bool, tolNs int64) {
	t.Helper()
	start := startUnix
	if !hasStart {
		start = startNone
	}
	check(t, col, want, expect{start: start, lastTolNs: tolNs, streamEnd: true})
}

// How a format keeps request starts.
const (
	startUnix     = iota // Unix ns, equal to truth's
	startRelative        // another clock (perf_counter): equal offsets from the first request
	startNone            // not kept
)

// expect says what a format keeps.
type expect struct {
	start      int
	lastTolNs  int64 // error allowed on the last token's time (0: exact)
	ttftTolNs  int64 // error allowed on the first token's time (0: exact)
	startTolNs int64 // error allowed on the start (startUnix)
	streamEnd  bool  // stream_end_offset_ns is the truth's (within ttftTolNs)
}

func check(t *testing.T, col *formats.Collector, want []synth.Truth, x expect) {
	t.Helper()
	if len(col.Requests) != len(want) {
		t.Fatalf("%d requests imported, %d generated", len(col.Requests), len(want))
	}
	var failed, oneToken int
	ev := col.Events
	var start0 int64
	within := func(got, want, tol int64) bool { return got >= want-tol && got <= want+tol }
	for i := range col.Requests {
		r := &col.Requests[i]
		events := ev[:r.MessageCount]
		ev = ev[r.MessageCount:]
		w := want[i]
		m, _ := analyze.ComputeRequest(analyze.Canonical, r, events, nil, nil)
		if r.RequestKey != int64(w.Key) {
			t.Fatalf("request %d: key %d, want %d", i, r.RequestKey, w.Key)
		}
		switch x.start {
		case startUnix:
			if r.StartNs == nil || *r.StartNs < w.StartNs-x.startTolNs || *r.StartNs > w.StartNs+x.startTolNs {
				t.Fatalf("request %d: start %v, want %d ± %d", i, r.StartNs, w.StartNs, x.startTolNs)
			}
		case startRelative:
			if r.StartNs == nil {
				t.Fatalf("request %d: no start", i)
			}
			if i == 0 {
				start0 = *r.StartNs
			}
			if got, wantOff := *r.StartNs-start0, w.StartNs-want[0].StartNs; got != wantOff {
				t.Fatalf("request %d: start %d ns after the first, want %d", i, got, wantOff)
			}
		}
		if w.Status != synth.StatusOK {
			failed++
			if r.Status != formats.StatusError || m.Counted {
				t.Errorf("request %d: status %s (counted %v), want error", i, r.Status, m.Counted)
			}
			continue
		}
		if r.Status != formats.StatusOK || !m.Counted {
			t.Errorf("request %d: status %s, want ok", i, r.Status)
			continue
		}
		if got := *r.FirstTokenOffsetNs; !within(got, w.TTFTNs, x.ttftTolNs) {
			t.Errorf("request %d: first_token_offset_ns %d, want %d ± %d", i, got, w.TTFTNs, x.ttftTolNs)
		}
		if got := *r.LastTokenOffsetNs; !within(got, w.E2ENs, x.lastTolNs) {
			t.Errorf("request %d: last_token_offset_ns %d, want %d ± %d", i, got, w.E2ENs, x.lastTolNs)
		}
		if x.streamEnd {
			if r.StreamEndOffsetNs == nil || !within(*r.StreamEndOffsetNs, w.StreamEndNs, x.ttftTolNs) {
				t.Errorf("request %d: stream_end_offset_ns %v, want %d ± %d", i, r.StreamEndOffsetNs, w.StreamEndNs, x.ttftTolNs)
			}
		}
		if !within(int64(math.Round(m.TTFTMs*1e6)), w.TTFTNs, x.ttftTolNs) || m.OutputTokens != float64(w.N) ||
			x.lastTolNs == 0 && x.ttftTolNs == 0 && m.E2EMs != float64(w.E2ENs)/1e6 {
			t.Errorf("request %d: TTFT %v E2E %v N %v ms, want %d %d ns, N %d", i, m.TTFTMs, m.E2EMs, m.OutputTokens, w.TTFTNs, w.E2ENs, w.N)
		}
		tpotTol := 0.0
		if w.N > 1 {
			tpotTol = float64(x.lastTolNs+x.ttftTolNs) / float64(w.N-1) / 1e6
		}
		if w.HasTPOT != !math.IsNaN(m.TPOTMs) || w.HasTPOT && math.Abs(m.TPOTMs-w.TPOTNs/1e6) > tpotTol {
			t.Errorf("request %d: TPOT %v ms, want %v ns (defined %v)", i, m.TPOTMs, w.TPOTNs, w.HasTPOT)
		}
		if !w.HasTPOT {
			oneToken++
		}
	}
	// The model must exercise what the test claims to check.
	if failed == 0 || oneToken == 0 {
		t.Errorf("sample lacks cases: %d failed, %d with N = 1", failed, oneToken)
	}
}

// checkTokenTimes compares the imported token-carrying events of each
// completed request with the generator's token times (the pooled ITL's
// samples), exactly.
func checkTokenTimes(t *testing.T, col *formats.Collector, m synth.Model) {
	t.Helper()
	g, err := synth.NewGenerator(m)
	if err != nil {
		t.Fatal(err)
	}
	ev := col.Events
	gaps := 0
	for i := range col.Requests {
		r := &col.Requests[i]
		events := ev[:r.MessageCount]
		ev = ev[r.MessageCount:]
		req, _ := g.Next()
		if req.Status != synth.StatusOK {
			continue
		}
		var got []int64
		for j := range events {
			if events[j].CarriesTokens() {
				got = append(got, events[j].OffsetNs)
			}
		}
		if !slices.Equal(got, req.TokenNs) {
			t.Fatalf("request %d: token messages at %v, want %v", i, got, req.TokenNs)
		}
		gaps += len(got) - 1
	}
	if gaps == 0 {
		t.Error("no gaps checked")
	}
}

// TestDeterministic: the same model gives the same bytes; another seed
// different ones.
func TestDeterministic(t *testing.T) {
	write := func(m synth.Model) []byte {
		var b bytes.Buffer
		if err := synth.WriteGenAIPerf(&b, nil, m); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	m := small()
	a, b := write(m), write(m)
	m.Seed++
	c := write(m)
	if !bytes.Equal(a, b) {
		t.Error("same seed, different output")
	}
	if bytes.Equal(a, c) {
		t.Error("different seeds, same output")
	}
}

// TestRateMode: open-loop Poisson arrivals (RateRPS) import as a
// request_rate run whose requests start in order at about the asked rate,
// with the true values recovered as in closed-loop mode.
func TestRateMode(t *testing.T) {
	m := small()
	m.RateRPS = 5
	dir := t.TempDir()
	path := filepath.Join(dir, "profile_export.json")
	var run, truth bytes.Buffer
	if err := synth.WriteGenAIPerf(&run, &truth, m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, run.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := synth.ReadTruth(&truth)
	if err != nil {
		t.Fatal(err)
	}
	var col formats.Collector
	if err := ingest.ImportFile(genaiperf.New(), path, ingest.Options{}, &col); err != nil {
		t.Fatal(err)
	}
	checkTruth(t, &col, want, true, 0)
	r := col.Runs[0]
	if r.LoadMode != "request_rate" || r.RequestRateRPS == nil || *r.RequestRateRPS != 5 {
		t.Errorf("run load %q %v, want request_rate 5", r.LoadMode, r.RequestRateRPS)
	}
	span := float64(want[len(want)-1].StartNs-want[0].StartNs) / 1e9
	if rate := float64(len(want)-1) / span; rate < 4 || rate > 6 {
		t.Errorf("arrival rate %.2f/s, want ≈ 5", rate)
	}
	for i := 1; i < len(want); i++ {
		if want[i].StartNs < want[i-1].StartNs {
			t.Fatalf("request %d starts before request %d", i, i-1)
		}
	}
}

// TestGenAIPerfVariedRecoversTruth: the varied-chunk export (four server
// styles, reasoning, tool calls, escaped and non-ASCII text) recovers the
// same truth as the ideal one, and every token message at its true time.
func TestGenAIPerfVariedRecoversTruth(t *testing.T) {
	col, want := importSynth(t, synth.WriteGenAIPerfVaried, "profile_export.json", genaiperf.New())
	checkTruth(t, col, want, true, 0)
	checkTokenTimes(t, col, small())
}

// TestVLLMRecoversTruth: vLLM's --save-detailed arrays (float seconds,
// ttft + itls rebuilt into messages) give back every token time to the
// ns; start_times are perf_counter readings (another clock), and the
// stream's end is not kept.
func TestVLLMRecoversTruth(t *testing.T) {
	col, want := importSynth(t, synth.WriteVLLM, synth.VLLMFileName(small()), vllmbench.New())
	check(t, col, want, expect{start: startRelative})
	checkTokenTimes(t, col, small())
}

// TestSGLangRecoversTruth: SGLang's --output-details arrays likewise, with
// no start times at all.
func TestSGLangRecoversTruth(t *testing.T) {
	col, want := importSynth(t, synth.WriteSGLang, synth.SGLangFileName(small()), sglangbench.New())
	check(t, col, want, expect{start: startNone})
	checkTokenTimes(t, col, small())
}

// TestGuideLLMRecoversTruth: guidellm's v0.4+ records (completed requests
// first, then errored ones, in float epoch seconds) give back the start,
// first and last token and the stream's end within the seconds'
// resolution; N from output_tokens.
func TestGuideLLMRecoversTruth(t *testing.T) {
	col, want := importSynthIn(t, t.TempDir(), synth.WriteGuideLLM, "benchmarks.json", guidellm.New())
	// The file lists successful requests first; keys follow the file.
	var ordered []synth.Truth
	for _, ok := range []bool{true, false} {
		for _, w := range want {
			if (w.Status == synth.StatusOK) == ok {
				ordered = append(ordered, w)
			}
		}
	}
	for i := range ordered {
		ordered[i].Key = i
	}
	const tol = 500 // ns: two roundings of epoch seconds (2^-22 s ≈ 238 ns apart)
	check(t, col, ordered, expect{start: startUnix, startTolNs: tol, ttftTolNs: tol, lastTolNs: tol, streamEnd: true})
}

// TestInferencePerfRecoversTruth: inference-perf's v0.6+ records (chunk
// times in perf_counter seconds) give back every token time to the ns, the
// stream's end (end_time) and N from the server's usage.
func TestInferencePerfRecoversTruth(t *testing.T) {
	col, want := importSynth(t, synth.WriteInferencePerf, "per_request_lifecycle_metrics.json", inferenceperf.New())
	check(t, col, want, expect{start: startRelative, streamEnd: true})
	checkTokenTimes(t, col, small())
}
