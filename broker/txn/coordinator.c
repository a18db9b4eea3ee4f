/* The transaction coordinator (txn.h): which buckets are ours, the table of the transactional
 * ids loaded here, their loading from and writing to ZooKeeper, the markers of prepared
 * transactions, and the periodic pass (timed-out transactions, expired ids, writes whose
 * outcome is unknown, markers to resume). */
#include "txn_int.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "err.h"
#include "group.h"
#include "logging.h"

int sf_txn_bucket_of(const char *id, int nbuckets) {
    return sf_coord_bucket_of(id, strlen(id), nbuckets);
}

static int owns(const sf_txn_coord_t *c, int bucket, int32_t epoch) {
    return bucket >= 0 && bucket < c->nbuckets && c->buckets[bucket].broker == c->cfg.broker_id &&
           (epoch < 0 || c->buckets[bucket].epoch == epoch);
}

/* ---- the table ---- */

static size_t slot_of(const sf_txn_coord_t *c, const char *id) {
    uint64_t h = 1469598103934665603ULL;
    for (; *id; id++)
        h = (h ^ (unsigned char)*id) * 1099511628211ULL;
    return (size_t)(h % c->ntable);
}

static sf_txn_t *txn_find(const sf_txn_coord_t *c, const char *id) {
    sf_txn_t *t;
    for (t = c->table[slot_of(c, id)]; t && strcmp(t->id, id); t = t->hnext)
        ;
    return t;
}

static void txn_free(sf_txn_t *t) {
    txn_meta_free(&t->m);
    free(t->id);
    free(t);
}

/* Answer what waits for @t's load with @err and forget it (freed once idle). */
static void txn_drop(sf_txn_t *t, int16_t err) {
    sf_txn_coord_t *c = t->c;
    sf_txn_t **pp;
    txn_defer_t *d;
    for (pp = &c->table[slot_of(c, t->id)]; *pp && *pp != t; pp = &(*pp)->hnext)
        ;
    if (*pp) {
        *pp = t->hnext;
        c->ntxns--;
    }
    t->dropped = 1;
    while ((d = t->waiting) != NULL) {
        t->waiting = d->next;
        d->fn(d->arg, NULL, err);
        free(d);
    }
    if (!t->busy)
        txn_free(t);
}

void txn_release(sf_txn_t *t) {
    if (--t->busy == 0 && t->dropped)
        txn_free(t);
}

static sf_txn_t *txn_new(sf_txn_coord_t *c, const char *id, int bucket) {
    sf_txn_t *t = calloc(1, sizeof(*t));
    size_t s;
    if (!t || !(t->id = strdup(id))) {
        free(t);
        return NULL;
    }
    t->c = c;
    t->bucket = bucket;
    t->epoch = c->buckets[bucket].epoch;
    t->version = -1;
    txn_meta_init(&t->m);
    s = slot_of(c, id);
    t->hnext = c->table[s];
    c->table[s] = t;
    c->ntxns++;
    return t;
}

/* ---- loading ---- */

static void run_waiting(sf_txn_t *t, int16_t err) {
    txn_defer_t *d;
    t->busy++;
    while ((d = t->waiting) != NULL) {
        t->waiting = d->next;
        d->fn(d->arg, err ? NULL : t, err);
        free(d);
    }
    txn_release(t);
}

/* Resume what a loaded state left under way: the markers of a prepared transaction. */
static void txn_resume(sf_txn_t *t) {
    if ((t->m.state == TS_PREPARE_COMMIT || t->m.state == TS_PREPARE_ABORT) && !t->marking &&
        !t->writing)
        txn_markers_start(t);
}

