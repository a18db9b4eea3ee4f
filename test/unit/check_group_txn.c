/* Unit tests for the group coordinator's transactional offsets (broker/group/txnoffsets.c)
 * without a cluster: TxnOffsetCommit's member checks (Kafka's, which differ from
 * OffsetCommit's), its per-partition refusals, and settling markers when nothing is pending or
 * the bucket is elsewhere. With a cluster, test/integration/38-transactional-offsets.sh. */
#include <check.h>
#include <event2/event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "group.h"
#include "logging.h"

#define OURS "g1"   /* bucket 0 of 2, broker 1: this coordinator */
#define THEIRS "g2" /* bucket 1 of 2, broker 2 */

static struct event_base *base;
static sf_coord_t *coord;
static sf_cluster_bucket_t two_buckets[] = {{1, 0}, {2, 0}};

static void setup(void) {
    sf_coord_config_t cfg;
    sf_cluster_snapshot_t snap;
    memset(&cfg, 0, sizeof(cfg));
    cfg.broker_id = 1;
    cfg.min_session_ms = 10;
    cfg.max_session_ms = 30000;
    cfg.max_size = 10;
    cfg.metadata_max_bytes = 8;
    ck_assert_ptr_nonnull(base = event_base_new());
    ck_assert_ptr_nonnull(coord = sf_coord_new(base, NULL, &cfg));
    memset(&snap, 0, sizeof(snap));
    snap.group_buckets = two_buckets;
    snap.ngroup_buckets = 2;
    sf_coord_update(coord, &snap);
}

static void teardown(void) {
    sf_coord_free(coord);
    event_base_free(base);
}

/* ---- a member ---- */

struct joined {
    int called;
    int16_t error;
    int32_t generation;
    char member_id[128];
};

static void join_cb(void *arg, const sf_gjoin_result_t *r) {
    struct joined *j = arg;
    j->called++;
    j->error = r->error;
    j->generation = r->generation;
    strncpy(j->member_id, r->member_id ? r->member_id : "", sizeof(j->member_id) - 1);
}

static void join_run(void *arg, sf_group_t *g, int16_t err) {
    static const sf_gprotocol_t proto = {"range", (const uint8_t *)"", 0};
    sf_gjoin_t req = {"", NULL, "client", "/127.0.0.1", "consumer", 10000, 10000, &proto, 1, 0};
    ck_assert_int_eq(err, SF_KERR_NONE);
    sf_group_join(g, &req, join_cb, arg);
}

/* One member joins OURS: its generation (1) and member id in @j. */
static void one_member(struct joined *j) {
    int i;
    memset(j, 0, sizeof(*j));
    sf_coord_with_group(coord, OURS, join_run, j);
    for (i = 0; i < 1000 && !j->called; i++)
        event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
    ck_assert_int_eq(j->called, 1);
    ck_assert_int_eq(j->error, SF_KERR_NONE);
    ck_assert_int_eq(j->generation, 1);
}

/* ---- commits ---- */

struct committed {
    int called;
    int16_t error, errs[4];
};

static void commit_cb(void *arg, int16_t error, const int16_t *errs) {
    struct committed *k = arg;
    int i;
    k->called++;
    k->error = error;
    for (i = 0; errs && i < 2; i++)
        k->errs[i] = errs[i];
}

struct commit_args {
    const sf_gtxn_t *who;
    struct committed *k;
    int txn;
};

static const sf_goffset_t two[] = {{"t", 0, 10, -1, "ok"}, {"t", 1, 20, -1, "far too long"}};

static void commit_run(void *arg, sf_group_t *g, int16_t err) {
    struct commit_args *a = arg;
    ck_assert_int_eq(err, SF_KERR_NONE);
    if (a->txn)
        sf_group_txn_commit(g, a->who, two, 2, commit_cb, a->k);
    else
        sf_group_commit(g, a->who->member_id, a->who->instance_id, a->who->generation, two, 2,
                        commit_cb, a->k);
}

/* The request's error, or -1 when it was answered per partition (in k->errs). */
static int commit_as(const sf_gtxn_t *who, int txn, struct committed *k) {
    struct commit_args a = {who, k, txn};
    memset(k, 0, sizeof(*k));
    sf_coord_with_group(coord, OURS, commit_run, &a);
    ck_assert_int_eq(k->called, 1);
    return k->error ? k->error : -1;
}

