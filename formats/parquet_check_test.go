package formats

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/delta"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// thriftOffsets maps each field of the Thrift compact-protocol structure in
// b to the offset of its field header, keyed by path: field ids joined with
// ".", list elements as "[i]" — "4[0].1[3].3" is FileMetaData.row_groups[0]
// .columns[3].meta_data. The regression tests find the bytes to corrupt
// through it, so that they follow the layout of the files the writer
// produces instead of hard-coded offsets.
func thriftOffsets(t testing.TB, b []byte) map[string]int {
	t.Helper()
	var proto thrift.CompactProtocol
	r := proto.NewReaderFromBytes(b)
	out := map[string]int{}
	var structure func(prefix string) error
	var value func(path string, typ thrift.Type) error
	structure = func(prefix string) error {
		id := int16(0)
		for {
			at := r.BytesRead()
			f, err := r.ReadField()
			if err != nil {
				return err
			}
			if f.Type == thrift.STOP {
				return nil
			}
			if f.Delta {
				id += f.ID
			} else {
				id = f.ID
			}
			path := fmt.Sprint(id)
			if prefix != "" {
				path = prefix + "." + path
			}
			out[path] = at
			if f.Type == thrift.TRUE || f.Type == thrift.FALSE {
				continue
			}
			if err := value(path, f.Type); err != nil {
				return err
			}
		}
	}
	value = func(path string, typ thrift.Type) error {
		var err error
		switch typ {
		case thrift.TRUE, thrift.FALSE:
			_, err = r.ReadBool()
		case thrift.I8:
			_, err = r.ReadInt8()
		case thrift.I16, thrift.I32, thrift.I64:
			_, err = r.ReadInt64()
		case thrift.DOUBLE:
			_, err = r.ReadFloat64()
		case thrift.BINARY:
			_, err = r.ReadBytes()
		case thrift.STRUCT:
			return structure(path)
		case thrift.LIST, thrift.SET:
			l, err := r.ReadList()
			if err != nil {
				return err
			}
			for i := range int(l.Size) {
				p := fmt.Sprintf("%s[%d]", path, i)
				out[p] = r.BytesRead()
				if err := value(p, l.Type); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("type %d", typ)
		}
		return err
	}
	if err := structure(""); err != nil {
		t.Fatalf("walking the footer: %v", err)
	}
	return out
}

// footerOf returns a Parquet file's footer bytes and their offset.
func footerOf(t testing.TB, data []byte) ([]byte, int) {
	t.Helper()
	n := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	start := len(data) - 8 - n
	return data[start : len(data)-8], start
}

// leafIndex returns the column index of a leaf column by its dotted path.
func leafIndex(t testing.TB, path string, column ...string) int {
	t.Helper()
	leaf, ok := openPF(t, path).Schema().Lookup(column...)
	if !ok {
		t.Fatalf("%s: no column %v", path, column)
	}
	return leaf.ColumnIndex
}

// schemaIndex returns the position of a column's element in the footer's
// flattened schema.
func schemaIndex(t testing.TB, path, name string) int {
	t.Helper()
	for i, e := range openPF(t, path).Metadata().Schema {
		if e.Name == name {
			return i
		}
	}
	t.Fatalf("%s: no schema element %q", path, name)
	return -1
}

// corrupt rewrites the byte at off of dir/name with edit, after checking
// that it holds want.
func corrupt(t testing.TB, dir, name string, off int, want byte, edit func(byte) byte) {
	t.Helper()
	p := filepath.Join(dir, name)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if data[off] != want {
		t.Fatalf("%s byte %d is %#x, want %#x (the writer's layout changed)", name, off, data[off], want)
	}
	data[off] = edit(data[off])
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// saveFuzzSeed writes dir/table.parquet as a seed of FuzzReadTables into
// testdata/fuzz/FuzzReadTables, named after the test, when
// TOKENTRACE_FUZZ_CORPUS is set: the corruptions of
// TestReadTablesCorruptionRegressions are the corpus's crash reproducers
// (regenerate with TOKENTRACE_FUZZ_CORPUS=1 go test -run
// TestReadTablesCorruptionRegressions ./formats).
func saveFuzzSeed(t *testing.T, dir, table string) {
	t.Helper()
	if os.Getenv("TOKENTRACE_FUZZ_CORPUS") == "" {
		return
	}
	b, err := os.ReadFile(filepath.Join(dir, table+".parquet"))
	if err != nil {
		t.Fatal(err)
	}
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, strings.ToLower(filepath.Base(t.Name())))
	out := filepath.Join("testdata", "fuzz", "FuzzReadTables", name)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	seed := fmt.Sprintf("go test fuzz v1\nuint8(%d)\n[]byte(%q)\n", slices.Index(fuzzTables, table), b)
	if err := os.WriteFile(out, []byte(seed), 0o644); err != nil {
		t.Fatal(err)
	}
}

// rawPanic runs read with parquet-go opened directly on path (no
// validation) and returns the panic it raised, "" if none.
func rawPanic(t *testing.T, path string, read func(pf *parquet.File)) (msg string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	defer func() {
		if v := recover(); v != nil {
			msg = fmt.Sprint(v)
		}
	}()
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return ""
	}
	read(pf)
	return ""
}

