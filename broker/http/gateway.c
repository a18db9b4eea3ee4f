/* The HTTP gateway (see gateway.h): one thread per lane, a job queue each, and the broker's
 * own admin client, producer and HTTP consumers. */
#include "config.h"

#include "gateway.h"

#include <event2/event.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker.h"
#include "clock.h"
#include "httpd.h"
#include "logging.h"

#define MAX_JOBS 512
#define MAX_BYTES (64 * 1024 * 1024)
/* How long an admin operation may take before the request is answered with a timeout. */
#define ADMIN_TIMEOUT_MS 15000
/* While records are in flight the produce thread looks for new jobs this often. */
#define PRODUCE_POLL_MS 1
/* The most consumer lanes at once, and how often closed ones are reaped. */
#define MAX_CONSUMERS 256
#define REAP_INTERVAL_MS 1000
/* While draining, how often the lanes are looked at. */
#define DRAIN_CHECK_MS 20

typedef enum { LANE_ADMIN, LANE_PRODUCE, LANE_CONSUMER } lane_kind_t;

typedef struct sf_gw_lane lane_t;
struct sf_gw_lane {
    sf_gw_t *gw;
    lane_kind_t kind;
    pthread_t thread;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    sf_gw_job_t *head, *tail; /* queued, not taken yet */
    size_t njobs, bytes;      /* queued or running */
    atomic_int stopping;
    atomic_int finished;      /* the thread is done: the lane can be joined and freed */
    sf_conf_t *conf;          /* the consumer's configuration */
    void *client; /* sf_admin_t, sf_producer_t or sf_consumer_t; NULL until first used */
    lane_t *next; /* in the gateway's consumer lanes (the loop's) */
};

struct sf_gw {
    struct sf_broker *b;
    sf_mailbox_t *mb;
    lane_t admin, produce;
    lane_t *consumers; /* open or closing */
    int nconsumers;
    struct event *reap_ev;
    /* Draining (sf_gw_drain): lanes are no longer reaped, and @drained runs once. */
    int draining;
    int64_t drain_deadline_ms;
    struct event *drain_ev;
    void (*drained)(void *);
    void *drained_arg;
};

/* ---- answers ---- */

int sf_gw_status_of(int err) {
    switch (err) {
    case SF_OK:
        return 200;
    case SF_ERROR_NOTFOUND:
    case 3:  /* UNKNOWN_TOPIC_OR_PARTITION */
    case 69: /* GROUP_ID_NOT_FOUND */
        return 404;
    case SF_ERROR_INVALID:
    case SF_ERROR_TOOLARGE:
    case 10: /* MESSAGE_TOO_LARGE */
    case 17: /* INVALID_TOPIC_EXCEPTION */
    case 37: /* INVALID_PARTITIONS */
    case 38: /* INVALID_REPLICATION_FACTOR */
    case 39: /* INVALID_REPLICA_ASSIGNMENT */
    case 40: /* INVALID_CONFIG */
    case 42: /* INVALID_REQUEST */
    case 87: /* INVALID_RECORD */
        return 400;
    case SF_ERROR_EXISTS:
    case 36: /* TOPIC_ALREADY_EXISTS */
    case 68: /* NON_EMPTY_GROUP */
        return 409;
    case SF_ERROR_QUEUE_FULL:
    case 89: /* THROTTLING_QUOTA_EXCEEDED */
        return 429;
    case SF_ERROR_TIMED_OUT:
    case 7: /* REQUEST_TIMED_OUT */
        return 504;
    default:
        return sf_error_retriable(err) ? 503 : 500;
    }
}

void sf_gw_fail(sf_gw_job_t *job, int status, const char *kafka_error, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    free(job->body);
    job->status = status;
    job->body = sf_httpd_error_body(status, kafka_error, msg);
}

void sf_gw_fail_err(sf_gw_job_t *job, int err, const char *detail) {
    sf_gw_fail(job, sf_gw_status_of(err), sf_error_name(err), "%s%s%s", sf_error_str(err),
               detail && *detail ? ": " : "", detail ? detail : "");
}

sf_gw_job_t *sf_gw_job_new(struct evhttp_request *req) {
    sf_gw_job_t *job = calloc(1, sizeof(*job));
    if (job)
        job->req = req;
    return job;
}

void sf_gw_job_free(sf_gw_job_t *job) {
    if (!job)
        return;
    if (job->free_arg)
        job->free_arg(job->arg);
    free(job->records);
    free(job->body);
    free(job);
}

void sf_gw_finish(sf_gw_job_t *job) {
    char *body = job->body;
    job->body = NULL;
    sf_httpd_reply(job->req, job->status ? job->status : 500, body,
                   job->ctype ? job->ctype : "application/json");
    sf_gw_job_free(job);
}

