/* Unit tests for zkmeta/cluster: znode JSON codecs (golden strings), uuids, Kafka's replica
 * placement, snapshot lookups; malformed and oversized inputs. No ZooKeeper needed. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "zk.h"
#include "placement.h"
#include "election_rules.h"
#include "reassign_rules.h"
#include "znode.h"
#include "err.h"

#define S(lit) lit, strlen(lit)

/* ---- core ---- */

START_TEST(test_broker_golden) {
    sf_cluster_broker_t b;
    ck_assert_int_eq(sf_znode_broker_decode(
                         S("{\"version\":1,\"host\":\"10.0.0.1\",\"port\":9092,\"endpoints\":["
                           "\"PLAINTEXT://10.0.0.1:9092\",\"SSL://10.0.0.1:9093\"],\"rack\":null,"
                           "\"timestamp\":\"1700000000000\"}"),
                         &b),
                     SF_OK);
    ck_assert_str_eq(b.host, "10.0.0.1");
    ck_assert_int_eq(b.port, 9092);
    ck_assert_int_eq(b.nendpoints, 2);
    ck_assert_str_eq(b.endpoints[0], "PLAINTEXT://10.0.0.1:9092");
    ck_assert_str_eq(b.endpoints[1], "SSL://10.0.0.1:9093");
    ck_assert_ptr_null(b.rack);
    ck_assert_int_eq(b.id, -1);
    ck_assert(b.epoch == -1);
    sf_cluster_broker_clear(&b);

    /* What Apache Kafka 3.x writes (version 5, extra fields, a rack). */
    ck_assert_int_eq(
        sf_znode_broker_decode(
            S("{\"features\":{},\"listener_security_protocol_map\":{\"PLAINTEXT\":\"PLAINTEXT\"},"
              "\"endpoints\":[\"PLAINTEXT://kafka1:9092\"],\"jmx_port\":-1,\"port\":9092,"
              "\"host\":\"kafka1\",\"version\":5,\"timestamp\":\"1690000000000\",\"rack\":\"r1\"}"),
            &b),
        SF_OK);
    ck_assert_str_eq(b.host, "kafka1");
    ck_assert_str_eq(b.rack, "r1");
    ck_assert_int_eq(b.nendpoints, 1);
    sf_cluster_broker_clear(&b);

    /* No PLAINTEXT listener: Kafka writes host null, port -1. */
    ck_assert_int_eq(sf_znode_broker_decode(S("{\"version\":1,\"host\":null,\"port\":-1,"
                                                "\"endpoints\":[\"SSL://h:9093\"]}"),
                                              &b),
                     SF_OK);
    ck_assert_ptr_null(b.host);
    ck_assert_int_eq(b.port, -1);
    sf_cluster_broker_clear(&b);
}
END_TEST

START_TEST(test_broker_encode) {
    char *eps[] = {"PLAINTEXT://h1:9092", "SSL://h1:9093"};
    sf_cluster_broker_t b = {.id = 7, .host = "h1", .port = 9092, .endpoints = eps,
                             .nendpoints = 2, .rack = NULL};
    sf_cluster_broker_t d;
    char *s = sf_znode_broker_encode(&b, 123);
    ck_assert_str_eq(s, "{\"version\":1,\"host\":\"h1\",\"port\":9092,\"endpoints\":["
                        "\"PLAINTEXT://h1:9092\",\"SSL://h1:9093\"],\"rack\":null,"
                        "\"timestamp\":\"123\"}");
    ck_assert_int_eq(sf_znode_broker_decode(s, strlen(s), &d), SF_OK);
    ck_assert_str_eq(d.host, "h1");
    ck_assert_int_eq(d.nendpoints, 2);
    ck_assert_str_eq(d.endpoints[1], "SSL://h1:9093");
    sf_cluster_broker_clear(&d);
    free(s);
    b.rack = "rack-a";
    s = sf_znode_broker_encode(&b, 5);
    ck_assert_ptr_nonnull(strstr(s, "\"rack\":\"rack-a\""));
    free(s);
}
END_TEST

START_TEST(test_topic_golden) {
    sf_cluster_topic_t t;
    uint8_t want[16];
    int i;
    for (i = 0; i < 16; i++)
        want[i] = (uint8_t)i;
    ck_assert_int_eq(sf_znode_topic_decode(S("{\"version\":1,\"topic_id\":\"AAECAwQFBgcICQoLDA0ODw\","
                                               "\"partitions\":{\"0\":[1,2],\"1\":[2,3],\"2\":[3,1]}}"),
                                             &t),
                     SF_OK);
    ck_assert_mem_eq(t.topic_id, want, 16);
    ck_assert_int_eq(t.npartitions, 3);
    ck_assert_int_eq(t.partitions[1].partition, 1);
    ck_assert_int_eq(t.partitions[1].nreplicas, 2);
    ck_assert_int_eq(t.partitions[1].replicas[0], 2);
    ck_assert_int_eq(t.partitions[2].replicas[1], 1);
    ck_assert_int_eq(t.partitions[0].leader, -1);
    ck_assert_ptr_null(t.name);
    sf_cluster_topic_clear(&t);

    /* Keys in any order, Kafka's version 3 extras, no topic id (pre-2.8 topics). */
    ck_assert_int_eq(sf_znode_topic_decode(S("{\"partitions\":{\"1\":[5],\"0\":[4]},\"version\":3,"
                                               "\"adding_replicas\":{},\"removing_replicas\":{}}"),
                                             &t),
                     SF_OK);
    ck_assert_int_eq(t.npartitions, 2);
    ck_assert_int_eq(t.partitions[0].replicas[0], 4);
    ck_assert_int_eq(t.partitions[1].replicas[0], 5);
    for (i = 0; i < 16; i++)
        ck_assert_int_eq(t.topic_id[i], 0);
    sf_cluster_topic_clear(&t);
}
END_TEST

START_TEST(test_topic_encode) {
    uint8_t id[16];
    int32_t r0[] = {1, 2}, r1[] = {2, 1};
    sf_cluster_partition_t parts[2] = {{.partition = 0, .replicas = r0, .nreplicas = 2},
                                       {.partition = 1, .replicas = r1, .nreplicas = 2}};
    sf_cluster_topic_t t;
    char *s;
    int i;
    for (i = 0; i < 16; i++)
        id[i] = (uint8_t)i;
    s = sf_znode_topic_encode(id, parts, 2);
    ck_assert_str_eq(s, "{\"version\":1,\"topic_id\":\"AAECAwQFBgcICQoLDA0ODw\","
                        "\"partitions\":{\"0\":[1,2],\"1\":[2,1]}}");
    ck_assert_int_eq(sf_znode_topic_decode(s, strlen(s), &t), SF_OK);
    ck_assert_mem_eq(t.topic_id, id, 16);
    ck_assert_int_eq(t.partitions[1].replicas[0], 2);
    sf_cluster_topic_clear(&t);
    free(s);
}
END_TEST

START_TEST(test_pstate_golden) {
    sf_cluster_partition_t p = {.partition = 3, .leader = -1};
    char *s;
    int32_t isr[] = {1, 2};
    ck_assert_int_eq(sf_znode_pstate_decode(S("{\"controller_epoch\":5,\"leader\":1,\"version\":1,"
                                                "\"leader_epoch\":7,\"isr\":[1,2]}"),
                                              &p),
                     SF_OK);
    ck_assert_int_eq(p.partition, 3);
    ck_assert_int_eq(p.leader, 1);
    ck_assert_int_eq(p.leader_epoch, 7);
    ck_assert_int_eq(p.controller_epoch, 5);
    ck_assert_int_eq(p.nisr, 2);
    ck_assert_int_eq(p.isr[1], 2);
    /* decoding again replaces the isr (no leak, no append) */
    ck_assert_int_eq(sf_znode_pstate_decode(S("{\"version\":1,\"leader\":-1,\"leader_epoch\":8,"
                                                "\"isr\":[],\"controller_epoch\":6,"
                                                "\"leader_recovery_state\":0}"),
                                              &p),
                     SF_OK);
    ck_assert_int_eq(p.leader, -1);
    ck_assert_int_eq(p.nisr, 0);
    sf_cluster_partition_clear(&p);

    p = (sf_cluster_partition_t){.leader = 1, .leader_epoch = 7, .controller_epoch = 5,
                                 .isr = isr, .nisr = 2};
    s = sf_znode_pstate_encode(&p);
    ck_assert_str_eq(s, "{\"version\":1,\"leader\":1,\"leader_epoch\":7,\"isr\":[1,2],"
                        "\"controller_epoch\":5}");
    free(s);
}
END_TEST

START_TEST(test_config_golden) {
    sf_cluster_config_entry_t *c;
    sf_cluster_config_entry_t in[3] = {{"retention.ms", "1000"}, {"x", NULL}, {"a.b", "c"}};
    int n;
    char *s;
    ck_assert_int_eq(sf_znode_config_decode(S("{\"version\":1,\"config\":{\"retention.ms\":\"1000\","
                                                "\"cleanup.policy\":\"compact\"}}"),
                                              &c, &n),
                     SF_OK);
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(c[0].name, "cleanup.policy"); /* sorted */
    ck_assert_str_eq(c[1].value, "1000");
    {
        sf_cluster_topic_t t = {.configs = c, .nconfigs = n};
        ck_assert_str_eq(sf_cluster_topic_config(&t, "retention.ms"), "1000");
        ck_assert_ptr_null(sf_cluster_topic_config(&t, "segment.ms"));
    }
    sf_cluster_configs_free(c, n);
    ck_assert_int_eq(sf_znode_config_decode(S("{\"version\":1,\"config\":{}}"), &c, &n), SF_OK);
    ck_assert_int_eq(n, 0);
    ck_assert_ptr_null(c);

    s = sf_znode_config_encode(in, 3);
    ck_assert_str_eq(s, "{\"version\":1,\"config\":{\"retention.ms\":\"1000\",\"a.b\":\"c\"}}");
    free(s);
    s = sf_znode_config_encode(NULL, 0);
    ck_assert_str_eq(s, "{\"version\":1,\"config\":{}}");
    free(s);
}
END_TEST

