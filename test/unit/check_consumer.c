/* Unit tests for the consumer's record decoding (client/consumer.h): batches to messages,
 * truncated tails, position skipping, compression, CRC checks, control batches, message
 * chunk ownership. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "compress.h"
#include "consumer.h"
#include "err.h"
#include "recbatch.h"

#define TS0 1700000000000LL
#define CAP (64 * 1024 * 1024)

/* NULL (plain malloc) or a pool, per test run (see main). */
static sf_consumer_pool_t *test_pool;

static sf_slice_t S(const char *s) {
    return sf_slice_cstr(s);
}

static const sf_slice_t null_slice = {NULL, -1};

/* Record i of every test batch: key "k<i>" (null for i % 5 == 4), value "value-<i>" (null for
 * i % 7 == 6), headers: i % 3 of them, keys "" / "h1" / "hdr2", the second one with a null
 * value. */
static char keys[10000][16], vals[10000][32];
static sf_recbatch_rechdr_t hdrs[3] = {{{(const uint8_t *)"", 0}, {(const uint8_t *)"a", 1}},
                                       {{(const uint8_t *)"h1", 2}, {NULL, -1}},
                                       {{(const uint8_t *)"hdr2", 4}, {(const uint8_t *)"xyz", 3}}};

static void make_records(sf_recbatch_record_t *recs, int first, int n) {
    int i;
    memset(recs, 0, (size_t)n * sizeof(*recs));
    for (i = 0; i < n; i++) {
        int r = first + i;
        snprintf(keys[r], sizeof(keys[r]), "k%d", r);
        snprintf(vals[r], sizeof(vals[r]), "value-%d", r);
        recs[i].timestamp = TS0 + r * 10;
        recs[i].key = r % 5 == 4 ? null_slice : S(keys[r]);
        recs[i].value = r % 7 == 6 ? null_slice : S(vals[r]);
        recs[i].header_count = r % 3;
        recs[i].headers = hdrs;
    }
}

/* Append an uncompressed batch of records @first..@first+@n-1 at base offset @first. */
static size_t add_batch(sf_wbuf_t *wb, int first, int n) {
    sf_recbatch_record_t recs[64];
    size_t before = wb->len;
    make_records(recs, first, n);
    ck_assert_int_eq(sf_recbatch_build(wb, first, TS0 + first * 10, recs, n), SF_OK);
    return wb->len - before;
}

/* Append a batch compressed with @codec. */
static size_t add_compressed(sf_wbuf_t *wb, sf_compress_codec_t codec, int first, int n) {
    sf_recbatch_record_t recs[64];
    sf_recbatch_hdr_t h;
    sf_wbuf_t raw, z;
    size_t before = wb->len;
    make_records(recs, first, n);
    sf_wbuf_init(&raw);
    sf_wbuf_init(&z);
    ck_assert_int_eq(sf_recbatch_encode_records(&raw, TS0 + first * 10, recs, n), SF_OK);
    ck_assert_int_eq(sf_compress(codec, -1, raw.p, raw.len, &z), SF_OK);
    memset(&h, 0, sizeof(h));
    h.BaseOffset = first;
    h.PartitionLeaderEpoch = -1;
    h.Magic = 2;
    h.Attributes = (int16_t)codec;
    h.LastOffsetDelta = n - 1;
    h.BaseTimestamp = TS0 + first * 10;
    h.MaxTimestamp = TS0 + (first + n - 1) * 10;
    h.ProducerId = -1;
    h.ProducerEpoch = -1;
    h.BaseSequence = -1;
    h.RecordCount = n;
    ck_assert_int_eq(sf_recbatch_build_raw(wb, &h, z.p, z.len), SF_OK);
    sf_wbuf_free(&raw);
    sf_wbuf_free(&z);
    return wb->len - before;
}

/* Decode @len bytes at @p for cons-t [7] from offset @from. */
static int parse(const uint8_t *p, size_t len, int64_t from, int check_crcs, size_t cap,
                 sf_consumer_parse_t *res) {
    return sf_consumer_parse_records(test_pool, "cons-t", 7, p, len, from, NULL, 0, check_crcs, cap,
                                     res);
}

/* Check that @m is record @r as make_records wrote it. */
static void check_msg(const sf_message_t *m, int r) {
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->err, 0);
    ck_assert_str_eq(m->topic, "cons-t");
    ck_assert_int_eq(m->partition, 7);
    ck_assert(m->offset == r);
    ck_assert(m->timestamp == TS0 + r * 10);
    ck_assert_int_eq(m->timestamp_type, 0);
    if (r % 5 == 4) {
        ck_assert_ptr_null(m->key);
    } else {
        ck_assert_uint_eq(m->key_len, strlen(keys[r]));
        ck_assert(memcmp(m->key, keys[r], m->key_len) == 0);
    }
    if (r % 7 == 6) {
        ck_assert_ptr_null(m->value);
    } else {
        ck_assert_uint_eq(m->value_len, strlen(vals[r]));
        ck_assert(memcmp(m->value, vals[r], m->value_len) == 0);
    }
    ck_assert_uint_eq(m->header_count, (size_t)(r % 3));
    if (r % 3 >= 1) {
        ck_assert_str_eq(m->headers[0].key, "");
        ck_assert_uint_eq(m->headers[0].value_len, 1);
        ck_assert(memcmp(m->headers[0].value, "a", 1) == 0);
    }
    if (r % 3 >= 2) {
        ck_assert_str_eq(m->headers[1].key, "h1");
        ck_assert_ptr_null(m->headers[1].value);
    }
}

