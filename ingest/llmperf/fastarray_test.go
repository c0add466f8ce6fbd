package llmperf

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"testing"
	"testing/iotest"

	"github.com/tokentrace/tokentrace/ingest"
)

// readBoth reads data with the fast scanner and with the reference
// (encoding/json alone) and fails unless both give the same rows, the
// same cut note and the same error.
func readBoth(t *testing.T, data []byte, max int64) {
	t.Helper()
	var vf, vr ingest.Values
	// one byte per read for the fast path too: every buffer boundary
	rowsF, cutF, errF := readRowsWith("f", iotest.HalfReader(bytes.NewReader(data)), max, &vf, true)
	rowsR, cutR, errR := readRowsWith("f", bytes.NewReader(data), max, &vr, false)
	if fmt.Sprint(errF) != fmt.Sprint(errR) || cutF != cutR || !reflect.DeepEqual(rowsF, rowsR) {
		t.Fatalf("input %q:\nfast      %+v, cut %q, err %v\nreference %+v, cut %q, err %v", data, rowsF, cutF, errF, rowsR, cutR, errR)
	}
	if !reflect.DeepEqual(vf.Checks(), vr.Checks()) {
		t.Fatalf("input %q: value checks differ: %+v, %+v", data, vf.Checks(), vr.Checks())
	}
}

// TestFastElementsMatchesReference: on a real file cut at every byte, and
// with damage the fast scanner must hand over (garbage between, inside and
// after the elements, a missing comma, data after the array, a null
// element, an element past the cap), the rows, notes and errors are the
// reference decoder's.
func TestFastElementsMatchesReference(t *testing.T) {
	data, err := os.ReadFile("testdata/edge-rows/individual_responses.json")
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(data) + 1 {
		readBoth(t, data[:n], 1<<20)
	}
	first := bytes.Index(data, []byte("},")) + 1 // the end of the first element
	for _, c := range []struct {
		at int
		s  string
	}{
		{first, "x"}, {first + 1, "x"}, {first, " ]"}, {first + 1, " null ,"}, {first + 1, "{\"ttft_s\":\"a\"},"},
		{len(data), " x"}, {len(data), "[]"}, {len(data), "\n\t "}, {0, " "}, {0, "x"}, {first + 1, "{\"a\":1 \"b\":2},"},
	} {
		readBoth(t, append(append(append([]byte{}, data[:c.at]...), c.s...), data[c.at:]...), 1<<20)
	}
	for _, s := range []string{"", " ", "[", "[]", "[ ]", "[]x", "[null]", "[{}]", "[{},]", "[1,{}]", "{}", "[{\"ttft_s\":1}] []",
		// one map serves every element: nothing of one element is left in the next
		`[{"ttft_s":1,"zz":2,"GEN_TEXT":"a"},{"ttft_s":1},{"error_code":500},{}]`} {
		readBoth(t, []byte(s), 1<<20)
	}
	// an element near and past the per-value cap
	for _, max := range []int64{200, 400, 600, 1 << 20} {
		readBoth(t, data, max)
	}
}

// FuzzFastElements: on any input the fast scanner's rows, notes and errors
// are the reference decoder's.
func FuzzFastElements(f *testing.F) {
	if data, err := os.ReadFile("testdata/edge-rows/individual_responses.json"); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`[{"ttft_s":0.5,"end_to_end_latency_s":1,"inter_token_latency_s":[0.01,0.02]},null]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		readBoth(t, data, 1<<16)
	})
}
