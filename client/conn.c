/* Broker connections of the client: resolve, connect (TCP or TLS), negotiate versions with
 * ApiVersions, then pipeline requests and match responses in order. Runs in the I/O thread
 * with cl->lock held; the libevent callbacks below take the lock themselves. */
#include "conn.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/util.h>
#include <openssl/err.h>
#include <openssl/x509.h>

#include "clock.h"
#include "err.h"
#include "proto.h"
#include "tls.h"

/* Bytes read or written per socket event (libevent's default is 16 KiB, too little for
 * large Produce and Fetch payloads). */
#define SF_CONN_MAX_IO (1024 * 1024)
/* Plaintext reads: at least this much per recv, at most this much. */
#define SF_CONN_READ_MIN (64 * 1024)
#define SF_CONN_READ_MAX (4 * 1024 * 1024)
/* Receive low-watermark bounds (see conn_set_lowat). */
#define SF_CONN_LOWAT_MIN (16 * 1024)
#define SF_CONN_LOWAT_MAX (1024 * 1024)
/* Encoded requests up to this size are copied into the output buffer; larger ones are handed
 * over by reference (no copy). */
#define SF_CONN_COPY_MAX 4096

/* ------------------------------------------------------------------------------------------
 * Request queues
 * ------------------------------------------------------------------------------------------ */

void sf_creq_queue_push(sf_creq_queue_t *q, sf_creq_t *req) {
    req->next = NULL;
    if (q->tail)
        q->tail->next = req;
    else
        q->head = req;
    q->tail = req;
    q->n++;
}

sf_creq_t *sf_creq_queue_pop(sf_creq_queue_t *q) {
    sf_creq_t *req = q->head;
    if (!req)
        return NULL;
    q->head = req->next;
    if (!q->head)
        q->tail = NULL;
    q->n--;
    req->next = NULL;
    return req;
}

void sf_creq_queue_append(sf_creq_queue_t *to, sf_creq_queue_t *from) {
    if (!from->head)
        return;
    if (to->tail)
        to->tail->next = from->head;
    else
        to->head = from->head;
    to->tail = from->tail;
    to->n += from->n;
    from->head = from->tail = NULL;
    from->n = 0;
}

int sf_creq_queue_take_expired(sf_creq_queue_t *q, int64_t now, sf_creq_queue_t *expired) {
    sf_creq_t **link = &q->head, *req;
    int n = 0;
    q->tail = NULL;
    while ((req = *link)) {
        if (req->deadline_ms > now) {
            q->tail = req;
            link = &req->next;
            continue;
        }
        *link = req->next;
        q->n--;
        sf_creq_queue_push(expired, req);
        n++;
    }
    return n;
}

void sf_creq_finish(sf_client_t *cl, sf_creq_t *req, int err, int32_t broker_id,
                    sf_rbuf_t *body) {
    req->cb(cl, err, broker_id, req->version, err ? NULL : body, req->arg);
    free(req);
}

/* ------------------------------------------------------------------------------------------
 * Connection life cycle
 * ------------------------------------------------------------------------------------------ */

static void conn_retry_cb(evutil_socket_t fd, short what, void *arg);
static void conn_read_cb(struct bufferevent *bev, void *arg);
static void conn_event_cb(struct bufferevent *bev, short what, void *arg);
static void conn_rd_cb(evutil_socket_t fd, short what, void *arg);
static void conn_flush(sf_conn_t *conn);

static const char *conn_name(const sf_conn_t *conn, char *buf, size_t size) {
    if (conn->id >= 0 && SF_CLIENT_BROKER_OF(conn->id) != conn->id)
        snprintf(buf, size, "group coordinator %d (%s:%d)", (int)SF_CLIENT_BROKER_OF(conn->id),
                 conn->host, conn->port);
    else if (conn->id >= 0)
        snprintf(buf, size, "broker %d (%s:%d)", (int)conn->id, conn->host, conn->port);
    else
        snprintf(buf, size, "bootstrap server %s:%d", conn->host, conn->port);
    return buf;
}

sf_conn_t *sf_conn_new(sf_client_t *cl, int32_t id, const char *host, int port) {
    sf_conn_t *conn = calloc(1, sizeof(*conn));
    sf_conn_t **conns;
    if (!conn)
        return NULL;
    conn->cl = cl;
    conn->id = id;
    conn->port = port;
    conn->next_corr = 1;
    conn->avs_version = 3;
    conn->host = strdup(host);
    conn->retry_ev = evtimer_new(cl->base, conn_retry_cb, conn);
    if (!conn->host || !conn->retry_ev)
        goto err;
    if (cl->nconns == cl->capconns) {
        int cap = cl->capconns ? cl->capconns * 2 : 8;
        conns = realloc(cl->conns, (size_t)cap * sizeof(*conns));
        if (!conns)
            goto err;
        cl->conns = conns;
        cl->capconns = cap;
    }
    cl->conns[cl->nconns++] = conn;
    return conn;
err:
    if (conn->retry_ev)
        event_free(conn->retry_ev);
    free(conn->host);
    free(conn);
    return NULL;
}

