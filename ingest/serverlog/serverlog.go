// Package serverlog imports the per-request records of LLM inference
// servers — vLLM, TGI, SGLang, Triton, llama.cpp, Ollama, and any
// OpenTelemetry instrumentation using the gen_ai.* conventions — into
// formats rows ("server rows"): one formats.Request per server record with
// the Server* columns set, StartNs and the client offsets null, and the
// server's definitions in the run's notes. The definitions, clocks and
// sources of every record kind are in README.md beside this file.
//
// # Inputs
//
// One importer reads every kind: a file is parsed whole as JSON when it is
// one JSON document (an OTLP/JSON export, a Triton trace array, one
// response body), else line by line, each line matched against every
// server's record shapes, so a docker log mixing vLLM request lines, engine
// stats and uvicorn access lines, or a JSONL of responses, is one input.
// Lines are read whatever their length; "\r\n" and "\n" endings may mix;
// terminal color escapes and wrapping prefixes — vLLM's "(APIServer pid=N) ", journald's "<month> D
// HH:MM:SS host unit[pid]: " (any locale), docker compose's "name-1 | " —
// are removed first. A line that starts no record is a continuation of the
// previous record only when that record may continue (a DEBUG echo of a
// prompt, an ERROR line before its traceback, an unclosed quote; indented
// lines; README.md "Parsing rules"); any other such line is unknown:
// counted, named (first line) in a note and a warning, never aborting the
// import. A last line without a line ending, a Triton array without its
// closing ']', a timing block without its "total time" line, an SGLang
// Finish record without its out={…} part, a JSON document cut or malformed
// (of an OTLP export, the complete spans before the cut are imported) are
// cut records: what is complete is imported, Run.Truncated is set and a
// note and a warning give the file position (line, byte).
//
// Detect never takes source code or documentation (by extension, or a
// leading "#!") for a server log, whatever log lines it quotes.
//
// Timestamps: vLLM's "MM-DD HH:MM:SS" has no year, no sub-second part and
// no zone; the year is the first full date in the file's first 64 KiB,
// else Importer.Year (analyze --server-log sets the client trace's year),
// else the file's modification year (noted as a guess), and a month going
// back starts the next year. Zone-less wall times (vLLM,
// SGLang prefixes, Ollama GIN) are in ClockLocal; llama.cpp's "M.SS.mmm.uuu"
// prefix is ClockElapsed (since process start); Triton's ns are its steady
// clock (ClockMonotonic).
//
// # No per-request timing
//
// A file whose lines are all recognized but carry no per-request timing —
// a Prometheus exposition, a TGI DEBUG input echo, SGLang batch lines, a
// raw SSE body without arrival times, vLLM engine-stats and access lines —
// becomes a run with no requests, a note and a warning saying so
// ("no per-request timing: …"); it is not an error, so a directory of
// mixed logs still imports.
//
// # Server events, load series, finish reasons
//
// A record with per-phase timestamps (Triton trace timestamps; a span's
// arrival, queued, scheduled, first and last token derived from its
// gen_ai.latency.* attributes, and its span events) also yields event rows
// of kind "server.<name>" with OffsetNs from the row's ServerArrivalNs
// (Result.Events). vLLM's engine-stats lines become the run's Load column
// (and a summary in Reported). The server's finish reason, where the record
// has one, goes to Request.ServerFinishReason. README.md gives the details.
//
// # Client spans
//
// An OTLP/JSON file may also hold client-side gen_ai spans (OpenLLMetry's
// openai.chat, kind CLIENT). They become client rows of their own run
// (start = span start, one content event per gen_ai.content.completion.chunk
// span event, or one at the span's end for a whole response), and the
// server spans go to a run labelled "<label>:server".
package serverlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// Name is the format name accepted by --from.
const Name = "server-log"

// Record kinds (formats.Request.ServerKind). README.md gives each one's
// field definitions and sources.
const (
	KindVLLMSpan        = "vllm.otlp_span"
	KindVLLMRequestLog  = "vllm.request_log"
	KindVLLMMetrics     = "vllm.response_metrics"
	KindTGISuccess      = "tgi.success"
	KindSGLangFinish    = "sglang.finish"
	KindSGLangExport    = "sglang.metrics_export"
	KindSGLangSpan      = "sglang.otlp_span"
	KindTriton          = "triton.trace"
	KindLlamaCppTimings = "llamacpp.timings"
	KindLlamaCppSlot    = "llamacpp.slot_log"
	KindLlamaCppLegacy  = "llamacpp.print_timings"
	KindOllamaFinal     = "ollama.final_chunk"
	KindOllamaGIN       = "ollama.gin"
	KindOTLPGenAI       = "otlp.gen_ai_span"
	KindProxyLog        = "proxy.request_log"
)

