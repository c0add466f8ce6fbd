package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/registry"
	"github.com/tokentrace/tokentrace/ingest/serverlog"
	"github.com/tokentrace/tokentrace/join"
)

// serverLogs are the --server-log files of analyze.
var serverLogs []string

func init() {
	analyzeSteps = append(analyzeSteps, analyzeStep{register: func(c *cobra.Command) {
		c.Flags().StringArrayVar(&serverLogs, "server-log", nil, "inference-server log to join to the client traces (vLLM, TGI, SGLang, Triton, llama.cpp, Ollama, OTLP/JSON gen_ai spans; repeatable): adds server_* columns to the requests table and a server_join section (TTFT decomposition) to the report; a file without any server record is an error; server logs inside input directories are left out unless given here")
	}})
}

// rowKey identifies a row across the two import passes (run ids are
// renamed identically in both).
type rowKey struct {
	run string
	key int64
}

// keySink collects the join fields of the client rows, and the server
// rows, of the positional inputs (pass 1).
type keySink struct {
	clients    []join.Client
	clientKeys []rowKey
	servers    []formats.Request
	serverKeys []rowKey
}

func (k *keySink) Request(r *formats.Request, _ []formats.Event) error {
	if r.IsServerRow() {
		k.servers = append(k.servers, *r)
		k.serverKeys = append(k.serverKeys, rowKey{r.RunID, r.RequestKey})
		return nil
	}
	k.clients = append(k.clients, join.ClientOf(r))
	k.clientKeys = append(k.clientKeys, rowKey{r.RunID, r.RequestKey})
	return nil
}

func (k *keySink) Run(*formats.Run) error { return nil }

// joinSink fills the matched server fields into client rows and the match
// quality into server rows as the positional inputs stream by (pass 2).
type joinSink struct {
	next     formats.Sink
	toServer map[rowKey]int    // client row → server index
	quality  map[rowKey]string // row → match quality
	servers  []formats.Request
}

func (j *joinSink) StartRun(r *formats.Run) error { return formats.StartRun(j.next, r) }

func (j *joinSink) Request(r *formats.Request, ev []formats.Event) error {
	k := rowKey{r.RunID, r.RequestKey}
	q, ok := j.quality[k]
	if !ok {
		return j.next.Request(r, ev)
	}
	cp := *r
	if si, isClient := j.toServer[k]; isClient {
		join.Apply(&cp, &j.servers[si], q)
	} else {
		cp.MatchQuality = q
	}
	return j.next.Request(&cp, ev)
}

func (j *joinSink) Run(r *formats.Run) error { return j.next.Run(r) }

