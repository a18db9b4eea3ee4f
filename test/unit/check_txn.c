/* Unit tests for the transaction coordinator (broker/txn) without a cluster (state kept in
 * memory, producer ids from a counter) and with a fake marker sender that records what it
 * was asked and completes when told: the state machine (init, add, end, fencing, retries,
 * out-of-order requests), the markers of a commit and of a fencing abort, the timeout abort
 * by the periodic pass, descriptions and listing, and the state's JSON. */
#include <check.h>
#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "txn.h"
#include "txn_int.h"

/* ---- the fake marker sender ---- */

static struct {
    int calls;
    sf_txn_markers_t last;
    int nparts;
    sf_txn_markers_done_cb done;
    void *arg;
} sent;

static void fake_send(void *arg, const sf_txn_markers_t *m, sf_txn_markers_done_cb done,
                      void *done_arg) {
    (void)arg;
    sent.calls++;
    sent.last = *m;
    sent.nparts = m->nparts;
    sent.done = done;
    sent.arg = done_arg;
}

static void markers_written(void) {
    sf_txn_markers_done_cb done = sent.done;
    ck_assert_ptr_nonnull(done);
    sent.done = NULL;
    done(sent.arg, SF_OK);
}

/* ---- answers ---- */

static struct {
    int16_t err;
    int64_t pid;
    int16_t epoch;
    int16_t errs[8];
    int n;
} got;

static void on_init(void *arg, int16_t err, int64_t pid, int16_t epoch) {
    (void)arg;
    got.err = err;
    got.pid = pid;
    got.epoch = epoch;
    got.n++;
}

static void on_add(void *arg, int16_t err, const int16_t *errs) {
    int i, n = *(int *)arg;
    got.err = err;
    for (i = 0; errs && i < n; i++)
        got.errs[i] = errs[i];
    got.n++;
}

static struct event_base *base;
static sf_txn_coord_t *tc;
static sf_cluster_bucket_t buckets[2] = {{1, 0}, {1, 0}};

static void setup(void) {
    sf_txn_config_t cfg;
    sf_cluster_snapshot_t snap;
    memset(&cfg, 0, sizeof(cfg));
    memset(&sent, 0, sizeof(sent));
    memset(&got, 0, sizeof(got));
    cfg.broker_id = 1;
    cfg.max_timeout_ms = 900000;
    cfg.id_expiration_ms = 604800000;
    cfg.abort_check_ms = 5;
    cfg.send_markers = fake_send;
    base = event_base_new();
    tc = sf_txn_coord_new(base, NULL, &cfg);
    ck_assert_ptr_nonnull(tc);
    memset(&snap, 0, sizeof(snap));
    snap.group_buckets = buckets;
    snap.ngroup_buckets = 2;
    sf_txn_coord_update(tc, &snap);
}

static void teardown(void) {
    sf_txn_coord_free(tc);
    event_base_free(base);
}

static void init(const char *id, int32_t timeout, int64_t pid, int16_t epoch) {
    got.n = 0;
    sf_txn_init_producer(tc, id, timeout, pid, epoch, SF_KERR_PRODUCER_FENCED, on_init, NULL);
    ck_assert_int_eq(got.n, 1);
}

static const sf_txn_tp_t two[] = {{"orders", 0}, {"orders", 1}};

static void add(const char *id, int64_t pid, int16_t epoch, int verify) {
    int n = 2;
    got.n = 0;
    sf_txn_add_partitions(tc, id, pid, epoch, two, 2, verify, SF_KERR_PRODUCER_FENCED, on_add,
                          &n);
    ck_assert_int_eq(got.n, 1);
}

static void end(const char *id, int64_t pid, int16_t epoch, int commit) {
    got.n = 0;
    sf_txn_end(tc, id, pid, epoch, commit, SF_KERR_PRODUCER_FENCED, on_init, NULL);
    ck_assert_int_eq(got.n, 1);
}

static const char *state_of(const char *id) {
    sf_txn_t *t;
    size_t s;
    for (s = 0; s < tc->ntable; s++)
        for (t = tc->table[s]; t; t = t->hnext)
            if (!strcmp(t->id, id))
                return txn_state_name(t->m.state);
    return "missing";
}

