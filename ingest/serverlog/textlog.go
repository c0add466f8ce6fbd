package serverlog

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// LoadSample is one periodic engine-stats line (vLLM
// vllm/v1/metrics/loggers.py LoggingStatLogger.log, V0 metrics.py): the
// server's windowed throughputs and last scheduler snapshot. NaN: not on
// this line's version.
type LoadSample struct {
	Line int
	// TimeNs is the line's timestamp in Clock ("local": vLLM's yearless,
	// second-resolution, zone-less prefix); nil when the line has none.
	TimeNs                *int64
	Clock                 string
	PromptTokensPerS      float64
	GenerationTokensPerS  float64
	Running               float64
	Waiting               float64 // V1 "Waiting", V0 "Pending"
	Swapped               float64 // V0 only
	GPUKVCachePct         float64
	CPUKVCachePct         float64 // V0 only
	PrefixCacheHitRatePct float64 // V1 only
}

// textState is the parse state of a line-oriented log (or JSONL / SSE).
type textState struct {
	file    string
	year    int    // year for yearless timestamps (advances at a new year)
	year0   int    // the year the file started in
	yearSrc string // where year came from
	lastMon time.Month

	recs   []*record
	byID   map[string]*record // vLLM request-log records by external id
	slots  map[string]*record // llama.cpp records by "slot/task" until "total time"
	legacy map[string]*record // llama.cpp 2024 print_timings by "slot/task"
	load   []LoadSample

	counts     map[string]int // recognized lines by category (no per-request timing)
	unknown    int
	firstUnk   int
	cont       int  // continuation lines of multi-line records
	inRecord   bool // a recognized line was seen
	open       bool // the last recognized line may continue on the next lines (mayContinue)
	notes      []string
	cut        string // truncation remark, with the file position
	lastStart  int64  // byte offset of the last line read
	cutPartial bool   // the cut last line matched no shape
	lines      int
	crlf       int
	spanN      int
	clients    []clientReq
	access     map[int]int
	kinds      map[string]int
}

func newTextState(file string, year int, yearSrc string) *textState {
	return &textState{file: file, year: year, year0: year, yearSrc: yearSrc, byID: map[string]*record{}, slots: map[string]*record{},
		legacy: map[string]*record{}, counts: map[string]int{}, access: map[int]int{}, kinds: map[string]int{}}
}

func (s *textState) add(r *record) {
	s.recs = append(s.recs, r)
	s.kinds[r.kind]++
}

var nan = math.NaN()

