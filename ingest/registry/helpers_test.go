package registry

import "github.com/tokentrace/tokentrace/ingest"

func ingestOptions() ingest.Options { return ingest.Options{} }
