#include "compress.h"

#include <assert.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#define ZLIB_CONST
#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "err.h"

/* Decompressed bytes are produced into the output buffer in steps of at most this size. */
#define SF_COMPRESS_STEP (64 * 1024)
/* snappy-java's default block size; each xerial chunk holds at most this many input bytes. */
#define SF_COMPRESS_XERIAL_BLOCK (32 * 1024)
/* xerial header: 8 bytes magic, i32 version, i32 compatible version. */
#define SF_COMPRESS_XERIAL_HDR 16
/* Smallest zstd window a decoder accepts whatever max_out is: 8 MiB covers every standard
 * level up to 19 when the content size is unknown (the Java client streams). */
#define SF_COMPRESS_ZSTD_WLOG_MIN 23
#define SF_COMPRESS_ZSTD_WLOG_MAX 27 /* zstd's own default limit */

static const uint8_t xerial_magic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};

static const char *const codec_names[] = {"none", "gzip", "snappy", "lz4", "zstd"};

int sf_compress_codec_parse(const char *name, sf_compress_codec_t *out) {
    size_t i;
    if (!name)
        return SF_ERR_INVALID;
    for (i = 0; i < sizeof(codec_names) / sizeof(codec_names[0]); i++) {
        if (!strcmp(name, codec_names[i])) {
            *out = (sf_compress_codec_t)i;
            return SF_OK;
        }
    }
    return SF_ERR_INVALID;
}

const char *sf_compress_codec_name(sf_compress_codec_t c) {
    if ((unsigned)c < sizeof(codec_names) / sizeof(codec_names[0]))
        return codec_names[c];
    return "unknown";
}

/* ---- output sink with a cap (decompression) ---- */

/* Hands out room for decompressed bytes, never letting @out grow past base + max. Once
 * the cap is reached, room is a one-byte probe outside @out: a decoder that still writes
 * there proves the output is larger than the cap. */
typedef struct sink {
    sf_wbuf_t *out;
    size_t base;     /* out->len on entry */
    size_t max;      /* cap on the bytes appended */
    size_t reserved; /* size of the room last handed out */
    int probing;     /* the last room was the probe byte */
    uint8_t probe;
} sink_t;

static void sink_init(sink_t *s, sf_wbuf_t *out, size_t max) {
    s->out = out;
    s->base = out->len;
    s->max = max;
    s->reserved = 0;
    s->probing = 0;
}

static size_t sink_produced(const sink_t *s) {
    return s->out->len - s->base;
}

/* Room for the next step; NULL on allocation failure. */
static uint8_t *sink_room(sink_t *s, size_t *n) {
    size_t avail = s->max - sink_produced(s);
    uint8_t *p;
    if (avail == 0) {
        s->probing = 1;
        s->reserved = 0;
        *n = 1;
        return &s->probe;
    }
    s->probing = 0;
    s->reserved = avail < SF_COMPRESS_STEP ? avail : SF_COMPRESS_STEP;
    p = sf_wbuf_reserve(s->out, s->reserved);
    if (!p) {
        s->reserved = 0;
        return NULL;
    }
    *n = s->reserved;
    return p;
}

/* The decoder wrote @written bytes into the last room.
 * @return SF_OK, or SF_ERR_TOOLARGE when it wrote into the probe. */
static int sink_commit(sink_t *s, size_t written) {
    if (s->probing)
        return written ? SF_ERR_TOOLARGE : SF_OK;
    assert(written <= s->reserved);
    s->out->len -= s->reserved - written;
    s->reserved = 0;
    return SF_OK;
}

/* ---- gzip ---- */

static int gzip_compress(int level, const uint8_t *in, size_t len, sf_wbuf_t *out) {
    z_stream zs;
    uLong bound;
    uint8_t *dst;
    size_t in_left = len, out_left;
    int rc, ret = SF_OK;

    if (level == -1)
        level = Z_DEFAULT_COMPRESSION;
    else if (level < 0 || level > 9)
        return SF_ERR_INVALID;
    memset(&zs, 0, sizeof(zs));
    /* windowBits 15 + 16: a gzip header and trailer instead of zlib's. */
    rc = deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    if (rc != Z_OK)
        return rc == Z_MEM_ERROR ? SF_ERR_NOMEM : SF_ERR_INVALID;
    bound = deflateBound(&zs, (uLong)len);
    dst = sf_wbuf_reserve(out, bound);
    if (!dst) {
        deflateEnd(&zs);
        return SF_ERR_NOMEM;
    }
    out_left = bound;
    zs.next_in = in;
    zs.next_out = dst;
    /* avail_in/avail_out are 32-bit: feed both in pieces. */
    for (;;) {
        if (zs.avail_in == 0 && in_left) {
            zs.avail_in = in_left > UINT_MAX ? UINT_MAX : (uInt)in_left;
            in_left -= zs.avail_in;
        }
        if (zs.avail_out == 0 && out_left) {
            zs.avail_out = out_left > UINT_MAX ? UINT_MAX : (uInt)out_left;
            out_left -= zs.avail_out;
        }
        rc = deflate(&zs, in_left ? Z_NO_FLUSH : Z_FINISH);
        if (rc == Z_STREAM_END)
            break;
        /* Z_BUF_ERROR with nothing left to give means the bound was wrong. */
        if ((rc != Z_OK && rc != Z_BUF_ERROR) ||
            (rc == Z_BUF_ERROR && zs.avail_out == 0 && !out_left)) {
            ret = rc == Z_MEM_ERROR ? SF_ERR_NOMEM : SF_ERR_INVALID;
            break;
        }
    }
    if (ret == SF_OK)
        out->len -= bound - (size_t)(zs.next_out - dst);
    deflateEnd(&zs);
    return ret;
}

