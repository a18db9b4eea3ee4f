/* Unit tests for transactions in the partition log (broker/storage/logtxn.c, txnindex.c and
 * the markers of logproducers.c): the validator's rules for transactional and control
 * batches, the last stable offset, markers and their epoch checks, the aborted-transaction
 * index in memory and in the .txnindex files across close and open, torn files, truncation,
 * replicas, expiry and segment deletion. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "crc32c.h"
#include "err.h"
#include "log.h"
#include "producers.h"
#include "recbatch.h"
#include "tmpdir.h"
#include "validator.h"

static void setup(void) {
    tmpdir_make("txn-log");
}

static void teardown(void) {
    tmpdir_remove();
}

static sf_log_t *open_named(const char *topic, int64_t segment_bytes) {
    sf_log_config_t cfg;
    sf_log_t *log;
    sf_log_config_default(&cfg);
    if (segment_bytes > 0)
        cfg.segment_bytes = segment_bytes;
    ck_assert_int_eq(sf_log_open(tmpdir, topic, 0, &cfg, INT64_MAX, &log), SF_OK);
    return log;
}

static sf_log_t *open_log(int64_t segment_bytes) {
    return open_named("t", segment_bytes);
}

/* One batch of @n records from producer @pid (-1: none) at @seq, @attrs its attributes. */
static void make_batch(sf_wbuf_t *wb, int64_t base, int16_t attrs, int64_t pid, int16_t epoch,
                       int32_t seq, int n) {
    sf_recbatch_record_t recs[8];
    sf_recbatch_hdr_t h;
    static uint8_t value[40];
    int i;
    memset(&h, 0, sizeof(h));
    memset(recs, 0, sizeof(recs));
    h.BaseOffset = base;
    h.Attributes = attrs;
    h.BaseTimestamp = 5000;
    h.ProducerId = pid;
    h.ProducerEpoch = pid < 0 ? -1 : epoch;
    h.BaseSequence = pid < 0 ? -1 : seq;
    for (i = 0; i < n; i++) {
        recs[i].timestamp = 5000 + i;
        recs[i].key.len = -1;
        recs[i].value.p = value;
        recs[i].value.len = (int32_t)sizeof(value);
    }
    ck_assert_int_eq(sf_recbatch_build_hdr(wb, &h, recs, n), SF_OK);
}

/* A leader append of @n records; returns the first offset. */
static int64_t append(sf_log_t *log, int txn, int64_t pid, int16_t epoch, int32_t seq, int n) {
    sf_log_append_info_t info;
    sf_wbuf_t wb;
    sf_wbuf_init(&wb);
    make_batch(&wb, 0, txn ? SF_RECBATCH_ATTR_TRANSACTIONAL : 0, pid, epoch, seq, n);
    ck_assert_int_eq(sf_log_append(log, wb.p, wb.len, 5000, &info), SF_OK);
    sf_wbuf_free(&wb);
    return info.FirstOffset;
}

static int64_t marker(sf_log_t *log, int64_t pid, int16_t epoch, int commit, int32_t cepoch) {
    int64_t off = -1;
    ck_assert_int_eq(sf_log_append_marker(log, pid, epoch, commit, cepoch, 6000, &off), SF_OK);
    return off;
}

/* The aborted transactions in [@from, @to), as "pid:first-last " text. */
static const char *aborted(sf_log_t *log, int64_t from, int64_t to) {
    static char buf[256];
    sf_aborted_txn_t *v;
    size_t n, i, len = 0;
    ck_assert_int_eq(sf_log_aborted_txns(log, from, to, &v, &n), SF_OK);
    buf[0] = 0;
    for (i = 0; i < n; i++)
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%lld:%lld-%lld ",
                                (long long)v[i].producer_id, (long long)v[i].first_offset,
                                (long long)v[i].last_offset);
    ck_assert(n > 0 || v == NULL);
    free(v);
    return buf;
}

static void txnindex_path(char *buf, size_t size, int64_t base) {
    snprintf(buf, size, "%s/t-0/%020lld.txnindex", tmpdir, (long long)base);
}

