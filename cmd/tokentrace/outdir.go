package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tokentrace/tokentrace/formats"
)

// Outputs atomic as a set. analyze -o DIR writes every file — the tables,
// report.json, plots/ and report.html — into a hidden sibling directory
// (".DIR.tmp-<pid>-…"), and only when all of them are complete swaps it
// into place: DIR is renamed aside (".DIR.old-<pid>-…"), the new one
// renamed to DIR, the old one removed. A failed, interrupted or killed run
// leaves the previous complete output (or none), never a mix of new
// tables beside an older report.html; nothing of an earlier run survives
// the swap (stale plots included). Temporary directories of killed runs
// are removed by the next run into the same parent once their process is
// gone. DIR must hold only what analyze writes: a directory with other
// files is refused, not replaced.

// outputMarker is written last into every output set: DIR is analyze's.
const outputMarker = ".tokentrace-output"

// outputNames are the entries analyze writes into DIR (any layout).
var outputNames = []string{"events.parquet", "requests.parquet", "runs.parquet", "events", "requests", "runs",
	"report.json", "report.html", "plots", outputMarker}

// outputSet is one analyze's output directory being written.
type outputSet struct {
	target  string // DIR
	staging string // the hidden sibling being written
	done    bool
}

// newOutputSet checks that target can be replaced, removes temporaries of
// dead runs beside it and creates the staging directory.
func newOutputSet(target string) (*outputSet, error) {
	target = filepath.Clean(target)
	parent, base := filepath.Dir(target), filepath.Base(target)
	if base == "." || base == ".." || base == string(filepath.Separator) {
		return nil, usageError{fmt.Errorf("-o %s: name an output directory (analyze replaces it as a whole)", formats.SafeText(target))}
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	if err := replaceable(target); err != nil {
		return nil, err
	}
	removeStale(parent, base)
	staging, err := os.MkdirTemp(parent, "."+base+".tmp-"+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, err
	}
	return &outputSet{target: target, staging: staging}, nil
}

// replaceable is nil when target does not exist or holds only analyze's
// outputs (and temporaries of earlier tokentrace versions).
func replaceable(target string) error {
	st, err := os.Stat(target)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return usageError{fmt.Errorf("-o %s: not a directory", formats.SafeText(target))}
	}
	ents, err := os.ReadDir(target)
	if err != nil {
		return err
	}
	var foreign []string
	for _, e := range ents {
		n := e.Name()
		if slices.Contains(outputNames, n) || strings.HasPrefix(n, ".") && strings.Contains(n, ".tmp-") {
			continue
		}
		foreign = append(foreign, n)
	}
	if len(foreign) > 0 {
		if len(foreign) > 5 {
			foreign = append(foreign[:5], fmt.Sprintf("… %d more", len(foreign)-5))
		}
		return usageError{fmt.Errorf("-o %s holds files analyze did not write (%s): analyze replaces its output directory as a whole, so give a new or empty directory",
			formats.SafeText(target), formats.SafeText(strings.Join(foreign, ", ")))}
	}
	return nil
}

// staleAge is how old a temporary directory of a process that may still
// run must be before it is taken for a killed run's.
const staleAge = 24 * time.Hour

// removeStale removes the staging and set-aside directories of earlier
// runs into parent/base whose process is gone (or, where that cannot be
// told, that are older than staleAge).
func removeStale(parent, base string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), "."+base+".tmp-")
		if !ok {
			rest, ok = strings.CutPrefix(e.Name(), "."+base+".old-")
		}
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() {
			continue
		}
		alive, known := processAlive(pid)
		if info, err := e.Info(); err == nil && (known && !alive || !known && time.Since(info.ModTime()) > staleAge) {
			os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
}

// Dir is where the files go until Commit.
func (o *outputSet) Dir() string { return o.staging }

// Commit swaps the complete set into place.
func (o *outputSet) Commit() error {
	if err := os.WriteFile(filepath.Join(o.staging, outputMarker), []byte("written by tokentrace analyze at "+time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644); err != nil {
		return err
	}
	parent, base := filepath.Dir(o.target), filepath.Base(o.target)
	old := ""
	if _, err := os.Stat(o.target); err == nil {
		old = filepath.Join(parent, "."+base+".old-"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatInt(time.Now().UnixNano(), 36))
		if err := os.Rename(o.target, old); err != nil {
			return fmt.Errorf("replacing %s: %w", formats.SafeText(o.target), err)
		}
	}
	if err := os.Rename(o.staging, o.target); err != nil {
		if old != "" {
			os.Rename(old, o.target) // put the previous output back
		}
		return fmt.Errorf("replacing %s: %w", formats.SafeText(o.target), err)
	}
	o.done = true
	if old != "" {
		os.RemoveAll(old)
	}
	return nil
}

// Abort removes the staging directory unless the set was committed.
func (o *outputSet) Abort() {
	if !o.done {
		os.RemoveAll(o.staging)
		o.done = true
	}
}
