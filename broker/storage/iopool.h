/* The I/O threads: where the work that may wait on the disk runs, so that no event loop does
 * (appends, which copy into the page cache; log creation and deletion; retention; reads of
 * log ranges for TLS connections; timestamp lookups).
 *
 * A pool has a fixed number of threads, each with its own first-in first-out queue. A job is
 * submitted with a key and always runs on the thread the key maps to, so jobs with the same
 * key (a client connection) run one at a time and in the order submitted: two produce
 * requests for one partition from one connection append in the order they arrived. Jobs
 * report back by posting
 * to the mailbox of whoever waits for them (mailbox.h) or by answering the request
 * themselves (sf_req_respond may be called from any thread).
 *
 * Threading: sf_iopool_submit may be called from any thread, including a pool thread. */
#ifndef SF_IOPOOL_H
#define SF_IOPOOL_H

#include <stdint.h>

#include "mailbox.h"

typedef struct sf_iopool sf_iopool_t;

/* A pool of @nthreads threads named "@name/<i>" (at most 10 characters of @name show in ps);
 * with 0 threads every job runs at once on the submitting thread (tests). NULL on no memory
 * or when a thread cannot be started. */
sf_iopool_t *sf_iopool_new(int nthreads, const char *name);

/* Run job->fn(job->arg) on the thread of @key. Never fails; the job belongs to the pool until
 * its function runs (a job with heap set is freed after it ran). */
void sf_iopool_submit(sf_iopool_t *pool, uint64_t key, sf_mail_t *job);

/* The same with a job allocated here. 0, or -1 on no memory (nothing submitted). */
int sf_iopool_post(sf_iopool_t *pool, uint64_t key, sf_mailbox_fn fn, void *arg);

/* 1 when called on one of @pool's threads. */
int sf_iopool_is_member(const sf_iopool_t *pool);

/* Run every job still queued, stop the threads and free the pool (NULL ok). Jobs submitted
 * by the jobs that run meanwhile run too. */
void sf_iopool_free(sf_iopool_t *pool);

#endif
