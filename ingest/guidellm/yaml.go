package guidellm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

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
// the strings the JSON path makes of NaN/Infinity. A YAML file cut short is
// read as far as it parses.
func importYAML(in *ingest.Input, label string, opt ingest.Options, sink formats.Sink) error {
	path := in.Path
	src, data, err := in.ReadFile(path, "raw", opt)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return &ingest.FormatError{File: path, Msg: "invalid YAML", Err: err}
	}
	if doc == nil {
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
	if d.role() != "raw" {
		src.Role = "summary"
	}
	return d.finish([]formats.SourceFile{src}, nil)
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
