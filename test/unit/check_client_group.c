/* Unit tests for the consumer group client (client/assignor.h, client/cgroup.h): the range,
 * roundrobin and cooperative-sticky assignors against Kafka's documented results and
 * invariants (every partition once, balance, stickiness, two-phase moves), the consumer
 * protocol's subscription and assignment encodings (golden bytes, every version, newer
 * versions, truncation), the group request codec helpers, and the group configuration keys.
 * With SF_GROUP_TEST_BOOTSTRAP=host:port[,...] a "live" case also runs a group of two
 * consumers against that cluster (rebalance callbacks, commits, pattern subscription,
 * unsubscribe, the admin view). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assignor.h"
#include "buf.h"
#include "cgroup.h"
#include "clientconf.h"
#include "err.h"
#include "proto.h"

/* ------------------------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------------------------ */

/* A member subscribed to @topics (NULL-terminated list, borrowed). */
static sf_assignor_member_t member(const char *id, const char *const *topics) {
    sf_assignor_member_t m;
    memset(&m, 0, sizeof(m));
    m.member_id = id;
    m.topics = topics;
    while (topics[m.ntopics])
        m.ntopics++;
    m.generation = -1;
    return m;
}

/* "t0-0 t0-1 t1-0" for a member's assignment. */
static const char *show(const sf_assignor_member_t *m) {
    static char buf[4096];
    size_t i, off = 0;
    buf[0] = '\0';
    for (i = 0; i < m->nassigned && off < sizeof(buf); i++)
        off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s-%d", i ? " " : "",
                                m->assigned[i].topic, (int)m->assigned[i].partition);
    return buf;
}

/* Every partition of @topics is assigned at most once, only to a subscriber; returns how many
 * are assigned. */
static size_t check_disjoint(const sf_assignor_topic_t *topics, size_t ntopics,
                             const sf_assignor_member_t *mb, size_t n) {
    size_t t, m, k, j, total = 0;
    for (t = 0; t < ntopics; t++) {
        for (k = 0; k < (size_t)topics[t].partitions; k++) {
            int owners = 0;
            for (m = 0; m < n; m++)
                for (j = 0; j < mb[m].nassigned; j++)
                    if (strcmp(mb[m].assigned[j].topic, topics[t].name) == 0 &&
                        mb[m].assigned[j].partition == (int32_t)k) {
                        size_t s;
                        int sub = 0;
                        for (s = 0; s < mb[m].ntopics; s++)
                            sub |= strcmp(mb[m].topics[s], topics[t].name) == 0;
                        ck_assert_msg(sub, "%s-%zu went to %s, not subscribed", topics[t].name,
                                      k, mb[m].member_id);
                        owners++;
                    }
            ck_assert_int_le(owners, 1);
            total += (size_t)owners;
        }
    }
    return total;
}

/* The owned list of a member from its last assignment (for the next round). */
static void take_owned(sf_assignor_member_t *m, sf_assignor_tp_t *store, int32_t generation) {
    if (m->nassigned)
        memcpy(store, m->assigned, m->nassigned * sizeof(*store));
    m->owned = store;
    m->nowned = m->nassigned;
    m->generation = generation;
}

static int is_assigned(const sf_assignor_member_t *m, const char *topic, int32_t partition) {
    size_t i;
    for (i = 0; i < m->nassigned; i++)
        if (m->assigned[i].partition == partition && strcmp(m->assigned[i].topic, topic) == 0)
            return 1;
    return 0;
}

/* ------------------------------------------------------------------------------------------
 * Names
 * ------------------------------------------------------------------------------------------ */

START_TEST(test_names) {
    sf_assignor_kind_t k;
    ck_assert_int_eq(sf_assignor_parse("range", &k), SF_OK);
    ck_assert_int_eq(k, SF_ASSIGNOR_RANGE);
    ck_assert_int_eq(sf_assignor_parse("roundrobin", &k), SF_OK);
    ck_assert_int_eq(k, SF_ASSIGNOR_ROUNDROBIN);
    ck_assert_int_eq(sf_assignor_parse("cooperative-sticky", &k), SF_OK);
    ck_assert_int_eq(k, SF_ASSIGNOR_COOPERATIVE_STICKY);
    ck_assert_int_eq(sf_assignor_parse("org.apache.kafka.clients.consumer.RoundRobinAssignor", &k),
                     SF_OK);
    ck_assert_int_eq(k, SF_ASSIGNOR_ROUNDROBIN);
    ck_assert_int_eq(sf_assignor_parse("sticky", &k), SF_ERR_NOTFOUND);
    ck_assert_int_eq(sf_assignor_parse("", &k), SF_ERR_NOTFOUND);
    ck_assert_str_eq(sf_assignor_name(SF_ASSIGNOR_COOPERATIVE_STICKY), "cooperative-sticky");
    ck_assert(sf_assignor_cooperative(SF_ASSIGNOR_COOPERATIVE_STICKY));
    ck_assert(!sf_assignor_cooperative(SF_ASSIGNOR_RANGE));
    ck_assert(!sf_assignor_cooperative(SF_ASSIGNOR_ROUNDROBIN));
}
END_TEST

/* ------------------------------------------------------------------------------------------
 * range
 * ------------------------------------------------------------------------------------------ */

/* Kafka's RangeAssignor documentation: C0, C1 subscribed to t0 and t1 of 3 partitions each. */
START_TEST(test_range_kafka_example) {
    static const char *const both[] = {"t0", "t1", NULL};
    sf_assignor_topic_t topics[] = {{"t1", 3}, {"t0", 3}};
    sf_assignor_member_t mb[2];
    mb[0] = member("C1", both); /* member order comes from the ids, not the array */
    mb[1] = member("C0", both);
    ck_assert_int_eq(sf_assignor_assign(SF_ASSIGNOR_RANGE, topics, 2, mb, 2), SF_OK);
    ck_assert_str_eq(show(&mb[1]), "t0-0 t0-1 t1-0 t1-1");
    ck_assert_str_eq(show(&mb[0]), "t0-2 t1-2");
    sf_assignor_members_clear(mb, 2);
}
END_TEST

START_TEST(test_range_uneven_and_static) {
    static const char *const t[] = {"t", NULL};
    static const char *const u[] = {"u", NULL};
    sf_assignor_topic_t topics[] = {{"t", 7}, {"u", 2}};
    sf_assignor_member_t mb[4];
    mb[0] = member("a", t);
    mb[1] = member("b", t);
    mb[2] = member("c", t);
    mb[3] = member("d", u);
    /* A static member comes before the dynamic ones whatever its member id. */
    mb[2].instance_id = "i-1";
    ck_assert_int_eq(sf_assignor_assign(SF_ASSIGNOR_RANGE, topics, 2, mb, 4), SF_OK);
    ck_assert_str_eq(show(&mb[2]), "t-0 t-1 t-2");
    ck_assert_str_eq(show(&mb[0]), "t-3 t-4");
    ck_assert_str_eq(show(&mb[1]), "t-5 t-6");
    ck_assert_str_eq(show(&mb[3]), "u-0 u-1");
    ck_assert_uint_eq(check_disjoint(topics, 2, mb, 4), 9);
    sf_assignor_members_clear(mb, 4);
}
END_TEST

