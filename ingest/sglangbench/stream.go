package sglangbench

import (
	"path/filepath"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/pybench"
)

// streamed are the --output-details arrays pybench.Scan reads as columns.
var streamed = map[string]pybench.ColumnKind{
	"input_lens": pybench.NumberColumn, "output_lens": pybench.NumberColumn, "ttfts": pybench.NumberColumn,
	"itls": pybench.ListColumn, "errors": pybench.StringColumn, "generated_texts": pybench.TextColumn,
}

// arrayMax are the ranges of the number arrays (the shared value checks).
var arrayMax = map[string]float64{
	"ttfts": ingest.MaxIn(ingest.Seconds), "input_lens": ingest.MaxTokens, "output_lens": ingest.MaxTokens,
	"itls": ingest.MaxIn(ingest.Seconds),
}

// importStream imports a regular, uncompressed JSON-lines file in bounded
// memory: pybench.Scan reads it once, holding the per-request numbers,
// errors and itls lengths and the other members; each run's requests are
// then built reading itls (and generated_texts, unless opt.NoText) again
// from the file, one request at a time. An input Scan is unsure of gives
// an error for which pybench.IsUnsure is true, before anything reaches
// sink.
func importStream(in *ingest.Input, label string, opt ingest.Options, sink formats.Sink) error {
	path := in.Path
	vals, err := pybench.Scan(in, path, in.MaxValue(), pybench.ScanOptions{Layout: pybench.Lines, Columns: streamed})
	if err != nil {
		return err
	}
	src, err := in.SourceFile("summary")
	if err != nil {
		return err
	}
	f := &fileState{path: path, file: filepath.Base(path), opt: opt, warns: ingest.NewNotes(path, opt).Once()}
	var results []*result
	for _, v := range vals {
		r, err := parseResult(f, v)
		if err != nil {
			return err
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

// streamDetails is parseDetails for the columns of a streamed line.
func streamDetails(cols map[string]*pybench.Stream, src *pybench.SecondPass, vals *ingest.Values, at string) (*details, error) {
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
	}{{"ttfts", &d.ttfts}, {"input_lens", &d.inLens}, {"output_lens", &d.outLens}} {
		if c, ok := cols[a.key]; ok {
			*a.dst, lengths[a.key] = pybench.NumberValues(a.key, c, vals, at, arrayMax[a.key]), c.N
		}
	}
	if c, ok := cols["errors"]; ok {
		d.errs, lengths["errors"] = c.Strings, c.N
	}
	if c, ok := cols["generated_texts"]; ok {
		src.Texts, lengths["generated_texts"] = c, c.N
	}
	if c, ok := cols["itls"]; ok {
		src.ITLs, lengths["itls"] = c, c.N
		d.itlLens = c.Lens
		if d.itlLens == nil {
			d.itlLens = []int32{}
		}
	}
	d.stream = src
	var err error
	if d.names, d.n, err = pybench.Aligned(lengths); err != nil {
		return nil, err
	}
	return d, nil
}

// rows returns the source of each request's gaps and text, in order, and
// a function that releases it (pybench.RowSource).
func (d *details) rows(noText bool, vals *ingest.Values, at string) (next func(i int) ([]float64, *string, error), done func(), err error) {
	return pybench.RowSource(d.itls, d.texts, d.stream, noText, vals, at, arrayMax["itls"])
}
