package synth

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
)

// WriteGuideLLM writes m's requests as a guidellm benchmarks.json in the
// v0.4+ layout with v0.5's metadata (vllm-project/guidellm v0.4.0
// schemas/request_stats.py, schemas/info.py, benchmark/schemas/generative;
// ingest/guidellm/testdata/v04-requests, guidellm-mlperf-metron.md 1.4):
// one line of json.dumps (separators ", " and ": "), {"metadata", "args",
// "benchmarks": [one generative_benchmark]} whose requests are grouped by
// status — "successful" (completed requests, in start order), "incomplete"
// (none), "errored" — each a generative_request_stats record with
// info.timings in epoch seconds (request_start, first/last_token_iteration,
// token_iterations, request_end, …), token counts and guidellm's
// per-request metrics (TTFT, v0.4's TPOT = (last − request start)/N,
// ITL = (last − first)/(N − 1), rates); and the true values to truth (nil:
// not written), in start order.
//
// guidellm keeps no per-token times and its times are float epoch seconds,
// whose resolution near 1.76e9 s is 2^-22 s ≈ 238 ns: offsets read back
// within ~240 ns of the truth. The benchmark's metrics hold only
// request_totals (guidellm's distribution summaries are not generated: a
// reader recomputes from the records). An errored request has
// "HTTPStatusError: … 429 …" and no token times (failed before its first
// token), or "ClientPayloadError: …" and the token times it got.
func WriteGuideLLM(out, truth io.Writer, m Model) error {
	// Pass 1: the counts and the time span the benchmark's header needs.
	g, err := NewGenerator(m)
	if err != nil {
		return err
	}
	var ok, errored int
	var firstNs, endNs int64 = -1, 0
	for {
		r, more := g.Next()
		if !more {
			break
		}
		if r.Status == StatusOK {
			ok++
		} else {
			errored++
		}
		if firstNs < 0 {
			firstNs = r.StartNs
		}
		endNs = max(endNs, r.StartNs+r.EndNs)
	}
	if firstNs < 0 {
		firstNs, endNs = m.StartNs, m.StartNs
	}
	w := bufio.NewWriterSize(out, 1<<20)
	sec := func(b []byte, ns int64) []byte { return pyFloat(b, float64(ns)/1e9) }
	strategy, profile, rate := fmt.Sprintf(`{"type_": "concurrent", "streams": %d}`, m.Concurrency), "concurrent", strconv.Itoa(m.Concurrency)+".0"
	profileObj := fmt.Sprintf(`{"type_": "concurrent", "completed_strategies": [], "streams": [%d]}`, m.Concurrency)
	if m.RateRPS > 0 {
		r := pyFloatString(m.RateRPS)
		strategy, profile, rate = `{"type_": "poisson", "rate": `+r+`, "random_seed": 42}`, "poisson", r
		profileObj = `{"type_": "poisson", "completed_strategies": [], "rate": [` + r + `]}`
	}
	var b []byte
	b = append(b, `{"metadata": {"version": 1, "guidellm_version": "0.5.0", "python_version": "3.12.3", "platform": "Linux-6.8.0-x86_64-with-glibc2.39"}, "args": {"target": "http://localhost:8000", "data": ["prompt_tokens=`...)
	b = strconv.AppendInt(b, int64(m.ISL), 10)
	b = append(b, `,output_tokens=`...)
	b = strconv.AppendInt(b, int64(m.OSLMedian), 10)
	b = append(b, `"], "profile": "`+profile+`", "rate": [`+rate+`], "backend": "openai_http", "backend_kwargs": null, "model": `...)
	b = jsonString(b, m.ModelName)
	b = append(b, `, "processor": `...)
	b = jsonString(b, m.ModelName)
	b = append(b, `, "random_seed": 42, "outputs": ["json"], "sample_requests": null, "warmup": null, "cooldown": null, "prefer_response_metrics": true, "max_seconds": null, "max_requests": `...)
	b = strconv.AppendInt(b, int64(m.Requests), 10)
	b = append(b, `}, "benchmarks": [{"type_": "generative_benchmark", "config": {"id_": "00000000-0000-4000-8000-00000000b001", "run_id": "00000000-0000-4000-8000-00000000b0bb", "run_index": 0, "strategy": `+strategy+
		`, "constraints": {"max_requests": {"max_num": `...)
	b = strconv.AppendInt(b, int64(m.Requests), 10)
	b = append(b, `}}, "sample_requests": null, "warmup": {"percent": null, "value": null, "mode": "prefer_duration"}, "cooldown": {"percent": null, "value": null, "mode": "prefer_duration"}, "prefer_response_metrics": true, "profile": `+profileObj+
		`, "requests": {"str": "DataLoader", "type": "DataLoader"}, "backend": {"target": "http://localhost:8000", "model": `...)
	b = jsonString(b, m.ModelName)
	b = append(b, `, "timeout": 60.0, "http2": true, "follow_redirects": true, "verify": false, "openai_paths": {"chat_completions": "v1/chat/completions"}, "validate_backend": true}, "environment": {"str": "NonDistributedEnvironment"}}, "scheduler_state": {"node_id": 0, "num_processes": 1, "start_time": `...)
	schedStart := firstNs - 100_000_000
	b = sec(b, schedStart)
	b = append(b, `, "end_time": `...)
	b = sec(b, endNs+50_000_000)
	b = append(b, `, "created_requests": `...)
	b = strconv.AppendInt(b, int64(m.Requests), 10)
	b = append(b, `, "processed_requests": `...)
	b = strconv.AppendInt(b, int64(m.Requests), 10)
	b = append(b, `}, "scheduler_metrics": {"start_time": `...)
	b = sec(b, schedStart)
	for _, kv := range []struct {
		k  string
		ns int64
	}{{"request_start_time", firstNs}, {"measure_start_time", firstNs}, {"measure_end_time", endNs}, {"request_end_time", endNs}, {"end_time", endNs + 50_000_000}} {
		b = append(b, `, "`+kv.k+`": `...)
		b = sec(b, kv.ns)
	}
	totals := fmt.Sprintf(`{"successful": %d, "incomplete": 0, "errored": %d, "total": %d}`, ok, errored, ok+errored)
	b = append(b, `, "requests_made": `+totals+`, "queued_time_avg": 0.0004, "resolve_start_delay_avg": 0.0001, "resolve_targeted_start_delay_avg": 0.0005, "request_start_delay_avg": 0.0001, "request_targeted_start_delay_avg": 0.0005, "request_time_avg": 0.0, "resolve_end_delay_avg": 0.0001, "resolve_time_avg": 0.0, "finalized_delay_avg": 0.0001, "processed_delay_avg": 0.0001}, "metrics": {"request_totals": `+totals+`}, "requests": {"successful": [`...)
	w.Write(b)

	// Pass 2: the records, successful ones written as they come, errored
	// ones kept (a few) until the successful list is closed.
	g, _ = NewGenerator(m)
	ids := rand.New(rand.NewPCG(m.Seed, 0x9d))
	var errs [][]byte
	n := 0
	for {
		r, more := g.Next()
		if !more {
			break
		}
		rec := guidellmRecord(nil, r, m, firstNs, ids)
		if r.Status != StatusOK {
			errs = append(errs, rec)
			continue
		}
		if n > 0 {
			w.WriteString(", ")
		}
		n++
		w.Write(rec)
	}
	w.WriteString(`], "incomplete": [], "errored": [`)
	for i, rec := range errs {
		if i > 0 {
			w.WriteString(", ")
		}
		w.Write(rec)
	}
	b = append(b[:0], `], "total": null}, "start_time": `...)
	b = sec(b, firstNs)
	b = append(b, `, "end_time": `...)
	b = sec(b, endNs)
	b = append(b, `, "duration": `...)
	b = pyFloat(b, float64(endNs)/1e9-float64(firstNs)/1e9)
	b = append(b, `, "warmup_duration": 0.0, "cooldown_duration": 0.0}]}`...)
	w.Write(b)
	if err := w.Flush(); err != nil {
		return err
	}
	return writeTruth(truth, m)
}

