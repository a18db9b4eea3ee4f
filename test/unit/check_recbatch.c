/* Unit tests for common/recbatch (RecordBatch v2 parse, validate, iterate, build). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "crc32c.h"
#include "err.h"
#include "recbatch.h"

/* A batch produced by kafka-python 2.0 (DefaultRecordBatchBuilder, magic 2, no compression):
 * record 0: ts 1700000000000, key "k1", value "hello"; record 1: ts +5, null key, value
 * "world", header h=v. */
static const char golden_hex[] =
    "00000000000000000000004f00000000024469c88d0000000000010000018bcfe568000000018bcfe568"
    "05ffffffffffffffffffffffffffff000000021a000000046b310a68656c6c6f001e000a02010a776f72"
    "6c640202680276";

static size_t unhex(const char *hex, uint8_t *out, size_t cap) {
    size_t n = strlen(hex) / 2, i;
    ck_assert_uint_le(n, cap);
    for (i = 0; i < n; i++) {
        unsigned v;
        ck_assert_int_eq(sscanf(hex + 2 * i, "%2x", &v), 1);
        out[i] = (uint8_t)v;
    }
    return n;
}

static sf_slice_t S(const char *s) {
    return sf_slice_cstr(s);
}

static const sf_slice_t null_slice = {NULL, -1};

/* The golden batch's records, for the builder. */
static void golden_records(sf_recbatch_record_t recs[2], sf_recbatch_rechdr_t *h) {
    memset(recs, 0, 2 * sizeof(*recs));
    h->key = S("h");
    h->value = S("v");
    recs[0].timestamp = 1700000000000LL;
    recs[0].key = S("k1");
    recs[0].value = S("hello");
    recs[1].timestamp = 1700000000005LL;
    recs[1].key = null_slice;
    recs[1].value = S("world");
    recs[1].header_count = 1;
    recs[1].headers = h;
}

START_TEST(test_golden_parse) {
    uint8_t b[256];
    size_t n = unhex(golden_hex, b, sizeof(b)), size = 0;
    sf_recbatch_hdr_t hdr;
    sf_recbatch_scan_t scan;
    sf_recbatch_iter_t it;
    sf_recbatch_record_t rec;
    sf_recbatch_rechdr_t h;
    sf_rbuf_t rb;

    ck_assert_int_eq(sf_recbatch_header_parse(b, n, &hdr, &size), SF_OK);
    ck_assert_uint_eq(size, n);
    ck_assert_int_eq(hdr.BatchLength, 79);
    ck_assert_int_eq(hdr.Magic, 2);
    ck_assert_uint_eq(hdr.Crc, 0x4469c88d);
    ck_assert_int_eq(hdr.LastOffsetDelta, 1);
    ck_assert(hdr.BaseTimestamp == 1700000000000LL);
    ck_assert(hdr.MaxTimestamp == 1700000000005LL);
    ck_assert(hdr.ProducerId == -1);
    ck_assert_int_eq(hdr.RecordCount, 2);
    /* The CRC32C covers Attributes..end. */
    ck_assert_uint_eq(sf_crc32c(0, b + 21, n - 21), 0x4469c88d);
    ck_assert_int_eq(sf_recbatch_validate(b, n, &hdr), SF_OK);
    ck_assert_int_eq(sf_recbatch_records_scan(&hdr, b + SF_RECBATCH_HEADER_SIZE,
                                              n - SF_RECBATCH_HEADER_SIZE, &scan),
                     SF_OK);
    ck_assert(scan.min_timestamp == 1700000000000LL && scan.max_timestamp == 1700000000005LL);
    ck_assert_int_eq(scan.null_keys, 1);

    ck_assert_int_eq(sf_recbatch_iter_init(&it, b, n), SF_OK);
    ck_assert_int_eq(sf_recbatch_iter_next(&it, &rec), SF_OK);
    ck_assert(rec.offset == 0);
    ck_assert(rec.timestamp == 1700000000000LL);
    ck_assert(sf_slice_eq(rec.key, "k1"));
    ck_assert(sf_slice_eq(rec.value, "hello"));
    ck_assert_int_eq(rec.header_count, 0);
    ck_assert_int_eq(sf_recbatch_iter_next(&it, &rec), SF_OK);
    ck_assert(rec.offset == 1);
    ck_assert(rec.timestamp == 1700000000005LL);
    ck_assert_int_eq(rec.key.len, -1);
    ck_assert(sf_slice_eq(rec.value, "world"));
    ck_assert_int_eq(rec.header_count, 1);
    sf_rbuf_init(&rb, rec.headers_raw.p, (size_t)rec.headers_raw.len);
    ck_assert_int_eq(sf_recbatch_rechdr_read(&rb, &h), SF_OK);
    ck_assert(sf_slice_eq(h.key, "h"));
    ck_assert(sf_slice_eq(h.value, "v"));
    ck_assert_uint_eq(sf_rbuf_remaining(&rb), 0);
    ck_assert_int_eq(sf_recbatch_iter_next(&it, &rec), SF_ERR_NOTFOUND);
}
END_TEST

