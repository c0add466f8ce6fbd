package convention

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Tool is what an importer knows about the tool whose files it reads, as
// data for the analysis: the tool's convention profiles, how the
// statistics it reports map to tokentrace's metrics, which of them the
// text report shows, where its throughputs are, and the known reasons a
// recomputation differs from its numbers. Each ingest/<tool> package
// exports one Tool; ingest/registry collects them (registry.Tools) and
// cmd hands them to analyze in a Set.
type Tool struct {
	// Name is the Run.Tool of the tool's runs ("vllm", "genai-perf").
	Name string
	// Profiles are the tool's conventions, one per version whose
	// definitions differ; Run.Convention names one of them, else the
	// first that Aliases or Name selects is the tool's default.
	Profiles []Convention
	// Aliases map other names to a profile's name: the tool's own name to
	// its default profile ("llmperf" → "llmperf@2024-12"), retired version
	// names to the profile that covers them.
	Aliases map[string]string
	// Metrics maps the names of the statistics the tool reports
	// (formats.ReportedStat.Metric) to what tokentrace recomputes them
	// from, under a convention of the tool (the mapping may depend on the
	// convention's choices); nil when tokentrace maps none of them.
	Metrics func(c Convention) map[string]ReportedMetric
	// MetricPrefixes give the reason for reported metrics whose names
	// start with a prefix and that Metrics does not map (a family the
	// tables do not hold, e.g. AIPerf's http_req_* timings).
	MetricPrefixes map[string]string
	// Throughput names the reported statistics that hold the tool's own
	// throughputs, shown when the tables cannot recompute them; nil: none.
	Throughput *ReportedThroughput
	// Headline are the reported metrics the text and Markdown reports show
	// (the JSON report has every one); empty: the first twelve by name.
	Headline []string
	// Differences explain, where a known cause applies, why a recomputed
	// statistic differs from the tool's.
	Differences []Difference
	// Stats says how the tool computes the statistics of its reported
	// distributions, by profile name; a profile not listed is computed as
	// numpy does (StatsNumpy).
	Stats map[string]StatsRule
	// Traps are the known bugs of the tool's per-request data the importer
	// detects (the data-check catalogue, analyze/TRAPS.md).
	Traps []Trap
}

// ReportedMetric maps one of a tool's reported metrics to what tokentrace
// recomputes it from.
type ReportedMetric struct {
	// Quantity is the name of a per-request or pooled metric of the
	// analysis ("ttft", "itl", "osl_usage", …: analyze's metric table), or
	// a run-level scalar "scalar:<name>" (analyze's reproduction lists
	// them). Empty when Reason is set.
	Quantity string
	// Scale converts tokentrace's unit (ms, tokens, tokens/s) to the
	// tool's: 1e-3 for a latency the tool reports in seconds.
	Scale float64
	// Reason, when set, is why the statistic cannot be recomputed from the
	// tables.
	Reason string
}

// Map is a ReportedMetric for quantity q at scale s.
func Map(q string, s float64) ReportedMetric { return ReportedMetric{Quantity: q, Scale: s} }

// Unmapped is a ReportedMetric that cannot be recomputed, and why.
func Unmapped(why string) ReportedMetric { return ReportedMetric{Reason: why} }

// ReportedThroughput names the reported statistics (metric and statistic
// name) of a tool's output-token throughput and completed-request rate;
// RequestScale converts the latter to requests/s (1/60 for a per-minute
// rate).
type ReportedThroughput struct {
	OutputMetric, OutputStat   string
	RequestMetric, RequestStat string
	RequestScale               float64
}

// Difference is a known reason why a recomputed statistic differs from
// the tool's: it applies to the statistics of Metric ("" any) whose name
// starts with StatPrefix, of runs whose tool version is at least
// MinVersion ("" any; "major.minor") and, when RunNote is set, that carry
// an import note starting with it.
type Difference struct {
	Metric     string
	StatPrefix string
	MinVersion string
	RunNote    string
	Reason     string
}

// Applies reports whether d explains a difference in statistic stat of
// metric, for a run of the given tool version and import notes.
func (d Difference) Applies(metric, stat, version string, notes []string) bool {
	if d.Metric != "" && d.Metric != metric || !strings.HasPrefix(stat, d.StatPrefix) {
		return false
	}
	if d.MinVersion != "" && !versionAtLeast(version, d.MinVersion) {
		return false
	}
	if d.RunNote != "" {
		for _, n := range notes {
			if strings.HasPrefix(n, d.RunNote) || strings.Contains(n, " "+d.RunNote) {
				return true
			}
		}
		return false
	}
	return true
}

// versionAtLeast compares the major.minor of v with min ("0.10"); false
// when v does not start with two numbers.
func versionAtLeast(v, min string) bool {
	read := func(s string) (int, int, bool) {
		parts := strings.SplitN(s, ".", 3)
		if len(parts) < 2 {
			return 0, 0, false
		}
		a, err1 := strconv.Atoi(parts[0])
		b, err2 := strconv.Atoi(parts[1])
		return a, b, err1 == nil && err2 == nil
	}
	a, b, ok := read(v)
	x, y, ok2 := read(min)
	return ok && ok2 && (a > x || a == x && b >= y)
}

