/* Kafka legacy message sets (magic 0/1) to and from v2 record batches (see msgset.h). */
#include "msgset.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "compress.h"
#include "err.h"
#include "recbatch.h"

/* Byte offsets inside one entry (Offset, MessageSize, then the message). */
#define OFF_SIZE 8
#define OFF_CRC 12
#define OFF_ATTRIBUTES 17
#define OFF_TIMESTAMP 18

/* The lz4 frame magic (0x184D2204, little-endian on the wire). */
static const uint8_t lz4_magic[4] = {0x04, 0x22, 0x4d, 0x18};

/* ---- xxHash32, for the lz4 frame header checksum ---- */

#define XXH_P1 2654435761u
#define XXH_P2 2246822519u
#define XXH_P3 3266489917u
#define XXH_P4 668265263u
#define XXH_P5 374761393u

static uint32_t rotl32(uint32_t x, int r) {
    return (x << r) | (x >> (32 - r));
}

static uint32_t load_le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t xxh32_round(uint32_t acc, uint32_t in) {
    return rotl32(acc + in * XXH_P2, 13) * XXH_P1;
}

/* XXH32 with seed 0 (liblz4 keeps its copy private). Only frame headers go through it. */
static uint32_t xxh32(const uint8_t *p, size_t len) {
    const uint8_t *end = p + len;
    uint32_t h;
    if (len >= 16) {
        uint32_t v1 = XXH_P1 + XXH_P2, v2 = XXH_P2, v3 = 0, v4 = 0u - XXH_P1;
        for (; end - p >= 16; p += 16) {
            v1 = xxh32_round(v1, load_le32(p));
            v2 = xxh32_round(v2, load_le32(p + 4));
            v3 = xxh32_round(v3, load_le32(p + 8));
            v4 = xxh32_round(v4, load_le32(p + 12));
        }
        h = rotl32(v1, 1) + rotl32(v2, 7) + rotl32(v3, 12) + rotl32(v4, 18);
    } else {
        h = XXH_P5;
    }
    h += (uint32_t)len;
    for (; end - p >= 4; p += 4)
        h = rotl32(h + load_le32(p) * XXH_P3, 17) * XXH_P4;
    for (; p < end; p++)
        h = rotl32(h + *p * XXH_P5, 11) * XXH_P1;
    h ^= h >> 15;
    h *= XXH_P2;
    h ^= h >> 13;
    h *= XXH_P3;
    h ^= h >> 16;
    return h;
}

/* Position of the header checksum byte (HC) of the lz4 frame starting at @p, or 0 when @p does
 * not start with a whole frame header: magic, FLG, BD, [ContentSize u64], [DictID u32], HC. */
static size_t lz4_hc_pos(const uint8_t *p, size_t len) {
    size_t at = 6;
    if (len < 7 || memcmp(p, lz4_magic, 4) != 0)
        return 0;
    if (p[4] & 0x08) /* FLG.ContentSize */
        at += 8;
    if (p[4] & 0x01) /* FLG.DictID */
        at += 4;
    return at < len ? at : 0;
}

/* The HC the lz4 frame format defines (over FLG..DictID) and the one magic 0 producers write
 * (over the frame magic too). */
static uint8_t lz4_hc_good(const uint8_t *p, size_t at) {
    return (uint8_t)(xxh32(p + 4, at - 4) >> 8);
}

static uint8_t lz4_hc_broken(const uint8_t *p, size_t at) {
    return (uint8_t)(xxh32(p, at) >> 8);
}

/* ---- one legacy message ---- */

/* One parsed entry; slices borrow the set. */
typedef struct legacy_msg {
    int64_t offset;
    int8_t magic;
    int8_t attributes;
    int64_t timestamp; /* -1 for magic 0 */
    sf_slice_t key;    /* len -1 = null */
    sf_slice_t value;  /* len -1 = null */
} legacy_msg_t;

/* Parse and check the entry at *@pos of the set @p (@len bytes); advance *@pos past it.
 * The checks run in the order that names the real fault: a size that cannot hold a message is
 * structure, a magic we do not know is reported before the CRC (which magic 2 would define
 * differently), then the CRC, then the fields it covers. */
