/* Unit tests for what replication needs of the storage engine: the leader-epoch cache
 * (broker/storage/epochs.c) and the log's replica appends, truncation and follower high
 * watermark (broker/storage/logrepl.c). */
#include <check.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "epochs.h"
#include "err.h"
#include "log.h"
#include "logging.h"
#include "recbatch.h"
#include "tmpdir.h"

/* ---- fixtures and helpers ---- */

static void setup(void) {
    tmpdir_make("epochs");
}

static void teardown(void) {
    tmpdir_remove();
}

static sf_log_t *open_log(int64_t segment_bytes) {
    sf_log_config_t cfg;
    sf_log_t *log;
    sf_log_config_default(&cfg);
    cfg.index_interval_bytes = 256;
    if (segment_bytes > 0)
        cfg.segment_bytes = segment_bytes;
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, INT64_MAX, &log), SF_OK);
    return log;
}

/* Append to @wb one batch of @n records (values of 200 bytes) at @base with @epoch. */
static void make_batch(sf_wbuf_t *wb, int64_t base, int32_t epoch, int n) {
    sf_recbatch_record_t recs[16];
    static uint8_t value[200];
    size_t start = wb->len;
    int i;
    memset(value, 'v', sizeof(value));
    memset(recs, 0, sizeof(recs));
    ck_assert_int_le(n, 16);
    for (i = 0; i < n; i++) {
        recs[i].timestamp = 1000 + base + i;
        recs[i].key.len = -1;
        recs[i].value.p = value;
        recs[i].value.len = (int32_t)sizeof(value);
    }
    ck_assert_int_eq(sf_recbatch_build(wb, base, 1000 + base, recs, n), SF_OK);
    sf_recbatch_set_leader_epoch(wb->p + start, epoch); /* outside the CRC */
}

static int replica_append(sf_log_t *log, int64_t base, int32_t epoch, int n) {
    sf_wbuf_t wb;
    int rc;
    sf_wbuf_init(&wb);
    make_batch(&wb, base, epoch, n);
    rc = sf_log_append_replica(log, wb.p, wb.len, 0, NULL);
    sf_wbuf_free(&wb);
    return rc;
}

/* A leader append of one batch of @n records with the log's epoch; returns its offset. */
static int64_t leader_append(sf_log_t *log, int n) {
    sf_wbuf_t wb;
    sf_log_append_info_t info;
    sf_wbuf_init(&wb);
    make_batch(&wb, 0, -1, n);
    ck_assert_int_eq(sf_log_append(log, wb.p, wb.len, 0, &info), SF_OK);
    sf_wbuf_free(&wb);
    return info.FirstOffset;
}

/* The headers of every batch from @offset to the LEO (offsets checked consecutive or rising),
 * into @hdrs; returns how many. */
static int read_headers(sf_log_t *log, int64_t offset, sf_recbatch_hdr_t *hdrs, int max) {
    int n = 0;
    int64_t prev_end = -1;
    while (offset < sf_log_end_offset(log)) {
        sf_log_slice_t sl;
        uint8_t *p;
        size_t pos = 0;
        ck_assert_int_eq(sf_log_read(log, offset, 1 << 20, INT64_MAX, &sl), SF_OK);
        if (sl.len == 0)
            break;
        ck_assert_ptr_nonnull(p = malloc(sl.len));
        ck_assert_int_eq(sf_log_slice_copy(&sl, p), SF_OK);
        while (pos < sl.len) {
            size_t size;
            ck_assert_int_lt(n, max);
            ck_assert_int_eq(sf_recbatch_header_parse(p + pos, sl.len - pos, &hdrs[n], &size),
                             SF_OK);
            ck_assert_int_eq(sf_recbatch_validate(p + pos, size, &hdrs[n]), SF_OK);
            ck_assert(hdrs[n].BaseOffset >= prev_end);
            prev_end = offset = sf_recbatch_next_offset(&hdrs[n]);
            pos += size;
            n++;
        }
        free(p);
        sf_log_slice_release(sl.seg);
    }
    return n;
}

static void ckpt_path(char *buf, size_t size) {
    snprintf(buf, size, "%s/t-0/%s", tmpdir, SF_EPOCHS_FILE);
}

