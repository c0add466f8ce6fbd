package formats

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// randomRow returns a request of run "r" with key k and n events, every
// field set or null at random (by reflection: a field added to Request
// or Event that the batch does not carry fails the round trip).
func randomRow(rng *rand.Rand, k int64, n int) (Request, []Event) {
	var r Request
	randomFields(rng, reflect.ValueOf(&r).Elem())
	r.RunID, r.RequestKey = "r", k
	r.Status = []string{StatusOK, StatusEmpty, StatusError, StatusCancelled, ""}[rng.IntN(5)]
	ev := make([]Event, n)
	for j := range ev {
		randomFields(rng, reflect.ValueOf(&ev[j]).Elem())
		ev[j].RunID, ev[j].RequestKey, ev[j].Index = "r", k, int32(j)
		ev[j].Kind = []string{KindContent, KindReasoning, KindToolCall, KindRole, KindEmpty, KindUsage, KindDone,
			KindError, KindOther, "server.queued", "server.x"}[rng.IntN(11)]
		if rng.IntN(2) == 0 {
			ev[j].ReadIndex = int32(j)
		}
	}
	return r, ev
}

func randomFields(rng *rand.Rand, v reflect.Value) {
	for i := range v.NumField() {
		f := v.Field(i)
		if f.Kind() == reflect.Pointer {
			if rng.IntN(3) == 0 {
				continue // null
			}
			f.Set(reflect.New(f.Type().Elem()))
			f = f.Elem()
		}
		switch f.Kind() {
		case reflect.String:
			if rng.IntN(3) > 0 {
				f.SetString(fmt.Sprintf("s%d", rng.IntN(1000)))
			}
		case reflect.Int32, reflect.Int64:
			f.SetInt(rng.Int64N(1<<31) - 1<<30)
		case reflect.Float64:
			f.SetFloat(rng.Float64()*1e6 - 1e3)
		case reflect.Bool:
			f.SetBool(rng.IntN(2) == 0)
		}
	}
}

// TestBatchRoundTrip: rows appended to a batch come back equal (Row,
// AppendEvents), through Clone, AppendFrom and Compact too.
func TestBatchRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	b := NewBatch("r")
	var want []Request
	var wantEv [][]Event
	for k := range int64(300) {
		n := rng.IntN(8)
		if k%7 == 0 {
			n = 0
		}
		r, ev := randomRow(rng, k, n)
		if err := b.AppendRow(&r, ev); err != nil {
			t.Fatal(err)
		}
		want, wantEv = append(want, r), append(wantEv, ev)
	}
	check := func(what string, b *Batch, keep func(i int) bool) {
		t.Helper()
		i := 0
		for k := range want {
			if !keep(k) {
				continue
			}
			if got := b.Row(i); !reflect.DeepEqual(got, want[k]) {
				t.Fatalf("%s: request %d:\n got %+v\nwant %+v", what, k, got, want[k])
			}
			got := b.AppendEvents(nil, i)
			if len(got) != len(wantEv[k]) {
				t.Fatalf("%s: request %d: %d events, want %d", what, k, len(got), len(wantEv[k]))
			}
			for j := range got {
				if !reflect.DeepEqual(got[j], wantEv[k][j]) {
					t.Fatalf("%s: request %d event %d:\n got %+v\nwant %+v", what, k, j, got[j], wantEv[k][j])
				}
			}
			i++
		}
		if i != b.Len() {
			t.Fatalf("%s: %d requests, want %d", what, b.Len(), i)
		}
	}
	all := func(int) bool { return true }
	check("appended", b, all)
	c := b.Clone()
	check("clone", c, all)
	d := NewBatch("r")
	for i := range b.Len() {
		d.AppendFrom(b, i)
	}
	check("appended from", d, all)
	odd := func(i int) bool { return i%3 != 1 }
	if n := c.Compact(odd); n != 100 {
		t.Fatalf("compact dropped %d, want 100", n)
	}
	check("compacted", c, odd)
	// a reset batch reads as empty, and refills
	b.Reset("r")
	if b.Len() != 0 || b.Msg.Len() != 0 || b.Req.StartNs.Has(0) {
		t.Fatal("reset batch not empty")
	}
}

// TestBatchFillFromMessages: the derived fields of a batch's request are
// those FillFromEvents derives for the same row.
func TestBatchFillFromMessages(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for k := range int64(500) {
		r, ev := randomRow(rng, k, rng.IntN(9))
		b := NewBatch("r")
		if err := b.AppendRow(&r, ev); err != nil {
			t.Fatal(err)
		}
		FillFromEvents(&r, ev)
		b.FillFromMessages(0)
		if got := b.Row(0); !reflect.DeepEqual(got, r) {
			t.Fatalf("request %d:\n got %+v\nwant %+v", k, got, r)
		}
	}
}

// TestBitsSetRange: SetRange sets exactly [lo, hi); Count counts them.
func TestBitsSetRange(t *testing.T) {
	for lo := 0; lo < 140; lo += 7 {
		for hi := lo; hi < 200; hi += 11 {
			var b Bits
			b.SetRange(lo, hi)
			for i := range 220 {
				if b.Get(i) != (i >= lo && i < hi) {
					t.Fatalf("[%d,%d): bit %d is %v", lo, hi, i, b.Get(i))
				}
			}
			if n := b.Count(220); n != hi-lo {
				t.Fatalf("[%d,%d): count %d", lo, hi, n)
			}
			b.truncate(lo + 3)
			if n := b.Count(220); n != min(3, hi-lo) {
				t.Fatalf("[%d,%d) truncated at %d: count %d", lo, hi, lo+3, n)
			}
		}
	}
}

// TestAppendRowRefuses: a row the columns cannot hold is refused.
func TestAppendRowRefuses(t *testing.T) {
	b := NewBatch("r")
	for _, tc := range []struct {
		r  Request
		ev []Event
	}{
		{Request{RunID: "other"}, nil},
		{Request{RunID: "r", Status: "weird"}, nil},
		{Request{RunID: "r"}, []Event{{RunID: "r", Index: 1}}},
		{Request{RunID: "r"}, []Event{{RunID: "s"}}},
	} {
		if err := b.AppendRow(&tc.r, tc.ev); err == nil {
			t.Errorf("%+v %+v: accepted", tc.r, tc.ev)
		}
	}
}

// FuzzBatchRoundTrip: any sequence of random rows survives the columns.
func FuzzBatchRoundTrip(f *testing.F) {
	f.Add(uint64(1), uint8(3))
	f.Add(uint64(99), uint8(40))
	f.Fuzz(func(t *testing.T, seed uint64, n uint8) {
		rng := rand.New(rand.NewPCG(seed, 7))
		b := NewBatch("r")
		var rows []Request
		var evs [][]Event
		for k := range int64(n) {
			r, ev := randomRow(rng, k, rng.IntN(5))
			if err := b.AppendRow(&r, ev); err != nil {
				t.Fatal(err)
			}
			rows, evs = append(rows, r), append(evs, ev)
		}
		c := b.Clone()
		for i := range rows {
			if got := c.Row(i); !reflect.DeepEqual(got, rows[i]) {
				t.Fatalf("request %d differs", i)
			}
			if got := c.AppendEvents(nil, i); len(got) != len(evs[i]) || len(got) > 0 && !reflect.DeepEqual(got, evs[i]) {
				t.Fatalf("request %d events differ", i)
			}
		}
	})
}
