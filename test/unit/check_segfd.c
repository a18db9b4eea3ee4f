/* Segment descriptors (the cache of open .log files) and damaged segment files. */
#include <check.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "log.h"
#include "logging.h"
#include "recbatch.h"
#include "tmpdir.h"

static void setup(void) {
    tmpdir_make("segfd");
}

static void teardown(void) {
    sf_segment_fd_cache_set_limit(0);
    tmpdir_remove();
}

static void config(sf_log_config_t *cfg, int64_t segment_bytes) {
    sf_log_config_default(cfg);
    cfg->segment_bytes = segment_bytes;
    cfg->index_interval_bytes = 1; /* an index entry for every batch but the first */
}

static sf_log_t *open_log(int64_t segment_bytes, int64_t recovery_point) {
    sf_log_config_t cfg;
    sf_log_t *log;
    config(&cfg, segment_bytes);
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, recovery_point, &log), SF_OK);
    return log;
}

/* @n batches of one record (timestamp 1000 + offset); @segment_bytes 14 gives each batch a
 * segment of its own. */
static sf_log_t *make_log(int n, int64_t segment_bytes) {
    sf_log_t *log = open_log(segment_bytes, 0);
    int i;
    for (i = 0; i < n; i++) {
        sf_recbatch_record_t rec;
        sf_wbuf_t wb;
        memset(&rec, 0, sizeof(rec));
        rec.timestamp = 1000 + i;
        rec.key.len = -1;
        rec.value.p = (const uint8_t *)"value";
        rec.value.len = 5;
        sf_wbuf_init(&wb);
        ck_assert_int_eq(sf_recbatch_build(&wb, 0, rec.timestamp, &rec, 1), SF_OK);
        ck_assert_int_eq(sf_log_append(log, wb.p, wb.len, 0, NULL), SF_OK);
        sf_wbuf_free(&wb);
    }
    return log;
}

static void seg_file(char *buf, size_t size, int64_t base, const char *ext) {
    snprintf(buf, size, "%s/t-0/%020" PRId64 "%s", tmpdir, base, ext);
}

