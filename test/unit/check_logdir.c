/* Unit tests for broker/storage/logdir: a log directory's logs, its lock, its checkpoints
 * (recovery points, log start offsets, high watermarks), the clean-shutdown marker,
 * meta.properties and the flusher. */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "err.h"
#include "log.h"
#include "logdir.h"
#include "logging.h"
#include "tmpdir.h"
#include "logtest.h"

static void setup(void) {
    tmpdir_make("logdir");
}

static void teardown(void) {
    tmpdir_remove();
}

static void defaults(sf_log_config_t *cfg) {
    small_config(cfg);
}

static void count_cb(sf_log_t *log, void *arg) {
    (void)log;
    (*(int *)arg)++;
}

START_TEST(test_logdir_reopen) {
    sf_log_config_t cfg;
    sf_logdir_t *ld;
    sf_log_t *a, *b, *c, *again;
    char err[512], path[256];
    int n = 0;

    defaults(&cfg);
    snprintf(path, sizeof(path), "%s/data", tmpdir);
    ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_OK);
    ck_assert_int_eq(sf_logdir_was_clean(ld), 0);
    ck_assert_uint_eq(sf_logdir_count(ld), 0);
    ck_assert_int_eq(sf_logdir_create(ld, "orders", 0, NULL, &a), SF_OK);
    ck_assert_int_eq(sf_logdir_create(ld, "orders", 1, NULL, &b), SF_OK);
    ck_assert_int_eq(sf_logdir_create(ld, "my-dashed.topic_1", 12, NULL, &c), SF_OK);
    ck_assert_int_eq(sf_logdir_create(ld, "orders", 0, NULL, &again), SF_OK);
    ck_assert_ptr_eq(again, a);
    ck_assert_int_eq(sf_logdir_create(ld, "orders", 0, NULL, NULL), SF_OK);
    ck_assert_int_eq(sf_logdir_create(ld, "bad/name", 0, NULL, &again), SF_ERR_INVALID);
    ck_assert_int_eq(sf_logdir_create(ld, "x", -2, NULL, &again), SF_ERR_INVALID);
    ck_assert_uint_eq(sf_logdir_count(ld), 3);
    ck_assert_ptr_eq(sf_logdir_get(ld, "orders", 1), b);
    ck_assert_ptr_null(sf_logdir_get(ld, "orders", 2));
    append_batch(a, 3, 10, 1, 0);
    append_batch(c, 5, 10, 1, 0);
    ck_assert_int_eq(sf_logdir_close(ld, 1), SF_OK);

    /* A stray directory and a half-deleted partition. */
    snprintf(err, sizeof(err), "%s/not_a_partition", path);
    ck_assert_int_eq(mkdir(err, 0755), 0);
    snprintf(err, sizeof(err), "%s/old-0.abc-delete", path);
    ck_assert_int_eq(mkdir(err, 0755), 0);
    snprintf(err, sizeof(err), "%s/old-0.abc-delete/00000000000000000000.log", path);
    write_file(err, (const uint8_t *)"junk", 4);

    ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_OK);
    ck_assert_int_eq(sf_logdir_was_clean(ld), 1);
    ck_assert_uint_eq(sf_logdir_count(ld), 3);
    sf_logdir_foreach(ld, count_cb, &n);
    ck_assert_int_eq(n, 3);
    ck_assert_ptr_nonnull(a = sf_logdir_get(ld, "orders", 0));
    ck_assert(sf_log_end_offset(a) == 3);
    ck_assert_ptr_nonnull(c = sf_logdir_get(ld, "my-dashed.topic_1", 12));
    ck_assert(sf_log_end_offset(c) == 5);
    ck_assert(sf_log_end_offset(sf_logdir_get(ld, "orders", 1)) == 0);
    snprintf(err, sizeof(err), "%s/old-0.abc-delete", path);
    ck_assert(!file_exists(err));
    snprintf(err, sizeof(err), "%s/%s", path, SF_LOGDIR_CLEAN_MARKER);
    ck_assert(!file_exists(err)); /* removed at open */

    /* Remove a partition. */
    ck_assert_int_eq(sf_logdir_remove(ld, "orders", 1), SF_OK);
    ck_assert_int_eq(sf_logdir_remove(ld, "orders", 1), SF_ERR_NOTFOUND);
    ck_assert_ptr_null(sf_logdir_get(ld, "orders", 1));
    snprintf(err, sizeof(err), "%s/orders-1", path);
    ck_assert(!file_exists(err));
    ck_assert_uint_eq(sf_logdir_count(ld), 2);
    ck_assert_int_eq(sf_logdir_close(ld, 0), SF_OK);
    snprintf(err, sizeof(err), "%s/%s", path, SF_LOGDIR_CLEAN_MARKER);
    ck_assert(!file_exists(err));

    ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_OK);
    ck_assert_int_eq(sf_logdir_was_clean(ld), 0);
    ck_assert_uint_eq(sf_logdir_count(ld), 2);
    ck_assert(sf_log_end_offset(sf_logdir_get(ld, "orders", 0)) == 3);
    ck_assert_int_eq(sf_logdir_close(ld, 0), SF_OK);
}
END_TEST

