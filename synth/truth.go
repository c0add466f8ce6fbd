package synth

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
)

// TruthHeader is truth.csv's header. One row per request, in start order:
//
//	request_key    0-based index, in start order (the importers' request_key)
//	start_ns       Unix ns
//	status         ok or error
//	output_tokens  N: tokens received (for ok requests, usage.completion_tokens)
//	ttft_ns        first token − start; empty when no token arrived
//	tpot_ns        (E2E − TTFT)/(N − 1) as a float64 in ns, shortest
//	               round-trip decimal (strconv 'g', -1); empty for N ≤ 1
//	e2e_ns         last token − start; empty when no token arrived
//	stream_end_ns  last message ([DONE], or the error) − start
var TruthHeader = []string{"request_key", "start_ns", "status", "output_tokens", "ttft_ns", "tpot_ns", "e2e_ns", "stream_end_ns"}

// Truth is one row of truth.csv.
type Truth struct {
	Key         int
	StartNs     int64
	Status      string
	N           int
	TTFTNs      int64   // -1: none
	TPOTNs      float64 // valid when HasTPOT
	HasTPOT     bool
	E2ENs       int64 // -1: none
	StreamEndNs int64
}

// TruthOf returns r's true values.
func TruthOf(r *Request) Truth {
	t := Truth{Key: r.Key, StartNs: r.StartNs, Status: r.Status, N: r.N(), TTFTNs: r.TTFTNs(), E2ENs: r.E2ENs(), StreamEndNs: r.EndNs}
	t.TPOTNs, t.HasTPOT = r.TPOTNs()
	return t
}

type truthWriter struct {
	w   *bufio.Writer
	buf []byte
}

func newTruthWriter(w io.Writer) *truthWriter {
	t := &truthWriter{w: bufio.NewWriter(w)}
	for i, h := range TruthHeader {
		if i > 0 {
			t.w.WriteByte(',')
		}
		t.w.WriteString(h)
	}
	t.w.WriteByte('\n')
	return t
}

func (t *truthWriter) write(r *Request) error {
	v := TruthOf(r)
	b := strconv.AppendInt(t.buf[:0], int64(v.Key), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, v.StartNs, 10)
	b = append(b, ',')
	b = append(b, v.Status...)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(v.N), 10)
	b = append(b, ',')
	if v.TTFTNs >= 0 {
		b = strconv.AppendInt(b, v.TTFTNs, 10)
	}
	b = append(b, ',')
	if v.HasTPOT {
		b = strconv.AppendFloat(b, v.TPOTNs, 'g', -1, 64)
	}
	b = append(b, ',')
	if v.E2ENs >= 0 {
		b = strconv.AppendInt(b, v.E2ENs, 10)
	}
	b = append(b, ',')
	b = strconv.AppendInt(b, v.StreamEndNs, 10)
	b = append(b, '\n')
	t.buf = b
	_, err := t.w.Write(b)
	return err
}

func (t *truthWriter) flush() error { return t.w.Flush() }

// ReadTruth reads a truth.csv written by this package.
func ReadTruth(r io.Reader) ([]Truth, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = len(TruthHeader)
	rows, err := cr.ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 || fmt.Sprint(rows[0]) != fmt.Sprint(TruthHeader) {
		return nil, fmt.Errorf("truth.csv: header is not %v", TruthHeader)
	}
	out := make([]Truth, 0, len(rows)-1)
	for i, row := range rows[1:] {
		var t Truth
		var errs [8]error
		var k, n int64
		k, errs[0] = strconv.ParseInt(row[0], 10, 64)
		t.StartNs, errs[1] = strconv.ParseInt(row[1], 10, 64)
		t.Status = row[2]
		n, errs[2] = strconv.ParseInt(row[3], 10, 64)
		t.TTFTNs, t.E2ENs = -1, -1
		if row[4] != "" {
			t.TTFTNs, errs[3] = strconv.ParseInt(row[4], 10, 64)
		}
		if row[5] != "" {
			t.TPOTNs, errs[4] = strconv.ParseFloat(row[5], 64)
			t.HasTPOT = true
		}
		if row[6] != "" {
			t.E2ENs, errs[5] = strconv.ParseInt(row[6], 10, 64)
		}
		t.StreamEndNs, errs[6] = strconv.ParseInt(row[7], 10, 64)
		for _, e := range errs {
			if e != nil {
				return nil, fmt.Errorf("truth.csv line %d: %w", i+2, e)
			}
		}
		t.Key, t.N = int(k), int(n)
		out = append(out, t)
	}
	return out, nil
}

// streamRun is the loop the streaming writers share: it draws m's
// requests in start order, writes head (nil: nothing), each request's
// bytes from rec, then tail (nil: nothing) to out through a 1 MiB buffer,
// and each request's truth to truth (nil: not written). Memory does not
// grow with the number of requests. rec's error (the writer's) ends the
// run.
func streamRun(out, truth io.Writer, m Model, head func(w *bufio.Writer), rec func(w *bufio.Writer, r *Request) error, tail func(w *bufio.Writer)) error {
	g, err := NewGenerator(m)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(out, 1<<20)
	var tw *truthWriter
	if truth != nil {
		tw = newTruthWriter(truth)
	}
	if head != nil {
		head(w)
	}
	for {
		r, ok := g.Next()
		if !ok {
			break
		}
		if err := rec(w, r); err != nil {
			return err
		}
		if tw != nil {
			if err := tw.write(r); err != nil {
				return err
			}
		}
	}
	if tail != nil {
		tail(w)
	}
	if tw != nil {
		if err := tw.flush(); err != nil {
			return err
		}
	}
	return w.Flush()
}

// streamJSONArray writes m's requests as a JSON array of rec's values, the
// way Python's json.dump(…, indent=…) frames a list: "[", values separated
// by ",", a newline before the closing "]" when the list is not empty.
// truth as in streamRun.
func streamJSONArray(out, truth io.Writer, m Model, rec func(r *Request) []byte) error {
	return streamRun(out, truth, m, func(w *bufio.Writer) { w.WriteByte('[') },
		func(w *bufio.Writer, r *Request) error {
			if r.Key > 0 {
				w.WriteByte(',')
			}
			_, err := w.Write(rec(r))
			return err
		}, func(w *bufio.Writer) {
			if m.Requests > 0 {
				w.WriteByte('\n')
			}
			w.WriteByte(']')
		})
}
