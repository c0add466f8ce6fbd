package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/render"
	"github.com/tokentrace/tokentrace/analyze/reproduce"
	"github.com/tokentrace/tokentrace/analyze/slo"
	"github.com/tokentrace/tokentrace/analyze/stats"
	"github.com/tokentrace/tokentrace/analyze/tokenizer"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/aiperf"
	"github.com/tokentrace/tokentrace/ingest/genaiperf"
	"github.com/tokentrace/tokentrace/ingest/registry"
)

// inputFlags are the flags every importing command shares.
type inputFlags struct {
	from   string
	labels []string
	noText bool
	// quiet drops importInputs' warnings (a second pass over inputs
	// already read: serverjoin.go)
	quiet bool
	// noHash skips the inputs' SHA-256 (report: no provenance is written)
	noHash bool
	// serverLogs are analyze's --server-log files (serverjoin.go);
	// leftOutLogs, when not nil, collects the server logs found in input
	// directories and left out of the import (joinInputJobs).
	serverLogs  []string
	leftOutLogs map[string]bool
	// maxValue is --max-value-size (ingest.Options.MaxValueBytes).
	maxValue string
	// cmd is the command, whose input ("-") is standard input.
	cmd *cobra.Command
}

func (f *inputFlags) register(c *cobra.Command) {
	f.cmd = c
	c.Flags().StringVar(&f.from, "from", "", "force the input format ("+strings.Join(registry.Names(), ", ")+"); needed for standard input (-) when its format is told by a file name")
	c.Flags().StringVar(&f.maxValue, "max-value-size", ingest.FormatSize(ingest.DefaultMaxValueBytes),
		"largest single value an input may hold — a line, a JSON record or string, a file read as one document (a plain vLLM or SGLang result is streamed: the cap bounds what is kept of it) (e.g. 512MiB, 1GiB); larger values are refused before they are read in full")
	c.Flags().StringArrayVar(&f.labels, "label", nil, "run label for each input file, in order (default: the file's directory name)")
	if tableCommands[c.Name()] {
		c.Flags().BoolVar(&f.noText, "drop-text", false, "leave the generated text (Event.text, reasoning_text) out of the events table written")
		// the old name, kept working for scripts
		c.Flags().BoolVar(&f.noText, "no-text", false, "the old name of --drop-text")
		_ = c.Flags().MarkHidden("no-text")
	} else {
		inert(c, "no-text", "bool", c.Name()+" writes no events table")
	}
}

// tableCommands are the commands that write an events table: --drop-text
// acts only there.
var tableCommands = map[string]bool{"analyze": true, "import": true, "export": true}

// inert registers a flag that has no effect on c (kind "bool" or
// "string"): hidden, and deprecated with why, so that an old command line
// keeps working and says the flag does nothing here.
func inert(c *cobra.Command, name, kind, why string) {
	if kind == "bool" {
		c.Flags().Bool(name, false, "")
	} else {
		c.Flags().String(name, "", "")
	}
	_ = c.Flags().MarkDeprecated(name, "it has no effect: "+why)
}

// reportFlags are the flags of the commands that print a report.
type reportFlags struct {
	// verbose prints every warning and detail of a text or Markdown
	// output in full (docs/OUTPUT.md).
	verbose     bool
	convention  string
	tokenizer   string
	slo         string
	pool        bool
	format      string
	oslEdges    string
	islEdges    string
	percentiles string
	// noCorrections: the data checks' corrections are not applied
	noCorrections bool
	// memoryBudget is --memory-budget ("" : the default, memoryBudget())
	memoryBudget string
	// fx are the time flags (forensics.go), registered by the commands
	// that take them; loc is --tz once options() validated it.
	fx  forensicFlags
	loc *time.Location
	// timeoutNs is --request-timeout once options() validated it.
	timeoutNs int64
}

// noCorrectionsUsage is the help of --no-corrections.
const noCorrectionsUsage = "compute on the data as the tool wrote it: the data checks' corrections (analyze/TRAPS.md) are not applied; the checks are still reported"

// verboseUsage is the help of --verbose.
const verboseUsage = "text and markdown: every warning, data check and detail in full (by default one line each, grouped by code: docs/OUTPUT.md)"

