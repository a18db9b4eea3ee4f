/* Client core internals shared by client.c, conn.c and metadata.c: the client object, the
 * request queue and broker connections. Not installed; everything here runs with cl->lock
 * held, and everything touching libevent runs in the I/O thread. */
#ifndef SF_CONN_H
#define SF_CONN_H

#include <pthread.h>
#include <stdint.h>

#include <event2/util.h>
#include <openssl/ssl.h>

#include "client.h"
#include "clientconf.h"
#include "metadata.h"

struct bufferevent;
struct event;
struct evdns_base;
struct evdns_getaddrinfo_request;

/* API keys below this bound get a slot in a connection's negotiated version table. */
#define SF_CONN_NAPI 128

/* Interval of the timer that checks request timeouts, connection set-up deadlines and
 * metadata refreshes. */
#define SF_CLIENT_TICK_MS 100

/* One request, queued on the client (not routed yet), on a connection (not sent yet) or in
 * flight on a connection. */
typedef struct sf_creq {
    struct sf_creq *next;
    int32_t target; /* broker id, SF_CLIENT_ANY_BROKER or SF_CLIENT_CONTROLLER */
    int16_t api_key, max_version, version;
    int32_t corr;
    int flags;
    int64_t deadline_ms;
    unsigned md_seq; /* cl->md.seq when queued */
    sf_client_encode_fn enc;
    sf_client_response_fn cb;
    void *arg;
} sf_creq_t;

/* A FIFO of requests. */
typedef struct sf_creq_queue {
    sf_creq_t *head, *tail;
    int n;
} sf_creq_queue_t;

void sf_creq_queue_push(sf_creq_queue_t *q, sf_creq_t *req);
/* Remove and return the first request, or NULL. */
sf_creq_t *sf_creq_queue_pop(sf_creq_queue_t *q);
/* Move every request of @from to the end of @to. */
void sf_creq_queue_append(sf_creq_queue_t *to, sf_creq_queue_t *from);
/* Move the requests of @q whose deadline is <= @now to the end of @expired, keeping the
 * order of both. Returns how many moved. */
int sf_creq_queue_take_expired(sf_creq_queue_t *q, int64_t now, sf_creq_queue_t *expired);

/* Run a request's callback once (lock held, I/O thread) and free it. */
void sf_creq_finish(sf_client_t *cl, sf_creq_t *req, int err, int32_t broker_id,
                    sf_rbuf_t *body);

/* Connection states. */
typedef enum sf_conn_state {
    SF_CONN_DOWN = 0,    /* no socket; reconnects when it has requests and the backoff passed */
    SF_CONN_RESOLVING,   /* waiting for the resolver */
    SF_CONN_CONNECTING,  /* TCP connect (and TLS handshake) in progress */
    SF_CONN_APIVERSIONS, /* connected; ApiVersions in flight */
    SF_CONN_UP           /* usable: queued requests are sent */
} sf_conn_state_t;

typedef struct sf_conn {
    sf_client_t *cl;
    int32_t id;         /* broker id, -1 for a bootstrap server not matched to a broker yet */
    int bootstrap;      /* created from bootstrap.servers */
    char *host;         /* owned */
    int port;
    sf_conn_state_t state;
    unsigned gen;       /* incremented on every close: callbacks notice the socket went */
    struct bufferevent *bev;
    struct event *retry_ev; /* reconnect after the backoff */
    struct evdns_getaddrinfo_request *dnsreq;
    struct evutil_addrinfo *ai, *ai_next; /* resolved addresses, the next one to try */
    int in_resolve;     /* inside evdns_getaddrinfo (its callback may run synchronously) */
    int dns_err;        /* result handed to the resolver callback while in_resolve */
    struct evutil_addrinfo *dns_ai;
    int dns_done;

    sf_creq_queue_t sendq; /* queued, not sent yet */
    sf_creq_queue_t waitq; /* sent, waiting for the response (in correlation-id order) */
    int32_t next_corr;

    /* ApiVersions: the version to send (3 first, lower after UNSUPPORTED_VERSION), whether
     * the broker answered (api_known), and the ranges it advertised (-1: unsupported). */
    int16_t avs_version;
    int api_known;
    int16_t api_min[SF_CONN_NAPI], api_max[SF_CONN_NAPI];

    int64_t setup_deadline_ms; /* while RESOLVING/CONNECTING/APIVERSIONS */
    int64_t next_connect_ms;   /* earliest reconnect */
    int failures;              /* consecutive failed attempts (backoff exponent) */
    int last_err;              /* error of the last failed attempt, 0 after a success */
    int dead;                  /* retired (broker left the metadata): freed by the client */
    /* Plaintext connections read the socket themselves (libevent's bufferevent reads at
     * most 4 KiB per call): rdev reads into the bufferevent's input buffer. */
    struct event *rdev;
    int lowat;                 /* SO_RCVLOWAT in force (1: the default) */
    /* A large frame received straight into its own buffer (header included), then handed
     * to the input buffer by reference: no copy to make it contiguous. */
    uint8_t *big;
    size_t big_len, big_got;
} sf_conn_t;

