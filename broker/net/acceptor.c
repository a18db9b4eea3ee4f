/* Listeners: bind, accept, hand the socket to a worker (see acceptor.h). */
#include "acceptor.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "brokercfg.h"
#include "err.h"
#include "logging.h"
#include "tls.h"

/* After accept() fails (out of descriptors, most often), accepting pauses: first this long,
 * doubling after each failure in a row up to the maximum. The pending connection stays ready,
 * so accepting again at once would spin. */
#define SF_ACCEPTOR_BACKOFF_MIN_MS 100
#define SF_ACCEPTOR_BACKOFF_MAX_MS 5000

typedef struct sf_listener {
    sf_acceptor_t *acc;
    struct evconnlistener *lev;
    struct event *retry; /* re-enables accepting after a failed accept */
    int backoff_ms;      /* the current pause (0: the last accept worked) */
    long failures;       /* failed accepts in a row (logged once per streak) */
    long failed;         /* failed accepts in all (metrics) */
    char desc[300];      /* "PLAINTEXT://127.0.0.1:9092" */
    char name[16];
    int tls;
    int port; /* bound port */
} sf_listener_t;

struct sf_acceptor {
    struct event_base *base;
    sf_acceptor_handoff_fn fn;
    void *arg;
    SSL_CTX *ssl_ctx;
    sf_listener_t *listeners;
    size_t nlisteners;
};

void sf_acceptor_format_addr(const struct sockaddr *sa, char *buf, size_t size) {
    char ip[INET6_ADDRSTRLEN] = "?";
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip));
        snprintf(buf, size, "%s:%u", ip, ntohs(sin->sin_port));
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &sin6->sin6_addr, ip, sizeof(ip));
        snprintf(buf, size, "[%s]:%u", ip, ntohs(sin6->sin6_port));
    } else {
        snprintf(buf, size, "unknown");
    }
}

static void accept_cb(struct evconnlistener *lev, evutil_socket_t fd, struct sockaddr *sa,
                      int salen, void *arg) {
    sf_listener_t *l = arg;
    sf_acceptor_t *acc = l->acc;
    (void)lev;
    (void)salen;
    if (l->failures) {
        sf_log(SF_LOG_NOTICE, "NET", "listener %s: accepting connections again (after %ld "
               "failed attempts)", l->desc, l->failures);
        l->failures = 0;
        l->backoff_ms = 0;
    }
    if (l->tls)
        SSL_CTX_up_ref(acc->ssl_ctx);
    acc->fn(acc->arg, fd, sa, l->name, l->tls ? acc->ssl_ctx : NULL);
}

static void accept_retry_cb(evutil_socket_t fd, short what, void *arg) {
    sf_listener_t *l = arg;
    (void)fd;
    (void)what;
    if (l->lev)
        evconnlistener_enable(l->lev);
}

/* The first failure of a streak, in words an operator can act on. */
static void accept_error_log(const sf_listener_t *l, int err) {
    struct rlimit rl;
    if ((err == EMFILE || err == ENFILE) && getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        sf_log(SF_LOG_ERR, "NET", "listener %s: cannot accept connections: %s (the broker may "
               "open %llu descriptors, client connections and log files together: raise "
               "LimitNOFILE or ulimit -n); retrying every %d ms at most, no more lines until a "
               "connection is accepted", l->desc, strerror(err), (unsigned long long)rl.rlim_cur,
               SF_ACCEPTOR_BACKOFF_MAX_MS);
        return;
    }
    sf_log(SF_LOG_ERR, "NET", "listener %s: cannot accept connections: %s; retrying every %d ms "
           "at most, no more lines until a connection is accepted", l->desc, strerror(err),
           SF_ACCEPTOR_BACKOFF_MAX_MS);
}

