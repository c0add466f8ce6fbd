package ingest

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
)

// Redacted is the text that replaces a secret.
const Redacted = "REDACTED"

var (
	secretKey   = regexp.MustCompile(`(?i)(authorization|api[-_]?key|secret|password|passwd|bearer|access[-_]?token|auth[-_]?token|x-api-key|cookie)`)
	bearerValue = regexp.MustCompile(`(?i)(bearer\s+)\S+`)
	headerLine  = regexp.MustCompile(`(?i)^\s*(authorization|x-api-key|api-key|cookie)\s*:`)
	skKey       = regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{8,}`)
)

// RedactJSON returns raw (a JSON value) as compact JSON with secrets
// replaced by "REDACTED": values of keys that name a credential
// (authorization, api_key, secret, password, token-bearing headers),
// "Name:value" header strings for such headers, bearer tokens and sk-…
// keys anywhere in a string. It returns the paths it redacted (e.g.
// "input_config.header[0]"), sorted. Invalid JSON is returned as "".
func RedactJSON(raw []byte, root string) (string, []string) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", nil
	}
	var paths []string
	v = redact(v, root, &paths)
	out, err := json.Marshal(v)
	if err != nil {
		return "", nil
	}
	sort.Strings(paths)
	return string(out), paths
}

func redact(v any, path string, paths *[]string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			p := path + "." + k
			if s, ok := val.(string); ok && secretKey.MatchString(k) && !strings.Contains(strings.ToLower(k), "tokenizer") && s != "" {
				x[k] = Redacted
				*paths = append(*paths, p)
				continue
			}
			x[k] = redact(val, p, paths)
		}
		return x
	case []any:
		for i, val := range x {
			x[i] = redact(val, path+"["+itoa(i)+"]", paths)
		}
		return x
	case string:
		s := x
		if loc := headerLine.FindStringIndex(s); loc != nil {
			s = s[:loc[1]] + Redacted
		}
		s = bearerValue.ReplaceAllString(s, "${1}"+Redacted)
		s = skKey.ReplaceAllString(s, Redacted)
		if s != x {
			*paths = append(*paths, path)
		}
		return s
	}
	return v
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
