package serverlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// jsonObject dispatches one JSON object (a JSONL line, an SSE data
// payload, or a whole-file body) on its keys.
func (s *textState) jsonObject(where string, obj map[string]json.RawMessage) {
	has := func(k string) bool { _, ok := obj[k]; return ok }
	str := func(k string) string {
		var v string
		_ = json.Unmarshal(obj[k], &v)
		return v
	}
	switch {
	case has("resourceSpans") || has("resource_spans"):
		raw := obj["resourceSpans"]
		if raw == nil {
			raw = obj["resource_spans"]
		}
		s.otlp(where, raw)
	case has("latency_ms") && (has("ts") || has("ts_epoch")) && (has("ttft_ms") || has("completion_tokens")):
		s.proxyRecord(where, obj)
	case has("function") && has("level") && has("timestamp") && (has("msg") || has("message")) && !has("target"):
		s.llamaJSON(where, obj)
	case str("message") == "Success" && strings.HasPrefix(str("target"), "text_generation_router"):
		s.tgiJSON(where, obj)
	case strings.HasPrefix(str("event"), "request."):
		s.sglangJSON(where, obj)
	case has("request_parameters"):
		s.sglangExport(where, obj)
	case has("timings"):
		s.llamaTimings(where, obj)
	case has("metrics") && bytes.Contains(obj["metrics"], []byte("time_to_first_token_ms")):
		s.vllmMetrics(where, obj)
	case has("done") && has("total_duration"):
		s.ollamaFinal(where, obj)
	case has("choices") || str("object") == "chat.completion.chunk" || str("object") == "text_completion" || has("created_at") && has("done"):
		s.counts["response_without_timing"]++
	case has("timestamp") && has("level") && has("target"):
		s.counts["json_log_context"]++
	default:
		s.unknownLine(lineOf(where))
	}
}

// proxyRecord handles a logging proxy's per-request record (one JSON line
// per request: ts/ts_epoch when the proxy received the request, ttft_ms,
// latency_ms, usage token counts, the completion id, the upstream HTTP
// status; anud18/qwen36-vllm-aiperf-benchmark docs/TRACING.md).
func (s *textState) proxyRecord(where string, obj map[string]json.RawMessage) {
	r := &record{kind: KindProxyLog, where: where, clock: formats.ClockUnix}
	if ts := strOf(obj["ts"]); ts != "" {
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			r.arrival = ingest.Ptr(t.UnixNano())
		}
	}
	if r.arrival == nil && len(obj["ts_epoch"]) > 0 && string(obj["ts_epoch"]) != "null" {
		r.arrival = epochSecNs(strings.Trim(string(obj["ts_epoch"]), `"`))
	}
	r.ttft = r.ms("ttft_ms", numV(obj["ttft_ms"]))
	r.e2e = r.ms("latency_ms", numV(obj["latency_ms"]))
	r.in, r.out = intp(obj["prompt_tokens"]), intp(obj["completion_tokens"])
	if r.id = strOf(obj["response_id"]); r.id == "" {
		r.id = strOf(obj["request_id"])
	}
	if code := intp(obj["status"]); code != nil && *code >= 400 {
		r.status, r.errCode = "error", code
	}
	s.add(r)
}

// llamaJSON handles a line of llama.cpp's JSON server log (2024
// llama-server --log-format json: tid, timestamp, level, function, line,
// msg and the call's extra keys; late-2023 builds wrote "message" and no
// tid): print_timings lines are the timing block of the text format's
// "INFO [print_timings] … | key=value" (llamaLegacy); other lines are
// context without per-request timing.
func (s *textState) llamaJSON(where string, obj map[string]json.RawMessage) {
	if strOf(obj["function"]) != "print_timings" {
		s.counts["llamacpp_context"]++
		return
	}
	kv := make(map[string]string, len(obj))
	for k, v := range obj {
		if t := strOf(v); t != "" {
			kv[k] = t
		} else {
			kv[k] = string(v)
		}
	}
	s.llamaLegacyKV(lineOf(where), kv)
}

// sseLine handles an SSE "data:" payload.
func (s *textState) sseLine(n int, payload string) {
	if payload == "[DONE]" {
		s.counts["sse_done"]++
		return
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(payload), &obj); err != nil {
		s.counts["sse_other"]++
		return
	}
	s.inRecord, s.open = true, false
	s.jsonObject(fmt.Sprintf("line %d", n), obj)
}

