package pybench

import "github.com/tokentrace/tokentrace/ingest"

// SecondPass is where a streamed result's itls and generated_texts are
// read again, one request at a time (OpenRows): the file, the offset its
// byte-order mark shifts (3, or 0), the value cap, and the two lists'
// places found by the first pass (Scan).
type SecondPass struct {
	Path        string
	Shift       int64
	Max         int64
	ITLs, Texts *Stream
}

// RowSource returns the source of each request's gaps and text, in order,
// and a function that releases it: the held lists itls and texts (either
// may be nil) or, when pass is not nil, the lists read again from the
// file. noText leaves the texts out; maxITL caps the gaps for the value
// checks (vals, at). vLLM's and SGLang's importers share it.
func RowSource(itls [][]float64, texts []string, pass *SecondPass, noText bool, vals *ingest.Values, at string, maxITL float64) (next func(i int) ([]float64, *string, error), done func(), err error) {
	if pass == nil {
		return func(i int) ([]float64, *string, error) {
			var gaps []float64
			var text *string
			if itls != nil {
				gaps = itls[i]
			}
			if texts != nil && !noText {
				text = &texts[i]
			}
			return gaps, text, nil
		}, func() {}, nil
	}
	textStream := pass.Texts
	if noText {
		textStream = nil
	}
	rs, err := OpenRows(pass.Path, pass.Shift, pass.Max, pass.ITLs, textStream)
	if err != nil {
		return nil, nil, err
	}
	return func(int) ([]float64, *string, error) { return rs.Next(vals, at, maxITL) }, rs.Close, nil
}