/* Our builder produces the very bytes kafka-python does. */
START_TEST(test_golden_build) {
    uint8_t b[256];
    size_t n = unhex(golden_hex, b, sizeof(b));
    sf_recbatch_record_t recs[2];
    sf_recbatch_rechdr_t h;
    sf_recbatch_hdr_t tmpl;
    sf_wbuf_t wb;

    golden_records(recs, &h);
    memset(&tmpl, 0, sizeof(tmpl));
    tmpl.PartitionLeaderEpoch = 0;
    tmpl.BaseTimestamp = 1700000000000LL;
    tmpl.ProducerId = -1;
    tmpl.ProducerEpoch = -1;
    tmpl.BaseSequence = -1;
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_recbatch_build_hdr(&wb, &tmpl, recs, 2), SF_OK);
    ck_assert_uint_eq(wb.len, n);
    ck_assert_int_eq(memcmp(wb.p, b, n), 0);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_build_roundtrip) {
    sf_recbatch_record_t recs[50];
    sf_recbatch_rechdr_t hs[3];
    char keys[50][16];
    sf_recbatch_hdr_t hdr;
    sf_recbatch_scan_t scan;
    sf_recbatch_iter_t it;
    sf_recbatch_record_t rec;
    sf_wbuf_t wb;
    size_t size;
    int i;

    hs[0].key = S("a");
    hs[0].value = S("1");
    hs[1].key = S("b");
    hs[1].value = null_slice;
    hs[2].key = S("");
    hs[2].value = S("");
    memset(recs, 0, sizeof(recs));
    for (i = 0; i < 50; i++) {
        snprintf(keys[i], sizeof(keys[i]), "key-%d", i);
        recs[i].timestamp = 1000 + (i * 7) % 13; /* not monotonic */
        recs[i].key = S(keys[i]);
        recs[i].value = i % 5 ? S("some value bytes") : null_slice;
        recs[i].header_count = i % 4;
        if (recs[i].header_count > 3)
            recs[i].header_count = 3;
        recs[i].headers = hs;
    }
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_recbatch_build(&wb, 1234, 1000, recs, 50), SF_OK);
    ck_assert_int_eq(sf_recbatch_header_parse(wb.p, wb.len, &hdr, &size), SF_OK);
    ck_assert_uint_eq(size, wb.len);
    ck_assert_int_eq(sf_recbatch_validate(wb.p, wb.len, &hdr), SF_OK);
    ck_assert(hdr.BaseOffset == 1234);
    ck_assert_int_eq(hdr.PartitionLeaderEpoch, -1);
    ck_assert(hdr.MaxTimestamp == 1012);
    ck_assert_int_eq(hdr.RecordCount, 50);
    ck_assert_int_eq(hdr.LastOffsetDelta, 49);

    /* The one-pass scan sees the same timestamps; these records all have keys. */
    ck_assert_int_eq(sf_recbatch_records_scan(&hdr, wb.p + SF_RECBATCH_HEADER_SIZE,
                                              wb.len - SF_RECBATCH_HEADER_SIZE, &scan),
                     SF_OK);
    ck_assert(scan.max_timestamp == 1012 && scan.min_timestamp == 1000);
    ck_assert_int_eq(scan.null_keys, 0);
    ck_assert_int_eq(sf_recbatch_records_scan(&hdr, wb.p + SF_RECBATCH_HEADER_SIZE,
                                              wb.len - SF_RECBATCH_HEADER_SIZE - 1, &scan),
                     SF_ERR_MALFORMED);

    ck_assert_int_eq(sf_recbatch_iter_init(&it, wb.p, wb.len), SF_OK);
    for (i = 0; i < 50; i++) {
        sf_rbuf_t rb;
        sf_recbatch_rechdr_t h;
        int j;
        ck_assert_int_eq(sf_recbatch_iter_next(&it, &rec), SF_OK);
        ck_assert(rec.offset == 1234 + i);
        ck_assert(rec.timestamp == recs[i].timestamp);
        ck_assert(sf_slice_eq(rec.key, keys[i]));
        if (i % 5)
            ck_assert(sf_slice_eq(rec.value, "some value bytes"));
        else
            ck_assert_int_eq(rec.value.len, -1);
        ck_assert_int_eq(rec.header_count, recs[i].header_count);
        sf_rbuf_init(&rb, rec.headers_raw.p, (size_t)rec.headers_raw.len);
        for (j = 0; j < rec.header_count; j++) {
            ck_assert_int_eq(sf_recbatch_rechdr_read(&rb, &h), SF_OK);
            ck_assert_int_eq(h.key.len, hs[j].key.len);
            ck_assert_int_eq(h.value.len, hs[j].value.len);
        }
    }
    ck_assert_int_eq(sf_recbatch_iter_next(&it, &rec), SF_ERR_NOTFOUND);

    /* The setters touch only fields outside the CRC. */
    sf_recbatch_set_base_offset(wb.p, 99);
    sf_recbatch_set_leader_epoch(wb.p, 7);
    ck_assert_int_eq(sf_recbatch_validate(wb.p, wb.len, &hdr), SF_OK);
    ck_assert(hdr.BaseOffset == 99);
    ck_assert_int_eq(hdr.PartitionLeaderEpoch, 7);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_log_append_time) {
    sf_recbatch_record_t recs[2];
    sf_recbatch_rechdr_t h;
    sf_recbatch_hdr_t tmpl;
    sf_recbatch_iter_t it;
    sf_recbatch_record_t rec;
    sf_wbuf_t wb;
    golden_records(recs, &h);
    memset(&tmpl, 0, sizeof(tmpl));
    tmpl.Attributes = SF_RECBATCH_ATTR_LOG_APPEND_TIME;
    tmpl.BaseTimestamp = 1700000000000LL;
    tmpl.ProducerId = -1;
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_recbatch_build_hdr(&wb, &tmpl, recs, 2), SF_OK);
    ck_assert_int_eq(sf_recbatch_iter_init(&it, wb.p, wb.len), SF_OK);
    ck_assert_int_eq(sf_recbatch_iter_next(&it, &rec), SF_OK);
    /* Every record of a LogAppendTime batch carries MaxTimestamp. */
    ck_assert(rec.timestamp == 1700000000005LL);
    sf_wbuf_free(&wb);
}
END_TEST