// num reads a number (or a numeric string); NaN when raw is missing, null
// or anything else — never a 0 for a null.
func num(raw json.RawMessage) float64 {
	if len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return math.NaN()
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err == nil {
		return f
	}
	var str string
	if err := json.Unmarshal(raw, &str); err == nil {
		return atof(str)
	}
	return math.NaN()
}

// intp reads an integer (a JSON number or a decimal string, as OTLP/JSON
// writes int64s) exactly; a float is rounded.
func intp(raw json.RawMessage) *int64 {
	if t := strings.Trim(string(raw), `"`); t != "" {
		if v, err := strconv.ParseInt(t, 10, 64); err == nil {
			return &v
		}
	}
	f := num(raw)
	if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 9e18 {
		return nil
	}
	return ingest.Ptr(int64(math.Round(f)))
}

func strOf(raw json.RawMessage) string {
	var v string
	if json.Unmarshal(raw, &v) == nil {
		return v
	}
	return ""
}

// tgiJSON handles a TGI --json-output Success event: the route span's
// fields are under "span" (current span) and "spans" (outermost first).
func (s *textState) tgiJSON(where string, obj map[string]json.RawMessage) {
	fields := map[string]string{}
	var spans []map[string]any
	_ = json.Unmarshal(obj["spans"], &spans)
	var span map[string]any
	if json.Unmarshal(obj["span"], &span) == nil && span != nil {
		spans = append(spans, span)
	}
	r := &record{kind: KindTGISuccess, where: where, clock: "unix"}
	for _, sp := range spans {
		for k, v := range sp {
			if sv, ok := v.(string); ok {
				fields[k] = sv
				if k == "trace_id" {
					r.traceID = sv
				}
			}
		}
	}
	var ts *int64
	if t, err := time.Parse(time.RFC3339Nano, strOf(obj["timestamp"])); err == nil {
		ts = ingest.Ptr(t.UnixNano())
	}
	s.tgiFields(r, fields, ts)
	s.add(r)
}

// sglangJSON handles a --log-requests-format json line.
func (s *textState) sglangJSON(where string, obj map[string]json.RawMessage) {
	if strOf(obj["event"]) != "request.finished" {
		s.counts["sglang_receive"]++
		return
	}
	r := &record{kind: KindSGLangFinish, where: where, clock: "unix", id: strOf(obj["rid"])}
	var o map[string]json.RawMessage
	if json.Unmarshal(obj["obj"], &o) == nil {
		if r.id == "" {
			r.id = strOf(o["rid"])
		}
		if len(o["received_time"]) > 0 && string(o["received_time"]) != "null" {
			r.arrival = epochSecNs(strings.Trim(string(o["received_time"]), `"`))
		}
	}
	var out struct {
		Meta map[string]json.RawMessage `json:"meta_info"`
	}
	if json.Unmarshal(obj["out"], &out) == nil && out.Meta != nil {
		sglangMeta(r, out.Meta)
	}
	s.add(r)
}

// sglangMeta fills r from an SGLang meta_info object.
func sglangMeta(r *record, m map[string]json.RawMessage) {
	if r.id == "" {
		r.id = strOf(m["id"])
	}
	if v := numV(m["e2e_latency"]); v.ok {
		r.e2e = r.sec("e2e_latency", v)
	}
	if v := numV(m["queue_time"]); v.ok {
		r.queue = r.sec("queue_time", v)
	}
	if v := numV(m["prefill_latency"]); v.ok {
		r.prefill = r.sec("prefill_latency", v)
	}
	r.in = intp(m["prompt_tokens"])
	r.out = intp(m["completion_tokens"])
	var fr struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(m["finish_reason"], &fr) == nil {
		r.finish = fr.Type
	} else {
		r.finish = strOf(m["finish_reason"]) // a plain string
	}
	if r.finish == "abort" {
		r.status = formats.StatusError
		r.errText = "finish_reason: abort"
	}
}

// sglangExport handles one line of sglang-request-metrics-*.log
// (FileRequestMetricsExporter): meta_info keys at top level and the request
// as a JSON-encoded string.
func (s *textState) sglangExport(where string, obj map[string]json.RawMessage) {
	r := &record{kind: KindSGLangExport, where: where, clock: "unix"}
	var params map[string]json.RawMessage
	if p := strOf(obj["request_parameters"]); p != "" {
		_ = json.Unmarshal([]byte(p), &params)
	}
	if params != nil {
		r.id = strOf(params["rid"])
		if len(params["received_time"]) > 0 && string(params["received_time"]) != "null" {
			r.arrival = epochSecNs(strings.Trim(string(params["received_time"]), `"`))
		}
	}
	sglangMeta(r, obj)
	s.add(r)
}

