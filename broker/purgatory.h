/* The purgatory: requests that wait (long-poll fetches, admin requests waiting for their change
 * to show, Metadata waiting for a controller; acks=all produce and group joins later) park here
 * under one or more keys, each with a deadline.
 *
 * A parked operation is tried again only when an event on one of its keys is notified (an
 * append to a partition, a new metadata snapshot), or when its deadline passes; nothing scans
 * every parked operation. Notifications are coalesced: every operation on a notified key is
 * tried once at the end of the current loop pass, however many notifications came.
 *
 * Threading: a purgatory belongs to the event loop it was created on; park, cancel and the
 * attempt callbacks run on that loop's thread (asserted). sf_purgatory_notify may be called from
 * any thread: keys notified from elsewhere are queued under a mutex and picked up by the owner
 * loop (libevent is built with pthreads support). */
#ifndef SF_PURGATORY_H
#define SF_PURGATORY_H

#include <stddef.h>
#include <stdint.h>

struct event_base;

typedef struct sf_purgatory sf_purgatory_t;
typedef struct sf_pwait sf_pwait_t;

/* What a parked operation waits on. */
typedef enum sf_pkey_kind {
    SF_PKEY_PARTITION = 1, /* appends to (or a high-watermark move of) one partition: ptr is
                              its log, compared but never followed */
    SF_PKEY_METADATA = 2,  /* a new metadata snapshot (ptr NULL, id 0) */
    SF_PKEY_GROUP = 3,     /* a consumer group (id: a hash of its name) */
} sf_pkey_kind_t;

typedef struct sf_pkey {
    sf_pkey_kind_t kind;
    const void *ptr;
    uint64_t id;
} sf_pkey_t;

/* Try to complete the operation (@arg as given to sf_purgatory_park). @final is 1 when the
 * deadline passed or the purgatory is being freed: the operation must complete now. Return 1
 * when it completed (the purgatory then forgets it; the callback has released what it held),
 * 0 to go on waiting. It must not call sf_purgatory_cancel on itself. */
typedef int (*sf_pwait_attempt_fn)(void *arg, int final);

/* A purgatory on @base (borrowed). NULL on no memory. */
sf_purgatory_t *sf_purgatory_new(struct event_base *base);

/* Complete every parked operation (attempt with final = 1) and free the purgatory. NULL ok. */
void sf_purgatory_free(sf_purgatory_t *p);

/* Shutdown: complete every parked operation now; from then on sf_purgatory_park refuses
 * (returns NULL) and notifications find nothing. The purgatory stays valid for notifiers
 * until sf_purgatory_free. */
void sf_purgatory_close(sf_purgatory_t *p);

/* Park an operation under @nkeys keys (copied; duplicates allowed; at least one) until an
 * attempt completes it or @timeout_ms (>= 0) passes. The caller has already tried it once; it
 * is tried once more at the end of the loop pass (an event notified from another thread while
 * it was being parked is not lost).
 * Returns the handle, or NULL on no memory or once closed (nothing was parked; the caller
 * completes the operation itself). */
sf_pwait_t *sf_purgatory_park(sf_purgatory_t *p, const sf_pkey_t *keys, int nkeys,
                              int64_t timeout_ms, sf_pwait_attempt_fn attempt, void *arg);

/* Forget a parked operation without calling its attempt (the caller completes it). */
void sf_purgatory_cancel(sf_purgatory_t *p, sf_pwait_t *w);

/* @key changed: every operation parked on it is tried once more, at the end of the current
 * loop pass of the owner loop. Any thread. */
void sf_purgatory_notify(sf_purgatory_t *p, sf_pkey_t key);

/* The number of parked operations (for metrics and tests). */
size_t sf_purgatory_size(const sf_purgatory_t *p);

/* The same from any thread (as of the owner's last park or completion). */
size_t sf_purgatory_parked(const sf_purgatory_t *p);

/* The key for a partition's log, and the metadata key. */
static inline sf_pkey_t sf_pkey_partition(const void *log) {
    sf_pkey_t k = {SF_PKEY_PARTITION, log, 0};
    return k;
}
static inline sf_pkey_t sf_pkey_metadata(void) {
    sf_pkey_t k = {SF_PKEY_METADATA, NULL, 0};
    return k;
}

#endif
