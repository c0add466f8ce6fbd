package plots_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/plots"
)

// xssLabel is a run label (it becomes the run id, legend text and a file
// name) carrying markup, beside the edited fixture's model name and error
// text (testdata/xss-llmperf/SOURCE.md).
const xssLabel = `run<script>document.title='pwned-label'</script>`

// htmlReport builds report.html for the AIPerf streaming run and the
// edited LLMPerf fixture, labelled xssLabel.
func htmlReport(t *testing.T) []byte {
	t.Helper()
	_, inputs, slo := load(t, "ttft<=500ms", []string{"agent-c2", xssLabel},
		"../testdata/aiperf/qwen3vl30b-local-agent-c2", "testdata/xss-llmperf")
	set, err := plots.Build(inputs, slo, plots.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := plots.WriteHTML(&b, inputs, set); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestHTMLEscapesTraceStrings(t *testing.T) {
	page := htmlReport(t)
	s := string(page)
	if regexp.MustCompile(`(?i)<script|<img`).MatchString(s) {
		i := regexp.MustCompile(`(?i)<script|<img`).FindStringIndex(s)[0]
		t.Fatalf("markup from the trace reached the page unescaped: …%s…", s[max(0, i-80):min(len(s), i+80)])
	}
	for _, want := range []string{
		"Llama-2-7b-chat-hf&lt;script&gt;document.title=&#39;pwned-model&#39;&lt;/script&gt;",                             // model (html/template)
		"&lt;script&gt;document.title=&#39;pwned-error&#39;&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt; Bad Gateway", // the message as written (one request)
		"run&lt;script&gt;document.title=&#39;pwned-label&#39;&lt;/script&gt;",                                            // the label in the tables
		"run&lt;script&gt;document.title=&#39;pwned-label&#39;&lt;/script&gt; (n=1)",                                      // … and in an SVG legend (gonum/plot)
	} {
		if !strings.Contains(s, want) {
			t.Errorf("page lacks the escaped text %q", want)
		}
	}
	// self-contained: nothing to fetch (the SVG namespace URIs are names,
	// not fetched), no script at all
	for _, m := range regexp.MustCompile(`(?i)(src|href)\s*=\s*"([^"]*)"`).FindAllStringSubmatch(s, -1) {
		if !strings.HasPrefix(m[2], "#") {
			t.Errorf("page references %s=%q", m[1], m[2])
		}
	}
	if strings.Count(s, "<svg") < 5 {
		t.Errorf("only %d inline SVG plots", strings.Count(s, "<svg"))
	}
	if !strings.Contains(s, "Plots skipped") || !strings.Contains(s, "timeline of run&lt;script&gt;") {
		t.Error("skipped plots not listed with their reason")
	}
	// the report's numbers (same as the text report of this run)
	for _, want := range []string{
		`<tr><td class="t">TTFT</td><td class="t">ms</td><td>20</td><td>174.6</td><td>179.1</td><td>220.2</td><td>222.8</td><td>229.0</td><td>230.6</td><td>[222.4, –]</td></tr>`,
		"Goodput [ttft&lt;=500ms]: 20 of 20 requests good = 100.0% · 0.184 good req/s.",
		`<tr><td class="t">[256, 512)</td><td>9</td><td>18447</td><td>20072</td><td>20508</td></tr>`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// a table of contents whose every link has its target
	if !strings.Contains(s, `<nav id="contents">`) {
		t.Error("no table of contents")
	}
	links := regexp.MustCompile(`href="#([^"]+)"`).FindAllStringSubmatch(s, -1)
	if len(links) < 10 {
		t.Errorf("%d in-page links", len(links))
	}
	for _, m := range links {
		if !strings.Contains(s, `id="`+m[1]+`"`) {
			t.Errorf("link #%s has no target", m[1])
		}
	}
	// hover texts: on the CCDF lines and markers, on every e2e-osl request
	// (its request_key), escaped
	for _, want := range []string{
		"<title>run&lt;script&gt;document.title=&#39;pwned-label&#39;&lt;/script&gt; (n=1)\nTTFT P50 = 4942 ms</title>",
		"<title>agent-c2 (n=20)\nTTFT: P50 179.1 ms · P90 220.2 ms · P99 229.0 ms · max 230.6 ms</title>",
		"<title>agent-c2 (n=20)\nTTFT P99 = 229.0 ms</title>",
		"<title>request_key 0\nN 286.0 tok · E2E 12933 ms</title>",
		"<title>gaps 65–72 (n=",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("page lacks the hover text %q", want)
		}
	}
	if n := strings.Count(s, `<circle `); n < 50 {
		t.Errorf("%d hover circles", n)
	}
	if !bytes.Equal(page, htmlReport(t)) {
		t.Error("report.html differs between two builds of the same input")
	}
}
