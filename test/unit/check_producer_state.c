/* Unit tests for the producer state of a partition: the table (broker/storage/producers.c)
 * and the log's use of it (broker/storage/logproducers.c): duplicates, sequence and epoch
 * checks on leader appends, recording replica appends, snapshots across close and open, the
 * rebuild from the batches, truncation and expiry. */
#include <check.h>
#include <dirent.h>
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

/* ---- the table ---- */

static sf_producer_append_t ap(int64_t pid, int16_t epoch, int32_t seq, int32_t n, int64_t off) {
    sf_producer_append_t b;
    memset(&b, 0, sizeof(b));
    b.producer_id = pid;
    b.epoch = epoch;
    b.first_seq = seq;
    b.last_seq = (int32_t)(((int64_t)seq + n - 1) % ((int64_t)INT32_MAX + 1)); /* wraps */
    b.first_offset = off;
    b.last_offset = off + n - 1;
    b.max_timestamp = 1000 + off;
    return b;
}

static int check_b(const sf_producers_t *ps, sf_producer_append_t b) {
    sf_producer_batch_t dup;
    return sf_producers_check(ps, &b, NULL, 0, &dup);
}

static void record(sf_producers_t *ps, sf_producer_append_t b) {
    ck_assert_int_eq(sf_producers_record(ps, &b), SF_OK);
}

START_TEST(test_sequence_rules) {
    sf_producers_t ps;
    sf_producer_batch_t dup;
    sf_producer_append_t b;
    sf_producers_init(&ps);
    /* An unknown producer starts anywhere. */
    ck_assert_int_eq(check_b(&ps, ap(7, 0, 42, 3, 0)), SF_OK);
    record(&ps, ap(7, 0, 0, 3, 0));
    b = ap(7, 0, 0, 3, 99);
    ck_assert_int_eq(sf_producers_check(&ps, &b, NULL, 0, &dup), SF_ERR_DUPLICATE);
    ck_assert_int_eq(dup.first_offset, 0);
    ck_assert_int_eq(dup.last_offset, 2);
    /* Only the exact range is a duplicate; the next sequence continues. */
    ck_assert_int_eq(check_b(&ps, ap(7, 0, 1, 2, 0)), SF_ERR_SEQUENCE);
    ck_assert_int_eq(check_b(&ps, ap(7, 0, 3, 1, 0)), SF_OK);
    ck_assert_int_eq(check_b(&ps, ap(7, 0, 4, 1, 0)), SF_ERR_SEQUENCE);
    ck_assert_int_eq(check_b(&ps, ap(7, 0, -1, 1, 0)), SF_ERR_SEQUENCE);
    /* Epochs: a new one from 0, an old one fenced. */
    ck_assert_int_eq(check_b(&ps, ap(7, 1, 0, 1, 0)), SF_OK);
    ck_assert_int_eq(check_b(&ps, ap(7, 1, 3, 1, 0)), SF_ERR_SEQUENCE);
    record(&ps, ap(7, 1, 0, 1, 3));
    ck_assert_int_eq(check_b(&ps, ap(7, 0, 3, 1, 0)), SF_ERR_PRODUCER_EPOCH);
    ck_assert_int_eq(check_b(&ps, ap(7, 0, 0, 3, 0)), SF_ERR_PRODUCER_EPOCH);
    ck_assert_int_eq(check_b(&ps, ap(7, 1, 1, 1, 0)), SF_OK);
    /* A record of an older epoch changes nothing. */
    record(&ps, ap(7, 0, 3, 1, 4));
    ck_assert_int_eq(sf_producers_find(&ps, 7)->epoch, 1);
    ck_assert_int_eq(sf_producers_find(&ps, 7)->nbatches, 1);
    /* A client's BaseOffset is anything before the log gives offsets: no overflow. */
    {
        sf_recbatch_hdr_t h;
        memset(&h, 0, sizeof(h));
        h.BaseOffset = INT64_MAX;
        h.LastOffsetDelta = 5;
        h.ProducerId = 9;
        h.BaseSequence = 0;
        ck_assert_int_eq(sf_producer_append_from(&h, &b), 1);
        ck_assert_int_eq(b.last_seq, 5);
    }
    /* Sequences wrap at INT32_MAX. */
    record(&ps, ap(8, 0, INT32_MAX - 1, 2, 10));
    ck_assert_int_eq(check_b(&ps, ap(8, 0, 0, 1, 0)), SF_OK);
    b.producer_id = 8;
    b.epoch = 0;
    b.first_seq = INT32_MAX;
    b.last_seq = 1;
    record(&ps, b);
    ck_assert_int_eq(check_b(&ps, ap(8, 0, 2, 1, 0)), SF_OK);
    sf_producers_free(&ps);
}
END_TEST

