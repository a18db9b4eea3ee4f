/* Unit tests for the consumer group client (client/assignor.h, client/cgroup.h): the range,
 * roundrobin and cooperative-sticky assignors against Kafka's documented results and
 * invariants (every partition once, balance, stickiness, two-phase moves), the consumer
 * protocol's subscription and assignment encodings (golden bytes, every version, newer
 * versions, truncation), the group request codec helpers, the group configuration keys, and
 * (the "member" case) one consumer's membership against a fake coordinator: fencing during a
 * revocation, commits bound to their generation, nothing queued behind a JoinGroup,
 * FENCED_INSTANCE_ID, cooperative topic removal, the close's timing and callbacks, the offset
 * fetch backoff, one thread serving callbacks, pattern topics that go away.
 * With SF_GROUP_TEST_BOOTSTRAP=host:port[,...] a "live" case also runs a group of two
 * consumers against that cluster (rebalance callbacks, commits, pattern subscription,
 * unsubscribe, the admin view). */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "assignor.h"
#include "buf.h"
#include "cgroup.h"
#include "clientconf.h"
#include "clock.h"
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
        ck_assert_int_eq(sf_cgroup_fetch_encode(&wb, v, "g", tps, 1, v & 1), SF_OK);
        sf_rbuf_init(&rb, wb.p, wb.len);
        ck_assert_int_eq(sf_proto_OffsetFetchRequest_decode(&rb, v, &arena, &req), SF_OK);
        /* RequireStable (read_committed members) from v7 */
        ck_assert_int_eq(req.RequireStable, v >= 7 && (v & 1));
        if (v < 8)
            ck_assert_int_eq(req.Topics[0].PartitionIndexes[0], 3);
        else
            ck_assert_int_eq(req.Groups[0].Topics[0].PartitionIndexes[0], 3);
        sf_wbuf_reset(&wb);
        /* Every partition: a null list, which v0 and v1 cannot say. */
        ck_assert_int_eq(sf_cgroup_fetch_encode(&wb, v, "g", NULL, 0, 0),
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
        ck_assert_int_eq(sf_cgroup_findcoord_encode(&wb, v, "grp", 0), SF_OK);
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
 * Member: one consumer against a fake coordinator (a thread per connection on 127.0.0.1 that
 * answers ApiVersions, Metadata, FindCoordinator and the group's requests with bytes from the
 * common/proto.h encoders, holding or failing answers as each test scripts). Like a broker
 * it answers the requests of one connection in order: one it holds holds those behind it.
 * ------------------------------------------------------------------------------------------ */

#define FK_QUEUE 64
#define FK_CONNS 32
#define FK_MEMBER "m-1"

typedef struct fk_topic {
    const char *name;
    int partitions;
    int deleted;
} fk_topic_t;

typedef struct fk {
    int lfd, port, stop;
    pthread_t accept_th;
    pthread_mutex_t mu;
    int fds[FK_CONNS], nfds, open_conns;
    pthread_t ths[FK_CONNS];
    fk_topic_t topics[4];
    int ntopics;
    /* the group: one member */
    int32_t generation;
    int left; /* the member left: a JoinGroup it holds fails */
    /* the script */
    int16_t hb_err;     /* the answer to the next Heartbeat (once) */
    int16_t join_err;   /* the answer to every JoinGroup while set */
    int16_t fetch_err;  /* every OffsetFetch partition's */
    int16_t commit_err; /* every OffsetCommit partition's, for generation commit_err_gen */
    int32_t commit_err_gen;
    int hold_joins;     /* JoinGroup answers wait until cleared or the member leaves */
    int commit_delay_ms, fetch_delay_ms;
    /* what it saw */
    int joins, syncs, hbs, leaves, commits, fetches, hb_errs;
    int behind_join;     /* requests that came behind a held JoinGroup on its connection */
    int32_t max_commit_gen;
    int join_owned_u;    /* most partitions of topic "u" a JoinGroup said it owns */
    int join_topic_pa;   /* 1 when the last JoinGroup subscribed to "pa" */
    int md_named_pa;     /* Metadata requests that named "pa" */
} fk_t;

typedef struct fk_frame {
    uint8_t *buf;
    uint32_t size;
    int64_t at;
    sf_proto_RequestHeader_t h;
    sf_rbuf_t rb; /* the body */
} fk_frame_t;

typedef struct fk_conn {
    fk_t *fk;
    int fd;
} fk_conn_t;

static int fk_read(int fd, void *p, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = recv(fd, (char *)p + got, n - got, 0);
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

static void fk_write(int fd, const void *p, size_t n) {
    size_t put = 0;
    while (put < n) {
        ssize_t r = send(fd, (const char *)p + put, n - put, MSG_NOSIGNAL);
        if (r <= 0)
            return;
        put += (size_t)r;
    }
}

/* A response: size, correlation id (header v0: every version used here is not flexible),
 * body. */
static void fk_send(int fd, int32_t corr, sf_wbuf_t *body) {
    uint8_t hdr[8];
    sf_store_be32(hdr, (uint32_t)(4 + body->len));
    sf_store_be32(hdr + 4, (uint32_t)corr);
    fk_write(fd, hdr, 8);
    fk_write(fd, body->p, body->len);
    sf_wbuf_free(body);
}

static void fk_apiversions(int fd, const fk_frame_t *f) {
    sf_proto_ApiVersionsResponse_ApiVersion_t keys[] = {
        {.ApiKey = SF_PROTO_API_ApiVersions, .MinVersion = 0, .MaxVersion = 3},
        {.ApiKey = SF_PROTO_API_Metadata, .MinVersion = 0, .MaxVersion = 8},
        {.ApiKey = SF_PROTO_API_FindCoordinator, .MinVersion = 0, .MaxVersion = 2},
        {.ApiKey = SF_PROTO_API_JoinGroup, .MinVersion = 0, .MaxVersion = 5},
        {.ApiKey = SF_PROTO_API_SyncGroup, .MinVersion = 0, .MaxVersion = 3},
        {.ApiKey = SF_PROTO_API_Heartbeat, .MinVersion = 0, .MaxVersion = 3},
        {.ApiKey = SF_PROTO_API_LeaveGroup, .MinVersion = 0, .MaxVersion = 3},
        {.ApiKey = SF_PROTO_API_OffsetCommit, .MinVersion = 0, .MaxVersion = 7},
        {.ApiKey = SF_PROTO_API_OffsetFetch, .MinVersion = 0, .MaxVersion = 5},
    };
    sf_proto_ApiVersionsResponse_t resp = {.ErrorCode = 0,
                                           .ApiKeysCount = sizeof(keys) / sizeof(keys[0]),
                                           .ApiKeys = keys, .FinalizedFeaturesEpoch = -1};
    sf_wbuf_t wb;
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_proto_ApiVersionsResponse_encode(&wb, f->h.RequestApiVersion, &resp),
                     SF_OK);
    fk_send(fd, f->h.CorrelationId, &wb);
}

/* The topic @name of the fake cluster, or NULL. Lock held. */
static fk_topic_t *fk_topic(fk_t *fk, sf_slice_t name) {
    int i;
    for (i = 0; i < fk->ntopics; i++)
        if (!fk->topics[i].deleted && sf_slice_eq(name, fk->topics[i].name))
            return &fk->topics[i];
    return NULL;
}

static void fk_md_topic(fk_t *fk, sf_proto_MetadataResponse_MetadataResponseTopic_t *t,
                        sf_slice_t name,
                        sf_proto_MetadataResponse_MetadataResponsePartition_t *parts) {
    fk_topic_t *ft = fk_topic(fk, name);
    memset(t, 0, sizeof(*t));
    t->Name = name;
    t->TopicAuthorizedOperations = INT32_MIN;
    if (!ft)
        t->ErrorCode = SF_KERR_UNKNOWN_TOPIC_OR_PARTITION;
    else {
        t->PartitionsCount = ft->partitions;
        t->Partitions = parts;
    }
}

static void fk_metadata(fk_t *fk, int fd, fk_frame_t *f, sf_arena_t *arena) {
    static int32_t replicas[1] = {1};
    sf_proto_MetadataRequest_t req;
    sf_proto_MetadataResponse_t resp;
    sf_proto_MetadataResponse_MetadataResponseBroker_t broker;
    sf_proto_MetadataResponse_MetadataResponseTopic_t topics[8];
    sf_proto_MetadataResponse_MetadataResponsePartition_t parts[8];
    sf_wbuf_t wb;
    int32_t i, n = 0;
    ck_assert_int_eq(sf_proto_MetadataRequest_decode(&f->rb, f->h.RequestApiVersion, arena, &req),
                     SF_OK);
    memset(&resp, 0, sizeof(resp));
    memset(&broker, 0, sizeof(broker));
    memset(parts, 0, sizeof(parts));
    for (i = 0; i < 8; i++) {
        parts[i].PartitionIndex = i;
        parts[i].LeaderId = 1;
        parts[i].ReplicaNodesCount = parts[i].IsrNodesCount = 1;
        parts[i].ReplicaNodes = parts[i].IsrNodes = replicas;
    }
    broker.NodeId = 1;
    broker.Host = sf_slice_cstr("127.0.0.1");
    broker.Port = fk->port;
    broker.Rack.len = -1;
    pthread_mutex_lock(&fk->mu);
    if (req.TopicsCount < 0) { /* every topic */
        for (i = 0; i < fk->ntopics; i++)
            if (!fk->topics[i].deleted)
                fk_md_topic(fk, &topics[n++], sf_slice_cstr(fk->topics[i].name), parts);
    } else {
        for (i = 0; i < req.TopicsCount && n < 8; i++) {
            fk->md_named_pa += sf_slice_eq(req.Topics[i].Name, "pa");
            fk_md_topic(fk, &topics[n++], req.Topics[i].Name, parts);
        }
    }
    pthread_mutex_unlock(&fk->mu);
    resp.BrokersCount = 1;
    resp.Brokers = &broker;
    resp.ClusterId = sf_slice_cstr("fake");
    resp.ControllerId = 1;
    resp.TopicsCount = n;
    resp.Topics = topics;
    resp.ClusterAuthorizedOperations = INT32_MIN;
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_proto_MetadataResponse_encode(&wb, f->h.RequestApiVersion, &resp), SF_OK);
    fk_send(fd, f->h.CorrelationId, &wb);
}

