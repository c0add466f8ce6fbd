package formats

import (
	"strings"
	"testing"
)

// badBatch is two requests of run "r" whose values a hand edit broke:
// request 0 has output_tokens −7 and a stream end 2 days out, request 1 a
// negative start and a message at −5 ns (its first token at 5 ns).
func badBatch() *Batch {
	b := NewBatch("r")
	b.Req.Status[b.AddRequest(0)] = CodeOK
	b.Req.OutputTokens.Set(0, -7)
	b.Req.InputTokens.Set(0, 12)
	b.Req.StreamEndOffsetNs.Set(0, 2*24*3600*1e9)
	b.Req.StartNs.Set(0, 1_000)
	b.AddMessage(10, MsgContent)
	b.AddMessage(20, MsgContent)
	b.FillFromMessages(0)
	b.Req.Status[b.AddRequest(1)] = CodeOK
	b.Req.StartNs.Set(1, -3)
	b.AddMessage(5, MsgContent)
	b.FillFromMessages(1)
	b.Msg.OffsetNs[2] = -5 // after the request's columns were filled from it
	return b
}

// TestEntryCheck checks that the values that cannot be right are nulled
// and counted, per code and column, and the rest kept.
func TestEntryCheck(t *testing.T) {
	b := badBatch()
	var e EntryCheck
	if err := e.Batch(b); err != nil {
		t.Fatal(err)
	}
	if b.Req.OutputTokens.Has(0) || b.Req.StreamEndOffsetNs.Has(0) || b.Req.StartNs.Has(1) {
		t.Errorf("offending values kept: output_tokens %v, stream_end %v, start %v",
			b.Req.OutputTokens.Ptr(0), b.Req.StreamEndOffsetNs.Ptr(0), b.Req.StartNs.Ptr(1))
	}
	if v, _ := b.Req.InputTokens.Get(0); v != 12 || !b.Req.StartNs.Has(0) || b.Msg.OffsetNs[2] != -5 {
		t.Errorf("valid values changed: input_tokens %d, start 0 %v, message offset %d", v, b.Req.StartNs.Has(0), b.Msg.OffsetNs[2])
	}
	got := e.Checks("r")
	want := []DataCheck{
		{Code: CheckNegative, Field: "start_ns", Requests: 1, Detail: "first request 1: -3; left null"},
		{Code: CheckOutOfRange, Field: "stream_end_offset_ns", Requests: 1, Detail: "first request 0: 172800000000000; left null"},
		{Code: CheckNegative, Field: "output_tokens", Requests: 1, Detail: "first request 0: -7; left null"},
		{Code: CheckNegative, Field: "offset_ns", Requests: 1, Detail: "first request 1: message 0 at -5 ns from the start; kept"},
	}
	if len(got) != len(want) {
		t.Fatalf("checks:\n%v\nwant\n%v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("check %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if e.Checks("r") != nil {
		t.Error("Checks did not forget the run")
	}
	// a clean batch gives no check
	c := NewBatch("c")
	c.Req.Status[c.AddRequest(0)] = CodeOK
	c.Req.OutputTokens.Set(0, 3)
	if err := e.Batch(c); err != nil || e.Checks("c") != nil {
		t.Errorf("clean batch: %v, %v", err, e.Checks("c"))
	}
}

// TestCheckValid checks that each broken contract is refused by name.
func TestCheckValid(t *testing.T) {
	for name, tc := range map[string]struct {
		breakIt func(b *Batch)
		want    string
	}{
		"status length":  {func(b *Batch) { b.Req.Status = b.Req.Status[:1] }, "statuses"},
		"status code":    {func(b *Batch) { b.Req.Status[1] = 9 }, "status code 9"},
		"message ranges": {func(b *Batch) { b.msgStart[1] = 4 }, "range ends before"},
		"kind code":      {func(b *Batch) { b.Msg.Kind[0] = MsgDict + 3 }, "names no kind"},
		"tokens column":  {func(b *Batch) { b.Msg.Tokens.Set(5, 1) }, "message columns longer"},
		"column length":  {func(b *Batch) { b.Req.InputTokens.Set(4, 1) }, "column input_tokens holds 5 values for 2 requests"},
	} {
		b := badBatch()
		if err := b.CheckValid(); err != nil {
			t.Fatalf("%s: a valid batch refused: %v", name, err)
		}
		tc.breakIt(b)
		err := b.CheckValid()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, tc.want)
		}
	}
}