// Definitions states each kind's fields as the server defines them; one
// note per kind present goes into Run.Notes.
var Definitions = map[string]string{
	KindVLLMSpan:        "vllm.otlp_span (vllm/v1/engine/output_processor.py do_tracing): arrival = span start (wall); server_ttft/e2e = frontend first/last output − arrival (wall, includes tokenization, queue, prefill, IPC); queue = first scheduled − queued, prefill = first token − first scheduled (preemptions included), decode = last − first token, inference = last token − first scheduled (engine-core monotonic clock); tokens = gen_ai.usage.prompt/completion_tokens",
	KindVLLMRequestLog:  "vllm.request_log (vllm/entrypoints/logger.py, async_llm.py): arrival = the 'Received request' (else 'Added request') line's timestamp, 1 s resolution, no year, local zone; id = external id (the engine's -<8 hex> suffix stripped); no durations",
	KindVLLMMetrics:     "vllm.response_metrics (--enable-per-request-metrics, docs/features/per_request_metrics.md): queue = queue_time_ms; prefill = time_to_first_token_ms, which starts at SCHEDULING (not arrival), so server_ttft is null; decode = generation_time_ms (first→last token); time_per_token = mean_itl_ms; tokens from usage",
	KindTGISuccess:      "tgi.success (router/src/server.rs): e2e = total_time (handler start → response ready), queue = queue_time (enqueued → first batch), inference = inference_time (batch start → end: prefill + decode, not split), time_per_token = inference_time / generated tokens (integer division; PREFILL INCLUDED, first token counted); validation_time precedes the queue; no TTFT; arrival = the line's timestamp (≈ end) − total_time",
	KindSGLangFinish:    "sglang.finish (python/sglang/srt/utils/request_logger.py): arrival = obj.received_time (wall s); id = rid; e2e = meta_info.e2e_latency (s, created → finish); queue = meta_info.queue_time and prefill = meta_info.prefill_latency when the version emits them; tokens = meta_info.prompt/completion_tokens",
	KindSGLangExport:    "sglang.metrics_export (managers/request_metrics_exporter.py, --export-metrics-to-file): meta_info keys as sglang.finish; rid and received_time from the JSON-encoded request_parameters",
	KindSGLangSpan:      "sglang.otlp_span: the same gen_ai.latency.* attributes as vLLM's span (docs/references/production_request_trace.md)",
	KindTriton:          "triton.trace (docs/user_guide/trace.md, trace file, level TIMESTAMPS): steady-clock ns; arrival = HTTP_RECV_START | GRPC_WAITREAD_START | REQUEST_START; queue = COMPUTE_START − QUEUE_START; inference = last COMPUTE_END − first COMPUTE_START; server_ttft = first INFER_RESPONSE_COMPLETE − arrival and prefill = first INFER_RESPONSE_COMPLETE − COMPUTE_START (first RESPONSE, not first token); decode = last − first INFER_RESPONSE_COMPLETE (decoupled models only); e2e = HTTP_SEND_END | GRPC_SEND_END | REQUEST_END − arrival; id = the client's request id",
	KindLlamaCppTimings: "llamacpp.timings (tools/server README, response 'timings'): prefill = prompt_ms (slot start of prompt processing → first token; excludes cached-prefix tokens and any queueing), decode = predicted_ms, time_per_token = predicted_per_token_ms; input tokens = prompt_n + cache_n, output = predicted_n; no arrival time, no queue",
	KindLlamaCppSlot:    "llamacpp.slot_log (server-context print_timing block): prefill = 'prompt eval time', decode = 'eval time', e2e = 'total time' (prompt + eval: no queue); output tokens = eval tokens; the prompt token count excludes cached tokens, so input_tokens is left null; arrival = the 'total time' line's elapsed-since-start prefix − total; id = slot and task",
	KindLlamaCppLegacy:  "llamacpp.print_timings (2024 log format): prefill = t_prompt_processing, decode = t_token_generation, e2e = t_total (ms), output tokens = n_decoded, time_per_token = t_token; arrival = timestamp (unix s, 1 s resolution) − t_total; id = slot and task",
	KindOllamaFinal:     "ollama.final_chunk (api/types.go Metrics): e2e = total_duration, prefill = prompt_eval_duration (excludes load_duration), decode = eval_duration (ns); time_per_token = eval_duration / eval_count; tokens = prompt_eval_count (small when the prompt is cached) / eval_count; arrival = created_at (end of generation) − total_duration; no queue",
	KindOllamaGIN:       "ollama.gin (GIN access line): e2e = handler latency (Go duration; for streams until the stream ends); arrival = the line's timestamp (handler end, 1 s resolution, local zone) − latency; only POST inference routes are records; no id, no tokens",
	KindProxyLog:        "proxy.request_log (a logging proxy in front of the server, one JSON line per request: anud18/qwen36-vllm-aiperf-benchmark scripts/trace_proxy.py, docs/TRACING.md): arrival = ts (request received by the proxy; ISO 8601, µs; else ts_epoch), server_ttft = ttft_ms (received → first reasoning or content token; streamed requests only), e2e = latency_ms (received → last byte), tokens = prompt_tokens/completion_tokens (the server's usage), id = response_id (the completion id, which vLLM's spans carry as gen_ai.request.id), status = the upstream HTTP status; measured one network hop before the server, so TTFT and E2E include that hop",
	KindOTLPGenAI:       "otlp.gen_ai_span (OpenTelemetry gen_ai semantic conventions): arrival = span start; e2e = gen_ai.latency.e2e or span end − start; queue/prefill/decode/ttft from gen_ai.latency.* when present; tokens = gen_ai.usage.input/output_tokens (or prompt/completion_tokens)",
}

