/* Unit tests for the storage engine: broker/storage (segment, log); the log directory is in
 * check_logdir.c. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "crc32c.h"
#include "err.h"
#include "log.h"
#include "logging.h"
#include "recbatch.h"
#include "tmpdir.h"
#include "logtest.h"

/* ---- fixtures and helpers ---- */

static void setup(void) {
    tmpdir_make("log");
}

static void teardown(void) {
    tmpdir_remove();
}



/* ---- log: core ---- */

START_TEST(test_append_read_roundtrip) {
    sf_log_config_t cfg;
    sf_log_t *log;
    sf_log_slice_t sl;
    int64_t next;
    int i;

    sf_log_config_default(&cfg);
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log), SF_OK);
    ck_assert(sf_log_end_offset(log) == 0);
    ck_assert(sf_log_start_offset(log) == 0);
    /* Empty log: reading at the LEO gives nothing. */
    ck_assert_int_eq(sf_log_read(log, 0, 1 << 20, INT64_MAX, &sl), SF_OK);
    ck_assert_uint_eq(sl.len, 0);
    ck_assert_ptr_null(sl.seg);
    sf_log_set_leader_epoch(log, 7);
    for (i = 0; i < 10; i++)
        ck_assert(append_batch(log, 5, 100, 1000 + i * 5, 0) == i * 5);
    ck_assert(sf_log_end_offset(log) == 50);
    ck_assert(sf_log_high_watermark(log) == 50);
    ck_assert_int_eq(sf_log_read(log, 0, 1 << 20, INT64_MAX, &sl), SF_OK);
    ck_assert_ptr_nonnull(sl.seg);
    ck_assert_int_eq(check_slice(&sl, 0, &next), 10);
    ck_assert(next == 50);
    {
        /* Leader epoch stamped, records intact. */
        uint8_t *p = slice_bytes(&sl);
        sf_recbatch_iter_t it;
        sf_recbatch_record_t rec;
        sf_recbatch_hdr_t hdr;
        size_t size;
        ck_assert_int_eq(sf_recbatch_header_parse(p, sl.len, &hdr, &size), SF_OK);
        ck_assert_int_eq(hdr.PartitionLeaderEpoch, 7);
        ck_assert_int_eq(sf_recbatch_iter_init(&it, p, size), SF_OK);
        for (i = 0; i < 5; i++) {
            ck_assert_int_eq(sf_recbatch_iter_next(&it, &rec), SF_OK);
            ck_assert(rec.offset == i);
            ck_assert(rec.timestamp == 1000 + i);
            ck_assert_int_eq(rec.value.len, 100);
        }
        free(p);
    }
    sf_log_slice_release(sl.seg);
    /* Out of range on both sides. */
    ck_assert_int_eq(sf_log_read(log, 51, 1 << 20, INT64_MAX, &sl), SF_ERR_RANGE);
    ck_assert_int_eq(sf_log_read(log, -1, 1 << 20, INT64_MAX, &sl), SF_ERR_RANGE);
    ck_assert_int_eq(sf_log_read(log, 50, 1 << 20, INT64_MAX, &sl), SF_OK);
    ck_assert_uint_eq(sl.len, 0);
    ck_assert_str_eq(sf_log_topic(log), "t");
    ck_assert_int_eq(sf_log_partition(log), 0);
    sf_log_close(log);
}
END_TEST

START_TEST(test_read_middle) {
    sf_log_config_t cfg;
    sf_log_t *log;
    int64_t off;
    int i;

    small_config(&cfg);
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 1, &cfg, 0, &log), SF_OK);
    for (i = 0; i < 300; i++)
        append_batch(log, 1 + i % 3, 50, 1000 + i, 0);
    /* Every offset: the first batch returned holds it (index lookup + scan). */
    for (off = 0; off < sf_log_end_offset(log); off++) {
        sf_log_slice_t sl;
        ck_assert_int_eq(sf_log_read(log, off, 300, INT64_MAX, &sl), SF_OK);
        ck_assert_uint_gt(sl.len, 0);
        check_slice(&sl, off, NULL);
        sf_log_slice_release(sl.seg);
    }
    ck_assert_int_eq(sf_log_flush(log), SF_OK);
    sf_log_close(log);
    {
        char path[256];
        partition_file(path, sizeof(path), "t", 1, 0, ".index");
        /* ~300 batches of ~120 bytes at a 256-byte interval: many entries. */
        ck_assert_int_gt(file_size(path), 8 * 50);
        ck_assert_int_eq(file_size(path) % 8, 0);
        partition_file(path, sizeof(path), "t", 1, 0, ".timeindex");
        ck_assert_int_gt(file_size(path), 12 * 50);
    }
}
END_TEST

START_TEST(test_kip74_and_max_bytes) {
    sf_log_config_t cfg;
    sf_log_t *log;
    sf_log_slice_t sl;
    size_t one;
    int i;

    small_config(&cfg);
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log), SF_OK);
    for (i = 0; i < 20; i++)
        append_batch(log, 2, 1000, 1000, 0);
    /* max_bytes smaller than a batch: still the first whole batch. */
    ck_assert_int_eq(sf_log_read(log, 0, 1, INT64_MAX, &sl), SF_OK);
    ck_assert_int_eq(check_slice(&sl, 0, NULL), 1);
    one = sl.len;
    ck_assert_uint_gt(one, 2000);
    sf_log_slice_release(sl.seg);
    ck_assert_int_eq(sf_log_read(log, 3, 0, INT64_MAX, &sl), SF_OK);
    ck_assert_int_eq(check_slice(&sl, 3, NULL), 1);
    sf_log_slice_release(sl.seg);
    /* Exactly three batches' worth, and one byte less. */
    ck_assert_int_eq(sf_log_read(log, 0, (int32_t)(3 * one), INT64_MAX, &sl), SF_OK);
    ck_assert_int_eq(check_slice(&sl, 0, NULL), 3);
    sf_log_slice_release(sl.seg);
    ck_assert_int_eq(sf_log_read(log, 0, (int32_t)(3 * one - 1), INT64_MAX, &sl), SF_OK);
    ck_assert_int_eq(check_slice(&sl, 0, NULL), 2);
    sf_log_slice_release(sl.seg);
    /* Large budgets: everything, via the index skip. */
    ck_assert_int_eq(sf_log_read(log, 5, 1 << 30, INT64_MAX, &sl), SF_OK);
    ck_assert_int_eq(check_slice(&sl, 5, NULL), 18);
    sf_log_slice_release(sl.seg);
    for (i = 1; i < 20; i++) {
        ck_assert_int_eq(sf_log_read(log, 0, (int32_t)(i * one + one / 2), INT64_MAX, &sl),
                         SF_OK);
        ck_assert_int_eq(check_slice(&sl, 0, NULL), i);
        sf_log_slice_release(sl.seg);
    }
    sf_log_close(log);
}
END_TEST

