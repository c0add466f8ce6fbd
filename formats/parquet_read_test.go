package formats

import (
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// selecting is a Collector that reads only cols of the events
// (EventColumnSelector), records the runs it was asked about, and checks
// the Sink order.
type selecting struct {
	Collector
	cols  EventColumns
	asked []string
	check sinkChecker
}

func (s *selecting) Request(r *Request, ev []Event) error {
	if err := s.check.request(r, ev); err != nil {
		return err
	}
	return s.Collector.Request(r, ev)
}

func (s *selecting) Run(r *Run) error {
	if err := s.check.run(r); err != nil {
		return err
	}
	return s.Collector.Run(r)
}

func (s *selecting) EventColumns(r *Run) EventColumns {
	s.asked = append(s.asked, r.RunID)
	return s.cols
}

// withoutColumns returns events with the fields of the columns outside
// cols zeroed, as a projected read gives them — but the index, which is
// an event's position whether its column is read or not.
func withoutColumns(evs []Event, cols EventColumns) []Event {
	out := make([]Event, len(evs))
	for i, e := range evs {
		for f := range eventFields {
			if b := eventFields[f].bit; b != 0 && b != ColIndex && cols&b == 0 {
				one := []Event{e}
				zeroField(one, f)
				e = one[0]
			}
		}
		out[i] = e
	}
	return out
}

// TestReadTablesColumns reads the sample tables (every column, nulls,
// several row groups and batches, both layouts) with each column left out
// in turn, with the analyzer's set, and with none: the columns read are
// exact and the others zero; requests and runs are untouched; the
// column reader and parquet-go's row reader read the same full rows.
func TestReadTablesColumns(t *testing.T) {
	const nb = 2500
	want := collectSample(t, nb)
	for _, layout := range []string{LayoutFlat, LayoutHive} {
		dir := t.TempDir()
		// small row groups and parts: pages, row groups and files end
		// inside batches and requests
		writeSample(t, dir, nb, WriteOptions{Layout: layout, RowGroupRows: 700, PartRows: 1500})
		sets := []EventColumns{AllEventColumns, 0,
			ColReadIndex | ColOffsetNs | ColKind | ColHasChoices | ColTokens | ColReasoningText}
		for b := EventColumns(1); b <= ColFinishReason; b <<= 1 {
			sets = append(sets, AllEventColumns&^b, b)
		}
		for _, cols := range sets {
			t.Run(fmt.Sprintf("%s/%010b", layout, cols), func(t *testing.T) {
				s := &selecting{cols: cols}
				if err := ReadTables(dir, s); err != nil {
					t.Fatal(err)
				}
				if err := s.check.finish(); err != nil {
					t.Fatal(err)
				}
				if len(s.asked) != len(want.Runs) {
					t.Errorf("EventColumns asked for runs %v, want one call per run (%d)", s.asked, len(want.Runs))
				}
				w := &Collector{Runs: want.Runs, Requests: want.Requests, Events: withoutColumns(want.Events, cols)}
				diffCollectors(t, w, &s.Collector)
			})
		}
		t.Run(layout+"/row reader", func(t *testing.T) {
			forceRowReader = true
			defer func() { forceRowReader = false }()
			diffCollectors(t, want, readAll(t, dir))
		})
	}
}

func TestEventColumnsOfTee(t *testing.T) {
	r := &Run{RunID: "a"}
	a, b := &selecting{cols: ColKind}, &selecting{cols: ColText | ColOffsetNs}
	if got := EventColumnsOf(Tee(a, b), r); got != ColKind|ColText|ColOffsetNs {
		t.Errorf("Tee of two selectors: %010b, want the union", got)
	}
	if got := EventColumnsOf(Tee(a, &Collector{}), r); got != AllEventColumns {
		t.Errorf("Tee with a sink that does not select: %010b, want every column", got)
	}
	if got := EventColumnsOf(&Collector{}, r); got != AllEventColumns {
		t.Errorf("plain sink: %010b, want every column", got)
	}
}

// TestEventColumnReaderSeek widens the columns in the middle of a row
// group: the newly read columns start at the right row (a page seek).
func TestEventColumnReaderSeek(t *testing.T) {
	dir := t.TempDir()
	writeSample(t, dir, 400, WriteOptions{})
	want := collectSample(t, 400)
	pr, err := openParquetTable[Event](dir, TableEvents)
	if err != nil {
		t.Fatal(err)
	}
	defer pr.close()
	if pr.cols == nil {
		t.Fatal("events written by ParquetWriter not read by the column reader")
	}
	pr.setColumns(ColOffsetNs)
	var got []Event
	b := &eventBuf{ev: make([]Event, 97)}
	buf := b.ev
	for {
		n, err := pr.cols.read(b)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, buf[:n]...)
		if len(got) > 500 {
			pr.setColumns(AllEventColumns)
		}
	}
	if len(got) != len(want.Events) {
		t.Fatalf("%d events, want %d", len(got), len(want.Events))
	}
	for i := range got {
		w := want.Events[i]
		if i < 97*6 { // the batches read before the switch
			w = withoutColumns([]Event{w}, ColOffsetNs)[0]
			w.Index = 0 // the column reader itself leaves it zero
		}
		if !eventEqual(got[i], w) {
			t.Fatalf("event %d:\n got %+v\nwant %+v", i, got[i], w)
		}
	}
}