/* Parse @wb from @from and check it yields records @first..@last (inclusive) in order. */
static void parse_expect(const uint8_t *p, size_t len, int64_t from, int first, int last,
                         int64_t next, sf_consumer_parse_t *res) {
    sf_message_t *m, *msgs[64];
    int r;
    ck_assert_int_eq(parse(p, len, from, 1, CAP, res), SF_OK);
    ck_assert(res->next_offset == next);
    if (last < first) {
        ck_assert_ptr_null(res->chunk);
        return;
    }
    ck_assert_ptr_nonnull(res->chunk);
    ck_assert_uint_eq(sf_consumer_chunk_remaining(res->chunk), (size_t)(last - first + 1));
    /* Take them all first: the last destroy frees the chunk. */
    for (r = first; r <= last; r++)
        msgs[r - first] = sf_consumer_chunk_take(res->chunk);
    ck_assert_ptr_null(sf_consumer_chunk_take(res->chunk));
    ck_assert_uint_eq(sf_consumer_chunk_remaining(res->chunk), 0);
    for (r = first; r <= last; r++) {
        m = msgs[r - first];
        check_msg(m, r);
        sf_message_destroy(m);
    }
}

START_TEST(test_multi_batch_truncated_tail) {
    sf_wbuf_t wb;
    sf_consumer_parse_t res;
    size_t s1, s2, s3;
    sf_wbuf_init(&wb);
    s1 = add_batch(&wb, 0, 3);
    s2 = add_batch(&wb, 3, 4);
    s3 = add_batch(&wb, 7, 5);
    /* Whole: 12 records, ends on a boundary. */
    parse_expect(wb.p, wb.len, 0, 0, 11, 12, &res);
    ck_assert_int_eq(res.err, 0);
    ck_assert_uint_eq(res.partial_size, 0);
    ck_assert_uint_gt(res.bytes, s1 + s2 + s3);
    /* The last batch cut short: its records are left for the next fetch. */
    parse_expect(wb.p, wb.len - 9, 0, 0, 6, 7, &res);
    ck_assert_int_eq(res.err, 0);
    ck_assert_uint_eq(res.partial_size, s3);
    /* Cut inside the last batch's header: the bytes present are reported. */
    parse_expect(wb.p, s1 + s2 + 20, 0, 0, 6, 7, &res);
    ck_assert_uint_eq(res.partial_size, 20);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_position_skipping) {
    sf_wbuf_t wb;
    sf_consumer_parse_t res;
    sf_wbuf_init(&wb);
    add_batch(&wb, 0, 3);
    add_batch(&wb, 3, 4);
    add_batch(&wb, 7, 5);
    /* A fetch at 5 gets the batch starting at 3: 3 and 4 are skipped. */
    parse_expect(wb.p, wb.len, 5, 5, 11, 12, &res);
    /* Past everything: nothing, the position stays. */
    parse_expect(wb.p, wb.len, 12, 1, 0, 12, &res);
    /* The last record of the last batch only. */
    parse_expect(wb.p, wb.len, 11, 11, 11, 12, &res);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_compressed_batches) {
    static const sf_compress_codec_t codecs[] = {SF_COMPRESS_GZIP, SF_COMPRESS_SNAPPY,
                                                 SF_COMPRESS_LZ4, SF_COMPRESS_ZSTD};
    size_t i;
    for (i = 0; i < sizeof(codecs) / sizeof(codecs[0]); i++) {
        sf_wbuf_t wb;
        sf_consumer_parse_t res;
        sf_wbuf_init(&wb);
        add_batch(&wb, 0, 3);
        add_compressed(&wb, codecs[i], 3, 20);
        add_batch(&wb, 23, 2);
        parse_expect(wb.p, wb.len, 0, 0, 24, 25, &res);
        ck_assert_int_eq(res.err, 0);
        /* Starting inside the compressed batch. */
        parse_expect(wb.p, wb.len, 10, 10, 24, 25, &res);
        sf_wbuf_free(&wb);
    }
}
END_TEST

START_TEST(test_crc_corruption) {
    sf_wbuf_t wb;
    sf_consumer_parse_t res;
    sf_message_t *m;
    size_t s1, s2;
    uint8_t *value;
    sf_wbuf_init(&wb);
    s1 = add_batch(&wb, 0, 3);
    s2 = add_batch(&wb, 3, 4);
    add_batch(&wb, 7, 5);
    /* Flip a byte of "value-3" inside the second batch. */
    value = memmem(wb.p + s1, s2, "value-3", 7);
    ck_assert_ptr_nonnull(value);
    value[6] ^= 0x01;
    /* The first batch is delivered, decoding stops at the second. */
    parse_expect(wb.p, wb.len, 0, 0, 2, 3, &res);
    ck_assert_int_eq(res.err, SF_ERROR_CORRUPT);
    /* Without check.crcs the changed value goes through. */
    ck_assert_int_eq(parse(wb.p, wb.len, 3, 0, CAP, &res), SF_OK);
    ck_assert_int_eq(res.err, 0);
    ck_assert(res.next_offset == 12);
    m = sf_consumer_chunk_take(res.chunk);
    ck_assert(m->offset == 3);
    ck_assert(memcmp(m->value, "value-2", 7) == 0);
    sf_message_destroy(m);
    sf_consumer_chunk_drop(res.chunk);
    sf_wbuf_free(&wb);
}
END_TEST

/* Append a transactional batch of @pid: records @first..@first+@n-1, or (@n 0) its marker at
 * @first. */