static void fk_findcoord(fk_t *fk, int fd, fk_frame_t *f) {
    sf_proto_FindCoordinatorResponse_t resp;
    sf_wbuf_t wb;
    memset(&resp, 0, sizeof(resp));
    resp.ErrorMessage.len = -1;
    resp.NodeId = 1;
    resp.Host = sf_slice_cstr("127.0.0.1");
    resp.Port = fk->port;
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_proto_FindCoordinatorResponse_encode(&wb, f->h.RequestApiVersion, &resp),
                     SF_OK);
    fk_send(fd, f->h.CorrelationId, &wb);
}

/* What the JoinGroup's subscription (@meta) says: owned partitions of "u", topic "pa". Lock
 * held. */
static void fk_note_subscription(fk_t *fk, sf_slice_t meta) {
    sf_proto_ConsumerProtocolSubscription_t sub;
    sf_arena_t arena;
    int16_t version;
    int32_t i, owned_u = 0;
    sf_arena_init(&arena, 0);
    ck_assert_int_eq(sf_assignor_subscription_decode(meta.p, (size_t)meta.len, &arena, &version,
                                                     &sub),
                     SF_OK);
    fk->join_topic_pa = 0;
    for (i = 0; i < sub.OwnedPartitionsCount; i++)
        if (sf_slice_eq(sub.OwnedPartitions[i].Topic, "u"))
            owned_u += sub.OwnedPartitions[i].PartitionsCount;
    if (owned_u > fk->join_owned_u)
        fk->join_owned_u = owned_u;
    for (i = 0; i < sub.TopicsCount; i++)
        fk->join_topic_pa |= sf_slice_eq(sub.Topics[i], "pa");
    sf_arena_reset(&arena);
}

