package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestVersionFlag(t *testing.T) {
	cmd, err := run(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	flag, err := run(t, "--version")
	if err != nil {
		t.Fatal(err)
	}
	if flag != cmd || !strings.HasPrefix(flag, "tokentrace ") || !strings.Contains(flag, "(table schema ") || !strings.HasSuffix(flag, ")\n") {
		t.Errorf("--version %q, version %q", flag, cmd)
	}
}

// TestQuiet: -q prints no report and says nothing of what it wrote, but
// writes the tables, report.json, report.html and --junit as usual, and
// keeps the exit status.
func TestQuiet(t *testing.T) {
	dir := t.TempDir()
	out, errb, err := runBoth(t, "analyze", demoInputs[0], "-o", dir, "-q")
	if err != nil {
		t.Fatal(err)
	}
	if out != "" || errb != "" {
		t.Errorf("-q printed: stdout %q, stderr %q", out, errb)
	}
	for _, f := range []string{"requests.parquet", "report.json", "report.html", "plots/ccdf-ttft.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("-q: %v", err)
		}
	}
	// the same without -q prints the report and what was written
	out, errb, err = runBoth(t, "analyze", demoInputs[0], "-o", t.TempDir())
	if err != nil || !strings.Contains(out, "== run qwen3vl30b-local-agent-c2 ==") || !strings.Contains(errb, "tokentrace: wrote ") {
		t.Errorf("without -q: %v; stdout %q…; stderr %q", err, out[:min(len(out), 60)], errb)
	}
	junit := filepath.Join(dir, "gate.xml")
	out, _, err = runBoth(t, "gate", demoInputs[1], "--gate", "goodput>=0.99", "--slo", "e2e<=15s", "--junit", junit, "--quiet")
	if exitCode(err) != 3 || out != "" {
		t.Errorf("gate -q: exit %d, stdout %q", exitCode(err), out)
	}
	if b, err := os.ReadFile(junit); err != nil || !bytes.Contains(b, []byte("<failure")) {
		t.Errorf("gate -q --junit: %v", err)
	}
}

// TestDidYouMean: a misspelt flag, convention, preset, format, plot kind
// or importer name is a usage error naming the closest valid one.
func TestDidYouMean(t *testing.T) {
	in := demoInputs[0]
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", in, "--convntion", "tool"}, "unknown flag: --convntion; did you mean --convention?"},
		{[]string{"report", in, "--percentile=50"}, "unknown flag: --percentile; did you mean --percentiles?"},
		{[]string{"report", in, "--zzzzzzzz"}, "unknown flag: --zzzzzzzz (see tokentrace report --help)"},
		{[]string{"report", in, "--convention", "tokentrase"}, `unknown convention "tokentrase"`},
		{[]string{"report", in, "--convention", "tokentrase"}, `; did you mean "tokentrace"?`},
		{[]string{"report", in, "--convention", "tol"}, `did you mean "tool" (each run's own tool's convention)?`},
		{[]string{"reconcile", in, "--to-convention", "llmperf@2024-4"}, `did you mean "llmperf@2024-04"?`},
		{[]string{"gate", in, "--preset", "caht"}, `unknown preset "caht"`},
		{[]string{"gate", in, "--preset", "caht"}, `did you mean "chat"?`},
		{[]string{"report", in, "--format", "jsn"}, `--format "jsn": want text, json, markdown or csv; did you mean "json"?`},
		{[]string{"gate", in, "--gate", "p99(ttft)<=1s", "--format", "junt"}, `did you mean "junit"?`},
		{[]string{"plot", in, "-o", t.TempDir(), "--kind", "ccdf,timelin"}, `plot kind "timelin"`},
		{[]string{"plot", in, "-o", t.TempDir(), "--kind", "ccdf,timelin"}, `did you mean "timeline"?`},
		{[]string{"report", in, "--from", "aipef"}, `did you mean "aiperf"?`},
		{[]string{"import", in, "-o", t.TempDir(), "--layout", "hvie"}, `did you mean "hive"?`},
	} {
		_, _, err := runBoth(t, c.args...)
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v (exit %d), want %q", c.args, err, exitCode(err), c.want)
		}
	}
	// a misspelt command: cobra's suggestion, indented, as printed
	_, _, err := runBoth(t, "reprot", in)
	if err == nil || exitCode(err) != 2 {
		t.Fatalf("reprot: %v", err)
	}
	if got := warnText("%v", err); !strings.Contains(got, "Did you mean this?\n    report\n") {
		t.Errorf("reprot: printed %q", got)
	}
}

