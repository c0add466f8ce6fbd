package analyze_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/render"
	"github.com/tokentrace/tokentrace/analyze/reproduce"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/registry"
	"github.com/tokentrace/tokentrace/internal/golden"
	"github.com/tokentrace/tokentrace/synth"
)

// allColumns hides the Analyzer's EventColumns, so that ReadTables reads
// every events column for it (the read before column selection).
type allColumns struct{ a *analyze.Analyzer }

func (s allColumns) Request(r *formats.Request, ev []formats.Event) error { return s.a.Request(r, ev) }
func (s allColumns) Run(r *formats.Run) error                             { return s.a.Run(r) }
func (s allColumns) StartRun(r *formats.Run) error                        { return s.a.StartRun(r) }

// byteTokens is a tokenizer counting one token per 3 bytes of text, so
// that counts depend on every byte of the text read.
type byteTokens struct{}

func (byteTokens) Name() string { return "bytes3" }
func (byteTokens) Count(s string, _ bool) (int, error) {
	return (len(s) + 2) / 3, nil
}

// importTables imports inputs into a new table directory and returns it.
func importTables(t *testing.T, inputs ...string) string {
	t.Helper()
	jobs, _, err := registry.Resolve(inputs, "")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	w, err := formats.NewParquetWriter(dir, formats.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := registry.Import(jobs, nil, ingest.Options{}, w); err != nil {
		w.Abort()
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// reportOf reads dir into a and returns the JSON report.
func reportOf(t *testing.T, dir string, sink formats.Sink, a *analyze.Analyzer, opt analyze.Options) string {
	t.Helper()
	if err := formats.ReadTables(dir, sink); err != nil {
		t.Fatal(err)
	}
	rep, err := a.Report(opt)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := render.WriteJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// toolConv is `report --convention tool`: each run under its tool's
// convention.
func toolConv(r *formats.Run) convention.Convention {
	if c, ok := tools.ForRun(r.Convention, r.Tool); ok {
		return c
	}
	return analyze.Canonical
}

// checkColumnsSameReport reads dir twice — every events column, and only
// the columns the Analyzer selects — under several analyzer setups, and
// requires byte-identical JSON reports (every statistic of every run). It
// returns the reports of the tokenizer setup, for the caller's checks.
func checkColumnsSameReport(t *testing.T, dir string) (withTokenizer string) {
	runs, err := formats.ReadRuns(dir)
	if err != nil {
		t.Fatal(err)
	}
	setups := []struct {
		name     string
		opt      analyze.Options
		mk       func() *analyze.Analyzer
		wantText bool
	}{
		{"canonical", analyze.Options{Tools: tools, Reproduce: reproduce.Reproducer(tools), Pool: true}, func() *analyze.Analyzer { return analyze.NewAnalyzer(analyze.Canonical) }, false},
		{"tool conventions", analyze.Options{Tools: tools, Reproduce: reproduce.Reproducer(tools), Convention: toolConv},
			func() *analyze.Analyzer { return analyze.NewAnalyzer(tools.Profiles()...) }, false},
		{"tool conventions, tokenizer", analyze.Options{Tools: tools, Reproduce: reproduce.Reproducer(tools), Convention: toolConv}, func() *analyze.Analyzer {
			a := analyze.NewAnalyzer(tools.Profiles()...)
			a.SetTokenizer(byteTokens{})
			return a
		}, true},
		{"recorded tokenizer unavailable", analyze.Options{Tools: tools, Reproduce: reproduce.Reproducer(tools), Convention: toolConv}, func() *analyze.Analyzer {
			a := analyze.NewAnalyzer(tools.Profiles()...)
			a.SetTokenizerOpener(func(string) (analyze.TokenCounter, error) { return nil, os.ErrNotExist })
			return a
		}, false},
	}
	for _, s := range setups {
		t.Run(s.name, func(t *testing.T) {
			a := s.mk()
			for i := range runs {
				cols := a.EventColumns(&runs[i])
				if got := cols&formats.ColText != 0; got != s.wantText {
					t.Errorf("run %s: reads text %v, want %v", runs[i].RunID, got, s.wantText)
				}
				if cols&formats.ColReasoningText == 0 {
					t.Errorf("run %s: reasoning_text not read (a request's reasoning is seen in it)", runs[i].RunID)
				}
			}
			projected := reportOf(t, dir, a, a, s.opt)
			full := s.mk()
			want := reportOf(t, dir, allColumns{full}, full, s.opt)
			if projected != want {
				t.Fatalf("report from the selected columns differs from the full read:\n%s", golden.FirstDiff([]byte(want), []byte(projected)))
			}
			if s.wantText {
				withTokenizer = want
			}
		})
	}
	return withTokenizer
}

// TestEventColumnsCorpus: the real corpus runs of every importer (client
// and server runs, streaming and not, with reasoning), as one table
// directory: the report from the Analyzer's selected columns equals the
// full read's, with and without a tokenizer.
func TestEventColumnsCorpus(t *testing.T) {
	var inputs []string
	for _, tool := range []string{"aiperf", "genai-perf", "guidellm", "inference-perf", "llmperf", "mlperf",
		"sglang-bench", "vllm-bench", "server-logs"} {
		dirs, _ := filepath.Glob(filepath.Join("..", "testdata", tool, "*"))
		inputs = append(inputs, dirs...)
	}
	if len(inputs) < 40 {
		t.Fatalf("found %d corpus runs, want the whole corpus (≥ 40)", len(inputs))
	}
	dir := importTables(t, inputs...)
	rep := checkColumnsSameReport(t, dir)
	// the tokenizer setup did count text read from the tables
	if !strings.Contains(rep, "tokenizer:bytes3") {
		t.Error("no run counted output tokens with the test tokenizer: the text path was not exercised")
	}
}

// TestEventColumnsSynth: a written synthetic GenAI-Perf run (streaming,
// one token per chunk, failures) gives the same report from the selected
// columns as from the full read.
func TestEventColumnsSynth(t *testing.T) {
	m := synth.Default()
	m.Requests = 300
	in := filepath.Join(t.TempDir(), "synth-run")
	if err := os.MkdirAll(in, 0o777); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(in, "profile_export.json"))
	if err != nil {
		t.Fatal(err)
	}
	var truth bytes.Buffer
	if err := synth.WriteGenAIPerf(f, &truth, m); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	rep := checkColumnsSameReport(t, importTables(t, in))
	if !strings.Contains(rep, "tokenizer:bytes3") {
		t.Error("the GenAI-Perf convention did not count output tokens with the test tokenizer")
	}
}

// TestEventColumnsHand: a hand-made streaming run whose messages carry
// several tokens each (the tokens column splits ITL under some
// conventions), content messages that also carry reasoning text (seen only
// in reasoning_text), several messages in one network read (read_index),
// a role message (a response only by has_choices) and a choices-less usage
// message: the selected columns give the full
// read's report.
func TestEventColumnsHand(t *testing.T) {
	dir := t.TempDir()
	w, err := formats.NewParquetWriter(dir, formats.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := func(v int64) *int64 { return &v }
	for _, tool := range []string{"aiperf", "vllm", "genai-perf"} {
		run := "hand-" + tool
		for k := int64(0); k < 40; k++ {
			var evs []formats.Event
			off := int64(30_000_000 + k*1_000_000)
			for j := int32(0); j < 12; j++ {
				e := formats.Event{RunID: run, RequestKey: k, Index: j, ReadIndex: j - j%3/2, OffsetNs: off,
					Kind: formats.KindContent, HasChoices: true}
				tok := int32(1 + (j+int32(k))%3)
				e.Tokens = &tok
				txt := strings.Repeat("x", int(tok)*3)
				e.Text = &txt
				if j == 2 && k%4 == 0 {
					r := "thinking"
					e.ReasoningText = &r
				}
				switch j {
				case 0: // counted as a response by vLLM's convention only
					e.Kind, e.Tokens, e.Text = formats.KindRole, nil, nil
				case 11:
					e.Kind, e.HasChoices, e.Tokens, e.Text = formats.KindUsage, false, nil, nil
				}
				evs = append(evs, e)
				off += 7_000_000 + int64(j%5)*1_500_000
			}
			r := &formats.Request{RunID: run, RequestKey: k, Status: formats.StatusOK, StartNs: p(1_700_000_000_000_000_000 + k*50_000_000),
				FirstTokenOffsetNs: p(evs[0].OffsetNs), LastTokenOffsetNs: p(evs[10].OffsetNs), StreamEndOffsetNs: p(evs[11].OffsetNs),
				MessageCount: 12, TokenMessageCount: 11, InputTokens: p(100), InputTokensSource: formats.SourceToolReported}
			if err := w.Request(r, evs); err != nil {
				t.Fatal(err)
			}
		}
		st := true
		if err := w.Run(&formats.Run{RunID: run, Tool: tool, Convention: tool, Streaming: &st, RequestCount: 40}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	checkColumnsSameReport(t, dir)
}

func (s allColumns) Batch(b *formats.Batch) error { return b.EachRow(s.Request) }
