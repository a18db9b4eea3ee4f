/* Unit tests for common/msgset: legacy message sets (magic 0/1) up-converted to v2 batches and
 * v2 batches down-converted to message sets. Legacy fixtures are written here field by field
 * from the format (zlib's crc32), pinned by golden bytes computed apart from this code; v2
 * batches come from the recbatch builders and are read back with the recbatch iterator. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "buf.h"
#include "compress.h"
#include "err.h"
#include "msgset.h"
#include "recbatch.h"

#define MIB (1024 * 1024)
#define NOCAP ((size_t)64 * MIB)
#define NELEM(a) (sizeof(a) / sizeof(a[0]))

/* Golden message sets, built with Python's struct and zlib.crc32 from the format in msgset.h:
 * magic 0: (0, "k1", "v1"), (1, null, "hello"), (2, "k3", null). */
static const char golden_m0[] =
    "00000000000000000000001257e7496e0000000000026b3100000002763100000000000000010000001387a7"
    "7ab20000ffffffff0000000568656c6c6f000000000000000200000010b643ca6a0000000000026b33ffffff"
    "ff";
/* magic 1, CreateTime: (0, 1000, "k1", "v1"), (1, 1005, null, "hello"), (2, 999, "", null). */
static const char golden_m1[] =
    "00000000000000000000001ab1a6ec76010000000000000003e8000000026b31000000027631000000000000"
    "00010000001b108ecd2c010000000000000003edffffffff0000000568656c6c6f0000000000000002000000"
    "16e3920e6e010000000000000003e700000000ffffffff";

/* The lz4 frame header sf_compress writes: magic, FLG (independent blocks), BD (64 KiB), and
 * its header checksum; 0x1a is the checksum magic 0 producers write (XXH32 over the frame
 * magic too), computed with a separate Python XXH32 that gives 0x82 here as lz4 does. */
static const uint8_t lz4_hdr[6] = {0x04, 0x22, 0x4d, 0x18, 0x60, 0x40};
#define LZ4_HC_GOOD 0x82
#define LZ4_HC_BROKEN 0x1a

/* One record of a fixture. */
typedef struct fx {
    const char *key, *value; /* NULL = null */
    int64_t ts;
} fx_t;

/* The records of golden_m0 / golden_m1. */
static const fx_t fx_m0[] = {{"k1", "v1", -1}, {NULL, "hello", -1}, {"k3", NULL, -1}};
static const fx_t fx_m1[] = {{"k1", "v1", 1000}, {NULL, "hello", 1005}, {"", NULL, 999}};

/* ---- helpers ---- */

static uint8_t *unhex(const char *hex, size_t *len) {
    size_t n = strlen(hex) / 2, i;
    uint8_t *p = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(p);
    for (i = 0; i < n; i++) {
        unsigned v;
        ck_assert_int_eq(sscanf(hex + 2 * i, "%2x", &v), 1);
        p[i] = (uint8_t)v;
    }
    *len = n;
    return p;
}

static sf_slice_t SL(const char *s) {
    return sf_slice_cstr(s);
}

static void ck_slice(sf_slice_t s, const char *exp) {
    if (!exp) {
        ck_assert_int_eq(s.len, -1);
        return;
    }
    ck_assert_int_eq(s.len, (int32_t)strlen(exp));
    ck_assert(s.len == 0 || memcmp(s.p, exp, (size_t)s.len) == 0);
}

/* Recompute the Crc of the entry at @e from its MessageSize (after an edit). */
static void fix_crc(uint8_t *e) {
    uint32_t size = sf_load_be32(e + 8);
    sf_store_be32(e + 12, (uint32_t)crc32(0, e + 16, size - 4));
}

/* Set MessageSize of the entry at @e (@n bytes in all) and recompute its Crc. */
static void reseal(uint8_t *e, size_t n) {
    sf_store_be32(e + 8, (uint32_t)(n - 12));
    fix_crc(e);
}

/* Append one legacy entry, field by field. */
static void leg(sf_wbuf_t *wb, int64_t off, int magic, int attr, int64_t ts, sf_slice_t key,
                sf_slice_t value) {
    size_t start = wb->len;
    sf_wbuf_i64(wb, off);          /* Offset */
    sf_wbuf_i32(wb, 0);            /* MessageSize */
    sf_wbuf_u32(wb, 0);            /* Crc */
    sf_wbuf_i8(wb, (int8_t)magic); /* Magic */
    sf_wbuf_i8(wb, (int8_t)attr);  /* Attributes */
    if (magic == 1)
        sf_wbuf_i64(wb, ts); /* Timestamp */
    sf_wbuf_bytes(wb, key);
    sf_wbuf_bytes(wb, value);
    ck_assert_int_eq(wb->err, 0);
    reseal(wb->p + start, wb->len - start);
}

/* Append @n fixture messages at offsets @first.., attributes @attr. */
static void fx_set(sf_wbuf_t *wb, int magic, int64_t first, const fx_t *fx, int n, int attr) {
    int i;
    for (i = 0; i < n; i++)
        leg(wb, first + i, magic, attr, fx[i].ts, SL(fx[i].key), SL(fx[i].value));
}

/* Append a wrapper at @off holding the set @inner compressed with codec attr & 7 (magic 0
 * lz4 with the checksum old producers write). */
static void leg_wrapper(sf_wbuf_t *wb, int64_t off, int magic, int attr, int64_t ts,
                        const sf_wbuf_t *inner) {
    sf_wbuf_t z;
    sf_slice_t v;
    sf_wbuf_init(&z);
    ck_assert_int_eq(sf_compress((sf_compress_codec_t)(attr & 7), -1, inner->p, inner->len, &z),
                     SF_OK);
    if ((attr & 7) == SF_COMPRESS_LZ4 && magic == 0) {
        ck_assert_mem_eq(z.p, lz4_hdr, 6);
        ck_assert_uint_eq(z.p[6], LZ4_HC_GOOD);
        z.p[6] = LZ4_HC_BROKEN;
    }
    v.p = z.p;
    v.len = (int32_t)z.len;
    leg(wb, off, magic, attr, ts, SL(NULL), v);
    sf_wbuf_free(&z);
}

/* The records of one v2 batch, read back with the iterator (slices into the batch or plain). */
typedef struct rd {
    sf_recbatch_hdr_t hdr;
    sf_recbatch_record_t recs[256];
    int n;
    sf_wbuf_t plain;
} rd_t;

static void rd_batch(rd_t *r, const uint8_t *p, size_t len) {
    sf_recbatch_iter_t it;
    int codec;
    memset(r, 0, sizeof(*r));
    sf_wbuf_init(&r->plain);
    ck_assert_int_eq(sf_recbatch_validate(p, len, &r->hdr), SF_OK);
    codec = r->hdr.Attributes & SF_RECBATCH_ATTR_COMPRESSION_MASK;
    if (codec) {
        ck_assert_int_eq(sf_decompress((sf_compress_codec_t)codec, p + SF_RECBATCH_HEADER_SIZE,
                                       len - SF_RECBATCH_HEADER_SIZE, NOCAP, &r->plain),
                         SF_OK);
        sf_recbatch_iter_init_records(&it, &r->hdr, r->plain.p, r->plain.len);
    } else {
        ck_assert_int_eq(sf_recbatch_iter_init(&it, p, len), SF_OK);
    }
    while (r->n < (int)NELEM(r->recs) && sf_recbatch_iter_next(&it, &r->recs[r->n]) == SF_OK)
        r->n++;
    ck_assert_int_eq(sf_recbatch_iter_next(&it, &r->recs[0 < r->n ? r->n - 1 : 0]),
                     SF_ERR_NOTFOUND);
    ck_assert_int_eq(r->n, r->hdr.RecordCount);
}

/* The fixed header an up-conversion writes. */
static void ck_up_header(const sf_recbatch_hdr_t *h, int n, int attrs, int64_t base_ts,
                         int64_t max_ts) {
    ck_assert_int_eq(h->BaseOffset, 0);
    ck_assert_int_eq(h->PartitionLeaderEpoch, -1);
    ck_assert_int_eq(h->Magic, 2);
    ck_assert_int_eq(h->Attributes, attrs);
    ck_assert_int_eq(h->LastOffsetDelta, n - 1);
    ck_assert_int_eq(h->BaseTimestamp, base_ts);
    ck_assert_int_eq(h->MaxTimestamp, max_ts);
    ck_assert_int_eq(h->ProducerId, -1);
    ck_assert_int_eq(h->ProducerEpoch, -1);
    ck_assert_int_eq(h->BaseSequence, -1);
    ck_assert_int_eq(h->RecordCount, n);
}

/* Records @from.. of @r against @n fixtures (timestamps as given, or @ts when not -2). */
static void ck_records(const rd_t *r, int from, const fx_t *fx, int n, int64_t ts) {
    int i;
    for (i = 0; i < n; i++) {
        const sf_recbatch_record_t *rec = &r->recs[from + i];
        ck_assert_int_eq(rec->offset, from + i);
        ck_assert_int_eq(rec->timestamp, ts == -2 ? fx[i].ts : ts);
        ck_slice(rec->key, fx[i].key);
        ck_slice(rec->value, fx[i].value);
        ck_assert_int_eq(rec->header_count, 0);
    }
}