static int legacy_parse(const uint8_t *p, size_t len, size_t *pos, legacy_msg_t *m) {
    const uint8_t *e = p + *pos;
    size_t avail = len - *pos;
    int32_t size;
    sf_rbuf_t rb;

    if (avail < SF_MSGSET_LOG_OVERHEAD)
        return SF_ERR_MALFORMED;
    size = (int32_t)sf_load_be32(e + OFF_SIZE);
    if (size < SF_MSGSET_MIN_MESSAGE_V0 || (size_t)size > avail - SF_MSGSET_LOG_OVERHEAD)
        return SF_ERR_MALFORMED;
    m->offset = (int64_t)sf_load_be64(e);
    m->magic = (int8_t)e[SF_MSGSET_OFF_MAGIC];
    if (m->magic != 0 && m->magic != 1)
        return SF_ERR_UNSUPPORTED;
    if (m->magic == 1 && size < SF_MSGSET_MIN_MESSAGE_V1)
        return SF_ERR_MALFORMED;
    /* size <= INT32_MAX, so the length fits zlib's uInt. */
    if (crc32(0, e + SF_MSGSET_OFF_MAGIC, (uInt)size - 4) != sf_load_be32(e + OFF_CRC))
        return SF_ERR_CORRUPT;
    m->attributes = (int8_t)e[OFF_ATTRIBUTES];
    sf_rbuf_init(&rb, e + OFF_TIMESTAMP, (size_t)size - (OFF_TIMESTAMP - OFF_CRC));
    m->timestamp = m->magic == 1 ? sf_rbuf_i64(&rb) : -1;
    m->key = sf_rbuf_bytes(&rb, 1);
    m->value = sf_rbuf_bytes(&rb, 1);
    /* The key and value must fill the message exactly: bytes after them would be covered by
     * the CRC yet lost in the conversion. */
    if (rb.err || sf_rbuf_remaining(&rb) != 0)
        return SF_ERR_MALFORMED;
    *pos += SF_MSGSET_LOG_OVERHEAD + (size_t)size;
    return SF_OK;
}

/* Write the message header at the end of @wb, MessageSize and Crc as placeholders; returns
 * the entry's start for legacy_finish. */
static size_t legacy_begin(sf_wbuf_t *wb, int64_t offset, int8_t magic, int8_t attributes,
                           int64_t timestamp) {
    size_t start = wb->len;
    sf_wbuf_i64(wb, offset);     /* Offset */
    sf_wbuf_i32(wb, 0);          /* MessageSize, patched */
    sf_wbuf_u32(wb, 0);          /* Crc, patched */
    sf_wbuf_i8(wb, magic);       /* Magic */
    sf_wbuf_i8(wb, attributes);  /* Attributes */
    if (magic == 1)
        sf_wbuf_i64(wb, timestamp); /* Timestamp */
    return start;
}

/* Patch MessageSize and Crc of the entry from @start to the end of @wb. */
static int legacy_finish(sf_wbuf_t *wb, size_t start) {
    size_t size;
    if (wb->err)
        return wb->err;
    size = wb->len - start - SF_MSGSET_LOG_OVERHEAD;
    if (size > INT32_MAX)
        return SF_ERR_TOOLARGE;
    sf_store_be32(wb->p + start + OFF_SIZE, (uint32_t)size);
    sf_store_be32(wb->p + start + OFF_CRC,
                  (uint32_t)crc32(0, wb->p + start + SF_MSGSET_OFF_MAGIC, (uInt)size - 4));
    return SF_OK;
}

/* One uncompressed message. */
static int legacy_write(sf_wbuf_t *wb, int64_t offset, int8_t magic, int8_t attributes,
                        int64_t timestamp, sf_slice_t key, sf_slice_t value) {
    size_t start = legacy_begin(wb, offset, magic, attributes, timestamp);
    sf_wbuf_bytes(wb, key);   /* Key */
    sf_wbuf_bytes(wb, value); /* Value */
    return legacy_finish(wb, start);
}

int sf_msgset_magic(const uint8_t *p, size_t len) {
    return len > SF_MSGSET_OFF_MAGIC ? p[SF_MSGSET_OFF_MAGIC] : -1;
}