static void add_txn_batch(sf_wbuf_t *wb, int64_t pid, int first, int n) {
    sf_recbatch_record_t recs[64], marker;
    sf_recbatch_hdr_t h;
    memset(&h, 0, sizeof(h));
    h.BaseOffset = first;
    h.Magic = 2;
    h.Attributes = SF_RECBATCH_ATTR_TRANSACTIONAL | (n ? 0 : SF_RECBATCH_ATTR_CONTROL);
    h.BaseTimestamp = TS0 + first * 10;
    h.ProducerId = pid;
    h.BaseSequence = n ? 0 : -1;
    make_records(recs, first, n);
    memset(&marker, 0, sizeof(marker));
    marker.timestamp = TS0 + first * 10;
    marker.key = S("\0\0\0\0"); /* version 0, ABORT (a COMMIT is skipped alike) */
    marker.key.len = 4;
    marker.value = S("\0\0\0\0\0\0");
    marker.value.len = 6;
    ck_assert_int_eq(sf_recbatch_build_hdr(wb, &h, n ? recs : &marker, n ? n : 1), SF_OK);
}

/* read_committed: the batches of the aborted transactions the answer lists are skipped up to
 * their markers; a later transaction of the same producer, and other producers', are not. */
START_TEST(test_aborted_transactions_skipped) {
    static const sf_consumer_aborted_t aborted[] = {{7, 9}, {5, 0}}; /* in any order */
    static const int64_t want[] = {3, 4, 6, 7, 11, 12};
    sf_consumer_parse_t res;
    sf_wbuf_t wb;
    size_t i;
    sf_wbuf_init(&wb);
    add_txn_batch(&wb, 5, 0, 2);  /* 0-1: producer 5, aborted */
    add_txn_batch(&wb, 5, 2, 0);  /* 2: its abort marker */
    add_txn_batch(&wb, 6, 3, 2);  /* 3-4: producer 6, committed */
    add_txn_batch(&wb, 6, 5, 0);  /* 5: its commit marker */
    add_batch(&wb, 6, 1);         /* 6: not transactional */
    add_txn_batch(&wb, 5, 7, 1);  /* 7: producer 5's next transaction, committed */
    add_txn_batch(&wb, 5, 8, 0);  /* 8: its marker */
    add_txn_batch(&wb, 7, 9, 1);  /* 9: producer 7, aborted */
    add_txn_batch(&wb, 7, 10, 0); /* 10: its marker */
    add_batch(&wb, 11, 2);        /* 11-12 */
    ck_assert_int_eq(sf_consumer_parse_records(test_pool, "cons-t", 7, wb.p, wb.len, 0, aborted,
                                               2, 1, CAP, &res),
                     SF_OK);
    ck_assert_int_eq(res.err, 0);
    ck_assert(res.next_offset == 13);
    ck_assert_uint_eq(sf_consumer_chunk_remaining(res.chunk), 6);
    for (i = 0; i < 6; i++) {
        sf_message_t *m = sf_consumer_chunk_take(res.chunk);
        ck_assert_int_eq(m->offset, want[i]);
        sf_message_destroy(m);
    }
    sf_wbuf_free(&wb);
    /* read_uncommitted (no list): every record. */
    sf_wbuf_init(&wb);
    add_txn_batch(&wb, 5, 0, 2);
    add_txn_batch(&wb, 5, 2, 0);
    ck_assert_int_eq(parse(wb.p, wb.len, 0, 1, CAP, &res), SF_OK);
    ck_assert_uint_eq(sf_consumer_chunk_remaining(res.chunk), 2);
    sf_consumer_chunk_drop(res.chunk);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_control_batch_skipped) {
    sf_wbuf_t wb;
    int r;
    sf_consumer_parse_t res;
    sf_recbatch_record_t rec;
    sf_recbatch_hdr_t h;
    sf_wbuf_init(&wb);
    add_batch(&wb, 0, 3);
    /* A transaction marker at offset 3 (control + transactional). */
    memset(&rec, 0, sizeof(rec));
    rec.timestamp = TS0;
    rec.key = S("\0\0\0\1");
    rec.key.len = 4;
    rec.value = S("\0\0\0\0\0\0");
    rec.value.len = 6;
    memset(&h, 0, sizeof(h));
    h.BaseOffset = 3;
    h.Magic = 2;
    h.Attributes = SF_RECBATCH_ATTR_CONTROL | SF_RECBATCH_ATTR_TRANSACTIONAL;
    h.BaseTimestamp = TS0;
    h.ProducerId = 1000;
    ck_assert_int_eq(sf_recbatch_build_hdr(&wb, &h, &rec, 1), SF_OK);
    add_batch(&wb, 4, 2);
    ck_assert_int_eq(parse(wb.p, wb.len, 0, 1, CAP, &res), SF_OK);
    ck_assert_int_eq(res.err, 0);
    ck_assert(res.next_offset == 6);
    /* Records 0-2 then 4-5: the marker at 3 is not a message. */
    ck_assert_uint_eq(sf_consumer_chunk_remaining(res.chunk), 5);
    for (r = 0; r < 6; r++) {
        sf_message_t *m;
        if (r == 3)
            continue;
        m = sf_consumer_chunk_take(res.chunk);
        check_msg(m, r);
        sf_message_destroy(m);
    }
    sf_wbuf_free(&wb);
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_recbatch_build_hdr(&wb, &h, &rec, 1), SF_OK);
    /* Only the control batch: no message, but the position moves past it. */
    parse_expect(wb.p, wb.len, 3, 1, 0, 4, &res);
    ck_assert_int_eq(res.err, 0);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_log_append_time) {
    sf_wbuf_t wb, raw;
    sf_consumer_parse_t res;
    sf_recbatch_record_t recs[2];
    sf_recbatch_hdr_t h;
    sf_message_t *m;
    make_records(recs, 0, 2);
    sf_wbuf_init(&wb);
    sf_wbuf_init(&raw);
    ck_assert_int_eq(sf_recbatch_encode_records(&raw, TS0, recs, 2), SF_OK);
    memset(&h, 0, sizeof(h));
    h.BaseOffset = 40;
    h.Magic = 2;
    h.Attributes = SF_RECBATCH_ATTR_LOG_APPEND_TIME;
    h.LastOffsetDelta = 1;
    h.BaseTimestamp = TS0;
    h.MaxTimestamp = TS0 + 99999;
    h.ProducerId = -1;
    h.RecordCount = 2;
    ck_assert_int_eq(sf_recbatch_build_raw(&wb, &h, raw.p, raw.len), SF_OK);
    ck_assert_int_eq(parse(wb.p, wb.len, 40, 1, CAP, &res), SF_OK);
    ck_assert_uint_eq(sf_consumer_chunk_remaining(res.chunk), 2);
    m = sf_consumer_chunk_take(res.chunk);
    ck_assert(m->offset == 40);
    ck_assert(m->timestamp == TS0 + 99999);
    ck_assert_int_eq(m->timestamp_type, 1);
    sf_message_destroy(m);
    sf_consumer_chunk_drop(res.chunk);
    sf_wbuf_free(&wb);
    sf_wbuf_free(&raw);
}
END_TEST