/* A compressed batch is accepted on its CRC and counts without decoding its records. */
START_TEST(test_compressed_opaque) {
    static const uint8_t junk[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    sf_recbatch_hdr_t tmpl, hdr;
    sf_recbatch_iter_t it;
    sf_wbuf_t wb;
    memset(&tmpl, 0, sizeof(tmpl));
    tmpl.Attributes = 4; /* zstd */
    tmpl.LastOffsetDelta = 99;
    tmpl.RecordCount = 100;
    tmpl.ProducerId = -1;
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_recbatch_build_raw(&wb, &tmpl, junk, sizeof(junk)), SF_OK);
    ck_assert_int_eq(sf_recbatch_validate(wb.p, wb.len, &hdr), SF_OK);
    ck_assert_int_eq(hdr.RecordCount, 100);
    ck_assert_int_eq(sf_recbatch_iter_init(&it, wb.p, wb.len), SF_ERR_UNSUPPORTED);
    wb.p[wb.len - 1] ^= 1;
    ck_assert_int_eq(sf_recbatch_validate(wb.p, wb.len, &hdr), SF_ERR_CORRUPT);
    sf_wbuf_free(&wb);
}
END_TEST

/* Re-sign a batch after editing a covered field. */
static void fix_crc(uint8_t *b, size_t n) {
    sf_store_be32(b + SF_RECBATCH_OFF_CRC, sf_crc32c(0, b + 21, n - 21));
}