static void loaded_cb(void *arg, int err, const char *data, int32_t version) {
    sf_txn_t *t = arg;
    txn_meta_t m;
    t->busy--;
    t->reading = 0;
    if (t->dropped) {
        t->busy++;
        txn_release(t);
        return;
    }
    if (err != SF_OK) {
        sf_log(SF_LOG_WARNING, "TXN", "transactional id %s: loading its state failed: %s", t->id,
               sf_err_str(err));
        if (t->loaded) { /* a reload: what waits fails now, the pass tries again */
            run_waiting(t, SF_KERR_COORDINATOR_NOT_AVAILABLE);
            return;
        }
        txn_drop(t, SF_KERR_COORDINATOR_NOT_AVAILABLE);
        return;
    }
    if (data && txn_meta_decode(&m, data) == SF_OK) {
        txn_meta_free(&t->m);
        t->m = m;
    } else if (data) {
        sf_log(SF_LOG_WARNING, "TXN", "transactional id %s: its state in ZooKeeper is malformed; "
               "starting afresh", t->id);
    }
    t->version = version;
    t->loaded = 1;
    t->stale = 0;
    if (t->m.producer_id >= 0)
        sf_log(SF_LOG_DEBUG, "TXN", "transactional id %s loaded: %s, producer %lld epoch %d",
               t->id, txn_state_name(t->m.state), (long long)t->m.producer_id, t->m.epoch);
    txn_resume(t);
    run_waiting(t, SF_KERR_NONE);
}

static int txn_load(sf_txn_t *t) {
    if (!t->c->cl) {
        t->loaded = 1;
        t->stale = 0;
        return SF_OK;
    }
    if (sf_cluster_txn_read(t->c->cl, t->id, loaded_cb, t) != SF_OK)
        return SF_ERR_IO;
    t->busy++;
    t->reading = 1;
    return SF_OK;
}

/* @id's entry, created and loading when missing (NULL: not ours, or no memory). */
static sf_txn_t *txn_get(sf_txn_coord_t *c, const char *id, int16_t *err) {
    int bucket = sf_txn_bucket_of(id, c->nbuckets);
    sf_txn_t *t;
    *err = SF_KERR_COORDINATOR_NOT_AVAILABLE;
    if (c->closing || c->nbuckets < 1)
        return NULL;
    if (strlen(id) > SF_CLUSTER_TXN_ID_MAX) { /* it could never be kept */
        *err = SF_KERR_INVALID_REQUEST;
        return NULL;
    }
    if (!owns(c, bucket, -1)) {
        *err = SF_KERR_NOT_COORDINATOR;
        return NULL;
    }
    if ((t = txn_find(c, id)) != NULL)
        return t;
    if (!(t = txn_new(c, id, bucket)))
        return NULL;
    if (txn_load(t) != SF_OK) {
        txn_drop(t, SF_KERR_COORDINATOR_NOT_AVAILABLE);
        return NULL;
    }
    return t;
}

void txn_with(sf_txn_coord_t *c, const char *id, txn_fn fn, void *arg) {
    txn_defer_t *d, **pp;
    int16_t err;
    sf_txn_t *t = txn_get(c, id, &err);
    if (!t) {
        fn(arg, NULL, err);
        return;
    }
    if (t->loaded && !t->stale) {
        t->busy++;
        fn(arg, t, SF_KERR_NONE);
        txn_release(t);
        return;
    }
    if (!(d = calloc(1, sizeof(*d)))) {
        fn(arg, NULL, SF_KERR_COORDINATOR_NOT_AVAILABLE);
        return;
    }
    if (t->stale && !t->reading && !t->writing && !t->marking && txn_load(t) != SF_OK) {
        free(d);
        fn(arg, NULL, SF_KERR_COORDINATOR_NOT_AVAILABLE);
        return;
    }
    d->fn = fn;
    d->arg = arg;
    for (pp = &t->waiting; *pp; pp = &(*pp)->next) /* in arrival order */
        ;
    *pp = d;
}

/* ---- writing ---- */

struct txn_wr {
    sf_txn_t *t;
    txn_meta_t next;
    txn_fn done;
    void *arg;
};

static void write_finish(struct txn_wr *w, int err, int32_t version) {
    sf_txn_t *t = w->t;
    int16_t kerr = SF_KERR_NONE;
    t->writing = 0;
    if (t->dropped) {
        kerr = SF_KERR_NOT_COORDINATOR;
    } else if (err == SF_OK) {
        txn_meta_free(&t->m);
        t->m = w->next;
        txn_meta_init(&w->next);
        t->version = version;
    } else if (err == SF_ERR_STATE) {
        /* The bucket moved on, or another coordinator wrote: what we hold is not current. */
        sf_log(SF_LOG_INFO, "TXN", "transactional id %s: its state changed elsewhere", t->id);
        kerr = SF_KERR_NOT_COORDINATOR;
        txn_drop(t, kerr);
    } else {
        /* Maybe written: read it again before anything else (the periodic pass). */
        sf_log(SF_LOG_WARNING, "TXN", "transactional id %s: writing its state failed: %s", t->id,
               sf_err_str(err));
        kerr = SF_KERR_COORDINATOR_NOT_AVAILABLE;
        t->stale = 1;
    }
    txn_meta_free(&w->next);
    w->done(w->arg, t, kerr);
    txn_release(t);
    free(w);
}

