/* Unit tests for the leader's side of replication (broker/replica/leader.c): followers'
 * progress, the high watermark that follows from the ISR, the ISR changes the leader wants. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "buf.h"
#include "err.h"
#include "leader.h"
#include "log.h"
#include "recbatch.h"
#include "tmpdir.h"

static sf_log_t *log_;
static sf_partition_t *part;
static int32_t replicas[3] = {1, 2, 3};
static int32_t isr[3];
static sf_cluster_partition_t cp;

/* Partition t-0 led by broker 1 at epoch 5, replicas {1,2,3}, all in the ISR. */
static void setup(void) {
    sf_log_config_t cfg;
    tmpdir_make("leader");
    sf_log_config_default(&cfg);
    ck_assert_int_eq(sf_log_open(tmpdir, "t", 0, &cfg, 0, &log_), SF_OK);
    ck_assert_ptr_nonnull(part = sf_partition_new(log_, NULL, NULL, NULL, NULL));
    memset(&cp, 0, sizeof(cp));
    memcpy(isr, replicas, sizeof(isr));
    cp.leader = 1;
    cp.leader_epoch = 5;
    cp.replicas = replicas;
    cp.nreplicas = 3;
    cp.isr = isr;
    cp.nisr = 3;
}

static void teardown(void) {
    sf_partition_unref(part);
    sf_log_close(log_);
    tmpdir_remove();
}

/* Append @n one-record batches. */
static void append(int n) {
    sf_recbatch_record_t rec;
    uint8_t v = 'x';
    int i;
    memset(&rec, 0, sizeof(rec));
    rec.key.len = -1;
    rec.value.p = &v;
    rec.value.len = 1;
    for (i = 0; i < n; i++) {
        sf_wbuf_t wb;
        sf_wbuf_init(&wb);
        ck_assert_int_eq(sf_recbatch_build(&wb, 0, 1000, &rec, 1), SF_OK);
        ck_assert_int_eq(sf_log_append(log_, wb.p, wb.len, 1000, NULL), SF_OK);
        sf_wbuf_free(&wb);
    }
}

START_TEST(hw_waits_for_every_isr_member) {
    append(10);
    sf_leader_apply(part, &cp, 1, 1000);
    /* After a start the high watermark is not known: nothing is committed until the ISR says. */
    ck_assert_int_eq(sf_log_high_watermark(log_), 0);
    ck_assert_int_eq(sf_leader_follower_fetched(part, 2, 5, 7, 1100), 0);
    ck_assert_int_eq(sf_leader_update_hw(part, &cp, 1), 0); /* broker 3 not heard from */
    ck_assert_int_eq(sf_log_high_watermark(log_), 0);
    ck_assert_int_eq(sf_leader_follower_fetched(part, 3, 5, 4, 1100), 0);
    ck_assert_int_eq(sf_leader_update_hw(part, &cp, 1), 1);
    ck_assert_int_eq(sf_log_high_watermark(log_), 4);
    ck_assert_int_eq(sf_leader_follower_fetched(part, 3, 5, 10, 1200), 0);
    ck_assert_int_eq(sf_leader_update_hw(part, &cp, 1), 1);
    ck_assert_int_eq(sf_log_high_watermark(log_), 7);
    /* It never goes down, even when a follower reports less (after a restart of it). */
    ck_assert_int_eq(sf_leader_follower_fetched(part, 2, 5, 2, 1300), 0);
    ck_assert_int_eq(sf_leader_update_hw(part, &cp, 1), 0);
    ck_assert_int_eq(sf_log_high_watermark(log_), 7);
}
END_TEST

/* With a checkpointed high watermark (replication-offset-checkpoint) leadership starts from
 * it, so what was committed before a restart stays visible; it still only moves up. */
START_TEST(leadership_starts_at_the_checkpointed_hw) {
    append(10);
    sf_log_set_checkpointed_high_watermark(log_, 6);
    sf_leader_apply(part, &cp, 1, 1000);
    ck_assert_int_eq(sf_log_high_watermark(log_), 6);
    ck_assert_int_eq(sf_leader_follower_fetched(part, 2, 5, 4, 1100), 0);
    ck_assert_int_eq(sf_leader_follower_fetched(part, 3, 5, 4, 1100), 0);
    ck_assert_int_eq(sf_leader_update_hw(part, &cp, 1), 0);
    ck_assert_int_eq(sf_log_high_watermark(log_), 6);
}
END_TEST