static void fk_join(fk_t *fk, int fd, fk_frame_t *f, sf_arena_t *arena) {
    sf_proto_JoinGroupRequest_t req;
    sf_proto_JoinGroupResponse_t resp;
    sf_proto_JoinGroupResponse_JoinGroupResponseMember_t me;
    sf_wbuf_t wb;
    ck_assert_int_eq(sf_proto_JoinGroupRequest_decode(&f->rb, f->h.RequestApiVersion, arena, &req),
                     SF_OK);
    ck_assert_int_ge(req.ProtocolsCount, 1);
    memset(&resp, 0, sizeof(resp));
    pthread_mutex_lock(&fk->mu);
    fk_note_subscription(fk, req.Protocols[0].Metadata);
    if (fk->left) {
        resp.ErrorCode = SF_KERR_UNKNOWN_MEMBER_ID;
        fk->left = 0;
    } else if (fk->join_err) {
        resp.ErrorCode = fk->join_err;
    } else {
        resp.GenerationId = ++fk->generation;
        resp.ProtocolName = req.Protocols[0].Name;
        resp.Leader = resp.MemberId = sf_slice_cstr(FK_MEMBER);
        me.MemberId = resp.MemberId;
        me.GroupInstanceId = req.GroupInstanceId;
        me.Metadata = req.Protocols[0].Metadata;
        resp.MembersCount = 1;
        resp.Members = &me;
    }
    pthread_mutex_unlock(&fk->mu);
    if (resp.ErrorCode) {
        resp.GenerationId = -1;
        resp.ProtocolName = resp.Leader = resp.MemberId = sf_slice_cstr("");
    }
    resp.ProtocolType.len = -1;
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_proto_JoinGroupResponse_encode(&wb, f->h.RequestApiVersion, &resp), SF_OK);
    fk_send(fd, f->h.CorrelationId, &wb);
}

static void fk_sync(fk_t *fk, int fd, fk_frame_t *f, sf_arena_t *arena) {
    sf_proto_SyncGroupRequest_t req;
    sf_proto_SyncGroupResponse_t resp;
    sf_wbuf_t wb;
    int32_t i;
    ck_assert_int_eq(sf_proto_SyncGroupRequest_decode(&f->rb, f->h.RequestApiVersion, arena, &req),
                     SF_OK);
    memset(&resp, 0, sizeof(resp));
    resp.ProtocolType.len = resp.ProtocolName.len = -1;
    resp.Assignment = sf_slice_cstr("");
    for (i = 0; i < req.AssignmentsCount; i++)
        if (sf_slice_eq(req.Assignments[i].MemberId, FK_MEMBER))
            resp.Assignment = req.Assignments[i].Assignment;
    (void)fk;
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_proto_SyncGroupResponse_encode(&wb, f->h.RequestApiVersion, &resp), SF_OK);
    fk_send(fd, f->h.CorrelationId, &wb);
}

/* Heartbeat and LeaveGroup: their error codes. */
static void fk_heartbeat(fk_t *fk, int fd, fk_frame_t *f) {
    sf_proto_HeartbeatResponse_t resp;
    sf_wbuf_t wb;
    memset(&resp, 0, sizeof(resp));
    pthread_mutex_lock(&fk->mu);
    resp.ErrorCode = fk->hb_err;
    if (fk->hb_err)
        fk->hb_errs++;
    fk->hb_err = 0;
    pthread_mutex_unlock(&fk->mu);
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_proto_HeartbeatResponse_encode(&wb, f->h.RequestApiVersion, &resp), SF_OK);
    fk_send(fd, f->h.CorrelationId, &wb);
}

static void fk_leave(fk_t *fk, int fd, fk_frame_t *f) {
    sf_proto_LeaveGroupResponse_t resp;
    sf_proto_LeaveGroupResponse_MemberResponse_t me;
    sf_wbuf_t wb;
    memset(&resp, 0, sizeof(resp));
    me.MemberId = sf_slice_cstr(FK_MEMBER);
    me.GroupInstanceId.len = -1;
    me.GroupInstanceId.p = NULL;
    me.ErrorCode = 0;
    resp.MembersCount = 1;
    resp.Members = &me;
    pthread_mutex_lock(&fk->mu);
    fk->leaves++;
    fk->left = 1;
    pthread_mutex_unlock(&fk->mu);
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_proto_LeaveGroupResponse_encode(&wb, f->h.RequestApiVersion, &resp),
                     SF_OK);
    fk_send(fd, f->h.CorrelationId, &wb);
}

static void fk_commit(fk_t *fk, int fd, fk_frame_t *f, sf_arena_t *arena) {
    sf_proto_OffsetCommitRequest_t req;
    sf_proto_OffsetCommitResponse_t resp;
    sf_proto_OffsetCommitResponse_OffsetCommitResponseTopic_t *topics;
    sf_proto_OffsetCommitResponse_OffsetCommitResponsePartition_t *parts;
    sf_wbuf_t wb;
    int16_t err = 0;
    int32_t t, p;
    ck_assert_int_eq(sf_proto_OffsetCommitRequest_decode(&f->rb, f->h.RequestApiVersion, arena,
                                                         &req),
                     SF_OK);
    pthread_mutex_lock(&fk->mu);
    if (req.GenerationIdOrMemberEpoch > fk->max_commit_gen)
        fk->max_commit_gen = req.GenerationIdOrMemberEpoch;
    if (fk->commit_err && req.GenerationIdOrMemberEpoch == fk->commit_err_gen)
        err = fk->commit_err;
    pthread_mutex_unlock(&fk->mu);
    topics = sf_arena_calloc(arena, (size_t)req.TopicsCount + 1, sizeof(*topics));
    for (t = 0; t < req.TopicsCount; t++) {
        topics[t].Name = req.Topics[t].Name;
        topics[t].PartitionsCount = req.Topics[t].PartitionsCount;
        topics[t].Partitions = parts =
            sf_arena_calloc(arena, (size_t)req.Topics[t].PartitionsCount + 1, sizeof(*parts));
        for (p = 0; p < req.Topics[t].PartitionsCount; p++) {
            parts[p].PartitionIndex = req.Topics[t].Partitions[p].PartitionIndex;
            parts[p].ErrorCode = err;
        }
    }
    memset(&resp, 0, sizeof(resp));
    resp.TopicsCount = req.TopicsCount;
    resp.Topics = topics;
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_proto_OffsetCommitResponse_encode(&wb, f->h.RequestApiVersion, &resp),
                     SF_OK);
    fk_send(fd, f->h.CorrelationId, &wb);
}

