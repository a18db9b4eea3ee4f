/* Transactional offsets (group.h): what TxnOffsetCommit hands a group coordinator stays
 * pending, per (producer, group), until the transaction's marker for the group's
 * __consumer_offsets partition commits it into the group's offsets or drops it. Each pending
 * set is kept in ZooKeeper (/coordinators/groups/<b>/<pid>-<group>, cluster.h) before its
 * commit is answered, so a coordinator that takes a bucket over loads them and settles them
 * when the markers come (the transaction coordinator sends them until they are written):
 *
 *   {"version":1,"producer_epoch":3,"offsets":[{"topic":"t","partition":0,"offset":42,
 *    "leader_epoch":-1,"metadata":"","commit_timestamp":1700000000000}]}
 *
 * One write or settling per (producer, group) is in flight at a time; every write is checked
 * against the bucket's epoch and the znode's version. A bucket whose load or write failed is
 * loaded again (a write that may or may not have landed leaves its version unknown). */
#include "group_int.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "err.h"
#include "logging.h"

#define RELOAD_MS 1000

enum { TB_NONE, TB_LOADING, TB_LOADED };

struct gtbucket {
    int state;
    int32_t epoch; /* the one loaded */
    unsigned gen;  /* its load's */
};

struct gtload {
    struct gtload *next;
    sf_coord_t *c; /* NULL once the module is gone */
    int bucket, pending, failed;
    unsigned gen;
};

/* A marker settling the pending offsets of one producer in one bucket. */
struct gsettle {
    sf_gdone_cb done;
    void *arg;
    int pending;
    int16_t err;
};

typedef struct gtxn gtxn_t;
struct gtxn {
    gtxn_t *next;
    sf_coord_t *c;
    int bucket;
    int64_t pid;
    int16_t epoch;
    char *group, *name; /* name: "<pid>-<group>" */
    gofs_t *v;          /* the pending offsets */
    int n;
    int32_t version; /* of its znode; -1: none yet */
    int busy;        /* a write or settling in flight */
    int dropped;     /* forgotten while busy: freed when it ends */
    /* the write in flight: the offsets it writes and the request it answers */
    gofs_t *nv;
    int nn;
    int16_t nepoch;
    sf_gcommit_cb done;
    void *arg;
    int16_t *errs;
    int nitems;
    struct gsettle *settle; /* the settling in flight */
};

/* ---- entries ---- */

static void ofs_free(gofs_t *v, int n) {
    int i;
    for (i = 0; i < n; i++) {
        free(v[i].topic);
        free(v[i].metadata);
    }
    free(v);
}

static void settle_part(struct gsettle *s, int16_t err) {
    if (err && !s->err)
        s->err = err;
    if (--s->pending == 0) {
        s->done(s->arg, s->err);
        free(s);
    }
}

/* Answer the write in flight: @err for each item not refused already. */
static void write_answer(gtxn_t *e, int16_t err) {
    sf_gcommit_cb done = e->done;
    int i;
    ofs_free(e->nv, e->nn);
    e->nv = NULL;
    e->nn = 0;
    e->done = NULL;
    for (i = 0; i < e->nitems; i++)
        if (e->errs[i] != SF_KERR_OFFSET_METADATA_TOO_LARGE)
            e->errs[i] = err;
    if (done)
        done(e->arg, SF_KERR_NONE, e->errs);
    free(e->errs);
    e->errs = NULL;
}

static void settle_end(gtxn_t *e, int16_t err) {
    struct gsettle *s = e->settle;
    e->settle = NULL;
    e->busy = 0;
    if (s)
        settle_part(s, err);
}

static void txn_free(gtxn_t *e) {
    ofs_free(e->v, e->n);
    free(e->group);
    free(e->name);
    free(e);
}

static void txn_unlink(gtxn_t *e) {
    gtxn_t **pp;
    for (pp = &e->c->txns; *pp && *pp != e; pp = &(*pp)->next)
        ;
    if (*pp)
        *pp = e->next;
}