START_TEST(test_max_offset) {
    sf_log_config_t cfg;
    sf_log_t *log;
    sf_log_slice_t sl;
    int64_t next;
    int i;

    small_config(&cfg);
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log), SF_OK);
    for (i = 0; i < 10; i++)
        append_batch(log, 5, 10, 1000, 0);
    for (i = 1; i <= 50; i++) {
        /* A bound anywhere: batches starting at or past it are left out. */
        int64_t bound = i, expect_next = ((bound + 4) / 5) * 5;
        ck_assert_int_eq(sf_log_read(log, 0, 1 << 20, bound, &sl), SF_OK);
        check_slice(&sl, 0, &next);
        ck_assert(next == expect_next);
        sf_log_slice_release(sl.seg);
    }
    ck_assert_int_eq(sf_log_read(log, 0, 1 << 20, 0, &sl), SF_OK);
    ck_assert_uint_eq(sl.len, 0);
    ck_assert_int_eq(sf_log_read(log, 15, 1 << 20, 15, &sl), SF_OK);
    ck_assert_uint_eq(sl.len, 0);
    ck_assert_ptr_null(sl.seg);
    /* The high watermark setter clamps and the bound follows it. */
    sf_log_set_high_watermark(log, 20);
    ck_assert(sf_log_high_watermark(log) == 20);
    append_batch(log, 5, 10, 1000, 0);
    ck_assert(sf_log_high_watermark(log) == 20);
    sf_log_set_high_watermark(log, 1000);
    ck_assert(sf_log_high_watermark(log) == 55);
    sf_log_set_high_watermark(log, -1);
    append_batch(log, 5, 10, 1000, 0);
    ck_assert(sf_log_high_watermark(log) == 60);
    sf_log_close(log);
}
END_TEST

START_TEST(test_roll_by_size) {
    sf_log_config_t cfg;
    sf_log_t *log;
    int64_t off, start;
    size_t nsegs;
    int i;

    small_config(&cfg);
    cfg.segment_bytes = 4096;
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log), SF_OK);
    for (i = 0; i < 100; i++)
        append_batch(log, 3, 200, 1000 + i * 3, 0);
    nsegs = sf_log_segment_count(log);
    /* ~100 * 700 bytes in 4 KiB segments */
    ck_assert_uint_ge(nsegs, 15);
    /* Every offset can be read, each read stays inside one segment. */
    for (off = 0; off < 300; off++) {
        sf_log_slice_t sl;
        ck_assert_int_eq(sf_log_read(log, off, 1 << 20, INT64_MAX, &sl), SF_OK);
        ck_assert_uint_le(sl.len, 4096);
        check_slice(&sl, off, NULL);
        sf_log_slice_release(sl.seg);
    }
    /* Reads across a boundary: reading from 0 with a big budget ends at segment 0's end, and
     * the next read continues where it stopped. */
    start = 0;
    for (i = 0; start < 300; i++) {
        sf_log_slice_t sl;
        int64_t next;
        ck_assert_int_eq(sf_log_read(log, start, 1 << 20, INT64_MAX, &sl), SF_OK);
        check_slice(&sl, start, &next);
        sf_log_slice_release(sl.seg);
        start = next;
    }
    ck_assert_uint_eq((size_t)i, nsegs);
    sf_log_close(log);
    /* The files are there. */
    {
        char path[256];
        partition_file(path, sizeof(path), "t", 0, 0, ".log");
        ck_assert(file_exists(path));
        ck_assert_int_le(file_size(path), 4096);
    }
}
END_TEST

START_TEST(test_offset_for_timestamp) {
    sf_log_config_t cfg;
    sf_log_t *log;
    int64_t off, ts;
    int i;

    small_config(&cfg);
    cfg.segment_bytes = 2048;
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log), SF_OK);
    /* Record k (k = 0..399) has timestamp 10000 + 10 k. */
    for (i = 0; i < 100; i++) {
        sf_wbuf_t wb;
        sf_recbatch_record_t recs[4];
        int j;
        memset(recs, 0, sizeof(recs));
        for (j = 0; j < 4; j++) {
            recs[j].timestamp = 10000 + 10 * (i * 4 + j);
            recs[j].key.len = -1;
            recs[j].value = sf_slice_cstr("value-value-value-value");
        }
        sf_wbuf_init(&wb);
        ck_assert_int_eq(sf_recbatch_build(&wb, 0, recs[0].timestamp, recs, 4), SF_OK);
        ck_assert_int_eq(sf_log_append(log, wb.p, wb.len, 0, NULL), SF_OK);
        sf_wbuf_free(&wb);
    }
    ck_assert_uint_gt(sf_log_segment_count(log), 3);
    for (i = 0; i < 400; i++) {
        ck_assert_int_eq(sf_log_offset_for_timestamp(log, 10000 + 10 * i, &off, &ts), SF_OK);
        ck_assert(off == i);
        ck_assert(ts == 10000 + 10 * i);
        /* Between two records: the later one. */
        ck_assert_int_eq(sf_log_offset_for_timestamp(log, 10000 + 10 * i - 3, &off, &ts), SF_OK);
        ck_assert(off == i);
    }
    ck_assert_int_eq(sf_log_offset_for_timestamp(log, 0, &off, &ts), SF_OK);
    ck_assert(off == 0);
    ck_assert_int_eq(sf_log_offset_for_timestamp(log, 10000 + 10 * 399 + 1, &off, &ts),
                     SF_ERR_NOTFOUND);
    sf_log_close(log);
    /* Same answers after a clean reopen (sealed segments map their time index lazily). */
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, INT64_MAX, &log), SF_OK);
    for (i = 0; i < 400; i += 7) {
        ck_assert_int_eq(sf_log_offset_for_timestamp(log, 10000 + 10 * i - 1, &off, &ts), SF_OK);
        ck_assert(off == i);
    }
    sf_log_close(log);
}
END_TEST

START_TEST(test_retention_bytes) {
    sf_log_config_t cfg;
    sf_log_t *log;
    sf_log_slice_t sl;
    int64_t start, size_before;
    size_t nsegs;
    char path[256];
    int i, deleted;

    small_config(&cfg);
    cfg.segment_bytes = 4096;
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log), SF_OK);
    for (i = 0; i < 100; i++)
        append_batch(log, 3, 200, 1000, 1000);
    nsegs = sf_log_segment_count(log);
    size_before = sf_log_size_bytes(log);
    /* Nothing to do with the defaults (7 days from the records' timestamps: now = 1000). */
    ck_assert_int_eq(sf_log_retention(log, 1000), 0);
    cfg.retention_bytes = 10000;
    sf_log_set_config(log, &cfg);
    deleted = sf_log_retention(log, 1000);
    ck_assert_int_gt(deleted, 0);
    ck_assert_uint_eq(sf_log_segment_count(log), nsegs - (size_t)deleted);
    ck_assert_int_ge(sf_log_size_bytes(log), 10000);
    ck_assert_int_le(sf_log_size_bytes(log), 10000 + 4096);
    ck_assert_int_lt(sf_log_size_bytes(log), size_before);
    start = sf_log_start_offset(log);
    ck_assert(start > 0);
    ck_assert(sf_log_end_offset(log) == 300);
    ck_assert_int_eq(sf_log_read(log, start - 1, 1 << 20, INT64_MAX, &sl), SF_ERR_RANGE);
    ck_assert_int_eq(sf_log_read(log, start, 1 << 20, INT64_MAX, &sl), SF_OK);
    check_slice(&sl, start, NULL);
    sf_log_slice_release(sl.seg);
    partition_file(path, sizeof(path), "t", 0, 0, ".log");
    ck_assert(!file_exists(path));
    partition_file(path, sizeof(path), "t", 0, 0, ".index");
    ck_assert(!file_exists(path));
    /* Stable once under the limit. */
    ck_assert_int_eq(sf_log_retention(log, 1000), 0);
    sf_log_close(log);
    /* The start offset survives a reopen. */
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, INT64_MAX, &log), SF_OK);
    ck_assert(sf_log_start_offset(log) == start);
    ck_assert(sf_log_end_offset(log) == 300);
    sf_log_close(log);
}
END_TEST