START_TEST(test_message_headers_and_ownership) {
    sf_wbuf_t wb;
    sf_consumer_parse_t res;
    sf_message_t *m5, *m8;
    sf_recbatch_record_t recs[3];
    sf_recbatch_rechdr_t dup[3] = {{{(const uint8_t *)"x", 1}, {(const uint8_t *)"1", 1}},
                                   {{(const uint8_t *)"y", 1}, {(const uint8_t *)"2", 1}},
                                   {{(const uint8_t *)"x", 1}, {(const uint8_t *)"3", 1}}};
    sf_wbuf_init(&wb);
    add_batch(&wb, 0, 9);
    make_records(recs, 9, 3);
    recs[1].header_count = 3;
    recs[1].headers = dup;
    ck_assert_int_eq(sf_recbatch_build(&wb, 9, TS0, recs, 3), SF_OK);
    ck_assert_int_eq(parse(wb.p, wb.len, 5, 1, CAP, &res), SF_OK);
    /* Keep two messages, destroy two, drop the chunk's rest, free the input: the kept ones
     * stay valid. */
    m5 = sf_consumer_chunk_take(res.chunk);
    sf_message_destroy(sf_consumer_chunk_take(res.chunk)); /* 6 */
    ck_assert_uint_eq(sf_consumer_chunk_remaining(res.chunk), 5);
    sf_message_destroy(sf_consumer_chunk_take(res.chunk)); /* 7 */
    m8 = sf_consumer_chunk_take(res.chunk);
    sf_consumer_chunk_drop(res.chunk);
    memset(wb.p, 0xee, wb.len);
    sf_wbuf_free(&wb);
    check_msg(m5, 5);
    check_msg(m8, 8);
    ck_assert_ptr_null(sf_message_header(m5, "nope", 0));
    ck_assert_ptr_nonnull(sf_message_header(m5, "h1", 0));
    sf_message_destroy(m5);
    sf_message_destroy(m8);
}
END_TEST

START_TEST(test_header_lookup) {
    sf_wbuf_t wb;
    sf_consumer_parse_t res;
    sf_recbatch_record_t rec;
    sf_recbatch_rechdr_t dup[3] = {{{(const uint8_t *)"x", 1}, {(const uint8_t *)"1", 1}},
                                   {{(const uint8_t *)"yy", 2}, {(const uint8_t *)"2", 1}},
                                   {{(const uint8_t *)"x", 1}, {(const uint8_t *)"3", 1}}};
    const sf_header_t *h;
    sf_message_t *m;
    memset(&rec, 0, sizeof(rec));
    rec.timestamp = TS0;
    rec.key = null_slice;
    rec.value = S("");
    rec.header_count = 3;
    rec.headers = dup;
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_recbatch_build(&wb, 0, TS0, &rec, 1), SF_OK);
    ck_assert_int_eq(
        sf_consumer_parse_records(test_pool, "t", 0, wb.p, wb.len, 0, NULL, 0, 1, CAP, &res), SF_OK);
    m = sf_consumer_chunk_take(res.chunk);
    ck_assert_ptr_null(m->key);
    ck_assert_ptr_nonnull(m->value); /* empty, not null */
    ck_assert_uint_eq(m->value_len, 0);
    h = sf_message_header(m, "x", 0);
    ck_assert_ptr_nonnull(h);
    ck_assert(memcmp(h->value, "1", 1) == 0);
    h = sf_message_header(m, "x", 1);
    ck_assert(memcmp(h->value, "3", 1) == 0);
    h = sf_message_header(m, "yy", 1);
    ck_assert(memcmp(h->value, "2", 1) == 0);
    ck_assert_ptr_null(sf_message_header(m, "y", 0));
    ck_assert_ptr_null(sf_message_header(m, NULL, 0));
    sf_message_destroy(m);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_error_chunk) {
    sf_consumer_chunk_t *chunk = sf_consumer_chunk_new_error("cons-e", 3, 42, SF_ERROR_CORRUPT);
    sf_message_t *m;
    ck_assert_ptr_nonnull(chunk);
    ck_assert_uint_eq(sf_consumer_chunk_remaining(chunk), 1);
    m = sf_consumer_chunk_take(chunk);
    ck_assert_int_eq(m->err, SF_ERROR_CORRUPT);
    ck_assert_str_eq(m->topic, "cons-e");
    ck_assert_int_eq(m->partition, 3);
    ck_assert(m->offset == 42);
    ck_assert_uint_eq(m->header_count, 0);
    ck_assert_ptr_null(sf_message_header(m, "a", 0));
    sf_message_destroy(m);
    sf_message_destroy(NULL);
    /* Dropping an untaken error event frees it. */
    sf_consumer_chunk_drop(sf_consumer_chunk_new_error("cons-e", 0, 0, 1));
}
END_TEST

