/* The log validator (see validator.h). */
#include "validator.h"

#include <string.h>

#include "compress.h"
#include "crc32c.h"
#include "err.h"
#include "msgset.h"
#include "recbatch.h"

/* One batch being checked. */
typedef struct vbatch {
    uint8_t *p;   /* the batch in the caller's buffer */
    size_t size;  /* its whole size */
    sf_recbatch_hdr_t hdr;
    int codec;
    int64_t max_timestamp; /* from its records */
    const uint8_t *records; /* the records section, decompressed when it was compressed */
    size_t records_len;
    sf_wbuf_t plain; /* owns the decompressed records */
} vbatch_t;

static int fail(sf_validate_result_t *res, int rc, const char *why) {
    res->message = why;
    return rc;
}

/* The header checks: codec, control and transactional bits. */
static int check_header(const vbatch_t *b, const sf_validate_cfg_t *cfg,
                        sf_validate_result_t *res) {
    int16_t attr = b->hdr.Attributes;
    if (b->codec > SF_COMPRESS_ZSTD)
        return fail(res, SF_ERR_CODEC, "unknown compression codec");
    if (b->codec == SF_COMPRESS_ZSTD && cfg->produce_version < 7)
        return fail(res, SF_ERR_CODEC, "zstd needs Produce version 7 or later");
    if (attr & SF_RECBATCH_ATTR_CONTROL)
        return fail(res, SF_ERR_RECORD, "a producer may not write control batches");
    if ((attr & SF_RECBATCH_ATTR_TRANSACTIONAL) && b->hdr.ProducerId < 0)
        return fail(res, SF_ERR_RECORD, "a transactional batch without a producer id");
    if (b->hdr.ProducerId >= 0 && b->hdr.BaseSequence < 0)
        return fail(res, SF_ERR_RECORD, "a batch with a producer id needs a sequence number");
    if (b->hdr.RecordCount < 1 || (int64_t)b->hdr.LastOffsetDelta + 1 != b->hdr.RecordCount)
        return fail(res, SF_ERR_RECORD, "the record count does not match the last offset");
    return SF_OK;
}

/* Make b->records point at the plain records section (decompressing under the cap). */
static int open_records(vbatch_t *b, const sf_validate_cfg_t *cfg, sf_validate_result_t *res) {
    const uint8_t *sec = b->p + SF_RECBATCH_HEADER_SIZE;
    size_t len = b->size - SF_RECBATCH_HEADER_SIZE;
    int rc;
    if (b->codec == SF_COMPRESS_NONE) {
        b->records = sec;
        b->records_len = len;
        return SF_OK;
    }
    rc = sf_decompress((sf_compress_codec_t)b->codec, sec, len, cfg->max_decompressed, &b->plain);
    if (rc == SF_ERR_TOOLARGE)
        return fail(res, SF_ERR_TOOLARGE, "the batch decompresses past the broker's limit");
    if (rc != SF_OK)
        return fail(res, rc == SF_ERR_NOMEM ? rc : SF_ERR_MALFORMED,
                    "the batch does not decompress");
    b->records = b->plain.p;
    b->records_len = b->plain.len;
    return SF_OK;
}

static int timestamp_allowed(int64_t ts, const sf_validate_cfg_t *cfg) {
    return cfg->log_append_time ||
           ((cfg->before_max_ms == INT64_MAX || ts >= cfg->now_ms - cfg->before_max_ms) &&
            (cfg->after_max_ms == INT64_MAX || ts <= cfg->now_ms + cfg->after_max_ms));
}

/* The one-pass walk that nearly every batch passes: SF_OK when the records are well formed,
 * keyed where they must be and timely; anything else goes to check_records_each, which
 * names the failure. */
static int scan_records(vbatch_t *b, const sf_validate_cfg_t *cfg) {
    sf_recbatch_scan_t scan;
    if ((b->hdr.Attributes & SF_RECBATCH_ATTR_LOG_APPEND_TIME) ||
        sf_recbatch_records_scan(&b->hdr, b->records, b->records_len, &scan) != SF_OK ||
        (cfg->compacted && scan.null_keys) || !timestamp_allowed(scan.min_timestamp, cfg) ||
        !timestamp_allowed(scan.max_timestamp, cfg))
        return SF_ERR_RECORD;
    b->max_timestamp = scan.max_timestamp;
    return SF_OK;
}