START_TEST(test_logdir_checkpoint) {
    sf_log_config_t cfg;
    sf_logdir_t *ld;
    sf_log_t *a, *b;
    char err[256], path[256], file[300], buf[512];
    FILE *f;
    size_t n;

    defaults(&cfg);
    snprintf(path, sizeof(path), "%s/data", tmpdir);
    ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_OK);
    ck_assert_int_eq(sf_logdir_create(ld, "a", 0, NULL, &a), SF_OK);
    ck_assert_int_eq(sf_logdir_create(ld, "b", 7, NULL, &b), SF_OK);
    append_batch(a, 4, 10, 1, 0);
    append_batch(b, 2, 10, 1, 0);
    append_batch(b, 2, 10, 1, 0);
    ck_assert_int_eq(sf_logdir_write_checkpoint(ld), SF_OK);
    snprintf(file, sizeof(file), "%s/%s", path, SF_LOGDIR_RECOVERY_CHECKPOINT);
    f = fopen(file, "r");
    ck_assert_ptr_nonnull(f);
    n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    /* Nothing flushed yet: recovery points 0. */
    ck_assert(!strncmp(buf, "0\n2\n", 4));
    ck_assert_ptr_nonnull(strstr(buf, "\na 0 0\n"));
    ck_assert_ptr_nonnull(strstr(buf, "\nb 7 0\n"));
    /* close flushes and checkpoints the LEOs (unclean: no marker). */
    ck_assert_int_eq(sf_logdir_close(ld, 0), SF_OK);
    f = fopen(file, "r");
    n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "\na 0 4\n"));
    ck_assert_ptr_nonnull(strstr(buf, "\nb 7 4\n"));

    /* A hand-written checkpoint drives the recovery points. */
    write_file(file, (const uint8_t *)"0\n2\na 0 2\nb 7 4\n", 16);
    ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_OK);
    ck_assert(sf_log_recovery_point(sf_logdir_get(ld, "a", 0)) == 2);
    ck_assert(sf_log_recovery_point(sf_logdir_get(ld, "b", 7)) == 4);
    ck_assert(sf_log_end_offset(sf_logdir_get(ld, "a", 0)) == 4);
    ck_assert_int_eq(sf_logdir_close(ld, 0), SF_OK);

    /* A malformed checkpoint: everything is recovered from the start. */
    write_file(file, (const uint8_t *)"0\n5\na 0\n", 8);
    ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_OK);
    ck_assert(sf_log_recovery_point(sf_logdir_get(ld, "a", 0)) == 0);
    ck_assert(sf_log_end_offset(sf_logdir_get(ld, "b", 7)) == 4);
    ck_assert_int_eq(sf_logdir_close(ld, 1), SF_OK);
    /* After a clean shutdown the recovery point is the end. */
    ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_OK);
    ck_assert(sf_log_recovery_point(sf_logdir_get(ld, "a", 0)) == 4);
    ck_assert_int_eq(sf_logdir_close(ld, 0), SF_OK);
}
END_TEST

/* The replication-offset-checkpoint: the high watermarks replication set (or the checkpoint
 * gave and nothing replaced), not those that only follow the LEO; read back at open, clamped
 * to the LEO. */