/* Dynamic broker configs: the snapshot's two arrays (freed with it), the lookup helpers, and
 * Kafka's change notification. */
START_TEST(test_broker_configs) {
    sf_cluster_snapshot_t *s = sf_cluster_snapshot_build(NULL, -1, -1, NULL, 0, NULL, 0);
    char *j;
    int n;
    ck_assert_ptr_nonnull(s);
    ck_assert_ptr_null(sf_cluster_snapshot_broker_config(s, 0, "log.retention.ms"));
    ck_assert_ptr_null(sf_cluster_snapshot_broker_config(s, 1, "log.retention.ms"));
    ck_assert_int_eq(sf_znode_config_decode(S("{\"version\":1,\"config\":{\"log.segment.bytes\":"
                                                "\"1024\",\"compression.type\":\"zstd\","
                                                "\"log.retention.ms\":\"5\"}}"),
                                              &s->broker_configs, &n),
                     SF_OK);
    s->nbroker_configs = n;
    ck_assert_int_eq(sf_znode_config_decode(S("{\"version\":1,\"config\":{\"log.retention.ms\":"
                                                "\"7\"}}"),
                                              &s->default_configs, &n),
                     SF_OK);
    s->ndefault_configs = n;
    ck_assert_str_eq(sf_cluster_snapshot_broker_config(s, 0, "compression.type"), "zstd");
    ck_assert_str_eq(sf_cluster_snapshot_broker_config(s, 0, "log.segment.bytes"), "1024");
    ck_assert_str_eq(sf_cluster_snapshot_broker_config(s, 0, "log.retention.ms"), "5");
    ck_assert_str_eq(sf_cluster_snapshot_broker_config(s, 1, "log.retention.ms"), "7");
    ck_assert_ptr_null(sf_cluster_snapshot_broker_config(s, 1, "compression.type"));
    ck_assert_ptr_null(sf_cluster_snapshot_broker_config(s, 0, "a"));
    ck_assert_ptr_null(sf_cluster_snapshot_broker_config(s, 0, "zzz"));
    ck_assert_ptr_null(sf_cluster_snapshot_broker_config(s, 0, NULL));
    ck_assert_ptr_null(sf_cluster_snapshot_broker_config(NULL, 0, "log.retention.ms"));
    ck_assert_ptr_null(sf_cluster_configs_find(NULL, 0, "x"));
    ck_assert_str_eq(sf_cluster_configs_find(s->broker_configs, 1, "compression.type"), "zstd");
    ck_assert_ptr_null(sf_cluster_configs_find(s->broker_configs, 1, "log.retention.ms"));
    sf_cluster_snapshot_unref(s); /* frees both arrays (ASan / valgrind would see a leak) */

    j = sf_znode_config_change_encode("brokers/<default>");
    ck_assert_str_eq(j, "{\"version\":2,\"entity_path\":\"brokers/<default>\"}");
    free(j);
    j = sf_znode_config_change_encode("brokers/1");
    ck_assert_str_eq(j, "{\"version\":2,\"entity_path\":\"brokers/1\"}");
    free(j);
    ck_assert_ptr_null(sf_znode_config_change_encode(NULL));
}
END_TEST

START_TEST(test_controller_epoch_id_golden) {
    int32_t id = -5, e = -5;
    char *s, *cid;
    ck_assert_int_eq(sf_znode_controller_decode(S("{\"version\":1,\"brokerid\":3,\"timestamp\":\"1\"}"),
                                                  &id),
                     SF_OK);
    ck_assert_int_eq(id, 3);
    s = sf_znode_controller_encode(4, 1234);
    ck_assert_str_eq(s, "{\"version\":1,\"brokerid\":4,\"timestamp\":\"1234\"}");
    free(s);
    ck_assert_int_eq(sf_znode_epoch_decode(S("17"), &e), SF_OK);
    ck_assert_int_eq(e, 17);
    ck_assert_int_eq(sf_znode_epoch_decode(S("2147483647"), &e), SF_OK);
    ck_assert_int_eq(e, INT32_MAX);
    s = sf_znode_cluster_id_encode("AAECAwQFBgcICQoLDA0ODw");
    ck_assert_str_eq(s, "{\"version\":1,\"id\":\"AAECAwQFBgcICQoLDA0ODw\"}");
    ck_assert_int_eq(sf_znode_cluster_id_decode(s, strlen(s), &cid), SF_OK);
    ck_assert_str_eq(cid, "AAECAwQFBgcICQoLDA0ODw");
    free(cid);
    free(s);
}
END_TEST

/* /admin/preferred_replica_election as Kafka's tools write it, and what is refused. */
START_TEST(test_preferred_election_golden) {
    static const char *bad[] = {
        "{\"version\":1}", "{\"partitions\":[]}", "{\"version\":1,\"partitions\":{}}",
        "{\"version\":1,\"partitions\":[{\"topic\":\"t\"}]}",
        "{\"version\":1,\"partitions\":[{\"topic\":\"t\",\"partition\":-1}]}",
        "{\"version\":1,\"partitions\":[{\"topic\":\"a/b\",\"partition\":0}]}",
        "{\"version\":1,\"partitions\":[7]}", "not json"};
    sf_znode_tp_t *v;
    int n, i;
    ck_assert_int_eq(sf_znode_preferred_decode(S("{\"version\":1,\"partitions\":[{\"topic\":"
                                                 "\"orders\",\"partition\":3},{\"topic\":\"a\","
                                                 "\"partition\":0}]}"), &v, &n),
                     SF_OK);
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(v[0].topic, "orders");
    ck_assert_int_eq(v[0].partition, 3);
    ck_assert_str_eq(v[1].topic, "a");
    sf_znode_tps_free(v, n);
    ck_assert_int_eq(sf_znode_preferred_decode(S("{\"version\":1,\"partitions\":[]}"), &v, &n),
                     SF_OK);
    ck_assert_int_eq(n, 0);
    ck_assert_ptr_null(v);
    for (i = 0; i < (int)(sizeof(bad) / sizeof(bad[0])); i++) {
        ck_assert_int_eq(sf_znode_preferred_decode(bad[i], strlen(bad[i]), &v, &n),
                         SF_ERR_MALFORMED);
        ck_assert_ptr_null(v);
        ck_assert_int_eq(n, 0);
    }
}
END_TEST

START_TEST(test_uuid) {
    uint8_t u[16], v[16];
    char s[23];
    int i, k;
    for (i = 0; i < 16; i++)
        u[i] = (uint8_t)(0xf0 + i);
    sf_znode_uuid_to_str(u, s);
    ck_assert_uint_eq(strlen(s), 22);
    ck_assert_int_eq(sf_znode_uuid_from_str(s, v), SF_OK);
    ck_assert_mem_eq(u, v, 16);
    for (k = 0; k < 200; k++) {
        ck_assert_int_eq(sf_znode_uuid_random(u), SF_OK);
        sf_znode_uuid_to_str(u, s);
        ck_assert_int_ne(s[0], '-');
        ck_assert_int_eq(u[6] >> 4, 4);
        ck_assert_int_eq(sf_znode_uuid_from_str(s, v), SF_OK);
        ck_assert_mem_eq(u, v, 16);
    }
}
END_TEST

/* Kafka's AdminUtilsTest.testReplicaAssignment: 5 brokers, 10 partitions, rf 3, start 0. */
START_TEST(test_assign_kafka_vector) {
    static const int32_t brokers[] = {0, 1, 2, 3, 4};
    static const int32_t want[10][3] = {{0, 1, 2}, {1, 2, 3}, {2, 3, 4}, {3, 4, 0}, {4, 0, 1},
                                        {0, 2, 3}, {1, 3, 4}, {2, 4, 0}, {3, 0, 1}, {4, 1, 2}};
    int32_t out[30];
    int p;
    ck_assert_int_eq(sf_placement_assign(brokers, NULL, 5, 10, 3, 0, 0, out), SF_OK);
    for (p = 0; p < 10; p++) {
        ck_assert_int_eq(out[p * 3], want[p][0]);
        ck_assert_int_eq(out[p * 3 + 1], want[p][1]);
        ck_assert_int_eq(out[p * 3 + 2], want[p][2]);
    }
    /* Continuing from partition 5 gives Kafka's partitions 5.. */
    ck_assert_int_eq(sf_placement_assign(brokers, NULL, 5, 5, 3, 5, 0, out), SF_OK);
    ck_assert_int_eq(out[0], 0);
    ck_assert_int_eq(out[1], 2);
    ck_assert_int_eq(out[2], 3);
}
END_TEST

START_TEST(test_assign_random_spreads) {
    static const int32_t brokers[] = {10, 20, 30};
    int32_t out[60];
    int counts[3] = {0, 0, 0}, p, i;
    ck_assert_int_eq(sf_placement_assign(brokers, NULL, 3, 30, 2, 0, -1, out), SF_OK);
    for (p = 0; p < 30; p++) {
        ck_assert_int_ne(out[p * 2], out[p * 2 + 1]);
        for (i = 0; i < 3; i++)
            if (out[p * 2] == brokers[i])
                counts[i]++;
    }
    /* leaders round-robin: exactly 10 each */
    ck_assert_int_eq(counts[0], 10);
    ck_assert_int_eq(counts[1], 10);
    ck_assert_int_eq(counts[2], 10);
}
END_TEST

