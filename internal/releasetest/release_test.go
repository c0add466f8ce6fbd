// Package releasetest checks the release and CI files at the repository's
// root — Dockerfile, .goreleaser.yaml, action.yml — without the tools
// that consume them (no image can be built here; goreleaser check runs in
// CI only, .ci/run): the Dockerfile is parsed with BuildKit's own parser
// and its stages checked, the goreleaser targets and version flag checked
// against the code, and each `run:` step of the GitHub Action executed as
// a runner would, on a bundled run.
package releasetest

import (
	"encoding/xml"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	dfparser "github.com/moby/buildkit/frontend/dockerfile/parser"
	"gopkg.in/yaml.v3"
)

const root = "../.."

// versionFlag is the -X flag that sets the version at link time.
const versionFlag = "-X github.com/tokentrace/tokentrace/formats.Version="

// TestVersionVariable: the variable the release files set with -X exists
// as a string variable initialized to a constant (what -X requires).
func TestVersionVariable(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(root, "formats", "version.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "Version" {
			return true
		}
		found = len(vs.Values) == 1
		if id, ok := vs.Values[0].(*ast.Ident); !ok || id.Name != "DevVersion" {
			t.Errorf("formats.Version = %v; -X needs a string variable initialized to a constant", vs.Values[0])
		}
		return false
	})
	if !found {
		t.Fatal("formats/version.go declares no var Version")
	}
	if !strings.Contains(versionFlag, "/formats.Version=") {
		t.Fatal("versionFlag")
	}
}

// instr is a Dockerfile instruction as BuildKit parses it.
type instr struct {
	cmd   string   // lower case: from, run, copy, …
	args  []string // the words after it (a RUN's shell command as one)
	flags []string // --from=build, …
	json  bool     // exec form (["…"])
	line  int
}

func parseDockerfile(t *testing.T) []instr {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := dfparser.Parse(f)
	if err != nil {
		t.Fatalf("Dockerfile: BuildKit's parser: %v", err)
	}
	for _, w := range res.Warnings {
		t.Errorf("Dockerfile: BuildKit warns: %s (line %d)", w.Short, w.Location.Start.Line)
	}
	var out []instr
	for _, n := range res.AST.Children {
		in := instr{cmd: strings.ToLower(n.Value), flags: n.Flags, json: n.Attributes["json"], line: n.StartLine}
		for a := n.Next; a != nil; a = a.Next {
			in.args = append(in.args, a.Value)
		}
		out = append(out, in)
	}
	return out
}

// TestDockerfileStages: a multi-stage build — a Go stage named build that
// compiles ./cmd/tokentrace with cgo off (a static binary) and the release
// version flag, from the Go version go.mod names; then a final stage on a
// minimal base (distroless static or scratch) holding only that binary,
// running as a non-root user with an exec-form entrypoint.
func TestDockerfileStages(t *testing.T) {
	ins := parseDockerfile(t)
	var stages [][]instr
	args := map[string]string{}
	for _, in := range ins {
		switch {
		case in.cmd == "from":
			stages = append(stages, []instr{in})
		case len(stages) == 0:
			if in.cmd != "arg" {
				t.Errorf("line %d: %s before the first FROM", in.line, in.cmd)
				continue
			}
			k, v, _ := strings.Cut(in.args[0], "=")
			args[k] = v
		default:
			stages[len(stages)-1] = append(stages[len(stages)-1], in)
		}
	}
	if len(stages) != 2 {
		t.Fatalf("%d stages, want 2 (build, runtime)", len(stages))
	}

	// The build stage.
	build := stages[0]
	from := build[0].args
	if len(from) != 3 || !strings.EqualFold(from[1], "AS") || from[2] != "build" || !strings.HasPrefix(from[0], "golang:${GO_VERSION}") {
		t.Errorf("first stage: FROM %q, want golang:${GO_VERSION}… AS build", from)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(gomod)
	if m == nil || args["GO_VERSION"] != string(m[1]) {
		t.Errorf("ARG GO_VERSION=%q, go.mod says go %s", args["GO_VERSION"], m[1])
	}
	var buildRun string
	for _, in := range build {
		if in.cmd == "run" && strings.Contains(strings.Join(in.args, " "), "go build") {
			buildRun = strings.Join(in.args, " ")
		}
	}
	for _, want := range []string{"CGO_ENABLED=0", "go build", "./cmd/tokentrace", "-o /out/tokentrace", versionFlag + "${VERSION}", "-trimpath"} {
		if !strings.Contains(buildRun, want) {
			t.Errorf("build stage: the go build RUN lacks %q: %s", want, buildRun)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "tokentrace", "main.go")); err != nil {
		t.Errorf("./cmd/tokentrace: %v", err)
	}

	// The runtime stage.
	rt := stages[1]
	base := rt[0].args[0]
	if !strings.HasPrefix(base, "gcr.io/distroless/static") && base != "scratch" {
		t.Errorf("final stage base %q, want a minimal one (distroless/static, scratch)", base)
	}
	var copies, users, entry []instr
	for _, in := range rt[1:] {
		switch in.cmd {
		case "copy":
			copies = append(copies, in)
		case "user":
			users = append(users, in)
		case "entrypoint":
			entry = append(entry, in)
		case "run", "add":
			t.Errorf("line %d: %s in the final stage (it holds the binary only; distroless has no shell)", in.line, in.cmd)
		}
	}
	if len(copies) != 1 || !slices.Contains(copies[0].flags, "--from=build") || copies[0].args[0] != "/out/tokentrace" {
		t.Errorf("final stage copies %+v, want the binary from the build stage only", copies)
	}
	if len(users) != 1 || strings.HasPrefix(users[0].args[0], "root") || users[0].args[0] == "0" {
		t.Errorf("final stage USER %+v, want a non-root user", users)
	}
	if len(entry) != 1 || !entry[0].json || len(copies) == 1 && entry[0].args[0] != copies[0].args[1] {
		t.Errorf("ENTRYPOINT %+v: want the exec form of the copied binary", entry)
	}

	ignore, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".git", "**/node_modules"} {
		if !slices.Contains(strings.Split(string(ignore), "\n"), p) {
			t.Errorf(".dockerignore does not exclude %s", p)
		}
	}
}

