/* Unit tests for client/producer: partitioning, the accumulator's batching, linger and retry
 * decisions, the RecordBatch v2 writer (checked with common/recbatch and every codec), and
 * the idempotent producer's sequence numbers (client/idempotence). */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "compress.h"
#include "crc32c.h"
#include "err.h"
#include "idempotence.h"
#include "producer.h"
#include "recbatch.h"

static sf_producer_accconf_t test_conf(void) {
    sf_producer_accconf_t c;
    memset(&c, 0, sizeof(c));
    c.linger_ms = 5;
    c.batch_size = 16384;
    c.max_batch_bytes = 1048576;
    c.delivery_timeout_ms = 120000;
    c.retries = 3;
    c.retry_backoff_ms = 100;
    c.partitioner_murmur2 = 1;
    return c;
}

/* A topic @name with @n partitions, every one led by broker 1 except those in @leaderless. */
static sf_producer_topic_t *test_topic(sf_producer_acc_t *acc, const char *name, int32_t n,
                                       const int32_t *leaderless, int nleaderless) {
    int32_t *leaders = malloc((size_t)n * sizeof(*leaders));
    sf_producer_topic_t *t = sf_producer_acc_topic(acc, name, 1);
    int32_t i;
    int k;
    ck_assert_ptr_nonnull(leaders);
    ck_assert_ptr_nonnull(t);
    for (i = 0; i < n; i++)
        leaders[i] = 1;
    for (k = 0; k < nleaderless; k++)
        leaders[leaderless[k]] = -1;
    ck_assert_int_eq(sf_producer_topic_update(acc, t, 0, n, leaders), SF_OK);
    free(leaders);
    return t;
}

static sf_record_t rec_kv(const char *topic, const char *key, const char *value) {
    sf_record_t r;
    memset(&r, 0, sizeof(r));
    r.topic = topic;
    r.partition = SF_PARTITION_ANY;
    r.key = key;
    r.key_len = key ? strlen(key) : 0;
    r.value = value;
    r.value_len = value ? strlen(value) : 0;
    return r;
}

/* Append @r to partition @pid of @t (timestamp @ts, monotonic @now); returns the events. */
static int append(sf_producer_acc_t *acc, sf_producer_topic_t *t, int32_t pid,
                  const sf_record_t *r, int64_t ts, int64_t now) {
    size_t charged = 0;
    int ev = -1;
    size_t fixed = sf_producer_record_fixed_size(r);
    ck_assert_uint_ne(fixed, SIZE_MAX);
    ck_assert_int_eq(sf_producer_acc_append(acc, t->parts[pid], r, fixed, ts, now, NULL, NULL,
                                            &charged, &ev),
                     SF_OK);
    ck_assert_uint_gt(charged, fixed);
    return ev;
}

/* ------------------------------------------------------------------------------------------
 * Partitioner
 * ------------------------------------------------------------------------------------------ */

/* Keyed records land where the Java client puts them (vectors of check_murmur2.c, computed
 * with kafka-python's murmur2). */
START_TEST(test_partition_murmur2) {
    static const struct {
        const char *key;
        size_t len;
        int32_t p3, p12, p100;
    } vec[] = {
        {"", 0, 0, 9, 81},
        {"a", 1, 1, 4, 24},
        {"ab", 2, 2, 2, 34},
        {"abc", 3, 0, 3, 7},
        {"21", 2, 0, 0, 40},
        {"foobar", 6, 0, 6, 66},
        {"key-0", 5, 1, 1, 41},
        {"key-1", 5, 0, 0, 40},
        {"order-12345", 11, 1, 1, 29},
        {"\xff\x00\x80\x7f\x01", 5, 2, 8, 52},
    };
    sf_producer_accconf_t c = test_conf();
    sf_producer_acc_t acc;
    sf_producer_topic_t *t3, *t12, *t100;
    size_t i;
    ck_assert_int_eq(sf_producer_acc_init(&acc, &c, 1), SF_OK);
    t3 = test_topic(&acc, "t3", 3, NULL, 0);
    t12 = test_topic(&acc, "t12", 12, NULL, 0);
    t100 = test_topic(&acc, "t100", 100, (const int32_t[]){81, 24}, 2);
    for (i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
        sf_record_t r = rec_kv("x", NULL, "v");
        r.key = vec[i].key;
        r.key_len = vec[i].len;
        ck_assert_int_eq(sf_producer_acc_partition(&acc, t3, &r), vec[i].p3);
        ck_assert_int_eq(sf_producer_acc_partition(&acc, t12, &r), vec[i].p12);
        /* Keyed records ignore leader availability, as Java's partitioner does. */
        ck_assert_int_eq(sf_producer_acc_partition(&acc, t100, &r), vec[i].p100);
    }
    sf_producer_acc_free(&acc);
}
END_TEST

START_TEST(test_partition_explicit_and_random) {
    sf_producer_accconf_t c = test_conf();
    sf_producer_acc_t acc;
    sf_producer_topic_t *t;
    sf_record_t r = rec_kv("t", "key-0", "v");
    int seen[4] = {0, 0, 0, 0}, i;
    ck_assert_int_eq(sf_producer_acc_init(&acc, &c, 7), SF_OK);
    t = test_topic(&acc, "t", 4, NULL, 0);
    r.partition = 3;
    ck_assert_int_eq(sf_producer_acc_partition(&acc, t, &r), 3);
    r.partition = 4;
    ck_assert_int_eq(sf_producer_acc_partition(&acc, t, &r), -1);
    r.partition = SF_PARTITION_ANY;
    /* partitioner=random: keyed records spread over every partition. */
    acc.conf.partitioner_murmur2 = 0;
    for (i = 0; i < 400; i++) {
        int32_t pid = sf_producer_acc_partition(&acc, t, &r);
        ck_assert_int_ge(pid, 0);
        ck_assert_int_lt(pid, 4);
        seen[pid]++;
    }
    for (i = 0; i < 4; i++)
        ck_assert_int_gt(seen[i], 0);
    sf_producer_acc_free(&acc);
}
END_TEST