/* On the loop: a job its lane is done with. */
static void job_done(void *arg) {
    sf_gw_job_t *job = arg;
    if (job->done)
        job->done(job);
    else
        sf_gw_finish(job);
}

/* On the lane's thread: hand @job back to the loop and release its room in the lane. */
static void job_return(lane_t *l, sf_gw_job_t *job) {
    pthread_mutex_lock(&l->mu);
    l->njobs--;
    l->bytes -= job->bytes;
    pthread_mutex_unlock(&l->mu);
    job->mail.fn = job_done;
    job->mail.arg = job;
    job->mail.heap = 0;
    sf_mailbox_put(l->gw->mb, &job->mail);
}

/* ---- the clients ---- */

/* The lane's client, made on first use; NULL with @errstr set when it cannot be. */
static void *lane_client(lane_t *l, char *errstr, size_t errstr_size) {
    static const char *const produce_conf[][2] = {
        {"linger.ms", "0"},           {"request.timeout.ms", "15000"},
        {"delivery.timeout.ms", "30000"}, {"max.block.ms", "15000"},
        {"acks", "all"},
    };
    sf_conf_t *conf;
    size_t i;
    int ok = 1;
    if (l->client)
        return l->client;
    if (l->kind == LANE_CONSUMER)
        return l->client = sf_consumer_new(l->conf, errstr, errstr_size);
    conf = sf_broker_client_conf(l->gw->b, l->kind == LANE_ADMIN ? "http-admin" : "http-produce",
                                 "HTTP", errstr, errstr_size);
    if (!conf)
        return NULL;
    for (i = 0; ok && l->kind == LANE_PRODUCE && i < sizeof(produce_conf) / sizeof(*produce_conf);
         i++)
        ok = sf_conf_set(conf, produce_conf[i][0], produce_conf[i][1], errstr, errstr_size) == 0;
    if (ok && l->kind == LANE_ADMIN)
        l->client = sf_admin_new(conf, errstr, errstr_size);
    else if (ok)
        l->client = sf_producer_new(conf, errstr, errstr_size);
    sf_conf_destroy(conf);
    return l->client;
}

static void lane_client_free(lane_t *l) {
    if (!l->client)
        return;
    if (l->kind == LANE_ADMIN) {
        sf_admin_destroy(l->client);
    } else if (l->kind == LANE_CONSUMER) {
        sf_consumer_destroy(l->client);
    } else {
        sf_producer_flush(l->client, 0);
        sf_producer_destroy(l->client);
    }
    l->client = NULL;
}

/* ---- the lanes ---- */

/* The next queued job; waits for one unless @wait is 0. NULL when there is none or the lane
 * is stopping (with its queue empty). */
static sf_gw_job_t *lane_take(lane_t *l, int wait) {
    sf_gw_job_t *job;
    pthread_mutex_lock(&l->mu);
    while (wait && !l->head && !l->stopping)
        pthread_cond_wait(&l->cv, &l->mu);
    if ((job = l->head) && !(l->head = job->next))
        l->tail = NULL;
    pthread_mutex_unlock(&l->mu);
    return job;
}

/* The admin and consumer lanes: one job at a time. */
static void *serial_main(void *arg) {
    lane_t *l = arg;
    sf_gw_job_t *job;
    char errstr[256];
    void *client;
    while ((job = lane_take(l, 1))) {
        if (!(client = lane_client(l, errstr, sizeof(errstr))))
            sf_gw_fail(job, 503, NULL, "no client: %s", errstr);
        else if (l->kind == LANE_ADMIN)
            job->run(job, client);
        else
            job->consume(job, client);
        job_return(l, job);
    }
    lane_client_free(l);
    atomic_store(&l->finished, 1);
    return NULL;
}

/* One record of @job has its outcome; the job is done when all have. */
static void record_done(lane_t *l, sf_gw_job_t *job) {
    if (--job->pending == 0)
        job_return(l, job);
}

static void on_delivery(const sf_delivery_t *d, void *opaque) {
    sf_gw_record_t *r = opaque;
    r->err = d->err;
    r->partition = d->partition;
    r->offset = d->offset;
    r->timestamp = d->timestamp;
    record_done(r->job->lane, r->job);
}

/* Send every record of @job; it is done when each one has its outcome. */
static void produce_job(lane_t *l, sf_producer_t *p, sf_gw_job_t *job) {
    size_t i;
    job->pending = job->nrecords + 1;
    for (i = 0; i < job->nrecords; i++) {
        sf_gw_record_t *r = &job->records[i];
        r->job = job;
        r->partition = r->rec.partition;
        r->offset = -1;
        if ((r->err = sf_producer_send(p, &r->rec, on_delivery, r)) != SF_OK)
            record_done(l, job);
    }
    record_done(l, job);
}

