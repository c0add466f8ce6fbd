package main

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/slo"
	"github.com/tokentrace/tokentrace/analyze/tokenizer"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest/registry"
	"github.com/tokentrace/tokentrace/plots"
)

// The command-line conventions every command shares: --version, -q/--quiet,
// "did you mean" for a misspelt flag or name, completion of flag values,
// and each command's long help and examples (commandDocs).

// versionLine is what `tokentrace version` and `tokentrace --version`
// print: the version and the schema versions of the tables and the report.
func versionLine() string {
	return fmt.Sprintf("tokentrace %s (table schema %d, report schema %d)", formats.Version, formats.SchemaVersion, analyze.ReportSchemaVersion)
}

// setUpConventions applies the shared conventions to root and its
// commands; newRoot calls it once the commands are added.
func setUpConventions(root *cobra.Command) {
	root.Version = versionLine()
	root.SetVersionTemplate("{{.Version}}\n")
	root.PersistentFlags().BoolP("quiet", "q", false, "print no report and no progress (exit status, --junit/--json files and written tables as usual); warnings and errors still go to stderr")
	prev := root.PersistentPreRunE
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if isQuiet(cmd) {
			cmd.SetOut(io.Discard)
		}
		if prev != nil {
			return prev(cmd, args)
		}
		return nil
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{flagSuggestion(c, err)} })
	for _, c := range root.Commands() {
		if d, ok := commandDocs[c.Name()]; ok {
			if c.Long == "" {
				c.Long = d.long
			}
			c.Example = d.example
		}
		registerCompletions(c)
	}
}

// isQuiet reports whether -q/--quiet was given.
func isQuiet(cmd *cobra.Command) bool {
	q, _ := cmd.Flags().GetBool("quiet")
	return q
}

// infoOut is where a command says what it wrote (stderr), io.Discard under
// --quiet. Warnings and notes do not go through it.
func infoOut(cmd *cobra.Command) io.Writer {
	if isQuiet(cmd) {
		return io.Discard
	}
	return cmd.ErrOrStderr()
}

var unknownFlag = regexp.MustCompile(`^unknown (?:shorthand )?flag: (?:'(.)' in -\S+|--?(\S+))$`)

// flagSuggestion adds to an unknown-flag error the closest flag of c
// (convention.Suggest over its visible flags): "unknown flag: --convntion;
// did you mean --convention?".
func flagSuggestion(c *cobra.Command, err error) error {
	m := unknownFlag.FindStringSubmatch(err.Error())
	if m == nil || m[2] == "" {
		return err
	}
	name, _, _ := strings.Cut(m[2], "=")
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Deprecated == "" {
			names = append(names, f.Name)
		}
	})
	slices.Sort(names)
	if s := convention.Suggest(name, names); s != "" {
		return fmt.Errorf("%w; did you mean --%s?", err, s)
	}
	return fmt.Errorf("%w (see %s --help)", err, c.CommandPath())
}

// lookupConvention is profiles.Lookup as a usage error, with "tool"
// among the names it suggests from.
func lookupConvention(name string) (convention.Convention, error) {
	c, err := profiles.Lookup(name)
	if err != nil {
		if !strings.Contains(err.Error(), "did you mean") && convention.Suggest(name, []string{"tool"}) != "" {
			err = fmt.Errorf(`%w; did you mean "tool" (each run's own tool's convention)?`, err)
		}
		return c, usageError{err}
	}
	return c, nil
}

// badChoice is the usage error of a flag value not among want, with the
// closest one: `--format "jsn": want text, json or markdown; did you mean "json"?`.
func badChoice(flag, value string, want []string) error {
	list := strings.Join(want, ", ")
	if n := len(want); n > 1 {
		list = strings.Join(want[:n-1], ", ") + " or " + want[n-1]
	}
	return usageError{fmt.Errorf("%s %q: want %s%s", flag, value, list, convention.DidYouMean(value, want))}
}

// flagValues are the values completed for a flag, by command ("" for
// every command that has the flag). A function so that the lists are
// those of the packages that define them.
func flagValues(cmd, flag string) []string {
	conventions := append([]string{"tokentrace", "tool"}, profileNames()...)
	conventions = slices.Compact(conventions)
	switch flag {
	case "convention", "from-convention":
		return conventions
	case "to-convention":
		return profileNames()
	case "preset":
		return slo.Presets()
	case "kind":
		return kindList()
	case "from":
		return registry.Names()
	case "plot-format":
		return plots.Formats
	case "layout":
		return []string{formats.LayoutFlat, formats.LayoutHive}
	case "compression":
		return []string{formats.CompressionZstd, formats.CompressionSnappy, formats.CompressionNone}
	case "format":
		switch cmd {
		case "gate":
			return []string{"text", "markdown", "json", "junit"}
		case "plot":
			return plots.Formats
		case "export":
			return []string{"arrow", "csv", "perfetto"}
		case "synth":
			return synthFormatNames()
		case "report", "compare":
			// report's csv is the --window table; compare's the tables
			return []string{"text", "json", "markdown", "csv"}
		}
		return []string{"text", "json", "markdown"}
	case "stat":
		return []string{"mean", "p50", "p90", "p95", "p99", "min", "max", "std"}
	}
	return nil
}

func kindList() []string {
	var out []string
	for _, k := range plots.Kinds {
		out = append(out, string(k))
	}
	return out
}

// registerCompletions gives c's flags their value completions: the names
// of flagValues (after the last comma for --kind, which takes a list),
// built-in tokenizers or a file for --tokenizer, gate files for --spec.
func registerCompletions(c *cobra.Command) {
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		var fn cobra.CompletionFunc
		switch vals := flagValues(c.Name(), f.Name); {
		case len(vals) > 0:
			list := f.Name == "kind" || f.Name == "convention" && c.Name() == "plot"
			fn = func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
				prefix := ""
				if i := strings.LastIndex(toComplete, ","); list && i >= 0 {
					prefix = toComplete[:i+1]
				}
				var out []cobra.Completion
				for _, v := range vals {
					if strings.HasPrefix(prefix+v, toComplete) {
						out = append(out, prefix+v)
					}
				}
				dir := cobra.ShellCompDirectiveNoFileComp
				if list {
					dir |= cobra.ShellCompDirectiveNoSpace // a list goes on after a comma
				}
				return out, dir
			}
		case f.Name == "tokenizer":
			fn = func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
				var out []cobra.Completion
				for _, b := range tokenizer.Builtins() {
					if strings.HasPrefix(b, toComplete) {
						out = append(out, b)
					}
				}
				return out, cobra.ShellCompDirectiveDefault // and files
			}
		case f.Name == "spec":
			fn = func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
				return []cobra.Completion{"yaml", "yml", "json"}, cobra.ShellCompDirectiveFilterFileExt
			}
		default:
			return
		}
		_ = c.RegisterFlagCompletionFunc(f.Name, fn)
	})
}
