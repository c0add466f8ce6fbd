package stats

import (
	"math"
	"math/bits"
)

// SelectMin is the sample size from which Summarize reads order
// statistics by selection (SelectRanks) instead of sorting a copy: the
// pooled token gaps of a large run (41M on the 100k-request AIPerf
// bench file, 328 MB a copy) cost no memory beyond 512 KB of counts and
// the few buckets the wanted ranks fall in. Below it a sample is sorted
// as before, so that small samples' summaries keep their exact bits (the
// mean of a selected sample is summed in its own order, not in sorted
// order: the same to about 1e-16 relative).
const SelectMin = 1 << 20

// gatherMax is the largest bucket SelectRanks copies and sorts; a bigger
// one is bucketed again by its next bits (another pass over the sample).
const gatherMax = 1 << 20

// SelectRanks returns the values at the 0-based ranks of the sorted
// non-NaN values of xs (ranks in [0, n), any order, repeats allowed),
// without changing xs and without sorting it: a counting pass over 20
// bits of an order-preserving key (those below the bits every value
// shares, as SortedCopy buckets) finds each rank's bucket, a second pass
// copies the values of those buckets, and each is sorted (SortedCopy); a
// bucket over gatherMax values is bucketed again by its next bits. It
// panics on a rank outside [0, n).
func SelectRanks(xs []float64, ranks []int) []float64 {
	out := make([]float64, len(ranks))
	if len(ranks) == 0 {
		return out
	}
	n := 0
	lo, hi := uint64(math.MaxUint64), uint64(0)
	for _, x := range xs {
		if !math.IsNaN(x) {
			n++
			k := sortKey(x)
			lo, hi = min(lo, k), max(hi, k)
		}
	}
	ts := make([]target, len(ranks))
	for i, r := range ranks {
		if r < 0 || r >= n {
			panic("stats: SelectRanks: rank out of range")
		}
		ts[i] = target{rank: r, out: i}
	}
	selectIn(xs, lo, hi, n, ts, out)
	return out
}

// target is one wanted rank: its rank among the values of the current key
// range, and where its value goes.
type target struct{ rank, out int }

// selectIn answers ts, ranks among the n values of xs whose keys are in
// [lo, hi].
func selectIn(xs []float64, lo, hi uint64, n int, ts []target, out []float64) {
	if lo == hi {
		v := keyValue(lo)
		for _, t := range ts {
			out[t.out] = v
		}
		return
	}
	if n <= gatherMax {
		vals := make([]float64, 0, n)
		for _, x := range xs {
			if k := sortKey(x); !math.IsNaN(x) && k >= lo && k <= hi {
				vals = append(vals, x)
			}
		}
		sorted := SortedCopy(vals)
		for _, t := range ts {
			out[t.out] = sorted[t.rank]
		}
		return
	}
	const width = 20 // 4 MB of counts: buckets a 16th of SortedCopy's
	shift := max(64-bits.LeadingZeros64(lo^hi)-width, 0)
	base := lo >> shift
	counts := make([]uint32, 1<<width)
	for _, x := range xs {
		if k := sortKey(x); !math.IsNaN(x) && k >= lo && k <= hi {
			counts[k>>shift-base]++
		}
	}
	// each target's bucket, and its rank within it
	type bucket struct {
		n, start int
		ts       []target
	}
	var bs []*bucket
	at := map[int]*bucket{}
	for _, t := range ts {
		cum, b := 0, 0
		for ; b < len(counts); b++ {
			if cum+int(counts[b]) > t.rank {
				break
			}
			cum += int(counts[b])
		}
		bk := at[b]
		if bk == nil {
			bk = &bucket{n: int(counts[b]), start: b}
			at[b] = bk
			bs = append(bs, bk)
		}
		bk.ts = append(bk.ts, target{rank: t.rank - cum, out: t.out})
	}
	// the small buckets' values in one pass (a table from bucket to
	// list), the large ones bucketed again
	slot := make([]int8, 1<<width)
	for i := range slot {
		slot[i] = -1
	}
	var small []*bucket
	for _, bk := range bs {
		if bk.n <= gatherMax {
			slot[bk.start] = int8(len(small))
			small = append(small, bk)
		}
	}
	if len(small) > 0 {
		vals := make([][]float64, len(small))
		for i, bk := range small {
			vals[i] = make([]float64, 0, bk.n)
		}
		top := base + 1<<width
		for _, x := range xs {
			k := sortKey(x)
			if k < lo || k > hi || math.IsNaN(x) {
				continue
			}
			if b := k >> shift; b < top {
				if j := slot[b-base]; j >= 0 {
					vals[j] = append(vals[j], x)
				}
			}
		}
		for i, bk := range small {
			sorted := SortedCopy(vals[i])
			for _, t := range bk.ts {
				out[t.out] = sorted[t.rank]
			}
		}
	}
	for _, bk := range bs {
		if bk.n <= gatherMax {
			continue
		}
		blo := (base + uint64(bk.start)) << shift
		bhi := blo | (1<<shift - 1)
		if bk.start == 0 {
			blo = max(blo, lo)
		}
		bhi = min(bhi, hi)
		selectIn(xs, blo, bhi, bk.n, bk.ts, out)
	}
}

// keyValue inverts sortKey.
func keyValue(k uint64) float64 {
	if k>>63 == 1 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}

// percentileRanks are the 0-based ranks Percentile reads of a sorted
// sample of n values at p by method m (one or two).
func percentileRanks(n int, p float64, m Method) []int {
	var rec []int
	percentileAt(n, p, m, func(i int) float64 {
		rec = append(rec, i)
		return 0
	})
	return rec
}
