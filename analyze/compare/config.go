package compare

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
)

// The configuration keys runs are matched by. A run's value of each key
// comes from its Run row (ConfigOf); "" when the run does not record it.
const (
	// KeyModel is Run.Model, the served model as the tool recorded it.
	KeyModel = "model"
	// KeyConcurrency is Run.Concurrency, the configured concurrent
	// requests.
	KeyConcurrency = "concurrency"
	// KeyRate is Run.RequestRateRPS, the configured request rate in req/s
	// ("inf" for all at once).
	KeyRate = "rate"
	// KeyISL and KeyOSL are the configured mean input and output lengths
	// in tokens, read from the tool's configuration echo
	// (Run.ConfigJSON) under the names in workloadKeys.
	KeyISL = "isl"
	KeyOSL = "osl"
	// KeyStreaming is Run.Streaming ("true", "false").
	KeyStreaming = "streaming"
)

// Keys are every configuration key, in the order configurations are
// written and sorted; they are also the default match.
var Keys = []string{KeyModel, KeyConcurrency, KeyRate, KeyISL, KeyOSL, KeyStreaming}

// LoadKeys are the keys that set a run's load level: runs of one
// configuration that differ only in these are the load levels of a sweep.
var LoadKeys = []string{KeyConcurrency, KeyRate}

// workloadKeys are, per configuration key, the names under which the
// tools' configuration echoes (Run.ConfigJSON) record the configured mean
// input and output lengths, looked up as object keys at any depth (the
// first found in this order wins):
//
//   - LLMPerf summary: mean_input_tokens, mean_output_tokens
//   - vLLM and SGLang bench (random dataset): random_input_len,
//     random_output_len
//   - GenAI-Perf input_config: synthetic_input_tokens_mean,
//     output_tokens_mean
//   - inference-perf data.shared_prefix / data.random: question_len,
//     input_len (ISL), output_len
//   - AIPerf input_config (input.prompt): input_tokens.mean and
//     output_tokens.mean are found as "mean" below "input_tokens" /
//     "output_tokens" (isl_mean, osl_mean in newer configs)
//
// A negative value is a tool's "not set" (GenAI-Perf writes
// output_tokens_mean -1) and is skipped.
var workloadKeys = map[string][]string{
	KeyISL: {"mean_input_tokens", "random_input_len", "synthetic_input_tokens_mean", "isl_mean", "input_tokens.mean", "input_len"},
	KeyOSL: {"mean_output_tokens", "random_output_len", "output_tokens_mean", "osl_mean", "output_tokens.mean", "output_len"},
}

// Config is a run's configuration: its value of each of Keys ("" where
// the run does not record it).
type Config map[string]string

// ConfigOf returns run's configuration.
func ConfigOf(run *formats.Run) Config {
	c := Config{KeyModel: run.Model}
	if run.Concurrency != nil {
		c[KeyConcurrency] = num(*run.Concurrency)
	}
	if run.RequestRateRPS != nil {
		c[KeyRate] = num(*run.RequestRateRPS)
	}
	if run.Streaming != nil {
		c[KeyStreaming] = strconv.FormatBool(*run.Streaming)
	}
	if run.ConfigJSON != "" {
		var v any
		if json.Unmarshal([]byte(run.ConfigJSON), &v) == nil {
			for _, k := range []string{KeyISL, KeyOSL} {
				for _, name := range workloadKeys[k] {
					// a negative length is the tools' "not set" (GenAI-Perf
					// output_tokens_mean -1)
					if x, ok := findNumber(v, strings.Split(name, ".")); ok && x >= 0 {
						c[k] = num(x)
						break
					}
				}
			}
		}
	}
	return c
}

// num writes a configured number: integers without a decimal point, +Inf
// as "inf".
func num(x float64) string {
	if math.IsInf(x, 1) {
		return "inf"
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// findNumber finds, depth first in key order, an object member path[0]
// (followed by path[1:] below it) whose value is a number or a numeric
// string.
func findNumber(v any, path []string) (float64, bool) {
	switch t := v.(type) {
	case map[string]any:
		if x, ok := t[path[0]]; ok {
			if len(path) == 1 {
				switch n := x.(type) {
				case float64:
					return n, true
				case string:
					if f, err := strconv.ParseFloat(n, 64); err == nil {
						return f, true
					}
				}
			} else if f, ok := findNumber(x, path[1:]); ok {
				return f, true
			}
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if f, ok := findNumber(t[k], path); ok {
				return f, true
			}
		}
	case []any:
		for _, x := range t {
			if f, ok := findNumber(x, path); ok {
				return f, true
			}
		}
	}
	return 0, false
}

// Key is the text of c over keys: "key=value" pairs joined by ", ", in
// keys' order, unknown values as "key=?". Two runs with the same Key are
// runs of one configuration.
func (c Config) Key(keys []string) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		v := c[k]
		if v == "" {
			v = "?"
		}
		parts[i] = k + "=" + v
	}
	return strings.Join(parts, ", ")
}

// ParseKeys returns the keys runs are matched by: match (comma-separated
// keys; empty: every key) without ignore. It fails on an unknown key, on
// a key given in both, and when no key is left.
func ParseKeys(match, ignore string) ([]string, error) {
	split := func(flag, s string) (map[string]bool, []string, error) {
		set := map[string]bool{}
		var list []string
		for _, k := range strings.Split(s, ",") {
			k = strings.TrimSpace(k)
			if k == "" {
				continue
			}
			if !isKey(k) {
				return nil, nil, fmt.Errorf("%s %q: unknown key %q (keys: %s)", flag, s, k, strings.Join(Keys, ", "))
			}
			if !set[k] {
				list = append(list, k)
			}
			set[k] = true
		}
		return set, list, nil
	}
	m, mlist, err := split("--match", match)
	if err != nil {
		return nil, err
	}
	ig, _, err := split("--ignore", ignore)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range Keys {
		if len(mlist) > 0 && !m[k] {
			continue
		}
		if ig[k] {
			if m[k] {
				return nil, fmt.Errorf("key %q is in both --match and --ignore", k)
			}
			continue
		}
		out = append(out, k)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--ignore leaves no key to match runs by: runs would all be one configuration; give --match with at least one key (e.g. --match streaming)")
	}
	return out, nil
}

func isKey(k string) bool {
	for _, x := range Keys {
		if x == k {
			return true
		}
	}
	return false
}

// Less orders two configurations key by key over keys (numbers
// numerically, then text, then unknown values).
func Less(a, b Config, keys []string) bool { return less(a, b, keys) }

// less orders two configurations key by key (numbers numerically, "?"
// and text after numbers).
func less(a, b Config, keys []string) bool {
	for _, k := range keys {
		x, y := a[k], b[k]
		if x == y {
			continue
		}
		fx, ex := strconv.ParseFloat(x, 64)
		fy, ey := strconv.ParseFloat(y, 64)
		switch {
		case ex == nil && ey == nil:
			return fx < fy
		case ex == nil:
			return true
		case ey == nil:
			return false
		}
		return x < y
	}
	return false
}

// Warmup reports whether run holds a benchmark's warm-up phase rather than
// a measurement: AIPerf's importer puts the records of phases other than
// profiling into a run of their own whose first note begins "records of
// phase(s) " (ingest/aiperf import.go). A comparison leaves such runs out:
// they are not repetitions of their configuration.
func Warmup(run *formats.Run) bool {
	return len(run.Notes) > 0 && strings.HasPrefix(run.Notes[0], warmupNote) && !strings.Contains(run.Notes[0], "profiling")
}

// warmupNote begins the first note of a warm-up run.
const warmupNote = "records of phase(s) "
