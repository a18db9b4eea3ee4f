/* Unit tests for the consumer groups: the bucket of a group id (Kafka's abs(String.hashCode) %
 * n, expected values computed with Java's String), the controller's bucket placement, the
 * /coordinators/groups codec, group id znode names, and the coordinator's classic group
 * protocol (broker/group) over a real event_base without a cluster (sf_coord_new with NULL:
 * groups start empty, commits fail with COORDINATOR_NOT_AVAILABLE). Timeouts are a few ms, so
 * the tests that wait for one run the loop until it fires. */
#include <check.h>
#include <event2/event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "err.h"
#include "group.h"
#include "group_int.h"
#include "logging.h"
#include "placement.h"
#include "znode.h"

#define S(lit) lit, strlen(lit)

/* ---- the bucket of a group id ---- */

/* abs(hashCode) as Kafka's Utils.abs: with n = INT32_MAX the bucket is the value itself (all
 * of those below are smaller). */
static int java_abs_hash(const char *s, size_t len) {
    return sf_coord_bucket_of(s, len, INT32_MAX);
}

START_TEST(test_bucket_of_java) {
    /* String.hashCode of new String(bytes, UTF_8) in OpenJDK 17, and Utils.abs of it. */
    static const struct {
        const char *s;
        int32_t hash;
    } v[] = {
        {"", 0},
        {"g1", 3242},
        {"test-group", 627841412},
        {"grüppe", -1233264812},            /* U+00FC: one UTF-16 unit, two UTF-8 bytes */
        {"team-\xF0\x9F\x9A\x80-consumers", 103386435}, /* U+1F680: surrogate pair D83D DE80 */
        {"\xE2\x82\xAC", 8364},             /* U+20AC, three UTF-8 bytes */
        {"polygenelubricants", INT32_MIN},  /* Utils.abs(Integer.MIN_VALUE) is 0 */
    };
    size_t i;
    for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        int want = v[i].hash == INT32_MIN ? 0 : v[i].hash < 0 ? -v[i].hash : v[i].hash;
        int got = java_abs_hash(v[i].s, strlen(v[i].s));
        ck_assert_msg(got == want, "abs(hashCode(\"%s\")): %d, Java %d", v[i].s, got, want);
    }
    /* The bucket is that modulo the number of buckets (50 by default). */
    ck_assert_int_eq(sf_coord_bucket_of(S("g1"), 50), 42);
    ck_assert_int_eq(sf_coord_bucket_of(S("test-group"), 50), 12);
    ck_assert_int_eq(sf_coord_bucket_of(S("grüppe"), 50), 12);
    ck_assert_int_eq(sf_coord_bucket_of(S("team-\xF0\x9F\x9A\x80-consumers"), 50), 35);
    ck_assert_int_eq(sf_coord_bucket_of(S("polygenelubricants"), 50), 0);
    ck_assert_int_eq(sf_coord_bucket_of(S(""), 50), 0);
    ck_assert_int_eq(sf_coord_bucket_of(S("g1"), 1), 0);
}
END_TEST

START_TEST(test_bucket_of_long) {
    /* "consumer-group-" 20 times (300 characters; the hash wraps many times). */
    char s[301];
    int i;
    for (i = 0; i < 20; i++)
        memcpy(s + 15 * i, "consumer-group-", 15);
    s[300] = '\0';
    ck_assert_int_eq(java_abs_hash(s, 300), 873643456);
    ck_assert_int_eq(sf_coord_bucket_of(s, 300, 50), 6);
    /* Only @len bytes count, not up to a NUL. */
    ck_assert_int_eq(java_abs_hash("g1xyz", 2), 3242);
}
END_TEST

/* Bytes that are not UTF-8, as Java's decoder turns them into U+FFFD (values from OpenJDK 17:
 * new String(bytes, UTF_8).hashCode()). */
START_TEST(test_bucket_of_invalid_utf8) {
    ck_assert_int_eq(java_abs_hash(S("\xFF")), 65533);           /* FFFD */
    ck_assert_int_eq(java_abs_hash(S("A\xFF" "B")), 2094054);    /* 0041 FFFD 0042 */
    ck_assert_int_eq(java_abs_hash(S("AB\xC3")), 130044);        /* truncated at the end */
    ck_assert_int_eq(java_abs_hash(S("\xE2\x82" "x")), 2031643); /* FFFD 0078 */
    ck_assert_int_eq(java_abs_hash(S("\xF0")), 65533);
}
END_TEST

/* Sequences that look like UTF-8 but are not valid (an overlong form, a truncated sequence at
 * the very end, an encoded surrogate, a code point above U+10FFFF) hash as Java's decoder
 * replaces them: the number of U+FFFD each gives matters. */
START_TEST(test_bucket_of_invalid_utf8_java_rules) {
    static const struct {
        const char *s;
        int java;
    } v[] = {
        {"\xC0\x80", 2097056},            /* overlong: FFFD FFFD */
        {"\xE2\x82", 65533},              /* truncated at the end: one FFFD */
        {"\xED\xA0\x80", 65533},          /* an encoded surrogate: one FFFD */
        {"\xF4\x90\x80\x80", 2017367872}, /* above U+10FFFF: FFFD x 4 */
    };
    char msg[512] = "";
    size_t i;
    int bad = 0;
    for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        int got = java_abs_hash(v[i].s, strlen(v[i].s));
        if (got != v[i].java) {
            bad++;
            snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), " [case %zu: %d, Java %d]", i,
                     got, v[i].java);
        }
    }
    ck_assert_msg(!bad, "abs(hashCode) differs from Java's:%s", msg);
}
END_TEST

/* ---- bucket placement ---- */

static void counts_of(const sf_cluster_bucket_t *v, int n, const int32_t *ids, int nids,
                      int *count) {
    int b, i;
    memset(count, 0, (size_t)nids * sizeof(int));
    for (b = 0; b < n; b++) {
        for (i = 0; i < nids && ids[i] != v[b].broker; i++)
            ;
        ck_assert_msg(i < nids, "bucket %d on broker %d, not a live one", b, v[b].broker);
        count[i]++;
    }
}

START_TEST(test_placement_initial) {
    sf_cluster_bucket_t cur[50], out[50];
    static const int32_t live[] = {1, 2, 3};
    int count[3], b;
    for (b = 0; b < 50; b++)
        cur[b].broker = cur[b].epoch = -1;
    ck_assert_int_eq(sf_placement_buckets(cur, 50, live, 3, out), 50);
    counts_of(out, 50, live, 3, count);
    ck_assert_int_eq(count[0], 17);
    ck_assert_int_eq(count[1], 17);
    ck_assert_int_eq(count[2], 16);
    for (b = 0; b < 50; b++)
        ck_assert_int_eq(out[b].epoch, 0);
    /* The input is left as it was. */
    ck_assert_int_eq(cur[7].broker, -1);
    ck_assert_int_eq(cur[7].epoch, -1);

    /* One live broker takes everything. */
    ck_assert_int_eq(sf_placement_buckets(cur, 50, live + 1, 1, out), 50);
    for (b = 0; b < 50; b++) {
        ck_assert_int_eq(out[b].broker, 2);
        ck_assert_int_eq(out[b].epoch, 0);
    }
}
END_TEST

START_TEST(test_placement_moves) {
    sf_cluster_bucket_t cur[50], out[50], out2[50], out3[50];
    static const int32_t three[] = {1, 2, 3}, two[] = {1, 3}, again[] = {1, 3, 4};
    int count[3], b, moved;
    for (b = 0; b < 50; b++) {
        cur[b].broker = three[b % 3];
        cur[b].epoch = b; /* epochs of their own, to see which move */
    }
    /* Balanced already: nothing moves. */
    ck_assert_int_eq(sf_placement_buckets(cur, 50, three, 3, out), 0);
    ck_assert_mem_eq(out, cur, sizeof(cur));

    /* Broker 2 is gone: its 17 buckets go to 1 and 3 (25 each), epoch + 1; no other moves. */
    ck_assert_int_eq(sf_placement_buckets(cur, 50, two, 2, out), 17);
    counts_of(out, 50, two, 2, count);
    ck_assert_int_eq(count[0], 25);
    ck_assert_int_eq(count[1], 25);
    for (b = 0; b < 50; b++) {
        if (cur[b].broker == 2) {
            ck_assert_int_ne(out[b].broker, 2);
            ck_assert_int_eq(out[b].epoch, cur[b].epoch + 1);
        } else {
            ck_assert_int_eq(out[b].broker, cur[b].broker);
            ck_assert_int_eq(out[b].epoch, cur[b].epoch);
        }
    }
    /* Balanced over the two: nothing moves. */
    ck_assert_int_eq(sf_placement_buckets(out, 50, two, 2, out2), 0);
    ck_assert_mem_eq(out2, out, sizeof(out));

    /* A new broker 4 gets buckets until the counts differ by at most one (16 moves). */
    moved = sf_placement_buckets(out, 50, again, 3, out2);
    ck_assert_int_eq(moved, 16);
    counts_of(out2, 50, again, 3, count);
    ck_assert_int_eq(count[0] + count[1] + count[2], 50);
    ck_assert_int_eq(count[2], 16);
    ck_assert_int_le(abs(count[0] - count[1]), 1);
    for (b = 0; b < 50; b++) {
        if (out2[b].broker != out[b].broker) {
            ck_assert_int_eq(out2[b].broker, 4); /* only toward the new one */
            ck_assert_int_eq(out2[b].epoch, out[b].epoch + 1);
        } else {
            ck_assert_int_eq(out2[b].epoch, out[b].epoch);
        }
    }
    ck_assert_int_eq(sf_placement_buckets(out2, 50, again, 3, out3), 0);
    ck_assert_mem_eq(out3, out2, sizeof(out2));
}
END_TEST

