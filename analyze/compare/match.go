package compare

import (
	"sort"
)

// RunConfig is one run of a side and its configuration.
type RunConfig struct {
	RunID  string
	Config Config
}

// Group is one configuration compared across the sides: its values of the
// matched keys and, per side, the runs that have it (none for a side that
// lacks it). Several runs of one side are repetitions (trials) of the
// configuration, pooled.
type Group struct {
	Config Config     `json:"config"`
	Key    string     `json:"key"`
	Runs   [][]string `json:"runs"`
}

// Unmatched is a configuration of one side that no group compares: the
// base side lacks it, or only the base side has it.
type Unmatched struct {
	Side int      `json:"side"`
	Key  string   `json:"key"`
	Runs []string `json:"runs"`
}

// Matching is the outcome of Match.
type Matching struct {
	// Keys are the keys runs were matched by.
	Keys   []string `json:"keys"`
	Groups []Group  `json:"groups"`
	// Unmatched lists every configuration left out, by side and in
	// configuration order; nothing is dropped silently.
	Unmatched []Unmatched `json:"unmatched"`
	// Excluded are runs left out of the matching, with why (a warm-up
	// phase is not a repetition of its configuration).
	Excluded []Excluded `json:"excluded,omitempty"`
	// Differ says, when some side's runs all went unmatched, which keys
	// told the sides apart (no value of the key is shared by two sides),
	// to choose --match or --ignore; empty otherwise.
	Differ []KeyValues `json:"differ,omitempty"`
}

// Excluded is a run left out of the matching.
type Excluded struct {
	Side int    `json:"side"`
	Run  string `json:"run"`
	Why  string `json:"why"`
}

// KeyValues are the values of one configuration key on each side.
type KeyValues struct {
	Key    string     `json:"key"`
	Values [][]string `json:"values"`
}

// Match groups the runs of the sides (sides[0] is the base) by their
// configuration over keys. A configuration is compared (a Group) when the
// base side and at least one other side have it; the runs of a side with
// the same configuration are its trials. Every other configuration is
// Unmatched. Groups and unmatched configurations are in configuration
// order (numbers numerically).
func Match(sides [][]RunConfig, keys []string) Matching {
	out := Matching{Keys: keys, Groups: []Group{}, Unmatched: []Unmatched{}}
	type cfg struct {
		config Config
		runs   [][]string
	}
	byKey := map[string]*cfg{}
	var order []string
	for si, runs := range sides {
		for _, r := range runs {
			k := r.Config.Key(keys)
			c := byKey[k]
			if c == nil {
				proj := Config{}
				for _, key := range keys {
					proj[key] = r.Config[key]
				}
				c = &cfg{config: proj, runs: make([][]string, len(sides))}
				byKey[k] = c
				order = append(order, k)
			}
			c.runs[si] = append(c.runs[si], r.RunID)
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return less(byKey[order[i]].config, byKey[order[j]].config, keys) })
	matchedSide := make([]bool, len(sides))
	for _, k := range order {
		c := byKey[k]
		others := 0
		for si := 1; si < len(sides); si++ {
			if len(c.runs[si]) > 0 {
				others++
			}
		}
		if len(c.runs[0]) > 0 && others > 0 {
			out.Groups = append(out.Groups, Group{Config: c.config, Key: k, Runs: c.runs})
			for si := range sides {
				if len(c.runs[si]) > 0 {
					matchedSide[si] = true
				}
			}
			continue
		}
		for si, runs := range c.runs {
			if len(runs) > 0 {
				out.Unmatched = append(out.Unmatched, Unmatched{Side: si, Key: k, Runs: runs})
			}
		}
	}
	for si := range sides {
		if !matchedSide[si] && len(sides[si]) > 0 {
			out.Differ = differ(sides, keys)
			break
		}
	}
	return out
}

// differ lists the keys whose values no two sides share, with each side's
// values: why the sides' runs did not pair.
func differ(sides [][]RunConfig, keys []string) []KeyValues {
	var out []KeyValues
	for _, k := range keys {
		vals := make([][]string, len(sides))
		count := map[string]int{}
		for si, runs := range sides {
			seen := map[string]bool{}
			for _, r := range runs {
				v := r.Config[k]
				if v == "" {
					v = "?"
				}
				if !seen[v] {
					seen[v] = true
					vals[si] = append(vals[si], v)
					count[v]++
				}
			}
			sort.Strings(vals[si])
		}
		shared := false
		for _, n := range count {
			if n > 1 {
				shared = true
			}
		}
		if shared || len(count) < 2 {
			continue
		}
		out = append(out, KeyValues{Key: k, Values: vals})
	}
	return out
}
