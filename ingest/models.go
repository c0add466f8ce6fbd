package ingest

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// CheckSeveralModels: the requests of one run name more than one model.
const CheckSeveralModels = "several_models"

// ModelTraps is the catalogue entry of CheckSeveralModels (ingest/registry
// lists it with the others).
var ModelTraps = []convention.Trap{{
	Code:      CheckSeveralModels,
	Title:     "the requests of one run name more than one model",
	Tools:     "the importers whose requests name their model: genai-perf (each request's payload \"model\"), inference-perf (each request's body \"model\")",
	Signature: "two or more distinct non-empty model names among a run's requests",
	Action:    convention.ActionFlag,
	Effect: "the run's model is every name, by count (\"a (12), b (8)\"), not the first request's; the check counts the requests of the " +
		"models other than the most common: one run's statistics then mix models (a router, a misconfigured load generator), which compare " +
		"and gate should not take for one model's",
	Metrics: []string{"ttft_ms", "tpot_ms", "e2e_ms"},
	Source:  "tokentrace: a run whose requests named two models was reported as the first model's",
	Test:    "ingest/registry TestSeveralModels",
}}

// Models counts the model names of a run's requests (the zero value is
// ready).
type Models struct {
	counts map[string]int64
	order  []string
}

// Add counts one request's model ("" is not counted).
func (m *Models) Add(model string) {
	if model == "" {
		return
	}
	if m.counts == nil {
		m.counts = map[string]int64{}
	}
	if _, ok := m.counts[model]; !ok {
		if len(m.order) >= 64 {
			model = "(others)" // bounded: a file naming a model per request
			if _, ok := m.counts[model]; !ok {
				m.order = append(m.order, model)
			}
			m.counts[model]++
			return
		}
		m.order = append(m.order, model)
	}
	m.counts[model]++
}

// Name is the run's model: the one name, or every name by count, most
// requests first ("a (12), b (8)"); "" when no request named one.
func (m *Models) Name() string {
	switch len(m.order) {
	case 0:
		return ""
	case 1:
		return m.order[0]
	}
	parts := make([]string, 0, len(m.order))
	for _, n := range m.sorted() {
		parts = append(parts, fmt.Sprintf("%s (%d)", n, m.counts[n]))
	}
	return strings.Join(parts, ", ")
}

// Check is the run's several_models check; ok false with one model or
// none.
func (m *Models) Check() (formats.DataCheck, bool) {
	if len(m.order) < 2 {
		return formats.DataCheck{}, false
	}
	s := m.sorted()
	var others int64
	for _, n := range s[1:] {
		others += m.counts[n]
	}
	return formats.DataCheck{Code: CheckSeveralModels, Field: "model", Requests: others,
		Detail: fmt.Sprintf("%d models: %s; the run's model lists them all", len(s), m.Name())}, true
}

// sorted returns the names by count, most first, then first seen.
func (m *Models) sorted() []string {
	s := append([]string(nil), m.order...)
	sort.SliceStable(s, func(i, j int) bool { return m.counts[s[i]] > m.counts[s[j]] })
	return s
}
