package render

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tokentrace/tokentrace/formats"
)

// The house style of every text output (docs/OUTPUT.md), in one place:
// durations in the unit their size calls for (Duration, DurationUnit,
// InUnit), one format for every percentage (Pct, SignedPct), prose cut at
// a word boundary (CutWords) and warnings grouped by code (groupWarnings).
// JSON keeps its fixed units; only what a person reads changes.

// Duration thresholds: milliseconds below 10 s, seconds from 10 s,
// minutes from 10 min.
const (
	secondsFromMs = 10_000
	minutesFromMs = 600_000
)

// LineLimit is the most characters a one-line warning, note or detail of
// a text output holds (docs/OUTPUT.md); the full text is in the JSON
// output and under --verbose.
const LineLimit = 200

// DataCheckLimit is the most characters of a data check's line: its
// code, count and public source are never cut, what it found and did is
// cut to fit (the catalogue's entries say more than a warning).
const DataCheckLimit = 320

// DetailLimit is the most characters of a gate's DETAIL cell.
const DetailLimit = 100

// DurationUnit is the unit a duration of ms milliseconds is written in:
// "ms" below 10 s, "s" from 10 s, "min" from 10 min (by magnitude; NaN
// and ±∞ are "ms"). A table column or row passes its largest value
// (ColumnUnit) so that all its cells share one unit.
func DurationUnit(ms float64) string {
	a := math.Abs(ms)
	switch {
	case math.IsNaN(a) || math.IsInf(a, 0) || a < secondsFromMs:
		return "ms"
	case a < minutesFromMs:
		return "s"
	}
	return "min"
}

// InUnit converts ms milliseconds to unit ("ms", "s" or "min").
func InUnit(ms float64, unit string) float64 {
	switch unit {
	case "s":
		return ms / 1000
	case "min":
		return ms / 60_000
	}
	return ms
}

// Duration writes ms milliseconds in its own unit (DurationUnit), the
// number as Num writes it: 9999 ms → "9999 ms", 10000 → "10.00 s",
// 119781 → "119.8 s", 600000 → "10.00 min"; "–" when undefined.
func Duration(ms float64) string {
	if math.IsNaN(ms) || math.IsInf(ms, 0) {
		return Num(ms)
	}
	u := DurationUnit(ms)
	return Num(InUnit(ms, u)) + " " + u
}

// ColumnUnit is the unit of a table column (or row) of durations in ms:
// the unit of its upper quartile (the value a quarter of its finite
// cells reach or exceed; NaN and ±∞ do not count), so that a column whose
// upper quarter is 10 s or more is in s, and a lone outlier does not
// rescale the rest. Its cells are written by Cell (an outlier in its own
// unit).
func ColumnUnit(ms ...float64) string {
	var vals []float64
	for _, v := range ms {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			vals = append(vals, math.Abs(v))
		}
	}
	if len(vals) == 0 {
		return "ms"
	}
	slices.Sort(vals)
	return DurationUnit(vals[int(math.Ceil(0.75*float64(len(vals)-1)))])
}

// unitRank orders the duration units.
var unitRank = map[string]int{"ms": 0, "s": 1, "min": 2}

// Cell writes a duration of ms milliseconds in a column whose unit is
// unit (ColumnUnit): the bare number in that unit, except a value that
// calls for a larger unit than the column's (an outlier: 119781 ms in a
// column of ms), which is written in its own unit with the unit beside it
// ("119.8 s"), so that no cell shows 10 s or more in ms.
func Cell(ms float64, unit string) string {
	if math.IsNaN(ms) || math.IsInf(ms, 0) {
		return Num(ms)
	}
	if u := DurationUnit(ms); unitRank[u] > unitRank[unit] {
		return Num(InUnit(ms, u)) + " " + u
	}
	return Num(InUnit(ms, unit))
}

// Pct writes a fraction (0.9333) as a percentage ("93.33%"): 100·v with
// at most two decimals (one from 100%, none from 1000%), two significant
// digits below 0.1% ("0.0093%"), and no trailing zeros ("70%", not
// "70.00%"); a value below 1 never rounds up to "100%" ("99.99%"); "–"
// when undefined. Every rate and fraction of a text output (error rate,
// goodput, attainment, shares) is written by Pct.
func Pct(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	s := pctDigits(100 * v)
	if s == "100" && v < 1 {
		s = "99.99"
	}
	return s + "%"
}

