package registry

import (
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/ingest"
)

// Traps returns the data-check catalogue entries that belong to no one
// tool but to every import: the shared value checks (ingest.ValueTraps:
// NaN, infinite, negative and out-of-range values, numbers written as
// strings, time columns in another unit) and the checks across a run's
// requests (ingest.RunTraps: duplicate requests, far starts), the several
// models of one run (ingest.ModelTraps) and the goodput denominators
// (ingest.GoodputTraps). A convention.Set takes them with
// WithTraps, beside the tools' own (Tools) and the analysis's.
func Traps() []convention.Trap {
	return append(append(append(append([]convention.Trap(nil), ingest.ValueTraps...), ingest.RunTraps...), ingest.ModelTraps...), ingest.GoodputTraps...)
}
