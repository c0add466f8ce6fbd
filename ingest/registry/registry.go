// Package registry lists tokentrace's importers and turns command-line
// inputs (files and directories) into import jobs: which importer reads
// which file, with the tool's companion files (summaries) attached to their
// raw file rather than imported twice.
//
// # Detection
//
// Every input is opened once (ingest.Open) and its first 64 KiB, decoded,
// go to every importer's Detect. The benchmark tools' importers (GenAI-Perf,
// AIPerf, LLMPerf, inference-perf, vLLM, SGLang, guidellm, MLPerf) each
// recognize shapes only their tool writes, so at most one of them should
// claim a file:
//
//   - A file that two or more of them claim is ambiguous, and an error:
//     "matches the shapes of both genai-perf and vllm: name the format to
//     read it as with --from". A guess would import one tool's view of the
//     file and drop what only the other reads (a vLLM result that also has
//     an "experiments" key, read as GenAI-Perf, loses vLLM's per-request
//     arrays and their failures). This holds for a file found in a
//     directory too; --from settles it (in a directory, --from picks the
//     format for every file it recognizes).
//   - The server-log importer comes last and is a fallback: its signatures
//     are strings any file may quote (a benchmark result can embed a
//     server's log line or metric name), so it reads a file only when no
//     benchmark tool's importer claims it.
//
// A file named on the command line that no importer claims is an error:
// when it is a companion of a file beside it (a summary whose raw file is
// there), the error names that file and the --from that imports it alone;
// else it lists the formats and --from.
package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/aiperf"
	"github.com/tokentrace/tokentrace/ingest/genaiperf"
	"github.com/tokentrace/tokentrace/ingest/guidellm"
	"github.com/tokentrace/tokentrace/ingest/inferenceperf"
	"github.com/tokentrace/tokentrace/ingest/llmperf"
	"github.com/tokentrace/tokentrace/ingest/mlperf"
	"github.com/tokentrace/tokentrace/ingest/prometheus"
	"github.com/tokentrace/tokentrace/ingest/serverlog"
	"github.com/tokentrace/tokentrace/ingest/sglangbench"
	"github.com/tokentrace/tokentrace/ingest/vllmbench"
)

// importers lists every importer, in detection order, with what it knows
// of its tool (nil for server logs, which have no reported statistics to
// reproduce). Adding an importer is one line here.
var importers = []struct {
	New  func() ingest.Importer
	Tool *convention.Tool
}{
	{genaiperf.New, &genaiperf.Tool},
	{aiperf.New, &aiperf.Tool},
	{llmperf.New, &llmperf.Tool},
	{inferenceperf.New, &inferenceperf.Tool},
	{vllmbench.New, &vllmbench.Tool},
	{sglangbench.New, &sglangbench.Tool},
	{guidellm.New, &guidellm.Tool},
	{mlperf.New, &mlperf.Tool},
	{prometheus.New, nil},
	{func() ingest.Importer { return serverlog.New() }, nil},
}

// All returns every importer, in detection order.
func All() []ingest.Importer {
	out := make([]ingest.Importer, len(importers))
	for i, im := range importers {
		out[i] = im.New()
	}
	return out
}

// Tools returns what each importer knows of its tool (its convention
// profiles, reported-metric mapping, headline statistics), in the order of
// the importers: the values analyze reads through a convention.Set.
func Tools() []convention.Tool {
	var out []convention.Tool
	for _, im := range importers {
		if im.Tool != nil {
			out = append(out, *im.Tool)
		}
	}
	return out
}

// Names returns the importers' names (the values --from accepts).
func Names() []string {
	var out []string
	for _, im := range All() {
		out = append(out, im.Name())
	}
	return out
}

// Lookup returns the importer called name.
func Lookup(name string) (ingest.Importer, error) {
	for _, im := range All() {
		if im.Name() == name {
			return im, nil
		}
	}
	return nil, fmt.Errorf("unknown format %q (known: %s)", name, strings.Join(Names(), ", "))
}

// Job is one primary input file and the importer that reads it.
type Job struct {
	Path     string
	Importer ingest.Importer
	// input is the Input detection opened, kept for the import when the
	// input cannot be opened again (standard input, a pipe); nil for a
	// regular file, which Import opens anew.
	input *ingest.Input
}

