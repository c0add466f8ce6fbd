package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tokentrace/tokentrace/analyze/render"
)

// gateNoisyArgs is a gate over three real runs whose text output was the
// noisiest before the house style (docs/OUTPUT.md): latencies over 10 s,
// goodput as a fraction, the same warnings on every stage of a sweep.
var gateNoisyArgs = []string{"gate", "testdata/aiperf/qwen3vl30b-local-agent-c2", "testdata/genai-perf/openrouter-llama31-8b-c1-nonstream",
	"testdata/inference-perf/kubecon25-vllm-baseline", "--slo", "ttft<=500ms,e2e<=15s", "--gate", "p99(e2e)<=15s", "--gate", "goodput>=0.9", "--gate", "p99(ttft)<=1s"}

// TestGateNoisyGolden keeps gate's text output in a golden file (-update
// rewrites it); its verdict is a failure (exit 3).
func TestGateNoisyGolden(t *testing.T) {
	args := append([]string{}, gateNoisyArgs...)
	for i, a := range args {
		if strings.HasPrefix(a, "testdata/") {
			args[i] = "../../" + a
		}
	}
	out, err := run(t, args...)
	if exitCode(err) != 3 {
		t.Fatalf("exit %d (%v), want 3", exitCode(err), err)
	}
	checkGolden(t, "gate-noisy.txt", "$ tokentrace "+strings.Join(gateNoisyArgs, " ")+"\n"+out)
}

// TestGoldensFollowTheHouseStyle scans every golden text output (and the
// pasted output of docs/forensics.md) for what docs/OUTPUT.md forbids: a
// duration of 10 s or more written in ms (in a sentence, or in a table
// column or row in ms), a goodput or attainment not written as a
// percentage, a cut mid-word ("decode time pe…"), a warning longer than
// render.LineLimit, and the same warning code twice in one block.
func TestGoldensFollowTheHouseStyle(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	md, _ := filepath.Glob("testdata/*.md")
	files = append(append(files, md...), "../../analyze/reproduce/testdata/reconcile-classic.txt", "../../docs/forensics.md")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		if strings.HasSuffix(f, "forensics.md") {
			lines = textBlocks(lines)
		}
		for _, v := range styleViolations(lines) {
			t.Errorf("%s: %s", f, v)
		}
	}
}

// TestStyleScannerCatches: the scanner finds each violation it looks for
// (the old outputs' lines).
func TestStyleScannerCatches(t *testing.T) {
	for _, c := range [][]string{
		{"in flight: max 2 · ITL tail ≥ P99 (119781 ms)"},
		{"             metric     n   mean", "             E2E ms    20  10848   6039"},
		{"  E2E by output length (tokens)  n  P50 ms  P90 ms  P99 ms", "                     [256, 512)  9   18447   20072   20508"},
		{"goodput [ttft<=500ms]: 14 of 20 requests good = 0.7 · 0.128 good req/s"},
		{"FAIL    goodput>=0.9   run-a  0.7        >= 0.9       n=20"},
		{"warning: eagle: the reported TPOT and ITL are about half the decode time pe…"},
		{"== run a ==", "warning few_samples [ttft_ms]: P99 rests on 20 samples", "warning few_samples [e2e_ms]: P99 rests on 20 samples"},
	} {
		if len(styleViolations(c)) == 0 {
			t.Errorf("no violation found in %q", c)
		}
	}
	ok := []string{"== run a ==", "             metric     n   mean", "              E2E s    20  10.85  6.039", "             ITL ms  4490  47.54  119.8 s",
		"goodput [ttft<=500ms]: 14 of 20 requests good = 70% · 0.128 good req/s", "E2E ≈ 93.65 ms + 45.13 ms × N", "warning few_samples on 6 metrics: P99 rests …"}
	if v := styleViolations(ok); len(v) > 0 {
		t.Errorf("violations in conforming lines: %q", v)
	}
}

// textBlocks returns the lines of a Markdown file's ```text blocks.
func textBlocks(lines []string) []string {
	var out []string
	in := false
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "```text"):
			in = true
		case strings.HasPrefix(l, "```"):
			in = false
			out = append(out, "")
		case in:
			out = append(out, l)
		}
	}
	return out
}

var (
	msInProse = regexp.MustCompile(`(^|[^\w.])(\d+(?:\.\d+)?) ms\b`)
	midWord   = regexp.MustCompile(`[\p{L}\p{N}_]…`)
	cellRe    = regexp.MustCompile(`\S+(?: \S+)*`)
	bareNum   = regexp.MustCompile(`^[-+−]?\d+(?:\.\d+)?`)
	fraction  = regexp.MustCompile(`^0\.\d+$|^1$`)
	goodEq    = regexp.MustCompile(`good = (\S+)`)
	warnCode  = regexp.MustCompile(`^(?:- )?warning:? (?:data check )?(\S+?)[: ]`)
)

type cell struct {
	text string
	end  int // rune position after its last character
}

