/* The HTTP gateway: the REST API's writes and cluster-wide reads go through a libstreamflow
 * admin client and producer owned by this broker, each on a thread of its own, so that no
 * HTTP request waits on the metadata thread's loop and any broker answers for the whole
 * cluster (a record for a partition led elsewhere goes to its leader, a topic is created by
 * the controller, a group is described by its coordinator).
 *
 * A lane is a thread with a job queue and one client: the admin lane, the produce lane, and a
 * consumer lane per HTTP consumer (a REST consumer instance, an event stream), made and
 * closed by the routes and bounded in number (MAX_CONSUMERS).
 *
 * Threads: sf_gw_submit is called on the loop that serves HTTP; the job's run, consume or
 * records are handled on the lane's thread; job->done then runs back on the loop, where the
 * request is answered. The clients are made on first use, so a broker whose HTTP API only
 * serves reads never opens a connection to itself. Each lane holds at most MAX_JOBS jobs and
 * the produce lane at most MAX_BYTES of record data; more are refused with 429 at once. */
#ifndef SF_GATEWAY_H
#define SF_GATEWAY_H

#include <stddef.h>
#include <stdint.h>

#include "mailbox.h"
#include "streamflow.h"

struct event_base;
struct evhttp_request;
struct sf_broker;

typedef struct sf_gw sf_gw_t;
typedef struct sf_gw_job sf_gw_job_t;

typedef struct sf_gw_lane sf_gw_lane_t;

/* One record of a produce job and, once handled, its outcome (sf_delivery_t's fields). */
typedef struct sf_gw_record {
    sf_record_t rec; /* points into the job's own buffers */
    int32_t partition;
    int64_t offset;
    int64_t timestamp;
    int err;
    struct sf_gw_job *job; /* the gateway's */
} sf_gw_record_t;

struct sf_gw_job {
    struct evhttp_request *req;
    /* Admin lane: called on the admin thread; sets status and body. */
    void (*run)(sf_gw_job_t *job, sf_admin_t *admin);
    /* Consumer lane: called on the consumer's thread; sets status and body (or streams). */
    void (*consume)(sf_gw_job_t *job, sf_consumer_t *consumer);
    /* Produce lane: the records to send, each answered in place. */
    sf_gw_record_t *records;
    size_t nrecords;
    size_t bytes; /* record data held, for the produce lane's bound */
    /* On the loop once handled, also when the gateway failed it (then body is set): answers
     * req and frees the job (NULL: sf_gw_finish). */
    void (*done)(sf_gw_job_t *job);
    void *arg;                  /* the route's own state */
    void (*free_arg)(void *arg); /* frees arg in sf_gw_job_free (NULL: nothing) */
    int status;                 /* HTTP status of the answer */
    char *body;                 /* JSON text (malloc'd) or NULL */
    const char *ctype;          /* its Content-Type (static; NULL: application/json) */
    /* the gateway's */
    sf_gw_t *gw;
    sf_gw_lane_t *lane;
    size_t pending;
    sf_gw_job_t *next;
    sf_mail_t mail;
};

/* A gateway for broker @b, answering on @base's loop (the calling thread's). NULL on no
 * memory. */
sf_gw_t *sf_gw_new(struct event_base *base, struct sf_broker *b);

/* Stop every lane, as sf_gw_free does, without waiting: @done(@arg) runs on the loop once
 * every lane's thread has finished (its client closed: the HTTP consumers have left their
 * groups, the producer has flushed), or after @timeout_ms. The loop keeps serving meanwhile,
 * which those last requests may need when they go to this broker. Later requests get 503.
 * Once. */
void sf_gw_drain(sf_gw_t *gw, int timeout_ms, void (*done)(void *), void *arg);

/* Stop the threads (the job each is running finishes), answer every job with what it got or
 * 503, and free. On the loop's thread; NULL is fine. */
void sf_gw_free(sf_gw_t *gw);

/* A zeroed job for @req, or NULL on no memory. */
sf_gw_job_t *sf_gw_job_new(struct evhttp_request *req);

/* Free @job with its arg, records and body (not its request). */
void sf_gw_job_free(sf_gw_job_t *job);

/* The admin and produce lanes. */
sf_gw_lane_t *sf_gw_admin(sf_gw_t *gw);
sf_gw_lane_t *sf_gw_producer(sf_gw_t *gw);

/* A new consumer lane whose consumer is configured by the broker's client settings and the
 * @n settings @kvs. NULL with a sentence in @errstr (and *@status 400 for a bad setting, 429
 * past MAX_CONSUMERS, 503 on no memory). On the loop. */
sf_gw_lane_t *sf_gw_consumer_new(sf_gw_t *gw, const sf_config_kv_t *kvs, size_t n,
                                 int *status, char *errstr, size_t errstr_size);

/* Close a consumer lane: its queued jobs are answered with 503, the running one is told to
 * stop (sf_gw_stopping), and the consumer is destroyed on the lane's thread (leaving its
 * group); the lane is freed later. @l is not used after this. On the loop. */
void sf_gw_consumer_close(sf_gw_lane_t *l);

/* 1 once the lane of the job running on it is closing: a long job (a stream) returns. */
int sf_gw_stopping(const sf_gw_job_t *job);

/* Run @fn(@arg) on the loop (from a lane's thread); -1 on no memory. */
int sf_gw_post(sf_gw_t *gw, void (*fn)(void *), void *arg);

/* Queue @job (taken) on @lane. When the lane is full or stopping, the request is answered
 * with 429 or 503 at once and the job freed. */
void sf_gw_submit(sf_gw_lane_t *lane, sf_gw_job_t *job);

/* Answer job->req with job->status and job->body, then free the job. */
void sf_gw_finish(sf_gw_job_t *job);

/* Set job's answer to an error in the httpd error format. */
void sf_gw_fail(sf_gw_job_t *job, int status, const char *kafka_error, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The same for a libstreamflow or Kafka error @err, with the HTTP status that fits it. */
void sf_gw_fail_err(sf_gw_job_t *job, int err, const char *detail);

/* The HTTP status for libstreamflow/Kafka error @err (0 is 200). */
int sf_gw_status_of(int err);

#endif