// percentilesUsage is the help of --percentiles.
const percentilesUsage = "percentiles every metric's summary holds, in percent (default 50,90,95,99; e.g. 25,50,90,99,99.9); JSON keys p50…p99 and, beyond them, p99_9"

// register adds the report flags to c. The flags that shape the printed
// report (--percentiles, --osl-buckets, --isl-buckets) are shown only on
// the commands that print one (analyze, report), --pool also on gate; on
// the others they are inert (hidden, deprecated: they do nothing there).
func (f *reportFlags) register(c *cobra.Command) {
	c.Flags().StringVar(&f.convention, "convention", "tokentrace", "metric convention: tokentrace, tool (each run's own tool's), or a profile ("+strings.Join(profileNames(), ", ")+")")
	c.Flags().StringVar(&f.tokenizer, "tokenizer", "", "tokenizer for re-tokenized output counts: "+strings.Join(tokenizer.Builtins(), ", ")+", a tokenizer.json or a SentencePiece .model (default: the one a run recorded, when built in)")
	c.Flags().StringVar(&f.slo, "slo", "", "goodput SLO, e.g. 'ttft<=500ms,tpot<=15ms,e2e<=2s' (ttft, ttfo, tpot, e2e, max_itl with units; fluidity(500ms,50ms)>=0.9; vLLM's 'ttft:500 tpot:15' in ms)")
	c.Flags().StringVar(&f.format, "format", "text", "report format: text, json, markdown, or csv (the --window table)")
	c.Flags().BoolVar(&f.noCorrections, "no-corrections", false, noCorrectionsUsage)
	c.Flags().StringVar(&f.memoryBudget, "memory-budget", "", memoryBudgetUsage)
	switch c.Name() {
	case "analyze", "report", "gate":
		c.Flags().BoolVar(&f.verbose, "verbose", false, verboseUsage)
	}
	switch c.Name() {
	case "analyze", "report":
		c.Flags().BoolVar(&f.pool, "pool", false, "add one report over all runs pooled")
		c.Flags().StringVar(&f.oslEdges, "osl-buckets", "", "output-length bucket edges for e2e_by_osl, e.g. 0,64,128,256,inf")
		c.Flags().StringVar(&f.islEdges, "isl-buckets", "", "input-length bucket edges for ttft_by_isl")
		c.Flags().StringVar(&f.percentiles, "percentiles", "", percentilesUsage)
		return
	case "gate":
		c.Flags().BoolVar(&f.pool, "pool", false, "check the gates on all runs pooled (one subject), each run's P99 spread shown beside")
	default:
		inert(c, "pool", "bool", c.Name()+" treats its runs one by one")
	}
	for _, name := range []string{"osl-buckets", "isl-buckets", "percentiles"} {
		inert(c, name, "string", c.Name()+" prints no report tables")
	}
}

// options validates the report flags before any data is read.
func (f *reportFlags) options() (analyze.Options, error) {
	opt := analyze.Options{Tools: profiles, Reproduce: reproduce.Reproducer(profiles)}
	var err error
	if opt.SLO, err = slo.ParseSLO(f.slo); err != nil {
		return opt, usageError{err}
	}
	if f.loc, err = f.fx.apply(&opt); err != nil {
		return opt, err
	}
	f.timeoutNs = opt.TimeoutNs
	switch f.format {
	case "text", "json", "markdown", "md":
	case "csv":
		if opt.WindowNs == 0 {
			return opt, usageError{fmt.Errorf("--format csv writes the --window table: give --window")}
		}
	default:
		return opt, badChoice("--format", f.format, []string{"text", "json", "markdown", "csv"})
	}
	opt.Pool = f.pool
	if f.convention != "tool" {
		c, err := lookupConvention(f.convention)
		if err != nil {
			return opt, err
		}
		opt.Convention = func(*formats.Run) convention.Convention { return c }
	} else {
		opt.Convention = toolConvention
	}
	if opt.Percentiles, err = stats.ParsePercentiles(f.percentiles); err != nil {
		return opt, usageError{fmt.Errorf("--percentiles: %w", err)}
	}
	if opt.OSLEdges, err = parseEdges("--osl-buckets", f.oslEdges); err != nil {
		return opt, err
	}
	if opt.ISLEdges, err = parseEdges("--isl-buckets", f.islEdges); err != nil {
		return opt, err
	}
	return opt, nil
}