// Tool names of server runs (formats.Run.Tool), by kind prefix.
var serverTool = map[string]string{"vllm": "vllm-server", "tgi": "tgi-server", "sglang": "sglang-server", "triton": "triton-server",
	"llamacpp": "llamacpp-server", "ollama": "ollama-server", "otlp": "otel-genai", "proxy": "logging-proxy"}

// Importer reads server logs. Year, when not 0, is the year of timestamps
// that have none (vLLM's "MM-DD HH:MM:SS") in a file that carries no full
// date; YearSource says where it came from (e.g. "the client trace").
type Importer struct {
	Year       int
	YearSource string
}

// New returns the importer.
func New() *Importer { return &Importer{} }

// Name implements ingest.Importer.
func (*Importer) Name() string { return Name }

// Companions implements ingest.Importer: server logs have none.
func (*Importer) Companions(string) []string { return nil }

// signatures are byte strings that only server logs (or their captures)
// hold near their start.
var signatures = [][]byte{
	[]byte(`"resourceSpans"`), []byte(`"resource_spans"`),
	[]byte("Received request "), []byte("Added request "), []byte("Avg prompt throughput:"), []byte("(APIServer pid="), []byte("(EngineCore"),
	[]byte("text_generation_router"), []byte("text_generation_launcher"),
	[]byte("] Finish: obj="), []byte("] Receive: obj="), []byte("Prefill batch, #new-seq"), []byte("Prefill batch. #new-seq"), []byte("Decode batch, #running-req"), []byte("Decode batch. #running-req"), []byte(`"event": "request.`), []byte(`"event":"request.`), []byte(`"request_parameters"`),
	[]byte("slot print_timing:"), []byte("print_timings]"), []byte("slot launch_slot_"), []byte("slot update_slots"),
	[]byte("[GIN] "), []byte(`"total_duration"`), []byte(`"prompt_eval_duration"`),
	[]byte(`"time_to_first_token_ms"`), []byte(`"predicted_per_token_ms"`),
	[]byte("# TYPE vllm:"), []byte("# TYPE sglang:"), []byte("# TYPE tgi_"), []byte("# TYPE llamacpp:"), []byte("# TYPE nv_inference"), []byte("\nsglang:"), []byte("\nvllm:"),
}

// notALog are extensions of files that may quote server-log lines but are
// never a server log: documentation, tables, and source code (a script
// that builds or parses a log holds its lines as string literals, e.g.
// testdata/joined/aiperf-vllm/make.py).
var notALog = map[string]bool{
	".md": true, ".rst": true, ".html": true, ".htm": true, ".pdf": true, ".png": true, ".svg": true,
	".parquet": true, ".arrow": true, ".yaml": true, ".yml": true, ".toml": true, ".ini": true, ".cfg": true,
	".py": true, ".pyi": true, ".pyc": true, ".ipynb": true, ".go": true, ".rs": true, ".c": true, ".h": true,
	".cc": true, ".cpp": true, ".hpp": true, ".cu": true, ".java": true, ".kt": true, ".scala": true,
	".js": true, ".mjs": true, ".cjs": true, ".ts": true, ".sh": true, ".bash": true, ".zsh": true,
	".rb": true, ".pl": true, ".r": true, ".jl": true, ".lua": true, ".sql": true,
}

