package convention

import (
	"strconv"
	"strings"

	"github.com/agnivade/levenshtein"
)

// Suggest returns the candidate closest to word, for a "did you mean"
// after a misspelt name (a flag, a convention, a preset, a format): the
// candidate at the smallest Levenshtein distance (case-insensitive), if
// that distance is at most 2, or a third of word's length for longer
// words, or if the candidate starts with word (at least 3 characters);
// "" when none is close. Ties go to the earlier candidate, so the answer
// is deterministic.
func Suggest(word string, candidates []string) string {
	w := strings.ToLower(word)
	if w == "" {
		return ""
	}
	limit := max(2, len([]rune(w))/3)
	best, bestD := "", limit+1
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if lc == w {
			continue
		}
		d := levenshtein.ComputeDistance(w, lc)
		if d > limit && len(w) >= 3 && strings.HasPrefix(lc, w) {
			d = limit
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// DidYouMean is Suggest's answer as a sentence to append to an error
// ("; did you mean \"tokentrace\"?"), or "".
func DidYouMean(word string, candidates []string) string {
	if s := Suggest(word, candidates); s != "" {
		return "; did you mean " + strconv.Quote(s) + "?"
	}
	return ""
}