func parseEdges(flag, s string) ([]float64, error) {
	if s == "" {
		return nil, nil
	}
	var out []float64
	for _, p := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || (len(out) > 0 && v <= out[len(out)-1]) {
			return nil, usageError{fmt.Errorf("%s %q: want ascending numbers (inf allowed last)", flag, s)}
		}
		out = append(out, v)
	}
	if len(out) < 2 {
		return nil, usageError{fmt.Errorf("%s %q: need at least two edges", flag, s)}
	}
	return out, nil
}

// toolConvention is the run's own tool's convention, else the canonical one.
func toolConvention(r *formats.Run) convention.Convention {
	if c, ok := profiles.ForRun(r.Convention, r.Tool); ok {
		return c
	}
	return analyze.Canonical
}

func profileNames() []string {
	var out []string
	for _, c := range profiles.Profiles() {
		out = append(out, c.Name)
	}
	return out
}

// analyzer returns the Analyzer the report flags need: the chosen
// convention (for --convention tool every profile, each run computed under
// its own tool's only unless the runs are pooled), with the tokenizer.
func (f *reportFlags) analyzer() (*analyze.Analyzer, error) {
	var a *analyze.Analyzer
	if f.convention == "tool" {
		a = analyze.NewAnalyzer(profiles.Profiles()...)
		if !f.pool {
			a.ComputeOwnToolOnly()
		}
	} else {
		c, err := lookupConvention(f.convention)
		if err != nil {
			return nil, err
		}
		a = analyze.NewAnalyzer(c)
	}
	if err := f.prepare(a); err != nil {
		return nil, err
	}
	// fluidity constraints need their per-token deadlines while rows stream
	if slo, err := slo.ParseSLO(f.slo); err == nil {
		a.SetFluidity(slo.Deadlines())
	}
	return a, nil
}

// prepare gives a the data checks' corrections (unless --no-corrections)
// and the --tokenizer, or lets runs use the built-in tokenizer they
// recorded.
func (f *reportFlags) prepare(a *analyze.Analyzer) error {
	a.SetCorrections(profiles.Fixes(), !f.noCorrections)
	budget, err := memoryBudget(f.memoryBudget)
	if err != nil {
		return err
	}
	a.SetMemoryBudget(budget)
	if f.tokenizer != "" {
		tok, err := tokenizer.Open(f.tokenizer)
		if err != nil {
			return usageError{fmt.Errorf("--tokenizer: %w", err)}
		}
		a.SetTokenizer(tok)
		return nil
	}
	a.SetTokenizerOpener(func(name string) (analyze.TokenCounter, error) {
		for _, b := range tokenizer.Builtins() {
			if b == name {
				return tokenizer.Open(name)
			}
		}
		return nil, fmt.Errorf("not a built-in tokenizer (give --tokenizer PATH to a tokenizer.json or .model)")
	})
	return nil
}

func (f *reportFlags) write(w io.Writer, rep *analyze.Report) error {
	rep.Location = f.loc
	rep.Verbose = f.verbose
	switch f.format {
	case "json":
		return render.WriteJSON(w, rep)
	case "csv":
		return render.WriteWindowsCSV(w, rep)
	case "markdown", "md":
		return render.WriteMarkdown(w, rep)
	}
	return render.WriteText(w, rep)
}

// nonTraceFiles are files the tools (and tokentrace) write beside their
// results that hold no trace: GenAI-Perf's inputs.json (the prompts it
// sent), MLPerf's configuration, synth's truth.csv and arguments,
// analyze's report.json. Skipping them is not worth a message.
var nonTraceFiles = map[string]bool{"inputs.json": true, "mlperf.conf": true, "user.conf": true, "audit.conf": true,
	"truth.csv": true, "synth.args": true, "report.json": true, outputMarker: true,
	// GenAI-Perf analyze's table across its scenarios and its checkpoint
	genaiperf.AnalyzeSummary: true, "checkpoint.json": true}

// knownNonTrace reports whether a file skipped in an input directory is
// documentation, an image, written tables, or one of nonTraceFiles.
func knownNonTrace(p string) bool {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".md", ".txt", ".png", ".svg", ".html", ".parquet", ".arrow":
		return true
	}
	// AIPerf's aggregates across the runs of a multi-run tree
	return nonTraceFiles[filepath.Base(p)] || aiperf.IsAggregate(filepath.Base(p))
}