var reTritonHead = regexp.MustCompile(`^\s*\[\s*\{\s*"id"\s*:`)

// isTritonArray reports whether head starts a Triton trace file: an array
// whose first element starts with "id" (Triton 2.x: one element per
// timestamp or trace header) or with "model_name" (TensorRT Inference
// Server 1.x, 2019: one element per trace, docs/trace.rst) and that holds
// "timestamps".
func isTritonArray(head []byte) bool {
	return (reTritonHead.Match(head) || reTritonHead1.Match(head)) && bytes.Contains(head, []byte(`"timestamps"`))
}

var reTritonHead1 = regexp.MustCompile(`^\s*\[\s*\{\s*"model_name"\s*:`)

// firstKeys are the keys of the JSON object on t's first line (t trimmed
// of leading blanks), nil when it is not one.
func firstKeys(t []byte) map[string]bool {
	if len(t) == 0 || t[0] != '{' {
		return nil
	}
	line := t
	if i := bytes.IndexByte(t, '\n'); i >= 0 {
		line = t[:i]
	}
	keys, _, _ := ingest.HeadKeys(line)
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// isLlamaJSONLog: the first line is a llama.cpp JSON server-log line
// (llama-server --log-format json, 2024: tid, timestamp, level, function,
// line, msg; late 2023: timestamp, level, function, line, message).
func isLlamaJSONLog(t []byte) bool {
	k := firstKeys(t)
	return k["timestamp"] && k["level"] && k["function"] && k["line"] && (k["msg"] || k["message"])
}

// isProxyLog: the first line is a logging proxy's per-request record (ts or
// ts_epoch, latency_ms, and ttft_ms or token counts).
func isProxyLog(t []byte) bool {
	k := firstKeys(t)
	return k["latency_ms"] && (k["ts"] || k["ts_epoch"]) && (k["ttft_ms"] || k["completion_tokens"])
}

// Detect implements ingest.Importer.
func (*Importer) Detect(path string, head []byte) bool {
	if notALog[strings.ToLower(filepath.Ext(path))] {
		return false
	}
	if bytes.HasPrefix(bytes.TrimLeft(head, "\ufeff"), []byte("#!")) {
		return false // a script (python3, bash, …) that writes or quotes log lines
	}
	if isTritonArray(head) {
		return true
	}
	t := bytes.TrimLeft(head, " \t\r\n\ufeff")
	if bytes.HasPrefix(t, []byte("data:")) && (bytes.Contains(head, []byte("chat.completion.chunk")) || bytes.Contains(head, []byte(`"choices"`))) {
		return true
	}
	if bytes.HasPrefix(t, []byte("sglang:")) || bytes.HasPrefix(t, []byte("vllm:")) {
		return true
	}
	if isLlamaJSONLog(t) || isProxyLog(t) {
		return true
	}
	// a client tool's file may embed server strings deep inside its JSON;
	// those tools are detected before this importer
	for _, s := range signatures {
		if bytes.Contains(head, s) {
			return true
		}
	}
	return false
}

// Result is a parsed server log.
type Result struct {
	// Requests are the server rows (RunID and RequestKey unset).
	Requests []formats.Request
	// Events[i] are Requests[i]'s server-side events (kind "server.*",
	// OffsetNs from its ServerArrivalNs, RunID and RequestKey unset); nil
	// for a record without per-phase timestamps or without arrival.
	Events [][]formats.Event
	// Clients are client rows from client-side spans, with their events
	// (RunID and RequestKey unset).
	Clients []ClientRow
	// Load is the engine-stats series (vLLM).
	Load []LoadSample
	// Notes: definitions, counts, cuts, the no-timing reason.
	Notes []string
	// NoTiming says why the file holds no per-request timing ("" when it
	// has records).
	NoTiming string
	// Truncated is true when a record was cut.
	Truncated bool
	// Unknown counts lines no record shape matched; FirstUnknown is the
	// first one's line number (0 when none).
	Unknown, FirstUnknown int
	// Recognized is false when nothing in the file — no record, no line —
	// matched any server's shape: it is not a server log (a client trace, a
	// script, an empty file, a JSON document cut before its first record).
	Recognized bool
	// Cut says where a cut record or document is (file position: line
	// and byte); "" when the file is complete.
	Cut string
	// Counts are the recognized lines without per-request timing, by
	// category.
	Counts map[string]int
	// Checks are the shared value checks of the server rows (the values
	// they left null), ClientChecks those of the client rows.
	Checks, ClientChecks []formats.DataCheck
}

// ClientRow is a client request read from a client-side span.
type ClientRow struct {
	Request formats.Request
	Events  []formats.Event
}

var reFullDate = regexp.MustCompile(`(20\d\d)[-/](\d\d)[-/](\d\d)`)

// parse reads in into a textState.
func (im *Importer) parse(in *ingest.Input) (*textState, error) {
	path := in.Path
	head := in.Head()
	var year int
	var ysrc string
	if m := reFullDate.FindSubmatch(head); m != nil {
		year, _ = strconv.Atoi(string(m[1]))
		ysrc = "the first full date in the file"
	} else if im.Year != 0 {
		year, ysrc = im.Year, im.YearSource
		if ysrc == "" {
			ysrc = "Importer.Year"
		}
	} else if st, err := os.Stat(path); err == nil && path != ingest.StdinPath {
		year, ysrc = st.ModTime().Year(), "the file's modification time: a guess; check the clock offset"
	} else {
		year, ysrc = time.Now().Year(), "the current date: a guess; check the clock offset"
	}
	s := newTextState(filepath.Base(path), year, ysrc)
	t := bytes.TrimLeft(head, " \t\r\n\ufeff")
	lr := newLineReader(in.Reader(), in.MaxValue())
	// one JSON document (pretty-printed OTLP, a Triton array, a body) is
	// read whole; JSONL and text logs are streamed line by line
	firstLine := t
	if i := bytes.IndexByte(t, '\n'); i >= 0 {
		firstLine = t[:i]
	}
	if len(t) > 0 && (t[0] == '[' && isTritonArray(t) || t[0] == '{' && !json.Valid(bytes.TrimSpace(firstLine))) {
		data, err := in.ReadAll()
		if err != nil {
			return nil, err
		}
		d := bytes.TrimLeft(data, " \t\r\n\ufeff")
		switch {
		case d[0] == '[':
			s.triton(d)
			return s, nil
		case json.Valid(d):
			var obj map[string]json.RawMessage
			if json.Unmarshal(d, &obj) == nil {
				s.jsonObject("record 1", obj)
				return s, nil
			}
		case s.jsonDocuments(data, len(data)-len(d)):
			return s, nil
		}
		lr = newLineReader(bufio.NewReader(bytes.NewReader(data)), in.MaxValue())
	}
	last := 0
	for {
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, &ingest.FormatError{File: path, Where: fmt.Sprintf("line %d", lr.n+1), Err: err}
		}
		last = lr.n
		unk := s.unknown
		s.line(lr.n, line)
		if lr.lastCut && !lr.lastComplete && s.unknown > unk {
			// the cut line itself: reported as the cut, not as unknown
			s.unknown--
			s.cutPartial = true
		}
	}
	s.crlf = lr.crlf
	s.lines = lr.n
	s.lastStart = lr.start
	s.finish(lr.lastCut && last > 0 && !lr.lastComplete, last)
	return s, nil
}

