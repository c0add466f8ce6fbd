package formats

import (
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func known(start, end int64) Span {
	return Span{StartNs: start, HasStart: true, EndNs: end, EndKnown: true}
}
func unknown(start int64) Span { return Span{StartNs: start, HasStart: true} }

// TestInFlightClosedLoop: concurrency 2, request 0 has no end. Request 2
// starts at 125 while 1 (ends 203) is open: 0 + 1 + 2 would be 3 > 2, so 0
// ended by 125 (slot reused). Counts by hand: 0 → 1 (itself; 1 starts at
// the same ns, later in the input), 1 → 2, 2 at 125 → {1, 2} = 2, 3 at 203
// (1 ends at 203, so not counted) → {2, 3} = 2; the step function holds 2
// from 0 to 271 (one of them bounded until 125), then 1 until 361.
func TestInFlightClosedLoop(t *testing.T) {
	spans := []Span{unknown(0), known(0, 203), known(125, 271), known(203, 361), {}}
	res := InFlight(spans, InFlightOptions{Concurrency: 2})
	if want := []int64{1, 2, 2, 2, 0}; !slices.Equal(res.AtStart, want) {
		t.Errorf("at start %v, want %v", res.AtStart, want)
	}
	if res.EndNs[0] != 125 || res.Rule[0] != EndSlotReused || res.Unknown != 1 {
		t.Errorf("bound %d %q unknown %d", res.EndNs[0], res.Rule[0], res.Unknown)
	}
	steps := InFlightSteps(spans, res)
	want := []Step{{0, 2, 1}, {125, 2, 0}, {271, 1, 0}, {361, 0, 0}}
	if !slices.Equal(steps, want) {
		t.Errorf("steps %v, want %v", steps, want)
	}
}

// TestInFlightOpenLoop: no concurrency, no timeout: an unknown end lasts as
// long as the longest recorded request (50), capped at the run's last time
// (90, the last start: the request at 90 then ends as it starts); with a
// timeout of 30 it lasts 30.
func TestInFlightOpenLoop(t *testing.T) {
	spans := []Span{known(0, 50), unknown(10), known(20, 40), unknown(90)}
	res := InFlight(spans, InFlightOptions{})
	if want := []int64{50, 60, 40, 90}; !slices.Equal(res.EndNs, want) {
		t.Errorf("ends %v, want %v", res.EndNs, want)
	}
	if want := []string{"", EndLongestRequest, "", EndRunEnd}; !slices.Equal(res.Rule, want) {
		t.Errorf("rules %q", res.Rule)
	}
	if want := []int64{1, 2, 3, 1}; !slices.Equal(res.AtStart, want) {
		t.Errorf("at start %v, want %v", res.AtStart, want)
	}
	res = InFlight(spans, InFlightOptions{TimeoutNs: 30})
	if res.EndNs[1] != 40 || res.Rule[1] != EndTimeout || res.EndNs[3] != 90 || res.Rule[3] != EndRunEnd {
		t.Errorf("timeout: ends %v rules %q", res.EndNs, res.Rule)
	}
	// the request ending at 40 is not in flight at 40; the one at 90 ends
	// at once (capped at its own start) and is never counted
	steps := InFlightSteps(spans, res)
	want := []Step{{0, 1, 0}, {10, 2, 1}, {20, 3, 1}, {40, 1, 0}, {50, 0, 0}}
	if !slices.Equal(steps, want) {
		t.Errorf("steps %v, want %v", steps, want)
	}
}

func TestRequestEnd(t *testing.T) {
	s := int64(1000)
	r := &Request{StartNs: &s, StreamEndOffsetNs: i64p(0)}
	if _, ok := RequestEnd(r); ok {
		t.Error("end = start counted as an end")
	}
	r.LastTokenOffsetNs = i64p(40)
	if e, ok := RequestEnd(r); !ok || e != 1040 {
		t.Errorf("end %d %v", e, ok)
	}
	r.StreamEndOffsetNs = i64p(45)
	if e, _ := RequestEnd(r); e != 1045 {
		t.Errorf("end %d", e)
	}
}

// TestWriterFillsInFlight: the table writers fill the in-flight columns
// run by run, across the spool's buffers (a run of 10,000 requests), with Run rows arriving after later runs' requests; a run of
// two overlapping requests per moment (each starting 1 ms after the last,
// lasting 1.5 ms) has 2 in flight from its second request on; one without
// a recorded end in a concurrency-1 run is bounded by the next start.
func TestWriterFillsInFlight(t *testing.T) {
	dir := t.TempDir()
	w, err := NewParquetWriter(dir, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 10000 // past the 64 KiB spool buffers
	for k := 0; k < n; k++ {
		st := int64(k) * 1_000_000
		if err := w.Request(&Request{RunID: "big", RequestKey: int64(k), Status: StatusOK, StartNs: &st, ClockDomain: ClockUnix,
			StreamEndOffsetNs: i64p(1_500_000)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for k := 0; k < 3; k++ {
		st := int64(k) * 10
		r := &Request{RunID: "c1", RequestKey: int64(k), Status: StatusOK, StartNs: &st, ClockDomain: ClockUnix, StreamEndOffsetNs: i64p(5)}
		if k == 1 {
			r.Status, r.StreamEndOffsetNs = StatusError, nil
		}
		if err := w.Request(r, nil); err != nil {
			t.Fatal(err)
		}
	}
	one := 1.0
	if err := w.Run(&Run{RunID: "c1", LoadMode: "concurrency", Concurrency: &one}); err != nil {
		t.Fatal(err)
	}
	if err := w.Run(&Run{RunID: "big"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var c Collector
	if err := ReadTables(dir, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Requests) != n+3 || c.Requests[0].RunID != "big" || c.Requests[n].RunID != "c1" {
		t.Fatalf("%d requests, order %s … %s", len(c.Requests), c.Requests[0].RunID, c.Requests[n].RunID)
	}
	for k := 0; k < n; k++ {
		want := int64(2)
		if k == 0 {
			want = 1
		}
		if got := c.Requests[k].InFlightAtStart; got == nil || *got != want || c.Requests[k].EndBoundRule != "" {
			t.Fatalf("big request %d: in flight %v, rule %q", k, got, c.Requests[k].EndBoundRule)
		}
	}
	r := c.Requests[n+1]
	if *r.InFlightAtStart != 1 || r.EndBoundRule != EndSlotReused || r.EndBoundOffsetNs == nil || *r.EndBoundOffsetNs != 10 {
		t.Errorf("unknown end: in flight %d, rule %q, bound %v", *r.InFlightAtStart, r.EndBoundRule, r.EndBoundOffsetNs)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 3 {
		t.Errorf("files left in %s: %d", dir, len(ents))
	}
}

// TestSpoolCodecRoundTrip: every field of a request, pointers to zero,
// NaN and ±Inf, empty and non-ASCII strings read back exactly; a damaged
// record is an error.
func TestSpoolCodecRoundTrip(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(-1)
	var c Collector
	if err := sampleStream(&c, 30); err != nil {
		t.Fatal(err)
	}
	rows := append(c.Requests, Request{RunID: "é😀", StartNs: i64p(0), ErrorCode: i64p(0), ReportedTTFTMs: &nan, ReportedE2EMs: &inf, EndBoundRule: "x"})
	for i := range rows {
		b := requestCodec.append(nil, reflect.ValueOf(&rows[i]).Elem())
		var got Request
		if err := requestCodec.decode(b, reflect.ValueOf(&got).Elem()); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprintf("%+v", deref(got)) != fmt.Sprintf("%+v", deref(rows[i])) {
			t.Fatalf("row %d:\n got %+v\nwant %+v", i, deref(got), deref(rows[i]))
		}
		if err := requestCodec.decode(b[:len(b)-1], reflect.ValueOf(&got).Elem()); err == nil {
			t.Fatal("a cut record decoded")
		}
	}
}

// deref shows a request's pointer fields by value (NaN compares as its
// text).
func deref(r Request) string {
	v := reflect.ValueOf(r)
	var b strings.Builder
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.Kind() == reflect.Pointer {
			if f.IsNil() {
				b.WriteString("nil ")
				continue
			}
			f = f.Elem()
		}
		fmt.Fprintf(&b, "%v ", f.Interface())
	}
	return b.String()
}

// TestSpoolCodecTimes: time.Time fields (TIMESTAMP columns) round-trip,
// with their zone offset and a nil pointer kept.
func TestSpoolCodecTimes(t *testing.T) {
	type row struct {
		At   time.Time
		When *time.Time
		Not  *time.Time
	}
	c := newRowCodec(reflect.TypeFor[row]())
	at := time.Date(2026, 7, 29, 22, 44, 7, 928000001, time.FixedZone("", 7200))
	in := row{At: at, When: &at}
	var out row
	if err := c.decode(c.append(nil, reflect.ValueOf(&in).Elem()), reflect.ValueOf(&out).Elem()); err != nil {
		t.Fatal(err)
	}
	if !out.At.Equal(at) || out.When == nil || !out.When.Equal(at) || out.Not != nil {
		t.Fatalf("%+v", out)
	}
	if _, off := out.At.Zone(); off != 7200 {
		t.Errorf("offset %d", off)
	}
}