START_TEST(test_logdir_hw_checkpoint) {
    sf_log_config_t cfg;
    sf_logdir_t *ld;
    sf_log_t *a, *b;
    char err[256], path[256], file[300];
    int64_t hw;

    defaults(&cfg);
    snprintf(path, sizeof(path), "%s/data", tmpdir);
    snprintf(file, sizeof(file), "%s/%s", path, SF_LOGDIR_HW_CHECKPOINT);
    ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_OK);
    ck_assert_int_eq(sf_logdir_create(ld, "a", 0, NULL, &a), SF_OK);
    ck_assert_int_eq(sf_logdir_create(ld, "b", 1, NULL, &b), SF_OK);
    append_batch(a, 6, 10, 1, 0);
    append_batch(b, 6, 10, 1, 0);
    sf_log_set_high_watermark(a, 4);
    ck_assert_int_eq(sf_log_known_high_watermark(b, &hw), 0);
    ck_assert_int_eq(sf_logdir_close(ld, 0), SF_OK);
    ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_OK);
    a = sf_logdir_get(ld, "a", 0);
    b = sf_logdir_get(ld, "b", 1);
    ck_assert(sf_log_checkpointed_high_watermark(a) == 4);
    ck_assert(sf_log_checkpointed_high_watermark(b) == -1);
    /* Not applied by the log itself: its high watermark follows the LEO until set. */
    ck_assert(sf_log_high_watermark(a) == 6);
    /* Kept across a restart that sets nothing, then replaced by what replication sets. */
    ck_assert_int_eq(sf_logdir_close(ld, 1), SF_OK);
    ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_OK);
    a = sf_logdir_get(ld, "a", 0);
    ck_assert(sf_log_checkpointed_high_watermark(a) == 4);
    sf_log_set_high_watermark(a, 5);
    ck_assert_int_eq(sf_logdir_close(ld, 0), SF_OK);
    /* A value past the log end (a log cut short by a crash) is clamped to it. */
    write_file(file, (const uint8_t *)"0\n1\na 0 99\n", 12);
    ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_OK);
    ck_assert(sf_log_checkpointed_high_watermark(sf_logdir_get(ld, "a", 0)) == 6);
    ck_assert_int_eq(sf_logdir_close(ld, 0), SF_OK);
    write_file(file, (const uint8_t *)"0\n1\na 0 5\n", 11);
    ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_OK);
    ck_assert(sf_log_checkpointed_high_watermark(sf_logdir_get(ld, "a", 0)) == 5);
    ck_assert_int_eq(sf_logdir_close(ld, 0), SF_OK);
}
END_TEST

START_TEST(test_logdir_flusher) {
    sf_log_config_t cfg;
    sf_logdir_t *ld;
    sf_log_t *a;
    char err[256], path[256];
    int i;

    defaults(&cfg);
    cfg.flush_messages = 1;
    snprintf(path, sizeof(path), "%s/data", tmpdir);
    ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_OK);
    ck_assert_int_eq(sf_logdir_create(ld, "a", 0, NULL, &a), SF_OK);
    ck_assert_int_eq(sf_logdir_start_flusher(ld, 5), SF_OK);
    ck_assert_int_eq(sf_logdir_start_flusher(ld, 5), SF_ERR_STATE);
    append_batch(a, 3, 10, 1, 0);
    /* Wait (up to 20 s) for the background flush; no timing is asserted. */
    for (i = 0; i < 4000 && sf_log_recovery_point(a) != 3; i++)
        usleep(5000);
    ck_assert(sf_log_recovery_point(a) == 3);
    /* Removing a log while the flusher runs. */
    for (i = 0; i < 50; i++) {
        sf_log_t *t;
        ck_assert_int_eq(sf_logdir_create(ld, "tmp", 0, NULL, &t), SF_OK);
        append_batch(t, 1, 10, 1, 0);
        ck_assert_int_eq(sf_logdir_remove(ld, "tmp", 0), SF_OK);
    }
    sf_logdir_retention(ld, 0, INT32_MAX);
    ck_assert_int_eq(sf_logdir_close(ld, 1), SF_OK);
}
END_TEST

START_TEST(test_logdir_broker_id) {
    sf_log_config_t cfg;
    sf_logdir_t *ld;
    char err[256], path[256], file[300];
    FILE *f;
    char buf[128];
    size_t n;

    defaults(&cfg);
    snprintf(path, sizeof(path), "%s/data", tmpdir);
    ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_OK);
    ck_assert_int_eq(sf_logdir_check_broker_id(ld, 5, err, sizeof(err)), SF_OK);
    snprintf(file, sizeof(file), "%s/meta.properties", path);
    f = fopen(file, "r");
    ck_assert_ptr_nonnull(f);
    n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    ck_assert_str_eq(buf, "version=0\nbroker.id=5\n");
    ck_assert_int_eq(sf_logdir_check_broker_id(ld, 5, err, sizeof(err)), SF_OK);
    err[0] = '\0';
    ck_assert_int_eq(sf_logdir_check_broker_id(ld, 6, err, sizeof(err)), SF_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err, "broker.id=5"));
    ck_assert_ptr_nonnull(strstr(err, "broker.id=6"));
    write_file(file, (const uint8_t *)"version=0\n", 10);
    ck_assert_int_eq(sf_logdir_check_broker_id(ld, 5, err, sizeof(err)), SF_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err, "broker.id"));
    ck_assert_int_eq(sf_logdir_close(ld, 0), SF_OK);
}
END_TEST