// SignedPct writes a relative change (0.4856) as a signed percentage
// ("+48.56%", "-100%", "+0%"), digits as Pct; "?" when undefined.
func SignedPct(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "?"
	}
	s := pctDigits(100 * math.Abs(v))
	if v < 0 && s != "0" {
		return "-" + s + "%"
	}
	return "+" + s + "%"
}

// pctDigits writes a percentage's number (Pct).
func pctDigits(p float64) string {
	a := math.Abs(p)
	switch {
	case a == 0:
		return "0"
	case a >= 1000:
		return fmt.Sprintf("%.0f", p)
	case a >= 100:
		return trimZeros(fmt.Sprintf("%.1f", p))
	case a >= 0.1:
		return trimZeros(fmt.Sprintf("%.2f", p))
	}
	d := 1 - int(math.Floor(math.Log10(a))) // two significant digits
	return trimZeros(fmt.Sprintf("%.*f", d, p))
}

// trimZeros drops the trailing zeros of a decimal ("70.00" → "70",
// "0.500" → "0.5"); integers and exponents are left alone.
func trimZeros(s string) string {
	if !strings.Contains(s, ".") || strings.ContainsAny(s, "eE") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// CutWords shortens prose to at most limit characters (runes) at a word
// boundary, ending " …" when it cut: never mid-word. Trailing
// punctuation before the cut (",", ";", ":", "(", "—") is dropped. A first
// word longer than limit (an identifier without spaces) is cut at limit
// characters, the only cut that is not at a boundary.
func CutWords(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	r := []rune(s)
	end := limit - 2 // room for " …"
	if end < 1 {
		end = 1
	}
	cut := -1
	for i := end; i > 0; i-- {
		if unicode.IsSpace(r[i]) {
			cut = i
			break
		}
	}
	if cut < 0 {
		return string(r[:limit-1]) + "…"
	}
	head := strings.TrimRightFunc(string(r[:cut]), func(c rune) bool {
		return unicode.IsSpace(c) || strings.ContainsRune(",;:(—–-·", c)
	})
	return head + " …"
}

// warningGroup is the warnings of one code: the subjects they are about
// (metrics, runs, results) in order of first use, how many there were,
// and the first message (all messages when they differ are in the JSON
// and under --verbose).
type warningGroup struct {
	code     string
	subjects []string
	n        int
	message  string
	same     bool // every message of the group is the first's
}

// groupWarnings groups items by code in order of first appearance; subj
// and msg give an item's subject ("" for none) and message.
func groupWarnings(n int, code, subj, msg func(i int) string) []*warningGroup {
	var out []*warningGroup
	by := map[string]*warningGroup{}
	for i := 0; i < n; i++ {
		c := code(i)
		g := by[c]
		if g == nil {
			g = &warningGroup{code: c, message: msg(i), same: true}
			by[c] = g
			out = append(out, g)
		}
		g.n++
		if m := msg(i); m != g.message {
			g.same = false
		}
		if s := subj(i); s != "" && !slices.Contains(g.subjects, s) {
			g.subjects = append(g.subjects, s)
		}
	}
	return out
}

// line writes a group as one line: "CODE on 16 runs: message" (the
// subjects named when there are at most four: "CODE [TTFT, E2E]: …"),
// "(the first of n)" when the messages differ; cut to limit at a word
// boundary unless verbose, and made safe to print (clean; Markdown
// escaping but for the code).
func (g *warningGroup) line(prefix, what string, limit int, verbose, md bool) string {
	head := prefix + g.code
	switch {
	case len(g.subjects) > 4:
		head += " on " + plural(len(g.subjects), what)
	case len(g.subjects) > 0:
		head += " [" + strings.Join(g.subjects, ", ") + "]"
	}
	msg := g.message
	if !g.same {
		msg = fmt.Sprintf("%s (the first of %d)", msg, g.n)
	}
	s := formats.SafeText(head + ": " + msg)
	if !verbose {
		s = CutWords(s, limit)
	}
	code := formats.SafeText(prefix + g.code)
	if !strings.HasPrefix(s, code) {
		return cleanN(s, md, math.MaxInt)
	}
	return code + cleanN(s[len(code):], md, math.MaxInt)
}