/* Every partition asked for has offset 0 committed (or fails with fetch_err). */
static void fk_fetch(fk_t *fk, int fd, fk_frame_t *f, sf_arena_t *arena) {
    sf_proto_OffsetFetchRequest_t req;
    sf_proto_OffsetFetchResponse_t resp;
    sf_proto_OffsetFetchResponse_OffsetFetchResponseTopic_t *topics;
    sf_proto_OffsetFetchResponse_OffsetFetchResponsePartition_t *parts;
    sf_wbuf_t wb;
    int16_t err;
    int32_t t, p;
    ck_assert_int_eq(sf_proto_OffsetFetchRequest_decode(&f->rb, f->h.RequestApiVersion, arena,
                                                        &req),
                     SF_OK);
    pthread_mutex_lock(&fk->mu);
    fk->fetches++;
    err = fk->fetch_err;
    pthread_mutex_unlock(&fk->mu);
    ck_assert_int_ge(req.TopicsCount, 0);
    topics = sf_arena_calloc(arena, (size_t)req.TopicsCount + 1, sizeof(*topics));
    for (t = 0; t < req.TopicsCount; t++) {
        topics[t].Name = req.Topics[t].Name;
        topics[t].PartitionsCount = req.Topics[t].PartitionIndexesCount;
        topics[t].Partitions = parts = sf_arena_calloc(
            arena, (size_t)req.Topics[t].PartitionIndexesCount + 1, sizeof(*parts));
        for (p = 0; p < req.Topics[t].PartitionIndexesCount; p++) {
            parts[p].PartitionIndex = req.Topics[t].PartitionIndexes[p];
            parts[p].CommittedOffset = err ? -1 : 0;
            parts[p].CommittedLeaderEpoch = -1;
            parts[p].Metadata = sf_slice_cstr("");
            parts[p].ErrorCode = err;
        }
    }
    memset(&resp, 0, sizeof(resp));
    resp.TopicsCount = req.TopicsCount;
    resp.Topics = topics;
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_proto_OffsetFetchResponse_encode(&wb, f->h.RequestApiVersion, &resp),
                     SF_OK);
    fk_send(fd, f->h.CorrelationId, &wb);
}

static void fk_answer(fk_t *fk, int fd, fk_frame_t *f) {
    sf_arena_t arena;
    sf_arena_init(&arena, 0);
    switch (f->h.RequestApiKey) {
    case SF_PROTO_API_ApiVersions: fk_apiversions(fd, f); break;
    case SF_PROTO_API_Metadata: fk_metadata(fk, fd, f, &arena); break;
    case SF_PROTO_API_FindCoordinator: fk_findcoord(fk, fd, f); break;
    case SF_PROTO_API_JoinGroup: fk_join(fk, fd, f, &arena); break;
    case SF_PROTO_API_SyncGroup: fk_sync(fk, fd, f, &arena); break;
    case SF_PROTO_API_Heartbeat: fk_heartbeat(fk, fd, f); break;
    case SF_PROTO_API_LeaveGroup: fk_leave(fk, fd, f); break;
    case SF_PROTO_API_OffsetCommit: fk_commit(fk, fd, f, &arena); break;
    case SF_PROTO_API_OffsetFetch: fk_fetch(fk, fd, f, &arena); break;
    default: break; /* not advertised: never asked */
    }
    sf_arena_reset(&arena);
}

/* 1 when @f, the first of its connection's queue, may be answered now. */
static int fk_ready(fk_t *fk, const fk_frame_t *f) {
    int64_t now = sf_clock_mono_ms();
    int ready = 1;
    pthread_mutex_lock(&fk->mu);
    if (f->h.RequestApiKey == SF_PROTO_API_JoinGroup)
        ready = !fk->hold_joins || fk->left;
    else if (f->h.RequestApiKey == SF_PROTO_API_OffsetCommit)
        ready = now >= f->at + fk->commit_delay_ms;
    else if (f->h.RequestApiKey == SF_PROTO_API_OffsetFetch)
        ready = now >= f->at + fk->fetch_delay_ms;
    pthread_mutex_unlock(&fk->mu);
    return ready;
}

/* A request arrived behind @nq others of its connection (@q). */
static void fk_arrived(fk_t *fk, const fk_frame_t *q, int nq, const fk_frame_t *f) {
    pthread_mutex_lock(&fk->mu);
    fk->joins += f->h.RequestApiKey == SF_PROTO_API_JoinGroup;
    fk->syncs += f->h.RequestApiKey == SF_PROTO_API_SyncGroup;
    fk->hbs += f->h.RequestApiKey == SF_PROTO_API_Heartbeat;
    fk->commits += f->h.RequestApiKey == SF_PROTO_API_OffsetCommit;
    if (nq > 0 && q[0].h.RequestApiKey == SF_PROTO_API_JoinGroup)
        fk->behind_join++;
    pthread_mutex_unlock(&fk->mu);
}

static int fk_recv(int fd, fk_frame_t *f) {
    uint8_t szb[4];
    memset(f, 0, sizeof(*f));
    if (fk_read(fd, szb, 4) < 0)
        return -1;
    f->size = sf_load_be32(szb);
    if (f->size > (1u << 20) || !(f->buf = malloc(f->size ? f->size : 1)))
        return -1;
    if (fk_read(fd, f->buf, f->size) < 0)
        return -1;
    f->at = sf_clock_mono_ms();
    sf_rbuf_init(&f->rb, f->buf, f->size);
    return sf_proto_RequestHeader_decode(&f->rb, &f->h) == SF_OK ? 0 : -1;
}

static void *fk_conn_main(void *arg) {
    fk_conn_t *fc = arg;
    fk_t *fk = fc->fk;
    fk_frame_t q[FK_QUEUE];
    int nq = 0, i;
    for (;;) {
        struct pollfd pfd = {fc->fd, POLLIN, 0};
        if (poll(&pfd, 1, 5) > 0) {
            if (nq == FK_QUEUE || fk_recv(fc->fd, &q[nq]) < 0)
                break;
            fk_arrived(fk, q, nq, &q[nq]);
            nq++;
        }
        while (nq > 0 && fk_ready(fk, &q[0])) {
            fk_answer(fk, fc->fd, &q[0]);
            free(q[0].buf);
            memmove(q, q + 1, (size_t)--nq * sizeof(*q));
        }
    }
    for (i = 0; i <= nq && i < FK_QUEUE; i++)
        free(q[i].buf);
    shutdown(fc->fd, SHUT_RDWR);
    pthread_mutex_lock(&fk->mu);
    fk->open_conns--;
    pthread_mutex_unlock(&fk->mu);
    free(fc);
    return NULL;
}

