/* The group coordinator (group.h): which buckets are ours (the snapshot's
 * /coordinators/groups), the table of the groups loaded here, their loading from ZooKeeper,
 * and committed offsets (kept sorted in memory, written through cluster.h before a commit is
 * acknowledged, each write checked against the bucket's epoch). */
#include "group_int.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "err.h"
#include "logging.h"

/* ---- buckets ---- */

/* Java's String(bytes, UTF_8): UTF-16 code units, with malformed input replaced by U+FFFD
 * exactly as the JDK's decoder does (how many bytes one replacement takes matters to the
 * hash). Returns the units written to @u (1 or 2) and advances *@p. */
#define REPL 0xFFFD
#define CONT(b) (((b) & 0xC0) == 0x80)

static int utf8_step3(const unsigned char **p, const unsigned char *end, uint16_t *u) {
    const unsigned char *s = *p;
    unsigned b1 = s[0];
    if (end - s >= 3) {
        unsigned b2 = s[1], b3 = s[2];
        if ((b1 == 0xE0 && (b2 & 0xE0) == 0x80) || !CONT(b2) || !CONT(b3)) {
            *p = s + ((b1 == 0xE0 && (b2 & 0xE0) == 0x80) || !CONT(b2) ? 1 : 2);
            *u = REPL;
        } else {
            uint16_t c = (uint16_t)(((b1 & 0x0F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F));
            *p = s + 3;
            *u = c >= 0xD800 && c <= 0xDFFF ? REPL : c; /* an encoded surrogate */
        }
        return 1;
    }
    /* cut short: one replacement for what is left, unless its second byte is wrong */
    *p = end - s >= 2 && ((b1 == 0xE0 && (s[1] & 0xE0) == 0x80) || !CONT(s[1])) ? s + 1 : end;
    *u = REPL;
    return 1;
}

static int bad4_2(unsigned b1, unsigned b2) {
    return (b1 == 0xF0 && (b2 < 0x90 || b2 > 0xBF)) || (b1 == 0xF4 && (b2 & 0xF0) != 0x80) ||
           !CONT(b2);
}

static int utf8_step4(const unsigned char **p, const unsigned char *end, uint16_t u[2]) {
    const unsigned char *s = *p;
    unsigned b1 = s[0];
    u[0] = REPL;
    if (end - s >= 4) {
        uint32_t cp = ((b1 & 0x07u) << 18) | ((s[1] & 0x3Fu) << 12) | ((s[2] & 0x3Fu) << 6) |
                      (s[3] & 0x3Fu);
        if (!CONT(s[1]) || !CONT(s[2]) || !CONT(s[3]) || cp < 0x10000 || cp > 0x10FFFF) {
            *p = s + (b1 > 0xF4 || bad4_2(b1, s[1]) ? 1 : !CONT(s[2]) ? 2 : 3);
            return 1;
        }
        cp -= 0x10000;
        u[0] = (uint16_t)(0xD800 + (cp >> 10));
        u[1] = (uint16_t)(0xDC00 + (cp & 0x3FF));
        *p = s + 4;
        return 2;
    }
    if (b1 > 0xF4 || (end - s >= 2 && bad4_2(b1, s[1])))
        *p = s + 1;
    else if (end - s >= 3 && !CONT(s[2]))
        *p = s + 2;
    else
        *p = end;
    return 1;
}

static int utf16_units(const unsigned char **p, const unsigned char *end, uint16_t u[2]) {
    const unsigned char *s = *p;
    unsigned b1 = s[0];
    if (b1 < 0x80) {
        u[0] = (uint16_t)b1;
        *p = s + 1;
        return 1;
    }
    if (b1 >= 0xC2 && b1 <= 0xDF) {
        if (end - s >= 2 && CONT(s[1])) {
            u[0] = (uint16_t)(((b1 & 0x1F) << 6) | (s[1] & 0x3F));
            *p = s + 2;
        } else {
            u[0] = REPL;
            *p = s + 1;
        }
        return 1;
    }
    if ((b1 & 0xF0) == 0xE0)
        return utf8_step3(p, end, u);
    if ((b1 & 0xF8) == 0xF0)
        return utf8_step4(p, end, u);
    u[0] = REPL;
    *p = s + 1;
    return 1;
}

int sf_coord_bucket_of(const char *group, size_t len, int nbuckets) {
    const unsigned char *p = (const unsigned char *)group, *end = p + len;
    uint32_t h = 0;
    int32_t sh;
    while (p < end) {
        uint16_t u[2];
        int i, n = utf16_units(&p, end, u);
        for (i = 0; i < n; i++)
            h = 31 * h + u[i];
    }
    sh = (int32_t)h;
    /* Kafka's Utils.abs: 0 for Integer.MIN_VALUE */
    return nbuckets > 0 ? (int)((sh == INT32_MIN ? 0 : sh < 0 ? -sh : sh) % nbuckets) : 0;
}

int coord_owns(const sf_coord_t *c, int bucket, int32_t epoch) {
    return bucket >= 0 && bucket < c->nbuckets && c->buckets[bucket].broker == c->cfg.broker_id &&
           (epoch < 0 || c->buckets[bucket].epoch == epoch);
}

/* ---- the table ---- */

static size_t slot_of(const sf_coord_t *c, const char *id) {
    uint64_t h = 1469598103934665603ULL;
    for (; *id; id++)
        h = (h ^ (unsigned char)*id) * 1099511628211ULL;
    return (size_t)(h % c->ntable);
}

sf_group_t *coord_find(const sf_coord_t *c, const char *id) {
    sf_group_t *g;
    for (g = c->table[slot_of(c, id)]; g && strcmp(g->id, id); g = g->hnext)
        ;
    return g;
}

static void unlink_group(sf_coord_t *c, sf_group_t *g) {
    sf_group_t **pp;
    for (pp = &c->table[slot_of(c, g->id)]; *pp && *pp != g; pp = &(*pp)->hnext)
        ;
    if (*pp) {
        *pp = g->hnext;
        c->ngroups--;
    }
}

static void offsets_clear(sf_group_t *g) {
    int i;
    for (i = 0; i < g->noffsets; i++) {
        free(g->offsets[i].topic);
        free(g->offsets[i].metadata);
    }
    free(g->offsets);
    g->offsets = NULL;
    g->noffsets = g->capoffsets = 0;
}

static void group_free(sf_group_t *g) {
    int i;
    if (g->join_timer)
        event_free(g->join_timer);
    for (i = 0; i < g->npending; i++)
        free(g->pending[i].id);
    free(g->pending);
    offsets_clear(g);
    free(g->protocol_type);
    free(g->protocol_name);
    free(g->leader);
    free(g->id);
    free(g);
}

static void commits_abandon(sf_group_t *g);

/* Answer what waits for the group's load with @err and forget the group. */
static void drop_group(sf_coord_t *c, sf_group_t *g, int16_t err) {
    gdefer_t *d;
    unlink_group(c, g);
    g->dropped = 1;
    group_members_drop(g, err);
    commits_abandon(g);
    group_deletes_abandon(g);
    while ((d = g->waiting) != NULL) {
        g->waiting = d->next;
        d->fn(d->arg, NULL, err);
        free(d);
    }
    if (!g->busy)
        group_free(g);
}

/* Forget a group that holds nothing (no members, offsets or work), so that requests naming
 * groups that do not exist cost no memory. */
void group_maybe_free(sf_group_t *g) {
    if (g->busy || g->waiting)
        return;
    if (g->dropped) {
        group_free(g);
        return;
    }
    if (!g->loaded)
        return;
    if (g->state == GS_EMPTY && !group_has_members(g) && !g->noffsets) {
        unlink_group(g->c, g);
        group_free(g);
    }
}

/* ---- loading ---- */

int gofs_cmp(const char *t1, int32_t p1, const char *t2, int32_t p2) {
    int r = strcmp(t1, t2);
    return r ? r : (p1 > p2) - (p1 < p2);
}

int gofs_find(const gofs_t *v, int n, const char *topic, int32_t partition) {
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        int r = gofs_cmp(v[mid].topic, v[mid].partition, topic, partition);
        if (!r)
            return mid;
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -lo - 1;
}

static int offset_find(const sf_group_t *g, const char *topic, int32_t partition) {
    return gofs_find(g->offsets, g->noffsets, topic, partition);
}

static int offset_put(sf_group_t *g, const sf_cluster_offset_t *w) {
    const char *topic = w->topic;
    int32_t partition = w->partition;
    int i = offset_find(g, topic, partition);
    char *md = strdup(w->metadata ? w->metadata : "");
    gofs_t *o = NULL;
    if (!md)
        return SF_ERR_NOMEM;
    if (i < 0) {
        char *t = strdup(topic);
        if (!t || (g->noffsets == g->capoffsets && !(o = realloc(g->offsets,
                   (size_t)(g->capoffsets ? 2 * g->capoffsets : 8) * sizeof(*o))))) {
            free(t);
            free(md);
            return SF_ERR_NOMEM;
        }
        if (g->noffsets == g->capoffsets) {
            g->offsets = o;
            g->capoffsets = g->capoffsets ? 2 * g->capoffsets : 8;
        }
        i = -i - 1;
        memmove(&g->offsets[i + 1], &g->offsets[i], (size_t)(g->noffsets - i) * sizeof(*o));
        g->noffsets++;
        g->offsets[i].topic = t;
        g->offsets[i].partition = partition;
        g->offsets[i].metadata = NULL;
    }
    o = &g->offsets[i];
    free(o->metadata);
    o->metadata = md;
    o->offset = w->offset;
    o->leader_epoch = w->leader_epoch;
    o->commit_ms = w->commit_ms;
    return SF_OK;
}

void group_offsets_forget(sf_group_t *g, const sf_cluster_offset_t *w, int n) {
    int i, k;
    for (i = 0; i < n; i++) {
        if ((k = offset_find(g, w[i].topic, w[i].partition)) < 0)
            continue;
        free(g->offsets[k].topic);
        free(g->offsets[k].metadata);
        memmove(&g->offsets[k], &g->offsets[k + 1], (size_t)(g->noffsets - k - 1) * sizeof(gofs_t));
        g->noffsets--;
    }
}

static void run_waiting(sf_group_t *g, int16_t err) {
    gdefer_t *d;
    g->busy++;
    while ((d = g->waiting) != NULL) {
        g->waiting = d->next;
        d->fn(d->arg, err ? NULL : g, err);
        free(d);
    }
    g->busy--;
}

static void loaded_cb(void *arg, int err, const sf_cluster_offset_t *v, int n,
                      const char *state) {
    sf_group_t *g = arg;
    int i;
    g->busy--;
    if (g->dropped) {
        group_maybe_free(g);
        return;
    }
    for (i = 0; err == SF_OK && i < n; i++)
        err = offset_put(g, &v[i]);
    g->loaded = 1;
    if (err == SF_OK && state && group_state_restore(g, state) != SF_OK)
        sf_log(SF_LOG_WARNING, "GROUP", "group %s: ignoring its malformed state in ZooKeeper",
               g->id);
    else if (err == SF_OK && g->members)
        sf_log(SF_LOG_INFO, "GROUP", "group %s: generation %d with %d member(s) taken over",
               g->id, g->generation, g->nmembers);
    if (err != SF_OK) {
        sf_log(SF_LOG_WARNING, "GROUP", "group %s: loading its offsets failed: %s", g->id,
               sf_err_str(err));
        drop_group(g->c, g, SF_KERR_COORDINATOR_NOT_AVAILABLE);
        return;
    }
    sf_log(SF_LOG_DEBUG, "GROUP", "group %s loaded: %d committed offset(s)", g->id, n);
    run_waiting(g, SF_KERR_NONE);
    group_maybe_free(g);
}

static sf_group_t *group_new(sf_coord_t *c, const char *id, int bucket) {
    sf_group_t *g = calloc(1, sizeof(*g));
    size_t s;
    if (!g)
        return NULL;
    g->c = c;
    if (!(g->id = strdup(id)) || group_timer_new(g) != SF_OK) {
        group_free(g);
        return NULL;
    }
    g->bucket = bucket;
    g->epoch = c->buckets[bucket].epoch;
    g->state = GS_EMPTY;
    s = slot_of(c, id);
    g->hnext = c->table[s];
    c->table[s] = g;
    c->ngroups++;
    return g;
}

void sf_coord_with_group(sf_coord_t *c, const char *id, sf_group_fn fn, void *arg) {
    sf_group_t *g;
    gdefer_t *d, **pp;
    int bucket;
    if (!id || !*id) {
        fn(arg, NULL, SF_KERR_INVALID_GROUP_ID);
        return;
    }
    if (c->closing || c->nbuckets < 1) {
        fn(arg, NULL, SF_KERR_COORDINATOR_NOT_AVAILABLE);
        return;
    }
    bucket = sf_coord_bucket_of(id, strlen(id), c->nbuckets);
    if (!coord_owns(c, bucket, -1)) {
        fn(arg, NULL, SF_KERR_NOT_COORDINATOR);
        return;
    }
    if (!(g = coord_find(c, id))) {
        if (!(g = group_new(c, id, bucket))) {
            fn(arg, NULL, SF_KERR_COORDINATOR_NOT_AVAILABLE);
            return;
        }
        if (!c->cl) { /* no cluster (unit tests): nothing to load */
            g->loaded = 1;
        } else if (sf_cluster_offsets_load(c->cl, id, loaded_cb, g) != SF_OK) {
            drop_group(c, g, SF_KERR_COORDINATOR_NOT_AVAILABLE);
            fn(arg, NULL, SF_KERR_COORDINATOR_NOT_AVAILABLE);
            return;
        } else {
            g->busy++;
        }
    }
    if (g->loaded) {
        g->busy++;
        fn(arg, g, SF_KERR_NONE);
        g->busy--;
        group_maybe_free(g);
        return;
    }
    if (!(d = calloc(1, sizeof(*d)))) {
        fn(arg, NULL, SF_KERR_COORDINATOR_NOT_AVAILABLE);
        return;
    }
    d->fn = fn;
    d->arg = arg;
    for (pp = &g->waiting; *pp; pp = &(*pp)->next) /* in arrival order */
        ;
    *pp = d;
}

/* ---- offsets retention (offsets.retention.minutes) ---- */

/* An empty group's offsets committed longer than the retention ago are deleted (the whole
 * group when that is all of them), as Kafka expires the offsets of groups without members. */
static void expired_cb(void *arg, int16_t error) {
    sf_group_t *g = arg;
    if (error)
        sf_log(SF_LOG_WARNING, "GROUP", "group %s: deleting expired offsets failed (error %d)",
               g->id, (int)error);
}

static void expire_run(void *arg, sf_group_t *g, int16_t err) {
    sf_coord_t *c = arg;
    int64_t cutoff = sf_clock_wall_ms() - c->cfg.retention_ms;
    sf_goffset_t *v;
    int i, n = 0;
    if (!g || g->state != GS_EMPTY || group_has_members(g) || g->deletes || g->commits ||
        !(v = calloc((size_t)g->noffsets + 1, sizeof(*v))))
        return;
    (void)err;
    for (i = 0; i < g->noffsets; i++)
        if (g->offsets[i].commit_ms < cutoff) {
            v[n].topic = g->offsets[i].topic;
            v[n++].partition = g->offsets[i].partition;
        }
    if (n) {
        sf_log(SF_LOG_INFO, "GROUP", "group %s: %d committed offset(s) expired", g->id, n);
        group_offsets_delete(g, v, n, NULL, n == g->noffsets, expired_cb, g);
    }
    free(v);
}

void coord_expire(sf_coord_t *c, char *const *ids, int n) {
    int i;
    for (i = 0; i < n && !c->closing; i++)
        if (coord_owns(c, sf_coord_bucket_of(ids[i], strlen(ids[i]), c->nbuckets), -1))
            sf_coord_with_group(c, ids[i], expire_run, c);
}

static void retention_cb(evutil_socket_t fd, short what, void *arg) {
    sf_coord_t *c = arg;
    (void)fd;
    (void)what;
    if (c->cl && c->nbuckets > 0)
        (void)coord_list_start(c, NULL, NULL);
}

/* ---- the module ---- */

sf_coord_t *sf_coord_new(struct event_base *base, sf_cluster_t *cl, const sf_coord_config_t *cfg) {
    sf_coord_t *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->base = base;
    c->cl = cl;
    c->cfg = *cfg;
    c->ntable = 1024;
    if (!(c->table = calloc(c->ntable, sizeof(*c->table))) ||
        !(c->retention_timer = event_new(base, -1, EV_PERSIST, retention_cb, c))) {
        free(c->table);
        free(c);
        return NULL;
    }
    if (cfg->retention_check_ms > 0) {
        struct timeval tv = {cfg->retention_check_ms / 1000,
                             (cfg->retention_check_ms % 1000) * 1000};
        event_add(c->retention_timer, &tv);
    }
    return c;
}

void sf_coord_each_group(sf_coord_t *c, void (*fn)(void *arg, sf_group_t *g), void *arg) {
    size_t s;
    sf_group_t *g;
    for (s = 0; c && s < c->ntable; s++)
        for (g = c->table[s]; g; g = g->hnext)
            if (g->loaded)
                fn(arg, g);
}

const char *sf_group_id(const sf_group_t *g) {
    return g->id;
}

static void drop_all(sf_coord_t *c, int16_t err, int keep_owned) {
    size_t s;
    for (s = 0; s < c->ntable; s++) {
        sf_group_t *g, *next;
        for (g = c->table[s]; g; g = next) {
            next = g->hnext;
            if (!keep_owned || !coord_owns(c, g->bucket, g->epoch)) {
                if (keep_owned)
                    sf_log(SF_LOG_INFO, "GROUP", "group %s: its coordinator moved elsewhere",
                           g->id);
                drop_group(c, g, err);
            }
        }
    }
}

/* Whether @snap gives this broker a bucket (or a new epoch of one) it did not own. */
static int buckets_gained(const sf_coord_t *c, const sf_cluster_snapshot_t *snap) {
    int b;
    for (b = 0; b < snap->ngroup_buckets; b++)
        if (snap->group_buckets[b].broker == c->cfg.broker_id &&
            !coord_owns(c, b, snap->group_buckets[b].epoch))
            return 1;
    return 0;
}

void sf_coord_update(sf_coord_t *c, const sf_cluster_snapshot_t *snap) {
    sf_cluster_bucket_t *v = NULL;
    int gained = buckets_gained(c, snap);
    if (snap->ngroup_buckets &&
        !(v = malloc((size_t)snap->ngroup_buckets * sizeof(*v))))
        return; /* the next snapshot tries again */
    if (v)
        memcpy(v, snap->group_buckets, (size_t)snap->ngroup_buckets * sizeof(*v));
    free(c->buckets);
    c->buckets = v;
    c->nbuckets = snap->ngroup_buckets;
    drop_all(c, SF_KERR_NOT_COORDINATOR, 1);
    coord_txn_update(c);
    /* Load the groups of the buckets taken over (the retention pass loads every group
     * owned), as Kafka loads an offsets partition's groups when it becomes its leader: their
     * lag and state are known before a member asks. */
    if (gained && c->cl)
        (void)coord_list_start(c, NULL, NULL);
}

void sf_coord_free(sf_coord_t *c) {
    if (!c)
        return;
    c->closing = 1;
    event_free(c->retention_timer);
    coord_lists_abandon(c);
    coord_txn_free(c);
    drop_all(c, SF_KERR_COORDINATOR_NOT_AVAILABLE, 0);
    free(c->table);
    free(c->buckets);
    free(c);
}

/* ---- offsets ---- */

sf_goffset_t sf_group_offset(const sf_group_t *g, const char *topic, int32_t partition) {
    sf_goffset_t r = {topic, partition, -1, -1, ""};
    int i = offset_find(g, topic, partition);
    if (i >= 0) {
        r.offset = g->offsets[i].offset;
        r.leader_epoch = g->offsets[i].leader_epoch;
        r.metadata = g->offsets[i].metadata;
    }
    return r;
}

void sf_group_offsets(const sf_group_t *g, void (*fn)(void *arg, const sf_goffset_t *o),
                      void *arg) {
    int i;
    for (i = 0; i < g->noffsets; i++) {
        const gofs_t *o = &g->offsets[i];
        sf_goffset_t r = {o->topic, o->partition, o->offset, o->leader_epoch, o->metadata};
        fn(arg, &r);
    }
}

struct gcommit {
    struct gcommit *next;
    sf_group_t *g;
    sf_cluster_offset_t *w;
    int *idx; /* w[j] is item idx[j] of the request */
    int n, nitems;
    int16_t *errs;
    sf_gcommit_cb done; /* NULL once answered */
    void *arg;
};

static void commit_free(struct gcommit *k) {
    int j;
    for (j = 0; j < k->n; j++) {
        free((char *)k->w[j].topic);
        free((char *)k->w[j].metadata);
    }
    free(k->w);
    free(k->idx);
    free(k->errs);
    free(k);
}

static void commit_answer(struct gcommit *k, int16_t error) {
    sf_gcommit_cb done = k->done;
    k->done = NULL;
    if (done)
        done(k->arg, error, error ? NULL : k->errs);
}

int group_commit_inflight(const sf_group_t *g, const char *topic, int32_t partition) {
    const struct gcommit *k;
    int j;
    for (k = g->commits; k; k = k->next)
        for (j = 0; j < k->n; j++)
            if (k->w[j].partition == partition && !strcmp(k->w[j].topic, topic))
                return 1;
    return 0;
}

/* The group is dropped: its commits in flight are answered now (their writes may still land,
 * fenced by the bucket's epoch). */
static void commits_abandon(sf_group_t *g) {
    struct gcommit *k;
    for (k = g->commits; k; k = k->next) {
        int j;
        for (j = 0; j < k->n; j++)
            k->errs[k->idx[j]] = SF_KERR_COORDINATOR_NOT_AVAILABLE;
        commit_answer(k, SF_KERR_NONE);
    }
}

static void commit_done(void *arg, int err) {
    struct gcommit *k = arg, **pp;
    sf_group_t *g = k->g;
    int j;
    (void)err;
    for (pp = &g->commits; *pp && *pp != k; pp = &(*pp)->next)
        ;
    if (*pp)
        *pp = k->next;
    for (j = 0; j < k->n && k->done; j++) {
        int e = k->w[j].err;
        if (e == SF_OK && offset_put(g, &k->w[j]) != SF_OK)
            e = SF_ERR_NOMEM;
        k->errs[k->idx[j]] = e == SF_OK        ? SF_KERR_NONE
                             : e == SF_ERR_STATE ? SF_KERR_NOT_COORDINATOR
                                                 : SF_KERR_COORDINATOR_NOT_AVAILABLE;
    }
    commit_answer(k, SF_KERR_NONE);
    commit_free(k);
    g->busy--;
    group_maybe_free(g);
}

/* Kafka's validateOffsetCommit for the classic protocol (@txn: TxnOffsetCommit's). */
int16_t group_commit_check(const sf_group_t *g, const char *member_id, const char *instance_id,
                           int32_t generation, int txn) {
    int exists = g->state != GS_EMPTY || group_has_members(g) || g->noffsets > 0;
    if (g->state == GS_DEAD)
        return SF_KERR_COORDINATOR_NOT_AVAILABLE;
    if (!txn && !exists && generation >= 0)
        return SF_KERR_ILLEGAL_GENERATION; /* a generation of a group that is not there */
    if (generation >= 0 || (member_id && *member_id) || instance_id) {
        if (group_fenced(g, member_id, instance_id))
            return SF_KERR_FENCED_INSTANCE_ID;
        if (!group_member(g, member_id))
            return SF_KERR_UNKNOWN_MEMBER_ID;
        if (generation != g->generation)
            return SF_KERR_ILLEGAL_GENERATION;
        /* a member that has its generation but not its assignment yet: let it sync first */
        return !txn && g->state == GS_COMPLETING ? SF_KERR_REBALANCE_IN_PROGRESS : SF_KERR_NONE;
    }
    /* outside group management: only while the group has no members (a transaction's
     * commit also then) */
    return txn || g->state == GS_EMPTY ? SF_KERR_NONE : SF_KERR_UNKNOWN_MEMBER_ID;
}

/* The write of @k's items from @v (copied). SF_OK or SF_ERR_NOMEM. */
static int commit_items(sf_group_t *g, struct gcommit *k, const sf_goffset_t *v, int n) {
    int64_t now = sf_clock_wall_ms();
    int i;
    for (i = 0; i < n; i++) {
        const char *md = v[i].metadata ? v[i].metadata : "";
        sf_cluster_offset_t *w = &k->w[k->n];
        if ((int64_t)strlen(md) > g->c->cfg.metadata_max_bytes) {
            k->errs[i] = SF_KERR_OFFSET_METADATA_TOO_LARGE;
            continue;
        }
        w->topic = strdup(v[i].topic);
        w->metadata = strdup(md);
        k->idx[k->n++] = i;
        if (!w->topic || !w->metadata)
            return SF_ERR_NOMEM;
        w->partition = v[i].partition;
        w->offset = v[i].offset;
        w->leader_epoch = v[i].leader_epoch;
        w->commit_ms = now;
        w->exists = offset_find(g, v[i].topic, v[i].partition) >= 0;
    }
    return SF_OK;
}

void group_commit_write(sf_group_t *g, const sf_goffset_t *v, int n, sf_gcommit_cb done,
                        void *arg) {
    struct gcommit *k;
    int j;
    if (!(k = calloc(1, sizeof(*k))) || !(k->w = calloc((size_t)n + 1, sizeof(*k->w))) ||
        !(k->idx = calloc((size_t)n + 1, sizeof(int))) ||
        !(k->errs = calloc((size_t)n + 1, sizeof(int16_t)))) {
        if (k) {
            free(k->w);
            free(k->idx);
        }
        free(k);
        done(arg, SF_KERR_COORDINATOR_NOT_AVAILABLE, NULL);
        return;
    }
    k->g = g;
    k->nitems = n;
    k->done = done;
    k->arg = arg;
    if (commit_items(g, k, v, n) != SF_OK || !k->n || !g->c->cl ||
        sf_cluster_offsets_commit(g->c->cl, g->id, g->bucket, g->epoch, k->w, k->n, commit_done,
                                  k) != SF_OK) {
        for (j = 0; j < k->n; j++)
            k->errs[k->idx[j]] = SF_KERR_COORDINATOR_NOT_AVAILABLE;
        commit_answer(k, SF_KERR_NONE);
        commit_free(k);
        return;
    }
    k->next = g->commits;
    g->commits = k;
    g->busy++;
}

void sf_group_commit(sf_group_t *g, const char *member_id, const char *instance_id,
                     int32_t generation, const sf_goffset_t *v, int n, sf_gcommit_cb done,
                     void *arg) {
    int16_t err = group_commit_check(g, member_id, instance_id, generation, 0);
    if (err) {
        done(arg, err, NULL);
        return;
    }
    if (group_member(g, member_id))
        sf_group_heartbeat(g, member_id, NULL, generation);
    group_commit_write(g, v, n, done, arg);
}
