package inferenceperf

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// fileKind is the part a file plays in an inference-perf report directory.
type fileKind int

const (
	kindNone         fileKind = iota
	kindPerRequest            // per_request_lifecycle_metrics.json
	kindSummary               // summary_lifecycle_metrics.json
	kindStage                 // stage_N_lifecycle_metrics.json
	kindAdapter               // adapter_X_lifecycle_metrics.json
	kindAdapterStage          // adapter_X_stage_N_lifecycle_metrics.json
	kindPromSummary           // summary_prometheus_metrics.json
	kindPromStage             // stage_N_prometheus_metrics.json
	kindSession               // *_session_lifecycle_metrics.json (not imported)
	kindConfig                // config.yaml
)

// fileName is what a file's name says about it. inference-perf names its
// reports "<report_file_prefix><name>.json" (storage/local.py save_report),
// so every name may carry a prefix shared by one run's files.
type fileName struct {
	kind    fileKind
	prefix  string
	stage   int    // kindStage, kindAdapterStage, kindPromStage
	adapter string // kindAdapter, kindAdapterStage
}

// Report names (reportgen/base.py generate_reports and
// generate_prometheus_metrics_report, v0.1.0 … 7de5ef2). Order matters:
// adapter and session names also end like a stage or summary name.
var (
	reSession      = regexp.MustCompile(`^(.*?)(?:summary_session|stage_\d+_session|per_session)_lifecycle_metrics\.json$`)
	reAdapterStage = regexp.MustCompile(`^(.*?)adapter_(.+)_stage_(\d+)_lifecycle_metrics\.json$`)
	reAdapter      = regexp.MustCompile(`^(.*?)adapter_(.+)_lifecycle_metrics\.json$`)
	rePerRequest   = regexp.MustCompile(`^(.*?)per_request_lifecycle_metrics\.json$`)
	reSummary      = regexp.MustCompile(`^(.*?)summary_lifecycle_metrics\.json$`)
	reStage        = regexp.MustCompile(`^(.*?)stage_(\d+)_lifecycle_metrics\.json$`)
	rePromSummary  = regexp.MustCompile(`^(.*?)summary_prometheus_metrics\.json$`)
	rePromStage    = regexp.MustCompile(`^(.*?)stage_(\d+)_prometheus_metrics\.json$`)
	reConfig       = regexp.MustCompile(`^(.*?)config\.yaml$`)
)

// parseName classifies a base name; kind is kindNone for other names.
func parseName(base string) fileName {
	atoi := func(s string) (int, bool) {
		n, err := strconv.Atoi(s)
		return n, err == nil && n < 1<<20
	}
	if m := reSession.FindStringSubmatch(base); m != nil {
		return fileName{kind: kindSession, prefix: m[1]}
	}
	if m := reAdapterStage.FindStringSubmatch(base); m != nil {
		if n, ok := atoi(m[3]); ok {
			return fileName{kind: kindAdapterStage, prefix: m[1], adapter: m[2], stage: n}
		}
	}
	if m := reAdapter.FindStringSubmatch(base); m != nil {
		return fileName{kind: kindAdapter, prefix: m[1], adapter: m[2]}
	}
	if m := rePerRequest.FindStringSubmatch(base); m != nil {
		return fileName{kind: kindPerRequest, prefix: m[1]}
	}
	if m := reSummary.FindStringSubmatch(base); m != nil {
		return fileName{kind: kindSummary, prefix: m[1]}
	}
	if m := reStage.FindStringSubmatch(base); m != nil {
		if n, ok := atoi(m[2]); ok {
			return fileName{kind: kindStage, prefix: m[1], stage: n}
		}
	}
	if m := rePromSummary.FindStringSubmatch(base); m != nil {
		return fileName{kind: kindPromSummary, prefix: m[1]}
	}
	if m := rePromStage.FindStringSubmatch(base); m != nil {
		if n, ok := atoi(m[2]); ok {
			return fileName{kind: kindPromStage, prefix: m[1], stage: n}
		}
	}
	if m := reConfig.FindStringSubmatch(base); m != nil {
		return fileName{kind: kindConfig, prefix: m[1]}
	}
	return fileName{}
}

// adapterStage keys an adapter_X_stage_N file.
type adapterStage struct {
	adapter string
	stage   int
}

// group is the set of one run's report files: the files of one directory
// that share a name prefix. A file whose name is not an inference-perf name
// but whose content is (a renamed summary or per-request file) is a group
// of its own.
type group struct {
	dir, prefix   string
	perRequest    string
	summary       string
	stages        map[int]string
	adapters      map[string]string
	adapterStages map[adapterStage]string
	promSummary   string
	promStages    map[int]string
	config        string
	sessions      []string
}

func newGroup(dir, prefix string) *group {
	return &group{dir: dir, prefix: prefix, stages: map[int]string{}, adapters: map[string]string{},
		adapterStages: map[adapterStage]string{}, promStages: map[int]string{}}
}

// groupOf lists the files of path's group (path itself included). ok is
// false when path's name is not an inference-perf name.
func groupOf(path string) (*group, bool) {
	fn := parseName(filepath.Base(path))
	if fn.kind == kindNone || fn.kind == kindSession || fn.kind == kindConfig {
		return nil, false
	}
	dir := filepath.Dir(path)
	g := newGroup(dir, fn.prefix)
	entries, err := os.ReadDir(dir)
	if err != nil {
		g.add(path, fn)
		return g, true
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		other := parseName(e.Name())
		if other.kind == kindNone || other.prefix != fn.prefix {
			continue
		}
		g.add(filepath.Join(dir, e.Name()), other)
	}
	if g.file(path) == "" { // the directory listing did not show path (a race, or odd names)
		g.add(path, fn)
	}
	return g, true
}

