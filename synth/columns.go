package synth

import (
	"bufio"
	"math"
	"slices"
	"strconv"
)

// columns are a run's per-request values for the formats that store them
// column by column (vLLM bench serve, SGLang bench_serving: one array per
// quantity over every request), gathered in one pass of the generator; the
// ITL lists and texts are written by further passes (Generator is
// deterministic), so that memory holds a few numbers per request plus the
// pooled gaps the summaries need.
type columns struct {
	n        int
	fail     []int   // failNone, failBefore, failMidway
	tokens   []int   // N received
	ttftNs   []int64 // first token offset; 0 without a token
	lastNs   []int64 // last token offset; 0 without a token
	endNs    []int64 // stream end offset (the last message)
	startNs  []int64 // Unix ns
	gapsOKNs []int64 // the gaps of every completed request, pooled
	firstNs  int64   // the first request's start (Unix ns)
	maxEndNs int64   // the latest stream end (Unix ns)
	// completed, failed and the token sums are over completed requests.
	completed, failed int
	outTokens         int
}

func gatherColumns(m Model) (*columns, error) {
	g, err := NewGenerator(m)
	if err != nil {
		return nil, err
	}
	c := &columns{n: m.Requests}
	for {
		r, ok := g.Next()
		if !ok {
			break
		}
		c.fail = append(c.fail, r.fail)
		c.tokens = append(c.tokens, r.N())
		var t0, t1 int64
		if r.N() > 0 {
			t0, t1 = r.TTFTNs(), r.E2ENs()
		}
		c.ttftNs = append(c.ttftNs, t0)
		c.lastNs = append(c.lastNs, t1)
		c.endNs = append(c.endNs, r.EndNs)
		c.startNs = append(c.startNs, r.StartNs)
		if r.Key == 0 {
			c.firstNs = r.StartNs
		}
		c.maxEndNs = max(c.maxEndNs, r.StartNs+r.EndNs)
		if r.fail == failNone {
			c.completed++
			c.outTokens += r.N()
			for i := 1; i < r.N(); i++ {
				c.gapsOKNs = append(c.gapsOKNs, r.TokenNs[i]-r.TokenNs[i-1])
			}
		} else {
			c.failed++
		}
	}
	return c, nil
}

// each runs the generator again and calls f for every request.
func (c *columns) each(m Model, f func(r *Request)) {
	g, _ := NewGenerator(m) // m validated by gatherColumns
	for {
		r, ok := g.Next()
		if !ok {
			return
		}
		f(r)
	}
}

// pySep writes Python json.dump's default separators.
const (
	pyComma = ", "
	pyColon = ": "
)

// pyList writes "[v0, v1, …]" with the values from f(i).
func pyList(w *bufio.Writer, n int, f func(b []byte, i int) []byte) {
	var b []byte
	w.WriteByte('[')
	for i := 0; i < n; i++ {
		b = b[:0]
		if i > 0 {
			b = append(b, pyComma...)
		}
		b = f(b, i)
		w.Write(b)
	}
	w.WriteByte(']')
}

// pyKey writes `, "key": ` (first: without the comma).
func pyKey(w *bufio.Writer, key string, first bool) {
	if !first {
		w.WriteString(pyComma)
	}
	w.WriteString(`"` + key + `"` + pyColon)
}

// pyPerfSec appends the float seconds a Python tool gets subtracting two
// time.perf_counter() readings taken fromNs and toNs after the run began:
// the readings are about two hours of uptime, so the difference carries
// their rounding — 16 or 17 significant digits (0.019895419000115 for a
// 19,895,419 ns gap), as vLLM's and SGLang's real files do — not the
// shortest decimal of the nanoseconds (0.019895419). It is within a
// thousandth of a nanosecond of the exact gap.
func pyPerfSec(b []byte, fromNs, toNs int64) []byte {
	const uptimeS = 7321.0
	from := uptimeS + float64(fromNs)/1e9
	to := uptimeS + float64(toNs)/1e9
	return pyFloat(b, to-from)
}

