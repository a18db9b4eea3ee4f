/* The purgatory: parked operations in a hash of keys, each key with the list of operations
 * waiting on it; a timer per operation; notified keys tried at the end of the loop pass. */
#include "purgatory.h"

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

typedef struct pentry pentry_t;

/* One key of one parked operation: a node in its key's list. */
typedef struct plink {
    sf_pwait_t *w;
    pentry_t *entry;
    struct plink *prev, *next;
} plink_t;

/* A key with operations parked on it. */
struct pentry {
    sf_pkey_t key;
    plink_t *head;
    pentry_t *chain;        /* next entry in the hash bucket */
    pentry_t *next_pending; /* in p->pending while notified */
    unsigned pending : 1;   /* in p->pending */
    unsigned running : 1;   /* its operations are being tried */
};

struct sf_pwait {
    sf_purgatory_t *p;
    sf_pwait_attempt_fn attempt;
    void *arg;
    struct event *timer;
    uint64_t pass; /* the notify pass that last tried it */
    int nlinks;
    plink_t links[];
};

struct sf_purgatory {
    struct event_base *base;
    pthread_t owner;
    pentry_t **buckets;
    size_t nbuckets, nentries, nwaits;
    atomic_size_t nparked; /* nwaits, for notifiers on other threads */
    pentry_t *pending;   /* notified keys (owner thread) */
    struct event *wake;  /* runs the notified keys */
    uint64_t pass;
    pthread_mutex_t mu;  /* guards queued: keys notified from other threads */
    sf_pkey_t *queued;
    size_t nqueued, capqueued;
    int closed; /* sf_purgatory_close: nothing parks any more */
};

#define OWNER_THREAD(p) assert(pthread_equal((p)->owner, pthread_self()))

static uint64_t key_hash(sf_pkey_t k) {
    uint64_t h = (uint64_t)(uintptr_t)k.ptr * 0x9E3779B97F4A7C15ull;
    h ^= k.id * 0xC2B2AE3D27D4EB4Full;
    h ^= (uint64_t)k.kind << 56;
    return h ^ (h >> 29);
}

static int key_eq(sf_pkey_t a, sf_pkey_t b) {
    return a.kind == b.kind && a.ptr == b.ptr && a.id == b.id;
}

static pentry_t **bucket_of(sf_purgatory_t *p, sf_pkey_t k) {
    return &p->buckets[key_hash(k) & (p->nbuckets - 1)];
}

static pentry_t *entry_find(sf_purgatory_t *p, sf_pkey_t k) {
    pentry_t *e;
    for (e = *bucket_of(p, k); e; e = e->chain)
        if (key_eq(e->key, k))
            return e;
    return NULL;
}

/* Double the buckets when the entries outnumber them (best effort). */
static void maybe_grow(sf_purgatory_t *p) {
    size_t n = p->nbuckets * 2, i;
    pentry_t **nb;
    if (p->nentries < p->nbuckets || !(nb = calloc(n, sizeof(*nb))))
        return;
    for (i = 0; i < p->nbuckets; i++) {
        pentry_t *e = p->buckets[i], *next;
        for (; e; e = next) {
            next = e->chain;
            e->chain = nb[key_hash(e->key) & (n - 1)];
            nb[key_hash(e->key) & (n - 1)] = e;
        }
    }
    free(p->buckets);
    p->buckets = nb;
    p->nbuckets = n;
}

static pentry_t *entry_get(sf_purgatory_t *p, sf_pkey_t k) {
    pentry_t *e = entry_find(p, k), **b;
    if (e)
        return e;
    if (!(e = calloc(1, sizeof(*e))))
        return NULL;
    e->key = k;
    b = bucket_of(p, k);
    e->chain = *b;
    *b = e;
    p->nentries++;
    maybe_grow(p);
    return e;
}

/* Free @e once nothing waits on it and it is neither about to run nor running. */
static void entry_maybe_free(sf_purgatory_t *p, pentry_t *e) {
    pentry_t **b;
    if (e->head || e->pending || e->running)
        return;
    for (b = bucket_of(p, e->key); *b != e; b = &(*b)->chain)
        assert(*b);
    *b = e->chain;
    p->nentries--;
    free(e);
}

