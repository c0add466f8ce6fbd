package formats

import (
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
)

// zstdPageWindow is the zstd window (largest back-reference) of
// zstdPages: 1 MiB, above the writer's pages (parquet-go's 256 KiB page
// buffers, dictionary pages up to DictionaryMaxBytes = 1 MiB), so a page
// compresses to the same bytes as with zstd's default 8 MiB window.
const zstdPageWindow = 1 << 20

// zstdPages is the ZSTD page codec of ParquetWriter: the same format,
// level (zstd.SpeedDefault, about zstd level 3) and frame options as
// parquet-go's parquet.Zstd, but holding one encoder for the life of the
// process with a 1 MiB window instead of creating encoders with the
// default 8 MiB window in a sync.Pool. Each such encoder allocates a 16 MiB
// match history (twice the window) on first use, and the pool drops them
// at every garbage collection: on the 250 MB benchmark run `analyze`
// allocated 64 MB of histories, 32 MB of them live at once. Pages above 1
// MiB (rare: a plain page of very long texts) still compress, with matches
// limited to the last 1 MiB.
//
// Readers are unaffected: they decode by the codec id in the file (ZSTD),
// with parquet-go's own decoder.
var zstdPages = &zstdCodec{}

// zstdCodec implements parquet-go's compress.Codec. It is safe for
// concurrent use (zstd.Encoder.EncodeAll and zstd.Decoder.DecodeAll are;
// with concurrency 1 concurrent callers wait for each other).
type zstdCodec struct {
	encOnce, decOnce sync.Once
	enc              *zstd.Encoder
	dec              *zstd.Decoder
	encErr, decErr   error
}

func (c *zstdCodec) initEncoder() {
	c.enc, c.encErr = zstd.NewWriter(nil,
		zstd.WithWindowSize(zstdPageWindow),
		zstd.WithEncoderLevel(zstd.SpeedDefault),
		zstd.WithEncoderConcurrency(1),
		zstd.WithZeroFrames(true),
		zstd.WithEncoderCRC(false),
	)
}

func (c *zstdCodec) initDecoder() {
	c.dec, c.decErr = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
}

func (c *zstdCodec) String() string { return "ZSTD" }

func (c *zstdCodec) CompressionCodec() format.CompressionCodec { return format.Zstd }

// Encode appends the zstd frame of src to dst[:0].
func (c *zstdCodec) Encode(dst, src []byte) ([]byte, error) {
	c.encOnce.Do(c.initEncoder)
	if c.encErr != nil {
		return dst[:0], c.encErr
	}
	return c.enc.EncodeAll(src, dst[:0]), nil
}

// Decode appends the decompressed src to dst[:0].
func (c *zstdCodec) Decode(dst, src []byte) ([]byte, error) {
	c.decOnce.Do(c.initDecoder)
	if c.decErr != nil {
		return dst[:0], c.decErr
	}
	return c.dec.DecodeAll(src, dst[:0])
}