START_TEST(test_txn_commit_outside_group_management) {
    sf_gtxn_t who = {"", NULL, -1, 1000, 0};
    struct committed k;
    struct joined j;
    /* No cluster to write to: the partition is refused as not available, and the metadata
     * over offset.metadata.max.bytes as too large. */
    ck_assert_int_eq(commit_as(&who, 1, &k), -1);
    ck_assert_int_eq(k.errs[0], SF_KERR_COORDINATOR_NOT_AVAILABLE);
    ck_assert_int_eq(k.errs[1], SF_KERR_OFFSET_METADATA_TOO_LARGE);
    /* With a member in the group: OffsetCommit outside group management is refused, a
     * transaction's commit is not (Kafka's validateOffsetCommit). */
    one_member(&j);
    ck_assert_int_eq(commit_as(&who, 0, &k), SF_KERR_UNKNOWN_MEMBER_ID);
    ck_assert_int_eq(commit_as(&who, 1, &k), -1);
    ck_assert_int_eq(k.errs[0], SF_KERR_COORDINATOR_NOT_AVAILABLE);
}
END_TEST

START_TEST(test_txn_commit_member_checks) {
    sf_gtxn_t who = {"nobody", NULL, 1, 1000, 0};
    struct committed k;
    struct joined j;
    /* A generation of a group that is not there: OffsetCommit says ILLEGAL_GENERATION, a
     * transaction's commit looks for the member. */
    ck_assert_int_eq(commit_as(&who, 0, &k), SF_KERR_ILLEGAL_GENERATION);
    ck_assert_int_eq(commit_as(&who, 1, &k), SF_KERR_UNKNOWN_MEMBER_ID);
    one_member(&j);
    ck_assert_int_eq(commit_as(&who, 1, &k), SF_KERR_UNKNOWN_MEMBER_ID);
    who.member_id = j.member_id;
    who.generation = 2;
    ck_assert_int_eq(commit_as(&who, 1, &k), SF_KERR_ILLEGAL_GENERATION);
    /* The member has its generation but has not synced: OffsetCommit waits for the sync, a
     * transaction's commit goes ahead (to the write, which fails here). */
    who.generation = 1;
    ck_assert_int_eq(commit_as(&who, 0, &k), SF_KERR_REBALANCE_IN_PROGRESS);
    ck_assert_int_eq(commit_as(&who, 1, &k), -1);
    ck_assert_int_eq(k.errs[0], SF_KERR_COORDINATOR_NOT_AVAILABLE);
}
END_TEST

/* ---- markers and stability ---- */

struct settled {
    int called;
    int16_t error;
};

static void settled_cb(void *arg, int16_t error) {
    struct settled *s = arg;
    s->called++;
    s->error = error;
}

static void unstable_run(void *arg, sf_group_t *g, int16_t err) {
    ck_assert_int_eq(err, SF_KERR_NONE);
    *(int *)arg = sf_group_offset_unstable(g, "t", 0);
}

START_TEST(test_txn_complete_and_stable) {
    sf_gtxn_t who = {"", NULL, -1, 1000, 0};
    struct committed k;
    struct settled s = {0, -2};
    int unstable = -1;
    /* A refused commit leaves nothing pending: the offsets are stable and a marker for the
     * producer finds nothing to settle. */
    ck_assert_int_eq(commit_as(&who, 1, &k), -1);
    sf_coord_with_group(coord, OURS, unstable_run, &unstable);
    ck_assert_int_eq(unstable, 0);
    sf_coord_txn_complete(coord, 0, 1000, 1, settled_cb, &s);
    ck_assert_int_eq(s.called, 1);
    ck_assert_int_eq(s.error, SF_KERR_NONE);
    /* The other bucket is broker 2's; one that does not exist is no one's. */
    sf_coord_txn_complete(coord, 1, 1000, 0, settled_cb, &s);
    ck_assert_int_eq(s.called, 2);
    ck_assert_int_eq(s.error, SF_KERR_NOT_COORDINATOR);
    sf_coord_txn_complete(coord, 7, 1000, 1, settled_cb, &s);
    ck_assert_int_eq(s.called, 3);
    ck_assert_int_eq(s.error, SF_KERR_NOT_COORDINATOR);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("group_txn");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_txn_commit_outside_group_management);
    tcase_add_test(tc, test_txn_commit_member_checks);
    tcase_add_test(tc, test_txn_complete_and_stable);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(suite());
    int failed;
    sf_log_level = SF_LOG_WARNING;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
