package formats

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
)

// Table layouts (WriteOptions.Layout).
const (
	// LayoutFlat: one file per table, DIR/events.parquet,
	// DIR/requests.parquet, DIR/runs.parquet.
	LayoutFlat = "flat"
	// LayoutHive: one hive-partitioned dataset per table, partitioned by
	// run_id: DIR/<table>/run_id=<escaped run id>/part-NNNNN.parquet (see
	// EscapePartitionValue). DuckDB (read_parquet('DIR/events/**/*.parquet',
	// hive_partitioning = true)), Spark (spark.read.parquet("DIR/events"))
	// and Trino read each dataset as one table.
	LayoutHive = "hive"
)

// DefaultPartRows is the default WriteOptions.PartRows: a partition's rows
// continue in a new part file after this many (32 row groups of
// DefaultRowGroupRows), so part files stay around 30–200 MB, the size
// Spark and Trino split work by.
const DefaultPartRows = 32 * DefaultRowGroupRows

// MetaPartitionSeq is a key-value metadata key of LayoutHive files: the
// 0-based position of the file's run in the write, as a decimal integer —
// for requests and events the order in which the runs' requests arrived,
// for runs the order of the Run rows. Readers restore the flat layout's row
// order from it (directory listings have no order). Part files of one
// partition are ordered by their number.
const MetaPartitionSeq = "tokentrace.partition_seq"

// partitionKey is the column a LayoutHive dataset is partitioned by.
const partitionKey = "run_id"

// hiveEscape reports whether EscapePartitionValue escapes byte c: the
// characters Hive's FileUtils.escapePathName and Spark's
// ExternalCatalogUtils.escapePathName escape on every platform (ASCII
// control characters, DEL, and " # % ' * / : = ? \ { [ ] ^).
func hiveEscape(c byte) bool {
	if c < 0x20 || c == 0x7f {
		return true
	}
	return strings.IndexByte("\"#%'*/:=?\\{[]^", c) >= 0
}