static void unlink_all(sf_purgatory_t *p, sf_pwait_t *w) {
    int i;
    for (i = 0; i < w->nlinks; i++) {
        plink_t *l = &w->links[i];
        if (!l->entry)
            continue;
        if (l->prev)
            l->prev->next = l->next;
        else
            l->entry->head = l->next;
        if (l->next)
            l->next->prev = l->prev;
        entry_maybe_free(p, l->entry);
        l->entry = NULL;
    }
}

static void wait_free(sf_purgatory_t *p, sf_pwait_t *w) {
    unlink_all(p, w);
    if (w->timer)
        event_free(w->timer);
    p->nwaits--;
    atomic_store(&p->nparked, p->nwaits);
    free(w);
}

/* Try @w; frees it when it completed. */
static void attempt(sf_purgatory_t *p, sf_pwait_t *w, int final) {
    if (w->attempt(w->arg, final) || final)
        wait_free(p, w);
}

static void timeout_cb(evutil_socket_t fd, short what, void *arg) {
    sf_pwait_t *w = arg;
    (void)fd;
    (void)what;
    attempt(w->p, w, 1);
}

/* Try every operation waiting on @e once in this pass. The list can change under us (an
 * attempt completes operations, which unlinks them), so take one operation at a time from the
 * front of what is left untried. */
static void run_entry(sf_purgatory_t *p, pentry_t *e) {
    for (;;) {
        plink_t *l;
        for (l = e->head; l && l->w->pass == p->pass; l = l->next)
            ;
        if (!l)
            break;
        l->w->pass = p->pass;
        attempt(p, l->w, 0);
    }
}

/* Mark @k notified (owner thread). */
static void mark_pending(sf_purgatory_t *p, sf_pkey_t k) {
    pentry_t *e = entry_find(p, k);
    if (!e || e->pending)
        return; /* nothing waits on it, or it runs already */
    e->pending = 1;
    e->next_pending = p->pending;
    p->pending = e;
}

/* Run the keys notified so far, each once; keys notified meanwhile run in the next pass. */
static void wake_cb(evutil_socket_t fd, short what, void *arg) {
    sf_purgatory_t *p = arg;
    sf_pkey_t *queued;
    pentry_t *e, *next;
    size_t n, i;
    (void)fd;
    (void)what;
    pthread_mutex_lock(&p->mu);
    queued = p->queued;
    n = p->nqueued;
    p->queued = NULL;
    p->nqueued = p->capqueued = 0;
    pthread_mutex_unlock(&p->mu);
    for (i = 0; i < n; i++)
        mark_pending(p, queued[i]);
    free(queued);
    p->pass++;
    e = p->pending;
    p->pending = NULL;
    for (; e; e = next) {
        next = e->next_pending;
        e->pending = 0;
        e->running = 1;
        run_entry(p, e);
        e->running = 0;
        entry_maybe_free(p, e);
    }
    if (p->pending)
        event_active(p->wake, 0, 0);
}

sf_purgatory_t *sf_purgatory_new(struct event_base *base) {
    sf_purgatory_t *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->base = base;
    p->owner = pthread_self();
    p->nbuckets = 64;
    p->buckets = calloc(p->nbuckets, sizeof(*p->buckets));
    p->wake = event_new(base, -1, 0, wake_cb, p);
    if (!p->buckets || !p->wake || pthread_mutex_init(&p->mu, NULL) != 0) {
        if (p->wake)
            event_free(p->wake);
        free(p->buckets);
        free(p);
        return NULL;
    }
    return p;
}