/* Six brokers 0..5 in three racks of two (0 and 1 in rack1, 2 and 3 in rack2, 4 and 5 in
 * rack3): Kafka's rack-alternated list is 0, 2, 4, 1, 3, 5. */
static const int32_t six[] = {0, 1, 2, 3, 4, 5};
static const char *const six_racks[] = {"rack1", "rack1", "rack2", "rack2", "rack3", "rack3"};

/* The number of racks (of six_racks) the @n replicas in @row span. */
static int racks_spanned(const int32_t *row, int n) {
    int seen[3] = {0, 0, 0}, i, count = 0;
    for (i = 0; i < n; i++) {
        int r = six_racks[row[i]][4] - '1';
        count += !seen[r];
        seen[r] = 1;
    }
    return count;
}

/* Kafka's AdminRackAwareTest.testGetRackAlternatedBrokerListAndAssignReplicasToBrokers, and
 * the layout above worked through Kafka's algorithm with start index 2: partition 0 is led by
 * arranged[2] = 4 (rack3), then 3 (rack2); 5 is skipped (rack3 has a replica), then 0; a
 * fourth replica goes on from there (2, not the 5 skipped before every rack had one). */
START_TEST(test_assign_racks_kafka_vector) {
    static const int32_t ids[] = {0, 1, 2, 3, 4, 5};
    static const char *const racks[] = {"rack1", "rack3", "rack3", "rack2", "rack2", "rack1"};
    static const int32_t want[7][3] = {{0, 3, 1}, {3, 1, 5}, {1, 5, 4}, {5, 4, 2},
                                       {4, 2, 0}, {2, 0, 3}, {0, 4, 2}};
    static const int32_t want6[12][3] = {{4, 3, 0}, {1, 5, 2}, {3, 0, 4}, {5, 2, 1},
                                         {0, 4, 3}, {2, 1, 5}, {4, 2, 1}, {1, 4, 3},
                                         {3, 1, 5}, {5, 3, 0}, {0, 5, 2}, {2, 0, 4}};
    static const int32_t want4[6][4] = {{4, 3, 0, 2}, {1, 5, 2, 4}, {3, 0, 4, 1},
                                        {5, 2, 1, 3}, {0, 4, 3, 5}, {2, 1, 5, 0}};
    int32_t out[36];
    int i;
    ck_assert_int_eq(sf_placement_assign(ids, racks, 6, 7, 3, 0, 0, out), SF_OK);
    for (i = 0; i < 21; i++)
        ck_assert_int_eq(out[i], want[i / 3][i % 3]);
    ck_assert_int_eq(sf_placement_assign(six, six_racks, 6, 12, 3, 0, 2, out), SF_OK);
    for (i = 0; i < 36; i++)
        ck_assert_int_eq(out[i], want6[i / 3][i % 3]);
    /* Adding partitions 6.. with the same start index gives the same partitions 6.. */
    ck_assert_int_eq(sf_placement_assign(six, six_racks, 6, 6, 3, 6, 2, out), SF_OK);
    for (i = 0; i < 18; i++)
        ck_assert_int_eq(out[i], want6[6 + i / 3][i % 3]);
    ck_assert_int_eq(sf_placement_assign(six, six_racks, 6, 6, 4, 0, 2, out), SF_OK);
    for (i = 0; i < 24; i++)
        ck_assert_int_eq(out[i], want4[i / 4][i % 4]);
}
END_TEST

/* Kafka's getRackAlternatedBrokerList, seen as the leaders of rf 1 from start index 0: racks
 * by name, brokers of a rack by id, a rack without brokers left is passed over. */
START_TEST(test_assign_racks_alternated) {
    static const int32_t ids[] = {1, 2, 5, 7, 8, 9};
    static const char *const racks[] = {"b", "a", "c", "a", "b", "c"};
    static const int32_t want[] = {2, 1, 5, 7, 8, 9};
    static const int32_t ids5[] = {0, 1, 2, 3, 4};
    static const char *const racks5[] = {"rack1", "rack3", "rack3", "rack2", "rack2"};
    static const int32_t want5[] = {0, 3, 1, 4, 2};
    int32_t out[6];
    int i;
    ck_assert_int_eq(sf_placement_assign(ids, racks, 6, 6, 1, 0, 0, out), SF_OK);
    for (i = 0; i < 6; i++)
        ck_assert_int_eq(out[i], want[i]);
    ck_assert_int_eq(sf_placement_assign(ids5, racks5, 5, 5, 1, 0, 0, out), SF_OK);
    for (i = 0; i < 5; i++)
        ck_assert_int_eq(out[i], want5[i]);
}
END_TEST

/* 1 if the @n ids of @row are all different. */
static int distinct(const int32_t *row, int n) {
    int i, j;
    for (i = 0; i < n; i++)
        for (j = 0; j < i; j++)
            if (row[i] == row[j])
                return 0;
    return 1;
}

/* Every start index (and a random one) and replication factor over the six brokers: each
 * partition's replicas are distinct and span min(rf, 3) racks, each broker leads 2 of the 12
 * partitions and holds 2 * rf replicas. */
START_TEST(test_assign_racks_spread) {
    int32_t out[12 * 6];
    int rf, start, p, i;
    for (rf = 1; rf <= 6; rf++) {
        for (start = -1; start < 6; start++) {
            int leads[6] = {0}, holds[6] = {0};
            ck_assert_int_eq(sf_placement_assign(six, six_racks, 6, 12, rf, 0, start, out),
                             SF_OK);
            for (p = 0; p < 12; p++) {
                const int32_t *row = out + p * rf;
                ck_assert_msg(distinct(row, rf), "rf %d start %d partition %d", rf, start, p);
                ck_assert_int_eq(racks_spanned(row, rf), rf < 3 ? rf : 3);
                leads[row[0]]++;
                for (i = 0; i < rf; i++)
                    holds[row[i]]++;
            }
            for (i = 0; i < 6; i++) {
                ck_assert_int_eq(leads[i], 2);
                ck_assert_int_eq(holds[i], 2 * rf);
            }
        }
    }
}
END_TEST

/* Racks on only some brokers: Kafka's RackAwareMode.Safe, the rack-unaware placement. */
START_TEST(test_assign_racks_mixed) {
    static const char *const some[] = {"rack1", "rack1", NULL, "rack2", "rack3", "rack3"};
    static const char *const none[] = {NULL, NULL, NULL, NULL, NULL, NULL};
    int32_t out[12 * 3], want[12 * 3];
    int start;
    ck_assert_int_eq(sf_placement_rack_aware(six_racks, 6), 1);
    ck_assert_int_eq(sf_placement_rack_aware(some, 6), 0);
    ck_assert_int_eq(sf_placement_rack_aware(none, 6), 0);
    ck_assert_int_eq(sf_placement_rack_aware(NULL, 6), 0);
    for (start = 0; start < 6; start++) {
        ck_assert_int_eq(sf_placement_assign(six, NULL, 6, 12, 3, 0, start, want), SF_OK);
        ck_assert_int_eq(sf_placement_assign(six, some, 6, 12, 3, 0, start, out), SF_OK);
        ck_assert_mem_eq(out, want, sizeof(want));
        ck_assert_int_eq(sf_placement_assign(six, none, 6, 12, 3, 0, start, out), SF_OK);
        ck_assert_mem_eq(out, want, sizeof(want));
    }
    /* The rack-aware answer differs: partition 0 from start 0 is 0, 2, 4, not 0, 1, 2. */
    ck_assert_int_eq(sf_placement_assign(six, NULL, 6, 12, 3, 0, 0, want), SF_OK);
    ck_assert_int_eq(sf_placement_assign(six, six_racks, 6, 12, 3, 0, 0, out), SF_OK);
    ck_assert_int_eq(want[1], 1);
    ck_assert_int_eq(out[1], 2);
    ck_assert_int_eq(out[2], 4);
}
END_TEST

static sf_cluster_snapshot_t *make_snapshot(void) {
    sf_cluster_broker_t *b = calloc(3, sizeof(*b));
    sf_cluster_topic_t *t = calloc(3, sizeof(*t));
    static const char *names[] = {"orders", "audit", "zeta"};
    static const int32_t ids[] = {3, 1, 2};
    int i;
    for (i = 0; i < 3; i++) {
        b[i].id = ids[i];
        b[i].host = strdup("h");
        b[i].port = 9092 + ids[i];
        t[i].name = strdup(names[i]);
        t[i].npartitions = 1;
        t[i].partitions = calloc(1, sizeof(sf_cluster_partition_t));
        t[i].partitions[0].replicas = malloc(sizeof(int32_t));
        t[i].partitions[0].replicas[0] = ids[i];
        t[i].partitions[0].nreplicas = 1;
    }
    return sf_cluster_snapshot_build_copy(strdup("cid"), 1, 4, b, 3, t, 3);
}

/* The partition counts a topic may have: the same answer for validate-only and real creates,
 * and a bound that matches what the assignment encoder really writes. */