// serverJoinSink prepares analyze's sink. Without --server-log it is
// Tee(pw, an). With it: the server logs are imported (runs labelled
// "server:<label>"), the positional inputs are read once for their join
// keys, client rows are matched with server records (package join), and
// the returned sink copies the matched server values into the client rows
// on the second, real import; finish writes the server-log rows to pw
// (with their match quality) and adds the server_join section to the
// report.
//
// A --server-log file that yields no server record is an error naming the
// file (a client trace given by mistake, a file cut before its first
// record, a script), unless it is a recognized server log without
// per-request timing (a Prometheus exposition, engine stats only): then a
// warning and a note. Warnings of the server logs (unknown lines, cut
// records with their position) go to stderr and to the section's notes.
//
// Inputs (joinInputJobs): a --server-log file is imported once, as a server
// log, also when a positional directory holds it; other server logs found
// inside positional directories are not imported (neither as runs nor
// joined) and are named in a note — only the logs given with --server-log,
// or named as positional files, are joined, so a directory gives the same
// join as its client file. A file given both as a positional input and
// with --server-log is imported once, from the positional inputs (an
// OTLP file holding client and server spans). Without --server-log,
// directories import as for `import` (server logs become server runs, not
// joined).
//
// Besides the sink it returns replay, which writes the server logs' own
// rows to pw (call it after the import, before finishing pw), and finish,
// which adds the join's summary to the report.
func serverJoinSink(cmd *cobra.Command, args []string, in inputFlags, rf reportFlags, pw *formats.ParquetWriter, an *analyze.Analyzer) (sink formats.Sink, replay func() error, finish func(*analyze.Report) error, err error) {
	if len(serverLogs) == 0 {
		return formats.Tee(pw, an), func() error { return nil }, func(*analyze.Report) error { return nil }, nil
	}
	positional := map[string]bool{}
	for _, a := range args {
		if abs, err := filepath.Abs(a); err == nil {
			positional[abs] = true
		}
	}
	var notes []string
	// pass 1: the positional inputs' join keys (their warnings are printed
	// by pass 2)
	keys := &keySink{}
	dirServerLogs = map[string]bool{}
	quiet := in
	quiet.quiet = true
	if err := importInputs(args, quiet, true, keys); err != nil {
		return nil, nil, nil, err
	}
	if len(dirServerLogs) > 0 {
		var skipped []string
		for p := range dirServerLogs {
			skipped = append(skipped, p)
		}
		sort.Strings(skipped)
		msg := fmt.Sprintf("server log(s) found in the input directories were neither imported nor joined (only --server-log files are): %s; give them with --server-log to join them", strings.Join(skipped, ", "))
		fmt.Fprintln(os.Stderr, "tokentrace: note:", msg)
		notes = append(notes, msg)
	}
	// yearless server timestamps (vLLM's MM-DD) take the client trace's year
	im := serverlog.New()
	if y := clientYear(keys.clients); y != 0 {
		im.Year, im.YearSource = y, "the client trace (median request start)"
	}
	var logs formats.Collector
	for _, p := range serverLogs {
		opt := ingest.Options{Label: "server:" + ingest.DefaultLabel(p), NoText: in.noText, Warn: func(msg string) {
			fmt.Fprintln(os.Stderr, "tokentrace: warning:", msg)
			notes = append(notes, msg)
		}}
		var res *serverlog.Result
		var err error
		if abs, aerr := filepath.Abs(p); aerr == nil && positional[abs] {
			notes = append(notes, p+" is also a positional input: its server rows are joined from there")
			res, _, err = im.Parse(p)
		} else {
			res, err = im.ImportFile(p, opt, &logs)
		}
		if err != nil {
			return nil, nil, nil, fmt.Errorf("--server-log %s: %w", p, err)
		}
		if len(res.Requests) == 0 && (res.NoTiming == "" || !res.Recognized) {
			return nil, nil, nil, noServerRecords(p, res)
		}
	}
	servers := append([]formats.Request{}, keys.servers...)
	serverKeys := append([]rowKey{}, keys.serverKeys...)
	logIdx := map[int]int{} // server index → index in logs.Requests
	for i := range logs.Requests {
		if logs.Requests[i].IsServerRow() {
			logIdx[len(servers)] = i
			servers = append(servers, logs.Requests[i])
			serverKeys = append(serverKeys, rowKey{logs.Requests[i].RunID, logs.Requests[i].RequestKey})
		}
	}
	res := join.Match(keys.clients, servers, join.Options{})
	js := &joinSink{toServer: map[rowKey]int{}, quality: map[rowKey]string{}, servers: servers}
	for _, p := range res.Pairs {
		ck := keys.clientKeys[p.Client]
		js.toServer[ck] = p.Server
		js.quality[ck] = p.Quality
		if li, ok := logIdx[p.Server]; ok {
			logs.Requests[li].MatchQuality = p.Quality
		} else {
			js.quality[serverKeys[p.Server]] = p.Quality
		}
	}
	conv := analyze.Canonical
	if rf.convention != "tool" {
		if c, err := profiles.Lookup(rf.convention); err == nil {
			conv = c
		}
	}
	dec := analyze.NewDecomposer(conv)
	js.next = formats.Tee(pw, an, dec)
	replay = func() error { return logs.Replay(pw) }
	finish = func(rep *analyze.Report) error {
		sj := &analyze.ServerJoin{ClientRequests: len(keys.clients), ServerRecords: len(servers), Matched: res.ByQuality,
			UnmatchedClients: res.UnmatchedClients, UnmatchedServers: res.UnmatchedServers, AmbiguousKeys: res.Ambiguous,
			ClockOffsets: []analyze.ClockOffset{}, Decomposition: dec.Result(), Notes: append(notes, res.Notes...)}
		sj.ClockOffsets = clockOffsets(res.Offsets)
		if sj.Notes == nil {
			sj.Notes = []string{}
		}
		rep.ServerJoin = sj
		fmt.Fprintf(cmd.ErrOrStderr(), "tokentrace: joined %d of %d client requests with %d server records\n", len(res.Pairs), len(keys.clients), len(servers))
		return nil
	}
	return js, replay, finish, nil
}

// dirServerLogs collects the server-log files joinInputJobs left out of
// the positional directories (reset by serverJoinSink).
var dirServerLogs map[string]bool

// joinInputJobs filters the jobs of the positional inputs when analyze has
// --server-log (without it, jobs are returned unchanged): a file given with
// --server-log and found again inside a positional directory is dropped (it
// is imported once, as a server log); any other server log found inside a
// positional directory is dropped and recorded in dirServerLogs. Files
// named as positional inputs are kept whatever they are. With --label, the
// labels name the jobs that remain.
func joinInputJobs(inputs []string, jobs []registry.Job) []registry.Job {
	if len(serverLogs) == 0 {
		return jobs
	}
	absSet := func(ps []string) map[string]bool {
		m := map[string]bool{}
		for _, p := range ps {
			if a, err := filepath.Abs(p); err == nil {
				m[a] = true
			}
		}
		return m
	}
	explicit, logs := absSet(inputs), absSet(serverLogs)
	var out []registry.Job
	for _, j := range jobs {
		a, err := filepath.Abs(j.Path)
		switch {
		case err != nil || explicit[a]:
			out = append(out, j)
		case logs[a]:
			// imported as --server-log
		case j.Importer.Name() == serverlog.Name:
			if dirServerLogs != nil {
				dirServerLogs[j.Path] = true
			}
		default:
			out = append(out, j)
		}
	}
	return out
}