/* Fixture records as v2 builder input. */
static void fx_recs(sf_recbatch_record_t *recs, const fx_t *fx, int n) {
    int i;
    memset(recs, 0, (size_t)n * sizeof(*recs));
    for (i = 0; i < n; i++) {
        recs[i].timestamp = fx[i].ts;
        recs[i].key = SL(fx[i].key);
        recs[i].value = SL(fx[i].value);
    }
}

/* Append a v2 batch of @recs at @base with @attrs (bits other than the codec) and @codec, as
 * a producer writes it. Returns the size of its records section, uncompressed. */
static size_t build_batch(sf_wbuf_t *wb, int64_t base, int codec, int16_t attrs,
                          const sf_recbatch_record_t *recs, int n) {
    sf_recbatch_hdr_t t;
    sf_wbuf_t plain, z;
    size_t plen;
    int i;
    memset(&t, 0, sizeof(t));
    t.BaseOffset = base;
    t.PartitionLeaderEpoch = -1;
    t.Magic = 2;
    t.Attributes = attrs;
    t.BaseTimestamp = recs[0].timestamp;
    t.ProducerId = -1;
    t.ProducerEpoch = -1;
    t.BaseSequence = -1;
    sf_wbuf_init(&plain);
    sf_wbuf_init(&z);
    ck_assert_int_eq(sf_recbatch_encode_records(&plain, t.BaseTimestamp, recs, n), SF_OK);
    plen = plain.len;
    if (codec == 0) {
        ck_assert_int_eq(sf_recbatch_build_hdr(wb, &t, recs, n), SF_OK);
    } else {
        ck_assert_int_eq(sf_compress((sf_compress_codec_t)codec, -1, plain.p, plain.len, &z),
                         SF_OK);
        t.Attributes |= (int16_t)codec;
        t.LastOffsetDelta = n - 1;
        t.RecordCount = n;
        t.MaxTimestamp = recs[0].timestamp;
        for (i = 1; i < n; i++)
            if (recs[i].timestamp > t.MaxTimestamp)
                t.MaxTimestamp = recs[i].timestamp;
        ck_assert_int_eq(sf_recbatch_build_raw(wb, &t, z.p, z.len), SF_OK);
    }
    sf_wbuf_free(&plain);
    sf_wbuf_free(&z);
    return plen;
}

/* A transaction marker: control batch with one record. */
static void build_control(sf_wbuf_t *wb, int64_t base) {
    static const uint8_t key[4] = {0, 0, 0, 0}; /* version 0, type 0 (abort) */
    sf_recbatch_record_t rec;
    sf_slice_t k = {key, 4};
    memset(&rec, 0, sizeof(rec));
    rec.timestamp = 7;
    rec.key = k;
    rec.value = SL("marker");
    build_batch(wb, base, 0, SF_RECBATCH_ATTR_CONTROL | SF_RECBATCH_ATTR_TRANSACTIONAL, &rec, 1);
}

/* One parsed legacy entry (test side); slices into the set. */
typedef struct tm {
    int64_t off;
    int magic, attr;
    int64_t ts;
    sf_slice_t key, value;
} tm_t;

/* Parse a whole message set, checking every size and CRC; returns the entry count. */
static int tparse(const uint8_t *p, size_t len, tm_t *m, int max) {
    size_t pos = 0;
    int n = 0;
    while (pos < len) {
        const uint8_t *e = p + pos, *q, *end;
        int32_t size, kl, vl;
        ck_assert_int_lt(n, max);
        ck_assert_uint_ge(len - pos, 12 + 14);
        size = (int32_t)sf_load_be32(e + 8);
        ck_assert_int_ge(size, 14);
        ck_assert_uint_le((size_t)size, len - pos - 12);
        ck_assert_uint_eq(crc32(0, e + 16, (uInt)size - 4), sf_load_be32(e + 12));
        end = e + 12 + size;
        m[n].off = (int64_t)sf_load_be64(e);
        m[n].magic = e[16];
        m[n].attr = e[17];
        q = e + 18;
        m[n].ts = -1;
        if (m[n].magic == 1) {
            m[n].ts = (int64_t)sf_load_be64(q);
            q += 8;
        }
        kl = (int32_t)sf_load_be32(q);
        q += 4;
        m[n].key.p = q;
        m[n].key.len = kl;
        q += kl > 0 ? kl : 0;
        vl = (int32_t)sf_load_be32(q);
        q += 4;
        m[n].value.p = q;
        m[n].value.len = vl;
        q += vl > 0 ? vl : 0;
        ck_assert_ptr_eq(q, end);
        pos += 12 + (size_t)size;
        n++;
    }
    return n;
}

/* Decompress the Value of wrapper @w (magic @magic) into @out. */
static void unwrap(const tm_t *w, sf_wbuf_t *out) {
    int codec = w->attr & 7;
    uint8_t *copy = malloc((size_t)w->value.len);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, w->value.p, (size_t)w->value.len);
    if (codec == SF_COMPRESS_LZ4 && w->magic == 0) {
        /* The historic checksum is there, lz4 refuses it, and the standard one opens it. */
        ck_assert_mem_eq(copy, lz4_hdr, 6);
        ck_assert_uint_eq(copy[6], LZ4_HC_BROKEN);
        ck_assert_int_eq(sf_decompress(SF_COMPRESS_LZ4, copy, (size_t)w->value.len, NOCAP, out),
                         SF_ERR_CORRUPT);
        copy[6] = LZ4_HC_GOOD;
    }
    ck_assert_int_eq(sf_decompress((sf_compress_codec_t)codec, copy, (size_t)w->value.len, NOCAP,
                                   out),
                     SF_OK);
    free(copy);
}

/* sf_msgset_to_batch must fail with @want and leave @out as it was. */
static void up_fail(const uint8_t *p, size_t len, size_t cap, int want) {
    sf_wbuf_t out;
    sf_wbuf_init(&out);
    sf_wbuf_raw(&out, "PRE", 3);
    ck_assert_int_eq(sf_msgset_to_batch(p, len, -1, cap, &out, NULL), want);
    ck_assert_uint_eq(out.len, 3);
    ck_assert_mem_eq(out.p, "PRE", 3);
    sf_wbuf_free(&out);
}

/* Same for sf_msgset_from_batches. */
static void down_fail(const uint8_t *p, size_t len, int magic, size_t cap, int want) {
    sf_wbuf_t out;
    size_t used = 99;
    sf_wbuf_init(&out);
    sf_wbuf_raw(&out, "PRE", 3);
    ck_assert_int_eq(sf_msgset_from_batches(p, len, (int8_t)magic, NOCAP, cap, &out, &used), want);
    ck_assert_uint_eq(out.len, 3);
    ck_assert_uint_eq(used, 0);
    sf_wbuf_free(&out);
}

static const int wrap_codecs[] = {SF_COMPRESS_GZIP, SF_COMPRESS_SNAPPY, SF_COMPRESS_LZ4};

/* ---- core ---- */

START_TEST(test_magic) {
    size_t n0, n1;
    uint8_t *m0 = unhex(golden_m0, &n0), *m1 = unhex(golden_m1, &n1);
    sf_wbuf_t b;
    sf_recbatch_record_t recs[3];
    sf_wbuf_init(&b);
    fx_recs(recs, fx_m1, 3);
    build_batch(&b, 0, 0, 0, recs, 3);
    ck_assert_int_eq(sf_msgset_magic(m0, n0), 0);
    ck_assert_int_eq(sf_msgset_magic(m1, n1), 1);
    ck_assert_int_eq(sf_msgset_magic(b.p, b.len), 2);
    ck_assert_int_eq(sf_msgset_magic(m1, 17), 1);
    ck_assert_int_eq(sf_msgset_magic(m1, 16), -1);
    ck_assert_int_eq(sf_msgset_magic(NULL, 0), -1);
    m1[16] = 0xff; /* a byte, not a sign */
    ck_assert_int_eq(sf_msgset_magic(m1, n1), 255);
    free(m0);
    free(m1);
    sf_wbuf_free(&b);
}
END_TEST

/* The test's own writer produces the golden bytes (so the fixtures below are right). */
START_TEST(test_golden_writer) {
    size_t n0, n1;
    uint8_t *m0 = unhex(golden_m0, &n0), *m1 = unhex(golden_m1, &n1);
    sf_wbuf_t w;
    sf_wbuf_init(&w);
    fx_set(&w, 0, 0, fx_m0, 3, 0);
    ck_assert_uint_eq(w.len, n0);
    ck_assert_mem_eq(w.p, m0, n0);
    sf_wbuf_reset(&w);
    fx_set(&w, 1, 0, fx_m1, 3, 0);
    ck_assert_uint_eq(w.len, n1);
    ck_assert_mem_eq(w.p, m1, n1);
    free(m0);
    free(m1);
    sf_wbuf_free(&w);
}
END_TEST