START_TEST(test_corrupt_crc) {
    uint8_t b[256];
    size_t n = unhex(golden_hex, b, sizeof(b)), i;
    /* Any single bit flipped from Attributes on breaks the CRC. */
    for (i = SF_RECBATCH_OFF_ATTRIBUTES; i < n; i++) {
        b[i] ^= 0x10;
        ck_assert_int_eq(sf_recbatch_validate(b, n, NULL), SF_ERR_CORRUPT);
        b[i] ^= 0x10;
    }
    b[SF_RECBATCH_OFF_CRC] ^= 1;
    ck_assert_int_eq(sf_recbatch_validate(b, n, NULL), SF_ERR_CORRUPT);
    b[SF_RECBATCH_OFF_CRC] ^= 1;
    ck_assert_int_eq(sf_recbatch_validate(b, n, NULL), SF_OK);
}
END_TEST

START_TEST(test_wrong_count) {
    uint8_t b[256];
    size_t n = unhex(golden_hex, b, sizeof(b));
    /* RecordCount 3 with LastOffsetDelta 1. */
    sf_store_be32(b + SF_RECBATCH_OFF_RECORD_COUNT, 3);
    fix_crc(b, n);
    ck_assert_int_eq(sf_recbatch_validate(b, n, NULL), SF_ERR_MALFORMED);
    /* Consistent count 3 but only two records present. */
    sf_store_be32(b + SF_RECBATCH_OFF_LAST_OFFSET_DELTA, 2);
    fix_crc(b, n);
    ck_assert_int_eq(sf_recbatch_validate(b, n, NULL), SF_ERR_MALFORMED);
    /* Count 1: a record left over. */
    sf_store_be32(b + SF_RECBATCH_OFF_RECORD_COUNT, 1);
    sf_store_be32(b + SF_RECBATCH_OFF_LAST_OFFSET_DELTA, 0);
    fix_crc(b, n);
    ck_assert_int_eq(sf_recbatch_validate(b, n, NULL), SF_ERR_MALFORMED);
    /* Count 0. */
    sf_store_be32(b + SF_RECBATCH_OFF_RECORD_COUNT, 0);
    sf_store_be32(b + SF_RECBATCH_OFF_LAST_OFFSET_DELTA, (uint32_t)-1);
    fix_crc(b, n);
    ck_assert_int_eq(sf_recbatch_validate(b, n, NULL), SF_ERR_MALFORMED);
}
END_TEST

START_TEST(test_offset_delta_order) {
    uint8_t b[256];
    size_t n = unhex(golden_hex, b, sizeof(b));
    /* Record 0 takes 1 + 13 bytes; record 1 is Length, Attributes, TimestampDelta,
     * OffsetDelta... */
    size_t r1 = SF_RECBATCH_HEADER_SIZE + 1 + 13;
    ck_assert_uint_eq(b[r1 + 3], 0x02); /* OffsetDelta 1 */
    b[r1 + 3] = 0x00;                   /* -> 0: out of order */
    fix_crc(b, n);
    ck_assert_int_eq(sf_recbatch_validate(b, n, NULL), SF_ERR_MALFORMED);
}
END_TEST

START_TEST(test_magic_1) {
    uint8_t b[256];
    size_t n = unhex(golden_hex, b, sizeof(b));
    b[SF_RECBATCH_OFF_MAGIC] = 1;
    ck_assert_int_eq(sf_recbatch_validate(b, n, NULL), SF_ERR_UNSUPPORTED);
    b[SF_RECBATCH_OFF_MAGIC] = 0;
    ck_assert_int_eq(sf_recbatch_validate(b, n, NULL), SF_ERR_UNSUPPORTED);
    b[SF_RECBATCH_OFF_MAGIC] = 3;
    ck_assert_int_eq(sf_recbatch_validate(b, n, NULL), SF_ERR_UNSUPPORTED);
}
END_TEST