// findTableDirs returns dir itself when it holds tables (runs.parquet or a
// runs/ hive dataset), else every directory below it that does.
func findTableDirs(dir string) ([]string, error) {
	if formats.IsTableDir(dir) {
		return []string{dir}, nil
	}
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != dir {
			if strings.HasPrefix(d.Name(), ".") {
				// hidden: tokentrace's temporaries (".out.tmp-<pid>-…", a
				// killed run's leftovers) and other tools' caches
				return filepath.SkipDir
			}
			if formats.IsTableDir(p) {
				out = append(out, p)
				return filepath.SkipDir
			}
		}
		return nil
	})
	return out, err
}

// rawSources returns r's raw source files that carry a digest.
func rawSources(r *formats.Run) []formats.SourceFile {
	var out []formats.SourceFile
	for _, f := range r.SourceFiles {
		if f.Role == "raw" && f.SHA256 != "" {
			out = append(out, f)
		}
	}
	return out
}

// tablesSeen reports whether every run of a table folder has its raw
// source files among known (size and SHA-256): the same runs read
// before, from another table folder (a copy) or its twin; src names the
// first.
func tablesSeen(runs []formats.Run, known []formats.SourceFile) (src string, dup bool) {
	if len(runs) == 0 || len(known) == 0 {
		return "", false
	}
	for i := range runs {
		raw := rawSources(&runs[i])
		if len(raw) == 0 {
			return "", false
		}
		for _, f := range raw {
			if !slices.ContainsFunc(known, func(k formats.SourceFile) bool { return k.Bytes == f.Bytes && k.SHA256 == f.SHA256 }) {
				return "", false
			}
			if src == "" {
				src = f.Path
			}
		}
	}
	return src, true
}

// minArgs is cobra.MinimumNArgs reporting a usage error.
func minArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.MinimumNArgs(n)(cmd, args); err != nil {
			return usageError{fmt.Errorf("%w (usage: %s)", err, cmd.UseLine())}
		}
		return nil
	}
}

// noteRepeatedDirs says when one directory is given more than once (under
// any spelling: a/, ./a, a symlink): its files are found and imported once,
// where a file given twice is imported twice (and a pooled report warns).
func noteRepeatedDirs(inputs []string) {
	first := map[string]string{}
	for _, in := range inputs {
		st, err := os.Stat(in)
		if err != nil || !st.IsDir() {
			continue
		}
		real, err := filepath.EvalSymlinks(in)
		if err != nil {
			continue
		}
		if abs, err := filepath.Abs(real); err == nil {
			real = abs
		}
		if prev, ok := first[real]; ok {
			fmt.Fprintf(os.Stderr, "tokentrace: note: %s and %s are the same directory: its files are imported once\n", formats.SafeText(prev), formats.SafeText(in))
			continue
		}
		first[real] = in
	}
}

// importOptions are the ingest options of the input flags (Label is set
// per job by registry.Import). Warnings go to stderr, sanitized, unless
// quiet.
func (f inputFlags) importOptions() (ingest.Options, error) {
	opt := ingest.Options{NoText: f.noText, NoHash: f.noHash, Warn: func(msg string) { warnf("warning: %s", msg) }}
	if f.quiet {
		opt.Warn = nil
	}
	if f.maxValue != "" {
		n, err := ingest.ParseSize(f.maxValue)
		if err != nil {
			return opt, usageError{fmt.Errorf("--max-value-size: %w", err)}
		}
		opt.MaxValueBytes = n
	}
	if f.cmd != nil {
		opt.Stdin = f.cmd.InOrStdin()
	}
	// series points count against --memory-budget: a third of it, at
	// ~100 bytes a point (1 GiB: 3.6M points; past it they are thinned)
	opt.MaxSeriesPoints = max(gcBudget.Load()/3/seriesPointBytes, 1024)
	return opt, nil
}

// seriesPointBytes is what one series point costs held: the 80-byte
// SeriesPoint and its share of the interned names.
const seriesPointBytes = 100

// warnf prints "tokentrace: " and the message to stderr, every line passed
// through formats.SafeLines: file names and messages from the inputs
// cannot move the cursor, clear the screen or reverse the text.
func warnf(format string, args ...any) {
	fmt.Fprintln(os.Stderr, warnText(format, args...))
}

