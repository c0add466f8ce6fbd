package formats

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzTables are the tables FuzzReadTables replaces, by its table argument
// modulo 3.
var fuzzTables = []string{TableEvents, TableRequests, TableRuns}

// FuzzReadTables reads a written table set with one file replaced by the
// fuzzer's bytes (mutations of the written file: the seeds are the files
// the writer writes, and testdata/fuzz/FuzzReadTables holds them and
// corruptions that crashed the reader before its validation). Reading
// must end in a clean read or an error that names the file, never a panic
// or a runaway allocation; the unchanged file must read cleanly.
func FuzzReadTables(f *testing.F) {
	base := f.TempDir()
	writeSample(f, base, 3, WriteOptions{})
	orig := map[string][]byte{}
	dir := f.TempDir()
	for i, table := range fuzzTables {
		b, err := os.ReadFile(filepath.Join(base, table+".parquet"))
		if err != nil {
			f.Fatal(err)
		}
		orig[table] = b
		f.Add(uint8(i), b)
		// The other two files of each input lose their import id (the key
		// renamed in place, as if another tool had rewritten them), so
		// that any written file, the corpus's included, reads with them.
		other := bytes.Replace(b, []byte(MetaImportID), []byte("tokentrace.xmport_id"), 1)
		if err := os.WriteFile(filepath.Join(dir, table+".parquet"), other, 0o644); err != nil {
			f.Fatal(err)
		}
	}
	last := "" // the file the last input replaced
	f.Fuzz(func(t *testing.T, table uint8, data []byte) {
		name := fuzzTables[int(table)%len(fuzzTables)]
		if last != "" && last != name {
			other := bytes.Replace(orig[last], []byte(MetaImportID), []byte("tokentrace.xmport_id"), 1)
			if err := os.WriteFile(filepath.Join(dir, last+".parquet"), other, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		last = name
		if err := os.WriteFile(filepath.Join(dir, name+".parquet"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		err := ReadTables(dir, &Collector{})
		if err == nil {
			_, err = ReadRuns(dir)
		}
		switch {
		case err != nil && bytes.Equal(data, orig[name]):
			t.Fatalf("the written %s reads with an error: %v", name, err)
		case err != nil && !strings.HasPrefix(err.Error(), "formats: "+dir):
			t.Fatalf("error without the file: %v", err)
		case err != nil && strings.Contains(err.Error(), panicked):
			t.Fatalf("parquet-go panicked after the validation: %v", err)
		}
	})
}
