/* Unit tests for broker/replica/throttle: the replication quotas' token bucket, the rates from
 * the dynamic broker configs and the throttled replica lists of topics. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "throttle.h"
#include "topiccfg.h"

START_TEST(test_bucket) {
    sf_throttle_t t;
    sf_throttle_init(&t);
    /* No rate: never exceeded, whatever is counted. */
    sf_throttle_record(&t, INT64_C(1) << 40, 1000);
    ck_assert_int_eq(sf_throttle_exceeded(&t, 1000), 0);
    /* 1000 bytes/s: a second's worth goes at once, then the rate is used up until it refills. */
    sf_throttle_set_rate(&t, 1000);
    ck_assert_int_eq(sf_throttle_exceeded(&t, 1000), 0);
    sf_throttle_record(&t, 1000, 1000);
    ck_assert_int_eq(sf_throttle_exceeded(&t, 1000), 0); /* at 0, not below */
    sf_throttle_record(&t, 500, 1000);
    ck_assert_int_eq(sf_throttle_exceeded(&t, 1000), 1);
    ck_assert_int_eq(sf_throttle_exceeded(&t, 1400), 1); /* -100 */
    ck_assert_int_eq(sf_throttle_exceeded(&t, 1600), 0); /* +100 */
    /* Idle time fills the bucket up to one second's worth only. */
    ck_assert_int_eq(sf_throttle_exceeded(&t, 100000), 0);
    sf_throttle_record(&t, 1001, 100000);
    ck_assert_int_eq(sf_throttle_exceeded(&t, 100000), 1);
    /* A new rate starts full; removing it lifts the throttle. */
    sf_throttle_set_rate(&t, 5000);
    ck_assert_int_eq(sf_throttle_exceeded(&t, 100000), 0);
    sf_throttle_record(&t, 6000, 100000);
    ck_assert_int_eq(sf_throttle_exceeded(&t, 100000), 1);
    sf_throttle_set_rate(&t, INT64_MAX);
    ck_assert_int_eq(sf_throttle_exceeded(&t, 100000), 0);
    sf_throttle_destroy(&t);
}
END_TEST

START_TEST(test_rates) {
    sf_cluster_config_entry_t mine = {"follower.replication.throttled.rate", "2048"};
    sf_cluster_config_entry_t all[] = {{"follower.replication.throttled.rate", "1024"},
                                       {"leader.replication.throttled.rate", "512"}};
    sf_topiccfg_ctx_t ctx;
    int syn = -1;
    memset(&ctx, 0, sizeof(ctx));
    ck_assert_int_eq(sf_throttle_rate(&ctx, SF_THROTTLE_LEADER_RATE), INT64_MAX);
    ctx.default_dyn = all;
    ctx.ndefault_dyn = 2;
    ck_assert_int_eq(sf_throttle_rate(&ctx, SF_THROTTLE_LEADER_RATE), 512);
    ck_assert_int_eq(sf_throttle_rate(&ctx, SF_THROTTLE_FOLLOWER_RATE), 1024);
    ctx.broker_dyn = &mine; /* this broker's own before the cluster default */
    ctx.nbroker_dyn = 1;
    ck_assert_int_eq(sf_throttle_rate(&ctx, SF_THROTTLE_FOLLOWER_RATE), 2048);
    /* The broker config paths find them as dynamic broker configs. */
    ck_assert_ptr_nonnull(sf_topiccfg_find_synonym(SF_THROTTLE_LEADER_RATE, &syn));
    ck_assert_int_eq(syn, 0);
    ck_assert_ptr_null(sf_topiccfg_find(SF_THROTTLE_LEADER_RATE));
}
END_TEST

START_TEST(test_listed) {
    sf_cluster_config_entry_t cfg = {"follower.replication.throttled.replicas", "0:1,10:2, 1:12"};
    sf_cluster_topic_t t;
    sf_topiccfg_ctx_t ctx;
    memset(&ctx, 0, sizeof(ctx));
    memset(&t, 0, sizeof(t));
    t.name = "orders";
    ck_assert_int_eq(sf_throttle_listed(&ctx, &t, SF_THROTTLE_FOLLOWER_REPLICAS, 0, 1), 0);
    t.configs = &cfg;
    t.nconfigs = 1;
    ck_assert_int_eq(sf_throttle_listed(&ctx, &t, SF_THROTTLE_FOLLOWER_REPLICAS, 0, 1), 1);
    ck_assert_int_eq(sf_throttle_listed(&ctx, &t, SF_THROTTLE_FOLLOWER_REPLICAS, 10, 2), 1);
    ck_assert_int_eq(sf_throttle_listed(&ctx, &t, SF_THROTTLE_FOLLOWER_REPLICAS, 1, 12), 1);
    /* Whole items only (spaces around them left out, as the validator allows them). */
    ck_assert_int_eq(sf_throttle_listed(&ctx, &t, SF_THROTTLE_FOLLOWER_REPLICAS, 1, 1), 0);
    ck_assert_int_eq(sf_throttle_listed(&ctx, &t, SF_THROTTLE_FOLLOWER_REPLICAS, 0, 2), 0);
    ck_assert_int_eq(sf_throttle_listed(&ctx, &t, SF_THROTTLE_FOLLOWER_REPLICAS, 1, 2), 0);
    /* The other direction's list is another config. */
    ck_assert_int_eq(sf_throttle_listed(&ctx, &t, SF_THROTTLE_LEADER_REPLICAS, 0, 1), 0);
    cfg.value = "*";
    ck_assert_int_eq(sf_throttle_listed(&ctx, &t, SF_THROTTLE_FOLLOWER_REPLICAS, 7, 3), 1);
}
END_TEST

int main(void) {
    Suite *s = suite_create("throttle");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;
    tcase_add_test(tc, test_bucket);
    tcase_add_test(tc, test_rates);
    tcase_add_test(tc, test_listed);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