START_TEST(test_up_plain) {
    size_t n0, n1;
    uint8_t *m0 = unhex(golden_m0, &n0), *m1 = unhex(golden_m1, &n1);
    sf_msgset_info_t info;
    sf_wbuf_t out;
    rd_t r;

    sf_wbuf_init(&out);
    sf_wbuf_raw(&out, "PRE", 3); /* appended after what is there */
    ck_assert_int_eq(sf_msgset_to_batch(m0, n0, -1, NOCAP, &out, &info), SF_OK);
    ck_assert_mem_eq(out.p, "PRE", 3);
    rd_batch(&r, out.p + 3, out.len - 3);
    ck_up_header(&r.hdr, 3, 0, -1, -1);
    ck_records(&r, 0, fx_m0, 3, -1);
    ck_assert_int_eq(info.count, 3);
    ck_assert_int_eq(info.magic, 0);
    ck_assert_int_eq(info.codec, 0);
    ck_assert_int_eq(info.log_append_time, 0);
    ck_assert_int_eq(info.max_timestamp, -1);
    sf_wbuf_free(&r.plain);

    sf_wbuf_reset(&out);
    ck_assert_int_eq(sf_msgset_to_batch(m1, n1, -1, NOCAP, &out, &info), SF_OK);
    rd_batch(&r, out.p, out.len);
    ck_up_header(&r.hdr, 3, 0, 1000, 1005);
    ck_records(&r, 0, fx_m1, 3, -2);
    ck_assert_int_eq(info.count, 3);
    ck_assert_int_eq(info.magic, 1);
    ck_assert_int_eq(info.codec, 0);
    ck_assert_int_eq(info.max_timestamp, 1005);
    sf_wbuf_free(&r.plain);

    /* NULL info is fine. */
    sf_wbuf_reset(&out);
    ck_assert_int_eq(sf_msgset_to_batch(m1, n1, -1, NOCAP, &out, NULL), SF_OK);
    free(m0);
    free(m1);
    sf_wbuf_free(&out);
}
END_TEST

/* gzip, snappy and lz4 wrappers of both magics, kept in their codec. */
START_TEST(test_up_wrappers) {
    int magic, c;
    for (magic = 0; magic <= 1; magic++) {
        const fx_t *fx = magic ? fx_m1 : fx_m0;
        for (c = 0; c < (int)NELEM(wrap_codecs); c++) {
            sf_wbuf_t inner, set, out;
            sf_msgset_info_t info;
            rd_t r;
            sf_wbuf_init(&inner);
            sf_wbuf_init(&set);
            sf_wbuf_init(&out);
            /* magic 1: relative inner offsets and the wrapper at the last; magic 0: absolute. */
            fx_set(&inner, magic, magic ? 0 : 40, fx, 3, 0);
            leg_wrapper(&set, 42, magic, wrap_codecs[c], 1005, &inner);
            ck_assert_int_eq(sf_msgset_to_batch(set.p, set.len, -1, NOCAP, &out, &info), SF_OK);
            rd_batch(&r, out.p, out.len);
            ck_up_header(&r.hdr, 3, wrap_codecs[c], magic ? 1000 : -1, magic ? 1005 : -1);
            ck_records(&r, 0, fx, 3, -2);
            ck_assert_int_eq(info.count, 3);
            ck_assert_int_eq(info.magic, magic);
            ck_assert_int_eq(info.codec, wrap_codecs[c]);
            sf_wbuf_free(&r.plain);
            sf_wbuf_free(&inner);
            sf_wbuf_free(&set);
            sf_wbuf_free(&out);
        }
    }
}
END_TEST

/* Magic 0 lz4 takes either header checksum; magic 1 only the standard one. */
START_TEST(test_up_lz4_checksums) {
    sf_wbuf_t inner, set, out;
    size_t vat;
    sf_wbuf_init(&inner);
    sf_wbuf_init(&set);
    sf_wbuf_init(&out);

    fx_set(&inner, 0, 0, fx_m0, 3, 0);
    leg_wrapper(&set, 2, 0, SF_COMPRESS_LZ4, 0, &inner); /* the historic checksum */
    vat = 12 + 4 + 1 + 1 + 4 + 4; /* the Value of a magic 0 wrapper with a null key */
    ck_assert_uint_eq(set.p[vat + 6], LZ4_HC_BROKEN);
    ck_assert_int_eq(sf_msgset_to_batch(set.p, set.len, -1, NOCAP, &out, NULL), SF_OK);
    set.p[vat + 6] = LZ4_HC_GOOD;
    fix_crc(set.p);
    sf_wbuf_reset(&out);
    ck_assert_int_eq(sf_msgset_to_batch(set.p, set.len, -1, NOCAP, &out, NULL), SF_OK);
    set.p[vat + 6] = 0x55; /* neither */
    fix_crc(set.p);
    up_fail(set.p, set.len, NOCAP, SF_ERR_CORRUPT);

    sf_wbuf_reset(&inner);
    sf_wbuf_reset(&set);
    fx_set(&inner, 1, 0, fx_m1, 3, 0);
    leg_wrapper(&set, 2, 1, SF_COMPRESS_LZ4, 1005, &inner);
    vat += 8;
    ck_assert_uint_eq(set.p[vat + 6], LZ4_HC_GOOD);
    set.p[vat + 6] = LZ4_HC_BROKEN;
    fix_crc(set.p);
    up_fail(set.p, set.len, NOCAP, SF_ERR_CORRUPT);
    sf_wbuf_free(&inner);
    sf_wbuf_free(&set);
    sf_wbuf_free(&out);
}
END_TEST

/* A LogAppendTime wrapper gives its inner messages its timestamp. */
START_TEST(test_up_lat_wrapper) {
    static const fx_t fx[] = {{"a", "1", 1}, {"b", "2", 2}, {"c", "3", 3}};
    sf_wbuf_t inner, set, out;
    sf_msgset_info_t info;
    rd_t r;
    sf_wbuf_init(&inner);
    sf_wbuf_init(&set);
    sf_wbuf_init(&out);
    fx_set(&inner, 1, 0, fx, 3, 0);
    leg_wrapper(&set, 2, 1, SF_COMPRESS_GZIP | SF_MSGSET_ATTR_LOG_APPEND_TIME, 5000, &inner);
    ck_assert_int_eq(sf_msgset_to_batch(set.p, set.len, -1, NOCAP, &out, &info), SF_OK);
    rd_batch(&r, out.p, out.len);
    ck_up_header(&r.hdr, 3, SF_COMPRESS_GZIP | SF_RECBATCH_ATTR_LOG_APPEND_TIME, 5000, 5000);
    ck_records(&r, 0, fx, 3, 5000);
    ck_assert_int_eq(info.log_append_time, 1);
    ck_assert_int_eq(info.max_timestamp, 5000);
    sf_wbuf_free(&r.plain);

    /* Same inner messages in a CreateTime wrapper keep their own timestamps. */
    sf_wbuf_reset(&set);
    sf_wbuf_reset(&out);
    leg_wrapper(&set, 2, 1, SF_COMPRESS_GZIP, 5000, &inner);
    ck_assert_int_eq(sf_msgset_to_batch(set.p, set.len, 0, NOCAP, &out, &info), SF_OK);
    rd_batch(&r, out.p, out.len);
    ck_up_header(&r.hdr, 3, 0, 1, 3);
    ck_records(&r, 0, fx, 3, -2);
    ck_assert_int_eq(info.log_append_time, 0);
    sf_wbuf_free(&r.plain);
    sf_wbuf_free(&inner);
    sf_wbuf_free(&set);
    sf_wbuf_free(&out);
}
END_TEST

/* Uncompressed magic 1: LogAppendTime for the batch only when every message had it. */
START_TEST(test_up_lat_plain) {
    static const fx_t fx[] = {{"a", "1", 10}, {"b", "2", 20}};
    sf_wbuf_t set, out;
    sf_msgset_info_t info;
    rd_t r;
    sf_wbuf_init(&set);
    sf_wbuf_init(&out);
    fx_set(&set, 1, 0, fx, 2, SF_MSGSET_ATTR_LOG_APPEND_TIME);
    ck_assert_int_eq(sf_msgset_to_batch(set.p, set.len, -1, NOCAP, &out, &info), SF_OK);
    rd_batch(&r, out.p, out.len);
    ck_up_header(&r.hdr, 2, SF_RECBATCH_ATTR_LOG_APPEND_TIME, 10, 20);
    ck_records(&r, 0, fx, 2, 20);
    ck_assert_int_eq(info.log_append_time, 1);
    sf_wbuf_free(&r.plain);

    sf_wbuf_reset(&set);
    sf_wbuf_reset(&out);
    leg(&set, 0, 1, SF_MSGSET_ATTR_LOG_APPEND_TIME, 10, SL("a"), SL("1"));
    leg(&set, 1, 1, 0, 20, SL("b"), SL("2"));
    ck_assert_int_eq(sf_msgset_to_batch(set.p, set.len, -1, NOCAP, &out, &info), SF_OK);
    rd_batch(&r, out.p, out.len);
    ck_up_header(&r.hdr, 2, 0, 10, 20);
    ck_records(&r, 0, fx, 2, -2);
    ck_assert_int_eq(info.log_append_time, 0);
    sf_wbuf_free(&r.plain);

    /* Magic 0 has no timestamp type: the bit means nothing there. */
    sf_wbuf_reset(&set);
    sf_wbuf_reset(&out);
    leg(&set, 0, 0, SF_MSGSET_ATTR_LOG_APPEND_TIME, 0, SL("a"), SL("1"));
    ck_assert_int_eq(sf_msgset_to_batch(set.p, set.len, -1, NOCAP, &out, &info), SF_OK);
    rd_batch(&r, out.p, out.len);
    ck_up_header(&r.hdr, 1, 0, -1, -1);
    sf_wbuf_free(&r.plain);
    sf_wbuf_free(&set);
    sf_wbuf_free(&out);
}
END_TEST

