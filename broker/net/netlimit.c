/* Limits shared by the network workers (see netlimit.h). */
#include "netlimit.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "brokercfg.h"
#include "err.h"
#include "logging.h"

/* Buckets of the per-address connection counts (chained; entries go when their count does). */
#define SF_NETLIMIT_BUCKETS 1024

/* A peer address without its port; IPv4-mapped IPv6 addresses count as IPv4. */
typedef struct addr_key {
    uint8_t family; /* 4 or 6 */
    uint8_t a[16];
} addr_key_t;

typedef struct ip_entry {
    struct ip_entry *next;
    addr_key_t key;
    int32_t count;
} ip_entry_t;

typedef struct ip_override {
    addr_key_t key;
    int32_t max;
} ip_override_t;

struct sf_netlimit_waiter {
    sf_mail_t mail;
    sf_mailbox_t *mb;
    sf_mailbox_fn fn; /* NULL once the owner left: the posted mail frees the waiter */
    void *arg;
    atomic_int kinds;  /* bit per kind waited for */
    atomic_int posted; /* the mail is in the mailbox */
    sf_netlimit_waiter_t *next;
};

static const char *const kind_key[SF_NETLIMIT_NKINDS] = {
    "queued.max.request.bytes", "queued.max.request.bytes", "queued.max.response.bytes"};
static const char *const kind_what[SF_NETLIMIT_NKINDS] = {
    "partial requests", "requests being handled", "responses not yet sent"};

struct sf_netlimit {
    int64_t cap[SF_NETLIMIT_NKINDS];    /* INT64_MAX: no cap */
    int64_t resume[SF_NETLIMIT_NKINDS]; /* three quarters of it */
    int64_t clear[SF_NETLIMIT_NKINDS];  /* a quarter: a logged cap is cleared under it */
    int64_t configured[SF_NETLIMIT_NKINDS];
    atomic_llong total[SF_NETLIMIT_NKINDS];
    atomic_llong paused[SF_NETLIMIT_NKINDS];
    atomic_int hit[SF_NETLIMIT_NKINDS]; /* logged, not cleared since */
    atomic_int waiting;                 /* bit per kind some waiter waits for */

    pthread_mutex_t mu; /* guards what follows */
    sf_netlimit_waiter_t *waiters;
    int32_t max_conns, max_per_ip;
    atomic_llong nconns, refused, refused_ip;
    int conns_hit;          /* max.connections logged, not cleared since */
    int ip_hit;             /* a per-address limit logged for ip_hit_key, not cleared since */
    addr_key_t ip_hit_key;
    ip_override_t *overrides;
    size_t noverrides;
    ip_entry_t *buckets[SF_NETLIMIT_BUCKETS];
};

static int addr_key(const struct sockaddr *sa, addr_key_t *k) {
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    memset(k, 0, sizeof(*k));
    if (sa->sa_family == AF_INET) {
        k->family = 4;
        memcpy(k->a, &((const struct sockaddr_in *)sa)->sin_addr, 4);
        return 0;
    }
    if (sa->sa_family == AF_INET6) {
        const uint8_t *a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
        if (!memcmp(a, mapped, sizeof(mapped))) {
            k->family = 4;
            memcpy(k->a, a + 12, 4);
        } else {
            k->family = 6;
            memcpy(k->a, a, 16);
        }
        return 0;
    }
    return -1;
}

static void addr_key_str(const addr_key_t *k, char *buf, size_t size) {
    if (!inet_ntop(k->family == 4 ? AF_INET : AF_INET6, k->a, buf, (socklen_t)size))
        snprintf(buf, size, "?");
}

static size_t addr_hash(const addr_key_t *k) {
    uint32_t h = 2166136261u; /* FNV-1a */
    size_t i;
    for (i = 0; i < sizeof(k->a); i++)
        h = (h ^ k->a[i]) * 16777619u;
    return (h ^ k->family) % SF_NETLIMIT_BUCKETS;
}