START_TEST(test_placement_uneven) {
    /* Everything on broker 1 with 2 and 3 live: 10 buckets end 4/3/3, 6 moved. */
    sf_cluster_bucket_t cur[10], out[10];
    static const int32_t live[] = {1, 2, 3};
    int count[3], b;
    for (b = 0; b < 10; b++) {
        cur[b].broker = 1;
        cur[b].epoch = 3;
    }
    ck_assert_int_eq(sf_placement_buckets(cur, 10, live, 3, out), 6);
    counts_of(out, 10, live, 3, count);
    ck_assert_int_eq(count[0], 4);
    ck_assert_int_eq(count[1], 3);
    ck_assert_int_eq(count[2], 3);
    for (b = 0; b < 10; b++)
        ck_assert_int_eq(out[b].epoch, out[b].broker == 1 ? 3 : 4);
    /* A bucket of a dead broker and unowned ones, one bucket per broker in the end. */
    cur[0].broker = 9;
    cur[1].broker = -1;
    cur[2].broker = 2;
    ck_assert_int_eq(sf_placement_buckets(cur, 3, live, 3, out), 2);
    counts_of(out, 3, live, 3, count);
    ck_assert_int_eq(count[0], 1);
    ck_assert_int_eq(count[1], 1);
    ck_assert_int_eq(count[2], 1);
    ck_assert_int_eq(out[2].broker, 2);
    ck_assert_int_eq(out[2].epoch, 3);
    ck_assert_int_eq(out[0].epoch, 4);
    ck_assert_int_eq(out[1].epoch, 4);
}
END_TEST

/* ---- /coordinators/groups ---- */

START_TEST(test_buckets_znode) {
    static const sf_cluster_bucket_t v[] = {{1, 0}, {-1, 0}, {2, 7}, {2147483647, 2147483647}};
    sf_cluster_bucket_t *out;
    char *s = sf_znode_buckets_encode(v, 4);
    int n;
    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(s, "{\"version\":1,\"buckets\":[{\"broker\":1,\"epoch\":0},{\"broker\":-1,"
                        "\"epoch\":0},{\"broker\":2,\"epoch\":7},{\"broker\":2147483647,"
                        "\"epoch\":2147483647}]}");
    ck_assert_int_eq(sf_znode_buckets_decode(s, strlen(s), &out, &n), SF_OK);
    ck_assert_int_eq(n, 4);
    ck_assert_mem_eq(out, v, sizeof(v));
    free(out);
    free(s);
    /* Key order, whitespace, a newer version and unknown keys do not matter. */
    ck_assert_int_eq(sf_znode_buckets_decode(S("{ \"buckets\": [ {\"epoch\": 3, \"x\": 1, "
                                               "\"broker\": 5} ], \"version\": 2, \"y\": [] }"),
                                             &out, &n),
                     SF_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(out[0].broker, 5);
    ck_assert_int_eq(out[0].epoch, 3);
    free(out);
}
END_TEST

START_TEST(test_buckets_znode_max) {
    sf_cluster_bucket_t *v = calloc(SF_CLUSTER_MAX_BUCKETS + 1, sizeof(*v)), *out;
    char *s;
    int n, b;
    ck_assert_ptr_nonnull(v);
    for (b = 0; b <= SF_CLUSTER_MAX_BUCKETS; b++) {
        v[b].broker = b % 7;
        v[b].epoch = b;
    }
    s = sf_znode_buckets_encode(v, SF_CLUSTER_MAX_BUCKETS);
    ck_assert_int_eq(sf_znode_buckets_decode(s, strlen(s), &out, &n), SF_OK);
    ck_assert_int_eq(n, SF_CLUSTER_MAX_BUCKETS);
    ck_assert_mem_eq(out, v, SF_CLUSTER_MAX_BUCKETS * sizeof(*v));
    free(out);
    free(s);
    s = sf_znode_buckets_encode(v, SF_CLUSTER_MAX_BUCKETS + 1);
    out = (sf_cluster_bucket_t *)1;
    n = 5;
    ck_assert_int_eq(sf_znode_buckets_decode(s, strlen(s), &out, &n), SF_ERR_MALFORMED);
    ck_assert_ptr_null(out);
    ck_assert_int_eq(n, 0);
    free(s);
    free(v);
}
END_TEST

START_TEST(test_buckets_znode_malformed) {
    static const char *const bad[] = {
        "",
        "null",
        "[]",
        "{\"version\":1,\"buckets\":[{\"broker\":1,\"epoch\":0}",   /* truncated */
        "{\"version\":1}",
        "{\"version\":1,\"buckets\":{}}",                              /* not an array */
        "{\"version\":1,\"buckets\":\"1\"}",
        "{\"version\":1,\"buckets\":[]}",                              /* no bucket */
        "{\"version\":0,\"buckets\":[{\"broker\":1,\"epoch\":0}]}",   /* version */
        "{\"buckets\":[{\"broker\":1,\"epoch\":0}]}",
        "{\"version\":1,\"buckets\":[{\"broker\":1,\"epoch\":-1}]}",  /* negative epoch */
        "{\"version\":1,\"buckets\":[{\"broker\":-2,\"epoch\":0}]}",  /* broker < -1 */
        "{\"version\":1,\"buckets\":[{\"broker\":2147483648,\"epoch\":0}]}",
        "{\"version\":1,\"buckets\":[{\"broker\":1,\"epoch\":2147483648}]}",
        "{\"version\":1,\"buckets\":[{\"broker\":1}]}",
        "{\"version\":1,\"buckets\":[{\"epoch\":0}]}",
        "{\"version\":1,\"buckets\":[{\"broker\":\"1\",\"epoch\":0}]}",
        "{\"version\":1,\"buckets\":[{\"broker\":1.5,\"epoch\":0}]}",
        "{\"version\":1,\"buckets\":[{\"broker\":1,\"epoch\":null}]}",
        "{\"version\":1,\"buckets\":[{\"broker\":1,\"epoch\":0},7]}",
        "{\"version\":1,\"buckets\":[[1,0]]}",
        "{\"version\":1,\"version\":1,\"buckets\":[{\"broker\":1,\"epoch\":0}]}", /* duplicate */
    };
    size_t i;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        sf_cluster_bucket_t *out = (sf_cluster_bucket_t *)1;
        int n = 9;
        ck_assert_msg(sf_znode_buckets_decode(bad[i], strlen(bad[i]), &out, &n) == SF_ERR_MALFORMED,
                      "accepted: %s", bad[i]);
        ck_assert_ptr_null(out);
        ck_assert_int_eq(n, 0);
    }
    {
        /* A length shorter than the text: only those bytes count. */
        static const char ok[] = "{\"version\":1,\"buckets\":[{\"broker\":1,\"epoch\":0}]}";
        sf_cluster_bucket_t *out;
        int n;
        ck_assert_int_eq(sf_znode_buckets_decode(ok, sizeof(ok) - 2, &out, &n), SF_ERR_MALFORMED);
        ck_assert_int_eq(sf_znode_buckets_decode(NULL, 0, &out, &n), SF_ERR_MALFORMED);
    }
}
END_TEST

/* ---- group id znode names ---- */

static const char *znode_of(const char *group) {
    static char out[3 * 300 + 1];
    ck_assert_uint_le(strlen(group), 300);
    sf_cluster_group_znode(group, out);
    return out;
}

START_TEST(test_group_znode) {
    ck_assert_str_eq(znode_of("g1"), "g1");
    ck_assert_str_eq(znode_of("Az09._-"), "Az09._-");
    ck_assert_str_eq(znode_of("x.y"), "x.y");
    ck_assert_str_eq(znode_of("a/b"), "a%2Fb");
    ck_assert_str_eq(znode_of(".x"), "%2Ex");
    ck_assert_str_eq(znode_of("."), "%2E");
    ck_assert_str_eq(znode_of(".."), "%2E.");
    ck_assert_str_eq(znode_of("zookeeper"), "zookeeper");
    ck_assert_str_eq(znode_of("a b%c"), "a%20b%25c");
    ck_assert_str_eq(znode_of("grüppe"), "gr%C3%BCppe");
    ck_assert_str_eq(znode_of("\xF0\x9F\x9A\x80"), "%F0%9F%9A%80");
    ck_assert_str_eq(znode_of("\x01\x7F\xFF"), "%01%7F%FF");
    ck_assert_str_eq(znode_of(""), "");
}
END_TEST