/* One record with OffsetDelta @delta, appended to @wb by hand (the builder only writes
 * consecutive deltas). */
static void put_record(sf_wbuf_t *wb, int delta, const char *value) {
    sf_wbuf_t body;
    sf_wbuf_init(&body);
    sf_wbuf_i8(&body, 0);                      /* Attributes */
    sf_wbuf_varlong(&body, delta);             /* TimestampDelta */
    sf_wbuf_varint(&body, delta);              /* OffsetDelta */
    sf_wbuf_varbytes(&body, null_slice);       /* Key */
    sf_wbuf_varbytes(&body, S(value));         /* Value */
    sf_wbuf_varint(&body, 0);                  /* HeaderCount */
    sf_wbuf_varint(wb, (int32_t)body.len);     /* Length */
    sf_wbuf_raw(wb, body.p, body.len);
    sf_wbuf_free(&body);
}

/* A compacted batch keeps its offset range with records missing inside it. */
START_TEST(test_compacted_batch) {
    sf_wbuf_t wb, recs;
    sf_recbatch_hdr_t h;
    sf_consumer_parse_t res;
    sf_message_t *m[3];
    int i;
    sf_wbuf_init(&wb);
    sf_wbuf_init(&recs);
    put_record(&recs, 0, "a");
    put_record(&recs, 2, "c");
    put_record(&recs, 5, "f");
    memset(&h, 0, sizeof(h));
    h.BaseOffset = 100;
    h.Magic = 2;
    h.LastOffsetDelta = 6; /* the last record (delta 6) was removed too */
    h.BaseTimestamp = TS0;
    h.MaxTimestamp = TS0 + 6;
    h.ProducerId = -1;
    h.RecordCount = 3;
    ck_assert_int_eq(sf_recbatch_build_raw(&wb, &h, recs.p, recs.len), SF_OK);
    add_batch(&wb, 107, 2);
    ck_assert_int_eq(parse(wb.p, wb.len, 101, 1, CAP, &res), SF_OK);
    ck_assert_int_eq(res.err, 0);
    ck_assert(res.next_offset == 109);
    ck_assert_uint_eq(sf_consumer_chunk_remaining(res.chunk), 4);
    for (i = 0; i < 2; i++)
        m[i] = sf_consumer_chunk_take(res.chunk);
    ck_assert(m[0]->offset == 102 && memcmp(m[0]->value, "c", 1) == 0);
    ck_assert(m[0]->timestamp == TS0 + 2);
    ck_assert(m[1]->offset == 105 && memcmp(m[1]->value, "f", 1) == 0);
    m[2] = sf_consumer_chunk_take(res.chunk);
    ck_assert(m[2]->offset == 107);
    sf_consumer_chunk_drop(res.chunk);
    for (i = 0; i < 3; i++)
        sf_message_destroy(m[i]);
    /* Deltas that do not increase are malformed. */
    sf_wbuf_reset(&wb);
    sf_wbuf_reset(&recs);
    put_record(&recs, 0, "a");
    put_record(&recs, 0, "b");
    h.RecordCount = 2;
    ck_assert_int_eq(sf_recbatch_build_raw(&wb, &h, recs.p, recs.len), SF_OK);
    parse_expect(wb.p, wb.len, 100, 1, 0, 100, &res);
    ck_assert_int_eq(res.err, SF_ERROR_MALFORMED);
    sf_wbuf_free(&wb);
    sf_wbuf_free(&recs);
}
END_TEST

/* @res delivered the @n records before a bad batch (offsets 0 to @n - 1), then failed with
 * @err; drops them. */
static void expect_delivered_then(sf_consumer_parse_t *res, int n, int err) {
    ck_assert_int_eq(res->err, err);
    ck_assert(res->next_offset == n);
    ck_assert_uint_eq(sf_consumer_chunk_remaining(res->chunk), (size_t)n);
    sf_consumer_chunk_drop(res->chunk);
}

/* A record that does not decode fails its whole batch, without CRC checks too. */
START_TEST(test_malformed_record) {
    sf_wbuf_t wb;
    sf_consumer_parse_t res;
    size_t s1, s2;
    uint8_t *value;
    sf_wbuf_init(&wb);
    s1 = add_batch(&wb, 0, 3);
    s2 = add_batch(&wb, 3, 4);
    /* The length byte of "value-5" (14, zig-zag 7 -> 0x0e) claims 63 bytes. */
    value = memmem(wb.p + s1, s2, "value-5", 7);
    ck_assert_ptr_nonnull(value);
    ck_assert_uint_eq(value[-1], 14);
    value[-1] = 126;
    ck_assert_int_eq(parse(wb.p, wb.len, 0, 0, CAP, &res), SF_OK);
    /* Records 3 and 4 decoded fine but their batch failed: only 0-2 are delivered. */
    expect_delivered_then(&res, 3, SF_ERROR_MALFORMED);
    sf_wbuf_free(&wb);
}
END_TEST