/* Null keys stick to one partition until a batch of it is taken for sending. */
START_TEST(test_sticky_partition) {
    sf_producer_accconf_t c = test_conf();
    sf_producer_acc_t acc;
    sf_producer_topic_t *t;
    sf_producer_batch_t *b1, *b2;
    sf_record_t r = rec_kv("t", NULL, "value");
    int32_t first, second, other, pid;
    int seen[5] = {0, 0, 0, 0, 0};
    int i;
    ck_assert_int_eq(sf_producer_acc_init(&acc, &c, 42), SF_OK);
    /* Partition 2 has no leader: never chosen for null keys. */
    t = test_topic(&acc, "t", 5, (const int32_t[]){2}, 1);
    first = sf_producer_acc_partition(&acc, t, &r);
    ck_assert_int_ge(first, 0);
    ck_assert_int_ne(first, 2);
    for (i = 0; i < 50; i++) {
        pid = sf_producer_acc_partition(&acc, t, &r);
        ck_assert_int_eq(pid, first);
        append(&acc, t, pid, &r, 1000 + i, 10);
    }
    ck_assert_int_eq(t->parts[first]->head->count, 50);
    /* Taking another partition's batch does not move it. */
    other = first == 0 ? 1 : 0;
    append(&acc, t, other, &r, 1, 10);
    b1 = sf_producer_acc_take(&acc, t->parts[other]);
    ck_assert_ptr_nonnull(b1);
    ck_assert_int_eq(sf_producer_acc_partition(&acc, t, &r), first);
    /* Taking its batch does. */
    b2 = sf_producer_acc_take(&acc, t->parts[first]);
    ck_assert_ptr_nonnull(b2);
    second = sf_producer_acc_partition(&acc, t, &r);
    ck_assert_int_ne(second, first);
    ck_assert_int_ne(second, 2);
    ck_assert_int_eq(sf_producer_acc_partition(&acc, t, &r), second);
    sf_producer_acc_done(&acc, b1);
    sf_producer_acc_release(&acc, b1);
    sf_producer_acc_done(&acc, b2);
    sf_producer_acc_release(&acc, b2);
    /* Over many batches every available partition gets a turn, the leaderless one never. */
    for (i = 0; i < 200; i++) {
        pid = sf_producer_acc_partition(&acc, t, &r);
        seen[pid]++;
        append(&acc, t, pid, &r, 1, 10);
        b1 = sf_producer_acc_take(&acc, t->parts[pid]);
        ck_assert_ptr_nonnull(b1);
        sf_producer_acc_done(&acc, b1);
        sf_producer_acc_release(&acc, b1);
        ck_assert_int_ne(sf_producer_acc_partition(&acc, t, &r), pid);
    }
    ck_assert_int_eq(seen[2], 0);
    for (i = 0; i < 5; i++)
        if (i != 2)
            ck_assert_int_gt(seen[i], 0);
    /* The sticky partition loses its leader: null keys move at once. */
    pid = sf_producer_acc_partition(&acc, t, &r);
    {
        int32_t leaders[5] = {1, 1, -1, 1, 1};
        leaders[pid] = -1;
        ck_assert_int_eq(sf_producer_topic_update(&acc, t, 0, 5, leaders), SF_OK);
        second = sf_producer_acc_partition(&acc, t, &r);
        ck_assert_int_ne(second, pid);
        ck_assert_int_ne(second, 2);
    }
    sf_producer_acc_free(&acc);
}
END_TEST

START_TEST(test_sticky_pick) {
    uint64_t rng = 99;
    int32_t avail[] = {1, 4, 6};
    int i;
    for (i = 0; i < 100; i++) {
        int32_t pid = sf_producer_sticky_pick(&rng, 4, avail, 3, 8);
        ck_assert(pid == 1 || pid == 6);
        pid = sf_producer_sticky_pick(&rng, 3, NULL, 0, 4);
        ck_assert_int_ge(pid, 0);
        ck_assert_int_lt(pid, 4);
        ck_assert_int_ne(pid, 3);
    }
    /* No choice: the only one, even if it was the previous. */
    ck_assert_int_eq(sf_producer_sticky_pick(&rng, 6, (const int32_t[]){6}, 1, 8), 6);
    ck_assert_int_eq(sf_producer_sticky_pick(&rng, 0, NULL, 0, 1), 0);
    ck_assert_int_eq(sf_producer_sticky_pick(&rng, -1, NULL, 0, 0), -1);
}
END_TEST

/* ------------------------------------------------------------------------------------------
 * Batching, linger, readiness
 * ------------------------------------------------------------------------------------------ */

START_TEST(test_ready_rules) {
    sf_producer_accconf_t c = test_conf();
    sf_producer_batch_t b;
    int64_t next;
    memset(&b, 0, sizeof(b));
    b.created = 1000;
    b.len = 100;
    c.linger_ms = 5;
    c.batch_size = 1000;

    /* Young and small: waits for linger; the deadline is reported. */
    next = INT64_MAX;
    ck_assert_int_eq(sf_producer_batch_ready(&c, &b, 0, 0, 1002, &next), 0);
    ck_assert_int_eq(next, 1005);
    next = 1003; /* an earlier deadline is kept */
    ck_assert_int_eq(sf_producer_batch_ready(&c, &b, 0, 0, 1002, &next), 0);
    ck_assert_int_eq(next, 1003);
    /* linger reached */
    next = INT64_MAX;
    ck_assert_int_eq(sf_producer_batch_ready(&c, &b, 0, 0, 1005, &next), 1);
    ck_assert_int_eq(next, INT64_MAX);
    /* size reached, a newer batch behind it, or a flush: ready at once */
    ck_assert_int_eq(sf_producer_batch_ready(&c, &b, 1, 0, 1000, &next), 1);
    ck_assert_int_eq(sf_producer_batch_ready(&c, &b, 0, 1, 1000, &next), 1);
    b.len = 1000;
    ck_assert_int_eq(sf_producer_batch_ready(&c, &b, 0, 0, 1000, &next), 1);
    b.len = 999;
    ck_assert_int_eq(sf_producer_batch_ready(&c, &b, 0, 0, 1000, &next), 0);
    /* linger.ms=0: ready as soon as it exists */
    c.linger_ms = 0;
    ck_assert_int_eq(sf_producer_batch_ready(&c, &b, 0, 0, 1000, &next), 1);
    c.linger_ms = 5;
    /* A retried batch waits out its backoff even when flushing, then goes at once. */
    b.closed = 1;
    b.retry_at = 1200;
    next = INT64_MAX;
    ck_assert_int_eq(sf_producer_batch_ready(&c, &b, 1, 1, 1100, &next), 0);
    ck_assert_int_eq(next, 1200);
    ck_assert_int_eq(sf_producer_batch_ready(&c, &b, 0, 0, 1200, &next), 1);
}
END_TEST

START_TEST(test_append_events_and_growth) {
    sf_producer_accconf_t c = test_conf();
    sf_producer_acc_t acc;
    sf_producer_topic_t *t;
    sf_producer_part_t *part;
    char value[200];
    sf_record_t r;
    int ev, i, full = 0;
    memset(value, 'x', sizeof(value) - 1);
    value[sizeof(value) - 1] = '\0';
    r = rec_kv("t", "k", value);
    c.batch_size = 1024;
    c.max_batch_bytes = 4096;
    ck_assert_int_eq(sf_producer_acc_init(&acc, &c, 1), SF_OK);
    t = test_topic(&acc, "t", 1, NULL, 0);
    part = t->parts[0];

    ev = append(&acc, t, 0, &r, 5000, 77);
    ck_assert_int_eq(ev, SF_PRODUCER_EV_NEW_BATCH);
    ck_assert_int_eq(part->head->created, 77);
    ck_assert_ptr_eq(part->head, part->tail);
    ck_assert(part->active);
    /* Keeps appending past batch.size (the buffer grows) up to max_batch_bytes; FULL once. */
    for (i = 1; i < 19; i++) {
        ev = append(&acc, t, 0, &r, 5000 + i, 78);
        ck_assert_int_eq(ev & (SF_PRODUCER_EV_NEW_BATCH | SF_PRODUCER_EV_BEHIND), 0);
        if (ev & SF_PRODUCER_EV_FULL)
            full++;
    }
    ck_assert_int_eq(full, 1);
    ck_assert_int_eq(part->head->count, 19);
    ck_assert_uint_le(part->head->len, 4096);
    ck_assert_uint_ge(part->head->len, 1024);
    /* The next record does not fit: a new batch behind the first. */
    ev = append(&acc, t, 0, &r, 6000, 90);
    ck_assert_int_eq(ev & (SF_PRODUCER_EV_NEW_BATCH | SF_PRODUCER_EV_BEHIND),
                     SF_PRODUCER_EV_NEW_BATCH | SF_PRODUCER_EV_BEHIND);
    ck_assert_ptr_ne(part->head, part->tail);
    ck_assert_int_eq(part->tail->count, 1);
    ck_assert_int_eq(part->tail->created, 90);
    ck_assert_int_eq(part->head->count, 19);
    sf_producer_acc_free(&acc);
}
END_TEST