START_TEST(test_group_znode_injective) {
    /* Different ids never share a znode: '%' itself is escaped. */
    char a[16], b[16];
    sf_cluster_group_znode("a%2Fb", a);
    sf_cluster_group_znode("a/b", b);
    ck_assert_str_ne(a, b);
    ck_assert_str_eq(a, "a%252Fb");
    /* The worst case fills exactly 3 bytes per byte. */
    {
        char id[256], out[3 * 255 + 2];
        memset(id, '/', 255);
        id[255] = '\0';
        memset(out, 'Z', sizeof(out));
        sf_cluster_group_znode(id, out);
        ck_assert_uint_eq(strlen(out), 3 * 255);
        ck_assert_int_eq(out[3 * 255 + 1], 'Z');
    }
}
END_TEST

/* ---- the coordinator ---- */

#define OURS "g1"   /* bucket 0 of 2 (hashCode 3242), broker 1: this coordinator */
#define THEIRS "g2" /* bucket 1 of 2 (hashCode 3243), broker 2 */
#define NAMELEN 160

static struct event_base *base;
static sf_coord_t *coord;
static sf_coord_config_t cfg;
static sf_cluster_bucket_t two_buckets[] = {{1, 0}, {2, 0}};

static void coord_start(void) {
    sf_cluster_snapshot_t snap;
    ck_assert_ptr_nonnull(coord = sf_coord_new(base, NULL, &cfg));
    memset(&snap, 0, sizeof(snap));
    snap.group_buckets = two_buckets;
    snap.ngroup_buckets = 2;
    sf_coord_update(coord, &snap);
}

static void setup(void) {
    ck_assert_ptr_nonnull(base = event_base_new());
    memset(&cfg, 0, sizeof(cfg));
    cfg.broker_id = 1;
    cfg.min_session_ms = 10;
    cfg.max_session_ms = 30000;
    cfg.initial_delay_ms = 0;
    cfg.max_size = 10;
    cfg.metadata_max_bytes = 64;
    ck_assert_int_eq(sf_coord_bucket_of(S(OURS), 2), 0);
    ck_assert_int_eq(sf_coord_bucket_of(S(THEIRS), 2), 1);
    coord_start();
}

static void teardown(void) {
    sf_coord_free(coord);
    coord = NULL;
    event_base_free(base);
    base = NULL;
}

/* Run @fn(g, @ctx) on the group @id; returns the error sf_coord_with_group gave (the group is
 * loaded at once without a cluster, so the callback has run when this returns). */
typedef void (*gop_fn)(sf_group_t *g, void *ctx);
struct gop {
    gop_fn fn;
    void *ctx;
    int called;
    int16_t err;
};

static void gop_run(void *arg, sf_group_t *g, int16_t err) {
    struct gop *o = arg;
    o->called++;
    o->err = err;
    ck_assert(err ? g == NULL : g != NULL);
    if (g)
        o->fn(g, o->ctx);
}

static int16_t with_group(const char *id, gop_fn fn, void *ctx) {
    struct gop o = {fn, ctx, 0, -2};
    sf_coord_with_group(coord, id, gop_run, &o);
    ck_assert_int_eq(o.called, 1);
    return o.err;
}

static void copy(char *dst, const char *src) {
    ck_assert_uint_lt(strlen(src ? src : ""), NAMELEN);
    strcpy(dst, src ? src : "");
}

/* A JoinGroup's answer. */
typedef struct jres {
    int called;
    int16_t error;
    int32_t generation;
    char protocol_type[NAMELEN], protocol[NAMELEN], leader[NAMELEN], member_id[NAMELEN];
    int nmembers;
    char members[8][NAMELEN];
    size_t meta_len[8];
} jres_t;

/* A SyncGroup's answer. */
typedef struct sres {
    int called;
    int16_t error;
    char protocol_type[NAMELEN], protocol[NAMELEN];
    uint8_t data[64];
    size_t len;
} sres_t;

/* A member as a client sees it. */
typedef struct tmember {
    char id[NAMELEN];
    const char *client_id, *protocol_type;
    const char *protocols[3];
    int nprotocols;
    int32_t session_ms, rebalance_ms;
    int require_known_id;
    const char *topic; /* subscribed to (consumer protocol metadata) */
    const uint8_t *raw_meta; /* else this metadata for every protocol */
    size_t raw_len;
    jres_t j;
    sres_t s;
} tmember_t;

static void join_cb(void *arg, const sf_gjoin_result_t *r) {
    jres_t *j = arg;
    int i;
    j->called++;
    j->error = r->error;
    j->generation = r->generation;
    copy(j->protocol_type, r->protocol_type);
    copy(j->protocol, r->protocol_name);
    copy(j->leader, r->leader);
    copy(j->member_id, r->member_id);
    ck_assert_int_le(r->nmembers, 8);
    j->nmembers = r->nmembers;
    for (i = 0; i < r->nmembers; i++) {
        copy(j->members[i], r->members[i].member_id);
        j->meta_len[i] = r->members[i].len;
    }
}

static void sync_cb(void *arg, int16_t error, const char *protocol_type, const char *protocol_name,
                    const uint8_t *data, size_t len) {
    sres_t *s = arg;
    s->called++;
    s->error = error;
    copy(s->protocol_type, protocol_type);
    copy(s->protocol, protocol_name);
    ck_assert_uint_le(len, sizeof(s->data));
    if (len)
        memcpy(s->data, data, len);
    s->len = len;
}

/* ConsumerProtocolSubscription v0 of one topic: int16 version, int32 count, topics (int16
 * length strings), int32 user data length (-1). */
static size_t subscription(const char *topic, uint8_t *out) {
    size_t tl = strlen(topic);
    uint8_t *p = out;
    *p++ = 0, *p++ = 0;
    *p++ = 0, *p++ = 0, *p++ = 0, *p++ = 1;
    *p++ = (uint8_t)(tl >> 8), *p++ = (uint8_t)tl;
    memcpy(p, topic, tl);
    p += tl;
    *p++ = 0xff, *p++ = 0xff, *p++ = 0xff, *p++ = 0xff;
    return (size_t)(p - out);
}

static void tmember_init(tmember_t *m, const char *client_id) {
    memset(m, 0, sizeof(*m));
    m->client_id = client_id;
    m->protocol_type = "consumer";
    m->protocols[0] = "range";
    m->nprotocols = 1;
    m->session_ms = 10000;
    m->rebalance_ms = 10000;
    m->require_known_id = 1;
    m->topic = "t";
}

static void op_join(sf_group_t *g, void *ctx) {
    tmember_t *m = ctx;
    uint8_t meta[3][64];
    sf_gprotocol_t p[3];
    sf_gjoin_t req;
    int i;
    memset(&req, 0, sizeof(req));
    for (i = 0; i < m->nprotocols; i++) {
        p[i].name = m->protocols[i];
        p[i].meta = m->raw_meta ? m->raw_meta : meta[i];
        p[i].len = m->raw_meta ? m->raw_len : subscription(m->topic, meta[i]);
    }
    req.member_id = m->id;
    req.client_id = m->client_id;
    req.client_host = "/127.0.0.1";
    req.protocol_type = m->protocol_type;
    req.session_ms = m->session_ms;
    req.rebalance_ms = m->rebalance_ms;
    req.protocols = p;
    req.nprotocols = m->nprotocols;
    req.require_known_id = m->require_known_id;
    sf_group_join(g, &req, join_cb, &m->j);
}

/* JoinGroup from @m (with its member id, "" for a new one). Returns whether it was answered. */
static int join(tmember_t *m) {
    int before = m->j.called;
    ck_assert_int_eq(with_group(OURS, op_join, m), SF_KERR_NONE);
    return m->j.called > before;
}

/* A new member's first join as a v4+ client sends it: MEMBER_ID_REQUIRED with its id, then
 * the join with it. Returns whether the second join was answered. */
static int join_new(tmember_t *m) {
    ck_assert_str_eq(m->id, "");
    ck_assert(join(m));
    ck_assert_int_eq(m->j.error, SF_KERR_MEMBER_ID_REQUIRED);
    ck_assert_int_eq(m->j.generation, -1);
    ck_assert_uint_gt(strlen(m->j.member_id), strlen(m->client_id));
    ck_assert_int_eq(strncmp(m->j.member_id, m->client_id, strlen(m->client_id)), 0);
    copy(m->id, m->j.member_id);
    return join(m);
}

struct sync_args {
    tmember_t *m;
    int32_t generation;
    const sf_gassignment_t *a;
    int n;
};

static void op_sync(sf_group_t *g, void *ctx) {
    struct sync_args *s = ctx;
    sf_group_sync(g, s->m->id, NULL, s->generation, NULL, NULL, s->a, s->n, sync_cb, &s->m->s);
}

/* SyncGroup from @m (the leader hands @a, @n assignments). Returns whether it was answered. */
static int sync_as(tmember_t *m, int32_t generation, const sf_gassignment_t *a, int n) {
    struct sync_args s = {m, generation, a, n};
    int before = m->s.called;
    ck_assert_int_eq(with_group(OURS, op_sync, &s), SF_KERR_NONE);
    return m->s.called > before;
}

struct hb_args {
    const char *member;
    int32_t generation;
    int16_t err;
    int leave;
};

static void op_hb(sf_group_t *g, void *ctx) {
    struct hb_args *h = ctx;
    h->err = h->leave ? sf_group_leave(g, h->member, NULL)
                      : sf_group_heartbeat(g, h->member, NULL, h->generation);
}

static int16_t heartbeat(const char *member, int32_t generation) {
    struct hb_args h = {member, generation, -2, 0};
    ck_assert_int_eq(with_group(OURS, op_hb, &h), SF_KERR_NONE);
    return h.err;
}

