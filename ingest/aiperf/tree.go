package aiperf

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
)

// cellPart is one parameter of a sweep cell directory of AIPerf's multi-run trees:
// "<parameter>_<value>", several parameters joined by "__"
// (docs/api/sweep-aggregates.md, "Artifact Directory Layout Reference",
// ai-dynamo/aiperf@61aa933f).
var cellPart = regexp.MustCompile(`^(concurrency|request_rate)_([0-9]+(?:\.[0-9]+)?)$`)

// treeLoad fills a run's load from the sweep cell of AIPerf's multi-run
// tree its file lies in — <base>/<cell>/, <base>/profile_runs/trial_NNNN/
// <cell>/ (repeated trials) or <base>/<cell>/profile_runs/trial_NNNN/
// (independent trials) — when the files record none (a run without its
// summary), with a note saying so: AIPerf names each cell by the swept
// value, so the directory is the run's configured load.
func treeLoad(run *formats.Run, path string) {
	if run.Concurrency != nil || run.RequestRateRPS != nil {
		return
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return
	}
	dir := filepath.Dir(abs)
	cell := filepath.Base(dir)
	if strings.HasPrefix(filepath.Base(dir), "trial_") && filepath.Base(filepath.Dir(dir)) == "profile_runs" {
		cell = filepath.Base(filepath.Dir(filepath.Dir(dir)))
	}
	for _, part := range strings.Split(cell, "__") {
		m := cellPart.FindStringSubmatch(part)
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil || !(v > 0) {
			continue
		}
		switch m[1] {
		case "concurrency":
			run.Concurrency, run.LoadMode = &v, "concurrency"
		case "request_rate":
			run.RequestRateRPS, run.LoadMode = &v, "request_rate"
		}
		run.Notes = append(run.Notes, fmt.Sprintf("%s %s from the directory %s (a cell of AIPerf's multi-run tree); the files do not record the load", strings.ReplaceAll(m[1], "_", " "), m[2], cell))
	}
}