/* Forget @e: what it is doing is answered @err now; freed at once or when its work ends. */
static void txn_drop(gtxn_t *e, int16_t err) {
    struct gsettle *s = e->settle;
    txn_unlink(e);
    e->settle = NULL;
    if (e->done)
        write_answer(e, err);
    if (s)
        settle_part(s, err);
    if (e->busy)
        e->dropped = 1;
    else
        txn_free(e);
}

/* Back from ZooKeeper: 1 (and @e freed) when @e was dropped meanwhile. */
static int txn_gone(gtxn_t *e) {
    if (!e->dropped)
        return 0;
    txn_free(e);
    return 1;
}

static gtxn_t *txn_find(const sf_coord_t *c, int bucket, int64_t pid, const char *group) {
    gtxn_t *e;
    for (e = c->txns; e; e = e->next)
        if (e->bucket == bucket && e->pid == pid && !strcmp(e->group, group))
            return e;
    return NULL;
}

static gtxn_t *txn_new(sf_coord_t *c, int bucket, int64_t pid, const char *group) {
    gtxn_t *e = calloc(1, sizeof(*e));
    size_t len = strlen(group) + 24;
    if (!e || !(e->group = strdup(group)) || !(e->name = malloc(len))) {
        if (e)
            free(e->group);
        free(e);
        return NULL;
    }
    snprintf(e->name, len, "%" PRId64 "-%s", pid, group);
    e->c = c;
    e->bucket = bucket;
    e->pid = pid;
    e->version = -1;
    e->next = c->txns;
    c->txns = e;
    return e;
}

/* ---- buckets ---- */

static void bucket_drop(sf_coord_t *c, int bucket, int16_t err) {
    gtxn_t *e, *next;
    for (e = c->txns; e; e = next) {
        next = e->next;
        if (bucket < 0 || e->bucket == bucket)
            txn_drop(e, err);
    }
}

/* A load or a write of @bucket failed: forget it and load it again soon. */
static void bucket_failed(sf_coord_t *c, int bucket) {
    struct timeval tv = {RELOAD_MS / 1000, (RELOAD_MS % 1000) * 1000};
    sf_log(SF_LOG_WARNING, "GROUP", "bucket %d: pending transactional offsets unknown, loading "
           "them again", bucket);
    bucket_drop(c, bucket, SF_KERR_COORDINATOR_NOT_AVAILABLE);
    if (bucket < c->ntbuckets)
        c->tbuckets[bucket].state = TB_NONE;
    if (c->treload)
        evtimer_add(c->treload, &tv);
}

/* ---- the znodes ---- */

static json_t *ofs_json(const gofs_t *v, int n, int16_t epoch) {
    json_t *a = json_array(), *j = json_object();
    int i, bad = !a || !j;
    for (i = 0; !bad && i < n; i++) {
        json_t *o = json_object();
        bad = !o || json_object_set_new(o, "topic", json_string(v[i].topic)) ||
              json_object_set_new(o, "partition", json_integer(v[i].partition)) ||
              json_object_set_new(o, "offset", json_integer(v[i].offset)) ||
              json_object_set_new(o, "leader_epoch", json_integer(v[i].leader_epoch)) ||
              json_object_set_new(o, "metadata", json_string(v[i].metadata)) ||
              json_object_set_new(o, "commit_timestamp", json_integer(v[i].commit_ms)) ||
              json_array_append_new(a, o);
    }
    if (bad || json_object_set_new(j, "version", json_integer(1)) ||
        json_object_set_new(j, "producer_epoch", json_integer(epoch)) ||
        json_object_set_new(j, "offsets", a)) {
        json_decref(a);
        json_decref(j);
        return NULL;
    }
    return j;
}

static int ofs_order(const void *a, const void *b) {
    const gofs_t *x = a, *y = b;
    return gofs_cmp(x->topic, x->partition, y->topic, y->partition);
}