static int16_t leave(const char *member) {
    struct hb_args h = {member, 0, -2, 1};
    ck_assert_int_eq(with_group(OURS, op_hb, &h), SF_KERR_NONE);
    return h.err;
}

/* What DescribeGroups would show. */
typedef struct gdesc {
    char state[NAMELEN], protocol_type[NAMELEN], protocol[NAMELEN];
    int nmembers;
    char members[8][NAMELEN], clients[8][NAMELEN];
    size_t assignment_len[8];
} gdesc_t;

static void describe_fill(void *arg, const sf_gdescription_t *d) {
    gdesc_t *o = arg;
    int i;
    copy(o->state, d->state);
    copy(o->protocol_type, d->protocol_type);
    copy(o->protocol, d->protocol);
    ck_assert_int_le(d->nmembers, 8);
    o->nmembers = d->nmembers;
    for (i = 0; i < d->nmembers; i++) {
        copy(o->members[i], d->members[i].member_id);
        copy(o->clients[i], d->members[i].client_id);
        o->assignment_len[i] = d->members[i].assignment_len;
    }
}

static void op_describe(sf_group_t *g, void *ctx) {
    ck_assert_int_eq(sf_group_describe(g, describe_fill, ctx), SF_OK);
}

static gdesc_t describe(const char *id) {
    gdesc_t d;
    memset(&d, 0, sizeof(d));
    ck_assert_int_eq(with_group(id, op_describe, &d), SF_KERR_NONE);
    return d;
}

/* Groups held in memory by the coordinator. */
static size_t ngroups(void) {
    return coord->ngroups;
}

static void guard_cb(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    *(int *)arg = 1;
}

/* Run the event loop until @done(@ctx) or @max_ms passed; returns @done(@ctx). */
static int drive(int (*done)(void *), void *ctx, int max_ms) {
    struct timeval tv = {max_ms / 1000, (max_ms % 1000) * 1000};
    int expired = 0;
    struct event *guard = evtimer_new(base, guard_cb, &expired);
    ck_assert_ptr_nonnull(guard);
    evtimer_add(guard, &tv);
    while (!(done && done(ctx)) && !expired)
        event_base_loop(base, EVLOOP_ONCE);
    event_free(guard);
    return done && done(ctx);
}

static int answered(void *ctx) {
    return ((jres_t *)ctx)->called > 0;
}

/* @m alone in group OURS, Stable at generation 1 (@m the leader, assignment "A"). */
static void one_member_stable(tmember_t *m) {
    static const uint8_t data[] = {'A'};
    sf_gassignment_t a = {NULL, data, 1};
    ck_assert(join_new(m));
    ck_assert_int_eq(m->j.error, SF_KERR_NONE);
    ck_assert_int_eq(m->j.generation, 1);
    a.member_id = m->id;
    ck_assert(sync_as(m, 1, &a, 1));
    ck_assert_int_eq(m->s.error, SF_KERR_NONE);
}

START_TEST(test_join_sync_single) {
    tmember_t m;
    static const uint8_t data[] = {0, 1, 2, 3};
    sf_gassignment_t a = {NULL, data, sizeof(data)};
    gdesc_t d;
    tmember_init(&m, "c1");
    /* v4: MEMBER_ID_REQUIRED first, then generation 1 with the member as leader. */
    ck_assert(join_new(&m));
    ck_assert_int_eq(m.j.error, SF_KERR_NONE);
    ck_assert_int_eq(m.j.generation, 1);
    ck_assert_str_eq(m.j.leader, m.id);
    ck_assert_str_eq(m.j.member_id, m.id);
    ck_assert_str_eq(m.j.protocol, "range");
    ck_assert_str_eq(m.j.protocol_type, "consumer");
    ck_assert_int_eq(m.j.nmembers, 1);
    ck_assert_str_eq(m.j.members[0], m.id);
    ck_assert_uint_eq(m.j.meta_len[0], 4 + 2 + 1 + 2 + 4);
    d = describe(OURS);
    ck_assert_str_eq(d.state, "CompletingRebalance");
    /* Heartbeats are fine while the leader computes the assignment. */
    ck_assert_int_eq(heartbeat(m.id, 1), SF_KERR_NONE);
    a.member_id = m.id;
    ck_assert(sync_as(&m, 1, &a, 1));
    ck_assert_int_eq(m.s.error, SF_KERR_NONE);
    ck_assert_uint_eq(m.s.len, sizeof(data));
    ck_assert_mem_eq(m.s.data, data, sizeof(data));
    ck_assert_str_eq(m.s.protocol_type, "consumer");
    ck_assert_str_eq(m.s.protocol, "range");
    d = describe(OURS);
    ck_assert_str_eq(d.state, "Stable");
    ck_assert_str_eq(d.protocol_type, "consumer");
    ck_assert_str_eq(d.protocol, "range");
    ck_assert_int_eq(d.nmembers, 1);
    ck_assert_str_eq(d.members[0], m.id);
    ck_assert_str_eq(d.clients[0], "c1");
    ck_assert_uint_eq(d.assignment_len[0], sizeof(data));
    ck_assert_int_eq(heartbeat(m.id, 1), SF_KERR_NONE);
    /* A sync again in Stable gets the same assignment. */
    ck_assert(sync_as(&m, 1, NULL, 0));
    ck_assert_int_eq(m.s.error, SF_KERR_NONE);
    ck_assert_uint_eq(m.s.len, sizeof(data));
    /* The member leaves: the group is empty, then forgotten (it has no offsets). */
    ck_assert_int_eq(leave(m.id), SF_KERR_NONE);
    ck_assert_uint_eq(ngroups(), 0);
    ck_assert_int_eq(heartbeat(m.id, 2), SF_KERR_UNKNOWN_MEMBER_ID);
    ck_assert_uint_eq(ngroups(), 0);
}
END_TEST

START_TEST(test_join_v3_no_member_id_required) {
    tmember_t m;
    tmember_init(&m, "c1");
    m.require_known_id = 0;
    ck_assert(join(&m));
    ck_assert_int_eq(m.j.error, SF_KERR_NONE);
    ck_assert_int_eq(m.j.generation, 1);
    ck_assert_str_eq(m.j.leader, m.j.member_id);
    ck_assert_int_eq(m.j.nmembers, 1);
}
END_TEST

START_TEST(test_second_member_rebalance) {
    tmember_t m1, m2;
    static const uint8_t d1[] = {'1'}, d2[] = {'2', '2'};
    sf_gassignment_t a[2] = {{NULL, d1, 1}, {NULL, d2, 2}};
    gdesc_t d;
    tmember_init(&m1, "c1");
    tmember_init(&m2, "c2");
    one_member_stable(&m1);

    /* A second member: its join waits; the first one's heartbeat says rebalance. */
    ck_assert(!join_new(&m2));
    d = describe(OURS);
    ck_assert_str_eq(d.state, "PreparingRebalance");
    ck_assert_int_eq(heartbeat(m1.id, 1), SF_KERR_REBALANCE_IN_PROGRESS);
    /* A sync now is refused. */
    ck_assert(sync_as(&m1, 1, NULL, 0));
    ck_assert_int_eq(m1.s.error, SF_KERR_REBALANCE_IN_PROGRESS);
    /* The first one rejoins: both get generation 2; the leader stays and alone sees the
     * members. */
    ck_assert(join(&m1));
    ck_assert_int_eq(m2.j.called, 2);
    ck_assert_int_eq(m1.j.error, SF_KERR_NONE);
    ck_assert_int_eq(m2.j.error, SF_KERR_NONE);
    ck_assert_int_eq(m1.j.generation, 2);
    ck_assert_int_eq(m2.j.generation, 2);
    ck_assert_str_eq(m1.j.leader, m1.id);
    ck_assert_str_eq(m2.j.leader, m1.id);
    ck_assert_int_eq(m1.j.nmembers, 2);
    ck_assert_int_eq(m2.j.nmembers, 0);
    ck_assert(!strcmp(m1.j.members[0], m1.id) || !strcmp(m1.j.members[1], m1.id));
    ck_assert(!strcmp(m1.j.members[0], m2.id) || !strcmp(m1.j.members[1], m2.id));

    /* The follower's sync waits for the leader's. */
    ck_assert(!sync_as(&m2, 2, NULL, 0));
    ck_assert_int_eq(heartbeat(m2.id, 2), SF_KERR_NONE);
    a[0].member_id = m1.id;
    a[1].member_id = m2.id;
    ck_assert(sync_as(&m1, 2, a, 2));
    ck_assert_int_eq(m2.s.called, 1);
    ck_assert_int_eq(m1.s.error, SF_KERR_NONE);
    ck_assert_int_eq(m2.s.error, SF_KERR_NONE);
    ck_assert_uint_eq(m1.s.len, 1);
    ck_assert_int_eq(m1.s.data[0], '1');
    ck_assert_uint_eq(m2.s.len, 2);
    ck_assert_mem_eq(m2.s.data, d2, 2);
    ck_assert_str_eq(describe(OURS).state, "Stable");

    /* Generations and members checked. */
    ck_assert_int_eq(heartbeat(m1.id, 2), SF_KERR_NONE);
    ck_assert_int_eq(heartbeat(m1.id, 1), SF_KERR_ILLEGAL_GENERATION);
    ck_assert_int_eq(heartbeat(m1.id, 3), SF_KERR_ILLEGAL_GENERATION);
    ck_assert_int_eq(heartbeat("nobody", 2), SF_KERR_UNKNOWN_MEMBER_ID);
    ck_assert_int_eq(heartbeat("", 2), SF_KERR_UNKNOWN_MEMBER_ID);
    ck_assert(sync_as(&m2, 1, NULL, 0));
    ck_assert_int_eq(m2.s.error, SF_KERR_ILLEGAL_GENERATION);
    {
        tmember_t x;
        tmember_init(&x, "x");
        strcpy(x.id, "x-unknown");
        ck_assert(join(&x));
        ck_assert_int_eq(x.j.error, SF_KERR_UNKNOWN_MEMBER_ID);
        ck_assert(sync_as(&x, 2, NULL, 0));
        ck_assert_int_eq(x.s.error, SF_KERR_UNKNOWN_MEMBER_ID);
    }

    /* A follower that rejoins with the same metadata gets the current generation back. */
    ck_assert(join(&m2));
    ck_assert_int_eq(m2.j.error, SF_KERR_NONE);
    ck_assert_int_eq(m2.j.generation, 2);
    ck_assert_str_eq(describe(OURS).state, "Stable");

    /* The leader leaves: the other one rebalances alone and leads generation 3. */
    ck_assert_int_eq(leave(m1.id), SF_KERR_NONE);
    ck_assert_int_eq(leave(m1.id), SF_KERR_UNKNOWN_MEMBER_ID);
    ck_assert_int_eq(heartbeat(m2.id, 2), SF_KERR_REBALANCE_IN_PROGRESS);
    ck_assert(join(&m2));
    ck_assert_int_eq(m2.j.error, SF_KERR_NONE);
    ck_assert_int_eq(m2.j.generation, 3);
    ck_assert_str_eq(m2.j.leader, m2.id);
    ck_assert_int_eq(m2.j.nmembers, 1);
}
END_TEST

