/* Kafka RecordBatch v2 codec (see recbatch.h for the layout). */
#include "recbatch.h"

#include <string.h>

#include "crc32c.h"
#include "err.h"

/* The smallest possible record: length(1) attributes(1) tsDelta(1) offsetDelta(1)
 * key(1) value(1) headerCount(1). */
#define MIN_RECORD_SIZE 7

/* a + b and a - b wrapping like Java's long arithmetic: offsets and timestamps come from the
 * wire and must not overflow a signed type. */
static int64_t add_wrap(int64_t a, int64_t b) {
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

static int64_t sub_wrap(int64_t a, int64_t b) {
    return (int64_t)((uint64_t)a - (uint64_t)b);
}

static void header_decode(const uint8_t *p, sf_recbatch_hdr_t *hdr) {
    hdr->BaseOffset = (int64_t)sf_load_be64(p + SF_RECBATCH_OFF_BASE_OFFSET);
    hdr->BatchLength = (int32_t)sf_load_be32(p + SF_RECBATCH_OFF_BATCH_LENGTH);
    hdr->PartitionLeaderEpoch = (int32_t)sf_load_be32(p + SF_RECBATCH_OFF_LEADER_EPOCH);
    hdr->Magic = (int8_t)p[SF_RECBATCH_OFF_MAGIC];
    hdr->Crc = sf_load_be32(p + SF_RECBATCH_OFF_CRC);
    hdr->Attributes = (int16_t)sf_load_be16(p + SF_RECBATCH_OFF_ATTRIBUTES);
    hdr->LastOffsetDelta = (int32_t)sf_load_be32(p + SF_RECBATCH_OFF_LAST_OFFSET_DELTA);
    hdr->BaseTimestamp = (int64_t)sf_load_be64(p + SF_RECBATCH_OFF_BASE_TIMESTAMP);
    hdr->MaxTimestamp = (int64_t)sf_load_be64(p + SF_RECBATCH_OFF_MAX_TIMESTAMP);
    hdr->ProducerId = (int64_t)sf_load_be64(p + SF_RECBATCH_OFF_PRODUCER_ID);
    hdr->ProducerEpoch = (int16_t)sf_load_be16(p + SF_RECBATCH_OFF_PRODUCER_EPOCH);
    hdr->BaseSequence = (int32_t)sf_load_be32(p + SF_RECBATCH_OFF_BASE_SEQUENCE);
    hdr->RecordCount = (int32_t)sf_load_be32(p + SF_RECBATCH_OFF_RECORD_COUNT);
}

int sf_recbatch_header_parse(const uint8_t *p, size_t len, sf_recbatch_hdr_t *hdr,
                             size_t *batch_size) {
    sf_recbatch_hdr_t tmp;
    size_t size;
    if (!hdr)
        hdr = &tmp;
    if (len < SF_RECBATCH_HEADER_SIZE)
        return SF_AGAIN;
    header_decode(p, hdr);
    if (hdr->BatchLength < SF_RECBATCH_MIN_BATCH_LENGTH)
        return SF_ERR_MALFORMED;
    size = (size_t)hdr->BatchLength + SF_RECBATCH_LOG_OVERHEAD;
    if (batch_size)
        *batch_size = size;
    return len < size ? SF_AGAIN : SF_OK;
}

/* Unsigned LEB128 of at most @maxbytes bytes, not past @end (same limits as buf.h's readers:
 * 5 bytes and 32 bits for varints, 10 bytes for varlongs). Returns 0 on failure. */
static inline int fast_uvarint(const uint8_t **pp, const uint8_t *end, int maxbytes,
                               uint64_t *out) {
    const uint8_t *p = *pp;
    uint64_t v = 0;
    int i;
    for (i = 0; i < maxbytes && p < end; i++) {
        uint8_t b = *p++;
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            if (maxbytes == 5 && v > UINT32_MAX)
                return 0;
            *pp = p;
            *out = v;
            return 1;
        }
    }
    return 0;
}

/* The record walk reads varints raw (still zig-zag encoded: 2v for v >= 0, 1 for -1, other
 * negatives odd). A result carries the position after the varint, NULL when it is malformed;
 * it is returned by value so the walk's cursor stays in a register. */
typedef struct rec_varint {
    const uint8_t *p;
    uint64_t v;
} rec_varint_t;

