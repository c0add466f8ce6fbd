//go:build goexperiment.jsonv2

// Command jsonscan is the bench's plain JSON scan: it reads a file in
// 1 MiB blocks through encoding/json/jsontext's Decoder and counts its
// tokens, decoding nothing (strings are left escaped, numbers unparsed) —
// the floor against which `tokentrace report` is measured on the 1 GB
// GenAI-Perf export. It prints {"tokens": N, "bytes": B}. Build with
// GOEXPERIMENT=jsonv2 (Go 1.25+), which make bench does.
//
// usage: jsonscan FILE
package main

import (
	"bufio"
	"encoding/json/jsontext"
	"fmt"
	"io"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: jsonscan FILE")
		os.Exit(2)
	}
	n, size, err := scan(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "jsonscan:", err)
		os.Exit(1)
	}
	fmt.Printf("{\"tokens\": %d, \"bytes\": %d}\n", n, size)
}

// scan counts the JSON tokens of the file at path (every value of a
// stream of top-level values, JSON lines included).
func scan(path string) (tokens, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	dec := jsontext.NewDecoder(bufio.NewReaderSize(f, 1<<20))
	for {
		if _, err := dec.ReadToken(); err != nil {
			if err == io.EOF {
				return tokens, dec.InputOffset(), nil
			}
			return tokens, dec.InputOffset(), fmt.Errorf("%s: offset %d: %w", path, dec.InputOffset(), err)
		}
		tokens++
	}
}