// guidellmRecord appends one generative_request_stats record.
func guidellmRecord(b []byte, r *Request, m Model, firstNs int64, ids *rand.Rand) []byte {
	sec := func(b []byte, ns int64) []byte { return pyFloat(b, float64(ns)/1e9) }
	secs := func(ns int64) float64 { return float64(ns) / 1e9 }
	u, v := ids.Uint64(), ids.Uint64()
	id := fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", u>>32, u>>16&0xffff, u&0xfff, v>>48&0x3fff|0x8000, v&0xffffffffffff)
	n := r.N()
	var text []byte
	words := 0
	for _, wd := range r.Words {
		text = append(text, vocab[wd]...)
		if vocab[wd][0] == ' ' {
			words++
		}
	}
	start, end := r.StartNs, r.StartNs+r.EndNs
	status := "completed"
	if r.Status != StatusOK {
		status = "errored"
	}
	b = append(b, `{"type_": "generative_request_stats", "request_id": "`+id+`", "request_type": "chat_completions", "request_args": "{'method': 'POST', 'stream': True, 'json_body': {'max_tokens': `...)
	b = strconv.AppendInt(b, int64(max(n, 1)), 10)
	b = append(b, `}}", "output": `...)
	if n > 0 {
		b = jsonString(b, string(text))
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `, "info": {"request_id": "`+id+`", "status": "`+status+`", "scheduler_node_id": 0, "scheduler_process_id": 0, "scheduler_start_time": `...)
	b = sec(b, firstNs-100_000_000)
	b = append(b, `, "timings": {"targeted_start": `...)
	b = sec(b, start-500_000)
	for _, kv := range []struct {
		k  string
		ns int64
	}{{"queued", start - 400_000}, {"dequeued", start - 300_000}, {"scheduled_at", start - 200_000}, {"resolve_start", start - 100_000}, {"request_start", start}} {
		b = append(b, `, "`+kv.k+`": `...)
		b = sec(b, kv.ns)
	}
	tok := func(key string, ns int64) {
		b = append(b, `, "`+key+`": `...)
		if n == 0 {
			b = append(b, "null"...)
		} else {
			b = sec(b, start+ns)
		}
	}
	tok("first_request_iteration", r.TTFTNs())
	tok("first_token_iteration", r.TTFTNs())
	tok("last_token_iteration", r.E2ENs())
	tok("last_request_iteration", r.E2ENs())
	iters := 0
	if n > 0 {
		iters = n + 2 // role chunk and finish chunk besides the tokens
	}
	b = append(b, `, "request_iterations": `...)
	b = strconv.AppendInt(b, int64(iters), 10)
	b = append(b, `, "token_iterations": `...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, `, "request_end": `...)
	b = sec(b, end)
	b = append(b, `, "resolve_end": `...)
	b = sec(b, end+100_000)
	b = append(b, `, "finalized": `...)
	b = sec(b, end+200_000)
	b = append(b, `}, "error": `...)
	switch {
	case r.fail == failBefore:
		b = append(b, `"HTTPStatusError: Client error '429 Too Many Requests' for url 'http://localhost:8000/v1/chat/completions'"`...)
	case r.fail == failMidway:
		b = append(b, `"ClientPayloadError: Response payload is not completed"`...)
	default:
		b = append(b, "null"...)
	}
	b = append(b, `, "started_at": `...)
	b = sec(b, start)
	b = append(b, `, "completed_at": `...)
	b = sec(b, end)
	isl := int64(m.ISL)
	b = append(b, `}, "input_metrics": {"text_tokens": `...)
	b = strconv.AppendInt(b, isl, 10)
	b = append(b, `, "text_words": `...)
	b = strconv.AppendInt(b, isl, 10)
	b = append(b, `, "text_characters": `...)
	b = strconv.AppendInt(b, int64(promptChars(m.ISL)), 10)
	b = append(b, `, "image_tokens": null, "image_count": null, "image_pixels": null, "image_bytes": null, "video_tokens": null, "video_frames": null, "video_seconds": null, "video_bytes": null, "audio_tokens": null, "audio_samples": null, "audio_seconds": null, "audio_bytes": null, "total_tokens": `...)
	b = strconv.AppendInt(b, isl, 10)
	ok := r.Status == StatusOK
	num := func(v int) {
		if ok {
			b = strconv.AppendInt(b, int64(v), 10)
		} else {
			b = append(b, "null"...)
		}
	}
	b = append(b, `}, "output_metrics": {"text_tokens": `...)
	num(n)
	b = append(b, `, "text_words": `...)
	num(words)
	b = append(b, `, "text_characters": `...)
	num(len(text))
	b = append(b, `, "image_tokens": null, "image_count": null, "image_pixels": null, "image_bytes": null, "video_tokens": null, "video_frames": null, "video_seconds": null, "video_bytes": null, "audio_tokens": null, "audio_samples": null, "audio_seconds": null, "audio_bytes": null, "total_tokens": `...)
	num(n)
	latS := secs(end) - secs(start)
	b = append(b, `}, "request_start_time": `...)
	b = sec(b, start)
	b = append(b, `, "request_end_time": `...)
	b = sec(b, end)
	b = append(b, `, "request_latency": `...)
	b = pyFloat(b, latS)
	b = append(b, `, "prompt_tokens": `...)
	b = strconv.AppendInt(b, isl, 10)
	b = append(b, `, "input_tokens": `...)
	b = strconv.AppendInt(b, isl, 10)
	b = append(b, `, "output_tokens": `...)
	num(n)
	b = append(b, `, "total_tokens": `...)
	if ok {
		b = strconv.AppendInt(b, isl+int64(n), 10)
	} else {
		b = strconv.AppendInt(b, isl, 10)
	}
	optF := func(key string, v float64, has bool) {
		b = append(b, `, "`+key+`": `...)
		if has {
			b = pyFloat(b, v)
		} else {
			b = append(b, "null"...)
		}
	}
	first, last := secs(start+r.TTFTNs()), secs(start+r.E2ENs())
	st := secs(start)
	optF("time_to_first_token_ms", (first-st)*1000, n > 0)
	optF("time_per_output_token_ms", (last-st)*1000/float64(n), ok && n > 0)
	optF("inter_token_latency_ms", (last-first)*1000/float64(n-1), ok && n > 1)
	tot := float64(isl)
	if ok {
		tot += float64(n)
	}
	optF("tokens_per_second", tot/latS, latS > 0)
	optF("output_tokens_per_second", float64(n)/latS, ok && latS > 0)
	optF("iter_tokens_per_iteration", 1, ok && n > 0)
	optF("output_tokens_per_iteration", 1, ok && n > 0)
	return append(b, '}')
}

// promptChars is the length of the prompt payloadHead writes: ISL words of
// the vocabulary.
func promptChars(isl int) int {
	n := 0
	for i := 0; i < isl; i++ {
		n += len(vocab[i%len(vocab)])
	}
	return n
}
