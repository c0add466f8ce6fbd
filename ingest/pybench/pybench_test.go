package pybench

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

func TestNonFinite(t *testing.T) {
	in := `{"a": NaN, "b": [Infinity, -Infinity], "c": "NaN \"Infinity\" -Infinity", "d": -1.5}` + "\n"
	want := `{"a": "\u0000NaN", "b": ["\u0000Infinity", "\u0000-Infinity"], "c": "NaN \"Infinity\" -Infinity", "d": -1.5}` + "\n"
	if got := string(NonFinite([]byte(in))); got != want {
		t.Errorf("NonFinite:\n got %s\nwant %s", got, want)
	}
	var v map[string]json.RawMessage
	if err := json.Unmarshal(NonFinite([]byte(in)), &v); err != nil {
		t.Fatal(err)
	}
	if x, k := Number(v["a"]); k != NonFiniteNumber || !math.IsNaN(x) {
		t.Errorf("NaN: %v %v", x, k)
	}
	if x, k := Number(json.RawMessage(`"inf"`)); k != NonFiniteNumber || !math.IsInf(x, 1) {
		t.Errorf("inf: %v %v", x, k)
	}
	if _, k := Number(json.RawMessage(`"NaN"`)); k != NotNumber {
		t.Errorf("the string NaN: %v", k)
	}
	if got := Unmark(`{"a":"\u0000NaN","b":"\u0000-Infinity"}`); got != `{"a":"NaN","b":"-Infinity"}` {
		t.Errorf("Unmark: %s", got)
	}
	if _, k := Number(json.RawMessage(`"12"`)); k != NotNumber {
		t.Errorf("numeric string: %v", k)
	}
	if x, k := Number(json.RawMessage(`1e999`)); k != NonFiniteNumber || !math.IsInf(x, 1) {
		t.Errorf("1e999: %v %v", x, k)
	}
}

func TestStatKey(t *testing.T) {
	for key, want := range map[string][2]string{
		"mean_ttft_ms":            {"ttft_ms", "mean"},
		"p99.9_itl_ms":            {"itl_ms", "p99.9"},
		"median_e2e_latency_ms":   {"e2e_latency_ms", "median"},
		"max_itl_ms":              {"itl_ms", "max"},
		"p5_client_queue_time_ms": {"client_queue_time_ms", "p5"},
	} {
		m, s, ok := StatKey(key)
		if !ok || m != want[0] || s != want[1] {
			t.Errorf("StatKey(%s) = %s %s %v", key, m, s, ok)
		}
	}
	for _, key := range []string{"probe_p99_e2el_ms", "max_output_tokens_per_s", "duration", "p_ttft_ms"} {
		if _, _, ok := StatKey(key); ok {
			t.Errorf("StatKey(%s) matched", key)
		}
	}
}

func TestReadValues(t *testing.T) {
	data := []byte("{\"a\": 1}\n{\"b\":\n 2}\n{\"c\": 3, \"d\": [1, 2")
	vals, cut, err := ReadValues("f", data, Objects)
	if err != nil || len(vals) != 2 || vals[1].Line != 2 || vals[1].Where != "object 2 (line 2)" || cut != "object 3 (line 4) is incomplete (file cut)" {
		t.Errorf("objects: %+v %q %v", vals, cut, err)
	}
	vals, cut, err = ReadValues("f", []byte("{\"a\": 1}\n\n{\"b\": Infinity}\n"), Lines)
	if err != nil || cut != "" || len(vals) != 2 || vals[1].Where != "line 3" || string(vals[1].Entries[0].Value) != `"\u0000Infinity"` {
		t.Errorf("lines: %+v %q %v", vals, cut, err)
	}
	_, _, err = ReadValues("f", []byte("{\"a\": 1}\n{\"b\" 2}\n{\"c\": 3}"), Lines)
	var fe *ingest.FormatError
	if !errors.As(err, &fe) || fe.Where != "line 2" {
		t.Errorf("bad line: %v", err)
	}
	vals, cut, err = ReadValues("f", []byte("[{\"a\": 1},\n {\"b\": 2}"), Array)
	if err != nil || len(vals) != 2 || !strings.Contains(cut, "without its closing ']'") {
		t.Errorf("array: %+v %q %v", vals, cut, err)
	}
	if _, _, err := ReadValues("f", []byte(" \n"), Objects); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty: %v", err)
	}
}

