package pybench

import (
	"bytes"
	"encoding/json"

	"github.com/tokentrace/tokentrace/ingest"
)

// ConfigJSON renders a result's configuration entries (file order) as one
// JSON object with secrets redacted (ingest.RedactJSON), bare non-finite
// markers restored; it returns the redacted paths.
func ConfigJSON(config []ingest.Entry) (string, []string) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range config {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(e.Key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(e.Value)
	}
	b.WriteByte('}')
	out, redacted := ingest.RedactJSON(b.Bytes(), "config")
	return Unmark(out), redacted
}