START_TEST(test_partitions_check) {
    char why[200];
    int32_t lo, hi, mid, *ids;
    sf_cluster_partition_t *parts;
    uint8_t uuid[16] = {0};
    char *json;
    int32_t p;

    ck_assert_int_eq(sf_cluster_partitions_check(NULL, 2147483647, 1, why, sizeof(why)),
                     SF_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(why, "2147483647"));
    ck_assert_int_eq(sf_cluster_partitions_check(NULL, 0, 1, why, sizeof(why)), SF_ERR_INVALID);
    ck_assert_int_eq(sf_cluster_partitions_check(NULL, 1, 0, why, sizeof(why)), SF_ERR_INVALID);
    ck_assert_int_eq(sf_cluster_partitions_check(NULL, 1, SF_CLUSTER_MAX_REPLICAS + 1, why,
                                                 sizeof(why)),
                     SF_ERR_INVALID);
    ck_assert_int_eq(sf_cluster_partitions_check(NULL, SF_CLUSTER_MAX_PARTITIONS, 1, why,
                                                 sizeof(why)),
                     SF_ERR_TOOLARGE);
    ck_assert_ptr_nonnull(strstr(why, "jute.maxbuffer"));
    /* The largest count with one replica (broker 1), as cluster.h documents it. */
    lo = 1;
    hi = SF_CLUSTER_MAX_PARTITIONS;
    while (lo < hi) {
        mid = lo + (hi - lo + 1) / 2;
        if (sf_cluster_partitions_check(NULL, mid, 1, why, sizeof(why)) == SF_OK)
            lo = mid;
        else
            hi = mid - 1;
    }
    ck_assert_int_ge(lo, 80000);
    ck_assert_int_eq(sf_cluster_partitions_check(NULL, 50000, 3, why, sizeof(why)), SF_OK);
    /* What the encoder writes for it fits in one ZooKeeper request. */
    parts = calloc((size_t)lo, sizeof(*parts));
    ids = calloc((size_t)lo, sizeof(*ids));
    ck_assert_ptr_nonnull(parts);
    ck_assert_ptr_nonnull(ids);
    for (p = 0; p < lo; p++) {
        ids[p] = 1;
        parts[p].partition = p;
        parts[p].replicas = &ids[p];
        parts[p].nreplicas = 1;
    }
    json = sf_znode_topic_encode(uuid, parts, lo);
    ck_assert_ptr_nonnull(json);
    ck_assert_uint_lt(strlen(json), SF_ZK_MAX_REQUEST);
    free(json);
    free(ids);
    free(parts);
}
END_TEST

START_TEST(test_snapshot_lookup) {
    sf_cluster_snapshot_t *s = make_snapshot();
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(s->brokers[0].id, 1);
    ck_assert_int_eq(s->brokers[2].id, 3);
    ck_assert_str_eq(s->topics[0]->name, "audit");
    ck_assert_str_eq(s->topics[2]->name, "zeta");
    ck_assert_int_eq(sf_cluster_snapshot_broker(s, 2)->port, 9094);
    ck_assert_ptr_null(sf_cluster_snapshot_broker(s, 4));
    ck_assert_ptr_null(sf_cluster_snapshot_broker(s, 0));
    ck_assert_int_eq(sf_cluster_snapshot_topic(s, "orders")->partitions[0].replicas[0], 3);
    ck_assert_ptr_null(sf_cluster_snapshot_topic(s, "order"));
    ck_assert_ptr_null(sf_cluster_snapshot_topic(s, "zz"));
    ck_assert_ptr_null(sf_cluster_snapshot_topic(NULL, "zz"));
    ck_assert_int_eq(s->controller_id, 1);
    ck_assert_int_eq(s->controller_epoch, 4);
    /* reference counting: two refs, two unrefs (ASan would catch a double free) */
    ck_assert_ptr_eq(sf_cluster_snapshot_ref(s), s);
    ck_assert_int_eq(atomic_load(&s->refcnt), 2);
    sf_cluster_snapshot_unref(s);
    ck_assert_int_eq(atomic_load(&s->refcnt), 1);
    sf_cluster_snapshot_unref(s);
    sf_cluster_snapshot_unref(NULL);
}
END_TEST

START_TEST(test_topic_names) {
    char longname[300];
    ck_assert(sf_znode_topic_name_valid("a.b_c-D9"));
    ck_assert(!sf_znode_topic_name_valid(""));
    ck_assert(!sf_znode_topic_name_valid("."));
    ck_assert(!sf_znode_topic_name_valid(".."));
    ck_assert(!sf_znode_topic_name_valid("a/b"));
    ck_assert(!sf_znode_topic_name_valid("a b"));
    ck_assert(!sf_znode_topic_name_valid(NULL));
    memset(longname, 'x', 249);
    longname[249] = '\0';
    ck_assert(sf_znode_topic_name_valid(longname));
    longname[249] = 'x';
    longname[250] = '\0';
    ck_assert(!sf_znode_topic_name_valid(longname));
}
END_TEST


/* ---- election rules ---- */

/* A snapshot with brokers @ids (@n of them) registered, epoch 100 + id, and no topics. */
static sf_cluster_snapshot_t *live_snap(const int32_t *ids, int n) {
    sf_cluster_broker_t *b = calloc((size_t)n + 1, sizeof(*b));
    int i;
    ck_assert_ptr_nonnull(b);
    for (i = 0; i < n; i++) {
        b[i].id = ids[i];
        b[i].port = -1;
        b[i].epoch = 100 + ids[i];
    }
    return sf_cluster_snapshot_build_copy(strdup("c"), ids[0], 1, b, n, NULL, 0);
}

/* A partition with a state (borrowed arrays). */
static sf_cluster_partition_t mkpart(int32_t *replicas, int nr, int32_t leader, int32_t epoch,
                                     int32_t *isr, int nisr) {
    sf_cluster_partition_t p = {.partition = 0, .leader = leader, .leader_epoch = epoch,
                                .controller_epoch = 1, .state_version = 7, .replicas = replicas,
                                .nreplicas = nr, .isr = isr, .nisr = nisr};
    return p;
}

#define ISR_IS(out, ...)                                                                   \
    do {                                                                                   \
        const int32_t want_[] = {__VA_ARGS__};                                             \
        int k_;                                                                            \
        ck_assert_int_eq((out).nisr, (int)(sizeof(want_) / sizeof(want_[0])));             \
        for (k_ = 0; k_ < (out).nisr; k_++)                                                \
            ck_assert_int_eq((out).isr[k_], want_[k_]);                                    \
    } while (0)

START_TEST(test_elect_initial) {
    int32_t live12[] = {1, 2}, r[] = {3, 1, 2};
    sf_cluster_snapshot_t *s = live_snap(live12, 2);
    sf_cluster_partition_t p = {.leader = -1, .leader_epoch = -1, .replicas = r, .nreplicas = 3};
    sf_cluster_partition_t out = {0};
    ck_assert_int_eq(sf_elect_initial(&p, s, &out), SF_OK);
    ck_assert_int_eq(out.leader, 1); /* 3 is not live: the next in assignment order */
    ck_assert_int_eq(out.leader_epoch, 0);
    ISR_IS(out, 1, 2); /* every live replica, in assignment order */
    free(out.isr);
    sf_cluster_snapshot_unref(s);
    {
        int32_t live9[] = {9};
        s = live_snap(live9, 1);
        memset(&out, 0, sizeof(out));
        ck_assert_int_eq(sf_elect_initial(&p, s, &out), SF_ERR_NOTFOUND);
        ck_assert_ptr_null(out.isr);
        sf_cluster_snapshot_unref(s);
    }
}
END_TEST

START_TEST(test_elect_failover) {
    int32_t live23[] = {2, 3}, r[] = {1, 3, 2}, isr[] = {1, 2, 3}, isr12[] = {1, 2};
    sf_cluster_snapshot_t *s = live_snap(live23, 2);
    sf_cluster_partition_t p = mkpart(r, 3, 1, 4, isr, 3), out = {0};
    /* leader 1 died: the first replica in assignment order that is live and in the ISR */
    ck_assert_int_eq(sf_elect_failover(&p, s, 0, &out), SF_ELECT_LEADER);
    ck_assert_int_eq(out.leader, 3);
    ck_assert_int_eq(out.leader_epoch, 5);
    ISR_IS(out, 2, 3); /* the old ISR order, less the dead */
    free(out.isr);
    /* 3 is live but not in the ISR: 2 is elected */
    p = mkpart(r, 3, 1, 4, isr12, 2);
    memset(&out, 0, sizeof(out));
    ck_assert_int_eq(sf_elect_failover(&p, s, 0, &out), SF_ELECT_LEADER);
    ck_assert_int_eq(out.leader, 2);
    ISR_IS(out, 2);
    free(out.isr);
    /* no leader at all yet (-1) with a live ISR member */
    p = mkpart(r, 3, -1, 4, isr12, 2);
    memset(&out, 0, sizeof(out));
    ck_assert_int_eq(sf_elect_failover(&p, s, 0, &out), SF_ELECT_LEADER);
    ck_assert_int_eq(out.leader, 2);
    ck_assert_int_eq(out.leader_epoch, 5);
    free(out.isr);
    /* no state: nothing to do (the creation path handles it) */
    p = mkpart(r, 3, -1, -1, NULL, 0);
    ck_assert_int_eq(sf_elect_failover(&p, s, 0, &out), SF_ELECT_NONE);
    sf_cluster_snapshot_unref(s);
}
END_TEST

