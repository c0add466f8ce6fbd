package join

import (
	"sort"
	"time"

	"github.com/tokentrace/tokentrace/formats"
)

// rowKey identifies a row across the two passes of a Session (run ids
// are the same in both: the passes read the same inputs the same way).
type rowKey struct {
	run string
	key int64
}

// A Session joins client rows with server records over two passes of the
// client inputs, holding at most the rows' join fields and the server
// records, never the events:
//
//  1. the client inputs stream into KeySink, which keeps each client row's
//     join fields (Client) and any server row found among them;
//  2. the rows of the --server-log files stream into LogSink;
//  3. Match pairs clients with servers (Match's rules);
//  4. the client inputs stream again through Apply, which copies each
//     matched server record's values into its client row (and its match
//     quality into a server row among the inputs), then ReplayLogs writes
//     the server logs' own rows with their match quality.
type Session struct {
	clients    []Client
	clientKeys []rowKey
	servers    []formats.Request
	serverKeys []rowKey
	logs       formats.Collector
	logIndex   map[int]int // server index → index in logs.Requests
	toServer   map[rowKey]int
	quality    map[rowKey]string
	result     *Result
}

// NewSession returns an empty Session.
func NewSession() *Session {
	return &Session{logIndex: map[int]int{}, toServer: map[rowKey]int{}, quality: map[rowKey]string{}}
}

// KeySink is the sink of the first pass over the client inputs.
func (s *Session) KeySink() formats.Sink { return keySink{s} }

type keySink struct{ s *Session }

func (k keySink) Batch(b *formats.Batch) error { return b.EachRow(k.request) }

func (k keySink) request(r *formats.Request, _ []formats.Event) error {
	c := r.Clone() // the row shares the batch's memory
	r = &c
	if r.IsServerRow() {
		k.s.servers = append(k.s.servers, *r)
		k.s.serverKeys = append(k.s.serverKeys, rowKey{r.RunID, r.RequestKey})
		return nil
	}
	k.s.clients = append(k.s.clients, ClientOf(r))
	k.s.clientKeys = append(k.s.clientKeys, rowKey{r.RunID, r.RequestKey})
	return nil
}

func (keySink) Run(*formats.Run) error { return nil }

// LogSink is where the server logs given apart (--server-log) are
// imported: their rows are kept, to be matched and replayed.
func (s *Session) LogSink() formats.Sink { return &s.logs }

// Clients and Servers count the client rows and server records so far.
func (s *Session) Clients() int { return len(s.clients) }

// Servers counts the server records of the inputs and of the logs.
func (s *Session) Servers() int {
	n := len(s.servers)
	if s.result != nil { // Match added the logs' records
		return n
	}
	for i := range s.logs.Requests {
		if s.logs.Requests[i].IsServerRow() {
			n++
		}
	}
	return n
}

// ClientYear is the UTC year of the median start of the clients on a wall
// clock (0 when none is), for server logs whose timestamps have no year.
func (s *Session) ClientYear() int {
	var starts []int64
	for _, c := range s.clients {
		if c.StartNs != nil && (c.Clock == formats.ClockUnix || c.Clock == "") {
			starts = append(starts, *c.StartNs)
		}
	}
	if len(starts) == 0 {
		return 0
	}
	sort.Slice(starts, func(a, b int) bool { return starts[a] < starts[b] })
	return time.Unix(0, starts[len(starts)/2]).UTC().Year()
}

// Match pairs the clients with every server record (those of the inputs
// first, then the logs'), records the pairs for Apply and ReplayLogs, and
// returns the result.
func (s *Session) Match(opt Options) *Result {
	for i := range s.logs.Requests {
		if s.logs.Requests[i].IsServerRow() {
			s.logIndex[len(s.servers)] = i
			s.servers = append(s.servers, s.logs.Requests[i])
			s.serverKeys = append(s.serverKeys, rowKey{s.logs.Requests[i].RunID, s.logs.Requests[i].RequestKey})
		}
	}
	s.result = Match(s.clients, s.servers, opt)
	for _, p := range s.result.Pairs {
		ck := s.clientKeys[p.Client]
		s.toServer[ck] = p.Server
		s.quality[ck] = p.Quality
		if li, ok := s.logIndex[p.Server]; ok {
			s.logs.Requests[li].MatchQuality = p.Quality
		} else {
			s.quality[s.serverKeys[p.Server]] = p.Quality
		}
	}
	return s.result
}

// Apply is the sink of the second pass: rows go on to next, a matched
// client row with its server record's values (Apply), a matched server
// row of the inputs with its match quality.
func (s *Session) Apply(next formats.Sink) formats.Sink {
	return &applySink{s: s, next: next, rows: formats.NewRowWriter(next)}
}