// ErrUnrecognized is returned (wrapped, with the path) for an explicitly
// named file that no importer recognizes.
var ErrUnrecognized = errors.New("not a recognized trace format")

// Resolve is ResolveInputs with the default options (standard input is
// os.Stdin).
func Resolve(inputs []string, from string) (jobs []Job, skipped []string, err error) {
	return ResolveInputs(inputs, from, ingest.Options{})
}

// ResolveInputs turns inputs into jobs. "-" is standard input (opt.Stdin,
// else os.Stdin). A file is detected (or read by the importer named from,
// when from is not ""); a directory contributes every recognized file
// below it (see listDir for symlinks and hidden directories), in lexical
// order, and skipped lists the files in directories that were not
// recognized. Companion files of a primary file (e.g.
// profile_export_genai_perf.json beside profile_export.json) are not jobs
// of their own. A file named explicitly is always a job; a file found in a
// directory is dropped when the same real file (symlinks resolved) was
// already an input or found earlier.
//
// Detection opens each file once (ingest.Open) and hands its decoded head
// to every importer's Detect, on opt.Parallel workers (the verdicts, and
// the first error, taken in the inputs' order). An input that cannot be opened again —
// standard input, a named pipe, a process substitution — stays open in
// its Job, and Import continues reading it from where detection left it;
// a regular file is closed after detection and opened again by Import, so
// that a directory of thousands of files holds no descriptors or buffers
// in between.
//
// A file that two importers claim is resolved by the rule of detect (see
// the package documentation); an explicitly named file no importer claims
// is an error naming the formats and --from.
func ResolveInputs(inputs []string, from string, opt ingest.Options) (jobs []Job, skipped []string, err error) {
	var forced ingest.Importer
	if from != "" {
		if forced, err = Lookup(from); err != nil {
			return nil, nil, err
		}
	}
	type cand struct {
		path     string
		explicit bool
	}
	var cands []cand
	seen := map[string]bool{} // real paths of the files found so far
	stdin := false
	for _, in := range inputs {
		if in == ingest.StdinPath {
			if stdin {
				return nil, nil, errors.New(`"-" (standard input) is given twice: it can be read once`)
			}
			stdin = true
			cands = append(cands, cand{in, true})
			continue
		}
		st, err := os.Stat(in)
		if err != nil {
			return nil, nil, err
		}
		if !st.IsDir() {
			cands = append(cands, cand{in, true})
			if r, err := filepath.EvalSymlinks(in); err == nil {
				seen[r] = true
			}
			continue
		}
		files, err := listDir(in, seen)
		if err != nil {
			return nil, nil, err
		}
		for _, f := range files {
			cands = append(cands, cand{f, false})
		}
	}
	// Each candidate is opened and recognized on its own (on several
	// workers: opt.Parallel), the verdicts then taken in order.
	type verdict struct {
		im    ingest.Importer
		in    *ingest.Input // kept open: not a regular file
		head  []byte        // of an explicit file no importer claims
		comps []string      // im's companions of the file
		err   error
	}
	verdicts := make([]verdict, len(cands))
	var firstErr atomic.Int64 // the smallest index whose verdict is an error
	firstErr.Store(int64(len(cands)))
	failed := func(i int) {
		for {
			cur := firstErr.Load()
			if int64(i) >= cur || firstErr.CompareAndSwap(cur, int64(i)) {
				return
			}
		}
	}
	forEach(len(cands), workerCount(opt, len(cands)), func(i int) bool { return int64(i) > firstErr.Load() }, func(i int) {
		c, v := cands[i], &verdicts[i]
		in, err := ingest.Open(c.path, opt)
		if err != nil {
			v.err = err
			failed(i)
			return
		}
		switch {
		case forced != nil && c.explicit:
			v.im = forced // a named file is read as told
		case forced != nil:
			// in a directory, --from picks the format but files of other
			// kinds (SOURCE.md, inputs.json) are still skipped
			if forced.Detect(c.path, in.Head()) {
				v.im = forced
			}
		default:
			if v.im, v.err = detect(c.path, in.Head()); v.err != nil {
				in.Close()
				failed(i)
				return
			}
		}
		if v.im == nil {
			if c.explicit {
				v.head = in.Head()
				failed(i)
			}
			in.Close()
			return
		}
		if in.Regular() {
			in.Close()
		} else {
			v.in = in
		}
		v.comps = v.im.Companions(c.path)
	})
	fail := func(err error) ([]Job, []string, error) {
		for _, v := range verdicts {
			if v.in != nil {
				v.in.Close()
			}
		}
		return nil, nil, err
	}
	companion := map[string]bool{}
	for i, c := range cands {
		v := verdicts[i]
		if v.err != nil {
			return fail(v.err)
		}
		if v.im == nil {
			if c.explicit {
				if owner, oim := companionOwner(c.path); owner != "" {
					return fail(fmt.Errorf("%s: %w on its own: it is a companion of %s beside it, which the %s importer reads with it: give that file or the directory; to import this file alone, name its format with --from %s",
						c.path, ErrUnrecognized, filepath.Base(owner), oim.Name(), oim.Name()))
				}
				return fail(unrecognized(c.path, v.head))
			}
			skipped = append(skipped, c.path)
			continue
		}
		jobs = append(jobs, Job{Path: c.path, Importer: v.im, input: v.in})
		for _, comp := range v.comps {
			companion[filepath.Clean(comp)] = true
		}
	}
	// Drop jobs that are another job's companion (a summary beside its raw
	// file), wherever they appeared in the order.
	out := jobs[:0]
	for _, j := range jobs {
		if !companion[filepath.Clean(j.Path)] {
			out = append(out, j)
		} else if j.input != nil {
			j.input.Close()
		}
	}
	var skippedOut []string
	for _, s := range skipped {
		if !companion[filepath.Clean(s)] {
			skippedOut = append(skippedOut, s)
		}
	}
	return out, skippedOut, nil
}

