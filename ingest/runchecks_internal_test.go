package ingest

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
)

// TestFarStartHoldBounded: the requests held for the reference start stop
// at farStartHeldEvents messages: with a bound of 10, request 0 (4
// events) is held, request 1 (8 events) is not — the reference comes from
// both starts (median of 2: the lower, request 0's) and both go on in
// order, request 1 uncopied — and request 2, 71 years out, is still
// flagged.
func TestFarStartHoldBounded(t *testing.T) {
	defer func(n int) { farStartHeldEvents = n }(farStartHeldEvents)
	farStartHeldEvents = 10
	var col formats.Collector
	s := &importSink{Sink: &col, in: &Input{Path: "x"}, runs: map[string]*runChecks{}}
	req := func(key, start int64, n int) (*formats.Request, []formats.Event) {
		st := start
		r := &formats.Request{RunID: "r", RequestKey: key, StartNs: &st, ClockDomain: formats.ClockUnix, Status: formats.StatusOK}
		ev := make([]formats.Event, n)
		for i := range ev {
			ev[i] = formats.Event{RunID: "r", RequestKey: key, Index: int32(i), OffsetNs: int64(i + 1)}
		}
		return r, ev
	}
	r0, e0 := req(0, 1_760_000_000e9, 4)
	r1, e1 := req(1, 1_760_000_001e9, 8)
	r2, e2 := req(2, 4e18, 2)
	for _, x := range []struct {
		r  *formats.Request
		ev []formats.Event
	}{{r0, e0}, {r1, e1}} {
		if err := formats.SendRow(s, x.r, x.ev); err != nil {
			t.Fatal(err)
		}
	}
	rc := s.runs["r"]
	if !rc.refSet || rc.held != nil || len(col.Requests) != 2 || col.Requests[0].RequestKey != 0 || col.Requests[1].RequestKey != 1 {
		t.Fatalf("after 12 events: ref set %v, held %v, %d sent", rc.refSet, rc.held != nil, len(col.Requests))
	}
	if rc.ref != 1_760_000_000e9 || rc.refFrom != 2 {
		t.Errorf("reference %d from %d starts", rc.ref, rc.refFrom)
	}
	if err := formats.SendRow(s, r2, e2); err != nil {
		t.Fatal(err)
	}
	if rc.far != 1 || col.Requests[2].StartNs != nil {
		t.Errorf("far start not flagged: far %d, start %v", rc.far, col.Requests[2].StartNs)
	}
	if len(col.Events) != 14 {
		t.Errorf("%d events sent, want 14", len(col.Events))
	}
}

// TestFingerprintTellsEveryField: changing any field of a request or of
// one of its events (any field but the run id, request key and index, by
// reflection, so a field added to formats.Request or formats.Event that
// Batch.Fingerprint does not hash fails here) changes the fingerprint;
// setting an optional value that was null does too, and the run id and
// key do not. A repetition is dropped only when fingerprints are equal.
func TestFingerprintTellsEveryField(t *testing.T) {
	base := func() (*formats.Request, []formats.Event) {
		r := &formats.Request{}
		fill(reflect.ValueOf(r).Elem(), 1)
		r.Status = formats.StatusOK
		ev := make([]formats.Event, 3)
		for i := range ev {
			fill(reflect.ValueOf(&ev[i]).Elem(), int64(i+1))
			ev[i].RunID, ev[i].RequestKey, ev[i].Index = r.RunID, r.RequestKey, int32(i)
		}
		return r, ev
	}
	fingerprint := func(r *formats.Request, ev []formats.Event) uint64 {
		b := formats.NewBatch(r.RunID)
		if err := b.AppendRow(r, ev); err != nil {
			t.Fatal(err)
		}
		return b.Fingerprint(0)
	}
	r, ev := base()
	want := fingerprint(r, ev)
	if again := fingerprint(base()); again != want {
		t.Fatalf("fingerprint not stable: %x, %x", want, again)
	}
	// a message more or less
	if fingerprint(r, ev[:2]) == want {
		t.Error("dropping a message kept the fingerprint")
	}
	check := func(what string, v reflect.Value, fp func() uint64) {
		for i := range v.NumField() {
			f, name := v.Field(i), v.Type().Field(i).Name
			if what == "event" && (name == "Index" || name == "RunID" || name == "RequestKey") {
				continue // an event's index is its position, its run and key its request's
			}
			old := reflect.New(f.Type()).Elem()
			old.Set(f)
			for _, change := range []string{"value", "null"} {
				switch {
				case change == "null" && f.Kind() != reflect.Pointer:
					continue
				case change == "null":
					f.Set(reflect.Zero(f.Type()))
				case name == "Status":
					f.SetString(formats.StatusError)
				default:
					bump(f)
				}
				same := fp() == want
				if key := name == "RunID" || name == "RequestKey"; key && !same {
					t.Errorf("%s %s (%s) changed the fingerprint", what, name, change)
				} else if !key && same {
					t.Errorf("%s %s (%s) left the fingerprint unchanged", what, name, change)
				}
				f.Set(old)
			}
		}
	}
	check("request", reflect.ValueOf(r).Elem(), func() uint64 {
		e := append([]formats.Event(nil), ev...)
		for i := range e {
			e[i].RunID, e[i].RequestKey = r.RunID, r.RequestKey
		}
		return fingerprint(r, e)
	})
	check("event", reflect.ValueOf(&ev[1]).Elem(), func() uint64 { return fingerprint(r, ev) })
}

// fill sets every field of the struct v to a value from n (pointers to a
// fresh one).
func fill(v reflect.Value, n int64) {
	for i := range v.NumField() {
		f := v.Field(i)
		if f.Kind() == reflect.Pointer {
			f.Set(reflect.New(f.Type().Elem()))
			f = f.Elem()
		}
		switch f.Kind() {
		case reflect.String:
			f.SetString(fmt.Sprintf("s%d-%d", i, n))
		case reflect.Int32, reflect.Int64:
			f.SetInt(int64(i)*100 + n)
		case reflect.Float64:
			f.SetFloat(float64(i)*100 + float64(n) + 0.5)
		case reflect.Bool:
			f.SetBool(n%2 == 1)
		default:
			panic("fill: " + f.Kind().String())
		}
	}
}

// bump changes the value of f (through a fresh pointer for a pointer).
func bump(f reflect.Value) {
	if f.Kind() == reflect.Pointer {
		p := reflect.New(f.Type().Elem())
		p.Elem().Set(f.Elem())
		f.Set(p)
		f = p.Elem()
	}
	switch f.Kind() {
	case reflect.String:
		f.SetString(f.String() + "x")
	case reflect.Int32, reflect.Int64:
		f.SetInt(f.Int() + 1)
	case reflect.Float64:
		f.SetFloat(f.Float() + 1)
	case reflect.Bool:
		f.SetBool(!f.Bool())
	}
}