START_TEST(test_five_batches_and_prev) {
    sf_producers_t ps;
    sf_producer_batch_t dup;
    sf_producer_append_t prev, b;
    int i;
    sf_producers_init(&ps);
    for (i = 0; i < 6; i++)
        record(&ps, ap(3, 2, i * 2, 2, i * 2));
    ck_assert_int_eq(sf_producers_find(&ps, 3)->nbatches, SF_PRODUCER_BATCHES);
    /* The oldest of six is forgotten (out of sequence now); the five after are duplicates. */
    ck_assert_int_eq(check_b(&ps, ap(3, 2, 0, 2, 0)), SF_ERR_SEQUENCE);
    for (i = 1; i < 6; i++) {
        b = ap(3, 2, i * 2, 2, 0);
        ck_assert_int_eq(sf_producers_check(&ps, &b, NULL, 0, &dup), SF_ERR_DUPLICATE);
        ck_assert_int_eq(dup.first_offset, i * 2);
    }
    /* Within one append, a batch follows the earlier one of its producer. */
    prev = ap(3, 2, 12, 2, 0);
    ck_assert_int_eq(check_b(&ps, prev), SF_OK);
    b = ap(3, 2, 14, 1, 0);
    ck_assert_int_eq(sf_producers_check(&ps, &b, &prev, 0, &dup), SF_OK);
    b = ap(3, 2, 12, 2, 0);
    ck_assert_int_eq(sf_producers_check(&ps, &b, &prev, 0, &dup), SF_ERR_SEQUENCE);
    ck_assert_int_eq(sf_producers_reach(&ps, 11), 1);
    ck_assert_int_eq(sf_producers_reach(&ps, 12), 0);
    sf_producers_free(&ps);
}
END_TEST

START_TEST(test_many_expire_snapshot) {
    sf_producers_t ps, back;
    sf_wbuf_t wb;
    int64_t i;
    sf_producers_init(&ps);
    sf_producers_init(&back);
    for (i = 0; i < 3000; i++)
        record(&ps, ap(i * 7919, (int16_t)(i % 5), 0, 1, i)); /* timestamp 1000 + i */
    ck_assert_uint_eq(ps.n, 3000);
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_producers_encode(&ps, &wb), SF_OK);
    ck_assert_int_eq(sf_producers_decode(&back, wb.p, wb.len), SF_OK);
    ck_assert_uint_eq(back.n, 3000);
    for (i = 0; i < 3000; i++) {
        const sf_producer_t *p = sf_producers_find(&back, i * 7919);
        ck_assert_ptr_nonnull(p);
        ck_assert_int_eq(p->epoch, i % 5);
        ck_assert_int_eq(p->batches[0].first_offset, i);
        ck_assert_int_eq(p->last_timestamp, 1000 + i);
    }
    /* A flipped byte, a short file, another version: refused, the table left empty. */
    wb.p[wb.len / 2] ^= 1;
    ck_assert_int_eq(sf_producers_decode(&back, wb.p, wb.len), SF_ERR_CORRUPT);
    ck_assert_uint_eq(back.n, 0);
    wb.p[wb.len / 2] ^= 1;
    ck_assert_int_eq(sf_producers_decode(&back, wb.p, wb.len - 1), SF_ERR_CORRUPT);
    ck_assert_int_eq(sf_producers_decode(&back, wb.p, 3), SF_ERR_CORRUPT);
    wb.p[1] = 9;
    ck_assert_int_eq(sf_producers_decode(&back, wb.p, wb.len), SF_ERR_UNSUPPORTED);
    sf_wbuf_free(&wb);
    /* Expiry: the producers last seen at 1000 + 1499 or before go; every other one stays. */
    ck_assert_uint_eq(sf_producers_expire(&ps, 2500, 1), 1500);
    ck_assert_uint_eq(ps.n, 1500);
    for (i = 0; i < 3000; i++)
        ck_assert_int_eq(sf_producers_find(&ps, i * 7919) != NULL, i >= 1500);
    sf_producers_free(&ps);
    sf_producers_free(&back);
}
END_TEST

