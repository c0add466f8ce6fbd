package serverlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/internal/testkit"
	"github.com/tokentrace/tokentrace/internal/golden"
)

// corpusFiles are the server-log corpus samples (testdata/server-logs, real
// public samples with SOURCE.md), each with its golden dump.
func corpusFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	root := "../../testdata/server-logs"
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && filepath.Base(p) != "SOURCE.md" && !strings.HasPrefix(filepath.Base(filepath.Dir(p)), "joined") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func goldenName(p string) string {
	rel := strings.TrimPrefix(filepath.ToSlash(p), "../../testdata/server-logs/")
	return filepath.Join("testdata", strings.NewReplacer("/", "__").Replace(rel)+".golden")
}

// fixtureFiles are the constructed fixtures (testdata/fixtures/<case>/, a
// SOURCE.md each saying where the layout comes from).
func fixtureFiles(t *testing.T) []string {
	t.Helper()
	out, err := filepath.Glob("testdata/fixtures/*/*")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, p := range out {
		if filepath.Base(p) != "SOURCE.md" {
			files = append(files, p)
		}
	}
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	return files
}

// TestFixturesGolden imports every constructed fixture (detected on its
// own) and compares the readable dump with its golden file.
func TestFixturesGolden(t *testing.T) {
	for _, p := range fixtureFiles(t) {
		t.Run(filepath.Base(filepath.Dir(p)), func(t *testing.T) {
			head, err := ingest.ReadHead(p)
			if err != nil {
				t.Fatal(err)
			}
			im := &Importer{Year: 2026}
			if !im.Detect(p, head) {
				t.Fatalf("Detect(%s) = false", p)
			}
			got := testkit.Dump(t, im, p, ingest.Options{Label: "s"})
			golden.Check(t, filepath.Join("testdata", filepath.Base(filepath.Dir(p))+"__"+filepath.Base(p)+".golden"), got)
		})
	}
}

// TestCorpusGolden imports every corpus sample and compares the readable
// dump with its golden file.
func TestCorpusGolden(t *testing.T) {
	for _, p := range corpusFiles(t) {
		t.Run(filepath.Base(filepath.Dir(p))+"/"+filepath.Base(p), func(t *testing.T) {
			head, _ := os.ReadFile(p)
			if len(head) > ingest.HeadSize {
				head = head[:ingest.HeadSize]
			}
			im := &Importer{Year: 2026}
			if !im.Detect(p, head) {
				t.Fatalf("Detect(%s) = false", p)
			}
			got := testkit.Dump(t, im, p, ingest.Options{Label: "s"})
			golden.Check(t, goldenName(p), got)
		})
	}
}