/* While a batch is in flight, records keep going into the next one; a failed in-flight batch
 * returns in front of it; ordering is kept through retries. */
START_TEST(test_inflight_retry_ordering) {
    sf_producer_accconf_t c = test_conf();
    sf_producer_acc_t acc;
    sf_producer_topic_t *t;
    sf_producer_part_t *part;
    sf_producer_batch_t *a, *b, *x;
    sf_record_t r = rec_kv("t", NULL, "payload");
    int i;
    int64_t next;
    ck_assert_int_eq(sf_producer_acc_init(&acc, &c, 1), SF_OK);
    t = test_topic(&acc, "t", 1, NULL, 0);
    part = t->parts[0];

    for (i = 0; i < 3; i++)
        append(&acc, t, 0, &r, 100 + i, 10);
    a = sf_producer_acc_take(&acc, part);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_eq(part->inflight, a);
    ck_assert_ptr_null(part->head);
    ck_assert_int_eq(sf_producer_batch_close(a, SF_COMPRESS_NONE, -1), SF_OK);
    /* One in flight per partition. */
    for (i = 0; i < 5; i++)
        append(&acc, t, 0, &r, 200 + i, 12);
    ck_assert_ptr_null(sf_producer_acc_take(&acc, part));
    b = part->head;
    ck_assert_int_eq(b->count, 5);
    /* Records keep going into the open batch while A is in flight. */
    append(&acc, t, 0, &r, 300, 13);
    ck_assert_ptr_eq(part->head, b);
    ck_assert_int_eq(b->count, 6);

    /* A fails with a retriable error: back in front of B. */
    ck_assert_int_eq(sf_producer_retry_ok(&acc.conf, a, SF_KERR_NOT_LEADER_OR_FOLLOWER, 500), 1);
    sf_producer_acc_requeue(&acc, a, 500);
    ck_assert_ptr_null(part->inflight);
    ck_assert_ptr_eq(part->head, a);
    ck_assert_ptr_eq(a->next, b);
    ck_assert_ptr_eq(part->tail, b);
    ck_assert_int_eq(a->attempts, 1);
    /* New records go to B (the tail), never to the closed A. */
    append(&acc, t, 0, &r, 301, 14);
    ck_assert_int_eq(a->count, 3);
    ck_assert_int_eq(b->count, 7);
    /* A waits out the backoff, B behind it is not sent first. */
    next = INT64_MAX;
    ck_assert_int_eq(sf_producer_batch_ready(&acc.conf, part->head, 1, 0, 550, &next), 0);
    ck_assert_int_eq(next, 600);
    ck_assert_int_eq(sf_producer_batch_ready(&acc.conf, part->head, 1, 0, 600, &next), 1);
    x = sf_producer_acc_take(&acc, part);
    ck_assert_ptr_eq(x, a);
    ck_assert(a->closed);
    ck_assert_int_eq(a->count, 3);
    sf_producer_acc_done(&acc, a);
    sf_producer_acc_release(&acc, a);
    x = sf_producer_acc_take(&acc, part);
    ck_assert_ptr_eq(x, b);
    ck_assert_ptr_null(part->head);
    ck_assert_ptr_null(part->tail);
    sf_producer_acc_done(&acc, b);
    ck_assert_ptr_null(part->inflight);
    sf_producer_acc_release(&acc, b);
    sf_producer_acc_free(&acc);
}
END_TEST

START_TEST(test_retry_decision) {
    sf_producer_accconf_t c = test_conf();
    sf_producer_batch_t b;
    memset(&b, 0, sizeof(b));
    b.created = 1000;
    c.retries = 2;
    c.delivery_timeout_ms = 5000;
    ck_assert_int_eq(sf_producer_retry_ok(&c, &b, SF_KERR_NOT_LEADER_OR_FOLLOWER, 1000), 1);
    ck_assert_int_eq(sf_producer_retry_ok(&c, &b, SF_KERR_LEADER_NOT_AVAILABLE, 1000), 1);
    ck_assert_int_eq(sf_producer_retry_ok(&c, &b, SF_KERR_REQUEST_TIMED_OUT, 1000), 1);
    ck_assert_int_eq(sf_producer_retry_ok(&c, &b, SF_KERR_NOT_ENOUGH_REPLICAS, 1000), 1);
    ck_assert_int_eq(sf_producer_retry_ok(&c, &b, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION, 1000), 1);
    ck_assert_int_eq(sf_producer_retry_ok(&c, &b, SF_ERROR_TRANSPORT, 1000), 1);
    ck_assert_int_eq(sf_producer_retry_ok(&c, &b, SF_ERROR_TIMED_OUT, 1000), 1);
    /* Not retriable */
    ck_assert_int_eq(sf_producer_retry_ok(&c, &b, SF_KERR_MESSAGE_TOO_LARGE, 1000), 0);
    ck_assert_int_eq(sf_producer_retry_ok(&c, &b, SF_KERR_INVALID_RECORD, 1000), 0);
    ck_assert_int_eq(sf_producer_retry_ok(&c, &b, SF_ERROR_DESTROYED, 1000), 0);
    ck_assert_int_eq(sf_producer_retry_ok(&c, &b, SF_ERROR_MALFORMED, 1000), 0);
    ck_assert_int_eq(sf_producer_retry_ok(&c, &b, 0, 1000), 0);
    /* delivery.timeout.ms passed */
    ck_assert_int_eq(sf_producer_retry_ok(&c, &b, SF_ERROR_TRANSPORT, 5999), 1);
    ck_assert_int_eq(sf_producer_retry_ok(&c, &b, SF_ERROR_TRANSPORT, 6000), 0);
    /* retries used up */
    b.attempts = 2;
    ck_assert_int_eq(sf_producer_retry_ok(&c, &b, SF_ERROR_TRANSPORT, 1000), 0);
    c.retries = 0;
    b.attempts = 0;
    ck_assert_int_eq(sf_producer_retry_ok(&c, &b, SF_ERROR_TRANSPORT, 1000), 0);
}
END_TEST

/* Queued batches past delivery.timeout.ms are removed oldest first; the in-flight one stays. */
START_TEST(test_expire) {
    sf_producer_accconf_t c = test_conf();
    sf_producer_acc_t acc;
    sf_producer_topic_t *t;
    sf_producer_part_t *part;
    sf_producer_batch_t *a, *b1, *b2, *x;
    sf_record_t r = rec_kv("t", "k", "v");
    c.delivery_timeout_ms = 1000;
    c.max_batch_bytes = 200; /* a few records per batch */
    ck_assert_int_eq(sf_producer_acc_init(&acc, &c, 1), SF_OK);
    t = test_topic(&acc, "t", 1, NULL, 0);
    part = t->parts[0];
    append(&acc, t, 0, &r, 1, 0);
    a = sf_producer_acc_take(&acc, part);
    ck_assert_ptr_nonnull(a);
    append(&acc, t, 0, &r, 1, 100);
    b1 = part->head;
    while (part->tail == b1)
        append(&acc, t, 0, &r, 1, 600);
    b2 = part->tail;
    ck_assert_ptr_null(sf_producer_acc_expire(&acc, part, 1099));
    x = sf_producer_acc_expire(&acc, part, 1100);
    ck_assert_ptr_eq(x, b1);
    ck_assert_ptr_null(sf_producer_acc_expire(&acc, part, 1100));
    ck_assert_ptr_eq(part->head, b2);
    ck_assert_ptr_eq(part->inflight, a);
    sf_producer_acc_release(&acc, x);
    x = sf_producer_acc_expire(&acc, part, 5000);
    ck_assert_ptr_eq(x, b2);
    ck_assert_ptr_null(part->head);
    ck_assert_ptr_null(part->tail);
    ck_assert_ptr_eq(part->inflight, a);
    sf_producer_acc_release(&acc, x);
    /* A retried batch is in front, so it is the first to expire. */
    sf_producer_acc_requeue(&acc, a, 5000);
    append(&acc, t, 0, &r, 1, 5000);
    x = sf_producer_acc_expire(&acc, part, 5000);
    ck_assert_ptr_eq(x, a);
    sf_producer_acc_release(&acc, x);
    ck_assert_ptr_null(sf_producer_acc_expire(&acc, part, 5000));
    sf_producer_acc_free(&acc);
}
END_TEST