/* @codec chooses the batch's codec whatever the source's. */
START_TEST(test_up_recompress) {
    size_t n1;
    uint8_t *m1 = unhex(golden_m1, &n1);
    sf_wbuf_t inner, wrapped, out;
    int codec;
    sf_wbuf_init(&inner);
    sf_wbuf_init(&wrapped);
    sf_wbuf_init(&out);
    fx_set(&inner, 1, 0, fx_m1, 3, 0);
    leg_wrapper(&wrapped, 2, 1, SF_COMPRESS_SNAPPY, 1005, &inner);
    for (codec = 0; codec <= SF_COMPRESS_ZSTD; codec++) {
        sf_msgset_info_t info;
        rd_t r;
        sf_wbuf_reset(&out);
        ck_assert_int_eq(sf_msgset_to_batch(m1, n1, codec, NOCAP, &out, &info), SF_OK);
        rd_batch(&r, out.p, out.len);
        ck_up_header(&r.hdr, 3, codec, 1000, 1005);
        ck_records(&r, 0, fx_m1, 3, -2);
        ck_assert_int_eq(info.codec, 0);
        sf_wbuf_free(&r.plain);
        sf_wbuf_reset(&out);
        ck_assert_int_eq(sf_msgset_to_batch(wrapped.p, wrapped.len, codec, NOCAP, &out, &info),
                         SF_OK);
        rd_batch(&r, out.p, out.len);
        ck_up_header(&r.hdr, 3, codec, 1000, 1005);
        ck_records(&r, 0, fx_m1, 3, -2);
        ck_assert_int_eq(info.codec, SF_COMPRESS_SNAPPY);
        sf_wbuf_free(&r.plain);
    }
    free(m1);
    sf_wbuf_free(&inner);
    sf_wbuf_free(&wrapped);
    sf_wbuf_free(&out);
}
END_TEST

/* Plain messages and wrappers mixed in one set: one batch, in order, offsets renumbered. */
START_TEST(test_up_mixed_entries) {
    static const fx_t a[] = {{"p1", "x", 50}};
    static const fx_t b[] = {{"g1", "y", 60}, {"g2", "z", 40}};
    static const fx_t c[] = {{"l1", NULL, 70}};
    static const fx_t d[] = {{NULL, "tail", 55}};
    sf_wbuf_t set, in1, in2, out;
    sf_msgset_info_t info;
    rd_t r;
    sf_wbuf_init(&set);
    sf_wbuf_init(&in1);
    sf_wbuf_init(&in2);
    sf_wbuf_init(&out);
    fx_set(&set, 1, 77, a, 1, 0); /* producer offsets mean nothing */
    fx_set(&in1, 1, 0, b, 2, 0);
    leg_wrapper(&set, 12345, 1, SF_COMPRESS_GZIP, 60, &in1);
    fx_set(&in2, 1, 0, c, 1, 0);
    leg_wrapper(&set, -1, 1, SF_COMPRESS_LZ4, 70, &in2);
    fx_set(&set, 1, 0, d, 1, 0);
    ck_assert_int_eq(sf_msgset_to_batch(set.p, set.len, -1, NOCAP, &out, &info), SF_OK);
    rd_batch(&r, out.p, out.len);
    /* The source codec is the last wrapper's. */
    ck_up_header(&r.hdr, 5, SF_COMPRESS_LZ4, 50, 70);
    ck_records(&r, 0, a, 1, -2);
    ck_records(&r, 1, b, 2, -2);
    ck_records(&r, 3, c, 1, -2);
    ck_records(&r, 4, d, 1, -2);
    ck_assert_int_eq(info.count, 5);
    ck_assert_int_eq(info.codec, SF_COMPRESS_LZ4);
    ck_assert_int_eq(info.max_timestamp, 70);
    sf_wbuf_free(&r.plain);
    sf_wbuf_free(&set);
    sf_wbuf_free(&in1);
    sf_wbuf_free(&in2);
    sf_wbuf_free(&out);
}
END_TEST

/* Uncompressed batches become exactly the golden sets; headers are dropped. */
START_TEST(test_down_plain) {
    size_t n0, n1, used;
    uint8_t *m0 = unhex(golden_m0, &n0), *m1 = unhex(golden_m1, &n1);
    sf_recbatch_rechdr_t hdrs[2] = {{{(const uint8_t *)"h", 1}, {(const uint8_t *)"v", 1}},
                                    {{(const uint8_t *)"h2", 2}, {NULL, -1}}};
    sf_recbatch_record_t recs[3];
    sf_wbuf_t b, out;
    tm_t m[8];
    int i;
    sf_wbuf_init(&b);
    sf_wbuf_init(&out);

    fx_recs(recs, fx_m0, 3);
    recs[1].header_count = 2;
    recs[1].headers = hdrs;
    build_batch(&b, 0, 0, 0, recs, 3);
    ck_assert_int_eq(sf_msgset_from_batches(b.p, b.len, 0, NOCAP, NOCAP, &out, &used), SF_OK);
    ck_assert_uint_eq(used, b.len);
    ck_assert_uint_eq(out.len, n0);
    ck_assert_mem_eq(out.p, m0, n0);

    sf_wbuf_reset(&b);
    fx_recs(recs, fx_m1, 3);
    recs[0].header_count = 2;
    recs[0].headers = hdrs;
    build_batch(&b, 0, 0, 0, recs, 3);
    sf_wbuf_reset(&out);
    sf_wbuf_raw(&out, "PRE", 3); /* appended after what is there */
    ck_assert_int_eq(sf_msgset_from_batches(b.p, b.len, 1, NOCAP, NOCAP, &out, &used), SF_OK);
    ck_assert_uint_eq(used, b.len);
    ck_assert_uint_eq(out.len, 3 + n1);
    ck_assert_mem_eq(out.p, "PRE", 3);
    ck_assert_mem_eq(out.p + 3, m1, n1);

    /* Absolute offsets from the batch's BaseOffset. */
    sf_wbuf_reset(&b);
    build_batch(&b, 1000, 0, 0, recs, 3);
    sf_wbuf_reset(&out);
    ck_assert_int_eq(sf_msgset_from_batches(b.p, b.len, 1, NOCAP, NOCAP, &out, NULL), SF_OK);
    ck_assert_int_eq(tparse(out.p, out.len, m, 8), 3);
    for (i = 0; i < 3; i++) {
        ck_assert_int_eq(m[i].off, 1000 + i);
        ck_assert_int_eq(m[i].magic, 1);
        ck_assert_int_eq(m[i].attr, 0);
        ck_assert_int_eq(m[i].ts, fx_m1[i].ts);
        ck_slice(m[i].key, fx_m1[i].key);
        ck_slice(m[i].value, fx_m1[i].value);
    }
    free(m0);
    free(m1);
    sf_wbuf_free(&b);
    sf_wbuf_free(&out);
}
END_TEST

/* A compressed batch becomes one wrapper of its codec, for both magics. */
START_TEST(test_down_compressed) {
    int magic, c, i;
    for (magic = 0; magic <= 1; magic++) {
        for (c = 0; c < (int)NELEM(wrap_codecs); c++) {
            sf_recbatch_record_t recs[3];
            sf_wbuf_t b, out, in;
            tm_t w[2], m[8];
            size_t used;
            sf_wbuf_init(&b);
            sf_wbuf_init(&out);
            sf_wbuf_init(&in);
            fx_recs(recs, fx_m1, 3);
            build_batch(&b, 500, wrap_codecs[c], 0, recs, 3);
            ck_assert_int_eq(
                sf_msgset_from_batches(b.p, b.len, (int8_t)magic, NOCAP, NOCAP, &out, &used),
                SF_OK);
            ck_assert_uint_eq(used, b.len);
            ck_assert_int_eq(tparse(out.p, out.len, w, 2), 1);
            ck_assert_int_eq(w[0].off, 502);
            ck_assert_int_eq(w[0].magic, magic);
            ck_assert_int_eq(w[0].attr, wrap_codecs[c]);
            ck_assert_int_eq(w[0].ts, magic ? 1005 : -1);
            ck_assert_int_eq(w[0].key.len, -1);
            unwrap(&w[0], &in);
            ck_assert_int_eq(tparse(in.p, in.len, m, 8), 3);
            for (i = 0; i < 3; i++) {
                ck_assert_int_eq(m[i].off, magic ? i : 500 + i);
                ck_assert_int_eq(m[i].magic, magic);
                ck_assert_int_eq(m[i].attr, 0);
                ck_assert_int_eq(m[i].ts, magic ? fx_m1[i].ts : -1);
                ck_slice(m[i].key, fx_m1[i].key);
                ck_slice(m[i].value, fx_m1[i].value);
            }
            sf_wbuf_free(&b);
            sf_wbuf_free(&out);
            sf_wbuf_free(&in);
        }
    }
}
END_TEST