/* ---- limits ---- */

START_TEST(test_truncated_every_length) {
    uint8_t b[256], *copy;
    size_t n = unhex(golden_hex, b, sizeof(b)), len, size;
    sf_recbatch_hdr_t hdr;
    for (len = 0; len < n; len++) {
        /* An exact-size copy so any read past @len is caught by ASan. */
        copy = malloc(len ? len : 1);
        memcpy(copy, b, len);
        ck_assert_int_eq(sf_recbatch_header_parse(copy, len, &hdr, &size), SF_AGAIN);
        ck_assert_int_ne(sf_recbatch_validate(copy, len, NULL), SF_OK);
        free(copy);
    }
    /* Extra bytes after the batch: the header parse is fine, a one-batch validate is not. */
    ck_assert_int_eq(sf_recbatch_header_parse(b, n + 5, &hdr, &size), SF_OK);
    ck_assert_uint_eq(size, n);
    ck_assert_int_eq(sf_recbatch_validate(b, n + 5, NULL), SF_ERR_MALFORMED);
}
END_TEST

/* Cut the records section at every length while keeping the batch self-consistent (fixed
 * BatchLength and CRC): the record walk must fail cleanly. */
START_TEST(test_records_cut) {
    uint8_t b[256], *copy;
    size_t n = unhex(golden_hex, b, sizeof(b)), len;
    for (len = SF_RECBATCH_HEADER_SIZE; len < n; len++) {
        copy = malloc(len);
        memcpy(copy, b, len);
        sf_store_be32(copy + SF_RECBATCH_OFF_BATCH_LENGTH, (uint32_t)(len - 12));
        fix_crc(copy, len);
        ck_assert_int_eq(sf_recbatch_validate(copy, len, NULL), SF_ERR_MALFORMED);
        free(copy);
    }
}
END_TEST

START_TEST(test_impossible_sizes) {
    uint8_t b[256];
    size_t n = unhex(golden_hex, b, sizeof(b)), size;
    sf_recbatch_hdr_t hdr;
    int32_t bad[] = {-1, 0, 48, INT32_MIN};
    size_t i;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        sf_store_be32(b + SF_RECBATCH_OFF_BATCH_LENGTH, (uint32_t)bad[i]);
        ck_assert_int_eq(sf_recbatch_header_parse(b, n, &hdr, &size), SF_ERR_MALFORMED);
        ck_assert_int_eq(sf_recbatch_validate(b, n, NULL), SF_ERR_MALFORMED);
    }
    /* Huge but well-formed: needs more bytes. */
    sf_store_be32(b + SF_RECBATCH_OFF_BATCH_LENGTH, INT32_MAX);
    ck_assert_int_eq(sf_recbatch_header_parse(b, n, &hdr, &size), SF_AGAIN);
    ck_assert_uint_eq(size, (size_t)INT32_MAX + 12);
}
END_TEST

/* A record whose varint lengths point outside the batch. */
START_TEST(test_record_lengths) {
    uint8_t b[256];
    size_t n = unhex(golden_hex, b, sizeof(b));
    size_t r0 = 61;
    uint8_t save = b[r0];
    b[r0] = 0x7e; /* length 63: past the batch */
    fix_crc(b, n);
    ck_assert_int_eq(sf_recbatch_validate(b, n, NULL), SF_ERR_MALFORMED);
    b[r0] = 0x01; /* length -1 */
    fix_crc(b, n);
    ck_assert_int_eq(sf_recbatch_validate(b, n, NULL), SF_ERR_MALFORMED);
    b[r0] = save;
    /* key length varint (byte r0+4 = key length 2 -> 0x04) made huge */
    ck_assert_uint_eq(b[r0 + 4], 0x04);
    b[r0 + 4] = 0x7e;
    fix_crc(b, n);
    ck_assert_int_eq(sf_recbatch_validate(b, n, NULL), SF_ERR_MALFORMED);
    /* an unterminated varint */
    b[r0 + 4] = 0xff;
    fix_crc(b, n);
    ck_assert_int_eq(sf_recbatch_validate(b, n, NULL), SF_ERR_MALFORMED);
}
END_TEST