static sf_producer_append_t txn(int64_t pid, int16_t epoch, int32_t seq, int32_t n, int64_t off) {
    sf_producer_append_t b = ap(pid, epoch, seq, n, off);
    b.transactional = 1;
    return b;
}

static sf_producer_append_t mark(int64_t pid, int16_t epoch, int commit, int32_t cepoch,
                                 int64_t off) {
    sf_producer_append_t b = ap(pid, epoch, -1, 1, off);
    b.last_seq = -1;
    b.transactional = b.control = 1;
    b.commit = commit;
    b.coordinator_epoch = cepoch;
    return b;
}

START_TEST(test_transactions) {
    sf_producers_t ps, back;
    sf_producer_append_t b;
    int64_t first;
    sf_wbuf_t wb;
    sf_producers_init(&ps);
    sf_producers_init(&back);
    ck_assert_int_eq(sf_producers_first_unstable(&ps), -1);
    record(&ps, ap(1, 0, 0, 2, 0)); /* idempotent only */
    ck_assert_int_eq(sf_producers_first_unstable(&ps), -1);
    ck_assert_int_eq(sf_producers_find(&ps, 1)->txn_first_offset, -1);
    ck_assert_int_eq(sf_producers_find(&ps, 1)->coordinator_epoch, -1);
    record(&ps, txn(2, 0, 0, 2, 2));
    record(&ps, txn(3, 0, 0, 1, 4));
    record(&ps, txn(2, 0, 2, 1, 5)); /* the same transaction goes on */
    ck_assert_int_eq(sf_producers_find(&ps, 2)->txn_first_offset, 2);
    ck_assert_int_eq(sf_producers_first_unstable(&ps), 2);
    ck_assert_uint_eq(ps.ntxns, 2);
    /* Markers: epoch and coordinator epoch checks; an unknown producer passes. */
    ck_assert_int_eq(sf_producers_check_marker(&ps, 2, 0, 0), SF_OK);
    ck_assert_int_eq(sf_producers_check_marker(&ps, 99, 0, 0), SF_OK);
    b = mark(2, 0, 1, 3, 6);
    ck_assert_int_eq(sf_producers_record_marker(&ps, &b, &first), SF_OK);
    ck_assert_int_eq(first, 2);
    ck_assert_int_eq(sf_producers_first_unstable(&ps), 4);
    ck_assert_int_eq(sf_producers_find(&ps, 2)->coordinator_epoch, 3);
    ck_assert_int_eq(sf_producers_check_marker(&ps, 2, 0, 2), SF_ERR_COORDINATOR_FENCED);
    record(&ps, ap(3, 1, 0, 1, 7)); /* a new epoch, in the same transaction */
    ck_assert_int_eq(sf_producers_check_marker(&ps, 3, 0, 0), SF_ERR_PRODUCER_EPOCH);
    /* A marker of a producer without a transaction ends nothing. */
    b = mark(2, 0, 0, 3, 8);
    ck_assert_int_eq(sf_producers_record_marker(&ps, &b, &first), SF_OK);
    ck_assert_int_eq(first, -1);
    /* Expiry spares producer 3 (in a transaction). */
    ck_assert_uint_eq(sf_producers_expire(&ps, 1000000, 1), 2);
    ck_assert_ptr_nonnull(sf_producers_find(&ps, 3));
    ck_assert_ptr_null(sf_producers_find(&ps, 2));
    /* Snapshot v2 keeps both fields and the open transactions. */
    record(&ps, txn(5, 0, 0, 1, 1)); /* opened below the other: kept in order */
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_producers_encode(&ps, &wb), SF_OK);
    ck_assert_int_eq(sf_load_be16(wb.p), 2);
    ck_assert_int_eq(sf_producers_decode(&back, wb.p, wb.len), SF_OK);
    ck_assert_int_eq(sf_producers_find(&back, 3)->txn_first_offset, 4);
    ck_assert_int_eq(sf_producers_find(&back, 5)->txn_first_offset, 1);
    ck_assert_uint_eq(back.ntxns, 2);
    ck_assert_int_eq(sf_producers_first_unstable(&back), 1);
    b = mark(5, 0, 0, 7, 9);
    ck_assert_int_eq(sf_producers_record_marker(&back, &b, &first), SF_OK);
    ck_assert_int_eq(first, 1);
    ck_assert_int_eq(sf_producers_first_unstable(&back), 4);
    ck_assert_int_eq(sf_producers_find(&back, 5)->coordinator_epoch, 7);
    ck_assert_int_eq(sf_producers_reach(&back, 100), 1); /* transaction state: reload */
    sf_wbuf_free(&wb);
    sf_producers_free(&ps);
    sf_producers_free(&back);
}
END_TEST