// Parse reads the server log at path (through ingest.Open: "-" is
// standard input, compressed files are decompressed).
func (im *Importer) Parse(path string) (*Result, formats.SourceFile, error) {
	in, err := ingest.Open(path, ingest.Options{})
	if err != nil {
		return nil, formats.SourceFile{}, err
	}
	defer in.Close()
	return im.ParseInput(in)
}

// ParseInput reads the server log in.
func (im *Importer) ParseInput(in *ingest.Input) (*Result, formats.SourceFile, error) {
	path := in.Path
	s, err := im.parse(in)
	if err != nil {
		var fe *ingest.FormatError
		if errors.As(err, &fe) {
			return nil, formats.SourceFile{}, err
		}
		return nil, formats.SourceFile{}, fmt.Errorf("%s: %w", ingest.DisplayName(path), err)
	}
	src, err := in.SourceFile("server_log")
	if err != nil {
		return nil, src, err
	}
	res := &Result{Load: s.load, Unknown: s.unknown, FirstUnknown: s.firstUnk, Counts: s.counts, Truncated: s.cut != "", Cut: s.cut,
		Recognized: len(s.recs) > 0 || len(s.clients) > 0 || len(s.load) > 0 || s.cont > 0}
	for k, v := range s.counts {
		if k != "blank" && v > 0 {
			res.Recognized = true
		}
	}
	kinds := make([]string, 0, len(s.kinds))
	for k := range s.kinds {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		res.Notes = append(res.Notes, fmt.Sprintf("%d %s record(s); definitions: %s", s.kinds[k], k, Definitions[k]))
	}
	nev := 0
	var vals, cvals ingest.Values
	for i, r := range s.recs {
		q := r.request("", 0, s.file)
		r.checkValues(&q, &vals, ingest.Pos{Request: int64(i), At: r.where})
		res.Requests = append(res.Requests, q)
		ev := r.eventRows()
		res.Events = append(res.Events, ev)
		nev += len(ev)
	}
	unplaced := 0
	for i, c := range s.clients {
		q, ev := c.req, c.events
		p := ingest.Pos{Request: int64(i)}
		if q.StartNs != nil && !cvals.Check("start", p, float64(*q.StartNs), ingest.MaxTimeNs) || !cvals.EventsPlaced("events", p, ev) {
			ingest.Unplace(&q)
			ev = nil
			unplaced++
		}
		for _, n := range []struct {
			field string
			v     **int64
			src   *string
		}{{"gen_ai.usage.input_tokens", &q.InputTokens, &q.InputTokensSource}, {"gen_ai.usage.output_tokens", &q.OutputTokens, &q.OutputTokensSource}} {
			if *n.v != nil && !cvals.Check(n.field, p, float64(**n.v), ingest.MaxTokens) {
				*n.v, *n.src = nil, ""
			}
		}
		res.Clients = append(res.Clients, ClientRow{q, ev})
	}
	res.Checks, res.ClientChecks = vals.Checks(), cvals.Checks()
	if unplaced > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("client rows whose start or a message time is an offending value (the client run's data checks): %d; kept with their status and counts, without start, offsets or events", unplaced))
	}
	if s.kinds[KindVLLMRequestLog] > 0 || len(s.load) > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("yearless vLLM timestamps (MM-DD HH:MM:SS, 1 s, local zone) placed in %d (from %s)", s.year0, s.yearSrc))
	}
	if s.cut != "" {
		res.Notes = append(res.Notes, "cut: "+s.cut+"; every complete record before it was imported")
	}
	res.Notes = append(res.Notes, s.notes...)
	if len(s.load) > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d engine-stats lines (vLLM periodic load: running/waiting requests, KV-cache usage) kept as a load series; summarized in reported", len(s.load)))
	}
	if s.lines > 0 {
		res.Notes = append(res.Notes, s.lineSummary())
	}
	if len(res.Requests) == 0 && len(res.Clients) == 0 {
		res.NoTiming = s.noTimingReason()
		res.Notes = append(res.Notes, noRecordsPrefix(res.NoTiming)+res.NoTiming)
	}
	if nev > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d server-side timestamps (Triton trace timestamps, span phase boundaries and span events) written as events of kind server.<name> (offset_ns from server_arrival_ns; README.md \"Server events\")", nev))
	}
	return res, src, nil
}

