package guidellm

import "github.com/tokentrace/tokentrace/ingest/internal/jsonscan"

// scanner is the fast path's reader (fastrecord.go): the shared
// validating JSON scanner (jsonscan: what encoding/json accepts within a
// value, nesting up to jsonscan.MaxDepth; Short set when the buffer ends
// inside the value, as more input may complete it), plus the nested
// objects object splits on the way.
type scanner struct {
	jsonscan.Scanner
	subs map[*byte]obj // see object
}

// subDepth is how deep object splits nested objects for decoder.sub (a
// record's info and its timings).
const subDepth = 2