/* KIP-890: a transactional batch that would start a transaction needs the guard of a
 * verification no marker voided; a plain batch inside a transaction is refused. */
START_TEST(test_transaction_verification) {
    sf_producers_t ps;
    sf_producer_batch_t dup;
    sf_producer_append_t b;
    uint64_t guard = 0, again = 0;
    sf_producers_init(&ps);
    b = txn(4, 0, 0, 1, 0);
    /* Not verified: refused when the append asks for a guard, accepted without one. */
    ck_assert_int_eq(sf_producers_check(&ps, &b, NULL, 9, &dup), SF_ERR_TXN_STATE);
    ck_assert_int_eq(sf_producers_check(&ps, &b, NULL, 0, &dup), SF_OK);
    /* A verification creates the producer and hands out its guard; a second one shares it. */
    ck_assert_int_eq(sf_producers_verify_begin(&ps, 4, 0, 9, 500, &guard), 1);
    ck_assert_int_eq(sf_producers_verify_begin(&ps, 4, 0, 10, 500, &again), 1);
    ck_assert_uint_eq(guard, 9);
    ck_assert_uint_eq(again, 9);
    ck_assert_int_eq(sf_producers_check(&ps, &b, NULL, 10, &dup), SF_ERR_TXN_STATE);
    /* A marker written meanwhile voids it (the transaction the coordinator confirmed ended). */
    b = mark(4, 0, 0, 1, 0);
    ck_assert_int_eq(sf_producers_record_marker(&ps, &b, NULL), SF_OK);
    b = txn(4, 0, 0, 1, 1);
    ck_assert_int_eq(sf_producers_check(&ps, &b, NULL, 9, &dup), SF_ERR_TXN_STATE);
    ck_assert_int_eq(sf_producers_verify_begin(&ps, 4, 0, 11, 500, &guard), 1);
    ck_assert_uint_eq(guard, 11);
    ck_assert_int_eq(sf_producers_check(&ps, &b, NULL, 11, &dup), SF_OK);
    record(&ps, b);
    ck_assert_uint_eq(sf_producers_find(&ps, 4)->verify_guard, 0);
    /* Inside the transaction: nothing to verify, and a plain batch is refused. */
    ck_assert_int_eq(sf_producers_verify_begin(&ps, 4, 0, 12, 500, &guard), 0);
    b = txn(4, 0, 1, 1, 2);
    ck_assert_int_eq(sf_producers_check(&ps, &b, NULL, 0, &dup), SF_OK);
    b = ap(4, 0, 1, 1, 2);
    ck_assert_int_eq(sf_producers_check(&ps, &b, NULL, 0, &dup), SF_ERR_TXN_STATE);
    /* An older epoch hears of its epoch first. */
    record(&ps, txn(4, 1, 0, 1, 3));
    b = ap(4, 0, 5, 1, 4);
    ck_assert_int_eq(sf_producers_check(&ps, &b, NULL, 0, &dup), SF_ERR_PRODUCER_EPOCH);
    sf_producers_free(&ps);
}
END_TEST

