/* The client core: configuration, the I/O thread, request routing and the synchronous call
 * function. Connections are in conn.c, the metadata cache in metadata.c. */
#include "conn.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/dns.h>
#include <event2/event.h>
#include <event2/thread.h>

#include "clock.h"
#include "err.h"
#include "proto.h"
#include "tls.h"

/* Response frames larger than this (or twice fetch.max.bytes, whichever is larger) close the
 * connection instead of being buffered. */
#define SF_CLIENT_FRAME_CAP_MIN (128u * 1024 * 1024)

static pthread_once_t evthread_once = PTHREAD_ONCE_INIT;
static int evthread_rc;

static void evthread_init(void) {
    evthread_rc = evthread_use_pthreads();
}

/* ------------------------------------------------------------------------------------------
 * Logging
 * ------------------------------------------------------------------------------------------ */

void sf_client_log(sf_client_t *cl, int level, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    if (cl && cl->conf && level > cl->conf->log_level)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (cl && cl->conf && cl->conf->log_cb)
        cl->conf->log_cb(level, msg, cl->conf->log_opaque);
    else
        fprintf(stderr, "%%%d|streamflow|%s\n", level, msg);
}

/* ------------------------------------------------------------------------------------------
 * Locking, waiting, waking
 * ------------------------------------------------------------------------------------------ */

void sf_client_lock(sf_client_t *cl) {
    pthread_mutex_lock(&cl->lock);
}

void sf_client_unlock(sf_client_t *cl) {
    pthread_mutex_unlock(&cl->lock);
}

int sf_client_wait(sf_client_t *cl, int64_t deadline_ms) {
    struct timespec ts;
    if (deadline_ms < 0) {
        pthread_cond_wait(&cl->cond, &cl->lock);
        return SF_OK;
    }
    if (sf_clock_mono_ms() >= deadline_ms)
        return SF_ERROR_TIMED_OUT;
    ts.tv_sec = (time_t)(deadline_ms / 1000);
    ts.tv_nsec = (long)(deadline_ms % 1000) * 1000000L;
    return pthread_cond_timedwait(&cl->cond, &cl->lock, &ts) == ETIMEDOUT ? SF_ERROR_TIMED_OUT
                                                                         : SF_OK;
}

void sf_client_signal(sf_client_t *cl) {
    pthread_cond_broadcast(&cl->cond);
}

void sf_client_wake(sf_client_t *cl) {
    event_active(cl->wake_ev, EV_READ, 0);
}

void sf_client_kick(sf_client_t *cl) {
    if (!cl->kicked && !cl->stopping) {
        cl->kicked = 1;
        event_active(cl->kick_ev, EV_READ, 0);
    }
}

struct event_base *sf_client_base(sf_client_t *cl) {
    return cl->base;
}

const sf_clientconf_t *sf_client_conf(const sf_client_t *cl) {
    return cl->conf;
}

int sf_client_in_io_thread(sf_client_t *cl) {
    return cl->thread_started && pthread_equal(pthread_self(), cl->thread);
}

/* ------------------------------------------------------------------------------------------
 * Roles
 * ------------------------------------------------------------------------------------------ */

void sf_client_roles_broker(sf_client_t *cl, int32_t broker_id, int up) {
    int i;
    for (i = 0; i < cl->nroles; i++)
        if (cl->roles[i].on_broker)
            cl->roles[i].on_broker(cl, cl->roles[i].self, broker_id, up);
}

void sf_client_roles_metadata(sf_client_t *cl) {
    int i;
    for (i = 0; i < cl->nroles; i++)
        if (cl->roles[i].on_metadata)
            cl->roles[i].on_metadata(cl, cl->roles[i].self);
}

/* ------------------------------------------------------------------------------------------
 * Connections and routing
 * ------------------------------------------------------------------------------------------ */

sf_conn_t *sf_client_conn_find(sf_client_t *cl, int32_t id) {
    int i;
    if (id < 0)
        return NULL;
    for (i = 0; i < cl->nconns; i++)
        if (cl->conns[i]->id == id && !cl->conns[i]->dead)
            return cl->conns[i];
    return NULL;
}