/* Drop the socket (and a pending resolution) without touching the queues. */
static void conn_drop_socket(sf_conn_t *conn) {
    if (conn->dnsreq) {
        struct evdns_getaddrinfo_request *r = conn->dnsreq;
        conn->dnsreq = NULL;
        evdns_getaddrinfo_cancel(r); /* its callback runs now with EVUTIL_EAI_CANCEL */
    }
    if (conn->rdev) {
        event_free(conn->rdev);
        conn->rdev = NULL;
    }
    free(conn->big);
    conn->big = NULL;
    if (conn->bev) {
        bufferevent_free(conn->bev);
        conn->bev = NULL;
    }
    if (conn->ai) {
        evutil_freeaddrinfo(conn->ai);
        conn->ai = conn->ai_next = NULL;
    }
    conn->state = SF_CONN_DOWN;
    conn->setup_deadline_ms = 0;
    conn->gen++;
}

/* Requests for any broker or the controller that were never sent go back to the client to be
 * routed again; the others stay. */
static void conn_requeue_unsent(sf_conn_t *conn) {
    sf_creq_queue_t keep = {0};
    sf_creq_t *req;
    int moved = 0;
    while ((req = sf_creq_queue_pop(&conn->sendq))) {
        if (req->target < 0) {
            sf_creq_queue_push(&conn->cl->pending, req);
            moved = 1;
        } else {
            sf_creq_queue_push(&keep, req);
        }
    }
    conn->sendq = keep;
    if (moved)
        sf_client_kick(conn->cl);
}

static void conn_fail_queue(sf_conn_t *conn, sf_creq_queue_t *q, int err) {
    sf_creq_t *req;
    while ((req = sf_creq_queue_pop(q)))
        sf_creq_finish(conn->cl, req, err, conn->id, NULL);
}

void sf_conn_free(sf_conn_t *conn, int err) {
    if (!conn)
        return;
    conn_drop_socket(conn);
    if (err != SF_ERROR_DESTROYED)
        conn_requeue_unsent(conn);
    conn_fail_queue(conn, &conn->waitq, err ? err : SF_ERROR_TRANSPORT);
    conn_fail_queue(conn, &conn->sendq, err ? err : SF_ERROR_TRANSPORT);
    event_free(conn->retry_ev);
    free(conn->host);
    free(conn);
}

static int conn_backoff_ms(sf_conn_t *conn) {
    const sf_clientconf_t *cc = conn->cl->conf;
    int64_t b = cc->reconnect_backoff_ms > 0 ? cc->reconnect_backoff_ms : 0;
    int i, jitter;
    for (i = 1; i < conn->failures && b > 0 && b < cc->reconnect_backoff_max_ms; i++)
        b *= 2;
    if (b > cc->reconnect_backoff_max_ms)
        b = cc->reconnect_backoff_max_ms;
    /* +-20% so that clients do not reconnect in lock step */
    jitter = (int)(b / 5);
    if (jitter > 0)
        b += (int64_t)(rand_r(&conn->cl->rng) % (2 * jitter + 1)) - jitter;
    return (int)b;
}

static void conn_schedule_retry(sf_conn_t *conn) {
    int64_t now = sf_clock_mono_ms(), wait = conn->next_connect_ms - now;
    struct timeval tv;
    if (wait < 0)
        wait = 0;
    tv.tv_sec = (time_t)(wait / 1000);
    tv.tv_usec = (suseconds_t)(wait % 1000) * 1000;
    evtimer_add(conn->retry_ev, &tv);
}

/* Close after a failure or a deliberate close: in-flight requests fail with @inflight_err. */
static void conn_close(sf_conn_t *conn, int err, int inflight_err, int count_failure,
                       const char *msg) {
    sf_client_t *cl = conn->cl;
    sf_conn_state_t prev = conn->state;
    char name[300];

    conn_drop_socket(conn);
    if (count_failure) {
        conn->failures++;
        conn->last_err = err;
        conn->next_connect_ms = sf_clock_mono_ms() + conn_backoff_ms(conn);
    }
    if (msg) {
        int level = (prev == SF_CONN_UP || conn->failures <= 1) ? SF_LOG_LEVEL_WARNING
                                                                 : SF_LOG_LEVEL_INFO;
        sf_client_log(cl, level, "%s: %s", conn_name(conn, name, sizeof(name)), msg);
    }
    conn_fail_queue(conn, &conn->waitq, inflight_err);
    conn_requeue_unsent(conn);
    sf_client_roles_broker(cl, conn->id, 0);
    sf_client_metadata_stale(cl);
    if (conn->sendq.n > 0)
        conn_schedule_retry(conn);
}