// noServerRecords is the error for a --server-log file without any server
// record that is not a recognized log without per-request timing: what the
// file holds instead, and the client format it is detected as, if any.
func noServerRecords(path string, res *serverlog.Result) error {
	var why string
	switch {
	case res.Cut != "":
		why = "the file is cut before its first complete record: " + res.Cut
	case len(res.Clients) > 0:
		why = fmt.Sprintf("it holds %d client-side gen_ai span(s) and no server span", len(res.Clients))
	case res.Unknown > 0:
		why = fmt.Sprintf("its %d lines (first: line %d) match no server's record shape (vLLM, TGI, SGLang, Triton, llama.cpp, Ollama, OTLP gen_ai spans; ingest/serverlog/README.md)", res.Unknown, res.FirstUnknown)
	default:
		why = "it is empty"
	}
	if jobs, _, err := registry.Resolve([]string{path}, ""); err == nil && len(jobs) == 1 && jobs[0].Importer.Name() != serverlog.Name {
		why += fmt.Sprintf("; it is detected as format %q, a client-side trace: give it as an input, not with --server-log", jobs[0].Importer.Name())
	}
	return fmt.Errorf("--server-log %s: no server records: %s", path, why)
}

// clockOffsets converts join offsets (ns) to the report's (ms).
func clockOffsets(offs []join.Offset) []analyze.ClockOffset {
	out := []analyze.ClockOffset{}
	for _, o := range offs {
		co := analyze.ClockOffset{ClientClock: o.ClientClock, ServerClock: o.ServerClock, N: o.N, MedianMs: analyze.F(float64(o.MedianNs) / 1e6),
			HiMs: analyze.F(float64(o.HiNs) / 1e6), ResolutionMs: analyze.F(float64(o.ResolutionNs) / 1e6), Consistent: o.Consistent, LoMs: analyze.F(math.NaN())}
		if o.LoNs != nil {
			co.LoMs = analyze.F(float64(*o.LoNs) / 1e6)
		}
		out = append(out, co)
	}
	return out
}

// joinedSink rebuilds the server_join section from rows that analyze
// --server-log already joined (its written tables): counts from the
// match_quality of client and server rows, offsets and decomposition from
// the joined client rows, which carry the server's values.
type joinedSink struct {
	dec                    *analyze.Decomposer
	clients                []join.Client
	servers                []formats.Request
	pairs                  []join.Pair
	byQ                    map[string]int
	nClients, nServers     int
	unmatchedC, unmatchedS int
}

func (j *joinedSink) Request(r *formats.Request, ev []formats.Event) error {
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
	j.byQ[r.MatchQuality]++
	j.pairs = append(j.pairs, join.Pair{Client: len(j.clients), Server: len(j.servers), Quality: r.MatchQuality})
	j.clients = append(j.clients, join.ClientOf(r))
	j.servers = append(j.servers, *r)
	return j.dec.Request(r, ev)
}

func (j *joinedSink) Run(*formats.Run) error { return nil }

// joinedReportSink returns report's sink (an, plus a joinedSink) and the
// function that adds server_join to the report when some row was joined.
func joinedReportSink(rf reportFlags, an *analyze.Analyzer) (formats.Sink, func(*analyze.Report)) {
	conv := analyze.Canonical
	if rf.convention != "tool" {
		if c, err := profiles.Lookup(rf.convention); err == nil {
			conv = c
		}
	}
	j := &joinedSink{dec: analyze.NewDecomposer(conv), byQ: map[string]int{}}
	return formats.Tee(an, j), func(rep *analyze.Report) {
		if len(j.pairs) == 0 {
			return
		}
		rep.ServerJoin = &analyze.ServerJoin{ClientRequests: j.nClients, ServerRecords: j.nServers, Matched: j.byQ,
			UnmatchedClients: j.unmatchedC, UnmatchedServers: j.unmatchedS, ClockOffsets: clockOffsets(join.Offsets(j.clients, j.servers, j.pairs)),
			Decomposition: j.dec.Result(), Notes: []string{"recomputed from joined tables (match_quality and the server_* columns written by analyze --server-log)"}}
	}
}

// clientYear is the UTC year of the median start of the clients on a wall
// clock (0 when none is), for server logs whose timestamps have no year.
func clientYear(cs []join.Client) int {
	var starts []int64
	for _, c := range cs {
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
