/* Kafka record-batch compression codecs (RecordBatch Attributes bits 0-2).
 *
 * Framings, as the Kafka clients write them:
 *   gzip   - a gzip stream (RFC 1952); concatenated members are accepted.
 *   snappy - the snappy-java ("xerial") framing: magic 0x82 "SNAPPY" 0x00, i32 version 1,
 *            i32 compatible 1, then chunks of [i32 BE compressed length][raw snappy block].
 *            The Java client reads both this framing and a bare snappy block; librdkafka
 *            reads both too (it writes bare blocks itself). Compression writes the xerial
 *            framing; decompression accepts either.
 *   lz4    - the LZ4 frame format (magic 0x184D2204), blocks of at most 64 KiB, independent
 *            blocks, as the Java client's KafkaLZ4BlockOutputStream and librdkafka write.
 *   zstd   - one or more zstd frames.
 *
 * Decompression is capped: output never grows past max_out bytes, so a small compressed
 * input cannot make the caller allocate without bound. */
#ifndef SF_COMPRESS_H
#define SF_COMPRESS_H

#include <stddef.h>

#include "buf.h"

/* Codec ids, equal to the Kafka attribute values. */
typedef enum {
    SF_COMPRESS_NONE = 0,
    SF_COMPRESS_GZIP = 1,
    SF_COMPRESS_SNAPPY = 2,
    SF_COMPRESS_LZ4 = 3,
    SF_COMPRESS_ZSTD = 4
} sf_compress_codec_t;

/* Parse a Kafka compression.type name ("none", "gzip", "snappy", "lz4", "zstd"; exact,
 * lower case) into *@out. @name is borrowed.
 * @return SF_OK, or SF_ERR_INVALID for any other name (also NULL); *@out is then untouched. */
int sf_compress_codec_parse(const char *name, sf_compress_codec_t *out);

/* The Kafka name of codec @c (a static string), or "unknown" for a value outside 0..4. */
const char *sf_compress_codec_name(sf_compress_codec_t c);

/* Compress @len bytes at @in (borrowed) with codec @c and APPEND the result to @out.
 * @level: -1 for the codec's default; otherwise gzip 0..9, lz4 0..12 (LZ4F levels, >= 3
 * is HC), zstd ZSTD_minCLevel()..ZSTD_maxCLevel(); ignored for none and snappy.
 * On failure @out is left at its length on entry (its err may be set on NOMEM).
 * @return SF_OK; SF_ERR_UNSUPPORTED for an unknown codec; SF_ERR_INVALID for a level out of
 * range; SF_ERR_NOMEM; or @out->err if @out had already failed. */
int sf_compress(sf_compress_codec_t c, int level, const void *in, size_t len, sf_wbuf_t *out);

/* Decompress @len bytes at @in (borrowed) with codec @c and APPEND the result to @out.
 * At most @max_out bytes are appended; @out never grows to hold more than that (the zstd
 * decoder's own window may need up to max(2 * @max_out, 8 MiB) while it works, lz4's at
 * most 4 MiB, gzip's 32 KiB).
 * On failure @out is left at its length on entry.
 * @return SF_OK; SF_ERR_TOOLARGE if the output would exceed @max_out; SF_ERR_CORRUPT for
 * input that does not decode (garbage, truncated, trailing bytes, empty input for a real
 * codec); SF_ERR_UNSUPPORTED for an unknown codec; SF_ERR_NOMEM; or @out->err if @out had
 * already failed. For SF_COMPRESS_NONE the input is copied (SF_ERR_TOOLARGE past
 * @max_out). */
int sf_decompress(sf_compress_codec_t c, const void *in, size_t len, size_t max_out,
                  sf_wbuf_t *out);

#endif