var (
	// vLLM "LEVEL MM-DD HH:MM:SS [file.py:line] msg"
	reVLLM = regexp.MustCompile(`^(DEBUG|INFO|WARNING|ERROR|CRITICAL) (\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d+))? \[([^\]]+)\] (.*)$`)
	// KServe "2025-05-14 17:45:10.901 <pid> <logger> msg"
	reKServe = regexp.MustCompile(`^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d+))? (?:\d+ )?([\w.]+) (.*)$`)
	// SGLang "[2025-12-24 21:05:35] msg" or "[2025-12-24 21:05:35 TP0] msg"
	reSGLang = regexp.MustCompile(`^\[(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d+))?(?: [^\]]*)?\] (.*)$`)
	// TGI "2025-05-01T01:31:14.787487Z  INFO msg"
	reRFC = regexp.MustCompile(`^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d))\s+(TRACE|DEBUG|INFO|WARN|ERROR)\s(.*)$`)
	// level-only line (a TGI line whose timestamp was removed)
	reLevel = regexp.MustCompile(`^\s*(TRACE|DEBUG|INFO|WARN|WARNING|ERROR)\s+(.*)$`)
	// llama.cpp "5.27.453.094 I msg" (elapsed since start)
	reLlamaTS = regexp.MustCompile(`^(?:(\d+)\.)?(\d+)\.(\d\d)\.(\d{3})\.(\d{3}) ([IWEDT]) (.*)$`)

	reFinished = regexp.MustCompile(`Finished request (\S+?)\.?$`)
	reGenResp  = regexp.MustCompile(`Generated response (\S+?)(?: \(streaming[^)]*\))?: `)
	reTokIDs   = regexp.MustCompile(`output_token_ids: \[([^\]]*)\]`)
	reFinish   = regexp.MustCompile(`finish_reason: (\w+)`)
	reStats    = regexp.MustCompile(`Avg prompt throughput: ([\d.]+) tokens/s, Avg generation throughput: ([\d.]+) tokens/s, Running: (\d+) reqs`)
	reStatKV   = regexp.MustCompile(`(Swapped|Pending|Waiting): (\d+) reqs|(GPU|CPU) KV cache usage: ([\d.]+)%|Prefix cache hit rate: ([\d.]+)%`)
	reUvicorn  = regexp.MustCompile(`^INFO:\s+[\d.:\[\]a-f]+ (?:\d+ )?- "(\w+) (\S+) HTTP/[\d.]+" (\d{3})`)
	reUvicorn2 = regexp.MustCompile(`^INFO:\s+(Started|Waiting|Application|Shutting|Finished|Uvicorn)`)

	reTGIField = regexp.MustCompile(`\b(total_time|validation_time|queue_time|inference_time|time_per_token|seed)="([^"]*)"`)
	reTraceID  = regexp.MustCompile(`\btrace_id=([0-9a-f]{32})\b`)

	reSGReceived = regexp.MustCompile(`\breceived_time=([0-9.eE+-]+)`)
	reSGRid      = regexp.MustCompile(`\brid='([^']*)'`)
	reSGFinish   = regexp.MustCompile(`'finish_reason': \{'type': '([^']*)'`)
	reSGMeta     = regexp.MustCompile(`'(e2e_latency|prompt_tokens|completion_tokens|cached_tokens|queue_time|prefill_latency|prefill_delay|id)': ('[^']*'|[0-9.eE+-]+)`)

	reSlot     = regexp.MustCompile(`slot print_timing: id\s+(\d+) \| task (\d+) \|\s+(prompt eval time|eval time|total time)\s*=\s*([\d.]+) ms(?: /\s*(\d+) tokens)?`)
	reSlotMisc = regexp.MustCompile(`^(?:slot|srv|que|main|load|llama|common|build|system|init)\b`)
	reKV       = regexp.MustCompile(`(\w+)=("[^"]*"|\S+)`)

	reGIN = regexp.MustCompile(`^\[GIN\] (\d{4})/(\d\d)/(\d\d) - (\d\d):(\d\d):(\d\d) \|\s*(\d{3}) \|\s*(\S+) \|\s*(\S+) \|\s*(\w+)\s+"([^"]*)"`)

	reProm = regexp.MustCompile(`^(?:# (?:HELP|TYPE) |[a-zA-Z_:][\w:]*(?:\{[^}]*\})? [-+0-9.eEInfNa]+(?: \d+)?$)`)
)