/* ---- up-conversion ---- */

/* State of one sf_msgset_to_batch call. Records borrow the input or a decompressed inner set;
 * inner sets each live in their own buffer so growing one list never moves bytes a record
 * points to. */
typedef struct upconv {
    sf_recbatch_record_t *recs;
    size_t nrecs, caprecs;
    sf_wbuf_t *inner; /* decompressed inner sets, owned */
    size_t ninner, capinner;
    size_t decompressed; /* total bytes the wrappers decompressed to */
    size_t max_decompressed;
    int magic;    /* -1 until the first message */
    int all_lat;  /* every record so far had LogAppendTime */
    int codec;    /* the last wrapper's codec */
    int64_t max_ts;
} upconv_t;

static void upconv_free(upconv_t *uc) {
    size_t i;
    for (i = 0; i < uc->ninner; i++)
        sf_wbuf_free(&uc->inner[i]);
    free(uc->inner);
    free(uc->recs);
}

/* @p (an array of *@cap elements of @size bytes, full) grown to twice the room; NULL when out
 * of memory (@p is then still valid). */
static void *grow(void *p, size_t *cap, size_t size) {
    size_t ncap = *cap ? *cap * 2 : 16;
    void *np;
    if (ncap > SIZE_MAX / size || !(np = realloc(p, ncap * size)))
        return NULL;
    *cap = ncap;
    return np;
}

static int upconv_add(upconv_t *uc, const legacy_msg_t *m, int64_t timestamp, int lat) {
    sf_recbatch_record_t *rec;
    /* sf_recbatch_build counts records in an int. */
    if (uc->nrecs >= INT32_MAX)
        return SF_ERR_TOOLARGE;
    if (uc->nrecs == uc->caprecs) {
        sf_recbatch_record_t *np = grow(uc->recs, &uc->caprecs, sizeof(*uc->recs));
        if (!np)
            return SF_ERR_NOMEM;
        uc->recs = np;
    }
    rec = &uc->recs[uc->nrecs++];
    memset(rec, 0, sizeof(*rec));
    rec->timestamp = timestamp;
    rec->key = m->key;
    rec->value = m->value;
    if (uc->nrecs == 1 || timestamp > uc->max_ts)
        uc->max_ts = timestamp;
    uc->all_lat &= lat;
    return SF_OK;
}

static int upconv_set(upconv_t *uc, const uint8_t *p, size_t len, const legacy_msg_t *wrapper);

/* Decompress the wrapper @m (codec @codec) and add its inner messages. */
static int upconv_wrapper(upconv_t *uc, const legacy_msg_t *m, int codec) {
    sf_wbuf_t *set, fixed;
    const uint8_t *v;
    size_t at;
    int rc;

    if (m->value.len < 0)
        return SF_ERR_MALFORMED;
    if (uc->ninner == uc->capinner) {
        sf_wbuf_t *np = grow(uc->inner, &uc->capinner, sizeof(*uc->inner));
        if (!np)
            return SF_ERR_NOMEM;
        uc->inner = np;
    }
    set = &uc->inner[uc->ninner++];
    sf_wbuf_init(set);
    v = m->value.p;
    sf_wbuf_init(&fixed);
    /* Magic 0 lz4 producers compute the frame header checksum over the frame magic too; lz4
     * itself only accepts the standard one, so a copy gets it fixed. Any other HC is left for
     * lz4 to refuse. */
    if (codec == SF_COMPRESS_LZ4 && m->magic == 0 &&
        (at = lz4_hc_pos(v, (size_t)m->value.len)) != 0 && v[at] == lz4_hc_broken(v, at) &&
        v[at] != lz4_hc_good(v, at)) {
        sf_wbuf_raw(&fixed, v, (size_t)m->value.len);
        if (fixed.err) {
            rc = fixed.err;
            sf_wbuf_free(&fixed);
            return rc;
        }
        fixed.p[at] = lz4_hc_good(v, at);
        v = fixed.p;
    }
    rc = sf_decompress((sf_compress_codec_t)codec, v, (size_t)m->value.len,
                       uc->max_decompressed - uc->decompressed, set);
    sf_wbuf_free(&fixed);
    if (rc != SF_OK)
        return rc;
    uc->decompressed += set->len;
    uc->codec = codec;
    return upconv_set(uc, set->p, set->len, m);
}

