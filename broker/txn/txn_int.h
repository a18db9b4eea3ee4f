/* The transaction coordinator's private state, shared by coordinator.c (buckets, the table,
 * loading, writes, the periodic pass), txnops.c (the requests) and txnstate.c (the state's
 * JSON). Metadata thread only. */
#ifndef SF_TXN_INT_H
#define SF_TXN_INT_H

#include <event2/event.h>

#include "txn.h"

enum { TS_EMPTY, TS_ONGOING, TS_PREPARE_COMMIT, TS_PREPARE_ABORT, TS_COMPLETE_COMMIT,
       TS_COMPLETE_ABORT, TS_DEAD, TS_PREPARE_EPOCH_FENCE, TS_COUNT };

typedef struct txn_part {
    char *topic;
    int32_t partition;
} txn_part_t;

/* What ZooKeeper holds of a transactional id (producer_id -1: nothing yet). */
typedef struct txn_meta {
    int64_t producer_id, last_producer_id;
    int16_t epoch, last_epoch;
    int32_t timeout_ms;
    int state;
    int64_t start_ms, update_ms; /* start_ms -1 unless a transaction is under way */
    txn_part_t *parts;           /* sorted by (topic, partition), owned */
    int nparts;
} txn_meta_t;

typedef struct sf_txn sf_txn_t;

/* A request waiting for its id to load. */
typedef struct txn_defer txn_defer_t;
typedef void (*txn_fn)(void *arg, sf_txn_t *t, int16_t err);
struct txn_defer {
    txn_defer_t *next;
    txn_fn fn;
    void *arg;
};

struct sf_txn {
    sf_txn_t *hnext;
    sf_txn_coord_t *c;
    char *id;
    int bucket;
    int32_t epoch;   /* the bucket's, when loaded */
    int32_t version; /* the znode's, -1: none */
    int loaded, stale; /* stale: a write's outcome is unknown; read again before use */
    int reading;       /* a read of its znode in flight */
    txn_defer_t *waiting;
    txn_meta_t m;
    int writing; /* a transition in flight */
    int marking; /* markers in flight */
    int busy;    /* work in flight: not freed meanwhile */
    int dropped; /* its bucket moved on while busy: freed when idle */
};

struct sf_txn_coord {
    struct event_base *base;
    sf_cluster_t *cl;
    sf_txn_config_t cfg;
    sf_cluster_bucket_t *buckets; /* the snapshot's */
    int nbuckets;
    sf_txn_t **table;
    size_t ntable, ntxns;
    struct event *pass_timer;
    int64_t next_pid; /* without a cluster */
    int listing;      /* a listing of /transactions for gained buckets is in flight */
    int list_needed;  /* ... is to be started (a bucket gained, or the last one failed) */
    int closing;
};

/* coordinator.c */
/* Run @fn(@arg, t, NONE) with @id loaded, now or once loaded, or @fn(@arg, NULL, err):
 * NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE. */
void txn_with(sf_txn_coord_t *c, const char *id, txn_fn fn, void *arg);
/* Write @next (consumed) as @t's state; @done(@arg, t, err) once it is in ZooKeeper (NONE, the
 * state applied) or not (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE; @t may be dropped). */
void txn_write(sf_txn_t *t, txn_meta_t *next, txn_fn done, void *arg);
/* Start the markers of @t's Prepare* state, then write its Complete* state. */
void txn_markers_start(sf_txn_t *t);
/* A new producer id: @fn(@arg, err, id) (err SF_OK or not), now or later. */
void txn_new_producer_id(sf_txn_coord_t *c, void (*fn)(void *arg, int err, int64_t id),
                         void *arg);
void txn_release(sf_txn_t *t); /* busy-- and free when dropped */

/* txnops.c */
/* Fence @t's ongoing transaction (epoch + 1) and abort it. */
void txn_fence_and_abort(sf_txn_t *t, const char *why);

/* txnstate.c */
const char *txn_state_name(int state);
int txn_state_of(const char *name); /* -1 when unknown */
void txn_meta_init(txn_meta_t *m);
void txn_meta_free(txn_meta_t *m);
int txn_meta_copy(txn_meta_t *dst, const txn_meta_t *src);
/* The index of (topic, partition) in m->parts, or -(insertion point) - 1. */
int txn_meta_find(const txn_meta_t *m, const char *topic, int32_t partition);
int txn_meta_add(txn_meta_t *m, const char *topic, int32_t partition);
void txn_meta_clear_parts(txn_meta_t *m);
char *txn_meta_encode(const txn_meta_t *m); /* malloc'd JSON, NULL on no memory */
int txn_meta_decode(txn_meta_t *m, const char *json); /* SF_OK, SF_ERR_MALFORMED, NOMEM */

#endif