// llamaTimings handles a llama.cpp response (non-stream body, or the final
// SSE chunk) carrying a "timings" object.
func (s *textState) llamaTimings(where string, obj map[string]json.RawMessage) {
	var t map[string]json.RawMessage
	if json.Unmarshal(obj["timings"], &t) != nil || t == nil {
		s.counts["response_without_timing"]++
		return
	}
	r := &record{kind: KindLlamaCppTimings, where: where, id: strOf(obj["id"])}
	r.prefill = r.ms("prompt_ms", numV(t["prompt_ms"]))
	r.decode = r.ms("predicted_ms", numV(t["predicted_ms"]))
	r.inference = add(r.prefill, r.decode)
	r.tpt = r.ms("predicted_per_token_ms", numV(t["predicted_per_token_ms"]))
	pn, cn := intp(t["prompt_n"]), intp(t["cache_n"])
	if pn != nil {
		if cn != nil {
			r.in = ingest.Ptr(*pn + *cn)
		} else {
			r.in = pn
		}
	}
	r.out = intp(t["predicted_n"])
	// native /completion: stop_type ("eos", "limit", "word"); OpenAI-compatible
	// routes: the choice's finish_reason
	if r.finish = strOf(obj["stop_type"]); r.finish == "" || r.finish == "none" {
		r.finish = choiceFinish(obj)
	}
	s.add(r)
}

// choiceFinish returns the first non-empty choices[].finish_reason of an
// OpenAI-style response or chunk; "" when none.
func choiceFinish(obj map[string]json.RawMessage) string {
	var cs []struct {
		FinishReason string `json:"finish_reason"`
	}
	_ = json.Unmarshal(obj["choices"], &cs)
	for _, c := range cs {
		if c.FinishReason != "" {
			return c.FinishReason
		}
	}
	return ""
}

// vllmMetrics handles a vLLM response (body or usage chunk) with the
// --enable-per-request-metrics "metrics" object.
func (s *textState) vllmMetrics(where string, obj map[string]json.RawMessage) {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj["metrics"], &m) != nil || m == nil {
		s.counts["response_without_timing"]++
		return
	}
	r := &record{kind: KindVLLMMetrics, where: where, id: strOf(obj["id"])}
	r.queue = r.ms("queue_time_ms", numV(m["queue_time_ms"]))
	// time_to_first_token_ms starts at scheduling: it is the prefill part
	r.prefill = r.ms("time_to_first_token_ms", numV(m["time_to_first_token_ms"]))
	r.decode = r.ms("generation_time_ms", numV(m["generation_time_ms"]))
	r.inference = add(r.prefill, r.decode)
	r.tpt = r.ms("mean_itl_ms", numV(m["mean_itl_ms"]))
	r.finish = choiceFinish(obj)
	var u struct {
		P *int64 `json:"prompt_tokens"`
		C *int64 `json:"completion_tokens"`
	}
	if json.Unmarshal(obj["usage"], &u) == nil {
		r.in, r.out = u.P, u.C
	}
	s.add(r)
}

// ollamaFinal handles the final chunk (done: true) of /api/generate or
// /api/chat, or a non-stream body.
func (s *textState) ollamaFinal(where string, obj map[string]json.RawMessage) {
	var done bool
	_ = json.Unmarshal(obj["done"], &done)
	if !done {
		s.counts["response_without_timing"]++
		return
	}
	r := &record{kind: KindOllamaFinal, where: where, clock: "unix"}
	r.e2e = intp(obj["total_duration"])
	r.prefill = intp(obj["prompt_eval_duration"])
	r.decode = intp(obj["eval_duration"])
	r.inference = add(r.prefill, r.decode)
	r.in = intp(obj["prompt_eval_count"])
	r.out = intp(obj["eval_count"])
	if r.decode != nil && r.out != nil && *r.out > 0 {
		r.tpt = ingest.Ptr(*r.decode / *r.out)
	}
	if t, err := time.Parse(time.RFC3339Nano, strOf(obj["created_at"])); err == nil && r.e2e != nil {
		// created_at is stamped at the end of generation
		r.arrival = ingest.Ptr(t.UnixNano() - *r.e2e)
	}
	r.finish = strOf(obj["done_reason"])
	if r.finish == "error" {
		r.status = formats.StatusError
	}
	s.add(r)
}

