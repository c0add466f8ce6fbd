package aiperf

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// parseSummaryCSV reads profile_export_aiperf.csv (exporters/csv_exporter.py):
// CRLF lines in sections separated by blank lines. A section starts with a
// header row whose first cell is "Metric": "Metric,avg,min,max[,sum],p1,…,std"
// for metrics with statistics, "Metric,Value" for scalars. AIPerf 0.8+
// appends a GPU-telemetry section whose header starts with "Endpoint"; its
// rows are skipped (counted in a note).
//
// Each row is "<header> (<unit>)" or "<header>" followed by numbers printed
// with two decimals. The header is mapped back to AIPerf's tag (csvTag);
// the unit is the label's last parenthesized group (the CSV omits it for
// counts, so Unit is "" there, where the JSON says "requests"). A "Value"
// column becomes Stat "avg", the statistic the JSON summary holds scalars
// under, so that readers find e.g. request_throughput/avg whichever file was
// read.
func parseSummaryCSV(file string, raw []byte) (*summary, error) {
	r := csv.NewReader(bytes.NewReader(raw))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	s := &summary{notes: []string{file + ": CSV summary (no JSON summary beside it): values rounded to 2 decimals; no version, model or configuration"}}
	var header []string
	gpuRows := 0
	for {
		row, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch {
		case len(row) == 0 || (len(row) == 1 && strings.TrimSpace(row[0]) == ""):
			continue
		case row[0] == "Metric":
			header = row
			continue
		case row[0] == "Endpoint":
			header = nil
			continue
		case header == nil:
			gpuRows++
			continue
		}
		s.addCSVRow(file, header, row)
	}
	if gpuRows > 0 {
		s.notes = append(s.notes, fmt.Sprintf("%s: %d GPU telemetry rows skipped", file, gpuRows))
	}
	return s, nil
}

// addCSVRow adds the statistics of one CSV data row.
func (s *summary) addCSVRow(file string, header, row []string) {
	name, unit := splitLabel(row[0])
	tag := csvTag(name)
	for i := 1; i < len(row) && i < len(header); i++ {
		cell := strings.TrimSpace(row[i])
		if cell == "" {
			continue
		}
		stat := header[i]
		if stat == "Value" {
			stat = "avg"
		}
		rs := formats.ReportedStat{Metric: tag, Stat: stat, Unit: unit, File: file}
		if f, err := strconv.ParseFloat(cell, 64); err == nil {
			rs.Value = ingest.Ptr(f)
		} else {
			rs.Text = cell
		}
		s.reported = append(s.reported, rs)
	}
}

// splitLabel splits "Time to First Token (ms)" into its header and unit.
// Headers that end in a parenthesized part of their own ("HTTP Waiting
// (TTFB)") are known to csvTags and keep it.
func splitLabel(label string) (name, unit string) {
	label = strings.TrimSpace(label)
	if _, known := csvTags[label]; known || !strings.HasSuffix(label, ")") {
		return label, ""
	}
	i := strings.LastIndex(label, " (")
	if i < 0 {
		return label, ""
	}
	return label[:i], label[i+2 : len(label)-1]
}

// csvTags maps the CSV headers whose tag is not the header's snake case
// (metric classes' "header" vs "tag" in aiperf/metrics/types/*.py; checked
// against the corpus JSON/CSV pairs).
var csvTags = map[string]string{
	"Error Input Sequence Length":       "error_isl",
	"Total Error Input Sequence Length": "total_error_isl",
	"Total Input Sequence Length":       "total_isl",
	"Total Output Sequence Length":      "total_osl",
	"HTTP Duration (excl. conn)":        "http_req_duration",
	"HTTP Total Time":                   "http_req_total",
	"HTTP Waiting (TTFB)":               "http_req_waiting",
	"OSL Mismatch Diff %":               "osl_mismatch_diff_pct",
	"Overall Usage Prompt Cache Read %": "overall_usage_prompt_cache_read_pct",
	"Minimum Request Timestamp":         "min_request_timestamp",
	"Maximum Response Timestamp":        "max_response_timestamp",
}

// csvTag maps a CSV header to AIPerf's metric tag: csvTags, else "HTTP X" →
// "http_req_x", else the header in snake case ("Time to First Token" →
// "time_to_first_token", "%" → "pct").
func csvTag(name string) string {
	if t, ok := csvTags[name]; ok {
		return t
	}
	if rest, ok := strings.CutPrefix(name, "HTTP "); ok {
		return "http_req_" + snake(rest)
	}
	return snake(name)
}

// snake lower-cases s and joins its words with underscores.
func snake(s string) string {
	s = strings.ReplaceAll(s, "%", "pct")
	f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	return strings.Join(f, "_")
}

// compareCSV checks the CSV summary against the JSON one: AIPerf prints every
// CSV value as the JSON value with two decimals (csv_exporter.py), so each
// numeric CSV statistic must be within 0.005 of its JSON counterpart. Some
// have none: AIPerf 0.8's CSV has a sum column that its JSON (schema 1.0)
// lacks. It returns a note with the outcome; the run's values come from the
// JSON.
func compareCSV(j, c *summary) string {
	byKey := map[string]float64{}
	for _, r := range j.reported {
		if r.Value != nil {
			byKey[r.Metric+"/"+r.Stat] = *r.Value
		}
	}
	file := filepath.Base(c.src.Path)
	var n, differ, unmatched int
	var firstDiff string
	missing := map[string]int{} // unmatched values by statistic
	for _, r := range c.reported {
		if r.Value == nil {
			continue
		}
		n++
		key := r.Metric + "/" + r.Stat
		jv, ok := byKey[key]
		switch {
		case !ok:
			unmatched++
			missing[r.Stat]++
		case math.Abs(jv-*r.Value) > 0.005+1e-9*math.Max(1, math.Abs(jv)):
			differ++
			if firstDiff == "" {
				firstDiff = fmt.Sprintf("%s: CSV %g, JSON %g", key, *r.Value, jv)
			}
		}
	}
	msg := fmt.Sprintf("%s checked against the JSON summary: %d of %d values agree to 2 decimals", file, n-differ-unmatched, n)
	if differ > 0 {
		msg += fmt.Sprintf("; %d differ (first %s)", differ, firstDiff)
	}
	if unmatched > 0 {
		var parts []string
		for stat, k := range missing {
			parts = append(parts, fmt.Sprintf("%s ×%d", stat, k))
		}
		sort.Strings(parts)
		msg += fmt.Sprintf("; %d have no JSON counterpart (by statistic: %s)", unmatched, strings.Join(parts, ", "))
	}
	return msg
}