// EscapePartitionValue returns v as a hive partition directory value: each
// byte Hive and Spark escape becomes %XX (two upper-case hex digits), every
// other byte (UTF-8 included) is kept. "a/b:c" → "a%2Fb%3Ac". The result
// is never empty for a non-empty v; UnescapePartitionValue reverses it.
func EscapePartitionValue(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if hiveEscape(c) {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// maxPartitionValueBytes is the longest partition directory value
// PartitionDirValue writes whole: with "run_id=" the name stays well under
// the 255 bytes a file system allows in one name.
const maxPartitionValueBytes = 200

// PartitionDirValue returns the directory value of run id in LayoutHive
// (DIR/<table>/run_id=<value>/): EscapePartitionValue(id), with two
// exceptions. A value DuckDB, Spark and Hive read as NULL — "null" in any
// case, "__HIVE_DEFAULT_PARTITION__" — has its first byte written %XX
// ("%4EULL"), which they decode to the id itself. A value longer than
// 200 bytes keeps its first 150 bytes (never cutting an escape or a UTF-8
// character) and ends in "~" and 16 hex digits of the id's SHA-256, so a
// 250-byte id does not fail with "file name too long"; the full id is in
// the files' run_id column, which tokentrace's readers use (and SQL
// readers with hive_partitioning = false).
func PartitionDirValue(id string) string {
	v := EscapePartitionValue(id)
	if strings.EqualFold(id, "null") || id == "__HIVE_DEFAULT_PARTITION__" {
		v = fmt.Sprintf("%%%02X", id[0]) + v[1:]
	}
	if len(v) <= maxPartitionValueBytes {
		return v
	}
	cut := 0
	for cut < len(v) && cut < 150 {
		n := 1
		if v[cut] == '%' {
			n = 3
		} else if _, size := utf8.DecodeRuneInString(v[cut:]); size > 1 {
			n = size
		}
		if cut+n > 150 {
			break
		}
		cut += n
	}
	sum := sha256.Sum256([]byte(id))
	return v[:cut] + "~" + hex.EncodeToString(sum[:8])
}

// UnescapePartitionValue decodes %XX sequences (hex digits of either case)
// as Hive and Spark do; a % not followed by two hex digits is kept as is.
func UnescapePartitionValue(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			n, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b.WriteByte(byte(n))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// DetectLayout returns the layout of the tables in dir: LayoutHive when dir
// holds a runs/ dataset directory, else LayoutFlat (also when dir holds no
// tables: reading then fails on the missing runs.parquet). It fails when
// dir holds both layouts.
func DetectLayout(dir string) (string, error) {
	_, errFlat := os.Stat(filepath.Join(dir, TableRuns+".parquet"))
	hive := isDataset(filepath.Join(dir, TableRuns)) || emptyHiveWrite(dir)
	switch {
	case errFlat == nil && hive:
		return "", fmt.Errorf("formats: %s holds both %s.parquet and a %s/ dataset (two layouts); remove one", dir, TableRuns, TableRuns)
	case hive:
		return LayoutHive, nil
	}
	return LayoutFlat, nil
}

// IsTableDir reports whether dir holds tokentrace tables in either layout
// (runs.parquet, or a runs/ hive dataset).
func IsTableDir(dir string) bool {
	if st, err := os.Stat(filepath.Join(dir, TableRuns+".parquet")); err == nil && !st.IsDir() {
		return true
	}
	return isDataset(filepath.Join(dir, TableRuns))
}

// emptyHiveWrite reports whether dir holds what a LayoutHive write without
// runs leaves: three empty table directories.
func emptyHiveWrite(dir string) bool {
	for _, t := range []string{TableEvents, TableRequests, TableRuns} {
		if !isEmptyDir(filepath.Join(dir, t)) {
			return false
		}
	}
	return true
}

// isDataset reports whether path is a directory that looks like a table
// dataset: at least one run_id=… directory or *.parquet file, and nothing
// but those and hidden or _-prefixed entries (_SUCCESS, .crc files).
func isDataset(path string) bool { return datasetLike(path, false) }

// datasetLike implements isDataset; strict also requires top-level files
// to be named part-….parquet, as LayoutHive writes them.
func datasetLike(path string, strict bool) bool {
	ents, err := os.ReadDir(path)
	if err != nil {
		return false
	}
	found := false
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_"):
		case e.IsDir() && strings.HasPrefix(name, partitionKey+"="):
			found = true
		case !e.IsDir() && strings.HasSuffix(name, ".parquet") && (!strict || strings.HasPrefix(name, "part-")):
			found = true
		default:
			return false
		}
	}
	return found
}

// removeStaleDatasets removes the hive datasets a LayoutHive write left in
// dir, after a flat write replaced them (best effort; only directories
// shaped as LayoutHive writes them).
func removeStaleDatasets(dir string) {
	for _, t := range []string{TableEvents, TableRequests, TableRuns} {
		if p := filepath.Join(dir, t); datasetLike(p, true) {
			os.RemoveAll(p)
		}
	}
}

// hiveLayout is the state of a LayoutHive ParquetWriter: every table is
// written under a hidden staging directory in dir, whose table directories
// Close renames into place.
type hiveLayout struct {
	dir, staging string
	groupSeq     map[string]int // run → position of its requests
	runSeq       map[string]int // run → position of its Run row
	first        string         // run of the first Run row
	tables       []interface{ abort() }
}

func (w *ParquetWriter) openHive(importID string, codec compress.Codec) error {
	for _, t := range []string{TableEvents, TableRequests, TableRuns} {
		p := filepath.Join(w.dir, t)
		if st, err := os.Stat(p); err == nil && (!st.IsDir() || !datasetLike(p, true) && !isEmptyDir(p)) {
			return fmt.Errorf("formats: %s exists and is not a table dataset; not replacing it", p)
		}
	}
	staging, err := os.MkdirTemp(w.dir, ".tokentrace-dataset.tmp-")
	if err != nil {
		return fmt.Errorf("formats: %w", err)
	}
	h := &hiveLayout{dir: w.dir, staging: staging, groupSeq: map[string]int{}, runSeq: map[string]int{}}
	groupSeq := func(id string) int { return h.groupSeq[id] }
	ev := newHiveTable(staging, TableEvents, importID, codec, w.opt, func(e *Event) string { return e.RunID }, groupSeq)
	rq := newHiveTable(staging, TableRequests, importID, codec, w.opt, func(r *requestRow) string { return r.RunID }, groupSeq)
	rn := newHiveTable(staging, TableRuns, importID, codec, w.opt, func(r *Run) string { return r.RunID },
		func(id string) int { return h.runSeq[id] })
	ev.firstRun, rq.firstRun, rn.firstRun = h.firstRun, h.firstRun, h.firstRun
	h.tables = []interface{ abort() }{ev, rq, rn}
	w.events, w.reqs, w.runs, w.hive = ev, requestRows{rq}, rn, h
	w.onRequest, w.onRun, w.commit, w.cleanup = h.startGroup, h.startRun, h.commit, h.abort
	return nil
}

func isEmptyDir(p string) bool {
	ents, err := os.ReadDir(p)
	return err == nil && len(ents) == 0
}

// startGroup notes the first request of a run (its partition position).
func (h *hiveLayout) startGroup(runID string) {
	if _, ok := h.groupSeq[runID]; !ok {
		h.groupSeq[runID] = len(h.groupSeq)
	}
}

// startRun notes a Run row (its partition position in runs/).
func (h *hiveLayout) startRun(runID string) {
	if len(h.runSeq) == 0 {
		h.first = runID
	}
	h.runSeq[runID] = len(h.runSeq)
}

// firstRun is the run of the write's first Run row; "" before any.
func (h *hiveLayout) firstRun() string { return h.first }

// commit moves the finished datasets into place, replacing previous ones
// (and flat tables of an earlier write), and removes the staging directory.
// Each table directory is replaced by two renames; on a failure the previous
// directory is put back where possible.
func (h *hiveLayout) commit() error {
	for _, t := range []string{TableEvents, TableRequests, TableRuns} {
		src, dst := filepath.Join(h.staging, t), filepath.Join(h.dir, t)
		old := filepath.Join(h.staging, "."+t+".old")
		moved := false
		if _, err := os.Stat(dst); err == nil {
			if err := os.Rename(dst, old); err != nil {
				return fmt.Errorf("formats: replacing %s: %w", dst, err)
			}
			moved = true
		}
		if err := os.Rename(src, dst); err != nil {
			if moved {
				os.Rename(old, dst)
			}
			return fmt.Errorf("formats: %w", err)
		}
	}
	for _, t := range []string{TableEvents, TableRequests, TableRuns} {
		os.Remove(filepath.Join(h.dir, t+".parquet"))
	}
	syncDir(h.dir)
	os.RemoveAll(h.staging)
	h.staging = ""
	return nil
}

func (h *hiveLayout) abort() {
	for _, t := range h.tables {
		t.abort()
	}
	if h.staging != "" {
		os.RemoveAll(h.staging)
		h.staging = ""
	}
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync() // best effort: not every file system syncs directories
		d.Close()
	}
}