void sf_conn_fail(sf_conn_t *conn, int err, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (conn->state == SF_CONN_DOWN)
        return;
    conn_close(conn, err, err == SF_ERROR_TLS ? SF_ERROR_TLS : SF_ERROR_TRANSPORT, 1, msg);
}

void sf_conn_close_idle(sf_conn_t *conn) {
    if (conn->state == SF_CONN_DOWN || conn->waitq.n > 0 || conn->sendq.n > 0)
        return;
    conn_drop_socket(conn);
}

int sf_conn_set_addr(sf_conn_t *conn, const char *host, int port) {
    char *h;
    if (conn->port == port && strcmp(conn->host, host) == 0)
        return SF_OK;
    if (!(h = strdup(host)))
        return SF_ERR_NOMEM;
    sf_client_log(conn->cl, SF_LOG_LEVEL_INFO, "broker %d moved from %s:%d to %s:%d",
                  (int)conn->id, conn->host, conn->port, host, port);
    free(conn->host);
    conn->host = h;
    conn->port = port;
    if (conn->state != SF_CONN_DOWN)
        conn_close(conn, SF_ERROR_TRANSPORT, SF_ERROR_TRANSPORT, 0, NULL);
    conn->failures = 0;
    conn->next_connect_ms = 0;
    sf_conn_serve(conn);
    return SF_OK;
}

/* ------------------------------------------------------------------------------------------
 * Connecting
 * ------------------------------------------------------------------------------------------ */

static void conn_try_next(sf_conn_t *conn, const char *why);

static void conn_resolved(sf_conn_t *conn, int result, struct evutil_addrinfo *res) {
    if (result != 0 || !res) {
        if (res)
            evutil_freeaddrinfo(res);
        sf_conn_fail(conn, SF_ERROR_RESOLVE, "cannot resolve %s: %s", conn->host,
                     result ? evutil_gai_strerror(result) : "no address");
        return;
    }
    conn->ai = conn->ai_next = res;
    conn->state = SF_CONN_CONNECTING;
    conn_try_next(conn, "no usable address");
}

static void conn_dns_cb(int result, struct evutil_addrinfo *res, void *arg) {
    sf_conn_t *conn = arg;
    sf_client_t *cl;
    if (result == EVUTIL_EAI_CANCEL) { /* conn_drop_socket, with the lock held */
        if (res)
            evutil_freeaddrinfo(res);
        return;
    }
    if (conn->in_resolve) { /* answered inside evdns_getaddrinfo: conn_connect goes on */
        conn->dns_done = 1;
        conn->dns_err = result;
        conn->dns_ai = res;
        return;
    }
    cl = conn->cl;
    sf_client_lock(cl);
    conn->dnsreq = NULL;
    conn_resolved(conn, result, res);
    sf_client_unlock(cl);
}

static void conn_connect(sf_conn_t *conn) {
    sf_client_t *cl = conn->cl;
    struct evutil_addrinfo hints;
    struct evdns_getaddrinfo_request *r;
    char port[16];

    evtimer_del(conn->retry_ev);
    conn->state = SF_CONN_RESOLVING;
    conn->setup_deadline_ms = sf_clock_mono_ms() + cl->conf->connect_timeout_ms;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_protocol = IPPROTO_TCP;
    snprintf(port, sizeof(port), "%d", conn->port);
    conn->in_resolve = 1;
    conn->dns_done = 0;
    conn->dns_ai = NULL;
    r = evdns_getaddrinfo(cl->dns, conn->host, port, &hints, conn_dns_cb, conn);
    conn->in_resolve = 0;
    if (conn->dns_done) /* numeric address, /etc/hosts, or an immediate failure */
        conn_resolved(conn, conn->dns_err, conn->dns_ai);
    else
        conn->dnsreq = r;
}

static void conn_try_next(sf_conn_t *conn, const char *why) {
    sf_client_t *cl = conn->cl;
    const int opts = BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS;
    while (conn->ai_next) {
        struct evutil_addrinfo *a = conn->ai_next;
        struct bufferevent *bev;
        conn->ai_next = a->ai_next;
        if (cl->ssl_ctx) {
            SSL *ssl = SSL_new(cl->ssl_ctx);
            char errbuf[256];
            if (!ssl) {
                sf_conn_fail(conn, SF_ERROR_TLS, "cannot create a TLS connection: %s",
                             sf_tls_errors(errbuf, sizeof(errbuf)));
                return;
            }
            if (cl->conf->ssl_verify_hostname) {
                if (sf_tls_client_set_host(ssl, conn->host) != SF_OK) {
                    SSL_free(ssl);
                    sf_conn_fail(conn, SF_ERROR_TLS, "cannot set the TLS peer name %s",
                                 conn->host);
                    return;
                }
            }
            bev = bufferevent_openssl_socket_new(cl->base, -1, ssl, BUFFEREVENT_SSL_CONNECTING,
                                                 opts);
            if (!bev) {
                SSL_free(ssl);
                sf_conn_fail(conn, SF_ERROR_NOMEM, "cannot create a TLS connection");
                return;
            }
            /* brokers may close without a TLS close_notify */
            bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
        } else {
            bev = bufferevent_socket_new(cl->base, -1, opts);
            if (!bev) {
                sf_conn_fail(conn, SF_ERROR_NOMEM, "cannot create a connection");
                return;
            }
        }
        bufferevent_setcb(bev, conn_read_cb, NULL, conn_event_cb, conn);
        bufferevent_set_max_single_read(bev, SF_CONN_MAX_IO);
        bufferevent_set_max_single_write(bev, SF_CONN_MAX_IO);
        bufferevent_setwatermark(bev, EV_READ, 4, 0);
        if (bufferevent_socket_connect(bev, a->ai_addr, (int)a->ai_addrlen) < 0) {
            why = evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR());
            bufferevent_free(bev);
            continue;
        }
        bufferevent_enable(bev, EV_READ | EV_WRITE);
        conn->bev = bev;
        conn->lowat = 1;
        return;
    }
    sf_conn_fail(conn, SF_ERROR_TRANSPORT, "cannot connect: %s", why);
}