START_TEST(test_retention_time_and_roll) {
    sf_log_config_t cfg;
    sf_log_t *log;
    int i;

    small_config(&cfg);
    cfg.segment_bytes = 4096;
    cfg.retention_ms = 1000;
    cfg.roll_ms = 500;
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log), SF_OK);
    /* Old records (timestamps around 1000) then new ones (around 100000). */
    for (i = 0; i < 30; i++)
        append_batch(log, 3, 200, 1000 + i, 1000);
    ck_assert_uint_gt(sf_log_segment_count(log), 3);
    /* Appending after roll_ms rolls even a small segment. */
    append_batch(log, 3, 200, 100000, 100000);
    {
        size_t before = sf_log_segment_count(log);
        int64_t leo = sf_log_end_offset(log);
        int deleted = sf_log_retention(log, 100500);
        /* Everything but the newest segment (which holds offset leo - 3) is old. */
        ck_assert_int_eq(deleted, (int)before - 1);
        ck_assert_uint_eq(sf_log_segment_count(log), 1);
        ck_assert(sf_log_start_offset(log) == leo - 3);
        /* roll_ms elapsed since its first append: retention rolls the active segment. */
        ck_assert_int_eq(sf_log_retention(log, 100000 + 501), 0);
        ck_assert_uint_eq(sf_log_segment_count(log), 2);
        /* The empty active segment is never deleted nor rolled. */
        ck_assert_int_eq(sf_log_retention(log, 1000000), 1);
        ck_assert_uint_eq(sf_log_segment_count(log), 1);
        ck_assert(sf_log_start_offset(log) == leo);
        ck_assert(sf_log_end_offset(log) == leo);
    }
    /* Appending into the emptied log continues the offsets. */
    ck_assert(append_batch(log, 1, 10, 2000000, 2000000) == sf_log_start_offset(log));
    sf_log_close(log);
}
END_TEST

/* A slice handed out before retention deletes its segment stays readable. */
START_TEST(test_slice_outlives_segment) {
    sf_log_config_t cfg;
    sf_log_t *log;
    sf_log_slice_t sl;
    int i;

    small_config(&cfg);
    cfg.segment_bytes = 4096;
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log), SF_OK);
    for (i = 0; i < 40; i++)
        append_batch(log, 3, 200, 1000, 1000);
    ck_assert_int_eq(sf_log_read(log, 0, 1 << 20, INT64_MAX, &sl), SF_OK);
    cfg.retention_bytes = 0;
    sf_log_set_config(log, &cfg);
    ck_assert_int_gt(sf_log_retention(log, 1000), 0);
    ck_assert(sf_log_start_offset(log) > 0);
    check_slice(&sl, 0, NULL);
    sf_log_slice_release(sl.seg);
    sf_log_slice_release(NULL);
    sf_log_close(log);
}
END_TEST

START_TEST(test_reopen_clean) {
    sf_log_config_t cfg;
    sf_log_t *log;
    sf_log_slice_t sl;
    int64_t leo, next, off;
    int i;

    small_config(&cfg);
    cfg.segment_bytes = 8192;
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 3, &cfg, 0, &log), SF_OK);
    for (i = 0; i < 100; i++)
        append_batch(log, 1 + i % 4, 100, 1000 + i, 0);
    leo = sf_log_end_offset(log);
    ck_assert_int_eq(sf_log_flush(log), SF_OK);
    ck_assert(sf_log_recovery_point(log) == leo);
    sf_log_close(log);

    ck_assert_int_eq(sf_log_open(tmpdir, "t", 3, &cfg, INT64_MAX, &log), SF_OK);
    ck_assert(sf_log_end_offset(log) == leo);
    ck_assert(sf_log_recovery_point(log) == leo);
    for (off = 0; off < leo; off += 3) {
        ck_assert_int_eq(sf_log_read(log, off, 500, INT64_MAX, &sl), SF_OK);
        check_slice(&sl, off, NULL);
        sf_log_slice_release(sl.seg);
    }
    ck_assert(append_batch(log, 2, 10, 5000, 0) == leo);
    ck_assert_int_eq(sf_log_read(log, leo, 1 << 20, INT64_MAX, &sl), SF_OK);
    ck_assert_int_eq(check_slice(&sl, leo, &next), 1);
    ck_assert(next == leo + 2);
    sf_log_slice_release(sl.seg);
    sf_log_close(log);

    /* And a full recovery of the same data finds the same end. */
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 3, &cfg, 0, &log), SF_OK);
    ck_assert(sf_log_end_offset(log) == leo + 2);
    ck_assert(sf_log_recovery_point(log) == 0);
    sf_log_close(log);
}
END_TEST

START_TEST(test_flush_policy) {
    sf_log_config_t cfg;
    sf_log_t *log;

    small_config(&cfg);
    cfg.flush_messages = 5;
    cfg.flush_ms = 1000;
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log), SF_OK);
    ck_assert_int_eq(sf_log_needs_flush(log, 0), 0);
    append_batch(log, 2, 10, 1, 100);
    ck_assert_int_eq(sf_log_needs_flush(log, 100), 0);
    ck_assert_int_eq(sf_log_needs_flush(log, 1100), 1); /* by time */
    append_batch(log, 3, 10, 1, 100);
    ck_assert_int_eq(sf_log_needs_flush(log, 100), 1); /* by count */
    ck_assert(sf_log_recovery_point(log) == 0);
    ck_assert_int_eq(sf_log_flush(log), SF_OK);
    ck_assert(sf_log_recovery_point(log) == 5);
    ck_assert_int_eq(sf_log_needs_flush(log, 5000), 0);
    sf_log_close(log);
}
END_TEST

/* A roll asks for a flush (as Kafka flushes the old segment in the background). */
START_TEST(test_flush_after_roll) {
    sf_log_config_t cfg;
    sf_log_t *log;
    int i;
    small_config(&cfg);
    cfg.segment_bytes = 2048;
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log), SF_OK);
    append_batch(log, 1, 100, 1, 100);
    ck_assert_int_eq(sf_log_needs_flush(log, 100), 0);
    for (i = 0; i < 30; i++)
        append_batch(log, 1, 100, 1, 100);
    ck_assert_int_eq(sf_log_needs_flush(log, 100), 1);
    ck_assert_int_eq(sf_log_flush(log), SF_OK);
    ck_assert_int_eq(sf_log_needs_flush(log, 100), 0);
    sf_log_close(log);
}
END_TEST

typedef struct flush_arg {
    sf_log_t *log;
    atomic_int stop;
    int flushes, errors;
} flush_arg_t;

static void *flush_thread(void *p) {
    flush_arg_t *fa = p;
    while (!atomic_load(&fa->stop)) {
        if (sf_log_flush(fa->log) != SF_OK)
            fa->errors++;
        fa->flushes++;
    }
    return NULL;
}