START_TEST(test_elect_offline_unclean) {
    int32_t live23[] = {2, 3}, live1[] = {1}, r[] = {1, 2, 3}, isr1[] = {1};
    sf_cluster_snapshot_t *s = live_snap(live23, 2);
    sf_cluster_partition_t p = mkpart(r, 3, 1, 4, isr1, 1), out = {0};
    /* the only ISR member died: offline, the last ISR kept, the epoch bumped */
    ck_assert_int_eq(sf_elect_failover(&p, s, 0, &out), SF_ELECT_OFFLINE);
    ck_assert_int_eq(out.leader, -1);
    ck_assert_int_eq(out.leader_epoch, 5);
    ISR_IS(out, 1);
    free(out.isr);
    /* with unclean election: the first live replica, alone in the ISR */
    memset(&out, 0, sizeof(out));
    ck_assert_int_eq(sf_elect_failover(&p, s, 1, &out), SF_ELECT_UNCLEAN);
    ck_assert_int_eq(out.leader, 2);
    ck_assert_int_eq(out.leader_epoch, 5);
    ISR_IS(out, 2);
    free(out.isr);
    /* offline already, still no ISR member back: no write */
    p = mkpart(r, 3, -1, 5, isr1, 1);
    memset(&out, 0, sizeof(out));
    ck_assert_int_eq(sf_elect_failover(&p, s, 0, &out), SF_ELECT_NONE);
    ck_assert_ptr_null(out.isr);
    sf_cluster_snapshot_unref(s);
    /* the ISR member came back: elected */
    s = live_snap(live1, 1);
    ck_assert_int_eq(sf_elect_failover(&p, s, 0, &out), SF_ELECT_LEADER);
    ck_assert_int_eq(out.leader, 1);
    ck_assert_int_eq(out.leader_epoch, 6);
    ISR_IS(out, 1);
    free(out.isr);
    sf_cluster_snapshot_unref(s);
}
END_TEST

START_TEST(test_elect_shrink) {
    int32_t live13[] = {1, 3}, live123[] = {1, 2, 3}, r[] = {1, 2, 3}, isr[] = {1, 2, 3};
    sf_cluster_snapshot_t *s = live_snap(live13, 2);
    sf_cluster_partition_t p = mkpart(r, 3, 1, 4, isr, 3), out = {0};
    /* a live leader, a dead follower in the ISR: it leaves the ISR, the epoch goes up */
    ck_assert_int_eq(sf_elect_failover(&p, s, 0, &out), SF_ELECT_SHRINK);
    ck_assert_int_eq(out.leader, 1);
    ck_assert_int_eq(out.leader_epoch, 5);
    ISR_IS(out, 1, 3);
    free(out.isr);
    sf_cluster_snapshot_unref(s);
    s = live_snap(live123, 3);
    memset(&out, 0, sizeof(out));
    ck_assert_int_eq(sf_elect_failover(&p, s, 0, &out), SF_ELECT_NONE);
    ck_assert_ptr_null(out.isr);
    sf_cluster_snapshot_unref(s);
}
END_TEST

static int down_is_3(void *arg, int32_t id) {
    (void)arg;
    return id == 3;
}

/* KIP-841: a failover does not elect a broker in controlled shutdown while another ISR member
 * can lead; with none, the leaving one leads rather than no one. */
START_TEST(test_elect_avoid_shutting_down) {
    int32_t live23[] = {2, 3}, r[] = {1, 3, 2}, isr[] = {1, 2, 3}, isr13[] = {1, 3};
    sf_cluster_snapshot_t *s = live_snap(live23, 2);
    sf_cluster_partition_t p = mkpart(r, 3, 1, 4, isr, 3), out = {0};
    ck_assert_int_eq(sf_elect_failover(&p, s, 0, &out), SF_ELECT_LEADER);
    ck_assert_int_eq(out.leader, 3);
    ck_assert_int_eq(sf_elect_avoid_shutting_down(&p, down_is_3, NULL, &out), 1);
    ck_assert_int_eq(out.leader, 2);
    ck_assert_int_eq(out.leader_epoch, 5);
    ISR_IS(out, 2, 3);
    ck_assert_int_eq(sf_elect_avoid_shutting_down(&p, down_is_3, NULL, &out), 0);
    free(out.isr);
    p = mkpart(r, 3, 1, 4, isr13, 2);
    memset(&out, 0, sizeof(out));
    ck_assert_int_eq(sf_elect_failover(&p, s, 0, &out), SF_ELECT_LEADER);
    ck_assert_int_eq(sf_elect_avoid_shutting_down(&p, down_is_3, NULL, &out), 0);
    ck_assert_int_eq(out.leader, 3);
    free(out.isr);
    sf_cluster_snapshot_unref(s);
}
END_TEST

START_TEST(test_elect_shutdown) {
    int32_t live123[] = {1, 2, 3}, r[] = {1, 2, 3}, isr[] = {1, 2, 3}, isr1[] = {1};
    sf_cluster_snapshot_t *s = live_snap(live123, 3);
    sf_cluster_partition_t p = mkpart(r, 3, 1, 4, isr, 3), out = {0};
    ck_assert_int_eq(sf_elect_shutdown(&p, s, 1, &out), SF_ELECT_LEADER);
    ck_assert_int_eq(out.leader, 2);
    ck_assert_int_eq(out.leader_epoch, 5);
    ISR_IS(out, 2, 3);
    free(out.isr);
    memset(&out, 0, sizeof(out));
    ck_assert_int_eq(sf_elect_shutdown(&p, s, 2, &out), SF_ELECT_SHRINK);
    ck_assert_int_eq(out.leader, 1);
    ISR_IS(out, 1, 3);
    free(out.isr);
    memset(&out, 0, sizeof(out));
    ck_assert_int_eq(sf_elect_shutdown(&p, s, 7, &out), SF_ELECT_NONE);
    /* the only ISR member cannot hand over: it stays */
    p = mkpart(r, 3, 1, 4, isr1, 1);
    ck_assert_int_eq(sf_elect_shutdown(&p, s, 1, &out), SF_ELECT_NONE);
    ck_assert_ptr_null(out.isr);
    sf_cluster_snapshot_unref(s);
}
END_TEST

START_TEST(test_elect_preferred) {
    int32_t live23[] = {2, 3}, live123[] = {1, 2, 3}, r[] = {1, 2, 3}, isr[] = {2, 3, 1},
            isr23[] = {2, 3};
    sf_cluster_snapshot_t *s = live_snap(live123, 3);
    sf_cluster_partition_t p = mkpart(r, 3, 2, 4, isr, 3), out = {0};
    /* 1 is live and in the ISR: it leads again, the ISR stays, the epoch goes up */
    ck_assert_int_eq(sf_elect_preferred(&p, s, &out), SF_ELECT_LEADER);
    ck_assert_int_eq(out.leader, 1);
    ck_assert_int_eq(out.leader_epoch, 5);
    ISR_IS(out, 2, 3, 1);
    free(out.isr);
    memset(&out, 0, sizeof(out));
    /* it leads already */
    p = mkpart(r, 3, 1, 4, isr, 3);
    ck_assert_int_eq(sf_elect_preferred(&p, s, &out), SF_ELECT_NONE);
    /* not in the ISR yet */
    p = mkpart(r, 3, 2, 4, isr23, 2);
    ck_assert_int_eq(sf_elect_preferred(&p, s, &out), SF_ELECT_OFFLINE);
    sf_cluster_snapshot_unref(s);
    /* not live */
    s = live_snap(live23, 2);
    p = mkpart(r, 3, 2, 4, isr, 3);
    ck_assert_int_eq(sf_elect_preferred(&p, s, &out), SF_ELECT_OFFLINE);
    ck_assert_ptr_null(out.isr);
    sf_cluster_snapshot_unref(s);
}
END_TEST

#define IDS_ARE(v, n, ...)                                                                     \
    do {                                                                                       \
        int32_t want_[] = {__VA_ARGS__};                                                       \
        ck_assert_int_eq((n), (int)(sizeof(want_) / sizeof(want_[0])));                        \
        ck_assert_mem_eq((v), want_, sizeof(want_));                                           \
    } while (0)

/* Moving {1,2,3} to {2,3,4}: the replica set grows, 4 is added and 1 removed; the topic znode
 * carries both in Kafka's maps; cancelling goes back to the original three. */
START_TEST(test_reassign_start) {
    int32_t r[] = {1, 2, 3}, isr[] = {1, 2, 3}, to[] = {2, 3, 4}, bad[] = {2, 2};
    sf_cluster_partition_t p = mkpart(r, 3, 1, 4, isr, 3), out, back;
    sf_cluster_topic_t t;
    uint8_t id[16] = {1};
    char *s;
    ck_assert_int_eq(sf_reassign_start(&p, to, 3, &out), SF_OK);
    IDS_ARE(out.replicas, out.nreplicas, 2, 3, 4, 1);
    IDS_ARE(out.adding, out.nadding, 4);
    IDS_ARE(out.removing, out.nremoving, 1);
    out.partition = 0;
    s = sf_znode_topic_encode(id, &out, 1);
    ck_assert_ptr_nonnull(strstr(s, "\"adding_replicas\":{\"0\":[4]}"));
    ck_assert_ptr_nonnull(strstr(s, "\"removing_replicas\":{\"0\":[1]}"));
    ck_assert_int_eq(sf_znode_topic_decode(s, strlen(s), &t), SF_OK);
    IDS_ARE(t.partitions[0].adding, t.partitions[0].nadding, 4);
    IDS_ARE(t.partitions[0].removing, t.partitions[0].nremoving, 1);
    sf_cluster_topic_clear(&t);
    free(s);
    /* cancel: back to the original replicas, 4 to be removed */
    ck_assert_int_eq(sf_reassign_start(&out, NULL, 0, &back), SF_OK);
    IDS_ARE(back.replicas, back.nreplicas, 2, 3, 1, 4); /* the originals in their place */
    ck_assert_int_eq(back.nadding, 0);
    IDS_ARE(back.removing, back.nremoving, 4);
    sf_cluster_partition_clear(&back);
    sf_cluster_partition_clear(&out);
    /* the same set in another order: no reassignment, the new order */
    ck_assert_int_eq(sf_reassign_start(&p, (int32_t[]){3, 1, 2}, 3, &out), SF_OK);
    IDS_ARE(out.replicas, out.nreplicas, 3, 1, 2);
    ck_assert(!sf_cluster_partition_reassigning(&out));
    sf_cluster_partition_clear(&out);
    ck_assert_int_eq(sf_reassign_start(&p, bad, 2, &out), SF_ERR_INVALID);
    ck_assert_int_eq(sf_reassign_start(&p, to, 0, &out), SF_ERR_INVALID);
    /* an id in the maps that is not a replica is malformed */
    ck_assert_int_eq(sf_znode_topic_decode(S("{\"version\":2,\"partitions\":{\"0\":[1]},"
                                             "\"adding_replicas\":{\"0\":[5]}}"), &t),
                     SF_ERR_MALFORMED);
}
END_TEST