static void accept_error_cb(struct evconnlistener *lev, void *arg) {
    sf_listener_t *l = arg;
    int err = EVUTIL_SOCKET_ERROR();
    struct timeval tv;
    l->failed++;
    if (l->failures++ == 0)
        accept_error_log(l, err);
    l->backoff_ms = l->backoff_ms == 0 ? SF_ACCEPTOR_BACKOFF_MIN_MS
                  : l->backoff_ms * 2 > SF_ACCEPTOR_BACKOFF_MAX_MS ? SF_ACCEPTOR_BACKOFF_MAX_MS
                                                                   : l->backoff_ms * 2;
    tv.tv_sec = l->backoff_ms / 1000;
    tv.tv_usec = (suseconds_t)(l->backoff_ms % 1000) * 1000;
    /* Never accept again from inside this callback: the pending connection is still there. */
    evconnlistener_disable(lev);
    if (!l->retry || evtimer_add(l->retry, &tv) < 0)
        sf_log(SF_LOG_ERR, "NET", "listener %s: cannot schedule accepting again; no more "
               "connections are accepted", l->desc);
}

static int listener_open(sf_acceptor_t *acc, sf_listener_t *l, const sf_brokercfg_listener_t *cl,
                         char *errstr, size_t errstr_size) {
    struct addrinfo hints, *res = NULL, *ai, *pick = NULL;
    char portstr[16], where[INET6_ADDRSTRLEN + 10];
    const char *host = *cl->host ? cl->host : "0.0.0.0";
    struct sockaddr_storage ss;
    socklen_t sslen = sizeof(ss);
    int fd = -1, one = 1, gai;

    sf_brokercfg_listener_str(cl, l->desc, sizeof(l->desc));
    snprintf(l->name, sizeof(l->name), "%s", cl->name);
    l->acc = acc;
    l->tls = cl->security == SF_BROKERCFG_SSL;
    snprintf(portstr, sizeof(portstr), "%d", cl->port);
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    gai = getaddrinfo(host, portstr, &hints, &res);
    if (gai != 0) {
        snprintf(errstr, errstr_size, "listener %s: cannot resolve %s: %s", l->desc, host,
                 gai_strerror(gai));
        return SF_ERR_INVALID;
    }
    /* IPv4 first, as advertised addresses are. */
    for (ai = res; ai && !pick; ai = ai->ai_next)
        if (ai->ai_family == AF_INET)
            pick = ai;
    for (ai = res; ai && !pick; ai = ai->ai_next)
        if (ai->ai_family == AF_INET6)
            pick = ai;
    if (!pick) {
        snprintf(errstr, errstr_size, "listener %s: %s has no IPv4 or IPv6 address", l->desc, host);
        freeaddrinfo(res);
        return SF_ERR_INVALID;
    }
    sf_acceptor_format_addr(pick->ai_addr, where, sizeof(where));
    fd = socket(pick->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(errstr, errstr_size, "listener %s: cannot create a socket: %s", l->desc,
                 strerror(errno));
        freeaddrinfo(res);
        return SF_ERR_IO;
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, pick->ai_addr, pick->ai_addrlen) < 0 || listen(fd, SOMAXCONN) < 0) {
        snprintf(errstr, errstr_size, "listener %s: cannot bind %s: %s", l->desc, where,
                 strerror(errno));
        close(fd);
        freeaddrinfo(res);
        return SF_ERR_IO;
    }
    freeaddrinfo(res);
    if (getsockname(fd, (struct sockaddr *)&ss, &sslen) == 0) {
        l->port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                           : ntohs(((struct sockaddr_in *)&ss)->sin_port);
        sf_acceptor_format_addr((struct sockaddr *)&ss, where, sizeof(where));
    } else {
        l->port = cl->port;
    }
    if (cl->port == 0) {
        /* Name the port the system chose in logs. */
        sf_brokercfg_listener_t bound = *cl;
        bound.port = l->port;
        sf_brokercfg_listener_str(&bound, l->desc, sizeof(l->desc));
    }
    /* backlog 0: the socket is already listening. */
    l->lev = evconnlistener_new(acc->base, accept_cb, l, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC,
                                0, fd);
    l->retry = evtimer_new(acc->base, accept_retry_cb, l);
    if (!l->lev || !l->retry) {
        snprintf(errstr, errstr_size, "listener %s: out of memory", l->desc);
        if (!l->lev)
            close(fd);
        return SF_ERR_NOMEM;
    }
    evconnlistener_set_error_cb(l->lev, accept_error_cb);
    sf_log(SF_LOG_INFO, "NET", "listening on %s (%s)", l->desc, where);
    return SF_OK;
}