// complete asks cobra's completion command for the candidates of the
// last argument.
func complete(t *testing.T, args ...string) []string {
	t.Helper()
	out, _, err := runBoth(t, append([]string{cobra.ShellCompRequestCmd}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if l != "" && !strings.HasPrefix(l, ":") && !strings.HasPrefix(l, "Completion ended") {
			got = append(got, l)
		}
	}
	return got
}

func TestFlagValueCompletion(t *testing.T) {
	has := func(list []string, want ...string) bool {
		for _, w := range want {
			found := false
			for _, l := range list {
				found = found || l == w
			}
			if !found {
				return false
			}
		}
		return true
	}
	for _, c := range []struct {
		args []string
		want []string
		not  string
	}{
		{[]string{"report", "x", "--convention", ""}, []string{"tokentrace", "tool", "llmperf@2024-04", "genai-perf"}, ""},
		{[]string{"report", "x", "--convention", "llm"}, []string{"llmperf@2023-12", "llmperf@2024-04"}, "tokentrace"},
		{[]string{"report", "x", "--format", ""}, []string{"text", "json", "markdown", "csv"}, "junit"},
		{[]string{"compare", "x", "y", "--format", ""}, []string{"text", "json", "markdown", "csv"}, "junit"},
		{[]string{"reconcile", "x", "--format", ""}, []string{"text", "json", "markdown"}, "csv"},
		{[]string{"gate", "x", "--format", ""}, []string{"text", "markdown", "json", "junit"}, ""},
		{[]string{"gate", "x", "--preset", ""}, []string{"chat", "mlperf-llama2-70b-interactive"}, ""},
		{[]string{"plot", "x", "--kind", ""}, []string{"ccdf", "e2e-osl", "timeline", "itl-position", "goodput"}, ""},
		{[]string{"plot", "x", "--kind", "ccdf,e"}, []string{"ccdf,e2e-osl"}, "ccdf,goodput"},
		{[]string{"plot", "x", "--format", ""}, []string{"svg", "png", "pdf"}, ""},
		{[]string{"analyze", "x", "--plot-format", ""}, []string{"svg", "png", "pdf"}, ""},
		{[]string{"import", "x", "--from", ""}, []string{"aiperf", "genai-perf", "llmperf", "server-log"}, ""},
		{[]string{"import", "x", "--layout", ""}, []string{"flat", "hive"}, ""},
		{[]string{"export", "x", "--format", ""}, []string{"arrow", "csv", "perfetto"}, ""},
		{[]string{"report", "x", "--tokenizer", "cl"}, []string{"cl100k_base"}, ""},
		{[]string{"reconcile", "x", "--to-convention", "tok"}, []string{"tokentrace"}, ""},
	} {
		got := complete(t, c.args...)
		if !has(got, c.want...) || c.not != "" && has(got, c.not) {
			t.Errorf("%v: %v, want %v without %q", c.args, got, c.want, c.not)
		}
	}
}

// TestEveryCommandDocumented: every command has a long help and an
// Example section, and every example line is a command line its command
// parses (flags that exist, values of the right type).
func TestEveryCommandDocumented(t *testing.T) {
	root := newRoot()
	n := 0
	for _, c := range root.Commands() {
		if c.Name() == "help" || c.Name() == "completion" { // cobra's own
			continue
		}
		if strings.TrimSpace(c.Long) == "" {
			t.Errorf("%s has no long help", c.Name())
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no Example section", c.Name())
		}
		for _, line := range strings.Split(c.Example, "\n") {
			line = strings.TrimSpace(line)
			if i := strings.Index(line, "tokentrace "); i < 0 || strings.HasPrefix(line, "#") {
				continue
			} else {
				line = line[i:]
			}
			if i := strings.Index(line, " #"); i >= 0 {
				line = line[:i]
			}
			if i := strings.Index(line, " >>"); i >= 0 {
				line = line[:i]
			}
			args := shellWords(line)[1:]
			fresh := newRoot()
			fresh.InitDefaultVersionFlag()
			sub, rest, err := fresh.Find(args)
			if err != nil || sub == fresh && len(args) > 0 && !strings.HasPrefix(args[0], "-") {
				t.Errorf("%s example %q: no such command (%v)", c.Name(), line, err)
				continue
			}
			if err := sub.ParseFlags(rest); err != nil {
				t.Errorf("%s example %q: %v", c.Name(), line, err)
			}
			if sub != fresh && sub.Name() != c.Name() && c.Name() != "memory" { // a help topic's examples run other commands
				t.Errorf("%s example %q runs %s", c.Name(), line, sub.Name())
			}
			n++
		}
	}
	if n < 25 {
		t.Errorf("only %d example lines checked", n)
	}
}

// shellWords splits a command line at spaces outside single or double
// quotes and drops the quotes.
func shellWords(s string) []string {
	var out []string
	var b strings.Builder
	quote := rune(0)
	in := false
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '\'' || r == '"'):
			quote, in = r, true
		case quote == 0 && r == ' ':
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, b.String())
	}
	return out
}