int sf_gw_stopping(const sf_gw_job_t *job) {
    return atomic_load(&job->lane->stopping);
}

/* Jobs are taken while earlier ones are in flight, so concurrent HTTP producers share the
 * producer's batches. */
static void *produce_main(void *arg) {
    lane_t *l = arg;
    sf_gw_job_t *job;
    sf_producer_t *p = NULL;
    char errstr[256];
    int busy;
    for (;;) {
        busy = p && sf_producer_outstanding(p) > 0;
        if ((job = lane_take(l, !busy))) {
            if ((p = lane_client(l, errstr, sizeof(errstr)))) {
                produce_job(l, p, job);
                sf_producer_poll(p, 0);
            } else {
                sf_gw_fail(job, 503, NULL, "no producer: %s", errstr);
                job_return(l, job);
            }
        } else if (!busy) {
            break;
        } else if (atomic_load(&l->stopping)) {
            sf_producer_flush(p, ADMIN_TIMEOUT_MS / 3);
            break;
        } else {
            sf_producer_poll(p, PRODUCE_POLL_MS);
        }
    }
    lane_client_free(l); /* the records still in flight fail, and their jobs return */
    atomic_store(&l->finished, 1);
    return NULL;
}

/* ---- the gateway ---- */

sf_gw_lane_t *sf_gw_admin(sf_gw_t *gw) {
    return &gw->admin;
}

sf_gw_lane_t *sf_gw_producer(sf_gw_t *gw) {
    return &gw->produce;
}

int sf_gw_post(sf_gw_t *gw, void (*fn)(void *), void *arg) {
    return sf_mailbox_post(gw->mb, fn, arg);
}

void sf_gw_submit(sf_gw_lane_t *l, sf_gw_job_t *job) {
    int refuse = 0;
    job->gw = l->gw;
    job->lane = l;
    pthread_mutex_lock(&l->mu);
    if (atomic_load(&l->stopping))
        refuse = 503;
    else if (l->njobs >= MAX_JOBS || l->bytes + job->bytes > MAX_BYTES)
        refuse = 429;
    if (!refuse) {
        job->next = NULL;
        if (l->tail)
            l->tail->next = job;
        else
            l->head = job;
        l->tail = job;
        l->njobs++;
        l->bytes += job->bytes;
        pthread_cond_signal(&l->cv);
    }
    pthread_mutex_unlock(&l->mu);
    if (!refuse)
        return;
    if (refuse == 429)
        sf_gw_fail(job, 429, "THROTTLING_QUOTA_EXCEEDED",
                   "too many HTTP requests in progress; retry later");
    else
        sf_gw_fail(job, 503, "BROKER_NOT_AVAILABLE", "the broker is shutting down");
    job_done(job);
}

static int lane_start(sf_gw_t *gw, lane_t *l, lane_kind_t kind) {
    l->gw = gw;
    l->kind = kind;
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv, NULL);
    atomic_init(&l->stopping, 0);
    atomic_init(&l->finished, 0);
    l->started =
        pthread_create(&l->thread, NULL, kind == LANE_PRODUCE ? produce_main : serial_main, l) == 0;
    return l->started ? 0 : -1;
}

/* Tell @l to stop and answer its queued jobs with 503. On the loop. */
static void lane_stop(lane_t *l) {
    sf_gw_job_t *job, *queued;
    pthread_mutex_lock(&l->mu);
    atomic_store(&l->stopping, 1);
    queued = l->head;
    l->head = l->tail = NULL;
    pthread_cond_signal(&l->cv);
    pthread_mutex_unlock(&l->mu);
    while ((job = queued)) {
        queued = job->next;
        pthread_mutex_lock(&l->mu);
        l->njobs--;
        l->bytes -= job->bytes;
        pthread_mutex_unlock(&l->mu);
        sf_gw_fail(job, 503, "BROKER_NOT_AVAILABLE", "this HTTP client is closing");
        job_done(job);
    }
}

/* Wait for @l's thread (stopped). */
static void lane_join(lane_t *l) {
    if (l->started)
        pthread_join(l->thread, NULL);
    l->started = 0;
}

/* Release what the joined lane @l holds. */
static void lane_release(lane_t *l) {
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cv);
    if (l->conf)
        sf_conf_destroy(l->conf);
}

