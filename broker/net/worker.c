/* A network worker (see worker.h): a thread, its event loop, mailbox, connections and
 * purgatory. */
#include "config.h"

#include "worker.h"

#include <assert.h>
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "err.h"
#include "logging.h"
#include "purgatory.h"

struct sf_worker {
    int index;
    const struct sf_brokercfg *cfg;
    struct sf_netlimit *nl;
    sf_server_dispatch_fn fn;
    void *fn_arg;
    pthread_t tid;
    /* Made on the worker's own thread before sf_worker_start returns: */
    struct event_base *base;
    sf_mailbox_t *mb;
    sf_server_t *srv;
    sf_purgatory_t *purgatory;
    /* The start handshake. */
    pthread_mutex_t mu;
    pthread_cond_t cond;
    int started; /* 1 ready, -1 failed */
};

/* A socket on its way from the acceptor to the worker. */
typedef struct adopt_mail {
    sf_mail_t mail;
    sf_worker_t *w;
    int fd;
    struct sockaddr_storage sa;
    const char *listener;
    SSL_CTX *tls_ctx;
} adopt_mail_t;

typedef struct quiesce_mail {
    sf_mail_t mail;
    sf_worker_t *w;
    sf_mailbox_t *reply;
    sf_mailbox_fn done;
    void *arg;
} quiesce_mail_t;

static __thread sf_worker_t *self;

static void worker_teardown(sf_worker_t *w) {
    sf_purgatory_free(w->purgatory);
    w->purgatory = NULL;
    sf_server_free(w->srv);
    w->srv = NULL;
    sf_mailbox_free(w->mb); /* runs what is still queued */
    w->mb = NULL;
    if (w->base)
        event_base_free(w->base);
    w->base = NULL;
}

static int worker_setup(sf_worker_t *w) {
    if (!(w->base = event_base_new()) || !(w->mb = sf_mailbox_new(w->base, pthread_self())) ||
        !(w->purgatory = sf_purgatory_new(w->base)))
        return SF_ERR_NOMEM;
    return sf_server_new(w->base, w->cfg, w->nl, w->fn, w->fn_arg, w->mb, &w->srv);
}

static void *worker_main(void *arg) {
    sf_worker_t *w = arg;
    int rc;
    self = w;
    rc = worker_setup(w);
    pthread_mutex_lock(&w->mu);
    w->started = rc == SF_OK ? 1 : -1;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->mu);
    if (rc == SF_OK)
        event_base_loop(w->base, EVLOOP_NO_EXIT_ON_EMPTY);
    /* Stopped (sf_worker_stop): the mailbox is drained in the teardown. */
    worker_teardown(w);
    return NULL;
}

int sf_worker_start(int index, const struct sf_brokercfg *cfg, struct sf_netlimit *nl,
                    sf_server_dispatch_fn fn, void *arg, sf_worker_t **out) {
    sf_worker_t *w = calloc(1, sizeof(*w));
    char name[32];
    int rc;
    *out = NULL;
    if (!w)
        return SF_ERR_NOMEM;
    w->index = index;
    w->cfg = cfg;
    w->nl = nl;
    w->fn = fn;
    w->fn_arg = arg;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cond, NULL);
    if (pthread_create(&w->tid, NULL, worker_main, w) != 0) {
        free(w);
        return SF_ERR_IO;
    }
    snprintf(name, sizeof(name), "net/%d", index);
    name[15] = '\0'; /* the kernel's limit */
    pthread_setname_np(w->tid, name);
    pthread_mutex_lock(&w->mu);
    while (!w->started)
        pthread_cond_wait(&w->cond, &w->mu);
    pthread_mutex_unlock(&w->mu);
    if (w->started < 0) {
        pthread_join(w->tid, NULL); /* the thread tore down what it made */
        rc = SF_ERR_NOMEM;
        free(w);
        return rc;
    }
    *out = w;
    return SF_OK;
}

static void adopt_cb(void *arg) {
    adopt_mail_t *am = arg;
    /* On failure the socket is closed and the context released there. */
    sf_server_adopt(am->w->srv, am->fd, (const struct sockaddr *)&am->sa, am->listener,
                    am->tls_ctx);
    free(am);
}

void sf_worker_adopt(sf_worker_t *w, int fd, const struct sockaddr *sa, const char *listener,
                     SSL_CTX *tls_ctx) {
    adopt_mail_t *am = calloc(1, sizeof(*am));
    if (!am) {
        sf_log(SF_LOG_WARNING, "NET", "out of memory for a new connection; closing it");
        close(fd);
        if (tls_ctx)
            SSL_CTX_free(tls_ctx);
        return;
    }
    am->w = w;
    am->fd = fd;
    memcpy(&am->sa, sa, sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                  : sizeof(struct sockaddr_in));
    am->listener = listener;
    am->tls_ctx = tls_ctx;
    am->mail.fn = adopt_cb;
    am->mail.arg = am;
    sf_mailbox_put(w->mb, &am->mail);
}

int sf_worker_post(sf_worker_t *w, sf_mailbox_fn fn, void *arg) {
    return sf_mailbox_post(w->mb, fn, arg);
}

sf_worker_t *sf_worker_self(void) {
    return self;
}

int sf_worker_index(const sf_worker_t *w) {
    return w->index;
}

sf_purgatory_t *sf_worker_purgatory(sf_worker_t *w) {
    assert(self == w);
    return w->purgatory;
}

void sf_worker_stats(const sf_worker_t *w, double *cpu_seconds, size_t *parked) {
    clockid_t clock;
    struct timespec ts;
    *cpu_seconds = pthread_getcpuclockid(w->tid, &clock) == 0 && clock_gettime(clock, &ts) == 0
                       ? (double)ts.tv_sec + (double)ts.tv_nsec / 1e9
                       : 0;
    *parked = sf_purgatory_parked(w->purgatory);
}

void sf_worker_notify(sf_worker_t *w, sf_pkey_t key) {
    sf_purgatory_notify(w->purgatory, key);
}

static void quiesce_cb(void *arg) {
    quiesce_mail_t *qm = arg;
    sf_worker_t *w = qm->w;
    sf_server_quiesce(w->srv);
    sf_purgatory_close(w->purgatory); /* answers the parked requests */
    qm->mail.fn = qm->done;
    qm->mail.arg = qm->arg;
    qm->mail.heap = 1; /* freed after @done ran */
    sf_mailbox_put(qm->reply, &qm->mail);
}

void sf_worker_quiesce(sf_worker_t *w, sf_mailbox_t *reply, sf_mailbox_fn done, void *arg) {
    quiesce_mail_t *qm = calloc(1, sizeof(*qm));
    if (!qm) {
        /* Without memory, skip straight to the caller's next step. */
        done(arg);
        return;
    }
    qm->w = w;
    qm->reply = reply;
    qm->done = done;
    qm->arg = arg;
    qm->mail.fn = quiesce_cb;
    qm->mail.arg = qm;
    sf_mailbox_put(w->mb, &qm->mail);
}

static void stop_cb(void *arg) {
    sf_worker_t *w = arg;
    event_base_loopbreak(w->base);
}

void sf_worker_stop(sf_worker_t *w) {
    if (!w)
        return;
    if (sf_mailbox_post(w->mb, stop_cb, w) != 0) {
        /* No memory for the mail: break the loop directly (thread-safe in libevent). */
        event_base_loopbreak(w->base);
    }
    pthread_join(w->tid, NULL);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cond);
    free(w);
}
