package synth

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
)

// WriteAIPerf writes m's requests as an AIPerf profile_export.jsonl (one
// record a line, AIPerf 0.8+ layout as in testdata/aiperf: "metadata" with
// request_start_ns/request_end_ns, "metrics" of {"value", "unit"}) and
// their true values to truth (nil: not written), streaming.
//
// Times are in ms as Python floats (shortest repr of ns/1e6), which carry
// every ns exactly: time_to_first_token, request_latency (the last content
// response, as AIPerf defines it), inter_chunk_latency (the gaps between
// consecutive tokens, omitted below two tokens as AIPerf does),
// time_to_second_token and inter_token_latency. Token counts
// (output_sequence_length, usage_completion_tokens, output_token_count)
// are N. A failed request has empty metrics and an "error" object (code
// 429 before any token, 502 mid-stream); AIPerf keeps no partial timings
// for it.
func WriteAIPerf(out, truth io.Writer, m Model) error {
	// Ids come from their own stream so that every format draws the same
	// requests from the same seed.
	ids := rand.New(rand.NewPCG(m.Seed, 0xa1))
	var b []byte
	return streamRun(out, truth, m, nil, func(w *bufio.Writer, r *Request) error {
		b = aiperfRecord(b[:0], r, m.ISL, ids)
		_, err := w.Write(b)
		return err
	}, nil)
}

// pyMs formats ns as milliseconds the way Python prints a float.
func pyMs(b []byte, ns int64) []byte { return pyFloat(b, float64(ns)/1e6) }

// pyFloat appends Python's repr of a float (shortest round-trip digits,
// always with a decimal point or exponent).
func pyFloat(b []byte, v float64) []byte {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	// Python switches to exponent notation below 1e-4 and from 1e16.
	if av := abs(v); av != 0 && (av < 1e-4 || av >= 1e16) {
		return append(b, s...)
	}
	s = strconv.FormatFloat(v, 'f', -1, 64)
	b = append(b, s...)
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			return b
		}
	}
	return append(b, ".0"...)
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

func metricF(b []byte, name string, ns int64) []byte {
	b = append(b, `"`+name+`":{"value":`...)
	b = pyMs(b, ns)
	return append(b, `,"unit":"ms"},`...)
}

func metricN(b []byte, name string, n int, unit string) []byte {
	b = append(b, `"`+name+`":{"value":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, `,"unit":"`+unit+`"},`...)
}

func aiperfRecord(b []byte, r *Request, isl int, rng *rand.Rand) []byte {
	id := func() string {
		u := rng.Uint64()
		v := rng.Uint64()
		return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", u>>32, u>>16&0xffff, u&0xfff, v>>48&0x3fff|0x8000, v&0xffffffffffff)
	}
	b = append(b, `{"metadata":{"session_num":`...)
	b = strconv.AppendInt(b, int64(r.Key), 10)
	b = append(b, `,"x_request_id":"`+id()+`","x_correlation_id":"`+id()+`","conversation_id":"`...)
	b = fmt.Appendf(b, "session_%06d", r.Key)
	b = append(b, `","turn_index":0,"credit_issued_ns":`...)
	b = strconv.AppendInt(b, r.StartNs-1_100, 10)
	b = append(b, `,"request_start_ns":`...)
	b = strconv.AppendInt(b, r.StartNs, 10)
	b = append(b, `,"request_ack_ns":`...)
	ack := r.EndNs
	if r.N() > 0 {
		ack = r.TokenNs[0] / 2
	}
	b = strconv.AppendInt(b, r.StartNs+ack, 10)
	b = append(b, `,"request_end_ns":`...)
	b = strconv.AppendInt(b, r.StartNs+r.EndNs, 10)
	b = fmt.Appendf(b, `,"worker_id":"worker_%08x","record_processor_id":"record_processor_%08x","benchmark_phase":"profiling","was_cancelled":false,"agent_depth":0},"metrics":{`,
		uint32(rng.Uint64()), uint32(rng.Uint64()))
	if r.Status != StatusOK {
		b = append(b, `},"error":`...)
		if r.fail == failBefore {
			b = append(b, `{"code":429,"type":"Too Many Requests","message":"Rate limit exceeded"}}`...)
		} else {
			b = append(b, `{"code":502,"type":"server_error","message":"upstream connection reset"}}`...)
		}
		return append(b, '\n')
	}
	n := r.N()
	b = metricN(b, "output_sequence_length", n, "tokens")
	b = metricF(b, "request_latency", r.E2ENs())
	b = metricN(b, "usage_completion_tokens", n, "tokens")
	b = metricN(b, "usage_prompt_tokens", isl, "tokens")
	b = metricN(b, "input_sequence_length", isl, "tokens")
	b = metricF(b, "time_to_first_token", r.TTFTNs())
	b = metricN(b, "output_token_count", n, "tokens")
	if n >= 2 {
		b = append(b, `"inter_chunk_latency":{"value":[`...)
		for i := 1; i < n; i++ {
			if i > 1 {
				b = append(b, ',')
			}
			b = pyMs(b, r.TokenNs[i]-r.TokenNs[i-1])
		}
		b = append(b, `],"unit":"ms"},`...)
		b = metricF(b, "time_to_second_token", r.TokenNs[1]-r.TokenNs[0])
		tpot, _ := r.TPOTNs()
		b = append(b, `"inter_token_latency":{"value":`...)
		b = pyFloat(b, tpot/1e6)
		b = append(b, `,"unit":"ms"},`...)
	}
	b = b[:len(b)-1] // the last comma
	return append(b, "}}\n"...)
}