START_TEST(test_snapshot_v1) {
    /* A version 1 file: producer 77, epoch 3, last timestamp 1234, one batch. */
    uint8_t v1[10 + 19 + 32];
    sf_producers_t ps;
    const sf_producer_t *p;
    sf_wbuf_t wb;
    sf_wbuf_init(&wb);
    sf_wbuf_i16(&wb, 1);
    sf_wbuf_u32(&wb, 0);
    sf_wbuf_i32(&wb, 1);
    sf_wbuf_i64(&wb, 77);
    sf_wbuf_i16(&wb, 3);
    sf_wbuf_i64(&wb, 1234);
    sf_wbuf_i8(&wb, 1);
    sf_wbuf_i32(&wb, 0);
    sf_wbuf_i32(&wb, 4);
    sf_wbuf_i64(&wb, 10);
    sf_wbuf_i64(&wb, 14);
    sf_wbuf_i64(&wb, 1234);
    ck_assert_uint_eq(wb.len, sizeof(v1));
    memcpy(v1, wb.p, sizeof(v1));
    sf_wbuf_free(&wb);
    sf_store_be32(v1 + 2, sf_crc32c(0, v1 + 6, sizeof(v1) - 6));
    sf_producers_init(&ps);
    ck_assert_int_eq(sf_producers_decode(&ps, v1, sizeof(v1)), SF_OK);
    ck_assert_ptr_nonnull(p = sf_producers_find(&ps, 77));
    ck_assert_int_eq(p->epoch, 3);
    ck_assert_int_eq(p->nbatches, 1);
    ck_assert_int_eq(p->batches[0].last_offset, 14);
    ck_assert_int_eq(p->last_timestamp, 1234);
    ck_assert_int_eq(p->txn_first_offset, -1);
    ck_assert_int_eq(p->coordinator_epoch, -1);
    ck_assert_int_eq(sf_producers_first_unstable(&ps), -1);
    /* One byte short of the entry: corrupt. */
    ck_assert_int_eq(sf_producers_decode(&ps, v1, sizeof(v1) - 1), SF_ERR_CORRUPT);
    sf_producers_free(&ps);
}
END_TEST

/* ---- the log ---- */

static void setup(void) {
    tmpdir_make("producer-state");
}

static void teardown(void) {
    tmpdir_remove();
}

static sf_log_t *open_log(int64_t segment_bytes) {
    sf_log_config_t cfg;
    sf_log_t *log;
    sf_log_config_default(&cfg);
    if (segment_bytes > 0)
        cfg.segment_bytes = segment_bytes;
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, INT64_MAX, &log), SF_OK);
    return log;
}