static void conn_retry_cb(evutil_socket_t fd, short what, void *arg) {
    sf_conn_t *conn = arg;
    sf_client_t *cl = conn->cl;
    (void)fd;
    (void)what;
    sf_client_lock(cl);
    if (!cl->stopping)
        sf_conn_serve(conn);
    sf_client_unlock(cl);
}

void sf_conn_serve(sf_conn_t *conn) {
    if (conn->cl->stopping)
        return;
    if (conn->state == SF_CONN_UP) {
        if (conn->sendq.n > 0)
            conn_flush(conn);
    } else if (conn->state == SF_CONN_DOWN && conn->sendq.n > 0) {
        if (sf_clock_mono_ms() >= conn->next_connect_ms)
            conn_connect(conn);
        else if (!evtimer_pending(conn->retry_ev, NULL))
            conn_schedule_retry(conn);
    }
}

void sf_conn_enqueue(sf_conn_t *conn, sf_creq_t *req) {
    sf_creq_queue_push(&conn->sendq, req);
    sf_conn_serve(conn);
}

/* ------------------------------------------------------------------------------------------
 * Sending
 * ------------------------------------------------------------------------------------------ */

static void wbuf_cleanup(const void *data, size_t len, void *arg) {
    (void)len;
    (void)arg;
    free((void *)data);
}

/* Encode @req (header + body, one buffer) and hand it to the socket's output buffer. */
static int conn_write_req(sf_conn_t *conn, sf_creq_t *req) {
    sf_client_t *cl = conn->cl;
    struct evbuffer *out = bufferevent_get_output(conn->bev);
    sf_proto_RequestHeader_t hdr;
    sf_wbuf_t wb;
    size_t at;
    int rc;

    sf_wbuf_init(&wb);
    at = sf_wbuf_mark_i32(&wb); /* Size, patched below */
    hdr.RequestApiKey = req->api_key;
    hdr.RequestApiVersion = req->version;
    hdr.CorrelationId = conn->next_corr;
    hdr.ClientId = sf_slice_cstr(cl->conf->client_id);
    rc = sf_proto_RequestHeader_encode(&wb, &hdr);
    if (rc == SF_OK && req->enc)
        rc = req->enc(&wb, req->version, req->arg);
    if (rc == SF_OK && wb.err)
        rc = wb.err;
    if (rc == SF_OK && wb.nsplices > 0)
        rc = SF_ERR_INVALID; /* spliced ranges are a broker-side feature */
    if (rc == SF_OK && wb.len - 4 > INT32_MAX)
        rc = SF_ERR_TOOLARGE;
    if (rc != SF_OK) {
        sf_wbuf_free(&wb);
        return rc;
    }
    sf_wbuf_patch_i32(&wb, at, (int32_t)(wb.len - 4));
    if (wb.len <= SF_CONN_COPY_MAX) {
        rc = evbuffer_add(out, wb.p, wb.len) == 0 ? SF_OK : SF_ERR_NOMEM;
        sf_wbuf_free(&wb);
    } else {
        free(wb.splices);
        if (evbuffer_add_reference(out, wb.p, wb.len, wbuf_cleanup, NULL) == 0) {
            rc = SF_OK;
        } else {
            free(wb.p);
            rc = SF_ERR_NOMEM;
        }
    }
    if (rc != SF_OK)
        return rc;
    req->corr = conn->next_corr;
    conn->next_corr = conn->next_corr == INT32_MAX ? 1 : conn->next_corr + 1;
    return SF_OK;
}