/* Add every message of the set @p (@len bytes): the request's set, or a wrapper's inner set
 * (@wrapper then points to the wrapper). */
static int upconv_set(upconv_t *uc, const uint8_t *p, size_t len, const legacy_msg_t *wrapper) {
    size_t pos = 0;
    int rc;

    /* An empty set, or a wrapper holding nothing: no record to take. */
    if (len == 0)
        return SF_ERR_MALFORMED;
    while (pos < len) {
        legacy_msg_t m;
        int codec, lat;
        if ((rc = legacy_parse(p, len, &pos, &m)) != SF_OK)
            return rc;
        if (uc->magic < 0)
            uc->magic = m.magic;
        else if (m.magic != uc->magic)
            return SF_ERR_MALFORMED;
        codec = m.attributes & SF_MSGSET_ATTR_COMPRESSION_MASK;
        if (codec > SF_COMPRESS_LZ4)
            return SF_ERR_UNSUPPORTED;
        if (codec != SF_COMPRESS_NONE) {
            if (wrapper)
                return SF_ERR_MALFORMED; /* nested compression */
            rc = upconv_wrapper(uc, &m, codec);
        } else if (m.magic == 0) {
            rc = upconv_add(uc, &m, -1, 0);
        } else if (wrapper) {
            /* The wrapper's timestamp type rules its inner messages. */
            lat = (wrapper->attributes & SF_MSGSET_ATTR_LOG_APPEND_TIME) != 0;
            rc = upconv_add(uc, &m, lat ? wrapper->timestamp : m.timestamp, lat);
        } else {
            lat = (m.attributes & SF_MSGSET_ATTR_LOG_APPEND_TIME) != 0;
            rc = upconv_add(uc, &m, m.timestamp, lat);
        }
        if (rc != SF_OK)
            return rc;
    }
    return SF_OK;
}

/* Append the batch of @uc's records, compressed with @codec. */
static int upconv_build(upconv_t *uc, int codec, sf_wbuf_t *out) {
    sf_recbatch_hdr_t tmpl;
    sf_wbuf_t plain, packed;
    int n = (int)uc->nrecs, rc;

    memset(&tmpl, 0, sizeof(tmpl));
    tmpl.BaseOffset = 0;
    tmpl.PartitionLeaderEpoch = -1;
    tmpl.Magic = 2;
    tmpl.Attributes = uc->all_lat ? SF_RECBATCH_ATTR_LOG_APPEND_TIME : 0;
    tmpl.BaseTimestamp = uc->recs[0].timestamp;
    tmpl.ProducerId = -1;
    tmpl.ProducerEpoch = -1;
    tmpl.BaseSequence = -1;
    if (codec == SF_COMPRESS_NONE)
        return sf_recbatch_build_hdr(out, &tmpl, uc->recs, n);

    sf_wbuf_init(&plain);
    sf_wbuf_init(&packed);
    rc = sf_recbatch_encode_records(&plain, tmpl.BaseTimestamp, uc->recs, n);
    if (rc == SF_OK)
        rc = sf_compress((sf_compress_codec_t)codec, -1, plain.p, plain.len, &packed);
    if (rc == SF_OK) {
        tmpl.Attributes |= (int16_t)codec;
        tmpl.LastOffsetDelta = n - 1;
        tmpl.MaxTimestamp = uc->max_ts;
        tmpl.RecordCount = n;
        rc = sf_recbatch_build_raw(out, &tmpl, packed.p, packed.len);
    }
    sf_wbuf_free(&plain);
    sf_wbuf_free(&packed);
    return rc;
}

