package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tokentrace/tokentrace/analyze"
)

// forensicFlags are the time flags of report, analyze and plot: which
// requests a report covers (--since, --until, --by, --trim), its windows
// (--window), the slowest requests (--top), the zone wall-clock times are
// shown in (--tz) and the request timeout that bounds requests without a
// recorded end (--request-timeout).
type forensicFlags struct {
	since, until, by, trim, window, tz, timeout string
	top                                         int
}

func (f *forensicFlags) register(c *cobra.Command) {
	f.registerSelect(c)
	c.Flags().StringVar(&f.window, "window", "", "cut each run into windows of this width (30s, 5m): per window requests started, completed, failed, TTFT/TPOT/E2E P50/P90/P99, ITL P99, output tok/s, goodput, requests in flight (--format csv writes the windows as CSV)")
	c.Flags().IntVar(&f.top, "top", 0, "list the N slowest requests by TTFT and by E2E, with the load at their start")
	c.Flags().StringVar(&f.tz, "tz", "UTC", "time zone of wall-clock times in text and Markdown reports and plots (UTC, Local, Europe/Paris); JSON is UTC")
}

// registerSelect registers the flags that choose requests by time (gate
// takes these only).
func (f *forensicFlags) registerSelect(c *cobra.Command) {
	c.Flags().StringVar(&f.since, "since", "", "cover the requests from this time on: RFC 3339 wall-clock time (2026-07-29T22:44:00Z; runs on the Unix clock) or an offset from the run's first request (+300s, +5m)")
	c.Flags().StringVar(&f.until, "until", "", "cover the requests before this time (same forms as --since)")
	c.Flags().StringVar(&f.by, "by", "start", "the request time --since, --until, --trim and --window apply to: start or end (a request without a recorded end: the bound of its in-flight time)")
	c.Flags().StringVar(&f.trim, "trim", "", "keep the steady state only: auto (the longest interval with at least 0.8 of the peak requests in flight, SGLang's steady-state rule; auto:RATIO sets the share) or HEAD,TAIL durations cut from the run's start and end (30s,10s)")
	c.Flags().StringVar(&f.timeout, "request-timeout", "", "the client's request timeout (e.g. 600s): how long a request without a recorded end is counted in flight in a run that is not closed-loop (default: as long as the run's longest request)")
}

// apply validates the flags into opt; it returns the display zone.
func (f *forensicFlags) apply(opt *analyze.Options) (*time.Location, error) {
	var err error
	if opt.Select.Since, err = analyze.ParseTimeRef(f.since); err != nil {
		return nil, usageError{fmt.Errorf("--since %w", err)}
	}
	if opt.Select.Until, err = analyze.ParseTimeRef(f.until); err != nil {
		return nil, usageError{fmt.Errorf("--until %w", err)}
	}
	switch f.by {
	case "", "start":
	case "end":
		opt.Select.ByEnd = true
	default:
		return nil, usageError{fmt.Errorf("--by %q: want start or end", f.by)}
	}
	if opt.Select.Trim, err = analyze.ParseTrim(f.trim); err != nil {
		return nil, usageError{err}
	}
	if f.window != "" {
		d, err := time.ParseDuration(f.window)
		if err != nil || d <= 0 {
			return nil, usageError{fmt.Errorf("--window %q: want a positive duration (30s, 5m)", f.window)}
		}
		opt.WindowNs = int64(d)
	}
	if f.timeout != "" {
		d, err := time.ParseDuration(f.timeout)
		if err != nil || d <= 0 {
			return nil, usageError{fmt.Errorf("--request-timeout %q: want a positive duration (600s)", f.timeout)}
		}
		opt.TimeoutNs = int64(d)
	}
	if f.top < 0 {
		return nil, usageError{fmt.Errorf("--top %d: want a count ≥ 0", f.top)}
	}
	opt.Top = f.top
	tz := f.tz
	if tz == "" {
		tz = "UTC"
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, usageError{fmt.Errorf("--tz %q: %v", f.tz, err)}
	}
	return loc, nil
}