static int gzip_decompress(const uint8_t *in, size_t len, sink_t *s) {
    z_stream zs;
    size_t in_left = len;
    int rc, ret;

    memset(&zs, 0, sizeof(zs));
    rc = inflateInit2(&zs, 15 + 16);
    if (rc != Z_OK)
        return rc == Z_MEM_ERROR ? SF_ERR_NOMEM : SF_ERR_CORRUPT;
    zs.next_in = in;
    for (;;) {
        size_t n;
        uint8_t *room;
        if (zs.avail_in == 0 && in_left) {
            zs.avail_in = in_left > UINT_MAX ? UINT_MAX : (uInt)in_left;
            in_left -= zs.avail_in;
        }
        room = sink_room(s, &n);
        if (!room) {
            ret = SF_ERR_NOMEM;
            break;
        }
        zs.next_out = room;
        zs.avail_out = n > UINT_MAX ? UINT_MAX : (uInt)n;
        rc = inflate(&zs, Z_NO_FLUSH);
        ret = sink_commit(s, n - zs.avail_out);
        if (ret)
            break;
        if (rc == Z_STREAM_END) {
            if (zs.avail_in == 0 && in_left == 0)
                break; /* SF_OK */
            /* Another gzip member follows (GZIPInputStream reads concatenated members). */
            if (inflateReset(&zs) != Z_OK) {
                ret = SF_ERR_CORRUPT;
                break;
            }
            continue;
        }
        if (rc == Z_OK)
            continue;
        /* Z_BUF_ERROR: no progress possible; there is always output room, so the input
         * ended before the stream did. */
        ret = rc == Z_MEM_ERROR ? SF_ERR_NOMEM : SF_ERR_CORRUPT;
        break;
    }
    inflateEnd(&zs);
    return ret;
}

/* ---- snappy ---- */

static int snappy_xerial_compress(const uint8_t *in, size_t len, sf_wbuf_t *out) {
    size_t pos = 0;
    sf_wbuf_raw(out, xerial_magic, sizeof(xerial_magic)); /* magic */
    sf_wbuf_i32(out, 1);                                  /* version */
    sf_wbuf_i32(out, 1);                                  /* compatible version */
    /* Always at least one chunk: librdkafka takes a bare header for an unframed block. */
    do {
        size_t blk = len - pos < SF_COMPRESS_XERIAL_BLOCK ? len - pos : SF_COMPRESS_XERIAL_BLOCK;
        size_t max = snappy_max_compressed_length(blk), clen = max;
        size_t mark = sf_wbuf_mark_i32(out); /* compressed length, patched below */
        uint8_t *dst = sf_wbuf_reserve(out, max);
        static const char empty;
        if (!dst)
            return SF_ERR_NOMEM;
        if (snappy_compress(blk ? (const char *)in + pos : &empty, blk, (char *)dst, &clen) !=
            SNAPPY_OK)
            return SF_ERR_NOMEM;
        out->len -= max - clen;
        sf_wbuf_patch_i32(out, mark, (int32_t)clen);
        pos += blk;
    } while (pos < len);
    return out->err;
}

/* One raw snappy block. Its header states the uncompressed length, which is checked against
 * the cap before any memory is taken. */
static int snappy_block_decompress(const uint8_t *in, size_t len, sink_t *s) {
    size_t ulen, outlen;
    uint8_t *dst;
    char none;
    if (snappy_uncompressed_length((const char *)in, len, &ulen) != SNAPPY_OK)
        return SF_ERR_CORRUPT;
    if (ulen > s->max - sink_produced(s))
        /* Garbage often parses as a huge length: call it corrupt unless the block is real. */
        return snappy_validate_compressed_buffer((const char *)in, len) == SNAPPY_OK
                   ? SF_ERR_TOOLARGE
                   : SF_ERR_CORRUPT;
    outlen = ulen;
    if (ulen == 0)
        return snappy_uncompress((const char *)in, len, &none, &outlen) == SNAPPY_OK &&
                       outlen == 0
                   ? SF_OK
                   : SF_ERR_CORRUPT;
    dst = sf_wbuf_reserve(s->out, ulen);
    if (!dst)
        return SF_ERR_NOMEM;
    if (snappy_uncompress((const char *)in, len, (char *)dst, &outlen) != SNAPPY_OK ||
        outlen != ulen)
        return SF_ERR_CORRUPT;
    return SF_OK;
}