/* LogAppendTime batches: magic 1 marks every message and uses MaxTimestamp; magic 0 drops it. */
START_TEST(test_down_lat) {
    sf_recbatch_record_t recs[3];
    sf_wbuf_t b, out, in;
    tm_t w[2], m[8];
    int i, codec;
    sf_wbuf_init(&b);
    sf_wbuf_init(&out);
    sf_wbuf_init(&in);
    fx_recs(recs, fx_m1, 3);
    for (codec = 0; codec <= SF_COMPRESS_GZIP; codec++) {
        sf_wbuf_reset(&b);
        sf_wbuf_reset(&out);
        build_batch(&b, 10, codec, SF_RECBATCH_ATTR_LOG_APPEND_TIME, recs, 3);
        ck_assert_int_eq(sf_msgset_from_batches(b.p, b.len, 1, NOCAP, NOCAP, &out, NULL), SF_OK);
        if (codec) {
            ck_assert_int_eq(tparse(out.p, out.len, w, 2), 1);
            ck_assert_int_eq(w[0].attr, SF_COMPRESS_GZIP | SF_MSGSET_ATTR_LOG_APPEND_TIME);
            ck_assert_int_eq(w[0].ts, 1005);
            ck_assert_int_eq(w[0].off, 12);
            sf_wbuf_reset(&in);
            unwrap(&w[0], &in);
            ck_assert_int_eq(tparse(in.p, in.len, m, 8), 3);
        } else {
            ck_assert_int_eq(tparse(out.p, out.len, m, 8), 3);
        }
        for (i = 0; i < 3; i++) {
            ck_assert_int_eq(m[i].attr, SF_MSGSET_ATTR_LOG_APPEND_TIME);
            ck_assert_int_eq(m[i].ts, 1005);
            ck_assert_int_eq(m[i].off, codec ? i : 10 + i);
        }
        sf_wbuf_reset(&out);
        ck_assert_int_eq(sf_msgset_from_batches(b.p, b.len, 0, NOCAP, NOCAP, &out, NULL), SF_OK);
        ck_assert_int_eq(tparse(out.p, out.len, m, 8), codec ? 1 : 3);
        ck_assert_int_eq(m[0].attr, codec);
        ck_assert_int_eq(m[0].magic, 0);
        ck_assert_int_eq(m[0].ts, -1);
    }
    sf_wbuf_free(&b);
    sf_wbuf_free(&out);
    sf_wbuf_free(&in);
}
END_TEST

/* Several batches in a row: converted in order, control batches skipped. */
START_TEST(test_down_sequence) {
    static const fx_t fa[] = {{"a", "1", 1}, {"b", "2", 2}};
    static const fx_t fb[] = {{"c", "3", 3}, {"d", "4", 4}};
    static const fx_t fc[] = {{"e", "5", 5}};
    sf_recbatch_record_t recs[2];
    sf_wbuf_t b, out, in;
    tm_t m[8], inner[4];
    size_t used;
    sf_wbuf_init(&b);
    sf_wbuf_init(&out);
    sf_wbuf_init(&in);
    fx_recs(recs, fa, 2);
    build_batch(&b, 0, 0, 0, recs, 2);
    build_control(&b, 2);
    fx_recs(recs, fb, 2);
    build_batch(&b, 3, SF_COMPRESS_GZIP, 0, recs, 2);
    build_control(&b, 5);
    fx_recs(recs, fc, 1);
    build_batch(&b, 6, SF_COMPRESS_LZ4, 0, recs, 1);
    ck_assert_int_eq(sf_msgset_from_batches(b.p, b.len, 1, NOCAP, NOCAP, &out, &used), SF_OK);
    ck_assert_uint_eq(used, b.len);
    ck_assert_int_eq(tparse(out.p, out.len, m, 8), 4);
    ck_assert_int_eq(m[0].off, 0);
    ck_assert_int_eq(m[1].off, 1);
    ck_slice(m[1].key, "b");
    ck_assert_int_eq(m[2].off, 4);
    ck_assert_int_eq(m[2].attr, SF_COMPRESS_GZIP);
    unwrap(&m[2], &in);
    ck_assert_int_eq(tparse(in.p, in.len, inner, 4), 2);
    ck_slice(inner[1].value, "4");
    ck_assert_int_eq(m[3].off, 6);
    ck_assert_int_eq(m[3].attr, SF_COMPRESS_LZ4);
    sf_wbuf_free(&b);
    sf_wbuf_free(&out);
    sf_wbuf_free(&in);
}
END_TEST

/* Up then down gives the producer's bytes back; down then up the stored batch. */
START_TEST(test_roundtrip) {
    size_t n0, n1, used;
    uint8_t *m0 = unhex(golden_m0, &n0), *m1 = unhex(golden_m1, &n1);
    sf_wbuf_t up, down, inner, set;
    int magic, c;
    sf_wbuf_init(&up);
    sf_wbuf_init(&down);
    sf_wbuf_init(&inner);
    sf_wbuf_init(&set);

    ck_assert_int_eq(sf_msgset_to_batch(m0, n0, -1, NOCAP, &up, NULL), SF_OK);
    ck_assert_int_eq(sf_msgset_from_batches(up.p, up.len, 0, NOCAP, NOCAP, &down, &used), SF_OK);
    ck_assert_uint_eq(down.len, n0);
    ck_assert_mem_eq(down.p, m0, n0);
    sf_wbuf_reset(&up);
    sf_wbuf_reset(&down);
    ck_assert_int_eq(sf_msgset_to_batch(m1, n1, -1, NOCAP, &up, NULL), SF_OK);
    ck_assert_int_eq(sf_msgset_from_batches(up.p, up.len, 1, NOCAP, NOCAP, &down, &used), SF_OK);
    ck_assert_uint_eq(down.len, n1);
    ck_assert_mem_eq(down.p, m1, n1);

    /* Wrappers as the Kafka clients write them (magic 1: CreateTime, the wrapper at the last
     * relative offset with the largest timestamp; magic 0: absolute offsets from 0). */
    for (magic = 0; magic <= 1; magic++) {
        for (c = 0; c < (int)NELEM(wrap_codecs); c++) {
            sf_wbuf_reset(&inner);
            sf_wbuf_reset(&set);
            sf_wbuf_reset(&up);
            sf_wbuf_reset(&down);
            fx_set(&inner, magic, 0, magic ? fx_m1 : fx_m0, 3, 0);
            leg_wrapper(&set, 2, magic, wrap_codecs[c], 1005, &inner);
            ck_assert_int_eq(sf_msgset_to_batch(set.p, set.len, -1, NOCAP, &up, NULL), SF_OK);
            ck_assert_int_eq(
                sf_msgset_from_batches(up.p, up.len, (int8_t)magic, NOCAP, NOCAP, &down, &used),
                SF_OK);
            ck_assert_uint_eq(used, up.len);
            ck_assert_uint_eq(down.len, set.len);
            ck_assert_mem_eq(down.p, set.p, set.len);
        }
    }

    /* A stored batch (no headers, offsets from 0) survives down and up unchanged. */
    for (c = 0; c <= SF_COMPRESS_LZ4; c++) {
        sf_recbatch_record_t recs[3];
        sf_wbuf_t stored;
        sf_wbuf_init(&stored);
        fx_recs(recs, fx_m1, 3);
        build_batch(&stored, 0, c, 0, recs, 3);
        sf_wbuf_reset(&up);
        sf_wbuf_reset(&down);
        ck_assert_int_eq(
            sf_msgset_from_batches(stored.p, stored.len, 1, NOCAP, NOCAP, &down, &used), SF_OK);
        ck_assert_int_eq(sf_msgset_to_batch(down.p, down.len, -1, NOCAP, &up, NULL), SF_OK);
        ck_assert_uint_eq(up.len, stored.len);
        ck_assert_mem_eq(up.p, stored.p, stored.len);
        sf_wbuf_free(&stored);
    }
    free(m0);
    free(m1);
    sf_wbuf_free(&up);
    sf_wbuf_free(&down);
    sf_wbuf_free(&inner);
    sf_wbuf_free(&set);
}
END_TEST

/* ---- limits ---- */

/* Every prefix of a valid set: a whole number of entries converts, anything else fails. */
START_TEST(test_up_truncations) {
    sf_wbuf_t sets[4], inner;
    size_t k, cut;
    sf_wbuf_init(&inner);
    for (k = 0; k < NELEM(sets); k++)
        sf_wbuf_init(&sets[k]);
    fx_set(&sets[0], 0, 0, fx_m0, 3, 0);
    fx_set(&sets[1], 1, 0, fx_m1, 3, 0);
    fx_set(&inner, 1, 0, fx_m1, 3, 0);
    leg_wrapper(&sets[2], 2, 1, SF_COMPRESS_GZIP, 1005, &inner);
    fx_set(&sets[2], 1, 3, fx_m1, 1, 0); /* a plain message after the wrapper */
    sf_wbuf_reset(&inner);
    fx_set(&inner, 0, 0, fx_m0, 3, 0);
    leg_wrapper(&sets[3], 2, 0, SF_COMPRESS_LZ4, 0, &inner);
    for (k = 0; k < NELEM(sets); k++) {
        const uint8_t *p = sets[k].p;
        size_t len = sets[k].len, next = 0;
        int whole = 0;
        for (cut = 0; cut <= len; cut++) {
            sf_wbuf_t out;
            sf_msgset_info_t info;
            uint8_t *copy = malloc(cut ? cut : 1); /* exactly @cut bytes, for ASan */
            int rc;
            ck_assert_ptr_nonnull(copy);
            memcpy(copy, p, cut);
            if (cut == next && cut < len) {
                next += 12 + sf_load_be32(p + next + 8);
                whole = cut != 0;
            } else if (cut == len) {
                whole = 1;
            } else {
                whole = 0;
            }
            sf_wbuf_init(&out);
            rc = sf_msgset_to_batch(copy, cut, -1, NOCAP, &out, &info);
            if (whole) {
                ck_assert_int_eq(rc, SF_OK);
                ck_assert_int_ge(info.count, 1);
            } else {
                ck_assert_msg(rc == SF_ERR_MALFORMED, "set %zu cut at %zu: %d", k, cut, rc);
                ck_assert_uint_eq(out.len, 0);
            }
            sf_wbuf_free(&out);
            free(copy);
        }
    }
    for (k = 0; k < NELEM(sets); k++)
        sf_wbuf_free(&sets[k]);
    sf_wbuf_free(&inner);
}
END_TEST