func cells(l string) []cell {
	var out []cell
	for _, m := range cellRe.FindAllStringIndex(l, -1) {
		out = append(out, cell{l[m[0]:m[1]], utf8.RuneCountInString(l[:m[1]])})
	}
	return out
}

// msValueOver10s reports whether a cell of a column in ms holds a bare
// number (no unit of its own) of 10000 or more.
func msValueOver10s(c string) bool {
	c = strings.Trim(c, "[]")
	for _, part := range strings.Split(c, ", ") {
		part = strings.TrimSpace(part)
		if strings.HasPrefix(part, "p=") || strings.HasSuffix(part, " s") || strings.Contains(part, " s ") || strings.Contains(part, " min") {
			continue
		}
		m := bareNum.FindString(part)
		rest := strings.TrimPrefix(part, m)
		if m == "" || strings.HasPrefix(rest, " s") || strings.HasPrefix(rest, " min") {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimLeft(strings.Replace(m, "−", "-", 1), "+"), 64)
		if err == nil && (v >= 10000 || v <= -10000) {
			return true
		}
	}
	return false
}

// styleViolations lists the house-style violations of an output's lines.
func styleViolations(lines []string) []string {
	var out []string
	bad := func(i int, why string) { out = append(out, "line "+strconv.Itoa(i+1)+": "+why+": "+lines[i]) }
	seen := map[string]bool{}
	var msCols map[int]bool // the ms columns of the table being read, by right edge
	var pctCols map[int]bool
	rowUnits := false // the table's rows carry their unit (the report's metric table)
	labelEnd := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "== ") || strings.HasPrefix(l, "### ") || strings.TrimSpace(l) == "" {
			seen = map[string]bool{}
		}
		// a sentence: no duration of 10 s or more in ms
		for _, m := range msInProse.FindAllStringSubmatch(l, -1) {
			if v, _ := strconv.ParseFloat(m[2], 64); v >= 10000 {
				bad(i, "a duration of 10 s or more in ms")
			}
		}
		if midWord.MatchString(l) {
			bad(i, "cut mid-word")
		}
		if m := goodEq.FindStringSubmatch(l); m != nil && !strings.HasSuffix(m[1], "%") {
			bad(i, "goodput not a percentage")
		}
		if m := warnCode.FindStringSubmatch(strings.TrimSpace(l)); m != nil && strings.HasPrefix(strings.TrimSpace(l), "warning") || m != nil && strings.HasPrefix(l, "- warning") {
			if seen[m[1]] {
				bad(i, "warning "+m[1]+" twice in one block")
			}
			seen[m[1]] = true
			if utf8.RuneCountInString(strings.TrimSpace(l)) > render.LineLimit+len(" (analyze/TRAPS.md)") {
				bad(i, "a warning longer than a line")
			}
		}
		cs := cells(l)
		// gate rows: a goodput or error-rate gate's value in percent
		if len(cs) >= 4 && (cs[0].text == "PASS" || cs[0].text == "FAIL") && (strings.HasPrefix(cs[1].text, "goodput") || strings.HasPrefix(cs[1].text, "error_rate")) {
			if v := cs[3].text; v != "undefined" && !strings.HasSuffix(v, "%") {
				bad(i, "a fraction gate's value not a percentage")
			}
		}
		// a table header: its columns in ms and in percent
		if len(cs) >= 3 && !strings.HasPrefix(strings.TrimSpace(l), "reported by") {
			ms, pct := map[int]bool{}, map[int]bool{}
			whole := strings.Contains(cs[0].text, "(ms)")
			for j, c := range cs {
				switch {
				case j > 0 && (strings.HasSuffix(c.text, " ms") || c.text == "ms"):
					ms[c.end] = true
				case j > 0 && whole && c.text != "n" && !strings.HasPrefix(c.text, "vs "):
					ms[c.end] = true
				case c.text == "goodput" || c.text == "SLO met" || c.text == "attainment":
					pct[c.end] = true
				}
			}
			isHeader := len(ms) > 0 || len(pct) > 0 || cs[0].text == "metric"
			if isHeader && (labelEnd < 0 || cs[0].end != labelEnd || cs[0].text == "metric") {
				msCols, pctCols, labelEnd, rowUnits = ms, pct, cs[0].end, cs[0].text == "metric"
				continue
			}
		}
		if labelEnd < 0 || len(cs) == 0 || cs[0].end != labelEnd {
			msCols, pctCols, labelEnd, rowUnits = nil, nil, -1, false
			continue
		}
		for j, c := range cs[1:] {
			inMs := msCols[c.end] || rowUnits && strings.HasSuffix(cs[0].text, " ms") && j > 0
			if inMs && msValueOver10s(strings.TrimRight(c.text, "*¹²³⁴⁵⁶⁷⁸⁹⁰")) {
				bad(i, "a duration of 10 s or more in a column in ms")
			}
			if pctCols[c.end] && c.text != "–" && !strings.HasSuffix(c.text, "%") && fraction.MatchString(c.text) {
				bad(i, "a fraction in a percentage column")
			}
		}
	}
	return out
}