// hiveTable streams one table's rows into run_id partitions: one
// partition at a time (a run's rows are contiguous), part files of at most
// PartRows rows each.
type hiveTable[T any] struct {
	root             string // staging/<table>
	table, importID  string
	codec            compress.Codec
	opt              WriteOptions
	key              func(*T) string
	seq              func(runID string) int
	cur              *parquetTable[T]
	curKey, partDir  string
	part             int
	fileRows         int64
	files            int
	partitionsClosed map[string]bool
	firstRun         func() string // the write's first run ("" if none), for finish
	err              error
}

func newHiveTable[T any](staging, table, importID string, codec compress.Codec, opt WriteOptions,
	key func(*T) string, seq func(string) int) *hiveTable[T] {
	return &hiveTable[T]{root: filepath.Join(staging, table), table: table, importID: importID, codec: codec,
		opt: opt, key: key, seq: seq, partitionsClosed: map[string]bool{}}
}

func (h *hiveTable[T]) add(row *T, size int64) {
	if h.err != nil {
		return
	}
	k := h.key(row)
	switch {
	case h.cur == nil || k != h.curKey:
		h.endPartition()
		if h.err != nil {
			return
		}
		if h.partitionsClosed[k] {
			// The Sink checker prevents this; a second visit would
			// overwrite the partition's first part.
			h.err = fmt.Errorf("formats: %s: rows of run %q are not contiguous", h.table, k)
			return
		}
		h.curKey, h.part = k, 0
		h.partDir = filepath.Join(h.root, partitionKey+"="+PartitionDirValue(k))
		h.open()
	case h.fileRows >= h.opt.PartRows:
		h.endFile()
		h.part++
		h.open()
	}
	if h.err != nil {
		return
	}
	h.cur.add(row, size)
	h.fileRows++
	if h.cur.err != nil {
		h.err = h.cur.err
	}
}

func (h *hiveTable[T]) open() {
	if err := os.MkdirAll(h.partDir, 0o777); err != nil {
		h.err = fmt.Errorf("formats: %w", err)
		return
	}
	name := fmt.Sprintf("part-%05d.parquet", h.part)
	t, err := newParquetFile[T](h.partDir, name, h.table, h.importID, h.codec, h.opt,
		parquet.KeyValueMetadata(MetaPartitionSeq, strconv.Itoa(h.seq(h.curKey))))
	if err != nil {
		h.err = err
		return
	}
	h.cur, h.fileRows = t, 0
}