/* ---- limits ---- */

/* Take and destroy every message of a parse, checking each is well formed and in order. */
static void consume_all(sf_consumer_parse_t *res, int64_t from) {
    int64_t last = from - 1;
    size_t i, n;
    if (!res->chunk)
        return;
    /* The last destroy may free the chunk: count first. */
    n = sf_consumer_chunk_remaining(res->chunk);
    for (i = 0; i < n; i++) {
        sf_message_t *m = sf_consumer_chunk_take(res->chunk);
        ck_assert_ptr_nonnull(m);
        ck_assert(m->offset > last);
        ck_assert_msg(m->key == NULL || m->key_len < 1 << 20, "key_len %zu at offset %lld", m->key_len, (long long)m->offset);
        ck_assert(m->value == NULL || m->value_len < 1 << 20);
        last = m->offset;
        sf_message_destroy(m);
    }
}

/* Records cut at every byte, and every byte of them flipped, with CRC checks off (so the
 * decoder itself meets the damage): never a crash or an out-of-bounds read (the sanitizer
 * build runs this too), offsets only move forward. */
START_TEST(test_truncated_and_flipped_everywhere) {
    sf_wbuf_t wb;
    sf_consumer_parse_t res;
    size_t i, n;
    uint8_t *copy;
    sf_wbuf_init(&wb);
    add_batch(&wb, 0, 3);
    add_compressed(&wb, SF_COMPRESS_LZ4, 3, 4);
    add_batch(&wb, 7, 2);
    n = wb.len;
    copy = malloc(n);
    ck_assert_ptr_nonnull(copy);
    for (i = 0; i <= n; i++) {
        memcpy(copy, wb.p, i);
        ck_assert_int_eq(parse(copy, i, 0, 0, CAP, &res), SF_OK);
        ck_assert(res.next_offset >= 0 && res.next_offset <= 9);
        ck_assert_int_eq(res.err, 0);
        consume_all(&res, 0);
    }
    for (i = 0; i < n; i++) {
        memcpy(copy, wb.p, n);
        copy[i] ^= 0xa5;
        ck_assert_int_eq(parse(copy, n, 0, 0, CAP, &res), SF_OK);
        ck_assert(res.next_offset >= 0);
        consume_all(&res, 0);
        /* With CRC checks on, the damage is caught before decoding, or lies outside what
         * the CRC covers (the batch's offset, length, epoch, magic or CRC fields). */
        ck_assert_int_eq(parse(copy, n, 0, 1, CAP, &res), SF_OK);
        consume_all(&res, 0);
    }
    free(copy);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_empty_and_tiny) {
    sf_consumer_parse_t res;
    uint8_t b[16] = {0};
    ck_assert_int_eq(sf_consumer_parse_records(test_pool, "t", 0, b, 0, 5, NULL, 0, 1, CAP, &res), SF_OK);
    ck_assert_ptr_null(res.chunk);
    ck_assert(res.next_offset == 5);
    ck_assert_uint_eq(res.partial_size, 0);
    ck_assert_int_eq(res.err, 0);
    ck_assert_int_eq(sf_consumer_parse_records(test_pool, "t", 0, b, 12, 5, NULL, 0, 1, CAP, &res), SF_OK);
    ck_assert_ptr_null(res.chunk);
    ck_assert_uint_eq(res.partial_size, 12);
    ck_assert_int_eq(res.err, 0);
}
END_TEST

START_TEST(test_old_magic_and_bad_length) {
    sf_wbuf_t wb;
    sf_consumer_parse_t res;
    size_t s1;
    sf_wbuf_init(&wb);
    s1 = add_batch(&wb, 0, 2);
    add_batch(&wb, 2, 2);
    /* Magic 1 in the second batch. */
    wb.p[s1 + SF_RECBATCH_OFF_MAGIC] = 1;
    parse_expect(wb.p, wb.len, 0, 0, 1, 2, &res);
    ck_assert_int_eq(res.err, SF_ERROR_UNSUPPORTED);
    /* BatchLength smaller than a header. */
    wb.p[s1 + SF_RECBATCH_OFF_MAGIC] = 2;
    sf_store_be32(wb.p + s1 + SF_RECBATCH_OFF_BATCH_LENGTH, 10);
    parse_expect(wb.p, wb.len, 0, 0, 1, 2, &res);
    ck_assert_int_eq(res.err, SF_ERROR_MALFORMED);
    /* A BatchLength claiming 2 GiB is a (huge) partial batch, nothing is allocated for it. */
    sf_store_be32(wb.p + s1 + SF_RECBATCH_OFF_BATCH_LENGTH, 0x7ffffff0);
    parse_expect(wb.p, wb.len, 0, 0, 1, 2, &res);
    ck_assert_int_eq(res.err, 0);
    ck_assert_uint_eq(res.partial_size, 0x7ffffff0u + 12);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_lying_record_count) {
    sf_wbuf_t wb;
    sf_consumer_parse_t res;
    size_t s1;
    sf_wbuf_init(&wb);
    s1 = add_batch(&wb, 0, 2);
    add_batch(&wb, 2, 3);
    /* Claim a billion records in the second batch; without check.crcs nothing catches it
     * before decoding, which must fail cleanly after the real records. */
    sf_store_be32(wb.p + s1 + SF_RECBATCH_OFF_RECORD_COUNT, 1000000000);
    ck_assert_int_eq(parse(wb.p, wb.len, 0, 0, CAP, &res), SF_OK);
    expect_delivered_then(&res, 2, SF_ERROR_MALFORMED);
    /* With check.crcs the header change is a CRC mismatch. */
    parse_expect(wb.p, wb.len, 0, 0, 1, 2, &res);
    ck_assert_int_eq(res.err, SF_ERROR_CORRUPT);
    sf_wbuf_free(&wb);
}
END_TEST

