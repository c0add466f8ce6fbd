package formats

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"strings"
	"unsafe"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding/delta"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"
)

// Tables are untrusted input: notebooks, other tools and other machines
// write into the folders tokentrace reads. Before a file reaches
// parquet-go, checkTableFile reads its footer and every page header and
// checks each length parquet-go would allocate from, so that a corrupt or
// hostile file is refused with a positioned error instead of panicking or
// allocating gigabytes (formats/SCHEMA.md, "Reading untrusted tables").
//
// The caps:
const (
	// MaxFooterBytes is the largest footer (the Thrift FileMetaData at the
	// end of the file) a table file may have: 64 MiB, room for about
	// 400,000 column chunks.
	MaxFooterBytes = 64 << 20

	// MaxPageBytes is the absolute cap on one page's compressed and
	// uncompressed size, and on what its compressed data may decode to:
	// 1 GiB. A file's own cap is lower (PageCap).
	MaxPageBytes = 1 << 30

	// pageCapFloor and pageCapPerByte define PageCap.
	pageCapFloor   = 16 << 20
	pageCapPerByte = 64

	// maxFooterMemory caps the memory the decoded footer's lists may take
	// (each list element counted at the size of the largest FileMetaData
	// element, a ColumnChunk): 512 MiB.
	maxFooterMemory = 512 << 20

	// maxThriftDepth caps the nesting of Thrift structures and lists in a
	// footer or page header (the Parquet format nests 6 deep).
	maxThriftDepth = 32

	// maxSchemaElements and maxSchemaDepth cap the schema: columns and
	// groups, and nesting (tokentrace's tables nest 4 deep).
	maxSchemaElements = 10_000
	maxSchemaDepth    = 32

	// maxFixedLen caps a FIXED_LEN_BYTE_ARRAY column's value length.
	maxFixedLen = 1 << 20

	// bytesPerValue is what parquet-go allocates per value of a page,
	// whatever its data size (definition and repetition levels, value
	// offsets, dictionary indexes: up to 14 bytes): a page may hold at most
	// PageCap/bytesPerValue values.
	bytesPerValue = 16

	// zstdBlockMax is the largest output of one zstd block (RFC 8878,
	// Block_Maximum_Size).
	zstdBlockMax = 128 << 10
)

// PageCap returns the largest page a table file of size bytes may hold,
// compressed or decoded: 64 times the file's size, at least 16 MiB and at
// most MaxPageBytes (1 GiB). A larger page in a small file is corruption
// (or a decompression bomb); a real page this size needs a file of its
// size's order.
func PageCap(size int64) int64 {
	if size > MaxPageBytes/pageCapPerByte {
		return MaxPageBytes
	}
	return max(pageCapFloor, pageCapPerByte*size)
}

// tableError positions an error in a table file: the file, and where known
// the row group, the column (its dotted path) and the page (0-based, in
// the column chunk, the dictionary page included).
type tableError struct {
	path     string
	rowGroup int    // -1: not known
	column   string // "": not known
	page     int    // -1: not known
}

func (p tableError) errorf(format string, args ...any) error {
	var b strings.Builder
	b.WriteString("formats: ")
	b.WriteString(p.path)
	sep := ": "
	if p.rowGroup >= 0 {
		fmt.Fprintf(&b, "%srow group %d", sep, p.rowGroup)
		sep = ", "
	}
	if p.column != "" {
		fmt.Fprintf(&b, "%scolumn %s", sep, p.column)
	}
	if p.page >= 0 {
		fmt.Fprintf(&b, ": page %d", p.page)
	}
	return fmt.Errorf("%s: "+format, append([]any{b.String()}, args...)...)
}

// byteSize formats a length for messages: "512 B", "11 KB", "1.8 GB".
func byteSize(n int64) string {
	if n < 1000 && n > -1000 {
		return fmt.Sprintf("%d B", n)
	}
	f, units := float64(n), []string{"KB", "MB", "GB", "TB", "PB", "EB"}
	for i, u := range units {
		f /= 1000
		if math.Abs(f) < 999.5 || i == len(units)-1 {
			return fmt.Sprintf("%.3g %s", f, u)
		}
	}
	panic("unreachable")
}

// capSize formats a cap, a power of two: "16 MiB", "1 GiB".
func capSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return byteSize(n)
}

// tableMeta is a table file's checked footer.
type tableMeta struct {
	meta *format.FileMetaData
}

// lookup returns a key-value metadata entry of the footer.
func (m *tableMeta) lookup(key string) (string, bool) {
	for _, kv := range m.meta.KeyValueMetadata {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return "", false
}

// readFooter reads and decodes the footer of a table file of size bytes,
// after checking the magic bytes, the footer's length against the file and
// MaxFooterBytes, and the lengths of its Thrift lists against the bytes
// that hold them; it also returns where the footer starts (the end of the
// column data). Errors are positioned in path.
func readFooter(r io.ReaderAt, size int64, path string) (*format.FileMetaData, int64, error) {
	pos := tableError{path: path, rowGroup: -1, page: -1}
	if size < 12 {
		return nil, 0, pos.errorf("not a Parquet file: %d bytes, shorter than its header and footer (12 bytes)", size)
	}
	var head, tail [8]byte
	if _, err := r.ReadAt(head[:4], 0); err != nil {
		return nil, 0, pos.errorf("reading the header: %w", err)
	}
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return nil, 0, pos.errorf("reading the footer: %w", err)
	}
	switch {
	case string(head[:4]) == "PARE" || string(tail[4:]) == "PARE":
		return nil, 0, pos.errorf("encrypted Parquet files are not supported")
	case string(head[:4]) != "PAR1":
		return nil, 0, pos.errorf("not a Parquet file: starts with %q, not the magic bytes \"PAR1\"", head[:4])
	case string(tail[4:]) != "PAR1":
		return nil, 0, pos.errorf("not a Parquet file: ends with %q, not the magic bytes \"PAR1\" (cut short?)", tail[4:])
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > size-12 {
		return nil, 0, pos.errorf("footer length %s exceeds the file (%s)", byteSize(n), byteSize(size))
	}
	if n > MaxFooterBytes {
		return nil, 0, pos.errorf("footer length %s exceeds the footer cap of %s (MaxFooterBytes)", byteSize(n), capSize(MaxFooterBytes))
	}
	start := size - 8 - n
	buf := make([]byte, n)
	if _, err := r.ReadAt(buf, start); err != nil {
		return nil, 0, pos.errorf("reading the footer: %w", err)
	}
	if _, err := checkThrift(buf, maxFooterMemory, int64(unsafe.Sizeof(format.ColumnChunk{}))); err != nil {
		return nil, 0, pos.errorf("footer: %w", err)
	}
	var proto thrift.CompactProtocol
	pr := proto.NewReaderFromBytes(buf)
	meta := new(format.FileMetaData)
	if err := thrift.NewDecoder(pr).Decode(meta); err != nil {
		return nil, 0, pos.errorf("footer: %w", err)
	}
	if pr.BytesRead() != len(buf) {
		// a signed (encrypted) footer carries 28 more bytes
		return nil, 0, pos.errorf("footer: %d bytes after its metadata (signed footers are not supported)", len(buf)-pr.BytesRead())
	}
	return meta, start, nil
}

// errThriftShort is checkThrift's error when the input ends inside a value.
var errThriftShort = errors.New("cut short")

// checkThrift walks the Thrift compact-protocol structure in b with the
// library's reader, without decoding it into Go values, and checks what
// decoding it would allocate: every list, set and map may claim at most as
// many elements as bytes are left (each element takes at least one byte),
// nesting is at most maxThriftDepth, and the lists' elements (structures
// counted at structBytes each) take at most memLimit. It returns that
// estimate; errThriftShort (wrapped) when b ends inside the structure.
func checkThrift(b []byte, memLimit, structBytes int64) (int64, error) {
	var proto thrift.CompactProtocol
	c := thriftCheck{r: proto.NewReaderFromBytes(b), n: len(b), limit: memLimit, structBytes: structBytes}
	err := c.structure(0)
	if err != nil && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
		err = fmt.Errorf("%w at byte %d of %d", errThriftShort, c.r.BytesRead(), len(b))
	}
	return c.mem, err
}