sf_gw_lane_t *sf_gw_consumer_new(sf_gw_t *gw, const sf_config_kv_t *kvs, size_t n,
                                 int *status, char *errstr, size_t errstr_size) {
    lane_t *l;
    size_t i;
    *status = 503;
    if (gw->draining) {
        snprintf(errstr, errstr_size, "the broker is shutting down");
        return NULL;
    }
    *status = 429;
    if (gw->nconsumers >= MAX_CONSUMERS) {
        snprintf(errstr, errstr_size, "this broker serves %d HTTP consumers already",
                 MAX_CONSUMERS);
        return NULL;
    }
    *status = 503;
    if (!(l = calloc(1, sizeof(*l)))) {
        snprintf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    if (!(l->conf = sf_broker_client_conf(gw->b, "http-consumer", "HTTP", errstr, errstr_size))) {
        free(l);
        return NULL;
    }
    for (i = 0; i < n; i++) {
        if (sf_conf_set(l->conf, kvs[i].name, kvs[i].value, errstr, errstr_size) != 0) {
            *status = 400;
            sf_conf_destroy(l->conf);
            free(l);
            return NULL;
        }
    }
    if (lane_start(gw, l, LANE_CONSUMER) != 0) {
        snprintf(errstr, errstr_size, "cannot start a thread for the consumer");
        lane_release(l);
        free(l);
        return NULL;
    }
    l->next = gw->consumers;
    gw->consumers = l;
    gw->nconsumers++;
    return l;
}

void sf_gw_consumer_close(sf_gw_lane_t *l) {
    lane_stop(l);
}

/* Every REAP_INTERVAL_MS: free the consumer lanes whose threads are done. */
static void reap_cb(evutil_socket_t fd, short what, void *arg) {
    sf_gw_t *gw = arg;
    lane_t **pp = &gw->consumers, *l;
    (void)fd;
    (void)what;
    while (!gw->draining && (l = *pp)) { /* draining: the consumers still point at theirs */
        if (!atomic_load(&l->finished)) {
            pp = &l->next;
            continue;
        }
        *pp = l->next;
        gw->nconsumers--;
        lane_join(l);
        lane_release(l);
        free(l);
    }
}

static int lane_finished(const lane_t *l) {
    return !l->started || atomic_load(&l->finished);
}

static void drain_cb(evutil_socket_t fd, short what, void *arg) {
    sf_gw_t *gw = arg;
    const lane_t *l;
    int done = lane_finished(&gw->admin) && lane_finished(&gw->produce);
    (void)fd;
    (void)what;
    for (l = gw->consumers; done && l; l = l->next)
        done = lane_finished(l);
    if (!done && sf_clock_mono_ms() < gw->drain_deadline_ms)
        return;
    event_del(gw->drain_ev);
    gw->drained(gw->drained_arg);
}

void sf_gw_drain(sf_gw_t *gw, int timeout_ms, void (*done)(void *), void *arg) {
    struct timeval tv = {0, DRAIN_CHECK_MS * 1000};
    lane_t *l;
    gw->draining = 1;
    gw->drained = done;
    gw->drained_arg = arg;
    gw->drain_deadline_ms = sf_clock_mono_ms() + timeout_ms;
    lane_stop(&gw->admin);
    lane_stop(&gw->produce);
    for (l = gw->consumers; l; l = l->next)
        lane_stop(l);
    event_add(gw->drain_ev, &tv);
}

sf_gw_t *sf_gw_new(struct event_base *base, struct sf_broker *b) {
    sf_gw_t *gw = calloc(1, sizeof(*gw));
    struct timeval tv = {REAP_INTERVAL_MS / 1000, (REAP_INTERVAL_MS % 1000) * 1000};
    if (!gw || !(gw->mb = sf_mailbox_new(base, pthread_self())) ||
        !(gw->reap_ev = event_new(base, -1, EV_PERSIST, reap_cb, gw)) ||
        !(gw->drain_ev = event_new(base, -1, EV_PERSIST, drain_cb, gw))) {
        if (gw && gw->reap_ev)
            event_free(gw->reap_ev);
        if (gw && gw->mb)
            sf_mailbox_free(gw->mb);
        free(gw);
        return NULL;
    }
    gw->b = b;
    event_add(gw->reap_ev, &tv);
    if (lane_start(gw, &gw->admin, LANE_ADMIN) != 0 ||
        lane_start(gw, &gw->produce, LANE_PRODUCE) != 0) {
        sf_gw_free(gw);
        return NULL;
    }
    return gw;
}

void sf_gw_free(sf_gw_t *gw) {
    lane_t *l, *next;
    if (!gw)
        return;
    event_free(gw->reap_ev);
    event_free(gw->drain_ev);
    lane_stop(&gw->admin);
    lane_stop(&gw->produce);
    for (l = gw->consumers; l; l = l->next)
        lane_stop(l);
    lane_join(&gw->admin);
    lane_join(&gw->produce);
    for (l = gw->consumers; l; l = l->next)
        lane_join(l);
    /* Answer the jobs the threads handed back; their done may still close a lane. */
    sf_mailbox_free(gw->mb);
    lane_release(&gw->admin);
    lane_release(&gw->produce);
    for (l = gw->consumers; l; l = next) {
        next = l->next;
        lane_release(l);
        free(l);
    }
    free(gw);
}