// readRuns reads every row of a runs file with parquet-go's row reader, as
// ReadRuns did before the validation.
func readRuns(pf *parquet.File) {
	r := parquet.NewGenericReader[Run](pf)
	buf := make([]Run, pf.NumRows()+1)
	r.Read(buf)
}

// TestReadTablesCorruptionRegressions: each crash that byte-level
// corruption of written tables caused (found by flipping every bit of the
// footers and of the pages' first bytes, one at a time, and reading with
// `tokentrace report`), rebuilt here on a table the writer wrote: without
// the validation, parquet-go panics (or, for the zstd frame, would have
// allocated the gigabytes shown); with it, ReadTables returns an error
// naming the file, the position and the check.
func TestReadTablesCorruptionRegressions(t *testing.T) {
	setup := func(t *testing.T) (string, map[string][]byte) {
		dir := t.TempDir()
		writeSample(t, dir, 3, WriteOptions{})
		files := map[string][]byte{}
		for _, n := range []string{"events.parquet", "requests.parquet", "runs.parquet"} {
			b, err := os.ReadFile(filepath.Join(dir, n))
			if err != nil {
				t.Fatal(err)
			}
			files[n] = b
		}
		return dir, files
	}
	wantErr := func(t *testing.T, dir string, want ...string) {
		t.Helper()
		err := ReadTables(dir, &Collector{})
		if err == nil {
			t.Fatal("ReadTables read the corrupt table")
		}
		t.Logf("%v", err)
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q\n does not contain %q", err, w)
			}
		}
		if _, err := ReadRuns(dir); err == nil && strings.Contains(want[0], "runs.parquet") {
			t.Error("ReadRuns read the corrupt runs table")
		}
	}

	t.Run("column chunk metadata lost: unsafe.Slice panic", func(t *testing.T) {
		// runs.parquet: the field header of a column chunk's meta_data
		// (0x1c: field +1, a structure) flipped to 0x3c (field +3, unknown
		// to the reader, skipped): the chunk has no metadata, parquet-go
		// reads no values for the column and assigns the next column's
		// (a DOUBLE) to the string field:
		// "unsafe.Slice: ptr is nil and len is not zero".
		dir, files := setup(t)
		p := filepath.Join(dir, "runs.parquet")
		footer, start := footerOf(t, files["runs.parquet"])
		col := leafIndex(t, p, "model")
		off := start + thriftOffsets(t, footer)[fmt.Sprintf("4[0].1[%d].3", col)]
		corrupt(t, dir, "runs.parquet", off, 0x1c, func(b byte) byte { return b ^ 0x20 })
		if msg := rawPanic(t, p, readRuns); !strings.Contains(msg, "unsafe.Slice: ptr is nil") {
			t.Errorf("without validation: panic %q, want unsafe.Slice", msg)
		}
		saveFuzzSeed(t, dir, "runs")
		wantErr(t, dir, "runs.parquet: row group 0, column model: ", "metadata missing or corrupt")
	})

	t.Run("group annotation on a column: Kind panic", func(t *testing.T) {
		// events.parquet: the header of request_key's logical type member
		// (0xac: field +10, INTEGER) with its top bit flipped (0x2c: field
		// +2, MAP): parquet-go types the column as a MAP and panics when
		// the column reader asks its kind: "cannot call Kind on parquet
		// MAP type".
		dir, files := setup(t)
		p := filepath.Join(dir, "events.parquet")
		footer, start := footerOf(t, files["events.parquet"])
		el := schemaIndex(t, p, "request_key")
		off := start + thriftOffsets(t, footer)[fmt.Sprintf("2[%d].10.10", el)]
		corrupt(t, dir, "events.parquet", off, 0xac, func(b byte) byte { return b ^ 0x80 })
		msg := rawPanic(t, p, func(pf *parquet.File) { newEventColumnReader(pf, p) })
		if !strings.Contains(msg, "cannot call Kind on parquet MAP type") {
			t.Errorf("without validation: panic %q, want the MAP Kind panic", msg)
		}
		saveFuzzSeed(t, dir, "events")
		wantErr(t, dir, "events.parquet: schema: column request_key: a MAP annotation on a column")
	})

	t.Run("zstd frame content size: memory runaway", func(t *testing.T) {
		// runs.parquet: the top bit of the zstd frame header descriptor of
		// a dictionary page (0x00: no content size) flipped: the frame now
		// declares a 4-byte content size made of the bytes after it, which
		// the zstd decoder allocates at once (the page holds a few bytes);
		// a descriptor overwritten with 0xc0 declares an 8-byte size. The
		// decoder allocates any size below its 64 GiB limit: the first
		// dictionary page (in column order) whose corrupt size lies between
		// 1 GiB and 64 GiB is taken (without validation: "runtime: out of
		// memory" under a 2 GiB address-space limit).
		dir, files := setup(t)
		data := files["runs.parquet"]
		var proto thrift.CompactProtocol
		found := false
		for col, cc := range openPF(t, filepath.Join(dir, "runs.parquet")).Metadata().RowGroups[0].Columns {
			md := cc.MetaData
			if md.DictionaryPageOffset == 0 || md.Codec != format.Zstd {
				continue
			}
			var h format.PageHeader
			r := proto.NewReaderFromBytes(data[md.DictionaryPageOffset:])
			if err := thrift.NewDecoder(r).Decode(&h); err != nil {
				t.Fatal(err)
			}
			frame := int(md.DictionaryPageOffset) + r.BytesRead()
			if string(data[frame:frame+4]) != "\x28\xb5\x2f\xfd" || data[frame+4] != 0 {
				t.Fatalf("column %d: no zstd frame without content size at byte %d", col, frame)
			}
			for _, fhd := range []byte{0x80, 0xc0} {
				mutated := append([]byte(nil), data...)
				mutated[frame+4] = fhd
				var zh zstd.Header
				if err := zh.Decode(mutated[frame:]); err != nil || !zh.HasFCS ||
					zh.FrameContentSize < 1<<30 || zh.FrameContentSize >= 64<<30 {
					continue
				}
				t.Logf("column %s: descriptor %#x: the frame declares %s for a page of %d bytes",
					strings.Join(md.PathInSchema, "."), fhd, byteSize(int64(zh.FrameContentSize)), h.UncompressedPageSize)
				corrupt(t, dir, "runs.parquet", frame+4, 0, func(byte) byte { return fhd })
				saveFuzzSeed(t, dir, "runs")
				wantErr(t, dir, fmt.Sprintf("runs.parquet: row group 0, column %s: page 0: ZSTD data: frame content size %s exceeds the page's uncompressed size (%s)",
					strings.Join(md.PathInSchema, "."), byteSize(int64(zh.FrameContentSize)), byteSize(int64(h.UncompressedPageSize))))
				found = true
				break
			}
			if found {
				break
			}
		}
		if !found {
			t.Fatal("no dictionary page whose corrupt frame declares 1 to 64 GiB")
		}
	})

	t.Run("column chunk size: pages of the next column", func(t *testing.T) {
		// runs.parquet: the second byte of a column chunk's
		// total_compressed_size varint with bit 2 set (+512 bytes): the
		// chunk runs on into the next columns' pages, whose dictionary
		// indexes exceed its dictionary: "index out of range" in
		// parquet-go's dictionary lookup.
		dir, files := setup(t)
		p := filepath.Join(dir, "runs.parquet")
		footer, start := footerOf(t, files["runs.parquet"])
		col := leafIndex(t, p, "source_files", "list", "element", "role")
		off := start + thriftOffsets(t, footer)[fmt.Sprintf("4[0].1[%d].3.7", col)] + 2
		was := files["runs.parquet"][off]
		if was&0x80 != 0 || was&0x04 != 0 {
			t.Fatalf("size varint byte %#x: want a last byte without bit 2", was)
		}
		corrupt(t, dir, "runs.parquet", off, was, func(b byte) byte { return b | 0x04 })
		if msg := rawPanic(t, p, readRuns); !strings.Contains(msg, "index out of range") {
			t.Errorf("without validation: panic %q, want index out of range", msg)
		}
		saveFuzzSeed(t, dir, "runs")
		wantErr(t, dir, "runs.parquet: row group 0, column source_files.list.element.role: page ")
	})

	t.Run("schema children count: slice bounds panic", func(t *testing.T) {
		// events.parquet: the root's num_children varint with its low bit
		// flipped: zigzag 24 (12 children) becomes 25 (-13), and parquet-go
		// slices its column slab with it: "slice bounds out of range".
		dir, files := setup(t)
		p := filepath.Join(dir, "events.parquet")
		footer, start := footerOf(t, files["events.parquet"])
		off := start + thriftOffsets(t, footer)["2[0].5"] + 1
		corrupt(t, dir, "events.parquet", off, 24, func(b byte) byte { return b ^ 1 })
		if msg := rawPanic(t, p, func(*parquet.File) {}); !strings.Contains(msg, "slice bounds out of range") {
			t.Errorf("without validation: panic %q, want slice bounds out of range", msg)
		}
		saveFuzzSeed(t, dir, "events")
		wantErr(t, dir, "events.parquet: schema: (root) declares -13 children")
	})

	t.Run("codec flipped to GZIP: invalid header panic", func(t *testing.T) {
		// runs.parquet: a column chunk's codec (ZSTD, zigzag 12 = 0x0c)
		// with bit 3 flipped (0x04: GZIP): parquet-go's gzip decoder pool
		// panics on the zstd bytes' header ("gzip: invalid header").
		dir, files := setup(t)
		p := filepath.Join(dir, "runs.parquet")
		footer, start := footerOf(t, files["runs.parquet"])
		off := start + thriftOffsets(t, footer)[fmt.Sprintf("4[0].1[%d].3.4", leafIndex(t, p, "tool"))] + 1
		corrupt(t, dir, "runs.parquet", off, 0x0c, func(b byte) byte { return b ^ 0x08 })
		saveFuzzSeed(t, dir, "runs")
		if msg := rawPanic(t, p, readRuns); !strings.Contains(msg, "gzip: invalid header") {
			t.Errorf("without validation: panic %q, want gzip: invalid header", msg)
		}
		wantErr(t, dir, "runs.parquet: row group 0, column tool: page 0: GZIP data: decompressing (up to the page's", "gzip: invalid header")
	})

	t.Run("codec flipped to LZ4_RAW: endless doubling", func(t *testing.T) {
		// events.parquet: a column chunk's codec (ZSTD, 0x0c) with bit 1
		// flipped (0x0e: LZ4_RAW): parquet-go's LZ4 codec doubles its
		// buffer on every error, and zstd bytes are an error whatever the
		// size: it allocates until the process dies (not run here).
		dir, files := setup(t)
		p := filepath.Join(dir, "events.parquet")
		footer, start := footerOf(t, files["events.parquet"])
		off := start + thriftOffsets(t, footer)[fmt.Sprintf("4[0].1[%d].3.4", leafIndex(t, p, "offset_ns"))] + 1
		corrupt(t, dir, "events.parquet", off, 0x0c, func(b byte) byte { return b ^ 0x02 })
		saveFuzzSeed(t, dir, "events")
		wantErr(t, dir, "events.parquet: row group 0, column offset_ns: page 0: LZ4_RAW data: decompressing (up to the page's")
	})

	t.Run("dictionary page damaged: silently changed strings", func(t *testing.T) {
		// runs.parquet without compression: a byte of the tool column's
		// dictionary ("genai-perf" -> "genai-pErf"). parquet-go checks the
		// checksums of data pages but not of dictionary pages: without
		// validation the run reads cleanly with the changed name.
		dir := t.TempDir()
		writeSample(t, dir, 20, WriteOptions{Compression: CompressionNone})
		p := filepath.Join(dir, "runs.parquet")
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		md := openPF(t, p).Metadata().RowGroups[0].Columns[leafIndex(t, p, "tool")].MetaData
		chunk := data[md.DictionaryPageOffset:md.DataPageOffset]
		i := strings.Index(string(chunk), "genai-perf")
		if md.DictionaryPageOffset == 0 || i < 0 {
			t.Fatalf("no dictionary page holding genai-perf (at %d)", md.DictionaryPageOffset)
		}
		corrupt(t, dir, "runs.parquet", int(md.DictionaryPageOffset)+i+7, 'e', func(byte) byte { return 'E' })
		var tool string
		if msg := rawPanic(t, p, func(pf *parquet.File) {
			rows := make([]Run, pf.NumRows())
			parquet.NewGenericReader[Run](pf).Read(rows)
			tool = rows[0].Tool
		}); msg != "" || tool != "genai-pErf" {
			t.Errorf("without validation: tool %q (panic %q), want the changed genai-pErf", tool, msg)
		}
		wantErr(t, dir, "runs.parquet: row group 0, column tool: page 0: dictionary page checksum")
	})

	t.Run("NULL annotation: values read as null", func(t *testing.T) {
		// events.parquet: the logical type member of tokens (0xac: field
		// +10, INTEGER) with bit 4 flipped (0xbc: +11, UNKNOWN/NULL):
		// parquet-go reads every value of the column as null, silently.
		dir, files := setup(t)
		p := filepath.Join(dir, "events.parquet")
		footer, start := footerOf(t, files["events.parquet"])
		off := start + thriftOffsets(t, footer)[fmt.Sprintf("2[%d].10.10", schemaIndex(t, p, "tokens"))]
		corrupt(t, dir, "events.parquet", off, 0xac, func(b byte) byte { return b ^ 0x10 })
		wantErr(t, dir, "events.parquet: row group 0, column tokens: column annotated NULL (all values null) whose statistics count")
	})
}

