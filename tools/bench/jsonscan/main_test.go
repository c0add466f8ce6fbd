package main

import (
	"math"
	"strings"
	"testing"
	"testing/iotest"
)

// TestScan checks the numbers found in each format's shape, strings
// (escaped quotes, digits inside) skipped, across block boundaries.
func TestScan(t *testing.T) {
	for name, tc := range map[string]struct {
		in      string
		numbers int64
		sum     float64
	}{
		"json":     {`{"a": 1.5, "b": [2, -3e2], "s": "x\"9\\", "t": true, "n": null}`, 3, 1.5 + 2 - 300},
		"jsonl":    {"{\"x\":1}\n{\"x\":2.25}\n", 2, 3.25},
		"csv":      {"ttft,e2e,\"a,1\"\n12.5,100\n", 2, 112.5},
		"python":   {`{"itl": [NaN, Infinity, 4]}`, 3, math.NaN()},
		"key with": {`{"p99_ms": 7}`, 1, 7},
	} {
		got, err := scan(strings.NewReader(tc.in))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.numbers != tc.numbers || got.bytes != int64(len(tc.in)) ||
			!(got.sum == tc.sum || math.IsNaN(tc.sum) && math.IsNaN(got.sum)) {
			t.Errorf("%s: %+v, want %d numbers summing to %g", name, got, tc.numbers, tc.sum)
		}
	}
}

// TestScanBlocks checks that a number or an escape cut by a block end is
// read whole: the same file, read one byte at a time, gives the same.
func TestScanBlocks(t *testing.T) {
	in := strings.Repeat(`{"t": 123.456, "s": "a\"b\\"}`+"\n", 100_000) // 3 MB: three blocks
	whole, err := scan(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if whole.numbers != 100_000 || math.Abs(whole.sum-12_345_600) > 1e-3 {
		t.Errorf("%+v, want 100000 numbers summing to 12345600", whole)
	}
	half, err := scan(iotest.HalfReader(strings.NewReader(in)))
	if err != nil || half != whole {
		t.Errorf("half reads: %+v, %v; want %+v", half, err, whole)
	}
}