// TestFlagsOnlyWhereTheyAct: --drop-text is shown on the commands that
// write an events table (its old name --no-text still works there,
// hidden); the report-shaping flags only where a report is printed; an
// inert flag given anyway is accepted with a deprecation note.
func TestFlagsOnlyWhereTheyAct(t *testing.T) {
	help := func(name string) string {
		out, _, err := runBoth(t, name, "--help")
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, name := range []string{"analyze", "import", "export"} {
		h := help(name)
		if !strings.Contains(h, "--drop-text") || strings.Contains(h, "--no-text") {
			t.Errorf("%s help: --drop-text shown %v, --no-text shown %v", name, strings.Contains(h, "--drop-text"), strings.Contains(h, "--no-text"))
		}
	}
	for _, name := range []string{"report", "gate", "capacity", "plot", "reconcile"} {
		if h := help(name); strings.Contains(h, "-text") {
			t.Errorf("%s help shows a text flag", name)
		}
	}
	for _, name := range []string{"gate", "capacity"} {
		h := help(name)
		for _, f := range []string{"--osl-buckets", "--isl-buckets", "--percentiles"} {
			if strings.Contains(h, f) {
				t.Errorf("%s help shows %s", name, f)
			}
		}
	}
	if !strings.Contains(help("gate"), "--pool") || strings.Contains(help("capacity"), "--pool") || !strings.Contains(help("report"), "--osl-buckets") {
		t.Error("--pool/--osl-buckets shown in the wrong places")
	}
	if !strings.Contains(help("report"), "Examples:") {
		t.Error("report help has no Examples section")
	}
	// the old name still works where it acts
	dir := t.TempDir()
	if _, _, err := runBoth(t, "import", "../../testdata/aiperf/llama32-3b-gguf-c1-mixed-timeouts", "-o", dir, "--no-text"); err != nil {
		t.Errorf("import --no-text: %v", err)
	}
	// an inert flag: accepted, and said to do nothing
	// (cobra prints the note with Print: to stderr unless an output was
	// set, as this test sets one)
	errb, _, err := runBoth(t, "gate", demoInputs[0], "--gate", "p99(ttft)<=10s", "--osl-buckets", "0,100,inf")
	if err != nil || !strings.Contains(errb, "Flag --osl-buckets has been deprecated, it has no effect: gate prints no report tables") {
		t.Errorf("gate --osl-buckets: %v; stderr %q", err, errb)
	}
}