/* A flipped bit anywhere: the CRC catches what is not an offset, a size or the magic. */
START_TEST(test_up_bad_crc) {
    size_t n1, i;
    uint8_t *m1 = unhex(golden_m1, &n1);
    size_t starts[3] = {0, 38, 77}; /* entries of 38, 39 and 34 bytes */
    for (i = 0; i < n1; i++) {
        size_t r = i - starts[i >= starts[2] ? 2 : i >= starts[1] ? 1 : 0];
        sf_wbuf_t out;
        int rc;
        m1[i] ^= r == 16 ? 0x80 : 0x01;
        sf_wbuf_init(&out);
        rc = sf_msgset_to_batch(m1, n1, -1, NOCAP, &out, NULL);
        if (r < 8)
            ck_assert_int_eq(rc, SF_OK);
        else if (r < 12)
            ck_assert(rc == SF_ERR_MALFORMED || rc == SF_ERR_CORRUPT);
        else if (r == 16)
            ck_assert_int_eq(rc, SF_ERR_UNSUPPORTED);
        else
            ck_assert_msg(rc == SF_ERR_CORRUPT, "byte %zu: %d", i, rc);
        if (rc != SF_OK)
            ck_assert_uint_eq(out.len, 0);
        sf_wbuf_free(&out);
        m1[i] ^= r == 16 ? 0x80 : 0x01;
    }

    /* A bad CRC inside a wrapper. */
    {
        sf_wbuf_t inner, set;
        sf_wbuf_init(&inner);
        sf_wbuf_init(&set);
        fx_set(&inner, 1, 0, fx_m1, 3, 0);
        inner.p[38 + 12] ^= 0x10;
        leg_wrapper(&set, 2, 1, SF_COMPRESS_SNAPPY, 1005, &inner);
        up_fail(set.p, set.len, NOCAP, SF_ERR_CORRUPT);
        sf_wbuf_free(&inner);
        sf_wbuf_free(&set);
    }
    free(m1);
}
END_TEST

START_TEST(test_up_nested) {
    sf_wbuf_t in1, in2, set;
    sf_wbuf_init(&in1);
    sf_wbuf_init(&in2);
    sf_wbuf_init(&set);
    fx_set(&in1, 1, 0, fx_m1, 3, 0);
    leg_wrapper(&in2, 2, 1, SF_COMPRESS_GZIP, 1005, &in1); /* a wrapper ... */
    leg_wrapper(&set, 2, 1, SF_COMPRESS_LZ4, 1005, &in2);  /* ... inside a wrapper */
    up_fail(set.p, set.len, NOCAP, SF_ERR_MALFORMED);
    /* Also behind a plain inner message. */
    sf_wbuf_reset(&in1);
    sf_wbuf_reset(&set);
    fx_set(&in1, 1, 0, fx_m1, 1, 0);
    sf_wbuf_raw(&in1, in2.p, in2.len);
    leg_wrapper(&set, 2, 1, SF_COMPRESS_GZIP, 1005, &in1);
    up_fail(set.p, set.len, NOCAP, SF_ERR_MALFORMED);
    sf_wbuf_free(&in1);
    sf_wbuf_free(&in2);
    sf_wbuf_free(&set);
}
END_TEST

START_TEST(test_up_mixed_magic) {
    sf_wbuf_t set, inner;
    sf_wbuf_init(&set);
    sf_wbuf_init(&inner);
    fx_set(&set, 0, 0, fx_m0, 1, 0);
    fx_set(&set, 1, 1, fx_m1, 1, 0);
    up_fail(set.p, set.len, NOCAP, SF_ERR_MALFORMED);
    sf_wbuf_reset(&set);
    fx_set(&set, 1, 0, fx_m1, 2, 0);
    fx_set(&set, 0, 2, fx_m0, 1, 0);
    up_fail(set.p, set.len, NOCAP, SF_ERR_MALFORMED);
    /* Inner messages of another magic than their wrapper. */
    sf_wbuf_reset(&set);
    fx_set(&inner, 0, 0, fx_m0, 3, 0);
    leg_wrapper(&set, 2, 1, SF_COMPRESS_GZIP, 1005, &inner);
    up_fail(set.p, set.len, NOCAP, SF_ERR_MALFORMED);
    sf_wbuf_reset(&set);
    sf_wbuf_reset(&inner);
    fx_set(&inner, 1, 0, fx_m1, 3, 0);
    leg_wrapper(&set, 2, 0, SF_COMPRESS_GZIP, 0, &inner);
    up_fail(set.p, set.len, NOCAP, SF_ERR_MALFORMED);
    sf_wbuf_free(&set);
    sf_wbuf_free(&inner);
}
END_TEST

/* zstd (and codecs 5-7) are not legacy codecs; magics other than 0/1 are not legacy sets. */
START_TEST(test_up_unsupported) {
    sf_wbuf_t set, inner, b;
    sf_recbatch_record_t recs[3];
    int attr;
    sf_wbuf_init(&set);
    sf_wbuf_init(&inner);
    sf_wbuf_init(&b);
    fx_set(&inner, 1, 0, fx_m1, 3, 0);
    leg_wrapper(&set, 2, 1, SF_COMPRESS_ZSTD, 1005, &inner);
    up_fail(set.p, set.len, NOCAP, SF_ERR_UNSUPPORTED);
    for (attr = 5; attr <= 7; attr++) {
        sf_wbuf_reset(&set);
        leg(&set, 0, 1, attr, 0, SL(NULL), SL("not compressed"));
        up_fail(set.p, set.len, NOCAP, SF_ERR_UNSUPPORTED);
    }
    /* A magic 2 or 3 message laid out as magic 1, with a valid CRC; first or later. */
    sf_wbuf_reset(&set);
    fx_set(&set, 1, 0, fx_m1, 1, 0);
    set.p[16] = 2;
    fix_crc(set.p);
    up_fail(set.p, set.len, NOCAP, SF_ERR_UNSUPPORTED);
    sf_wbuf_reset(&set);
    fx_set(&set, 1, 0, fx_m1, 2, 0);
    set.p[38 + 16] = 3;
    fix_crc(set.p + 38);
    up_fail(set.p, set.len, NOCAP, SF_ERR_UNSUPPORTED);
    /* A v2 batch is not a message set. */
    fx_recs(recs, fx_m1, 3);
    build_batch(&b, 0, 0, 0, recs, 3);
    up_fail(b.p, b.len, NOCAP, SF_ERR_UNSUPPORTED);
    sf_wbuf_free(&set);
    sf_wbuf_free(&inner);
    sf_wbuf_free(&b);
}
END_TEST

/* Sizes that lie, each with a CRC that matches. */
START_TEST(test_up_lying_sizes) {
    sf_wbuf_t set;
    uint8_t *e;
    size_t n;
    sf_wbuf_init(&set);

    /* MessageSize past the set, negative, huge, or below each magic's minimum. */
    fx_set(&set, 1, 0, fx_m1, 1, 0);
    sf_store_be32(set.p + 8, (uint32_t)(set.len - 12 + 1));
    up_fail(set.p, set.len, NOCAP, SF_ERR_MALFORMED);
    sf_store_be32(set.p + 8, 0xffffffffu);
    up_fail(set.p, set.len, NOCAP, SF_ERR_MALFORMED);
    sf_store_be32(set.p + 8, 0x7fffffffu);
    up_fail(set.p, set.len, NOCAP, SF_ERR_MALFORMED);
    sf_store_be32(set.p + 8, 0x80000000u);
    up_fail(set.p, set.len, NOCAP, SF_ERR_MALFORMED);
    sf_wbuf_reset(&set);
    leg(&set, 0, 0, 0, 0, SL(NULL), SL(NULL)); /* 14 bytes: the smallest magic 0 */
    ck_assert_uint_eq(set.len, 12 + SF_MSGSET_MIN_MESSAGE_V0);
    reseal(set.p, set.len - 1);
    up_fail(set.p, set.len - 1, NOCAP, SF_ERR_MALFORMED);
    sf_wbuf_reset(&set);
    leg(&set, 0, 1, 0, 0, SL(NULL), SL(NULL)); /* 22 bytes: the smallest magic 1 */
    ck_assert_uint_eq(set.len, 12 + SF_MSGSET_MIN_MESSAGE_V1);
    {
        sf_wbuf_t out;
        sf_wbuf_init(&out);
        ck_assert_int_eq(sf_msgset_to_batch(set.p, set.len, -1, NOCAP, &out, NULL), SF_OK);
        sf_wbuf_free(&out);
    }
    reseal(set.p, set.len - 1);
    up_fail(set.p, set.len - 1, NOCAP, SF_ERR_MALFORMED);

    /* Key and value lengths (CRC fixed after each edit). */
    sf_wbuf_reset(&set);
    leg(&set, 0, 1, 0, 0, SL("key"), SL("value"));
    e = set.p;
    n = set.len;
    sf_store_be32(e + 26, 1000); /* key past the message */
    fix_crc(e);
    up_fail(e, n, NOCAP, SF_ERR_MALFORMED);
    sf_store_be32(e + 26, (uint32_t)-2); /* not -1 */
    fix_crc(e);
    up_fail(e, n, NOCAP, SF_ERR_MALFORMED);
    sf_store_be32(e + 26, 3);
    sf_store_be32(e + 33, 6); /* value one byte longer than the message */
    fix_crc(e);
    up_fail(e, n, NOCAP, SF_ERR_MALFORMED);
    sf_store_be32(e + 33, 4); /* a stray byte after the value */
    fix_crc(e);
    up_fail(e, n, NOCAP, SF_ERR_MALFORMED);
    sf_store_be32(e + 33, (uint32_t)-2);
    fix_crc(e);
    up_fail(e, n, NOCAP, SF_ERR_MALFORMED);
    sf_store_be32(e + 33, 5);
    fix_crc(e);
    {
        sf_wbuf_t out;
        sf_wbuf_init(&out);
        ck_assert_int_eq(sf_msgset_to_batch(e, n, -1, NOCAP, &out, NULL), SF_OK);
        sf_wbuf_free(&out);
    }

    /* Bytes after the last whole entry: a partial header, or a header with no message. */
    sf_wbuf_raw(&set, "\0\0\0\0\0\0\0\0\0\0\0", 11);
    up_fail(set.p, set.len, NOCAP, SF_ERR_MALFORMED);
    sf_wbuf_raw(&set, "\x0e", 1);
    up_fail(set.p, set.len, NOCAP, SF_ERR_MALFORMED);
    sf_wbuf_free(&set);
}
END_TEST