static char *read_text(const char *path) {
    static char buf[4096];
    FILE *f = fopen(path, "r");
    size_t n;
    if (!f)
        return NULL;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void expect_end(sf_log_t *log, int32_t epoch, int32_t want_epoch, int64_t want_end) {
    int32_t found;
    int64_t end;
    sf_log_end_offset_for_epoch(log, epoch, &found, &end);
    ck_assert_msg(found == want_epoch && end == want_end,
                  "epoch %d: got (%d, %" PRId64 "), want (%d, %" PRId64 ")", (int)epoch,
                  (int)found, end, (int)want_epoch, want_end);
}

static size_t count_segment_files(void) {
    char path[256];
    size_t n = 0;
    int64_t off;
    for (off = 0; off < 400; off++) {
        snprintf(path, sizeof(path), "%s/t-0/%020" PRId64 ".log", tmpdir, off);
        n += access(path, F_OK) == 0;
    }
    return n;
}

/* Epochs 0 at 0, 2 at 30, 5 at 60 by leader appends: 10 batches of 3 records each. */
static void three_epochs(sf_log_t *log) {
    int i;
    for (i = 0; i < 30; i++) {
        if (i == 10)
            sf_log_set_leader_epoch(log, 2);
        if (i == 20)
            sf_log_set_leader_epoch(log, 5);
        ck_assert_int_eq(leader_append(log, 3), 3 * i);
    }
}

/* ---- the cache alone ---- */

START_TEST(test_cache_assign_truncate) {
    sf_epochs_t ec;
    int32_t found;
    int64_t end;
    ck_assert_int_eq(sf_epochs_init(&ec, tmpdir), SF_OK);
    ck_assert_int_eq(sf_epochs_latest(&ec), -1);
    ck_assert_int_eq(sf_epochs_assign(&ec, 1, 0), 1);
    ck_assert_int_eq(sf_epochs_assign(&ec, 1, 5), 0);  /* not above the latest */
    ck_assert_int_eq(sf_epochs_assign(&ec, 0, 5), 0);
    ck_assert_int_eq(sf_epochs_assign(&ec, -1, 5), 0);
    ck_assert_int_eq(sf_epochs_assign(&ec, 3, 10), 1);
    ck_assert_int_eq(sf_epochs_assign(&ec, 5, 20), 1);
    ck_assert_uint_eq(ec.n, 3);
    /* A new epoch starting at or below cached starts replaces them (non-monotonic). */
    ck_assert_int_eq(sf_epochs_assign(&ec, 6, 10), 1);
    ck_assert_uint_eq(ec.n, 2);
    ck_assert_int_eq(ec.v[1].epoch, 6);
    ck_assert_int_eq(ec.v[1].start_offset, 10);
    ck_assert_int_eq(sf_epochs_truncate_from_end(&ec, 11), 0);
    ck_assert_int_eq(sf_epochs_truncate_from_end(&ec, 10), 1);
    ck_assert_int_eq(sf_epochs_latest(&ec), 1);
    ck_assert_int_eq(sf_epochs_assign(&ec, 3, 10), 1);
    ck_assert_int_eq(sf_epochs_assign(&ec, 5, 20), 1);
    /* From the start: wholly below goes, the first kept one starts at the new start. */
    ck_assert_int_eq(sf_epochs_truncate_from_start(&ec, 0), 0);
    ck_assert_int_eq(sf_epochs_truncate_from_start(&ec, 15), 1);
    ck_assert_uint_eq(ec.n, 2);
    ck_assert_int_eq(ec.v[0].epoch, 3);
    ck_assert_int_eq(ec.v[0].start_offset, 15);
    ck_assert_int_eq(sf_epochs_truncate_from_start(&ec, 20), 1);
    ck_assert_uint_eq(ec.n, 1);
    ck_assert_int_eq(ec.v[0].epoch, 5);
    ck_assert_int_eq(sf_epochs_truncate_from_start(&ec, 25), 1);
    ck_assert_int_eq(ec.v[0].start_offset, 25);
    sf_epochs_end_offset_for(&ec, 5, 40, &found, &end);
    ck_assert_int_eq(found, 5);
    ck_assert_int_eq(end, 40);
    ck_assert_int_eq(sf_epochs_clear(&ec), 1);
    ck_assert_int_eq(sf_epochs_clear(&ec), 0);
    sf_epochs_end_offset_for(&ec, 5, 40, &found, &end);
    ck_assert_int_eq(found, -1);
    ck_assert_int_eq(end, -1);
    sf_epochs_free(&ec);
}
END_TEST

/* KIP-279's cases: cache (1, 0) (3, 10) (5, 20), LEO 30. */
START_TEST(test_end_offset_for_epoch) {
    sf_log_t *log = open_log(0);
    expect_end(log, 0, -1, -1); /* empty cache */
    ck_assert_int_eq(replica_append(log, 0, 1, 10), SF_OK);
    ck_assert_int_eq(replica_append(log, 10, 3, 10), SF_OK);
    ck_assert_int_eq(replica_append(log, 20, 5, 10), SF_OK);
    ck_assert_int_eq(sf_log_latest_epoch(log), 5);
    expect_end(log, -1, -1, -1); /* UNDEFINED asked */
    expect_end(log, 0, 0, 0);    /* below every cached epoch: where the first starts */
    expect_end(log, 1, 1, 10);   /* at one: the next one's start */
    expect_end(log, 2, 1, 10);   /* between: the one below, the next one's start */
    expect_end(log, 3, 3, 20);
    expect_end(log, 4, 3, 20);
    expect_end(log, 5, 5, 30);   /* the latest: the LEO */
    expect_end(log, 6, -1, -1);  /* above the latest */
    ck_assert_int_eq(replica_append(log, 30, 5, 2), SF_OK);
    expect_end(log, 5, 5, 32);
    sf_log_close(log);
}
END_TEST

/* ---- replica appends ---- */

START_TEST(test_replica_append_keeps) {
    sf_log_t *log = open_log(0);
    sf_recbatch_hdr_t h[8];
    sf_log_append_info_t info;
    sf_wbuf_t wb;
    sf_log_set_high_watermark(log, 0);
    sf_wbuf_init(&wb);
    make_batch(&wb, 0, 1, 3);
    make_batch(&wb, 3, 1, 2);
    make_batch(&wb, 10, 4, 3); /* a gap (compaction), and a new epoch */
    ck_assert_int_eq(sf_log_append_replica(log, wb.p, wb.len, 0, &info), SF_OK);
    ck_assert_int_eq(info.FirstOffset, 0);
    ck_assert_int_eq(info.LastOffset, 12);
    ck_assert_int_eq(info.RecordCount, 8);
    ck_assert_int_eq(sf_log_end_offset(log), 13);
    ck_assert_int_eq(sf_log_high_watermark(log), 0); /* not moved */
    sf_wbuf_free(&wb);
    ck_assert_int_eq(read_headers(log, 0, h, 8), 3);
    ck_assert_int_eq(h[0].BaseOffset, 0);
    ck_assert_int_eq(h[0].PartitionLeaderEpoch, 1);
    ck_assert_int_eq(h[1].BaseOffset, 3);
    ck_assert_int_eq(h[1].PartitionLeaderEpoch, 1);
    ck_assert_int_eq(h[2].BaseOffset, 10);
    ck_assert_int_eq(h[2].PartitionLeaderEpoch, 4);
    /* A read inside the gap starts at the batch after it. */
    ck_assert_int_eq(read_headers(log, 6, h, 8), 1);
    ck_assert_int_eq(h[0].BaseOffset, 10);
    expect_end(log, 1, 1, 10);
    expect_end(log, 4, 4, 13);
    /* A gap at the start of the next append too, then the leader's appends go on. */
    ck_assert_int_eq(replica_append(log, 20, 4, 1), SF_OK);
    ck_assert_int_eq(sf_log_end_offset(log), 21);
    sf_log_set_leader_epoch(log, 4);
    ck_assert_int_eq(leader_append(log, 2), 21);
    sf_log_close(log);
    /* All of it survives a reopen. */
    log = open_log(0);
    ck_assert_int_eq(sf_log_end_offset(log), 23);
    ck_assert_int_eq(read_headers(log, 0, h, 8), 5);
    ck_assert_int_eq(h[3].BaseOffset, 20);
    ck_assert_int_eq(h[4].BaseOffset, 21);
    ck_assert_int_eq(h[4].PartitionLeaderEpoch, 4);
    sf_log_close(log);
}
END_TEST

START_TEST(test_replica_append_rejects) {
    sf_log_t *log = open_log(0);
    int64_t size;
    sf_wbuf_t wb;
    ck_assert_int_eq(replica_append(log, 0, 0, 5), SF_OK);
    size = sf_log_size_bytes(log);
    /* Below the LEO, and overlapping it. */
    ck_assert_int_eq(replica_append(log, 0, 0, 1), SF_ERR_RANGE);
    ck_assert_int_eq(replica_append(log, 4, 0, 2), SF_ERR_RANGE);
    /* Offsets that do not increase inside one append: nothing of it is written. */
    sf_wbuf_init(&wb);
    make_batch(&wb, 5, 0, 3);
    make_batch(&wb, 7, 0, 3);
    ck_assert_int_eq(sf_log_append_replica(log, wb.p, wb.len, 0, NULL), SF_ERR_RANGE);
    /* A bad CRC. */
    wb.len = 0;
    make_batch(&wb, 5, 0, 3);
    wb.p[wb.len - 1] ^= 0x55;
    ck_assert_int_eq(sf_log_append_replica(log, wb.p, wb.len, 0, NULL), SF_ERR_CORRUPT);
    /* A partial batch, and nothing. */
    wb.len = 0;
    make_batch(&wb, 5, 0, 3);
    ck_assert_int_eq(sf_log_append_replica(log, wb.p, wb.len - 1, 0, NULL), SF_ERR_MALFORMED);
    ck_assert_int_eq(sf_log_append_replica(log, wb.p, 0, 0, NULL), SF_ERR_MALFORMED);
    sf_wbuf_free(&wb);
    ck_assert_int_eq(sf_log_end_offset(log), 5);
    ck_assert_int_eq(sf_log_size_bytes(log), size);
    ck_assert_int_eq(replica_append(log, 5, 0, 1), SF_OK);
    sf_log_close(log);
}
END_TEST

/* A gap wider than a segment can index: a new segment starts at the batch. */
START_TEST(test_replica_append_far_gap) {
    sf_log_t *log = open_log(0);
    const int64_t far = 3000000000LL;
    sf_recbatch_hdr_t h[4];
    sf_wbuf_t wb;
    ck_assert_int_eq(replica_append(log, 0, 1, 3), SF_OK);
    ck_assert_int_eq(replica_append(log, far, 2, 3), SF_OK);
    ck_assert_uint_eq(sf_log_segment_count(log), 2);
    ck_assert_int_eq(sf_log_end_offset(log), far + 3);
    ck_assert_int_eq(read_headers(log, 5, h, 4), 1); /* from the gap: the batch after it */
    ck_assert_int_eq(h[0].BaseOffset, far);
    expect_end(log, 1, 1, far);
    /* One call spanning more than a segment can index is refused whole. */
    sf_wbuf_init(&wb);
    make_batch(&wb, far + 3, 2, 1);
    make_batch(&wb, 2 * far, 2, 1);
    ck_assert_int_eq(sf_log_append_replica(log, wb.p, wb.len, 0, NULL), SF_ERR_RANGE);
    sf_wbuf_free(&wb);
    ck_assert_int_eq(sf_log_end_offset(log), far + 3);
    sf_log_close(log);
    log = open_log(0);
    ck_assert_int_eq(sf_log_end_offset(log), far + 3);
    ck_assert_int_eq(read_headers(log, 0, h, 4), 2);
    sf_log_close(log);
}
END_TEST

/* ---- truncation ---- */

START_TEST(test_truncate_middle_of_segment) {
    sf_log_t *log = open_log(0);
    sf_recbatch_hdr_t h[40];
    int i;
    for (i = 0; i < 20; i++)
        leader_append(log, 3);
    sf_log_set_high_watermark(log, 60);
    ck_assert_int_eq(sf_log_truncate(log, 60), SF_OK); /* the LEO: nothing */
    ck_assert_int_eq(sf_log_truncate(log, 1000), SF_OK);
    ck_assert_int_eq(sf_log_end_offset(log), 60);
    ck_assert_int_eq(sf_log_truncate(log, -1), SF_ERR_INVALID);
    ck_assert_int_eq(sf_log_truncate(log, 30), SF_OK);
    ck_assert_int_eq(sf_log_end_offset(log), 30);
    ck_assert_int_eq(sf_log_high_watermark(log), 30);
    /* Inside a batch: the whole batch goes. */
    ck_assert_int_eq(sf_log_truncate(log, 25), SF_OK);
    ck_assert_int_eq(sf_log_end_offset(log), 24);
    ck_assert_int_eq(read_headers(log, 0, h, 40), 8);
    ck_assert_int_eq(sf_recbatch_next_offset(&h[7]), 24);
    /* Reads inside the kept part use the trimmed index. */
    ck_assert_int_eq(read_headers(log, 22, h, 40), 1);
    ck_assert_int_eq(h[0].BaseOffset, 21);
    ck_assert_int_eq(leader_append(log, 3), 24);
    sf_log_close(log);
    log = open_log(0);
    ck_assert_int_eq(sf_log_end_offset(log), 27);
    ck_assert_int_eq(read_headers(log, 0, h, 40), 9);
    ck_assert_int_eq(leader_append(log, 3), 27);
    sf_log_close(log);
}
END_TEST

/* 40 batches of 3 records in 4 KiB segments (a few batches each). */
static sf_log_t *segmented_log(void) {
    sf_log_t *log = open_log(4096);
    int i;
    for (i = 0; i < 40; i++)
        ck_assert_int_eq(leader_append(log, 3), 3 * i);
    ck_assert_uint_gt(sf_log_segment_count(log), 4);
    return log;
}

/* The base of the @i-th segment on disk. */
static int64_t segment_base(size_t i) {
    char path[256];
    int64_t off;
    for (off = 0; off < 400; off++) {
        snprintf(path, sizeof(path), "%s/t-0/%020" PRId64 ".log", tmpdir, off);
        if (access(path, F_OK) == 0 && i-- == 0)
            return off;
    }
    ck_abort_msg("no segment %zu", i);
    return -1;
}

START_TEST(test_truncate_segment_boundary) {
    sf_log_t *log = segmented_log();
    sf_recbatch_hdr_t h[60];
    int64_t b2 = segment_base(2);
    ck_assert_int_eq(sf_log_truncate(log, b2), SF_OK);
    ck_assert_int_eq(sf_log_end_offset(log), b2);
    /* The segment starting there is kept, empty, and takes the appends. */
    ck_assert_uint_eq(sf_log_segment_count(log), 3);
    ck_assert_uint_eq(count_segment_files(), 3);
    ck_assert_int_eq(read_headers(log, 0, h, 60), (int)(b2 / 3));
    ck_assert_int_eq(leader_append(log, 3), b2);
    sf_log_close(log);
    log = open_log(4096);
    ck_assert_int_eq(sf_log_end_offset(log), b2 + 3);
    ck_assert_int_eq(read_headers(log, 0, h, 60), (int)(b2 / 3) + 1);
    sf_log_close(log);
}
END_TEST

START_TEST(test_truncate_across_segments) {
    sf_log_t *log = segmented_log();
    sf_recbatch_hdr_t h[60];
    int64_t b1 = segment_base(1), b2 = segment_base(2), cut = b1 + 3;
    int i;
    ck_assert_int_lt(cut, b2);
    ck_assert_int_eq(sf_log_truncate(log, cut), SF_OK);
    ck_assert_int_eq(sf_log_end_offset(log), cut);
    ck_assert_uint_eq(sf_log_segment_count(log), 2);
    ck_assert_uint_eq(count_segment_files(), 2);
    ck_assert_int_eq(read_headers(log, 0, h, 60), (int)(cut / 3));
    /* The sealed segment takes appends again, and rolls when full. */
    for (i = 0; i < 10; i++)
        ck_assert_int_eq(leader_append(log, 3), cut + 3 * i);
    ck_assert_uint_gt(sf_log_segment_count(log), 2);
    ck_assert_int_eq(read_headers(log, 0, h, 60), (int)(cut / 3) + 10);
    sf_log_close(log);
    log = open_log(4096);
    ck_assert_int_eq(sf_log_end_offset(log), cut + 30);
    ck_assert_int_eq(read_headers(log, 0, h, 60), (int)(cut / 3) + 10);
    /* Into the first segment, whose index is mapped after the reopen. */
    ck_assert_int_eq(sf_log_truncate(log, 6), SF_OK);
    ck_assert_int_eq(sf_log_end_offset(log), 6);
    ck_assert_uint_eq(sf_log_segment_count(log), 1);
    ck_assert_int_eq(read_headers(log, 0, h, 60), 2);
    ck_assert_int_eq(leader_append(log, 3), 6);
    sf_log_close(log);
}
END_TEST

/* A follower whose log ends below its leader's log start starts over at it (Kafka's
 * truncateFullyAndStartAt past the end). */
START_TEST(test_truncate_fully_past_end) {
    sf_log_t *log = segmented_log();
    sf_log_set_high_watermark(log, 100);
    ck_assert_int_eq(sf_log_truncate_fully(log, -1), SF_ERR_INVALID);
    ck_assert_int_eq(sf_log_truncate_fully(log, 300), SF_OK);
    ck_assert_int_eq(sf_log_start_offset(log), 300);
    ck_assert_int_eq(sf_log_end_offset(log), 300);
    ck_assert_int_eq(sf_log_high_watermark(log), 300);
    ck_assert_int_eq(sf_log_latest_epoch(log), -1);
    ck_assert_uint_eq(sf_log_segment_count(log), 1);
    ck_assert_uint_eq(count_segment_files(), 1);
    ck_assert_int_eq(leader_append(log, 3), 300);
    sf_log_close(log);
    log = open_log(4096);
    ck_assert_int_eq(sf_log_start_offset(log), 300);
    ck_assert_int_eq(sf_log_end_offset(log), 303);
    sf_log_close(log);
}
END_TEST

START_TEST(test_truncate_below_start) {
    sf_log_t *log = segmented_log();
    int64_t b3 = segment_base(3);
    sf_log_set_leader_epoch(log, 7);
    leader_append(log, 3);
    ck_assert_int_eq(sf_log_delete_records(log, b3 + 3, NULL), SF_OK);
    ck_assert_int_eq(sf_log_start_offset(log), b3 + 3);
    /* Below the start: everything goes and the log starts again there. */
    ck_assert_int_eq(sf_log_truncate(log, b3 + 1), SF_OK);
    ck_assert_int_eq(sf_log_start_offset(log), b3 + 1);
    ck_assert_int_eq(sf_log_end_offset(log), b3 + 1);
    ck_assert_uint_eq(sf_log_segment_count(log), 1);
    ck_assert_uint_eq(count_segment_files(), 1);
    ck_assert_int_eq(sf_log_latest_epoch(log), -1);
    ck_assert_int_eq(leader_append(log, 3), b3 + 1);
    ck_assert_int_eq(sf_log_latest_epoch(log), 7);
    expect_end(log, 7, 7, b3 + 4);
    sf_log_close(log);
    log = open_log(4096);
    ck_assert_int_eq(sf_log_end_offset(log), b3 + 4);
    ck_assert_int_eq(sf_log_latest_epoch(log), 7);
    /* At the oldest segment's base (the same file name): emptied, kept. */
    ck_assert_int_eq(sf_log_delete_records(log, b3 + 2, NULL), SF_OK);
    ck_assert_int_eq(sf_log_truncate(log, b3 + 1), SF_OK);
    ck_assert_int_eq(sf_log_start_offset(log), b3 + 1);
    ck_assert_int_eq(sf_log_end_offset(log), b3 + 1);
    ck_assert_uint_eq(count_segment_files(), 1);
    ck_assert_int_eq(leader_append(log, 1), b3 + 1);
    sf_log_close(log);
}
END_TEST

START_TEST(test_truncate_epochs_and_hw) {
    sf_log_t *log = open_log(0);
    three_epochs(log);
    sf_log_set_high_watermark(log, 85);
    ck_assert_int_eq(sf_log_truncate(log, 60), SF_OK);
    ck_assert_int_eq(sf_log_high_watermark(log), 60);
    ck_assert_int_eq(sf_log_latest_epoch(log), 2); /* the entry at 60 went */
    expect_end(log, 2, 2, 60);
    ck_assert_int_eq(sf_log_truncate(log, 45), SF_OK);
    expect_end(log, 0, 0, 30);
    expect_end(log, 2, 2, 45);
    sf_log_close(log);
    log = open_log(0);
    ck_assert_int_eq(sf_log_latest_epoch(log), 2);
    expect_end(log, 2, 2, 45);
    sf_log_close(log);
}
END_TEST

/* ---- the checkpoint ---- */

START_TEST(test_checkpoint_written_and_kept) {
    sf_log_t *log = open_log(0);
    char path[256];
    struct stat st1, st2;
    ckpt_path(path, sizeof(path));
    ck_assert_int_ne(access(path, F_OK), 0); /* an empty log writes none */
    leader_append(log, 3); /* epoch 0 at 0 */
    ck_assert_str_eq(read_text(path), "0\n1\n0 0\n");
    ck_assert_int_eq(stat(path, &st1), 0);
    leader_append(log, 3);
    leader_append(log, 3);
    /* Not rewritten by appends in the same epoch. */
    ck_assert_int_eq(stat(path, &st2), 0);
    ck_assert(st1.st_ino == st2.st_ino);
    /* A leader change before any write is recorded right away. */
    sf_log_epoch_assign(log, 4, sf_log_end_offset(log));
    ck_assert_str_eq(read_text(path), "0\n2\n0 0\n4 9\n");
    expect_end(log, 4, 4, 9);
    expect_end(log, 0, 0, 9);
    ck_assert_int_eq(leader_append(log, 2), 9); /* stamped with 4, no new entry */
    ck_assert_str_eq(read_text(path), "0\n2\n0 0\n4 9\n");
    sf_log_close(log);
    log = open_log(0);
    ck_assert_int_eq(sf_log_latest_epoch(log), 4);
    expect_end(log, 0, 0, 9);
    expect_end(log, 4, 4, 11);
    sf_log_close(log);
    /* Entries past the LEO (a crash cut the log) are dropped at open. */
    write_text(path, "0\n3\n0 0\n4 9\n6 50\n");
    log = open_log(0);
    ck_assert_int_eq(sf_log_latest_epoch(log), 4);
    ck_assert_str_eq(read_text(path), "0\n2\n0 0\n4 9\n");
    sf_log_close(log);
}
END_TEST

START_TEST(test_checkpoint_rebuilt) {
    static const char *const bad[] = {
        "",                    /* empty */
        "0\n3\n0 0\n2 30\n",   /* torn: fewer entries than counted */
        "0\n2\n0 0\n2 3",      /* torn mid-line */
        "1\n1\n0 0\n",         /* another version */
        "0\n2\n2 30\n0 0\n",   /* out of order */
        "0\n1\n0 x\n",         /* garbage */
        "0\n1\n0 0\n9 9\n",    /* more lines than counted */
        "\x7f" "ELF\x01\x02",
    };
    char path[256];
    size_t i;
    sf_log_t *log = open_log(0);
    three_epochs(log);
    sf_log_close(log);
    ckpt_path(path, sizeof(path));
    ck_assert_str_eq(read_text(path), "0\n3\n0 0\n2 30\n5 60\n");
    /* Missing: rebuilt from the batch headers, then written. */
    ck_assert_int_eq(unlink(path), 0);
    log = open_log(0);
    ck_assert_int_eq(sf_log_latest_epoch(log), 5);
    expect_end(log, 0, 0, 30);
    expect_end(log, 3, 2, 60);
    expect_end(log, 5, 5, 90);
    ck_assert_str_eq(read_text(path), "0\n3\n0 0\n2 30\n5 60\n");
    sf_log_close(log);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        write_text(path, bad[i]);
        log = open_log(0);
        ck_assert_msg(sf_log_latest_epoch(log) == 5, "checkpoint %zu", i);
        expect_end(log, 2, 2, 60);
        ck_assert_str_eq(read_text(path), "0\n3\n0 0\n2 30\n5 60\n");
        sf_log_close(log);
    }
}
END_TEST