// StatsRule is how a tool computes the statistics of a reported
// distribution.
type StatsRule string

const (
	// StatsNumpy: numpy over the per-request values (np.mean, np.std with
	// the convention's divisor, np.percentile by the convention's method).
	StatsNumpy StatsRule = ""
	// StatsPMF: a weighted probability mass function over the values,
	// values kept as they are (guidellm v0.2–v0.3 DistributionSummary;
	// analyze/stats.PMFStat with merged false).
	StatsPMF StatsRule = "weighted_pmf"
	// StatsPMFMerged: the same with equal values merged and zero weights
	// dropped (guidellm v0.4+; stats.PMFStat with merged true).
	StatsPMFMerged StatsRule = "weighted_pmf_merged"
)

// Reasons shared by several tools' mappings.
const (
	ReasonGoodput = "needs the goodput constraints the run was given; recompute with --slo"
	ReasonCache   = "prompt-cache token counts are not imported"
)

// A Set is the conventions tokentrace knows: its canonical one and every
// tool's profiles, with the tools' knowledge. Lookups are by name.
type Set struct {
	canonical Convention
	tools     []Tool
	traps     []Trap // traps of no one tool (WithTraps)
	profiles  []Convention
	aliases   map[string]string
}

// NewSet returns the set of canonical and the profiles of tools, in that
// order. canonical's Name and the alias "canonical" select it.
func NewSet(canonical Convention, tools ...Tool) *Set {
	s := &Set{canonical: canonical, tools: tools, profiles: []Convention{canonical}, aliases: map[string]string{"canonical": canonical.Name}}
	for _, t := range tools {
		s.profiles = append(s.profiles, t.Profiles...)
		for k, v := range t.Aliases {
			s.aliases[k] = v
		}
	}
	return s
}

// WithProfiles adds conventions of no one tool (tokentrace's variants of
// its canonical convention, "tokentrace-schedule"), after the canonical
// one, and returns s.
func (s *Set) WithProfiles(cs ...Convention) *Set {
	s.profiles = append(s.profiles[:1], append(append([]Convention(nil), cs...), s.profiles[1:]...)...)
	return s
}

// Canonical is the set's canonical convention.
func (s *Set) Canonical() Convention { return s.canonical }

// Profiles are every convention of the set, canonical first, then each
// tool's in the order the tools were given.
func (s *Set) Profiles() []Convention { return s.profiles }

// Names are the profiles' names, sorted.
func (s *Set) Names() []string {
	names := make([]string, len(s.profiles))
	for i, c := range s.profiles {
		names[i] = c.Name
	}
	sort.Strings(names)
	return names
}

// Lookup returns the profile called name ("tokentrace", "genai-perf",
// "llmperf@2024-04", …; an alias such as "llmperf" names the tool's
// default).
func (s *Set) Lookup(name string) (Convention, error) {
	if a, ok := s.aliases[name]; ok {
		name = a
	}
	for _, c := range s.profiles {
		if c.Name == name {
			return c, nil
		}
	}
	cands := s.Names()
	for a := range s.aliases {
		cands = append(cands, a)
	}
	sort.Strings(cands[len(s.profiles):])
	return Convention{}, fmt.Errorf("unknown convention %q (known: %s)%s", name, strings.Join(s.Names(), ", "), DidYouMean(name, cands))
}

// ForRun returns the profile of the tool that produced a run: the
// importer's detected convention (Run.Convention, e.g. "llmperf@2023-12"),
// else the tool's default profile; ok is false when the tool has none.
func (s *Set) ForRun(convention, tool string) (Convention, bool) {
	for _, name := range []string{convention, tool} {
		if name == "" {
			continue
		}
		if c, err := s.Lookup(name); err == nil {
			return c, true
		}
	}
	return Convention{}, false
}

// Tool returns the tool called name (Run.Tool, Convention.Tool), or nil.
func (s *Set) Tool(name string) *Tool {
	if s == nil {
		return nil
	}
	for i := range s.tools {
		if s.tools[i].Name == name {
			return &s.tools[i]
		}
	}
	return nil
}

// Metrics returns the reported-metric mapping of c's tool under c; nil
// when the set holds no mapping for it.
func (s *Set) Metrics(c Convention) map[string]ReportedMetric {
	if t := s.Tool(c.Tool); t != nil && t.Metrics != nil {
		return t.Metrics(c)
	}
	return nil
}

// PrefixReason is the reason given for a reported metric of a
// MetricPrefixes family ("" when it belongs to none).
func (t *Tool) PrefixReason(metric string) string {
	if t == nil {
		return ""
	}
	for p, why := range t.MetricPrefixes {
		if strings.HasPrefix(metric, p) {
			return why
		}
	}
	return ""
}

// StatsRule returns how c's tool computes the statistics of its reported
// distributions under c.
func (s *Set) StatsRule(c Convention) StatsRule {
	if t := s.Tool(c.Tool); t != nil {
		return t.Stats[c.Name]
	}
	return StatsNumpy
}
