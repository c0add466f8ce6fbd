package formats

// Version is tokentrace's version, written to Run.TokentraceVersion and
// Parquet metadata. Overridden at link time with
// -ldflags "-X github.com/tokentrace/tokentrace/formats.Version=…".
var Version = "0.1.0-dev"
