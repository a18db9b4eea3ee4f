/* Unit tests for admin/rebalance: the placement "streamflow cluster rebalance" proposes. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rebalance.h"

#define MAXP 64

/* A cluster to plan: brokers and one topic's partitions, all with the same RF. */
typedef struct fixture {
    sf_rebalance_broker_t brokers[8];
    size_t nb;
    sf_rebalance_partition_t parts[MAXP];
    int32_t cur[MAXP][4];
    int32_t out[MAXP * 4];
    size_t np, rf;
} fixture_t;

static void fx_brokers(fixture_t *f, size_t nb, const char *const *racks) {
    size_t i;
    memset(f, 0, sizeof(*f));
    f->nb = nb;
    for (i = 0; i < nb; i++) {
        f->brokers[i].id = (int32_t)i + 1;
        f->brokers[i].rack = racks ? racks[i] : NULL;
    }
}

/* Partition p of topic @topic with replicas @ids (f->rf of them). */
static void fx_part(fixture_t *f, const char *topic, const int32_t *ids) {
    size_t p = f->np++;
    memcpy(f->cur[p], ids, f->rf * sizeof(int32_t));
    f->parts[p].topic = topic;
    f->parts[p].partition = (int32_t)p;
    f->parts[p].replicas = f->cur[p];
    f->parts[p].replica_count = f->rf;
}

static const int32_t *proposed(const fixture_t *f, size_t p) {
    return &f->out[p * f->rf];
}

/* Replicas (@leaders: preferred leaders) per broker id in the proposal, into @count[id]. */
static void counts(const fixture_t *f, int *count, int leaders) {
    size_t p, j;
    memset(count, 0, 9 * sizeof(int));
    for (p = 0; p < f->np; p++)
        for (j = 0; j < (leaders ? 1 : f->rf); j++)
            count[proposed(f, p)[j]]++;
}

/* The largest difference of @count over the planned brokers. */
static int spread(const fixture_t *f, const int *count) {
    int lo = 1 << 30, hi = -1;
    size_t b;
    for (b = 0; b < f->nb; b++) {
        int c = count[f->brokers[b].id];
        lo = c < lo ? c : lo;
        hi = c > hi ? c : hi;
    }
    return hi - lo;
}

/* Every proposal names distinct planned brokers. */
static void assert_valid(const fixture_t *f) {
    size_t p, j, k;
    for (p = 0; p < f->np; p++)
        for (j = 0; j < f->rf; j++) {
            int32_t id = proposed(f, p)[j];
            int planned = 0;
            for (k = 0; k < f->nb; k++)
                planned |= f->brokers[k].id == id;
            ck_assert_msg(planned, "partition %zu on broker %d", p, (int)id);
            for (k = 0; k < j; k++)
                ck_assert_int_ne(proposed(f, p)[k], id);
        }
}

/* How many replicas land on a broker that did not hold them. */
static int replicas_moved(const fixture_t *f) {
    size_t p, j, k;
    int moved = 0;
    for (p = 0; p < f->np; p++)
        for (j = 0; j < f->rf; j++) {
            int had = 0;
            for (k = 0; k < f->rf; k++)
                had |= f->cur[p][k] == proposed(f, p)[j];
            moved += !had;
        }
    return moved;
}

START_TEST(test_balanced_stays) {
    static const int32_t rows[6][3] = {{1, 2, 3}, {2, 3, 1}, {3, 1, 2},
                                       {1, 3, 2}, {2, 1, 3}, {3, 2, 1}};
    fixture_t f;
    size_t p;
    fx_brokers(&f, 3, NULL);
    f.rf = 3;
    for (p = 0; p < 6; p++)
        fx_part(&f, "t", rows[p]);
    ck_assert_int_eq(sf_rebalance_plan(f.brokers, f.nb, f.parts, f.np, f.out), 0);
    for (p = 0; p < 6; p++)
        ck_assert_mem_eq(proposed(&f, p), rows[p], sizeof(rows[p]));
}
END_TEST

/* A fourth broker joins three that hold everything: it gets its share of the replicas and of
 * the preferred leaders, and only that share moves. */
START_TEST(test_new_broker_gets_its_share) {
    static const int32_t rows[3][3] = {{1, 2, 3}, {2, 3, 1}, {3, 1, 2}};
    fixture_t f;
    int c[9];
    size_t p;
    fx_brokers(&f, 4, NULL);
    f.rf = 3;
    for (p = 0; p < 12; p++)
        fx_part(&f, "t", rows[p % 3]);
    ck_assert_int_eq(sf_rebalance_plan(f.brokers, f.nb, f.parts, f.np, f.out), 0);
    assert_valid(&f);
    counts(&f, c, 0);
    ck_assert_int_eq(c[4], 9);
    ck_assert_int_le(spread(&f, c), 1);
    ck_assert_int_eq(replicas_moved(&f), 9);
    counts(&f, c, 1);
    ck_assert_int_eq(c[4], 3);
    ck_assert_int_le(spread(&f, c), 1);
}
END_TEST

/* Brokers left out of the plan lose every replica. */
START_TEST(test_broker_drained) {
    static const int32_t rows[3][2] = {{1, 2}, {2, 3}, {3, 1}};
    fixture_t f;
    int c[9];
    size_t p;
    fx_brokers(&f, 4, NULL);
    f.rf = 2;
    for (p = 0; p < 9; p++)
        fx_part(&f, "t", rows[p % 3]);
    f.brokers[0] = f.brokers[3]; /* plan on 4, 2, 3 */
    f.nb = 3;
    ck_assert_int_eq(sf_rebalance_plan(f.brokers, f.nb, f.parts, f.np, f.out), 0);
    assert_valid(&f);
    counts(&f, c, 0);
    ck_assert_int_eq(c[1], 0);
    ck_assert_int_le(spread(&f, c), 1);
    counts(&f, c, 1);
    ck_assert_int_le(spread(&f, c), 1);
}
END_TEST