/* The pending offsets in @data into @e (sorted). SF_OK, SF_ERR_CORRUPT or SF_ERR_NOMEM. */
static int ofs_parse(gtxn_t *e, const char *data) {
    json_t *j = json_loads(data, 0, NULL), *a = json_object_get(j, "offsets");
    json_t *ep = json_object_get(j, "producer_epoch");
    size_t i, n = json_array_size(a);
    int rc = SF_OK;
    if (!json_is_array(a) || !json_is_integer(ep) || !(e->v = calloc(n + 1, sizeof(*e->v)))) {
        json_decref(j);
        return !j || !json_is_array(a) || !json_is_integer(ep) ? SF_ERR_CORRUPT : SF_ERR_NOMEM;
    }
    e->epoch = (int16_t)json_integer_value(ep);
    for (i = 0; i < n && rc == SF_OK; i++) {
        json_t *o = json_array_get(a, i);
        const char *t = json_string_value(json_object_get(o, "topic"));
        const char *md = json_string_value(json_object_get(o, "metadata"));
        gofs_t *w = &e->v[e->n];
        if (!t || !md || !json_is_integer(json_object_get(o, "offset"))) {
            rc = SF_ERR_CORRUPT;
            break;
        }
        w->topic = strdup(t);
        w->metadata = strdup(md);
        e->n++;
        if (!w->topic || !w->metadata)
            rc = SF_ERR_NOMEM;
        w->partition = (int32_t)json_integer_value(json_object_get(o, "partition"));
        w->offset = json_integer_value(json_object_get(o, "offset"));
        w->leader_epoch = (int32_t)json_integer_value(json_object_get(o, "leader_epoch"));
        w->commit_ms = json_integer_value(json_object_get(o, "commit_timestamp"));
    }
    json_decref(j);
    if (rc == SF_OK)
        qsort(e->v, (size_t)e->n, sizeof(*e->v), ofs_order);
    return rc;
}

/* ---- loading a bucket ---- */

static struct gtload *load_current(struct gtload *l) {
    sf_coord_t *c = l->c;
    return c && l->bucket < c->ntbuckets && c->tbuckets[l->bucket].gen == l->gen &&
                   c->tbuckets[l->bucket].state == TB_LOADING
               ? l
               : NULL;
}

static void load_step_done(struct gtload *l) {
    struct gtload **pp;
    if (--l->pending > 0)
        return;
    if (load_current(l)) {
        if (l->failed) {
            bucket_failed(l->c, l->bucket);
        } else {
            l->c->tbuckets[l->bucket].state = TB_LOADED;
            sf_log(SF_LOG_DEBUG, "GROUP", "bucket %d: pending transactional offsets loaded",
                   l->bucket);
        }
    }
    if (l->c) {
        for (pp = &l->c->tloads; *pp && *pp != l; pp = &(*pp)->next)
            ;
        if (*pp)
            *pp = l->next;
    }
    free(l);
}

/* One pending znode, named "<pid>-<group>". */
static void load_read_cb(void *arg, int err, const char *data, int32_t version, const char *name) {
    struct gtload *l = arg;
    char *end;
    long long pid = strtoll(name, &end, 10);
    gtxn_t *e;
    int rc;
    if (!load_current(l) || l->failed || (err == SF_OK && !data))
        return;
    if (err != SF_OK) {
        l->failed = 1;
        return;
    }
    if (*end != '-' || !end[1] ||
        sf_coord_bucket_of(end + 1, strlen(end + 1), l->c->nbuckets) != l->bucket) {
        sf_log(SF_LOG_WARNING, "GROUP", "bucket %d: ignoring znode %s", l->bucket, name);
        return;
    }
    if (!(e = txn_new(l->c, l->bucket, pid, end + 1))) {
        l->failed = 1;
        return;
    }
    e->version = version;
    if ((rc = ofs_parse(e, data)) != SF_OK) {
        sf_log(SF_LOG_WARNING, "GROUP", "bucket %d: pending offsets %s: %s", l->bucket, name,
               sf_err_str(rc));
        if (rc == SF_ERR_NOMEM)
            l->failed = 1;
        txn_drop(e, SF_KERR_NONE);
    }
}

