package slo

import (
	"embed"
	"fmt"
	"os"
	"path"
	"reflect"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/tokentrace/tokentrace/convention"
)

// GateFile is the YAML (or JSON) form of a GateSpec:
//
//	slo: ttft<=800ms, tpot<=25ms      # a string, or a list of constraints
//	gates:                             # a list of gates, or one string
//	  - p99(ttft) <= 800ms
//	  - goodput >= 0.99
//	alpha: 0.05                        # regression gates' significance level
//	fail_on_few_samples: false         # fail (not warn) a percentile on too few samples
//	convention: tokentrace             # optional: the convention to gate under
type GateFile struct {
	SLO              yaml.Node `yaml:"slo"`
	Gates            yaml.Node `yaml:"gates"`
	Alpha            float64   `yaml:"alpha"`
	FailOnFewSamples bool      `yaml:"fail_on_few_samples"`
	Convention       string    `yaml:"convention"`
	CapacityTarget   float64   `yaml:"capacity_target"`
}

//go:embed presets/*.yaml
var presetFS embed.FS

// Presets lists the built-in gate files (presets/*.yaml): "chat" and the
// MLPerf Inference TTFT/TPOT limits, "mlperf-<model>-<scenario>".
func Presets() []string {
	ents, _ := presetFS.ReadDir("presets")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(out)
	return out
}

// PresetText returns a preset's YAML.
func PresetText(name string) ([]byte, error) {
	b, err := presetFS.ReadFile(path.Join("presets", name+".yaml"))
	if err != nil {
		return nil, fmt.Errorf("unknown preset %q (have %s)%s", name, strings.Join(Presets(), ", "), convention.DidYouMean(name, Presets()))
	}
	return b, nil
}

// ReadGateFile parses a gate file (YAML or JSON) into a spec, and the
// convention it names ("" if none). Errors name the file and line; a
// syntax error in an SLO or gate also gives the character within it.
func ReadGateFile(name string) (GateSpec, string, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return GateSpec{}, "", err
	}
	return ParseGateFile(name, b)
}

// ParseGateFile parses gate-file text; name labels errors.
func ParseGateFile(name string, b []byte) (GateSpec, string, error) {
	if err := checkGateFileKeys(name, b); err != nil {
		return GateSpec{}, "", err
	}
	var f GateFile
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return GateSpec{}, "", fmt.Errorf("%s: %v", name, err)
	}
	spec := GateSpec{Alpha: f.Alpha, StrictSamples: f.FailOnFewSamples}
	if f.Alpha < 0 || f.Alpha >= 0.5 {
		return spec, "", fmt.Errorf("%s: alpha %v: want a level in (0, 0.5)", name, f.Alpha)
	}
	sloItems, err := stringsOf(name, "slo", &f.SLO)
	if err != nil {
		return spec, "", err
	}
	var parts []string
	for _, it := range sloItems {
		parts = append(parts, it.text)
	}
	if spec.SLO, err = ParseSLO(strings.Join(parts, ", ")); err != nil {
		// Re-parse item by item to name the line.
		for _, it := range sloItems {
			if _, e := ParseSLO(it.text); e != nil {
				return spec, "", fmt.Errorf("%s:%d: %v", name, it.line, e)
			}
		}
		return spec, "", fmt.Errorf("%s:%d: %v", name, f.SLO.Line, err)
	}
	gateItems, err := stringsOf(name, "gates", &f.Gates)
	if err != nil {
		return spec, "", err
	}
	for _, it := range gateItems {
		gs, err := ParseGates(it.text)
		if err != nil {
			return spec, "", fmt.Errorf("%s:%d: %v", name, it.line, err)
		}
		for i := range gs {
			if gs[i].Capacity && f.CapacityTarget > 0 && !strings.Contains(gs[i].Text, "(") {
				gs[i].Target = f.CapacityTarget
			}
		}
		spec.Gates = append(spec.Gates, gs...)
	}
	if err := spec.Validate(); err != nil {
		return spec, "", fmt.Errorf("%s: %v", name, err)
	}
	return spec, f.Convention, nil
}

// gateFileKeys are GateFile's keys, in its order.
var gateFileKeys = func() []string {
	var keys []string
	t := reflect.TypeOf(GateFile{})
	for i := 0; i < t.NumField(); i++ {
		keys = append(keys, strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0])
	}
	return keys
}()

// checkGateFileKeys names a top-level key of a gate file that GateFile
// does not have, with its line, the valid keys and the closest one
// ("name:3: unknown key \"gate\" (valid keys: slo, gates, …); did you mean
// \"gates\"?"), where the YAML decoder would say "field gate not found in
// type slo.GateFile". Syntax errors are left to the decoder.
func checkGateFileKeys(name string, b []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil || len(doc.Content) == 0 {
		return nil
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return fmt.Errorf("%s:%d: a gate file is a mapping of keys (%s) to values", name, m.Line, strings.Join(gateFileKeys, ", "))
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if !slices.Contains(gateFileKeys, k.Value) {
			return fmt.Errorf("%s:%d: unknown key %q (valid keys: %s)%s", name, k.Line, k.Value, strings.Join(gateFileKeys, ", "),
				convention.DidYouMean(k.Value, gateFileKeys))
		}
	}
	return nil
}

type lineText struct {
	text string
	line int
}

// stringsOf reads a node that is a string or a list of strings.
func stringsOf(file, key string, n *yaml.Node) ([]lineText, error) {
	switch n.Kind {
	case 0:
		return nil, nil
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return nil, nil
		}
		return []lineText{{n.Value, n.Line}}, nil
	case yaml.SequenceNode:
		var out []lineText
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("%s:%d: %s: each entry must be a string", file, c.Line, key)
			}
			out = append(out, lineText{c.Value, c.Line})
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s:%d: %s: want a string or a list of strings", file, n.Line, key)
}