int sf_msgset_to_batch(const uint8_t *p, size_t len, int codec, size_t max_decompressed,
                       sf_wbuf_t *out, sf_msgset_info_t *info) {
    size_t base = out->len;
    upconv_t uc;
    int rc;

    if (codec < -1 || codec > SF_COMPRESS_ZSTD)
        return SF_ERR_INVALID;
    if (out->err)
        return out->err;
    memset(&uc, 0, sizeof(uc));
    uc.max_decompressed = max_decompressed;
    uc.magic = -1;
    uc.all_lat = 1;
    rc = upconv_set(&uc, p, len, NULL);
    if (rc == SF_OK) {
        assert(uc.nrecs > 0 && (uc.magic == 0 || uc.magic == 1));
        rc = upconv_build(&uc, codec < 0 ? uc.codec : codec, out);
    }
    if (rc == SF_OK && out->err)
        rc = out->err;
    if (rc == SF_OK && info) {
        info->count = (int32_t)uc.nrecs;
        info->magic = (int8_t)uc.magic;
        info->codec = (int8_t)uc.codec;
        info->log_append_time = uc.all_lat;
        info->max_timestamp = uc.max_ts;
    }
    upconv_free(&uc);
    if (rc != SF_OK && out->len > base)
        out->len = base;
    return rc;
}

/* ---- down-conversion ---- */

/* Scratch buffers and budget of one sf_msgset_from_batches call. */
typedef struct downconv {
    int8_t magic;
    sf_wbuf_t plain; /* a compressed batch's records, decompressed */
    sf_wbuf_t inner; /* the inner message set of a wrapper being built */
    size_t decompressed, max_decompressed;
} downconv_t;

/* Messages for the uncompressed batch @p (@size bytes, validated). */
static int downconv_plain(downconv_t *dc, const uint8_t *p, size_t size, int8_t attributes,
                          sf_wbuf_t *out) {
    sf_recbatch_iter_t it;
    sf_recbatch_record_t rec;
    int rc = sf_recbatch_iter_init(&it, p, size);
    while (rc == SF_OK && (rc = sf_recbatch_iter_next(&it, &rec)) == SF_OK)
        rc = legacy_write(out, rec.offset, dc->magic, attributes, rec.timestamp, rec.key,
                          rec.value);
    return rc == SF_ERR_NOTFOUND ? SF_OK : rc;
}

/* One wrapper for the batch @p (@size bytes, validated) compressed with @codec. */
static int downconv_wrapper(downconv_t *dc, const uint8_t *p, size_t size,
                            const sf_recbatch_hdr_t *hdr, int codec, int8_t attributes,
                            sf_wbuf_t *out) {
    sf_recbatch_iter_t it;
    sf_recbatch_record_t rec;
    int64_t last = 0, max_ts = -1;
    size_t start, vlen_at, vlen;
    int32_t i = 0;
    int rc;

    sf_wbuf_reset(&dc->plain);
    sf_wbuf_reset(&dc->inner);
    rc = sf_decompress((sf_compress_codec_t)codec, p + SF_RECBATCH_HEADER_SIZE,
                       size - SF_RECBATCH_HEADER_SIZE, dc->max_decompressed - dc->decompressed,
                       &dc->plain);
    if (rc != SF_OK)
        return rc;
    dc->decompressed += dc->plain.len;
    sf_recbatch_iter_init_records(&it, hdr, dc->plain.p, dc->plain.len);
    while ((rc = sf_recbatch_iter_next(&it, &rec)) == SF_OK) {
        /* Magic 1 inner offsets are relative to the wrapper's first; the OffsetDeltas are
         * 0..n-1, so the index is the relative offset. */
        rc = legacy_write(&dc->inner, dc->magic == 1 ? i : rec.offset, dc->magic, attributes,
                          rec.timestamp, rec.key, rec.value);
        if (rc != SF_OK)
            return rc;
        last = rec.offset;
        if (i == 0 || rec.timestamp > max_ts)
            max_ts = rec.timestamp;
        i++;
    }
    if (rc != SF_ERR_NOTFOUND)
        return rc;
    assert(i == hdr->RecordCount && i > 0);

    /* A LogAppendTime batch reads MaxTimestamp on every record, so max_ts is it there. */
    start = legacy_begin(out, last, dc->magic, (int8_t)(attributes | codec), max_ts);
    sf_wbuf_i32(out, -1);              /* Key: null */
    vlen_at = sf_wbuf_mark_i32(out);   /* Value length, patched */
    if (out->err)
        return out->err;
    rc = sf_compress((sf_compress_codec_t)codec, -1, dc->inner.p, dc->inner.len, out);
    if (rc != SF_OK)
        return rc;
    vlen = out->len - vlen_at - 4;
    if (vlen > INT32_MAX)
        return SF_ERR_TOOLARGE;
    if (codec == SF_COMPRESS_LZ4 && dc->magic == 0) {
        /* Readers of magic 0 (Kafka clients before 0.10) expect the historic lz4 header
         * checksum; newer ones ignore it in magic 0 (Java) or recompute it (librdkafka). */
        uint8_t *v = out->p + vlen_at + 4;
        size_t at = lz4_hc_pos(v, vlen);
        assert(at != 0);
        if (at)
            v[at] = lz4_hc_broken(v, at);
    }
    sf_wbuf_patch_i32(out, vlen_at, (int32_t)vlen);
    return legacy_finish(out, start);
}