START_TEST(test_leave_follower_rebalances) {
    tmember_t m1, m2;
    tmember_init(&m1, "c1");
    tmember_init(&m2, "c2");
    one_member_stable(&m1);
    ck_assert(!join_new(&m2));
    ck_assert(join(&m1));
    ck_assert_int_eq(m2.j.generation, 2);
    /* The follower leaves before syncing; the leader's pending sync is answered with
     * REBALANCE_IN_PROGRESS, and it rejoins alone. */
    ck_assert(!sync_as(&m2, 2, NULL, 0));
    ck_assert_int_eq(leave(m2.id), SF_KERR_NONE);
    ck_assert_int_eq(m2.s.called, 1);
    ck_assert_int_eq(m2.s.error, SF_KERR_UNKNOWN_MEMBER_ID);
    ck_assert_str_eq(describe(OURS).state, "PreparingRebalance");
    ck_assert(join(&m1));
    ck_assert_int_eq(m1.j.error, SF_KERR_NONE);
    ck_assert_int_eq(m1.j.generation, 3);
    ck_assert_int_eq(m1.j.nmembers, 1);
}
END_TEST

static int one_member_left(void *ctx) {
    (void)ctx;
    return describe(OURS).nmembers == 1;
}

START_TEST(test_session_timeout) {
    tmember_t m1, m2;
    static const uint8_t d1[] = {'1'};
    sf_gassignment_t a = {NULL, d1, 1};
    tmember_init(&m1, "c1");
    tmember_init(&m2, "c2");
    m2.session_ms = 10;
    one_member_stable(&m1);
    ck_assert(!join_new(&m2));
    ck_assert(join(&m1));
    a.member_id = m1.id;
    ck_assert(sync_as(&m1, 2, &a, 1));
    ck_assert_int_eq(describe(OURS).nmembers, 2);
    /* c2 says nothing more: its 10 ms session runs out and the group rebalances without it. */
    ck_assert(drive(one_member_left, NULL, 5000));
    ck_assert_str_eq(describe(OURS).state, "PreparingRebalance");
    ck_assert_int_eq(heartbeat(m2.id, 2), SF_KERR_UNKNOWN_MEMBER_ID);
    ck_assert_int_eq(heartbeat(m1.id, 2), SF_KERR_REBALANCE_IN_PROGRESS);
    ck_assert(join(&m1));
    ck_assert_int_eq(m1.j.generation, 3);
    ck_assert_int_eq(m1.j.nmembers, 1);
}
END_TEST

static int group_gone(void *ctx) {
    (void)ctx;
    return ngroups() == 0;
}

START_TEST(test_session_timeout_last_member) {
    tmember_t m;
    tmember_init(&m, "c1");
    m.session_ms = 10;
    one_member_stable(&m);
    ck_assert_uint_eq(ngroups(), 1);
    /* The only member's session ends: the group is empty and, holding nothing, forgotten. */
    ck_assert(drive(group_gone, NULL, 5000));
    ck_assert_int_eq(heartbeat(m.id, 1), SF_KERR_UNKNOWN_MEMBER_ID);
}
END_TEST

START_TEST(test_rebalance_timeout_drops_silent_member) {
    tmember_t m1, m2;
    static const uint8_t d1[] = {'1'};
    sf_gassignment_t a = {NULL, d1, 1};
    tmember_init(&m1, "c1");
    tmember_init(&m2, "c2");
    m1.rebalance_ms = m2.rebalance_ms = 20;
    one_member_stable(&m1);
    ck_assert(!join_new(&m2));
    ck_assert(join(&m1));
    a.member_id = m1.id;
    ck_assert(sync_as(&m1, 2, &a, 1));
    /* The leader rejoins (a rebalance); c2 never does, but its session (10 s) goes on: the
     * phase ends at the 20 ms rebalance timeout without it. */
    memset(&m1.j, 0, sizeof(m1.j));
    ck_assert(!join(&m1));
    ck_assert(drive(answered, &m1.j, 5000));
    ck_assert_int_eq(m1.j.error, SF_KERR_NONE);
    ck_assert_int_eq(m1.j.generation, 3);
    ck_assert_int_eq(m1.j.nmembers, 1);
    ck_assert_int_eq(heartbeat(m2.id, 3), SF_KERR_UNKNOWN_MEMBER_ID);
}
END_TEST

START_TEST(test_initial_delay) {
    tmember_t m1, m2;
    sf_coord_free(coord);
    cfg.initial_delay_ms = 20;
    coord_start();
    tmember_init(&m1, "c1");
    tmember_init(&m2, "c2");
    m1.require_known_id = m2.require_known_id = 0;
    /* Into an empty group, the first join waits group.initial.rebalance.delay.ms for more. */
    ck_assert(!join(&m1));
    ck_assert(!join(&m2));
    ck_assert(drive(answered, &m2.j, 5000));
    ck_assert_int_eq(m1.j.called, 1);
    ck_assert_int_eq(m1.j.error, SF_KERR_NONE);
    ck_assert_int_eq(m2.j.error, SF_KERR_NONE);
    ck_assert_int_eq(m1.j.generation, 1);
    ck_assert_int_eq(m2.j.generation, 1);
    ck_assert_str_eq(m1.j.leader, m1.j.member_id);
    ck_assert_int_eq(m1.j.nmembers, 2);
}
END_TEST

START_TEST(test_protocol_selection) {
    tmember_t m[3];
    int i;
    tmember_init(&m[0], "c1");
    tmember_init(&m[1], "c2");
    tmember_init(&m[2], "c3");
    m[0].protocols[0] = "range", m[0].protocols[1] = "roundrobin", m[0].nprotocols = 2;
    m[1].protocols[0] = "roundrobin", m[1].protocols[1] = "range", m[1].nprotocols = 2;
    m[2].protocols[0] = "roundrobin", m[2].nprotocols = 1;
    ck_assert(join_new(&m[0]));
    ck_assert_str_eq(m[0].j.protocol, "range"); /* alone, its first choice */
    ck_assert(!join_new(&m[1]));
    ck_assert(!join_new(&m[2]));
    ck_assert(join(&m[0]));
    for (i = 0; i < 3; i++) {
        ck_assert_int_eq(m[i].j.error, SF_KERR_NONE);
        ck_assert_int_eq(m[i].j.generation, 2);
        ck_assert_str_eq(m[i].j.protocol, "roundrobin"); /* the only one all of them speak */
    }
    ck_assert_int_eq(m[0].j.nmembers, 3);
    ck_assert_str_eq(describe(OURS).protocol, "roundrobin");
}
END_TEST

START_TEST(test_protocol_selection_votes) {
    tmember_t m[3];
    int i;
    for (i = 0; i < 3; i++) {
        tmember_init(&m[i], i == 0 ? "c1" : i == 1 ? "c2" : "c3");
        m[i].protocols[0] = "range";
        m[i].protocols[1] = "roundrobin";
        m[i].nprotocols = 2;
    }
    /* Two members prefer range, one roundrobin: range. */
    m[2].protocols[0] = "roundrobin";
    m[2].protocols[1] = "range";
    ck_assert(join_new(&m[2]));
    ck_assert_str_eq(m[2].j.protocol, "roundrobin");
    ck_assert(!join_new(&m[0]));
    ck_assert(!join_new(&m[1]));
    ck_assert(join(&m[2]));
    for (i = 0; i < 3; i++)
        ck_assert_str_eq(m[i].j.protocol, "range");
}
END_TEST

