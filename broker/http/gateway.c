/* The HTTP gateway (see gateway.h): one thread per lane, a job queue each, and the broker's
 * own admin client and producer. */
#include "config.h"

#include "gateway.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker.h"
#include "httpd.h"
#include "logging.h"

#define MAX_JOBS 512
#define MAX_BYTES (64 * 1024 * 1024)
/* How long an admin operation may take before the request is answered with a timeout. */
#define ADMIN_TIMEOUT_MS 15000
/* While records are in flight the produce thread looks for new jobs this often. */
#define PRODUCE_POLL_MS 1

typedef struct lane {
    sf_gw_t *gw;
    sf_gw_lane_t kind;
    pthread_t thread;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    sf_gw_job_t *head, *tail; /* queued, not taken yet */
    size_t njobs, bytes;      /* queued or running */
    int stopping;
    void *client; /* sf_admin_t or sf_producer_t; NULL until first used */
} lane_t;

struct sf_gw {
    struct sf_broker *b;
    sf_mailbox_t *mb;
    lane_t lanes[SF_GW_NLANES];
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
    sf_httpd_reply(job->req, job->status ? job->status : 500, body, "application/json");
    sf_gw_job_free(job);
}

/* On the loop: a job its lane is done with. */
static void job_done(void *arg) {
    sf_gw_job_t *job = arg;
    if (job->done && !job->body) /* a body already: the gateway failed it */
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
    conf = sf_broker_client_conf(l->gw->b, l->kind == SF_GW_ADMIN ? "http-admin" : "http-produce",
                                 "HTTP", errstr, errstr_size);
    if (!conf)
        return NULL;
    for (i = 0; ok && l->kind == SF_GW_PRODUCE && i < sizeof(produce_conf) / sizeof(*produce_conf);
         i++)
        ok = sf_conf_set(conf, produce_conf[i][0], produce_conf[i][1], errstr, errstr_size) == 0;
    if (ok && l->kind == SF_GW_ADMIN)
        l->client = sf_admin_new(conf, errstr, errstr_size);
    else if (ok)
        l->client = sf_producer_new(conf, errstr, errstr_size);
    sf_conf_destroy(conf);
    return l->client;
}

static void lane_client_free(lane_t *l) {
    if (!l->client)
        return;
    if (l->kind == SF_GW_ADMIN) {
        sf_admin_destroy(l->client);
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

static void *admin_main(void *arg) {
    lane_t *l = arg;
    sf_gw_job_t *job;
    char errstr[256];
    sf_admin_t *a;
    while ((job = lane_take(l, 1))) {
        if ((a = lane_client(l, errstr, sizeof(errstr))))
            job->run(job, a);
        else
            sf_gw_fail(job, 503, NULL, "no admin client: %s", errstr);
        job_return(l, job);
    }
    lane_client_free(l);
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
    record_done(&r->job->gw->lanes[SF_GW_PRODUCE], r->job);
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

static int lane_stopping(lane_t *l) {
    int stopping;
    pthread_mutex_lock(&l->mu);
    stopping = l->stopping;
    pthread_mutex_unlock(&l->mu);
    return stopping;
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
        } else if (lane_stopping(l)) {
            sf_producer_flush(p, ADMIN_TIMEOUT_MS / 3);
            break;
        } else {
            sf_producer_poll(p, PRODUCE_POLL_MS);
        }
    }
    lane_client_free(l); /* the records still in flight fail, and their jobs return */
    return NULL;
}

/* ---- the gateway ---- */

void sf_gw_submit(sf_gw_t *gw, sf_gw_lane_t kind, sf_gw_job_t *job) {
    lane_t *l = &gw->lanes[kind];
    int refuse = 0;
    job->gw = gw;
    pthread_mutex_lock(&l->mu);
    if (l->stopping)
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
    sf_gw_finish(job);
}

sf_gw_t *sf_gw_new(struct event_base *base, struct sf_broker *b) {
    static void *(*const mains[SF_GW_NLANES])(void *) = {admin_main, produce_main};
    sf_gw_t *gw = calloc(1, sizeof(*gw));
    int i;
    if (!gw || !(gw->mb = sf_mailbox_new(base, pthread_self()))) {
        free(gw);
        return NULL;
    }
    gw->b = b;
    for (i = 0; i < SF_GW_NLANES; i++) {
        lane_t *l = &gw->lanes[i];
        l->gw = gw;
        l->kind = (sf_gw_lane_t)i;
        pthread_mutex_init(&l->mu, NULL);
        pthread_cond_init(&l->cv, NULL);
        l->started = pthread_create(&l->thread, NULL, mains[i], l) == 0;
        if (!l->started) {
            sf_gw_free(gw);
            return NULL;
        }
    }
    return gw;
}

void sf_gw_free(sf_gw_t *gw) {
    sf_gw_job_t *job, *queued;
    int i;
    if (!gw)
        return;
    for (i = 0; i < SF_GW_NLANES; i++) {
        lane_t *l = &gw->lanes[i];
        pthread_mutex_lock(&l->mu);
        l->stopping = 1;
        queued = l->head;
        l->head = l->tail = NULL;
        pthread_cond_signal(&l->cv);
        pthread_mutex_unlock(&l->mu);
        while ((job = queued)) {
            queued = job->next;
            sf_gw_fail(job, 503, "BROKER_NOT_AVAILABLE", "the broker is shutting down");
            sf_gw_finish(job);
        }
    }
    for (i = 0; i < SF_GW_NLANES; i++) {
        lane_t *l = &gw->lanes[i];
        if (l->started)
            pthread_join(l->thread, NULL);
        pthread_mutex_destroy(&l->mu);
        pthread_cond_destroy(&l->cv);
    }
    sf_mailbox_free(gw->mb); /* answers the jobs the threads handed back */
    free(gw);
}
