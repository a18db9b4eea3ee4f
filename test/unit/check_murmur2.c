/* Unit tests for common/murmur2: Kafka's Utils.murmur2 and the default partitioner. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "murmur2.h"

/* apache/kafka UtilsTest.testMurmur2: Java's signed int results. */
START_TEST(test_kafka_utilstest_vectors) {
    static const struct {
        const char *key;
        int32_t want;
    } vec[] = {
        {"21", -973932308},
        {"foobar", -790332482},
        {"a-little-bit-long-string", -985981536},
        {"a-little-bit-longer-string", -1486304829},
        {"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971},
        {"abc", 479470107},
    };
    size_t i;
    for (i = 0; i < sizeof(vec) / sizeof(vec[0]); i++)
        ck_assert_int_eq((int32_t)sf_murmur2(vec[i].key, strlen(vec[i].key)), vec[i].want);
}
END_TEST

/* Hashes and partitions from kafka-python's kafka.partitioner.default.murmur2 (the same
 * algorithm), for keys covering every tail length and bytes >= 0x80. */
START_TEST(test_partition_vectors) {
    static const struct {
        const char *key;
        size_t len;
        uint32_t hash;
        int32_t p3, p12, p100;
    } vec[] = {
        {"", 0, 275646681u, 0, 9, 81},
        {"a", 1, 2731586172u, 1, 4, 24},
        {"ab", 2, 316155434u, 2, 2, 34},
        {"abc", 3, 479470107u, 0, 3, 7},
        {"21", 2, 3321034988u, 0, 0, 40},
        {"foobar", 6, 3504634814u, 0, 6, 66},
        {"key-0", 5, 29210041u, 1, 1, 41},
        {"key-1", 5, 193331640u, 0, 0, 40},
        {"order-12345", 11, 2547607977u, 1, 1, 29},
        {"\xff\x00\x80\x7f\x01", 5, 3979185400u, 2, 8, 52},
    };
    size_t i;
    for (i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
        ck_assert_uint_eq(sf_murmur2(vec[i].key, vec[i].len), vec[i].hash);
        ck_assert_int_eq(sf_murmur2_partition(vec[i].key, vec[i].len, 3), vec[i].p3);
        ck_assert_int_eq(sf_murmur2_partition(vec[i].key, vec[i].len, 12), vec[i].p12);
        ck_assert_int_eq(sf_murmur2_partition(vec[i].key, vec[i].len, 100), vec[i].p100);
    }
}
END_TEST

/* A 1024-byte key (bytes 0..255 four times), hashed from aligned and unaligned addresses. */
START_TEST(test_long_key_unaligned) {
    uint8_t buf[1024 + 1];
    size_t i;
    for (i = 0; i < 1024; i++)
        buf[i + 1] = (uint8_t)i;
    ck_assert_uint_eq(sf_murmur2(buf + 1, 1024), 3004646299u);
    ck_assert_int_eq(sf_murmur2_partition(buf + 1, 1024, 7), 2);
    memmove(buf, buf + 1, 1024);
    ck_assert_uint_eq(sf_murmur2(buf, 1024), 3004646299u);
}
END_TEST

START_TEST(test_partition_limits) {
    ck_assert_int_eq(sf_murmur2_partition("a", 1, 0), SF_ERR_INVALID);
    ck_assert_int_eq(sf_murmur2_partition("a", 1, -5), SF_ERR_INVALID);
    ck_assert_int_eq(sf_murmur2_partition("a", 1, INT32_MIN), SF_ERR_INVALID);
    ck_assert_int_eq(sf_murmur2_partition("a", 1, 1), 0);
    /* The top bit is masked, not negated: 2731586172 & 0x7fffffff = 584102524. */
    ck_assert_int_eq(sf_murmur2_partition("a", 1, INT32_MAX), 584102524);
    ck_assert_int_eq(sf_murmur2_partition("abcdefg", 7, INT32_MAX), 1801016473);
    /* An empty key may be passed as NULL. */
    ck_assert_uint_eq(sf_murmur2(NULL, 0), 275646681u);
}
END_TEST

static Suite *murmur2_suite(void) {
    Suite *s = suite_create("murmur2");
    TCase *core = tcase_create("core"), *limits = tcase_create("limits");
    tcase_add_test(core, test_kafka_utilstest_vectors);
    tcase_add_test(core, test_partition_vectors);
    tcase_add_test(core, test_long_key_unaligned);
    tcase_add_test(limits, test_partition_limits);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(murmur2_suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