/* Flushes on another thread while appends, reads, rolls and retention go on. */
START_TEST(test_concurrent_flush) {
    sf_log_config_t cfg;
    sf_log_t *log;
    pthread_t th;
    flush_arg_t fa;
    int64_t rp_prev = 0;
    int i;

    small_config(&cfg);
    cfg.segment_bytes = 16384;
    cfg.retention_bytes = 65536;
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log), SF_OK);
    memset(&fa, 0, sizeof(fa));
    fa.log = log;
    ck_assert_int_eq(pthread_create(&th, NULL, flush_thread, &fa), 0);
    for (i = 0; i < 3000; i++) {
        sf_log_slice_t sl;
        int64_t rp;
        append_batch(log, 2, 100, 1000 + i, 1000);
        if (i % 10 == 0) {
            int64_t start = sf_log_start_offset(log);
            ck_assert_int_eq(sf_log_read(log, start + (sf_log_end_offset(log) - start) / 2,
                                         4096, INT64_MAX, &sl), SF_OK);
            check_slice(&sl, start + (sf_log_end_offset(log) - start) / 2, NULL);
            sf_log_slice_release(sl.seg);
        }
        if (i % 100 == 0)
            ck_assert_int_ge(sf_log_retention(log, 1000), 0);
        rp = sf_log_recovery_point(log);
        ck_assert(rp >= rp_prev && rp <= sf_log_end_offset(log));
        rp_prev = rp;
    }
    atomic_store(&fa.stop, 1);
    pthread_join(th, NULL);
    ck_assert_int_eq(fa.errors, 0);
    ck_assert_int_gt(fa.flushes, 0);
    ck_assert_int_eq(sf_log_flush(log), SF_OK);
    ck_assert(sf_log_recovery_point(log) == 6000);
    sf_log_close(log);
}
END_TEST

START_TEST(test_delete) {
    sf_log_config_t cfg;
    sf_log_t *log;
    char path[256];
    small_config(&cfg);
    ck_assert_int_eq(sf_log_open(tmpdir, "gone", 0, &cfg, 0, &log), SF_OK);
    append_batch(log, 1, 10, 1, 0);
    snprintf(path, sizeof(path), "%s/gone-0", tmpdir);
    ck_assert(file_exists(path));
    ck_assert_str_eq(sf_log_path(log), path);
    ck_assert_int_eq(sf_log_delete(log), SF_OK);
    ck_assert(!file_exists(path));
}
END_TEST

/* ---- log: DeleteRecords ---- */




/* No .log, .index or .timeindex of the segment at @base is left. */
static int segment_gone(const char *topic, int part, int64_t base) {
    static const char *const exts[] = {".log", ".index", ".timeindex"};
    char path[256];
    size_t i;
    for (i = 0; i < 3; i++) {
        partition_file(path, sizeof(path), topic, part, base, exts[i]);
        if (file_exists(path))
            return 0;
    }
    return 1;
}

START_TEST(test_delete_records_middle) {
    sf_log_config_t cfg;
    sf_log_t *log;
    sf_log_slice_t sl, held;
    sf_log_append_info_t info;
    sf_wbuf_t wb;
    int64_t bases[64], target, lw = -1, off, ts, next;
    size_t nsegs;

    segment_config(&cfg);
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log), SF_OK);
    fill_segments(log);
    nsegs = segment_bases(tmpdir, "t", 0, 120, bases, 64);
    ck_assert_uint_eq(nsegs, sf_log_segment_count(log));
    ck_assert_uint_ge(nsegs, 5);
    /* Inside segment 2, and inside a batch (batches start at multiples of 3). */
    target = bases[2] + 4;
    ck_assert(target < bases[3] && target % 3 != 0);
    /* A reader holding a slice of a segment about to go. */
    ck_assert_int_eq(sf_log_read(log, 0, 1 << 20, INT64_MAX, &held), SF_OK);

    ck_assert_int_eq(sf_log_delete_records(log, target, &lw), SF_OK);
    ck_assert(lw == target);
    ck_assert(sf_log_start_offset(log) == target);
    ck_assert(sf_log_base_offset(log) == bases[2]);
    ck_assert(sf_log_end_offset(log) == 120);
    ck_assert_uint_eq(sf_log_segment_count(log), nsegs - 2);
    ck_assert(segment_gone("t", 0, bases[0]));
    ck_assert(segment_gone("t", 0, bases[1]));
    ck_assert(!segment_gone("t", 0, bases[2]));
    ck_assert(sf_log_recovery_point(log) >= target);
    /* The held slice still reads the unlinked segment. */
    ck_assert_int_eq(check_slice(&held, 0, NULL) > 0, 1);
    sf_log_slice_release(held.seg);

    /* Below the start: out of range, even where the bytes are still in segment 2. */
    ck_assert_int_eq(sf_log_read(log, 0, 1 << 20, INT64_MAX, &sl), SF_ERR_RANGE);
    ck_assert_int_eq(sf_log_read(log, bases[2], 1 << 20, INT64_MAX, &sl), SF_ERR_RANGE);
    ck_assert_int_eq(sf_log_read(log, target - 1, 1 << 20, INT64_MAX, &sl), SF_ERR_RANGE);
    ck_assert_ptr_null(sl.seg);
    /* At and after it, everything reads (whole batches: the first one holds @target). */
    for (off = target; off < 120; off++) {
        ck_assert_int_eq(sf_log_read(log, off, 1 << 20, INT64_MAX, &sl), SF_OK);
        check_slice(&sl, off, NULL);
        sf_log_slice_release(sl.seg);
    }
    ck_assert_int_eq(sf_log_read(log, target, 1 << 20, INT64_MAX, &sl), SF_OK);
    ck_assert_int_eq(check_slice(&sl, target, &next) > 0, 1);
    ck_assert(next > target);
    sf_log_slice_release(sl.seg);

    /* Timestamp lookups never answer below the start. */
    ck_assert_int_eq(sf_log_offset_for_timestamp(log, 0, &off, &ts), SF_OK);
    ck_assert(off == target);
    ck_assert(ts == 1000 + target);
    ck_assert_int_eq(sf_log_offset_for_timestamp(log, 1000 + target - 3, &off, &ts), SF_OK);
    ck_assert(off == target);
    ck_assert_int_eq(sf_log_offset_for_timestamp(log, 1000 + target + 5, &off, &ts), SF_OK);
    ck_assert(off == target + 5);

    /* The high watermark is clamped to the new start; appends report it. */
    sf_log_set_high_watermark(log, 0);
    ck_assert(sf_log_high_watermark(log) == target);
    sf_log_set_high_watermark(log, -1);
    sf_wbuf_init(&wb);
    make_batch(&wb, 1, 10, 5000);
    ck_assert_int_eq(sf_log_append(log, wb.p, wb.len, 0, &info), SF_OK);
    sf_wbuf_free(&wb);
    ck_assert(info.FirstOffset == 120);
    ck_assert(info.LogStartOffset == target);

    /* Lower than (or equal to) the start: nothing changes. */
    lw = -1;
    ck_assert_int_eq(sf_log_delete_records(log, target - 3, &lw), SF_OK);
    ck_assert(lw == target);
    ck_assert_int_eq(sf_log_delete_records(log, 0, NULL), SF_OK);
    ck_assert_int_eq(sf_log_delete_records(log, target, &lw), SF_OK);
    ck_assert(lw == target);
    ck_assert(sf_log_start_offset(log) == target);
    ck_assert_uint_eq(sf_log_segment_count(log), nsegs - 2);
    ck_assert(!segment_gone("t", 0, bases[2]));

    /* Exactly at a segment's base: the segments before it go, and start == base. */
    ck_assert_int_eq(sf_log_delete_records(log, bases[4], &lw), SF_OK);
    ck_assert(lw == bases[4]);
    ck_assert(sf_log_start_offset(log) == bases[4]);
    ck_assert(sf_log_base_offset(log) == bases[4]);
    ck_assert_uint_eq(sf_log_segment_count(log), nsegs - 4);
    ck_assert(segment_gone("t", 0, bases[2]));
    ck_assert(segment_gone("t", 0, bases[3]));
    ck_assert_int_eq(sf_log_read(log, bases[4], 1 << 20, INT64_MAX, &sl), SF_OK);
    check_slice(&sl, bases[4], NULL);
    sf_log_slice_release(sl.seg);
    sf_log_close(log);
}
END_TEST