START_TEST(test_build_limits) {
    sf_wbuf_t wb;
    sf_recbatch_record_t rec;
    sf_recbatch_hdr_t tmpl;
    sf_wbuf_init(&wb);
    memset(&rec, 0, sizeof(rec));
    rec.key = null_slice;
    rec.value = S("");
    ck_assert_int_eq(sf_recbatch_build(&wb, 0, 0, &rec, 0), SF_ERR_INVALID);
    rec.header_count = 2; /* but no headers */
    ck_assert_int_eq(sf_recbatch_build(&wb, 0, 0, &rec, 1), SF_ERR_INVALID);
    ck_assert_uint_eq(wb.len, 0);
    rec.header_count = 0;
    memset(&tmpl, 0, sizeof(tmpl));
    tmpl.Attributes = 1;
    ck_assert_int_eq(sf_recbatch_build_hdr(&wb, &tmpl, &rec, 1), SF_ERR_INVALID);
    /* The smallest batch: one record, null key, empty value. */
    ck_assert_int_eq(sf_recbatch_build(&wb, 0, -1, &rec, 1), SF_OK);
    ck_assert_uint_eq(wb.len, SF_RECBATCH_HEADER_SIZE + 7);
    ck_assert_int_eq(sf_recbatch_validate(wb.p, wb.len, NULL), SF_OK);
    sf_wbuf_free(&wb);
}
END_TEST

/* Offsets and timestamps from the wire wrap like Java's long arithmetic (no undefined
 * behaviour; this fails under --enable-sanitizers when they overflow a signed type). */
START_TEST(test_extreme_header_values) {
    sf_recbatch_record_t recs[2];
    sf_recbatch_rechdr_t h;
    sf_recbatch_hdr_t hdr;
    sf_recbatch_iter_t it;
    sf_recbatch_record_t rec;
    sf_wbuf_t wb;
    golden_records(recs, &h);
    recs[0].timestamp = INT64_MAX;
    recs[1].timestamp = INT64_MIN;
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_recbatch_build(&wb, INT64_MAX, 0, recs, 2), SF_OK);
    ck_assert_int_eq(sf_recbatch_validate(wb.p, wb.len, &hdr), SF_OK);
    ck_assert(sf_recbatch_next_offset(&hdr) == INT64_MIN + 1);
    /* BaseTimestamp is not covered by anything the iterator checks: make the sums wrap. */
    sf_store_be64(wb.p + SF_RECBATCH_OFF_BASE_TIMESTAMP, 1);
    ck_assert_int_eq(sf_recbatch_iter_init(&it, wb.p, wb.len), SF_OK);
    ck_assert_int_eq(sf_recbatch_iter_next(&it, &rec), SF_OK);
    ck_assert(rec.offset == INT64_MAX);
    ck_assert(rec.timestamp == INT64_MIN);
    ck_assert_int_eq(sf_recbatch_iter_next(&it, &rec), SF_OK);
    ck_assert(rec.offset == INT64_MIN);
    ck_assert(rec.timestamp == INT64_MIN + 1);
    ck_assert_int_eq(sf_recbatch_iter_next(&it, &rec), SF_ERR_NOTFOUND);
    sf_wbuf_free(&wb);
}
END_TEST

static Suite *recbatch_suite(void) {
    Suite *s = suite_create("recbatch");
    TCase *core = tcase_create("core");
    TCase *limits = tcase_create("limits");
    tcase_add_test(core, test_golden_parse);
    tcase_add_test(core, test_golden_build);
    tcase_add_test(core, test_build_roundtrip);
    tcase_add_test(core, test_log_append_time);
    tcase_add_test(core, test_compressed_opaque);
    tcase_add_test(core, test_corrupt_crc);
    tcase_add_test(core, test_wrong_count);
    tcase_add_test(core, test_offset_delta_order);
    tcase_add_test(core, test_magic_1);
    tcase_add_test(limits, test_truncated_every_length);
    tcase_add_test(limits, test_records_cut);
    tcase_add_test(limits, test_impossible_sizes);
    tcase_add_test(limits, test_record_lengths);
    tcase_add_test(limits, test_build_limits);
    tcase_add_test(limits, test_extreme_header_values);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(recbatch_suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