// ---- OTLP/JSON ----

type otlpValue struct {
	StringValue *string         `json:"stringValue"`
	IntValue    json.RawMessage `json:"intValue"`
	DoubleValue json.RawMessage `json:"doubleValue"`
	BoolValue   *bool           `json:"boolValue"`
	ArrayValue  *struct {
		Values []otlpValue `json:"values"`
	} `json:"arrayValue"`
}

type otlpAttr struct {
	Key   string    `json:"key"`
	Value otlpValue `json:"value"`
}

type otlpSpan struct {
	TraceID      string          `json:"traceId"`
	SpanID       string          `json:"spanId"`
	ParentSpanID string          `json:"parentSpanId"`
	Name         string          `json:"name"`
	Kind         json.RawMessage `json:"kind"`
	Start        json.RawMessage `json:"startTimeUnixNano"`
	End          json.RawMessage `json:"endTimeUnixNano"`
	Attributes   []otlpAttr      `json:"attributes"`
	Events       []struct {
		Time json.RawMessage `json:"timeUnixNano"`
		Name string          `json:"name"`
	} `json:"events"`
	Status struct {
		Code    json.RawMessage `json:"code"`
		Message string          `json:"message"`
	} `json:"status"`
}

type otlpScopeSpans struct {
	Scope struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"scope"`
	Spans []otlpSpan `json:"spans"`
}

type otlpResourceSpans struct {
	Resource struct {
		Attributes []otlpAttr `json:"attributes"`
	} `json:"resource"`
	ScopeSpans []otlpScopeSpans `json:"scopeSpans"`
	// OTLP/JSON before 0.15 named them instrumentationLibrarySpans
	ILSpans []otlpScopeSpans `json:"instrumentationLibrarySpans"`
}

// attrs flattens attributes to Go values: string, float64, bool, []any.
func attrs(list []otlpAttr) map[string]any {
	m := make(map[string]any, len(list))
	for _, a := range list {
		m[a.Key] = a.Value.goValue()
	}
	return m
}

func (v otlpValue) goValue() any {
	switch {
	case v.StringValue != nil:
		return *v.StringValue
	case len(v.IntValue) > 0:
		return num(v.IntValue)
	case len(v.DoubleValue) > 0:
		return num(v.DoubleValue)
	case v.BoolValue != nil:
		return *v.BoolValue
	case v.ArrayValue != nil:
		out := make([]any, len(v.ArrayValue.Values))
		for i, x := range v.ArrayValue.Values {
			out[i] = x.goValue()
		}
		return out
	}
	return nil
}

// attrV reads attribute k as a number (a float attribute, NaN included,
// or a string holding one); not ok when absent or of another type.
func attrV(m map[string]any, k string) val {
	switch v := m[k].(type) {
	case float64:
		return val{v, true}
	case string:
		return atofV(v)
	}
	return val{}
}

func attrF(m map[string]any, k string) float64 {
	switch v := m[k].(type) {
	case float64:
		return v
	case string:
		return atof(v)
	}
	return math.NaN()
}

func attrI(m map[string]any, ks ...string) *int64 {
	for _, k := range ks {
		if f := attrF(m, k); !math.IsNaN(f) && math.Abs(f) < 9e18 {
			return ingest.Ptr(int64(math.Round(f)))
		}
	}
	return nil
}

func attrS(m map[string]any, ks ...string) string {
	for _, k := range ks {
		if v, ok := m[k].(string); ok && v != "" {
			return v
		}
	}
	return ""
}

// finishReasons reads gen_ai.response.finish_reasons: an array value, or a
// string holding a JSON list (vLLM).
func finishReasons(m map[string]any) []string {
	var out []string
	switch v := m["gen_ai.response.finish_reasons"].(type) {
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	case string:
		if json.Unmarshal([]byte(v), &out) != nil {
			out = []string{v}
		}
	}
	return out
}

// spanKind returns 2 (SERVER), 3 (CLIENT) … from a number or an enum name.
func spanKind(raw json.RawMessage) int {
	if f := num(raw); !math.IsNaN(f) {
		return int(f)
	}
	switch strOf(raw) {
	case "SPAN_KIND_INTERNAL":
		return 1
	case "SPAN_KIND_SERVER":
		return 2
	case "SPAN_KIND_CLIENT":
		return 3
	}
	return 0
}

// clientReq is a request from a client-side gen_ai span (OpenLLMetry
// openai.chat and the like), with its chunk events.
type clientReq struct {
	req    formats.Request
	events []formats.Event
	scope  string
}

// otlp handles one OTLP/JSON export (resourceSpans).
func (s *textState) otlp(where string, raw json.RawMessage) {
	var rss []otlpResourceSpans
	if err := json.Unmarshal(raw, &rss); err != nil {
		s.notes = append(s.notes, fmt.Sprintf("%s: resourceSpans is not an OTLP/JSON list: %v", where, err))
		s.unknownLine(lineOf(where))
		return
	}
	for _, rs := range rss {
		res := attrs(rs.Resource.Attributes)
		for _, ss := range append(rs.ScopeSpans, rs.ILSpans...) {
			for i := range ss.Spans {
				s.span(where, res, ss.Scope.Name, ss.Scope.Version, &ss.Spans[i])
			}
		}
	}
}

func (s *textState) span(where string, res map[string]any, scope, scopeVersion string, sp *otlpSpan) {
	a := attrs(sp.Attributes)
	isGenAI := false
	hasLatency := false
	for k := range a {
		if strings.HasPrefix(k, "gen_ai.") {
			isGenAI = true
		}
		if strings.HasPrefix(k, "gen_ai.latency.") {
			hasLatency = true
		}
	}
	kind := spanKind(sp.Kind)
	start, end := intp(sp.Start), intp(sp.End)
	s.spanN++
	loc := fmt.Sprintf("%s span %d", where, s.spanN)
	switch {
	case sp.Name == "llm_request" || hasLatency || (kind == 2 && isGenAI):
		r := &record{where: loc, clock: "unix", traceID: strings.ToLower(sp.TraceID), arrival: start}
		svc := attrS(res, "service.name")
		switch {
		case strings.HasPrefix(scope, "vllm") || res["vllm.instrumenting_module_name"] != nil || (sp.Name == "llm_request" && !strings.Contains(svc, "sglang")):
			r.kind = KindVLLMSpan
		case strings.Contains(scope, "sglang") || strings.Contains(svc, "sglang"):
			r.kind = KindSGLangSpan
		default:
			r.kind = KindOTLPGenAI
		}
		r.id = attrS(a, "gen_ai.request.id", "gen_ai.response.id")
		r.ttft = r.sec("gen_ai.latency.time_to_first_token", attrV(a, "gen_ai.latency.time_to_first_token"))
		r.e2e = r.sec("gen_ai.latency.e2e", attrV(a, "gen_ai.latency.e2e"))
		if r.e2e == nil {
			r.e2e = sub(end, start)
		}
		r.queue = r.sec("gen_ai.latency.time_in_queue", attrV(a, "gen_ai.latency.time_in_queue"))
		r.prefill = r.sec("gen_ai.latency.time_in_model_prefill", attrV(a, "gen_ai.latency.time_in_model_prefill"))
		r.decode = r.sec("gen_ai.latency.time_in_model_decode", attrV(a, "gen_ai.latency.time_in_model_decode"))
		r.inference = r.sec("gen_ai.latency.time_in_model_inference", attrV(a, "gen_ai.latency.time_in_model_inference"))
		r.in = attrI(a, "gen_ai.usage.prompt_tokens", "gen_ai.usage.input_tokens")
		r.out = attrI(a, "gen_ai.usage.completion_tokens", "gen_ai.usage.output_tokens")
		r.maxTokens = attrI(a, "gen_ai.request.max_tokens")
		for i, f := range finishReasons(a) {
			if i == 0 {
				r.finish = f
			}
			if f == "abort" || f == "error" {
				r.status = formats.StatusError
				r.errText = "finish_reason: " + f
			}
		}
		r.events = spanEvents(start, r.ttft, r.queue, r.prefill, r.decode, sp)
		if spanKind(sp.Status.Code) == 2 {
			r.status = formats.StatusError
			r.errText = sp.Status.Message
		}
		s.add(r)
	case isGenAI && (kind == 3 || kind == 0 && attrS(a, "gen_ai.operation.name") != ""):
		s.clientSpan(loc, scope, scopeVersion, sp, a, start, end)
	default:
		s.counts["otlp_other_span"]++
	}
}

// spanEvents returns a server span's timestamps (unix ns): arrival (the
// span start), the phase boundaries its gen_ai.latency.* attributes imply,
// and its OTLP span events by name. vLLM's do_tracing
// (vllm/v1/engine/output_processor.py) measures time_to_first_token on the
// frontend's wall clock from arrival, and queue, prefill and decode on the
// engine core's monotonic clock; the engine intervals are placed around the
// frontend's first token: first_token = arrival + ttft, scheduled =
// first_token − prefill, queued = scheduled − queue, last_token =
// first_token + decode. They are exact within each clock; the engine-side
// boundaries are late by the engine → frontend delay (output IPC and
// detokenization, typically under a millisecond), which can put queued
// before arrival by that much (not clamped). A boundary whose attributes
// are missing is left out.
func spanEvents(start, ttft, queue, prefill, decode *int64, sp *otlpSpan) []srvEvent {
	if start == nil {
		return nil
	}
	ev := []srvEvent{{"arrival", *start}}
	if ttft != nil {
		ft := *start + *ttft
		if prefill != nil {
			sched := ft - *prefill
			if queue != nil {
				ev = append(ev, srvEvent{"queued", sched - *queue})
			}
			ev = append(ev, srvEvent{"scheduled", sched})
		}
		ev = append(ev, srvEvent{"first_token", ft})
		if decode != nil {
			ev = append(ev, srvEvent{"last_token", ft + *decode})
		}
	}
	for _, e := range sp.Events {
		if t := intp(e.Time); t != nil {
			ev = append(ev, srvEvent{e.Name, *t})
		}
	}
	return ev
}

// clientSpan turns a client-side gen_ai span into a client request: start =
// span start (unix ns), events = its gen_ai.content.completion.chunk events
// (streaming) or one whole-body event at the span's end.
func (s *textState) clientSpan(loc, scope, version string, sp *otlpSpan, a map[string]any, start, end *int64) {
	q := formats.Request{RunID: "", RequestKey: int64(len(s.clients)), SourceID: strings.ToLower(sp.SpanID),
		ResponseID: attrS(a, "gen_ai.response.id"), TraceID: strings.ToLower(sp.TraceID), StartNs: start}
	if start != nil {
		q.ClockDomain = formats.ClockUnix
	}
	if v := attrI(a, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"); v != nil {
		q.InputTokens, q.InputTokensSource = v, formats.SourceServerUsage
	}
	if v := attrI(a, "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"); v != nil {
		q.OutputTokens, q.OutputTokensSource = v, formats.SourceServerUsage
	}
	q.MaxTokens = attrI(a, "gen_ai.request.max_tokens")
	fr := ""
	if f := finishReasons(a); len(f) > 0 {
		fr = f[0]
	}
	var ev []formats.Event
	for _, e := range sp.Events {
		t := intp(e.Time)
		if t == nil || start == nil || !strings.Contains(e.Name, "chunk") {
			continue
		}
		ev = append(ev, formats.Event{Index: int32(len(ev)), ReadIndex: int32(len(ev)), OffsetNs: *t - *start, Kind: formats.KindContent, HasChoices: true})
	}
	if len(ev) == 0 && start != nil && end != nil {
		ev = append(ev, formats.Event{OffsetNs: *end - *start, Kind: formats.KindContent, HasChoices: true})
	}
	if len(ev) > 0 {
		ev[len(ev)-1].FinishReason = fr
	}
	if end != nil && start != nil {
		q.StreamEndOffsetNs = ingest.Ptr(*end - *start)
	}
	if spanKind(sp.Status.Code) == 2 {
		q.Status, q.ErrorText, q.ErrorType = formats.StatusError, sp.Status.Message, "span_status"
	}
	formats.FillFromEvents(&q, ev)
	s.clients = append(s.clients, clientReq{req: q, events: ev, scope: strings.TrimSpace(scope + " " + version)})
}

// ---- Triton trace file ----

type tritonElem struct {
	ID         json.RawMessage `json:"id"`
	ModelName  string          `json:"model_name"`
	RequestID  json.RawMessage `json:"request_id"`
	ParentID   json.RawMessage `json:"parent_id"`
	Timestamps []struct {
		Name string          `json:"name"`
		NS   json.RawMessage `json:"ns"`
	} `json:"timestamps"`
}

type tritonTrace struct {
	first  int
	reqID  string
	child  bool
	model  string
	events map[string][]int64
	seq    []srvEvent // every timestamp in file order
}

// tritonName is the Triton 2.x name of a trace timestamp. TensorRT
// Inference Server 1.x (2019, docs/trace.rst) wrote lower-case names with
// spaces — "http recv start", "grpc wait/read start", "request handler
// start", "queue start", "compute start", "compute input end", "compute
// output start", "compute end", "request handler end", "http send end" —
// where Triton 2.x writes HTTP_RECV_START, GRPC_WAITREAD_START,
// REQUEST_START, …; names already in the 2.x form are kept.
func tritonName(name string) string {
	n := strings.ToUpper(strings.NewReplacer(" ", "_", "/", "").Replace(strings.TrimSpace(name)))
	switch n {
	case "REQUEST_HANDLER_START":
		return "REQUEST_START"
	case "REQUEST_HANDLER_END":
		return "REQUEST_END"
	}
	return n
}

// triton reads a trace file (a JSON array of fragments sharing a trace id);
// a file cut mid-array yields its complete fragments.
func (s *textState) triton(data []byte) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		s.unknownLine(1)
		return
	}
	traces := map[string]*tritonTrace{}
	var order []string
	n := 0
	for dec.More() {
		var e tritonElem
		if err := dec.Decode(&e); err != nil {
			s.cut = fmt.Sprintf("the trace array is cut or malformed after element %d: %v", n, err)
			break
		}
		n++
		id := string(bytes.Trim(e.ID, `"`))
		t := traces[id]
		if t == nil {
			t = &tritonTrace{first: n, events: map[string][]int64{}}
			traces[id] = t
			order = append(order, id)
		}
		if len(e.RequestID) > 0 {
			t.reqID = string(bytes.Trim(e.RequestID, `"`))
		}
		if p := string(bytes.Trim(e.ParentID, `"`)); p != "" && p != "0" && p != "null" {
			t.child = true
		}
		if e.ModelName != "" {
			t.model = e.ModelName
		}
		for _, ts := range e.Timestamps {
			if v := intp(ts.NS); v != nil {
				name := tritonName(ts.Name)
				t.events[name] = append(t.events[name], *v)
				t.seq = append(t.seq, srvEvent{ts.Name, *v})
			}
		}
	}
	if s.cut == "" {
		if _, err := dec.Token(); err != nil && !errors.Is(err, io.EOF) {
			s.cut = "the trace array has no closing ']' (the file was still being written or was cut)"
		} else if err != nil {
			s.cut = "the trace array has no closing ']' (the file was still being written or was cut)"
		}
	}
	children := 0
	for _, id := range order {
		t := traces[id]
		if t.child {
			children++
			continue
		}
		first := func(names ...string) *int64 {
			for _, nm := range names {
				if v := t.events[nm]; len(v) > 0 {
					m := v[0]
					for _, x := range v {
						m = min(m, x)
					}
					return &m
				}
			}
			return nil
		}
		last := func(names ...string) *int64 {
			for _, nm := range names {
				if v := t.events[nm]; len(v) > 0 {
					m := v[0]
					for _, x := range v {
						m = max(m, x)
					}
					return &m
				}
			}
			return nil
		}
		r := &record{kind: KindTriton, where: "trace id " + id, id: t.reqID, clock: formats.ClockMonotonic}
		r.arrival = first("HTTP_RECV_START", "GRPC_WAITREAD_START", "REQUEST_START")
		cs := first("COMPUTE_START")
		r.queue = sub(cs, first("QUEUE_START"))
		r.inference = sub(last("COMPUTE_END"), cs)
		fr := first("INFER_RESPONSE_COMPLETE")
		r.ttft = sub(fr, r.arrival)
		r.prefill = sub(fr, cs)
		if len(t.events["INFER_RESPONSE_COMPLETE"]) > 1 {
			r.decode = sub(last("INFER_RESPONSE_COMPLETE"), fr)
		}
		r.e2e = sub(last("HTTP_SEND_END", "GRPC_SEND_END", "REQUEST_END"), r.arrival)
		r.events = t.seq
		s.add(r)
	}
	if children > 0 {
		s.notes = append(s.notes, fmt.Sprintf("%d child traces (ensemble/BLS steps, parent_id set) are not requests of their own: not imported", children))
	}
	s.counts["triton_fragments"] += n
}