struct gtread {
    struct gtload *l;
    char *name;
};

static void read_cb(void *arg, int err, const char *data, int32_t version) {
    struct gtread *r = arg;
    load_read_cb(r->l, err, data, version, r->name);
    load_step_done(r->l);
    free(r->name);
    free(r);
}

static void list_cb(void *arg, int err, char *const *names, int n) {
    struct gtload *l = arg;
    int i;
    if (!load_current(l) || err != SF_OK) {
        l->failed = 1;
        load_step_done(l);
        return;
    }
    for (i = 0; i < n && !l->failed; i++) {
        struct gtread *r = calloc(1, sizeof(*r));
        if (!r || !(r->name = strdup(names[i]))) {
            free(r);
            l->failed = 1;
            break;
        }
        r->l = l;
        if (sf_cluster_pending_read(l->c->cl, l->bucket, names[i], read_cb, r) != SF_OK) {
            free(r->name);
            free(r);
            l->failed = 1;
            break;
        }
        l->pending++;
    }
    load_step_done(l);
}

static void bucket_load(sf_coord_t *c, int bucket) {
    struct gtbucket *tb = &c->tbuckets[bucket];
    struct gtload *l;
    tb->state = TB_LOADING;
    tb->epoch = c->buckets[bucket].epoch;
    tb->gen = ++c->tgen;
    if (!c->cl) { /* no cluster (unit tests): nothing pending */
        tb->state = TB_LOADED;
        return;
    }
    if (!(l = calloc(1, sizeof(*l)))) {
        bucket_failed(c, bucket);
        return;
    }
    l->c = c;
    l->bucket = bucket;
    l->gen = tb->gen;
    l->pending = 1;
    if (sf_cluster_pending_list(c->cl, bucket, list_cb, l) != SF_OK) {
        free(l);
        bucket_failed(c, bucket);
        return;
    }
    l->next = c->tloads;
    c->tloads = l;
}

static void reload_cb(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    coord_txn_update(arg);
}

void coord_txn_update(sf_coord_t *c) {
    int b;
    if (!c->treload && !(c->treload = evtimer_new(c->base, reload_cb, c)))
        return;
    if (c->ntbuckets != c->nbuckets) {
        bucket_drop(c, -1, SF_KERR_NOT_COORDINATOR);
        free(c->tbuckets);
        c->ntbuckets = 0;
        if (!(c->tbuckets = calloc((size_t)c->nbuckets + 1, sizeof(*c->tbuckets))))
            return;
        c->ntbuckets = c->nbuckets;
    }
    for (b = 0; b < c->ntbuckets; b++) {
        struct gtbucket *tb = &c->tbuckets[b];
        if (!coord_owns(c, b, -1)) {
            if (tb->state != TB_NONE)
                bucket_drop(c, b, SF_KERR_NOT_COORDINATOR);
            tb->state = TB_NONE;
        } else if (tb->state == TB_NONE || tb->epoch != c->buckets[b].epoch) {
            bucket_drop(c, b, SF_KERR_NOT_COORDINATOR);
            bucket_load(c, b);
        }
    }
}

void coord_txn_free(sf_coord_t *c) {
    struct gtload *l;
    bucket_drop(c, -1, SF_KERR_COORDINATOR_NOT_AVAILABLE);
    for (l = c->tloads; l; l = l->next)
        l->c = NULL;
    c->tloads = NULL;
    if (c->treload)
        event_free(c->treload);
    c->treload = NULL;
    free(c->tbuckets);
    c->tbuckets = NULL;
    c->ntbuckets = 0;
}

