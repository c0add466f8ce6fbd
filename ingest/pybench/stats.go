package pybench

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// Stat converts one reported statistic of a bench result file: a number
// becomes Value, NaN and ±Infinity (Python's bare tokens) Text ("NaN",
// "Infinity", "-Infinity"); ok is false for null or an absent value (not
// stored). Any other JSON type is an error quoting the value's first 40
// characters.
func Stat(file, metric, stat, unit string, raw json.RawMessage) (rs formats.ReportedStat, ok bool, err error) {
	v, k := Number(raw)
	rs = formats.ReportedStat{Metric: metric, Stat: stat, Unit: unit, File: file}
	switch k {
	case Absent:
		return rs, false, nil
	case Finite:
		rs.Value = ingest.Ptr(v)
	case NonFiniteNumber:
		switch {
		case math.IsInf(v, 1):
			rs.Text = "Infinity"
		case math.IsInf(v, -1):
			rs.Text = "-Infinity"
		default:
			rs.Text = "NaN"
		}
	default:
		s := formats.CutRunes(strings.TrimSpace(string(raw[:min(len(raw), 400)])), 40)
		return rs, false, fmt.Errorf("not a number: %s", s)
	}
	return rs, true, nil
}

// RequestRate reads a configured request rate: a number, or Python's
// float("inf") written as Infinity (a burst); nil for NaN or null.
func RequestRate(raw json.RawMessage) (*float64, error) {
	v, k := Number(raw)
	switch k {
	case Finite, NonFiniteNumber:
		if !math.IsNaN(v) {
			return ingest.Ptr(v), nil
		}
	case NotNumber:
		return nil, fmt.Errorf("not a number or \"inf\"")
	}
	return nil, nil
}

// Concurrency reads a configured maximum concurrency: a finite number; nil
// for null, NaN or infinity.
func Concurrency(raw json.RawMessage) (*float64, error) {
	v, k := Number(raw)
	switch k {
	case Finite:
		return ingest.Ptr(v), nil
	case NotNumber:
		return nil, fmt.Errorf("not a number")
	}
	return nil, nil
}

// At returns xs[i], NaN when the array is absent (nil).
func At(xs []float64, i int) float64 {
	if xs == nil {
		return math.NaN()
	}
	return xs[i]
}

// Count reads a token count: a finite non-negative number (at most 1e15),
// rounded; false otherwise.
func Count(v float64) (int64, bool) {
	if math.IsNaN(v) || v < 0 || v > 1e15 {
		return 0, false
	}
	return int64(math.Round(v)), true
}

// ErrorLabel is a failed request's class for a run's notes: its HTTP code,
// else its error type, else its quoted text (60 characters at most).
func ErrorLabel(r *formats.Request) string {
	switch {
	case r.ErrorCode != nil:
		return fmt.Sprintf("HTTP %d", *r.ErrorCode)
	case r.ErrorType != "":
		return r.ErrorType
	case r.ErrorText == "":
		return "no reply, empty reason"
	}
	return fmt.Sprintf("%q", formats.CutRunes(r.ErrorText, 60))
}

// UnimportedArraysNote is the note of a summary-only result that still
// holds per-request arrays which say neither when nor whether a request
// answered ("" when it holds none).
func UnimportedArraysNote(arrays map[string]json.RawMessage) string {
	if len(arrays) == 0 {
		return ""
	}
	names := make([]string, 0, len(arrays))
	for k := range arrays {
		names = append(names, k)
	}
	sort.Strings(names)
	return "per-request arrays that say neither when nor whether a request answered, not imported: " + strings.Join(names, ", ")
}