void sf_client_conn_remove(sf_client_t *cl, sf_conn_t *conn) {
    int i;
    for (i = 0; i < cl->nconns; i++) {
        if (cl->conns[i] == conn) {
            memmove(&cl->conns[i], &cl->conns[i + 1],
                    (size_t)(cl->nconns - i - 1) * sizeof(cl->conns[0]));
            cl->nconns--;
            return;
        }
    }
}

/* A connection for a request to any broker: an open one (the least loaded, brokers known
 * from metadata before bootstrap servers), else one being opened, else a broker from the
 * metadata that has no connection yet, else the one whose reconnect backoff ends first. */
static sf_conn_t *route_any(sf_client_t *cl, int64_t now) {
    sf_conn_t *best = NULL;
    int best_rank = 99, i;
    for (i = 0; i < cl->nconns; i++) {
        sf_conn_t *conn = cl->conns[i];
        int rank, load = conn->sendq.n + conn->waitq.n;
        if (conn->dead || SF_CLIENT_BROKER_OF(conn->id) != conn->id)
            continue; /* a coordinator connection: its requests may wait long */
        switch (conn->state) {
        case SF_CONN_UP: rank = conn->id >= 0 ? 0 : 1; break;
        case SF_CONN_DOWN: rank = 6; break;
        default: rank = conn->id >= 0 ? 2 : 3; break;
        }
        if (conn->state == SF_CONN_DOWN && conn->next_connect_ms <= now)
            rank = conn->id >= 0 ? 4 : 5;
        if (!best || rank < best_rank ||
            (rank == best_rank && rank < 4 && load < best->sendq.n + best->waitq.n) ||
            (rank == 6 && best_rank == 6 && conn->next_connect_ms < best->next_connect_ms)) {
            best = conn;
            best_rank = rank;
        }
    }
    if (best_rank >= 4) {
        /* Nothing open or opening: try a known broker we have no connection to. */
        int n;
        const sf_client_broker_t *b = sf_client_brokers(cl, &n);
        if (n > 0) {
            int start = (int)(rand_r(&cl->rng) % (unsigned)n);
            for (i = 0; i < n; i++) {
                const sf_client_broker_t *cand = &b[(start + i) % n];
                if (!sf_client_conn_find(cl, cand->id)) {
                    sf_conn_t *conn = sf_conn_new(cl, cand->id, cand->host, cand->port);
                    if (conn)
                        return conn;
                    break;
                }
            }
        }
    }
    return best;
}

/* Route @req: 1 if it was handed to a connection (or failed), 0 to keep it queued. */
static int route_req(sf_client_t *cl, sf_creq_t *req, int64_t now) {
    int32_t id = req->target;
    sf_conn_t *conn;
    if (id == SF_CLIENT_ANY_BROKER) {
        conn = route_any(cl, now);
        if (!conn)
            return 0;
        sf_conn_enqueue(conn, req);
        return 1;
    }
    if (id == SF_CLIENT_CONTROLLER) {
        id = cl->md.controller;
        if (id < 0) {
            sf_md_refresh_at(cl, cl->md.ever ? cl->md.sent_ms + cl->conf->retry_backoff_ms : now);
            return 0;
        }
    }
    conn = sf_client_conn_find(cl, id);
    if (!conn) {
        const sf_client_broker_t *b = sf_client_broker(cl, SF_CLIENT_BROKER_OF(id));
        if (!b) {
            if (req->target >= 0 && cl->md.ever && cl->md.seq != req->md_seq) {
                /* The metadata was refreshed after the request was made and the broker is
                 * not in it. */
                sf_client_log(cl, SF_LOG_LEVEL_INFO,
                              "%s request for broker %d: not in the cluster metadata",
                              sf_proto_api_name(req->api_key), (int)id);
                sf_creq_finish(cl, req, SF_ERROR_TRANSPORT, id, NULL);
                return 1;
            }
            sf_md_refresh_at(cl, now);
            return 0;
        }
        conn = sf_conn_new(cl, id, b->host, b->port);
        if (!conn) {
            sf_creq_finish(cl, req, SF_ERROR_NOMEM, id, NULL);
            return 1;
        }
    }
    sf_conn_enqueue(conn, req);
    return 1;
}

