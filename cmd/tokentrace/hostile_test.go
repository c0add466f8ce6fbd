package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tokentrace/tokentrace/synth"
)

// hostile is the catalogue of untrusted strings: terminal escapes (clear
// screen, colour, OSC title), a bell, NUL, DEL, a C1 CSI, the bidi
// override U+202E and isolate U+2066, markup, a very long line and, in
// the directory name (a file name is bytes), invalid UTF-8.
var hostile = []string{
	"\x1b[2J\x1b[H\x1b[31mred\x1b[0m", "\x1b]0;pwned-title\x07", "bell\a", "nul\x00byte", "del\x7f", "c1\u009b31m",
	"\u202eexe.txt", "iso\u2066late\u2069", "<script>alert('pwned')</script><img src=x onerror=alert(1)>",
	strings.Repeat("long-line-", 3000),
}

// hostileRuns writes two runs whose strings carry the catalogue: a
// synthetic AIPerf run (streaming, start times: every plot kind) whose
// failed requests' error message is the catalogue, in a directory whose
// name holds escapes, a bidi override, markup and invalid UTF-8; and the
// LLMPerf fixture with the catalogue as its model name and error text.
func hostileRuns(t *testing.T) (aiperfDir, llmperfDir string) {
	t.Helper()
	msg, _ := json.Marshal(strings.Join(hostile, " | "))
	root := t.TempDir()
	aiperfDir = filepath.Join(root, "run\x1b[2J\a\u202e<b>x<b>\xff\xfe\u009b")
	if err := os.Mkdir(aiperfDir, 0o755); err != nil {
		t.Skip("the file system refuses the name:", err)
	}
	m := synth.Default()
	m.Requests, m.FailureRate, m.Seed = 60, 0.2, 11
	var run, truth bytes.Buffer
	if err := synth.WriteAIPerf(&run, &truth, m); err != nil {
		t.Fatal(err)
	}
	data := bytes.ReplaceAll(run.Bytes(), []byte(`"upstream connection reset"`), msg)
	if bytes.Equal(data, run.Bytes()) {
		t.Fatal("no failed request's message replaced")
	}
	if err := os.WriteFile(filepath.Join(aiperfDir, "profile_export.jsonl"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	llmperfDir = filepath.Join(root, "llmperf\u202e\x1b[1m")
	if err := os.Mkdir(llmperfDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"summary.json", "individual_responses.json"} {
		b, err := os.ReadFile(filepath.Join("../../plots/testdata/xss-llmperf", f))
		if err != nil {
			t.Fatal(err)
		}
		b = regexp.MustCompile(`"(model|error_msg)": "[^"]*<script>[^"]*"`).ReplaceAll(b, []byte(`"$1": `+string(msg)))
		if err := os.WriteFile(filepath.Join(llmperfDir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return aiperfDir, llmperfDir
}

// rawUnsafe finds the first character in s that may act on a terminal or
// reorder text (formats.SafeText's set: C0 but newline — and tab where
// tabs is true —, DEL, C1, bidi embeddings, overrides and isolates,
// invalid UTF-8); "" when none.
func rawUnsafe(s string, tabs bool) string {
	for i, r := range s {
		switch {
		case r == utf8.RuneError:
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return "invalid UTF-8 at byte " + itoa(i)
			}
		case r == '\n', r == '\t' && tabs:
		case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return strings.TrimSpace(strings.ToValidUTF8(string(r), "")) + " " + itoa(int(r)) + " at byte " + itoa(i) + ": …" + strings.ToValidUTF8(s[max(0, i-40):i], "?") + "…"
		}
	}
	return ""
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestHostileStringsEveryOutput drives the catalogue through every output
// format — report, analyze (tables, report.json, report.html, SVG plots),
// gate (text, Markdown, JSON, JUnit), reconcile, capacity, plot --html —
// and stderr: no output holds a raw control or bidi character or invalid
// UTF-8 (JSON holds them as \u escapes, decoding to the values as
// imported), markup is escaped in HTML, SVG and XML, SVG and JUnit parse
// as XML, and no line of the text outputs carries the long line whole.
func TestHostileStringsEveryOutput(t *testing.T) {
	a, l := hostileRuns(t)
	outDir, plotDir := t.TempDir(), t.TempDir()
	junit := filepath.Join(t.TempDir(), "gate.xml")
	type output struct{ name, text string }
	var outs []output
	var jsons []output
	stderr := captureStderr(t, func() {
		for _, c := range []struct {
			name string
			args []string
			json bool
		}{
			{"report text", []string{"report", a, l}, false},
			{"report markdown", []string{"report", a, l, "--format", "markdown"}, false},
			{"report json", []string{"report", a, l, "--format", "json"}, true},
			{"analyze", []string{"analyze", a, l, "-o", outDir, "--slo", "ttft<=1s"}, false},
			{"gate text", []string{"gate", a, l, "--slo", "ttft<=1s", "--gate", "p99(ttft)<=1ms, error_rate<=1%", "--junit", junit}, false},
			{"gate markdown", []string{"gate", a, l, "--slo", "ttft<=1s", "--gate", "p99(ttft)<=1ms", "--format", "markdown"}, false},
			{"gate junit", []string{"gate", a, l, "--slo", "ttft<=1s", "--gate", "p99(ttft)<=1ms", "--format", "junit"}, false},
			{"gate json", []string{"gate", a, l, "--slo", "ttft<=1s", "--gate", "p99(ttft)<=1ms", "--format", "json"}, true},
			{"reconcile text", []string{"reconcile", a, l}, false},
			{"reconcile markdown", []string{"reconcile", a, l, "--format", "markdown"}, false},
			{"reconcile json", []string{"reconcile", a, l, "--format", "json"}, true},
			{"capacity text", []string{"capacity", a, l, "--slo", "ttft<=1s"}, false},
			{"capacity markdown", []string{"capacity", a, l, "--slo", "ttft<=1s", "--format", "markdown"}, false},
			{"capacity json", []string{"capacity", a, l, "--slo", "ttft<=1s", "--format", "json"}, true},
			{"plot", []string{"plot", a, l, "-o", plotDir, "--slo", "ttft<=1s", "--html"}, false},
		} {
			out, errb, err := runBoth(t, c.args...)
			if err != nil && exitCode(err) != exitGateFailed {
				t.Errorf("%s: %v", c.name, err)
			}
			if c.json {
				jsons = append(jsons, output{c.name, out})
			} else {
				outs = append(outs, output{c.name, out})
			}
			outs = append(outs, output{c.name + " (command's stderr)", errb})
		}
	})
	outs = append(outs, output{"stderr", stderr})
	for _, o := range outs {
		if bad := rawUnsafe(o.text, false); bad != "" {
			t.Errorf("%s: raw %s", o.name, bad)
		}
		for _, line := range strings.Split(o.text, "\n") {
			if strings.Contains(line, strings.Repeat("long-line-", 300)) {
				t.Errorf("%s: the long line is printed whole (%d bytes)", o.name, len(line))
				break
			}
		}
	}
	if !strings.Contains(outs[0].text, "errors: 9 × error 502 server_error: ?[2J?[H?[31mred?[0m | ?]0;pwned-title? | bell? | nul?byte | del? | c1?31m | ?exe.txt | …") {
		t.Errorf("the text report does not show the catalogue sanitized:\n%s", outs[0].text)
	}
	// JSON: exact values, escaped
	rep, _ := os.ReadFile(filepath.Join(outDir, "report.json"))
	jsons = append(jsons, output{"report.json", string(rep)})
	for _, j := range jsons {
		if bad := rawUnsafe(j.text, false); bad != "" {
			t.Errorf("%s: raw %s", j.name, bad)
		}
		if !json.Valid([]byte(j.text)) {
			t.Errorf("%s: not valid JSON", j.name)
		}
	}
	var parsed struct {
		Runs []struct {
			RunID string `json:"run_id"`
			Model string `json:"model"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(rep, &parsed); err != nil || len(parsed.Runs) != 2 {
		t.Fatalf("report.json: %v %+v", err, parsed)
	}
	if !strings.Contains(parsed.Runs[1].Model, "\u202eexe.txt") || !strings.Contains(parsed.Runs[1].Model, "\x1b[2J") || !strings.Contains(parsed.Runs[0].RunID, "\u202e") {
		t.Errorf("JSON values are not the imported ones: %q / %q", parsed.Runs[0].RunID, parsed.Runs[1].Model[:40])
	}
	// HTML and SVG: markup escaped, control and bidi characters gone,
	// SVG well-formed XML
	var pages []output
	for _, p := range []string{filepath.Join(outDir, "report.html"), filepath.Join(plotDir, "report.html")} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, output{p, string(b)})
	}
	svgs, _ := filepath.Glob(filepath.Join(outDir, "plots", "*.svg"))
	if len(svgs) < 6 {
		t.Fatalf("%d SVG plots", len(svgs))
	}
	for _, p := range svgs {
		b, _ := os.ReadFile(p)
		pages = append(pages, output{p, string(b)})
		d := xml.NewDecoder(bytes.NewReader(b))
		for {
			if _, err := d.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Errorf("%s: not well-formed XML: %v", p, err)
				break
			}
		}
	}
	jb, _ := os.ReadFile(junit)
	pages = append(pages, output{"junit file", string(jb)})
	if err := xml.Unmarshal(jb, new(struct{})); err != nil {
		t.Errorf("junit: %v", err)
	}
	for _, p := range pages {
		if bad := rawUnsafe(p.text, true); bad != "" {
			t.Errorf("%s: raw %s", p.name, bad)
		}
		if regexp.MustCompile(`(?i)<(script|img)`).MatchString(p.text) {
			t.Errorf("%s: unescaped markup", p.name)
		}
	}
	if !strings.Contains(pages[0].text, "&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;") || !strings.Contains(pages[0].text, "?exe.txt") {
		t.Error("report.html does not show the catalogue as text")
	}
}
