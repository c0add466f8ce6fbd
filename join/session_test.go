package join

import (
	"testing"

	"github.com/tokentrace/tokentrace/formats"
)

// TestSession: pass 1 keeps the client rows' keys and a server row of the
// inputs, a server log adds another; Match pairs each client with its
// record by X-Request-Id; pass 2 copies the server's queue into the
// client rows and the match quality into the input's server row; the log's
// row is replayed with its quality. Rejoin rebuilds the counts from the
// joined rows.
func TestSession(t *testing.T) {
	const s0 = int64(1_700_000_000_000_000_000)
	client := func(key int64, id string) formats.Request {
		return formats.Request{RunID: "c", RequestKey: key, XRequestID: id, Status: formats.StatusOK, StartNs: p(s0 + key*1e9),
			ClockDomain: formats.ClockUnix, StreamEndOffsetNs: p(110e6), MessageCount: 3}
	}
	srv := func(run string, key int64, id string, queue int64) formats.Request {
		r := server(id, "", s0+key*1e9+5e6, 1, 1)
		r.RunID, r.RequestKey, r.ServerQueueNs = run, key, p(queue)
		return r
	}
	inputs := []formats.Request{client(0, "req-a"), client(1, "req-b"), srv("s-in", 0, "req-a", 7e6)}
	sess := NewSession()
	keys := sess.KeySink()
	for i := range inputs {
		if err := formats.SendRow(keys, &inputs[i], nil); err != nil {
			t.Fatal(err)
		}
	}
	logRow := srv("s-log", 0, "req-b", 9e6)
	if err := formats.SendRow(sess.LogSink(), &logRow, nil); err != nil {
		t.Fatal(err)
	}
	if err := sess.LogSink().Run(&formats.Run{RunID: "s-log"}); err != nil {
		t.Fatal(err)
	}
	if sess.Clients() != 2 || sess.Servers() != 2 || sess.ClientYear() != 2023 {
		t.Fatalf("clients %d, servers %d, year %d", sess.Clients(), sess.Servers(), sess.ClientYear())
	}
	res := sess.Match(Options{})
	if len(res.Pairs) != 2 || res.ByQuality[formats.MatchRequestID] != 2 || sess.Servers() != 2 {
		t.Fatalf("pairs %v, servers %d", res.Pairs, sess.Servers())
	}
	var out formats.Collector
	apply := sess.Apply(&out)
	for i := range inputs {
		if err := formats.SendRow(apply, &inputs[i], nil); err != nil {
			t.Fatal(err)
		}
	}
	if q := out.Requests[0].ServerQueueNs; q == nil || *q != 7e6 || out.Requests[0].MatchQuality != formats.MatchRequestID {
		t.Errorf("client 0: %+v", out.Requests[0])
	}
	if q := out.Requests[1].ServerQueueNs; q == nil || *q != 9e6 {
		t.Errorf("client 1 joined to the log's record: %+v", out.Requests[1])
	}
	if out.Requests[2].MatchQuality != formats.MatchRequestID || inputs[2].MatchQuality != "" {
		t.Errorf("the input's server row gets its quality on a copy: %q / %q", out.Requests[2].MatchQuality, inputs[2].MatchQuality)
	}
	var logs formats.Collector
	if err := sess.ReplayLogs(&logs); err != nil || len(logs.Requests) != 1 || logs.Requests[0].MatchQuality != formats.MatchRequestID {
		t.Fatalf("replayed logs %+v, %v", logs.Requests, err)
	}
	re := NewRejoin(nil)
	for i := range out.Requests {
		if err := formats.SendRow(re, &out.Requests[i], nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := formats.SendRow(re, &logs.Requests[0], nil); err != nil {
		t.Fatal(err)
	}
	rr, nc, ns, ok := re.Result()
	if !ok || nc != 2 || ns != 2 || rr.ByQuality[formats.MatchRequestID] != 2 || rr.UnmatchedClients != 0 || rr.UnmatchedServers != 0 {
		t.Errorf("rejoin: %+v clients %d servers %d ok %v", rr, nc, ns, ok)
	}
}
