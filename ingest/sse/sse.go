// Package sse splits a streamed HTTP response body, as a client received it
// in network reads, into Server-Sent Events messages, and classifies the
// OpenAI-style JSON those messages carry (see Classify).
//
// It sits below the importers: ingest/genaiperf feeds it perf_analyzer's
// per-read response_outputs; other importers holding raw SSE bytes with read
// times can do the same. It knows nothing of formats' tables except the
// event kind names (formats.Kind*).
//
// # Framing
//
// The framing follows the WHATWG HTML "Server-sent events" parsing rules
// (section 9.2.6, "Interpreting an event stream"): a line ends at "\r\n",
// "\n" or "\r"; a blank line ends a message; "name:value" lines set a field,
// one space after the colon is dropped; a line with no colon is a field with
// an empty value; lines starting with ":" are comments; several "data" lines
// are joined with "\n". Deviations, all deliberate:
//
//   - A line of only spaces and tabs counts as blank. OpenRouter pads
//     responses with such lines as keep-alives (testdata/genai-perf corpus,
//     SOURCE.md); the standard would read them as unknown fields.
//   - A message is produced for every non-empty block, not only for blocks
//     with data: a block of only comment lines (": OPENROUTER PROCESSING", a
//     keep-alive) is a Message with Comment set, and an "event:" or "id:"
//     block without data is a Message too. The client did receive those
//     bytes, and formats.KindOther exists to record them; an importer that
//     wants the standard's behaviour skips messages with !HasData.
//   - Blank lines between messages (whitespace padding) produce nothing.
//   - Message.ID is the message's own "id" field, not the standard's
//     "last event ID" that persists across messages.
//   - A leading byte-order mark is not stripped (no server in our corpus
//     sends one; it would make the first line an unknown field).
//   - At end of stream (Parser.End) an unterminated last message is
//     delivered, where the standard discards it: perf_analyzer records the
//     final read even when the server closed without the blank line.
//
// # Times
//
// A message arrives when the read holding the end of its terminating blank
// line arrives: an event split across two reads completes with the second,
// and several events in one read share its time. Message.ReadIndex and
// Message.TimeNs record that read.
package sse

import "strings"

// Read is one network read of a response body: the bytes the client got in
// one receive call and when (nanoseconds, in whatever clock the caller
// uses; GenAI-Perf's response_timestamps are Unix ns).
type Read struct {
	// Data is the bytes of the read (any encoding; SSE is UTF-8 by
	// specification but the parser works on bytes).
	Data string
	// TimeNs is when the read arrived, in ns.
	TimeNs int64
}

// Message is one SSE message (a block of lines ended by a blank line, or by
// the end of the stream).
type Message struct {
	// ReadIndex is the 0-based index of the read that completed the message
	// (the read holding the end of its terminating blank line, or the last
	// read fed for a message flushed by Parser.End).
	ReadIndex int
	// TimeNs is that read's time.
	TimeNs int64
	// Bytes is the number of input bytes consumed since the previous message
	// was completed, up to and including this message's terminating blank
	// line: any leading blank or whitespace padding is counted with the
	// message that follows it. Summed over all messages this is the stream's
	// length less any trailing padding after the last message — except that
	// when a "\r\n" ending a message's blank line is split across two reads,
	// its "\n" is counted with the next message.
	Bytes int
	// Data is the message's data lines joined with "\n" (without the final
	// newline), "" when it has none.
	Data string
	// HasData is true when the message had at least one "data" line (Data
	// may still be "", for "data:" with nothing after it).
	HasData bool
	// Event is the value of the message's last "event" line; "" if none.
	Event string
	// ID is the value of the message's last "id" line; "" if none.
	ID string
	// Comment is true when the message consisted only of comment lines
	// (lines starting with ":"), e.g. a keep-alive.
	Comment bool
	// Unknown is the field name of the message's first line that is
	// neither a comment nor one of the standard's fields (data, event, id,
	// retry) — the text before its first ":", or the whole line — and ""
	// when there is none. The standard ignores such lines; in a recorded
	// response they are text that is not SSE (a damaged stream, or a
	// non-SSE body mistaken for one).
	Unknown string
}

// Parser splits a stream fed read by read into messages. The zero value is
// ready to use; Reset makes it reusable for another stream. A Parser keeps
// only the incomplete last line and the message being built, so its memory
// is bounded by the longest message, not by the stream.
type Parser struct {
	partial  []byte // bytes of the current line not yet ended
	skipLF   bool   // the last read ended with "\r": drop a leading "\n"
	consumed int    // bytes consumed since the last completed message
	lastRead int
	lastTime int64
	fed      bool

	// the message being built
	open    bool   // a non-blank line has been seen
	data1   string // the first data line's value
	multi   bool   // more than one data line: the joined value is in data
	data    []byte
	hasData bool
	event   string
	id      string
	unknown string // the first unknown field name
	fields  bool   // a line other than a comment has been seen
}

// Reset clears the parser's state for a new stream.
func (p *Parser) Reset() {
	*p = Parser{partial: p.partial[:0], data: p.data[:0]}
}