/* Header values at the edges of their types: a BaseOffset whose batch would end past
 * INT64_MAX, or a negative one, is malformed (it used to wrap around, the batch then looked
 * already consumed and the position never moved); LastOffsetDelta INT32_MAX is legal; a
 * timestamp sum that overflows wraps. */
START_TEST(test_header_extremes) {
    sf_wbuf_t wb;
    sf_consumer_parse_t res;
    sf_message_t *m;
    size_t s1;
    sf_wbuf_init(&wb);
    s1 = add_batch(&wb, 0, 2);
    add_batch(&wb, 2, 2);
    /* BaseOffset is outside the CRC: checked both ways. */
    sf_store_be64(wb.p + s1 + SF_RECBATCH_OFF_BASE_OFFSET, (uint64_t)(INT64_MAX - 1));
    parse_expect(wb.p, wb.len, 0, 0, 1, 2, &res);
    ck_assert_int_eq(res.err, SF_ERROR_MALFORMED);
    sf_store_be64(wb.p + s1 + SF_RECBATCH_OFF_BASE_OFFSET, (uint64_t)(int64_t)-5);
    parse_expect(wb.p, wb.len, 0, 0, 1, 2, &res);
    ck_assert_int_eq(res.err, SF_ERROR_MALFORMED);
    /* Alone, the bad batch must not look consumed either. */
    ck_assert_int_eq(parse(wb.p + s1, wb.len - s1, 0, 0, CAP, &res), SF_OK);
    ck_assert_ptr_null(res.chunk);
    ck_assert_int_eq(res.err, SF_ERROR_MALFORMED);
    ck_assert(res.next_offset == 0);
    /* The largest BaseOffset whose batch still ends inside int64 decodes. */
    sf_store_be64(wb.p + s1 + SF_RECBATCH_OFF_BASE_OFFSET, (uint64_t)(INT64_MAX - 2));
    ck_assert_int_eq(parse(wb.p + s1, wb.len - s1, INT64_MAX - 2, 1, CAP, &res), SF_OK);
    ck_assert_int_eq(res.err, 0);
    ck_assert(res.next_offset == INT64_MAX);
    ck_assert_uint_eq(sf_consumer_chunk_remaining(res.chunk), 2);
    sf_consumer_chunk_drop(res.chunk);
    sf_store_be64(wb.p + s1 + SF_RECBATCH_OFF_BASE_OFFSET, 2);
    /* LastOffsetDelta INT32_MAX (a compacted batch's range may be that wide). */
    sf_store_be32(wb.p + s1 + SF_RECBATCH_OFF_LAST_OFFSET_DELTA, INT32_MAX);
    ck_assert_int_eq(parse(wb.p, wb.len, 0, 0, CAP, &res), SF_OK);
    ck_assert_int_eq(res.err, 0);
    ck_assert(res.next_offset == 2 + (int64_t)INT32_MAX + 1);
    ck_assert_uint_eq(sf_consumer_chunk_remaining(res.chunk), 4);
    sf_consumer_chunk_drop(res.chunk);
    sf_store_be32(wb.p + s1 + SF_RECBATCH_OFF_LAST_OFFSET_DELTA, 1);
    /* BaseTimestamp INT64_MAX plus the second record's delta of 10 wraps. */
    sf_store_be64(wb.p + s1 + SF_RECBATCH_OFF_BASE_TIMESTAMP, (uint64_t)INT64_MAX);
    ck_assert_int_eq(parse(wb.p, wb.len, 3, 0, CAP, &res), SF_OK);
    ck_assert_int_eq(res.err, 0);
    m = sf_consumer_chunk_take(res.chunk);
    ck_assert_ptr_nonnull(m);
    ck_assert(m->offset == 3);
    ck_assert(m->timestamp == INT64_MIN + 9);
    sf_consumer_chunk_drop(res.chunk);
    sf_message_destroy(m);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_decompression_cap) {
    sf_wbuf_t wb;
    sf_consumer_parse_t res;
    sf_wbuf_init(&wb);
    add_batch(&wb, 0, 2);
    add_compressed(&wb, SF_COMPRESS_ZSTD, 2, 30);
    /* The records of 30 messages are far more than 64 bytes. */
    ck_assert_int_eq(parse(wb.p, wb.len, 0, 1, 64, &res), SF_OK);
    expect_delivered_then(&res, 2, SF_ERROR_TOOLARGE);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_garbage_compressed) {
    sf_wbuf_t wb;
    sf_consumer_parse_t res;
    sf_recbatch_hdr_t h;
    static const uint8_t junk[] = "this is not a gzip stream at all";
    sf_wbuf_init(&wb);
    memset(&h, 0, sizeof(h));
    h.BaseOffset = 0;
    h.Magic = 2;
    h.Attributes = SF_COMPRESS_GZIP;
    h.LastOffsetDelta = 0;
    h.RecordCount = 1;
    h.ProducerId = -1;
    ck_assert_int_eq(sf_recbatch_build_raw(&wb, &h, junk, sizeof(junk)), SF_OK);
    parse_expect(wb.p, wb.len, 0, 1, 0, 0, &res);
    ck_assert_int_eq(res.err, SF_ERROR_MALFORMED);
    /* Codec 6 does not exist. */
    sf_wbuf_reset(&wb);
    h.Attributes = 6;
    ck_assert_int_eq(sf_recbatch_build_raw(&wb, &h, junk, sizeof(junk)), SF_OK);
    parse_expect(wb.p, wb.len, 0, 1, 0, 0, &res);
    ck_assert_int_eq(res.err, SF_ERROR_UNSUPPORTED);
    sf_wbuf_free(&wb);
}
END_TEST