START_TEST(test_commit) {
    int64_t pid;
    init("t1", 60000, -1, -1);
    ck_assert_int_eq(got.err, SF_KERR_NONE);
    ck_assert_int_eq(got.epoch, 0);
    pid = got.pid;
    add("t1", pid, 0, 0);
    ck_assert_int_eq(got.err, SF_KERR_NONE);
    ck_assert_int_eq(got.errs[1], SF_KERR_NONE);
    ck_assert_str_eq(state_of("t1"), "Ongoing");
    add("t1", pid, 0, 1); /* verify only: both are in */
    ck_assert_int_eq(got.errs[0], SF_KERR_NONE);
    end("t1", pid, 0, 1);
    ck_assert_int_eq(got.err, SF_KERR_NONE);
    ck_assert_str_eq(state_of("t1"), "PrepareCommit");
    ck_assert_int_eq(sent.calls, 1);
    ck_assert_int_eq(sent.last.commit, 1);
    ck_assert_int_eq(sent.last.producer_id, pid);
    ck_assert_int_eq(sent.nparts, 2);
    /* Until the markers are written: a retry waits, anything else is refused. */
    end("t1", pid, 0, 1);
    ck_assert_int_eq(got.err, SF_KERR_CONCURRENT_TRANSACTIONS);
    add("t1", pid, 0, 0);
    ck_assert_int_eq(got.err, SF_KERR_CONCURRENT_TRANSACTIONS);
    markers_written();
    ck_assert_str_eq(state_of("t1"), "CompleteCommit");
    end("t1", pid, 0, 1); /* a retry of the commit */
    ck_assert_int_eq(got.err, SF_KERR_NONE);
    end("t1", pid, 0, 0); /* an abort of what is committed */
    ck_assert_int_eq(got.err, SF_KERR_INVALID_TXN_STATE);
    /* The next transaction starts afresh. */
    add("t1", pid, 0, 1);
    ck_assert_int_eq(got.errs[0], SF_KERR_INVALID_TXN_STATE);
}
END_TEST

START_TEST(test_checks) {
    int64_t pid;
    init("t2", 0, -1, -1);
    ck_assert_int_eq(got.err, SF_KERR_INVALID_TRANSACTION_TIMEOUT);
    init("t2", 900001, -1, -1);
    ck_assert_int_eq(got.err, SF_KERR_INVALID_TRANSACTION_TIMEOUT);
    init("t2", 60000, -1, -1);
    pid = got.pid;
    end("t2", pid, 0, 1); /* nothing under way */
    ck_assert_int_eq(got.err, SF_KERR_INVALID_TXN_STATE);
    add("t2", pid + 1, 0, 0);
    ck_assert_int_eq(got.err, SF_KERR_INVALID_PRODUCER_ID_MAPPING);
    add("t2", pid, 3, 0);
    ck_assert_int_eq(got.err, SF_KERR_PRODUCER_FENCED);
    add("unknown", 7, 0, 0);
    ck_assert_int_eq(got.err, SF_KERR_INVALID_PRODUCER_ID_MAPPING);
    /* An id longer than ZooKeeper keeps: refused, not unavailable forever. */
    {
        char id[300];
        memset(id, 'x', sizeof(id) - 1);
        id[sizeof(id) - 1] = '\0';
        init(id, 60000, -1, -1);
        ck_assert_int_eq(got.err, SF_KERR_INVALID_REQUEST);
    }
    /* Not ours: a bucket owned by broker 2. */
    buckets[0].broker = buckets[1].broker = 2;
    {
        sf_cluster_snapshot_t snap;
        memset(&snap, 0, sizeof(snap));
        snap.group_buckets = buckets;
        snap.ngroup_buckets = 2;
        sf_txn_coord_update(tc, &snap);
    }
    init("t2", 60000, -1, -1);
    ck_assert_int_eq(got.err, SF_KERR_NOT_COORDINATOR);
    buckets[0].broker = buckets[1].broker = 1;
}
END_TEST