/* Checkpoint numbers out of range make the file malformed (every log recovers from 0) rather
 * than wrapping into another partition's entry or into "nothing to recover". */
START_TEST(test_logdir_checkpoint_bounds) {
    sf_log_config_t cfg;
    sf_logdir_t *ld;
    sf_log_t *a;
    char err[256], path[256], file[300];
    size_t i;
    static const struct {
        const char *text;
        int64_t rp;
    } cases[] = {
        {"0\n1\na 0 3\n", 3},
        {"0\n1\na 0 3 \r\n", 3},           /* trailing white space */
        {"0\n1\na 4294967296 3\n", 0},      /* partition wraps to 0 in 32 bits */
        {"0\n1\na 0 99999999999999999999\n", 0}, /* offset past INT64_MAX */
        {"0\n1\na 0 9223372036854775807\n", 0},  /* INT64_MAX means "clean" */
        {"0\n1\na 0 -1\n", 0},
        {"0\n1000000000\na 0 3\n", 0},     /* more entries claimed than present */
        {"0\n99999999999\na 0 3\n", 0},
        {"1\n1\na 0 3\n", 0},               /* unknown version */
        {"0\n1\na 0 3x\n", 0},
    };

    defaults(&cfg);
    snprintf(path, sizeof(path), "%s/data", tmpdir);
    snprintf(file, sizeof(file), "%s/%s", path, SF_LOGDIR_RECOVERY_CHECKPOINT);
    ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_OK);
    ck_assert_int_eq(sf_logdir_create(ld, "a", 0, NULL, &a), SF_OK);
    append_batch(a, 4, 10, 1, 0);
    ck_assert_int_eq(sf_logdir_close(ld, 0), SF_OK);
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        write_file(file, (const uint8_t *)cases[i].text, strlen(cases[i].text));
        ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_OK);
        a = sf_logdir_get(ld, "a", 0);
        ck_assert_ptr_nonnull(a);
        ck_assert_msg(sf_log_recovery_point(a) == cases[i].rp, "case %zu", i);
        ck_assert(sf_log_end_offset(a) == 4);
        ck_assert_int_eq(sf_logdir_close(ld, 0), SF_OK);
    }
}
END_TEST

START_TEST(test_logdir_errors) {
    sf_log_config_t cfg;
    sf_logdir_t *ld, *ld2;
    char err[256], path[256];

    defaults(&cfg);
    snprintf(path, sizeof(path), "%s/no/such/parent", tmpdir);
    err[0] = '\0';
    ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_ERR_IO);
    ck_assert_ptr_null(ld);
    ck_assert_ptr_nonnull(strstr(err, "parent directory does not exist"));
    ck_assert_ptr_nonnull(strstr(err, path));

    /* A file where the directory should be. */
    snprintf(path, sizeof(path), "%s/file", tmpdir);
    write_file(path, (const uint8_t *)"x", 1);
    ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_ERR_IO);
    ck_assert_ptr_nonnull(strstr(err, "not a directory"));

    /* Two openers: the second is refused by the lock. */
    snprintf(path, sizeof(path), "%s/data", tmpdir);
    ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_OK);
    err[0] = '\0';
    ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld2, err, sizeof(err)), SF_ERR_STATE);
    ck_assert_ptr_nonnull(strstr(err, "in use"));
    ck_assert_int_eq(sf_logdir_close(ld, 0), SF_OK);
    ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld2, err, sizeof(err)), SF_OK);
    ck_assert_int_eq(sf_logdir_close(ld2, 0), SF_OK);
    ck_assert_int_eq(sf_logdir_close(NULL, 0), SF_OK);

    if (geteuid() != 0) {
        snprintf(path, sizeof(path), "%s/ro", tmpdir);
        ck_assert_int_eq(mkdir(path, 0555), 0);
        ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_ERR_IO);
        ck_assert_ptr_nonnull(strstr(err, "not writable"));
        chmod(path, 0755);
    }
}
END_TEST