static void written_cb(void *arg, int err, const char *data, int32_t version) {
    (void)data;
    write_finish(arg, err, version);
}

void txn_write(sf_txn_t *t, txn_meta_t *next, txn_fn done, void *arg) {
    sf_txn_coord_t *c = t->c;
    struct txn_wr *w = calloc(1, sizeof(*w));
    char *json = NULL;
    int rc = SF_ERR_NOMEM;
    if (w) {
        w->t = t;
        w->next = *next;
        w->done = done;
        w->arg = arg;
        txn_meta_init(next);
        t->writing = 1;
        t->busy++;
    } else {
        txn_meta_free(next);
        done(arg, t, SF_KERR_COORDINATOR_NOT_AVAILABLE);
        return;
    }
    w->next.update_ms = sf_clock_wall_ms();
    if (!c->cl) {
        write_finish(w, SF_OK, t->version + 1);
        return;
    }
    if ((json = txn_meta_encode(&w->next)) != NULL)
        rc = sf_cluster_txn_write(c->cl, t->id, t->bucket, t->epoch, t->version, json,
                                  written_cb, w);
    free(json);
    if (rc != SF_OK) {
        t->writing = 0;
        txn_meta_free(&w->next);
        done(arg, t, rc == SF_ERR_TOOLARGE ? SF_KERR_INVALID_REQUEST
                                           : SF_KERR_COORDINATOR_NOT_AVAILABLE);
        txn_release(t);
        free(w);
    }
}

/* ---- markers ---- */

struct txn_mk {
    sf_txn_t *t;
    int state; /* the Prepare* state they complete */
    int16_t epoch;
    sf_txn_tp_t *tps; /* the partitions, with copies of their topic names after them */
    sf_txn_markers_t m;
};

static void completed_cb(void *arg, sf_txn_t *t, int16_t err) {
    (void)arg;
    if (err == SF_KERR_NONE)
        sf_log(SF_LOG_DEBUG, "TXN", "transactional id %s: %s", t->id,
               txn_state_name(t->m.state));
}

static void markers_done(void *arg, int err) {
    struct txn_mk *mk = arg;
    sf_txn_t *t = mk->t;
    txn_meta_t next;
    t->marking = 0;
    if (err == SF_OK && !t->dropped && !t->stale && t->m.state == mk->state &&
        t->m.epoch == mk->epoch && txn_meta_copy(&next, &t->m) == SF_OK) {
        next.state = mk->state == TS_PREPARE_COMMIT ? TS_COMPLETE_COMMIT : TS_COMPLETE_ABORT;
        next.start_ms = -1;
        txn_meta_clear_parts(&next);
        txn_write(t, &next, completed_cb, NULL);
    }
    free(mk->tps);
    free(mk);
    txn_release(t);
}

/* The partitions of @m as one block (their names copied: a reload may replace @m while the
 * markers are under way). */
static sf_txn_tp_t *markers_parts(const txn_meta_t *m) {
    size_t size = (size_t)m->nparts * sizeof(sf_txn_tp_t);
    sf_txn_tp_t *tps;
    char *names;
    int i;
    for (i = 0; i < m->nparts; i++)
        size += strlen(m->parts[i].topic) + 1;
    if (!(tps = malloc(size ? size : 1)))
        return NULL;
    names = (char *)(tps + m->nparts);
    for (i = 0; i < m->nparts; i++) {
        size_t len = strlen(m->parts[i].topic) + 1;
        tps[i].topic = memcpy(names, m->parts[i].topic, len);
        tps[i].partition = m->parts[i].partition;
        names += len;
    }
    return tps;
}