/* ---- high watermark ---- */

START_TEST(test_advance_high_watermark) {
    sf_log_t *log = open_log(0);
    int i;
    for (i = 0; i < 4; i++)
        leader_append(log, 3);
    /* Following the LEO (12): nothing below it moves it. */
    ck_assert_int_eq(sf_log_advance_high_watermark(log, 5), 0);
    ck_assert_int_eq(sf_log_high_watermark(log), 12);
    sf_log_set_high_watermark(log, 3);
    ck_assert_int_eq(sf_log_advance_high_watermark(log, 2), 0);
    ck_assert_int_eq(sf_log_advance_high_watermark(log, -1), 0);
    ck_assert_int_eq(sf_log_high_watermark(log), 3);
    ck_assert_int_eq(sf_log_advance_high_watermark(log, 3), 0);
    ck_assert_int_eq(sf_log_advance_high_watermark(log, 7), 1);
    ck_assert_int_eq(sf_log_high_watermark(log), 7);
    ck_assert_int_eq(sf_log_advance_high_watermark(log, 100), 1); /* clamped to the LEO */
    ck_assert_int_eq(sf_log_high_watermark(log), 12);
    ck_assert_int_eq(sf_log_advance_high_watermark(log, 100), 0);
    ck_assert_int_eq(sf_log_advance_high_watermark(log, 4), 0);
    leader_append(log, 3); /* explicit: appends leave it */
    ck_assert_int_eq(sf_log_high_watermark(log), 12);
    ck_assert_int_eq(sf_log_advance_high_watermark(log, 15), 1);
    ck_assert_int_eq(sf_log_high_watermark(log), 15);
    sf_log_close(log);
}
END_TEST