// line handles one line (prefixes already stripped).
func (s *textState) line(n int, raw string) {
	line := stripPrefixes(raw)
	t := strings.TrimSpace(line)
	if t == "" {
		s.counts["blank"]++
		return
	}
	if strings.HasPrefix(t, "{") {
		s.jsonLine(n, t)
		return
	}
	if strings.HasPrefix(t, "data:") {
		s.sseLine(n, strings.TrimSpace(strings.TrimPrefix(t, "data:")))
		return
	}
	if strings.HasPrefix(t, "event:") || strings.HasPrefix(t, ": ") || t == ":" {
		s.counts["sse_other"]++
		return
	}
	c0 := t[0]
	if m := matchIf(c0 == 'D' || c0 == 'I' || c0 == 'W' || c0 == 'E' || c0 == 'C', reVLLM, line); m != nil {
		s.recognized(t)
		ns := s.yearless(m[2], m[3], m[4], m[5], m[6], m[7])
		s.vllmMessage(n, ns, m[9])
		return
	}
	digitDate := len(line) > 10 && isDigit(line[0]) && line[4] == '-'
	if m := matchIf(digitDate && line[10] == ' ', reKServe, line); m != nil {
		s.recognized(t)
		ns := dateNs(m[1], m[2], m[3], m[4], m[5], m[6], m[7])
		msg := m[9]
		if strings.HasPrefix(m[8], "uvicorn") {
			msg = strings.TrimSpace(msg)
		}
		s.vllmMessage(n, &ns, msg)
		return
	}
	if m := matchIf(c0 == '[' && !strings.HasPrefix(t, "[GIN]"), reSGLang, line); m != nil {
		s.recognized(t)
		ns := dateNs(m[1], m[2], m[3], m[4], m[5], m[6], m[7])
		s.sglangMessage(n, ns, m[8], false)
		return
	}
	if m := matchIf(digitDate && line[10] == 'T', reRFC, line); m != nil {
		s.recognized(t)
		ts, err := time.Parse(time.RFC3339Nano, m[1])
		var p *int64
		if err == nil {
			p = ingest.Ptr(ts.UnixNano())
		}
		s.tgiMessage(n, p, m[3])
		return
	}
	if m := matchIf(isDigit(c0), reLlamaTS, line); m != nil {
		s.recognized(t)
		h := 0
		if m[1] != "" {
			h, _ = strconv.Atoi(m[1])
		}
		mi, _ := strconv.Atoi(m[2])
		sec, _ := strconv.Atoi(m[3])
		ms, _ := strconv.Atoi(m[4])
		us, _ := strconv.Atoi(m[5])
		ns := (int64(h)*3600+int64(mi)*60+int64(sec))*1e9 + int64(ms)*1e6 + int64(us)*1e3
		s.llamaMessage(n, &ns, m[7])
		return
	}
	if m := matchIf(strings.HasPrefix(t, "[GIN]"), reGIN, t); m != nil {
		s.recognized(t)
		s.gin(n, m)
		return
	}
	if strings.HasPrefix(t, "INFO [") && strings.Contains(t, "print_timings]") || strings.Contains(t, "print_timings") && strings.Contains(t, "id_task=") {
		s.recognized(t)
		s.llamaLegacy(n, t)
		return
	}
	if m := matchIf(strings.HasPrefix(t, "INFO:"), reUvicorn, t); m != nil {
		s.recognized(t)
		code, _ := strconv.Atoi(m[3])
		s.access[code]++
		s.counts["access"]++
		return
	}
	if strings.HasPrefix(t, "INFO:") && reUvicorn2.MatchString(t) {
		s.recognized(t)
		s.counts["server_lifecycle"]++
		return
	}
	if m := reLevel.FindStringSubmatch(line); m != nil {
		s.recognized(t)
		s.tgiMessage(n, nil, m[2])
		return
	}
	if reProm.MatchString(t) {
		s.counts["prometheus"]++
		return
	}
	if reSlotMisc.MatchString(t) {
		s.counts["llamacpp_context"]++
		return
	}
	if rePyWarning.MatchString(t) {
		// a Python warning printed to stderr; its source line follows,
		// indented
		s.counts["python_warning"]++
		s.inRecord, s.open = true, true
		return
	}
	if reTraceback.MatchString(t) {
		// a traceback printed to stderr (after an ERROR line, or alone)
		s.cont++
		s.inRecord, s.open = true, true
		return
	}
	indented := line[0] == ' ' || line[0] == '\t'
	if s.open || s.inRecord && indented {
		// a continuation of a multi-line record: a traceback, a prompt or
		// chat template echoed at DEBUG, an indented pretty-print
		s.cont++
		return
	}
	s.unknownLine(n)
}

// recognized records that line t (prefixes stripped) was a known line
// shape; whether the lines after it may continue it is mayContinue's call.
func (s *textState) recognized(t string) {
	s.inRecord = true
	s.open = mayContinue(t)
}

var (
	reTraceback = regexp.MustCompile(`^(?:Traceback \(most recent call last\):|During handling of the above exception|The above exception was the direct cause)`)
	rePyWarning = regexp.MustCompile(`^\S+\.py:\d+: \w*Warning: `)
)

// mayContinue reports whether a recognized line t may be followed by
// continuation lines that start no record: lines at a level other than
// INFO (DEBUG echoes of prompts and chat templates, ERROR lines followed by
// a traceback), a line ending in ':', or one with an unclosed quote or
// bracket (a value printed with its raw newlines). After any other line
// (a complete INFO record, an access line) a line that starts no record
// and is not indented is unknown: counted, never silently absorbed.
func mayContinue(t string) bool {
	for _, w := range []string{"DEBUG", "TRACE", "ERROR", "WARN", "CRITICAL", "Traceback", "Exception"} {
		if strings.Contains(t, w) {
			return true
		}
	}
	if strings.HasSuffix(t, ":") {
		return true
	}
	return strings.Count(t, `"`)%2 == 1 || strings.Count(t, "'")%2 == 1 || strings.Count(t, "{") > strings.Count(t, "}") ||
		strings.Count(t, "[") > strings.Count(t, "]") || strings.Count(t, "(") > strings.Count(t, ")")
}