/* Resolve one override host (an address, or a name: every address it has). */
static int add_override(sf_netlimit_t *nl, const char *host, int32_t max, char *errstr,
                        size_t errstr_size) {
    struct addrinfo hints, *res = NULL, *ai;
    int gai;
    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    gai = getaddrinfo(host, NULL, &hints, &res);
    if (gai != 0) {
        snprintf(errstr, errstr_size, "max.connections.per.ip.overrides: cannot resolve %s: %s",
                 host, gai_strerror(gai));
        return SF_ERR_INVALID;
    }
    for (ai = res; ai; ai = ai->ai_next) {
        ip_override_t *o = realloc(nl->overrides, (nl->noverrides + 1) * sizeof(*o));
        if (!o) {
            freeaddrinfo(res);
            snprintf(errstr, errstr_size, "out of memory for the connection limits");
            return SF_ERR_NOMEM;
        }
        nl->overrides = o;
        if (addr_key(ai->ai_addr, &o[nl->noverrides].key) < 0)
            continue;
        o[nl->noverrides++].max = max;
    }
    freeaddrinfo(res);
    return SF_OK;
}

static void set_cap(sf_netlimit_t *nl, sf_netlimit_kind_t kind, int64_t cap, int64_t configured) {
    nl->cap[kind] = cap > 0 ? cap : INT64_MAX;
    nl->resume[kind] = cap > 0 ? cap - cap / 4 : INT64_MAX;
    nl->clear[kind] = cap > 0 ? cap / 4 : INT64_MAX;
    nl->configured[kind] = configured;
}

int sf_netlimit_new(const sf_brokercfg_t *cfg, sf_netlimit_t **out, char *errstr,
                    size_t errstr_size) {
    sf_netlimit_t *nl = calloc(1, sizeof(*nl));
    int64_t q = cfg->queued_max_request_bytes;
    size_t i;
    int rc;

    *out = NULL;
    if (!nl || pthread_mutex_init(&nl->mu, NULL) != 0) {
        free(nl);
        snprintf(errstr, errstr_size, "out of memory for the connection limits");
        return SF_ERR_NOMEM;
    }
    /* Half for frames still arriving, half for whole requests: peers that never finish their
     * frames cannot keep complete requests from being read. */
    set_cap(nl, SF_NETLIMIT_PARTIAL, q > 0 ? q / 2 : -1, q);
    set_cap(nl, SF_NETLIMIT_HELD, q > 0 ? q - q / 2 : -1, q);
    set_cap(nl, SF_NETLIMIT_OUTPUT, cfg->queued_max_response_bytes,
            cfg->queued_max_response_bytes);
    nl->max_conns = cfg->max_connections;
    nl->max_per_ip = cfg->max_connections_per_ip;
    for (i = 0; i < cfg->nip_overrides; i++) {
        rc = add_override(nl, cfg->ip_overrides[i].host, cfg->ip_overrides[i].max, errstr,
                          errstr_size);
        if (rc != SF_OK) {
            sf_netlimit_free(nl);
            return rc;
        }
    }
    *out = nl;
    return SF_OK;
}

void sf_netlimit_free(sf_netlimit_t *nl) {
    size_t i;
    if (!nl)
        return;
    for (i = 0; i < SF_NETLIMIT_BUCKETS; i++) {
        while (nl->buckets[i]) {
            ip_entry_t *e = nl->buckets[i];
            nl->buckets[i] = e->next;
            free(e);
        }
    }
    free(nl->overrides);
    pthread_mutex_destroy(&nl->mu);
    free(nl);
}

/* ------------------------------------------------------------------------------------------
 * Byte totals
 * ------------------------------------------------------------------------------------------ */

static void waiter_post(sf_netlimit_waiter_t *w) {
    if (!atomic_exchange(&w->posted, 1))
        sf_mailbox_put(w->mb, &w->mail);
}

static void wake(sf_netlimit_t *nl, sf_netlimit_kind_t kind) {
    int bit = 1 << kind;
    sf_netlimit_waiter_t *w;
    if (!(atomic_load(&nl->waiting) & bit))
        return;
    atomic_fetch_and(&nl->waiting, ~bit);
    pthread_mutex_lock(&nl->mu);
    for (w = nl->waiters; w; w = w->next)
        if (atomic_fetch_and(&w->kinds, ~bit) & bit)
            waiter_post(w);
    pthread_mutex_unlock(&nl->mu);
}