static void dummy_cb(const sf_delivery_t *d, void *opaque) {
    (void)d;
    (void)opaque;
}

/* A batch the broker found too large is re-encoded into smaller batches, in front of newer
 * ones, with every record, its timestamp and its callback kept in order. */
START_TEST(test_split_too_large) {
    sf_producer_accconf_t c = test_conf();
    sf_producer_acc_t acc;
    sf_producer_topic_t *t;
    sf_producer_part_t *part;
    sf_producer_batch_t *a, *x, *newer;
    sf_header_t h = {"hk", "hv", 2};
    char val[64];
    int i, n = 0, nbatches = 0;
    int64_t delta = 0;
    size_t charged, fixed, before;
    int ev;
    int opaque[20];
    ck_assert_int_eq(sf_producer_acc_init(&acc, &c, 1), SF_OK);
    t = test_topic(&acc, "t", 1, NULL, 0);
    part = t->parts[0];
    for (i = 0; i < 20; i++) {
        sf_record_t r;
        snprintf(val, sizeof(val), "value-%d-%s", i, i % 3 ? "xxxxxxxxxxxxxxxxxxxx" : "");
        r = rec_kv("t", i % 2 ? "key" : NULL, val);
        if (i % 4 == 0) {
            r.headers = &h;
            r.header_count = 1;
        }
        fixed = sf_producer_record_fixed_size(&r);
        ck_assert_int_eq(sf_producer_acc_append(&acc, part, &r, fixed, 5000 + (i % 5) * 100,
                                                10, i % 2 ? dummy_cb : NULL, &opaque[i],
                                                &charged, &ev),
                         SF_OK);
    }
    a = sf_producer_acc_take(&acc, part);
    ck_assert_int_eq(sf_producer_batch_close(a, SF_COMPRESS_NONE, -1), SF_OK);
    a->attempts = 1;
    before = a->len;
    append(&acc, t, 0, &(sf_record_t){.topic = "t", .value = "newer", .value_len = 5}, 9000, 20);
    newer = part->head;
    ck_assert_int_eq(sf_producer_acc_split(&acc, a, &delta), SF_OK);
    ck_assert_ptr_null(part->inflight);
    ck_assert_int_le(delta < 0 ? -delta : delta, 20 * 2);
    for (x = part->head; x != newer; x = x->next) {
        sf_recbatch_hdr_t hdr;
        sf_recbatch_iter_t it;
        sf_recbatch_record_t rec;
        int32_t k;
        ck_assert_ptr_nonnull(x);
        nbatches++;
        ck_assert_int_eq(x->created, 10);
        ck_assert_int_eq(x->attempts, 1);
        ck_assert_int_eq(x->closed, 0);
        ck_assert_uint_lt(x->len, before);
        ck_assert_int_eq(sf_producer_batch_close(x, SF_COMPRESS_NONE, -1), SF_OK);
        ck_assert_int_eq(sf_recbatch_validate(x->wire, x->wire_len, &hdr), SF_OK);
        ck_assert_int_eq(sf_recbatch_iter_init(&it, x->wire, x->wire_len), SF_OK);
        for (k = 0; k < x->count; k++, n++) {
            ck_assert_int_eq(sf_recbatch_iter_next(&it, &rec), SF_OK);
            snprintf(val, sizeof(val), "value-%d-%s", n, n % 3 ? "xxxxxxxxxxxxxxxxxxxx" : "");
            ck_assert_int_eq(rec.value.len, (int32_t)strlen(val));
            ck_assert_int_eq(memcmp(rec.value.p, val, strlen(val)), 0);
            ck_assert_int_eq(rec.key.len, n % 2 ? 3 : -1);
            ck_assert_int_eq(rec.timestamp, 5000 + (n % 5) * 100);
            ck_assert_int_eq(rec.header_count, n % 4 == 0 ? 1 : 0);
            ck_assert_ptr_eq(x->meta[k].opaque, &opaque[n]);
            ck_assert(x->meta[k].cb == (n % 2 ? dummy_cb : NULL));
        }
        ck_assert_int_eq(hdr.RecordCount, x->count);
    }
    ck_assert_int_eq(n, 20);
    ck_assert_int_ge(nbatches, 2);
    ck_assert_int_le(nbatches, 3);
    ck_assert_ptr_eq(part->tail, newer);
    /* They go before the newer batch; a batch of one record cannot be split. */
    while (part->head != newer) {
        x = sf_producer_acc_take(&acc, part);
        ck_assert_ptr_nonnull(x);
        ck_assert_ptr_null(sf_producer_acc_take(&acc, part)); /* one in flight */
        sf_producer_acc_done(&acc, x);
        sf_producer_acc_release(&acc, x);
    }
    x = sf_producer_acc_take(&acc, part);
    ck_assert_ptr_eq(x, newer);
    ck_assert_int_eq(sf_producer_acc_split(&acc, x, &delta), SF_ERR_INVALID);
    ck_assert_ptr_eq(part->inflight, x);
    sf_producer_acc_free(&acc);
}
END_TEST

/* ------------------------------------------------------------------------------------------
 * RecordBatch v2 writer
 * ------------------------------------------------------------------------------------------ */

/* The golden batch of check_recbatch.c (kafka-python 2.0): the writer must produce the same
 * bytes (PartitionLeaderEpoch aside: kafka-python writes 0, the Java client and we -1). */
START_TEST(test_golden_kafka_python) {
    static const char golden_hex[] =
        "00000000000000000000004f00000000024469c88d0000000000010000018bcfe568000000018bcfe568"
        "05ffffffffffffffffffffffffffff000000021a000000046b310a68656c6c6f001e000a02010a776f72"
        "6c640202680276";
    uint8_t golden[200];
    size_t n = strlen(golden_hex) / 2, i;
    sf_producer_accconf_t c = test_conf();
    sf_producer_acc_t acc;
    sf_producer_topic_t *t;
    sf_producer_batch_t *b;
    sf_header_t h = {"h", "v", 1};
    sf_record_t r0 = rec_kv("t", "k1", "hello"), r1 = rec_kv("t", NULL, "world");
    for (i = 0; i < n; i++) {
        unsigned v;
        ck_assert_int_eq(sscanf(golden_hex + 2 * i, "%2x", &v), 1);
        golden[i] = (uint8_t)v;
    }
    r1.headers = &h;
    r1.header_count = 1;
    ck_assert_int_eq(sf_producer_acc_init(&acc, &c, 1), SF_OK);
    t = test_topic(&acc, "t", 1, NULL, 0);
    append(&acc, t, 0, &r0, 1700000000000LL, 1);
    append(&acc, t, 0, &r1, 1700000000005LL, 1);
    b = sf_producer_acc_take(&acc, t->parts[0]);
    ck_assert_int_eq(sf_producer_batch_close(b, SF_COMPRESS_NONE, -1), SF_OK);
    ck_assert_uint_eq(b->wire_len, n);
    ck_assert_int_eq(memcmp(b->wire, golden, 12), 0);
    ck_assert_int_eq((int32_t)sf_load_be32(b->wire + 12), -1);
    ck_assert_int_eq(memcmp(b->wire + 16, golden + 16, n - 16), 0);
    sf_producer_acc_free(&acc);
}
END_TEST

