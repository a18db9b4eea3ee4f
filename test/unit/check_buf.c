/* Unit tests for common/buf (varints, sticky reader errors, writer splices) and CRC32C. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "crc32c.h"
#include "err.h"

START_TEST(test_ints_roundtrip) {
    sf_wbuf_t wb;
    sf_rbuf_t rb;
    sf_wbuf_init(&wb);
    sf_wbuf_i8(&wb, -2);
    sf_wbuf_i16(&wb, 0x1234);
    sf_wbuf_i32(&wb, -559038737);
    sf_wbuf_i64(&wb, INT64_MIN + 5);
    sf_wbuf_cstring(&wb, "abc");
    sf_wbuf_cstring(&wb, NULL);
    ck_assert_int_eq(wb.len, 1 + 2 + 4 + 8 + 5 + 2);
    ck_assert_uint_eq(wb.p[1], 0x12);
    sf_rbuf_init(&rb, wb.p, wb.len);
    ck_assert_int_eq(sf_rbuf_i8(&rb), -2);
    ck_assert_int_eq(sf_rbuf_i16(&rb), 0x1234);
    ck_assert_int_eq(sf_rbuf_i32(&rb), -559038737);
    ck_assert(sf_rbuf_i64(&rb) == INT64_MIN + 5);
    ck_assert(sf_slice_eq(sf_rbuf_string(&rb, 0), "abc"));
    ck_assert_int_eq(sf_rbuf_string(&rb, 1).len, -1);
    ck_assert_int_eq(rb.err, SF_OK);
    ck_assert_uint_eq(sf_rbuf_remaining(&rb), 0);
    sf_wbuf_free(&wb);
}
END_TEST

/* Vectors from the protobuf / Kafka varint encoding. */
START_TEST(test_varint_vectors) {
    static const struct {
        int64_t v;
        const char *hex;
    } vec[] = {{0, "00"}, {-1, "01"}, {1, "02"}, {63, "7e"}, {-64, "7f"}, {64, "8001"},
               {300, "d804"}, {INT32_MAX, "feffffff0f"}, {INT32_MIN, "ffffffff0f"}};
    size_t i;
    for (i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
        sf_wbuf_t wb;
        sf_rbuf_t rb;
        char hex[32] = "";
        size_t j;
        sf_wbuf_init(&wb);
        sf_wbuf_varint(&wb, (int32_t)vec[i].v);
        for (j = 0; j < wb.len; j++)
            sprintf(hex + 2 * j, "%02x", wb.p[j]);
        ck_assert_str_eq(hex, vec[i].hex);
        sf_rbuf_init(&rb, wb.p, wb.len);
        ck_assert(sf_rbuf_varint(&rb) == vec[i].v);
        ck_assert_int_eq(rb.err, 0);
        sf_rbuf_init(&rb, wb.p, wb.len);
        ck_assert(sf_rbuf_varlong(&rb) == vec[i].v);
        sf_wbuf_free(&wb);
    }
}
END_TEST

START_TEST(test_crc32c_vectors) {
    /* RFC 3720 B.4 and the classic check value. */
    uint8_t zeros[32] = {0}, ones[32];
    memset(ones, 0xff, sizeof(ones));
    ck_assert_uint_eq(sf_crc32c(0, "123456789", 9), 0xe3069283u);
    ck_assert_uint_eq(sf_crc32c(0, zeros, 32), 0x8a9136aau);
    ck_assert_uint_eq(sf_crc32c(0, ones, 32), 0x62a8ab43u);
    /* Incremental equals one-shot, at every split point. */
    for (int k = 0; k <= 9; k++)
        ck_assert_uint_eq(sf_crc32c(sf_crc32c(0, "123456789", (size_t)k), "123456789" + k, 9 - (size_t)k),
                          0xe3069283u);
}
END_TEST