// companionOwner finds, among the files beside path (at most 1000 are
// looked at), one that an importer recognizes and that lists path as its
// companion: the raw file of a summary. It returns "" when there is none.
// It runs only for an explicitly named file that no importer claims, to
// say what that file needs.
func companionOwner(path string) (string, ingest.Importer) {
	if path == ingest.StdinPath || !ingest.Exists(path) {
		return "", nil
	}
	dir := filepath.Dir(path)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", nil
	}
	want := filepath.Clean(path)
	for i, e := range ents {
		if i == 1000 {
			break
		}
		p := filepath.Join(dir, e.Name())
		if !e.Type().IsRegular() || filepath.Clean(p) == want {
			continue
		}
		head, err := ingest.ReadHead(p)
		if err != nil {
			continue
		}
		im, err := detect(p, head)
		if err != nil || im == nil {
			continue
		}
		for _, c := range im.Companions(p) {
			if filepath.Clean(c) == want {
				return p, im
			}
		}
	}
	return "", nil
}

// unrecognized is the error for an explicitly named input no importer
// claims.
func unrecognized(path string, head []byte) error {
	known := fmt.Sprintf("known: %s; force one with --from", strings.Join(Names(), ", "))
	switch {
	case len(head) == 0:
		return fmt.Errorf("%s: %w: it is empty", ingest.DisplayName(path), ErrUnrecognized)
	case path == ingest.StdinPath:
		return fmt.Errorf("standard input: %w: name its format with --from (%s); standard input has no file name, so the formats told by their file names (summaries, logs) are not recognized there", ErrUnrecognized, strings.Join(Names(), ", "))
	}
	return fmt.Errorf("%s: %w (%s)", path, ErrUnrecognized, known)
}