// itlsColumn writes "[[g, …], …]": each request's gaps in float seconds
// as perf_counter differences (pyPerfSec; both tools keep the gaps of
// failed requests that got tokens).
func (c *columns) itlsColumn(w *bufio.Writer, m Model) {
	w.WriteByte('[')
	var b []byte
	c.each(m, func(r *Request) {
		b = b[:0]
		if r.Key > 0 {
			b = append(b, pyComma...)
		}
		b = append(b, '[')
		for i := 1; i < r.N(); i++ {
			if i > 1 {
				b = append(b, pyComma...)
			}
			start := r.StartNs - m.StartNs
			b = pyPerfSec(b, start+r.TokenNs[i-1], start+r.TokenNs[i])
		}
		b = append(b, ']')
		w.Write(b)
	})
	w.WriteByte(']')
}

// textsColumn writes the generated texts (the tokens received).
func (c *columns) textsColumn(w *bufio.Writer, m Model) {
	w.WriteByte('[')
	var b, t []byte
	c.each(m, func(r *Request) {
		b = b[:0]
		if r.Key > 0 {
			b = append(b, pyComma...)
		}
		t = t[:0]
		for _, wd := range r.Words {
			t = append(t, vocab[wd]...)
		}
		b = jsonString(b, string(t))
		w.Write(b)
	})
	w.WriteByte(']')
}

// pyStats are numpy's statistics of a list as the Python tools print them
// (np.mean, np.median, np.std with ddof 0, np.percentile linear); an empty
// list is [0] as vLLM and SGLang make it.
type pyStats struct{ mean, median, std float64 }

func npStats(v []float64) (pyStats, []float64) {
	if len(v) == 0 {
		v = []float64{0}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	var sum float64
	for _, x := range v {
		sum += x
	}
	mean := sum / float64(len(v))
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return pyStats{mean: mean, median: npPercentile(s, 50), std: math.Sqrt(ss / float64(len(v)))}, s
}

// npPercentile is np.percentile's linear rule on sorted values, p in %.
func npPercentile(sorted []float64, p float64) float64 {
	h := p / 100 * float64(len(sorted)-1)
	lo := int(math.Floor(h))
	if lo+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// statKeys writes `"mean_<name>_ms": …, "median_…", "std_…", "p<P>_…"`
// (ms values from ns or ms inputs).
func statKeys(w *bufio.Writer, name string, v []float64, ps ...float64) {
	st, s := npStats(v)
	var b []byte
	put := func(key string, x float64) {
		b = append(b[:0], pyComma+`"`...)
		b = append(b, key...)
		b = append(b, `"`+pyColon...)
		b = pyFloat(b, x)
		w.Write(b)
	}
	put("mean_"+name+"_ms", st.mean)
	put("median_"+name+"_ms", st.median)
	put("std_"+name+"_ms", st.std)
	for _, p := range ps {
		put("p"+strconv.FormatFloat(p, 'g', -1, 64)+"_"+name+"_ms", npPercentile(s, p))
	}
}

// msOf converts ns values to float ms.
func msOf(ns []int64) []float64 {
	out := make([]float64, len(ns))
	for i, v := range ns {
		out[i] = float64(v) / 1e6
	}
	return out
}

// requestColumns writes the per-request arrays vLLM's and SGLang's result
// files share, in their order: input_lens, output_lens (0 for a failed
// request), ttfts (seconds) and itls (seconds, one list per request).
func (c *columns) requestColumns(w *bufio.Writer, m Model) {
	pyKey(w, "input_lens", false)
	pyList(w, c.n, func(b []byte, i int) []byte { return strconv.AppendInt(b, int64(m.ISL), 10) })
	pyKey(w, "output_lens", false)
	pyList(w, c.n, func(b []byte, i int) []byte {
		if c.fail[i] != failNone {
			return append(b, '0')
		}
		return strconv.AppendInt(b, int64(c.tokens[i]), 10)
	})
	pyKey(w, "ttfts", false)
	pyList(w, c.n, func(b []byte, i int) []byte {
		start := c.startNs[i] - m.StartNs
		return pyPerfSec(b, start, start+c.ttftNs[i])
	})
	pyKey(w, "itls", false)
	c.itlsColumn(w, m)
}