// Feed parses one read (index read, arrival time timeNs) and appends every
// message it completes to dst, returning the extended slice. Reads must be
// fed in arrival order; read indices are the caller's and are copied into
// the messages as they are.
func (p *Parser) Feed(dst []Message, read int, timeNs int64, chunk string) []Message {
	p.lastRead, p.lastTime, p.fed = read, timeNs, true
	i := 0
	if p.skipLF && len(chunk) > 0 {
		p.skipLF = false
		if chunk[0] == '\n' {
			i = 1
			p.consumed++
		}
	}
	// Most streams have no "\r": then a line ends at the next "\n", found
	// by the vectorized IndexByte rather than IndexAny's byte loop.
	hasCR := strings.IndexByte(chunk[i:], '\r') >= 0
	for i < len(chunk) {
		var j int
		if hasCR {
			j = strings.IndexAny(chunk[i:], "\r\n")
		} else {
			j = strings.IndexByte(chunk[i:], '\n')
		}
		if j < 0 {
			p.partial = append(p.partial, chunk[i:]...)
			p.consumed += len(chunk) - i
			break
		}
		end := i + j
		term := 1
		if chunk[end] == '\r' {
			if end+1 < len(chunk) {
				if chunk[end+1] == '\n' {
					term = 2
				}
			} else {
				p.skipLF = true
			}
		}
		p.consumed += j + term
		line := chunk[i:end]
		if len(p.partial) > 0 {
			p.partial = append(p.partial, line...)
			line = string(p.partial)
			p.partial = p.partial[:0]
		}
		dst = p.line(dst, line)
		i = end + term
	}
	return dst
}

// End ends the stream: an unterminated last line is taken as complete, and
// a message still being built is appended to dst with the index and time
// of the last read fed. The parser is then Reset.
func (p *Parser) End(dst []Message) []Message {
	if len(p.partial) > 0 {
		line := string(p.partial)
		p.partial = p.partial[:0]
		dst = p.line(dst, line)
	}
	if p.open && p.fed {
		dst = p.dispatch(dst)
	}
	p.Reset()
	return dst
}

// Parse is the one-call form: it feeds every read in order, then ends the
// stream. Read i has read index i.
func Parse(reads []Read) []Message {
	var p Parser
	var out []Message
	for i, r := range reads {
		out = p.Feed(out, i, r.TimeNs, r.Data)
	}
	return p.End(out)
}

// line handles one complete line (without its terminator).
func (p *Parser) line(dst []Message, line string) []Message {
	if isBlank(line) {
		if p.open {
			dst = p.dispatch(dst)
		}
		return dst
	}
	p.open = true
	if line[0] == ':' {
		return dst
	}
	p.fields = true
	name, value, _ := strings.Cut(line, ":")
	value = strings.TrimPrefix(value, " ")
	switch name {
	case "data":
		// The first data line is kept as a string (no copy: it is part of
		// the caller's chunk, or a line already joined from partials);
		// further lines are joined in p.data.
		switch {
		case !p.hasData:
			p.data1, p.multi = value, false
		case !p.multi:
			p.data = append(append(append(p.data[:0], p.data1...), '\n'), value...)
			p.multi = true
		default:
			p.data = append(append(p.data, '\n'), value...)
		}
		p.hasData = true
	case "event":
		p.event = value
	case "id":
		p.id = value
	case "retry":
	default:
		if p.unknown == "" {
			p.unknown = strings.Clone(name)
		}
	}
	return dst
}

// dispatch appends the message being built and starts a new one.
func (p *Parser) dispatch(dst []Message) []Message {
	m := Message{
		ReadIndex: p.lastRead,
		TimeNs:    p.lastTime,
		Bytes:     p.consumed,
		HasData:   p.hasData,
		Event:     p.event,
		ID:        p.id,
		Comment:   !p.fields,
		Unknown:   p.unknown,
	}
	switch {
	case p.multi:
		m.Data = string(p.data)
	case p.hasData:
		m.Data = p.data1
	}
	dst = append(dst, m)
	p.consumed = 0
	p.open, p.hasData, p.fields, p.multi = false, false, false, false
	p.data, p.data1 = p.data[:0], ""
	p.event, p.id, p.unknown = "", "", ""
	return dst
}

// isBlank reports whether line holds only spaces and tabs.
func isBlank(line string) bool {
	for i := 0; i < len(line); i++ {
		if line[i] != ' ' && line[i] != '\t' {
			return false
		}
	}
	return true
}

// LooksLikeSSE reports whether body — a whole response, or as much of its
// beginning as has arrived — is an SSE stream rather than a whole
// (non-streaming) body, and whether that can be told yet (sure).
//
// Leading whitespace (keep-alive padding) and ":" comment lines are
// skipped; the first other line decides: an SSE field name ("data",
// "event", "id", "retry") followed by ":" or the line's end means a
// stream, anything else ("{", "[", an HTML error page) a whole body. While
// body holds only padding and comments, or the start of a line too short
// to tell ("da"), sure is false and isSSE says whether a comment was seen:
// comments alone are SSE keep-alives, whitespace alone is a body's padding.
//
// GenAI-Perf tests only for a "data:" prefix on each response
// (genai_perf/utils.py remove_sse_prefix, perf_analyzer 263c5f6 lines
// 69-73); skipping comments first keeps a body that OpenRouter-style
// ": PROCESSING" keep-alives precede from being read as a stream.
func LooksLikeSSE(body string) (isSSE, sure bool) {
	comment := strings.HasPrefix(strings.TrimLeft(body, " \t\r\n"), ":")
	body = SkipPreamble(body)
	if body == "" {
		return comment, false
	}
	for _, f := range [...]string{"data", "event", "id", "retry"} {
		switch {
		case len(body) <= len(f) && strings.HasPrefix(f, body):
			return false, false
		case strings.HasPrefix(body, f) && strings.ContainsRune(":\r\n", rune(body[len(f)])):
			return true, true
		}
	}
	return false, true
}

// SkipPreamble returns body without its leading whitespace and ":" comment
// lines (keep-alive padding before a non-streaming body).
func SkipPreamble(body string) string {
	for {
		body = strings.TrimLeft(body, " \t\r\n")
		if !strings.HasPrefix(body, ":") {
			return body
		}
		i := strings.IndexAny(body, "\r\n")
		if i < 0 {
			return ""
		}
		body = body[i:]
	}
}
