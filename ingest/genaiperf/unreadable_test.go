package genaiperf

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// importWarn imports path, returning the rows and the warnings.
func importWarn(t *testing.T, path string) (*formats.Collector, []string) {
	t.Helper()
	var col formats.Collector
	var warns []string
	if err := ingest.ImportFile(New(), path, ingest.Options{Warn: func(s string) { warns = append(warns, s) }}, &col); err != nil {
		t.Fatalf("Import: %v", err)
	}
	return &col, warns
}

// TestUnreadableBodyCorpus is the newcomer's case: "@@garbage@@" inserted
// in a non-streaming response body of a real export (the file stays valid
// JSON). The request is kept and counted as an error, with a warning naming
// the file, the request, the response output and the byte.
func TestUnreadableBodyCorpus(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(corpusDir, "openrouter-llama31-8b-c1-nonstream", "profile_export.json"))
	if err != nil {
		t.Fatal(err)
	}
	// request 17's body: "\n" + 9 spaces + "\n" (11 bytes of keep-alive
	// padding), then {"id":"gen-1761863343-mCZBYQdvvE4nFYoyVlLf", (44
	// bytes): the '@' is byte 55 of the body.
	anchor := []byte(`{\"id\":\"gen-1761863343-mCZBYQdvvE4nFYoyVlLf\",`)
	if bytes.Count(b, anchor) != 1 {
		t.Fatal("anchor not found once")
	}
	b = bytes.Replace(b, anchor, append(append([]byte(nil), anchor...), "@@garbage@@"...), 1)
	if !json.Valid(b) {
		t.Fatal("the damaged file should still be valid JSON")
	}
	path := filepath.Join(t.TempDir(), "profile_export.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	col, warns := importWarn(t, path)
	by := map[string]int{}
	for _, r := range col.Requests {
		by[r.Status]++
	}
	if len(col.Requests) != 39 || by[formats.StatusOK] != 38 || by[formats.StatusError] != 1 || col.Runs[0].RequestCount != 39 {
		t.Fatalf("%d requests %v", len(col.Requests), by)
	}
	r := col.Requests[17]
	const why = "byte 55 of the body: invalid character '@' looking for beginning of object key string"
	if r.Status != formats.StatusError || r.ErrorType != ErrorTypeUnparseable ||
		r.ErrorText != "response_outputs[0]: the response body is not JSON ("+why+")" || r.MessageCount != 1 || r.TokenMessageCount != 0 {
		t.Errorf("request 17: %+v", r)
	}
	var ev []formats.Event
	for _, e := range col.Events {
		if e.RequestKey == 17 {
			ev = append(ev, e)
		}
	}
	if len(ev) != 1 || ev[0].Kind != formats.KindOther || ev[0].Bytes == 0 {
		t.Errorf("request 17 events %+v", ev)
	}
	note := "experiment 0, request 17, response_outputs[0] (" + why + "): the response body is not JSON; the request is kept with status error, error_type unparseable_response"
	if len(warns) != 1 || warns[0] != path+": "+note {
		t.Errorf("warnings %q\nwant [%q]", warns, path+": "+note)
	}
	if !hasNote(col.Runs[0], note) {
		t.Errorf("notes %q", col.Runs[0].Notes)
	}
}