/* Convert the validated batch @p (@size bytes). */
static int downconv_batch(downconv_t *dc, const uint8_t *p, size_t size,
                          const sf_recbatch_hdr_t *hdr, sf_wbuf_t *out) {
    int codec = hdr->Attributes & SF_RECBATCH_ATTR_COMPRESSION_MASK;
    int8_t attributes = 0;
    if (dc->magic == 1 && (hdr->Attributes & SF_RECBATCH_ATTR_LOG_APPEND_TIME))
        attributes = SF_MSGSET_ATTR_LOG_APPEND_TIME;
    if (codec == SF_COMPRESS_NONE)
        return downconv_plain(dc, p, size, attributes, out);
    if (codec == SF_COMPRESS_ZSTD)
        return SF_ERR_UNSUPPORTED;
    if (codec > SF_COMPRESS_ZSTD)
        return SF_ERR_MALFORMED; /* no such codec: the batch does not decode */
    return downconv_wrapper(dc, p, size, hdr, codec, attributes, out);
}

int sf_msgset_from_batches(const uint8_t *p, size_t len, int8_t magic, size_t max_out,
                           size_t max_decompressed, sf_wbuf_t *out, size_t *consumed) {
    size_t base = out->len, pos = 0;
    downconv_t dc;
    int rc = SF_OK;

    if (consumed)
        *consumed = 0;
    if (magic != 0 && magic != 1)
        return SF_ERR_INVALID;
    if (out->err)
        return out->err;
    memset(&dc, 0, sizeof(dc));
    dc.magic = magic;
    dc.max_decompressed = max_decompressed;
    sf_wbuf_init(&dc.plain);
    sf_wbuf_init(&dc.inner);
    while (pos < len) {
        sf_recbatch_hdr_t hdr;
        size_t size, before = out->len, dec_before = dc.decompressed;
        int first = out->len == base;
        rc = sf_recbatch_header_parse(p + pos, len - pos, &hdr, &size);
        if (rc == SF_AGAIN) {
            rc = SF_OK; /* an incomplete final batch: left for a later read */
            break;
        }
        if (rc == SF_OK)
            rc = sf_recbatch_validate(p + pos, size, &hdr);
        /* The log holds v2 batches only: another magic there is damage, not a feature. */
        if (rc == SF_ERR_UNSUPPORTED)
            rc = SF_ERR_MALFORMED;
        if (rc != SF_OK)
            break;
        if (!(hdr.Attributes & SF_RECBATCH_ATTR_CONTROL)) {
            rc = downconv_batch(&dc, p + pos, size, &hdr, out);
            if (rc == SF_OK && out->err)
                rc = out->err;
            /* Past a limit with something already converted: stop before this batch. */
            if (!first && (rc == SF_ERR_TOOLARGE || (rc == SF_OK && out->len - base > max_out))) {
                out->len = before;
                dc.decompressed = dec_before;
                rc = SF_OK;
                break;
            }
            if (rc != SF_OK)
                break;
        }
        pos += size;
    }
    sf_wbuf_free(&dc.plain);
    sf_wbuf_free(&dc.inner);
    if (rc != SF_OK) {
        if (out->len > base)
            out->len = base;
        return rc;
    }
    if (consumed)
        *consumed = pos;
    return SF_OK;
}
