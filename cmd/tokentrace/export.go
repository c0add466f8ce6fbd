package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tokentrace/tokentrace/formats"
)

// tableWriter is a table Sink that commits or discards its files.
type tableWriter interface {
	formats.Sink
	Close() error
	Abort()
}

func newExport() *cobra.Command {
	var in inputFlags
	var out, format string
	c := &cobra.Command{
		Use:   "export INPUT_OR_TABLES... --format arrow|csv -o DIR",
		Short: "Write the events/requests/runs tables of traces or of written tables as Arrow IPC or CSV files",
		Long: `Reads traces (any importer) or table directories written by import/analyze (either layout)
and writes the three tables to DIR:

  --format arrow   events.arrow, requests.arrow, runs.arrow: Arrow IPC files (pandas:
                   pyarrow.ipc.open_file(...).read_pandas(); polars: pl.read_ipc(...))
  --format csv     events.csv, requests.csv, runs.csv: RFC 4180 CSV with a header line; null
                   is an empty field; list columns of runs are JSON arrays (formats/SCHEMA.md)

Files are written under temporary names and renamed into place only when the export
succeeded.`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageError{fmt.Errorf("export needs -o DIR")}
			}
			opt := formats.WriteOptions{NoText: in.noText}
			var w tableWriter
			var err error
			switch format {
			case "arrow":
				w, err = formats.NewArrowIPCWriterWithOptions(out, opt)
			case "csv":
				w, err = formats.NewCSVWriter(out, opt)
			default:
				return badChoice("--format", format, []string{"arrow", "csv"})
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
			fmt.Fprintf(cmd.OutOrStdout(), "exported %d runs, %d requests, %d events to %s/{events,requests,runs}.%s\n",
				counter.runs, counter.requests, counter.events, out, format)
			return nil
		},
	}
	in.register(c)
	c.Flags().StringVarP(&out, "out", "o", "", "output directory")
	c.Flags().StringVar(&format, "format", "", "output format: arrow or csv")
	return c
}