/* With racks on every broker, each partition gets one replica per rack. */
START_TEST(test_racks_spread) {
    static const char *const racks[4] = {"a", "a", "b", "b"};
    static const int32_t rows[2][2] = {{1, 2}, {2, 1}};
    fixture_t f;
    int c[9];
    size_t p;
    fx_brokers(&f, 4, racks);
    f.rf = 2;
    for (p = 0; p < 8; p++)
        fx_part(&f, "t", rows[p % 2]);
    ck_assert_int_eq(sf_rebalance_plan(f.brokers, f.nb, f.parts, f.np, f.out), 0);
    assert_valid(&f);
    for (p = 0; p < f.np; p++)
        ck_assert_int_ne(proposed(&f, p)[0] <= 2, proposed(&f, p)[1] <= 2);
    counts(&f, c, 0);
    ck_assert_int_le(spread(&f, c), 1);
    /* Without racks on one broker racks are not considered: only the spread over the four. */
    f.brokers[3].rack = NULL;
    ck_assert_int_eq(sf_rebalance_plan(f.brokers, f.nb, f.parts, f.np, f.out), 0);
    assert_valid(&f);
    counts(&f, c, 0);
    ck_assert_int_le(spread(&f, c), 1);
    ck_assert_int_eq(replicas_moved(&f), 8);
}
END_TEST

/* Single-partition topics spread over the brokers as a whole. */
START_TEST(test_topics_spread_together) {
    static const char *const names[6] = {"a", "b", "c", "d", "e", "f"};
    static const int32_t one[1] = {1};
    fixture_t f;
    int c[9];
    size_t p;
    fx_brokers(&f, 3, NULL);
    f.rf = 1;
    for (p = 0; p < 6; p++)
        fx_part(&f, names[p], one);
    for (p = 0; p < 6; p++)
        f.parts[p].partition = 0;
    ck_assert_int_eq(sf_rebalance_plan(f.brokers, f.nb, f.parts, f.np, f.out), 0);
    counts(&f, c, 0);
    ck_assert_int_eq(c[1], 2);
    ck_assert_int_eq(c[2], 2);
    ck_assert_int_eq(c[3], 2);
}
END_TEST

/* Random placements of one topic on 3 of 3..8 brokers: the plan is valid, its replicas spread
 * within one and its preferred leaders too. */
START_TEST(test_random_starts) {
    fixture_t f;
    int round, c[9];
    srand(7);
    for (round = 0; round < 300; round++) {
        size_t nb = 3 + (size_t)(rand() % 6), np = 1 + (size_t)(rand() % MAXP), p;
        fx_brokers(&f, nb, NULL);
        f.rf = 1 + (size_t)(rand() % 3);
        for (p = 0; p < np; p++) {
            int32_t row[4];
            size_t j, k;
            for (j = 0; j < f.rf; j++)
                do {
                    row[j] = 1 + rand() % 3; /* on the first three brokers only */
                    for (k = 0; k < j && row[k] != row[j]; k++)
                        ;
                } while (k < j);
            fx_part(&f, "t", row);
        }
        ck_assert_int_eq(sf_rebalance_plan(f.brokers, f.nb, f.parts, f.np, f.out), 0);
        assert_valid(&f);
        counts(&f, c, 0);
        ck_assert_int_le(spread(&f, c), 1);
        counts(&f, c, 1);
        ck_assert_msg(spread(&f, c) <= 1, "round %d: leaders spread %d", round, spread(&f, c));
    }
}
END_TEST

START_TEST(test_limits) {
    static const int32_t row[3] = {1, 2, 3};
    fixture_t f;
    fx_brokers(&f, 3, NULL);
    f.brokers[2].id = 1; /* a broker named twice */
    f.rf = 2;
    fx_part(&f, "t", row);
    ck_assert_int_eq(sf_rebalance_plan(f.brokers, f.nb, f.parts, f.np, f.out), -1);
    fx_brokers(&f, 2, NULL);
    f.rf = 3;
    fx_part(&f, "t", row);
    ck_assert_int_eq(sf_rebalance_plan(f.brokers, f.nb, f.parts, f.np, f.out), -1);
    ck_assert_int_eq(sf_rebalance_plan(f.brokers, f.nb, f.parts, 0, f.out), 0);
    /* RF equal to the broker count: every broker in every partition. */
    fx_brokers(&f, 3, NULL);
    f.rf = 3;
    fx_part(&f, "t", row);
    fx_part(&f, "t", row);
    fx_part(&f, "t", row);
    ck_assert_int_eq(sf_rebalance_plan(f.brokers, f.nb, f.parts, f.np, f.out), 0);
    assert_valid(&f);
    ck_assert_int_ne(proposed(&f, 0)[0], proposed(&f, 1)[0]);
    ck_assert_int_ne(proposed(&f, 1)[0], proposed(&f, 2)[0]);
}
END_TEST

static Suite *rebalance_suite(void) {
    Suite *s = suite_create("rebalance");
    TCase *tc = tcase_create("plan");
    tcase_add_test(tc, test_balanced_stays);
    tcase_add_test(tc, test_new_broker_gets_its_share);
    tcase_add_test(tc, test_broker_drained);
    tcase_add_test(tc, test_racks_spread);
    tcase_add_test(tc, test_topics_spread_together);
    tcase_add_test(tc, test_random_starts);
    tcase_add_test(tc, test_limits);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(rebalance_suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