static int snappy_decompress(const uint8_t *in, size_t len, sink_t *s) {
    sf_rbuf_t rb;
    int rc;
    if (len < SF_COMPRESS_XERIAL_HDR || memcmp(in, xerial_magic, sizeof(xerial_magic)))
        return snappy_block_decompress(in, len, s);
    /* xerial framing. The version fields are not checked: snappy-java writes 1/1 and
     * readers have never refused other values. */
    sf_rbuf_init(&rb, in, len);
    sf_rbuf_skip(&rb, SF_COMPRESS_XERIAL_HDR);
    while (sf_rbuf_remaining(&rb)) {
        uint32_t clen = sf_rbuf_u32(&rb); /* compressed length */
        sf_slice_t blk = sf_rbuf_raw(&rb, clen);
        if (rb.err)
            return SF_ERR_CORRUPT;
        rc = snappy_block_decompress(blk.p, clen, s);
        if (rc)
            return rc;
    }
    return SF_OK;
}

/* ---- lz4 ---- */

static int lz4_compress(int level, const uint8_t *in, size_t len, sf_wbuf_t *out) {
    LZ4F_preferences_t prefs;
    size_t bound, n;
    uint8_t *dst;
    static const uint8_t empty;

    if (level == -1)
        level = 0;
    else if (level < 0 || level > 12)
        return SF_ERR_INVALID;
    memset(&prefs, 0, sizeof(prefs));
    /* 64 KiB independent blocks, no content size: what both Kafka clients write, and what
     * the Java client's reader supports (it refuses dependent blocks). */
    prefs.frameInfo.blockSizeID = LZ4F_max64KB;
    prefs.frameInfo.blockMode = LZ4F_blockIndependent;
    prefs.compressionLevel = level;
    bound = LZ4F_compressFrameBound(len, &prefs);
    if (LZ4F_isError(bound))
        return SF_ERR_TOOLARGE;
    dst = sf_wbuf_reserve(out, bound);
    if (!dst)
        return SF_ERR_NOMEM;
    n = LZ4F_compressFrame(dst, bound, len ? in : &empty, len, &prefs);
    /* With a buffer of the bound, only an allocation can fail. */
    if (LZ4F_isError(n))
        return SF_ERR_NOMEM;
    out->len -= bound - n;
    return SF_OK;
}

static int lz4_decompress(const uint8_t *in, size_t len, sink_t *s) {
    LZ4F_dctx *dctx = NULL;
    size_t pos = 0;
    int ret;

    if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)))
        return SF_ERR_NOMEM;
    for (;;) {
        size_t n, dsz, ssz = len - pos, hint;
        uint8_t *room = sink_room(s, &n);
        if (!room) {
            ret = SF_ERR_NOMEM;
            break;
        }
        dsz = n;
        hint = LZ4F_decompress(dctx, room, &dsz, in + pos, &ssz, NULL);
        if (LZ4F_isError(hint)) {
            sink_commit(s, 0);
            ret = SF_ERR_CORRUPT;
            break;
        }
        pos += ssz;
        ret = sink_commit(s, dsz);
        if (ret)
            break;
        if (hint == 0) {
            /* A frame ended; another may follow (the context resets itself). */
            if (pos == len)
                break; /* SF_OK */
            continue;
        }
        /* Room left over and no input left: the frame is cut short. */
        if (pos == len && dsz < n) {
            ret = SF_ERR_CORRUPT;
            break;
        }
    }
    LZ4F_freeDecompressionContext(dctx);
    return ret;
}

/* ---- zstd ---- */

static int zstd_compress(int level, const uint8_t *in, size_t len, sf_wbuf_t *out) {
    size_t bound, n;
    uint8_t *dst;

    if (level == -1)
        level = ZSTD_CLEVEL_DEFAULT;
    else if (level < ZSTD_minCLevel() || level > ZSTD_maxCLevel())
        return SF_ERR_INVALID;
    bound = ZSTD_compressBound(len);
    if (ZSTD_isError(bound))
        return SF_ERR_TOOLARGE;
    dst = sf_wbuf_reserve(out, bound);
    if (!dst)
        return SF_ERR_NOMEM;
    n = ZSTD_compress(dst, bound, in, len, level);
    if (ZSTD_isError(n))
        return ZSTD_getErrorCode(n) == ZSTD_error_memory_allocation ? SF_ERR_NOMEM
                                                                    : SF_ERR_INVALID;
    out->len -= bound - n;
    return SF_OK;
}

