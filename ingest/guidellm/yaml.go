package guidellm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"gopkg.in/yaml.v3"
)

// yamlSupported reports whether this build reads YAML reports.
const yamlSupported = true

// importYAML reads a YAML report (guidellm --outputs yaml: yaml.dump of the
// same object as the JSON report, keys sorted) by turning it into the JSON
// the stream decoder reads, with the top-level keys in the JSON report's
// order (metadata, args or config, benchmarks). Python's .nan/.inf become
// the strings the JSON path makes of NaN/Infinity.
//
// A YAML file cut short usually still parses (a prefix of a mapping is a
// smaller mapping), so the cut is looked for (yamlCut): a last line
// without its newline, or a last benchmark without one of the keys
// guidellm writes in every benchmark. A cut file is imported as far as it
// is complete, like a cut JSON report: the record being written at the
// cut is dropped, the last benchmark's run is Truncated, and a note and a
// warning say where the file ends.
func importYAML(in *ingest.Input, label string, opt ingest.Options, sink formats.Sink) error {
	path := in.Path
	src, data, err := in.ReadFile(path, "raw", opt)
	if err != nil {
		return err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return &ingest.FormatError{File: path, Msg: "invalid YAML", Err: err}
	}
	cut := yamlCut(&root, data)
	if cut != nil && cut.dropped != nil {
		cut.dropped()
	}
	var doc map[string]any
	if err := root.Decode(&doc); err != nil && len(root.Content) > 0 {
		return &ingest.FormatError{File: path, Msg: "invalid YAML", Err: err}
	}
	if doc == nil {
		if cut != nil {
			return ingest.Errorf(path, fmt.Sprintf("byte %d", len(data)), "the file ends before its first benchmark (cut)")
		}
		return ingest.Errorf(path, "", "empty YAML document (expected a guidellm benchmarks report)")
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	n := 0
	write := func(k string, v any) error {
		b, err := json.Marshal(jsonable(v))
		if err != nil {
			return &ingest.FormatError{File: path, Where: k, Msg: "unrepresentable value", Err: err}
		}
		if n > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(b)
		n++
		return nil
	}
	order := []string{"metadata", "args", "config", "benchmarks"}
	seen := map[string]bool{}
	for _, k := range order {
		if v, ok := doc[k]; ok {
			seen[k] = true
			if err := write(k, v); err != nil {
				return err
			}
		}
	}
	for k, v := range doc {
		if !seen[k] {
			if err := write(k, v); err != nil {
				return err
			}
		}
	}
	buf.WriteByte('}')
	d := newDecoder(path, label, opt, sink, bytes.NewReader(buf.Bytes()))
	if err := d.report(); err != nil {
		return err
	}
	if cut != nil {
		if len(d.runs) == 0 {
			return ingest.Errorf(path, fmt.Sprintf("byte %d", len(data)), "the file ends before its first benchmark (cut)")
		}
		b := d.runs[len(d.runs)-1]
		b.complete = false
		b.cutIn = cut.in
		d.cut = fmt.Sprintf("the file ends at byte %d (line %d), cut inside benchmark %d%s (%s): %d complete request records of it imported",
			len(data), bytes.Count(data, []byte("\n"))+1, b.index+1, cut.where(), cut.why, b.emitted)
	}
	if d.role() != "raw" {
		src.Role = "summary"
	}
	return d.finish([]formats.SourceFile{src}, nil)
}

// benchmarkKeys are keys guidellm writes in every benchmark of both report
// shapes (v0.2–v0.3 and v0.4+), whatever the version: a last benchmark
// without one of them was cut.
var benchmarkKeys = []string{"type_", "metrics", "requests", "start_time", "end_time", "duration"}

// yamlCutInfo is where a YAML report was cut.
type yamlCutInfo struct {
	in      string // where in the last benchmark: "requests.successful after 3 complete records", "metrics", …
	why     string // what shows the cut
	dropped func() // removes the record being written at the cut from the tree
}

func (c *yamlCutInfo) where() string {
	if c.in == "" {
		return ""
	}
	return " in " + c.in
}

// yamlCut looks for the signs of a cut in a parsed YAML report (see
// importYAML); nil when there are none. A report cut exactly between two
// benchmarks, at a line end, shows none and reads as a shorter report.
func yamlCut(root *yaml.Node, data []byte) *yamlCutInfo {
	var why []string
	if len(data) > 0 && data[len(data)-1] != '\n' {
		why = append(why, "its last line has no newline")
	}
	top := mapping(root)
	benches := value(top, "benchmarks")
	var last *yaml.Node
	if benches != nil && benches.Kind == yaml.SequenceNode && len(benches.Content) > 0 {
		last = benches.Content[len(benches.Content)-1]
	}
	if last != nil && last.Kind == yaml.MappingNode {
		var missing []string
		for _, k := range benchmarkKeys {
			if value(last, k) == nil {
				missing = append(missing, k)
			}
		}
		if len(missing) > 0 {
			why = append(why, "its last benchmark has no "+strings.Join(missing, ", ")+", which guidellm writes in every benchmark")
		}
	} else if benches == nil || benches.Kind != yaml.SequenceNode || len(benches.Content) == 0 {
		if len(why) > 0 {
			return &yamlCutInfo{why: strings.Join(why, "; ")}
		}
		return nil
	}
	if len(why) == 0 {
		return nil
	}
	c := &yamlCutInfo{why: strings.Join(why, "; ")}
	if last == nil || last.Kind != yaml.MappingNode || len(last.Content) < 2 {
		return c
	}
	// the key being written at the cut is the last one in file order
	key := last.Content[len(last.Content)-2].Value
	c.in = key
	if key != "requests" {
		return c
	}
	reqs := last.Content[len(last.Content)-1]
	if reqs.Kind != yaml.MappingNode || len(reqs.Content) < 2 {
		return c
	}
	list := reqs.Content[len(reqs.Content)-2].Value
	seq := reqs.Content[len(reqs.Content)-1]
	if seq.Kind != yaml.SequenceNode {
		c.in = "requests." + list
		return c
	}
	n := len(seq.Content)
	if n > 0 {
		// the record being written at the cut may lack its last keys: it
		// is dropped, as the JSON path drops a record it cannot finish
		n--
		c.dropped = func() { seq.Content = seq.Content[:len(seq.Content)-1] }
	}
	c.in = fmt.Sprintf("requests.%s after %d complete records", list, n)
	return c
}

// mapping is the top-level mapping of a document node (nil if none).
func mapping(root *yaml.Node) *yaml.Node {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	return n
}

// value is the value of key in the mapping m (nil if none).
func value(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// jsonable converts a decoded YAML value into one encoding/json can write:
// maps with string keys, non-finite floats as "NaN"/"Infinity"/"-Infinity".
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonable(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = jsonable(e)
		}
		return x
	case float64:
		switch {
		case math.IsNaN(x):
			return "NaN"
		case math.IsInf(x, 1):
			return "Infinity"
		case math.IsInf(x, -1):
			return "-Infinity"
		}
	}
	return v
}