/* ------------------------------------------------------------------------------------------
 * roundrobin
 * ------------------------------------------------------------------------------------------ */

START_TEST(test_roundrobin_kafka_examples) {
    static const char *const both[] = {"t0", "t1", NULL};
    static const char *const s0[] = {"t0", NULL};
    static const char *const s1[] = {"t0", "t1", NULL};
    static const char *const s2[] = {"t0", "t1", "t2", NULL};
    sf_assignor_topic_t topics[] = {{"t0", 3}, {"t1", 3}};
    sf_assignor_topic_t topics2[] = {{"t2", 3}, {"t1", 2}, {"t0", 1}};
    sf_assignor_member_t mb[3];
    /* The documented equal case: C0 t0p0 t0p2 t1p1, C1 t0p1 t1p0 t1p2. */
    mb[0] = member("C0", both);
    mb[1] = member("C1", both);
    ck_assert_int_eq(sf_assignor_assign(SF_ASSIGNOR_ROUNDROBIN, topics, 2, mb, 2), SF_OK);
    ck_assert_str_eq(show(&mb[0]), "t0-0 t0-2 t1-1");
    ck_assert_str_eq(show(&mb[1]), "t0-1 t1-0 t1-2");
    sf_assignor_members_clear(mb, 2);
    /* The documented unequal case. */
    mb[0] = member("C0", s0);
    mb[1] = member("C1", s1);
    mb[2] = member("C2", s2);
    ck_assert_int_eq(sf_assignor_assign(SF_ASSIGNOR_ROUNDROBIN, topics2, 3, mb, 3), SF_OK);
    ck_assert_str_eq(show(&mb[0]), "t0-0");
    ck_assert_str_eq(show(&mb[1]), "t1-0");
    ck_assert_str_eq(show(&mb[2]), "t1-1 t2-0 t2-1 t2-2");
    sf_assignor_members_clear(mb, 3);
}
END_TEST

/* ------------------------------------------------------------------------------------------
 * cooperative-sticky
 * ------------------------------------------------------------------------------------------ */

START_TEST(test_sticky_fresh_balanced) {
    static const char *const t[] = {"t", "u", NULL};
    sf_assignor_topic_t topics[] = {{"t", 7}, {"u", 4}};
    sf_assignor_member_t mb[3];
    size_t i, lo = 99, hi = 0;
    mb[0] = member("m2", t);
    mb[1] = member("m0", t);
    mb[2] = member("m1", t);
    ck_assert_int_eq(sf_assignor_assign(SF_ASSIGNOR_COOPERATIVE_STICKY, topics, 2, mb, 3),
                     SF_OK);
    ck_assert_uint_eq(check_disjoint(topics, 2, mb, 3), 11);
    for (i = 0; i < 3; i++) {
        lo = mb[i].nassigned < lo ? mb[i].nassigned : lo;
        hi = mb[i].nassigned > hi ? mb[i].nassigned : hi;
    }
    ck_assert_uint_eq(lo, 3);
    ck_assert_uint_eq(hi, 4);
    sf_assignor_members_clear(mb, 3);
}
END_TEST

/* A second member joins one that owns everything: the partitions that move are revoked in
 * this generation (nobody gets them) and handed out in the next; the rest stay put. */
START_TEST(test_sticky_two_phase_move) {
    static const char *const t[] = {"t", NULL};
    sf_assignor_topic_t topics[] = {{"t", 6}};
    sf_assignor_tp_t owned_a[6], owned_b[6];
    sf_assignor_member_t mb[2];
    int32_t p;
    mb[0] = member("a", t);
    ck_assert_int_eq(sf_assignor_assign(SF_ASSIGNOR_COOPERATIVE_STICKY, topics, 1, mb, 1),
                     SF_OK);
    ck_assert_uint_eq(mb[0].nassigned, 6);
    take_owned(&mb[0], owned_a, 1);
    mb[1] = member("b", t);
    /* Generation 2: a keeps 3, 3 are revoked, b gets none yet. */
    ck_assert_int_eq(sf_assignor_assign(SF_ASSIGNOR_COOPERATIVE_STICKY, topics, 1, mb, 2),
                     SF_OK);
    ck_assert_uint_eq(mb[0].nassigned, 3);
    ck_assert_uint_eq(mb[1].nassigned, 0);
    take_owned(&mb[0], owned_a, 2);
    take_owned(&mb[1], owned_b, 2);
    /* Generation 3: a keeps its 3, b gets the other 3. */
    ck_assert_int_eq(sf_assignor_assign(SF_ASSIGNOR_COOPERATIVE_STICKY, topics, 1, mb, 2),
                     SF_OK);
    ck_assert_uint_eq(mb[0].nassigned, 3);
    ck_assert_uint_eq(mb[1].nassigned, 3);
    for (p = 0; p < 3; p++)
        ck_assert(is_assigned(&mb[0], "t", owned_a[p].partition));
    ck_assert_uint_eq(check_disjoint(topics, 1, mb, 2), 6);
    sf_assignor_members_clear(mb, 2);
}
END_TEST

/* Owned partitions that are still valid and balanced never move. */
START_TEST(test_sticky_keeps_balanced_owners) {
    static const char *const t[] = {"t", NULL};
    sf_assignor_topic_t topics[] = {{"t", 4}};
    sf_assignor_tp_t oa[] = {{"t", 3}, {"t", 1}}, ob[] = {{"t", 0}};
    sf_assignor_member_t mb[2];
    mb[0] = member("a", t);
    mb[1] = member("b", t);
    mb[0].owned = oa;
    mb[0].nowned = 2;
    mb[0].generation = 4;
    mb[1].owned = ob;
    mb[1].nowned = 1;
    mb[1].generation = 4;
    ck_assert_int_eq(sf_assignor_assign(SF_ASSIGNOR_COOPERATIVE_STICKY, topics, 1, mb, 2),
                     SF_OK);
    ck_assert_str_eq(show(&mb[0]), "t-1 t-3");
    ck_assert_str_eq(show(&mb[1]), "t-0 t-2");
    sf_assignor_members_clear(mb, 2);
}
END_TEST

/* Two members claim one partition: the newer generation's claim holds; claims of topics no
 * longer subscribed or partitions that no longer exist are dropped. */
