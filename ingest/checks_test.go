package ingest

import (
	"math"
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		x, max float64
		want   Class
	}{
		{0, 1, Valid}, {1, 1, Valid}, {math.NaN(), 1, NotFinite}, {math.Inf(1), 1, NotFinite}, {math.Inf(-1), 1, NotFinite},
		{-1e-300, 1, Negative}, {1.0000001, 1, OutOfRange}, {86400, MaxIn(Seconds), Valid}, {86400.5, MaxIn(Seconds), OutOfRange},
		{1e9, MaxTokens, Valid}, {1e9 + 1, MaxTokens, OutOfRange},
	} {
		if got := Classify(tc.x, tc.max); got != tc.want {
			t.Errorf("Classify(%g, %g) = %d, want %d", tc.x, tc.max, got, tc.want)
		}
	}
	if Valid.Code() != "" || NotFinite.Code() != CheckNotFinite || Negative.Code() != CheckNegative || OutOfRange.Code() != CheckOutOfRange {
		t.Error("codes")
	}
}

func TestReadJSONNumber(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		x    float64
		want JSONState
	}{
		{`91.1`, 91.1, JSONNumber}, {` -7 `, -7, JSONNumber}, {`1e999`, math.Inf(1), JSONNumber},
		{`"91.1"`, 91.1, JSONQuoted}, {`" 12 "`, 12, JSONQuoted}, {`"NaN"`, math.NaN(), JSONQuoted}, {`"-inf"`, math.Inf(-1), JSONQuoted},
		{`null`, 0, JSONAbsent}, {``, 0, JSONAbsent},
		{`"x"`, 0, JSONOther}, {`""`, 0, JSONOther}, {`true`, 0, JSONOther}, {`[1]`, 0, JSONOther}, {`"0x10"`, 0, JSONOther},
	} {
		x, st := ReadJSONNumber([]byte(tc.raw))
		if st != tc.want || st != JSONOther && st != JSONAbsent && !(x == tc.x || math.IsNaN(x) && math.IsNaN(tc.x)) {
			t.Errorf("ReadJSONNumber(%s) = %v, %d; want %v, %d", tc.raw, x, st, tc.x, tc.want)
		}
	}
	// a plain number is read without allocating (it was one allocation
	// per value: a third of an LLMPerf import's)
	raw := []byte(` 0.123456789012345678 `)
	if n := testing.AllocsPerRun(100, func() { ReadJSONNumber(raw) }); n != 0 {
		t.Errorf("ReadJSONNumber(%s): %v allocations", raw, n)
	}
}

// TestValues: offending values are counted per code and field, requests
// once each, the first kept with its position; a nil *Values classifies
// and records nothing.
func TestValues(t *testing.T) {
	var v Values
	if v.Any() || len(v.Checks()) != 0 {
		t.Fatal("empty")
	}
	day := MaxIn(Seconds)
	if ns := v.Duration("ttfts", Pos{Request: 0, At: "ttfts[0]"}, 0.25, Seconds); ns == nil || *ns != 250_000_000 {
		t.Errorf("valid duration %v", ns)
	}
	v.Duration("itls", Pos{Request: 3, At: "itls[3][2]"}, math.NaN(), Seconds)
	v.Duration("itls", Pos{Request: 3, At: "itls[3][4]"}, math.NaN(), Seconds)
	v.Duration("itls", Pos{Request: 5, At: "itls[5][0]"}, math.Inf(1), Seconds)
	if n := v.Count("output_lens", Pos{Request: 1}, -7); n != nil {
		t.Errorf("negative count %d", *n)
	}
	if v.Check("latencies", Pos{Request: 2, At: "line 3"}, 1e308, day) {
		t.Error("1e308 s passed")
	}
	x, ok, err := v.JSON("ttft", Pos{Request: 4, At: "line 5"}, []byte(`"91.1"`))
	if x != 91.1 || !ok || err != nil {
		t.Errorf("JSON string: %v %v %v", x, ok, err)
	}
	if _, _, err := v.JSON("ttft", Pos{Request: 4}, []byte(`"soon"`)); err == nil || err.Error() != `ttft: not a number: "soon"` {
		t.Errorf("JSON not a number: %v", err)
	}
	if tm, err := v.JSONTime("request_start_ns", Pos{Request: 6}, []byte(`1700000000123456789`), Nanoseconds); err != nil || *tm != 1700000000123456789 {
		t.Errorf("JSONTime exact: %v %v", tm, err)
	}
	got := v.Checks()
	want := []string{
		"value_not_finite itls 2 first request 3 (itls[3][2]): NaN; 3 values in 2 request(s); left null",
		"value_negative output_lens 1 first request 1: -7; left null",
		"value_out_of_range latencies 1 first request 2 (line 3): 1e+308; left null",
		`value_number_as_string ttft 1 first request 4 (line 5): "91.1"; read as the number it spells`,
	}
	if len(got) != len(want) {
		t.Fatalf("checks %+v", got)
	}
	for i, c := range got {
		if s := strings.Join([]string{c.Code, c.Field, string(rune('0' + c.Requests)), c.Detail}, " "); s != want[i] {
			t.Errorf("check %d:\n got %s\nwant %s", i, s, want[i])
		}
	}
	var warned []string
	v.Warn(func(s string) { warned = append(warned, s) }, "r1")
	if len(warned) != 4 || warned[0] != "run r1: a per-request number is NaN or infinite (value_not_finite, field itls): 2 request(s), first request 3 (itls[3][2]): NaN; 3 values in 2 request(s); left null" {
		t.Errorf("warnings %q", warned)
	}
	var nilV *Values
	if nilV.Check("x", Pos{}, -1, 1) || nilV.Any() || nilV.Checks() != nil {
		t.Error("nil Values")
	}
}

func TestEpochUnit(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want string
	}{
		{1700000000, "s"}, {1700000000.25, "s"}, {1700000000123, "ms"}, {1700000000123456, "µs"}, {1700000000123456789, "ns"},
		{99999999, ""}, {1000, ""}, {-1700000000, ""}, {math.NaN(), ""}, {1e300, ""},
	} {
		if got, _ := EpochUnit(tc.x); got != tc.want {
			t.Errorf("EpochUnit(%g) = %q, want %q", tc.x, got, tc.want)
		}
	}
	if got := EpochMismatch(1700000000, "ns", Nanoseconds); got != "1700000000 is Unix seconds by its magnitude (2023-11-14T22:13:20Z as such), not nanoseconds: every time read from it would be off by a factor of 10^9" {
		t.Errorf("EpochMismatch: %q", got)
	}
	if got := EpochMismatch(1700000000123456789, "s", Seconds); !strings.HasSuffix(got, "not seconds: every time read from it would be off by a factor of 10^9") {
		t.Errorf("EpochMismatch ns for s: %q", got)
	}
	for _, x := range []float64{1700000000123456789, 5, 0} {
		if got := EpochMismatch(x, "ns", Nanoseconds); got != "" {
			t.Errorf("EpochMismatch(%g) = %q", x, got)
		}
	}
}

func TestFormatValue(t *testing.T) {
	for x, want := range map[float64]string{math.NaN(): "NaN", math.Inf(1): "Infinity", math.Inf(-1): "-Infinity", -7: "-7",
		1e308: "1e+308", 1750000099.5: "1750000099.5", 0: "0", 1e-9: "1e-09", 0.25: "0.25"} {
		if got := FormatValue(x); got != want {
			t.Errorf("FormatValue(%g) = %q, want %q", x, got, want)
		}
	}
}