/* Bit-at-a-time CRC32C, the reference for the fast paths. */
static uint32_t crc32c_ref(const uint8_t *p, size_t len) {
    uint32_t c = 0xffffffffu;
    size_t i;
    int k;
    for (i = 0; i < len; i++) {
        c ^= p[i];
        for (k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
    }
    return ~c;
}

/* Long inputs at every alignment, across the sizes where the hardware path switches between
 * its three-stream blocks (3 x 8 KiB, 3 x 256 bytes) and its tails. */
START_TEST(test_crc32c_long) {
    static const size_t lens[] = {0, 1, 7, 8, 767, 768, 769, 1000, 24575, 24576, 24577, 50000};
    static uint8_t buf[50000 + 8];
    uint32_t x = 12345;
    size_t i, j, off;
    for (i = 0; i < sizeof(buf); i++) {
        x = x * 1103515245u + 12345u;
        buf[i] = (uint8_t)(x >> 16);
    }
    for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
        for (off = 0; off < 8; off++) {
            uint32_t want = crc32c_ref(buf + off, lens[i]);
            ck_assert_uint_eq(sf_crc32c(0, buf + off, lens[i]), want);
            /* and split in two */
            j = lens[i] / 3;
            ck_assert_uint_eq(sf_crc32c(sf_crc32c(0, buf + off, j), buf + off + j, lens[i] - j),
                              want);
        }
}
END_TEST

START_TEST(test_reader_truncated) {
    static const uint8_t in[] = {0x00, 0x05, 'a', 'b'};
    sf_rbuf_t rb;
    sf_slice_t s;
    sf_rbuf_init(&rb, in, sizeof(in));
    s = sf_rbuf_string(&rb, 0);
    ck_assert_int_eq(rb.err, SF_ERR_MALFORMED);
    ck_assert_int_eq(s.len, 0);
    /* sticky: later reads return zero */
    ck_assert_int_eq(sf_rbuf_i8(&rb), 0);
    ck_assert_uint_eq(sf_rbuf_remaining(&rb), 0);
}
END_TEST

START_TEST(test_reader_limits) {
    static const uint8_t negative[] = {0xff, 0xfe};
    static const uint8_t huge_array[] = {0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0};
    static const uint8_t long_varint[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    static const uint8_t null_array[] = {0xff, 0xff, 0xff, 0xff};
    sf_rbuf_t rb;
    sf_rbuf_init(&rb, negative, sizeof(negative));
    (void)sf_rbuf_string(&rb, 1);
    ck_assert_int_eq(rb.err, SF_ERR_MALFORMED);
    sf_rbuf_init(&rb, huge_array, sizeof(huge_array));
    ck_assert_int_eq(sf_rbuf_array_len(&rb, 4, 0), -1);
    ck_assert_int_eq(rb.err, SF_ERR_MALFORMED);
    sf_rbuf_init(&rb, long_varint, sizeof(long_varint));
    (void)sf_rbuf_uvarint(&rb);
    ck_assert_int_eq(rb.err, SF_ERR_MALFORMED);
    sf_rbuf_init(&rb, null_array, sizeof(null_array));
    ck_assert_int_eq(sf_rbuf_array_len(&rb, 4, 1), -1);
    ck_assert_int_eq(rb.err, SF_OK);
    sf_rbuf_init(&rb, NULL, 0);
    (void)sf_rbuf_i8(&rb);
    ck_assert_int_eq(rb.err, SF_ERR_MALFORMED);
}
END_TEST

/* The compact (flexible-version) forms: every length and count from the wire is checked. */
START_TEST(test_reader_compact_limits) {
    /* uvarint 0xffffffff: count 2^32 - 2 */
    static const uint8_t huge_compact_array[] = {0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0};
    /* count 3 (uvarint 4) with room for only 2 elements of 1 byte */
    static const uint8_t short_compact_array[] = {0x04, 0, 0};
    /* bytes length 2^32 - 2: more than INT32_MAX */
    static const uint8_t huge_compact_bytes[] = {0xff, 0xff, 0xff, 0xff, 0x0f, 'x'};
    /* 5-byte uvarint with bits above 32 */
    static const uint8_t wide_uvarint[] = {0xff, 0xff, 0xff, 0xff, 0x1f};
    /* zig-zag -2: a negative length other than null */
    static const uint8_t negative_varbytes[] = {0x03, 'a'};
    /* compact null (0) where null is not allowed */
    static const uint8_t compact_null[] = {0x00};
    /* one tagged field whose size runs past the end */
    static const uint8_t long_tag[] = {0x01, 0x00, 0x7f, 'a'};
    sf_rbuf_t rb;
    sf_slice_t s;

    sf_rbuf_init(&rb, huge_compact_array, sizeof(huge_compact_array));
    ck_assert_int_eq(sf_rbuf_compact_array_len(&rb, 1, 0), -1);
    ck_assert_int_eq(rb.err, SF_ERR_MALFORMED);
    sf_rbuf_init(&rb, short_compact_array, sizeof(short_compact_array));
    ck_assert_int_eq(sf_rbuf_compact_array_len(&rb, 1, 0), -1);
    ck_assert_int_eq(rb.err, SF_ERR_MALFORMED);
    sf_rbuf_init(&rb, short_compact_array + 1, sizeof(short_compact_array) - 1);
    ck_assert_int_eq(sf_rbuf_compact_array_len(&rb, 1, 1), -1); /* uvarint 0: null */
    ck_assert_int_eq(rb.err, SF_OK);
    sf_rbuf_init(&rb, huge_compact_bytes, sizeof(huge_compact_bytes));
    s = sf_rbuf_compact_bytes(&rb, 1);
    ck_assert_int_eq(rb.err, SF_ERR_MALFORMED);
    ck_assert_int_eq(s.len, 0);
    sf_rbuf_init(&rb, wide_uvarint, sizeof(wide_uvarint));
    ck_assert_uint_eq(sf_rbuf_uvarint(&rb), 0);
    ck_assert_int_eq(rb.err, SF_ERR_MALFORMED);
    sf_rbuf_init(&rb, negative_varbytes, sizeof(negative_varbytes));
    (void)sf_rbuf_varbytes(&rb);
    ck_assert_int_eq(rb.err, SF_ERR_MALFORMED);
    sf_rbuf_init(&rb, compact_null, sizeof(compact_null));
    (void)sf_rbuf_compact_string(&rb, 0);
    ck_assert_int_eq(rb.err, SF_ERR_MALFORMED);
    sf_rbuf_init(&rb, compact_null, sizeof(compact_null));
    s = sf_rbuf_compact_string(&rb, 1);
    ck_assert_int_eq(rb.err, SF_OK);
    ck_assert_int_eq(s.len, -1);
    sf_rbuf_init(&rb, long_tag, sizeof(long_tag));
    sf_rbuf_skip_tags(&rb);
    ck_assert_int_eq(rb.err, SF_ERR_MALFORMED);
}
END_TEST

START_TEST(test_writer_splice_and_patch) {
    sf_wbuf_t wb;
    size_t mark;
    int dummy;
    sf_wbuf_init(&wb);
    mark = sf_wbuf_mark_i32(&wb);
    sf_wbuf_i16(&wb, 7);
    sf_wbuf_splice(&wb, &dummy, 100);
    sf_wbuf_i8(&wb, 1);
    sf_wbuf_patch_i32(&wb, mark, (int32_t)sf_wbuf_since(&wb, mark + 4));
    ck_assert_uint_eq(sf_load_be32(wb.p), 2 + 100 + 1);
    ck_assert_uint_eq(sf_wbuf_total(&wb), 4 + 2 + 100 + 1);
    ck_assert_uint_eq(wb.splices[0].at, 6);
    sf_wbuf_free(&wb);
}
END_TEST

static Suite *buf_suite(void) {
    Suite *s = suite_create("buf");
    TCase *core = tcase_create("core"), *limits = tcase_create("limits");
    tcase_add_test(core, test_ints_roundtrip);
    tcase_add_test(core, test_varint_vectors);
    tcase_add_test(core, test_crc32c_vectors);
    tcase_add_test(core, test_crc32c_long);
    tcase_add_test(core, test_writer_splice_and_patch);
    tcase_add_test(limits, test_reader_truncated);
    tcase_add_test(limits, test_reader_limits);
    tcase_add_test(limits, test_reader_compact_limits);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(buf_suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