/* Any varint, with fast_uvarint's limits; kept out of line. */
static __attribute__((noinline)) rec_varint_t rec_varint_slow(const uint8_t *p, const uint8_t *end,
                                                              int maxbytes) {
    rec_varint_t r = {NULL, 0};
    if (fast_uvarint(&p, end, maxbytes, &r.v))
        r.p = p;
    return r;
}

/* One- and two-byte varints (nearly every field of a record) inline, the rest out of line. */
static inline __attribute__((always_inline)) rec_varint_t rec_varint(const uint8_t *p,
                                                                     const uint8_t *end,
                                                                     int maxbytes) {
    if (__builtin_expect(p < end && p[0] < 0x80, 1))
        return (rec_varint_t){p + 1, p[0]};
    if (__builtin_expect(end - p >= 2 && p[1] < 0x80, 1))
        return (rec_varint_t){p + 2, (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7};
    return rec_varint_slow(p, end, maxbytes);
}

/* Skip varint-length bytes (-1 null allowed only if @nullable): the position after them, or
 * NULL. */
static inline __attribute__((always_inline)) const uint8_t *rec_skip_varbytes(const uint8_t *p,
                                                                              const uint8_t *end,
                                                                              int nullable) {
    rec_varint_t r = rec_varint(p, end, 5);
    if (!r.p)
        return NULL;
    if (r.v & 1) /* negative: only -1 (null) is allowed, and only where nullable */
        return r.v == 1 && nullable ? r.p : NULL;
    if ((int64_t)(r.v >> 1) > end - r.p)
        return NULL;
    return r.p + (r.v >> 1);
}

/* Walk a records section: every length stays inside, OffsetDeltas are 0..count-1 in order,
 * header keys are not null and the records fill the section exactly. The same rules as
 * sf_recbatch_iter_next, without building slices (this runs on every produced batch). With
 * @scan, also gather the timestamps (from @base_ts) and null keys. */
static inline __attribute__((always_inline)) int
records_walk(int32_t count, int64_t base_ts, const uint8_t *p, size_t len, sf_recbatch_scan_t *scan) {
    const uint8_t *end = p + len;
    int32_t i, j;
    for (i = 0; i < count; i++) {
        const uint8_t *f, *rend;
        rec_varint_t r = rec_varint(p, end, 5); /* Length */
        if (!r.p || (r.v & 1) || r.v < 2 * (MIN_RECORD_SIZE - 1) ||
            (int64_t)(r.v >> 1) > end - r.p)
            return SF_ERR_MALFORMED;
        rend = r.p + (r.v >> 1);
        r = rec_varint(r.p + 1, rend, 10); /* Attributes, then TimestampDelta */
        if (!r.p)
            return SF_ERR_MALFORMED;
        if (scan) {
            int64_t ts = add_wrap(base_ts, (int64_t)(r.v >> 1) ^ -(int64_t)(r.v & 1));
            if (ts > scan->max_timestamp)
                scan->max_timestamp = ts;
            if (ts < scan->min_timestamp)
                scan->min_timestamp = ts;
        }
        r = rec_varint(r.p, rend, 5); /* OffsetDelta */
        if (!r.p || r.v != 2 * (uint64_t)i)
            return SF_ERR_MALFORMED;
        if (scan && r.p < rend && *r.p == 1) /* a null key: varint -1 */
            scan->null_keys++;
        if (!(f = rec_skip_varbytes(r.p, rend, 1)) || /* Key */
            !(f = rec_skip_varbytes(f, rend, 1)))     /* Value */
            return SF_ERR_MALFORMED;
        r = rec_varint(f, rend, 5); /* HeaderCount */
        if (!r.p || (r.v & 1) || (int64_t)(r.v >> 1) > (rend - r.p) / 2)
            return SF_ERR_MALFORMED;
        f = r.p;
        for (j = 0; j < (int32_t)(r.v >> 1); j++)
            if (!(f = rec_skip_varbytes(f, rend, 0)) || !(f = rec_skip_varbytes(f, rend, 1)))
                return SF_ERR_MALFORMED;
        if (f != rend)
            return SF_ERR_MALFORMED;
        /* The next record starts at rend whatever the fields held, so finding it does not
         * wait for the field walk. */
        p = rend;
    }
    return p == end ? SF_OK : SF_ERR_MALFORMED;
}

int sf_recbatch_records_scan(const sf_recbatch_hdr_t *hdr, const uint8_t *records, size_t len,
                             sf_recbatch_scan_t *scan) {
    scan->max_timestamp = -1;
    scan->min_timestamp = INT64_MAX;
    scan->null_keys = 0;
    if (hdr->RecordCount < 1 || (size_t)hdr->RecordCount > len / MIN_RECORD_SIZE)
        return SF_ERR_MALFORMED;
    return records_walk(hdr->RecordCount, hdr->BaseTimestamp, records, len, scan);
}

int sf_recbatch_validate(const uint8_t *p, size_t len, sf_recbatch_hdr_t *hdr) {
    sf_recbatch_hdr_t tmp;
    size_t size;
    int rc;
    if (!hdr)
        hdr = &tmp;
    /* The magic byte sits before everything v2-specific; check it first so an old-format
     * message set is reported as unsupported rather than malformed. */
    if (len > SF_RECBATCH_OFF_MAGIC && p[SF_RECBATCH_OFF_MAGIC] != 2)
        return SF_ERR_UNSUPPORTED;
    rc = sf_recbatch_header_parse(p, len, hdr, &size);
    if (rc != SF_OK || size != len)
        return SF_ERR_MALFORMED;
    if (sf_crc32c(0, p + SF_RECBATCH_OFF_ATTRIBUTES, len - SF_RECBATCH_OFF_ATTRIBUTES) != hdr->Crc)
        return SF_ERR_CORRUPT;
    if (hdr->RecordCount < 1 || hdr->LastOffsetDelta < 0 ||
        (int64_t)hdr->LastOffsetDelta + 1 != hdr->RecordCount)
        return SF_ERR_MALFORMED;
    /* Compressed records are not decoded here (the broker stores them as produced); an
     * uncompressed batch is walked record by record. */
    if ((hdr->Attributes & SF_RECBATCH_ATTR_COMPRESSION_MASK) == 0) {
        if ((size_t)hdr->RecordCount > (len - SF_RECBATCH_HEADER_SIZE) / MIN_RECORD_SIZE)
            return SF_ERR_MALFORMED;
        return records_walk(hdr->RecordCount, 0, p + SF_RECBATCH_HEADER_SIZE,
                            len - SF_RECBATCH_HEADER_SIZE, NULL);
    }
    return SF_OK;
}

void sf_recbatch_set_base_offset(uint8_t *p, int64_t base_offset) {
    sf_store_be64(p + SF_RECBATCH_OFF_BASE_OFFSET, (uint64_t)base_offset);
}

void sf_recbatch_set_leader_epoch(uint8_t *p, int32_t leader_epoch) {
    sf_store_be32(p + SF_RECBATCH_OFF_LEADER_EPOCH, (uint32_t)leader_epoch);
}

/* ---- iterator ---- */

int sf_recbatch_iter_init(sf_recbatch_iter_t *it, const uint8_t *p, size_t len) {
    size_t size;
    int rc;
    memset(it, 0, sizeof(*it));
    rc = sf_recbatch_header_parse(p, len, &it->hdr, &size);
    if (rc != SF_OK || size != len) {
        it->err = SF_ERR_MALFORMED;
        return it->err;
    }
    if (it->hdr.Magic != 2 || (it->hdr.Attributes & SF_RECBATCH_ATTR_COMPRESSION_MASK)) {
        it->err = SF_ERR_UNSUPPORTED;
        return it->err;
    }
    sf_rbuf_init(&it->rb, p + SF_RECBATCH_HEADER_SIZE, len - SF_RECBATCH_HEADER_SIZE);
    return SF_OK;
}

void sf_recbatch_iter_init_records(sf_recbatch_iter_t *it, const sf_recbatch_hdr_t *hdr,
                                   const uint8_t *records, size_t len) {
    memset(it, 0, sizeof(*it));
    it->hdr = *hdr;
    sf_rbuf_init(&it->rb, records, len);
}

int sf_recbatch_rechdr_read(sf_rbuf_t *rb, sf_recbatch_rechdr_t *h) {
    h->key = sf_rbuf_varbytes(rb);
    h->value = sf_rbuf_varbytes(rb);
    /* A header key is a non-null string. */
    if (!rb->err && h->key.len < 0)
        sf_rbuf_fail(rb);
    return rb->err ? SF_ERR_MALFORMED : SF_OK;
}

int sf_recbatch_iter_next(sf_recbatch_iter_t *it, sf_recbatch_record_t *rec) {
    sf_rbuf_t *rb = &it->rb;
    sf_rbuf_t body;
    sf_slice_t raw;
    int32_t length, delta, i;
    const uint8_t *hstart;

    if (it->err)
        return it->err;
    if (it->index >= it->hdr.RecordCount)
        return SF_ERR_NOTFOUND;
    memset(rec, 0, sizeof(*rec));
    length = sf_rbuf_varint(rb);
    if (rb->err || length < MIN_RECORD_SIZE - 1)
        goto err_parse;
    raw = sf_rbuf_raw(rb, (size_t)length);
    if (rb->err)
        goto err_parse;
    /* Decode inside the record's own length so nothing reads into the next record. */
    sf_rbuf_init(&body, raw.p, (size_t)raw.len);
    rec->attributes = sf_rbuf_i8(&body);
    rec->timestamp = sf_rbuf_varlong(&body);
    delta = sf_rbuf_varint(&body);
    rec->key = sf_rbuf_varbytes(&body);
    rec->value = sf_rbuf_varbytes(&body);
    rec->header_count = sf_rbuf_varint(&body);
    if (body.err || delta != it->index || rec->header_count < 0 ||
        (size_t)rec->header_count > sf_rbuf_remaining(&body) / 2)
        goto err_parse;
    hstart = body.p + body.pos;
    for (i = 0; i < rec->header_count; i++) {
        sf_recbatch_rechdr_t h;
        if (sf_recbatch_rechdr_read(&body, &h) != SF_OK)
            goto err_parse;
    }
    /* The record's length must match its contents exactly. */
    if (sf_rbuf_remaining(&body) != 0)
        goto err_parse;
    rec->headers_raw.p = hstart;
    rec->headers_raw.len = (int32_t)(body.p + body.pos - hstart);
    rec->headers = NULL;
    rec->offset = add_wrap(it->hdr.BaseOffset, delta);
    if (it->hdr.Attributes & SF_RECBATCH_ATTR_LOG_APPEND_TIME)
        rec->timestamp = it->hdr.MaxTimestamp;
    else
        rec->timestamp = add_wrap(rec->timestamp, it->hdr.BaseTimestamp);
    it->index++;
    return SF_OK;

err_parse:
    it->err = SF_ERR_MALFORMED;
    return it->err;
}

/* ---- builder ---- */

/* The encoded size of a zig-zag varint / varlong. */
static size_t varlong_size(int64_t v) {
    uint64_t u = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    size_t n = 1;
    while (u >= 0x80) {
        u >>= 7;
        n++;
    }
    return n;
}

static size_t varbytes_size(sf_slice_t s) {
    return s.len < 0 ? varlong_size(-1) : varlong_size(s.len) + (size_t)s.len;
}

int sf_recbatch_encode_records(sf_wbuf_t *wb, int64_t base_timestamp,
                               const sf_recbatch_record_t *recs, int n) {
    int i, j;
    for (i = 0; i < n; i++) {
        const sf_recbatch_record_t *rec = &recs[i];
        int64_t ts_delta = sub_wrap(rec->timestamp, base_timestamp);
        size_t body;
        if (rec->header_count < 0 || (rec->header_count > 0 && !rec->headers))
            return SF_ERR_INVALID;
        /* Body size first: the record starts with its varint length. */
        body = 1 + varlong_size(ts_delta) + varlong_size(i) + varbytes_size(rec->key) +
               varbytes_size(rec->value) + varlong_size(rec->header_count);
        for (j = 0; j < rec->header_count; j++)
            body += varbytes_size(rec->headers[j].key) + varbytes_size(rec->headers[j].value);
        if (body > INT32_MAX)
            return SF_ERR_TOOLARGE;
        sf_wbuf_varint(wb, (int32_t)body);             /* Length */
        sf_wbuf_i8(wb, 0);                             /* Attributes (unused) */
        sf_wbuf_varlong(wb, ts_delta);                 /* TimestampDelta */
        sf_wbuf_varint(wb, i);                         /* OffsetDelta */
        sf_wbuf_varbytes(wb, rec->key);                /* Key */
        sf_wbuf_varbytes(wb, rec->value);              /* Value */
        sf_wbuf_varint(wb, rec->header_count);         /* HeaderCount */
        for (j = 0; j < rec->header_count; j++) {
            sf_wbuf_varbytes(wb, rec->headers[j].key);   /* HeaderKey */
            sf_wbuf_varbytes(wb, rec->headers[j].value); /* HeaderValue */
        }
    }
    return wb->err;
}

/* Write the 61-byte header from @h with BatchLength and CRC as placeholders; returns the
 * batch's start position in @wb. */
static size_t header_write(sf_wbuf_t *wb, const sf_recbatch_hdr_t *h) {
    size_t start = wb->len;
    sf_wbuf_i64(wb, h->BaseOffset);           /* BaseOffset */
    sf_wbuf_i32(wb, 0);                       /* BatchLength, patched */
    sf_wbuf_i32(wb, h->PartitionLeaderEpoch); /* PartitionLeaderEpoch */
    sf_wbuf_i8(wb, 2);                        /* Magic */
    sf_wbuf_u32(wb, 0);                       /* CRC, patched */
    sf_wbuf_i16(wb, h->Attributes);           /* Attributes */
    sf_wbuf_i32(wb, h->LastOffsetDelta);      /* LastOffsetDelta */
    sf_wbuf_i64(wb, h->BaseTimestamp);        /* BaseTimestamp */
    sf_wbuf_i64(wb, h->MaxTimestamp);         /* MaxTimestamp */
    sf_wbuf_i64(wb, h->ProducerId);           /* ProducerId */
    sf_wbuf_i16(wb, h->ProducerEpoch);        /* ProducerEpoch */
    sf_wbuf_i32(wb, h->BaseSequence);         /* BaseSequence */
    sf_wbuf_i32(wb, h->RecordCount);          /* RecordCount */
    return start;
}

/* Patch BatchLength and CRC of the batch that starts at @start and ends at wb->len. */
static int header_finish(sf_wbuf_t *wb, size_t start) {
    size_t size;
    if (wb->err)
        return wb->err;
    size = wb->len - start;
    if (size - SF_RECBATCH_LOG_OVERHEAD > INT32_MAX)
        return SF_ERR_TOOLARGE;
    sf_store_be32(wb->p + start + SF_RECBATCH_OFF_BATCH_LENGTH,
                  (uint32_t)(size - SF_RECBATCH_LOG_OVERHEAD));
    sf_store_be32(wb->p + start + SF_RECBATCH_OFF_CRC,
                  sf_crc32c(0, wb->p + start + SF_RECBATCH_OFF_ATTRIBUTES,
                            size - SF_RECBATCH_OFF_ATTRIBUTES));
    return SF_OK;
}

int sf_recbatch_build_hdr(sf_wbuf_t *wb, const sf_recbatch_hdr_t *tmpl,
                          const sf_recbatch_record_t *recs, int n) {
    sf_recbatch_hdr_t h = *tmpl;
    size_t start, rollback = wb->len;
    int i, rc;
    if (n < 1 || (h.Attributes & SF_RECBATCH_ATTR_COMPRESSION_MASK))
        return SF_ERR_INVALID;
    h.LastOffsetDelta = n - 1;
    h.RecordCount = n;
    h.MaxTimestamp = recs[0].timestamp;
    for (i = 1; i < n; i++)
        if (recs[i].timestamp > h.MaxTimestamp)
            h.MaxTimestamp = recs[i].timestamp;
    start = header_write(wb, &h);
    rc = sf_recbatch_encode_records(wb, h.BaseTimestamp, recs, n);
    if (rc == SF_OK)
        rc = header_finish(wb, start);
    if (rc != SF_OK && !wb->err)
        wb->len = rollback;
    return rc;
}

int sf_recbatch_build(sf_wbuf_t *wb, int64_t base_offset, int64_t base_timestamp,
                      const sf_recbatch_record_t *recs, int n) {
    sf_recbatch_hdr_t h;
    memset(&h, 0, sizeof(h));
    h.BaseOffset = base_offset;
    h.PartitionLeaderEpoch = -1;
    h.Magic = 2;
    h.BaseTimestamp = base_timestamp;
    h.ProducerId = -1;
    h.ProducerEpoch = -1;
    h.BaseSequence = -1;
    return sf_recbatch_build_hdr(wb, &h, recs, n);
}

int sf_recbatch_build_raw(sf_wbuf_t *wb, const sf_recbatch_hdr_t *tmpl, const uint8_t *records,
                          size_t len) {
    size_t start = header_write(wb, tmpl);
    sf_wbuf_raw(wb, records, len);
    return header_finish(wb, start);
}