START_TEST(test_sticky_claims) {
    static const char *const t[] = {"t", NULL};
    static const char *const u[] = {"u", NULL};
    sf_assignor_topic_t topics[] = {{"t", 2}, {"u", 2}};
    sf_assignor_tp_t oa[] = {{"t", 0}, {"t", 9}}, ob[] = {{"t", 0}, {"t", 1}};
    sf_assignor_member_t mb[2];
    mb[0] = member("a", t);
    mb[1] = member("b", u);
    mb[0].owned = oa;
    mb[0].nowned = 2;
    mb[0].generation = 3;
    mb[1].owned = ob; /* b left t for u: its claims on t go */
    mb[1].nowned = 2;
    mb[1].generation = 7;
    ck_assert_int_eq(sf_assignor_assign(SF_ASSIGNOR_COOPERATIVE_STICKY, topics, 2, mb, 2),
                     SF_OK);
    ck_assert_str_eq(show(&mb[0]), "t-0 t-1");
    ck_assert_str_eq(show(&mb[1]), "u-0 u-1");
    sf_assignor_members_clear(mb, 2);
    /* Both subscribed to t, both claiming t-0: b's newer generation wins. */
    mb[1] = member("b", t);
    mb[1].owned = ob;
    mb[1].nowned = 1;
    mb[1].generation = 7;
    ck_assert_int_eq(sf_assignor_assign(SF_ASSIGNOR_COOPERATIVE_STICKY, topics, 2, mb, 2),
                     SF_OK);
    ck_assert(is_assigned(&mb[1], "t", 0));
    ck_assert(!is_assigned(&mb[0], "t", 0));
    sf_assignor_members_clear(mb, 2);
}
END_TEST

/* Subscriptions that differ: as even as the subscriptions allow. */
START_TEST(test_sticky_heterogeneous) {
    static const char *const all[] = {"t", "u", NULL};
    static const char *const t[] = {"t", NULL};
    sf_assignor_topic_t topics[] = {{"t", 3}, {"u", 3}};
    sf_assignor_member_t mb[2];
    mb[0] = member("a", all);
    mb[1] = member("b", t);
    ck_assert_int_eq(sf_assignor_assign(SF_ASSIGNOR_COOPERATIVE_STICKY, topics, 2, mb, 2),
                     SF_OK);
    ck_assert_uint_eq(check_disjoint(topics, 2, mb, 2), 6);
    ck_assert_uint_eq(mb[0].nassigned, 3); /* u's three; b takes all of t */
    ck_assert_uint_eq(mb[1].nassigned, 3);
    ck_assert(is_assigned(&mb[0], "u", 0));
    sf_assignor_members_clear(mb, 2);
}
END_TEST

/* ------------------------------------------------------------------------------------------
 * Encodings
 * ------------------------------------------------------------------------------------------ */

static void expect_bytes(const sf_wbuf_t *wb, const uint8_t *want, size_t len) {
    ck_assert_uint_eq(wb->len, len);
    ck_assert_mem_eq(wb->p, want, len);
}

START_TEST(test_subscription_golden) {
    static const char *const topics[] = {"a", "bc"};
    static const uint8_t v0[] = {0, 0, 0, 0, 0, 2, 0, 1, 'a', 0, 2, 'b', 'c', 0xff, 0xff, 0xff,
                                 0xff};
    static const uint8_t v3[] = {0,   3,   0,    0,    0,    2,    0,    1,    'a',
                                 0,   2,   'b',  'c',  0,    0,    0,    4,    0,
                                 0,   0,   5,    /* UserData: 4 bytes, generation 5 */
                                 0,   0,   0,    1,    0,    1,    'a',  0,    0,
                                 0,   2,   0,    0,    0,    0,    0,    0,    0,
                                 1,   /* OwnedPartitions a: 0, 1 */
                                 0,   0,   0,    5,    /* GenerationId */
                                 0xff, 0xff /* RackId null */};
    sf_assignor_tp_t owned[] = {{"a", 1}, {"a", 0}};
    uint8_t gen[4] = {0, 0, 0, 5};
    sf_slice_t null = {NULL, -1}, ud = {gen, 4};
    sf_wbuf_t wb;
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_assignor_subscription_encode(&wb, 0, topics, 2, owned, 2, 5, null), SF_OK);
    expect_bytes(&wb, v0, sizeof(v0)); /* owned and generation are not in v0 */
    sf_wbuf_reset(&wb);
    ck_assert_int_eq(sf_assignor_subscription_encode(&wb, 3, topics, 2, owned, 2, 5, ud), SF_OK);
    expect_bytes(&wb, v3, sizeof(v3));
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_subscription_roundtrip) {
    static const char *const topics[] = {"x", "yy", "zzz"};
    sf_assignor_tp_t owned[] = {{"yy", 4}, {"x", 2}, {"yy", 1}};
    sf_proto_ConsumerProtocolSubscription_t sub;
    sf_slice_t null = {NULL, -1};
    sf_arena_t arena;
    sf_wbuf_t wb;
    int16_t v, got;
    for (v = 0; v <= SF_ASSIGNOR_SUBSCRIPTION_VERSION; v++) {
        sf_wbuf_init(&wb);
        sf_arena_init(&arena, 0);
        ck_assert_int_eq(sf_assignor_subscription_encode(&wb, v, topics, 3, owned, 3, 9, null),
                         SF_OK);
        ck_assert_int_eq(sf_assignor_subscription_decode(wb.p, wb.len, &arena, &got, &sub), SF_OK);
        ck_assert_int_eq(got, v);
        ck_assert_int_eq(sub.TopicsCount, 3);
        ck_assert(sf_slice_eq(sub.Topics[2], "zzz"));
        ck_assert_int_eq(sub.UserData.len, -1);
        ck_assert_int_eq(sub.OwnedPartitionsCount, v >= 1 ? 2 : 0);
        if (v >= 1) {
            ck_assert(sf_slice_eq(sub.OwnedPartitions[0].Topic, "x"));
            ck_assert(sf_slice_eq(sub.OwnedPartitions[1].Topic, "yy"));
            ck_assert_int_eq(sub.OwnedPartitions[1].PartitionsCount, 2);
            ck_assert_int_eq(sub.OwnedPartitions[1].Partitions[0], 1);
            ck_assert_int_eq(sub.OwnedPartitions[1].Partitions[1], 4);
        }
        ck_assert_int_eq(sub.GenerationId, v >= 2 ? 9 : -1);
        sf_arena_reset(&arena);
        sf_wbuf_free(&wb);
    }
}
END_TEST