func TestPageCap(t *testing.T) {
	for _, c := range []struct{ size, want int64 }{
		{0, 16 << 20}, {11_000, 16 << 20}, {1 << 20, 64 << 20}, {16 << 20, 1 << 30}, {100 << 30, 1 << 30},
	} {
		if got := PageCap(c.size); got != c.want {
			t.Errorf("PageCap(%d) = %d, want %d", c.size, got, c.want)
		}
	}
}

func TestCheckThrift(t *testing.T) {
	var proto thrift.CompactProtocol
	good, err := thrift.Marshal(&proto, &format.FileMetaData{Version: 1, NumRows: 3,
		Schema: []format.SchemaElement{{Name: "root"}}, KeyValueMetadata: []format.KeyValue{{Key: "k", Value: "v"}}})
	if err != nil {
		t.Fatal(err)
	}
	if mem, err := checkThrift(good, 1<<20, 560); err != nil || mem != 2*560 {
		t.Errorf("good footer: %d bytes, %v; want 1120 (two lists of one structure)", mem, err)
	}
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		// field 2 (delta), a list (9) of structures (0xc) with 0xff..07 =
		// 2^31-1 elements, in 7 bytes
		{"list longer than its bytes", []byte{0x29, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00}, "a list of 2147483647 elements at byte 7, with 1 bytes left"},
		{"nesting", append(bytesRepeat(0x1c, 40), bytesRepeat(0, 41)...), "nested deeper than 32 levels"},
		{"memory", append([]byte{0x29, 0xfc, 0x80, 0x08}, bytesRepeat(0, 1030)...), "its lists would take more than 512 KiB"},
		{"cut", good[:len(good)-3], "cut short"},
	} {
		_, err := checkThrift(c.b, 512<<10, 560)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

func bytesRepeat(b byte, n int) []byte { return []byte(strings.Repeat(string([]byte{b}), n)) }

// TestReadFooterCaps: the footer's length against the file and
// MaxFooterBytes, the magic bytes.
func TestReadFooterCaps(t *testing.T) {
	file := func(footerLen uint32, body int) []byte {
		b := append([]byte("PAR1"), make([]byte, body)...)
		b = binary.LittleEndian.AppendUint32(b, footerLen)
		return append(b, "PAR1"...)
	}
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"short", []byte("PAR1PAR1"), "not a Parquet file: 8 bytes"},
		{"magic", append([]byte("PAR2"), file(0, 4)[4:]...), `starts with "PAR2"`},
		{"cut", file(0, 4)[:14], `ends with`},
		{"encrypted", append([]byte("PARE"), file(0, 4)[4:]...), "encrypted Parquet files are not supported"},
		{"footer past the file", file(1_800_000_000, 100), "footer length 1.8 GB exceeds the file (112 B)"},
		{"footer cap", file(MaxFooterBytes+1, MaxFooterBytes+1), "exceeds the footer cap of 64 MiB (MaxFooterBytes)"},
	} {
		_, _, err := readFooter(bytes.NewReader(c.b), int64(len(c.b)), "x.parquet")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "formats: x.parquet: ") {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestCheckPagesCaps checks hand-built page headers and compressed data
// against the caps: a corrupt length cannot reach parquet-go's allocation.
func TestCheckPagesCaps(t *testing.T) {
	var proto thrift.CompactProtocol
	page := func(h format.PageHeader, body []byte) []byte {
		h.CompressedPageSize = max(h.CompressedPageSize, int32(len(body)))
		b, err := thrift.Marshal(&proto, &h)
		if err != nil {
			t.Fatal(err)
		}
		return append(b, body...)
	}
	v1 := func(n int32) thrift.Null[format.DataPageHeader] {
		return thrift.Null[format.DataPageHeader]{Valid: true, V: format.DataPageHeader{NumValues: n, Encoding: format.Plain,
			DefinitionLevelEncoding: format.RLE, RepetitionLevelEncoding: format.RLE}}
	}
	leaf := &schemaNode{elem: &format.SchemaElement{Type: thrift.Null[format.Type]{Valid: true, V: format.Int64}}, name: "offset_ns", leaf: 0}
	zstdRLE := func(blocks int) []byte { // a frame without content size: RLE blocks of 128 KiB
		b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x70} // no FCS, window 8 MiB
		for i := range blocks {
			h := uint32(zstdBlockMax)<<3 | 1<<1
			if i == blocks-1 {
				h |= 1
			}
			b = append(b, byte(h), byte(h>>8), byte(h>>16), 0)
		}
		return b
	}
	snappyLen := binary.AppendUvarint(nil, 1_000_000)
	v2 := func(n int32, enc format.Encoding) thrift.Null[format.DataPageHeaderV2] {
		return thrift.Null[format.DataPageHeaderV2]{Valid: true, V: format.DataPageHeaderV2{NumValues: n, NumRows: n, Encoding: enc}}
	}
	// DELTA_BINARY_PACKED: block of 128 values in 4 miniblocks, 2^31-1
	// values (parquet-go would allocate 8 bytes each: 16 GiB), first 0
	deltaHuge := []byte{0x80, 0x01, 0x04, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00, 0, 0, 0, 0, 0}
	var bp delta.BinaryPackedEncoding
	bigLengths, err := bp.EncodeInt32(nil, []int32{1 << 30, 1 << 30}) // two strings of 1 GiB, no bytes
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		codec  format.CompressionCodec
		values int64
		data   []byte
		want   string
	}{
		{"uncompressed size", format.Zstd, 8, page(format.PageHeader{Type: format.DataPage, UncompressedPageSize: 1_800_000_000, DataPageHeader: v1(8)}, make([]byte, 10)),
			"page 0: uncompressed size 1.8 GB exceeds the page cap of 16 MiB (64 times the file's size, at least 16 MiB, at most 1 GiB)"},
		{"compressed size", format.Zstd, 8, page(format.PageHeader{Type: format.DataPage, UncompressedPageSize: 64, CompressedPageSize: 1_800_000_000, DataPageHeader: v1(8)}, make([]byte, 10)),
			"page 0: compressed size 1.8 GB exceeds the column chunk"},
		{"values", format.Uncompressed, 2_000_000_000, page(format.PageHeader{Type: format.DataPage, UncompressedPageSize: 16, DataPageHeader: v1(2_000_000_000)}, make([]byte, 16)),
			"page 0: 2000000000 values, above the cap of 1048576"},
		{"plain values in too few bytes", format.Uncompressed, 100, page(format.PageHeader{Type: format.DataPage, UncompressedPageSize: 16, DataPageHeader: v1(100)}, make([]byte, 16)),
			"page 0: 100 values of INT64 in 16 B of data"},
		{"dictionary", format.Uncompressed, 0, page(format.PageHeader{Type: format.DictionaryPage, UncompressedPageSize: 16,
			DictionaryPageHeader: thrift.Null[format.DictionaryPageHeader]{Valid: true, V: format.DictionaryPageHeader{NumValues: 1000, Encoding: format.Plain}}}, make([]byte, 16)),
			"page 0: a dictionary of 1000 values in 16 B of data (at most 2 values)"},
		{"dictionary indexes without a dictionary", format.Uncompressed, 8, page(format.PageHeader{Type: format.DataPage, UncompressedPageSize: 16,
			DataPageHeader: thrift.Null[format.DataPageHeader]{Valid: true, V: format.DataPageHeader{NumValues: 8, Encoding: format.RLEDictionary}}}, make([]byte, 16)),
			"page 0: a RLE_DICTIONARY page without a dictionary page"},
		{"snappy length", format.Snappy, 8, page(format.PageHeader{Type: format.DataPage, UncompressedPageSize: 64, DataPageHeader: v1(8)}, append(snappyLen, 0, 0)),
			"page 0: SNAPPY data: the block decodes to 1 MB, the page header says 64 B"},
		{"zstd bomb", format.Zstd, 8, page(format.PageHeader{Type: format.DataPage, UncompressedPageSize: 64, DataPageHeader: v1(8)}, zstdRLE(200)),
			"page 0: ZSTD data: frames decode to up to 26.2 MB, above the page cap of 16 MiB"},
		{"zstd block past the page", format.Zstd, 8, page(format.PageHeader{Type: format.DataPage, UncompressedPageSize: 64, DataPageHeader: v1(8)},
			// a frame header and a last raw block of 100 bytes, 3 of them there
			[]byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x70, 100<<3&0xff | 1, 100 >> 5, 0, 1, 2, 3}),
			"page 0: ZSTD data: block at byte 6 runs past the page"},
		{"gzip header", format.Gzip, 8, page(format.PageHeader{Type: format.DataPage, UncompressedPageSize: 64, DataPageHeader: v1(8)}, []byte("not gzip data at all")),
			"page 0: GZIP data: decompressing (up to the page's 64 B): gzip: invalid header"},
		{"delta count", format.Uncompressed, 8, page(format.PageHeader{Type: format.DataPageV2, UncompressedPageSize: int32(len(deltaHuge)),
			DataPageHeaderV2: v2(8, format.DeltaBinaryPacked)}, deltaHuge),
			"page 0: DELTA_BINARY_PACKED values: a run of 2147483647 values in a page of 8"},
		{"delta lengths", format.Uncompressed, 2, page(format.PageHeader{Type: format.DataPageV2, UncompressedPageSize: int32(len(bigLengths)),
			DataPageHeaderV2: v2(2, format.DeltaLengthByteArray)}, bigLengths),
			"page 0: DELTA_LENGTH_BYTE_ARRAY values: the lengths add up to 2.15 GB, the data after them is 0 B"},
		{"values against the chunk", format.Uncompressed, 9, page(format.PageHeader{Type: format.DataPage, UncompressedPageSize: 64, DataPageHeader: v1(8)}, make([]byte, 64)),
			"the pages hold 8 values, the column chunk says 9"},
	} {
		pc := &pageChecker{r: bytes.NewReader(c.data), path: "x.parquet", pageCap: PageCap(int64(len(c.data)))}
		md := &format.ColumnMetaData{Codec: c.codec, NumValues: c.values, TotalCompressedSize: int64(len(c.data))}
		pos := tableError{path: "x.parquet", rowGroup: 0, column: leaf.name, page: -1}
		err := pc.checkPages(pos, leaf, md, c.values, 0, int64(len(c.data)))
		want := "formats: x.parquet: row group 0, column offset_ns: " + c.want
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s:\n got %v\nwant %s", c.name, err, want)
		}
	}
}