// warnText is warnf's line: tabs (cobra indents its suggestions with one)
// become four spaces rather than SafeLines' replacement character.
func warnText(format string, args ...any) string {
	return "tokentrace: " + formats.SafeLines(strings.ReplaceAll(fmt.Sprintf(format, args...), "\t", "    "))
}

// importInputs resolves inputs and streams them into sink. Directories
// holding tokentrace tables (runs.parquet) are read back as tables when
// tables is true. "-" is standard input.
func importInputs(inputs []string, f inputFlags, tables bool, sink formats.Sink) error {
	opt, err := f.importOptions()
	if err != nil {
		return err
	}
	var files []string
	seen := map[string]bool{}
	tablesRead := 0
	var known []formats.SourceFile // the raw files of the tables read
	var dupTables []string
	for _, in := range inputs {
		if st, err := os.Stat(in); err == nil && st.IsDir() && tables {
			// table directories (runs.parquet) at or below a directory input
			// are read as tables
			tdirs, err := findTableDirs(in)
			if err != nil {
				return err
			}
			for _, d := range tdirs {
				runs, err := formats.ReadRuns(d)
				if err != nil {
					return err
				}
				if src, dup := tablesSeen(runs, known); dup {
					dupTables = append(dupTables, d+" (its runs' source "+src+")")
					continue
				}
				if err := formats.ReadTables(d, formats.UniqueRuns(sink, seen, noteRenamed)); err != nil {
					return err
				}
				for _, r := range runs {
					known = append(known, rawSources(&r)...)
				}
				tablesRead++
			}
			if len(tdirs) > 0 && tdirs[0] == in {
				continue
			}
		}
		files = append(files, in)
	}
	if len(dupTables) > 0 && opt.Warn != nil {
		opt.Warn(fmt.Sprintf("%s: %d table folder(s) hold runs whose source files were read before, and are read once: %s",
			registry.CheckDuplicateInput, len(dupTables), strings.Join(dupTables[:min(3, len(dupTables))], "; ")))
	}
	if len(files) == 0 {
		return nil
	}
	if !f.quiet {
		noteRepeatedDirs(files)
	}
	if f.from != "" {
		if _, err := registry.Lookup(f.from); err != nil {
			return usageError{fmt.Errorf("--from: %w%s", err, convention.DidYouMean(f.from, registry.Names()))}
		}
	}
	jobs, skipped, err := registry.ResolveInputs(files, f.from, opt)
	if err != nil {
		return err
	}
	// serverjoin.go: with --server-log, server logs are not client inputs
	jobs = joinInputJobs(files, jobs, f)
	var data []string // skipped files that are not documentation
	for _, p := range skipped {
		if !knownNonTrace(p) {
			data = append(data, p)
		}
	}
	if len(data) > 0 && !f.quiet {
		warnf("skipped %d unrecognized file(s) in the given directories (%s)", len(data), summarizePaths(data))
	}
	if len(jobs) == 0 {
		if tablesRead > 0 {
			return nil
		}
		return fmt.Errorf("no recognized trace files in %s", strings.Join(files, ", "))
	}
	stop := func() {}
	if f.cmd == nil || !isQuiet(f.cmd) {
		stop = startProgress(jobs)
	}
	defer stop()
	labels := f.labels
	jobs, labels = registry.DropDuplicates(jobs, labels, known, opt.Warn)
	if err := registry.Import(jobs, labels, opt, formats.UniqueRuns(sink, seen, noteRenamed)); err != nil {
		if errors.Is(err, registry.ErrLabels) {
			return usageError{err}
		}
		return err
	}
	return nil
}

// summarizePaths names up to three paths' base names, sanitized
// (formats.SafeText: a name found in a directory is untrusted text).
func summarizePaths(paths []string) string {
	var names []string
	for i, p := range paths {
		if i == 3 {
			names = append(names, fmt.Sprintf("and %d more", len(paths)-3))
			break
		}
		names = append(names, formats.SafeText(filepath.Base(p)))
	}
	return strings.Join(names, ", ")
}