/* ---- the log start moving ---- */

START_TEST(test_delete_records_trims_cache) {
    sf_log_t *log = open_log(0);
    char path[256];
    three_epochs(log);
    ckpt_path(path, sizeof(path));
    ck_assert_int_eq(sf_log_delete_records(log, 40, NULL), SF_OK);
    ck_assert_str_eq(read_text(path), "0\n2\n2 40\n5 60\n");
    expect_end(log, 0, 0, 40); /* older than the log: where it starts now */
    expect_end(log, 2, 2, 60);
    ck_assert_int_eq(sf_log_delete_records(log, 60, NULL), SF_OK);
    ck_assert_str_eq(read_text(path), "0\n1\n5 60\n");
    ck_assert_int_eq(sf_log_delete_records(log, 61, NULL), SF_OK);
    ck_assert_str_eq(read_text(path), "0\n1\n5 61\n");
    sf_log_close(log);
    log = open_log(0);
    expect_end(log, 5, 5, 90);
    sf_log_close(log);
}
END_TEST

START_TEST(test_retention_trims_cache) {
    sf_log_t *log = open_log(4096);
    sf_log_config_t cfg;
    char path[256];
    int64_t start;
    three_epochs(log);
    sf_log_get_config(log, &cfg);
    cfg.retention_bytes = 4096;
    sf_log_set_config(log, &cfg);
    ck_assert_int_gt(sf_log_retention(log, 0), 0);
    start = sf_log_start_offset(log);
    ck_assert_int_ge(start, 60);
    expect_end(log, 2, 2, start);
    expect_end(log, 5, 5, 90);
    ckpt_path(path, sizeof(path));
    {
        char want[64];
        snprintf(want, sizeof(want), "0\n1\n5 %" PRId64 "\n", start);
        ck_assert_str_eq(read_text(path), want);
    }
    sf_log_close(log);
}
END_TEST