/* A newer version than the codec knows is read as the newest (its fields come first). */
START_TEST(test_subscription_newer_version) {
    static const char *const topics[] = {"t"};
    sf_proto_ConsumerProtocolSubscription_t sub;
    sf_slice_t null = {NULL, -1};
    sf_arena_t arena;
    sf_wbuf_t wb;
    int16_t got;
    sf_wbuf_init(&wb);
    sf_arena_init(&arena, 0);
    ck_assert_int_eq(sf_assignor_subscription_encode(&wb, 3, topics, 1, NULL, 0, 2, null), SF_OK);
    wb.p[1] = 7;                      /* version 7 */
    sf_wbuf_raw(&wb, "\x01\x02\x03", 3); /* and a field the codec does not know */
    ck_assert_int_eq(sf_assignor_subscription_decode(wb.p, wb.len, &arena, &got, &sub), SF_OK);
    ck_assert_int_eq(got, 7);
    ck_assert_int_eq(sub.GenerationId, 2);
    ck_assert(sf_slice_eq(sub.Topics[0], "t"));
    sf_arena_reset(&arena);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_assignment_golden_and_roundtrip) {
    static const uint8_t v0[] = {0, 0, 0, 0, 0, 2, 0, 1, 't', 0, 0, 0, 2, 0, 0, 0, 0, 0, 0,
                                 0, 2, 0, 1, 'u', 0, 0, 0, 1, 0, 0, 0, 5, 0xff, 0xff, 0xff, 0xff};
    sf_assignor_tp_t tps[] = {{"t", 2}, {"u", 5}, {"t", 0}};
    sf_proto_ConsumerProtocolAssignment_t asg;
    sf_arena_t arena;
    sf_wbuf_t wb;
    int16_t v, got;
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_assignor_assignment_encode(&wb, 0, tps, 3), SF_OK);
    expect_bytes(&wb, v0, sizeof(v0));
    sf_wbuf_free(&wb);
    for (v = 0; v <= SF_ASSIGNOR_ASSIGNMENT_VERSION; v++) {
        sf_wbuf_init(&wb);
        sf_arena_init(&arena, 0);
        ck_assert_int_eq(sf_assignor_assignment_encode(&wb, v, tps, 3), SF_OK);
        ck_assert_int_eq(wb.p[1], v);
        ck_assert_int_eq(sf_assignor_assignment_decode(wb.p, wb.len, &arena, &got, &asg), SF_OK);
        ck_assert_int_eq(got, v);
        ck_assert_int_eq(asg.AssignedPartitionsCount, 2);
        ck_assert_int_eq(asg.AssignedPartitions[0].PartitionsCount, 2);
        ck_assert_int_eq(asg.AssignedPartitions[1].Partitions[0], 5);
        sf_arena_reset(&arena);
        sf_wbuf_free(&wb);
    }
}
END_TEST

START_TEST(test_userdata_generation) {
    uint8_t four[4] = {0, 0, 1, 2}, three[3] = {0, 0, 1};
    sf_slice_t ok = {four, 4}, short3 = {three, 3}, null = {NULL, -1};
    ck_assert_int_eq(sf_assignor_userdata_generation(ok), 258);
    ck_assert_int_eq(sf_assignor_userdata_generation(short3), -1);
    ck_assert_int_eq(sf_assignor_userdata_generation(null), -1);
}
END_TEST

/* ------------------------------------------------------------------------------------------
 * Group request codec helpers and partition lists
 * ------------------------------------------------------------------------------------------ */

START_TEST(test_commit_codec) {
    sf_topic_partition_t tps[] = {{"b", 1, 10, 0}, {"a", 0, 5, 0}, {"b", 0, 7, 0}};
    sf_proto_OffsetCommitRequest_t req;
    sf_proto_OffsetCommitResponse_t resp;
    sf_proto_OffsetCommitResponse_OffsetCommitResponseTopic_t rt[1];
    sf_proto_OffsetCommitResponse_OffsetCommitResponsePartition_t rp[2];
    sf_arena_t arena;
    sf_wbuf_t wb;
    sf_rbuf_t rb;
    int16_t v;
    for (v = 0; v <= SF_CGROUP_OFFSETCOMMIT_MAX; v++) {
        sf_wbuf_init(&wb);
        sf_arena_init(&arena, 0);
        ck_assert_int_eq(sf_cgroup_commit_encode(&wb, v, "g", 3, "m-1", NULL, tps, 3), SF_OK);
        sf_rbuf_init(&rb, wb.p, wb.len);
        ck_assert_int_eq(sf_proto_OffsetCommitRequest_decode(&rb, v, &arena, &req), SF_OK);
        ck_assert(sf_slice_eq(req.GroupId, "g"));
        ck_assert_int_eq(req.TopicsCount, 2);
        ck_assert(sf_slice_eq(req.Topics[0].Name, "a"));
        ck_assert_int_eq(req.Topics[1].PartitionsCount, 2);
        ck_assert_int_eq(req.Topics[1].Partitions[0].CommittedOffset, 7);
        ck_assert_int_eq(req.Topics[1].Partitions[1].CommittedOffset, 10);
        if (v >= 1) {
            ck_assert_int_eq(req.GenerationIdOrMemberEpoch, 3);
            ck_assert(sf_slice_eq(req.MemberId, "m-1"));
        }
        sf_arena_reset(&arena);
        sf_wbuf_free(&wb);
    }
    /* The answer: b/0 refused, a/0 missing from it. */
    sf_proto_OffsetCommitResponse_init(&resp);
    rt[0].Name = sf_slice_cstr("b");
    rt[0].PartitionsCount = 2;
    rt[0].Partitions = rp;
    rp[0].PartitionIndex = 0;
    rp[0].ErrorCode = SF_KERR_ILLEGAL_GENERATION;
    rp[1].PartitionIndex = 1;
    rp[1].ErrorCode = 0;
    resp.TopicsCount = 1;
    resp.Topics = rt;
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_proto_OffsetCommitResponse_encode(&wb, 8, &resp), SF_OK);
    sf_rbuf_init(&rb, wb.p, wb.len);
    ck_assert_int_eq(sf_cgroup_commit_decode(&rb, 8, tps, 3), SF_OK);
    ck_assert_int_eq(tps[0].err, 0);
    ck_assert_int_eq(tps[1].err, SF_ERROR_MALFORMED);
    ck_assert_int_eq(tps[2].err, SF_KERR_ILLEGAL_GENERATION);
    sf_wbuf_free(&wb);
}
END_TEST

static int fetched;
static void count_fetched(void *arg, sf_slice_t topic, int32_t partition, int64_t offset,
                          int16_t err) {
    (void)arg;
    ck_assert(sf_slice_eq(topic, "t"));
    ck_assert_int_eq(partition, 3);
    ck_assert_int_eq(offset, 42);
    ck_assert_int_eq(err, 0);
    fetched++;
}

