package aiperf

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// pipelineRun writes a profile_export.jsonl of n records, record k with
// chunks(k) inter-chunk values of k+1 ms each (so each request's events
// and key can be checked), and returns its path.
func pipelineRun(t *testing.T, n int, chunks func(k int) int) string {
	t.Helper()
	var b strings.Builder
	for k := 0; k < n; k++ {
		fmt.Fprintf(&b, `{"metadata":{"x_request_id":"r%d","request_start_ns":%d,"benchmark_phase":"profiling"},"metrics":{"time_to_first_token":{"value":10,"unit":"ms"},"inter_chunk_latency":{"value":[`, k, 1760000000000000000+int64(k)*1000)
		for i := 0; i < chunks(k); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%d", k+1)
		}
		b.WriteString(`],"unit":"ms"}}}` + "\n")
	}
	path := filepath.Join(t.TempDir(), "profile_export.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// failingSink fails on its request number failAt (0-based), counting the
// requests it received.
type failingSink struct {
	formats.Collector
	failAt int
	got    int
}

var errSinkFull = errors.New("sink full")

func (s *failingSink) Batch(b *formats.Batch) error { return b.EachRow(s.Request) }

func (s *failingSink) Request(r *formats.Request, ev []formats.Event) error {
	s.got++
	if s.got-1 == s.failAt {
		return errSinkFull
	}
	return s.Collector.Request(r, ev)
}

// TestPipelineOrder: records read and converted ahead of the sink, in
// batches (batchRequests requests, batchEvents events; one record larger
// than a whole batch), reach it in line order with their own events.
func TestPipelineOrder(t *testing.T) {
	n := 3*batchRequests + 7
	chunks := func(k int) int {
		if k == 100 {
			return batchEvents + 5
		}
		return k%50 + 1
	}
	var c formats.Collector
	if err := ingest.ImportFile(New(), pipelineRun(t, n, chunks), ingest.Options{Label: "p"}, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Requests) != n {
		t.Fatalf("%d requests, want %d", len(c.Requests), n)
	}
	e := 0
	for k, r := range c.Requests {
		if r.RequestKey != int64(k) || r.XRequestID != fmt.Sprintf("r%d", k) {
			t.Fatalf("request %d: key %d id %q", k, r.RequestKey, r.XRequestID)
		}
		for i := 0; i <= chunks(k); i++ {
			ev := c.Events[e]
			want := int64(10e6 + i*(k+1)*1e6)
			if ev.RequestKey != int64(k) || int(ev.Index) != i || ev.OffsetNs != want {
				t.Fatalf("request %d event %d: key %d index %d offset %d, want offset %d", k, i, ev.RequestKey, ev.Index, ev.OffsetNs, want)
			}
			e++
		}
	}
	if e != len(c.Events) {
		t.Fatalf("%d events, want %d", len(c.Events), e)
	}
}

// TestPipelineSinkError: a sink's error stops the import and is returned;
// the requests before it were sent, none after.
func TestPipelineSinkError(t *testing.T) {
	for _, failAt := range []int{0, 5, batchRequests, 2*batchRequests + 3} {
		s := &failingSink{failAt: failAt}
		err := ingest.ImportFile(New(), pipelineRun(t, 4*batchRequests, func(int) int { return 3 }), ingest.Options{Label: "p"}, s)
		if !errors.Is(err, errSinkFull) {
			t.Fatalf("fail at %d: error %v, want %v", failAt, err, errSinkFull)
		}
		if s.got != failAt+1 || len(s.Requests) != failAt || len(s.Runs) != 0 {
			t.Errorf("fail at %d: %d calls, %d requests kept, %d runs", failAt, s.got, len(s.Requests), len(s.Runs))
		}
	}
}
