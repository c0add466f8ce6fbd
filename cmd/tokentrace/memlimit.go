package main

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/tokentrace/tokentrace/ingest"
)

// defaultMemoryLimit is the Go runtime's soft memory limit tokentrace
// starts with when the user did not set GOMEMLIMIT: 100 MiB.
//
// Without a limit the garbage collector lets the heap grow to twice the
// live data before collecting (GOGC=100), so peak RSS is about twice what
// the program holds: on the 1 GB GenAI-Perf benchmark run `report` and
// `analyze` hold up to ~85 MB at the end (the pooled ITL, one float64 per
// token gap, its sorted copy and the sort's scratch) and peaked at 170–215
// MB. Under the limit the collector runs more often once the heap nears it;
// the big live objects hold no pointers, so a collection costs little.
// Measured on the 1 GB run (3 runs each): peak RSS 198–201 → 119–127 MB
// (`report`) and 191–216 → 130–138 MB (`analyze`) for ~3% more CPU (within
// the runs' noise); no change on the 250 MB run, whose heap stays below
// the limit. 80 MiB saved only ~5–10 MB more for ~8–15% more CPU.
//
// The limit follows the live data (memLimitFor): it never falls below
// defaultMemoryLimit and stays a third above the live heap (a quarter past
// the memory budget), so a run whose live data outgrows it (very large
// inputs) is collected about as often as with GOGC=33 (25), never
// continuously.
//
// Unless GOGC is set too, the proportional trigger is switched off
// (GOGC=off): the heap is collected when it reaches the limit, not each
// time it doubles. The process then uses its 100 MiB whatever the input's
// size instead of twice a live heap that grows with the token count, and
// collects less often. Measured (2 runs each, 250 MB → 1 GB run): `report`
// peak RSS 71–73 → 120–122 MB with GOGC=100, 119 → 122–129 MB with it
// off, CPU 1.25 s → 1.15–1.3 s and 5.0–5.5 s → 4.5–5.0 s; `analyze`
// 103–107 → 132 MB with GOGC=100, 117 → 131–135 MB with it off.
const defaultMemoryLimit = 100 << 20

// memLimitFor is the soft limit for a live heap of live bytes: a third
// more than the live heap (the collector then runs about as often as with
// GOGC=33, not continuously), but not past the memory budget unless the
// live heap itself needs more (then a quarter above it), and never below
// defaultMemoryLimit. Measured on AIPerf 100k requests (41M gaps, ~330 MB
// live at the peak), three runs each: half again as much (GOGC=50's pace)
// 3.6–3.7 s wall, 470–497 MB RSS; a third 3.65–3.8 s, 430 MB; a quarter
// 3.8 s, 411 MB — the Performance target allows that run 480 MB. Twice the
// live heap (GOGC=100's pace) took no less CPU and 575 MB.
func memLimitFor(live uint64) int64 {
	l := int64(live)
	return max(defaultMemoryLimit, min(l+l/3, max(gcBudget.Load(), l+l/4)))
}

// gcBudget is the memory budget the limit stays within (memoryBudget sets
// it from --memory-budget).
var gcBudget atomic.Int64

func init() { gcBudget.Store(defaultMemoryBudget) }

// setDefaultMemoryLimit applies defaultMemoryLimit, and keeps the limit
// at memLimitFor(live heap) after every collection, unless GOMEMLIMIT is
// set (any value, "off" included: the user's choice, which the runtime
// applied at start). Under that limit it switches GOGC off unless GOGC is
// set. It reports whether it set a limit.
func setDefaultMemoryLimit() bool {
	if _, ok := os.LookupEnv("GOMEMLIMIT"); ok {
		return false
	}
	debug.SetMemoryLimit(defaultMemoryLimit)
	if _, ok := os.LookupEnv("GOGC"); !ok {
		debug.SetGCPercent(-1)
	}
	if !following.Swap(true) {
		armLimitFollower()
	}
	return true
}

// following is whether followLimit runs after each collection (tests
// switch it off).
var following atomic.Bool

// armLimitFollower runs followLimit after the next garbage collection (a
// finalizer runs once the collection that freed its object ends; followLimit
// re-arms it).
func armLimitFollower() {
	runtime.SetFinalizer(new(gcCycle), followLimit)
}

// gcCycle is 16 bytes: a smaller pointer-free object comes from the tiny
// allocator, which packs it with others into one 16-byte block, and a
// finalizer on it runs only once the whole block is unreachable — with
// other tiny objects alive, never, and the limit would stop following.
type gcCycle struct{ _ [16]byte }

// followed counts followLimit's runs (tests).
var followed atomic.Int64

var liveHeap = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}

func followLimit(*gcCycle) {
	if !following.Load() {
		return
	}
	followed.Add(1)
	metrics.Read(liveHeap)
	if liveHeap[0].Value.Kind() == metrics.KindUint64 {
		want := memLimitFor(liveHeap[0].Value.Uint64())
		if debug.SetMemoryLimit(-1) != want { // -1 reads without changing
			debug.SetMemoryLimit(want)
		}
	}
	armLimitFollower()
}