START_TEST(test_inconsistent_protocols) {
    tmember_t m1, x;
    tmember_init(&m1, "c1");
    one_member_stable(&m1);
    /* Another protocol type. */
    tmember_init(&x, "x");
    x.protocol_type = "connect";
    ck_assert(join(&x));
    ck_assert_int_eq(x.j.error, SF_KERR_INCONSISTENT_GROUP_PROTOCOL);
    ck_assert_str_eq(x.j.member_id, "");
    /* No protocol in common. */
    tmember_init(&x, "x");
    x.protocols[0] = "roundrobin";
    ck_assert(join(&x));
    ck_assert_int_eq(x.j.error, SF_KERR_INCONSISTENT_GROUP_PROTOCOL);
    /* Neither changed the group. */
    ck_assert_str_eq(describe(OURS).state, "Stable");
    ck_assert_int_eq(heartbeat(m1.id, 1), SF_KERR_NONE);
}
END_TEST

static void op_sync_named(sf_group_t *g, void *ctx) {
    tmember_t *m = ctx;
    sf_group_sync(g, m->id, NULL, 1, "consumer", "roundrobin", NULL, 0, sync_cb, &m->s);
}

START_TEST(test_sync_protocol_mismatch) {
    tmember_t m1;
    tmember_init(&m1, "c1");
    ck_assert(join_new(&m1));
    ck_assert_int_eq(with_group(OURS, op_sync_named, &m1), SF_KERR_NONE);
    ck_assert_int_eq(m1.s.called, 1);
    ck_assert_int_eq(m1.s.error, SF_KERR_INCONSISTENT_GROUP_PROTOCOL);
}
END_TEST

START_TEST(test_empty_group_protocols) {
    tmember_t x;
    /* Into an empty group: a protocol type and at least one protocol are needed. */
    tmember_init(&x, "x");
    x.protocol_type = "";
    ck_assert(join(&x));
    ck_assert_int_eq(x.j.error, SF_KERR_INCONSISTENT_GROUP_PROTOCOL);
    tmember_init(&x, "x");
    x.nprotocols = 0;
    ck_assert(join(&x));
    ck_assert_int_eq(x.j.error, SF_KERR_INCONSISTENT_GROUP_PROTOCOL);
    ck_assert_uint_eq(ngroups(), 0);
}
END_TEST

START_TEST(test_session_timeout_bounds) {
    tmember_t x;
    int32_t bad[] = {9, 30001, 0, -1};
    size_t i;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        tmember_init(&x, "x");
        x.session_ms = bad[i];
        ck_assert(join(&x));
        ck_assert_int_eq(x.j.error, SF_KERR_INVALID_SESSION_TIMEOUT);
        ck_assert_int_eq(x.j.generation, -1);
    }
    ck_assert_uint_eq(ngroups(), 0);
    /* The bounds themselves are fine. */
    tmember_init(&x, "x");
    x.session_ms = 30000;
    ck_assert(join(&x));
    ck_assert_int_eq(x.j.error, SF_KERR_MEMBER_ID_REQUIRED);
    tmember_init(&x, "y");
    x.session_ms = 10;
    ck_assert(join(&x));
    ck_assert_int_eq(x.j.error, SF_KERR_MEMBER_ID_REQUIRED);
}
END_TEST

START_TEST(test_group_max_size) {
    tmember_t m1, m2;
    sf_coord_free(coord);
    cfg.max_size = 1;
    coord_start();
    tmember_init(&m1, "c1");
    tmember_init(&m2, "c2");
    one_member_stable(&m1);
    ck_assert(join(&m2));
    ck_assert_int_eq(m2.j.error, SF_KERR_GROUP_MAX_SIZE_REACHED);
    m2.require_known_id = 0;
    ck_assert(join(&m2));
    ck_assert_int_eq(m2.j.error, SF_KERR_GROUP_MAX_SIZE_REACHED);
    ck_assert_int_eq(heartbeat(m1.id, 1), SF_KERR_NONE); /* no rebalance */
    /* The member itself rejoins. */
    ck_assert(join(&m1));
    ck_assert_int_eq(m1.j.error, SF_KERR_NONE);
    ck_assert_int_eq(m1.j.generation, 2);
    /* Once it left there is room. */
    ck_assert_int_eq(leave(m1.id), SF_KERR_NONE);
    m2.require_known_id = 1;
    ck_assert(join_new(&m2));
    ck_assert_int_eq(m2.j.error, SF_KERR_NONE);
}
END_TEST

/* ---- offsets ---- */

struct commit_args {
    const char *member;
    int32_t generation;
    const sf_goffset_t *v;
    int n;
    int called;
    int16_t error;
    int16_t errs[8];
    int has_errs;
};

static void commit_cb(void *arg, int16_t error, const int16_t *errs) {
    struct commit_args *c = arg;
    int i;
    c->called++;
    c->error = error;
    c->has_errs = errs != NULL;
    for (i = 0; errs && i < c->n; i++)
        c->errs[i] = errs[i];
}

static void op_commit(sf_group_t *g, void *ctx) {
    struct commit_args *c = ctx;
    sf_group_commit(g, c->member, NULL, c->generation, c->v, c->n, commit_cb, c);
}

static struct commit_args commit(const char *member, int32_t generation, const sf_goffset_t *v,
                                 int n) {
    struct commit_args c;
    memset(&c, 0, sizeof(c));
    c.member = member;
    c.generation = generation;
    c.v = v;
    c.n = n;
    ck_assert_int_eq(with_group(OURS, op_commit, &c), SF_KERR_NONE);
    ck_assert_int_eq(c.called, 1);
    return c;
}

START_TEST(test_commit_without_cluster) {
    static const char big[] = "0123456789012345678901234567890123456789012345678901234567890123"
                              "4"; /* 65 bytes: over offset.metadata.max.bytes (64) */
    sf_goffset_t v[3] = {{"t", 0, 10, -1, ""}, {"t", 1, 20, 3, NULL}, {"t", 2, 30, -1, big}};
    struct commit_args c;
    /* Generation -1 into an empty group (no group management): accepted, but without a
     * cluster every item fails with COORDINATOR_NOT_AVAILABLE, and nothing is kept. */
    c = commit("", -1, v, 2);
    ck_assert_int_eq(c.error, SF_KERR_NONE);
    ck_assert(c.has_errs);
    ck_assert_int_eq(c.errs[0], SF_KERR_COORDINATOR_NOT_AVAILABLE);
    ck_assert_int_eq(c.errs[1], SF_KERR_COORDINATOR_NOT_AVAILABLE);
    ck_assert_uint_eq(ngroups(), 0);
    /* Too much metadata is refused per item. */
    c = commit("", -1, v, 3);
    ck_assert_int_eq(c.error, SF_KERR_NONE);
    ck_assert_int_eq(c.errs[0], SF_KERR_COORDINATOR_NOT_AVAILABLE);
    ck_assert_int_eq(c.errs[2], SF_KERR_OFFSET_METADATA_TOO_LARGE);
    c = commit("", -1, v + 2, 1);
    ck_assert_int_eq(c.error, SF_KERR_NONE);
    ck_assert_int_eq(c.errs[0], SF_KERR_OFFSET_METADATA_TOO_LARGE);
    /* Nothing committed. */
    ck_assert_uint_eq(ngroups(), 0);
}
END_TEST

static void op_offset(sf_group_t *g, void *ctx) {
    *(sf_goffset_t *)ctx = sf_group_offset(g, "t", 0);
}

START_TEST(test_commit_member_checks) {
    tmember_t m1;
    sf_goffset_t v[1] = {{"t", 0, 10, -1, ""}}, o;
    struct commit_args c;
    tmember_init(&m1, "c1");
    ck_assert(join_new(&m1));
    /* CompletingRebalance: the member waits for its assignment first. */
    c = commit(m1.id, 1, v, 1);
    ck_assert_int_eq(c.error, SF_KERR_REBALANCE_IN_PROGRESS);
    ck_assert(!c.has_errs);
    {
        static const uint8_t d[] = {'A'};
        sf_gassignment_t a = {m1.id, d, 1};
        ck_assert(sync_as(&m1, 1, &a, 1));
    }
    /* A stale or future generation, an unknown member, generation -1 in a group with
     * members: refused as a whole. */
    c = commit(m1.id, 0, v, 1);
    ck_assert_int_eq(c.error, SF_KERR_ILLEGAL_GENERATION);
    ck_assert(!c.has_errs);
    c = commit(m1.id, 2, v, 1);
    ck_assert_int_eq(c.error, SF_KERR_ILLEGAL_GENERATION);
    c = commit(m1.id, -1, v, 1);
    ck_assert_int_eq(c.error, SF_KERR_ILLEGAL_GENERATION);
    c = commit("nobody", 1, v, 1);
    ck_assert_int_eq(c.error, SF_KERR_UNKNOWN_MEMBER_ID);
    c = commit("", -1, v, 1);
    ck_assert_int_eq(c.error, SF_KERR_UNKNOWN_MEMBER_ID);
    /* The member at its generation: the write is tried (and fails without a cluster). */
    c = commit(m1.id, 1, v, 1);
    ck_assert_int_eq(c.error, SF_KERR_NONE);
    ck_assert_int_eq(c.errs[0], SF_KERR_COORDINATOR_NOT_AVAILABLE);
    ck_assert_int_eq(with_group(OURS, op_offset, &o), SF_KERR_NONE);
    ck_assert(o.offset == -1);
    ck_assert_int_eq(o.leader_epoch, -1);
    /* After the rebalance that follows a leave, the old generation is stale. */
    ck_assert_int_eq(leave(m1.id), SF_KERR_NONE);
    c = commit(m1.id, 1, v, 1);
    ck_assert_int_ne(c.error, SF_KERR_NONE);
    ck_assert(!c.has_errs);
}
END_TEST

