package vllmbench

import (
	"bytes"
	"math"
	"path/filepath"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/pybench"
)

// streamed are the per-request arrays pybench.Scan reads as columns.
var streamed = map[string]pybench.ColumnKind{
	"input_lens": pybench.NumberColumn, "output_lens": pybench.NumberColumn, "ttfts": pybench.NumberColumn,
	"start_times": pybench.NumberColumn, "latencies": pybench.NumberColumn, "queue_times": pybench.NumberColumn,
	"itls": pybench.ListColumn, "errors": pybench.StringColumn, "generated_texts": pybench.TextColumn,
}

// importStream imports a regular, uncompressed file of result objects in
// bounded memory: pybench.Scan reads it once, holding the per-request
// numbers and errors, the traps' summaries of itls and the other members;
// each run's requests are then built reading itls (and generated_texts,
// unless opt.NoText) again from the file, one request at a time. An input
// Scan is unsure of returns an error for which pybench.IsUnsure is true,
// before anything reaches sink.
func importStream(in *ingest.Input, label string, opt ingest.Options, sink formats.Sink) error {
	path := in.Path
	var sums [][]itlSum
	var scratch []float64
	onList := func(v int, _ string, i int, list []float64) {
		for len(sums) <= v {
			sums = append(sums, nil)
		}
		for j, x := range list {
			if ingest.Classify(x, arrayMax["itls"]) != ingest.Valid {
				list[j] = math.NaN()
			}
		}
		sums[v] = append(sums[v], summarize(list, &scratch))
	}
	vals, err := pybench.Scan(in, path, in.MaxValue(), pybench.ScanOptions{Layout: pybench.Objects, Columns: streamed, OnList: onList})
	if err != nil {
		return err
	}
	src, err := in.SourceFile("summary")
	if err != nil {
		return err
	}
	f := &fileState{path: path, file: filepath.Base(path), opt: opt, warns: ingest.NewNotes(path, opt).Once(), multi: len(vals) > 1}
	var results []*result
	for _, v := range vals {
		r, err := parseResult(f, v)
		if err != nil {
			return err
		}
		if v.Index < len(sums) {
			r.sums = sums[v.Index]
		}
		r.stream = &pybench.SecondPass{Path: path, Max: in.MaxValue()}
		if in.BOM {
			r.stream.Shift = 3
		}
		results = append(results, r)
	}
	for i, r := range results {
		if err := r.emit(f, ingest.RunLabel(label, i), src, "", sink); err != nil {
			return err
		}
	}
	return nil
}

// streamable reports whether in can take importStream: a regular file,
// not compressed, not a JSON array (a sweep summary, read with its
// companions the general way).
func streamable(in *ingest.Input) bool {
	t := bytes.TrimSpace(in.Head())
	return in.Regular() && in.Compression == "" && in.Path != ingest.StdinPath && (len(t) == 0 || t[0] != '[')
}

// streamDetails is parseDetails for the columns of a streamed result.
func streamDetails(cols map[string]*pybench.Stream, sums []itlSum, src *pybench.SecondPass, vals *ingest.Values, at string) (*details, error) {
	found := false
	for _, k := range rowArrays {
		if _, ok := cols[k]; ok {
			found = true
		}
	}
	if !found {
		return nil, nil
	}
	d := &details{n: -1}
	lengths := map[string]int{}
	for _, a := range []struct {
		key string
		dst *[]float64
	}{{"ttfts", &d.ttfts}, {"input_lens", &d.inLens}, {"output_lens", &d.outLens}, {"start_times", &d.starts}, {"latencies", &d.lats}, {"queue_times", &d.queues}} {
		c, ok := cols[a.key]
		if !ok {
			continue
		}
		maxV, checked := arrayMax[a.key]
		if !checked {
			maxV = -1 // read as Floats does
		}
		*a.dst, lengths[a.key] = pybench.NumberValues(a.key, c, vals, at, maxV), c.N
	}
	if c, ok := cols["errors"]; ok {
		d.errs, lengths["errors"] = c.Strings, c.N
	}
	if c, ok := cols["generated_texts"]; ok {
		src.Texts, lengths["generated_texts"] = c, c.N
	}
	if c, ok := cols["itls"]; ok {
		src.ITLs, lengths["itls"] = c, c.N
		d.sums = sums
		if len(sums) != c.N {
			d.sums = make([]itlSum, c.N) // not reached: Scan calls OnList once per list
		}
	}
	d.stream = src
	var err error
	if d.names, d.n, err = pybench.Aligned(lengths); err != nil {
		return nil, err
	}
	d.checkTimeOrder(vals, at)
	return d, nil
}

// rows returns the source of each request's gaps and text, in order, and
// a function that releases it (pybench.RowSource).
func (d *details) rows(noText bool, vals *ingest.Values, at string) (next func(i int) ([]float64, *string, error), done func(), err error) {
	return pybench.RowSource(d.itls, d.texts, d.stream, noText, vals, at, arrayMax["itls"])
}