START_TEST(leader_alone_commits_its_appends) {
    cp.nisr = 1;
    sf_leader_apply(part, &cp, 1, 1000);
    append(3);
    ck_assert_int_eq(sf_leader_update_hw(part, &cp, 1), 1);
    ck_assert_int_eq(sf_log_high_watermark(log_), 3);
}
END_TEST

START_TEST(fetches_that_do_not_count) {
    sf_leader_apply(part, &cp, 1, 1000);
    ck_assert_int_eq(sf_leader_follower_fetched(part, 4, 5, 0, 1100), -1); /* not a replica */
    ck_assert_int_eq(sf_leader_follower_fetched(part, 2, 4, 0, 1100), -1); /* old epoch */
    ck_assert_int_eq(sf_leader_follower_fetched(part, 2, 6, 0, 1100), -1); /* future epoch */
    /* Not the leader (any more): nothing counts and the ISR is left alone. */
    cp.leader = 2;
    sf_leader_apply(part, &cp, 1, 1000);
    ck_assert_int_eq(sf_leader_follower_fetched(part, 2, 5, 0, 1100), -1);
    ck_assert_int_eq(sf_leader_update_hw(part, &cp, 1), 0);
    ck_assert_int_eq(sf_leader_wanted_isr(part, &cp, 1, 99999, 100, isr), 0);
}
END_TEST

START_TEST(a_lagging_follower_leaves_the_isr) {
    int32_t want[3];
    append(10);
    sf_leader_apply(part, &cp, 1, 1000);
    ck_assert_int_eq(sf_leader_follower_fetched(part, 2, 5, 10, 1100), 0); /* caught up */
    ck_assert_int_eq(sf_leader_follower_fetched(part, 3, 5, 4, 1100), 0);  /* behind */
    ck_assert_int_eq(sf_leader_wanted_isr(part, &cp, 1, 1500, 1000, want), 0);
    /* Broker 3 asked for less than the leader had at its previous fetch too: still behind. */
    ck_assert_int_eq(sf_leader_follower_fetched(part, 3, 5, 6, 1900), 0);
    ck_assert_int_eq(sf_leader_follower_fetched(part, 2, 5, 10, 2050), 0);
    ck_assert_int_eq(sf_leader_wanted_isr(part, &cp, 1, 2100, 1000, want), 2);
    ck_assert_int_eq(want[0], 1);
    ck_assert_int_eq(want[1], 2);
}
END_TEST

START_TEST(a_follower_reaching_what_it_had_counts_as_caught_up) {
    int32_t want[3];
    append(10);
    sf_leader_apply(part, &cp, 1, 1000);
    ck_assert_int_eq(sf_leader_follower_fetched(part, 2, 5, 10, 1000), 0);
    ck_assert_int_eq(sf_leader_follower_fetched(part, 3, 5, 4, 1000), 0);
    append(5); /* LEO 15 */
    /* Broker 3 reached 10, the leader's end at its previous fetch: caught up as of then. */
    ck_assert_int_eq(sf_leader_follower_fetched(part, 3, 5, 10, 1800), 0);
    ck_assert_int_eq(sf_leader_follower_fetched(part, 2, 5, 15, 2500), 0);
    ck_assert_int_eq(sf_leader_wanted_isr(part, &cp, 1, 2500, 1000, want), 2);
    ck_assert_int_eq(want[1], 2); /* 3 was caught up at 1000, more than 1000 ms before */
}
END_TEST