// endFile finishes the current part file and gives it its final name.
func (h *hiveTable[T]) endFile() {
	if h.cur == nil {
		return
	}
	t := h.cur
	h.cur = nil
	if err := t.finish(); err != nil {
		t.abort()
		h.err = err
		return
	}
	if err := os.Rename(t.file.tmp, t.file.final); err != nil {
		t.abort()
		h.err = fmt.Errorf("formats: %w", err)
		return
	}
	t.file.tmp = ""
	h.files++
}

func (h *hiveTable[T]) endPartition() {
	if h.cur == nil {
		return
	}
	h.endFile()
	if h.err == nil {
		syncDir(h.partDir)
		h.partitionsClosed[h.curKey] = true
	}
}

func (h *hiveTable[T]) failed() error { return h.err }

// finish ends the last partition. A table without rows (the events of an
// LLMPerf run, the requests of a summary-only run) gets one empty part file
// in the partition of the write's first run (firstRun), so that readers
// still find its schema and every file of the dataset is in a run_id
// partition: a glob over the datasets of several writes then reads them as
// one table (a file at the dataset's root has no run_id partition, and
// DuckDB and polars refuse to mix it with partitioned files). A write
// without runs leaves the table's directory empty.
func (h *hiveTable[T]) finish() error {
	h.endPartition()
	firstRun := ""
	if h.firstRun != nil {
		firstRun = h.firstRun()
	}
	if h.err != nil {
		return h.err
	}
	if err := os.MkdirAll(h.root, 0o777); err != nil {
		h.err = fmt.Errorf("formats: %w", err)
		return h.err
	}
	if h.files == 0 && firstRun != "" {
		h.curKey = firstRun
		h.partDir = filepath.Join(h.root, partitionKey+"="+PartitionDirValue(firstRun))
		h.open()
		h.endFile()
		syncDir(h.partDir)
	}
	syncDir(h.root)
	return h.err
}

func (h *hiveTable[T]) abort() {
	if h.cur != nil {
		h.cur.abort()
		h.cur = nil
	}
}

// partFile is one file of a table as a reader sees it.
type partFile struct {
	path      string
	value     string // the run_id of its partition (unescaped)
	dirValue  string // the partition's directory value, as written
	partition bool   // in a run_id=… directory
	seq       int    // MetaPartitionSeq; max int when absent
	importID  string
}

// listParts lists the files of the dataset dir/table in the order their
// rows were written: partitions by MetaPartitionSeq (then by run_id), part
// files by name. Hidden and _-prefixed entries are skipped.
func listParts(dir, table string) ([]partFile, error) {
	root := filepath.Join(dir, table)
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("formats: %s dataset: %w", table, err)
	}
	var parts []partFile
	addFile := func(path, value string, partition bool) error {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("formats: %w", err)
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return fmt.Errorf("formats: %w", err)
		}
		// the footer only, checked (readFooter); the rest of the file is
		// checked when it is read
		meta, _, err := readFooter(f, st.Size(), path)
		if err != nil {
			return err
		}
		m := &tableMeta{meta: meta}
		p := partFile{path: path, value: UnescapePartitionValue(value), dirValue: value, partition: partition, seq: int(^uint(0) >> 1)}
		p.importID, _ = m.lookup(MetaImportID)
		if s, ok := m.lookup(MetaPartitionSeq); ok {
			n, err := strconv.Atoi(s)
			if err != nil {
				return fmt.Errorf("formats: %s: bad %s %q", path, MetaPartitionSeq, s)
			}
			p.seq = n
		} else if p.importID != "" && partition {
			// tokentrace writes both keys into every part file
			return fmt.Errorf("formats: %s: %s without %s (damaged metadata); the rows' order is unknown", path, MetaImportID, MetaPartitionSeq)
		}
		parts = append(parts, p)
		return nil
	}
	hidden := func(name string) bool { return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") }
	for _, e := range ents {
		name := e.Name()
		switch {
		case hidden(name):
		case e.IsDir():
			v, ok := strings.CutPrefix(name, partitionKey+"=")
			if !ok {
				return nil, fmt.Errorf("formats: %s: unexpected directory (want %s=…)", filepath.Join(root, name), partitionKey)
			}
			files, err := os.ReadDir(filepath.Join(root, name))
			if err != nil {
				return nil, fmt.Errorf("formats: %w", err)
			}
			for _, f := range files {
				if !f.IsDir() && !hidden(f.Name()) && strings.HasSuffix(f.Name(), ".parquet") {
					if err := addFile(filepath.Join(root, name, f.Name()), v, true); err != nil {
						return nil, err
					}
				}
			}
		case strings.HasSuffix(name, ".parquet"):
			if err := addFile(filepath.Join(root, name), "", false); err != nil {
				return nil, err
			}
		}
	}
	slices.SortStableFunc(parts, func(a, b partFile) int {
		if a.seq != b.seq {
			return a.seq - b.seq
		}
		if c := strings.Compare(a.value, b.value); c != 0 {
			return c
		}
		return comparePartNames(filepath.Base(a.path), filepath.Base(b.path))
	})
	return parts, nil
}