/* Record by record (the iterator checks lengths, offset deltas and header keys): keys of
 * compacted topics, timestamps, the count. */
static int check_records_each(vbatch_t *b, const sf_validate_cfg_t *cfg,
                              sf_validate_result_t *res) {
    sf_recbatch_iter_t it;
    sf_recbatch_record_t rec;
    int32_t n = 0;
    int rc;
    sf_recbatch_iter_init_records(&it, &b->hdr, b->records, b->records_len);
    b->max_timestamp = -1;
    while ((rc = sf_recbatch_iter_next(&it, &rec)) == SF_OK) {
        if (cfg->compacted && rec.key.len < 0)
            return fail(res, SF_ERR_RECORD, "a compacted topic needs a key on every record");
        if (!timestamp_allowed(rec.timestamp, cfg))
            return fail(res, SF_ERR_TIMESTAMP, "a record timestamp is outside the allowed range");
        if (rec.timestamp > b->max_timestamp)
            b->max_timestamp = rec.timestamp;
        n++;
    }
    if (rc != SF_ERR_NOTFOUND || n != b->hdr.RecordCount || sf_rbuf_remaining(&it.rb) != 0)
        return fail(res, SF_ERR_RECORD, "a record does not decode, or the records do not match "
                                        "the batch's record count");
    return SF_OK;
}

/* Rewrite MaxTimestamp and the timestamp type in place when they differ; reseal the CRC. */
static void fix_timestamp(vbatch_t *b, const sf_validate_cfg_t *cfg) {
    int16_t attr = b->hdr.Attributes & ~SF_RECBATCH_ATTR_LOG_APPEND_TIME;
    int64_t max = b->max_timestamp;
    if (cfg->log_append_time) {
        attr |= SF_RECBATCH_ATTR_LOG_APPEND_TIME;
        max = cfg->now_ms;
    }
    if (attr == b->hdr.Attributes && max == b->hdr.MaxTimestamp)
        return;
    sf_store_be16(b->p + SF_RECBATCH_OFF_ATTRIBUTES, (uint16_t)attr);
    sf_store_be64(b->p + SF_RECBATCH_OFF_MAX_TIMESTAMP, (uint64_t)max);
    sf_store_be32(b->p + SF_RECBATCH_OFF_CRC,
                  sf_crc32c(0, b->p + SF_RECBATCH_OFF_ATTRIBUTES,
                            b->size - SF_RECBATCH_OFF_ATTRIBUTES));
    b->hdr.Attributes = attr;
    b->hdr.MaxTimestamp = max;
}

/* Append @b to @out compressed with @codec (header fixed as fix_timestamp left it). */
static int rebuild(const vbatch_t *b, int codec, int level, sf_wbuf_t *out) {
    sf_recbatch_hdr_t tmpl = b->hdr;
    sf_wbuf_t packed;
    int rc;
    tmpl.Attributes = (int16_t)((b->hdr.Attributes & ~SF_RECBATCH_ATTR_COMPRESSION_MASK) | codec);
    if (codec == SF_COMPRESS_NONE)
        return sf_recbatch_build_raw(out, &tmpl, b->records, b->records_len);
    sf_wbuf_init(&packed);
    rc = sf_compress((sf_compress_codec_t)codec, level, b->records, b->records_len, &packed);
    if (rc == SF_OK)
        rc = sf_recbatch_build_raw(out, &tmpl, packed.p, packed.len);
    sf_wbuf_free(&packed);
    return rc;
}