/* The decompressed bytes of all wrappers together stay under the cap. */
START_TEST(test_up_decompress_cap) {
    sf_wbuf_t in1, in2, set, out;
    char value[200];
    int i;
    sf_wbuf_init(&in1);
    sf_wbuf_init(&in2);
    sf_wbuf_init(&set);
    sf_wbuf_init(&out);
    memset(value, 'x', sizeof(value) - 1);
    value[sizeof(value) - 1] = 0;
    for (i = 0; i < 50; i++)
        leg(&in1, i, 1, 0, i, SL(NULL), SL(value));
    for (i = 0; i < 20; i++)
        leg(&in2, i, 1, 0, i, SL("k"), SL(value));
    leg_wrapper(&set, 49, 1, SF_COMPRESS_GZIP, 49, &in1);
    ck_assert_uint_lt(set.len, in1.len / 10); /* a real ratio, so the cap is what bites */
    up_fail(set.p, set.len, in1.len - 1, SF_ERR_TOOLARGE);
    up_fail(set.p, set.len, 0, SF_ERR_TOOLARGE);
    ck_assert_int_eq(sf_msgset_to_batch(set.p, set.len, -1, in1.len, &out, NULL), SF_OK);
    leg_wrapper(&set, 19, 1, SF_COMPRESS_LZ4, 19, &in2);
    up_fail(set.p, set.len, in1.len + in2.len - 1, SF_ERR_TOOLARGE);
    sf_wbuf_reset(&out);
    ck_assert_int_eq(sf_msgset_to_batch(set.p, set.len, -1, in1.len + in2.len, &out, NULL), SF_OK);
    /* Uncompressed sets need no budget. */
    sf_wbuf_reset(&out);
    ck_assert_int_eq(sf_msgset_to_batch(in1.p, in1.len, -1, 0, &out, NULL), SF_OK);
    sf_wbuf_free(&in1);
    sf_wbuf_free(&in2);
    sf_wbuf_free(&set);
    sf_wbuf_free(&out);
}
END_TEST

/* Empty input, wrappers holding nothing, bad arguments. */
START_TEST(test_up_empty_and_args) {
    sf_wbuf_t set, inner, out, z;
    sf_slice_t v;
    sf_wbuf_init(&set);
    sf_wbuf_init(&inner);
    sf_wbuf_init(&out);
    sf_wbuf_init(&z);
    up_fail(NULL, 0, NOCAP, SF_ERR_MALFORMED);
    leg(&set, 0, 1, SF_COMPRESS_GZIP, 0, SL(NULL), SL(NULL)); /* null Value */
    up_fail(set.p, set.len, NOCAP, SF_ERR_MALFORMED);
    sf_wbuf_reset(&set);
    leg(&set, 0, 1, SF_COMPRESS_GZIP, 0, SL(NULL), SL("")); /* empty Value */
    up_fail(set.p, set.len, NOCAP, SF_ERR_CORRUPT);
    sf_wbuf_reset(&set);
    leg(&set, 0, 1, SF_COMPRESS_SNAPPY, 0, SL(NULL), SL("garbage, not snappy")); /* garbage */
    up_fail(set.p, set.len, NOCAP, SF_ERR_CORRUPT);
    sf_wbuf_reset(&set);
    leg_wrapper(&set, 0, 1, SF_COMPRESS_LZ4, 0, &inner); /* an empty inner set */
    up_fail(set.p, set.len, NOCAP, SF_ERR_MALFORMED);
    /* A compressed stream cut short. */
    fx_set(&inner, 1, 0, fx_m1, 3, 0);
    ck_assert_int_eq(sf_compress(SF_COMPRESS_GZIP, -1, inner.p, inner.len, &z), SF_OK);
    v.p = z.p;
    v.len = (int32_t)z.len - 3;
    sf_wbuf_reset(&set);
    leg(&set, 2, 1, SF_COMPRESS_GZIP, 0, SL(NULL), v);
    up_fail(set.p, set.len, NOCAP, SF_ERR_CORRUPT);
    /* A whole stream of a set cut short (the last inner message partial). */
    sf_wbuf_reset(&z);
    ck_assert_int_eq(sf_compress(SF_COMPRESS_GZIP, -1, inner.p, inner.len - 1, &z), SF_OK);
    v.p = z.p;
    v.len = (int32_t)z.len;
    sf_wbuf_reset(&set);
    leg(&set, 2, 1, SF_COMPRESS_GZIP, 0, SL(NULL), v);
    up_fail(set.p, set.len, NOCAP, SF_ERR_MALFORMED);

    /* Arguments. */
    ck_assert_int_eq(sf_msgset_to_batch(inner.p, inner.len, -2, NOCAP, &out, NULL),
                     SF_ERR_INVALID);
    ck_assert_int_eq(sf_msgset_to_batch(inner.p, inner.len, 5, NOCAP, &out, NULL),
                     SF_ERR_INVALID);
    ck_assert_uint_eq(out.len, 0);
    out.err = SF_ERR_NOMEM; /* a writer that already failed */
    ck_assert_int_eq(sf_msgset_to_batch(inner.p, inner.len, -1, NOCAP, &out, NULL),
                     SF_ERR_NOMEM);
    ck_assert_int_eq(sf_msgset_from_batches(inner.p, inner.len, 1, NOCAP, NOCAP, &out, NULL),
                     SF_ERR_NOMEM);
    sf_wbuf_free(&set);
    sf_wbuf_free(&inner);
    sf_wbuf_free(&out);
    sf_wbuf_free(&z);
}
END_TEST

/* Every prefix of stored batches: the whole batches in it convert, the rest is left. */
START_TEST(test_down_truncations) {
    sf_recbatch_record_t recs[3];
    sf_wbuf_t b;
    size_t ends[4], cut, full_out[4];
    int k;
    sf_wbuf_init(&b);
    fx_recs(recs, fx_m1, 3);
    build_batch(&b, 0, 0, 0, recs, 3);
    ends[0] = b.len;
    build_control(&b, 3);
    ends[1] = b.len;
    build_batch(&b, 4, SF_COMPRESS_SNAPPY, 0, recs, 3);
    ends[2] = b.len;
    build_batch(&b, 7, 0, SF_RECBATCH_ATTR_LOG_APPEND_TIME, recs, 2);
    ends[3] = b.len;
    for (k = 0; k < 4; k++) {
        sf_wbuf_t out;
        sf_wbuf_init(&out);
        ck_assert_int_eq(sf_msgset_from_batches(b.p, ends[k], 1, NOCAP, NOCAP, &out, NULL),
                         SF_OK);
        full_out[k] = out.len;
        sf_wbuf_free(&out);
    }
    ck_assert_uint_eq(full_out[0], full_out[1]); /* the control batch adds nothing */
    for (cut = 0; cut <= b.len; cut++) {
        sf_wbuf_t out;
        size_t used = 99, want_used = 0, want_out = 0;
        uint8_t *copy = malloc(cut ? cut : 1);
        ck_assert_ptr_nonnull(copy);
        memcpy(copy, b.p, cut);
        for (k = 0; k < 4; k++)
            if (ends[k] <= cut) {
                want_used = ends[k];
                want_out = full_out[k];
            }
        sf_wbuf_init(&out);
        ck_assert_int_eq(sf_msgset_from_batches(copy, cut, 1, NOCAP, NOCAP, &out, &used), SF_OK);
        ck_assert_uint_eq(used, want_used);
        ck_assert_uint_eq(out.len, want_out);
        sf_wbuf_free(&out);
        free(copy);
    }
    sf_wbuf_free(&b);
}
END_TEST