#define RT_N 7

/* Build a batch of every kind of record, close it with @codec, and read it back. */
static void roundtrip(sf_compress_codec_t codec, int expect_compressed) {
    sf_producer_accconf_t c = test_conf();
    sf_producer_acc_t acc;
    sf_producer_topic_t *t;
    sf_producer_batch_t *b;
    sf_recbatch_hdr_t hdr;
    sf_recbatch_iter_t it;
    sf_recbatch_record_t got;
    sf_wbuf_t plain;
    static char big[3000];
    sf_header_t hs[3] = {{"trace", "abc", 3}, {"empty", "", 0}, {"nullv", NULL, 0}};
    sf_record_t recs[RT_N];
    int64_t ts[RT_N] = {1700000000000LL, 1700000000010LL, 1699999999990LL, 1700000000500LL,
                        1700000000001LL, 1700000000002LL, 1700000000003LL};
    int i;

    memset(big, 'z', sizeof(big) - 1);
    recs[0] = rec_kv("t", "key", "value");
    recs[1] = rec_kv("t", NULL, "null key");
    recs[2] = rec_kv("t", "tombstone", NULL); /* earlier timestamp than the first */
    recs[3] = rec_kv("t", NULL, NULL);
    recs[4] = rec_kv("t", "", "");             /* empty, not null */
    recs[5] = rec_kv("t", "h", big);
    recs[5].headers = hs;
    recs[5].header_count = 3;
    recs[6] = rec_kv("t", "bin", NULL);
    recs[6].value = "\x00\x01\xff";
    recs[6].value_len = 3;

    ck_assert_int_eq(sf_producer_acc_init(&acc, &c, 1), SF_OK);
    t = test_topic(&acc, "t", 1, NULL, 0);
    for (i = 0; i < RT_N; i++)
        append(&acc, t, 0, &recs[i], ts[i], 1);
    b = sf_producer_acc_take(&acc, t->parts[0]);
    ck_assert_int_eq(sf_producer_batch_close(b, codec, -1), SF_OK);
    ck_assert(b->closed);
    /* Closing twice changes nothing. */
    ck_assert_int_eq(sf_producer_batch_close(b, codec, -1), SF_OK);

    ck_assert_int_eq(sf_recbatch_validate(b->wire, b->wire_len, &hdr), SF_OK);
    ck_assert_int_eq(hdr.BaseOffset, 0);
    ck_assert_int_eq(hdr.BatchLength, (int32_t)b->wire_len - 12);
    ck_assert_int_eq(hdr.PartitionLeaderEpoch, -1);
    ck_assert_int_eq(hdr.Magic, 2);
    ck_assert_int_eq(hdr.Attributes & SF_RECBATCH_ATTR_COMPRESSION_MASK,
                     expect_compressed ? (int)codec : 0);
    ck_assert_int_eq(hdr.Attributes & ~SF_RECBATCH_ATTR_COMPRESSION_MASK, 0);
    ck_assert_int_eq(hdr.LastOffsetDelta, RT_N - 1);
    ck_assert_int_eq(hdr.RecordCount, RT_N);
    ck_assert_int_eq(hdr.BaseTimestamp, ts[0]);
    ck_assert_int_eq(hdr.MaxTimestamp, 1700000000500LL);
    ck_assert_int_eq(hdr.ProducerId, -1);
    ck_assert_int_eq(hdr.ProducerEpoch, -1);
    ck_assert_int_eq(hdr.BaseSequence, -1);
    if (expect_compressed)
        ck_assert_uint_lt(b->wire_len, b->len);

    /* A flipped byte fails the CRC. */
    {
        uint8_t *copy = malloc(b->wire_len);
        ck_assert_ptr_nonnull(copy);
        memcpy(copy, b->wire, b->wire_len);
        copy[b->wire_len - 1] ^= 0x40;
        ck_assert_int_eq(sf_recbatch_validate(copy, b->wire_len, NULL), SF_ERR_CORRUPT);
        free(copy);
    }

    sf_wbuf_init(&plain);
    if (hdr.Attributes & SF_RECBATCH_ATTR_COMPRESSION_MASK) {
        ck_assert_int_eq(sf_decompress((sf_compress_codec_t)(hdr.Attributes &
                                                             SF_RECBATCH_ATTR_COMPRESSION_MASK),
                                       b->wire + SF_RECBATCH_HEADER_SIZE,
                                       b->wire_len - SF_RECBATCH_HEADER_SIZE, 1 << 20, &plain),
                         SF_OK);
        sf_recbatch_iter_init_records(&it, &hdr, plain.p, plain.len);
    } else {
        ck_assert_int_eq(sf_recbatch_iter_init(&it, b->wire, b->wire_len), SF_OK);
    }
    for (i = 0; i < RT_N; i++) {
        const sf_record_t *want = &recs[i];
        sf_recbatch_record_t mine;
        ck_assert_int_eq(sf_recbatch_iter_next(&it, &got), SF_OK);
        ck_assert_int_eq(got.offset, i);
        ck_assert_int_eq(got.timestamp, ts[i]);
        ck_assert_int_eq(got.attributes, 0);
        if (want->key) {
            ck_assert_int_eq(got.key.len, (int32_t)want->key_len);
            ck_assert_int_eq(memcmp(got.key.p, want->key, want->key_len), 0);
        } else {
            ck_assert_int_eq(got.key.len, -1);
        }
        if (want->value) {
            ck_assert_int_eq(got.value.len, (int32_t)want->value_len);
            ck_assert_int_eq(memcmp(got.value.p, want->value, want->value_len), 0);
        } else {
            ck_assert_int_eq(got.value.len, -1);
        }
        ck_assert_int_eq(got.header_count, (int32_t)want->header_count);
        if (want->header_count) {
            sf_rbuf_t rb;
            size_t k;
            sf_rbuf_init(&rb, got.headers_raw.p, (size_t)got.headers_raw.len);
            for (k = 0; k < want->header_count; k++) {
                sf_recbatch_rechdr_t h;
                ck_assert_int_eq(sf_recbatch_rechdr_read(&rb, &h), SF_OK);
                ck_assert(sf_slice_eq(h.key, want->headers[k].key));
                if (want->headers[k].value) {
                    ck_assert_int_eq(h.value.len, (int32_t)want->headers[k].value_len);
                    ck_assert_int_eq(
                        memcmp(h.value.p, want->headers[k].value, want->headers[k].value_len), 0);
                } else {
                    ck_assert_int_eq(h.value.len, -1);
                }
            }
        }
        /* The report path decodes the same record from the uncompressed buffer. */
        ck_assert_int_eq(sf_producer_batch_record(b, i, &mine), SF_OK);
        ck_assert_int_eq(mine.offset, i);
        ck_assert_int_eq(mine.timestamp, ts[i]);
        ck_assert_int_eq(mine.key.len, got.key.len);
        ck_assert_int_eq(mine.value.len, got.value.len);
        if (mine.value.len > 0)
            ck_assert_int_eq(memcmp(mine.value.p, got.value.p, (size_t)got.value.len), 0);
        ck_assert_int_eq(mine.header_count, got.header_count);
        ck_assert_int_eq(mine.headers_raw.len, got.headers_raw.len);
    }
    ck_assert_int_eq(sf_recbatch_iter_next(&it, &got), SF_ERR_NOTFOUND);
    sf_wbuf_free(&plain);
    sf_producer_acc_done(&acc, b);
    sf_producer_acc_release(&acc, b);
    sf_producer_acc_free(&acc);
}