/* Check one v2 batch at @p (@avail bytes left); fills @b. */
static int validate_batch(uint8_t *p, size_t avail, const sf_validate_cfg_t *cfg, vbatch_t *b,
                          sf_validate_result_t *res) {
    int rc = sf_recbatch_header_parse(p, avail, &b->hdr, &b->size);
    /* As Kafka: a length below any batch is corrupt; a batch cut short leaves no whole batch
     * (ProduceRequest.validateRecords' InvalidRecordException). */
    if (rc == SF_ERR_MALFORMED)
        return fail(res, SF_ERR_CORRUPT, "a batch length is impossible");
    if (rc != SF_OK)
        return fail(res, SF_ERR_RECORD, "a batch is cut short");
    if (b->hdr.Magic != 2)
        return fail(res, SF_ERR_RECORD, "Produce v3 and later carry record batches (magic 2)");
    b->p = p;
    b->codec = b->hdr.Attributes & SF_RECBATCH_ATTR_COMPRESSION_MASK;
    if (b->hdr.Crc != sf_crc32c(0, p + SF_RECBATCH_OFF_ATTRIBUTES, b->size - SF_RECBATCH_OFF_ATTRIBUTES))
        return fail(res, SF_ERR_CORRUPT, "the batch CRC does not match");
    if ((rc = check_header(b, cfg, res)) != SF_OK || (rc = open_records(b, cfg, res)) != SF_OK ||
        (scan_records(b, cfg) != SF_OK && (rc = check_records_each(b, cfg, res)) != SF_OK))
        return rc;
    fix_timestamp(b, cfg);
    return SF_OK;
}

/* Produce v0-v2 with a message set of magic 0 or 1: one v2 batch in @out. */
static int convert_legacy(const uint8_t *p, size_t len, const sf_validate_cfg_t *cfg,
                          sf_wbuf_t *out, sf_validate_result_t *res) {
    vbatch_t b;
    int rc = sf_msgset_to_batch(p, len, cfg->codec, cfg->max_decompressed, out, NULL);
    if (rc != SF_OK)
        return fail(res, rc == SF_ERR_UNSUPPORTED ? SF_ERR_CODEC : rc,
                    "the message set does not convert");
    /* The converted batch goes through the same checks (keys, timestamps, MaxTimestamp). */
    memset(&b, 0, sizeof(b));
    sf_wbuf_init(&b.plain);
    rc = validate_batch(out->p, out->len, cfg, &b, res);
    sf_wbuf_free(&b.plain);
    if (rc != SF_OK)
        return rc;
    res->batches = out->p;
    res->len = out->len;
    res->nbatches = 1;
    res->records = b.hdr.RecordCount;
    return SF_OK;
}

int sf_validate_produce(uint8_t *p, size_t len, const sf_validate_cfg_t *cfg, sf_wbuf_t *out,
                        sf_validate_result_t *res) {
    size_t pos = 0;
    int rebuilt = 0, producer = 0, rc = SF_OK;

    memset(res, 0, sizeof(*res));
    res->bad_batch = -1;
    res->log_append_time = cfg->log_append_time ? cfg->now_ms : -1;
    if (len == 0)
        return fail(res, SF_ERR_RECORD, "no record batch");
    if (cfg->produce_version < 3 && sf_msgset_magic(p, len) >= 0 && sf_msgset_magic(p, len) < 2)
        return convert_legacy(p, len, cfg, out, res);
    while (pos < len && rc == SF_OK) {
        vbatch_t b;
        memset(&b, 0, sizeof(b));
        sf_wbuf_init(&b.plain);
        rc = validate_batch(p + pos, len - pos, cfg, &b, res);
        if (rc == SF_OK && cfg->codec >= 0 && cfg->codec != b.codec) {
            /* compression.type asks for another codec: from here on, build the output. */
            if (!rebuilt)
                sf_wbuf_raw(out, p, pos);
            rebuilt = 1;
            rc = rebuild(&b, cfg->codec, cfg->level, out);
        } else if (rc == SF_OK && rebuilt) {
            sf_wbuf_raw(out, b.p, b.size);
        }
        if (rc == SF_OK && out->err)
            rc = out->err;
        if (rc != SF_OK) {
            res->bad_batch = res->nbatches;
        } else {
            res->nbatches++;
            res->records += b.hdr.RecordCount;
            pos += b.size;
            producer |= b.hdr.ProducerId >= 0;
        }
        sf_wbuf_free(&b.plain);
        /* A retried batch is answered alone, with its first offsets: an idempotent producer's
         * batch must be the partition's only one (Kafka wants one batch from Produce v3). */
        if (rc == SF_OK && producer && res->nbatches > 1) {
            res->bad_batch = res->nbatches - 1;
            rc = fail(res, SF_ERR_RECORD, "a batch with a producer id must be the partition's "
                                          "only batch");
        }
    }
    if (rc != SF_OK)
        return rc;
    res->batches = rebuilt ? out->p : p;
    res->len = rebuilt ? out->len : len;
    return SF_OK;
}