static void conn_flush(sf_conn_t *conn) {
    unsigned gen = conn->gen;
    sf_creq_t *req;
    while (conn->state == SF_CONN_UP && conn->gen == gen &&
           (req = sf_creq_queue_pop(&conn->sendq))) {
        int16_t v = sf_conn_api_version(conn, req->api_key, req->max_version);
        int rc;
        if (v < 0) {
            sf_creq_finish(conn->cl, req, SF_ERROR_UNSUPPORTED, conn->id, NULL);
            continue;
        }
        req->version = v;
        if ((rc = conn_write_req(conn, req)) != SF_OK) {
            sf_creq_finish(conn->cl, req, rc, conn->id, NULL);
            continue;
        }
        if (req->flags & SF_CLIENT_NO_RESPONSE)
            sf_creq_finish(conn->cl, req, 0, conn->id, NULL);
        else
            sf_creq_queue_push(&conn->waitq, req);
    }
}

int16_t sf_conn_api_version(const sf_conn_t *conn, int16_t api_key, int16_t max_version) {
    int16_t v;
    if (max_version < 0)
        return -1;
    if (!conn->api_known) {
        /* No ApiVersions answer: assume what this library's codec knows, capped by the
         * caller's maximum. */
        const sf_proto_spec_t *api = sf_proto_spec_get(api_key);
        return api && api->MaxVersion < max_version ? api->MaxVersion : max_version;
    }
    if (api_key < 0 || api_key >= SF_CONN_NAPI || conn->api_max[api_key] < 0)
        return -1;
    v = conn->api_max[api_key] < max_version ? conn->api_max[api_key] : max_version;
    return v < conn->api_min[api_key] ? -1 : v;
}

/* ------------------------------------------------------------------------------------------
 * ApiVersions
 * ------------------------------------------------------------------------------------------ */

static void conn_send_apiversions(sf_conn_t *conn);

static int avs_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    sf_proto_ApiVersionsRequest_t r;
    (void)arg;
    r.ClientSoftwareName = sf_slice_cstr("streamflow");
    r.ClientSoftwareVersion = sf_slice_cstr(sf_version());
    return sf_proto_ApiVersionsRequest_encode(wb, version, &r);
}

static void conn_up(sf_conn_t *conn) {
    char name[300];
    conn->state = SF_CONN_UP;
    conn->setup_deadline_ms = 0;
    conn->failures = 0;
    conn->last_err = 0;
    sf_client_log(conn->cl, SF_LOG_LEVEL_DEBUG, "%s: connected%s",
                  conn_name(conn, name, sizeof(name)),
                  conn->api_known ? ""
                                  : " (no ApiVersions answer; assuming this library's versions)");
    sf_client_roles_broker(conn->cl, conn->id, 1);
    conn_flush(conn);
}

static void avs_response(sf_client_t *cl, int err, int32_t broker_id, int16_t version,
                         sf_rbuf_t *body, void *arg) {
    sf_conn_t *conn = arg;
    sf_proto_ApiVersionsResponse_t resp;
    sf_arena_t arena;
    sf_rbuf_t peek;
    int16_t ec;
    char name[300];
    int32_t i;
    int rc;
    (void)cl;
    (void)broker_id;
    if (err)
        return; /* the connection is going down; conn_close decides what next */
    peek = *body;
    ec = sf_rbuf_i16(&peek);
    sf_arena_init(&arena, 0);
    if (ec == SF_KERR_UNSUPPORTED_VERSION) {
        /* The error body is v0 whatever we asked; it lists ApiVersions' own range. */
        int16_t max = -1;
        if (sf_proto_ApiVersionsResponse_decode(body, 0, &arena, &resp) == SF_OK)
            for (i = 0; i < resp.ApiKeysCount; i++)
                if (resp.ApiKeys[i].ApiKey == SF_PROTO_API_ApiVersions)
                    max = resp.ApiKeys[i].MaxVersion;
        sf_arena_reset(&arena);
        if (max >= 0 && max < version) {
            conn->avs_version = max;
            conn_send_apiversions(conn);
            return;
        }
        sf_client_log(conn->cl, SF_LOG_LEVEL_WARNING,
                      "%s: ApiVersions v%d refused without a usable version range",
                      conn_name(conn, name, sizeof(name)), (int)version);
        conn->api_known = 0;
        conn_up(conn);
        return;
    }
    rc = sf_proto_ApiVersionsResponse_decode(body, version, &arena, &resp);
    if (rc != SF_OK || resp.ErrorCode != 0) {
        sf_client_log(conn->cl, SF_LOG_LEVEL_WARNING, "%s: ApiVersions v%d failed: %s",
                      conn_name(conn, name, sizeof(name)), (int)version,
                      rc != SF_OK ? "malformed response"
                                  : sf_error_str(sf_client_kerr(resp.ErrorCode)));
        conn->api_known = 0;
    } else {
        for (i = 0; i < SF_CONN_NAPI; i++)
            conn->api_min[i] = conn->api_max[i] = -1;
        for (i = 0; i < resp.ApiKeysCount; i++) {
            int16_t k = resp.ApiKeys[i].ApiKey;
            if (k >= 0 && k < SF_CONN_NAPI && resp.ApiKeys[i].MaxVersion >= 0 &&
                resp.ApiKeys[i].MinVersion <= resp.ApiKeys[i].MaxVersion) {
                conn->api_min[k] = resp.ApiKeys[i].MinVersion < 0 ? 0 : resp.ApiKeys[i].MinVersion;
                conn->api_max[k] = resp.ApiKeys[i].MaxVersion;
            }
        }
        conn->api_known = 1;
    }
    sf_arena_reset(&arena);
    conn_up(conn);
}

