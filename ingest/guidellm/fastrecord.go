package guidellm

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/tokentrace/tokentrace/ingest/internal/jsonscan"
)

// fastObject splits the JSON object raw into its members as json.Unmarshal
// into an obj does, the values pointing into raw: one validating pass, no
// reflection. ok is false for anything it does not take exactly as
// encoding/json would — not an object, invalid JSON, a name with escapes
// or invalid UTF-8, a name given twice, data after the object —: the
// caller then asks encoding/json (FuzzFastObject holds the two together).
func fastObject(raw []byte) (obj, bool) {
	s := scanner{Scanner: jsonscan.Scanner{B: raw}}
	s.WS()
	o, ok := s.object(0)
	if !ok {
		return nil, false
	}
	s.WS()
	if s.I != len(s.B) {
		return nil, false
	}
	return o, true
}

// object reads the object at i as fastObject does (short when the input
// ends inside it). With s.subs, the objects among its members (and
// theirs, to subDepth) are split as they are validated and kept there,
// by the address of their first byte, for decoder.sub.
func (s *scanner) object(depth int) (obj, bool) {
	if s.Next() != '{' {
		return nil, false
	}
	o := make(obj, 24)
	ok := s.Members(func(key []byte) bool {
		if !utf8.Valid(key) {
			return false
		}
		if _, dup := o[string(key)]; dup {
			return false
		}
		var v []byte
		var ok bool
		if s.subs != nil && depth < subDepth && s.Next() == '{' {
			start := s.I
			var sub obj
			if sub, ok = s.object(depth + 1); ok {
				v = s.B[start:s.I]
				s.subs[&v[0]] = sub
			}
		} else {
			v, ok = s.Value(1)
		}
		k, known := internedKeys[string(key)]
		if !known {
			k = string(key)
		}
		o[k] = v
		return ok
	})
	if !ok {
		return nil, false
	}
	return o, true
}

// internedKeys are the names of request records, their info, timings
// and metrics: fastObject takes their strings from here instead of
// allocating one per record.
var internedKeys = func() map[string]string {
	m := map[string]string{}
	for _, set := range []map[string]bool{knownV3, knownV4} {
		for k := range set {
			m[k] = k
		}
	}
	for _, k := range []string{"request_id", "status", "scheduler_node_id", "scheduler_process_id", "scheduler_start_time", "timings", "error",
		"started_at", "completed_at", "targeted_start", "queued", "dequeued", "scheduled_at", "resolve_start", "request_start",
		"first_request_iteration", "first_token_iteration", "last_token_iteration", "last_request_iteration", "request_iterations",
		"token_iterations", "request_end", "resolve_end", "finalized", "text_tokens", "text_words", "text_characters", "total_tokens",
		"image_tokens", "video_frames", "audio_seconds", "audio_samples", "audio_tokens", "image_pixels", "image_bytes", "video_tokens",
		"video_bytes", "video_seconds", "audio_bytes", "text_bytes", "image_count"} {
		m[k] = k
	}
	return m
}()

// unmarshalObject is json.Unmarshal(raw, &o) with its error, by
// fastObject where it can.
func unmarshalObject(raw []byte) (obj, error) {
	if o, ok := fastObject(raw); ok {
		return o, nil
	}
	var o obj
	err := json.Unmarshal(raw, &o)
	return o, err
}

// stringOf is json.Unmarshal(raw, &s) into a string that starts empty,
// "" on any error: by hand for a literal without \u escapes in valid
// UTF-8, else by encoding/json.
func stringOf(raw []byte) string {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		s := scanner{Scanner: jsonscan.Scanner{B: raw}}
		if lit, esc, ok := s.Str(); ok && s.I == len(raw) {
			in := lit[1 : len(lit)-1]
			if !esc && utf8.Valid(in) {
				return string(in)
			}
			if esc && utf8.Valid(in) && !bytes.Contains(in, []byte(`\u`)) {
				return unescape(in)
			}
		}
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// unescape decodes the body of a valid string literal whose escapes are
// all one-character ones.
func unescape(in []byte) string {
	out := make([]byte, 0, len(in))
	for {
		k := bytes.IndexByte(in, '\\')
		if k < 0 {
			return string(append(out, in...))
		}
		out = append(out, in[:k]...)
		c := in[k+1]
		switch c {
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		}
		out = append(out, c)
		in = in[k+2:]
	}
}