/* Finishing waits for the target in the ISR; the leader moves off a removed replica. */
START_TEST(test_reassign_finish) {
    int32_t live[] = {1, 2, 3, 4}, r[] = {2, 3, 4, 1}, add[] = {4}, rem[] = {1},
            isr123[] = {1, 2, 3}, isr[] = {1, 2, 3, 4};
    sf_cluster_snapshot_t *s = live_snap(live, 4);
    sf_cluster_partition_t p = mkpart(r, 4, 1, 4, isr123, 3), out;
    p.adding = add;
    p.nadding = 1;
    p.removing = rem;
    p.nremoving = 1;
    ck_assert_int_eq(sf_reassign_finish(&p, s, &out), 0); /* 4 is not in the ISR yet */
    p.isr = isr;
    p.nisr = 4;
    ck_assert_int_eq(sf_reassign_finish(&p, s, &out), 1);
    ck_assert_int_eq(out.leader, 2);
    ck_assert_int_eq(out.leader_epoch, 5);
    IDS_ARE(out.isr, out.nisr, 2, 3, 4);
    IDS_ARE(out.replicas, out.nreplicas, 2, 3, 4);
    ck_assert(!sf_cluster_partition_reassigning(&out));
    sf_cluster_partition_clear(&out);
    p.leader = 3; /* a leader in the target keeps leading */
    ck_assert_int_eq(sf_reassign_finish(&p, s, &out), 1);
    ck_assert_int_eq(out.leader, 3);
    sf_cluster_partition_clear(&out);
    sf_cluster_snapshot_unref(s);
}
END_TEST

/* Broker 1 is the preferred replica of 10 partitions and leads @led of them. */
static sf_cluster_snapshot_t *imbalance_snap(int led) {
    sf_cluster_broker_t *b = calloc(2, sizeof(*b));
    sf_cluster_topic_t *t = calloc(1, sizeof(*t));
    int32_t r[2] = {1, 2};
    int i;
    b[0].id = 1;
    b[1].id = 2;
    b[0].port = b[1].port = -1;
    t->name = strdup("t");
    t->npartitions = 10;
    t->partitions = calloc(10, sizeof(*t->partitions));
    for (i = 0; i < 10; i++) {
        sf_cluster_partition_t *p = &t->partitions[i];
        p->partition = i;
        p->leader = i < led ? 1 : 2;
        p->replicas = malloc(sizeof(r));
        p->isr = malloc(sizeof(r));
        memcpy(p->replicas, r, sizeof(r));
        memcpy(p->isr, r, sizeof(r));
        p->nreplicas = p->nisr = 2;
    }
    return sf_cluster_snapshot_build_copy(strdup("c"), 1, 1, b, 2, t, 1);
}

START_TEST(test_elect_imbalanced) {
    sf_cluster_snapshot_t *s = imbalance_snap(9); /* 1 of 10 elsewhere: 10% */
    ck_assert_int_eq(sf_elect_imbalanced(s, 1, 10), 0);
    ck_assert_int_eq(sf_elect_imbalanced(s, 1, 9), 1);
    ck_assert_int_eq(sf_elect_imbalanced(s, 2, 0), 0); /* preferred for nothing */
    sf_cluster_snapshot_unref(s);
    s = imbalance_snap(8); /* 20% */
    ck_assert_int_eq(sf_elect_imbalanced(s, 1, 10), 1);
    sf_cluster_snapshot_unref(s);
}
END_TEST

START_TEST(test_elect_alter_check) {
    int32_t live123[] = {1, 2, 3}, r[] = {1, 2, 3}, isr[] = {1, 2, 3};
    int32_t a12[] = {1, 2}, a23[] = {2, 3}, a14[] = {1, 4}, a11[] = {1, 1};
    int64_t ok_ep[] = {101, 102}, bad_ep[] = {101, 999}, any_ep[] = {-1, -1};
    sf_cluster_snapshot_t *s = live_snap(live123, 3);
    sf_cluster_partition_t p = mkpart(r, 3, 1, 5, isr, 3);
    ck_assert_int_eq(sf_elect_alter_check(&p, s, 1, 5, 7, a12, NULL, 2), SF_KERR_NONE);
    ck_assert_int_eq(sf_elect_alter_check(&p, s, 1, 5, 7, a12, ok_ep, 2), SF_KERR_NONE);
    ck_assert_int_eq(sf_elect_alter_check(&p, s, 1, 5, 7, a12, any_ep, 2), SF_KERR_NONE);
    ck_assert_int_eq(sf_elect_alter_check(&p, s, 2, 5, 7, a12, NULL, 2),
                     SF_KERR_NOT_LEADER_OR_FOLLOWER);
    ck_assert_int_eq(sf_elect_alter_check(&p, s, 1, 4, 7, a12, NULL, 2),
                     SF_KERR_FENCED_LEADER_EPOCH);
    ck_assert_int_eq(sf_elect_alter_check(&p, s, 1, 5, 6, a12, NULL, 2),
                     SF_KERR_INVALID_UPDATE_VERSION);
    ck_assert_int_eq(sf_elect_alter_check(&p, s, 1, 5, 7, a23, NULL, 2), SF_KERR_INVALID_REQUEST);
    ck_assert_int_eq(sf_elect_alter_check(&p, s, 1, 5, 7, a11, NULL, 2), SF_KERR_INVALID_REQUEST);
    ck_assert_int_eq(sf_elect_alter_check(&p, s, 1, 5, 7, a12, NULL, 0), SF_KERR_INVALID_REQUEST);
    ck_assert_int_eq(sf_elect_alter_check(&p, s, 1, 5, 7, a14, NULL, 2),
                     SF_KERR_INELIGIBLE_REPLICA);
    ck_assert_int_eq(sf_elect_alter_check(&p, s, 1, 5, 7, a12, bad_ep, 2),
                     SF_KERR_INELIGIBLE_REPLICA);
    sf_cluster_snapshot_unref(s);
    /* a replica that is not registered may not join */
    s = live_snap(live123, 1);
    ck_assert_int_eq(sf_elect_alter_check(&p, s, 1, 5, 7, a12, NULL, 2),
                     SF_KERR_INELIGIBLE_REPLICA);
    sf_cluster_snapshot_unref(s);
    ck_assert(sf_elect_same_set(a12, 2, (int32_t[]){2, 1}, 2));
    ck_assert(!sf_elect_same_set(a12, 2, a23, 2));
    ck_assert(!sf_elect_same_set(a12, 2, isr, 3));
    ck_assert(sf_elect_same_set(NULL, 0, NULL, 0));
}
END_TEST

/* ---- limits ---- */

static const char *const bad_json[] = {"", "{", "[]", "null", "1", "\"x\"", "{\"version\":1", "{}x",
                                       "{\"version\":1}{}", "\x01\x02", "{\"version\":1,\"version\":1}"};

START_TEST(test_malformed_everywhere) {
    size_t i;
    for (i = 0; i < sizeof(bad_json) / sizeof(bad_json[0]); i++) {
        sf_cluster_broker_t b;
        sf_cluster_topic_t t;
        sf_cluster_partition_t p = {0};
        sf_cluster_config_entry_t *c = (void *)1;
        int n = 5;
        int32_t id = 9;
        char *cid = (void *)1;
        const char *j = bad_json[i];
        ck_assert_int_eq(sf_znode_broker_decode(j, strlen(j), &b), SF_ERR_MALFORMED);
        ck_assert_ptr_null(b.host);
        ck_assert_int_eq(sf_znode_topic_decode(j, strlen(j), &t), SF_ERR_MALFORMED);
        ck_assert_ptr_null(t.partitions);
        ck_assert_int_eq(sf_znode_pstate_decode(j, strlen(j), &p), SF_ERR_MALFORMED);
        ck_assert_ptr_null(p.isr);
        ck_assert_int_eq(sf_znode_config_decode(j, strlen(j), &c, &n), SF_ERR_MALFORMED);
        ck_assert_ptr_null(c);
        ck_assert_int_eq(n, 0);
        ck_assert_int_eq(sf_znode_controller_decode(j, strlen(j), &id), SF_ERR_MALFORMED);
        ck_assert_int_eq(id, 9);
        ck_assert_int_eq(sf_znode_cluster_id_decode(j, strlen(j), &cid), SF_ERR_MALFORMED);
        ck_assert_ptr_null(cid);
    }
    /* NULL input, and a length that cuts a valid document short */
    {
        sf_cluster_broker_t b;
        const char *ok = "{\"version\":1,\"host\":\"h\",\"port\":1,\"endpoints\":[]}";
        ck_assert_int_eq(sf_znode_broker_decode(NULL, 0, &b), SF_ERR_MALFORMED);
        ck_assert_int_eq(sf_znode_broker_decode(ok, strlen(ok) - 1, &b), SF_ERR_MALFORMED);
        ck_assert_int_eq(sf_znode_broker_decode(ok, strlen(ok), &b), SF_OK);
        sf_cluster_broker_clear(&b);
    }
}
END_TEST