// TestReadTablesEntryCheck checks that a table read back passes the same
// entry check as a raw file: a negative token count written into the
// table comes back null, with a value_negative check on its run.
func TestReadTablesEntryCheck(t *testing.T) {
	dir := t.TempDir()
	w, err := NewParquetWriter(dir, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := badBatch()
	if err := w.Batch(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Run(&Run{RunID: "r", Tool: "synth", RequestCount: 2}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var got Collector
	if err := ReadTables(dir, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Requests) != 2 || got.Requests[0].OutputTokens != nil || got.Requests[1].StartNs != nil {
		t.Fatalf("requests read back: %+v", got.Requests)
	}
	var codes []string
	for _, c := range got.Runs[0].Checks {
		codes = append(codes, c.Code+"/"+c.Field)
	}
	if s := strings.Join(codes, " "); s != "value_negative/start_ns value_out_of_range/stream_end_offset_ns value_negative/output_tokens value_negative/offset_ns" {
		t.Errorf("run checks: %s", s)
	}
}

// TestEntryCountBelowMessages checks the thresholds of the output-count
// consistency check and its correction: 0 beside messages, under half of
// 4 or more corrected; a count a few short, a request a tool's trap
// corrected, and a count above the messages left alone.
func TestEntryCountBelowMessages(t *testing.T) {
	b := NewBatch("r")
	add := func(count int64, msgs int, corrections string) {
		i := b.AddRequest(int64(b.Len()))
		b.Req.Status[i] = CodeOK
		for j := range msgs {
			b.AddMessage(int64(10*(j+1)), MsgContent)
		}
		b.FillFromMessages(i)
		b.Req.OutputTokens.Set(i, count)
		b.Req.OutputTokensSource.Set(i, SourceServerUsage)
		if corrections != "" {
			b.Req.Corrections.Set(i, corrections)
		}
	}
	add(0, 10, "")      // 0: corrected to 10
	add(10, 100, "")    // 1: corrected to 100
	add(97, 100, "")    // 2: a retokenized count: kept
	add(1, 3, "")       // 3: fewer than 4 messages: kept
	add(3, 8, "x_trap") // 4: a trap's: kept
	add(500, 100, "")   // 5: multi-token chunks: kept
	var e EntryCheck
	if err := e.Batch(b); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int64{10, 100, 97, 1, 3, 500} {
		got, _ := b.Req.OutputTokens.Get(i)
		corrected := b.Req.Corrections.Get(i) == CheckCountBelowMessages
		if got != want || corrected != (i < 2) {
			t.Errorf("request %d: output_tokens %d (corrections %q), want %d", i, got, b.Req.Corrections.Get(i), want)
		}
	}
	if rep, _ := b.Req.ReportedOutputTokens.Get(1); rep != 10 || b.Req.OutputTokensSource.Get(1) != SourceChunkCount {
		t.Errorf("request 1: reported %v, source %q", rep, b.Req.OutputTokensSource.Get(1))
	}
	ch := e.Checks("r")
	if len(ch) != 1 || ch[0].Requests != 2 || !ch[0].Corrected {
		t.Errorf("checks %+v", ch)
	}
}

// TestEntryCheckScheduleAndSpec: an intended start 5 s after the send
// (a clock of another field; a tool sends early by far less) and
// speculative-decoding counts accepting more than drafted, or more than
// the request generated, are nulled and counted; a start 0.5 ms early
// and consistent counts are kept.
func TestEntryCheckScheduleAndSpec(t *testing.T) {
	p := func(v int64) *int64 { return &v }
	start := int64(1_000_000_000_000)
	rows := []Request{
		{RunID: "r", RequestKey: 0, Status: StatusOK, StartNs: p(start), ScheduledStartNs: p(start + 5e9), ScheduledStartSource: "t:x"},
		{RunID: "r", RequestKey: 1, Status: StatusOK, StartNs: p(start), ScheduledStartNs: p(start + 500_000), ScheduledStartSource: "t:x"},
		{RunID: "r", RequestKey: 2, Status: StatusOK, OutputTokens: p(100), SpecSteps: p(10), DraftTokens: p(10), AcceptedTokens: p(60)},
		{RunID: "r", RequestKey: 3, Status: StatusOK, OutputTokens: p(100), SpecSteps: p(200), DraftTokens: p(900), AcceptedTokens: p(150)},
		{RunID: "r", RequestKey: 4, Status: StatusOK, OutputTokens: p(100), SpecSteps: p(40), DraftTokens: p(120), AcceptedTokens: p(59)},
	}
	b := NewBatch("r")
	for i := range rows {
		if err := b.AppendRow(&rows[i], nil); err != nil {
			t.Fatal(err)
		}
	}
	var e EntryCheck
	if err := e.Batch(b); err != nil {
		t.Fatal(err)
	}
	if b.Req.ScheduledStartNs.Has(0) || b.Req.ScheduledStartSource.Get(0) != "" {
		t.Error("an intended start 5 s after the send kept")
	}
	if v, ok := b.Req.ScheduledStartNs.Get(1); !ok || v != start+500_000 {
		t.Error("an intended start 0.5 ms after the send nulled")
	}
	if !b.Req.AcceptedTokens.Has(4) || b.Req.AcceptedTokens.Has(2) || b.Req.AcceptedTokens.Has(3) {
		t.Errorf("spec counts: accepted kept %v %v %v, want false false true", b.Req.AcceptedTokens.Has(2), b.Req.AcceptedTokens.Has(3), b.Req.AcceptedTokens.Has(4))
	}
	n := 0
	for _, c := range e.Checks("r") {
		if c.Code == CheckOutOfRange && (c.Field == "scheduled_start_ns" || c.Field == "accepted_tokens") {
			n += int(c.Requests)
		}
	}
	if n != 3 {
		t.Errorf("%d requests counted, want 3: %+v", n, e.Checks("r"))
	}
}