/* NONE when the pending offsets of @bucket are ours and loaded. */
static int16_t bucket_ready(const sf_coord_t *c, int bucket) {
    if (!coord_owns(c, bucket, -1))
        return SF_KERR_NOT_COORDINATOR;
    if (bucket >= c->ntbuckets || c->tbuckets[bucket].state != TB_LOADED ||
        c->tbuckets[bucket].epoch != c->buckets[bucket].epoch)
        return SF_KERR_COORDINATOR_LOAD_IN_PROGRESS;
    return SF_KERR_NONE;
}

/* ---- TxnOffsetCommit ---- */

/* A request's item and its place in the request (the last of a partition's wins). */
struct qitem {
    const sf_goffset_t *q;
    int i;
};

static int qitem_cmp(const void *a, const void *b) {
    const struct qitem *x = a, *y = b;
    int r = gofs_cmp(x->q->topic, x->q->partition, y->q->topic, y->q->partition);
    return r ? r : (x->i > y->i) - (x->i < y->i);
}

static int ofs_copy(gofs_t *w, const gofs_t *o, const sf_goffset_t *q, int64_t now) {
    w->topic = strdup(o ? o->topic : q->topic);
    w->metadata = strdup(o ? o->metadata : q->metadata ? q->metadata : "");
    w->partition = o ? o->partition : q->partition;
    w->offset = o ? o->offset : q->offset;
    w->leader_epoch = o ? o->leader_epoch : q->leader_epoch;
    w->commit_ms = o ? o->commit_ms : now;
    return w->topic && w->metadata ? SF_OK : SF_ERR_NOMEM;
}

/* e->nv (sorted): the pending offsets with @v's items (those not refused in e->errs) over
 * them. */
static int merge(gtxn_t *e, const sf_goffset_t *v, int n) {
    int64_t now = sf_clock_wall_ms();
    struct qitem *q = calloc((size_t)n + 1, sizeof(*q));
    int i, a = 0, b = 0, nq = 0, rc = SF_OK;
    if (!q || !(e->nv = calloc((size_t)(e->n + n) + 1, sizeof(*e->nv)))) {
        free(q);
        return SF_ERR_NOMEM;
    }
    for (i = 0; i < n; i++)
        if (!e->errs[i])
            q[nq++] = (struct qitem){&v[i], i};
    qsort(q, (size_t)nq, sizeof(*q), qitem_cmp);
    while (rc == SF_OK && (a < e->n || b < nq)) {
        const gofs_t *o = a < e->n ? &e->v[a] : NULL;
        const sf_goffset_t *r = NULL;
        int c;
        for (; b + 1 < nq && !gofs_cmp(q[b].q->topic, q[b].q->partition, q[b + 1].q->topic,
                                      q[b + 1].q->partition); b++)
            ;
        r = b < nq ? q[b].q : NULL;
        c = !o ? 1 : !r ? -1 : gofs_cmp(o->topic, o->partition, r->topic, r->partition);
        rc = ofs_copy(&e->nv[e->nn++], c < 0 ? o : NULL, r, now);
        a += c <= 0;
        b += c >= 0;
    }
    free(q);
    return rc;
}

static void written_cb(void *arg, int err, const char *data, int32_t version) {
    gtxn_t *e = arg;
    sf_coord_t *c = e->c;
    (void)data;
    e->busy = 0;
    if (txn_gone(e))
        return;
    if (err == SF_OK) {
        ofs_free(e->v, e->n);
        e->v = e->nv;
        e->n = e->nn;
        e->nv = NULL;
        e->nn = 0;
        e->version = version;
        e->epoch = e->nepoch;
        write_answer(e, SF_KERR_NONE);
    } else if (err == SF_ERR_STATE) {
        write_answer(e, SF_KERR_NOT_COORDINATOR);
    } else {
        bucket_failed(c, e->bucket); /* answers and drops @e */
        return;
    }
    if (!e->n && e->version < 0) {
        txn_unlink(e);
        txn_free(e);
    }
}