/* max_out stops before the batch that would pass it; the first batch always converts. */
START_TEST(test_down_max_out) {
    sf_recbatch_record_t recs[3];
    sf_wbuf_t b, out;
    size_t one, bsize, csize, used;
    sf_wbuf_init(&b);
    sf_wbuf_init(&out);
    fx_recs(recs, fx_m1, 3);
    build_control(&b, 0);
    csize = b.len;
    build_batch(&b, 1, 0, 0, recs, 3);
    bsize = b.len - csize;
    build_batch(&b, 4, 0, 0, recs, 3);
    build_batch(&b, 7, 0, 0, recs, 3);
    ck_assert_int_eq(sf_msgset_from_batches(b.p, csize + bsize, 1, NOCAP, NOCAP, &out, NULL),
                     SF_OK);
    one = out.len;
    ck_assert_uint_gt(one, 0);

    sf_wbuf_reset(&out);
    ck_assert_int_eq(sf_msgset_from_batches(b.p, b.len, 1, 0, NOCAP, &out, &used), SF_OK);
    ck_assert_uint_eq(out.len, one);
    ck_assert_uint_eq(used, csize + bsize);
    sf_wbuf_reset(&out);
    ck_assert_int_eq(sf_msgset_from_batches(b.p, b.len, 1, 2 * one - 1, NOCAP, &out, &used),
                     SF_OK);
    ck_assert_uint_eq(out.len, one);
    ck_assert_uint_eq(used, csize + bsize);
    sf_wbuf_reset(&out);
    sf_wbuf_raw(&out, "PRE", 3); /* bytes already there do not count */
    ck_assert_int_eq(sf_msgset_from_batches(b.p, b.len, 1, 2 * one, NOCAP, &out, &used), SF_OK);
    ck_assert_uint_eq(out.len, 3 + 2 * one);
    ck_assert_uint_eq(used, csize + 2 * bsize);
    sf_wbuf_reset(&out);
    ck_assert_int_eq(sf_msgset_from_batches(b.p, b.len, 1, 3 * one, NOCAP, &out, &used), SF_OK);
    ck_assert_uint_eq(out.len, 3 * one);
    ck_assert_uint_eq(used, b.len);
    sf_wbuf_free(&b);
    sf_wbuf_free(&out);
}
END_TEST

START_TEST(test_down_control_only) {
    sf_wbuf_t b, out;
    size_t used = 99;
    sf_wbuf_init(&b);
    sf_wbuf_init(&out);
    ck_assert_int_eq(sf_msgset_from_batches(NULL, 0, 0, NOCAP, NOCAP, &out, &used), SF_OK);
    ck_assert_uint_eq(out.len, 0);
    ck_assert_uint_eq(used, 0);
    build_control(&b, 0);
    build_control(&b, 1);
    ck_assert_int_eq(sf_msgset_from_batches(b.p, b.len, 1, 0, NOCAP, &out, &used), SF_OK);
    ck_assert_uint_eq(out.len, 0);
    ck_assert_uint_eq(used, b.len);
    /* Less than a header: nothing to do yet. */
    ck_assert_int_eq(sf_msgset_from_batches(b.p, 60, 1, 0, NOCAP, &out, &used), SF_OK);
    ck_assert_uint_eq(used, 0);
    sf_wbuf_free(&b);
    sf_wbuf_free(&out);
}
END_TEST

/* Batches that do not parse fail the call, whatever converted before them. */
START_TEST(test_down_errors) {
    sf_recbatch_record_t recs[3];
    sf_wbuf_t b;
    size_t first;
    sf_wbuf_init(&b);
    fx_recs(recs, fx_m1, 3);
    build_batch(&b, 0, 0, 0, recs, 3);
    first = b.len;
    build_batch(&b, 3, SF_COMPRESS_GZIP, 0, recs, 3);

    b.p[first + 40] ^= 1; /* inside the CRC's range */
    down_fail(b.p, b.len, 1, NOCAP, SF_ERR_CORRUPT);
    b.p[first + 40] ^= 1;
    b.p[first + SF_RECBATCH_OFF_MAGIC] = 1; /* not a v2 batch */
    down_fail(b.p, b.len, 1, NOCAP, SF_ERR_MALFORMED);
    b.p[first + SF_RECBATCH_OFF_MAGIC] = 2;
    sf_store_be32(b.p + first + SF_RECBATCH_OFF_BATCH_LENGTH, 10); /* impossible */
    down_fail(b.p, b.len, 1, NOCAP, SF_ERR_MALFORMED);
    sf_store_be32(b.p + first + SF_RECBATCH_OFF_BATCH_LENGTH, (uint32_t)(b.len - first - 12));
    down_fail(b.p, b.len, 2, NOCAP, SF_ERR_INVALID);
    down_fail(b.p, b.len, -1, NOCAP, SF_ERR_INVALID);

    /* zstd: old fetch versions cannot have it, first or later. */
    sf_wbuf_reset(&b);
    build_batch(&b, 0, 0, 0, recs, 3);
    build_batch(&b, 3, SF_COMPRESS_ZSTD, 0, recs, 3);
    down_fail(b.p, b.len, 1, NOCAP, SF_ERR_UNSUPPORTED);
    down_fail(b.p + first, b.len - first, 0, NOCAP, SF_ERR_UNSUPPORTED);

    /* A compressed batch whose records do not decode (CRC valid over the garbage). */
    {
        sf_recbatch_hdr_t t;
        sf_wbuf_t z, bad;
        sf_wbuf_init(&z);
        sf_wbuf_init(&bad);
        memset(&t, 0, sizeof(t));
        t.Magic = 2;
        t.Attributes = SF_COMPRESS_GZIP;
        t.LastOffsetDelta = 1;
        t.RecordCount = 2;
        ck_assert_int_eq(sf_compress(SF_COMPRESS_GZIP, -1, "\x02\x00", 2, &z), SF_OK);
        ck_assert_int_eq(sf_recbatch_build_raw(&bad, &t, z.p, z.len), SF_OK);
        down_fail(bad.p, bad.len, 1, NOCAP, SF_ERR_MALFORMED);
        sf_wbuf_reset(&bad);
        ck_assert_int_eq(sf_recbatch_build_raw(&bad, &t, (const uint8_t *)"junk", 4), SF_OK);
        down_fail(bad.p, bad.len, 1, NOCAP, SF_ERR_CORRUPT);
        sf_wbuf_free(&z);
        sf_wbuf_free(&bad);
    }
    sf_wbuf_free(&b);
}
END_TEST

/* The decompression budget: the first batch past it fails, a later one ends the output. */
START_TEST(test_down_decompress_cap) {
    sf_recbatch_record_t recs[3];
    sf_wbuf_t b, out;
    size_t d1, d2, first, used;
    sf_wbuf_init(&b);
    sf_wbuf_init(&out);
    fx_recs(recs, fx_m1, 3);
    d1 = build_batch(&b, 0, SF_COMPRESS_GZIP, 0, recs, 3);
    first = b.len;
    d2 = build_batch(&b, 3, SF_COMPRESS_LZ4, 0, recs, 2);
    down_fail(b.p, b.len, 1, d1 - 1, SF_ERR_TOOLARGE);
    ck_assert_int_eq(sf_msgset_from_batches(b.p, b.len, 1, NOCAP, d1, &out, &used), SF_OK);
    ck_assert_uint_eq(used, first);
    ck_assert_uint_gt(out.len, 0);
    sf_wbuf_reset(&out);
    ck_assert_int_eq(sf_msgset_from_batches(b.p, b.len, 1, NOCAP, d1 + d2 - 1, &out, &used),
                     SF_OK);
    ck_assert_uint_eq(used, first);
    sf_wbuf_reset(&out);
    ck_assert_int_eq(sf_msgset_from_batches(b.p, b.len, 1, NOCAP, d1 + d2, &out, &used), SF_OK);
    ck_assert_uint_eq(used, b.len);
    /* Uncompressed batches need no budget. */
    sf_wbuf_reset(&b);
    sf_wbuf_reset(&out);
    build_batch(&b, 0, 0, 0, recs, 3);
    ck_assert_int_eq(sf_msgset_from_batches(b.p, b.len, 0, NOCAP, 0, &out, &used), SF_OK);
    ck_assert_uint_eq(used, b.len);
    sf_wbuf_free(&b);
    sf_wbuf_free(&out);
}
END_TEST

static Suite *msgset_suite(void) {
    Suite *s = suite_create("msgset");
    TCase *core = tcase_create("core");
    TCase *limits = tcase_create("limits");
    tcase_add_test(core, test_magic);
    tcase_add_test(core, test_golden_writer);
    tcase_add_test(core, test_up_plain);
    tcase_add_test(core, test_up_wrappers);
    tcase_add_test(core, test_up_lz4_checksums);
    tcase_add_test(core, test_up_lat_wrapper);
    tcase_add_test(core, test_up_lat_plain);
    tcase_add_test(core, test_up_recompress);
    tcase_add_test(core, test_up_mixed_entries);
    tcase_add_test(core, test_down_plain);
    tcase_add_test(core, test_down_compressed);
    tcase_add_test(core, test_down_lat);
    tcase_add_test(core, test_down_sequence);
    tcase_add_test(core, test_roundtrip);
    tcase_add_test(limits, test_up_truncations);
    tcase_add_test(limits, test_up_bad_crc);
    tcase_add_test(limits, test_up_nested);
    tcase_add_test(limits, test_up_mixed_magic);
    tcase_add_test(limits, test_up_unsupported);
    tcase_add_test(limits, test_up_lying_sizes);
    tcase_add_test(limits, test_up_decompress_cap);
    tcase_add_test(limits, test_up_empty_and_args);
    tcase_add_test(limits, test_down_truncations);
    tcase_add_test(limits, test_down_max_out);
    tcase_add_test(limits, test_down_control_only);
    tcase_add_test(limits, test_down_errors);
    tcase_add_test(limits, test_down_decompress_cap);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(msgset_suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