type thriftCheck struct {
	r           thrift.BytesReader
	n           int
	mem, limit  int64
	structBytes int64
}

func (c *thriftCheck) structure(depth int) error {
	if depth > maxThriftDepth {
		return fmt.Errorf("nested deeper than %d levels at byte %d", maxThriftDepth, c.r.BytesRead())
	}
	for {
		f, err := c.r.ReadField()
		if err != nil {
			return err
		}
		switch f.Type {
		case thrift.STOP:
			return nil
		case thrift.TRUE, thrift.FALSE:
			// a boolean field's value is in its header
		default:
			if err := c.value(f.Type, depth+1); err != nil {
				return err
			}
		}
	}
}

func (c *thriftCheck) value(t thrift.Type, depth int) error {
	var err error
	switch t {
	case thrift.TRUE, thrift.FALSE: // a list element: one byte
		_, err = c.r.ReadBool()
	case thrift.I8:
		_, err = c.r.ReadInt8()
	case thrift.I16:
		_, err = c.r.ReadInt16()
	case thrift.I32:
		_, err = c.r.ReadInt32()
	case thrift.I64:
		_, err = c.r.ReadInt64()
	case thrift.DOUBLE:
		_, err = c.r.ReadFloat64()
	case thrift.UUID:
		if _, err = c.r.ReadFloat64(); err == nil {
			_, err = c.r.ReadFloat64()
		}
	case thrift.BINARY:
		_, err = c.r.ReadBytes() // bounded by b: the bytes reader returns a sub-slice
	case thrift.STRUCT:
		return c.structure(depth)
	case thrift.LIST, thrift.SET:
		var l thrift.List
		if l, err = c.r.ReadList(); err != nil {
			return err
		}
		if err := c.claim(int64(l.Size), 1, l.Type); err != nil {
			return err
		}
		for range l.Size {
			if err := c.value(l.Type, depth+1); err != nil {
				return err
			}
		}
	case thrift.MAP:
		var m thrift.Map
		if m, err = c.r.ReadMap(); err != nil {
			return err
		}
		if err := c.claim(int64(m.Size), 2, m.Key); err != nil {
			return err
		}
		c.mem += int64(m.Size) * c.elemBytes(m.Value)
		for range m.Size {
			if err := c.value(m.Key, depth+1); err != nil {
				return err
			}
			if err := c.value(m.Value, depth+1); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("unknown Thrift type %d at byte %d", t, c.r.BytesRead())
	}
	return err
}

// claim checks a container of n elements of at least minBytes each
// against the bytes left and counts its memory.
func (c *thriftCheck) claim(n, minBytes int64, elem thrift.Type) error {
	left := int64(c.n - c.r.BytesRead())
	if n < 0 || n*minBytes > left {
		return fmt.Errorf("a list of %d elements at byte %d, with %d bytes left", n, c.r.BytesRead(), left)
	}
	c.mem += n * c.elemBytes(elem)
	if c.mem > c.limit {
		return fmt.Errorf("its lists would take more than %s decoded (at byte %d)", capSize(c.limit), c.r.BytesRead())
	}
	return nil
}

func (c *thriftCheck) elemBytes(t thrift.Type) int64 {
	switch t {
	case thrift.STRUCT:
		return c.structBytes
	case thrift.BINARY, thrift.LIST, thrift.SET, thrift.MAP:
		return 24
	}
	return 8
}

// schemaNode is an element of a file's schema tree.
type schemaNode struct {
	elem     *format.SchemaElement
	path     []string
	name     string // dotted path
	children []*schemaNode
	maxRep   int
	maxDef   int
	leaf     int // column index of a leaf; -1 for a group
}

func (n *schemaNode) repetition() format.FieldRepetitionType {
	if n.elem.RepetitionType.Valid {
		return n.elem.RepetitionType.V
	}
	return format.Required
}

func (n *schemaNode) child(name string) *schemaNode {
	for _, c := range n.children {
		if c.elem.Name == name {
			return c
		}
	}
	return nil
}

// buildSchema checks the flattened schema of a footer and returns its tree
// and its leaves in column order: the children counts add up, nesting is
// bounded, every leaf has a physical type its annotations fit (parquet-go
// reads a column by its annotation: a STRING annotation on an INT64 column
// would decode its pages as strings), every group has no physical type.
func buildSchema(elems []format.SchemaElement, pos tableError) (*schemaNode, []*schemaNode, error) {
	if len(elems) == 0 {
		return nil, nil, pos.errorf("schema: no root element")
	}
	if len(elems) > maxSchemaElements {
		return nil, nil, pos.errorf("schema: %d elements, above the cap of %d", len(elems), maxSchemaElements)
	}
	var leaves []*schemaNode
	next := 0
	var build func(parent *schemaNode, depth int) (*schemaNode, error)
	build = func(parent *schemaNode, depth int) (*schemaNode, error) {
		if next >= len(elems) {
			return nil, pos.errorf("schema: %s declares more children than the schema's %d elements", parent.name, len(elems))
		}
		e := &elems[next]
		next++
		n := &schemaNode{elem: e, leaf: -1}
		if parent != nil {
			n.path = append(slices.Clip(parent.path), e.Name)
			n.name = strings.Join(n.path, ".")
			n.maxRep, n.maxDef = parent.maxRep, parent.maxDef
			if !e.RepetitionType.Valid && depth > 0 {
				return nil, pos.errorf("schema: %s has no repetition type", n.name)
			}
			switch n.repetition() {
			case format.Required:
			case format.Optional:
				n.maxDef++
			case format.Repeated:
				n.maxRep++
				n.maxDef++
			default:
				return nil, pos.errorf("schema: %s has repetition type %d", n.name, n.repetition())
			}
		} else {
			n.name = "(root)"
		}
		if depth > maxSchemaDepth {
			return nil, pos.errorf("schema: %s nested deeper than %d levels", n.name, maxSchemaDepth)
		}
		if e.Type.Valid { // parquet-go: a leaf is an element with a type
			if parent == nil {
				return nil, pos.errorf("schema: the root has a physical type")
			}
			if e.NumChildren.Valid && e.NumChildren.V != 0 {
				return nil, pos.errorf("schema: %s has a physical type and %d children", n.name, e.NumChildren.V)
			}
			if err := checkLeafType(e); err != nil {
				return nil, pos.errorf("schema: column %s: %v", n.name, err)
			}
			n.leaf = len(leaves)
			leaves = append(leaves, n)
			return n, nil
		}
		k := int32(0)
		if e.NumChildren.Valid {
			k = e.NumChildren.V
		}
		if k < 0 || int(k) > len(elems)-next {
			return nil, pos.errorf("schema: %s declares %d children, %d elements are left", n.name, k, len(elems)-next)
		}
		for range k {
			c, err := build(n, depth+1)
			if err != nil {
				return nil, err
			}
			n.children = append(n.children, c)
		}
		return n, nil
	}
	root, err := build(nil, 0)
	if err != nil {
		return nil, nil, err
	}
	if next != len(elems) {
		return nil, nil, pos.errorf("schema: %d elements after the root's %d children", len(elems)-next, len(root.children))
	}
	return root, leaves, nil
}

// checkLeafType checks that a leaf's annotations (logical type, converted
// type) fit its physical type, as parquet-go's column types expect
// (schemaElementTypeOf): otherwise it would decode the pages as another
// type, or panic on a group annotation.
func checkLeafType(e *format.SchemaElement) error {
	t := e.Type.V
	if t < format.Boolean || t > format.FixedLenByteArray {
		return fmt.Errorf("unknown physical type %d", t)
	}
	if t == format.FixedLenByteArray && (!e.TypeLength.Valid || e.TypeLength.V <= 0 || e.TypeLength.V > maxFixedLen) {
		return fmt.Errorf("FIXED_LEN_BYTE_ARRAY of length %d (want 1 to %d)", e.TypeLength.V, maxFixedLen)
	}
	fits := func(what string, types ...format.Type) error {
		if slices.Contains(types, t) {
			return nil
		}
		return fmt.Errorf("a %s annotation on a %s column", what, t)
	}
	switch lt := e.LogicalType.Value.(type) {
	case nil:
	case *format.StringType, *format.EnumType, *format.JsonType, *format.BsonType,
		*format.GeometryType, *format.GeographyType:
		return fits(lt.String(), format.ByteArray)
	case *format.MapType, *format.ListType, *format.VariantType:
		return fmt.Errorf("a %s annotation on a column (only groups have one)", lt.String())
	case *format.DecimalType:
		return fits("DECIMAL", format.Int32, format.Int64, format.ByteArray, format.FixedLenByteArray)
	case *format.DateType:
		return fits("DATE", format.Int32)
	case *format.TimeType:
		switch lt.Unit.Value.(type) {
		case *format.MilliSeconds:
			return fits("TIME(MILLIS)", format.Int32)
		case *format.MicroSeconds, *format.NanoSeconds:
			return fits("TIME(MICROS|NANOS)", format.Int64)
		}
		return errors.New("a TIME annotation without a known unit")
	case *format.TimestampType:
		return fits("TIMESTAMP", format.Int64)
	case *format.IntType:
		switch lt.BitWidth {
		case 8, 16, 32:
			return fits("INT(8|16|32)", format.Int32)
		case 64:
			return fits("INT(64)", format.Int64)
		}
		return fmt.Errorf("an INT annotation of %d bits", lt.BitWidth)
	case *format.NullType:
		return nil // parquet-go reads every value as null
	case *format.UUIDType:
		if t != format.FixedLenByteArray || e.TypeLength.V != 16 {
			return errors.New("a UUID annotation on a column that is not FIXED_LEN_BYTE_ARRAY(16)")
		}
		return nil
	default:
		// other logical types (FLOAT16, newer ones): parquet-go goes on to
		// the converted type, then the physical type
	}
	if !e.ConvertedType.Valid {
		return nil
	}
	switch ct := e.ConvertedType.V; ct {
	case deprecated.UTF8, deprecated.Enum, deprecated.Json, deprecated.Bson:
		return fits(fmt.Sprintf("converted type %d", ct), format.ByteArray)
	case deprecated.Map, deprecated.MapKeyValue, deprecated.List:
		return fmt.Errorf("a group's converted type (%d: MAP, MAP_KEY_VALUE or LIST) on a column", ct)
	case deprecated.Decimal:
		if e.Scale.Valid && e.Precision.Valid {
			return fits("DECIMAL", format.Int32, format.Int64, format.ByteArray, format.FixedLenByteArray)
		}
	case deprecated.Date, deprecated.TimeMillis, deprecated.Uint8, deprecated.Uint16, deprecated.Uint32,
		deprecated.Int8, deprecated.Int16, deprecated.Int32:
		return fits(fmt.Sprintf("converted type %d", ct), format.Int32)
	case deprecated.TimeMicros, deprecated.TimestampMillis, deprecated.TimestampMicros, deprecated.Uint64, deprecated.Int64:
		return fits(fmt.Sprintf("converted type %d", ct), format.Int64)
	case deprecated.Interval:
		if t != format.FixedLenByteArray || e.TypeLength.V != 12 {
			return errors.New("an INTERVAL converted type on a column that is not FIXED_LEN_BYTE_ARRAY(12)")
		}
	}
	return nil
}

// checkShape checks the file's columns that the Go row type holds (want:
// parquet.SchemaOf of the table's row type as written, tableRowTypes:
// Run, requestRow or Event) against it: a value where a value is expected
// (not a group, not repeated), a list or structure where one is expected,
// and a physical type the reader converts — for a TIMESTAMP column
// (start_time), INT64 annotated TIMESTAMP (any unit) or not annotated.
// Extra columns are not checked beyond buildSchema; missing ones are
// checkColumns' business.
func checkShape(want parquet.Node, have *schemaNode, pos tableError) error {
	for _, wf := range want.Fields() {
		h := have.child(wf.Name())
		if h == nil {
			continue
		}
		if err := checkNode(wf, h, pos); err != nil {
			return err
		}
	}
	return nil
}

func checkNode(want parquet.Node, have *schemaNode, pos tableError) error {
	rep := have.repetition() == format.Repeated
	if rep != want.Repeated() {
		if rep {
			return pos.errorf("schema: column %s is repeated; tokentrace reads one value per row", have.name)
		}
		return pos.errorf("schema: column %s is not repeated; tokentrace reads a list there", have.name)
	}
	if want.Leaf() {
		if have.leaf < 0 {
			return pos.errorf("schema: column %s is a group; tokentrace reads a %s value there", have.name, want.Type().Kind())
		}
		e := have.elem
		if _, null := e.LogicalType.Value.(*format.NullType); null {
			return nil
		}
		if lt := want.Type().LogicalType(); lt != nil {
			if _, ts := lt.Value.(*format.TimestampType); ts {
				// a TIMESTAMP column tokentrace writes (requests.start_time):
				// INT64, a TIMESTAMP of any unit or no annotation
				if e.Type.V != format.Int64 {
					return pos.errorf("schema: column %s is %s; tokentrace writes a TIMESTAMP (INT64) there", have.name, e.Type.V)
				}
				if v := e.LogicalType.Value; v != nil {
					if _, ok := v.(*format.TimestampType); !ok {
						return pos.errorf("schema: column %s is annotated %s; tokentrace writes a TIMESTAMP there", have.name, v.String())
					}
				}
				return nil
			}
		}
		var ok []format.Type
		switch want.Type().Kind() {
		case parquet.Boolean:
			ok = []format.Type{format.Boolean}
		case parquet.Int32, parquet.Int64:
			ok = []format.Type{format.Int32, format.Int64}
		case parquet.Double:
			ok = []format.Type{format.Double, format.Float}
		case parquet.ByteArray:
			ok = []format.Type{format.ByteArray, format.FixedLenByteArray}
		}
		if !slices.Contains(ok, e.Type.V) {
			return pos.errorf("schema: column %s is %s; tokentrace reads %s there", have.name, e.Type.V, want.Type().Kind())
		}
		return nil
	}
	if have.leaf >= 0 {
		return pos.errorf("schema: column %s is a %s value; tokentrace reads a group there", have.name, have.elem.Type.V)
	}
	wantList := false
	if lt := want.Type().LogicalType(); lt != nil {
		_, wantList = lt.Value.(*format.ListType)
	}
	hl := have.elem.ConvertedType.Valid && have.elem.ConvertedType.V == deprecated.List
	switch have.elem.LogicalType.Value.(type) {
	case *format.ListType:
		hl = true
	case *format.MapType, *format.VariantType:
		return pos.errorf("schema: column %s is annotated %s; tokentrace reads a %s there", have.name,
			have.elem.LogicalType.Value.String(), map[bool]string{true: "list", false: "structure"}[wantList])
	}
	if have.elem.ConvertedType.Valid && (have.elem.ConvertedType.V == deprecated.Map || have.elem.ConvertedType.V == deprecated.MapKeyValue) {
		return pos.errorf("schema: column %s is a map; tokentrace reads a %s there", have.name,
			map[bool]string{true: "list", false: "structure"}[wantList])
	}
	if wantList && !hl {
		return pos.errorf("schema: column %s is not a LIST; tokentrace reads a list there", have.name)
	}
	return checkShape(want, have, pos)
}

// checkTableFile validates a table file before parquet-go opens it: the
// footer (readFooter), the tokentrace metadata (checkFileMeta), the schema
// (buildSchema) and its fit to the Go row type's (checkShape: want is
// parquet.SchemaOf the row type), every row group and column chunk (row
// counts, value counts, byte ranges within the column data and not
// overlapping), and every page header of every column chunk (checkPages).
// Errors are positioned: file, row group, column, page.
func checkTableFile(r io.ReaderAt, size int64, path, table string, want parquet.Node) (*tableMeta, error) {
	meta, dataEnd, err := readFooter(r, size, path)
	if err != nil {
		return nil, err
	}
	m := &tableMeta{meta: meta}
	if err := checkFileMeta(path, table, m.lookup); err != nil {
		return nil, err
	}
	pos := tableError{path: path, rowGroup: -1, page: -1}
	root, leaves, err := buildSchema(meta.Schema, pos)
	if err != nil {
		return nil, err
	}
	if err := checkShape(want, root, pos); err != nil {
		return nil, err
	}
	if meta.EncryptionAlgorithm.Value != nil {
		return nil, pos.errorf("encrypted Parquet files are not supported")
	}
	c := &pageChecker{r: r, path: path, pageCap: PageCap(size)}
	if dataEnd <= readWhole {
		// a small file's pages at once: one read instead of one per page
		c.win = make([]byte, dataEnd)
		if _, err := r.ReadAt(c.win, 0); err != nil {
			return nil, pos.errorf("reading the column data: %w", err)
		}
		c.r = bytes.NewReader(c.win)
	}
	type span struct {
		start, end int64
		g          int
		col        string
	}
	var spans []span
	var rows int64
	for g := range meta.RowGroups {
		rg := &meta.RowGroups[g]
		pos := tableError{path: path, rowGroup: g, page: -1}
		if rg.NumRows < 0 {
			return nil, pos.errorf("%d rows", rg.NumRows)
		}
		if rows += rg.NumRows; rows < 0 {
			return nil, pos.errorf("row counts overflow")
		}
		if len(rg.Columns) != len(leaves) {
			return nil, pos.errorf("%d column chunks, the schema has %d columns", len(rg.Columns), len(leaves))
		}
		for i := range rg.Columns {
			cc, leaf := &rg.Columns[i], leaves[i]
			pos.column = leaf.name
			md := &cc.MetaData
			switch {
			case cc.FilePath != "":
				return nil, pos.errorf("column data in another file (%q) is not supported", cc.FilePath)
			case cc.CryptoMetadata.Value != nil || len(cc.EncryptedColumnMetadata) > 0:
				return nil, pos.errorf("encrypted columns are not supported")
			case !slices.Equal(md.PathInSchema, leaf.path):
				return nil, pos.errorf("column chunk of column %q where the schema has %s (metadata missing or corrupt)",
					strings.Join(md.PathInSchema, "."), leaf.name)
			case md.Type != leaf.elem.Type.V:
				return nil, pos.errorf("column chunk of type %s, the schema says %s", md.Type, leaf.elem.Type.V)
			case md.NumValues < 0:
				return nil, pos.errorf("%d values", md.NumValues)
			case leaf.maxRep == 0 && md.NumValues != rg.NumRows:
				return nil, pos.errorf("%d values in a row group of %d rows", md.NumValues, rg.NumRows)
			case leaf.maxRep > 0 && md.NumValues < rg.NumRows:
				return nil, pos.errorf("%d values in a row group of %d rows (a list has at least one entry per row)", md.NumValues, rg.NumRows)
			case leaf.maxRep > 0 && md.NumValues > c.pageCap/bytesPerValue:
				// the row reader holds a row's list entries at once
				return nil, pos.errorf("%d list entries in one row group, above the cap of %d for a file of %s (%s / %d bytes a value)",
					md.NumValues, c.pageCap/bytesPerValue, byteSize(size), capSize(c.pageCap), bytesPerValue)
			}
			if _, null := leaf.elem.LogicalType.Value.(*format.NullType); null && md.Statistics.NullCount != md.NumValues {
				// parquet-go reads a NULL column's values as null without
				// decoding them: the annotation (pyarrow's all-null
				// columns) must be true, not a damaged one
				return nil, pos.errorf("column annotated NULL (all values null) whose statistics count %d nulls among %d values",
					md.Statistics.NullCount, md.NumValues)
			}
			switch md.Codec {
			case format.Uncompressed, format.Snappy, format.Gzip, format.Brotli, format.Zstd, format.Lz4Raw:
			default:
				return nil, pos.errorf("compression codec %s is not supported", md.Codec)
			}
			start := md.DataPageOffset
			if md.DictionaryPageOffset != 0 {
				if md.DictionaryPageOffset > md.DataPageOffset {
					return nil, pos.errorf("dictionary page offset %d after the data page offset %d", md.DictionaryPageOffset, md.DataPageOffset)
				}
				start = md.DictionaryPageOffset // where parquet-go starts reading
			}
			tcs := md.TotalCompressedSize
			if start < 4 || start > dataEnd || tcs < 0 || tcs > dataEnd-start {
				return nil, pos.errorf("column chunk of %s at byte %d lies outside the column data (bytes 4 to %d of %s)",
					byteSize(tcs), start, dataEnd, byteSize(size))
			}
			if tcs == 0 && md.NumValues > 0 {
				return nil, pos.errorf("an empty column chunk holding %d values", md.NumValues)
			}
			for _, ix := range []struct {
				what string
				off  int64
				n    int64
			}{{"offset index", cc.OffsetIndexOffset, int64(cc.OffsetIndexLength)},
				{"column index", cc.ColumnIndexOffset, int64(cc.ColumnIndexLength)},
				{"bloom filter", md.BloomFilterOffset, int64(md.BloomFilterLength)}} {
				if ix.off != 0 && (ix.off < 4 || ix.n < 0 || ix.off > dataEnd || ix.n > dataEnd-ix.off) {
					return nil, pos.errorf("%s of %s at byte %d lies outside the column data (bytes 4 to %d)", ix.what, byteSize(ix.n), ix.off, dataEnd)
				}
			}
			spans = append(spans, span{start, start + tcs, g, leaf.name})
			if err := c.checkPages(pos, leaf, md, rg.NumRows, start, start+tcs); err != nil {
				return nil, err
			}
		}
	}
	if rows != meta.NumRows {
		return nil, pos.errorf("the row groups hold %d rows, the footer says %d", rows, meta.NumRows)
	}
	slices.SortFunc(spans, func(a, b span) int { return int(min(max(a.start-b.start, -1), 1)) })
	for i := 1; i < len(spans); i++ {
		if a, b := spans[i-1], spans[i]; a.end > b.start {
			return nil, tableError{path: path, rowGroup: a.g, column: a.col, page: -1}.errorf(
				"column chunk (bytes %d to %d) overlaps row group %d, column %s (from byte %d)", a.start, a.end, b.g, b.col, b.start)
		}
	}
	return m, nil
}

// pageChecker reads the page headers of a file's column chunks through a
// small read-ahead window (only headers, and the first bytes of compressed
// data, are read).
type pageChecker struct {
	r       io.ReaderAt
	path    string
	pageCap int64
	win     []byte
	winOff  int64 // file offset of win[0]
	proto   thrift.CompactProtocol
	rd      thrift.BytesReader
	dec     *thrift.Decoder
}

// readAhead is how much the checker reads at once: page headers of a
// column chunk's small pages come with one read. The column data of files
// up to readWhole bytes is read at once.
const (
	readAhead = 4096
	readWhole = 1 << 20
)

// bytesAt returns up to n bytes of the file at off, fewer where end (the
// end of the column chunk) comes first. The slice is valid until the next
// call.
func (c *pageChecker) bytesAt(off, end int64, n int) ([]byte, error) {
	n = int(min(int64(n), end-off))
	if off >= c.winOff && off+int64(n) <= c.winOff+int64(len(c.win)) {
		return c.win[off-c.winOff : off-c.winOff+int64(n)], nil
	}
	m := int(min(int64(max(n, readAhead)), end-off))
	if cap(c.win) < m {
		c.win = make([]byte, m)
	}
	c.win = c.win[:m]
	if k, err := c.r.ReadAt(c.win, off); k < m {
		c.win = c.win[:0]
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	c.winOff = off
	return c.win[:n], nil
}

// pageHeader decodes the page header at off (before end) and returns it
// with its length.
func (c *pageChecker) pageHeader(off, end int64) (*format.PageHeader, int64, error) {
	for n := 256; ; n *= 4 {
		b, err := c.bytesAt(off, end, n)
		if err != nil {
			return nil, 0, err
		}
		if _, err := checkThrift(b, 1<<20, int64(unsafe.Sizeof(format.PageHeader{}))); err != nil {
			if errors.Is(err, errThriftShort) && len(b) == n {
				continue // read more
			}
			return nil, 0, err
		}
		if c.rd == nil {
			c.rd = c.proto.NewReaderFromBytes(nil)
			c.dec = thrift.NewDecoder(c.rd)
		}
		c.rd.ResetBytes(b)
		h := new(format.PageHeader)
		if err := c.dec.Decode(h); err != nil {
			return nil, 0, err
		}
		return h, int64(c.rd.BytesRead()), nil
	}
}

// checkPages walks the pages of a column chunk (bytes start to end of the
// file, as parquet-go reads them) and checks each header: sizes within the
// chunk and the page cap, value counts within the cap and adding up to the
// chunk's (and to its rows), a dictionary page first if any and its values
// fitting its size, known encodings, and the compressed data's own length
// headers (checkCompressed).
func (c *pageChecker) checkPages(pos tableError, leaf *schemaNode, md *format.ColumnMetaData, rows, start, end int64) error {
	var values, v2Rows int64
	firstData := int64(-1)
	dict, v2 := false, false
	maxValues := c.pageCap / bytesPerValue
	off := start
	for page := 0; off < end; page++ {
		pos.page = page
		h, hlen, err := c.pageHeader(off, end)
		if err != nil {
			return pos.errorf("page header at byte %d: %v", off, err)
		}
		comp, unc := int64(h.CompressedPageSize), int64(h.UncompressedPageSize)
		body := off + hlen
		switch {
		case comp < 0 || unc < 0:
			return pos.errorf("negative page size (compressed %d, uncompressed %d)", comp, unc)
		case comp > end-body:
			return pos.errorf("compressed size %s exceeds the column chunk (%s, %s of it left after the page header)",
				byteSize(comp), byteSize(end-start), byteSize(end-body))
		case comp > c.pageCap:
			return pos.errorf("compressed size %s exceeds the page cap of %s", byteSize(comp), capSize(c.pageCap))
		case unc > c.pageCap:
			return pos.errorf("uncompressed size %s exceeds the page cap of %s (64 times the file's size, at least %s, at most %s)",
				byteSize(unc), capSize(c.pageCap), capSize(pageCapFloor), capSize(MaxPageBytes))
		}
		// the length of the values' data once decompressed: what parquet-go decodes
		dataLen := unc
		if md.Codec == format.Uncompressed {
			dataLen = comp
		}
		compressed := md.Codec != format.Uncompressed
		var levels int64 // v2: uncompressed levels before the (compressed) values
		switch h.Type {
		case format.DictionaryPage:
			if !h.DictionaryPageHeader.Valid {
				return pos.errorf("dictionary page without its header")
			}
			if page != 0 {
				return pos.errorf("a dictionary page after the first page of the column chunk")
			}
			dh := &h.DictionaryPageHeader.V
			//lint:ignore SA1019 older writers (parquet-mr 1.x) still write PLAIN_DICTIONARY
			if dh.Encoding != format.Plain && dh.Encoding != format.PlainDictionary {
				return pos.errorf("dictionary encoded as %s (want PLAIN)", dh.Encoding)
			}
			if n := int64(dh.NumValues); n < 0 || n > maxValues || n*minValueBits(leaf.elem) > 8*dataLen {
				return pos.errorf("a dictionary of %d values in %s of data (at most %d values)", n, byteSize(dataLen),
					min(maxValues, 8*dataLen/max(1, minValueBits(leaf.elem))))
			}
			dict = true
		case format.DataPage:
			if !h.DataPageHeader.Valid {
				return pos.errorf("data page without its header")
			}
			dh := &h.DataPageHeader.V
			if err := checkPageEncoding(dh.Encoding, dict); err != nil {
				return pos.errorf("%v", err)
			}
			for _, le := range []struct {
				max int
				enc format.Encoding
			}{{leaf.maxRep, dh.RepetitionLevelEncoding}, {leaf.maxDef, dh.DefinitionLevelEncoding}} {
				if le.max > 0 && le.enc != format.RLE && le.enc != format.BitPacked {
					return pos.errorf("levels encoded as %s (want RLE or BIT_PACKED)", le.enc)
				}
			}
			n := int64(dh.NumValues)
			if n < 0 || n > maxValues {
				return pos.errorf("%d values, above the cap of %d for a file of this size (%s / %d bytes a value)",
					n, maxValues, capSize(c.pageCap), bytesPerValue)
			}
			if leaf.maxDef == 0 && dh.Encoding == format.Plain && n*minValueBits(leaf.elem) > 8*dataLen {
				return pos.errorf("%d values of %s in %s of data", n, leaf.elem.Type.V, byteSize(dataLen))
			}
			values += n
		case format.DataPageV2:
			if !h.DataPageHeaderV2.Valid {
				return pos.errorf("data page (v2) without its header")
			}
			dh := &h.DataPageHeaderV2.V
			v2 = true
			if err := checkPageEncoding(dh.Encoding, dict); err != nil {
				return pos.errorf("%v", err)
			}
			n := int64(dh.NumValues)
			if n < 0 || n > maxValues {
				return pos.errorf("%d values, above the cap of %d for a file of this size (%s / %d bytes a value)",
					n, maxValues, capSize(c.pageCap), bytesPerValue)
			}
			if dh.NumNulls < 0 || int64(dh.NumNulls) > n || dh.NumRows < 0 || int64(dh.NumRows) > n ||
				leaf.maxRep == 0 && int64(dh.NumRows) != n {
				return pos.errorf("%d values, %d nulls, %d rows", n, dh.NumNulls, dh.NumRows)
			}
			rl, dl := int64(dh.RepetitionLevelsByteLength), int64(dh.DefinitionLevelsByteLength)
			levels = rl + dl
			if rl < 0 || dl < 0 || levels > comp || levels > unc {
				return pos.errorf("levels of %d and %d bytes in a page of %s (%s uncompressed)", rl, dl, byteSize(comp), byteSize(unc))
			}
			compressed = compressed && (!dh.IsCompressed.Valid || dh.IsCompressed.V)
			values += n
			v2Rows += int64(dh.NumRows)
		default:
			return pos.errorf("page of type %s cannot be read", h.Type)
		}
		if h.Type != format.DictionaryPage && firstData < 0 {
			firstData = off
		}
		if compressed {
			if err := c.checkCompressed(md.Codec, body+levels, body+comp, unc-levels); err != nil {
				return pos.errorf("%s data: %v", md.Codec, err)
			}
		}
		if enc := dataEncoding(h); enc == format.DeltaBinaryPacked || enc == format.DeltaLengthByteArray || enc == format.DeltaByteArray {
			if err := c.checkDelta(md.Codec, compressed, h, leaf, body, comp, levels, unc-levels); err != nil {
				return pos.errorf("%s values: %v", enc, err)
			}
		}
		if h.Type == format.DictionaryPage && h.CRC != 0 {
			// parquet-go checks the checksums of data pages, not of
			// dictionary pages: a damaged dictionary would change values
			// silently (it is small: read it whole)
			b, err := c.bytesAt(body, end, int(comp))
			if err != nil {
				return pos.errorf("reading the dictionary page: %v", err)
			}
			if got := crc32.ChecksumIEEE(b); got != uint32(h.CRC) {
				return pos.errorf("dictionary page checksum %08x, the page header says %08x (damaged)", got, uint32(h.CRC))
			}
		}
		off = body + comp
	}
	pos.page = -1
	if values != md.NumValues {
		return pos.errorf("the pages hold %d values, the column chunk says %d", values, md.NumValues)
	}
	if v2 && v2Rows != rows && leaf.maxRep > 0 {
		return pos.errorf("the pages hold %d rows, the row group %d", v2Rows, rows)
	}
	if md.DataPageOffset != start && md.DataPageOffset != firstData {
		return pos.errorf("the data page offset %d is not where the data pages start (byte %d)", md.DataPageOffset, firstData)
	}
	return nil
}

// checkPageEncoding checks a data page's encoding: one parquet-go reads,
// and a dictionary page before dictionary indexes.
func checkPageEncoding(e format.Encoding, dict bool) error {
	switch e {
	//lint:ignore SA1019 older writers (parquet-mr 1.x) still write PLAIN_DICTIONARY
	case format.PlainDictionary, format.RLEDictionary:
		if !dict {
			return fmt.Errorf("a %s page without a dictionary page", e)
		}
	case format.Plain, format.RLE, format.DeltaBinaryPacked, format.DeltaLengthByteArray, format.DeltaByteArray,
		format.ByteStreamSplit:
	default:
		return fmt.Errorf("values encoded as %s, which cannot be read", e)
	}
	return nil
}

// minValueBits is the least number of bits a PLAIN value of the column
// takes: 1 for BOOLEAN, 32 for a BYTE_ARRAY (its length).
func minValueBits(e *format.SchemaElement) int64 {
	switch e.Type.V {
	case format.Boolean:
		return 1
	case format.Int32, format.Float, format.ByteArray:
		return 32
	case format.Int64, format.Double:
		return 64
	case format.Int96:
		return 96
	case format.FixedLenByteArray:
		return 8 * int64(e.TypeLength.V)
	}
	return 1
}

// checkCompressed checks the compressed data of a page (file bytes from
// to end) against what it should decode to (want bytes), so that the
// decompressor allocates no more than that and the page cap: the length
// header of a snappy block, the frame and block headers of zstd frames
// (whose frame content size makes the decoder allocate), and for the
// codecs whose decoders parquet-go lets grow without a bound (GZIP, BROTLI,
// LZ4_RAW) a trial decompression that stops past want. tokentrace writes
// zstd, snappy or no compression.
func (c *pageChecker) checkCompressed(codec format.CompressionCodec, from, end, want int64) error {
	switch codec {
	case format.Snappy:
		b, err := c.bytesAt(from, end, binary.MaxVarintLen32)
		if err != nil {
			return err
		}
		n, k := binary.Uvarint(b)
		if k <= 0 {
			return errors.New("no length header")
		}
		if int64(n) > want || n > math.MaxInt32 {
			return fmt.Errorf("the block decodes to %s, the page header says %s", byteSize(int64(n)), byteSize(want))
		}
	case format.Zstd:
		return c.checkZstd(from, end, want)
	case format.Gzip, format.Brotli, format.Lz4Raw:
		src := make([]byte, end-from)
		if _, err := c.r.ReadAt(src, from); err != nil {
			return err
		}
		var n int64
		var err error
		switch codec {
		case format.Lz4Raw:
			var k int
			k, err = lz4.UncompressBlock(src, make([]byte, want))
			n = int64(k)
		case format.Gzip:
			var zr *gzip.Reader
			if zr, err = gzip.NewReader(bytes.NewReader(src)); err == nil {
				n, err = io.Copy(io.Discard, io.LimitReader(zr, want+1))
			}
		default:
			n, err = io.Copy(io.Discard, io.LimitReader(brotli.NewReader(bytes.NewReader(src)), want+1))
		}
		if err != nil {
			return fmt.Errorf("decompressing (up to the page's %s): %v", byteSize(want), err)
		}
		if n > want {
			return fmt.Errorf("decodes to more than the page header's %s", byteSize(want))
		}
	}
	return nil
}

// checkZstd walks the zstd frames of a page's data (RFC 8878): their
// headers (decoded by the zstd package) and block headers. The decoder
// allocates a frame's content size when the frame states it, and grows
// block by block (128 KiB at most each) when it does not; both must stay
// within the page's uncompressed size (want) — which itself is within the
// page cap.
func (c *pageChecker) checkZstd(from, end, want int64) error {
	var total int64 // what the frames may make the decoder hold
	for off := from; off < end; {
		b, err := c.bytesAt(off, end, zstd.HeaderMaxSize)
		if err != nil {
			return err
		}
		var h zstd.Header
		if err := h.Decode(b); err != nil {
			return fmt.Errorf("frame at byte %d of %d: %v", off-from, end-from, err)
		}
		if h.Skippable {
			off += int64(h.HeaderSize) + int64(h.SkippableSize)
			continue
		}
		if h.DictionaryID != 0 {
			return fmt.Errorf("frame at byte %d needs zstd dictionary %d", off-from, h.DictionaryID)
		}
		if h.HasFCS && h.FrameContentSize > uint64(want-total) {
			return fmt.Errorf("frame content size %s exceeds the page's uncompressed size (%s)",
				byteSize(int64(min(h.FrameContentSize, math.MaxInt64))), byteSize(want))
		}
		off += int64(h.HeaderSize)
		var blocks int64 // most the blocks decode to
		for last := false; !last; {
			bh, err := c.bytesAt(off, end, 3)
			if err != nil {
				return err
			}
			if len(bh) < 3 {
				return fmt.Errorf("frame cut at byte %d", off-from)
			}
			v := uint32(bh[0]) | uint32(bh[1])<<8 | uint32(bh[2])<<16
			last = v&1 != 0
			size := int64(v >> 3)
			if size > zstdBlockMax {
				return fmt.Errorf("block of %s at byte %d (at most 128 KiB)", byteSize(size), off-from)
			}
			block := off
			off += 3
			switch (v >> 1) & 3 {
			case 0: // raw
				blocks += size
				off += size
			case 1: // RLE: one byte repeated size times
				blocks += size
				off++
			case 2: // compressed
				blocks += zstdBlockMax
				off += size
			default:
				return fmt.Errorf("reserved block type at byte %d", block-from)
			}
			if off > end {
				return fmt.Errorf("block at byte %d runs past the page", block-from)
			}
		}
		if h.HasCheckSum {
			off += 4
		}
		if h.HasFCS {
			total += int64(h.FrameContentSize)
		} else {
			total += blocks
		}
		if total > c.pageCap {
			return fmt.Errorf("frames decode to up to %s, above the page cap of %s", byteSize(total), capSize(c.pageCap))
		}
	}
	return nil
}

// dataEncoding returns a data page's encoding (-1 for other pages).
func dataEncoding(h *format.PageHeader) format.Encoding {
	switch {
	case h.Type == format.DataPage && h.DataPageHeader.Valid:
		return h.DataPageHeader.V.Encoding
	case h.Type == format.DataPageV2 && h.DataPageHeaderV2.Valid:
		return h.DataPageHeaderV2.V.Encoding
	}
	return -1
}

// checkDelta checks the headers inside a delta-encoded page's values
// (Encodings.md), from which parquet-go allocates: the value count of a
// DELTA_BINARY_PACKED run (4 or 8 bytes a value) within the page's values,
// and for the byte-array encodings the lengths' sum (the bytes the values
// decode to) within the data, or the page cap for DELTA_BYTE_ARRAY, whose
// values share prefixes. The values sit inside the compressed data: the
// page is decompressed here (the checks before bound that), so files with
// delta pages — other tools'; tokentrace writes none — pay for it twice.
func (c *pageChecker) checkDelta(codec format.CompressionCodec, compressed bool, h *format.PageHeader, leaf *schemaNode,
	body, comp, levels, want int64) error {
	raw := make([]byte, comp)
	if _, err := c.r.ReadAt(raw, body); err != nil {
		return err
	}
	vals := raw[levels:]
	if compressed {
		var err error
		if vals, err = parquet.LookupCompressionCodec(codec).Decode(make([]byte, 0, want), vals); err != nil {
			return nil // parquet-go fails the same way, allocating no more than want
		}
	}
	var n int64
	if h.Type == format.DataPage {
		n = int64(h.DataPageHeader.V.NumValues)
		// version 1: the levels come first, each with its 4-byte length
		// (parquet-go's decodeLevelsV1)
		for _, max := range []int{leaf.maxRep, leaf.maxDef} {
			if max == 0 {
				continue
			}
			if len(vals) < 4 || int64(binary.LittleEndian.Uint32(vals)) > int64(len(vals)-4) {
				return nil // parquet-go reports the cut levels
			}
			vals = vals[4+binary.LittleEndian.Uint32(vals):]
		}
	} else {
		n = int64(h.DataPageHeaderV2.V.NumValues)
	}
	runs := 1
	switch dataEncoding(h) {
	case format.DeltaByteArray: // prefix lengths, then suffixes (DELTA_LENGTH_BYTE_ARRAY)
		runs = 2
	}
	var sums [2]int64
	rest := vals
	for r := range runs {
		total, end, ok := deltaRunEnd(rest)
		if !ok {
			return nil // a header parquet-go refuses before allocating
		}
		if total > n {
			return fmt.Errorf("a run of %d values in a page of %d", total, n)
		}
		if dataEncoding(h) == format.DeltaBinaryPacked {
			return nil
		}
		var bp delta.BinaryPackedEncoding
		lengths, err := bp.DecodeInt32(make([]int32, 0, total), rest[:end])
		if err != nil {
			return nil // parquet-go fails on it too
		}
		for _, l := range lengths {
			if l < 0 {
				return fmt.Errorf("a negative length (%d)", l)
			}
			sums[r] += int64(l)
		}
		rest = rest[end:]
	}
	if sums[runs-1] > int64(len(rest)) {
		return fmt.Errorf("the lengths add up to %s, the data after them is %s", byteSize(sums[runs-1]), byteSize(int64(len(rest))))
	}
	if total := sums[0] + sums[1]; total > c.pageCap {
		return fmt.Errorf("the values decode to %s, above the page cap of %s", byteSize(total), capSize(c.pageCap))
	}
	return nil
}

// deltaRunEnd walks a DELTA_BINARY_PACKED run at the start of b as
// parquet-go's decoder does (header, then blocks of a minimum delta, bit
// widths and miniblocks, until the header's count of values) and returns
// the count and where the run ends; ok false when the header is one
// parquet-go refuses.
func deltaRunEnd(b []byte) (total int64, end int, ok bool) {
	var head [3]uint64
	i := 0
	for k := range head {
		v, m := binary.Uvarint(b[i:])
		if m <= 0 {
			return 0, 0, false
		}
		head[k], i = v, i+m
	}
	if _, m := binary.Varint(b[i:]); m <= 0 {
		return 0, 0, false
	} else {
		i += m
	}
	blockSize, miniBlocks, count := head[0], head[1], head[2]
	if miniBlocks == 0 || blockSize == 0 || blockSize%128 != 0 || blockSize > 65536 ||
		(blockSize/miniBlocks)%32 != 0 || count > math.MaxInt32 {
		return 0, 0, false
	}
	perMini := int64(blockSize / miniBlocks)
	left := int64(count) - 1
	for left > 0 && i < len(b) {
		if _, m := binary.Varint(b[i:]); m <= 0 {
			return 0, 0, false
		} else {
			i += m
		}
		widths := b[i:min(len(b), i+int(miniBlocks))]
		i += len(widths)
		for _, w := range widths {
			k := min(perMini, left)
			if w != 0 {
				i += int(min(perMini*int64(w)/8, int64(len(b)-i)))
			}
			if left -= k; left == 0 {
				break
			}
		}
	}
	return int64(count), i, true
}