// TestGoreleaserConfig: static binaries (cgo off) of ./cmd/tokentrace
// for linux, darwin and windows on amd64 and arm64, the version set with
// the flag the code reads, and archive files that exist. (goreleaser
// check validates the file itself in CI.)
func TestGoreleaserConfig(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Version int `yaml:"version"`
		Builds  []struct {
			Main    string   `yaml:"main"`
			Binary  string   `yaml:"binary"`
			Env     []string `yaml:"env"`
			Goos    []string `yaml:"goos"`
			Goarch  []string `yaml:"goarch"`
			Ldflags []string `yaml:"ldflags"`
		} `yaml:"builds"`
		Archives []struct {
			Files []string `yaml:"files"`
		} `yaml:"archives"`
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Version != 2 || len(cfg.Builds) != 1 {
		t.Fatalf("version %d, %d builds; want goreleaser's version 2 format and one build", cfg.Version, len(cfg.Builds))
	}
	bd := cfg.Builds[0]
	if bd.Main != "./cmd/tokentrace" || bd.Binary != "tokentrace" || !slices.Contains(bd.Env, "CGO_ENABLED=0") {
		t.Errorf("build %+v: want ./cmd/tokentrace as tokentrace with CGO_ENABLED=0", bd)
	}
	slices.Sort(bd.Goos)
	slices.Sort(bd.Goarch)
	if !slices.Equal(bd.Goos, []string{"darwin", "linux", "windows"}) || !slices.Equal(bd.Goarch, []string{"amd64", "arm64"}) {
		t.Errorf("targets %v × %v", bd.Goos, bd.Goarch)
	}
	if !strings.Contains(strings.Join(bd.Ldflags, " "), versionFlag+"{{ .Version }}") {
		t.Errorf("ldflags %q do not set %s", bd.Ldflags, versionFlag)
	}
	for _, a := range cfg.Archives {
		for _, f := range a.Files {
			if _, err := os.Stat(filepath.Join(root, f)); err != nil {
				t.Errorf("archive file %s: %v", f, err)
			}
		}
	}
}