static Suite *epochs_suite(void) {
    Suite *s = suite_create("epochs");
    TCase *core = tcase_create("core");
    TCase *limits = tcase_create("limits");
    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_checked_fixture(limits, setup, teardown);
    tcase_add_test(core, test_cache_assign_truncate);
    tcase_add_test(core, test_end_offset_for_epoch);
    tcase_add_test(core, test_replica_append_keeps);
    tcase_add_test(core, test_truncate_middle_of_segment);
    tcase_add_test(core, test_truncate_segment_boundary);
    tcase_add_test(core, test_truncate_across_segments);
    tcase_add_test(core, test_truncate_epochs_and_hw);
    tcase_add_test(core, test_checkpoint_written_and_kept);
    tcase_add_test(core, test_advance_high_watermark);
    tcase_add_test(core, test_delete_records_trims_cache);
    tcase_add_test(core, test_retention_trims_cache);
    tcase_add_test(limits, test_replica_append_rejects);
    tcase_add_test(limits, test_replica_append_far_gap);
    tcase_add_test(limits, test_truncate_below_start);
    tcase_add_test(limits, test_truncate_fully_past_end);
    tcase_add_test(limits, test_checkpoint_rebuilt);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(epochs_suite());
    int failed;
    if (!getenv("SF_TEST_LOG"))
        sf_log_level = 0;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