type applySink struct {
	s    *Session
	next formats.Sink
	rows *formats.RowWriter
}

func (j *applySink) StartRun(r *formats.Run) error { return formats.StartRun(j.next, r) }

func (j *applySink) Batch(b *formats.Batch) error {
	if err := b.EachRow(j.request); err != nil {
		return err
	}
	return j.rows.Flush()
}

func (j *applySink) request(r *formats.Request, ev []formats.Event) error {
	k := rowKey{r.RunID, r.RequestKey}
	q, ok := j.s.quality[k]
	if !ok {
		return j.rows.Request(r, ev)
	}
	cp := *r
	if si, isClient := j.s.toServer[k]; isClient {
		Apply(&cp, &j.s.servers[si], q)
	} else {
		cp.MatchQuality = q
	}
	return j.rows.Request(&cp, ev)
}

func (j *applySink) Run(r *formats.Run) error { return j.next.Run(r) }

// ReplayLogs writes the rows of the server logs (LogSink) to sink, with
// the match quality Match gave them.
func (s *Session) ReplayLogs(sink formats.Sink) error { return s.logs.Replay(sink) }

// Rejoin rebuilds a join's summary from rows an earlier session already
// joined (tables written by analyze --server-log): counts from the
// match_quality of client and server rows, pairs from the joined client
// rows, which carry the server's values. Its Request feeds each joined
// client row to also (a decomposition), when not nil.
type Rejoin struct {
	also                   formats.Sink
	rows                   *formats.RowWriter // to also
	clients                []Client
	servers                []formats.Request
	pairs                  []Pair
	byQuality              map[string]int
	nClients, nServers     int
	unmatchedC, unmatchedS int
}

// NewRejoin returns an empty Rejoin feeding joined client rows to also.
func NewRejoin(also formats.Sink) *Rejoin {
	j := &Rejoin{also: also, byQuality: map[string]int{}}
	if also != nil {
		j.rows = formats.NewRowWriter(also)
	}
	return j
}

// Batch implements formats.Sink.
func (j *Rejoin) Batch(b *formats.Batch) error {
	q := &b.Req
	if !q.MatchQuality.Any() && !q.ServerKind.Any() {
		// no joined client row and no server row: only counts
		j.nClients += b.Len()
		j.unmatchedC += b.Len()
		return nil
	}
	if err := b.EachRow(j.request); err != nil {
		return err
	}
	if j.rows != nil {
		return j.rows.Flush()
	}
	return nil
}

func (j *Rejoin) request(r *formats.Request, ev []formats.Event) error {
	c := r.Clone() // the row shares the batch's memory
	r = &c
	if r.IsServerRow() {
		j.nServers++
		if r.MatchQuality == "" {
			j.unmatchedS++
		}
		return nil
	}
	j.nClients++
	if r.MatchQuality == "" {
		j.unmatchedC++
		return nil
	}
	j.byQuality[r.MatchQuality]++
	j.pairs = append(j.pairs, Pair{Client: len(j.clients), Server: len(j.servers), Quality: r.MatchQuality})
	j.clients = append(j.clients, ClientOf(r))
	j.servers = append(j.servers, *r)
	if j.rows != nil {
		return j.rows.Request(r, ev)
	}
	return nil
}

// Run implements formats.Sink.
func (j *Rejoin) Run(*formats.Run) error { return nil }

// Result is the rebuilt join (no notes, no ambiguous keys: the tables do
// not keep them), with the clock offsets of the joined pairs; ok is false
// when no row was joined.
func (j *Rejoin) Result() (res *Result, clients, servers int, ok bool) {
	if len(j.pairs) == 0 {
		return nil, j.nClients, j.nServers, false
	}
	return &Result{Pairs: j.pairs, ByQuality: j.byQuality, UnmatchedClients: j.unmatchedC, UnmatchedServers: j.unmatchedS,
		Offsets: Offsets(j.clients, j.servers, j.pairs)}, j.nClients, j.nServers, true
}

// EventColumns implements formats.EventColumnSelector: join keys come
// from requests only.
func (keySink) EventColumns(*formats.Run) formats.EventColumns { return 0 }

// EventColumns implements formats.EventColumnSelector: what the next sink
// reads.
func (j *applySink) EventColumns(r *formats.Run) formats.EventColumns {
	return formats.EventColumnsOf(j.next, r)
}

// EventColumns implements formats.EventColumnSelector: what the sink fed
// with the joined rows reads (none without one).
func (j *Rejoin) EventColumns(r *formats.Run) formats.EventColumns {
	if j.also == nil {
		return 0
	}
	return formats.EventColumnsOf(j.also, r)
}