// lineSummary counts the lines by what they were.
func (s *textState) lineSummary() string {
	keys := make([]string, 0, len(s.counts))
	for k, v := range s.counts {
		if v > 0 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, s.counts[k]))
	}
	msg := fmt.Sprintf("%d lines: %d records", s.lines, len(s.recs)+len(s.clients))
	if len(parts) > 0 {
		msg += "; without per-request timing: " + strings.Join(parts, ", ")
	}
	if len(s.access) > 0 {
		codes := make([]int, 0, len(s.access))
		for c := range s.access {
			codes = append(codes, c)
		}
		sort.Ints(codes)
		var cs []string
		for _, c := range codes {
			cs = append(cs, fmt.Sprintf("%d×%d", s.access[c], c))
		}
		msg += " (access-line statuses " + strings.Join(cs, ", ") + ")"
	}
	if s.cont > 0 {
		msg += fmt.Sprintf("; %d continuation lines of multi-line records", s.cont)
	}
	if s.unknown > 0 {
		msg += fmt.Sprintf("; %d unknown lines skipped (first: line %d)", s.unknown, s.firstUnk)
	}
	if s.crlf > 0 {
		msg += fmt.Sprintf("; %d lines ended in CRLF", s.crlf)
	}
	return msg
}

// noTimingReason names what a file without records holds.
func (s *textState) noTimingReason() string {
	c := s.counts
	switch {
	case c["prometheus"] > 0 && c["prometheus"] >= s.lines/2:
		return "a Prometheus exposition (cumulative counters and histogram buckets, no request records); windowed percentiles need successive scrapes"
	case c["sse_done"]+c["response_without_timing"] > 0 && s.lines > 0 && c["response_without_timing"] >= s.lines/3:
		return "a raw SSE/response body without arrival times and without a usage chunk carrying server metrics or timings (the chunks' 'created' is the request's creation second, not an arrival time)"
	case c["tgi_input_echo"] > 0:
		return "TGI DEBUG lines (an input echo, multi-line) without any Success record"
	case c["sglang_batch"] > 0:
		return "SGLang scheduler batch lines (batch-level throughput and queue length, no request records)"
	case len(s.load) > 0:
		return fmt.Sprintf("vLLM engine stats and access lines only (request logging off): %d load samples, no request records", len(s.load))
	case c["ollama_access_other"] > 0:
		return "Ollama access lines for non-inference routes only"
	case c["access"] > 0:
		return "HTTP access lines only (no timestamps or durations)"
	case s.cut != "":
		return "cut before its first complete record: " + s.cut
	case s.unknown > 0:
		return fmt.Sprintf("no line matched a known server record (%d unknown lines, first: line %d)", s.unknown, s.firstUnk)
	}
	return "no request records"
}

