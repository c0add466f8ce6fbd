//go:build !unix

package analyze

// gapArena is unavailable here: the pooled gaps stay in blocks.
type gapArena struct{}

func newGapArena(int) *gapArena { return nil }

func (a *gapArena) floats() []float64 { return nil }