/* -1 means the high watermark; nothing above it can be deleted; the whole log can. */
START_TEST(test_delete_records_high_watermark) {
    sf_log_config_t cfg;
    sf_log_t *log;
    sf_log_slice_t sl;
    int64_t lw = -1, off, ts, bases[64];
    size_t nsegs;

    segment_config(&cfg);
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log), SF_OK);
    /* An empty log: the only offset is 0. */
    ck_assert_int_eq(sf_log_delete_records(log, 1, &lw), SF_ERR_RANGE);
    ck_assert_int_eq(sf_log_delete_records(log, -1, &lw), SF_OK);
    ck_assert(lw == 0);
    fill_segments(log);
    nsegs = segment_bases(tmpdir, "t", 0, 120, bases, 64);
    ck_assert_uint_ge(nsegs, 5);

    sf_log_set_high_watermark(log, 50);
    lw = -1;
    ck_assert_int_eq(sf_log_delete_records(log, 51, &lw), SF_ERR_RANGE);
    ck_assert_int_eq(sf_log_delete_records(log, 120, &lw), SF_ERR_RANGE);
    ck_assert_int_eq(sf_log_delete_records(log, INT64_MAX, &lw), SF_ERR_RANGE);
    ck_assert_int_eq(sf_log_delete_records(log, -2, &lw), SF_ERR_RANGE);
    ck_assert_int_eq(sf_log_delete_records(log, INT64_MIN, &lw), SF_ERR_RANGE);
    ck_assert(lw == -1); /* untouched on failure */
    ck_assert(sf_log_start_offset(log) == 0);
    ck_assert_uint_eq(sf_log_segment_count(log), nsegs);

    ck_assert_int_eq(sf_log_delete_records(log, -1, &lw), SF_OK);
    ck_assert(lw == 50);
    ck_assert(sf_log_start_offset(log) == 50);
    ck_assert(sf_log_high_watermark(log) == 50);
    ck_assert_int_eq(sf_log_read(log, 49, 1 << 20, INT64_MAX, &sl), SF_ERR_RANGE);
    ck_assert_int_eq(sf_log_read(log, 50, 1 << 20, INT64_MAX, &sl), SF_OK);
    check_slice(&sl, 50, NULL);
    sf_log_slice_release(sl.seg);

    /* Back to "high watermark == LEO", then delete everything. */
    sf_log_set_high_watermark(log, -1);
    ck_assert_int_eq(sf_log_delete_records(log, -1, &lw), SF_OK);
    ck_assert(lw == 120);
    ck_assert(sf_log_start_offset(log) == 120);
    ck_assert(sf_log_end_offset(log) == 120);
    /* The active segment stays, though all it holds is below the start. */
    ck_assert_uint_eq(sf_log_segment_count(log), 1);
    ck_assert(sf_log_base_offset(log) == bases[nsegs - 1]);
    ck_assert(sf_log_base_offset(log) < 120);
    ck_assert(segment_gone("t", 0, bases[nsegs - 2]));
    ck_assert_int_eq(sf_log_read(log, 119, 1 << 20, INT64_MAX, &sl), SF_ERR_RANGE);
    ck_assert_int_eq(sf_log_read(log, 120, 1 << 20, INT64_MAX, &sl), SF_OK);
    ck_assert_uint_eq(sl.len, 0);
    ck_assert_int_eq(sf_log_offset_for_timestamp(log, 0, &off, &ts), SF_ERR_NOTFOUND);
    /* Appends go on from there. */
    ck_assert(append_batch(log, 2, 10, 9000, 0) == 120);
    ck_assert_int_eq(sf_log_offset_for_timestamp(log, 0, &off, &ts), SF_OK);
    ck_assert(off == 120 && ts == 9000);
    ck_assert_int_eq(sf_log_read(log, 120, 1 << 20, INT64_MAX, &sl), SF_OK);
    ck_assert_int_eq(check_slice(&sl, 120, &off), 1);
    ck_assert(off == 122);
    sf_log_slice_release(sl.seg);
    sf_log_close(log);
}
END_TEST

/* Retention after DeleteRecords: it deletes what it would have, and the start never goes back
 * below the one DeleteRecords set. */
START_TEST(test_delete_records_retention) {
    sf_log_config_t cfg;
    sf_log_t *log;
    sf_log_slice_t sl;
    int64_t bases[64], target, active;
    size_t nsegs;

    segment_config(&cfg);
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log), SF_OK);
    fill_segments(log);
    nsegs = segment_bases(tmpdir, "t", 0, 120, bases, 64);
    ck_assert_uint_ge(nsegs, 5);
    active = bases[nsegs - 1];
    target = bases[1] + 2;
    ck_assert_int_eq(sf_log_delete_records(log, target, NULL), SF_OK);
    /* Default retention (7 days after the records' timestamps): nothing goes. */
    ck_assert_int_eq(sf_log_retention(log, 1000), 0);
    ck_assert(sf_log_start_offset(log) == target);
    ck_assert_uint_eq(sf_log_segment_count(log), nsegs - 1);
    /* By size: all but the active segment; the start follows the segments. */
    cfg.retention_bytes = 0;
    sf_log_set_config(log, &cfg);
    ck_assert_int_eq(sf_log_retention(log, 1000), (int)nsegs - 2);
    ck_assert_uint_eq(sf_log_segment_count(log), 1);
    ck_assert(sf_log_start_offset(log) == active);
    ck_assert(segment_gone("t", 0, bases[nsegs - 2]));
    ck_assert_int_eq(sf_log_read(log, target, 1 << 20, INT64_MAX, &sl), SF_ERR_RANGE);
    ck_assert_int_eq(sf_log_read(log, active, 1 << 20, INT64_MAX, &sl), SF_OK);
    sf_log_slice_release(sl.seg);
    /* Into the active segment: retention never deletes it, and the start stays. */
    ck_assert_int_eq(sf_log_delete_records(log, 118, NULL), SF_OK);
    ck_assert(sf_log_base_offset(log) == active);
    cfg.retention_ms = 0;
    cfg.roll_ms = 1000;
    sf_log_set_config(log, &cfg);
    ck_assert_int_eq(sf_log_retention(log, 1000), 0);
    ck_assert(sf_log_start_offset(log) == 118);
    /* roll_ms elapsed: retention rolls it, and the next round deletes it by time. */
    ck_assert_int_eq(sf_log_retention(log, 2000000), 0);
    ck_assert_uint_eq(sf_log_segment_count(log), 2);
    ck_assert(sf_log_start_offset(log) == 118);
    ck_assert_int_eq(sf_log_retention(log, 2000000), 1);
    ck_assert(sf_log_start_offset(log) == 120);
    ck_assert(sf_log_base_offset(log) == 120);
    ck_assert(segment_gone("t", 0, active));
    ck_assert(append_batch(log, 1, 10, 2000000, 2000000) == 120);
    sf_log_close(log);
}
END_TEST