/* The size of segment @base's .txnindex, -1 when there is none. */
static long txnindex_size(int64_t base) {
    char path[200];
    struct stat st;
    txnindex_path(path, sizeof(path), base);
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void append_bytes(int64_t base, const void *p, size_t len) {
    char path[200];
    FILE *f;
    txnindex_path(path, sizeof(path), base);
    ck_assert_ptr_nonnull(f = fopen(path, "ab"));
    ck_assert_uint_eq(fwrite(p, 1, len, f), len);
    fclose(f);
}

/* The log of the tests below: offsets 0-1 plain, 2-3 producer 5's transaction, 4-5 plain,
 * 6 its commit, 7-8 producer 6's transaction, 9 producer 7's, 10 the abort of 6; producer 7's
 * transaction stays open. */
static sf_log_t *txn_log(int64_t segment_bytes) {
    sf_log_t *log = open_log(segment_bytes);
    ck_assert_int_eq(append(log, 0, -1, 0, 0, 2), 0);
    ck_assert_int_eq(append(log, 1, 5, 0, 0, 2), 2);
    ck_assert_int_eq(sf_log_last_stable_offset(log), 2);
    ck_assert_int_eq(append(log, 0, -1, 0, 0, 2), 4);
    ck_assert_int_eq(sf_log_last_stable_offset(log), 2); /* others' records wait too */
    ck_assert_int_eq(marker(log, 5, 0, 1, 0), 6);
    ck_assert_int_eq(sf_log_last_stable_offset(log), 7);
    ck_assert_int_eq(append(log, 1, 6, 0, 0, 2), 7);
    ck_assert_int_eq(append(log, 1, 7, 0, 0, 1), 9);
    ck_assert_int_eq(marker(log, 6, 0, 0, 0), 10);
    return log;
}

/* ---- validator ---- */

static int validate(int16_t attrs, int64_t pid, int32_t seq) {
    sf_validate_cfg_t cfg;
    sf_validate_result_t res;
    sf_wbuf_t wb, out;
    int rc;
    memset(&cfg, 0, sizeof(cfg));
    cfg.produce_version = 9;
    cfg.codec = -1;
    cfg.level = -1;
    cfg.before_max_ms = cfg.after_max_ms = INT64_MAX;
    cfg.max_decompressed = 1 << 20;
    sf_wbuf_init(&wb);
    sf_wbuf_init(&out);
    make_batch(&wb, 0, attrs, pid, 0, 0, 2);
    if (pid >= 0 && seq < 0) {
        /* Rewrite the sequence and the CRC over it. */
        sf_store_be32(wb.p + SF_RECBATCH_OFF_BASE_SEQUENCE, (uint32_t)seq);
        sf_store_be32(wb.p + SF_RECBATCH_OFF_CRC,
                      sf_crc32c(0, wb.p + SF_RECBATCH_OFF_ATTRIBUTES,
                                wb.len - SF_RECBATCH_OFF_ATTRIBUTES));
    }
    rc = sf_validate_produce(wb.p, wb.len, &cfg, &out, &res);
    sf_wbuf_free(&wb);
    sf_wbuf_free(&out);
    return rc;
}

START_TEST(test_validator) {
    ck_assert_int_eq(validate(SF_RECBATCH_ATTR_TRANSACTIONAL, 3, 0), SF_OK);
    ck_assert_int_eq(validate(SF_RECBATCH_ATTR_TRANSACTIONAL, -1, -1), SF_ERR_RECORD);
    ck_assert_int_eq(validate(SF_RECBATCH_ATTR_TRANSACTIONAL, 3, -1), SF_ERR_RECORD);
    ck_assert_int_eq(validate(SF_RECBATCH_ATTR_TRANSACTIONAL | SF_RECBATCH_ATTR_CONTROL, 3, 0),
                     SF_ERR_RECORD);
    ck_assert_int_eq(validate(SF_RECBATCH_ATTR_CONTROL, -1, -1), SF_ERR_RECORD);
    ck_assert_int_eq(validate(0, 3, 0), SF_OK);
    ck_assert_int_eq(sf_err_to_kerr(SF_ERR_COORDINATOR_FENCED, SF_ERR_OP_APPEND),
                     SF_KERR_TRANSACTION_COORDINATOR_FENCED);
}
END_TEST

/* ---- the log ---- */

START_TEST(test_lso_and_markers) {
    sf_log_t *log = txn_log(0);
    sf_log_slice_t sl;
    sf_recbatch_hdr_t hdr;
    uint8_t buf[256];
    size_t bsize;
    int64_t next;
    ck_assert_int_eq(sf_log_last_stable_offset(log), 9); /* producer 7's transaction */
    ck_assert_str_eq(aborted(log, 0, INT64_MAX), "6:7-10 ");
    /* The LSO never passes the high watermark. */
    sf_log_set_high_watermark(log, 8);
    ck_assert_int_eq(sf_log_last_stable_offset(log), 8);
    sf_log_set_high_watermark(log, -1);
    ck_assert_int_eq(marker(log, 7, 0, 0, 0), 11);
    ck_assert_int_eq(sf_log_last_stable_offset(log), 12);
    ck_assert_str_eq(aborted(log, 0, INT64_MAX), "6:7-10 7:9-11 ");
    /* Ranges: last offset >= from, first offset < to. */
    ck_assert_str_eq(aborted(log, 11, INT64_MAX), "7:9-11 ");
    ck_assert_str_eq(aborted(log, 0, 9), "6:7-10 ");
    ck_assert_str_eq(aborted(log, 0, 7), "");
    ck_assert_str_eq(aborted(log, 12, INT64_MAX), "");
    ck_assert_str_eq(aborted(log, 10, 10), "6:7-10 7:9-11 ");
    /* Kafka's file: 34-byte entries, the LSO after each marker in the last field. */
    ck_assert_int_eq(txnindex_size(0), 68);
    {
        char path[200];
        FILE *f;
        txnindex_path(path, sizeof(path), 0);
        ck_assert_ptr_nonnull(f = fopen(path, "rb"));
        ck_assert_uint_eq(fread(buf, 1, 68, f), 68);
        fclose(f);
        ck_assert_int_eq(sf_load_be16(buf), 0);
        ck_assert_int_eq((int64_t)sf_load_be64(buf + 2), 6);
        ck_assert_int_eq((int64_t)sf_load_be64(buf + 10), 7);
        ck_assert_int_eq((int64_t)sf_load_be64(buf + 18), 10);
        ck_assert_int_eq((int64_t)sf_load_be64(buf + 26), 9); /* producer 7 still open */
        ck_assert_int_eq((int64_t)sf_load_be64(buf + 34 + 26), 12);
    }
    /* The marker as Kafka writes it. */
    ck_assert_int_eq(sf_log_read(log, 11, 1 << 20, INT64_MAX, &sl), SF_OK);
    ck_assert_uint_le(sl.len, sizeof(buf));
    ck_assert_int_eq(sf_log_slice_next_offset(&sl, &next), SF_OK);
    ck_assert_int_eq(next, 12);
    ck_assert_int_eq(sf_log_slice_copy(&sl, buf), SF_OK);
    sf_log_slice_release(sl.seg);
    ck_assert_int_eq(sf_recbatch_header_parse(buf, sl.len, &hdr, &bsize), SF_OK);
    ck_assert_int_eq(sf_recbatch_validate(buf, bsize, &hdr), SF_OK);
    ck_assert_int_eq(hdr.Attributes, SF_RECBATCH_ATTR_TRANSACTIONAL | SF_RECBATCH_ATTR_CONTROL);
    ck_assert_int_eq(hdr.ProducerId, 7);
    ck_assert_int_eq(hdr.BaseSequence, -1);
    ck_assert_int_eq(hdr.RecordCount, 1);
    ck_assert_int_eq(hdr.MaxTimestamp, 6000);
    /* A marker for a producer without a transaction: written, nothing indexed. */
    ck_assert_int_eq(marker(log, 8, 0, 0, 0), 12);
    ck_assert_int_eq(marker(log, 7, 0, 0, 0), 13);
    ck_assert_str_eq(aborted(log, 0, INT64_MAX), "6:7-10 7:9-11 ");
    ck_assert_int_eq(sf_log_last_stable_offset(log), 14);
    sf_log_close(log);
}
END_TEST

START_TEST(test_marker_epochs) {
    sf_log_t *log = open_log(0);
    sf_producer_t p;
    int64_t off;
    ck_assert_int_eq(append(log, 1, 9, 3, 0, 1), 0);
    ck_assert_int_eq(sf_log_append_marker(log, 9, 2, 1, 5, 6000, &off), SF_ERR_PRODUCER_EPOCH);
    ck_assert_int_eq(sf_log_end_offset(log), 1);
    ck_assert_int_eq(sf_log_last_stable_offset(log), 0);
    ck_assert_int_eq(marker(log, 9, 3, 1, 5), 1);
    ck_assert_int_eq(sf_log_producer(log, 9, &p), SF_OK);
    ck_assert_int_eq(p.coordinator_epoch, 5);
    ck_assert_int_eq(p.txn_first_offset, -1);
    ck_assert_int_eq(sf_log_append_marker(log, 9, 3, 0, 4, 6000, &off),
                     SF_ERR_COORDINATOR_FENCED);
    ck_assert_int_eq(sf_log_end_offset(log), 2);
    /* A new epoch through a marker: the producer's sequences start again. */
    ck_assert_int_eq(append(log, 1, 9, 3, 1, 1), 2);
    ck_assert_int_eq(marker(log, 9, 4, 0, 6), 3);
    ck_assert_int_eq(sf_log_producer(log, 9, &p), SF_OK);
    ck_assert_int_eq(p.epoch, 4);
    ck_assert_int_eq(p.nbatches, 0);
    ck_assert_str_eq(aborted(log, 0, INT64_MAX), "9:2-3 ");
    ck_assert_int_eq(append(log, 1, 9, 4, 0, 1), 4);
    sf_log_close(log);
}
END_TEST

START_TEST(test_reopen_and_torn_index) {
    sf_log_t *log = txn_log(0);
    static const uint8_t junk[10] = {0, 0, 1, 2, 3};
    uint8_t stale[34];
    char cmd[200];
    sf_log_close(log);
    /* From the snapshot and the index file. */
    log = open_log(0);
    ck_assert_int_eq(sf_log_last_stable_offset(log), 9);
    ck_assert_str_eq(aborted(log, 0, INT64_MAX), "6:7-10 ");
    sf_log_close(log);
    /* No snapshot: the replay finds the same and adds nothing twice. */
    snprintf(cmd, sizeof(cmd), "rm -f %s/t-0/*.snapshot", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
    log = open_log(0);
    ck_assert_int_eq(sf_log_last_stable_offset(log), 9);
    ck_assert_str_eq(aborted(log, 0, INT64_MAX), "6:7-10 ");
    ck_assert_int_eq(txnindex_size(0), 34);
    sf_log_close(log);
    /* A torn tail and an entry past the log's end (a crash): cut. */
    memset(stale, 0, sizeof(stale));
    sf_store_be64(stale + 2, 7);
    sf_store_be64(stale + 10, 9);
    sf_store_be64(stale + 18, 500);
    sf_store_be64(stale + 26, 501);
    append_bytes(0, stale, sizeof(stale));
    append_bytes(0, junk, sizeof(junk));
    log = open_log(0);
    ck_assert_int_eq(txnindex_size(0), 34);
    ck_assert_str_eq(aborted(log, 0, INT64_MAX), "6:7-10 ");
    /* The index lost to a crash before the snapshot: the replay writes it again. */
    sf_log_close(log);
    snprintf(cmd, sizeof(cmd), "rm -f %s/t-0/*.snapshot %s/t-0/*.txnindex", tmpdir, tmpdir);
    ck_assert_int_eq(system(cmd), 0);
    log = open_log(0);
    ck_assert_str_eq(aborted(log, 0, INT64_MAX), "6:7-10 ");
    ck_assert_int_eq(txnindex_size(0), 34);
    ck_assert_int_eq(marker(log, 7, 0, 0, 0), 11);
    ck_assert_str_eq(aborted(log, 0, INT64_MAX), "6:7-10 7:9-11 ");
    sf_log_close(log);
}
END_TEST

START_TEST(test_truncate) {
    sf_log_t *log = txn_log(0);
    sf_producer_t p;
    ck_assert_int_eq(marker(log, 7, 0, 0, 0), 11);
    ck_assert_int_eq(sf_log_last_stable_offset(log), 12);
    /* The abort of 7 goes: its transaction is open again. */
    ck_assert_int_eq(sf_log_truncate(log, 11), SF_OK);
    ck_assert_int_eq(sf_log_last_stable_offset(log), 9);
    ck_assert_str_eq(aborted(log, 0, INT64_MAX), "6:7-10 ");
    ck_assert_int_eq(txnindex_size(0), 34);
    ck_assert_int_eq(sf_log_producer(log, 7, &p), SF_OK);
    ck_assert_int_eq(p.txn_first_offset, 9);
    /* Into producer 6's transaction: the commit of 5 is all that is left. */
    ck_assert_int_eq(sf_log_truncate(log, 7), SF_OK);
    ck_assert_int_eq(sf_log_last_stable_offset(log), 7);
    ck_assert_str_eq(aborted(log, 0, INT64_MAX), "");
    ck_assert_int_eq(txnindex_size(0), 0);
    /* Before the commit: producer 5's transaction is open again, and survives a reopen. */
    ck_assert_int_eq(sf_log_truncate(log, 6), SF_OK);
    ck_assert_int_eq(sf_log_last_stable_offset(log), 2);
    sf_log_close(log);
    log = open_log(0);
    ck_assert_int_eq(sf_log_last_stable_offset(log), 2);
    ck_assert_int_eq(marker(log, 5, 0, 0, 0), 6);
    ck_assert_str_eq(aborted(log, 0, INT64_MAX), "5:2-6 ");
    /* Fully: nothing left. */
    ck_assert_int_eq(sf_log_truncate(log, 0), SF_OK);
    ck_assert_str_eq(aborted(log, 0, INT64_MAX), "");
    ck_assert_int_eq(sf_log_last_stable_offset(log), 0);
    ck_assert_int_le(txnindex_size(0), 0);
    sf_log_close(log);
}
END_TEST

START_TEST(test_replica_and_expiry) {
    sf_log_t *log = txn_log(0), *rep;
    sf_log_slice_t sl;
    uint8_t *buf;
    char cmd[300];
    /* A follower replicating the log gets the same state. */
    ck_assert_int_eq(sf_log_read(log, 0, 1 << 20, INT64_MAX, &sl), SF_OK);
    ck_assert_ptr_nonnull(buf = malloc(sl.len));
    ck_assert_int_eq(sf_log_slice_copy(&sl, buf), SF_OK);
    sf_log_slice_release(sl.seg);
    rep = open_named("r", 0);
    ck_assert_int_eq(sf_log_append_replica(rep, buf, sl.len, 0, NULL), SF_OK);
    free(buf);
    ck_assert_int_eq(sf_log_last_stable_offset(rep), 9);
    ck_assert_str_eq(aborted(rep, 0, INT64_MAX), "6:7-10 ");
    snprintf(cmd, sizeof(cmd), "test -s %s/r-0/00000000000000000000.txnindex", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
    sf_log_close(rep);
    /* Expiry spares the producer in a transaction (7), not the others. */
    ck_assert_uint_eq(sf_log_expire_producers(log, 1000000, 1000), 2);
    {
        sf_producer_t p;
        ck_assert_int_eq(sf_log_producer(log, 7, &p), SF_OK);
        ck_assert_int_eq(sf_log_producer(log, 6, &p), SF_ERR_NOTFOUND);
    }
    ck_assert_int_eq(sf_log_last_stable_offset(log), 9);
    sf_log_close(log);
}
END_TEST

START_TEST(test_segments_deleted) {
    sf_log_t *log = open_log(400); /* a few batches per segment */
    int64_t off, low;
    int i;
    for (i = 0; i < 4; i++) {
        off = append(log, 1, 20 + i, 0, 0, 2);
        ck_assert_int_eq(marker(log, 20 + i, 0, 0, 0), off + 2);
    }
    ck_assert_uint_gt(sf_log_segment_count(log), 2);
    ck_assert_str_eq(aborted(log, 0, INT64_MAX), "20:0-2 21:3-5 22:6-8 23:9-11 ");
    /* Segments [0, 5), [5, 9), [9, ...): each marker is indexed in the segment holding it. */
    ck_assert_int_eq(txnindex_size(0), 34);
    ck_assert_int_eq(txnindex_size(5), 68);
    ck_assert_int_eq(txnindex_size(9), 34);
    /* The segments below offset 9 go, their index entries and files with them. */
    ck_assert_int_eq(sf_log_delete_records(log, 9, &low), SF_OK);
    ck_assert_int_eq(txnindex_size(0), -1);
    ck_assert_int_eq(txnindex_size(5), -1);
    ck_assert_str_eq(aborted(log, 0, INT64_MAX), "23:9-11 ");
    sf_log_close(log);
    log = open_log(400);
    ck_assert_str_eq(aborted(log, 0, INT64_MAX), "23:9-11 ");
    ck_assert_int_eq(sf_log_last_stable_offset(log), 12);
    sf_log_close(log);
}
END_TEST

static Suite *txn_log_suite(void) {
    Suite *s = suite_create("txn_log");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_validator);
    tcase_add_test(tc, test_lso_and_markers);
    tcase_add_test(tc, test_marker_epochs);
    tcase_add_test(tc, test_replica_and_expiry);
    suite_add_tcase(s, tc);
    tc = tcase_create("limits");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_reopen_and_torn_index);
    tcase_add_test(tc, test_truncate);
    tcase_add_test(tc, test_segments_deleted);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(txn_log_suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