void sf_client_route_pending(sf_client_t *cl) {
    sf_creq_queue_t q = cl->pending;
    int64_t now = sf_clock_mono_ms();
    sf_creq_t *req;
    memset(&cl->pending, 0, sizeof(cl->pending));
    while ((req = sf_creq_queue_pop(&q))) {
        if (cl->stopping) {
            sf_creq_finish(cl, req, SF_ERROR_DESTROYED, req->target, NULL);
            continue;
        }
        if (!route_req(cl, req, now))
            sf_creq_queue_push(&cl->pending, req);
    }
}

/* Free connections that were retired (never inside their own callbacks). */
static void reap_conns(sf_client_t *cl) {
    int i;
    for (i = 0; i < cl->nconns;) {
        sf_conn_t *conn = cl->conns[i];
        if (conn->dead) {
            sf_client_conn_remove(cl, conn);
            sf_conn_free(conn, SF_ERROR_TRANSPORT);
        } else {
            i++;
        }
    }
}

static void serve_conns(sf_client_t *cl) {
    int i;
    for (i = 0; i < cl->nconns; i++)
        if (!cl->conns[i]->dead)
            sf_conn_serve(cl->conns[i]);
}

/* ------------------------------------------------------------------------------------------
 * Event callbacks (each takes the lock)
 * ------------------------------------------------------------------------------------------ */

static void kick_cb(evutil_socket_t fd, short what, void *arg) {
    sf_client_t *cl = arg;
    (void)fd;
    (void)what;
    sf_client_lock(cl);
    cl->kicked = 0;
    if (!cl->stopping) {
        reap_conns(cl);
        sf_client_route_pending(cl);
        serve_conns(cl);
        sf_md_service(cl, sf_clock_mono_ms());
    }
    sf_client_unlock(cl);
}

static void wake_cb(evutil_socket_t fd, short what, void *arg) {
    sf_client_t *cl = arg;
    int i;
    (void)fd;
    (void)what;
    sf_client_lock(cl);
    if (!cl->stopping)
        for (i = 0; i < cl->nroles; i++)
            if (cl->roles[i].on_wake)
                cl->roles[i].on_wake(cl, cl->roles[i].self);
    sf_client_unlock(cl);
}

static void tick_cb(evutil_socket_t fd, short what, void *arg) {
    sf_client_t *cl = arg;
    int64_t now = sf_clock_mono_ms();
    sf_creq_queue_t expired = {0};
    sf_creq_t *req;
    int i;
    (void)fd;
    (void)what;
    sf_client_lock(cl);
    if (cl->stopping)
        goto out;
    for (i = 0; i < cl->nconns; i++)
        if (!cl->conns[i]->dead)
            sf_conn_tick(cl->conns[i], now);
    sf_creq_queue_take_expired(&cl->pending, now, &expired);
    while ((req = sf_creq_queue_pop(&expired)))
        sf_creq_finish(cl, req, SF_ERROR_TIMED_OUT, req->target, NULL);
    reap_conns(cl);
    if (cl->pending.n > 0)
        sf_client_route_pending(cl);
    sf_md_service(cl, now);
out:
    sf_client_unlock(cl);
}

static void stop_cb(evutil_socket_t fd, short what, void *arg) {
    sf_client_t *cl = arg;
    sf_creq_t *req;
    int i;
    (void)fd;
    (void)what;
    sf_client_lock(cl);
    cl->stopping = 1;
    while ((req = sf_creq_queue_pop(&cl->pending)))
        sf_creq_finish(cl, req, SF_ERROR_DESTROYED, req->target, NULL);
    while (cl->nconns > 0) {
        sf_conn_t *conn = cl->conns[cl->nconns - 1];
        cl->nconns--;
        sf_conn_free(conn, SF_ERROR_DESTROYED);
    }
    for (i = 0; i < cl->nroles; i++)
        if (cl->roles[i].on_stop)
            cl->roles[i].on_stop(cl, cl->roles[i].self);
    while ((req = sf_creq_queue_pop(&cl->pending)))
        sf_creq_finish(cl, req, SF_ERROR_DESTROYED, req->target, NULL);
    sf_client_signal(cl);
    event_base_loopexit(cl->base, NULL);
    sf_client_unlock(cl);
}