START_TEST(test_fencing) {
    int64_t pid;
    init("t3", 60000, -1, -1);
    pid = got.pid;
    add("t3", pid, 0, 0);
    /* A second producer: the ongoing transaction is aborted at a bumped epoch. */
    init("t3", 60000, -1, -1);
    ck_assert_int_eq(got.err, SF_KERR_CONCURRENT_TRANSACTIONS);
    ck_assert_str_eq(state_of("t3"), "PrepareAbort");
    ck_assert_int_eq(sent.last.commit, 0);
    ck_assert_int_eq(sent.last.producer_epoch, 1);
    init("t3", 60000, -1, -1);
    ck_assert_int_eq(got.err, SF_KERR_CONCURRENT_TRANSACTIONS);
    markers_written();
    ck_assert_str_eq(state_of("t3"), "CompleteAbort");
    init("t3", 60000, -1, -1);
    ck_assert_int_eq(got.err, SF_KERR_NONE);
    ck_assert_int_eq(got.pid, pid);
    ck_assert_int_eq(got.epoch, 2);
    /* The first producer is fenced. */
    end("t3", pid, 0, 1);
    ck_assert_int_eq(got.err, SF_KERR_PRODUCER_FENCED);
    /* KIP-360: the current producer names its id and epoch and gets the next epoch; a
     * retry of that naming the old one gets the same answer; a stranger is fenced. */
    init("t3", 60000, pid, 2);
    ck_assert_int_eq(got.epoch, 3);
    init("t3", 60000, pid, 2);
    ck_assert_int_eq(got.err, SF_KERR_NONE);
    ck_assert_int_eq(got.epoch, 3);
    init("t3", 60000, pid, 1);
    ck_assert_int_eq(got.err, SF_KERR_PRODUCER_FENCED);
}
END_TEST

START_TEST(test_epoch_exhausted) {
    sf_txn_t *t = NULL;
    size_t s;
    int64_t pid;
    init("t4", 60000, -1, -1);
    pid = got.pid;
    for (s = 0; s < tc->ntable && !t; s++)
        for (t = tc->table[s]; t && strcmp(t->id, "t4"); t = t->hnext)
            ;
    ck_assert_ptr_nonnull(t);
    t->m.epoch = INT16_MAX - 1;
    init("t4", 60000, -1, -1);
    ck_assert_int_eq(got.err, SF_KERR_NONE);
    ck_assert_int_ne(got.pid, pid);
    ck_assert_int_eq(got.epoch, 0);
}
END_TEST

static void on_desc(void *arg, int16_t err, const sf_txn_description_t *d) {
    (void)arg;
    got.err = err;
    got.n++;
    if (!err) {
        ck_assert_str_eq(d->state, "Ongoing");
        ck_assert_int_eq(d->nparts, 2);
        ck_assert_str_eq(d->parts[1].topic, "orders");
        ck_assert_int_eq(d->parts[1].partition, 1);
        ck_assert_int_ge(d->start_ms, 0);
    }
}

static void count(void *arg, const sf_txn_description_t *d) {
    (void)d;
    (*(int *)arg)++;
}

START_TEST(test_timeout_and_listing) {
    const char *ongoing[] = {"Ongoing"};
    int64_t pid;
    int n = 0;
    init("t5", 20, -1, -1);
    pid = got.pid;
    add("t5", pid, 0, 0);
    init("t6", 60000, -1, -1);
    got.n = 0;
    sf_txn_describe(tc, "t5", on_desc, NULL);
    ck_assert_int_eq(got.n, 1);
    ck_assert_int_eq(got.err, SF_KERR_NONE);
    sf_txn_describe(tc, "nope", on_desc, NULL);
    ck_assert_int_eq(got.err, SF_KERR_TRANSACTIONAL_ID_NOT_FOUND);
    ck_assert_str_eq(state_of("nope"), "Empty");
    sf_txn_list(tc, ongoing, 1, NULL, 0, -1, 0, count, &n);
    ck_assert_int_eq(n, 1);
    n = 0;
    sf_txn_list(tc, NULL, 0, &pid, 1, -1, 0, count, &n);
    ck_assert_int_eq(n, 1);
    /* Past its 20 ms the periodic pass aborts it, fencing the producer. */
    while (!sent.calls)
        event_base_loop(base, EVLOOP_ONCE);
    ck_assert_int_eq(sent.last.commit, 0);
    ck_assert_int_eq(sent.last.producer_epoch, 1);
    markers_written();
    ck_assert_str_eq(state_of("t5"), "CompleteAbort");
    end("t5", pid, 0, 1);
    ck_assert_int_eq(got.err, SF_KERR_PRODUCER_FENCED);
    /* The pass also forgot the id nobody initialised (its describe left an entry). */
    ck_assert_str_eq(state_of("nope"), "missing");
    ck_assert_str_eq(state_of("t6"), "Empty");
}
END_TEST