struct sf_client {
    sf_clientconf_t *conf;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_t thread;
    int thread_started;

    struct event_base *base;
    struct evdns_base *dns;
    struct event *wake_ev;  /* sf_client_wake: roles' on_wake */
    struct event *kick_ev;  /* internal: route queued requests, flush connections */
    struct event *stop_ev;  /* sf_client_destroy */
    struct event *tick_ev;  /* SF_CLIENT_TICK_MS timer */
    int kicked;             /* kick_ev is active */
    SSL_CTX *ssl_ctx;       /* security.protocol=SSL */

    sf_client_role_t *roles;
    int nroles;

    sf_conn_t **conns;
    int nconns, capconns;
    sf_creq_queue_t pending; /* requests not routed to a connection yet */

    int stopping;
    size_t frame_cap;       /* largest response frame accepted */
    unsigned rng;           /* jitter */

    sf_md_t md;
};

/* --- connections (conn.c) --- */

/* A new DOWN connection for broker @id (-1: bootstrap) at @host:@port, added to cl->conns.
 * NULL when out of memory. */
sf_conn_t *sf_conn_new(sf_client_t *cl, int32_t id, const char *host, int port);

/* Close everything and free @conn (after removing it from cl->conns). Queued and in-flight
 * requests get @err (unless 0: then they must be empty already). */
void sf_conn_free(sf_conn_t *conn, int err);

/* Queue @req for sending (takes ownership), connecting if needed. */
void sf_conn_enqueue(sf_conn_t *conn, sf_creq_t *req);

/* Send what is queued if the connection is up; connect if it is down, has requests and the
 * backoff has passed. */
void sf_conn_serve(sf_conn_t *conn);

/* Close the connection after a failure: in-flight requests fail with SF_ERROR_TRANSPORT (or
 * @err when it is SF_ERROR_TLS), queued ones stay for the reconnect (those for any broker or
 * the controller go back to the client to be routed again). @err is what the attempt failed
 * with; @fmt describes why, for the log. */
void sf_conn_fail(sf_conn_t *conn, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Retire @conn (its broker left the metadata): in-flight and queued requests for it fail
 * with SF_ERROR_TRANSPORT, those for any broker are routed again; the client frees it
 * later (never inside its own callbacks). */
void sf_conn_retire(sf_conn_t *conn);

/* Close an idle connection quietly (no failure, no backoff). */
void sf_conn_close_idle(sf_conn_t *conn);

/* Move @conn to @host:@port (a broker's advertised address changed): closes it if open. */
int sf_conn_set_addr(sf_conn_t *conn, const char *host, int port);

/* Periodic checks: request timeouts and the set-up deadline. */
void sf_conn_tick(sf_conn_t *conn, int64_t now);

/* The version of @api_key to send on @conn, capped at @max_version; -1 when the broker
 * does not support any version up to @max_version. */
int16_t sf_conn_api_version(const sf_conn_t *conn, int16_t api_key, int16_t max_version);

/* --- client internals (client.c) --- */

/* Schedule the internal kick (routing queued requests, flushing connections). */
void sf_client_kick(sf_client_t *cl);
/* Roles' hooks. */
void sf_client_roles_broker(sf_client_t *cl, int32_t broker_id, int up);
void sf_client_roles_metadata(sf_client_t *cl);
/* Route every request of cl->pending that can be routed now. */
void sf_client_route_pending(sf_client_t *cl);
/* The connection for broker @id, or NULL. */
sf_conn_t *sf_client_conn_find(sf_client_t *cl, int32_t id);
/* Remove @conn from cl->conns (does not free it). */
void sf_client_conn_remove(sf_client_t *cl, sf_conn_t *conn);
/* 1 when called in the client's I/O thread. */
int sf_client_in_io_thread(sf_client_t *cl);

#endif
