/* The consumer protocol's encodings and the partition assignors (assignor.h).
 *
 * Every assignor works on one flat table of the partitions to hand out: the topics sorted by
 * name, each topic's partitions in order (partition i of the k-th topic is at base[k] + i), and
 * fills owner[] (a member index, or -1) for each; the members' lists are then read off the
 * table in order, so they come out sorted. */
#include "assignor.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"

/* ------------------------------------------------------------------------------------------
 * Names
 * ------------------------------------------------------------------------------------------ */

static const struct {
    const char *name;
    const char *java; /* the Java client's class of the same assignor */
    int cooperative;
} assignors[SF_ASSIGNOR_COUNT] = {
    {"range", "org.apache.kafka.clients.consumer.RangeAssignor", 0},
    {"roundrobin", "org.apache.kafka.clients.consumer.RoundRobinAssignor", 0},
    {"cooperative-sticky", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor", 1},
};

const char *sf_assignor_name(sf_assignor_kind_t kind) {
    return (unsigned)kind < SF_ASSIGNOR_COUNT ? assignors[kind].name : "unknown";
}

int sf_assignor_parse(const char *name, sf_assignor_kind_t *kind) {
    int i;
    for (i = 0; i < SF_ASSIGNOR_COUNT; i++) {
        if (strcmp(name, assignors[i].name) == 0 || strcmp(name, assignors[i].java) == 0) {
            *kind = (sf_assignor_kind_t)i;
            return SF_OK;
        }
    }
    return SF_ERR_NOTFOUND;
}

int sf_assignor_cooperative(sf_assignor_kind_t kind) {
    return (unsigned)kind < SF_ASSIGNOR_COUNT && assignors[kind].cooperative;
}

/* ------------------------------------------------------------------------------------------
 * The partition table
 * ------------------------------------------------------------------------------------------ */

typedef struct table {
    const sf_assignor_topic_t **topics; /* sorted by name, partitions > 0 only */
    size_t ntopics;
    size_t *base;    /* first flat index of each topic */
    size_t nparts;   /* all partitions */
    int32_t *owner;  /* per partition: member index or -1 */
    size_t *order;   /* member indexes in Kafka's member order */
    size_t nmembers;
    unsigned char *sub; /* nmembers x ntopics: member subscribes to topic */
} table_t;

static int topic_ptr_cmp(const void *a, const void *b) {
    const sf_assignor_topic_t *x = *(const sf_assignor_topic_t *const *)a;
    const sf_assignor_topic_t *y = *(const sf_assignor_topic_t *const *)b;
    return strcmp(x->name, y->name);
}

/* The index of topic @name in @tb, or -1. */
static long table_topic(const table_t *tb, const char *name) {
    size_t lo = 0, hi = tb->ntopics;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(tb->topics[mid]->name, name);
        if (c == 0)
            return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* Kafka's MemberInfo order: static members first, by instance id, then the others by member
 * id. */
static int member_cmp(const sf_assignor_member_t *x, const sf_assignor_member_t *y) {
    if (x->instance_id && y->instance_id)
        return strcmp(x->instance_id, y->instance_id);
    if (x->instance_id || y->instance_id)
        return x->instance_id ? -1 : 1;
    return strcmp(x->member_id, y->member_id);
}

/* Sort the member indexes @order (an insertion sort: qsort has no context argument, and a
 * group has few members). */
static void members_sort(size_t *order, size_t n, const sf_assignor_member_t *members) {
    size_t i, j;
    for (i = 1; i < n; i++) {
        size_t m = order[i];
        for (j = i; j > 0 && member_cmp(&members[order[j - 1]], &members[m]) > 0; j--)
            order[j] = order[j - 1];
        order[j] = m;
    }
}

static void table_free(table_t *tb) {
    free(tb->topics);
    free(tb->base);
    free(tb->owner);
    free(tb->order);
    free(tb->sub);
}

static int table_init(table_t *tb, const sf_assignor_topic_t *topics, size_t ntopics,
                      const sf_assignor_member_t *members, size_t nmembers) {
    size_t i, j;
    memset(tb, 0, sizeof(*tb));
    tb->nmembers = nmembers;
    if (!(tb->topics = malloc((ntopics ? ntopics : 1) * sizeof(*tb->topics))) ||
        !(tb->base = malloc((ntopics ? ntopics : 1) * sizeof(*tb->base))) ||
        !(tb->order = malloc((nmembers ? nmembers : 1) * sizeof(*tb->order))))
        goto nomem;
    for (i = 0; i < ntopics; i++)
        if (topics[i].partitions > 0)
            tb->topics[tb->ntopics++] = &topics[i];
    qsort(tb->topics, tb->ntopics, sizeof(*tb->topics), topic_ptr_cmp);
    for (i = 0; i < tb->ntopics; i++) {
        tb->base[i] = tb->nparts;
        tb->nparts += (size_t)tb->topics[i]->partitions;
    }
    if (!(tb->owner = malloc((tb->nparts ? tb->nparts : 1) * sizeof(*tb->owner))) ||
        !(tb->sub = calloc(nmembers * tb->ntopics + 1, 1)))
        goto nomem;
    for (i = 0; i < tb->nparts; i++)
        tb->owner[i] = -1;
    for (i = 0; i < nmembers; i++) {
        tb->order[i] = i;
        for (j = 0; j < members[i].ntopics; j++) {
            long t = table_topic(tb, members[i].topics[j]);
            if (t >= 0)
                tb->sub[i * tb->ntopics + (size_t)t] = 1;
        }
    }
    members_sort(tb->order, nmembers, members);
    return SF_OK;
nomem:
    table_free(tb);
    return SF_ERR_NOMEM;
}

static int subscribed(const table_t *tb, size_t member, size_t topic) {
    return tb->sub[member * tb->ntopics + topic];
}

/* The topic of flat partition @k. */
static size_t topic_of(const table_t *tb, size_t k) {
    size_t lo = 0, hi = tb->ntopics;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (tb->base[mid] <= k)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Read every member's list off the owner table. */
static int table_emit(const table_t *tb, sf_assignor_member_t *members) {
    size_t *count = calloc(tb->nmembers + 1, sizeof(*count));
    size_t t, k, m;
    if (!count)
        return SF_ERR_NOMEM;
    for (k = 0; k < tb->nparts; k++)
        if (tb->owner[k] >= 0)
            count[tb->owner[k]]++;
    for (m = 0; m < tb->nmembers; m++) {
        if (count[m] && !(members[m].assigned = malloc(count[m] * sizeof(sf_assignor_tp_t)))) {
            free(count);
            return SF_ERR_NOMEM;
        }
    }
    free(count);
    for (t = 0; t < tb->ntopics; t++) {
        for (k = tb->base[t]; k < tb->base[t] + (size_t)tb->topics[t]->partitions; k++) {
            sf_assignor_member_t *mb;
            if (tb->owner[k] < 0)
                continue;
            mb = &members[tb->owner[k]];
            mb->assigned[mb->nassigned].topic = tb->topics[t]->name;
            mb->assigned[mb->nassigned].partition = (int32_t)(k - tb->base[t]);
            mb->nassigned++;
        }
    }
    return SF_OK;
}

/* ------------------------------------------------------------------------------------------
 * range: per topic, the subscribed members in order each take a contiguous range; the first
 * (partitions % members) take one more.
 * ------------------------------------------------------------------------------------------ */

static void assign_range(table_t *tb) {
    size_t t, i;
    for (t = 0; t < tb->ntopics; t++) {
        size_t n = (size_t)tb->topics[t]->partitions, c = 0, per, extra, idx = 0;
        for (i = 0; i < tb->nmembers; i++)
            c += subscribed(tb, tb->order[i], t);
        if (c == 0)
            continue;
        per = n / c;
        extra = n % c;
        for (i = 0; i < tb->nmembers; i++) {
            size_t m = tb->order[i], start, len, k;
            if (!subscribed(tb, m, t))
                continue;
            start = per * idx + (idx < extra ? idx : extra);
            len = per + (idx < extra ? 1 : 0);
            for (k = 0; k < len; k++)
                tb->owner[tb->base[t] + start + k] = (int32_t)m;
            idx++;
        }
    }
}

/* ------------------------------------------------------------------------------------------
 * roundrobin: all partitions in order dealt to the members in order, each partition to the
 * next member (circularly) subscribed to its topic.
 * ------------------------------------------------------------------------------------------ */

static void assign_roundrobin(table_t *tb) {
    size_t t, k, i, cur = 0;
    if (tb->nmembers == 0)
        return;
    for (t = 0; t < tb->ntopics; t++) {
        int any = 0;
        for (i = 0; i < tb->nmembers && !any; i++)
            any = subscribed(tb, i, t);
        if (!any)
            continue;
        for (k = tb->base[t]; k < tb->base[t] + (size_t)tb->topics[t]->partitions; k++) {
            while (!subscribed(tb, tb->order[cur % tb->nmembers], t))
                cur++;
            tb->owner[k] = (int32_t)tb->order[cur % tb->nmembers];
            cur++;
        }
    }
}

/* ------------------------------------------------------------------------------------------
 * cooperative-sticky
 *
 * 1. Every partition a member owns and still subscribes to stays with it; of two members
 *    claiming one partition, the claim of the newer generation wins (then the first member).
 * 2. The partitions nobody keeps go, in order, each to a subscribed member with the fewest.
 * 3. While some partition's owner has at least two more than another member subscribed to
 *    its topic, it moves there. Every move lowers the sum of the squared counts, so this
 *    ends; when it ends no single move makes the counts more even (with equal subscriptions:
 *    every member holds floor or ceil of partitions / members).
 * 4. A partition that now goes to another member than the one that owns it is left out of this
 *    generation: its owner revokes it and rejoins, and the next rebalance hands it out.
 * ------------------------------------------------------------------------------------------ */

typedef struct sticky {
    int32_t *prev;    /* per partition: the member whose claim is valid, or -1 */
    int32_t *gen;     /* the generation of that claim */
    size_t *count;    /* per member */
} sticky_t;

static void sticky_claims(table_t *tb, const sf_assignor_member_t *members, sticky_t *st) {
    size_t i, j;
    for (i = 0; i < tb->nmembers; i++) {
        size_t m = tb->order[i];
        for (j = 0; j < members[m].nowned; j++) {
            const sf_assignor_tp_t *tp = &members[m].owned[j];
            long t = tp->topic ? table_topic(tb, tp->topic) : -1;
            size_t k;
            if (t < 0 || tp->partition < 0 || tp->partition >= tb->topics[t]->partitions ||
                !subscribed(tb, m, (size_t)t))
                continue;
            k = tb->base[t] + (size_t)tp->partition;
            if (st->prev[k] >= 0 && st->gen[k] >= members[m].generation)
                continue;
            st->prev[k] = (int32_t)m;
            st->gen[k] = members[m].generation;
        }
    }
    for (i = 0; i < tb->nparts; i++) {
        tb->owner[i] = st->prev[i];
        if (st->prev[i] >= 0)
            st->count[st->prev[i]]++;
    }
}

/* The member subscribed to topic @t with the fewest partitions (first in order), or -1. */
static long sticky_least(const table_t *tb, const sticky_t *st, size_t t) {
    long best = -1;
    size_t i;
    for (i = 0; i < tb->nmembers; i++) {
        size_t m = tb->order[i];
        if (subscribed(tb, m, t) && (best < 0 || st->count[m] < st->count[best]))
            best = (long)m;
    }
    return best;
}

static void assign_sticky(table_t *tb, const sf_assignor_member_t *members, sticky_t *st) {
    size_t k;
    int moved;
    sticky_claims(tb, members, st);
    for (k = 0; k < tb->nparts; k++) {
        long m;
        if (tb->owner[k] >= 0 || (m = sticky_least(tb, st, topic_of(tb, k))) < 0)
            continue;
        tb->owner[k] = (int32_t)m;
        st->count[m]++;
    }
    do {
        moved = 0;
        for (k = 0; k < tb->nparts; k++) {
            long a = tb->owner[k], b;
            if (a < 0 || (b = sticky_least(tb, st, topic_of(tb, k))) < 0 ||
                st->count[a] < st->count[b] + 2)
                continue;
            tb->owner[k] = (int32_t)b;
            st->count[a]--;
            st->count[b]++;
            moved = 1;
        }
    } while (moved);
    for (k = 0; k < tb->nparts; k++)
        if (st->prev[k] >= 0 && tb->owner[k] != st->prev[k])
            tb->owner[k] = -1;
}

static int run_sticky(table_t *tb, const sf_assignor_member_t *members) {
    sticky_t st;
    size_t k;
    st.prev = malloc((tb->nparts ? tb->nparts : 1) * sizeof(*st.prev));
    st.gen = malloc((tb->nparts ? tb->nparts : 1) * sizeof(*st.gen));
    st.count = calloc(tb->nmembers + 1, sizeof(*st.count));
    if (!st.prev || !st.gen || !st.count) {
        free(st.prev);
        free(st.gen);
        free(st.count);
        return SF_ERR_NOMEM;
    }
    for (k = 0; k < tb->nparts; k++) {
        st.prev[k] = -1;
        st.gen[k] = -1;
    }
    assign_sticky(tb, members, &st);
    free(st.prev);
    free(st.gen);
    free(st.count);
    return SF_OK;
}

/* ------------------------------------------------------------------------------------------ */

void sf_assignor_members_clear(sf_assignor_member_t *members, size_t nmembers) {
    size_t i;
    for (i = 0; i < nmembers; i++) {
        free(members[i].assigned);
        members[i].assigned = NULL;
        members[i].nassigned = 0;
    }
}

int sf_assignor_assign(sf_assignor_kind_t kind, const sf_assignor_topic_t *topics, size_t ntopics,
                       sf_assignor_member_t *members, size_t nmembers) {
    table_t tb;
    int rc;
    sf_assignor_members_clear(members, nmembers);
    if ((rc = table_init(&tb, topics, ntopics, members, nmembers)) != SF_OK)
        return rc;
    switch (kind) {
    case SF_ASSIGNOR_RANGE: assign_range(&tb); break;
    case SF_ASSIGNOR_ROUNDROBIN: assign_roundrobin(&tb); break;
    case SF_ASSIGNOR_COOPERATIVE_STICKY: rc = run_sticky(&tb, members); break;
    }
    if (rc == SF_OK)
        rc = table_emit(&tb, members);
    table_free(&tb);
    if (rc != SF_OK)
        sf_assignor_members_clear(members, nmembers);
    return rc;
}

/* ------------------------------------------------------------------------------------------
 * Encodings
 * ------------------------------------------------------------------------------------------ */

static int tp_cmp(const void *a, const void *b) {
    const sf_assignor_tp_t *x = a, *y = b;
    int c = strcmp(x->topic, y->topic);
    if (c)
        return c;
    return x->partition < y->partition ? -1 : x->partition > y->partition;
}

/* @tps grouped by topic for the wire, every array from @arena. */
typedef struct tp_groups {
    int32_t n;
    sf_slice_t *topic;
    int32_t *count;
    int32_t **parts;
} tp_groups_t;

static int tp_group(sf_arena_t *arena, const sf_assignor_tp_t *tps, size_t n, tp_groups_t *g) {
    sf_assignor_tp_t *s = NULL;
    size_t i, j;
    memset(g, 0, sizeof(*g));
    if (n == 0)
        return SF_OK;
    if (n > INT32_MAX || !(s = sf_arena_alloc(arena, n * sizeof(*s))))
        return SF_ERR_NOMEM;
    memcpy(s, tps, n * sizeof(*s));
    qsort(s, n, sizeof(*s), tp_cmp);
    if (!(g->topic = sf_arena_calloc(arena, n, sizeof(*g->topic))) ||
        !(g->count = sf_arena_calloc(arena, n, sizeof(*g->count))) ||
        !(g->parts = sf_arena_calloc(arena, n, sizeof(*g->parts))))
        return SF_ERR_NOMEM;
    for (i = 0; i < n; i = j) {
        for (j = i; j < n && strcmp(s[j].topic, s[i].topic) == 0; j++)
            ;
        if (!(g->parts[g->n] = sf_arena_alloc(arena, (j - i) * sizeof(int32_t))))
            return SF_ERR_NOMEM;
        g->topic[g->n] = sf_slice_cstr(s[i].topic);
        for (g->count[g->n] = 0; i + (size_t)g->count[g->n] < j; g->count[g->n]++)
            g->parts[g->n][g->count[g->n]] = s[i + (size_t)g->count[g->n]].partition;
        g->n++;
    }
    return SF_OK;
}

static int subscription_fill(sf_arena_t *arena, sf_proto_ConsumerProtocolSubscription_t *m,
                             const char *const *topics, size_t ntopics,
                             const sf_assignor_tp_t *owned, size_t nowned) {
    tp_groups_t g;
    int32_t i;
    int rc;
    if (ntopics > INT32_MAX)
        return SF_ERR_NOMEM;
    if (ntopics && !(m->Topics = sf_arena_calloc(arena, ntopics, sizeof(*m->Topics))))
        return SF_ERR_NOMEM;
    for (i = 0; i < (int32_t)ntopics; i++)
        m->Topics[i] = sf_slice_cstr(topics[i]);
    m->TopicsCount = (int32_t)ntopics;
    if ((rc = tp_group(arena, owned, nowned, &g)) != SF_OK)
        return rc;
    if (g.n && !(m->OwnedPartitions = sf_arena_calloc(arena, (size_t)g.n,
                                                      sizeof(*m->OwnedPartitions))))
        return SF_ERR_NOMEM;
    for (i = 0; i < g.n; i++) {
        m->OwnedPartitions[i].Topic = g.topic[i];
        m->OwnedPartitions[i].PartitionsCount = g.count[i];
        m->OwnedPartitions[i].Partitions = g.parts[i];
    }
    m->OwnedPartitionsCount = g.n;
    return SF_OK;
}

int sf_assignor_subscription_encode(sf_wbuf_t *wb, int16_t version, const char *const *topics,
                                    size_t ntopics, const sf_assignor_tp_t *owned,
                                    size_t nowned, int32_t generation, sf_slice_t userdata) {
    sf_proto_ConsumerProtocolSubscription_t m;
    sf_arena_t arena;
    int rc;
    if (version < 0 || version > SF_ASSIGNOR_SUBSCRIPTION_VERSION)
        return SF_ERR_UNSUPPORTED;
    sf_arena_init(&arena, 0);
    sf_proto_ConsumerProtocolSubscription_init(&m);
    rc = subscription_fill(&arena, &m, topics, ntopics, owned, nowned);
    if (rc == SF_OK) {
        m.UserData = userdata;
        m.GenerationId = generation;
        sf_wbuf_i16(wb, version); /* Version */
        rc = sf_proto_ConsumerProtocolSubscription_encode(wb, version, &m);
    }
    sf_arena_reset(&arena);
    return rc == SF_OK ? wb->err : rc;
}

/* Read the int16 version in front of a consumer protocol message and position @rb after it;
 * the version to decode with is the newest known at most. */
static int version_read(sf_rbuf_t *rb, int16_t newest, int16_t *written, int16_t *decode) {
    int16_t v = sf_rbuf_i16(rb);
    if (rb->err || v < 0)
        return SF_ERR_MALFORMED;
    *written = v;
    *decode = v > newest ? newest : v;
    return SF_OK;
}

int sf_assignor_subscription_decode(const uint8_t *p, size_t len, sf_arena_t *arena,
                                    int16_t *version,
                                    sf_proto_ConsumerProtocolSubscription_t *sub) {
    sf_rbuf_t rb;
    int16_t v;
    int rc;
    sf_proto_ConsumerProtocolSubscription_init(sub);
    sf_rbuf_init(&rb, p, len);
    if ((rc = version_read(&rb, SF_ASSIGNOR_SUBSCRIPTION_VERSION, version, &v)) != SF_OK)
        return rc;
    rc = sf_proto_ConsumerProtocolSubscription_decode(&rb, v, arena, sub);
    return rc == SF_ERR_NOMEM ? rc : rc != SF_OK ? SF_ERR_MALFORMED : SF_OK;
}

int sf_assignor_assignment_encode(sf_wbuf_t *wb, int16_t version, const sf_assignor_tp_t *tps,
                                  size_t n) {
    sf_proto_ConsumerProtocolAssignment_t m;
    sf_arena_t arena;
    tp_groups_t g;
    int32_t i;
    int rc;
    if (version < 0 || version > SF_ASSIGNOR_ASSIGNMENT_VERSION)
        return SF_ERR_UNSUPPORTED;
    sf_arena_init(&arena, 0);
    sf_proto_ConsumerProtocolAssignment_init(&m);
    rc = tp_group(&arena, tps, n, &g);
    if (rc == SF_OK && g.n &&
        !(m.AssignedPartitions = sf_arena_calloc(&arena, (size_t)g.n,
                                                 sizeof(*m.AssignedPartitions))))
        rc = SF_ERR_NOMEM;
    if (rc == SF_OK) {
        for (i = 0; i < g.n; i++) {
            m.AssignedPartitions[i].Topic = g.topic[i];
            m.AssignedPartitions[i].PartitionsCount = g.count[i];
            m.AssignedPartitions[i].Partitions = g.parts[i];
        }
        m.AssignedPartitionsCount = g.n;
        sf_wbuf_i16(wb, version); /* Version */
        rc = sf_proto_ConsumerProtocolAssignment_encode(wb, version, &m);
    }
    sf_arena_reset(&arena);
    return rc == SF_OK ? wb->err : rc;
}

int sf_assignor_assignment_decode(const uint8_t *p, size_t len, sf_arena_t *arena,
                                  int16_t *version, sf_proto_ConsumerProtocolAssignment_t *asg) {
    sf_rbuf_t rb;
    int16_t v;
    int rc;
    sf_proto_ConsumerProtocolAssignment_init(asg);
    *version = 0;
    if (len == 0)
        return SF_OK;
    sf_rbuf_init(&rb, p, len);
    if ((rc = version_read(&rb, SF_ASSIGNOR_ASSIGNMENT_VERSION, version, &v)) != SF_OK)
        return rc;
    rc = sf_proto_ConsumerProtocolAssignment_decode(&rb, v, arena, asg);
    return rc == SF_ERR_NOMEM ? rc : rc != SF_OK ? SF_ERR_MALFORMED : SF_OK;
}

int32_t sf_assignor_userdata_generation(sf_slice_t userdata) {
    if (userdata.len != 4 || !userdata.p)
        return -1;
    return (int32_t)sf_load_be32(userdata.p);
}