static void conn_send_apiversions(sf_conn_t *conn) {
    sf_creq_t *req = calloc(1, sizeof(*req));
    int rc;
    if (!req) {
        sf_conn_fail(conn, SF_ERROR_NOMEM, "out of memory");
        return;
    }
    req->target = conn->id;
    req->api_key = SF_PROTO_API_ApiVersions;
    req->max_version = req->version = conn->avs_version;
    req->deadline_ms = conn->setup_deadline_ms;
    req->enc = avs_encode;
    req->cb = avs_response;
    req->arg = conn;
    if ((rc = conn_write_req(conn, req)) != SF_OK) {
        free(req);
        sf_conn_fail(conn, rc, "cannot send ApiVersions: %s", sf_error_str(rc));
        return;
    }
    sf_creq_queue_push(&conn->waitq, req);
}

static void conn_connected(sf_conn_t *conn) {
    evutil_socket_t fd = bufferevent_getfd(conn->bev);
    int one = 1;
    if (fd >= 0)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (fd >= 0 && !conn->cl->ssl_ctx) {
        conn->rdev = event_new(conn->cl->base, fd, EV_READ | EV_PERSIST, conn_rd_cb, conn);
        if (!conn->rdev || event_add(conn->rdev, NULL) < 0) {
            sf_conn_fail(conn, SF_ERROR_NOMEM, "cannot watch the connection");
            return;
        }
        bufferevent_disable(conn->bev, EV_READ);
    }
    if (conn->ai) {
        evutil_freeaddrinfo(conn->ai);
        conn->ai = conn->ai_next = NULL;
    }
    conn->state = SF_CONN_APIVERSIONS;
    conn_send_apiversions(conn);
}

/* ------------------------------------------------------------------------------------------
 * libevent callbacks
 * ------------------------------------------------------------------------------------------ */

static void conn_event_cb(struct bufferevent *bev, short what, void *arg) {
    sf_conn_t *conn = arg;
    sf_client_t *cl = conn->cl;
    int sockerr = EVUTIL_SOCKET_ERROR();
    char tls[512];
    size_t tlslen = 0;

    sf_client_lock(cl);
    if (bev != conn->bev || cl->stopping)
        goto out;
    if (what & BEV_EVENT_CONNECTED) {
        conn_connected(conn);
        goto out;
    }
    if (!(what & (BEV_EVENT_ERROR | BEV_EVENT_EOF | BEV_EVENT_TIMEOUT)))
        goto out;
    tls[0] = '\0';
    if (cl->ssl_ctx) {
        unsigned long e;
        SSL *ssl = bufferevent_openssl_get_ssl(bev);
        long vr = ssl ? SSL_get_verify_result(ssl) : X509_V_OK;
        while ((e = bufferevent_get_openssl_error(bev)) != 0 && tlslen + 2 < sizeof(tls)) {
            if (ERR_GET_LIB(e) == 0)
                continue; /* libevent's own SSL_get_error() codes carry no reason */
            if (tlslen)
                tlslen += (size_t)snprintf(tls + tlslen, sizeof(tls) - tlslen, "; ");
            if (tlslen < sizeof(tls))
                sf_tls_error_string(e, tls + tlslen, sizeof(tls) - tlslen);
            tlslen = strlen(tls);
        }
        if (tlslen && vr != X509_V_OK)
            snprintf(tls + tlslen, sizeof(tls) - tlslen, " (certificate: %s)",
                     X509_verify_cert_error_string(vr));
    }
    if (tls[0]) {
        sf_conn_fail(conn, SF_ERROR_TLS, "TLS failed: %s", tls);
    } else if (conn->state == SF_CONN_CONNECTING && conn->ai_next) {
        const char *why = evutil_socket_error_to_string(sockerr);
        bufferevent_free(conn->bev);
        conn->bev = NULL;
        conn_try_next(conn, why);
    } else if (what & BEV_EVENT_EOF) {
        /* With TLS 1.3 the server checks the client certificate after the client finished
         * its handshake: a refused certificate shows as a close (the alert may not be read)
         * while ApiVersions is in flight. */
        int tls_close = cl->ssl_ctx && (conn->state == SF_CONN_CONNECTING ||
                                         conn->state == SF_CONN_APIVERSIONS);
        sf_conn_fail(conn, tls_close ? SF_ERROR_TLS : SF_ERROR_TRANSPORT,
                     "connection closed by the broker%s",
                     !tls_close ? ""
                     : conn->state == SF_CONN_CONNECTING
                         ? " during the TLS handshake"
                         : " right after the TLS handshake (client certificate refused?)");
    } else {
        sf_conn_fail(conn, SF_ERROR_TRANSPORT, "%s%s",
                     conn->state == SF_CONN_CONNECTING ? "cannot connect: " : "",
                     evutil_socket_error_to_string(sockerr));
    }
out:
    sf_client_unlock(cl);
}