// action is the part of action.yml the test reads.
type action struct {
	Inputs map[string]struct {
		Required bool   `yaml:"required"`
		Default  string `yaml:"default"`
	} `yaml:"inputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []struct {
			Name  string            `yaml:"name"`
			ID    string            `yaml:"id"`
			Uses  string            `yaml:"uses"`
			Shell string            `yaml:"shell"`
			Env   map[string]string `yaml:"env"`
			Run   string            `yaml:"run"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

var expr = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

// runner runs an action's run steps as a GitHub runner does: each script
// with `bash --noprofile --norc -eo pipefail`, the step's env with its
// expressions evaluated, GITHUB_STEP_SUMMARY, GITHUB_OUTPUT, GITHUB_PATH
// and GITHUB_ENV files, RUNNER_TEMP, and the directories steps add to
// GITHUB_PATH on the PATH of the later steps.
type runner struct {
	t                               *testing.T
	temp, summary, output, pathFile string
	path                            []string
}

func newRunner(t *testing.T) *runner {
	dir := t.TempDir()
	r := &runner{t: t, temp: filepath.Join(dir, "runner-temp")}
	if err := os.Mkdir(r.temp, 0o777); err != nil {
		t.Fatal(err)
	}
	r.summary, r.output, r.pathFile = filepath.Join(dir, "summary.md"), filepath.Join(dir, "output"), filepath.Join(dir, "path")
	return r
}

// eval replaces the expressions the action may use in a run step's env:
// ${{ inputs.NAME }} (the given value, else the input's default),
// ${{ github.action_path }} and ${{ runner.temp }}; any other expression
// is an error (and scripts must use none).
func (r *runner) eval(s string, a *action, with map[string]string) string {
	return expr.ReplaceAllStringFunc(s, func(m string) string {
		e := expr.FindStringSubmatch(m)[1]
		switch {
		case strings.HasPrefix(e, "inputs."):
			name := strings.TrimPrefix(e, "inputs.")
			in, ok := a.Inputs[name]
			if !ok {
				r.t.Fatalf("action.yml: unknown input %s", name)
			}
			if v, ok := with[name]; ok {
				return v
			}
			if in.Required {
				r.t.Fatalf("action.yml: required input %s not given", name)
			}
			return in.Default
		case e == "github.action_path":
			p, _ := filepath.Abs(root)
			return p
		case e == "runner.temp":
			return r.temp
		}
		r.t.Fatalf("action.yml: expression %q in a run step's env (the test evaluates inputs, github.action_path and runner.temp only)", m)
		return ""
	})
}

// run runs the action's run step i with the inputs with, in directory
// work, and returns its exit status and output.
func (r *runner) run(a *action, i int, with map[string]string, work string) (int, string) {
	st := a.Runs.Steps[i]
	if st.Shell != "bash" {
		r.t.Fatalf("step %q: shell %q, want bash", st.Name, st.Shell)
	}
	if expr.MatchString(st.Run) {
		r.t.Fatalf("step %q: an expression in the script (pass inputs through env)", st.Name)
	}
	script := filepath.Join(r.temp, fmt.Sprintf("step-%d.sh", i))
	if err := os.WriteFile(script, []byte(st.Run), 0o666); err != nil {
		r.t.Fatal(err)
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
	cmd.Dir = work
	env := append(os.Environ(),
		"GITHUB_STEP_SUMMARY="+r.summary, "GITHUB_OUTPUT="+r.output, "GITHUB_PATH="+r.pathFile,
		"GITHUB_ENV="+filepath.Join(r.temp, "env"), "RUNNER_TEMP="+r.temp, "GITHUB_ACTIONS=true",
		"PATH="+strings.Join(append(slices.Clone(r.path), os.Getenv("PATH")), string(os.PathListSeparator)))
	for k, v := range st.Env {
		env = append(env, k+"="+r.eval(v, a, with))
	}
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	status := 0
	if ee, ok := err.(*exec.ExitError); ok {
		status = ee.ExitCode()
	} else if err != nil {
		r.t.Fatal(err)
	}
	// GITHUB_PATH: each line is prepended for the later steps
	if b, err := os.ReadFile(r.pathFile); err == nil {
		r.path = nil
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l != "" {
				r.path = append([]string{l}, r.path...)
			}
		}
	}
	return status, string(out)
}

func (r *runner) read(path string) string {
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		r.t.Fatal(err)
	}
	return string(b)
}