// startProgress shows a byte progress bar on stderr when it is a terminal
// and the inputs are large enough to wait for.
func startProgress(jobs []registry.Job) (stop func()) {
	var total int64
	for _, j := range jobs {
		if st, err := os.Stat(j.Path); err == nil {
			total += st.Size()
		}
	}
	if total < 64<<20 || !term.IsTerminal(int(os.Stderr.Fd())) {
		return func() {}
	}
	bar := progressbar.NewOptions64(total, progressbar.OptionSetWriter(os.Stderr), progressbar.OptionShowBytes(true),
		progressbar.OptionSetDescription("importing"), progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(100*time.Millisecond))
	base := ingest.BytesRead()
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = bar.Set64(ingest.BytesRead() - base)
			}
		}
	}()
	return func() { close(done); _ = bar.Finish() }
}

func newAnalyze() *cobra.Command {
	var in inputFlags
	var rf reportFlags
	var out string
	c := &cobra.Command{
		Use:   "analyze INPUT... -o DIR",
		Short: "Import traces, write events/requests/runs Parquet tables and report.json to DIR, print the report",
		Args:  minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageError{fmt.Errorf("analyze needs -o DIR")}
			}
			opt, err := rf.options()
			if err != nil {
				return err
			}
			// every file goes to a hidden sibling of -o, swapped into
			// place once all are written (outdir.go)
			set, err := newOutputSet(out)
			if err != nil {
				return err
			}
			defer onInterrupt(set.Abort)() // interrupt.go
			defer set.Abort()
			pw, err := formats.NewParquetWriter(set.Dir(), formats.WriteOptions{NoText: in.noText})
			if err != nil {
				return err
			}
			committed := false
			defer func() {
				if !committed {
					pw.Abort()
				}
			}()
			an, err := rf.analyzer()
			if err != nil {
				return err
			}
			// --server-log (serverjoin.go) joins server records to the rows
			sink, replayLogs, finishJoin, err := serverJoinSink(cmd, args, in, rf, pw, an)
			if err != nil {
				return err
			}
			if err := importInputs(args, in, true, sink); err != nil {
				return err
			}
			if err := replayLogs(); err != nil {
				return err
			}
			// The tables are complete: finish them (freeing the writer's
			// buffers for the report), commit once the report is made.
			if err := pw.Finish(); err != nil {
				return err
			}
			rep, err := an.Report(opt)
			if err != nil {
				return err
			}
			if err := finishJoin(rep); err != nil {
				return err
			}
			committed = true
			if err := pw.Close(); err != nil {
				return err
			}
			if err := formats.WriteFileAtomic(filepath.Join(set.Dir(), "report.json"), func(f *os.File) error { return render.WriteJSON(f, rep) }); err != nil {
				return err
			}
			if err := analyzePlots(cmd, set.Dir(), out, rep, an, &rf); err != nil { // plot.go
				return err
			}
			if err := set.Commit(); err != nil {
				return err
			}
			fmt.Fprintf(infoOut(cmd), "tokentrace: wrote %s: {events,requests,runs}.parquet, report.json%s\n", formats.SafeText(out),
				map[bool]string{true: "", false: ", plots/ and report.html"}[noPlots(cmd)])
			return rf.write(cmd.OutOrStdout(), rep)
		},
	}
	in.register(c)
	rf.register(c)
	rf.fx.register(c)          // forensics.go
	registerServerLogs(c, &in) // serverjoin.go
	registerAnalyzePlots(c)    // plot.go
	c.Flags().StringVarP(&out, "out", "o", "", "output directory for the tables and report.json")
	return c
}