/* ---- deleting, listing ---- */

static void delete_cb(void *arg, int16_t error) {
    int16_t *e = arg;
    *e = error;
}

static void op_delete(sf_group_t *g, void *ctx) {
    sf_group_delete(g, delete_cb, ctx);
}

static int16_t delete_group(const char *id) {
    int16_t e = -2;
    ck_assert_int_eq(with_group(id, op_delete, &e), SF_KERR_NONE);
    return e;
}

struct odel_args {
    const sf_goffset_t *v;
    int n;
    int16_t errs[4];
    int16_t error;
};

static void op_delete_offsets(sf_group_t *g, void *ctx) {
    struct odel_args *d = ctx;
    sf_group_delete_offsets(g, d->v, d->n, d->errs, delete_cb, &d->error);
}

static void op_state(sf_group_t *g, void *ctx) {
    copy(ctx, sf_group_state(g));
}

START_TEST(test_delete_and_state) {
    tmember_t m1;
    sf_goffset_t v[2] = {{"t", 0, 0, -1, ""}, {"other", 0, 0, -1, ""}};
    struct odel_args d;
    char state[NAMELEN];
    /* A group that does not exist: Dead, and GROUP_ID_NOT_FOUND for both deletions. */
    ck_assert_int_eq(with_group(OURS, op_state, state), SF_KERR_NONE);
    ck_assert_str_eq(state, "Dead");
    ck_assert_str_eq(describe(OURS).state, "Dead");
    ck_assert_int_eq(describe(OURS).nmembers, 0);
    ck_assert_str_eq(describe(OURS).protocol_type, "");
    ck_assert_int_eq(delete_group(OURS), SF_KERR_GROUP_ID_NOT_FOUND);
    memset(&d, 0, sizeof(d));
    d.v = v;
    d.n = 2;
    d.error = -2;
    ck_assert_int_eq(with_group(OURS, op_delete_offsets, &d), SF_KERR_NONE);
    ck_assert_int_eq(d.error, SF_KERR_GROUP_ID_NOT_FOUND);
    ck_assert_uint_eq(ngroups(), 0);

    /* With a member: NON_EMPTY_GROUP; its topic's offsets are GROUP_SUBSCRIBED_TO_TOPIC. */
    tmember_init(&m1, "c1");
    one_member_stable(&m1);
    ck_assert_int_eq(delete_group(OURS), SF_KERR_NON_EMPTY_GROUP);
    memset(&d, 0, sizeof(d));
    d.v = v;
    d.n = 2;
    d.error = -2;
    ck_assert_int_eq(with_group(OURS, op_delete_offsets, &d), SF_KERR_NONE);
    ck_assert_int_eq(d.errs[0], SF_KERR_GROUP_SUBSCRIBED_TO_TOPIC);
    ck_assert_int_eq(d.errs[1], SF_KERR_NONE);
    ck_assert_int_eq(d.error, SF_KERR_COORDINATOR_NOT_AVAILABLE); /* no cluster to write to */
    ck_assert_int_eq(heartbeat(m1.id, 1), SF_KERR_NONE);
}
END_TEST

/* OffsetDelete answers NON_EMPTY_GROUP (the whole request, nothing deleted) for a group with
 * members that does not speak the "consumer" protocol, as Kafka's does. */
START_TEST(test_delete_offsets_other_protocol) {
    tmember_t m1;
    sf_goffset_t v[1] = {{"t", 0, 0, -1, ""}};
    struct odel_args d;
    tmember_init(&m1, "c1");
    m1.protocol_type = "connect";
    one_member_stable(&m1);
    memset(&d, 0, sizeof(d));
    d.v = v;
    d.n = 1;
    d.error = -2;
    ck_assert_int_eq(with_group(OURS, op_delete_offsets, &d), SF_KERR_NONE);
    ck_assert_int_eq(d.error, SF_KERR_NON_EMPTY_GROUP);
}
END_TEST

/* A "consumer" member whose subscription cannot be read counts as subscribed to every topic,
 * as in Kafka (GroupMetadata.isSubscribedToTopic with no known subscription). */
START_TEST(test_delete_offsets_unreadable_subscription) {
    static const uint8_t junk[] = {0, 0, 0, 0, 0, 9, 0, 1}; /* 9 topics, then cut short */
    tmember_t m1;
    sf_goffset_t v[1] = {{"t", 0, 0, -1, ""}};
    struct odel_args d;
    tmember_init(&m1, "c1");
    m1.raw_meta = junk;
    m1.raw_len = sizeof(junk);
    one_member_stable(&m1);
    memset(&d, 0, sizeof(d));
    d.v = v;
    d.n = 1;
    d.error = -2;
    ck_assert_int_eq(with_group(OURS, op_delete_offsets, &d), SF_KERR_NONE);
    ck_assert_int_eq(d.errs[0], SF_KERR_GROUP_SUBSCRIBED_TO_TOPIC);
}
END_TEST

static void list_cb(void *arg, int16_t error, const sf_glisting_t *v, int n) {
    int16_t *e = arg;
    (void)v;
    ck_assert_int_eq(n, 0);
    *e = error;
}

START_TEST(test_list_without_cluster) {
    int16_t e = -2;
    sf_coord_list(coord, list_cb, &e);
    ck_assert_int_eq(e, SF_KERR_COORDINATOR_NOT_AVAILABLE);
}
END_TEST

/* A member id handed out with MEMBER_ID_REQUIRED and never used is dropped when its session
 * timeout passes, as Kafka does: the group is not kept alive by it (not "Empty" but Dead,
 * deletable as not found, and freed: a group id named once in a JoinGroup v4+ costs nothing
 * for good). */
START_TEST(test_pending_member_expires) {
    tmember_t m;
    char state[NAMELEN];
    int16_t del;
    size_t held;
    tmember_init(&m, "c1");
    m.session_ms = 10;
    ck_assert(join(&m));
    ck_assert_int_eq(m.j.error, SF_KERR_MEMBER_ID_REQUIRED);
    ck_assert_uint_eq(ngroups(), 1);
    drive(NULL, NULL, 40); /* four times the session timeout */
    held = ngroups();
    ck_assert_int_eq(with_group(OURS, op_state, state), SF_KERR_NONE);
    del = delete_group(OURS);
    ck_assert_msg(held == 0 && !strcmp(state, "Dead") && del == SF_KERR_GROUP_ID_NOT_FOUND,
                  "after the pending member's session: %zu group(s) held (expected 0), state %s "
                  "(expected Dead), DeleteGroups error %d (expected 69)", held, state, del);
}
END_TEST

/* A pending member id that expired frees its place for a new member. */
START_TEST(test_pending_member_id_expired_on_join) {
    tmember_t m, n;
    sf_coord_free(coord);
    cfg.max_size = 1;
    coord_start();
    tmember_init(&m, "c1");
    m.session_ms = 10;
    ck_assert(join(&m));
    ck_assert_int_eq(m.j.error, SF_KERR_MEMBER_ID_REQUIRED);
    copy(m.id, m.j.member_id);
    tmember_init(&n, "c2");
    ck_assert(join(&n));
    ck_assert_int_eq(n.j.error, SF_KERR_GROUP_MAX_SIZE_REACHED); /* c1's place is taken */
    drive(NULL, NULL, 30);
    ck_assert(join(&n));
    ck_assert_int_eq(n.j.error, SF_KERR_MEMBER_ID_REQUIRED);
    ck_assert(join(&m));
    ck_assert_int_eq(m.j.error, SF_KERR_UNKNOWN_MEMBER_ID);
}
END_TEST

/* A member id handed out with MEMBER_ID_REQUIRED whose session timeout passed is refused
 * (UNKNOWN_MEMBER_ID, as Kafka, which has forgotten it). */
START_TEST(test_pending_member_id_expired_refused) {
    tmember_t m;
    tmember_init(&m, "c1");
    m.session_ms = 10;
    ck_assert(join(&m));
    ck_assert_int_eq(m.j.error, SF_KERR_MEMBER_ID_REQUIRED);
    copy(m.id, m.j.member_id);
    drive(NULL, NULL, 30);
    ck_assert(join(&m));
    ck_assert_int_eq(m.j.error, SF_KERR_UNKNOWN_MEMBER_ID);
}
END_TEST

/* A member id handed out with MEMBER_ID_REQUIRED during a rebalance and never used ends the
 * join phase when its session timeout passes, not at the rebalance timeout, as in Kafka
 * (removePendingMemberAndUpdateGroup completes the join). */