/* ---- log: limits (validation and recovery) ---- */

START_TEST(test_append_rejects) {
    sf_log_config_t cfg;
    sf_log_t *log;
    sf_wbuf_t wb;
    size_t first;
    char path[256];
    int64_t size;

    small_config(&cfg);
    cfg.max_message_bytes = 2000;
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log), SF_OK);
    append_batch(log, 1, 10, 1, 0);
    partition_file(path, sizeof(path), "t", 0, 0, ".log");
    size = file_size(path);

    sf_wbuf_init(&wb);
    make_batch(&wb, 2, 10, 1);
    first = wb.len;
    make_batch(&wb, 2, 10, 1);
    /* The second batch is corrupt: nothing of the first one is written either. */
    wb.p[wb.len - 1] ^= 0x55;
    ck_assert_int_eq(sf_log_append(log, wb.p, wb.len, 0, NULL), SF_ERR_CORRUPT);
    wb.p[wb.len - 1] ^= 0x55;
    /* Partial second batch. */
    ck_assert_int_eq(sf_log_append(log, wb.p, wb.len - 1, 0, NULL), SF_ERR_MALFORMED);
    ck_assert_int_eq(sf_log_append(log, wb.p, first + 30, 0, NULL), SF_ERR_MALFORMED);
    ck_assert_int_eq(sf_log_append(log, wb.p, 0, 0, NULL), SF_ERR_MALFORMED);
    /* Magic 1. */
    wb.p[first + SF_RECBATCH_OFF_MAGIC] = 1;
    ck_assert_int_eq(sf_log_append(log, wb.p, wb.len, 0, NULL), SF_ERR_UNSUPPORTED);
    wb.p[first + SF_RECBATCH_OFF_MAGIC] = 2;
    ck_assert(sf_log_end_offset(log) == 1);
    ck_assert_int_eq(file_size(path), size);
    /* Wrong count (re-signed so only the count is wrong). */
    sf_store_be32(wb.p + first + SF_RECBATCH_OFF_RECORD_COUNT, 3);
    sf_store_be32(wb.p + first + SF_RECBATCH_OFF_CRC,
                  sf_crc32c(0, wb.p + first + 21, wb.len - first - 21));
    ck_assert_int_eq(sf_log_append(log, wb.p, wb.len, 0, NULL), SF_ERR_MALFORMED);
    sf_wbuf_free(&wb);

    /* Over message.max.bytes. */
    sf_wbuf_init(&wb);
    make_batch(&wb, 1, 2000, 1);
    ck_assert_int_eq(sf_log_append(log, wb.p, wb.len, 0, NULL), SF_ERR_TOOLARGE);
    sf_wbuf_free(&wb);
    ck_assert(sf_log_end_offset(log) == 1);
    ck_assert_int_eq(file_size(path), size);
    sf_log_close(log);
}
END_TEST

/* Batch boundaries of a .log file. */
static size_t batch_starts(const char *path, int64_t *starts, size_t max) {
    FILE *f = fopen(path, "rb");
    uint8_t hdrb[SF_RECBATCH_HEADER_SIZE];
    int64_t pos = 0;
    size_t n = 0;
    ck_assert_ptr_nonnull(f);
    while (n < max && fseek(f, pos, SEEK_SET) == 0 && fread(hdrb, 1, sizeof(hdrb), f) == sizeof(hdrb)) {
        sf_recbatch_hdr_t hdr;
        size_t size;
        sf_recbatch_header_parse(hdrb, sizeof(hdrb), &hdr, &size);
        starts[n++] = pos;
        pos += (int64_t)size;
    }
    starts[n] = pos;
    fclose(f);
    return n;
}



/* Truncate the .log at every byte offset inside the last batch: recovery ends the log at the
 * previous batch, and appending afterwards works. */
START_TEST(test_recovery_torn_tail) {
    sf_log_config_t cfg;
    sf_log_t *log;
    char path[256];
    int64_t starts[64], cut, prev_end_offset;
    uint8_t *orig;
    size_t len, nb;
    int i;

    small_config(&cfg);
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log), SF_OK);
    for (i = 0; i < 6; i++)
        append_batch(log, 3, 40, 1000 + i, 0);
    prev_end_offset = 15; /* the last batch holds 15..17 */
    sf_log_close(log);
    partition_file(path, sizeof(path), "t", 0, 0, ".log");
    nb = batch_starts(path, starts, 63);
    ck_assert_uint_eq(nb, 6);
    orig = read_file(path, &len);
    ck_assert_int_eq((int64_t)len, starts[6]);

    for (cut = starts[5]; cut < starts[6]; cut++) {
        sf_log_slice_t sl;
        int64_t next;
        write_file(path, orig, (size_t)cut);
        ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log), SF_OK);
        ck_assert(sf_log_end_offset(log) == prev_end_offset);
        ck_assert_int_eq(file_size(path), starts[5]);
        ck_assert(append_batch(log, 2, 40, 9999, 0) == prev_end_offset);
        ck_assert_int_eq(sf_log_read(log, 0, 1 << 20, INT64_MAX, &sl), SF_OK);
        ck_assert_int_eq(check_slice(&sl, 0, &next), 6);
        ck_assert(next == prev_end_offset + 2);
        sf_log_slice_release(sl.seg);
        sf_log_close(log);
    }
    free(orig);
}
END_TEST

/* The same with clean-shutdown loading (header scan only): a partial tail is cut too. */
START_TEST(test_clean_load_partial_tail) {
    sf_log_config_t cfg;
    sf_log_t *log;
    char path[256];
    int64_t starts[64];
    int i;

    small_config(&cfg);
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log), SF_OK);
    for (i = 0; i < 6; i++)
        append_batch(log, 3, 40, 1000 + i, 0);
    sf_log_close(log);
    partition_file(path, sizeof(path), "t", 0, 0, ".log");
    batch_starts(path, starts, 63);
    ck_assert_int_eq(truncate(path, starts[5] + 70), 0);
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, INT64_MAX, &log), SF_OK);
    ck_assert(sf_log_end_offset(log) == 15);
    ck_assert_int_eq(file_size(path), starts[5]);
    sf_log_close(log);
}
END_TEST