static void *fk_accept_main(void *arg) {
    fk_t *fk = arg;
    for (;;) {
        int fd = accept(fk->lfd, NULL, NULL);
        fk_conn_t *fc;
        if (fd < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        pthread_mutex_lock(&fk->mu);
        if (fk->stop || fk->nfds == FK_CONNS) {
            pthread_mutex_unlock(&fk->mu);
            close(fd);
            break;
        }
        fc = calloc(1, sizeof(*fc));
        fc->fk = fk;
        fc->fd = fd;
        fk->fds[fk->nfds] = fd;
        fk->open_conns++;
        pthread_create(&fk->ths[fk->nfds], NULL, fk_conn_main, fc);
        fk->nfds++;
        pthread_mutex_unlock(&fk->mu);
    }
    return NULL;
}

/* A fake cluster of one broker (id 1) with topic "t" of 2 partitions, and @extra (NULL or a
 * topic of 2 partitions). */
static fk_t *fk_start(const char *extra) {
    fk_t *fk = calloc(1, sizeof(*fk));
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);
    int one = 1;
    pthread_mutex_init(&fk->mu, NULL);
    fk->topics[fk->ntopics].name = "t";
    fk->topics[fk->ntopics++].partitions = 2;
    if (extra) {
        fk->topics[fk->ntopics].name = extra;
        fk->topics[fk->ntopics++].partitions = 2;
    }
    fk->max_commit_gen = -1;
    fk->lfd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fk->lfd, 0);
    setsockopt(fk->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(fk->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    ck_assert_int_eq(listen(fk->lfd, 16), 0);
    getsockname(fk->lfd, (struct sockaddr *)&sa, &len);
    fk->port = ntohs(sa.sin_port);
    pthread_create(&fk->accept_th, NULL, fk_accept_main, fk);
    return fk;
}

static void fk_stop(fk_t *fk) {
    int i;
    pthread_mutex_lock(&fk->mu);
    fk->stop = 1;
    for (i = 0; i < fk->nfds; i++)
        shutdown(fk->fds[i], SHUT_RDWR);
    pthread_mutex_unlock(&fk->mu);
    shutdown(fk->lfd, SHUT_RDWR);
    pthread_join(fk->accept_th, NULL);
    for (i = 0; i < fk->nfds; i++) {
        pthread_join(fk->ths[i], NULL);
        close(fk->fds[i]);
    }
    close(fk->lfd);
    pthread_mutex_destroy(&fk->mu);
    free(fk);
}

/* fk->@field, read under the fake's lock. */
#define FK(fk, field) fk_get((fk), &(fk)->field)
static int fk_get(fk_t *fk, const int *field) {
    int v;
    pthread_mutex_lock(&fk->mu);
    v = *field;
    pthread_mutex_unlock(&fk->mu);
    return v;
}

static void fk_set(fk_t *fk, int *field, int v) {
    pthread_mutex_lock(&fk->mu);
    *field = v;
    pthread_mutex_unlock(&fk->mu);
}

static void fk_set16(fk_t *fk, int16_t *field, int v) {
    pthread_mutex_lock(&fk->mu);
    *field = (int16_t)v;
    pthread_mutex_unlock(&fk->mu);
}

/* ---- the application ---- */

typedef struct app {
    fk_t *fk;
    int assigned, revoked, lost, owned;
    int revoked_t, revoked_u; /* partitions of "t" and "u" revoked */
    int block_revoke;         /* the REVOKED callback waits for the fake to fence the member */
    int group_err, group_errs;
    int commit_done, commit_err;
    int inside, overlap;      /* callbacks running at once, and whether two ever did */
    int conns_in_cb;          /* the fake's open connections seen by the last commit callback */
    int assignment_rc;        /* sf_consumer_assignment inside that callback */
    int no_rebalance_cb;      /* the consumer has no rebalance callback */
} app_t;

static int64_t ms_now(void) {
    return sf_clock_mono_ms();
}

/* Wait up to @ms for fk->@field to reach @min. */
static int fk_wait(fk_t *fk, const int *field, int min, int ms) {
    int64_t until = ms_now() + ms;
    while (fk_get(fk, field) < min && ms_now() < until)
        usleep(2000);
    return fk_get(fk, field);
}

static void app_rebalance(sf_consumer_t *c, int event, const sf_topic_partition_t *parts,
                          size_t count, void *opaque) {
    app_t *app = opaque;
    size_t i;
    (void)c;
    if (event == SF_REBALANCE_ASSIGNED) {
        app->assigned++;
        app->owned += (int)count;
        return;
    }
    app->owned -= (int)count;
    if (event == SF_REBALANCE_LOST) {
        app->lost++;
        return;
    }
    app->revoked++;
    for (i = 0; i < count; i++) {
        app->revoked_t += strcmp(parts[i].topic, "t") == 0;
        app->revoked_u += strcmp(parts[i].topic, "u") == 0;
    }
    if (app->block_revoke) {
        /* Fenced while the application still hands the partitions back. */
        int before = FK(app->fk, hb_errs);
        fk_set16(app->fk, &app->fk->hb_err, SF_KERR_UNKNOWN_MEMBER_ID);
        ck_assert_int_gt(fk_wait(app->fk, &app->fk->hb_errs, before + 1, 5000), before);
        usleep(200000); /* the I/O thread takes the fencing in meanwhile */
        app->block_revoke = 0;
    }
}

static void app_commit_done(sf_consumer_t *c, int err, const sf_topic_partition_t *offsets,
                            size_t count, void *opaque) {
    app_t *app = opaque;
    sf_topic_partition_t *parts = NULL;
    size_t n = 0;
    (void)offsets;
    (void)count;
    if (app->inside++)
        app->overlap = 1;
    usleep(20000);
    app->commit_done++;
    app->commit_err = err;
    usleep(100000 * (err == SF_ERROR_DESTROYED)); /* a destroyed client's sockets close */
    app->conns_in_cb = FK(app->fk, open_conns);
    app->assignment_rc = sf_consumer_assignment(c, &parts, &n);
    sf_topic_partitions_destroy(parts);
    app->inside--;
}

/* A consumer of group "g" on the fake, with the options a test needs (NULL-terminated pairs
 * after the defaults), subscribed to @topic1 and @topic2 (either may be NULL). */
static sf_consumer_t *app_consumer(app_t *app, const char *topic1, const char *topic2,
                                   const char *const *opts) {
    const char *topics[2] = {topic1, topic2};
    sf_conf_t *conf = sf_conf_new();
    sf_consumer_t *c;
    char bs[64], err[256];
    size_t i;
    static const char *const defaults[] = {
        "group.id", "g",
        "heartbeat.interval.ms", "30",
        "session.timeout.ms", "6000",
        "max.poll.interval.ms", "20000",
        "request.timeout.ms", "3000",
        "retry.backoff.ms", "10",
        "reconnect.backoff.ms", "10",
        "reconnect.backoff.max.ms", "50",
        "enable.auto.commit", "false",
        "partition.assignment.strategy", "range",
        NULL};
    snprintf(bs, sizeof(bs), "127.0.0.1:%d", app->fk->port);
    ck_assert_int_eq(sf_conf_set(conf, "bootstrap.servers", bs, err, sizeof(err)), SF_OK);
    sf_conf_set(conf, "log_level", getenv("SF_TEST_DEBUG") ? "debug" : "err", NULL, 0);
    for (i = 0; defaults[i]; i += 2)
        ck_assert_int_eq(sf_conf_set(conf, defaults[i], defaults[i + 1], err, sizeof(err)), SF_OK);
    for (i = 0; opts && opts[i]; i += 2)
        ck_assert_msg(sf_conf_set(conf, opts[i], opts[i + 1], err, sizeof(err)) == SF_OK, "%s",
                      err);
    if (!app->no_rebalance_cb)
        sf_conf_set_rebalance_cb(conf, app_rebalance, app);
    c = sf_consumer_new(conf, err, sizeof(err));
    ck_assert_msg(c != NULL, "%s", err);
    sf_conf_destroy(conf);
    if (topic1)
        ck_assert_int_eq(sf_consumer_subscribe(c, topics, topic2 ? 2 : 1), SF_OK);
    return c;
}

/* Poll for @ms, noting the group's errors. */
static void app_poll(sf_consumer_t *c, app_t *app, int ms) {
    int64_t until = ms_now() + ms;
    do {
        sf_message_t *m = sf_consumer_poll(c, 10);
        if (m && m->err && m->partition < 0) {
            app->group_err = m->err;
            app->group_errs++;
        }
        sf_message_destroy(m);
    } while (ms_now() < until);
}

/* Poll until *@v reaches @min (up to @ms); returns *@v. */
static int app_poll_until(sf_consumer_t *c, app_t *app, const int *v, int min, int ms) {
    int64_t until = ms_now() + ms;
    while (*v < min && ms_now() < until)
        app_poll(c, app, 10);
    return *v;
}

/* A new member: assigned everything of its subscription (@n partitions). */
static void app_joined(sf_consumer_t *c, app_t *app, int n) {
    ck_assert_int_eq(app_poll_until(c, app, &app->assigned, 1, 5000), 1);
    ck_assert_int_eq(app->owned, n);
}

/* ---- the tests ---- */

/* A fencing while the REVOKED callback runs: the partitions being handed back are not
 * reported LOST on top, nothing is committed for them, and the member rejoins once the
 * callback returns. */
START_TEST(test_member_fenced_during_revoke) {
    static const char *const opts[] = {"enable.auto.commit", "true",
                                       "auto.commit.interval.ms", "60000", NULL};
    app_t app = {0};
    sf_consumer_t *c;
    app.fk = fk_start(NULL);
    c = app_consumer(&app, "t", NULL, opts);
    app_joined(c, &app, 2);
    app.block_revoke = 1;
    fk_set16(app.fk, &app.fk->hb_err, SF_KERR_REBALANCE_IN_PROGRESS);
    ck_assert_int_eq(app_poll_until(c, &app, &app.assigned, 2, 8000), 2);
    ck_assert_int_eq(app.revoked, 1);
    ck_assert_int_eq(app.lost, 0);
    ck_assert_int_eq(app.owned, 2);
    ck_assert_int_eq(FK(app.fk, commits), 0); /* the fenced member's revocation commits nothing */
    sf_consumer_destroy(c);
    fk_stop(app.fk);
}
END_TEST

/* A commit made in one generation and still retrying when the next begins is not sent in the
 * next one: it fails with REBALANCE_IN_PROGRESS (or ILLEGAL_GENERATION). */
START_TEST(test_member_commit_keeps_generation) {
    sf_topic_partition_t tp = {"t", 0, 5, 0};
    app_t app = {0};
    sf_consumer_t *c;
    int32_t gen;
    app.fk = fk_start(NULL);
    c = app_consumer(&app, "t", NULL, NULL);
    app_joined(c, &app, 2);
    gen = FK(app.fk, generation);
    pthread_mutex_lock(&app.fk->mu);
    app.fk->commit_err = SF_KERR_COORDINATOR_LOAD_IN_PROGRESS; /* retried */
    app.fk->commit_err_gen = gen;
    app.fk->hb_err = SF_KERR_REBALANCE_IN_PROGRESS;
    pthread_mutex_unlock(&app.fk->mu);
    ck_assert_int_eq(sf_consumer_commit_async(c, &tp, 1, app_commit_done, &app), SF_OK);
    ck_assert_int_eq(app_poll_until(c, &app, &app.commit_done, 1, 6000), 1);
    ck_assert_msg(app.commit_err == SF_KERR_REBALANCE_IN_PROGRESS ||
                      app.commit_err == SF_KERR_ILLEGAL_GENERATION,
                  "commit: %s", sf_error_name(app.commit_err));
    ck_assert_int_ge(FK(app.fk, commits), 1);
    ck_assert_int_eq(FK(app.fk, max_commit_gen), gen);
    ck_assert_int_eq(app_poll_until(c, &app, &app.assigned, 2, 5000), 2);
    ck_assert_int_gt(FK(app.fk, generation), gen);
    sf_consumer_destroy(c);
    fk_stop(app.fk);
}
END_TEST

/* A commit the coordinator refuses with UNKNOWN_MEMBER_ID fences the member: the commit
 * reports that error (once), the partitions are lost, the member rejoins. */
START_TEST(test_member_commit_refused) {
    sf_topic_partition_t tp = {"t", 0, 5, 0};
    app_t app = {0};
    sf_consumer_t *c;
    app.fk = fk_start(NULL);
    c = app_consumer(&app, "t", NULL, NULL);
    app_joined(c, &app, 2);
    pthread_mutex_lock(&app.fk->mu);
    app.fk->commit_err = SF_KERR_UNKNOWN_MEMBER_ID;
    app.fk->commit_err_gen = app.fk->generation;
    pthread_mutex_unlock(&app.fk->mu);
    ck_assert_int_eq(sf_consumer_commit_async(c, &tp, 1, app_commit_done, &app), SF_OK);
    ck_assert_int_eq(app_poll_until(c, &app, &app.assigned, 2, 5000), 2);
    ck_assert_int_eq(app.commit_done, 1);
    ck_assert_int_eq(app.commit_err, SF_KERR_UNKNOWN_MEMBER_ID);
    ck_assert_int_eq(app.lost, 1);
    ck_assert_int_eq(app.owned, 2);
    sf_consumer_destroy(c);
    fk_stop(app.fk);
}
END_TEST

/* While a JoinGroup waits at the coordinator nothing is queued behind it on its connection:
 * a commit fails at once with REBALANCE_IN_PROGRESS, an offset fetch waits, and the
 * LeaveGroup of the close goes past it. */
START_TEST(test_member_nothing_behind_join) {
    sf_topic_partition_t tp = {"t", 0, 5, 0};
    app_t app = {0};
    sf_consumer_t *c;
    int64_t t0;
    app.fk = fk_start(NULL);
    c = app_consumer(&app, "t", NULL, NULL);
    app_joined(c, &app, 2);
    pthread_mutex_lock(&app.fk->mu);
    app.fk->hold_joins = 1;
    app.fk->hb_err = SF_KERR_REBALANCE_IN_PROGRESS;
    pthread_mutex_unlock(&app.fk->mu);
    ck_assert_int_eq(app_poll_until(c, &app, &app.revoked, 1, 5000), 1);
    ck_assert_int_eq(fk_wait(app.fk, &app.fk->joins, 2, 5000), 2);
    t0 = ms_now();
    ck_assert_int_eq(sf_consumer_commit(c, &tp, 1, 2000), SF_KERR_REBALANCE_IN_PROGRESS);
    ck_assert_int_lt(ms_now() - t0, 1000);
    ck_assert_int_eq(sf_consumer_committed(c, &tp, 1, 300), SF_ERROR_TIMED_OUT);
    usleep(50000);
    ck_assert_int_eq(FK(app.fk, behind_join), 0);
    t0 = ms_now();
    sf_consumer_destroy(c);
    ck_assert_int_lt(ms_now() - t0, 2500);
    ck_assert_int_eq(FK(app.fk, leaves), 1);
    ck_assert_int_eq(FK(app.fk, behind_join), 0);
    fk_stop(app.fk);
}
END_TEST

/* FENCED_INSTANCE_ID is final: the partitions are lost, poll reports it, the member stays out
 * of the group (no JoinGroup) until it subscribes again. The same from a JoinGroup. */
START_TEST(test_member_fenced_instance) {
    static const char *const opts[] = {"group.instance.id", "i-1", NULL};
    const char *topic = "t";
    app_t app = {0};
    sf_consumer_t *c;
    int joins;
    app.fk = fk_start(NULL);
    c = app_consumer(&app, "t", NULL, opts);
    app_joined(c, &app, 2);
    fk_set16(app.fk, &app.fk->hb_err, SF_KERR_FENCED_INSTANCE_ID);
    ck_assert_int_eq(app_poll_until(c, &app, &app.group_errs, 1, 5000), 1);
    ck_assert_int_eq(app.group_err, SF_KERR_FENCED_INSTANCE_ID);
    ck_assert_int_eq(app.lost, 1);
    ck_assert_int_eq(app.owned, 0);
    joins = FK(app.fk, joins);
    app_poll(c, &app, 500);
    ck_assert_int_eq(FK(app.fk, joins), joins);
    ck_assert_int_eq(app.group_errs, 1);
    /* Subscribing again rejoins; a JoinGroup answered FENCED_INSTANCE_ID ends it again. */
    ck_assert_int_eq(sf_consumer_subscribe(c, &topic, 1), SF_OK);
    ck_assert_int_eq(app_poll_until(c, &app, &app.assigned, 2, 5000), 2);
    pthread_mutex_lock(&app.fk->mu);
    app.fk->join_err = SF_KERR_FENCED_INSTANCE_ID;
    app.fk->hb_err = SF_KERR_REBALANCE_IN_PROGRESS;
    pthread_mutex_unlock(&app.fk->mu);
    ck_assert_int_eq(app_poll_until(c, &app, &app.group_errs, 2, 5000), 2);
    ck_assert_int_eq(app.group_err, SF_KERR_FENCED_INSTANCE_ID);
    joins = FK(app.fk, joins);
    app_poll(c, &app, 500);
    ck_assert_int_eq(FK(app.fk, joins), joins);
    sf_consumer_destroy(c);
    fk_stop(app.fk);
}
END_TEST

/* cooperative-sticky: a topic dropped from the subscription is revoked before the JoinGroup,
 * which then claims none of its partitions. */
START_TEST(test_member_cooperative_drops_topic) {
    static const char *const opts[] = {"partition.assignment.strategy", "cooperative-sticky",
                                       NULL};
    const char *topic = "t";
    app_t app = {0};
    sf_consumer_t *c;
    app.fk = fk_start("u");
    c = app_consumer(&app, "t", "u", opts);
    app_joined(c, &app, 4);
    ck_assert_int_eq(FK(app.fk, joins), 1);
    fk_set(app.fk, &app.fk->join_owned_u, 0);
    ck_assert_int_eq(sf_consumer_subscribe(c, &topic, 1), SF_OK);
    ck_assert_int_eq(app_poll_until(c, &app, &app.revoked, 1, 5000), 1);
    ck_assert_int_ge(fk_wait(app.fk, &app.fk->joins, 2, 5000), 2);
    app_poll(c, &app, 300);
    ck_assert_int_eq(FK(app.fk, join_owned_u), 0);
    ck_assert_int_eq(FK(app.fk, joins), 2); /* no second round to revoke them */
    ck_assert_int_eq(app.revoked_u, 2);
    ck_assert_int_eq(app.revoked_t, 0);
    ck_assert_int_eq(app.owned, 2);
    sf_consumer_destroy(c);
    fk_stop(app.fk);
}
END_TEST

/* The close does not wait out request.timeout.ms for a slow offset fetch that finished, and
 * its LeaveGroup gets a time of its own after a commit that used up the close's. */
START_TEST(test_member_close_in_time) {
    static const char *const opts[] = {"request.timeout.ms", "6000", NULL};
    static const char *const opts2[] = {"enable.auto.commit", "true",
                                        "auto.commit.interval.ms", "60000",
                                        "request.timeout.ms", "1000", NULL};
    app_t app = {0};
    sf_consumer_t *c;
    int64_t t0;
    app.fk = fk_start(NULL);
    app.no_rebalance_cb = 1; /* no ASSIGNED event to wake the close either */
    fk_set(app.fk, &app.fk->fetch_delay_ms, 700);
    c = app_consumer(&app, "t", NULL, opts);
    ck_assert_int_eq(fk_wait(app.fk, &app.fk->fetches, 1, 5000), 1);
    t0 = ms_now();
    sf_consumer_destroy(c);
    ck_assert_int_lt(ms_now() - t0, 3000);
    ck_assert_int_eq(FK(app.fk, leaves), 1);
    fk_stop(app.fk);

    memset(&app, 0, sizeof(app));
    app.fk = fk_start(NULL);
    c = app_consumer(&app, "t", NULL, opts2);
    app_joined(c, &app, 2);
    fk_set(app.fk, &app.fk->commit_delay_ms, 1500);
    sf_consumer_destroy(c);
    ck_assert_int_ge(FK(app.fk, commits), 1);
    ck_assert_int_eq(FK(app.fk, leaves), 1);
    fk_stop(app.fk);
}
END_TEST

/* An offset fetch that keeps failing backs off, and poll reports its error once. */
START_TEST(test_member_fetch_backoff) {
    app_t app = {0};
    sf_consumer_t *c;
    int fetches;
    app.fk = fk_start(NULL);
    fk_set16(app.fk, &app.fk->fetch_err, 30); /* GROUP_AUTHORIZATION_FAILED */
    c = app_consumer(&app, "t", NULL, NULL);
    ck_assert_int_eq(fk_wait(app.fk, &app.fk->fetches, 1, 5000), 1);
    app_poll(c, &app, 1500);
    fetches = FK(app.fk, fetches);
    ck_assert_int_ge(fetches, 4);
    ck_assert_int_le(fetches, 12); /* every 10 ms: about 150 */
    ck_assert_int_eq(app.group_errs, 1);
    ck_assert_int_eq(app.group_err, 30);
    ck_assert_int_eq(app.assigned, 0);
    sf_consumer_destroy(c);
    fk_stop(app.fk);
}
END_TEST

/* A commit callback still owed at the close runs before the client goes, so the consumer
 * still works inside it (here a consumer that assigned its partition itself: nothing else
 * makes its close wait). */
START_TEST(test_member_commit_callback_at_close) {
    static const char *const opts[] = {"request.timeout.ms", "1000", NULL};
    sf_topic_partition_t tp = {"t", 0, 5, 0};
    app_t app = {0};
    sf_consumer_t *c;
    app.fk = fk_start(NULL);
    fk_set(app.fk, &app.fk->commit_delay_ms, 5000);
    c = app_consumer(&app, NULL, NULL, opts);
    ck_assert_int_eq(sf_consumer_assign(c, "t", 0, 0), SF_OK);
    ck_assert_int_eq(sf_consumer_commit_async(c, &tp, 1, app_commit_done, &app), SF_OK);
    ck_assert_int_eq(fk_wait(app.fk, &app.fk->commits, 1, 5000), 1);
    sf_consumer_destroy(c);
    ck_assert_int_eq(app.commit_done, 1);
    ck_assert_int_ne(app.commit_err, SF_OK);
    ck_assert_int_gt(app.conns_in_cb, 0);
    ck_assert_int_eq(app.assignment_rc, SF_OK);
    fk_stop(app.fk);
}
END_TEST

/* Two threads polling: the callbacks queued run one at a time. */
typedef struct poller {
    sf_consumer_t *c;
    app_t *app;
    int ms;
} poller_t;

static void *poller_main(void *arg) {
    poller_t *p = arg;
    int64_t until = ms_now() + p->ms;
    while (ms_now() < until)
        sf_message_destroy(sf_consumer_poll(p->c, 5));
    return NULL;
}

START_TEST(test_member_one_server) {
    sf_topic_partition_t tp = {"t", 0, 5, 0};
    app_t app = {0};
    sf_consumer_t *c;
    pthread_t th[2];
    poller_t p;
    int i;
    app.fk = fk_start(NULL);
    c = app_consumer(&app, "t", NULL, NULL);
    app_joined(c, &app, 2);
    for (i = 0; i < 10; i++)
        ck_assert_int_eq(sf_consumer_commit_async(c, &tp, 1, app_commit_done, &app), SF_OK);
    ck_assert_int_eq(fk_wait(app.fk, &app.fk->commits, 10, 5000), 10);
    usleep(100000); /* the ten callbacks are queued */
    p.c = c;
    p.app = &app;
    p.ms = 1500;
    for (i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, poller_main, &p);
    for (i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    ck_assert_int_eq(app.commit_done, 10);
    ck_assert_int_eq(app.overlap, 0);
    sf_consumer_destroy(c);
    fk_stop(app.fk);
}
END_TEST

/* A topic a pattern matched is not followed for good: once deleted, no refresh asks for it by
 * name, and the next JoinGroup no longer subscribes to it. */
START_TEST(test_member_pattern_forgets_topic) {
    static const char *const opts[] = {"metadata.max.age.ms", "100", NULL};
    app_t app = {0};
    sf_consumer_t *c;
    int i;
    app.fk = fk_start("pa");
    fk_set16(app.fk, &app.fk->fetch_err, 30); /* its partitions never start (nor are followed) */
    c = app_consumer(&app, "^p.*", NULL, opts);
    ck_assert_int_eq(fk_wait(app.fk, &app.fk->syncs, 1, 5000), 1);
    ck_assert_int_eq(FK(app.fk, join_topic_pa), 1);
    pthread_mutex_lock(&app.fk->mu);
    for (i = 0; i < app.fk->ntopics; i++)
        app.fk->topics[i].deleted |= strcmp(app.fk->topics[i].name, "pa") == 0;
    app.fk->md_named_pa = 0;
    pthread_mutex_unlock(&app.fk->mu);
    ck_assert_int_ge(fk_wait(app.fk, &app.fk->joins, 2, 5000), 2);
    app_poll(c, &app, 600);
    ck_assert_int_eq(FK(app.fk, join_topic_pa), 0);
    ck_assert_int_eq(FK(app.fk, md_named_pa), 0);
    sf_consumer_destroy(c);
    fk_stop(app.fk);
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
    TCase *mem = tcase_create("member");
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
    tcase_add_test(mem, test_member_fenced_during_revoke);
    tcase_add_test(mem, test_member_commit_keeps_generation);
    tcase_add_test(mem, test_member_commit_refused);
    tcase_add_test(mem, test_member_nothing_behind_join);
    tcase_add_test(mem, test_member_fenced_instance);
    tcase_add_test(mem, test_member_cooperative_drops_topic);
    tcase_add_test(mem, test_member_close_in_time);
    tcase_add_test(mem, test_member_fetch_backoff);
    tcase_add_test(mem, test_member_commit_callback_at_close);
    tcase_add_test(mem, test_member_one_server);
    tcase_add_test(mem, test_member_pattern_forgets_topic);
    tcase_set_timeout(mem, 60);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    suite_add_tcase(s, mem);
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