START_TEST(test_pending_member_expiry_ends_join) {
    tmember_t m1, m2;
    tmember_init(&m1, "c1");
    tmember_init(&m2, "c2");
    m1.rebalance_ms = 3000;
    m2.session_ms = 10;
    one_member_stable(&m1);
    ck_assert(join(&m2)); /* c2 gets its id and is never heard from again */
    ck_assert_int_eq(m2.j.error, SF_KERR_MEMBER_ID_REQUIRED);
    memset(&m1.j, 0, sizeof(m1.j));
    ck_assert(!join(&m1)); /* the leader rejoins: a rebalance, waiting for c2 */
    /* Well before the 3 s rebalance timeout, 100 times c2's session timeout. */
    ck_assert_msg(drive(answered, &m1.j, 1000), "the join phase still waits for c2's member "
                  "id 1 s after its 10 ms session timeout");
    ck_assert_int_eq(m1.j.error, SF_KERR_NONE);
    ck_assert_int_eq(m1.j.generation, 2);
    ck_assert_int_eq(m1.j.nmembers, 1);
}
END_TEST

/* ---- the coordinator's buckets ---- */

static void never(sf_group_t *g, void *ctx) {
    (void)g;
    (void)ctx;
    ck_abort_msg("the group callback ran");
}

START_TEST(test_with_group_errors) {
    sf_cluster_snapshot_t snap;
    ck_assert_int_eq(with_group(THEIRS, never, NULL), SF_KERR_NOT_COORDINATOR);
    ck_assert_int_eq(with_group("", never, NULL), SF_KERR_INVALID_GROUP_ID);
    ck_assert_uint_eq(ngroups(), 0);
    /* No buckets yet (before the controller placed them). */
    memset(&snap, 0, sizeof(snap));
    sf_coord_update(coord, &snap);
    ck_assert_int_eq(with_group(OURS, never, NULL), SF_KERR_COORDINATOR_NOT_AVAILABLE);
    ck_assert_int_eq(with_group("", never, NULL), SF_KERR_INVALID_GROUP_ID);
}
END_TEST

START_TEST(test_bucket_moves_away) {
    tmember_t m1, m2;
    sf_cluster_bucket_t moved[] = {{2, 1}, {2, 0}};
    sf_cluster_snapshot_t snap;
    tmember_init(&m1, "c1");
    tmember_init(&m2, "c2");
    one_member_stable(&m1);
    ck_assert(!join_new(&m2));
    ck_assert(sync_as(&m1, 1, NULL, 0));
    ck_assert_int_eq(m1.s.error, SF_KERR_REBALANCE_IN_PROGRESS);
    /* The bucket goes to broker 2: what waits is answered NOT_COORDINATOR, the group is
     * forgotten and the next request is NOT_COORDINATOR. */
    memset(&snap, 0, sizeof(snap));
    snap.group_buckets = moved;
    snap.ngroup_buckets = 2;
    sf_coord_update(coord, &snap);
    ck_assert_int_eq(m2.j.called, 2);
    ck_assert_int_eq(m2.j.error, SF_KERR_NOT_COORDINATOR);
    ck_assert_uint_eq(ngroups(), 0);
    ck_assert_int_eq(with_group(OURS, never, NULL), SF_KERR_NOT_COORDINATOR);
    /* It comes back at a new epoch: the group starts afresh. */
    moved[0].broker = 1;
    moved[0].epoch = 2;
    sf_coord_update(coord, &snap);
    ck_assert_int_eq(heartbeat(m1.id, 1), SF_KERR_UNKNOWN_MEMBER_ID);
    ck_assert_str_eq(describe(OURS).state, "Dead");
}
END_TEST

START_TEST(test_bucket_epoch_change_drops_groups) {
    tmember_t m1;
    sf_cluster_bucket_t v[] = {{1, 1}, {2, 0}};
    sf_cluster_snapshot_t snap;
    tmember_init(&m1, "c1");
    one_member_stable(&m1);
    /* Same owner, new epoch (the bucket went away and came back in between): the group's
     * state is from the old epoch and is dropped. */
    memset(&snap, 0, sizeof(snap));
    snap.group_buckets = v;
    snap.ngroup_buckets = 2;
    sf_coord_update(coord, &snap);
    ck_assert_uint_eq(ngroups(), 0);
    ck_assert_int_eq(heartbeat(m1.id, 1), SF_KERR_UNKNOWN_MEMBER_ID);
}
END_TEST

START_TEST(test_free_answers_pending) {
    tmember_t m1, m2, m3;
    tmember_init(&m1, "c1");
    tmember_init(&m2, "c2");
    tmember_init(&m3, "c3");
    one_member_stable(&m1);
    ck_assert(!join_new(&m2));
    ck_assert(join(&m1));
    ck_assert(!sync_as(&m2, 2, NULL, 0)); /* waits for the leader */
    /* A third member starts a new rebalance: the follower's sync is answered, the third
     * one's and the leader's joins wait (for c2). */
    ck_assert(!join_new(&m3));
    ck_assert_int_eq(m3.j.called, 1); /* only MEMBER_ID_REQUIRED so far */
    ck_assert_int_eq(m2.s.called, 1);
    ck_assert_int_eq(m2.s.error, SF_KERR_REBALANCE_IN_PROGRESS);
    ck_assert(!join(&m1));
    /* Closing answers every join that waits with COORDINATOR_NOT_AVAILABLE. */
    sf_coord_free(coord);
    coord = NULL;
    ck_assert_int_eq(m1.j.error, SF_KERR_COORDINATOR_NOT_AVAILABLE);
    ck_assert_int_eq(m3.j.called, 2);
    ck_assert_int_eq(m3.j.error, SF_KERR_COORDINATOR_NOT_AVAILABLE);
    ck_assert_int_eq(m3.j.generation, -1);
}
END_TEST

START_TEST(test_free_answers_pending_sync) {
    tmember_t m1, m2;
    tmember_init(&m1, "c1");
    tmember_init(&m2, "c2");
    one_member_stable(&m1);
    ck_assert(!join_new(&m2));
    ck_assert(join(&m1));
    ck_assert(!sync_as(&m2, 2, NULL, 0));
    sf_coord_free(coord);
    coord = NULL;
    ck_assert_int_eq(m2.s.called, 1);
    ck_assert_int_eq(m2.s.error, SF_KERR_COORDINATOR_NOT_AVAILABLE);
    ck_assert_uint_eq(m2.s.len, 0);
}
END_TEST

static Suite *group_suite(void) {
    Suite *s = suite_create("group");
    TCase *core = tcase_create("core"), *limits = tcase_create("limits");
    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_checked_fixture(limits, setup, teardown);
    tcase_add_test(core, test_bucket_of_java);
    tcase_add_test(core, test_placement_initial);
    tcase_add_test(core, test_placement_moves);
    tcase_add_test(core, test_placement_uneven);
    tcase_add_test(core, test_buckets_znode);
    tcase_add_test(core, test_group_znode);
    tcase_add_test(core, test_join_sync_single);
    tcase_add_test(core, test_join_v3_no_member_id_required);
    tcase_add_test(core, test_second_member_rebalance);
    tcase_add_test(core, test_leave_follower_rebalances);
    tcase_add_test(core, test_session_timeout);
    tcase_add_test(core, test_session_timeout_last_member);
    tcase_add_test(core, test_rebalance_timeout_drops_silent_member);
    tcase_add_test(core, test_initial_delay);
    tcase_add_test(core, test_protocol_selection);
    tcase_add_test(core, test_protocol_selection_votes);
    tcase_add_test(core, test_commit_without_cluster);
    tcase_add_test(core, test_commit_member_checks);
    tcase_add_test(core, test_delete_and_state);
    tcase_add_test(core, test_with_group_errors);
    tcase_add_test(core, test_bucket_moves_away);
    tcase_add_test(core, test_bucket_epoch_change_drops_groups);
    tcase_add_test(core, test_free_answers_pending);
    tcase_add_test(core, test_free_answers_pending_sync);
    tcase_add_test(limits, test_bucket_of_long);
    tcase_add_test(limits, test_bucket_of_invalid_utf8);
    tcase_add_test(limits, test_buckets_znode_max);
    tcase_add_test(limits, test_buckets_znode_malformed);
    tcase_add_test(limits, test_group_znode_injective);
    tcase_add_test(limits, test_inconsistent_protocols);
    tcase_add_test(limits, test_sync_protocol_mismatch);
    tcase_add_test(limits, test_empty_group_protocols);
    tcase_add_test(limits, test_session_timeout_bounds);
    tcase_add_test(limits, test_group_max_size);
    tcase_add_test(limits, test_list_without_cluster);
    tcase_add_test(limits, test_pending_member_id_expired_on_join);
    tcase_add_test(limits, test_pending_member_expires);
    tcase_add_test(limits, test_pending_member_id_expired_refused);
    tcase_add_test(limits, test_bucket_of_invalid_utf8_java_rules);
    tcase_add_test(limits, test_pending_member_expiry_ends_join);
    tcase_add_test(limits, test_delete_offsets_other_protocol);
    tcase_add_test(limits, test_delete_offsets_unreadable_subscription);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(group_suite());
    int failed;
    if (!getenv("SF_CHECK_VERBOSE"))
        sf_log_level = SF_LOG_WARNING;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