START_TEST(test_recovery_garbage_tail) {
    sf_log_config_t cfg;
    sf_log_t *log;
    char path[256];
    int64_t size;
    uint8_t junk[5000];
    FILE *f;
    int i, pass;

    small_config(&cfg);
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log), SF_OK);
    for (i = 0; i < 10; i++)
        append_batch(log, 2, 100, 1000 + i, 0);
    sf_log_close(log);
    partition_file(path, sizeof(path), "t", 0, 0, ".log");
    size = file_size(path);
    srand(42);
    for (pass = 0; pass < 5; pass++) {
        /* zeros, random bytes, a valid header with a bad CRC, preallocated 0xff, and a valid
         * batch whose offsets go backwards */
        size_t n = sizeof(junk);
        if (pass == 0)
            memset(junk, 0, n);
        else if (pass == 1)
            for (i = 0; i < (int)n; i++)
                junk[i] = (uint8_t)rand();
        else if (pass == 2) {
            sf_wbuf_t wb;
            sf_wbuf_init(&wb);
            make_batch(&wb, 2, 100, 1000);
            sf_recbatch_set_base_offset(wb.p, 20);
            wb.p[wb.len - 1] ^= 1;
            memcpy(junk, wb.p, wb.len);
            n = wb.len;
            sf_wbuf_free(&wb);
        } else if (pass == 3) {
            memset(junk, 0xff, n);
        } else {
            sf_wbuf_t wb;
            sf_wbuf_init(&wb);
            make_batch(&wb, 2, 100, 1000);
            sf_recbatch_set_base_offset(wb.p, 18); /* overlaps 18..19 */
            ck_assert_int_eq(sf_recbatch_validate(wb.p, wb.len, NULL), SF_OK);
            memcpy(junk, wb.p, wb.len);
            n = wb.len;
            sf_wbuf_free(&wb);
        }
        f = fopen(path, "ab");
        ck_assert_uint_eq(fwrite(junk, 1, n, f), n);
        fclose(f);
        ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log), SF_OK);
        ck_assert(sf_log_end_offset(log) == 20);
        ck_assert_int_eq(file_size(path), size);
        sf_log_close(log);
    }
}
END_TEST

/* A CRC failure in an early segment, with acknowledged data after it: the partition goes
 * offline, nothing is served or appended, and no file changes. */
START_TEST(test_recovery_corrupt_middle) {
    sf_log_config_t cfg;
    sf_log_t *log;
    sf_log_slice_t sl;
    char path[256];
    int64_t starts[64], size, off, ts;
    size_t nsegs;
    sf_wbuf_t wb;
    uint8_t b;
    FILE *f;
    int i;

    small_config(&cfg);
    cfg.segment_bytes = 2048;
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log), SF_OK);
    for (i = 0; i < 40; i++)
        append_batch(log, 1, 200, 1000 + i, 0);
    nsegs = sf_log_segment_count(log);
    ck_assert_uint_gt(nsegs, 4);
    sf_log_close(log);
    partition_file(path, sizeof(path), "t", 0, 0, ".log");
    ck_assert_uint_ge(batch_starts(path, starts, 63), 4);
    size = file_size(path);
    /* Flip a value byte of the third batch (offset 2). */
    f = fopen(path, "r+b");
    fseek(f, starts[2] + 100, SEEK_SET);
    ck_assert_uint_eq(fread(&b, 1, 1, f), 1);
    b ^= 0x20;
    fseek(f, starts[2] + 100, SEEK_SET);
    fwrite(&b, 1, 1, f);
    fclose(f);
    /* A clean load trusts the data (no CRC check)... */
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, INT64_MAX, &log), SF_OK);
    ck_assert_int_eq(sf_log_offline(log), 0);
    sf_log_close(log);
    /* ... but recovery from a point before the damage finds it. */
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log), SF_OK);
    ck_assert_int_eq(sf_log_offline(log), 1);
    ck_assert_uint_eq(sf_log_segment_count(log), nsegs);
    ck_assert_int_eq(file_size(path), size);
    ck_assert_int_eq(sf_log_read(log, 0, 1 << 20, INT64_MAX, &sl), SF_ERR_IO);
    ck_assert_int_eq(sf_log_offset_for_timestamp(log, 0, &off, &ts), SF_ERR_IO);
    sf_wbuf_init(&wb);
    make_batch(&wb, 1, 10, 1);
    ck_assert_int_eq(sf_log_append(log, wb.p, wb.len, 0, NULL), SF_ERR_IO);
    sf_wbuf_free(&wb);
    ck_assert_int_eq(sf_log_flush(log), SF_OK);
    ck_assert_int_eq(sf_log_retention(log, INT64_MAX / 2), 0);
    sf_log_close(log);
    ck_assert_int_eq(file_size(path), size);
}
END_TEST

/* Recovery from a recovery point: earlier segments are trusted, later ones checked. */
START_TEST(test_recovery_point_partial) {
    sf_log_config_t cfg;
    sf_log_t *log;
    char path[256];
    int64_t starts[64];
    uint8_t b;
    FILE *f;
    int i;

    small_config(&cfg);
    cfg.segment_bytes = 2048;
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log), SF_OK);
    for (i = 0; i < 40; i++)
        append_batch(log, 1, 200, 1000 + i, 0);
    sf_log_close(log);
    /* Damage segment 0: recovering from offset 30 does not look at it. */
    partition_file(path, sizeof(path), "t", 0, 0, ".log");
    batch_starts(path, starts, 63);
    f = fopen(path, "r+b");
    fseek(f, starts[1] + 100, SEEK_SET);
    ck_assert_uint_eq(fread(&b, 1, 1, f), 1);
    b ^= 0x20;
    fseek(f, starts[1] + 100, SEEK_SET);
    fwrite(&b, 1, 1, f);
    fclose(f);
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 30, &log), SF_OK);
    ck_assert(sf_log_end_offset(log) == 40);
    ck_assert(sf_log_recovery_point(log) == 30);
    sf_log_close(log);
}
END_TEST

/* Deleted or damaged indexes are rebuilt; lookups still work. */
START_TEST(test_index_rebuild) {
    sf_log_config_t cfg;
    sf_log_t *log;
    char path[256];
    int64_t off, ts, bases[64];
    size_t nseg, s;
    int i, pass;

    small_config(&cfg);
    cfg.segment_bytes = 8192;
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log), SF_OK);
    for (i = 0; i < 200; i++)
        append_batch(log, 1, 60, 10000 + i * 10, 0);
    nseg = sf_log_segment_count(log);
    ck_assert_uint_gt(nseg, 2);
    /* Remember the segment bases. */
    for (s = 0, off = 0; off < 200; off++) {
        sf_log_slice_t sl;
        ck_assert_int_eq(sf_log_read(log, off, 1, INT64_MAX, &sl), SF_OK);
        if (sl.pos == 0)
            bases[s++] = off;
        sf_log_slice_release(sl.seg);
    }
    ck_assert_uint_eq(s, nseg);
    sf_log_close(log);

    for (pass = 0; pass < 3; pass++) {
        for (s = 0; s < nseg; s++) {
            partition_file(path, sizeof(path), "t", 0, bases[s], ".index");
            if (pass == 0) {
                ck_assert_int_eq(unlink(path), 0);
                partition_file(path, sizeof(path), "t", 0, bases[s], ".timeindex");
                ck_assert_int_eq(unlink(path), 0);
            } else if (pass == 1) {
                /* entries out of order and past the end of the .log */
                uint8_t junk[64];
                memset(junk, 0xee, sizeof(junk));
                write_file(path, junk, sizeof(junk));
            } else {
                /* not a whole number of entries */
                uint8_t junk[13] = {0};
                write_file(path, junk, sizeof(junk));
            }
        }
        ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, INT64_MAX, &log), SF_OK);
        ck_assert(sf_log_end_offset(log) == 200);
        for (off = 0; off < 200; off++) {
            sf_log_slice_t sl;
            ck_assert_int_eq(sf_log_read(log, off, 100, INT64_MAX, &sl), SF_OK);
            ck_assert_int_eq(check_slice(&sl, off, NULL), 1);
            sf_log_slice_release(sl.seg);
        }
        for (i = 0; i < 200; i += 13) {
            ck_assert_int_eq(sf_log_offset_for_timestamp(log, 10000 + i * 10 - 5, &off, &ts),
                             SF_OK);
            ck_assert(off == i);
        }
        sf_log_close(log);
        for (s = 0; s < nseg; s++) {
            partition_file(path, sizeof(path), "t", 0, bases[s], ".index");
            ck_assert(file_exists(path));
            ck_assert_int_eq(file_size(path) % 8, 0);
            if (pass == 0)
                ck_assert_int_gt(file_size(path), 0);
        }
    }
}
END_TEST