// defaultMemoryBudget is the memory budget without --memory-budget or
// GOMEMLIMIT: 1 GiB.
const defaultMemoryBudget = 1 << 30

// memoryBudgetUsage is the help of --memory-budget.
const memoryBudgetUsage = "memory the analysis may plan for (default 1GiB, or GOMEMLIMIT when set): past half of it the exact pooled ITL moves to a quantile sketch (±0.5%); see tokentrace help memory"

// memoryBudget is the budget --memory-budget gives (flag "" : GOMEMLIMIT
// when set to a limit, else defaultMemoryBudget).
func memoryBudget(flag string) (int64, error) {
	if flag != "" {
		n, err := ingest.ParseSize(flag)
		if err != nil {
			return 0, usageError{fmt.Errorf("--memory-budget: %w", err)}
		}
		gcBudget.Store(n)
		return n, nil
	}
	if v, ok := os.LookupEnv("GOMEMLIMIT"); ok && v != "off" {
		if lim := debug.SetMemoryLimit(-1); lim > 0 && lim < math.MaxInt64 {
			return lim, nil
		}
	}
	return defaultMemoryBudget, nil
}

// newMemoryTopic is the help topic `tokentrace help memory`.
func newMemoryTopic() *cobra.Command {
	return &cobra.Command{
		Use:   "memory",
		Short: "Memory use: the default soft memory limit and GOMEMLIMIT",
		Long: `tokentrace streams its inputs: memory grows with the number of requests and
token gaps (exact ITL percentiles keep one number per token gap, 8 bytes), not
with the size of the files.

tokentrace sets the Go runtime's soft memory limit to 100 MiB and collects
garbage when the heap reaches it (GOGC=off), instead of each time the heap
doubles: peak RSS stays at 115–135 MB for report and analyze on both the 250 MB
and the 1 GB GenAI-Perf benchmark runs (170–215 MB on the 1 GB run with Go's
defaults), with no more CPU than the defaults. The budget is used even when
less would do: on the 250 MB run Go's defaults peak lower (70–100 MB). The
limit is soft and follows the data: when the live heap needs more, the limit
is a third above the live heap (the collector then runs about as often as with
GOGC=33), a quarter above it past the memory budget; nothing fails.

Setting GOMEMLIMIT hands memory back to Go's own rules: your limit, with Go's
proportional trigger (GOGC=100 unless GOGC is set). For fewer collections and
less CPU on a big machine set both, e.g. GOGC=off GOMEMLIMIT=1GiB;
GOMEMLIMIT=off gives Go's defaults. GOGC alone keeps tokentrace's 100 MiB limit
with your GOGC under it.

The memory budget (--memory-budget, default 1 GiB, or GOMEMLIMIT when it is
set) bounds what the analysis plans to hold, by the input's shape:

  per request and convention   about 400 bytes of metrics, kept for exact
                               percentiles of TTFT, TPOT, E2E, OSL, … (about
                               840 bytes live per request measured on 1M
                               AIPerf requests: 1.1-1.35 GB peak RSS)
  per token gap and convention 8 bytes (the pooled ITL; past 4M gaps in an
                               anonymous mapping reserved up front, and its
                               percentiles read by selection, no sorted copy)
  per series point             about 100 bytes (GPU telemetry, Prometheus
                               results): a third of the budget; past it the
                               samples are thinned evenly (every 2nd, 4th, …)
                               and a warning says so. Measured: a 6M-point
                               telemetry export, 745 MB peak at 1 GiB (3M
                               kept), 216 MB at 256 MiB (750k kept). A
                               Prometheus result is refused past a quarter
                               of that cap
  per request, for the checks  16 bytes (its start and end: clock_step)
  the request being read       about 250 bytes per message while it is
                               imported and computed (its events), up to
                               twice that in RSS. A request may hold at
                               most --max-value-size / 256 messages
                               (1,048,576 at the default 256 MiB; more is
                               refused, naming the cap): at that cap about
                               0.45 GB for an AIPerf record, 1.2 GB for a
                               GenAI-Perf request (its SSE text is held
                               too). Before the cap a 10M-chunk AIPerf
                               record took 3.5 GB; now it is refused in
                               0.1 GB

Work on one value is bounded by the value's size once, whatever it holds: an
error text is read for its first line in its first 64 KiB (a 200 MB error text
costs what a 1 KB one does), excerpts are cut after a fixed number of
characters without converting the text, and a value over --max-value-size is
refused before it is read whole.

report computes one convention, --convention tool one per profile of the
runs' tools. The exact pooled ITL gets half the budget: past it (about 67
million gaps at 1 GiB with one convention) every run's pooled ITL moves to a
DDSketch, a mergeable quantile sketch whose every percentile is within 0.5%
of the order statistic at its rank (VLDB 2019; github.com/DataDog/sketches-go);
its count, mean, std, min and max stay exact, the report says so (warning
itl_sketch) and the ITL-by-position plot is skipped. The per-request metrics
are never sketched: a run of R requests needs about 400-840 × R bytes per
convention whatever the budget.`,
	}
}