/* The producer's pending offsets for the group, new or settled: @err refuses the commit. */
static gtxn_t *txn_for(sf_group_t *g, const sf_gtxn_t *who, int16_t *err) {
    gtxn_t *e;
    if ((*err = bucket_ready(g->c, g->bucket)) != SF_KERR_NONE)
        return NULL;
    if (!(e = txn_find(g->c, g->bucket, who->producer_id, g->id))) {
        if (!(e = txn_new(g->c, g->bucket, who->producer_id, g->id)))
            *err = SF_KERR_COORDINATOR_NOT_AVAILABLE;
        return e;
    }
    *err = e->busy                            ? SF_KERR_CONCURRENT_TRANSACTIONS
           : who->producer_epoch < e->epoch ? SF_KERR_INVALID_PRODUCER_EPOCH
                                              : SF_KERR_NONE;
    return *err ? NULL : e;
}

void sf_group_txn_commit(sf_group_t *g, const sf_gtxn_t *who, const sf_goffset_t *v, int n,
                         sf_gcommit_cb done, void *arg) {
    sf_coord_t *c = g->c;
    int16_t err = group_commit_check(g, who->member_id, who->instance_id, who->generation, 1);
    json_t *j = NULL;
    char *data = NULL;
    gtxn_t *e = err ? NULL : txn_for(g, who, &err);
    int i, rc = SF_ERR_NOMEM, nwrite = 0;
    if (!e) {
        done(arg, err, NULL);
        return;
    }
    if (group_member(g, who->member_id))
        sf_group_heartbeat(g, who->member_id, NULL, who->generation);
    e->busy = 1;
    e->done = done;
    e->arg = arg;
    e->nitems = n;
    e->nepoch = who->producer_epoch;
    if ((e->errs = calloc((size_t)n + 1, sizeof(*e->errs))) != NULL) {
        for (i = 0; i < n; i++)
            if (v[i].metadata && (int64_t)strlen(v[i].metadata) > c->cfg.metadata_max_bytes)
                e->errs[i] = SF_KERR_OFFSET_METADATA_TOO_LARGE;
            else
                nwrite++;
        rc = merge(e, v, n);
    }
    if (rc == SF_OK && nwrite && (!(j = ofs_json(e->nv, e->nn, e->nepoch)) ||
                                  !(data = json_dumps(j, JSON_COMPACT))))
        rc = SF_ERR_NOMEM;
    json_decref(j);
    if (rc == SF_OK && nwrite)
        rc = c->cl ? sf_cluster_pending_write(c->cl, e->bucket, c->tbuckets[e->bucket].epoch,
                                              e->name, e->version, data, written_cb, e)
                   : SF_ERR_STATE;
    free(data);
    if (rc != SF_OK || !nwrite) {
        e->busy = 0;
        if (!e->errs)
            done(arg, SF_KERR_COORDINATOR_NOT_AVAILABLE, NULL);
        else
            write_answer(e, rc == SF_ERR_TOOLARGE  ? SF_KERR_OFFSET_METADATA_TOO_LARGE
                            : rc == SF_ERR_INVALID ? SF_KERR_INVALID_GROUP_ID /* too long */
                                                   : SF_KERR_COORDINATOR_NOT_AVAILABLE);
        e->done = NULL;
        if (!e->n && e->version < 0) {
            txn_unlink(e);
            txn_free(e);
        }
    }
}

int sf_group_offset_unstable(const sf_group_t *g, const char *topic, int32_t partition) {
    const gtxn_t *e;
    if (bucket_ready(g->c, g->bucket) != SF_KERR_NONE ||
        group_commit_inflight(g, topic, partition))
        return 1; /* as Kafka: a commit being written is pending too */
    for (e = g->c->txns; e; e = e->next)
        if (e->bucket == g->bucket && !strcmp(e->group, g->id) &&
            (gofs_find(e->v, e->n, topic, partition) >= 0 ||
             gofs_find(e->nv, e->nn, topic, partition) >= 0))
            return 1;
    return 0;
}