void txn_markers_start(sf_txn_t *t) {
    sf_txn_coord_t *c = t->c;
    struct txn_mk *mk = calloc(1, sizeof(*mk));
    if (!mk || !(mk->tps = markers_parts(&t->m))) {
        free(mk);
        return; /* the periodic pass tries again */
    }
    mk->t = t;
    mk->state = t->m.state;
    mk->epoch = t->m.epoch;
    mk->m.producer_id = t->m.producer_id;
    mk->m.producer_epoch = t->m.epoch;
    mk->m.commit = t->m.state == TS_PREPARE_COMMIT;
    mk->m.coordinator_epoch = t->epoch;
    mk->m.parts = mk->tps;
    mk->m.nparts = t->m.nparts;
    mk->m.cancelled = &t->dropped; /* t lives until markers_done (busy) */
    t->marking = 1;
    t->busy++;
    if (c->cfg.send_markers && t->m.nparts)
        c->cfg.send_markers(c->cfg.send_arg, &mk->m, markers_done, mk);
    else
        markers_done(mk, SF_OK);
}

/* ---- producer ids ---- */

struct pid_req {
    void (*fn)(void *arg, int err, int64_t id);
    void *arg;
    int64_t id;
};

static void pid_cb(void *arg, int err) {
    struct pid_req *r = arg;
    r->fn(r->arg, err, r->id);
    free(r);
}

void txn_new_producer_id(sf_txn_coord_t *c, void (*fn)(void *arg, int err, int64_t id),
                         void *arg) {
    struct pid_req *r;
    int rc;
    if (!c->cl) {
        fn(arg, SF_OK, c->next_pid++);
        return;
    }
    if (!(r = calloc(1, sizeof(*r)))) {
        fn(arg, SF_ERR_NOMEM, -1);
        return;
    }
    r->fn = fn;
    r->arg = arg;
    rc = sf_cluster_producer_id(c->cl, &r->id, pid_cb, r);
    if (rc != SF_AGAIN)
        pid_cb(r, rc);
}

/* ---- the periodic pass ---- */

static void list_start(sf_txn_coord_t *c); /* buckets */

static void expired_cb(void *arg, int err, const char *data, int32_t version) {
    sf_txn_t *t = arg;
    (void)data;
    (void)version;
    t->writing = 0;
    if (err == SF_OK && !t->dropped) {
        sf_log(SF_LOG_INFO, "TXN", "transactional id %s expired", t->id);
        txn_drop(t, SF_KERR_NOT_COORDINATOR);
    } else if (!t->dropped) {
        t->stale = 1;
    }
    txn_release(t);
}

static void txn_expire(sf_txn_t *t) {
    if (!t->c->cl || t->version < 0) {
        txn_drop(t, SF_KERR_NOT_COORDINATOR);
        return;
    }
    if (sf_cluster_txn_write(t->c->cl, t->id, t->bucket, t->epoch, t->version, NULL,
                             expired_cb, t) == SF_OK) {
        t->writing = 1;
        t->busy++;
    }
}

static void pass_one(sf_txn_t *t, int64_t now) {
    const txn_meta_t *m = &t->m;
    if (!t->loaded || t->writing || t->marking || t->reading)
        return;
    if (t->stale) {
        (void)txn_load(t);
    } else if (m->producer_id < 0 && t->version < 0 && !t->waiting) {
        txn_drop(t, SF_KERR_NOT_COORDINATOR); /* an id nobody initialised (a describe) */
    } else if (m->state == TS_PREPARE_COMMIT || m->state == TS_PREPARE_ABORT) {
        txn_markers_start(t);
    } else if (m->state == TS_ONGOING && m->start_ms >= 0 && now > m->start_ms + m->timeout_ms) {
        txn_fence_and_abort(t, "timed out");
    } else if ((m->state == TS_EMPTY || m->state == TS_COMPLETE_COMMIT ||
                m->state == TS_COMPLETE_ABORT) && m->producer_id >= 0 &&
               now - m->update_ms > t->c->cfg.id_expiration_ms) {
        txn_expire(t);
    }
}