/* Every parked operation completes now (final attempts). */
static void complete_all(sf_purgatory_t *p) {
    size_t i;
    pentry_t *e;
    for (e = p->pending; e; e = e->next_pending)
        e->pending = 0;
    p->pending = NULL;
    for (i = 0; i < p->nbuckets; i++) {
        /* Each final attempt frees its operation and may free this bucket's entries. */
        while (p->buckets[i]) {
            e = p->buckets[i];
            if (e->head)
                attempt(p, e->head->w, 1);
            else
                entry_maybe_free(p, e);
        }
    }
    assert(p->nwaits == 0);
}

void sf_purgatory_close(sf_purgatory_t *p) {
    OWNER_THREAD(p);
    p->closed = 1;
    complete_all(p);
}

void sf_purgatory_free(sf_purgatory_t *p) {
    if (!p)
        return;
    OWNER_THREAD(p);
    complete_all(p);
    event_free(p->wake);
    pthread_mutex_destroy(&p->mu);
    free(p->queued);
    free(p->buckets);
    free(p);
}

sf_pwait_t *sf_purgatory_park(sf_purgatory_t *p, const sf_pkey_t *keys, int nkeys,
                              int64_t timeout_ms, sf_pwait_attempt_fn fn, void *arg) {
    sf_pwait_t *w;
    struct timeval tv;
    int i;
    OWNER_THREAD(p);
    assert(nkeys > 0 && timeout_ms >= 0);
    if (p->closed)
        return NULL;
    w = calloc(1, sizeof(*w) + (size_t)nkeys * sizeof(plink_t));
    if (!w)
        return NULL;
    w->p = p;
    w->attempt = fn;
    w->arg = arg;
    w->pass = p->pass;
    w->nlinks = nkeys;
    p->nwaits++;
    w->timer = evtimer_new(p->base, timeout_cb, w);
    if (!w->timer)
        goto fail;
    for (i = 0; i < nkeys; i++) {
        plink_t *l = &w->links[i];
        pentry_t *e = entry_get(p, keys[i]);
        if (!e)
            goto fail;
        l->w = w;
        l->entry = e;
        l->next = e->head;
        if (e->head)
            e->head->prev = l;
        e->head = l;
    }
    tv.tv_sec = (time_t)(timeout_ms / 1000);
    tv.tv_usec = (suseconds_t)(timeout_ms % 1000) * 1000;
    if (evtimer_add(w->timer, &tv) < 0)
        goto fail;
    /* Notifiers on other threads skip a purgatory with nothing parked. One that looked just
     * before this increment, after the caller's own try, found it empty: try once more at
     * the end of this pass so that its event is not missed (the increment is sequentially
     * consistent with its check). */
    atomic_store(&p->nparked, p->nwaits);
    for (i = 0; i < nkeys; i++)
        mark_pending(p, keys[i]);
    event_active(p->wake, 0, 0);
    return w;
fail:
    wait_free(p, w);
    return NULL;
}

void sf_purgatory_cancel(sf_purgatory_t *p, sf_pwait_t *w) {
    OWNER_THREAD(p);
    wait_free(p, w);
}

void sf_purgatory_notify(sf_purgatory_t *p, sf_pkey_t key) {
    if (pthread_equal(p->owner, pthread_self())) {
        mark_pending(p, key);
        if (p->pending)
            event_active(p->wake, 0, 0);
        return;
    }
    if (atomic_load(&p->nparked) == 0)
        return; /* see sf_purgatory_park */
    pthread_mutex_lock(&p->mu);
    if (p->nqueued == p->capqueued) {
        size_t cap = p->capqueued ? p->capqueued * 2 : 16;
        sf_pkey_t *q = realloc(p->queued, cap * sizeof(*q));
        if (!q) {
            pthread_mutex_unlock(&p->mu);
            return; /* the waiters still complete at their deadline */
        }
        p->queued = q;
        p->capqueued = cap;
    }
    p->queued[p->nqueued++] = key;
    pthread_mutex_unlock(&p->mu);
    event_active(p->wake, 0, 0);
}

size_t sf_purgatory_size(const sf_purgatory_t *p) {
    return p->nwaits;
}

size_t sf_purgatory_parked(const sf_purgatory_t *p) {
    return atomic_load(&((sf_purgatory_t *)p)->nparked);
}