type junit struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Suites   []struct {
		Cases []struct {
			Name    string    `xml:"name,attr"`
			Failure *struct{} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// TestActionRunSteps runs the composite action's run steps on bundled
// runs: the build step (tokentrace on the PATH of the later steps), then
// the gate step twice — a run that meets its gates (exit 0) and one that
// does not (exit 3) — and checks the job summary, the step outputs and the
// JUnit file each leaves.
func TestActionRunSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the CLI")
	}
	b, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a action
	if err := yaml.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	if a.Runs.Using != "composite" {
		t.Fatalf("runs.using %q, want composite", a.Runs.Using)
	}
	var runSteps []int
	for i, st := range a.Runs.Steps {
		switch {
		case st.Run != "":
			runSteps = append(runSteps, i)
		case !strings.HasPrefix(st.Uses, "actions/setup-go@"):
			t.Errorf("step %q uses %q: the test runs run steps only; only setup-go is expected otherwise", st.Name, st.Uses)
		}
	}
	if len(runSteps) != 2 || a.Runs.Steps[runSteps[1]].ID != "gate" {
		t.Fatalf("run steps %v: want the build step, then the step with id gate", runSteps)
	}
	r := newRunner(t)
	work := t.TempDir() // the job's working directory
	abs := func(p string) string { q, _ := filepath.Abs(filepath.Join(root, p)); return q }

	// Build.
	if status, out := r.run(&a, runSteps[0], map[string]string{"results": "x"}, work); status != 0 {
		t.Fatalf("build step: exit %d\n%s", status, out)
	} else if !strings.Contains(out, "tokentrace ") {
		t.Errorf("build step printed %q, want the version", out)
	}
	if len(r.path) != 1 || filepath.Dir(r.path[0]) != r.temp {
		t.Fatalf("build step added %q to GITHUB_PATH, want a directory in RUNNER_TEMP", r.path)
	}

	cases := []struct {
		name       string
		with       map[string]string
		status     int
		tests, bad int
		gates      []string
	}{
		{"pass", map[string]string{
			// two runs, one per line; two gates, one per line
			"results": abs("testdata/llmperf/leaderboard-groq-70b") + "\n" + abs("testdata/llmperf/leaderboard-anyscale-70b") + "\n",
			"slo":     "ttft<=800ms",
			"gates":   "p99(ttft)<=800ms\n  goodput>=0.9\n",
			"junit":   "gate.xml",
		}, 0, 4, 0, []string{"`p99(ttft)<=800ms`", "`goodput>=0.9`", "leaderboard-groq-70b", "leaderboard-anyscale-70b"}},
		{"fail", map[string]string{
			"results": abs("testdata/llmperf/leaderboard-bedrock-70b"),
			"preset":  "chat",
			"junit":   "reports/gate-fail.xml",
			"args":    "--convention tokentrace",
		}, 3, 4, 3, []string{"p99(ttft)"}},
	}
	for _, c := range cases {
		os.Remove(r.summary)
		os.Remove(r.output)
		if c.name == "fail" {
			os.MkdirAll(filepath.Join(work, "reports"), 0o777)
		}
		status, out := r.run(&a, runSteps[1], c.with, work)
		if status != c.status {
			t.Errorf("%s: gate step exit %d, want %d\n%s", c.name, status, c.status, out)
		}
		summary := r.read(r.summary)
		if !strings.HasPrefix(summary, "## tokentrace gate\n") || !strings.Contains(summary, "| gate | run |") {
			t.Errorf("%s: job summary %q, want the heading and the Markdown table", c.name, summary)
		}
		for _, g := range c.gates {
			if !strings.Contains(summary, g) {
				t.Errorf("%s: job summary lacks the gate %s:\n%s", c.name, g, summary)
			}
		}
		if o := r.read(r.output); o != fmt.Sprintf("status=%d\njunit=%s\n", c.status, c.with["junit"]) {
			t.Errorf("%s: step outputs %q", c.name, o)
		}
		if c.status != 0 && !strings.Contains(out, "::error::") {
			t.Errorf("%s: no error annotation in %q", c.name, out)
		}
		raw := r.read(filepath.Join(work, c.with["junit"]))
		var j junit
		if err := xml.Unmarshal([]byte(raw), &j); err != nil {
			t.Fatalf("%s: JUnit file: %v\n%s", c.name, err, raw)
		}
		failed := 0
		for _, s := range j.Suites {
			for _, tc := range s.Cases {
				if tc.Failure != nil {
					failed++
				}
			}
		}
		if j.Tests != c.tests || j.Failures != c.bad || failed != c.bad {
			t.Errorf("%s: JUnit %d tests, %d failures (%d failure elements); want %d, %d", c.name, j.Tests, j.Failures, failed, c.tests, c.bad)
		}
	}

	// An empty results input is a usage error, said as an annotation.
	os.Remove(r.summary)
	if status, out := r.run(&a, runSteps[1], map[string]string{"results": "  "}, work); status != 2 || !strings.Contains(out, "::error::") {
		t.Errorf("empty results: exit %d, %q", status, out)
	}
}