/* ---- logdir: log start offsets ---- */

/* The contents of @dir/@name as a string (freed by the caller), NULL if there is no file. */
static char *read_text(const char *dir, const char *name) {
    char path[512];
    uint8_t *p;
    size_t len;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (!file_exists(path))
        return NULL;
    p = read_file(path, &len);
    p[len] = '\0';
    return (char *)p;
}

START_TEST(test_logdir_start_offset) {
    sf_log_config_t cfg;
    sf_logdir_t *ld;
    sf_log_t *a, *b;
    sf_log_slice_t sl;
    char err[256], path[256], marker[300], expect[128], *text;
    int64_t bases[64], target, target2, off, ts;
    size_t nsegs;

    segment_config(&cfg);
    snprintf(path, sizeof(path), "%s/data", tmpdir);
    snprintf(marker, sizeof(marker), "%s/%s", path, SF_LOGDIR_CLEAN_MARKER);
    /* A first start: no checkpoint file. */
    ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_OK);
    ck_assert_ptr_null(read_text(path, SF_LOGDIR_LOG_START_CHECKPOINT));
    ck_assert_int_eq(sf_logdir_create(ld, "a", 0, NULL, &a), SF_OK);
    ck_assert_int_eq(sf_logdir_create(ld, "b", 3, NULL, &b), SF_OK);
    fill_segments(a);
    fill_segments(b);
    nsegs = segment_bases(path, "a", 0, 120, bases, 64);
    ck_assert_uint_ge(nsegs, 5);
    target = bases[2] + 4;
    ck_assert_int_eq(sf_log_delete_records(a, target, NULL), SF_OK);
    /* b starts at a segment's base: its segments say so, the file does not list it. */
    ck_assert_int_eq(sf_log_delete_records(b, bases[1], NULL), SF_OK);
    ck_assert(sf_log_start_offset(b) == bases[1] && sf_log_base_offset(b) == bases[1]);
    ck_assert_int_eq(sf_logdir_close(ld, 1), SF_OK);
    text = read_text(path, SF_LOGDIR_LOG_START_CHECKPOINT);
    ck_assert_ptr_nonnull(text);
    snprintf(expect, sizeof(expect), "0\n1\na 0 %" PRId64 "\n", target);
    ck_assert_str_eq(text, expect);
    free(text);

    /* After a clean shutdown. */
    ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_OK);
    ck_assert_int_eq(sf_logdir_was_clean(ld), 1);
    ck_assert_ptr_nonnull(a = sf_logdir_get(ld, "a", 0));
    ck_assert_ptr_nonnull(b = sf_logdir_get(ld, "b", 3));
    ck_assert(sf_log_start_offset(a) == target);
    ck_assert(sf_log_base_offset(a) == bases[2]);
    ck_assert(sf_log_end_offset(a) == 120);
    ck_assert_int_eq(sf_log_read(a, target - 1, 1 << 20, INT64_MAX, &sl), SF_ERR_RANGE);
    ck_assert_int_eq(sf_log_read(a, target, 1 << 20, INT64_MAX, &sl), SF_OK);
    check_slice(&sl, target, NULL);
    sf_log_slice_release(sl.seg);
    ck_assert(sf_log_start_offset(b) == bases[1]);

    /* Further, then an unclean shutdown (the checkpoints are written, the marker is not). */
    target2 = bases[3] + 7;
    ck_assert_int_eq(sf_log_delete_records(a, target2, NULL), SF_OK);
    ck_assert_int_eq(sf_logdir_close(ld, 0), SF_OK);
    ck_assert(!file_exists(marker));
    ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_OK);
    ck_assert_int_eq(sf_logdir_was_clean(ld), 0);
    ck_assert_ptr_nonnull(a = sf_logdir_get(ld, "a", 0));
    ck_assert(sf_log_start_offset(a) == target2);
    ck_assert(sf_log_base_offset(a) == bases[3]);
    ck_assert(sf_log_recovery_point(a) >= target2);
    ck_assert_int_eq(sf_log_offset_for_timestamp(a, 0, &off, &ts), SF_OK);
    ck_assert(off == target2);
    ck_assert_int_eq(sf_log_read(a, target2 - 1, 1 << 20, INT64_MAX, &sl), SF_ERR_RANGE);

    /* A clean shutdown whose marker is lost: the checkpoint alone restores the start. */
    ck_assert_int_eq(sf_logdir_close(ld, 1), SF_OK);
    ck_assert(file_exists(marker));
    ck_assert_int_eq(unlink(marker), 0);
    ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_OK);
    ck_assert_int_eq(sf_logdir_was_clean(ld), 0);
    ck_assert_ptr_nonnull(a = sf_logdir_get(ld, "a", 0));
    ck_assert(sf_log_start_offset(a) == target2);
    ck_assert(sf_log_end_offset(a) == 120);
    ck_assert(sf_log_start_offset(sf_logdir_get(ld, "b", 3)) == bases[1]);
    ck_assert(append_batch(a, 1, 10, 5000, 0) == 120);
    ck_assert_int_eq(sf_logdir_close(ld, 0), SF_OK);
}
END_TEST