// wordAfter returns the space-delimited word after marker in msg, without
// a trailing ':' or '.' ("Received request chatcmpl-x: params…" → "chatcmpl-x").
func wordAfter(msg, marker string) string {
	i := strings.Index(msg, marker)
	if i < 0 {
		return ""
	}
	w := msg[i+len(marker):]
	if j := strings.IndexByte(w, ' '); j >= 0 {
		w = w[:j]
	}
	return strings.TrimRight(w, ":.,")
}

// matchIf runs re on s only when the cheap precondition ok holds.
func matchIf(ok bool, re *regexp.Regexp, s string) []string {
	if !ok {
		return nil
	}
	return re.FindStringSubmatch(s)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (s *textState) unknownLine(n int) {
	if s.unknown == 0 {
		s.firstUnk = n
	}
	s.unknown++
}

// yearless decodes vLLM's "MM-DD HH:MM:SS" with the file's year; a month
// lower than the previous line's starts the next year.
func (s *textState) yearless(mo, d, h, mi, sec, frac string) *int64 {
	month, _ := strconv.Atoi(mo)
	if s.lastMon != 0 && time.Month(month) < s.lastMon {
		s.year++
		s.notes = append(s.notes, fmt.Sprintf("month went back from %d to %d: the log crossed a new year, now %d", s.lastMon, month, s.year))
	}
	s.lastMon = time.Month(month)
	ns := dateNs(strconv.Itoa(s.year), mo, d, h, mi, sec, frac)
	return &ns
}

func dateNs(y, mo, d, h, mi, sec, frac string) int64 {
	yy, _ := strconv.Atoi(y)
	mm, _ := strconv.Atoi(mo)
	dd, _ := strconv.Atoi(d)
	hh, _ := strconv.Atoi(h)
	mn, _ := strconv.Atoi(mi)
	ss, _ := strconv.Atoi(sec)
	ns := 0
	if frac != "" {
		f := (frac + "000000000")[:9]
		ns, _ = strconv.Atoi(f)
	}
	return localNs(yy, time.Month(mm), dd, hh, mn, ss, ns)
}

// vllmMessage handles the message part of a vLLM (or KServe-wrapped) line.
func (s *textState) vllmMessage(n int, ns *int64, msg string) {
	switch {
	case strings.Contains(msg, "Received request "):
		id := wordAfter(msg, "Received request ")
		if id == "" {
			s.counts["vllm_context"]++
			return
		}
		r := s.vllmRecord(n, id)
		if r.arrival == nil {
			r.arrival = ns
		}
		if i := strings.Index(msg, "max_tokens="); i >= 0 && r.maxTokens == nil {
			d := msg[i+len("max_tokens="):]
			j := 0
			for j < len(d) && isDigit(d[j]) {
				j++
			}
			r.maxTokens = atoi64(d[:j])
		}
	case strings.Contains(msg, "Added request "):
		id := wordAfter(msg, "Added request ")
		if id == "" {
			s.counts["vllm_context"]++
			return
		}
		r := s.vllmRecord(n, baseRequestID(id, s.byID))
		if r.arrival == nil {
			r.arrival = ns
		}
	case strings.Contains(msg, "Finished request ") && reFinished.MatchString(msg):
		s.counts["vllm_finished"]++
	case strings.Contains(msg, "Generated response ") && reGenResp.MatchString(msg):
		m := reGenResp.FindStringSubmatch(msg)
		r := s.vllmRecord(n, m[1])
		if t := reTokIDs.FindStringSubmatch(msg); t != nil && !strings.Contains(msg, "(streaming delta)") {
			cnt := int64(0)
			if strings.TrimSpace(t[1]) != "" {
				cnt = int64(strings.Count(t[1], ",") + 1)
			}
			r.out = &cnt
		}
		if f := reFinish.FindStringSubmatch(msg); f != nil && f[1] != "None" {
			r.finish = f[1]
			if f[1] == "abort" {
				r.status = "error"
				r.errText = "finish_reason: abort"
			}
		}
	case strings.Contains(msg, "Avg prompt throughput: ") && reStats.MatchString(msg):
		m := reStats.FindStringSubmatch(msg)
		ls := LoadSample{Line: n, Clock: "local", PromptTokensPerS: atof(m[1]), GenerationTokensPerS: atof(m[2]), Running: atof(m[3]),
			Waiting: nan, Swapped: nan, GPUKVCachePct: nan, CPUKVCachePct: nan, PrefixCacheHitRatePct: nan}
		if ns != nil {
			ls.TimeNs = ingest.Ptr(*ns)
		} else {
			ls.Clock = ""
		}
		for _, k := range reStatKV.FindAllStringSubmatch(msg, -1) {
			switch {
			case k[1] == "Swapped":
				ls.Swapped = atof(k[2])
			case k[1] == "Pending" || k[1] == "Waiting":
				ls.Waiting = atof(k[2])
			case k[3] == "GPU":
				ls.GPUKVCachePct = atof(k[4])
			case k[3] == "CPU":
				ls.CPUKVCachePct = atof(k[4])
			case k[5] != "":
				ls.PrefixCacheHitRatePct = atof(k[5])
			}
		}
		s.load = append(s.load, ls)
	default:
		if m := matchIf(strings.HasPrefix(strings.TrimSpace(msg), "INFO:"), reUvicorn, strings.TrimSpace(msg)); m != nil {
			code, _ := strconv.Atoi(m[3])
			s.access[code]++
			s.counts["access"]++
			return
		}
		s.counts["vllm_context"]++
	}
}

// vllmRecord returns the request-log record of external id, creating it.
func (s *textState) vllmRecord(n int, id string) *record {
	if r := s.byID[id]; r != nil {
		return r
	}
	r := &record{kind: KindVLLMRequestLog, where: fmt.Sprintf("line %d", n), id: id, clock: "local"}
	s.byID[id] = r
	s.add(r)
	return r
}

// reEngineSuffix is the random suffix recent vLLM appends to the external
// id for its engine-internal id ("chatcmpl-a269fdcb7c6ce890-a8a65d16").
var reEngineSuffix = regexp.MustCompile(`^(.+)-[0-9a-f]{8}$`)

// baseRequestID strips vLLM's engine suffix from an "Added request" id when
// the unsuffixed id is already known (or always, when it has the suffix
// form and a cmpl- prefix and is longer than a plain id).
func baseRequestID(id string, known map[string]*record) string {
	if known[id] != nil {
		return id
	}
	if m := reEngineSuffix.FindStringSubmatch(id); m != nil {
		if known[m[1]] != nil {
			return m[1]
		}
	}
	return id
}

// tgiMessage handles a TGI router line (TEXT format) after its timestamp.
func (s *textState) tgiMessage(n int, ts *int64, msg string) {
	if !strings.Contains(msg, "text_generation_router") && !strings.Contains(msg, "text_generation_launcher") {
		s.counts["other_level_line"]++
		return
	}
	if !strings.HasSuffix(strings.TrimSpace(msg), ": Success") || !strings.Contains(msg, "total_time=") {
		if strings.Contains(msg, ": Input: ") {
			s.counts["tgi_input_echo"]++
		} else {
			s.counts["tgi_context"]++
		}
		return
	}
	fields := map[string]string{}
	for _, m := range reTGIField.FindAllStringSubmatch(msg, -1) {
		fields[m[1]] = m[2] // the innermost (last) span's value wins
	}
	r := &record{kind: KindTGISuccess, where: fmt.Sprintf("line %d", n), clock: "unix"}
	if m := reTraceID.FindStringSubmatch(msg); m != nil {
		r.traceID = m[1]
	}
	s.tgiFields(r, fields, ts)
	s.add(r)
}

// tgiFields fills a TGI Success record from its span fields; ts is the
// event's timestamp (≈ the end), nil when the line has none.
func (s *textState) tgiFields(r *record, fields map[string]string, ts *int64) {
	get := func(k string) *int64 {
		v, ok := fields[k]
		if !ok {
			return nil
		}
		d, err := parseDuration(v)
		if err != nil {
			s.notes = append(s.notes, fmt.Sprintf("%s: %s=%q is not a duration", r.where, k, v))
			return nil
		}
		return &d
	}
	r.e2e = get("total_time")
	r.queue = get("queue_time")
	r.inference = get("inference_time")
	r.tpt = get("time_per_token")
	if ts != nil && r.e2e != nil {
		r.arrival = ingest.Ptr(*ts - *r.e2e)
	} else if ts == nil {
		s.counts["tgi_success_without_timestamp"]++
	}
}

// sglangMessage handles an SGLang log message ("Finish: obj=…, out=…").
func (s *textState) sglangMessage(n int, ts int64, msg string, cut bool) {
	switch {
	case strings.HasPrefix(msg, "Finish: "):
		r := &record{kind: KindSGLangFinish, where: fmt.Sprintf("line %d", n), clock: "unix"}
		if m := reSGRid.FindStringSubmatch(msg); m != nil {
			r.id = m[1]
		}
		if m := reSGReceived.FindStringSubmatch(msg); m != nil {
			r.arrival = epochSecNs(m[1])
		}
		out := ""
		if i := strings.Index(msg, ", out={"); i >= 0 {
			out = msg[i:]
		}
		for _, m := range reSGMeta.FindAllStringSubmatch(out, -1) {
			v := m[2]
			switch m[1] {
			case "e2e_latency":
				r.e2e = r.sec("e2e_latency", atofV(v))
			case "queue_time":
				r.queue = r.sec("queue_time", atofV(v))
			case "prefill_latency":
				r.prefill = r.sec("prefill_latency", atofV(v))
			case "prompt_tokens":
				r.in = atoi64(v)
			case "completion_tokens":
				r.out = atoi64(v)
			case "id":
				if r.id == "" {
					r.id = strings.Trim(v, "'")
				}
			}
		}
		if m := reSGFinish.FindStringSubmatch(out); m != nil {
			r.finish = m[1]
			if r.finish == "abort" {
				r.status, r.errText = formats.StatusError, "finish_reason: abort"
			}
		}
		if out == "" {
			r.status = "ok"
			s.notes = append(s.notes, fmt.Sprintf("line %d: the Finish record has no out={…meta_info…} part (cut off?): only rid and received_time imported", n))
		}
		s.add(r)
	case strings.HasPrefix(msg, "Receive: ") || strings.HasPrefix(msg, "Receive OpenAI"):
		s.counts["sglang_receive"]++
	case strings.HasPrefix(msg, "Prefill batch") || strings.HasPrefix(msg, "Decode batch"):
		s.counts["sglang_batch"]++
	default:
		if m := reUvicorn.FindStringSubmatch(strings.TrimSpace(msg)); m != nil {
			code, _ := strconv.Atoi(m[3])
			s.access[code]++
			s.counts["access"]++
			return
		}
		s.counts["sglang_context"]++
	}
}

// llamaMessage handles a llama.cpp server line after the elapsed-time
// prefix: the per-task print_timing block becomes one record at its
// "total time" line.
func (s *textState) llamaMessage(n int, ts *int64, msg string) {
	m := reSlot.FindStringSubmatch(msg)
	if m == nil {
		s.counts["llamacpp_context"]++
		return
	}
	key := m[1] + "/" + m[2]
	r := s.slots[key]
	if r == nil {
		r = &record{kind: KindLlamaCppSlot, where: fmt.Sprintf("line %d", n), id: "slot " + m[1] + " task " + m[2], clock: formats.ClockElapsed}
		s.slots[key] = r
	}
	v := r.ms(m[3], atofV(m[4]))
	switch m[3] {
	case "prompt eval time":
		r.prefill = v
		// prompt tokens evaluated: cached prefix tokens are not counted, so
		// this is not the ISL; kept out of input_tokens
	case "eval time":
		r.decode = v
		r.out = atoi64(m[5])
		if r.decode != nil && r.out != nil && *r.out > 0 {
			r.tpt = ingest.Ptr(*r.decode / *r.out)
		}
	case "total time":
		r.e2e = v
		if r.prefill != nil && r.decode != nil {
			r.inference = add(r.prefill, r.decode)
		}
		if ts != nil && v != nil {
			r.arrival = ingest.Ptr(*ts - *v)
		}
		delete(s.slots, key)
		s.add(r)
	}
}

// llamaLegacy handles the 2024 "INFO [print_timings] … | key=value …" lines.
func (s *textState) llamaLegacy(n int, t string) {
	_, tail, ok := strings.Cut(t, " | ")
	if !ok {
		s.counts["llamacpp_context"]++
		return
	}
	kv := map[string]string{}
	for _, m := range reKV.FindAllStringSubmatch(tail, -1) {
		kv[m[1]] = strings.Trim(m[2], `"`)
	}
	s.llamaLegacyKV(n, kv)
}

// llamaLegacyKV handles the key=value pairs of one print_timings line (of
// the text log's tail, or of a JSON log line): id_slot and id_task (before
// mid-2024 slot_id and task_id), t_prompt_processing, t_token_generation,
// n_decoded, t_token, t_total, timestamp.
func (s *textState) llamaLegacyKV(n int, kv map[string]string) {
	for old, cur := range map[string]string{"slot_id": "id_slot", "task_id": "id_task"} {
		if _, ok := kv[cur]; !ok {
			if v, ok := kv[old]; ok {
				kv[cur] = v
			}
		}
	}
	key := kv["id_slot"] + "/" + kv["id_task"]
	r := s.legacy[key]
	if r == nil {
		r = &record{kind: KindLlamaCppLegacy, where: fmt.Sprintf("line %d", n), id: "slot " + kv["id_slot"] + " task " + kv["id_task"], clock: "unix"}
		s.legacy[key] = r
	}
	if v, ok := kv["t_prompt_processing"]; ok {
		r.prefill = r.ms("t_prompt_processing", atofV(v))
	}
	if v, ok := kv["t_token_generation"]; ok {
		r.decode = r.ms("t_token_generation", atofV(v))
	}
	if v, ok := kv["n_decoded"]; ok {
		r.out = atoi64(v)
	}
	if v, ok := kv["t_token"]; ok && kv["n_decoded"] != "" {
		r.tpt = r.ms("t_token", atofV(v))
	}
	if v, ok := kv["t_total"]; ok {
		r.e2e = r.ms("t_total", atofV(v))
		r.inference = add(r.prefill, r.decode)
		if ts := atoi64(kv["timestamp"]); ts != nil && r.e2e != nil {
			r.arrival = ingest.Ptr(*ts*1e9 - *r.e2e)
		}
		delete(s.legacy, key)
		s.add(r)
	}
}

// inferencePaths are the Ollama routes that run the model.
var inferencePaths = map[string]bool{"/api/generate": true, "/api/chat": true, "/v1/chat/completions": true, "/v1/completions": true, "/api/embed": true, "/api/embeddings": true, "/v1/embeddings": true}

// gin handles an Ollama GIN access line.
func (s *textState) gin(n int, m []string) {
	code, _ := strconv.Atoi(m[7])
	if m[10] != "POST" || !inferencePaths[m[11]] {
		s.counts["ollama_access_other"]++
		return
	}
	end := dateNs(m[1], m[2], m[3], m[4], m[5], m[6], "")
	d, err := parseDuration(m[8])
	r := &record{kind: KindOllamaGIN, where: fmt.Sprintf("line %d", n), clock: formats.ClockLocal}
	if err != nil {
		s.notes = append(s.notes, fmt.Sprintf("line %d: latency %q is not a Go duration", n, m[8]))
	} else {
		r.e2e = &d
		// the GIN timestamp is taken when the handler returns (second
		// resolution); arrival = end − latency
		r.arrival = ingest.Ptr(end - d)
	}
	if code >= 400 {
		r.status = "error"
		r.errCode = ingest.Ptr(int64(code))
	}
	s.add(r)
}

// finish closes open multi-line records at the end of the input.
func (s *textState) finish(lastCut bool, lastLine int) {
	for _, m := range []map[string]*record{s.slots, s.legacy} {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			s.notes = append(s.notes, fmt.Sprintf("%s: timing block of %s has no \"total time\" line (cut off): not imported", m[k].where, m[k].id))
		}
	}
	if lastCut {
		s.cut = fmt.Sprintf("line %d (from byte %d) is the last and has no line ending: the file was cut there", lastLine, s.lastStart)
		if s.cutPartial {
			s.cut += " (the partial line matches no record shape: not imported)"
		}
	}
	sort.SliceStable(s.recs, func(i, j int) bool { return lineOf(s.recs[i].where) < lineOf(s.recs[j].where) })
}

func lineOf(where string) int {
	i := strings.LastIndexByte(where, ' ')
	n, _ := strconv.Atoi(where[i+1:])
	return n
}

// jsonLine handles a line holding one JSON object (JSONL logs, bodies).
func (s *textState) jsonLine(n int, t string) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(t), &obj); err != nil {
		if s.open {
			s.cont++
			return
		}
		s.unknownLine(n)
		return
	}
	s.inRecord, s.open = true, false
	s.jsonObject(fmt.Sprintf("line %d", n), obj)
}