START_TEST(test_broker_wrong_types) {
    static const char *const bad[] = {
        "{\"host\":\"h\",\"port\":1,\"endpoints\":[]}",                     /* no version */
        "{\"version\":0,\"host\":\"h\",\"port\":1,\"endpoints\":[]}",       /* version 0 */
        "{\"version\":\"1\",\"host\":\"h\",\"port\":1,\"endpoints\":[]}",   /* version string */
        "{\"version\":1,\"port\":1,\"endpoints\":[]}",                      /* no host */
        "{\"version\":1,\"host\":5,\"port\":1,\"endpoints\":[]}",           /* host int */
        "{\"version\":1,\"host\":\"h\",\"port\":\"1\",\"endpoints\":[]}",   /* port string */
        "{\"version\":1,\"host\":\"h\",\"port\":70000,\"endpoints\":[]}",   /* port range */
        "{\"version\":1,\"host\":\"h\",\"port\":1.5,\"endpoints\":[]}",     /* port real */
        "{\"version\":1,\"host\":\"h\",\"port\":1}",                        /* no endpoints */
        "{\"version\":1,\"host\":\"h\",\"port\":1,\"endpoints\":\"x\"}",    /* not an array */
        "{\"version\":1,\"host\":\"h\",\"port\":1,\"endpoints\":[1]}",      /* element int */
        "{\"version\":1,\"host\":\"h\",\"port\":1,\"endpoints\":[],\"rack\":7}", /* rack int */
    };
    size_t i;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        sf_cluster_broker_t b;
        ck_assert_msg(sf_znode_broker_decode(bad[i], strlen(bad[i]), &b) == SF_ERR_MALFORMED,
                      "accepted %s", bad[i]);
        ck_assert_ptr_null(b.endpoints);
    }
}
END_TEST

START_TEST(test_topic_wrong_types) {
    static const char *const bad[] = {
        "{\"version\":1}",                                          /* no partitions */
        "{\"version\":1,\"partitions\":[]}",                        /* not an object */
        "{\"version\":1,\"partitions\":{\"0\":[1],\"2\":[1]}}",     /* gap */
        "{\"version\":1,\"partitions\":{\"1\":[1]}}",               /* does not start at 0 */
        "{\"version\":1,\"partitions\":{\"01\":[1],\"1\":[1]}}",    /* leading zero */
        "{\"version\":1,\"partitions\":{\"-1\":[1]}}",              /* negative */
        "{\"version\":1,\"partitions\":{\"0\":[1],\"2147483648\":[1]}}", /* key > int32 */
        "{\"version\":1,\"partitions\":{\"0\":[1],\"4294967297\":[1]}}", /* wraps to 1 */
        "{\"version\":1,\"partitions\":{\"0\":[1],\"00000000001\":[1]}}",
        "{\"version\":1,\"partitions\":{\"a\":[1]}}",               /* not a number */
        "{\"version\":1,\"partitions\":{\"\":[1]}}",                /* empty key */
        "{\"version\":1,\"partitions\":{\"0\":[]}}",                /* no replicas */
        "{\"version\":1,\"partitions\":{\"0\":[-1]}}",              /* negative id */
        "{\"version\":1,\"partitions\":{\"0\":[\"1\"]}}",           /* id string */
        "{\"version\":1,\"partitions\":{\"0\":[3000000000]}}",      /* id > int32 */
        "{\"version\":1,\"partitions\":{\"0\":1}}",                 /* not an array */
        "{\"version\":1,\"topic_id\":\"short\",\"partitions\":{}}", /* bad uuid */
        "{\"version\":1,\"topic_id\":\"AAECAwQFBgcICQoLDA0OD!\",\"partitions\":{}}",
        "{\"version\":1,\"topic_id\":5,\"partitions\":{}}",
    };
    size_t i;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        sf_cluster_topic_t t;
        ck_assert_msg(sf_znode_topic_decode(bad[i], strlen(bad[i]), &t) == SF_ERR_MALFORMED,
                      "accepted %s", bad[i]);
        ck_assert_ptr_null(t.partitions);
        ck_assert_int_eq(t.npartitions, 0);
    }
}
END_TEST

START_TEST(test_pstate_config_controller_wrong_types) {
    static const char *const bad_state[] = {
        "{\"version\":1,\"leader_epoch\":0,\"isr\":[1],\"controller_epoch\":1}",
        "{\"version\":1,\"leader\":-2,\"leader_epoch\":0,\"isr\":[1],\"controller_epoch\":1}",
        "{\"version\":1,\"leader\":\"1\",\"leader_epoch\":0,\"isr\":[1],\"controller_epoch\":1}",
        "{\"version\":1,\"leader\":1,\"isr\":[1],\"controller_epoch\":1}",
        "{\"version\":1,\"leader\":1,\"leader_epoch\":-1,\"isr\":[1],\"controller_epoch\":1}",
        "{\"version\":1,\"leader\":1,\"leader_epoch\":0,\"controller_epoch\":1}",
        "{\"version\":1,\"leader\":1,\"leader_epoch\":0,\"isr\":[\"1\"],\"controller_epoch\":1}",
        "{\"version\":1,\"leader\":1,\"leader_epoch\":0,\"isr\":{},\"controller_epoch\":1}",
        "{\"version\":1,\"leader\":1,\"leader_epoch\":0,\"isr\":[1]}",
        "{\"leader\":1,\"leader_epoch\":0,\"isr\":[1],\"controller_epoch\":1}",
        "{\"version\":1,\"leader\":true,\"leader_epoch\":0,\"isr\":[1],\"controller_epoch\":1}",
    };
    static const char *const bad_cfg[] = {"{\"version\":1}", "{\"config\":{}}",
                                          "{\"version\":1,\"config\":[]}",
                                          "{\"version\":1,\"config\":{\"a\":1}}",
                                          "{\"version\":1,\"config\":{\"a\":null}}"};
    static const char *const bad_ctrl[] = {"{\"version\":1}", "{\"brokerid\":1}",
                                           "{\"version\":1,\"brokerid\":-1}",
                                           "{\"version\":1,\"brokerid\":\"1\"}"};
    static const char *const bad_epoch[] = {"", "-1", "1a", " 1", "99999999999", "2147483648", "1.0"};
    static const char *const bad_id[] = {"{\"version\":1}", "{\"version\":1,\"id\":\"\"}",
                                         "{\"version\":1,\"id\":5}", "{\"id\":\"x\"}"};
    size_t i;
    for (i = 0; i < sizeof(bad_state) / sizeof(bad_state[0]); i++) {
        sf_cluster_partition_t p = {.leader = 42};
        ck_assert_msg(sf_znode_pstate_decode(bad_state[i], strlen(bad_state[i]), &p) ==
                          SF_ERR_MALFORMED,
                      "accepted %s", bad_state[i]);
        ck_assert_int_eq(p.leader, 42); /* untouched on failure */
    }
    for (i = 0; i < sizeof(bad_cfg) / sizeof(bad_cfg[0]); i++) {
        sf_cluster_config_entry_t *c;
        int n;
        ck_assert_msg(sf_znode_config_decode(bad_cfg[i], strlen(bad_cfg[i]), &c, &n) ==
                          SF_ERR_MALFORMED,
                      "accepted %s", bad_cfg[i]);
    }
    for (i = 0; i < sizeof(bad_ctrl) / sizeof(bad_ctrl[0]); i++) {
        int32_t id;
        ck_assert_msg(sf_znode_controller_decode(bad_ctrl[i], strlen(bad_ctrl[i]), &id) ==
                          SF_ERR_MALFORMED,
                      "accepted %s", bad_ctrl[i]);
    }
    for (i = 0; i < sizeof(bad_epoch) / sizeof(bad_epoch[0]); i++) {
        int32_t e;
        ck_assert_msg(sf_znode_epoch_decode(bad_epoch[i], strlen(bad_epoch[i]), &e) ==
                          SF_ERR_MALFORMED,
                      "accepted %s", bad_epoch[i]);
    }
    ck_assert_int_eq(sf_znode_epoch_decode(NULL, 0, NULL), SF_ERR_MALFORMED);
    for (i = 0; i < sizeof(bad_id) / sizeof(bad_id[0]); i++) {
        char *id;
        ck_assert_msg(sf_znode_cluster_id_decode(bad_id[i], strlen(bad_id[i]), &id) == SF_ERR_MALFORMED,
                      "accepted %s", bad_id[i]);
    }
}
END_TEST

/* A JSON array of @n small integers in @key, with a prefix/suffix. */
static char *json_with_array(const char *prefix, int n, const char *suffix) {
    size_t cap = strlen(prefix) + strlen(suffix) + (size_t)n * 4 + 8, len;
    char *s = malloc(cap);
    int i;
    len = (size_t)sprintf(s, "%s[", prefix);
    for (i = 0; i < n; i++)
        len += (size_t)sprintf(s + len, "%s%d", i ? "," : "", i % 100);
    sprintf(s + len, "]%s", suffix);
    return s;
}