func (g *group) add(path string, fn fileName) {
	switch fn.kind {
	case kindPerRequest:
		g.perRequest = path
	case kindSummary:
		g.summary = path
	case kindStage:
		g.stages[fn.stage] = path
	case kindAdapter:
		g.adapters[fn.adapter] = path
	case kindAdapterStage:
		g.adapterStages[adapterStage{fn.adapter, fn.stage}] = path
	case kindPromSummary:
		g.promSummary = path
	case kindPromStage:
		g.promStages[fn.stage] = path
	case kindConfig:
		g.config = path
	case kindSession:
		g.sessions = append(g.sessions, path)
	}
}

// file returns path as the group knows it, or "" when it is not a member.
func (g *group) file(path string) string {
	for _, p := range g.files() {
		if filepath.Clean(p) == filepath.Clean(path) {
			return p
		}
	}
	return ""
}

// files lists every member that Import reads (session reports and the
// config excluded), in reading order.
func (g *group) files() []string {
	var out []string
	if g.perRequest != "" {
		out = append(out, g.perRequest)
	}
	if g.summary != "" {
		out = append(out, g.summary)
	}
	for _, n := range sortedInts(g.stages) {
		out = append(out, g.stages[n])
	}
	for _, a := range sortedKeys(g.adapters) {
		out = append(out, g.adapters[a])
	}
	for _, k := range g.sortedAdapterStages() {
		out = append(out, g.adapterStages[k])
	}
	if g.promSummary != "" {
		out = append(out, g.promSummary)
	}
	for _, n := range sortedInts(g.promStages) {
		out = append(out, g.promStages[n])
	}
	return out
}

// forImport is the group Import reads for path, a member: g itself when
// path is its primary; else path alone with what belongs to it — the
// Prometheus report of the same stage (or of the summary) for a lifecycle
// report, and the config — so that a stage report named on its own is
// imported on its own (the run's other reports are the primary's to read).
func (g *group) forImport(path string) *group {
	if filepath.Clean(g.primary()) == filepath.Clean(path) {
		return g
	}
	fn := parseName(filepath.Base(path))
	o := newGroup(g.dir, g.prefix)
	o.config = g.config
	o.add(path, fn)
	switch fn.kind {
	case kindStage:
		if p := g.promStages[fn.stage]; p != "" {
			o.promStages[fn.stage] = p
		}
	case kindSummary:
		o.promSummary = g.promSummary
	}
	return o
}

// primary is the member the registry should import: the per-request file,
// else the summary, else the lowest stage, else an adapter report, else a
// Prometheus report — the first of files().
func (g *group) primary() string {
	if f := g.files(); len(f) > 0 {
		return f[0]
	}
	return ""
}

func (g *group) sortedAdapterStages() []adapterStage {
	keys := make([]adapterStage, 0, len(g.adapterStages))
	for k := range g.adapterStages {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].adapter != keys[j].adapter {
			return keys[i].adapter < keys[j].adapter
		}
		return keys[i].stage < keys[j].stage
	})
	return keys
}

func sortedInts[V any](m map[int]V) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// contentKind is what a file's first bytes say it is.
type contentKind int

const (
	contentUnknown    contentKind = iota
	contentSummary                // {"benchmark_time_seconds"?, "load_summary", "successes", "failures"}
	contentPerRequest             // [{"start_time", "end_time", "request", …}, …]
)

// sniffContent classifies head (a file's first bytes) by its first keys,
// as far as head goes.
func sniffContent(head []byte) contentKind {
	head = bytes.TrimSpace(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")))
	if len(head) == 0 {
		return contentUnknown
	}
	dec := json.NewDecoder(bytes.NewReader(head))
	t, err := dec.Token()
	if err != nil {
		return contentUnknown
	}
	switch t {
	case json.Delim('{'):
		keys := objectKeys(dec, 4)
		if slices.Contains(keys, "load_summary") && (slices.Contains(keys, "successes") || len(keys) == 1 || keys[len(keys)-1] == "load_summary") {
			return contentSummary
		}
	case json.Delim('['):
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return contentUnknown
		}
		keys := objectKeys(dec, 3)
		if len(keys) >= 2 && keys[0] == "start_time" && keys[1] == "end_time" && (len(keys) == 2 || slices.Contains([]string{"request", "response", "info", "error"}, keys[2])) {
			return contentPerRequest
		}
	}
	return contentUnknown
}

// objectKeys reads up to max keys of the object whose '{' dec has just
// read, skipping their values; it stops quietly at the end of the input.
func objectKeys(dec *json.Decoder, max int) []string {
	var keys []string
	for len(keys) < max && dec.More() {
		t, err := dec.Token()
		k, ok := t.(string)
		if err != nil || !ok {
			break
		}
		keys = append(keys, k)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			break
		}
	}
	return keys
}

// Label is the run label of an inference-perf file when none is given: the
// report-file prefix its name carries (without trailing "_", "-" or "."),
// else the name of the directory holding it. A file whose name is not an
// inference-perf name gets ingest.DefaultLabel's answer (see Import).
func Label(path string) string {
	fn := parseName(filepath.Base(path))
	if fn.kind != kindNone {
		if p := strings.TrimRight(fn.prefix, "_-. "); p != "" {
			return p
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			abs = path
		}
		if d := filepath.Base(filepath.Dir(abs)); d != "." && d != "/" && d != "" {
			return d
		}
	}
	return ""
}