/* The flusher checkpoints a moved start offset by itself: a broker that dies with the log
 * directory open (no close, no marker) comes back with it. */
START_TEST(test_logdir_start_offset_crash) {
    sf_log_config_t cfg;
    sf_logdir_t *ld;
    sf_log_t *a;
    sf_log_slice_t sl;
    char err[256], path[256], expect[128];
    int64_t bases[64], target;
    int status;
    pid_t pid;

    segment_config(&cfg);
    snprintf(path, sizeof(path), "%s/data", tmpdir);
    ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_OK);
    ck_assert_int_eq(sf_logdir_create(ld, "a", 0, NULL, &a), SF_OK);
    fill_segments(a);
    ck_assert_int_eq(sf_logdir_close(ld, 1), SF_OK);
    ck_assert_uint_ge(segment_bases(path, "a", 0, 120, bases, 64), 5);
    target = bases[2] + 4;
    snprintf(expect, sizeof(expect), "\na 0 %" PRId64 "\n", target);

    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        /* No ck_assert here: the exit status tells the parent what failed. */
        char file[300], buf[512];
        int i;
        snprintf(file, sizeof(file), "%s/%s", path, SF_LOGDIR_LOG_START_CHECKPOINT);
        if (sf_logdir_open(path, &cfg, &ld, err, sizeof(err)) != SF_OK ||
            !(a = sf_logdir_get(ld, "a", 0)) || unlink(file) < 0)
            _exit(2);
        if (sf_logdir_start_flusher(ld, 5) != SF_OK)
            _exit(3);
        /* Let the flusher's first round (which writes every checkpoint) pass, so that what
         * writes the start offset below is its reaction to the start offset moving. Waits
         * are up to 20 s; no timing is asserted. */
        for (i = 0; i < 4000 && !file_exists(file); i++)
            usleep(5000);
        if (sf_log_delete_records(a, target, NULL) != SF_OK)
            _exit(4);
        for (i = 0; i < 4000; i++) {
            FILE *f = fopen(file, "r");
            if (f) {
                size_t n = fread(buf, 1, sizeof(buf) - 1, f);
                buf[n] = '\0';
                fclose(f);
                if (strstr(buf, expect))
                    _exit(0); /* the crash: nothing closed */
            }
            usleep(5000);
        }
        _exit(5);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 0);

    ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_OK);
    ck_assert_int_eq(sf_logdir_was_clean(ld), 0);
    ck_assert_ptr_nonnull(a = sf_logdir_get(ld, "a", 0));
    ck_assert(sf_log_start_offset(a) == target);
    ck_assert(sf_log_base_offset(a) == bases[2]);
    ck_assert(sf_log_end_offset(a) == 120);
    ck_assert_int_eq(sf_log_read(a, target - 1, 1 << 20, INT64_MAX, &sl), SF_ERR_RANGE);
    ck_assert_int_eq(sf_log_read(a, target, 1 << 20, INT64_MAX, &sl), SF_OK);
    check_slice(&sl, target, NULL);
    sf_log_slice_release(sl.seg);
    ck_assert_int_eq(sf_logdir_close(ld, 0), SF_OK);
}
END_TEST

/* Checkpointed start offsets are clamped to [oldest segment base, LEO]; a file that does not
 * parse is ignored; the file is rewritten at open only when a value had to be lowered. */