START_TEST(test_oversized_arrays) {
    sf_cluster_partition_t p = {0};
    sf_cluster_broker_t b;
    sf_cluster_topic_t t;
    sf_cluster_config_entry_t *c;
    char *s, *q;
    size_t len, cap;
    int n, i;

    /* isr at the limit is fine, one more is rejected */
    s = json_with_array("{\"version\":1,\"leader\":1,\"leader_epoch\":0,\"controller_epoch\":0,\"isr\":",
                        SF_CLUSTER_MAX_REPLICAS, "}");
    ck_assert_int_eq(sf_znode_pstate_decode(s, strlen(s), &p), SF_OK);
    ck_assert_int_eq(p.nisr, SF_CLUSTER_MAX_REPLICAS);
    sf_cluster_partition_clear(&p);
    free(s);
    s = json_with_array("{\"version\":1,\"leader\":1,\"leader_epoch\":0,\"controller_epoch\":0,\"isr\":",
                        SF_CLUSTER_MAX_REPLICAS + 1, "}");
    ck_assert_int_eq(sf_znode_pstate_decode(s, strlen(s), &p), SF_ERR_MALFORMED);
    ck_assert_ptr_null(p.isr);
    free(s);

    /* replicas */
    s = json_with_array("{\"version\":1,\"partitions\":{\"0\":", SF_CLUSTER_MAX_REPLICAS + 1, "}}");
    ck_assert_int_eq(sf_znode_topic_decode(s, strlen(s), &t), SF_ERR_MALFORMED);
    free(s);

    /* endpoints */
    cap = 64 + (SF_CLUSTER_MAX_ENDPOINTS + 1) * 8;
    s = malloc(cap);
    len = (size_t)sprintf(s, "{\"version\":1,\"host\":\"h\",\"port\":1,\"endpoints\":[");
    for (i = 0; i <= SF_CLUSTER_MAX_ENDPOINTS; i++)
        len += (size_t)sprintf(s + len, "%s\"e%d\"", i ? "," : "", i);
    strcpy(s + len, "]}");
    ck_assert_int_eq(sf_znode_broker_decode(s, strlen(s), &b), SF_ERR_MALFORMED);
    free(s);

    /* configs */
    cap = 64 + (SF_CLUSTER_MAX_CONFIGS + 1) * 24;
    s = malloc(cap);
    len = (size_t)sprintf(s, "{\"version\":1,\"config\":{");
    for (i = 0; i <= SF_CLUSTER_MAX_CONFIGS; i++)
        len += (size_t)sprintf(s + len, "%s\"k%d\":\"v\"", i ? "," : "", i);
    strcpy(s + len, "}}");
    ck_assert_int_eq(sf_znode_config_decode(s, strlen(s), &c, &n), SF_ERR_MALFORMED);
    ck_assert_ptr_null(c);
    free(s);

    /* partitions: one over the limit */
    cap = 64 + (size_t)(SF_CLUSTER_MAX_PARTITIONS + 1) * 16;
    s = malloc(cap);
    len = (size_t)sprintf(s, "{\"version\":1,\"partitions\":{");
    for (i = 0; i <= SF_CLUSTER_MAX_PARTITIONS; i++)
        len += (size_t)sprintf(s + len, "%s\"%d\":[1]", i ? "," : "", i);
    q = s + len;
    strcpy(q, "}}");
    ck_assert_int_eq(sf_znode_topic_decode(s, strlen(s), &t), SF_ERR_MALFORMED);
    ck_assert_ptr_null(t.partitions);
    free(s);

    /* deeply nested input must not crash the parser */
    cap = 200000;
    s = malloc(cap + 1);
    memset(s, '[', cap);
    s[cap] = '\0';
    ck_assert_int_eq(sf_znode_topic_decode(s, cap, &t), SF_ERR_MALFORMED);
    free(s);
}
END_TEST

/* Rack-aware boundaries: one broker, one rack, more replicas than racks (Kafka's
 * testMoreReplicasThanRacks), and the arguments refused as without racks. */
START_TEST(test_assign_racks_limits) {
    static const int32_t ids[] = {0, 1, 2, 3, 4, 5};
    static const char *const racks[] = {"rack1", "rack2", "rack2", "rack3", "rack3", "rack2"};
    static const char *const one_rack[] = {"r", "r"};
    int32_t out[6 * 5];
    int p, k;
    ck_assert_int_eq(sf_placement_assign(ids, racks, 1, 3, 1, 0, -1, out), SF_OK);
    ck_assert_int_eq(out[0] + out[1] + out[2], 0);
    ck_assert_int_eq(sf_placement_assign(ids, one_rack, 2, 4, 2, 0, 1, out), SF_OK);
    for (p = 0; p < 4; p++)
        ck_assert_int_ne(out[p * 2], out[p * 2 + 1]);
    for (k = 0; k < 20; k++) {
        ck_assert_int_eq(sf_placement_assign(ids, racks, 6, 6, 5, 0, -1, out), SF_OK);
        for (p = 0; p < 6; p++) {
            int seen[4] = {0, 0, 0, 0}, i, n = 0;
            ck_assert(distinct(out + p * 5, 5));
            for (i = 0; i < 5; i++) {
                int r = racks[out[p * 5 + i]][4] - '0';
                n += !seen[r];
                seen[r] = 1;
            }
            ck_assert_int_eq(n, 3);
        }
    }
    ck_assert_int_eq(sf_placement_assign(ids, racks, 6, 1, 7, 0, -1, out), SF_ERR_INVALID);
    ck_assert_int_eq(sf_placement_assign(ids, racks, 6, 1, 1, 0, 6, out), SF_ERR_INVALID);
    ck_assert_int_eq(sf_placement_assign(ids, racks, 6, 0, 1, 0, -1, out), SF_ERR_INVALID);
    ck_assert_int_eq(sf_placement_assign(ids, racks, 0, 1, 1, 0, -1, out), SF_ERR_INVALID);
}
END_TEST

START_TEST(test_misc_limits) {
    static const int32_t brokers[] = {1, 2};
    int32_t out[8];
    uint8_t u[16];
    ck_assert_int_eq(sf_placement_assign(brokers, NULL, 2, 2, 3, 0, -1, out), SF_ERR_INVALID);
    ck_assert_int_eq(sf_placement_assign(brokers, NULL, 2, 0, 1, 0, -1, out), SF_ERR_INVALID);
    ck_assert_int_eq(sf_placement_assign(brokers, NULL, 0, 1, 1, 0, -1, out), SF_ERR_INVALID);
    ck_assert_int_eq(sf_placement_assign(brokers, NULL, 2, 1, 1, -1, -1, out), SF_ERR_INVALID);
    ck_assert_int_eq(sf_placement_assign(brokers, NULL, 2, 1, 1, 0, 2, out), SF_ERR_INVALID);
    ck_assert_int_eq(sf_placement_assign(brokers, NULL, 1, 4, 1, 0, -1, out), SF_OK);
    ck_assert_int_eq(out[3], 1);
    ck_assert_int_eq(sf_znode_uuid_from_str("AAECAwQFBgcICQoLDA0OD", u), SF_ERR_MALFORMED);
    ck_assert_int_eq(sf_znode_uuid_from_str("AAECAwQFBgcICQoLDA0ODwA", u), SF_ERR_MALFORMED);
    ck_assert_int_eq(sf_znode_uuid_from_str("AAECAwQFBgcICQoLDA0OD=", u), SF_ERR_MALFORMED);
    ck_assert_int_eq(sf_znode_uuid_from_str(NULL, u), SF_ERR_MALFORMED);
    /* an empty snapshot */
    {
        sf_cluster_snapshot_t *s = sf_cluster_snapshot_build(NULL, -1, -1, NULL, 0, NULL, 0);
        ck_assert_ptr_nonnull(s);
        ck_assert_ptr_null(sf_cluster_snapshot_topic(s, "a"));
        ck_assert_ptr_null(sf_cluster_snapshot_broker(s, 1));
        sf_cluster_snapshot_unref(s);
    }
}
END_TEST

static Suite *cluster_suite(void) {
    Suite *s = suite_create("cluster");
    TCase *core = tcase_create("core"), *limits = tcase_create("limits");
    tcase_add_test(core, test_broker_golden);
    tcase_add_test(core, test_broker_encode);
    tcase_add_test(core, test_topic_golden);
    tcase_add_test(core, test_topic_encode);
    tcase_add_test(core, test_pstate_golden);
    tcase_add_test(core, test_config_golden);
    tcase_add_test(core, test_broker_configs);
    tcase_add_test(core, test_controller_epoch_id_golden);
    tcase_add_test(core, test_preferred_election_golden);
    tcase_add_test(core, test_uuid);
    tcase_add_test(core, test_assign_kafka_vector);
    tcase_add_test(core, test_assign_random_spreads);
    tcase_add_test(core, test_assign_racks_kafka_vector);
    tcase_add_test(core, test_assign_racks_alternated);
    tcase_add_test(core, test_assign_racks_spread);
    tcase_add_test(core, test_assign_racks_mixed);
    tcase_add_test(core, test_snapshot_lookup);
    tcase_add_test(core, test_topic_names);
    tcase_add_test(core, test_elect_initial);
    tcase_add_test(core, test_elect_failover);
    tcase_add_test(core, test_elect_offline_unclean);
    tcase_add_test(core, test_elect_shrink);
    tcase_add_test(core, test_elect_shutdown);
    tcase_add_test(core, test_elect_avoid_shutting_down);
    tcase_add_test(core, test_elect_preferred);
    tcase_add_test(core, test_reassign_start);
    tcase_add_test(core, test_reassign_finish);
    tcase_add_test(core, test_elect_imbalanced);
    tcase_add_test(core, test_elect_alter_check);
    tcase_add_test(limits, test_malformed_everywhere);
    tcase_add_test(limits, test_partitions_check);
    tcase_add_test(limits, test_broker_wrong_types);
    tcase_add_test(limits, test_topic_wrong_types);
    tcase_add_test(limits, test_pstate_config_controller_wrong_types);
    tcase_add_test(limits, test_oversized_arrays);
    tcase_add_test(limits, test_misc_limits);
    tcase_add_test(limits, test_assign_racks_limits);
    tcase_set_timeout(limits, 60);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(cluster_suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