func newImport() *cobra.Command {
	var in inputFlags
	var out string
	var arrow bool
	var layout, compression string
	c := &cobra.Command{
		Use:   "import INPUT... -o DIR",
		Short: "Import traces into events/requests/runs tables (Parquet; Arrow IPC with --arrow)",
		Args:  minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageError{fmt.Errorf("import needs -o DIR")}
			}
			if layout != formats.LayoutFlat && layout != formats.LayoutHive {
				return badChoice("--layout", layout, flagValues("import", "layout"))
			}
			if compression != formats.CompressionZstd && compression != formats.CompressionSnappy && compression != formats.CompressionNone {
				return badChoice("--compression", compression, flagValues("import", "compression"))
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			pw, err := formats.NewParquetWriter(out, formats.WriteOptions{NoText: in.noText, Layout: layout, Compression: compression})
			if err != nil {
				return err
			}
			defer onInterrupt(pw.Abort)() // interrupt.go
			var aw *formats.ArrowIPCWriter
			committed := false
			defer func() {
				if !committed {
					pw.Abort()
					if aw != nil {
						aw.Abort()
					}
				}
			}()
			sinks := []formats.Sink{pw}
			if arrow {
				if aw, err = formats.NewArrowIPCWriterWithOptions(out, formats.WriteOptions{NoText: in.noText}); err != nil {
					return err
				}
				defer onInterrupt(aw.Abort)()
				sinks = append(sinks, aw)
			}
			counter := &countSink{}
			sinks = append(sinks, counter)
			if err := importInputs(args, in, false, formats.Tee(sinks...)); err != nil {
				return err
			}
			committed = true
			if err := pw.Close(); err != nil {
				return err
			}
			if aw != nil {
				if err := aw.Close(); err != nil {
					return err
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "imported %s, %s, %s into %s\n", count(counter.runs, "run"), count(counter.requests, "request"), count(counter.events, "event"), out)
			return nil
		},
	}
	in.register(c)
	c.Flags().StringVarP(&out, "out", "o", "", "output directory")
	c.Flags().BoolVar(&arrow, "arrow", false, "also write events.arrow, requests.arrow, runs.arrow (Arrow IPC files)")
	c.Flags().StringVar(&layout, "layout", formats.LayoutFlat, "table layout: flat (DIR/events.parquet, …) or hive (DIR/events/run_id=…/part-NNNNN.parquet, …; see formats/SCHEMA.md)")
	c.Flags().StringVar(&compression, "compression", formats.CompressionZstd, "Parquet compression: zstd, snappy or none")
	return c
}

type countSink struct{ runs, requests, events int }

func (c *countSink) Batch(b *formats.Batch) error {
	c.requests += b.Len()
	c.events += b.Msg.Len()
	return nil
}

func (c *countSink) Run(r *formats.Run) error { c.runs++; return nil }

func newReport() *cobra.Command {
	var in inputFlags
	var rf reportFlags
	c := &cobra.Command{
		Use:   "report INPUT_OR_DIR...",
		Short: "Print the report of traces, or of tables written by analyze/import",
		Args:  minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opt, err := rf.options()
			if err != nil {
				return err
			}
			an, err := rf.analyzer()
			if err != nil {
				return err
			}
			// rows joined by analyze --server-log get their server_join
			// section back (serverjoin.go)
			sink, finishJoin := joinedReportSink(rf, an)
			in.noHash = true // the report shows no file digests
			if err := importInputs(args, in, true, sink); err != nil {
				return err
			}
			rep, err := an.Report(opt)
			if err != nil {
				return err
			}
			finishJoin(rep)
			return rf.write(cmd.OutOrStdout(), rep)
		},
	}
	in.register(c)
	rf.register(c)
	rf.fx.register(c) // forensics.go
	return c
}

func newVersion() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print tokentrace's version and table schema version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, args []string) {
			fmt.Fprintln(cmd.OutOrStdout(), versionLine()) // cli.go
		},
	}
}