// noRecordsPrefix heads the message of a file without server records: a
// file whose lines are recognized holds "no per-request timing"; one whose
// lines match no server's shape is not (known to be) a server log at all —
// it may hold timings of a kind tokentrace does not read.
func noRecordsPrefix(reason string) string {
	if strings.HasPrefix(reason, "no line matched") {
		return "not a server log tokentrace reads: "
	}
	return "no per-request timing: "
}

// Import implements ingest.Importer.
func (im *Importer) Import(in *ingest.Input, opt ingest.Options, sink formats.Sink) error {
	res, src, err := im.ParseInput(in)
	if err != nil {
		return err
	}
	return im.importParsed(in.Path, res, src, opt, sink)
}

// ImportFile is Import of the file at path that also returns the parse
// result, so that a caller can tell a log without records
// (Result.Requests empty) that is a recognized log without per-request
// timing (Result.NoTiming, Result.Recognized) from a file that is no
// server log at all.
func (im *Importer) ImportFile(path string, opt ingest.Options, sink formats.Sink) (*Result, error) {
	in, err := ingest.Open(path, opt)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	res, src, err := im.ParseInput(in)
	if err != nil {
		return nil, err
	}
	return res, im.importParsed(path, res, src, opt, sink)
}

func (im *Importer) importParsed(path string, res *Result, src formats.SourceFile, opt ingest.Options, out formats.Sink) error {
	sink := formats.NewRowWriter(out)
	label := opt.LabelFor(path)
	warn := ingest.NewNotes(path, opt) // for the warnings (the run notes come from res)
	if res.NoTiming != "" {
		warn.WarnOnly(noRecordsPrefix(res.NoTiming) + res.NoTiming)
	} else if res.Unknown > 0 {
		warn.WarnOnly(fmt.Sprintf("%d unknown lines skipped (first: line %d): they match no server's record shape", res.Unknown, res.FirstUnknown))
	}
	if res.Truncated && !strings.HasPrefix(res.NoTiming, "cut ") {
		warn.WarnOnly("cut record: " + res.Cut + "; every complete record before it was imported")
	}
	serverLabel := label
	if len(res.Clients) > 0 {
		run := formats.Run{RunID: label, Tool: "otel-genai-client", ClockDomain: formats.ClockUnix, Convention: "otel-genai-client",
			SourceFiles: []formats.SourceFile{src}, Streaming: nil,
			Notes: []string{"client rows from client-side gen_ai spans (kind CLIENT): start = span start; one content event per gen_ai.content.completion.chunk span event (the events carry no text, so a role-only first chunk cannot be told apart), or one event at the span's end for a whole response; stream end = span end; tokens from gen_ai.usage.* (server usage)"}}
		if err := formats.StartRun(sink, &run); err != nil {
			return err
		}
		streamed := false
		for i, c := range res.Clients {
			q, ev := c.Request, c.Events
			if len(ev) > 1 {
				streamed = true
			}
			q.RunID, q.RequestKey = label, int64(i)
			for j := range ev {
				ev[j].RunID, ev[j].RequestKey = label, int64(i)
				if opt.NoText {
					ev[j].Text, ev[j].ReasoningText = nil, nil
				}
			}
			if err := sink.Request(&q, ev); err != nil {
				return err
			}
		}
		run.Streaming = &streamed
		run.RequestCount = int64(len(res.Clients))
		run.Checks = res.ClientChecks
		ingest.WarnChecks(warn.WarnOnly, label, res.ClientChecks)
		if err := sink.Run(&run); err != nil {
			return err
		}
		serverLabel = label + ":server"
		if len(res.Requests) == 0 {
			return nil
		}
	}
	run := formats.Run{RunID: serverLabel, Tool: toolOf(res.Requests), Convention: "server-log", SourceFiles: []formats.SourceFile{src},
		Notes: res.Notes, Truncated: res.Truncated, RequestCount: int64(len(res.Requests)), Reported: loadReported(res.Load, src.Path),
		Load: loadRows(res.Load), Checks: res.Checks}
	ingest.WarnChecks(warn.WarnOnly, serverLabel, res.Checks)
	if err := formats.StartRun(sink, &run); err != nil {
		return err
	}
	for i := range res.Requests {
		q := res.Requests[i]
		q.RunID, q.RequestKey = serverLabel, int64(i)
		var ev []formats.Event
		if i < len(res.Events) && len(res.Events[i]) > 0 {
			ev = append([]formats.Event(nil), res.Events[i]...)
			for j := range ev {
				ev[j].RunID, ev[j].RequestKey = serverLabel, int64(i)
			}
		}
		if err := sink.Request(&q, ev); err != nil {
			return err
		}
	}
	return sink.Run(&run)
}