/* Plaintext: have the kernel report the socket readable only once the @missing bytes of the
 * frame being received are there (capped; the kernel lowers it to what its buffer can hold),
 * so a large Fetch response costs a few wake-ups and reads instead of one per segment. */
static void conn_set_lowat(sf_conn_t *conn, size_t missing) {
    int want = 1;
    evutil_socket_t fd;
    if (!conn->rdev || (fd = event_get_fd(conn->rdev)) < 0)
        return;
    if (missing >= SF_CONN_LOWAT_MIN)
        want = missing > SF_CONN_LOWAT_MAX ? SF_CONN_LOWAT_MAX : (int)missing;
    if (want != conn->lowat &&
        setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &want, sizeof(want)) == 0)
        conn->lowat = want;
}

/* Hand every complete response frame in the input buffer to its request. Returns the bytes
 * still missing from the next frame (at least 1), or 0 when the connection went away. */
static size_t conn_process(sf_conn_t *conn) {
    sf_client_t *cl = conn->cl;
    struct evbuffer *in = bufferevent_get_input(conn->bev);
    unsigned gen = conn->gen;
    size_t need = 4;

    for (;;) {
        size_t avail = evbuffer_get_length(in);
        uint8_t szb[4], *p;
        uint32_t size;
        sf_creq_t *req;
        sf_rbuf_t rb;
        int32_t corr;

        if (avail < 4) {
            need = 4;
            break;
        }
        evbuffer_copyout(in, szb, 4);
        size = sf_load_be32(szb);
        if (size < 4 || size > cl->frame_cap) {
            sf_conn_fail(conn, SF_ERROR_TRANSPORT,
                         "response frame of %u bytes (limit %zu)%s", size, cl->frame_cap,
                         size > cl->frame_cap && !cl->ssl_ctx && szb[0] == 0x15
                             ? ": is this a TLS listener?" : "");
            return 0;
        }
        if (avail < 4 + (size_t)size) {
            need = 4 + (size_t)size;
            break;
        }
        req = conn->waitq.head;
        if (!req) {
            sf_conn_fail(conn, SF_ERROR_TRANSPORT, "response without a request");
            return 0;
        }
        evbuffer_drain(in, 4);
        p = evbuffer_pullup(in, (ev_ssize_t)size);
        if (!p) {
            sf_conn_fail(conn, SF_ERROR_NOMEM, "out of memory for a %u-byte response", size);
            return 0;
        }
        sf_rbuf_init(&rb, p, size);
        if (sf_proto_ResponseHeader_decode(&rb, req->api_key, req->version, &corr) != SF_OK ||
            corr != req->corr) {
            sf_conn_fail(conn, SF_ERROR_TRANSPORT,
                         "response correlation id %d does not match request %d (%s v%d)",
                         (int)corr, (int)req->corr, sf_proto_api_name(req->api_key),
                         (int)req->version);
            return 0;
        }
        sf_creq_queue_pop(&conn->waitq);
        sf_creq_finish(cl, req, 0, conn->id, &rb);
        if (conn->gen != gen)
            return 0; /* closed by the callback's consequences (e.g. a broker removed) */
        evbuffer_drain(in, size);
    }
    return need - evbuffer_get_length(in);
}

/* TLS: the bufferevent read. */
static void conn_read_cb(struct bufferevent *bev, void *arg) {
    sf_conn_t *conn = arg;
    sf_client_lock(conn->cl);
    if (bev == conn->bev && !conn->cl->stopping)
        conn_process(conn);
    sf_client_unlock(conn->cl);
}

static void big_free_cb(const void *data, size_t len, void *arg) {
    (void)len;
    (void)arg;
    free((void *)data);
}

/* Plaintext: receive what the next frame needs in few large reads, then process. A frame
 * larger than SF_CONN_READ_MIN is received into a buffer of its own. */