START_TEST(test_logdir_start_offset_bounds) {
    sf_log_config_t cfg;
    sf_logdir_t *ld;
    sf_log_t *a;
    char err[256], path[256], file[300], *text;
    int64_t bases[64];
    size_t i, n;
    static const struct {
        const char *text;
        int64_t start;     /* expected log start offset after open */
        const char *after; /* the file after open (NULL: as written) */
    } cases[] = {
        {"0\n1\na 0 50\n", 50, NULL},
        {"0\n2\nb 0 7\na 0 61 \r\n", 61, NULL},
        {"0\n1\na 0 120\n", 120, NULL},             /* the LEO: everything deleted */
        {"0\n1\na 0 500\n", 120, "0\n1\na 0 120\n"}, /* past the LEO: lowered, rewritten */
        {"0\n1\na 0 0\n", 0, NULL},                 /* at the base: nothing to do */
        {"0\n1\nb 0 50\n", 0, NULL},                /* another topic */
        {"0\n1\na 1 50\n", 0, NULL},                /* another partition */
        {"0\n0\n", 0, NULL},
        {"", 0, NULL},                              /* malformed from here on */
        {"1\n1\na 0 50\n", 0, NULL},
        {"0\n2\na 0 50\n", 0, NULL},
        {"0\n1\na 0 -5\n", 0, NULL},
        {"0\n1\na 0 50x\n", 0, NULL},
        {"0\n1\na 0\n", 0, NULL},
        {"0\n1\na 0 99999999999999999999\n", 0, NULL},
    };

    segment_config(&cfg);
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(path, sizeof(path), "%s/data%zu", tmpdir, i);
        snprintf(file, sizeof(file), "%s/%s", path, SF_LOGDIR_LOG_START_CHECKPOINT);
        ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_OK);
        ck_assert_int_eq(sf_logdir_create(ld, "a", 0, NULL, &a), SF_OK);
        fill_segments(a);
        ck_assert_int_eq(sf_logdir_close(ld, (int)(i % 2)), SF_OK);
        write_file(file, (const uint8_t *)cases[i].text, strlen(cases[i].text));

        ck_assert_int_eq(sf_logdir_open(path, &cfg, &ld, err, sizeof(err)), SF_OK);
        ck_assert_ptr_nonnull(a = sf_logdir_get(ld, "a", 0));
        ck_assert_msg(sf_log_start_offset(a) == cases[i].start, "case %zu: start %" PRId64, i,
                      sf_log_start_offset(a));
        ck_assert(sf_log_end_offset(a) == 120);
        /* The segments wholly below the start are gone from the disk too. */
        n = segment_bases(path, "a", 0, 120, bases, 64);
        ck_assert_uint_eq(n, sf_log_segment_count(a));
        ck_assert(bases[0] == sf_log_base_offset(a));
        ck_assert(sf_log_base_offset(a) <= cases[i].start);
        ck_assert(n == 1 || bases[1] > cases[i].start);
        text = read_text(path, SF_LOGDIR_LOG_START_CHECKPOINT);
        ck_assert_ptr_nonnull(text);
        ck_assert_msg(!strcmp(text, cases[i].after ? cases[i].after : cases[i].text),
                      "case %zu: file \"%s\"", i, text);
        free(text);
        ck_assert_int_eq(sf_logdir_close(ld, 0), SF_OK);
    }
}
END_TEST

static Suite *logdir_suite(void) {
    Suite *s = suite_create("logdir");
    TCase *core = tcase_create("core");
    TCase *limits = tcase_create("limits");
    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_checked_fixture(limits, setup, teardown);
    tcase_set_timeout(core, 120);
    tcase_set_timeout(limits, 120);
    tcase_add_test(core, test_logdir_reopen);
    tcase_add_test(core, test_logdir_checkpoint);
    tcase_add_test(core, test_logdir_hw_checkpoint);
    tcase_add_test(core, test_logdir_flusher);
    tcase_add_test(core, test_logdir_broker_id);
    tcase_add_test(core, test_logdir_start_offset);
    tcase_add_test(core, test_logdir_start_offset_crash);
    tcase_add_test(limits, test_logdir_checkpoint_bounds);
    tcase_add_test(limits, test_logdir_errors);
    tcase_add_test(limits, test_logdir_start_offset_bounds);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(logdir_suite());
    int failed;
    /* The damaged checkpoints provoke warnings; show them only on request. */
    if (!getenv("SF_TEST_LOG"))
        sf_log_level = 0;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