// listDir returns the regular files below the input directory in, sorted,
// as paths under the name given (labels come from them), and adds their
// real paths to seen; files whose real path seen already holds are left
// out.
//
// Symbolic links are followed: a symlinked root (a CI job's results →
// artifacts/run-42), a symlinked file (read as the file it points to) and a
// symlinked directory below the root (walked under the link's name).
// Every real directory is walked at most once, so link cycles end; a link
// to a directory already walked (from the root, or through an earlier
// link) or to an ancestor of the link itself (a cycle, or a way out to the
// input's parent) is not followed. A file reached both directly and through
// a link is listed once, under its direct path. Broken links are ignored;
// directories (and directory links) whose name starts with "." are not
// entered.
func listDir(in string, seen map[string]bool) ([]string, error) {
	root, err := filepath.EvalSymlinks(in)
	if err != nil {
		return nil, err
	}
	type file struct {
		path, real string
		linked     bool // reached through a symlink below in
	}
	var found []file
	walked := map[string]bool{} // real directories walked
	type dirLink struct{ shown, real string }
	queue := []dirLink{{in, root}}
	for len(queue) > 0 {
		top := queue[0]
		queue = queue[1:]
		if walked[top.real] {
			continue
		}
		linked := top.shown != in
		err := filepath.WalkDir(top.real, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			shown := top.shown
			if rel, err := filepath.Rel(top.real, p); err == nil && rel != "." {
				shown = filepath.Join(top.shown, rel)
			}
			hidden := strings.HasPrefix(d.Name(), ".") && p != top.real
			switch {
			case d.IsDir():
				if hidden || walked[p] {
					return filepath.SkipDir
				}
				walked[p] = true
			case d.Type().IsRegular():
				found = append(found, file{shown, p, linked})
			case d.Type()&fs.ModeSymlink != 0:
				st, err := os.Stat(p)
				if err != nil { // broken link
					return nil
				}
				real, err := filepath.EvalSymlinks(p)
				if err != nil {
					return nil
				}
				switch {
				case st.Mode().IsRegular():
					found = append(found, file{shown, real, true})
				case st.IsDir() && !hidden && !within(filepath.Dir(p), real):
					queue = append(queue, dirLink{shown, real})
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	// Direct paths first, so that a file also reached through a link keeps
	// its own name.
	var files []string
	for _, direct := range []bool{true, false} {
		for _, f := range found {
			if f.linked == direct || seen[f.real] {
				continue
			}
			seen[f.real] = true
			files = append(files, f.path)
		}
	}
	sort.Strings(files)
	return files, nil
}

// within reports whether path is dir or lies below it (both cleaned, real
// paths).
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// ErrAmbiguous is returned (wrapped, with the path and the formats) for a
// file that two benchmark tools' importers claim.
var ErrAmbiguous = errors.New("matches the shapes of more than one format")

// detect returns the importer that recognizes path (whose decoded head is
// head), or nil; an error wrapping ErrAmbiguous when two benchmark tools'
// importers claim it (see the package documentation). The fallbacks (the
// importers without a Tool: Prometheus text, server logs) are asked only
// when no benchmark tool's importer claims the file, the last in the list
// first: a file the tools' importers claim — every file of a sweep of
// benchmark runs — does not pay for the server logs' scans of its head.
func detect(path string, head []byte) (ingest.Importer, error) {
	var claims []ingest.Importer
	for _, im := range importers {
		if im.Tool == nil {
			continue
		}
		if in := im.New(); in.Detect(path, head) {
			claims = append(claims, in)
		}
	}
	switch len(claims) {
	case 0:
		// the last fallback that claims the file, as when all were asked
		for i := len(importers) - 1; i >= 0; i-- {
			if importers[i].Tool != nil {
				continue
			}
			if in := importers[i].New(); in.Detect(path, head) {
				return in, nil
			}
		}
		return nil, nil
	case 1:
		return claims[0], nil
	}
	names := make([]string, len(claims))
	for i, im := range claims {
		names[i] = im.Name()
	}
	return nil, fmt.Errorf("%s: %w: %s; name the format to read it as with --from (e.g. --from %s): a guess would drop what only the other format reads",
		ingest.DisplayName(path), ErrAmbiguous, strings.Join(names, " and "), names[0])
}

// ErrLabels is returned (wrapped) when the labels do not match the jobs.
var ErrLabels = errors.New("labels do not match the inputs")

// Import runs every job into sink. labels, when not empty, name the jobs'
// runs in order (one per job); otherwise each run is labelled by
// ingest.DefaultLabel; labels two jobs share are made unique by
// UniqueLabels (a "-2", "-3", … suffix no other job's label has, said in
// one warning). With opt.NoHash, jobs whose files have the
// same size as another job's are hashed all the same (possible duplicate
// inputs), the others not.
//
// Several jobs are decoded on opt.Parallel workers (default: one per CPU,
// at most 4), and reach sink exactly as one after another would send
// them: each job's tool hint, rows and warnings (opt.Warn) in job order,
// never interleaved, the first failing job's error (after the rows it
// sent) ending the import. A few jobs are decoded ahead and held, within
// a bound on the rows held (see importParallel), so that memory does not
// grow with the number of files. The sink's methods and opt.Warn are
// called from one goroutine at a time, not always the caller's.
func Import(jobs []Job, labels []string, opt ingest.Options, sink formats.Sink) error {
	if len(labels) > 0 && len(labels) != len(jobs) {
		return fmt.Errorf("%w: %d --label values for %d input files: give one per file", ErrLabels, len(labels), len(jobs))
	}
	// Without hashing (Options.NoHash), files that could be the same file
	// given twice — two inputs of equal size — are hashed after all, so
	// that a pooled report can tell (its duplicate-input warning compares
	// digests); a single input, the common case, costs nothing.
	sizes := map[int64]int{}
	size := make([]int64, len(jobs))
	for i, j := range jobs {
		size[i] = -1
		if st, err := os.Stat(j.Path); err == nil {
			size[i] = st.Size()
			sizes[size[i]]++
		}
	}
	// requests.output_tokens holds the N the report uses (SCHEMA.md)
	sink = formats.WithOutputCount(sink)
	opts := make([]ingest.Options, len(jobs))
	names := make([]string, len(jobs))
	for i, j := range jobs {
		o := opt
		if o.NoHash && size[i] >= 0 && sizes[size[i]] > 1 {
			o.NoHash = false
		}
		if len(labels) > 0 {
			names[i] = labels[i]
		} else {
			names[i] = ingest.DefaultLabel(j.Path)
		}
		opts[i] = o
	}
	for i, l := range UniqueLabels(names, opt.Warn, func(i int) string { return ingest.DisplayName(jobs[i].Path) }) {
		opts[i].Label = l
	}
	if w := workerCount(opt, len(jobs)); w > 1 {
		return importParallel(jobs, opts, w, sink)
	}
	defer func() { // the inputs kept open by Resolve and not reached
		for _, j := range jobs {
			if j.input != nil {
				j.input.Close()
			}
		}
	}()
	for i, j := range jobs {
		jobs[i].input = nil // importJob closes it
		// the sink may prepare for this tool's runs (an Analyzer under
		// --convention tool computes only that tool's conventions)
		formats.ToolHint(sink, j.Importer.Name())
		if err := importJob(j, opts[i], sink); err != nil {
			return err
		}
	}
	return nil
}

// UniqueLabels returns names with each repetition of an earlier name
// given the first suffix "-2", "-3", … that is no name of the list and
// not yet given: x/run-2, y/run and z/run (labels run-2, run, run) become
// run-2, run and run-3, never two runs under one label. Renamings are
// said in one warning to warn (when not nil), naming the inputs (at(i):
// input i's name) of up to three of them.
func UniqueLabels(names []string, warn func(string), at func(i int) string) []string {
	taken := make(map[string]bool, len(names))
	for _, n := range names {
		taken[n] = true
	}
	used := make(map[string]bool, len(names))
	out := make([]string, len(names))
	var renamed []string
	count := 0
	for i, n := range names {
		if !used[n] {
			used[n], out[i] = true, n
			continue
		}
		l := n
		for k := 2; taken[l] || used[l]; k++ {
			l = fmt.Sprintf("%s-%d", n, k)
		}
		used[l], out[i] = true, l
		count++
		if len(renamed) < 3 {
			renamed = append(renamed, fmt.Sprintf("%s as %q", at(i), l))
		}
	}
	if count > 0 && warn != nil {
		more := ""
		if count > len(renamed) {
			more = fmt.Sprintf(", and %d more", count-len(renamed))
		}
		warn(fmt.Sprintf("run_label_collision: %d input(s) would share a run label with an earlier input, so each is a run of its own under a suffixed label: %s%s",
			count, strings.Join(renamed, "; "), more))
	}
	return out
}

// importJob imports one job, through the Input Resolve kept or a new one.
func importJob(j Job, opt ingest.Options, sink formats.Sink) error {
	in := j.input
	if in == nil {
		var err error
		if in, err = ingest.Open(j.Path, opt); err != nil {
			return err
		}
	}
	defer in.Close()
	return in.ImportWith(j.Importer, opt, sink)
}