// TestReadTablesRowReaderFallback reads an events file another tool
// rewrote with other column types (index and bytes as INT64, has_choices
// as a string would not fit, so only widened integers): the column reader
// declines it and the row reader converts it as before.
func TestReadTablesRowReaderFallback(t *testing.T) {
	type wideEvent struct {
		RunID      string `parquet:"run_id"`
		RequestKey int64  `parquet:"request_key"`
		Index      int64  `parquet:"index"`
		ReadIndex  int32  `parquet:"read_index"`
		OffsetNs   int64  `parquet:"offset_ns"`
		Kind       string `parquet:"kind"`
		HasChoices bool   `parquet:"has_choices"`
		Bytes      int64  `parquet:"bytes"`
		Finish     string `parquet:"finish_reason"`
	}
	dir := t.TempDir()
	writeRaw(t, dir, "runs.parquet", []Run{{RunID: "a"}}, nil)
	writeRaw(t, dir, "requests.parquet", []Request{{RunID: "a"}, {RunID: "a", RequestKey: 1}}, nil)
	writeRaw(t, dir, "events.parquet", []wideEvent{
		{RunID: "a", Index: 0, OffsetNs: 5, Kind: KindContent, HasChoices: true, Bytes: 7},
		{RunID: "a", RequestKey: 1, Index: 0, ReadIndex: 2, OffsetNs: 9, Kind: KindDone, Bytes: 1 << 20},
	}, nil)
	pf := openPF(t, filepath.Join(dir, "events.parquet"))
	if newEventColumnReader(pf, "x") != nil {
		t.Fatal("column reader accepted INT64 index")
	}
	got := readAll(t, dir)
	wantEv := []Event{
		{RunID: "a", Index: 0, OffsetNs: 5, Kind: KindContent, HasChoices: true, Bytes: 7},
		{RunID: "a", RequestKey: 1, Index: 0, ReadIndex: 2, OffsetNs: 9, Kind: KindDone, Bytes: 1 << 20},
	}
	if fmt.Sprint(got.Events) != fmt.Sprint(wantEv) {
		t.Fatalf("events:\n got %+v\nwant %+v", got.Events, wantEv)
	}
}

