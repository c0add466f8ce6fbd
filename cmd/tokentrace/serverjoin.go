package main

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/registry"
	"github.com/tokentrace/tokentrace/ingest/serverlog"
	"github.com/tokentrace/tokentrace/join"
)

// registerServerLogs adds analyze's --server-log flag to c, into in.
func registerServerLogs(c *cobra.Command, in *inputFlags) {
	c.Flags().StringArrayVar(&in.serverLogs, "server-log", nil, "inference-server log to join to the client traces (vLLM, TGI, SGLang, Triton, llama.cpp, Ollama, OTLP/JSON gen_ai spans; repeatable): adds server_* columns to the requests table and a server_join section (TTFT decomposition) to the report; a file without any server record is an error; server logs inside input directories are left out unless given here")
}

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
	if len(in.serverLogs) == 0 {
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
	session := join.NewSession()
	quiet := in
	quiet.quiet = true
	quiet.leftOutLogs = map[string]bool{}
	if err := importInputs(args, quiet, true, session.KeySink()); err != nil {
		return nil, nil, nil, err
	}
	if len(quiet.leftOutLogs) > 0 {
		skipped := slices.Sorted(maps.Keys(quiet.leftOutLogs))
		msg := fmt.Sprintf("server log(s) found in the input directories were neither imported nor joined (only --server-log files are): %s; give them with --server-log to join them", strings.Join(skipped, ", "))
		warnf("note: %s", msg)
		notes = append(notes, msg)
	}
	// yearless server timestamps (vLLM's MM-DD) take the client trace's year
	im := serverlog.New()
	if y := session.ClientYear(); y != 0 {
		im.Year, im.YearSource = y, "the client trace (median request start)"
	}
	for _, p := range in.serverLogs {
		opt := ingest.Options{Label: "server:" + ingest.DefaultLabel(p), NoText: in.noText, Warn: func(msg string) {
			warnf("warning: %s", msg)
			notes = append(notes, msg)
		}}
		var res *serverlog.Result
		var err error
		if abs, aerr := filepath.Abs(p); aerr == nil && positional[abs] {
			notes = append(notes, p+" is also a positional input: its server rows are joined from there")
			res, _, err = im.Parse(p)
		} else {
			res, err = im.ImportFile(p, opt, session.LogSink())
		}
		if err != nil {
			return nil, nil, nil, fmt.Errorf("--server-log %s: %w", p, err)
		}
		if len(res.Requests) == 0 && (res.NoTiming == "" || !res.Recognized) {
			return nil, nil, nil, noServerRecords(p, res)
		}
	}
	res := session.Match(join.Options{})
	conv := analyze.Canonical
	if rf.convention != "tool" {
		if c, err := profiles.Lookup(rf.convention); err == nil {
			conv = c
		}
	}
	dec := analyze.NewDecomposer(conv)
	replay = func() error { return session.ReplayLogs(pw) }
	finish = func(rep *analyze.Report) error {
		rep.ServerJoin = serverJoinSection(res, session.Clients(), session.Servers(), dec, append(notes, res.Notes...))
		fmt.Fprintf(cmd.ErrOrStderr(), "tokentrace: joined %d of %d client requests with %d server records\n", len(res.Pairs), session.Clients(), session.Servers())
		return nil
	}
	return session.Apply(formats.Tee(pw, an, dec)), replay, finish, nil
}

// joinInputJobs filters the jobs of the positional inputs when analyze has
// --server-log (without it, jobs are returned unchanged): a file given with
// --server-log and found again inside a positional directory is dropped (it
// is imported once, as a server log); any other server log found inside a
// positional directory is dropped and recorded in f.leftOutLogs (when
// not nil). Files named as positional inputs are kept whatever they are.
// With --label, the labels name the jobs that remain.
func joinInputJobs(inputs []string, jobs []registry.Job, f inputFlags) []registry.Job {
	if len(f.serverLogs) == 0 {
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
	explicit, logs := absSet(inputs), absSet(f.serverLogs)
	var out []registry.Job
	for _, j := range jobs {
		a, err := filepath.Abs(j.Path)
		switch {
		case err != nil || explicit[a]:
			out = append(out, j)
		case logs[a]:
			// imported as --server-log
		case j.Importer.Name() == serverlog.Name:
			if f.leftOutLogs != nil {
				f.leftOutLogs[j.Path] = true
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
	if ingest.Exists(path) { // a pipe cannot be read again to detect it
		if jobs, _, err := registry.Resolve([]string{path}, ""); err == nil && len(jobs) == 1 && jobs[0].Importer.Name() != serverlog.Name {
			why += fmt.Sprintf("; it is detected as format %q, a client-side trace: give it as an input, not with --server-log", jobs[0].Importer.Name())
		}
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

// serverJoinSection is the report's server_join section of a join result.
func serverJoinSection(res *join.Result, clients, servers int, dec *analyze.Decomposer, notes []string) *analyze.ServerJoin {
	if notes == nil {
		notes = []string{}
	}
	return &analyze.ServerJoin{ClientRequests: clients, ServerRecords: servers, Matched: res.ByQuality,
		UnmatchedClients: res.UnmatchedClients, UnmatchedServers: res.UnmatchedServers, AmbiguousKeys: res.Ambiguous,
		ClockOffsets: clockOffsets(res.Offsets), Decomposition: dec.Result(), Notes: notes}
}

// joinedReportSink returns report's sink (an, plus a join.Rejoin of the
// joined rows) and the function that adds server_join to the report when
// some row was joined.
func joinedReportSink(rf reportFlags, an *analyze.Analyzer) (formats.Sink, func(*analyze.Report)) {
	conv := analyze.Canonical
	if rf.convention != "tool" {
		if c, err := profiles.Lookup(rf.convention); err == nil {
			conv = c
		}
	}
	dec := analyze.NewDecomposer(conv)
	j := join.NewRejoin(dec)
	return formats.Tee(an, j), func(rep *analyze.Report) {
		if res, clients, servers, ok := j.Result(); ok {
			rep.ServerJoin = serverJoinSection(res, clients, servers, dec,
				[]string{"recomputed from joined tables (match_quality and the server_* columns written by analyze --server-log)"})
		}
	}
}