// comparePartNames orders part-N.parquet names by N, others by name.
func comparePartNames(a, b string) int {
	na, ea := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(a, "part-"), ".parquet"))
	nb, eb := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(b, "part-"), ".parquet"))
	if ea == nil && eb == nil && na != nb {
		return na - nb
	}
	return strings.Compare(a, b)
}

// tableReader reads a table's files one after another: the one file of
// LayoutFlat, or a dataset's part files in write order.
type tableReader[T any] struct {
	table string
	parts []partFile
	i     int
	cur   *parquetReader[T]
	cols  *EventColumns // events columns to read (setColumns); nil: all
}

func openTable[T any](dir, table, layout string) (*tableReader[T], error) {
	if layout != LayoutHive {
		r, err := openParquetTable[T](dir, table)
		if err != nil {
			return nil, err
		}
		return &tableReader[T]{table: table, parts: []partFile{{path: r.path, importID: r.importID}}, cur: r}, nil
	}
	parts, err := listParts(dir, table)
	if err != nil {
		return nil, err
	}
	t := &tableReader[T]{table: table, parts: parts}
	if len(parts) > 0 {
		if t.cur, err = openParquetFile[T](parts[0].path, table, parts[0].partition); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// runIDOf returns the run_id field of a table row.
func runIDOf(row any) *string {
	switch r := row.(type) {
	case *Run:
		return &r.RunID
	case *Request:
		return &r.RunID
	case *Event:
		return &r.RunID
	}
	panic(fmt.Sprintf("formats: no run_id in %T", row))
}

// peek returns the next row (see parquetReader.peek), moving on to the next
// file at the end of one. In a partition, a row without run_id gets the
// partition's; a row whose run_id differs from it is an error.
func (t *tableReader[T]) peek() (*T, int64, error) {
	for {
		if t.cur == nil {
			return nil, 0, io.EOF
		}
		r, row, err := t.cur.peek()
		if errors.Is(err, io.EOF) && t.i+1 < len(t.parts) {
			t.cur.close()
			t.cur = nil
			t.i++
			p := t.parts[t.i]
			if t.cur, err = openParquetFile[T](p.path, t.table, p.partition); err != nil {
				return nil, 0, err
			}
			if t.cols != nil {
				t.cur.setColumns(*t.cols)
			}
			continue
		}
		if err != nil {
			return r, row, err
		}
		if p := t.parts[t.i]; p.partition {
			id := runIDOf(r)
			if *id == "" {
				*id = p.value
			} else if *id != p.value && PartitionDirValue(*id) != p.dirValue {
				return nil, row, fmt.Errorf("formats: %s row %d: run_id %q in the partition of run_id %q", p.path, row, *id, p.value)
			}
		}
		return r, row, nil
	}
}

func (t *tableReader[T]) advance() { t.cur.advance() }

func (t *tableReader[T]) next() (*T, int64, error) {
	r, row, err := t.peek()
	if err == nil {
		t.advance()
	}
	return r, row, err
}

// file is the path of the file being read (for error messages).
func (t *tableReader[T]) file() string {
	if len(t.parts) == 0 {
		return t.table + " dataset"
	}
	return t.parts[t.i].path
}

func (t *tableReader[T]) infos() []fileInfo {
	out := make([]fileInfo, len(t.parts))
	for i, p := range t.parts {
		out[i] = fileInfo{p.path, p.importID}
	}
	return out
}

func (t *tableReader[T]) close() {
	if t.cur != nil {
		t.cur.close()
		t.cur = nil
	}
}