START_TEST(test_roundtrip_none) {
    roundtrip(SF_COMPRESS_NONE, 0);
}
END_TEST

START_TEST(test_roundtrip_codecs) {
    static const sf_compress_codec_t codecs[] = {SF_COMPRESS_GZIP, SF_COMPRESS_SNAPPY,
                                                 SF_COMPRESS_LZ4, SF_COMPRESS_ZSTD};
    roundtrip(codecs[_i], 1);
}
END_TEST

/* Records that do not compress are sent uncompressed (attributes 0). */
START_TEST(test_incompressible_falls_back) {
    sf_producer_accconf_t c = test_conf();
    sf_producer_acc_t acc;
    sf_producer_topic_t *t;
    sf_producer_batch_t *b;
    sf_recbatch_hdr_t hdr;
    unsigned char noise[64];
    uint64_t x = 88172645463325252ull;
    sf_record_t r = rec_kv("t", NULL, NULL);
    size_t i;
    for (i = 0; i < sizeof(noise); i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        noise[i] = (unsigned char)x;
    }
    r.value = noise;
    r.value_len = sizeof(noise);
    ck_assert_int_eq(sf_producer_acc_init(&acc, &c, 1), SF_OK);
    t = test_topic(&acc, "t", 1, NULL, 0);
    append(&acc, t, 0, &r, 1, 1);
    b = sf_producer_acc_take(&acc, t->parts[0]);
    ck_assert_int_eq(sf_producer_batch_close(b, SF_COMPRESS_GZIP, -1), SF_OK);
    ck_assert_ptr_eq(b->wire, b->buf);
    ck_assert_int_eq(sf_recbatch_validate(b->wire, b->wire_len, &hdr), SF_OK);
    ck_assert_int_eq(hdr.Attributes, 0);
    sf_producer_acc_free(&acc);
}
END_TEST

/* ------------------------------------------------------------------------------------------
 * Limits
 * ------------------------------------------------------------------------------------------ */

/* Split where some records grow when re-encoded (a timestamp delta of 0 becomes a large one
 * against the new batch's first timestamp) into small reused buffers: every record must come
 * out whole, with its timestamp, headers and report entry, and the memory change add up. */
START_TEST(test_split_regrow) {
    sf_producer_accconf_t c = test_conf();
    sf_producer_acc_t acc;
    sf_producer_topic_t *t;
    sf_producer_part_t *part;
    sf_producer_batch_t *a, *x;
    sf_header_t h = {"hkey", "hvalue", 6};
    const int64_t far = INT64_C(1) << 50;
    char val[32];
    int i, n = 0, opaque[12];
    int64_t delta = 0, mem = 0, amem;
    c.batch_size = 64; /* new batches start small and grow */
    ck_assert_int_eq(sf_producer_acc_init(&acc, &c, 1), SF_OK);
    t = test_topic(&acc, "t", 1, NULL, 0);
    part = t->parts[0];
    /* Fill the batch cache with small buffers. */
    for (i = 0; i < 3; i++)
        append(&acc, t, 0, &(sf_record_t){.topic = "t", .value = "x", .value_len = 1}, 1, 1);
    while ((x = part->head)) {
        x = sf_producer_acc_take(&acc, part);
        sf_producer_acc_done(&acc, x);
        sf_producer_acc_release(&acc, x);
    }
    for (i = 0; i < 12; i++) {
        sf_record_t r;
        size_t charged, fixed;
        int ev;
        snprintf(val, sizeof(val), "v%d", i);
        r = rec_kv("t", i % 3 ? "k" : NULL, val);
        r.headers = &h;
        r.header_count = i % 2;
        fixed = sf_producer_record_fixed_size(&r);
        /* Alternate: the first batch has deltas 0 and -far; later batches may start at 0. */
        ck_assert_int_eq(sf_producer_acc_append(&acc, part, &r, fixed, i % 2 ? 0 : far, 10,
                                                dummy_cb, &opaque[i], &charged, &ev),
                         SF_OK);
    }
    ck_assert_ptr_eq(part->head, part->tail);
    a = sf_producer_acc_take(&acc, part);
    amem = (int64_t)a->mem;
    ck_assert_int_eq(sf_producer_acc_split(&acc, a, &delta), SF_OK);
    for (x = part->head; x; x = x->next) {
        sf_recbatch_iter_t it;
        sf_recbatch_record_t rec;
        sf_recbatch_rechdr_t rh;
        sf_rbuf_t hb;
        int32_t k;
        ck_assert_int_eq(sf_producer_batch_close(x, SF_COMPRESS_NONE, -1), SF_OK);
        ck_assert_int_eq(sf_recbatch_validate(x->wire, x->wire_len, NULL), SF_OK);
        ck_assert_int_eq(sf_recbatch_iter_init(&it, x->wire, x->wire_len), SF_OK);
        ck_assert_uint_le(x->len, x->cap);
        for (k = 0; k < x->count; k++, n++) {
            ck_assert_int_eq(sf_recbatch_iter_next(&it, &rec), SF_OK);
            snprintf(val, sizeof(val), "v%d", n);
            ck_assert_int_eq(rec.value.len, (int32_t)strlen(val));
            ck_assert_int_eq(memcmp(rec.value.p, val, strlen(val)), 0);
            ck_assert_int_eq(rec.key.len, n % 3 ? 1 : -1);
            ck_assert_int_eq(rec.timestamp, n % 2 ? 0 : far);
            ck_assert_int_eq(rec.header_count, n % 2);
            if (n % 2) {
                sf_rbuf_init(&hb, rec.headers_raw.p, (size_t)rec.headers_raw.len);
                ck_assert_int_eq(sf_recbatch_rechdr_read(&hb, &rh), SF_OK);
                ck_assert(sf_slice_eq(rh.key, "hkey"));
                ck_assert_int_eq(rh.value.len, 6);
            }
            ck_assert_ptr_eq(x->meta[k].opaque, &opaque[n]);
            ck_assert_uint_lt(x->meta[k].pos, x->len);
        }
        ck_assert_int_eq(x->ncb, x->count);
        mem += (int64_t)x->mem;
    }
    ck_assert_int_eq(n, 12);
    ck_assert_int_eq(delta, mem - amem);
    sf_producer_acc_free(&acc);
}
END_TEST

START_TEST(test_record_size_limits) {
    sf_record_t r = rec_kv("t", "k", "v");
    sf_header_t bad = {NULL, "v", 1};
    ck_assert_uint_eq(sf_producer_record_fixed_size(&r), 2 + 2 + 1);
    r.key = NULL;
    r.value = NULL;
    ck_assert_uint_eq(sf_producer_record_fixed_size(&r), 3);
    r.header_count = 1; /* headers NULL */
    ck_assert_uint_eq(sf_producer_record_fixed_size(&r), SIZE_MAX);
    r.headers = &bad; /* a header without a key */
    ck_assert_uint_eq(sf_producer_record_fixed_size(&r), SIZE_MAX);
    r.header_count = 0;
    r.value = "v";
    r.value_len = (size_t)INT32_MAX + 1;
    ck_assert_uint_gt(sf_producer_record_fixed_size(&r), INT32_MAX);
    ck_assert_uint_ne(sf_producer_record_fixed_size(&r), SIZE_MAX);
    /* 64-byte key: a 2-byte zig-zag length (128). */
    r.value = NULL;
    r.key = "0123456789012345678901234567890123456789012345678901234567890123";
    r.key_len = 64;
    ck_assert_uint_eq(sf_producer_record_fixed_size(&r), 2 + 64 + 1 + 1);
}
END_TEST