START_TEST(test_open_invalid) {
    sf_log_config_t cfg;
    sf_log_t *log;
    char path[256];
    small_config(&cfg);
    ck_assert_int_eq(sf_log_open(tmpdir, "", 0, &cfg, 0, &log), SF_ERR_INVALID);
    ck_assert_int_eq(sf_log_open(tmpdir, "a/b", 0, &cfg, 0, &log), SF_ERR_INVALID);
    ck_assert_int_eq(sf_log_open(tmpdir, "..", 0, &cfg, 0, &log), SF_ERR_INVALID);
    ck_assert_int_eq(sf_log_open(tmpdir, "t", -1, &cfg, 0, &log), SF_ERR_INVALID);
    snprintf(path, sizeof(path), "%s/missing/deeper", tmpdir);
    ck_assert_int_eq(sf_log_open(path, "t", 0, &cfg, 0, &log), SF_ERR_IO);
    ck_assert_ptr_null(log);
    /* Leftovers and orphan indexes are cleaned at open. */
    snprintf(path, sizeof(path), "%s/t-0", tmpdir);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    snprintf(path, sizeof(path), "%s/t-0/00000000000000000100.index", tmpdir);
    write_file(path, (const uint8_t *)"", 0);
    snprintf(path, sizeof(path), "%s/t-0/00000000000000000000.log.deleted", tmpdir);
    write_file(path, (const uint8_t *)"x", 1);
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log), SF_OK);
    ck_assert(!file_exists(path));
    snprintf(path, sizeof(path), "%s/t-0/00000000000000000100.index", tmpdir);
    ck_assert(!file_exists(path));
    sf_log_close(log);
}
END_TEST


/* A batch on disk whose BaseOffset plus LastOffsetDelta passes INT64_MAX (BaseOffset is not
 * covered by the CRC) ends the log, by recovery and by a clean load alike. */
START_TEST(test_recovery_offset_overflow) {
    sf_log_config_t cfg;
    sf_log_t *log;
    char path[256];
    int64_t starts[64], base;
    uint8_t *orig, *bad;
    size_t len;
    int pass, variant;
    const int64_t bases[2] = {INT64_MAX - 1, INT64_MAX - 2};

    small_config(&cfg);
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log), SF_OK);
    append_batch(log, 3, 40, 1000, 0);
    append_batch(log, 3, 40, 1001, 0);
    append_batch(log, 3, 40, 1002, 0); /* offsets 6..8: LastOffsetDelta 2 */
    sf_log_close(log);
    partition_file(path, sizeof(path), "t", 0, 0, ".log");
    ck_assert_uint_eq(batch_starts(path, starts, 63), 3);
    orig = read_file(path, &len);
    bad = malloc(len);
    ck_assert_ptr_nonnull(bad);
    for (variant = 0; variant < 2; variant++) {
        for (pass = 0; pass < 2; pass++) {
            memcpy(bad, orig, len);
            sf_recbatch_set_base_offset(bad + starts[2], bases[variant]);
            write_file(path, bad, len);
            /* pass 0: crash recovery (CRC checked); pass 1: clean load (headers only). */
            ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, pass ? INT64_MAX : 0, &log),
                             SF_OK);
            ck_assert(sf_log_end_offset(log) == 6);
            ck_assert_int_eq(file_size(path), starts[2]);
            base = append_batch(log, 1, 10, 2000, 0);
            ck_assert(base == 6);
            sf_log_close(log);
        }
    }
    free(bad);
    free(orig);
}
END_TEST

/* An index file far larger than its .log could need is rebuilt without being read in: with
 * the address space capped below its size, the log still opens. */
START_TEST(test_index_oversized) {
    sf_log_config_t cfg;
    sf_log_t *log;
    char path[256];
    int fd, status;
    pid_t pid;

    small_config(&cfg);
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log), SF_OK);
    append_batch(log, 3, 400, 1000, 0);
    append_batch(log, 3, 400, 1001, 0);
    sf_log_close(log);
    partition_file(path, sizeof(path), "t", 0, 0, ".index");
    fd = open(path, O_WRONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, (off_t)2 << 30), 0); /* sparse: 2 GiB of entries */
    close(fd);

    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct rlimit rl;
        int ok;
        rl.rlim_cur = rl.rlim_max = (rlim_t)1 << 30;
#ifndef __SANITIZE_ADDRESS__
        /* (AddressSanitizer reserves terabytes of address space for itself: there the index
         * size check is seen only through the rebuilt file below.) */
        if (setrlimit(RLIMIT_AS, &rl) < 0)
            _exit(2);
#else
        (void)rl;
#endif
        /* A clean load of the active segment reads its index into memory. */
        ok = sf_log_open(tmpdir, "t", 0, &cfg, INT64_MAX, &log) == SF_OK &&
             sf_log_end_offset(log) == 6;
        if (ok)
            sf_log_close(log);
        _exit(ok ? 0 : 1);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 0);
    /* The rebuild rewrote the index at its real size. */
    ck_assert_int_lt(file_size(path), 4096);
}
END_TEST

static Suite *log_suite(void) {
    Suite *s = suite_create("log");
    TCase *core = tcase_create("core");
    TCase *limits = tcase_create("limits");
    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_checked_fixture(limits, setup, teardown);
    tcase_set_timeout(core, 120);
    tcase_set_timeout(limits, 120);
    tcase_add_test(core, test_append_read_roundtrip);
    tcase_add_test(core, test_read_middle);
    tcase_add_test(core, test_kip74_and_max_bytes);
    tcase_add_test(core, test_max_offset);
    tcase_add_test(core, test_roll_by_size);
    tcase_add_test(core, test_offset_for_timestamp);
    tcase_add_test(core, test_retention_bytes);
    tcase_add_test(core, test_retention_time_and_roll);
    tcase_add_test(core, test_slice_outlives_segment);
    tcase_add_test(core, test_reopen_clean);
    tcase_add_test(core, test_flush_policy);
    tcase_add_test(core, test_flush_after_roll);
    tcase_add_test(core, test_concurrent_flush);
    tcase_add_test(core, test_delete);
    tcase_add_test(core, test_delete_records_middle);
    tcase_add_test(core, test_delete_records_high_watermark);
    tcase_add_test(core, test_delete_records_retention);
    tcase_add_test(limits, test_append_rejects);
    tcase_add_test(limits, test_recovery_torn_tail);
    tcase_add_test(limits, test_clean_load_partial_tail);
    tcase_add_test(limits, test_recovery_garbage_tail);
    tcase_add_test(limits, test_recovery_corrupt_middle);
    tcase_add_test(limits, test_recovery_point_partial);
    tcase_add_test(limits, test_index_rebuild);
    tcase_add_test(limits, test_open_invalid);
    tcase_add_test(limits, test_recovery_offset_overflow);
    tcase_add_test(limits, test_index_oversized);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(log_suite());
    int failed;
    /* The recovery tests provoke many warnings; show them only on request. */
    if (!getenv("SF_TEST_LOG"))
        sf_log_level = 0;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