// TestReadTablesNullableRewrite reads events written with every column
// nullable (as pyarrow and DuckDB write) and parquet-go's default page
// encodings: the column reader takes it; nulls in non-pointer fields read
// as zero values.
func TestReadTablesNullableRewrite(t *testing.T) {
	type nullableEvent struct {
		RunID      *string `parquet:"run_id,optional"`
		RequestKey *int64  `parquet:"request_key,optional"`
		Index      *int32  `parquet:"index,optional"`
		ReadIndex  *int32  `parquet:"read_index,optional"`
		OffsetNs   *int64  `parquet:"offset_ns,optional"`
		Kind       *string `parquet:"kind,optional"`
		HasChoices *bool   `parquet:"has_choices,optional"`
		Tokens     *int32  `parquet:"tokens,optional"`
		Bytes      *int32  `parquet:"bytes,optional"`
		Text       *string `parquet:"text,optional,plain"`
		Finish     *string `parquet:"finish_reason,optional"`
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var rows []nullableEvent
	var want []Event
	run := "a"
	for k := int64(0); k < 3; k++ {
		for j := 0; j < 1500; j++ {
			var n nullableEvent
			e := Event{RunID: run, RequestKey: k}
			n.RunID, n.RequestKey = &run, ptr(k)
			e.Index = int32(j) // a null index reads as the position
			if rng.IntN(3) > 0 {
				n.Index = ptr(int32(j))
			}
			if rng.IntN(3) > 0 {
				n.OffsetNs, e.OffsetNs = ptr(int64(j)*1000), int64(j)*1000
			}
			if rng.IntN(3) > 0 {
				s := []string{KindContent, KindRole, ""}[rng.IntN(3)]
				n.Kind, e.Kind = &s, s
			}
			if rng.IntN(3) > 0 {
				b := rng.IntN(2) == 0
				n.HasChoices, e.HasChoices = &b, b
			}
			if rng.IntN(3) > 0 {
				n.Tokens, e.Tokens = ptr(int32(j%4)), ptr(int32(j%4))
			}
			if rng.IntN(3) > 0 {
				s := "t" + strconv.Itoa(rng.IntN(50))
				n.Text, e.Text = &s, &s
			}
			rows = append(rows, n)
			want = append(want, e)
		}
	}
	dir := t.TempDir()
	writeRaw(t, dir, "runs.parquet", []Run{{RunID: "a"}}, nil)
	writeRaw(t, dir, "requests.parquet", []Request{{RunID: "a"}, {RunID: "a", RequestKey: 1}, {RunID: "a", RequestKey: 2}}, nil)
	writeRaw(t, dir, "events.parquet", rows, nil)
	if newEventColumnReader(openPF(t, filepath.Join(dir, "events.parquet")), "x") == nil {
		t.Fatal("column reader declined nullable columns")
	}
	got := readAll(t, dir)
	forceRowReader = true
	rowGot := readAll(t, dir)
	forceRowReader = false
	if len(got.Events) != len(want) {
		t.Fatalf("%d events, want %d", len(got.Events), len(want))
	}
	for i := range want {
		if !eventEqual(got.Events[i], want[i]) {
			t.Fatalf("event %d:\n got %+v\nwant %+v", i, got.Events[i], want[i])
		}
		if !eventEqual(rowGot.Events[i], want[i]) {
			t.Fatalf("row reader, event %d:\n got %+v\nwant %+v", i, rowGot.Events[i], want[i])
		}
	}
}

func eventEqual(a, b Event) bool {
	eq := func(x, y *string) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	eqi := func(x, y *int32) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	return eq(a.Text, b.Text) && eq(a.ReasoningText, b.ReasoningText) && eqi(a.Tokens, b.Tokens) &&
		a.RunID == b.RunID && a.RequestKey == b.RequestKey && a.Index == b.Index && a.ReadIndex == b.ReadIndex &&
		a.OffsetNs == b.OffsetNs && a.Kind == b.Kind && a.HasChoices == b.HasChoices && a.Bytes == b.Bytes &&
		a.FinishReason == b.FinishReason
}

// counting is a sink that counts events and reads only cols.
type counting struct {
	cols   EventColumns
	events int64
	sum    int64
}

func (c *counting) Request(_ *Request, ev []Event) error {
	c.events += int64(len(ev))
	for i := range ev {
		c.sum += ev[i].OffsetNs
	}
	return nil
}
func (c *counting) Run(*Run) error                 { return nil }
func (c *counting) EventColumns(*Run) EventColumns { return c.cols }

// BenchmarkReadTables measures ReadTables on a GenAI-Perf-like table set
// (500 requests of 430 events with one short token of text each, as
// BenchmarkParquetWrite writes them): "rows" is parquet-go's row reader
// (the reader before the column reader), "columns" the column reader of
// every column, "no-text" the columns a report without tokenizer reads
// (analyze.ComputeColumns). It reports events/s.
func BenchmarkReadTables(b *testing.B) {
	const nReq, nEv = 500, 430
	dir := b.TempDir()
	writeBenchTables(b, dir, nReq, nEv)
	noText := ColReadIndex | ColOffsetNs | ColKind | ColHasChoices | ColTokens | ColReasoningText
	for _, c := range []struct {
		name string
		rows bool
		cols EventColumns
	}{{"rows", true, AllEventColumns}, {"columns", false, AllEventColumns}, {"no-text", false, noText}} {
		b.Run(c.name, func(b *testing.B) {
			forceRowReader = c.rows
			defer func() { forceRowReader = false }()
			b.ReportAllocs()
			var events int64
			for b.Loop() {
				s := &counting{cols: c.cols}
				if err := ReadTables(dir, s); err != nil {
					b.Fatal(err)
				}
				if s.events != nReq*nEv {
					b.Fatalf("%d events", s.events)
				}
				events += s.events
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// writeBenchTables writes BenchmarkReadTables' tables into dir: one run of
// nReq requests of nEv events.
func writeBenchTables(b *testing.B, dir string, nReq, nEv int) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := make([]string, 5000)
	for i := range words {
		words[i] = " w" + strconv.Itoa(rng.IntN(100000))
	}
	w, err := NewParquetWriter(dir, WriteOptions{})
	if err != nil {
		b.Fatal(err)
	}
	evs := make([]Event, nEv)
	for k := 0; k < nReq; k++ {
		off := int64(20_000_000 + rng.IntN(5_000_000))
		for j := range evs {
			off += int64(5_000_000 + rng.IntN(4_000_000))
			evs[j] = Event{RunID: "genai-perf/c8#1", RequestKey: int64(k), Index: int32(j), ReadIndex: int32(j),
				OffsetNs: off, Kind: KindContent, HasChoices: true, Text: &words[rng.IntN(len(words))]}
			evs[j].Bytes = int32(160 + len(*evs[j].Text))
		}
		evs[0].Kind, evs[0].Text = KindRole, nil
		evs[nEv-1].Kind, evs[nEv-1].Text, evs[nEv-1].HasChoices = KindDone, nil, false
		if err := w.Request(&Request{RunID: "genai-perf/c8#1", RequestKey: int64(k), Status: StatusOK}, evs); err != nil {
			b.Fatal(err)
		}
	}
	if err := cmpErr(w.Run(&Run{RunID: "genai-perf/c8#1"}), w.Close()); err != nil {
		b.Fatal(err)
	}
}

// TestReadTablesOtherEncodings reads events written with encodings other
// writers choose (dictionary-encoded integers, delta-encoded integers and
// strings, data page v2): the column reader takes them and reads what the
// row reader reads.
func TestReadTablesOtherEncodings(t *testing.T) {
	type encEvent struct {
		RunID      string  `parquet:"run_id,delta"`
		RequestKey int64   `parquet:"request_key,dict"`
		Index      int32   `parquet:"index,delta"`
		ReadIndex  int32   `parquet:"read_index,dict"`
		OffsetNs   int64   `parquet:"offset_ns,delta"`
		Kind       string  `parquet:"kind,delta"`
		HasChoices bool    `parquet:"has_choices"`
		Tokens     *int32  `parquet:"tokens,optional,dict"`
		Bytes      int32   `parquet:"bytes,plain"`
		Text       *string `parquet:"text,optional"`
		Reasoning  *string `parquet:"reasoning_text,optional,dict"`
		Finish     string  `parquet:"finish_reason,dict"`
	}
	var rows []encEvent
	var want []Event
	for k := int64(0); k < 4; k++ {
		for j := int32(0); j < 3000; j++ {
			e := Event{RunID: "r", RequestKey: k, Index: j, ReadIndex: j / 3, OffsetNs: int64(j) * 7_000_001,
				Kind: []string{KindContent, KindRole, KindDone}[j%3], HasChoices: j%5 != 0, Bytes: 200 + j%17}
			if j%4 != 0 {
				e.Tokens = ptr(j % 3)
			}
			if j%3 != 1 {
				e.Text = ptr("w" + strconv.Itoa(int(j%700)))
			}
			if j%11 == 0 {
				e.ReasoningText = ptr("")
			}
			if j == 2999 {
				e.FinishReason = "length"
			}
			want = append(want, e)
			rows = append(rows, encEvent{e.RunID, e.RequestKey, e.Index, e.ReadIndex, e.OffsetNs, e.Kind, e.HasChoices,
				e.Tokens, e.Bytes, e.Text, e.ReasoningText, e.FinishReason})
		}
	}
	dir := t.TempDir()
	writeRaw(t, dir, "runs.parquet", []Run{{RunID: "r"}}, nil)
	var reqs []Request
	for k := int64(0); k < 4; k++ {
		reqs = append(reqs, Request{RunID: "r", RequestKey: k})
	}
	writeRaw(t, dir, "requests.parquet", reqs, nil)
	writeRaw(t, dir, "events.parquet", rows, nil)
	pf := openPF(t, filepath.Join(dir, "events.parquet"))
	if newEventColumnReader(pf, "x") == nil {
		t.Fatal("column reader declined the file")
	}
	encs := map[string]string{}
	for _, cc := range pf.Metadata().RowGroups[0].Columns {
		encs[cc.MetaData.PathInSchema[0]] = fmt.Sprint(cc.MetaData.Encoding)
	}
	for col, enc := range map[string]string{"request_key": "RLE_DICTIONARY", "offset_ns": "DELTA_BINARY_PACKED",
		"kind": "DELTA_BYTE_ARRAY", "tokens": "RLE_DICTIONARY"} {
		if !strings.Contains(encs[col], enc) {
			t.Errorf("column %s encodings %s: want %s", col, encs[col], enc)
		}
	}
	for _, rowReader := range []bool{false, true} {
		forceRowReader = rowReader
		got := readAll(t, dir)
		forceRowReader = false
		if len(got.Events) != len(want) {
			t.Fatalf("row reader %v: %d events, want %d", rowReader, len(got.Events), len(want))
		}
		for i := range want {
			if !eventEqual(got.Events[i], want[i]) {
				t.Fatalf("row reader %v, event %d:\n got %+v\nwant %+v", rowReader, i, got.Events[i], want[i])
			}
		}
	}
}

func (c *counting) Batch(b *Batch) error { return b.EachRow(c.Request) }