func TestTopKeys(t *testing.T) {
	keys, inArray := TopKeys([]byte(`[{"backend": "x", "nested": {"duration": 1}, "request_rate": Infinity, "completed": 8, "ttfts": [0.1, 0.`))
	if !inArray || strings.Join(keys, ",") != "backend,nested,request_rate,completed,ttfts" {
		t.Errorf("TopKeys: %q %v", keys, inArray)
	}
}

func TestErrorClass(t *testing.T) {
	if c, typ := ErrorClass("Too Many Requests"); c == nil || *c != 429 || typ != "http" {
		t.Errorf("reason phrase: %v %q", c, typ)
	}
	tb := "Traceback (most recent call last):\n  File \"x.py\", line 1, in f\n    g()\nasyncio.exceptions.TimeoutError\n"
	if c, typ := ErrorClass(tb); c != nil || typ != "asyncio.exceptions.TimeoutError" {
		t.Errorf("traceback: %v %q", c, typ)
	}
	if c, typ := ErrorClass("Never received a valid chunk to calculate TTFT.This response will be marked as failed!"); c != nil || typ != "" {
		t.Errorf("plain text: %v %q", c, typ)
	}
}

func TestRebuildEvents(t *testing.T) {
	var st Rebuilt
	text := "abc"
	// native split: 8 ms (1 token), 12 ms in 3 tokens, 6 ms (1 token)
	ev := RebuildEvents(nil, "r", 0, 50e6, []float64{0.008, 0.004, 0.004, 0.004, 0.006}, &text, true, 1, &st)
	if len(ev) != 4 || ev[1].OffsetNs != 58e6 || ev[2].OffsetNs != 70e6 || *ev[2].Tokens != 3 || ev[3].OffsetNs != 76e6 || *ev[0].Tokens != 1 ||
		ev[3].Text == nil || *ev[3].Text != "abc" || ev[0].Text != nil || st.Merged != 1 {
		t.Errorf("native: %+v", ev)
	}
	ev = RebuildEvents(ev, "r", 1, 10e6, []float64{0.004, 0.004}, nil, false, 0, &st)
	if len(ev) != 3 || ev[2].OffsetNs != 18e6 || ev[1].Tokens != nil || ev[2].Index != 2 || ev[2].Kind != formats.KindContent || !ev[2].HasChoices {
		t.Errorf("chunk gaps: %+v", ev)
	}
}

func TestStatAndConfigNumbers(t *testing.T) {
	for _, c := range []struct {
		raw   string
		ok    bool
		value float64
		text  string
		err   bool
	}{
		{"12.5", true, 12.5, "", false},
		{"Infinity", true, 0, "Infinity", false},
		{"-Infinity", true, 0, "-Infinity", false},
		{"NaN", true, 0, "NaN", false},
		{"null", false, 0, "", false},
		{`"fast"`, false, 0, "", true},
	} {
		// bare Python tokens arrive marked by NonFinite, as the importers read them
		rs, ok, err := Stat("f.json", "ttft", "mean", "ms", json.RawMessage(NonFinite([]byte(c.raw))))
		if ok != c.ok || (err != nil) != c.err || rs.Text != c.text || (c.text == "" && c.ok && *rs.Value != c.value) {
			t.Errorf("%s: %+v ok=%v err=%v", c.raw, rs, ok, err)
		}
	}
	if r, err := RequestRate(json.RawMessage(NonFinite([]byte("Infinity")))); err != nil || r == nil || !math.IsInf(*r, 1) {
		t.Errorf("rate inf: %v %v", r, err)
	}
	if c, err := Concurrency(json.RawMessage(NonFinite([]byte("Infinity")))); err != nil || c != nil {
		t.Errorf("concurrency inf: %v %v", c, err)
	}
	if !math.IsNaN(At(nil, 3)) || At([]float64{1, 2}, 1) != 2 {
		t.Error("At")
	}
}