START_TEST(test_append_limits) {
    sf_producer_accconf_t c = test_conf();
    sf_producer_acc_t acc;
    sf_producer_topic_t *t;
    static char value[2000];
    sf_record_t r = rec_kv("t", NULL, NULL);
    size_t charged = 0, fixed;
    int ev = 0;
    sf_recbatch_record_t rec;
    c.max_batch_bytes = 1024;
    c.batch_size = 1024;
    ck_assert_int_eq(sf_producer_acc_init(&acc, &c, 1), SF_OK);
    t = test_topic(&acc, "t", 1, NULL, 0);
    r.value = value;
    r.value_len = sizeof(value);
    fixed = sf_producer_record_fixed_size(&r);
    ck_assert_int_eq(sf_producer_acc_append(&acc, t->parts[0], &r, fixed, 1, 1, NULL, NULL,
                                            &charged, &ev),
                     SF_ERR_TOOLARGE);
    ck_assert_uint_eq(charged, 0);
    ck_assert_ptr_null(t->parts[0]->head);
    /* The largest record that fits: exactly max_batch_bytes. */
    r.value_len = 1024 - SF_RECBATCH_HEADER_SIZE - 2 /* len */ - 3 /* attr, ts, off */ -
                  1 /* key */ - 2 /* value len */ - 1 /* headers */;
    fixed = sf_producer_record_fixed_size(&r);
    ck_assert_int_eq(sf_producer_acc_append(&acc, t->parts[0], &r, fixed, 1, 1, NULL, NULL,
                                            &charged, &ev),
                     SF_OK);
    ck_assert_uint_eq(t->parts[0]->head->len, 1024);
    ck_assert_int_eq(sf_producer_batch_record(t->parts[0]->head, 0, &rec), SF_OK);
    ck_assert_int_eq(rec.value.len, (int32_t)r.value_len);
    ck_assert_int_eq(sf_producer_batch_record(t->parts[0]->head, 1, &rec), SF_ERR_MALFORMED);
    ck_assert_int_eq(sf_producer_batch_record(t->parts[0]->head, -1, &rec), SF_ERR_MALFORMED);
    sf_producer_acc_free(&acc);
}
END_TEST

START_TEST(test_topics_and_metadata) {
    sf_producer_accconf_t c = test_conf();
    sf_producer_acc_t acc;
    sf_producer_topic_t *t;
    char name[32];
    int i;
    int32_t leaders[6] = {1, -1, 2, 1, 1, 2};
    ck_assert_int_eq(sf_producer_acc_init(&acc, &c, 1), SF_OK);
    ck_assert_ptr_null(sf_producer_acc_topic(&acc, "missing", 0));
    for (i = 0; i < 200; i++) {
        snprintf(name, sizeof(name), "topic-%d", i);
        ck_assert_ptr_nonnull(sf_producer_acc_topic(&acc, name, 1));
    }
    for (i = 0; i < 200; i++) {
        snprintf(name, sizeof(name), "topic-%d", i);
        t = sf_producer_acc_topic(&acc, name, 0);
        ck_assert_ptr_nonnull(t);
        ck_assert_str_eq(t->name, name);
        ck_assert_int_eq(t->known, 0);
    }
    ck_assert_uint_eq(acc.ntopics, 200);
    t = sf_producer_acc_topic(&acc, "topic-7", 0);
    ck_assert_int_eq(sf_producer_topic_update(&acc, t, 0, 3, leaders), SF_OK);
    ck_assert_int_eq(t->nparts, 3);
    ck_assert_int_eq(t->navail, 2);
    ck_assert_int_eq(t->parts[1]->leader, -1);
    ck_assert_int_eq(t->parts[2]->leader, 2);
    /* Grows, keeping the partition objects. */
    {
        sf_producer_part_t *p0 = t->parts[0];
        ck_assert_int_eq(sf_producer_topic_update(&acc, t, 0, 6, leaders), SF_OK);
        ck_assert_ptr_eq(t->parts[0], p0);
        ck_assert_int_eq(t->nparts, 6);
        ck_assert_int_eq(t->navail, 5);
        ck_assert_int_eq(t->parts[5]->id, 5);
        ck_assert_ptr_eq(t->parts[5]->topic, t);
    }
    /* An error keeps the partitions but marks the topic. */
    ck_assert_int_eq(sf_producer_topic_update(&acc, t, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION, 0,
                                              NULL),
                     SF_OK);
    ck_assert_int_eq(t->err, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION);
    ck_assert_int_eq(t->cap, 6);
    /* A topic without partitions has no partition for any record. */
    t = sf_producer_acc_topic(&acc, "topic-8", 0);
    ck_assert_int_eq(sf_producer_topic_update(&acc, t, 0, 0, NULL), SF_OK);
    {
        sf_record_t r = rec_kv("topic-8", NULL, "v");
        ck_assert_int_eq(sf_producer_acc_partition(&acc, t, &r), -1);
        r.key = "k";
        r.key_len = 1;
        ck_assert_int_eq(sf_producer_acc_partition(&acc, t, &r), -1);
    }
    sf_producer_acc_free(&acc);
}
END_TEST

/* ------------------------------------------------------------------------------------------
 * Idempotence: sequence numbers, retries, a new producer id
 * ------------------------------------------------------------------------------------------ */

static void no_wake(void *arg) {
    (void)arg;
}

/* A closed batch of @n records on partition @part of @t, as it goes to the leader. */
static sf_producer_batch_t *idem_batch(sf_producer_acc_t *acc, sf_producer_topic_t *t,
                                       int32_t part, int n) {
    sf_record_t r = rec_kv("t", NULL, "value");
    sf_producer_batch_t *b;
    int i;
    r.partition = part;
    for (i = 0; i < n; i++)
        append(acc, t, part, &r, 1000 + i, 0);
    ck_assert_ptr_nonnull(b = sf_producer_acc_take(acc, t->parts[part]));
    return b;
}

/* The header of @b on the wire, its CRC checked. */
static sf_recbatch_hdr_t wire_header(const sf_producer_batch_t *b) {
    sf_recbatch_hdr_t h;
    size_t size;
    ck_assert_int_eq(sf_recbatch_header_parse(b->wire, b->wire_len, &h, &size), SF_OK);
    ck_assert_uint_eq(size, b->wire_len);
    ck_assert_uint_eq(h.Crc, sf_crc32c(0, b->wire + SF_RECBATCH_OFF_ATTRIBUTES,
                                       b->wire_len - SF_RECBATCH_OFF_ATTRIBUTES));
    return h;
}