// BenchmarkCheckTableFile measures the validation alone on
// BenchmarkReadTables' tables (the three files): it reads footers and page
// headers (and dictionary pages, for their checksums), not the data.
func BenchmarkCheckTableFile(b *testing.B) {
	dir := b.TempDir()
	writeBenchTables(b, dir, 500, 430)
	var size int64
	for _, table := range fuzzTables {
		st, err := os.Stat(filepath.Join(dir, table+".parquet"))
		if err != nil {
			b.Fatal(err)
		}
		size += st.Size()
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := validateDir(dir); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(size), "file-bytes")
}

// TestReadTablesDuckDBRewrite reads tables another tool rewrote: DuckDB
// copies the written tables (no tokentrace metadata, every column
// nullable, its own page layout and encodings: version 1 pages with snappy,
// zstd with small row groups, version 2 pages with delta encodings), and
// the validation must take them and ReadTables read the same rows.
func TestReadTablesDuckDBRewrite(t *testing.T) {
	_, errNode := exec.LookPath("node")
	requireTool(t, errNode == nil, "node")
	_, errMod := os.Stat(filepath.Join(duckdbCheckDir, "node_modules/@duckdb/node-api/package.json"))
	requireTool(t, errMod == nil, "tools/duckdb-check/node_modules (run: npm ci --prefix tools/duckdb-check)")

	src := t.TempDir()
	const nb = 40
	writeSample(t, src, nb, WriteOptions{})
	want := collectSample(t, nb)
	for _, c := range []struct{ name, opts string }{
		{"v1-snappy", "FORMAT parquet"},
		{"zstd-small-row-groups", "FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 64"},
		{"v2-pages", "FORMAT parquet, PARQUET_VERSION v2, COMPRESSION zstd"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			var sql strings.Builder
			for _, table := range fuzzTables {
				fmt.Fprintf(&sql, "COPY (SELECT * FROM %s) TO '%s' (%s);\n", table, filepath.Join(out, table+".parquet"), c.opts)
			}
			sqlFile := filepath.Join(t.TempDir(), "copy.sql")
			if err := os.WriteFile(sqlFile, []byte(sql.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("node", filepath.Join(duckdbCheckDir, "run-sql.mjs"), src, sqlFile)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("run-sql.mjs: %v\n%s", err, b)
			}
			if _, ok := openPF(t, filepath.Join(out, "runs.parquet")).Lookup(MetaImportID); ok {
				t.Fatal("DuckDB kept the tokentrace metadata")
			}
			diffCollectors(t, want, readAll(t, out))
		})
	}
}

// TestReadTablesMaxRuns: the runs table is held in memory, its rows capped.
func TestReadTablesMaxRuns(t *testing.T) {
	dir := t.TempDir()
	writeSample(t, dir, 3, WriteOptions{})
	defer func(n int) { maxRuns = n }(maxRuns)
	maxRuns = 3 // the sample has 4 runs
	want := "runs.parquet: more than 3 runs (MaxRuns: the runs table is held in memory)"
	if err := ReadTables(dir, &Collector{}); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ReadTables: %v, want %q", err, want)
	}
	if _, err := ReadRuns(dir); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ReadRuns: %v, want %q", err, want)
	}
	maxRuns = 4
	if _, err := ReadRuns(dir); err != nil {
		t.Errorf("4 runs, cap 4: %v", err)
	}
}
