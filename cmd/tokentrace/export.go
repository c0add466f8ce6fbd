package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/plots"
)

// tableWriter is a table Sink that commits or discards its files.
type tableWriter interface {
	formats.Sink
	Close() error
	Abort()
}

func newExport() *cobra.Command {
	var in inputFlags
	var out, format, timeout string
	var csvSafe bool
	c := &cobra.Command{
		Use:   "export INPUT_OR_TABLES... --format arrow|csv -o DIR | --format perfetto -o FILE",
		Short: "Write the events/requests/runs tables as Arrow IPC or CSV files, or the runs as a trace Perfetto opens",
		Long: `Reads traces (any importer) or table directories written by import/analyze (either layout)
and writes the three tables to DIR:

  --format arrow   events.arrow, requests.arrow, runs.arrow: Arrow IPC files (pandas:
                   pyarrow.ipc.open_file(...).read_pandas(); polars: pl.read_ipc(...))
  --format csv     events.csv, requests.csv, runs.csv: RFC 4180 CSV with a header line; null
                   is an empty field; list columns of runs are JSON arrays (formats/SCHEMA.md).
                   Cells are the tables' values, raw: a run id or error text starting with =
                   is written as it is, and a spreadsheet would run it as a formula;
                   --csv-safe writes such cells with a leading ' for files people open

  --format perfetto  FILE: a Chrome trace-event JSON file that Perfetto (ui.perfetto.dev) and
                   chrome://tracing open: a process per run, a thread per concurrency slot,
                   slices queue/prefill/decode per request, failures as instant markers,
                   requests in flight and the runs' series as counter tracks (go doc
                   ./plots WritePerfetto)

Files are written under temporary names and renamed into place only when the export
succeeded.`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageError{fmt.Errorf("export needs -o DIR")}
			}
			if format == "perfetto" {
				return exportPerfetto(cmd, args, in, out, timeout)
			}
			opt := formats.WriteOptions{NoText: in.noText, CSVSafe: csvSafe}
			if csvSafe && format != "csv" {
				return usageError{fmt.Errorf("--csv-safe applies to --format csv only")}
			}
			var w tableWriter
			var err error
			switch format {
			case "arrow":
				w, err = formats.NewArrowIPCWriterWithOptions(out, opt)
			case "csv":
				w, err = formats.NewCSVWriter(out, opt)
			default:
				return badChoice("--format", format, []string{"arrow", "csv", "perfetto"})
			}
			if err != nil {
				return err
			}
			defer onInterrupt(w.Abort)() // interrupt.go
			counter := &countSink{}
			if err := importInputs(args, in, true, formats.Tee(w, counter)); err != nil {
				w.Abort()
				return err
			}
			if err := w.Close(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "exported %s, %s, %s to %s/{events,requests,runs}.%s\n",
				count(counter.runs, "run"), count(counter.requests, "request"), count(counter.events, "event"), out, format)
			return nil
		},
	}
	in.register(c)
	c.Flags().StringVarP(&out, "out", "o", "", "output directory (arrow, csv) or file (perfetto)")
	c.Flags().StringVar(&format, "format", "", "output format: arrow, csv or perfetto")
	c.Flags().BoolVar(&csvSafe, "csv-safe", false, "csv: write text cells a spreadsheet would evaluate (starting with = + - @, not a number) with a leading '")
	c.Flags().StringVar(&timeout, "request-timeout", "", "perfetto: the client's request timeout, bounding requests without a recorded end in open-loop runs (see report --request-timeout)")
	return c
}

// exportPerfetto writes the runs of args as one trace-event JSON file (the
// analysis's per-request data under the canonical convention, corrections
// applied, as report computes it).
func exportPerfetto(cmd *cobra.Command, args []string, in inputFlags, out, timeout string) error {
	rf := reportFlags{convention: "tokentrace", format: "text"}
	rf.fx.timeout = timeout
	opt, err := rf.options()
	if err != nil {
		return err
	}
	an, err := rf.analyzer()
	if err != nil {
		return err
	}
	in.noHash = true
	if err := importInputs(args, in, true, an); err != nil {
		return err
	}
	rep, err := an.Report(opt)
	if err != nil {
		return err
	}
	inputs, err := plotInputs(rep, an, nil, opt.TimeoutNs)
	if err != nil {
		return err
	}
	var runs []plots.Input
	var series []*formats.Run
	requests := 0
	for _, x := range inputs {
		row := an.RunRow(x.Report.RunID)
		if x.Report.Requests.Total == 0 && row != nil && len(formats.AllSeries(row)) > 0 {
			series = append(series, row)
			continue
		}
		runs = append(runs, x)
		requests += x.Report.Requests.Total
	}
	if err := formats.WriteFileAtomic(out, func(f *os.File) error { return plots.WritePerfetto(f, runs, series) }); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "exported %s (%s) and %s to %s (open it in ui.perfetto.dev or chrome://tracing)\n",
		count(len(runs), "run"), count(requests, "request"), count(len(series), "series-only run"), formats.SafeText(out))
	return nil
}