START_TEST(test_fetch_codec) {
    sf_topic_partition_t tps[] = {{"t", 3, -1, 0}};
    sf_proto_OffsetFetchRequest_t req;
    sf_proto_OffsetFetchResponse_t resp;
    sf_proto_OffsetFetchResponse_OffsetFetchResponseGroup_t rg;
    sf_proto_OffsetFetchResponse_OffsetFetchResponseTopics_t rt;
    sf_proto_OffsetFetchResponse_OffsetFetchResponsePartitions_t rp;
    sf_arena_t arena;
    sf_wbuf_t wb;
    sf_rbuf_t rb;
    int16_t v, kerr;
    for (v = 0; v <= SF_CGROUP_OFFSETFETCH_MAX; v++) {
        sf_wbuf_init(&wb);
        sf_arena_init(&arena, 0);
        ck_assert_int_eq(sf_cgroup_fetch_encode(&wb, v, "g", tps, 1), SF_OK);
        sf_rbuf_init(&rb, wb.p, wb.len);
        ck_assert_int_eq(sf_proto_OffsetFetchRequest_decode(&rb, v, &arena, &req), SF_OK);
        if (v < 8)
            ck_assert_int_eq(req.Topics[0].PartitionIndexes[0], 3);
        else
            ck_assert_int_eq(req.Groups[0].Topics[0].PartitionIndexes[0], 3);
        sf_wbuf_reset(&wb);
        /* Every partition: a null list, which v0 and v1 cannot say. */
        ck_assert_int_eq(sf_cgroup_fetch_encode(&wb, v, "g", NULL, 0),
                         v < 2 ? SF_ERR_UNSUPPORTED : SF_OK);
        sf_arena_reset(&arena);
        sf_wbuf_free(&wb);
    }
    sf_proto_OffsetFetchResponse_init(&resp);
    memset(&rg, 0, sizeof(rg));
    memset(&rt, 0, sizeof(rt));
    memset(&rp, 0, sizeof(rp));
    rp.PartitionIndex = 3;
    rp.CommittedOffset = 42;
    rp.Metadata = sf_slice_cstr("");
    rt.Name = sf_slice_cstr("t");
    rt.PartitionsCount = 1;
    rt.Partitions = &rp;
    rg.GroupId = sf_slice_cstr("g");
    rg.TopicsCount = 1;
    rg.Topics = &rt;
    rg.ErrorCode = SF_KERR_COORDINATOR_LOAD_IN_PROGRESS;
    resp.GroupsCount = 1;
    resp.Groups = &rg;
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_proto_OffsetFetchResponse_encode(&wb, 8, &resp), SF_OK);
    sf_rbuf_init(&rb, wb.p, wb.len);
    fetched = 0;
    ck_assert_int_eq(sf_cgroup_fetch_decode(&rb, 8, &kerr, count_fetched, NULL), SF_OK);
    ck_assert_int_eq(fetched, 1);
    ck_assert_int_eq(kerr, SF_KERR_COORDINATOR_LOAD_IN_PROGRESS);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_findcoord_codec) {
    sf_proto_FindCoordinatorRequest_t req;
    sf_proto_FindCoordinatorResponse_t resp;
    sf_proto_FindCoordinatorResponse_Coordinator_t co;
    sf_arena_t arena;
    sf_wbuf_t wb;
    sf_rbuf_t rb;
    int32_t node;
    int16_t v, kerr;
    for (v = 0; v <= SF_CGROUP_FINDCOORD_MAX; v++) {
        sf_wbuf_init(&wb);
        sf_arena_init(&arena, 0);
        ck_assert_int_eq(sf_cgroup_findcoord_encode(&wb, v, "grp"), SF_OK);
        sf_rbuf_init(&rb, wb.p, wb.len);
        ck_assert_int_eq(sf_proto_FindCoordinatorRequest_decode(&rb, v, &arena, &req), SF_OK);
        ck_assert(v < 4 ? sf_slice_eq(req.Key, "grp") : sf_slice_eq(req.CoordinatorKeys[0], "grp"));
        sf_wbuf_reset(&wb);
        sf_proto_FindCoordinatorResponse_init(&resp);
        memset(&co, 0, sizeof(co));
        resp.NodeId = co.NodeId = 3;
        resp.Host = co.Host = sf_slice_cstr("h");
        co.Key = sf_slice_cstr("grp");
        co.ErrorMessage.len = -1;
        resp.CoordinatorsCount = 1;
        resp.Coordinators = &co;
        ck_assert_int_eq(sf_proto_FindCoordinatorResponse_encode(&wb, v, &resp), SF_OK);
        sf_rbuf_init(&rb, wb.p, wb.len);
        ck_assert_int_eq(sf_cgroup_findcoord_decode(&rb, v, &node, &kerr), SF_OK);
        ck_assert_int_eq(node, 3);
        ck_assert_int_eq(kerr, 0);
        sf_arena_reset(&arena);
        sf_wbuf_free(&wb);
    }
}
END_TEST