// TestUnreadableResponses: streamed messages whose data is not JSON, JSON
// that is not an object, lines that are not SSE, and a plain-text body make
// their request an error (kept, events kept); readable but unknown JSON,
// an empty body and [DONE] do not.
func TestUnreadableResponses(t *testing.T) {
	role := `data: {"choices":[{"delta":{"role":"assistant"}}]}` + "\n\n"
	content := func(s string) string { return `data: {"choices":[{"delta":{"content":"` + s + `"}}]}` + "\n\n" }
	done := "data: [DONE]\n\n"
	type req struct {
		stream bool
		reads  []string
	}
	reqs := []req{
		// 0: message 2's data breaks at byte 32: {"choices":[{"delta":{"content": is 32 bytes
		{true, []string{role, content("a"), `data: {"choices":[{"delta":{"content":@@garbage@@}}]}` + "\n\n", content("b") + done}},
		// 1: JSON, not an object
		{true, []string{"data: 42\n\n", done}},
		// 2: "data:" damaged into an unknown field: the chunk would be lost
		{true, []string{role, `da@@garbage@@ta: {"choices":[{"delta":{"content":"a"}}]}` + "\n\n", done}},
		// 3: a proxy's plain-text error page
		{false, []string{"Internal Server Error"}},
		// 4: a body cut inside the JSON (byte 12 = its end)
		{false, []string{`{"choices":[`}},
		// 5, 6, 7: readable: an unknown JSON object, an empty body, a stream of only [DONE]
		{false, []string{`{"foo":1}`}},
		{false, []string{""}},
		{true, []string{done}},
		// 8: the same damage as request 1 again: counted in the same note
		{true, []string{"data: 43\n\n", done}},
	}
	var out bytes.Buffer
	out.WriteString(`{"experiments":[{"experiment":{"mode":"concurrency","value":1},"requests":[`)
	for i, r := range reqs {
		if i > 0 {
			out.WriteByte(',')
		}
		payload, _ := json.Marshal(map[string]any{"stream": r.stream})
		var ts []int64
		var outs []map[string]string
		for k, body := range r.reads {
			ts = append(ts, int64(1000*(i+1)+100*(k+1)))
			outs = append(outs, map[string]string{"response": body})
		}
		el, _ := json.Marshal(map[string]any{"timestamp": 1000 * (i + 1), "request_inputs": map[string]string{"payload": string(payload)},
			"response_timestamps": ts, "response_outputs": outs})
		out.Write(el)
	}
	out.WriteString(`]}],"version":"test","service_kind":"openai","endpoint":"v1/chat/completions"}`)
	path := filepath.Join(t.TempDir(), "profile_export.json")
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	col, warns := importWarn(t, path)
	if len(col.Requests) != len(reqs) {
		t.Fatalf("%d requests", len(col.Requests))
	}
	want := []struct{ status, errType, errText string }{
		{"error", ErrorTypeUnparseable, "SSE message 2 (ending in response_outputs[2]) has data that is not JSON (nor [DONE]) (byte 32 of the data: invalid character '@' looking for beginning of value)"},
		{"error", ErrorTypeUnparseable, "SSE message 0 (ending in response_outputs[0]) has data that is JSON but not an object (nor [DONE]) (byte 0 of the data: it starts \"42\")"},
		{"error", ErrorTypeUnparseable, "SSE message 1 (ending in response_outputs[1]) is not SSE (a line \"da@@garbage@@ta\" is not an SSE field or comment)"},
		{"error", ErrorTypeUnparseable, "response_outputs[0]: the response body is not JSON (byte 0 of the body: invalid character 'I' looking for beginning of value)"},
		{"error", ErrorTypeUnparseable, "response_outputs[0]: the response body is not JSON (byte 12 of the body: unexpected end of JSON input)"},
		{"empty", "", ""},
		{"empty", "", ""},
		{"empty", "", ""},
		{"error", ErrorTypeUnparseable, "SSE message 0 (ending in response_outputs[0]) has data that is JSON but not an object (nor [DONE]) (byte 0 of the data: it starts \"43\")"},
	}
	for i, w := range want {
		r := col.Requests[i]
		if r.Status != w.status || r.ErrorType != w.errType || r.ErrorText != w.errText {
			t.Errorf("request %d: status %q type %q text %q\nwant %q %q %q", i, r.Status, r.ErrorType, r.ErrorText, w.status, w.errType, w.errText)
		}
	}
	// Request 0 keeps its events: role, "a", the unreadable message (kind
	// other), "b", [DONE]; its tokens still count.
	var kinds []string
	for _, e := range col.Events {
		if e.RequestKey == 0 {
			kinds = append(kinds, e.Kind)
		}
	}
	if strings.Join(kinds, " ") != "role content other content done" || col.Requests[0].TokenMessageCount != 2 {
		t.Errorf("request 0 events %v, %d token messages", kinds, col.Requests[0].TokenMessageCount)
	}
	p := path + ": "
	wantWarns := []string{
		p + "experiment 0, request 0, SSE message 2 ending in response_outputs[2] (byte 32 of the data: invalid character '@' looking for beginning of value): an SSE message has data that is not JSON (nor [DONE]); the request is kept with status error, error_type unparseable_response",
		p + "2 requests: an SSE message has data that is JSON but not an object (nor [DONE]); the request is kept with status error, error_type unparseable_response (first: experiment 0, request 1, SSE message 0 ending in response_outputs[0] (byte 0 of the data: it starts \"42\"))",
		p + "experiment 0, request 2, SSE message 1 ending in response_outputs[1] (a line \"da@@garbage@@ta\" is not an SSE field or comment): an SSE message is not SSE; the request is kept with status error, error_type unparseable_response",
		p + "2 requests: the response body is not JSON; the request is kept with status error, error_type unparseable_response (first: experiment 0, request 3, response_outputs[0] (byte 0 of the body: invalid character 'I' looking for beginning of value))",
	}
	if strings.Join(warns, "\n") != strings.Join(wantWarns, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warns, "\n"), strings.Join(wantWarns, "\n"))
	}
}

// TestWarningsNameTheFile: a remark about the whole file (here, the cut)
// is in every experiment's run notes but warned once, prefixed with the
// file's path, not with a run id.
func TestWarningsNameTheFile(t *testing.T) {
	var two *fixture
	for i := range fixtures {
		if fixtures[i].name == "two-experiments" {
			two = &fixtures[i]
		}
	}
	if two == nil {
		t.Fatal("no two-experiments fixture")
	}
	full := two.encode()
	// cut inside the second experiment's requests: both experiments have
	// begun, the file ends inside the second
	i := bytes.LastIndex(full, []byte(`"requests"`))
	j := i + bytes.Index(full[i:], []byte(`},{`)) + 2
	path := filepath.Join(t.TempDir(), "profile_export.json")
	if err := os.WriteFile(path, full[:j], 0o644); err != nil {
		t.Fatal(err)
	}
	col, warns := importWarn(t, path)
	if len(col.Runs) != 2 || !col.Runs[0].Truncated || !col.Runs[1].Truncated {
		t.Fatalf("runs %+v", col.Runs)
	}
	for _, r := range col.Runs {
		if !hasNote(r, "truncated: file ends at byte") {
			t.Errorf("run %s notes %q", r.RunID, r.Notes)
		}
	}
	if len(warns) != 1 || !strings.HasPrefix(warns[0], path+": truncated: file ends at byte "+itoa(j)+" inside experiment 1, request ") {
		t.Errorf("warnings %q", warns)
	}
}
