/* The HTTP gateway: the REST API's writes and cluster-wide reads go through a libstreamflow
 * admin client and producer owned by this broker, each on a thread of its own, so that no
 * HTTP request waits on the metadata thread's loop and any broker answers for the whole
 * cluster (a record for a partition led elsewhere goes to its leader, a topic is created by
 * the controller, a group is described by its coordinator).
 *
 * Threads: sf_gw_submit is called on the loop that serves HTTP; the job's run (admin lane) or
 * its records (produce lane) are handled on the lane's thread; job->done then runs back on
 * the loop, where the request is answered. The clients are made on first use, so a broker
 * whose HTTP API only serves reads never opens a connection to itself. Each lane holds at
 * most MAX_JOBS jobs and the produce lane at most MAX_BYTES of record data; more are refused
 * with 429 at once. */
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

typedef enum sf_gw_lane { SF_GW_ADMIN, SF_GW_PRODUCE, SF_GW_NLANES } sf_gw_lane_t;

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
    /* Produce lane: the records to send, each answered in place. */
    sf_gw_record_t *records;
    size_t nrecords;
    size_t bytes; /* record data held, for the produce lane's bound */
    /* On the loop once handled: answers req and frees the job (NULL: sf_gw_finish). */
    void (*done)(sf_gw_job_t *job);
    void *arg;                  /* the route's own state */
    void (*free_arg)(void *arg); /* frees arg in sf_gw_job_free (NULL: nothing) */
    int status;                 /* HTTP status of the answer */
    char *body;                 /* JSON text (malloc'd) or NULL */
    /* the gateway's */
    sf_gw_t *gw;
    size_t pending;
    sf_gw_job_t *next;
    sf_mail_t mail;
};

/* A gateway for broker @b, answering on @base's loop (the calling thread's). NULL on no
 * memory. */
sf_gw_t *sf_gw_new(struct event_base *base, struct sf_broker *b);

/* Stop the threads (the job each is running finishes), answer every job with what it got or
 * 503, and free. On the loop's thread; NULL is fine. */
void sf_gw_free(sf_gw_t *gw);

/* A zeroed job for @req, or NULL on no memory. */
sf_gw_job_t *sf_gw_job_new(struct evhttp_request *req);

/* Free @job with its arg, records and body (not its request). */
void sf_gw_job_free(sf_gw_job_t *job);

/* Queue @job (taken) on @lane. When the lane is full or stopping, the request is answered
 * with 429 or 503 at once and the job freed. */
void sf_gw_submit(sf_gw_t *gw, sf_gw_lane_t lane, sf_gw_job_t *job);

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