func newReconcile() *cobra.Command {
	var in inputFlags
	var rf reportFlags
	var from, to, format string
	var stats []string
	c := &cobra.Command{
		Use:   "reconcile INPUT_OR_DIR...",
		Short: "Explain how each metric under one convention becomes the value under another, one choice at a time",
		Long: `For every run and metric (TTFT, TTST, TPOT, ITL, E2E, OSL) and statistic, print the tool's
reported value, the value under --from-convention (default: the run's own tool's convention)
and under --to-convention (default: tokentrace), then each differing choice changed in turn with its effect; the
steps sum to the difference.`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			toC, err := lookupConvention(to)
			if err != nil {
				return err
			}
			var fromC *convention.Convention
			if from != "tool" {
				c, err := lookupConvention(from)
				if err != nil {
					return err
				}
				fromC = &c
			}
			switch format {
			case "text", "json", "markdown", "md":
			default:
				return badChoice("--format", format, []string{"text", "json", "markdown"})
			}
			for _, st := range stats {
				if !validStat(st) {
					return usageError{fmt.Errorf("--stat %q: want mean, min, max, std, count, sum or pNN (0 ≤ NN ≤ 100)", st)}
				}
			}
			dirs, cleanup, err := tableDirs(args, in)
			defer cleanup()
			if err != nil {
				return err
			}
			var pairs [][2]convention.Convention
			pairOf := func(r *formats.Run) [2]convention.Convention {
				if fromC != nil {
					return [2]convention.Convention{*fromC, toC}
				}
				return [2]convention.Convention{toolConvention(r), toC}
			}
			for _, d := range dirs {
				runs, err := formats.ReadRuns(d)
				if err != nil {
					return err
				}
				for i := range runs {
					pairs = append(pairs, pairOf(&runs[i]))
				}
			}
			a := analyze.NewAnalyzer(convention.PathConventions(pairs)...)
			if err := rf.prepare(a); err != nil {
				return err
			}
			for _, d := range dirs {
				if err := formats.ReadTables(d, a); err != nil {
					return err
				}
			}
			rec, err := reproduce.Reconcile(a, pairOf, stats, profiles)
			if err != nil {
				return err
			}
			switch format {
			case "json":
				return render.WriteIndentedJSON(cmd.OutOrStdout(), rec)
			case "markdown", "md":
				return render.WriteReconciliation(cmd.OutOrStdout(), rec, true)
			}
			return render.WriteReconciliation(cmd.OutOrStdout(), rec, false)
		},
	}
	in.register(c)
	c.Flags().StringVar(&rf.tokenizer, "tokenizer", "", "tokenizer for re-tokenized output counts (see report --tokenizer)")
	c.Flags().BoolVar(&rf.noCorrections, "no-corrections", false, noCorrectionsUsage)
	c.Flags().StringVar(&rf.memoryBudget, "memory-budget", "", memoryBudgetUsage)
	c.Flags().StringVar(&from, "from-convention", "tool", "starting convention: tool (each run's own tool's) or a profile name")
	c.Flags().StringVar(&to, "to-convention", "tokentrace", "target convention")
	c.Flags().StringArrayVar(&stats, "stat", []string{"mean", "p50", "p99"}, "statistics to reconcile (mean, p50, p90, p99, …)")
	c.Flags().StringVar(&format, "format", "text", "text, json or markdown")
	return c
}

// validStat reports whether reconcile knows the statistic.
func validStat(s string) bool {
	switch s {
	case "mean", "avg", "median", "min", "max", "std", "count", "sum":
		return true
	}
	if p, ok := strings.CutPrefix(s, "p"); ok {
		v, err := strconv.ParseFloat(p, 64)
		return err == nil && v >= 0 && v <= 100
	}
	return false
}

// tableDirs returns table directories for inputs: directories holding
// runs.parquet as they are, other inputs imported into one temporary table
// directory (removed by cleanup).
func tableDirs(inputs []string, f inputFlags) (dirs []string, cleanup func(), err error) {
	cleanup = func() {}
	var raw []string
	for _, in := range inputs {
		if formats.IsTableDir(in) {
			dirs = append(dirs, in)
		} else {
			raw = append(raw, in)
		}
	}
	if len(raw) == 0 {
		return dirs, cleanup, nil
	}
	tmp, err := os.MkdirTemp("", "tokentrace-")
	if err != nil {
		return nil, cleanup, err
	}
	cleanup = func() { os.RemoveAll(tmp) }
	pw, err := formats.NewParquetWriter(tmp, formats.WriteOptions{NoText: f.noText})
	if err != nil {
		return nil, cleanup, err
	}
	if err := importInputs(raw, f, false, pw); err != nil {
		pw.Abort()
		return nil, cleanup, err
	}
	if err := pw.Close(); err != nil {
		return nil, cleanup, err
	}
	return append(dirs, tmp), cleanup, nil
}

// profiles are the conventions tokentrace knows: the canonical one and
// every importer's tool profiles (convention.Tool), which reports use to
// reproduce each tool's statistics.
var profiles = convention.NewSet(analyze.Canonical, registry.Tools()...).WithProfiles(analyze.Variants...).WithTraps(analyze.Traps...).WithTraps(registry.Traps()...)

// noteRenamed tells the user that a later input's run was renamed
// (formats.UniqueRuns).
func noteRenamed(orig, id string) {
	warnf("run %q of a later input renamed %q (an earlier input has a run of that name)", orig, id)
}

// count writes n with its noun, plural unless n is 1 ("1 run", "2 runs").
func count[N int | int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
