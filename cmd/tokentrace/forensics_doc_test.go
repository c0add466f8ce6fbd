package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestForensicsWalkthrough runs docs/forensics.md: every command of its sh
// blocks with the built binary, in a scratch directory where testdata/ is
// the repository's and $RUN the bundled AIPerf run with ten HTTP 524s
// ($CO the vLLM coordinated-omission fixture under ingest/),
// checks each exit status (0, or a "# exit N" comment), and checks that
// every line of the text block following a sh block is a line of its last
// command's output (stdout and stderr), in order; "…" lines stand for
// lines left out.
func TestForensicsWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	repo, _ := filepath.Abs("../..")
	doc, err := os.ReadFile(filepath.Join(repo, "docs/forensics.md"))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	bin := buildBinary(t, work)
	must(t, os.Symlink(filepath.Join(repo, "testdata"), filepath.Join(work, "testdata")))
	must(t, os.Symlink(filepath.Join(repo, "ingest"), filepath.Join(work, "ingest"))) // $CO, a fixture

	type block struct {
		lang  string
		lines []string
	}
	var blocks []block
	var cur *block
	for _, line := range strings.Split(string(doc), "\n") {
		switch {
		case strings.HasPrefix(line, "```") && cur == nil:
			blocks = append(blocks, block{lang: strings.TrimPrefix(line, "```")})
			cur = &blocks[len(blocks)-1]
		case strings.HasPrefix(line, "```"):
			cur = nil
		case cur != nil:
			cur.lines = append(cur.lines, line)
		}
	}
	commands, checked := 0, 0
	for i, b := range blocks {
		if b.lang != "sh" {
			continue
		}
		var last string
		for _, c := range b.lines {
			if strings.TrimSpace(c) == "" {
				continue
			}
			commands++
			last = runDocCommand(t, "docs/forensics.md", work, bin, c, "RUN=testdata/aiperf/llama31-8b-cloudflare-agent-c2-524errors",
				"CO=ingest/vllmbench/testdata/co-stall")
		}
		if i+1 >= len(blocks) || blocks[i+1].lang != "text" {
			continue
		}
		// the pasted output: its lines, in order, among the real ones
		real := strings.Split(last, "\n")
		k := 0
		for _, l := range blocks[i+1].lines {
			if l == "…" || l == "" {
				continue
			}
			for k < len(real) && real[k] != l {
				k++
			}
			if k == len(real) {
				t.Errorf("docs/forensics.md: after %q, this line is not in the output (in order):\n%s\n--- output:\n%s", b.lines[len(b.lines)-1], l, last)
				break
			}
			k++
			checked++
		}
	}
	if commands < 7 || checked < 30 {
		t.Errorf("ran %d commands, checked %d pasted lines", commands, checked)
	}
	for _, f := range []string{"incident/timeline-llama31-8b-cloudflare-agent-c2-524errors.svg", "incident/windows-llama31-8b-cloudflare-agent-c2-524errors.svg", "incident/trace.json"} {
		if _, err := os.Stat(filepath.Join(work, f)); err != nil {
			t.Errorf("the walkthrough's %s: %v", f, err)
		}
	}
}