static void pass_cb(evutil_socket_t fd, short what, void *arg) {
    sf_txn_coord_t *c = arg;
    int64_t now = sf_clock_wall_ms();
    sf_txn_t **v;
    size_t s, n = 0, i;
    (void)fd;
    (void)what;
    list_start(c);
    if (!c->ntxns || !(v = malloc(c->ntxns * sizeof(*v))))
        return;
    /* Taken first: the pass may drop entries. */
    for (s = 0; s < c->ntable; s++) {
        sf_txn_t *t;
        for (t = c->table[s]; t && n < c->ntxns; t = t->hnext) {
            t->busy++;
            v[n++] = t;
        }
    }
    for (i = 0; i < n; i++) {
        if (!v[i]->dropped)
            pass_one(v[i], now);
        txn_release(v[i]);
    }
    free(v);
}

/* ---- buckets ---- */

static void listed_cb(void *arg, int err, char *const *ids, int n) {
    sf_txn_coord_t *c = arg;
    int16_t kerr;
    int i;
    c->listing = 0;
    if (c->closing)
        return;
    if (err != SF_OK) {
        sf_log(SF_LOG_WARNING, "TXN", "listing the transactional ids failed: %s; the next pass "
               "tries again", sf_err_str(err));
        c->list_needed = 1;
        return;
    }
    for (i = 0; i < n; i++)
        if (owns(c, sf_txn_bucket_of(ids[i], c->nbuckets), -1))
            (void)txn_get(c, ids[i], &kerr); /* loads it, and resumes what it left */
    list_start(c); /* a bucket gained while this listing ran */
}

/* List /transactions when a bucket was gained since the last listing. */
static void list_start(sf_txn_coord_t *c) {
    if (c->list_needed && c->cl && !c->listing && sf_cluster_txn_list(c->cl, listed_cb, c) ==
                                                      SF_OK) {
        c->listing = 1;
        c->list_needed = 0;
    }
}

void sf_txn_coord_update(sf_txn_coord_t *c, const sf_cluster_snapshot_t *snap) {
    sf_cluster_bucket_t *nb = NULL;
    int n = snap ? snap->ngroup_buckets : 0, b, gained = 0;
    size_t s;
    if (n > 0 && !(nb = malloc((size_t)n * sizeof(*nb))))
        return; /* keeps the old buckets until the next snapshot */
    if (n > 0)
        memcpy(nb, snap->group_buckets, (size_t)n * sizeof(*nb));
    for (b = 0; b < n; b++)
        gained |= nb[b].broker == c->cfg.broker_id &&
                  (n != c->nbuckets || !owns(c, b, nb[b].epoch));
    free(c->buckets);
    c->buckets = nb;
    c->nbuckets = n;
    for (s = 0; s < c->ntable; s++) {
        sf_txn_t *t = c->table[s], *next;
        for (; t; t = next) {
            next = t->hnext;
            if (!owns(c, t->bucket, t->epoch) || sf_txn_bucket_of(t->id, n) != t->bucket)
                txn_drop(t, SF_KERR_NOT_COORDINATOR);
        }
    }
    c->list_needed |= gained;
    list_start(c);
}

/* ---- the module ---- */

sf_txn_coord_t *sf_txn_coord_new(struct event_base *base, sf_cluster_t *cl,
                                 const sf_txn_config_t *cfg) {
    sf_txn_coord_t *c = calloc(1, sizeof(*c));
    struct timeval tv;
    if (!c)
        return NULL;
    c->base = base;
    c->cl = cl;
    c->cfg = *cfg;
    c->ntable = 1024;
    c->next_pid = 1;
    if (!(c->table = calloc(c->ntable, sizeof(*c->table))) ||
        !(c->pass_timer = event_new(base, -1, EV_PERSIST, pass_cb, c))) {
        free(c->table);
        free(c);
        return NULL;
    }
    tv.tv_sec = cfg->abort_check_ms / 1000;
    tv.tv_usec = (cfg->abort_check_ms % 1000) * 1000;
    event_add(c->pass_timer, &tv);
    return c;
}

void sf_txn_coord_free(sf_txn_coord_t *c) {
    size_t s;
    if (!c)
        return;
    c->closing = 1;
    event_free(c->pass_timer);
    for (s = 0; s < c->ntable; s++)
        while (c->table[s])
            txn_drop(c->table[s], SF_KERR_COORDINATOR_NOT_AVAILABLE);
    free(c->table);
    free(c->buckets);
    free(c);
}