void sf_netlimit_add(sf_netlimit_t *nl, sf_netlimit_kind_t kind, int64_t delta) {
    int64_t now;
    if (!nl || !delta)
        return;
    now = (int64_t)atomic_fetch_add(&nl->total[kind], delta) + delta;
    if (delta > 0)
        return;
    /* Under a steady flood the total swings between the cap and the resume point: the cap
     * counts as cleared (and is logged again when hit) only once the flood is over. */
    if (now < nl->clear[kind] && atomic_load(&nl->hit[kind]) &&
        atomic_exchange(&nl->hit[kind], 0))
        sf_log(SF_LOG_NOTICE, "NET", "%s: %s back under %lld bytes", kind_key[kind],
               kind_what[kind], (long long)nl->clear[kind]);
    /* A connection paused for a partial frame waits for the others' partial bytes to fall,
     * which need not take the total under the resume point: any release may free it. */
    if (now < nl->resume[kind] || kind == SF_NETLIMIT_PARTIAL)
        wake(nl, kind);
}

int sf_netlimit_over(sf_netlimit_t *nl, sf_netlimit_kind_t kind, int64_t own, int resume) {
    int64_t total;
    if (!nl || nl->cap[kind] == INT64_MAX)
        return 0;
    total = (int64_t)atomic_load(&nl->total[kind]) - own;
    if (total < (resume ? nl->resume[kind] : nl->cap[kind]))
        return 0;
    if (!resume && !atomic_load(&nl->hit[kind]) && !atomic_exchange(&nl->hit[kind], 1))
        sf_log(SF_LOG_WARNING, "NET", "%s (%lld) reached: %lld bytes of %s; connections stop "
               "reading until it falls under %lld", kind_key[kind],
               (long long)nl->configured[kind], (long long)total, kind_what[kind],
               (long long)nl->resume[kind]);
    return 1;
}

void sf_netlimit_paused(sf_netlimit_t *nl, sf_netlimit_kind_t kind) {
    if (nl)
        atomic_fetch_add(&nl->paused[kind], 1);
}

static void waiter_cb(void *arg) {
    sf_netlimit_waiter_t *w = arg;
    atomic_store(&w->posted, 0);
    if (w->fn)
        w->fn(w->arg);
    else
        free(w); /* its owner left while this was queued */
}

sf_netlimit_waiter_t *sf_netlimit_waiter_new(sf_netlimit_t *nl, sf_mailbox_t *mb,
                                             sf_mailbox_fn fn, void *arg) {
    sf_netlimit_waiter_t *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->mb = mb;
    w->fn = fn;
    w->arg = arg;
    w->mail.fn = waiter_cb;
    w->mail.arg = w;
    pthread_mutex_lock(&nl->mu);
    w->next = nl->waiters;
    nl->waiters = w;
    pthread_mutex_unlock(&nl->mu);
    return w;
}

void sf_netlimit_wait(sf_netlimit_t *nl, sf_netlimit_waiter_t *w, sf_netlimit_kind_t kind) {
    int bit = 1 << kind;
    atomic_fetch_or(&w->kinds, bit);
    atomic_fetch_or(&nl->waiting, bit);
    /* A release between the caller's check and the two lines above saw no waiter: look
     * again (sequentially consistent, so either that release or this load sees the other). */
    if ((int64_t)atomic_load(&nl->total[kind]) < nl->resume[kind])
        wake(nl, kind);
}