/* ---- settling at the marker ---- */

static void deleted_cb(void *arg, int err, const char *data, int32_t version) {
    gtxn_t *e = arg;
    (void)data;
    (void)version;
    if (txn_gone(e))
        return;
    if (err == SF_OK) {
        struct gsettle *s = e->settle;
        txn_unlink(e);
        txn_free(e);
        settle_part(s, SF_KERR_NONE);
    } else if (err == SF_ERR_STATE) {
        settle_end(e, SF_KERR_NOT_COORDINATOR);
    } else {
        e->busy = 0;
        bucket_failed(e->c, e->bucket); /* answers and frees @e */
    }
}

static void settle_delete(gtxn_t *e) {
    sf_coord_t *c = e->c;
    if (sf_cluster_pending_write(c->cl, e->bucket, c->tbuckets[e->bucket].epoch, e->name,
                                 e->version, NULL, deleted_cb, e) != SF_OK)
        settle_end(e, SF_KERR_COORDINATOR_NOT_AVAILABLE);
}

static void committed_cb(void *arg, int16_t error, const int16_t *errs) {
    gtxn_t *e = arg;
    int i;
    if (txn_gone(e))
        return;
    for (i = 0; !error && i < e->n; i++)
        error = errs[i];
    if (error)
        settle_end(e, error);
    else
        settle_delete(e);
}

static void group_cb(void *arg, sf_group_t *g, int16_t err) {
    gtxn_t *e = arg;
    sf_goffset_t *v;
    int i;
    if (txn_gone(e))
        return;
    if (!g || !(v = calloc((size_t)e->n + 1, sizeof(*v)))) {
        settle_end(e, g ? SF_KERR_COORDINATOR_NOT_AVAILABLE : err);
        return;
    }
    for (i = 0; i < e->n; i++) {
        v[i].topic = e->v[i].topic;
        v[i].partition = e->v[i].partition;
        v[i].offset = e->v[i].offset;
        v[i].leader_epoch = e->v[i].leader_epoch;
        v[i].metadata = e->v[i].metadata;
    }
    group_commit_write(g, v, e->n, committed_cb, e);
    free(v);
}

void sf_coord_txn_complete(sf_coord_t *c, int bucket, int64_t pid, int commit, sf_gdone_cb done,
                           void *arg) {
    int16_t err = bucket_ready(c, bucket);
    struct gsettle *s;
    gtxn_t *e, **v = NULL;
    int i, n = 0;
    for (e = err ? NULL : c->txns; e; e = e->next)
        if (e->bucket == bucket && e->pid == pid)
            n++;
    for (e = n ? c->txns : NULL; e && !err; e = e->next)
        if (e->bucket == bucket && e->pid == pid && e->busy)
            err = SF_KERR_CONCURRENT_TRANSACTIONS;
    if (err || !n) {
        done(arg, err);
        return;
    }
    if (!(s = calloc(1, sizeof(*s))) || !(v = calloc((size_t)n, sizeof(*v)))) {
        free(s);
        done(arg, SF_KERR_COORDINATOR_NOT_AVAILABLE);
        return;
    }
    s->done = done;
    s->arg = arg;
    s->pending = n + 1; /* one held until every entry started */
    for (n = 0, e = c->txns; e; e = e->next)
        if (e->bucket == bucket && e->pid == pid) {
            e->busy = 1;
            e->settle = s;
            v[n++] = e;
        }
    /* An entry may be dropped (and answered) by another's failure: started only if not. */
    for (i = 0; i < n; i++)
        if (txn_gone(v[i]))
            continue;
        else if (commit)
            sf_coord_with_group(c, v[i]->group, group_cb, v[i]);
        else
            settle_delete(v[i]);
    free(v);
    settle_part(s, SF_KERR_NONE);
}