START_TEST(a_caught_up_follower_joins_and_counts_while_pending) {
    int32_t want[3];
    append(10);
    isr[0] = 1;
    isr[1] = 2;
    cp.nisr = 2;
    sf_leader_apply(part, &cp, 1, 1000);
    ck_assert_int_eq(sf_leader_follower_fetched(part, 2, 5, 10, 1100), 0);
    ck_assert_int_eq(sf_leader_update_hw(part, &cp, 1), 1);
    ck_assert_int_eq(sf_log_high_watermark(log_), 10);
    /* Broker 3 below the high watermark cannot join. */
    ck_assert_int_eq(sf_leader_follower_fetched(part, 3, 5, 8, 1100), 0);
    ck_assert_int_eq(sf_leader_wanted_isr(part, &cp, 1, 1200, 1000, want), 0);
    ck_assert_int_eq(sf_leader_follower_fetched(part, 3, 5, 10, 1300), 0);
    ck_assert_int_eq(sf_leader_wanted_isr(part, &cp, 1, 1300, 1000, want), 3);
    ck_assert_int_eq(want[2], 3);
    /* While the addition is in flight the high watermark waits for broker 3 as well. */
    append(5);
    ck_assert_int_eq(sf_leader_follower_fetched(part, 2, 5, 15, 1400), 0);
    ck_assert_int_eq(sf_leader_update_hw(part, &cp, 1), 0);
    ck_assert_int_eq(sf_log_high_watermark(log_), 10);
    sf_leader_isr_settled(part); /* refused: it no longer holds the high watermark */
    ck_assert_int_eq(sf_leader_update_hw(part, &cp, 1), 1);
    ck_assert_int_eq(sf_log_high_watermark(log_), 15);
}
END_TEST

START_TEST(a_follower_that_stopped_fetching_is_not_added_back) {
    int32_t want[3];
    append(10);
    isr[0] = 1;
    isr[1] = 2;
    cp.nisr = 2;
    sf_leader_apply(part, &cp, 1, 1000);
    ck_assert_int_eq(sf_leader_follower_fetched(part, 2, 5, 10, 1100), 0);
    ck_assert_int_eq(sf_leader_follower_fetched(part, 3, 5, 10, 1100), 0);
    ck_assert_int_eq(sf_leader_update_hw(part, &cp, 1), 1);
    /* Broker 3 has everything but last caught up 1400 ms ago: it was dropped for that and
     * stays out until it fetches again, with no new records to lag behind on. */
    ck_assert_int_eq(sf_leader_follower_fetched(part, 2, 5, 10, 2400), 0);
    ck_assert_int_eq(sf_leader_wanted_isr(part, &cp, 1, 2500, 1000, want), 0);
    ck_assert_int_eq(sf_leader_follower_fetched(part, 3, 5, 10, 2600), 0);
    ck_assert_int_eq(sf_leader_wanted_isr(part, &cp, 1, 2600, 1000, want), 3);
}
END_TEST

START_TEST(a_new_epoch_starts_over) {
    append(10);
    sf_leader_apply(part, &cp, 1, 1000);
    ck_assert_int_eq(sf_leader_follower_fetched(part, 2, 5, 10, 1100), 0);
    ck_assert_int_eq(sf_leader_follower_fetched(part, 3, 5, 10, 1100), 0);
    ck_assert_int_eq(sf_leader_update_hw(part, &cp, 1), 1);
    cp.leader_epoch = 6;
    sf_leader_apply(part, &cp, 1, 2000);
    ck_assert_int_eq(sf_leader_follower_fetched(part, 2, 5, 10, 2100), -1);
    append(2);
    /* The followers are unknown again: the high watermark holds until both report. */
    ck_assert_int_eq(sf_leader_update_hw(part, &cp, 1), 0);
    ck_assert_int_eq(sf_log_high_watermark(log_), 10);
}
END_TEST

static Suite *leader_suite(void) {
    Suite *s = suite_create("leader");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, hw_waits_for_every_isr_member);
    tcase_add_test(tc, leadership_starts_at_the_checkpointed_hw);
    tcase_add_test(tc, leader_alone_commits_its_appends);
    tcase_add_test(tc, fetches_that_do_not_count);
    tcase_add_test(tc, a_lagging_follower_leaves_the_isr);
    tcase_add_test(tc, a_follower_reaching_what_it_had_counts_as_caught_up);
    tcase_add_test(tc, a_caught_up_follower_joins_and_counts_while_pending);
    tcase_add_test(tc, a_follower_that_stopped_fetching_is_not_added_back);
        tcase_add_test(tc, a_new_epoch_starts_over);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(leader_suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