static void conn_rd_cb(evutil_socket_t fd, short what, void *arg) {
    sf_conn_t *conn = arg;
    sf_client_t *cl = conn->cl;
    size_t missing = 4;
    unsigned gen;
    int round;
    (void)what;

    sf_client_lock(cl);
    if (!conn->bev || cl->stopping)
        goto out;
    gen = conn->gen;
    for (round = 0; round < 16; round++) {
        struct evbuffer *in = bufferevent_get_input(conn->bev);
        struct evbuffer_iovec v;
        size_t want = missing < SF_CONN_READ_MIN ? SF_CONN_READ_MIN
                    : missing > SF_CONN_READ_MAX ? SF_CONN_READ_MAX
                                                 : missing;
        ssize_t n;
        if (conn->big) {
            want = conn->big_len - conn->big_got;
            n = recv(fd, conn->big + conn->big_got, want, 0);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                missing = want;
                break;
            }
            if (n <= 0) {
                sf_conn_fail(conn, SF_ERROR_TRANSPORT, "%s",
                             n == 0 ? "connection closed by the broker" : strerror(errno));
                goto out;
            }
            conn->big_got += (size_t)n;
            if ((size_t)n < want) {
                missing = want - (size_t)n;
                break;
            }
            if (evbuffer_add_reference(in, conn->big, conn->big_len, big_free_cb, NULL) < 0) {
                sf_conn_fail(conn, SF_ERROR_NOMEM, "out of memory reading a response");
                goto out;
            }
            conn->big = NULL;
            missing = conn_process(conn);
            if (missing == 0 || conn->gen != gen)
                goto out;
            continue;
        }
        if (evbuffer_reserve_space(in, (ev_ssize_t)want, &v, 1) < 1) {
            sf_conn_fail(conn, SF_ERROR_NOMEM, "out of memory reading a response");
            goto out;
        }
        n = recv(fd, v.iov_base, v.iov_len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n <= 0) {
            sf_conn_fail(conn, SF_ERROR_TRANSPORT, "%s",
                         n == 0 ? "connection closed by the broker" : strerror(errno));
            goto out;
        }
        v.iov_len = (size_t)n;
        evbuffer_commit_space(in, &v, 1);
        missing = conn_process(conn);
        if (missing == 0 || conn->gen != gen)
            goto out;
        if (missing > SF_CONN_READ_MIN) {
            /* The rest of a large frame goes straight into its own buffer. */
            size_t have = evbuffer_get_length(in);
            if (!(conn->big = malloc(have + missing))) {
                sf_conn_fail(conn, SF_ERROR_NOMEM, "out of memory for a %zu-byte response",
                             have + missing);
                goto out;
            }
            conn->big_len = have + missing;
            conn->big_got = (size_t)evbuffer_remove(in, conn->big, have);
        }
        if ((size_t)n < want)
            break; /* the socket is drained */
    }
    /* Wake up only once the whole next frame is here. */
    conn_set_lowat(conn, missing);
out:
    sf_client_unlock(cl);
}

/* ------------------------------------------------------------------------------------------
 * Timeouts
 * ------------------------------------------------------------------------------------------ */

void sf_conn_tick(sf_conn_t *conn, int64_t now) {
    sf_creq_queue_t expired = {0};
    sf_creq_t *req;
    int unsent_err;

    if ((conn->state == SF_CONN_RESOLVING || conn->state == SF_CONN_CONNECTING ||
         conn->state == SF_CONN_APIVERSIONS) &&
        now >= conn->setup_deadline_ms) {
        sf_conn_fail(conn, SF_ERROR_TRANSPORT, "connection set-up timed out after %d ms",
                     conn->cl->conf->connect_timeout_ms);
    }

    /* Never sent: report why the connection could not be made when it is telling. */
    unsent_err = conn->last_err == SF_ERROR_TLS || conn->last_err == SF_ERROR_RESOLVE
                     ? conn->last_err : SF_ERROR_TIMED_OUT;
    sf_creq_queue_take_expired(&conn->sendq, now, &expired);
    while ((req = sf_creq_queue_pop(&expired)))
        sf_creq_finish(conn->cl, req, unsent_err, conn->id, NULL);

    /* In flight: the broker is stuck or the response is lost; Kafka closes the connection. */
    if (sf_creq_queue_take_expired(&conn->waitq, now, &expired) > 0) {
        unsigned gen = conn->gen;
        int n = expired.n;
        while ((req = sf_creq_queue_pop(&expired)))
            sf_creq_finish(conn->cl, req, SF_ERROR_TIMED_OUT, conn->id, NULL);
        if (conn->gen == gen && conn->state != SF_CONN_DOWN)
            sf_conn_fail(conn, SF_ERROR_TRANSPORT, "%d request%s timed out", n,
                         n == 1 ? "" : "s");
    }
}

void sf_conn_retire(sf_conn_t *conn) {
    sf_conn_state_t prev = conn->state;
    char name[300];
    sf_client_log(conn->cl, SF_LOG_LEVEL_INFO, "%s: no longer in the cluster metadata",
                  conn_name(conn, name, sizeof(name)));
    conn_drop_socket(conn);
    evtimer_del(conn->retry_ev);
    conn->dead = 1;
    conn_fail_queue(conn, &conn->waitq, SF_ERROR_TRANSPORT);
    conn_requeue_unsent(conn);
    conn_fail_queue(conn, &conn->sendq, SF_ERROR_TRANSPORT);
    if (prev != SF_CONN_DOWN)
        sf_client_roles_broker(conn->cl, conn->id, 0);
    sf_client_kick(conn->cl); /* reaps it */
}