func itoa(i int) string { return strconv.Itoa(i) }

// filePos names a byte offset of data as "byte B (line L)" (B from 0, L
// from 1).
func filePos(data []byte, off int) string {
	off = max(0, min(off, len(data)))
	return fmt.Sprintf("byte %d (line %d)", off, bytes.Count(data[:off], []byte("\n"))+1)
}

// jsonDocuments reads data (from byte lead, the first non-blank one) as a
// sequence of JSON documents — several pretty-printed exports one after the
// other, or one that was cut (the exporter was still writing) or is
// malformed. Complete documents are dispatched as records; of a cut or
// malformed OTLP/JSON document, the spans complete before the cut are
// imported (salvageSpans) and s.cut names the file position. It returns
// false, leaving s untouched, when data is not JSON documents after all
// (the first document fails with a syntax error and holds no OTLP key: a
// text log that starts with '{'); it is then read line by line.
func (s *textState) jsonDocuments(data []byte, lead int) bool {
	d := data[lead:]
	dec := json.NewDecoder(bytes.NewReader(d))
	n := 0
	prevEnd := 0
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			return n > 0
		}
		if err == nil {
			n++
			prevEnd = int(dec.InputOffset())
			var obj map[string]json.RawMessage
			if json.Unmarshal(raw, &obj) != nil {
				s.unknownLine(n)
				continue
			}
			s.inRecord = true
			s.jsonObject(fmt.Sprintf("record %d", n), obj)
			continue
		}
		errAt := len(d) // unexpected EOF: cut at the end of the file
		what := "is cut"
		var se *json.SyntaxError
		if errors.As(err, &se) {
			errAt = int(se.Offset) - 1
			what = "is malformed (" + se.Error() + ")"
		} else if !errors.Is(err, io.ErrUnexpectedEOF) {
			what = "is unreadable (" + err.Error() + ")"
		}
		doc := d[prevEnd:min(max(errAt, prevEnd), len(d))]
		otlp := bytes.Contains(doc, []byte(`"resourceSpans"`)) || bytes.Contains(doc, []byte(`"resource_spans"`))
		if n == 0 && se != nil && (!otlp || jsonLinesAfter(d)) {
			return false // a text log, or JSONL whose first line is broken
		}
		before := len(s.recs) + len(s.clients)
		if fixed := salvageSpans(doc); fixed != nil {
			var obj map[string]json.RawMessage
			if json.Unmarshal(fixed, &obj) == nil {
				s.jsonObject(fmt.Sprintf("record %d", n+1), obj)
			}
		}
		got := len(s.recs) + len(s.clients) - before
		s.cut = fmt.Sprintf("JSON document %d %s at %s", n+1, what, filePos(data, lead+errAt))
		if otlp {
			s.cut += fmt.Sprintf(", after %d complete span record(s)", got)
		}
		return true
	}
}