START_TEST(test_idempotence_sequences) {
    sf_producer_accconf_t conf = test_conf();
    sf_producer_acc_t acc;
    sf_producer_topic_t *t;
    sf_producer_batch_t *b1, *b2, *b3;
    sf_recbatch_hdr_t h;
    sf_idem_t id;
    int renew;
    ck_assert_int_eq(sf_producer_acc_init(&acc, &conf, 1), SF_OK);
    t = test_topic(&acc, "t", 2, NULL, 0);
    sf_idem_init(&id, 1, no_wake, NULL);
    id.state = SF_IDEM_READY; /* as InitProducerId answers */
    id.pid = 77;
    id.epoch = 0;
    /* Sequences run per partition, stamped when the batch is closed. */
    b1 = idem_batch(&acc, t, 0, 3);
    sf_idem_stamp(&id, t->parts[0], b1);
    ck_assert_int_eq(sf_producer_batch_close(b1, SF_COMPRESS_NONE, -1), SF_OK);
    h = wire_header(b1);
    ck_assert_int_eq(h.ProducerId, 77);
    ck_assert_int_eq(h.ProducerEpoch, 0);
    ck_assert_int_eq(h.BaseSequence, 0);
    ck_assert_int_eq(id.inflight, 1);
    ck_assert_int_eq(sf_idem_answered(&id, b1, 0, &renew), 0);
    ck_assert_int_eq(renew, 0);
    sf_producer_acc_done(&acc, b1);
    sf_producer_acc_release(&acc, b1);
    b2 = idem_batch(&acc, t, 0, 2);
    sf_idem_stamp(&id, t->parts[0], b2);
    ck_assert_int_eq(sf_producer_batch_close(b2, SF_COMPRESS_NONE, -1), SF_OK);
    ck_assert_int_eq(wire_header(b2).BaseSequence, 3);
    /* A retry keeps its numbers; a leader's DUPLICATE_SEQUENCE_NUMBER is a success. */
    ck_assert_int_eq(sf_idem_answered(&id, b2, SF_KERR_NOT_LEADER_OR_FOLLOWER, &renew),
                     SF_KERR_NOT_LEADER_OR_FOLLOWER);
    sf_idem_stamp(&id, t->parts[0], b2);
    ck_assert_int_eq(wire_header(b2).BaseSequence, 3);
    ck_assert_int_eq(sf_idem_answered(&id, b2, SF_KERR_DUPLICATE_SEQUENCE_NUMBER, &renew), 0);
    /* Another partition starts at 0. */
    b3 = idem_batch(&acc, t, 1, 4);
    sf_idem_stamp(&id, t->parts[1], b3);
    ck_assert_int_eq(sf_producer_batch_close(b3, SF_COMPRESS_NONE, -1), SF_OK);
    ck_assert_int_eq(wire_header(b3).BaseSequence, 0);
    /* OUT_OF_ORDER_SEQUENCE_NUMBER: a new producer id once nothing is in flight, and the
     * batch sent again under it from sequence 0, its header and CRC rewritten. */
    ck_assert_int_eq(sf_idem_answered(&id, b3, SF_KERR_OUT_OF_ORDER_SEQUENCE_NUMBER, &renew),
                     SF_KERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    ck_assert_int_eq(renew, 1);
    ck_assert_int_eq(id.state, SF_IDEM_RESET);
    ck_assert_int_eq(id.inflight, 0);
    id.state = SF_IDEM_READY;
    id.pid = 78;
    sf_idem_stamp(&id, t->parts[1], b3);
    h = wire_header(b3);
    ck_assert_int_eq(h.ProducerId, 78);
    ck_assert_int_eq(h.BaseSequence, 0);
    ck_assert_int_eq(t->parts[1]->next_seq, 4);
    sf_idem_answered(&id, b3, 0, &renew);
    /* A batch the leader refused whole (nothing written) on its first attempt gives its
     * numbers back... */
    sf_idem_failed(&id, t->parts[1], b3, SF_KERR_INVALID_RECORD);
    ck_assert_int_eq(t->parts[1]->next_seq, 0);
    ck_assert_int_eq(id.state, SF_IDEM_READY);
    /* ... not after a retry (an earlier attempt may have been written): a new id then. */
    t->parts[1]->next_seq = 4;
    b3->attempts = 1;
    sf_idem_failed(&id, t->parts[1], b3, SF_KERR_NOT_ENOUGH_REPLICAS);
    ck_assert_int_eq(t->parts[1]->next_seq, 4);
    ck_assert_int_eq(id.state, SF_IDEM_RESET);
    id.state = SF_IDEM_READY;
    b3->attempts = 0;
    /* ... a batch of an older producer id changes nothing ... */
    sf_idem_failed(&id, t->parts[0], b2, SF_ERROR_TIMED_OUT);
    ck_assert_int_eq(id.state, SF_IDEM_READY);
    /* ... and one that may have been written (a timeout) takes a new producer id. */
    sf_idem_failed(&id, t->parts[1], b3, SF_ERROR_TIMED_OUT);
    ck_assert_int_eq(id.state, SF_IDEM_RESET);
    sf_producer_acc_done(&acc, b2);
    sf_producer_acc_release(&acc, b2);
    sf_producer_acc_done(&acc, b3);
    sf_producer_acc_release(&acc, b3);
    sf_producer_acc_free(&acc);
}
END_TEST

START_TEST(test_idempotence_wrap_and_off) {
    sf_producer_accconf_t conf = test_conf();
    sf_producer_acc_t acc;
    sf_producer_topic_t *t;
    sf_producer_batch_t *b;
    sf_idem_t id;
    int renew;
    ck_assert_int_eq(sf_producer_acc_init(&acc, &conf, 1), SF_OK);
    t = test_topic(&acc, "t", 1, NULL, 0);
    /* Off: nothing is stamped, errors pass through. */
    sf_idem_init(&id, 0, no_wake, NULL);
    b = idem_batch(&acc, t, 0, 2);
    sf_idem_stamp(&id, t->parts[0], b);
    ck_assert_int_eq(sf_producer_batch_close(b, SF_COMPRESS_NONE, -1), SF_OK);
    ck_assert_int_eq(wire_header(b).ProducerId, -1);
    ck_assert_int_eq(wire_header(b).BaseSequence, -1);
    ck_assert_int_eq(sf_idem_answered(&id, b, SF_KERR_DUPLICATE_SEQUENCE_NUMBER, &renew),
                     SF_KERR_DUPLICATE_SEQUENCE_NUMBER);
    sf_producer_acc_done(&acc, b);
    sf_producer_acc_release(&acc, b);
    /* Sequences wrap from INT32_MAX to 0. */
    sf_idem_init(&id, 1, no_wake, NULL);
    id.state = SF_IDEM_READY;
    id.pid = 5;
    id.epoch = 2;
    t->parts[0]->seq_pid = 5;
    t->parts[0]->seq_epoch = 2;
    t->parts[0]->next_seq = INT32_MAX - 1;
    b = idem_batch(&acc, t, 0, 3);
    sf_idem_stamp(&id, t->parts[0], b);
    ck_assert_int_eq(b->seq, INT32_MAX - 1);
    ck_assert_int_eq(t->parts[0]->next_seq, 1);
    sf_producer_acc_done(&acc, b);
    sf_producer_acc_release(&acc, b);
    sf_producer_acc_free(&acc);
}
END_TEST

static Suite *producer_suite(void) {
    Suite *s = suite_create("producer");
    TCase *core = tcase_create("core"), *limits = tcase_create("limits");
    tcase_add_test(core, test_partition_murmur2);
    tcase_add_test(core, test_partition_explicit_and_random);
    tcase_add_test(core, test_sticky_partition);
    tcase_add_test(core, test_sticky_pick);
    tcase_add_test(core, test_ready_rules);
    tcase_add_test(core, test_append_events_and_growth);
    tcase_add_test(core, test_inflight_retry_ordering);
    tcase_add_test(core, test_retry_decision);
    tcase_add_test(core, test_expire);
    tcase_add_test(core, test_split_too_large);
    tcase_add_test(core, test_golden_kafka_python);
    tcase_add_test(core, test_roundtrip_none);
    tcase_add_loop_test(core, test_roundtrip_codecs, 0, 4);
    tcase_add_test(core, test_incompressible_falls_back);
    tcase_add_test(core, test_idempotence_sequences);
    tcase_add_test(core, test_idempotence_wrap_and_off);
    tcase_add_test(limits, test_split_regrow);
    tcase_add_test(limits, test_record_size_limits);
    tcase_add_test(limits, test_append_limits);
    tcase_add_test(limits, test_topics_and_metadata);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(producer_suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