static void *io_thread_main(void *arg) {
    sf_client_t *cl = arg;
    event_base_loop(cl->base, EVLOOP_NO_EXIT_ON_EMPTY);
    return NULL;
}

/* ------------------------------------------------------------------------------------------
 * Create / destroy
 * ------------------------------------------------------------------------------------------ */

/* Create the bootstrap connections from "host:port,host:port" (optionally
 * "PROTOCOL://host:port", "[v6addr]:port"). */
static int add_bootstrap(sf_client_t *cl, char *errstr, size_t errstr_size) {
    const char *s = cl->conf->bootstrap_servers;
    int n = 0;
    while (*s) {
        const char *end, *host, *colon, *hend;
        char hostbuf[256], *ep;
        long port;
        size_t hlen;
        sf_conn_t *conn;
        while (*s == ',' || *s == ' ' || *s == '\t')
            s++;
        if (!*s)
            break;
        end = s + strcspn(s, ", \t");
        host = s;
        {
            const char *proto = strstr(s, "://");
            if (proto && proto < end)
                host = proto + 3;
        }
        if (*host == '[') {
            hend = memchr(host, ']', (size_t)(end - host));
            if (!hend || hend + 1 >= end || hend[1] != ':')
                goto bad;
            colon = hend + 1;
            host++;
        } else {
            colon = NULL;
            for (hend = host; hend < end; hend++)
                if (*hend == ':')
                    colon = hend;
            if (!colon)
                goto bad;
            hend = colon;
        }
        hlen = (size_t)(hend - host);
        if (hlen == 0 || hlen >= sizeof(hostbuf))
            goto bad;
        memcpy(hostbuf, host, hlen);
        hostbuf[hlen] = '\0';
        errno = 0;
        port = strtol(colon + 1, &ep, 10);
        if (ep != end || port <= 0 || port > 65535 || errno)
            goto bad;
        if (!(conn = sf_conn_new(cl, -1, hostbuf, (int)port))) {
            sf_errf(errstr, errstr_size, "out of memory");
            return SF_ERR_NOMEM;
        }
        conn->bootstrap = 1;
        n++;
        s = end;
        continue;
    bad:
        sf_errf(errstr, errstr_size, "bootstrap.servers: \"%.*s\" is not host:port", (int)(end - s),
             s);
        return SF_ERR_INVALID;
    }
    if (n == 0) {
        sf_errf(errstr, errstr_size, "bootstrap.servers: no host:port given");
        return SF_ERR_INVALID;
    }
    return SF_OK;
}