/* One batch of @n records from producer @pid (-1: none) at @epoch and @seq, at @base. */
static void make_batch(sf_wbuf_t *wb, int64_t base, int64_t pid, int16_t epoch, int32_t seq,
                       int n) {
    sf_recbatch_record_t recs[8];
    sf_recbatch_hdr_t h;
    static uint8_t value[100];
    int i;
    memset(&h, 0, sizeof(h));
    memset(recs, 0, sizeof(recs));
    h.BaseOffset = base;
    h.PartitionLeaderEpoch = 0;
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

/* A leader append; returns its result, the offsets in *@info. */
static int append(sf_log_t *log, int64_t pid, int16_t epoch, int32_t seq, int n,
                  sf_log_append_info_t *info) {
    sf_wbuf_t wb;
    int rc;
    sf_wbuf_init(&wb);
    make_batch(&wb, 0, pid, epoch, seq, n);
    rc = sf_log_append(log, wb.p, wb.len, 0, info);
    sf_wbuf_free(&wb);
    return rc;
}

static int count_snapshots(void) {
    struct dirent *de;
    char path[128];
    DIR *d;
    int n = 0;
    snprintf(path, sizeof(path), "%s/t-0", tmpdir);
    d = opendir(path);
    ck_assert_ptr_nonnull(d);
    while ((de = readdir(d)) != NULL)
        n += strstr(de->d_name, ".snapshot") != NULL;
    closedir(d);
    return n;
}

static void remove_snapshots(void) {
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -f %s/t-0/*.snapshot", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_log_duplicates_and_errors) {
    sf_log_t *log = open_log(0);
    sf_log_append_info_t info;
    ck_assert_int_eq(append(log, -1, 0, 0, 2, &info), SF_OK); /* offsets 0-1, no producer */
    ck_assert_int_eq(append(log, 11, 0, 0, 3, &info), SF_OK);
    ck_assert_int_eq(info.FirstOffset, 2);
    ck_assert_int_eq(append(log, 11, 0, 0, 3, &info), SF_ERR_DUPLICATE);
    ck_assert_int_eq(info.FirstOffset, 2);
    ck_assert_int_eq(info.LastOffset, 4);
    ck_assert_int_eq(sf_log_end_offset(log), 5);
    ck_assert_int_eq(append(log, 11, 0, 5, 1, &info), SF_ERR_SEQUENCE);
    ck_assert_int_eq(append(log, 11, 1, 0, 1, &info), SF_OK);
    ck_assert_int_eq(append(log, 11, 0, 3, 1, &info), SF_ERR_PRODUCER_EPOCH);
    ck_assert_int_eq(sf_log_end_offset(log), 6);
    sf_log_close(log);
}
END_TEST

START_TEST(test_log_snapshot_and_rebuild) {
    sf_log_t *log = open_log(0);
    sf_log_append_info_t info;
    sf_producer_t p;
    ck_assert_int_eq(append(log, 21, 4, 0, 2, &info), SF_OK);
    ck_assert_int_eq(append(log, 21, 4, 2, 2, &info), SF_OK);
    sf_log_close(log);
    ck_assert_int_eq(count_snapshots(), 1);
    /* From the snapshot written at close. */
    log = open_log(0);
    ck_assert_int_eq(append(log, 21, 4, 2, 2, &info), SF_ERR_DUPLICATE);
    ck_assert_int_eq(info.FirstOffset, 2);
    ck_assert_int_eq(append(log, 21, 4, 4, 1, &info), SF_OK);
    sf_log_close(log);
    /* Without any snapshot (a crash before the first): rebuilt from the batches. */
    remove_snapshots();
    log = open_log(0);
    ck_assert_int_eq(count_snapshots(), 1); /* what the replay found, kept at the LEO */
    ck_assert_int_eq(append(log, 21, 4, 4, 1, &info), SF_ERR_DUPLICATE);
    ck_assert_int_eq(info.FirstOffset, 4);
    ck_assert_int_eq(sf_log_producer(log, 21, &p), SF_OK);
    ck_assert_int_eq(p.epoch, 4);
    ck_assert_int_eq(p.nbatches, 3);
    sf_log_close(log);
}
END_TEST

START_TEST(test_log_roll_snapshot_and_corrupt) {
    sf_log_t *log = open_log(600); /* about two batches per segment */
    sf_log_append_info_t info;
    char cmd[200];
    int i;
    for (i = 0; i < 6; i++)
        ck_assert_int_eq(append(log, 31, 0, i * 2, 2, &info), SF_OK);
    ck_assert_uint_gt(sf_log_segment_count(log), 2);
    /* Snapshots at the rolls: the newest two are kept. */
    ck_assert_int_eq(count_snapshots(), 2);
    sf_log_close(log);
    /* Every snapshot damaged: removed, and the state rebuilt from the log all the same. */
    snprintf(cmd, sizeof(cmd), "for f in %s/t-0/*.snapshot; do printf 'xx' | "
             "dd of=$f bs=1 seek=7 conv=notrunc 2>/dev/null; done", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
    log = open_log(600);
    for (i = 1; i < 6; i++) {
        ck_assert_int_eq(append(log, 31, 0, i * 2, 2, &info), SF_ERR_DUPLICATE);
        ck_assert_int_eq(info.FirstOffset, i * 2);
    }
    ck_assert_int_eq(append(log, 31, 0, 12, 1, &info), SF_OK);
    sf_log_close(log);
}
END_TEST

START_TEST(test_log_replica_truncate_expire) {
    sf_log_t *log = open_log(0);
    sf_log_append_info_t info;
    sf_producer_t p;
    sf_wbuf_t wb;
    int i;
    /* A follower records what it replicates, unchecked. */
    sf_wbuf_init(&wb);
    for (i = 0; i < 4; i++)
        make_batch(&wb, i * 2, 41, 2, i * 2, 2);
    ck_assert_int_eq(sf_log_append_replica(log, wb.p, wb.len, 0, NULL), SF_OK);
    sf_wbuf_free(&wb);
    ck_assert_int_eq(sf_log_producer(log, 41, &p), SF_OK);
    ck_assert_int_eq(p.nbatches, 4);
    /* Truncated after the second batch: the last two are gone from the state. */
    ck_assert_int_eq(sf_log_truncate(log, 4), SF_OK);
    ck_assert_int_eq(sf_log_producer(log, 41, &p), SF_OK);
    ck_assert_int_eq(p.nbatches, 2);
    ck_assert_int_eq(p.batches[1].last_seq, 3);
    ck_assert_int_eq(append(log, 41, 2, 4, 2, &info), SF_OK); /* not a duplicate now */
    ck_assert_int_eq(info.FirstOffset, 4);
    /* Truncated to nothing: the producer is unknown, any sequence starts it. */
    ck_assert_int_eq(sf_log_truncate(log, 0), SF_OK);
    ck_assert_int_eq(sf_log_producer(log, 41, &p), SF_ERR_NOTFOUND);
    ck_assert_int_eq(append(log, 41, 2, 77, 1, &info), SF_OK);
    /* Idle for the expiration time (its batch's timestamp is 5000): forgotten. */
    ck_assert_uint_eq(sf_log_expire_producers(log, 5999, 1000), 0);
    ck_assert_uint_eq(sf_log_expire_producers(log, 6000, 1000), 1);
    ck_assert_int_eq(sf_log_producer(log, 41, &p), SF_ERR_NOTFOUND);
    sf_log_close(log);
}
END_TEST

static Suite *producers_suite(void) {
    Suite *s = suite_create("producers");
    TCase *tc = tcase_create("table");
    tcase_add_test(tc, test_sequence_rules);
    tcase_add_test(tc, test_five_batches_and_prev);
    tcase_add_test(tc, test_many_expire_snapshot);
    tcase_add_test(tc, test_transactions);
    tcase_add_test(tc, test_transaction_verification);
    tcase_add_test(tc, test_snapshot_v1);
    suite_add_tcase(s, tc);
    tc = tcase_create("log");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_log_duplicates_and_errors);
    tcase_add_test(tc, test_log_snapshot_and_rebuild);
    tcase_add_test(tc, test_log_roll_snapshot_and_corrupt);
    tcase_add_test(tc, test_log_replica_truncate_expire);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(producers_suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
