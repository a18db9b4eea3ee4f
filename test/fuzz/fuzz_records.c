/* Fuzz target for record batches, on both sides of the wire.
 *
 * Input: one flags byte, then a Produce request's records (v2 batches or a legacy message
 * set). The flags choose the broker's validation settings:
 *   bits 0-1  the Produce version: v8, v2 (legacy message sets up-converted), v3, v7;
 *   bit 2     a compacted topic (keys required);
 *   bit 3     message.timestamp.type=LogAppendTime;
 *   bits 4-6  compression.type: producer, then none, gzip, snappy, lz4, zstd (recompression);
 *   bit 7     timestamps bounded to a day around the append time.
 * Then, for each batch that parses: sf_recbatch_validate, and for uncompressed ones the record
 * iterator and the one-pass scan, which must agree (records, timestamps, null keys). The
 * broker's validator runs over the whole input; what it accepts must be valid batches holding
 * the records it counted, and converts down to magic 0 and 1 and back up. Last, the client's
 * consumer decodes the input as a Fetch response's records would be and frees the messages.
 *
 * A libFuzzer target or a corpus replay (replay.h; CI replays test/fuzz/corpus-records). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "consume.h"
#include "err.h"
#include "msgset.h"
#include "recbatch.h"
#include "replay.h"
#include "validator.h"

#define MAX_DECOMPRESSED (4 * 1024 * 1024)
#define NOW_MS 1700000000000LL

const char sf_fuzz_name[] = "fuzz_records";

static void fail(const char *what, int rc) {
    fprintf(stderr, "fuzz_records: %s: %s\n", what, sf_err_str(rc));
    abort();
}

/* The iterator and the one-pass scan over one uncompressed v2 batch must agree. */
static void check_walks(const uint8_t *p, size_t size) {
    sf_recbatch_hdr_t hdr;
    sf_recbatch_iter_t it;
    sf_recbatch_record_t rec;
    sf_recbatch_scan_t scan, seen = {-1, INT64_MAX, 0};
    int32_t n = 0;
    int rc, scanned;
    if (sf_recbatch_iter_init(&it, p, size) != SF_OK)
        return;
    hdr = it.hdr;
    while ((rc = sf_recbatch_iter_next(&it, &rec)) == SF_OK) {
        if (rec.timestamp > seen.max_timestamp)
            seen.max_timestamp = rec.timestamp;
        if (rec.timestamp < seen.min_timestamp)
            seen.min_timestamp = rec.timestamp;
        seen.null_keys += rec.key.len < 0;
        n++;
    }
    scanned = sf_recbatch_records_scan(&hdr, p + SF_RECBATCH_HEADER_SIZE,
                                       size - SF_RECBATCH_HEADER_SIZE, &scan) == SF_OK;
    if (scanned != (rc == SF_ERR_NOTFOUND && n >= 1 && sf_rbuf_remaining(&it.rb) == 0))
        fail("the record scan and the iterator disagree", SF_OK);
    if (scanned && !(hdr.Attributes & SF_RECBATCH_ATTR_LOG_APPEND_TIME) &&
        (scan.max_timestamp != seen.max_timestamp || scan.min_timestamp != seen.min_timestamp ||
         scan.null_keys != seen.null_keys))
        fail("the record scan and the iterator see different records", SF_OK);
}

/* Every batch of @p that parses, one by one. */
static void check_batches(const uint8_t *p, size_t len) {
    size_t pos = 0, size;
    sf_recbatch_hdr_t hdr;
    while (pos < len && sf_recbatch_header_parse(p + pos, len - pos, &hdr, &size) == SF_OK) {
        if (hdr.Magic == 2) {
            int rc = sf_recbatch_validate(p + pos, size, &hdr);
            if (rc == SF_OK && !(hdr.Attributes & SF_RECBATCH_ATTR_COMPRESSION_MASK))
                check_walks(p + pos, size);
        }
        pos += size;
    }
}

static void validate_cfg(uint8_t flags, sf_validate_cfg_t *vc) {
    static const int16_t versions[4] = {8, 2, 3, 7};
    int codec = (flags >> 4) & 7;
    memset(vc, 0, sizeof(*vc));
    vc->produce_version = versions[flags & 3];
    vc->compacted = (flags >> 2) & 1;
    vc->log_append_time = (flags >> 3) & 1;
    vc->codec = codec >= 1 && codec <= 5 ? codec - 1 : -1;
    vc->level = -1;
    vc->now_ms = NOW_MS;
    vc->before_max_ms = vc->after_max_ms = flags & 0x80 ? 86400000LL : INT64_MAX;
    vc->max_decompressed = MAX_DECOMPRESSED;
}

/* What the validator accepted: valid batches with its record count, that convert down to
 * magic 0 and 1 and (when something converted) back up. */
static void check_accepted(const sf_validate_result_t *res) {
    size_t pos = 0, size;
    sf_recbatch_hdr_t hdr;
    int64_t records = 0;
    int8_t magic;
    int rc;
    while (pos < res->len) {
        if ((rc = sf_recbatch_header_parse(res->batches + pos, res->len - pos, &hdr, &size)) !=
                SF_OK ||
            (rc = sf_recbatch_validate(res->batches + pos, size, &hdr)) != SF_OK)
            fail("an accepted batch does not validate", rc);
        records += hdr.RecordCount;
        pos += size;
    }
    if (records != res->records)
        fail("the accepted record count is wrong", SF_OK);
    for (magic = 0; magic <= 1; magic++) {
        sf_wbuf_t down, up;
        sf_wbuf_init(&down);
        sf_wbuf_init(&up);
        rc = sf_msgset_from_batches(res->batches, res->len, magic, MAX_DECOMPRESSED,
                                    MAX_DECOMPRESSED, &down, NULL);
        if (rc != SF_OK && rc != SF_ERR_UNSUPPORTED && rc != SF_ERR_TOOLARGE)
            fail("accepted batches do not convert down", rc);
        if (rc == SF_OK && down.len > 0 &&
            (rc = sf_msgset_to_batch(down.p, down.len, -1, MAX_DECOMPRESSED, &up, NULL)) !=
                SF_OK && rc != SF_ERR_TOOLARGE)
            fail("a converted message set does not convert back", rc);
        sf_wbuf_free(&down);
        sf_wbuf_free(&up);
    }
}

static void check_validator(uint8_t flags, const uint8_t *data, size_t len) {
    uint8_t *copy = malloc(len ? len : 1);
    sf_validate_cfg_t vc;
    sf_validate_result_t res;
    sf_wbuf_t out;
    if (!copy)
        fail("out of memory", SF_ERR_NOMEM);
    memcpy(copy, data, len);
    validate_cfg(flags, &vc);
    sf_wbuf_init(&out);
    if (sf_validate_produce(copy, len, &vc, &out, &res) == SF_OK)
        check_accepted(&res);
    sf_wbuf_free(&out);
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    check_batches(data + 1, size - 1);
    check_validator(data[0], data + 1, size - 1);
    fuzz_consume(data + 1, size - 1, 0, data[0] & 1);
    return 0;
}