sf_client_t *sf_client_new(const sf_conf_t *conf, const sf_client_role_t *roles, int nroles,
                           char *errstr, size_t errstr_size) {
    sf_client_t *cl = NULL;
    sf_clientconf_t *cc;
    pthread_condattr_t ca;
    sigset_t all, old;
    struct timeval tick = {0, SF_CLIENT_TICK_MS * 1000};

    if (errstr && errstr_size)
        errstr[0] = '\0';
    if (!conf || nroles < 0 || (nroles > 0 && !roles)) {
        sf_errf(errstr, errstr_size, "invalid arguments");
        return NULL;
    }
    if (!(cc = sf_clientconf_parse(conf, errstr, errstr_size)))
        return NULL;
    pthread_once(&evthread_once, evthread_init);
    if (evthread_rc != 0) {
        sf_errf(errstr, errstr_size, "libevent thread support is not available");
        sf_clientconf_free(cc);
        return NULL;
    }
    if (!(cl = calloc(1, sizeof(*cl)))) {
        sf_errf(errstr, errstr_size, "out of memory");
        sf_clientconf_free(cc);
        return NULL;
    }
    cl->conf = cc;
    pthread_mutex_init(&cl->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&cl->cond, &ca);
    pthread_condattr_destroy(&ca);
    cl->rng = (unsigned)sf_clock_wall_ms() ^ (unsigned)(uintptr_t)cl;
    cl->frame_cap = SF_CLIENT_FRAME_CAP_MIN;
    if (cc->fetch_max_bytes > 0 && (size_t)cc->fetch_max_bytes * 2 > cl->frame_cap)
        cl->frame_cap = (size_t)cc->fetch_max_bytes * 2;
    sf_md_init(&cl->md);

    if (nroles > 0) {
        if (!(cl->roles = calloc((size_t)nroles, sizeof(*roles)))) {
            sf_errf(errstr, errstr_size, "out of memory");
            goto err;
        }
        memcpy(cl->roles, roles, (size_t)nroles * sizeof(*roles));
        cl->nroles = nroles;
    }
    if (cc->security_ssl) {
        char e[512];
        cl->ssl_ctx = sf_tls_client_ctx_new(cc->ssl_ca_location, cc->ssl_cert_location,
                                            cc->ssl_key_location, cc->ssl_key_password, e,
                                            sizeof(e));
        if (!cl->ssl_ctx) {
            sf_errf(errstr, errstr_size, "TLS: %s", e);
            goto err;
        }
    }
    {
        /* linger.ms and request timeouts are milliseconds: libevent's default coarse clock
         * would add up to 4 ms to each. */
        struct event_config *ecfg = event_config_new();
        if (ecfg) {
            event_config_set_flag(ecfg, EVENT_BASE_FLAG_PRECISE_TIMER);
            cl->base = event_base_new_with_config(ecfg);
            event_config_free(ecfg);
        }
    }
    if (!cl->base) {
        sf_errf(errstr, errstr_size, "cannot create the event loop");
        goto err;
    }
    cl->dns = evdns_base_new(cl->base, EVDNS_BASE_INITIALIZE_NAMESERVERS);
    if (!cl->dns) /* no usable resolv.conf: numeric addresses and /etc/hosts still work */
        cl->dns = evdns_base_new(cl->base, 0);
    cl->wake_ev = event_new(cl->base, -1, 0, wake_cb, cl);
    cl->kick_ev = event_new(cl->base, -1, 0, kick_cb, cl);
    cl->stop_ev = event_new(cl->base, -1, 0, stop_cb, cl);
    cl->tick_ev = event_new(cl->base, -1, EV_PERSIST, tick_cb, cl);
    if (!cl->dns || !cl->wake_ev || !cl->kick_ev || !cl->stop_ev || !cl->tick_ev ||
        event_add(cl->tick_ev, &tick) != 0) {
        sf_errf(errstr, errstr_size, "cannot set up the event loop");
        goto err;
    }
    if (add_bootstrap(cl, errstr, errstr_size) != SF_OK)
        goto err;

    /* The I/O thread takes no signals (SIGPIPE on a closed socket must become EPIPE). */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    if (pthread_create(&cl->thread, NULL, io_thread_main, cl) != 0) {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        sf_errf(errstr, errstr_size, "cannot start the I/O thread");
        goto err;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    cl->thread_started = 1;
    return cl;

err:
    sf_client_destroy(cl);
    return NULL;
}

void sf_client_destroy(sf_client_t *cl) {
    int i;
    if (!cl)
        return;
    if (cl->thread_started) {
        event_active(cl->stop_ev, EV_READ, 0);
        pthread_join(cl->thread, NULL);
        cl->thread_started = 0;
    }
    /* The loop is gone (or never ran): everything below is single-threaded. */
    cl->stopping = 1;
    for (i = 0; i < cl->nconns; i++)
        sf_conn_free(cl->conns[i], SF_ERROR_DESTROYED);
    cl->nconns = 0;
    {
        sf_creq_t *req;
        while ((req = sf_creq_queue_pop(&cl->pending)))
            sf_creq_finish(cl, req, SF_ERROR_DESTROYED, req->target, NULL);
    }
    free(cl->conns);
    if (cl->wake_ev)
        event_free(cl->wake_ev);
    if (cl->kick_ev)
        event_free(cl->kick_ev);
    if (cl->stop_ev)
        event_free(cl->stop_ev);
    if (cl->tick_ev)
        event_free(cl->tick_ev);
    if (cl->dns)
        evdns_base_free(cl->dns, 0);
    if (cl->base)
        event_base_free(cl->base);
    if (cl->ssl_ctx)
        SSL_CTX_free(cl->ssl_ctx);
    sf_md_free(&cl->md);
    free(cl->roles);
    sf_clientconf_free(cl->conf);
    pthread_cond_destroy(&cl->cond);
    pthread_mutex_destroy(&cl->lock);
    free(cl);
}

/* ------------------------------------------------------------------------------------------
 * Requests
 * ------------------------------------------------------------------------------------------ */

int sf_client_request(sf_client_t *cl, int32_t broker_id, int16_t api_key, int16_t max_version,
                      sf_client_encode_fn enc, sf_client_response_fn cb, void *arg,
                      int timeout_ms, int flags) {
    sf_creq_t *req;
    int64_t now;
    if (!cb || broker_id < SF_CLIENT_CONTROLLER || max_version < 0)
        return SF_ERROR_INVALID;
    if (cl->stopping)
        return SF_ERROR_DESTROYED;
    if (!(req = calloc(1, sizeof(*req))))
        return SF_ERROR_NOMEM;
    now = sf_clock_mono_ms();
    req->target = broker_id;
    req->api_key = api_key;
    req->max_version = max_version;
    req->version = -1;
    req->flags = flags;
    req->deadline_ms = now + (timeout_ms < 0 ? cl->conf->request_timeout_ms : timeout_ms);
    req->md_seq = cl->md.seq;
    req->enc = enc;
    req->cb = cb;
    req->arg = arg;
    /* Routed by the I/O thread on its next turn, never inside this call, so @cb never runs
     * before sf_client_request returns. */
    sf_creq_queue_push(&cl->pending, req);
    sf_client_kick(cl);
    return SF_OK;
}

int sf_client_inflight(sf_client_t *cl, int32_t broker_id) {
    sf_conn_t *conn = sf_client_conn_find(cl, broker_id);
    sf_creq_t *req;
    int n = conn ? conn->sendq.n + conn->waitq.n : 0;
    for (req = cl->pending.head; req; req = req->next)
        if (req->target == broker_id)
            n++;
    return n;
}

int16_t sf_client_api_version(sf_client_t *cl, int32_t broker_id, int16_t api_key,
                              int16_t max_version) {
    sf_conn_t *conn = NULL;
    int i;
    if (broker_id == SF_CLIENT_CONTROLLER)
        broker_id = cl->md.controller;
    if (broker_id == SF_CLIENT_ANY_BROKER) {
        for (i = 0; i < cl->nconns && !conn; i++)
            if (cl->conns[i]->state == SF_CONN_UP && !cl->conns[i]->dead)
                conn = cl->conns[i];
    } else {
        conn = sf_client_conn_find(cl, broker_id);
    }
    if (!conn || conn->state != SF_CONN_UP)
        return -1;
    return sf_conn_api_version(conn, api_key, max_version);
}

typedef struct call {
    sf_client_encode_fn enc;
    sf_client_decode_fn dec;
    void *arg;
    int done;
    int rc;
} call_t;

static int call_enc(sf_wbuf_t *wb, int16_t version, void *arg) {
    call_t *c = arg;
    return c->enc ? c->enc(wb, version, c->arg) : SF_OK;
}

static void call_cb(sf_client_t *cl, int err, int32_t broker_id, int16_t version,
                    sf_rbuf_t *body, void *arg) {
    call_t *c = arg;
    (void)broker_id;
    if (err)
        c->rc = err;
    else
        c->rc = c->dec && body ? c->dec(body, version, c->arg) : SF_OK;
    c->done = 1;
    sf_client_signal(cl);
}

int sf_client_call(sf_client_t *cl, int32_t broker_id, int16_t api_key, int16_t max_version,
                   sf_client_encode_fn enc, sf_client_decode_fn dec, void *arg, int timeout_ms) {
    call_t c = {enc, dec, arg, 0, SF_OK};
    int rc;
    if (sf_client_in_io_thread(cl))
        return SF_ERROR_STATE; /* would wait for itself */
    sf_client_lock(cl);
    rc = sf_client_request(cl, broker_id, api_key, max_version, call_enc, call_cb, &c,
                           timeout_ms, 0);
    if (rc == SF_OK) {
        while (!c.done)
            sf_client_wait(cl, -1);
        rc = c.rc;
    }
    sf_client_unlock(cl);
    return rc;
}