static SSL_CTX *server_tls_ctx(const sf_brokercfg_t *cfg, char *errstr, size_t errstr_size) {
    return sf_tls_server_ctx_new(cfg->ssl_keystore_location, cfg->ssl_key_password,
                                 cfg->ssl_truststore_location, cfg->ssl_client_auth, errstr,
                                 errstr_size);
}

int sf_acceptor_new(struct event_base *base, const sf_brokercfg_t *cfg, sf_acceptor_handoff_fn fn,
                    void *arg, sf_acceptor_t **out, char *errstr, size_t errstr_size) {
    sf_acceptor_t *acc;
    size_t i;
    int rc = SF_ERR_NOMEM;

    *out = NULL;
    acc = calloc(1, sizeof(*acc));
    if (!acc)
        goto nomem;
    acc->base = base;
    acc->fn = fn;
    acc->arg = arg;
    acc->listeners = calloc(cfg->nlisteners ? cfg->nlisteners : 1, sizeof(*acc->listeners));
    if (!acc->listeners)
        goto nomem;
    for (i = 0; i < cfg->nlisteners; i++) {
        if (cfg->listeners[i].security == SF_BROKERCFG_SSL && !acc->ssl_ctx) {
            char tlserr[512];
            acc->ssl_ctx = server_tls_ctx(cfg, tlserr, sizeof(tlserr));
            if (!acc->ssl_ctx) {
                char desc[300];
                snprintf(errstr, errstr_size, "listener %s: %s",
                         sf_brokercfg_listener_str(&cfg->listeners[i], desc, sizeof(desc)), tlserr);
                rc = SF_ERR_INVALID;
                goto err;
            }
        }
    }
    for (i = 0; i < cfg->nlisteners; i++) {
        acc->nlisteners = i + 1;
        if ((rc = listener_open(acc, &acc->listeners[i], &cfg->listeners[i], errstr,
                                errstr_size)) != SF_OK)
            goto err;
    }
    *out = acc;
    return SF_OK;

nomem:
    snprintf(errstr, errstr_size, "out of memory setting up the listeners");
err:
    sf_acceptor_free(acc);
    return rc;
}

int sf_acceptor_port(const sf_acceptor_t *acc, size_t i) {
    if (i >= acc->nlisteners || !acc->listeners[i].lev)
        return -1;
    return acc->listeners[i].port;
}

int sf_acceptor_reload_tls(sf_acceptor_t *acc, const sf_brokercfg_t *cfg, char *errstr,
                           size_t errstr_size) {
    SSL_CTX *ctx;
    if (!acc->ssl_ctx)
        return SF_OK; /* no SSL listener */
    ctx = server_tls_ctx(cfg, errstr, errstr_size);
    if (!ctx)
        return SF_ERR_INVALID;
    /* Established connections hold their own reference through their SSL objects. */
    SSL_CTX_free(acc->ssl_ctx);
    acc->ssl_ctx = ctx;
    sf_log(SF_LOG_NOTICE, "NET", "TLS certificates reloaded from %s", cfg->ssl_keystore_location);
    return SF_OK;
}

long sf_acceptor_failures(const sf_acceptor_t *acc) {
    long n = 0;
    size_t i;
    for (i = 0; i < acc->nlisteners; i++)
        n += acc->listeners[i].failed;
    return n;
}

void sf_acceptor_stop(sf_acceptor_t *acc) {
    size_t i;
    for (i = 0; i < acc->nlisteners; i++) {
        sf_listener_t *l = &acc->listeners[i];
        if (l->lev) {
            evconnlistener_free(l->lev);
            l->lev = NULL;
            sf_log(SF_LOG_INFO, "NET", "stopped listening on %s", l->desc);
        }
        if (l->retry) {
            event_free(l->retry);
            l->retry = NULL;
        }
    }
}

void sf_acceptor_free(sf_acceptor_t *acc) {
    if (!acc)
        return;
    sf_acceptor_stop(acc);
    if (acc->ssl_ctx)
        SSL_CTX_free(acc->ssl_ctx);
    free(acc->listeners);
    free(acc);
}
