package sse

import (
	"reflect"
	"testing"
)

// reads builds reads at times 100, 200, 300, … ns.
func reads(chunks ...string) []Read {
	out := make([]Read, len(chunks))
	for i, c := range chunks {
		out[i] = Read{Data: c, TimeNs: int64(100 * (i + 1))}
	}
	return out
}

func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		reads []Read
		want  []Message
	}{
		{
			name:  "one event in one read",
			reads: reads("data: {\"a\":1}\n\n"),
			want:  []Message{{ReadIndex: 0, TimeNs: 100, Bytes: 15, Data: `{"a":1}`, HasData: true}},
		},
		{
			name:  "several events in one read share its time",
			reads: reads("data: a\n\ndata: b\n\ndata: [DONE]\n\n"),
			want: []Message{
				{ReadIndex: 0, TimeNs: 100, Bytes: 9, Data: "a", HasData: true},
				{ReadIndex: 0, TimeNs: 100, Bytes: 9, Data: "b", HasData: true},
				{ReadIndex: 0, TimeNs: 100, Bytes: 14, Data: "[DONE]", HasData: true},
			},
		},
		{
			name:  "event split across three reads completes with the blank line",
			reads: reads(`data: {"a"`, ":1}\n", "\n"),
			want:  []Message{{ReadIndex: 2, TimeNs: 300, Bytes: 15, Data: `{"a":1}`, HasData: true}},
		},
		{
			name:  "second event split, first complete in the first read",
			reads: reads("data: a\n\ndata: b", "b\n\n"),
			want: []Message{
				{ReadIndex: 0, TimeNs: 100, Bytes: 9, Data: "a", HasData: true},
				{ReadIndex: 1, TimeNs: 200, Bytes: 10, Data: "bb", HasData: true},
			},
		},
		{
			name:  "CRLF line endings",
			reads: reads("data: a\r\n\r\ndata: b\r\n\r\n"),
			want: []Message{
				{ReadIndex: 0, TimeNs: 100, Bytes: 11, Data: "a", HasData: true},
				{ReadIndex: 0, TimeNs: 100, Bytes: 11, Data: "b", HasData: true},
			},
		},
		{
			name:  "CR-only line endings",
			reads: reads("data: a\r\rdata: b\r\r"),
			want: []Message{
				{ReadIndex: 0, TimeNs: 100, Bytes: 9, Data: "a", HasData: true},
				{ReadIndex: 0, TimeNs: 100, Bytes: 9, Data: "b", HasData: true},
			},
		},
		{
			name:  "CRLF split inside a data line's terminator",
			reads: reads("data: a\r", "\n\r\n"),
			want:  []Message{{ReadIndex: 1, TimeNs: 200, Bytes: 11, Data: "a", HasData: true}},
		},
		{
			name:  "CRLF of the blank line split: message completes at the CR, LF counts with the next",
			reads: reads("data: a\r\n\r", "\ndata: b\r\n\r\n"),
			want: []Message{
				{ReadIndex: 0, TimeNs: 100, Bytes: 10, Data: "a", HasData: true},
				{ReadIndex: 1, TimeNs: 200, Bytes: 12, Data: "b", HasData: true},
			},
		},
		{
			name:  "final message without blank line is flushed with the last read",
			reads: reads("data: a\n\n", "data: [DONE]"),
			want: []Message{
				{ReadIndex: 0, TimeNs: 100, Bytes: 9, Data: "a", HasData: true},
				{ReadIndex: 1, TimeNs: 200, Bytes: 12, Data: "[DONE]", HasData: true},
			},
		},
		{
			name:  "final message with one newline is flushed",
			reads: reads("data: a\n", ""),
			want:  []Message{{ReadIndex: 1, TimeNs: 200, Bytes: 8, Data: "a", HasData: true}},
		},
		{
			name:  "whitespace keep-alive padding produces no message and counts with the next",
			reads: reads("\n         \n\n", "         \n", "data: a\n\n"),
			want:  []Message{{ReadIndex: 2, TimeNs: 300, Bytes: 12 + 10 + 9, Data: "a", HasData: true}},
		},
		{
			name:  "comment-only block is a comment message",
			reads: reads(": OPENROUTER PROCESSING\n\ndata: a\n\n"),
			want: []Message{
				{ReadIndex: 0, TimeNs: 100, Bytes: 25, Comment: true},
				{ReadIndex: 0, TimeNs: 100, Bytes: 9, Data: "a", HasData: true},
			},
		},
		{
			name:  "comment inside a data message is ignored",
			reads: reads(": ping\ndata: a\n\n"),
			want:  []Message{{ReadIndex: 0, TimeNs: 100, Bytes: 16, Data: "a", HasData: true}},
		},
		{
			name:  "data lines joined with newline; event and id kept",
			reads: reads("event: error\nid: 7\ndata: line1\ndata:line2\ndata:  two spaces\n\n"),
			want: []Message{{ReadIndex: 0, TimeNs: 100, Bytes: 61, Data: "line1\nline2\n two spaces",
				HasData: true, Event: "error", ID: "7"}},
		},
		{
			name:  "bare data field has empty data",
			reads: reads("data\n\n"),
			want:  []Message{{ReadIndex: 0, TimeNs: 100, Bytes: 6, HasData: true}},
		},
		{
			name:  "retry field makes a non-comment message without data",
			reads: reads("retry: 1000\n\n"),
			want:  []Message{{ReadIndex: 0, TimeNs: 100, Bytes: 13}},
		},
		{
			// "da@@garbage@@ta: …": the standard ignores the line; Unknown
			// keeps its name (the first such line's) so importers can tell
			name:  "lines that are not SSE fields are named in Unknown",
			reads: reads("da@@x@@ta: {\"a\":1}\nfoo\n\ndata: b\nbar\n\n"),
			want: []Message{
				{ReadIndex: 0, TimeNs: 100, Bytes: 24, Unknown: "da@@x@@ta"},
				{ReadIndex: 0, TimeNs: 100, Bytes: 13, Data: "b", HasData: true, Unknown: "bar"},
			},
		},
		{
			name:  "nothing",
			reads: reads(),
		},
		{
			name:  "only padding",
			reads: reads("\r\n  \n\t\n", "   "),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Parse(tt.reads)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestParserReuse checks that End resets the parser for the next stream.
func TestParserReuse(t *testing.T) {
	var p Parser
	out := p.Feed(nil, 0, 1, "data: a\r")
	out = p.End(out)
	out = p.Feed(out, 0, 2, "\ndata: b\n\n")
	want := []Message{
		{ReadIndex: 0, TimeNs: 1, Bytes: 8, Data: "a", HasData: true},
		{ReadIndex: 0, TimeNs: 2, Bytes: 10, Data: "b", HasData: true},
	}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("got %+v\nwant %+v", out, want)
	}
}

func TestLooksLikeSSE(t *testing.T) {
	tests := []struct {
		body        string
		isSSE, sure bool
	}{
		{"data: {}", true, true},
		{"\n  \n data:{}", true, true},
		{"data\n\n", true, true},
		{"event: error\n", true, true},
		{"id: 1\n", true, true},
		{"retry: 10\n", true, true},
		{": keep-alive\n\ndata: x", true, true},
		{": OPENROUTER PROCESSING\n\n{\"id\":\"x\"}", false, true},
		{`{"id":"x"}`, false, true},
		{"\n         \n{\"a\":1}", false, true},
		{"<html>", false, true},
		{"database", false, true},
		{"idle", false, true},
		{": keep-alive\n\n", true, false},
		{": keep-al", true, false},
		{"\n   \n", false, false},
		{"", false, false},
		{"da", false, false},
		{"  retr", false, false},
	}
	for _, tt := range tests {
		isSSE, sure := LooksLikeSSE(tt.body)
		if isSSE != tt.isSSE || sure != tt.sure {
			t.Errorf("LooksLikeSSE(%q) = %v, %v; want %v, %v", tt.body, isSSE, sure, tt.isSSE, tt.sure)
		}
	}
}

func TestSkipPreamble(t *testing.T) {
	for in, want := range map[string]string{
		"\n  \n{}":                      "{}",
		": PROCESSING\r\n\r\n: x\n {} ": "{} ",
		": only":                        "",
		"{}":                            "{}",
	} {
		if got := SkipPreamble(in); got != want {
			t.Errorf("SkipPreamble(%q) = %q, want %q", in, got, want)
		}
	}
}
