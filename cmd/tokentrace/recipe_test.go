package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCIGateRecipe runs every tokentrace command of docs/ci-goodput-gate.md
// (the sh blocks, and the gate step of the GitHub Actions job) with the
// built binary, in a scratch directory where testdata/ and docs/ are the
// repository's, $RESULTS is a real LLMPerf run and $BASELINE another, and
// checks each command's exit status against its "# exit N" comment (0
// without one). The benchmark tools themselves are not installable here.
func TestCIGateRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	repo, _ := filepath.Abs("../..")
	doc, err := os.ReadFile(filepath.Join(repo, "docs/ci-goodput-gate.md"))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	bin := buildBinary(t, work)
	for _, d := range []string{"testdata", "docs"} {
		if err := os.Symlink(filepath.Join(repo, d), filepath.Join(work, d)); err != nil {
			t.Fatal(err)
		}
	}
	// The GitHub Actions job's paths: results/, baseline/, slo.yaml.
	must(t, os.CopyFS(filepath.Join(work, "results"), os.DirFS(filepath.Join(repo, "testdata/llmperf/leaderboard-groq-70b"))))
	must(t, os.CopyFS(filepath.Join(work, "baseline"), os.DirFS(filepath.Join(repo, "testdata/llmperf/leaderboard-anyscale-70b"))))
	must(t, os.Symlink(filepath.Join(repo, "docs/examples/slo.yaml"), filepath.Join(work, "slo.yaml")))

	// The slo.yaml shown in the recipe is the file it runs.
	text := string(doc)
	i := strings.Index(text, "```yaml\n# Consumer chat")
	example, _ := os.ReadFile(filepath.Join(repo, "docs/examples/slo.yaml"))
	if i < 0 || !strings.HasPrefix(text[i+len("```yaml\n"):], string(example)) {
		t.Error("the recipe's slo.yaml block differs from docs/examples/slo.yaml")
	}

	gomod, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	module := strings.TrimSpace(strings.TrimPrefix(strings.SplitN(string(gomod), "\n", 2)[0], "module"))
	installs := 0
	var cmds []string
	inBlock := ""
	blockInstalls := 0
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "```"):
			if inBlock == "" {
				inBlock = strings.TrimPrefix(line, "```")
				blockInstalls = 0
			} else {
				if blockInstalls > 1 {
					t.Errorf("a CI job of the recipe installs tokentrace %d times", blockInstalls)
				}
				inBlock = ""
			}
		case inBlock == "sh":
			if strings.TrimSpace(line) != "" {
				cmds = append(cmds, line)
			}
		case inBlock == "yaml" && strings.Contains(line, "run: tokentrace "):
			cmds = append(cmds, strings.TrimSpace(strings.SplitN(line, "run: ", 2)[1]))
		case (inBlock == "yaml" || inBlock == "groovy") && strings.Contains(line, "go install "):
			installs++
			blockInstalls++
			if !strings.Contains(line, "go install "+module+"/cmd/tokentrace@") {
				t.Errorf("the recipe installs %q, not this module (%s)", strings.TrimSpace(line), module)
			}
		}
	}
	// one go install per CI job (GitHub Actions, GitLab CI, Jenkins)
	if installs != 3 {
		t.Errorf("the recipe's three CI jobs should install tokentrace once each with go install; found %d", installs)
	}
	if len(cmds) < 10 {
		t.Fatalf("found %d commands in the recipe", len(cmds))
	}
	summary := filepath.Join(work, "summary.md")
	for _, c := range cmds {
		runDocCommand(t, "docs/ci-goodput-gate.md", work, bin, c,
			"RESULTS=testdata/llmperf/leaderboard-groq-70b", "BASELINE=testdata/llmperf/leaderboard-anyscale-70b",
			"GITHUB_STEP_SUMMARY="+summary)
	}
	// the README's gate tour runs too (its commands start bin/tokentrace)
	readme, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	tour := string(readme)
	if i := strings.Index(tour, "## Gate a release"); i < 0 {
		t.Error("README has no gate tour")
	} else {
		tour = tour[i:]
		tour = tour[strings.Index(tour, "```sh\n")+6:]
		tour = tour[:strings.Index(tour, "```")]
		n := 0
		for _, c := range strings.Split(strings.ReplaceAll(tour, "\\\n", " "), "\n") {
			if c = strings.TrimSpace(c); c == "" {
				continue
			}
			n++
			runDocCommand(t, "README", work, bin, strings.Replace(c, "bin/tokentrace", "tokentrace", 1))
		}
		if n != 3 {
			t.Errorf("README gate tour: %d commands, want 3", n)
		}
	}

	if b, _ := os.ReadFile(summary); !strings.Contains(string(b), "### ✅ tokentrace gate: PASS: 7 of 7 gates hold") {
		t.Errorf("job summary:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(work, "gate.xml")); err != nil {
		t.Errorf("the recipe's --junit gate.xml was not written: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