/* A compressed batch whose payload decompresses to nothing: no record comes out of it, and
 * one that claims records is malformed (never arithmetic on an absent buffer). */
START_TEST(test_compressed_empty) {
    static const sf_compress_codec_t codecs[] = {SF_COMPRESS_GZIP, SF_COMPRESS_SNAPPY,
                                                 SF_COMPRESS_LZ4, SF_COMPRESS_ZSTD};
    size_t i;
    for (i = 0; i < sizeof(codecs) / sizeof(codecs[0]); i++) {
        sf_wbuf_t wb, z;
        sf_recbatch_hdr_t h;
        sf_consumer_parse_t res;
        sf_wbuf_init(&wb);
        sf_wbuf_init(&z);
        ck_assert_int_eq(sf_compress(codecs[i], -1, "", 0, &z), SF_OK);
        memset(&h, 0, sizeof(h));
        h.BaseOffset = 5;
        h.Magic = 2;
        h.Attributes = (int16_t)codecs[i];
        h.LastOffsetDelta = 0;
        h.RecordCount = 0;
        h.ProducerId = -1;
        ck_assert_int_eq(sf_recbatch_build_raw(&wb, &h, z.p, z.len), SF_OK);
        add_batch(&wb, 6, 2);
        /* The empty batch is passed over; the next one is delivered. */
        parse_expect(wb.p, wb.len, 5, 6, 7, 8, &res);
        ck_assert_int_eq(res.err, 0);
        /* The same empty payload claiming one record. */
        sf_wbuf_reset(&wb);
        h.RecordCount = 1;
        ck_assert_int_eq(sf_recbatch_build_raw(&wb, &h, z.p, z.len), SF_OK);
        parse_expect(wb.p, wb.len, 5, 1, 0, 5, &res);
        ck_assert_int_eq(res.err, SF_ERROR_MALFORMED);
        sf_wbuf_free(&z);
        sf_wbuf_free(&wb);
    }
}
END_TEST

/* Large chunks come from the pool and go back to it; a message outlives the pool's owner. */
START_TEST(test_pool_reuse) {
    sf_consumer_pool_t *pool = sf_consumer_pool_new();
    sf_consumer_parse_t res;
    sf_message_t *m;
    sf_wbuf_t wb;
    int i;
    ck_assert_ptr_nonnull(pool);
    sf_wbuf_init(&wb);
    for (i = 0; i < 200; i++)
        add_batch(&wb, i * 50, 50);
    ck_assert_uint_gt(wb.len, 64 * 1024);
    for (i = 0; i < 3; i++) {
        ck_assert_int_eq(sf_consumer_parse_records(pool, "cons-t", 7, wb.p, wb.len, 0, NULL, 0, 1, CAP,
                                                   &res),
                         SF_OK);
        ck_assert_uint_eq(sf_consumer_chunk_remaining(res.chunk), 10000);
        m = sf_consumer_chunk_take(res.chunk);
        check_msg(m, 0);
        sf_consumer_chunk_drop(res.chunk);
        if (i < 2) {
            sf_message_destroy(m);
        } else {
            /* The owner lets go while a message still lives. */
            sf_consumer_pool_release(pool);
            check_msg(m, 0);
            sf_message_destroy(m);
        }
    }
    sf_wbuf_free(&wb);
}
END_TEST

static Suite *consumer_suite(void) {
    Suite *s = suite_create("consumer");
    TCase *core = tcase_create("core"), *limits = tcase_create("limits");
    tcase_add_test(core, test_multi_batch_truncated_tail);
    tcase_add_test(core, test_position_skipping);
    tcase_add_test(core, test_compressed_batches);
    tcase_add_test(core, test_crc_corruption);
    tcase_add_test(core, test_control_batch_skipped);
    tcase_add_test(core, test_aborted_transactions_skipped);
    tcase_add_test(core, test_log_append_time);
    tcase_add_test(core, test_message_headers_and_ownership);
    tcase_add_test(core, test_header_lookup);
    tcase_add_test(core, test_error_chunk);
    tcase_add_test(core, test_pool_reuse);
    tcase_add_test(core, test_compacted_batch);
    tcase_add_test(limits, test_empty_and_tiny);
    tcase_add_test(limits, test_old_magic_and_bad_length);
    tcase_add_test(limits, test_lying_record_count);
    tcase_add_test(limits, test_header_extremes);
    tcase_add_test(limits, test_decompression_cap);
    tcase_add_test(limits, test_garbage_compressed);
    tcase_add_test(limits, test_compressed_empty);
    tcase_add_test(limits, test_malformed_record);
    tcase_add_test(limits, test_truncated_and_flipped_everywhere);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(consumer_suite());
    int failed;
    /* Everything once with malloc'd chunks, once with pooled ones. */
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    test_pool = sf_consumer_pool_new();
    sr = srunner_create(consumer_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed += srunner_ntests_failed(sr);
    srunner_free(sr);
    sf_consumer_pool_release(test_pool);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