// toolOf names a server run's tool from its records' kinds (the most
// frequent); "server-log" when there are none.
func toolOf(reqs []formats.Request) string {
	n := map[string]int{}
	best := ""
	for _, r := range reqs {
		p, _, _ := strings.Cut(r.ServerKind, ".")
		n[p]++
		if best == "" || n[p] > n[best] || n[p] == n[best] && p < best {
			best = p
		}
	}
	if t, ok := serverTool[best]; ok {
		return t
	}
	return "server-log"
}

// loadRows converts the engine-stats series to the runs table's load
// column (NaN → null).
func loadRows(load []LoadSample) []formats.LoadSample {
	if len(load) == 0 {
		return nil
	}
	f := func(v float64) *float64 {
		if v != v {
			return nil
		}
		return ingest.Ptr(v)
	}
	n := func(v float64) *int64 {
		if v != v {
			return nil
		}
		return ingest.Ptr(int64(v))
	}
	out := make([]formats.LoadSample, len(load))
	for i, l := range load {
		out[i] = formats.LoadSample{TimeNs: l.TimeNs, ClockDomain: l.Clock, Running: n(l.Running), Waiting: n(l.Waiting), Swapped: n(l.Swapped),
			GPUKVCachePct: f(l.GPUKVCachePct), CPUKVCachePct: f(l.CPUKVCachePct), PrefixCacheHitPct: f(l.PrefixCacheHitRatePct),
			PromptTokensPerS: f(l.PromptTokensPerS), GenerationTokensPerS: f(l.GenerationTokensPerS)}
	}
	return out
}

// loadReported summarizes the engine-stats series as reported statistics
// (the server's own numbers): samples, mean, max and last of each series.
func loadReported(load []LoadSample, file string) []formats.ReportedStat {
	if len(load) == 0 {
		return nil
	}
	series := []struct {
		name, unit string
		get        func(LoadSample) float64
	}{
		{"running_reqs", "requests", func(l LoadSample) float64 { return l.Running }},
		{"waiting_reqs", "requests", func(l LoadSample) float64 { return l.Waiting }},
		{"swapped_reqs", "requests", func(l LoadSample) float64 { return l.Swapped }},
		{"gpu_kv_cache_usage", "%", func(l LoadSample) float64 { return l.GPUKVCachePct }},
		{"cpu_kv_cache_usage", "%", func(l LoadSample) float64 { return l.CPUKVCachePct }},
		{"prefix_cache_hit_rate", "%", func(l LoadSample) float64 { return l.PrefixCacheHitRatePct }},
		{"avg_prompt_throughput", "tokens/s", func(l LoadSample) float64 { return l.PromptTokensPerS }},
		{"avg_generation_throughput", "tokens/s", func(l LoadSample) float64 { return l.GenerationTokensPerS }},
	}
	var out []formats.ReportedStat
	base := filepath.Base(file)
	for _, s := range series {
		var n int
		var sum, mx, last float64
		for _, l := range load {
			v := s.get(l)
			if v != v {
				continue
			}
			if n == 0 || v > mx {
				mx = v
			}
			n++
			sum += v
			last = v
		}
		if n == 0 {
			continue
		}
		mean := sum / float64(n)
		cnt := float64(n)
		out = append(out,
			formats.ReportedStat{Metric: s.name, Stat: "samples", Value: &cnt, File: base},
			formats.ReportedStat{Metric: s.name, Stat: "mean", Unit: s.unit, Value: ingest.Ptr(mean), File: base},
			formats.ReportedStat{Metric: s.name, Stat: "max", Unit: s.unit, Value: ingest.Ptr(mx), File: base},
			formats.ReportedStat{Metric: s.name, Stat: "last", Unit: s.unit, Value: ingest.Ptr(last), File: base})
	}
	return out
}