/* A bucket that moves while its markers are under way cancels their delivery (the new
 * owner resumes them); the names the delivery carries are its own copies. */
START_TEST(test_bucket_moved) {
    static sf_cluster_bucket_t moved[2] = {{2, 1}, {2, 1}};
    sf_cluster_snapshot_t snap;
    int64_t pid;
    init("t7", 60000, -1, -1);
    pid = got.pid;
    add("t7", pid, 0, 0);
    end("t7", pid, 0, 1);
    ck_assert_int_eq(sent.calls, 1);
    ck_assert_ptr_nonnull(sent.last.cancelled);
    ck_assert_int_eq(*sent.last.cancelled, 0);
    ck_assert_ptr_ne(sent.last.parts[0].topic, two[0].topic);
    ck_assert_str_eq(sent.last.parts[0].topic, "orders");
    memset(&snap, 0, sizeof(snap));
    snap.group_buckets = moved;
    snap.ngroup_buckets = 2;
    sf_txn_coord_update(tc, &snap);
    ck_assert_int_eq(*sent.last.cancelled, 1);
    ck_assert_str_eq(state_of("t7"), "missing");
    sent.done(sent.arg, SF_ERR_STATE); /* as the sender ends it: frees the entry */
}
END_TEST

START_TEST(test_state_json) {
    txn_meta_t m, back;
    char *json;
    txn_meta_init(&m);
    m.producer_id = 4000;
    m.epoch = 3;
    m.timeout_ms = 60000;
    m.state = TS_PREPARE_COMMIT;
    m.start_ms = 1764700000000LL;
    ck_assert_int_eq(txn_meta_add(&m, "b", 2), SF_OK);
    ck_assert_int_eq(txn_meta_add(&m, "a", 1), SF_OK);
    ck_assert_int_eq(txn_meta_add(&m, "b", 0), SF_OK);
    ck_assert_int_eq(txn_meta_add(&m, "b", 2), SF_OK); /* once */
    ck_assert_int_eq(m.nparts, 3);
    ck_assert_ptr_nonnull(json = txn_meta_encode(&m));
    ck_assert_ptr_nonnull(strstr(json, "\"state\":\"PrepareCommit\""));
    ck_assert_ptr_nonnull(strstr(json, "{\"topic\":\"b\",\"partitions\":[0,2]}"));
    ck_assert_int_eq(txn_meta_decode(&back, json), SF_OK);
    ck_assert_int_eq(back.producer_id, 4000);
    ck_assert_int_eq(back.epoch, 3);
    ck_assert_int_eq(back.state, TS_PREPARE_COMMIT);
    ck_assert_int_eq(back.nparts, 3);
    ck_assert_str_eq(back.parts[0].topic, "a");
    txn_meta_free(&back);
    ck_assert_int_eq(txn_meta_decode(&back, "{\"version\":2}"), SF_ERR_MALFORMED);
    ck_assert_int_eq(txn_meta_decode(&back, "not json"), SF_ERR_MALFORMED);
    free(json);
    txn_meta_free(&m);
    txn_meta_free(&back);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("txn");
    TCase *tc_core = tcase_create("coordinator");
    tcase_add_checked_fixture(tc_core, setup, teardown);
    tcase_add_test(tc_core, test_commit);
    tcase_add_test(tc_core, test_checks);
    tcase_add_test(tc_core, test_fencing);
    tcase_add_test(tc_core, test_epoch_exhausted);
    tcase_add_test(tc_core, test_timeout_and_listing);
    tcase_add_test(tc_core, test_bucket_moved);
    tcase_add_test(tc_core, test_state_json);
    suite_add_tcase(s, tc_core);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