// jsonLinesAfter reports whether a line after the first of d is a JSON
// object of its own (JSONL).
func jsonLinesAfter(d []byte) bool {
	_, rest, _ := bytes.Cut(d, []byte("\n"))
	for len(rest) > 0 {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		if l := bytes.TrimSpace(line); len(l) > 0 && l[0] == '{' && json.Valid(l) {
			return true
		}
	}
	return false
}

// salvageSpans returns the part of a cut or malformed OTLP/JSON document
// doc up to the end of its last complete element of a "spans" array,
// with the open arrays and objects closed, so that it parses; nil when no
// span is complete. A span cut in the middle is dropped whole (a partial
// span would import as a record with missing durations).
func salvageSpans(doc []byte) []byte {
	type frame struct {
		c   byte   // '{' or '['
		key string // the key this container is the value of ("" in an array)
	}
	var stack []frame
	inStr, esc, expectKey := false, false, false
	strStart := 0
	key := ""
	best := -1
	var closers []byte
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
				if expectKey {
					key = string(doc[strStart+1 : i])
					expectKey = false
				}
			}
			continue
		}
		switch c {
		case '"':
			inStr, strStart = true, i
		case '{', '[':
			k := ""
			if len(stack) > 0 && stack[len(stack)-1].c == '{' {
				k = key
			}
			stack = append(stack, frame{c, k})
			expectKey = c == '{'
		case '}', ']':
			if len(stack) == 0 {
				return nil
			}
			stack = stack[:len(stack)-1]
			expectKey = false
			if c == '}' && len(stack) > 0 && stack[len(stack)-1].c == '[' && stack[len(stack)-1].key == "spans" {
				best = i + 1
				closers = closers[:0]
				for j := len(stack) - 1; j >= 0; j-- {
					if stack[j].c == '[' {
						closers = append(closers, ']')
					} else {
						closers = append(closers, '}')
					}
				}
			}
		case ',':
			expectKey = len(stack) > 0 && stack[len(stack)-1].c == '{'
		case ':':
			expectKey = false
		}
	}
	if best < 0 {
		return nil
	}
	return append(append([]byte(nil), doc[:best]...), closers...)
}