static void zero_bytes(const char *path, off_t at, size_t n) {
    static const uint8_t zeros[64];
    int fd = open(path, O_WRONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_uint_le(n, sizeof(zeros));
    ck_assert_int_eq(pwrite(fd, zeros, n, at), (ssize_t)n);
    close(fd);
}

/* Reading every segment keeps the open .log files at the limit; a slice held while its
 * descriptor would be evicted stays readable. */
START_TEST(test_fd_cache_bound) {
    sf_log_t *log;
    sf_log_slice_t held, sl;
    size_t open_now;
    uint64_t evictions;
    uint8_t b[4096];
    int64_t off;

    sf_segment_fd_cache_set_limit(4);
    log = make_log(40, 14);
    ck_assert_uint_eq(sf_log_segment_count(log), 40);
    sf_log_close(log);
    log = open_log(14, INT64_MAX);
    sf_segment_fd_cache_stats(&open_now, NULL, NULL);
    ck_assert_uint_le(open_now, 4);
    ck_assert_int_eq(sf_log_read(log, 0, 1 << 20, INT64_MAX, &held), SF_OK);
    ck_assert_uint_gt(held.len, 0);
    for (off = 1; off < 40; off++) {
        ck_assert_int_eq(sf_log_read(log, off, 1 << 20, INT64_MAX, &sl), SF_OK);
        ck_assert_uint_gt(sl.len, 0);
        sf_log_slice_release(sl.seg);
        sf_segment_fd_cache_stats(&open_now, NULL, NULL);
        ck_assert_uint_le(open_now, 4);
    }
    sf_segment_fd_cache_stats(NULL, NULL, &evictions);
    ck_assert_uint_gt(evictions, 30);
    /* The held slice's descriptor was never closed. */
    ck_assert_int_ge(fcntl(held.fd, F_GETFD), 0);
    ck_assert_uint_le(held.len, sizeof(b));
    ck_assert_int_eq(pread(held.fd, b, SF_RECBATCH_HEADER_SIZE, held.pos),
                     (ssize_t)SF_RECBATCH_HEADER_SIZE);
    ck_assert_int_eq(sf_log_slice_copy(&held, b), SF_OK);
    sf_log_slice_release(held.seg);
    /* Timestamp lookups reopen what they need. */
    for (off = 0; off < 40; off += 7) {
        int64_t found, ts;
        ck_assert_int_eq(sf_log_offset_for_timestamp(log, 1000 + off, &found, &ts), SF_OK);
        ck_assert(found == off && ts == 1000 + off);
    }
    sf_log_close(log);
    sf_segment_fd_cache_stats(&open_now, NULL, NULL);
    ck_assert_uint_eq(open_now, 0);
}
END_TEST

/* Empty and missing time indexes of closed segments are rebuilt at load. */
START_TEST(test_short_timeindex_rebuilt) {
    sf_log_t *log = make_log(20, 14);
    char path[256];
    int64_t i, found, ts;
    sf_log_close(log);
    for (i = 0; i < 19; i++) {
        seg_file(path, sizeof(path), i, ".timeindex");
        if (i % 2)
            ck_assert_int_eq(truncate(path, 0), 0);
        else
            ck_assert_int_eq(unlink(path), 0);
    }
    log = open_log(14, INT64_MAX);
    for (i = 0; i < 20; i++) {
        ck_assert_int_eq(sf_log_offset_for_timestamp(log, 1000 + i, &found, &ts), SF_OK);
        ck_assert(found == i && ts == 1000 + i);
    }
    ck_assert_int_eq(sf_log_max_timestamp(log, &found, &ts), SF_OK);
    ck_assert(found == 19 && ts == 1019);
    sf_log_close(log);
}
END_TEST

/* A zeroed header in a closed segment with data after it, found by a read (the load checks
 * only what follows the last index entry): offline, every later call fails the same way,
 * and no file changes. Recovery from the start finds it at load, with the same outcome. */
START_TEST(test_read_damage_offline) {
    sf_log_t *log = make_log(30, 500);
    sf_log_slice_t sl;
    sf_recbatch_hdr_t hdr;
    uint8_t h[SF_RECBATCH_HEADER_SIZE];
    char path[256];
    size_t bsize;
    struct stat st, st2;
    int64_t found, ts;
    FILE *f;

    ck_assert_uint_gt(sf_log_segment_count(log), 3);
    sf_log_close(log);
    /* The second batch of the first segment. */
    seg_file(path, sizeof(path), 0, ".log");
    f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fread(h, 1, sizeof(h), f), sizeof(h));
    fclose(f);
    ck_assert_int_eq(sf_recbatch_header_parse(h, sizeof(h), &hdr, &bsize), SF_AGAIN);
    zero_bytes(path, (off_t)bsize, SF_RECBATCH_HEADER_SIZE);
    ck_assert_int_eq(stat(path, &st), 0);

    log = open_log(500, INT64_MAX);
    ck_assert_int_eq(sf_log_offline(log), 0);
    /* From offset 0 the damaged header follows the first batch. */
    ck_assert_int_eq(sf_log_read(log, 0, 1 << 20, INT64_MAX, &sl), SF_ERR_IO);
    ck_assert_int_eq(sf_log_offline(log), 1);
    ck_assert_int_eq(sf_log_read(log, 0, 1, INT64_MAX, &sl), SF_ERR_IO);
    ck_assert_int_eq(sf_log_read(log, 29, 1 << 20, INT64_MAX, &sl), SF_ERR_IO);
    ck_assert_int_eq(sf_log_offset_for_timestamp(log, 1020, &found, &ts), SF_ERR_IO);
    ck_assert_int_eq(sf_log_max_timestamp(log, &found, &ts), SF_ERR_IO);
    sf_log_close(log);
    ck_assert_int_eq(stat(path, &st2), 0);
    ck_assert_int_eq(st2.st_size, st.st_size);
    log = open_log(500, 0);
    ck_assert_int_eq(sf_log_offline(log), 1);
    sf_log_close(log);
    ck_assert_int_eq(stat(path, &st2), 0);
    ck_assert_int_eq(st2.st_size, st.st_size);
}
END_TEST

/* A zeroed header as the last batch of the log is cut at load; the rest is served. */
START_TEST(test_tail_damage_cut) {
    sf_log_t *log = make_log(12, 14);
    sf_log_slice_t sl;
    char path[256];
    struct stat st;
    int64_t next = 0;
    sf_log_close(log);
    seg_file(path, sizeof(path), 11, ".log");
    zero_bytes(path, 0, SF_RECBATCH_HEADER_SIZE);
    log = open_log(14, INT64_MAX);
    ck_assert_int_eq(sf_log_offline(log), 0);
    ck_assert(sf_log_end_offset(log) == 11);
    while (next < 11) {
        ck_assert_int_eq(sf_log_read(log, next, 1 << 20, INT64_MAX, &sl), SF_OK);
        ck_assert_uint_gt(sl.len, 0);
        next++;
        sf_log_slice_release(sl.seg);
    }
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_size, 0);
    sf_log_close(log);
}
END_TEST

static Suite *segfd_suite(void) {
    Suite *s = suite_create("segfd");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_fd_cache_bound);
    tcase_add_test(tc, test_short_timeindex_rebuilt);
    tcase_add_test(tc, test_read_damage_offline);
    tcase_add_test(tc, test_tail_damage_cut);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(segfd_suite());
    int failed;
    if (!getenv("SF_TEST_LOG"))
        sf_log_level = 0; /* the damage tests provoke warnings */
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