void sf_netlimit_waiter_free(sf_netlimit_t *nl, sf_netlimit_waiter_t *w) {
    sf_netlimit_waiter_t **pp;
    if (!w)
        return;
    pthread_mutex_lock(&nl->mu);
    for (pp = &nl->waiters; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    pthread_mutex_unlock(&nl->mu);
    /* Posting happens under the lock and the mail runs on this thread: no race here. */
    if (atomic_load(&w->posted))
        w->fn = NULL;
    else
        free(w);
}

/* ------------------------------------------------------------------------------------------
 * Connections
 * ------------------------------------------------------------------------------------------ */

static int32_t per_ip_key(const sf_netlimit_t *nl, const addr_key_t *k) {
    size_t i;
    for (i = 0; i < nl->noverrides; i++)
        if (!memcmp(&nl->overrides[i].key, k, sizeof(*k)))
            return nl->overrides[i].max;
    return nl->max_per_ip;
}

int32_t sf_netlimit_per_ip(const sf_netlimit_t *nl, const struct sockaddr *sa) {
    addr_key_t k;
    if (addr_key(sa, &k) < 0)
        return nl->max_per_ip;
    return per_ip_key(nl, &k);
}

static ip_entry_t **ip_find(sf_netlimit_t *nl, const addr_key_t *k) {
    ip_entry_t **pp = &nl->buckets[addr_hash(k)];
    while (*pp && memcmp(&(*pp)->key, k, sizeof(*k)))
        pp = &(*pp)->next;
    return pp;
}

int sf_netlimit_conn_open(sf_netlimit_t *nl, const struct sockaddr *sa, const char *peer) {
    addr_key_t k;
    ip_entry_t **pp, *e;
    int32_t max;
    int rc = SF_OK;

    if (addr_key(sa, &k) < 0)
        k.family = 0; /* not an IP peer: counted under one key */
    pthread_mutex_lock(&nl->mu);
    pp = ip_find(nl, &k);
    max = per_ip_key(nl, &k);
    if (nl->nconns >= nl->max_conns) {
        atomic_fetch_add(&nl->refused, 1);
        if (!nl->conns_hit)
            sf_log(SF_LOG_WARNING, "NET", "max.connections (%d) reached: closing new connections "
                   "(first %s) until one closes", (int)nl->max_conns, peer);
        nl->conns_hit = 1;
        rc = SF_ERR_TOOLARGE;
    } else if ((*pp ? (*pp)->count : 0) >= max) {
        char ip[INET6_ADDRSTRLEN];
        atomic_fetch_add(&nl->refused_ip, 1);
        if (!nl->ip_hit) {
            addr_key_str(&k, ip, sizeof(ip));
            sf_log(SF_LOG_WARNING, "NET", "max.connections.per.ip: %s has %d connections, its "
                   "limit: closing its new connections (first %s) until one closes", ip,
                   (int)max, peer);
            nl->ip_hit = 1;
            nl->ip_hit_key = k;
        }
        rc = SF_ERR_TOOLARGE;
    } else if (!(e = *pp)) {
        if (!(e = calloc(1, sizeof(*e)))) {
            rc = SF_ERR_NOMEM;
        } else {
            e->key = k;
            *pp = e;
        }
    }
    if (rc == SF_OK) {
        (*pp)->count++;
        nl->nconns++;
    }
    pthread_mutex_unlock(&nl->mu);
    return rc;
}

void sf_netlimit_conn_close(sf_netlimit_t *nl, const struct sockaddr *sa) {
    addr_key_t k;
    ip_entry_t **pp, *e;
    if (addr_key(sa, &k) < 0)
        k.family = 0;
    pthread_mutex_lock(&nl->mu);
    pp = ip_find(nl, &k);
    if ((e = *pp) != NULL) {
        e->count--;
        nl->nconns--;
        if (nl->ip_hit && !memcmp(&nl->ip_hit_key, &k, sizeof(k)) &&
            e->count < per_ip_key(nl, &k)) {
            nl->ip_hit = 0;
        }
        if (e->count == 0) {
            *pp = e->next;
            free(e);
        }
    }
    if (nl->conns_hit && nl->nconns < nl->max_conns)
        nl->conns_hit = 0;
    pthread_mutex_unlock(&nl->mu);
}

void sf_netlimit_stats(const sf_netlimit_t *nl, sf_netlimit_stats_t *out) {
    int i;
    memset(out, 0, sizeof(*out));
    for (i = 0; i < SF_NETLIMIT_NKINDS; i++) {
        out->bytes[i] = (int64_t)atomic_load(&nl->total[i]);
        out->paused[i] = (int64_t)atomic_load(&nl->paused[i]);
    }
    out->connections = (int64_t)atomic_load(&nl->nconns);
    out->refused_max_connections = (int64_t)atomic_load(&nl->refused);
    out->refused_per_ip = (int64_t)atomic_load(&nl->refused_ip);
}
