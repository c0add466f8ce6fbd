package aiperf

import "testing"

// TestBreak3FirstLineKeysNewline: a line the fuzzer may hand over holding
// a newline inside the object; firstLineKeys reads only up to it, so the
// check must compare with encoding/json on the same first line (it
// reported a false difference before).
func TestBreak3FirstLineKeysNewline(t *testing.T) {
	for _, s := range []string{"{\n\"\"", "{\"a\":1,\n\"metadata\":{\"b\":2}}", "{\"metadata\":{\r\n\"session_num\":1}}"} {
		checkFirstLineKeys(t, []byte(s))
	}
}