START_TEST(test_tps_pack) {
    sf_topic_partition_t in[] = {{"long-topic-name", 2, 9, 0}, {"x", 0, -1, 3}};
    sf_topic_partition_t *p = sf_cgroup_tps_pack(in, 2);
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(p[0].topic, "long-topic-name");
    ck_assert_ptr_ne(p[0].topic, in[0].topic);
    ck_assert_int_eq(p[0].offset, 9);
    ck_assert_str_eq(p[1].topic, "x");
    ck_assert_int_eq(p[1].err, 3);
    sf_topic_partitions_destroy(p);
    ck_assert_ptr_null(sf_cgroup_tps_pack(in, 0));
    ck_assert(sf_cgroup_tp_cmp(&in[0], &in[1]) < 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------
 * Configuration
 * ------------------------------------------------------------------------------------------ */

START_TEST(test_group_config) {
    sf_conf_t *conf = sf_conf_new();
    sf_clientconf_t *cc;
    char err[256];
    ck_assert_int_eq(sf_conf_set(conf, "bootstrap.servers", "h:1", err, sizeof(err)), SF_OK);
    cc = sf_clientconf_parse(conf, err, sizeof(err));
    ck_assert_ptr_nonnull(cc);
    ck_assert_ptr_null(cc->group_id);
    ck_assert_int_eq(cc->session_timeout_ms, 45000);
    ck_assert_int_eq(cc->heartbeat_interval_ms, 3000);
    ck_assert_int_eq(cc->max_poll_interval_ms, 300000);
    ck_assert_int_eq(cc->enable_auto_commit, 1);
    ck_assert_int_eq(cc->auto_commit_interval_ms, 5000);
    ck_assert_int_eq(cc->assignors.n, 2);
    ck_assert_int_eq(cc->assignors.kinds[0], SF_ASSIGNOR_RANGE);
    ck_assert_int_eq(cc->assignors.kinds[1], SF_ASSIGNOR_COOPERATIVE_STICKY);
    sf_clientconf_free(cc);
    ck_assert_int_eq(sf_conf_set(conf, "partition.assignment.strategy",
                                 " roundrobin ,org.apache.kafka.clients.consumer.RangeAssignor",
                                 err, sizeof(err)),
                     SF_OK);
    ck_assert_int_eq(sf_conf_set(conf, "partition.assignment.strategy", "sticky", err,
                                 sizeof(err)),
                     SF_ERROR_INVALID);
    ck_assert_ptr_nonnull(strstr(err, "sticky"));
    ck_assert_int_eq(sf_conf_set(conf, "partition.assignment.strategy", "range,range", err,
                                 sizeof(err)),
                     SF_ERROR_INVALID);
    ck_assert_int_eq(sf_conf_set(conf, "partition.assignment.strategy", " , ", err, sizeof(err)),
                     SF_ERROR_INVALID);
    ck_assert_int_eq(sf_conf_set(conf, "enable.auto.commit", "maybe", err, sizeof(err)),
                     SF_ERROR_INVALID);
    ck_assert_int_eq(sf_conf_set(conf, "group.id", "g", err, sizeof(err)), SF_OK);
    ck_assert_int_eq(sf_conf_set(conf, "heartbeat.interval.ms", "45000", err, sizeof(err)),
                     SF_OK);
    ck_assert_ptr_null(sf_clientconf_parse(conf, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "session.timeout.ms"));
    ck_assert_int_eq(sf_conf_set(conf, "heartbeat.interval.ms", "1000", err, sizeof(err)), SF_OK);
    cc = sf_clientconf_parse(conf, err, sizeof(err));
    ck_assert_ptr_nonnull(cc);
    ck_assert_str_eq(cc->group_id, "g");
    ck_assert_int_eq(cc->assignors.n, 2);
    ck_assert_int_eq(cc->assignors.kinds[0], SF_ASSIGNOR_ROUNDROBIN);
    sf_clientconf_free(cc);
    sf_conf_destroy(conf);
}
END_TEST

/* ------------------------------------------------------------------------------------------
 * Limits
 * ------------------------------------------------------------------------------------------ */

START_TEST(test_assign_empty) {
    static const char *const none[] = {NULL};
    static const char *const t[] = {"t", "missing", NULL};
    sf_assignor_topic_t topics[] = {{"t", 0}, {"u", 3}};
    sf_assignor_member_t mb[2];
    int k;
    for (k = 0; k < SF_ASSIGNOR_COUNT; k++) {
        ck_assert_int_eq(sf_assignor_assign((sf_assignor_kind_t)k, topics, 2, NULL, 0), SF_OK);
        ck_assert_int_eq(sf_assignor_assign((sf_assignor_kind_t)k, NULL, 0, NULL, 0), SF_OK);
        mb[0] = member("a", none);
        mb[1] = member("b", t);
        /* No subscription, a topic without partitions, a topic nobody knows: nothing. */
        ck_assert_int_eq(sf_assignor_assign((sf_assignor_kind_t)k, topics, 2, mb, 2), SF_OK);
        ck_assert_uint_eq(mb[0].nassigned, 0);
        ck_assert_uint_eq(mb[1].nassigned, 0);
        ck_assert_ptr_null(mb[0].assigned);
        sf_assignor_members_clear(mb, 2);
    }
}
END_TEST

/* Many members and partitions: every assignor gives out every partition once, evenly. */
START_TEST(test_assign_large) {
    static const char *const t[] = {"a", "b", "c", NULL};
    sf_assignor_topic_t topics[] = {{"a", 500}, {"b", 333}, {"c", 167}};
    sf_assignor_member_t mb[64];
    char ids[64][16];
    int k, i;
    for (k = 0; k < SF_ASSIGNOR_COUNT; k++) {
        size_t lo = SIZE_MAX, hi = 0;
        for (i = 0; i < 64; i++) {
            snprintf(ids[i], sizeof(ids[i]), "m-%02d", i);
            mb[i] = member(ids[i], t);
        }
        ck_assert_int_eq(sf_assignor_assign((sf_assignor_kind_t)k, topics, 3, mb, 64), SF_OK);
        ck_assert_uint_eq(check_disjoint(topics, 3, mb, 64), 1000);
        for (i = 0; i < 64; i++) {
            lo = mb[i].nassigned < lo ? mb[i].nassigned : lo;
            hi = mb[i].nassigned > hi ? mb[i].nassigned : hi;
        }
        /* range balances per topic only (3 topics: at most 3 apart); the others overall. */
        ck_assert_uint_le(hi - lo, k == SF_ASSIGNOR_RANGE ? 3 : 1);
        sf_assignor_members_clear(mb, 64);
    }
}
END_TEST

START_TEST(test_decode_truncated) {
    static const char *const topics[] = {"topic", "other"};
    sf_assignor_tp_t owned[] = {{"topic", 1}, {"other", 7}};
    uint8_t gen[4] = {0, 0, 0, 1};
    sf_slice_t ud = {gen, 4};
    sf_proto_ConsumerProtocolSubscription_t sub;
    sf_proto_ConsumerProtocolAssignment_t asg;
    sf_arena_t arena;
    sf_wbuf_t ws, wa;
    int16_t got;
    size_t len;
    sf_wbuf_init(&ws);
    sf_wbuf_init(&wa);
    ck_assert_int_eq(sf_assignor_subscription_encode(&ws, 3, topics, 2, owned, 2, 1, ud), SF_OK);
    ck_assert_int_eq(sf_assignor_assignment_encode(&wa, 3, owned, 2), SF_OK);
    for (len = 0; len < ws.len; len++) {
        sf_arena_init(&arena, 0);
        ck_assert_int_eq(sf_assignor_subscription_decode(ws.p, len, &arena, &got, &sub),
                         SF_ERR_MALFORMED);
        sf_arena_reset(&arena);
    }
    for (len = 1; len < wa.len; len++) {
        sf_arena_init(&arena, 0);
        ck_assert_int_eq(sf_assignor_assignment_decode(wa.p, len, &arena, &got, &asg),
                         SF_ERR_MALFORMED);
        sf_arena_reset(&arena);
    }
    /* Zero bytes: an empty assignment. A negative version: malformed. */
    sf_arena_init(&arena, 0);
    ck_assert_int_eq(sf_assignor_assignment_decode(wa.p, 0, &arena, &got, &asg), SF_OK);
    ck_assert_int_eq(asg.AssignedPartitionsCount, 0);
    wa.p[0] = 0xff;
    ck_assert_int_eq(sf_assignor_assignment_decode(wa.p, wa.len, &arena, &got, &asg),
                     SF_ERR_MALFORMED);
    ws.p[0] = 0x80;
    ck_assert_int_eq(sf_assignor_subscription_decode(ws.p, ws.len, &arena, &got, &sub),
                     SF_ERR_MALFORMED);
    sf_arena_reset(&arena);
    ck_assert_int_eq(sf_assignor_assignment_encode(&wa, 4, owned, 2), SF_ERR_UNSUPPORTED);
    ck_assert_int_eq(sf_assignor_subscription_encode(&ws, -1, topics, 2, NULL, 0, 1, ud),
                     SF_ERR_UNSUPPORTED);
    sf_wbuf_free(&ws);
    sf_wbuf_free(&wa);
}
END_TEST

/* A lying array count in a member's subscription fails cleanly. */
START_TEST(test_decode_lying_count) {
    static const uint8_t lying[] = {0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 1, 'a'};
    sf_proto_ConsumerProtocolSubscription_t sub;
    sf_arena_t arena;
    int16_t got;
    sf_arena_init(&arena, 0);
    ck_assert_int_eq(sf_assignor_subscription_decode(lying, sizeof(lying), &arena, &got, &sub),
                     SF_ERR_MALFORMED);
    sf_arena_reset(&arena);
}
END_TEST


/* ------------------------------------------------------------------------------------------
 * Live: a consumer group against a real cluster, when SF_GROUP_TEST_BOOTSTRAP names one
 * (test/integration/33-cli-groups.sh runs this)
 * ------------------------------------------------------------------------------------------ */

#define LIVE_TOPIC "cg-live"
#define LIVE_GROUP "cg-live-group"
#define LIVE_RECORDS 300

typedef struct live_member {
    const char *name;
    int assigned, revoked, lost;
    int owned;              /* partitions assigned minus revoked / lost */
    int commit_in_revoke;   /* outcome of a commit made inside the REVOKED callback */
    int async_done, async_err;
    unsigned char seen[LIVE_RECORDS + 100];
    int distinct;
} live_member_t;

static void live_rebalance(sf_consumer_t *c, int event, const sf_topic_partition_t *parts,
                           size_t count, void *opaque) {
    live_member_t *m = opaque;
    size_t i;
    for (i = 0; i < count; i++)
        ck_assert_str_eq(parts[i].topic, LIVE_TOPIC);
    if (event == SF_REBALANCE_ASSIGNED) {
        m->assigned++;
        m->owned += (int)count;
    } else if (event == SF_REBALANCE_REVOKED) {
        m->revoked++;
        /* The partitions are still ours: committing them works. */
        m->commit_in_revoke = sf_consumer_commit(c, NULL, 0, 10000);
        m->owned -= (int)count;
    } else {
        m->lost++;
        m->owned -= (int)count;
    }
}

static void live_async_done(sf_consumer_t *c, int err, const sf_topic_partition_t *offsets,
                            size_t count, void *opaque) {
    live_member_t *m = opaque;
    (void)c;
    (void)offsets;
    (void)count;
    m->async_done++;
    m->async_err = err;
}

static sf_conf_t *live_conf(const char *bootstrap, const char *group, int auto_commit) {
    sf_conf_t *conf = sf_conf_new();
    char err[256];
    ck_assert_int_eq(sf_conf_set(conf, "bootstrap.servers", bootstrap, err, sizeof(err)), SF_OK);
    if (group) {
        ck_assert_int_eq(sf_conf_set(conf, "group.id", group, err, sizeof(err)), SF_OK);
        ck_assert_int_eq(sf_conf_set(conf, "heartbeat.interval.ms", "500", err, sizeof(err)),
                         SF_OK);
        ck_assert_int_eq(sf_conf_set(conf, "session.timeout.ms", "6000", err, sizeof(err)),
                         SF_OK);
        ck_assert_int_eq(sf_conf_set(conf, "auto.offset.reset", "earliest", err, sizeof(err)),
                         SF_OK);
        ck_assert_int_eq(sf_conf_set(conf, "enable.auto.commit", auto_commit ? "true" : "false",
                                     err, sizeof(err)),
                         SF_OK);
    }
    return conf;
}

static void live_produce(const char *bootstrap, int from, int to) {
    sf_conf_t *conf = live_conf(bootstrap, NULL, 0);
    sf_producer_t *p = sf_producer_new(conf, NULL, 0);
    int i;
    ck_assert_ptr_nonnull(p);
    for (i = from; i < to; i++) {
        char key[16], val[16];
        sf_record_t rec;
        memset(&rec, 0, sizeof(rec));
        snprintf(key, sizeof(key), "k%d", i);
        snprintf(val, sizeof(val), "%d", i);
        rec.topic = LIVE_TOPIC;
        rec.partition = SF_PARTITION_ANY;
        rec.key = key;
        rec.key_len = strlen(key);
        rec.value = val;
        rec.value_len = strlen(val);
        ck_assert_int_eq(sf_producer_send(p, &rec, NULL, NULL), SF_OK);
    }
    ck_assert_int_eq(sf_producer_flush(p, 30000), SF_OK);
    sf_producer_destroy(p);
    sf_conf_destroy(conf);
}

/* Poll @c once (up to @ms) and note the record. */
static void live_poll(sf_consumer_t *c, live_member_t *m, int ms) {
    sf_message_t *msg = sf_consumer_poll(c, ms);
    if (!msg)
        return;
    if (!msg->err) {
        int v = atoi((const char *)msg->value);
        ck_assert_int_lt(v, (int)sizeof(m->seen));
        if (!m->seen[v]++)
            m->distinct++;
    }
    sf_message_destroy(msg);
}

static sf_consumer_t *live_member(const char *bootstrap, live_member_t *m, int auto_commit,
                                  const char *topic) {
    sf_conf_t *conf = live_conf(bootstrap, LIVE_GROUP, auto_commit);
    sf_consumer_t *c;
    char err[256];
    sf_conf_set_rebalance_cb(conf, live_rebalance, m);
    c = sf_consumer_new(conf, err, sizeof(err));
    ck_assert_msg(c != NULL, "%s", err);
    sf_conf_destroy(conf);
    ck_assert_int_eq(sf_consumer_subscribe(c, &topic, 1), SF_OK);
    /* Subscribed: explicit assignment is refused. */
    ck_assert_int_eq(sf_consumer_assign(c, LIVE_TOPIC, 0, 0), SF_ERROR_STATE);
    return c;
}

static void live_setup(const char *bootstrap) {
    sf_conf_t *conf = live_conf(bootstrap, NULL, 0);
    sf_admin_t *a = sf_admin_new(conf, NULL, 0);
    int rc;
    ck_assert_ptr_nonnull(a);
    rc = sf_admin_create_topic(a, LIVE_TOPIC, 3, -1, NULL, 0, 30000, NULL, 0);
    ck_assert_msg(rc == SF_OK || rc == 36, "create topic: %s", sf_error_name(rc));
    sf_admin_destroy(a);
    sf_conf_destroy(conf);
}

/* A consumer without group.id has no group functions. */
static void live_no_group(const char *bootstrap) {
    sf_conf_t *conf = live_conf(bootstrap, NULL, 0);
    sf_consumer_t *c = sf_consumer_new(conf, NULL, 0);
    const char *topic = LIVE_TOPIC;
    sf_topic_partition_t tp = {LIVE_TOPIC, 0, 0, 0};
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(sf_consumer_subscribe(c, &topic, 1), SF_ERROR_STATE);
    ck_assert_int_eq(sf_consumer_commit(c, &tp, 1, 1000), SF_ERROR_STATE);
    ck_assert_int_eq(sf_consumer_committed(c, &tp, 1, 1000), SF_ERROR_STATE);
    sf_consumer_destroy(c);
    sf_conf_destroy(conf);
}

/* Offsets and lag as the admin client sees them, then the group's deletion. */
static void live_admin(const char *bootstrap) {
    sf_conf_t *conf = live_conf(bootstrap, NULL, 0);
    sf_admin_t *a = sf_admin_new(conf, NULL, 0);
    const char *group = LIVE_GROUP;
    sf_group_info_t *info = NULL;
    sf_group_lag_t *lag = NULL;
    size_t n = 0, i;
    int err = 0, rc;
    ck_assert_int_eq(sf_admin_describe_groups(a, &group, 1, 30000, &info), SF_OK);
    ck_assert_int_eq(info[0].err, 0);
    ck_assert_str_eq(info[0].state, "Empty");
    ck_assert_uint_eq(info[0].member_count, 0);
    sf_group_info_destroy(info, 1);
    ck_assert_int_eq(sf_admin_group_lag(a, group, 30000, &lag, &n), SF_OK);
    ck_assert_uint_eq(n, 3);
    for (i = 0; i < n; i++) {
        ck_assert_int_eq(lag[i].err, 0);
        ck_assert_int_eq(lag[i].lag, 0);
        ck_assert_int_eq(lag[i].committed, lag[i].log_end);
    }
    sf_group_lag_destroy(lag);
    rc = sf_admin_delete_groups(a, &group, 1, &err, 30000);
    ck_assert_msg(rc == SF_OK || rc == SF_ERROR_UNSUPPORTED, "delete: %s", sf_error_name(rc));
    sf_admin_destroy(a);
    sf_conf_destroy(conf);
}

START_TEST(test_live_group) {
    const char *bootstrap = getenv("SF_GROUP_TEST_BOOTSTRAP");
    static live_member_t ma, mb;
    sf_topic_partition_t tps[3], *asg = NULL, one;
    sf_consumer_t *a, *b;
    size_t n = 0;
    int i, rounds;
    memset(&ma, 0, sizeof(ma));
    memset(&mb, 0, sizeof(mb));
    live_setup(bootstrap);
    live_no_group(bootstrap);
    live_produce(bootstrap, 0, LIVE_RECORDS);

    /* One member: everything is assigned to it, it reads every record. */
    a = live_member(bootstrap, &ma, 0, LIVE_TOPIC);
    for (rounds = 0; ma.distinct < LIVE_RECORDS && rounds < 600; rounds++)
        live_poll(a, &ma, 100);
    ck_assert_int_eq(ma.distinct, LIVE_RECORDS);
    ck_assert_int_eq(ma.assigned, 1);
    ck_assert_int_eq(ma.owned, 3);
    ck_assert_int_eq(sf_consumer_assignment(a, &asg, &n), SF_OK);
    ck_assert_uint_eq(n, 3);
    sf_topic_partitions_destroy(asg);

    /* Synchronous commits: the positions, then one explicit offset. */
    ck_assert_int_eq(sf_consumer_commit(a, NULL, 0, 10000), SF_OK);
    for (i = 0; i < 3; i++) {
        tps[i].topic = LIVE_TOPIC;
        tps[i].partition = i;
    }
    ck_assert_int_eq(sf_consumer_committed(a, tps, 3, 10000), SF_OK);
    ck_assert_int_eq(tps[0].offset + tps[1].offset + tps[2].offset, LIVE_RECORDS);
    one.topic = LIVE_TOPIC;
    one.partition = 0;
    one.offset = 1;
    ck_assert_int_eq(sf_consumer_commit(a, &one, 1, 10000), SF_OK);
    ck_assert_int_eq(one.err, 0);
    ck_assert_int_eq(sf_consumer_committed(a, tps, 1, 10000), SF_OK);
    ck_assert_int_eq(tps[0].offset, 1);
    /* Asynchronous: the callback comes from poll. */
    ck_assert_int_eq(sf_consumer_commit_async(a, NULL, 0, live_async_done, &ma), SF_OK);
    for (rounds = 0; !ma.async_done && rounds < 100; rounds++)
        live_poll(a, &ma, 100);
    ck_assert_int_eq(ma.async_done, 1);
    ck_assert_int_eq(ma.async_err, 0);

    /* A second member by pattern: an eager rebalance shares the partitions out. */
    b = live_member(bootstrap, &mb, 1, "^cg-l.*");
    for (rounds = 0; (mb.owned == 0 || ma.owned + mb.owned != 3) && rounds < 300; rounds++) {
        live_poll(a, &ma, 50);
        live_poll(b, &mb, 50);
    }
    ck_assert_int_gt(mb.owned, 0);
    ck_assert_int_eq(ma.owned + mb.owned, 3);
    ck_assert_int_ge(ma.revoked, 1);
    ck_assert_int_eq(ma.commit_in_revoke, SF_OK);
    ck_assert_int_eq(mb.distinct, 0); /* it starts at the offsets a committed */

    /* New records go to both; then a leaves and b takes over everything. */
    live_produce(bootstrap, LIVE_RECORDS, LIVE_RECORDS + 60);
    for (rounds = 0; ma.distinct + mb.distinct < LIVE_RECORDS + 60 && rounds < 300; rounds++) {
        live_poll(a, &ma, 50);
        live_poll(b, &mb, 50);
    }
    ck_assert_int_eq(ma.distinct + mb.distinct, LIVE_RECORDS + 60);
    ck_assert_int_eq(sf_consumer_commit(a, NULL, 0, 10000), SF_OK);
    ck_assert_int_eq(sf_consumer_unsubscribe(a), SF_OK);
    ck_assert_int_eq(ma.owned, 0);
    ck_assert_int_eq(sf_consumer_unsubscribe(a), SF_ERROR_STATE);
    for (rounds = 0; mb.owned != 3 && rounds < 300; rounds++)
        live_poll(b, &mb, 100);
    ck_assert_int_eq(mb.owned, 3);
    ck_assert_int_eq(mb.lost, 0);
    sf_consumer_destroy(a);
    sf_consumer_destroy(b); /* commits (auto-commit) and leaves */
    ck_assert_int_eq(mb.owned, 0);
    live_admin(bootstrap);
}
END_TEST

static Suite *group_suite(void) {
    Suite *s = suite_create("client_group");
    TCase *core = tcase_create("core");
    TCase *limits = tcase_create("limits");
    tcase_add_test(core, test_names);
    tcase_add_test(core, test_range_kafka_example);
    tcase_add_test(core, test_range_uneven_and_static);
    tcase_add_test(core, test_roundrobin_kafka_examples);
    tcase_add_test(core, test_sticky_fresh_balanced);
    tcase_add_test(core, test_sticky_two_phase_move);
    tcase_add_test(core, test_sticky_keeps_balanced_owners);
    tcase_add_test(core, test_sticky_claims);
    tcase_add_test(core, test_sticky_heterogeneous);
    tcase_add_test(core, test_subscription_golden);
    tcase_add_test(core, test_subscription_roundtrip);
    tcase_add_test(core, test_subscription_newer_version);
    tcase_add_test(core, test_assignment_golden_and_roundtrip);
    tcase_add_test(core, test_userdata_generation);
    tcase_add_test(core, test_commit_codec);
    tcase_add_test(core, test_fetch_codec);
    tcase_add_test(core, test_findcoord_codec);
    tcase_add_test(core, test_tps_pack);
    tcase_add_test(core, test_group_config);
    tcase_add_test(limits, test_assign_empty);
    tcase_add_test(limits, test_assign_large);
    tcase_add_test(limits, test_decode_truncated);
    tcase_add_test(limits, test_decode_lying_count);
    tcase_set_timeout(limits, 30);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    if (getenv("SF_GROUP_TEST_BOOTSTRAP")) {
        TCase *live = tcase_create("live");
        tcase_add_test(live, test_live_group);
        tcase_set_timeout(live, 180);
        suite_add_tcase(s, live);
    }
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(group_suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