static int zstd_decompress(const uint8_t *in, size_t len, sink_t *s) {
    ZSTD_DCtx *dctx;
    ZSTD_inBuffer ib;
    unsigned long long fcs;
    int wlog = SF_COMPRESS_ZSTD_WLOG_MIN, ret;

    /* A frame that states its size: refuse a too-large one before decoding anything. */
    fcs = ZSTD_getFrameContentSize(in, len);
    if (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs != ZSTD_CONTENTSIZE_ERROR && fcs > s->max)
        return SF_ERR_TOOLARGE;
    dctx = ZSTD_createDCtx();
    if (!dctx)
        return SF_ERR_NOMEM;
    /* Bound the decoder's window by the cap (but never below what standard levels use). */
    while (wlog < SF_COMPRESS_ZSTD_WLOG_MAX && ((size_t)1 << wlog) < s->max)
        wlog++;
    if (ZSTD_isError(ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, wlog))) {
        ZSTD_freeDCtx(dctx);
        return SF_ERR_NOMEM;
    }
    ib.src = in;
    ib.size = len;
    ib.pos = 0;
    for (;;) {
        size_t n, rc;
        ZSTD_outBuffer ob;
        ob.dst = sink_room(s, &n);
        if (!ob.dst) {
            ret = SF_ERR_NOMEM;
            break;
        }
        ob.size = n;
        ob.pos = 0;
        rc = ZSTD_decompressStream(dctx, &ob, &ib);
        if (ZSTD_isError(rc)) {
            ZSTD_ErrorCode code = ZSTD_getErrorCode(rc);
            sink_commit(s, 0);
            ret = code == ZSTD_error_memory_allocation          ? SF_ERR_NOMEM
                  : code == ZSTD_error_frameParameter_windowTooLarge ? SF_ERR_TOOLARGE
                                                                     : SF_ERR_CORRUPT;
            break;
        }
        ret = sink_commit(s, ob.pos);
        if (ret)
            break;
        if (rc == 0) {
            /* A frame is complete and flushed; another may follow. */
            if (ib.pos == ib.size)
                break; /* SF_OK */
            continue;
        }
        /* Output room left and all input taken: the decoder wants input that is not there. */
        if (ib.pos == ib.size && ob.pos < ob.size) {
            ret = SF_ERR_CORRUPT;
            break;
        }
    }
    ZSTD_freeDCtx(dctx);
    return ret;
}

/* ---- public ---- */

int sf_compress(sf_compress_codec_t c, int level, const void *in, size_t len, sf_wbuf_t *out) {
    size_t base = out->len;
    int rc;
    if (out->err)
        return out->err;
    switch (c) {
    case SF_COMPRESS_NONE:
        sf_wbuf_raw(out, in, len);
        rc = out->err;
        break;
    case SF_COMPRESS_GZIP:
        rc = gzip_compress(level, in, len, out);
        break;
    case SF_COMPRESS_SNAPPY:
        rc = snappy_xerial_compress(in, len, out);
        break;
    case SF_COMPRESS_LZ4:
        rc = lz4_compress(level, in, len, out);
        break;
    case SF_COMPRESS_ZSTD:
        rc = zstd_compress(level, in, len, out);
        break;
    default:
        return SF_ERR_UNSUPPORTED;
    }
    if (rc == SF_OK && out->err)
        rc = out->err;
    if (rc != SF_OK && out->len > base)
        out->len = base;
    return rc;
}

int sf_decompress(sf_compress_codec_t c, const void *in, size_t len, size_t max_out,
                  sf_wbuf_t *out) {
    sink_t s;
    int rc;
    if (out->err)
        return out->err;
    sink_init(&s, out, max_out);
    switch (c) {
    case SF_COMPRESS_NONE:
        if (len > max_out)
            return SF_ERR_TOOLARGE;
        sf_wbuf_raw(out, in, len);
        rc = out->err;
        break;
    case SF_COMPRESS_GZIP:
        rc = gzip_decompress(in, len, &s);
        break;
    case SF_COMPRESS_SNAPPY:
        rc = snappy_decompress(in, len, &s);
        break;
    case SF_COMPRESS_LZ4:
        rc = lz4_decompress(in, len, &s);
        break;
    case SF_COMPRESS_ZSTD:
        rc = zstd_decompress(in, len, &s);
        break;
    default:
        return SF_ERR_UNSUPPORTED;
    }
    if (rc == SF_OK && out->err)
        rc = out->err;
    if (rc != SF_OK && out->len > s.base)
        out->len = s.base;
    return rc;
}
