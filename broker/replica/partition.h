/* A partition this broker holds a replica of: its log in one of the log directories and,
 * once replication lands, its leader and follower state.
 *
 * Ownership: reference counted (atomically). The broker's registry (metadata thread) holds
 * one reference while the partition is assigned here; every published view (view.h) holds
 * one for each partition it lists, and a request holds its view until it is answered. So a
 * handler on any thread uses a partition's log for as long as its request lives, and finds
 * it without a lock. A partition whose topic was deleted is retired: when its last reference
 * goes, its log and files are deleted on the log-manager thread (never on an event loop), and
 * then @deleted(@arg) runs there. */
#ifndef SF_PARTITION_H
#define SF_PARTITION_H

#include <stdatomic.h>
#include <stdint.h>

#include "iopool.h"
#include "log.h"
#include "logdir.h"

typedef struct sf_partition sf_partition_t;
typedef void (*sf_partition_deleted_fn)(void *arg, const char *topic, int32_t index);

/* The most followers a leader tracks per partition (replication factor - 1). */
#define SF_PARTITION_MAX_FOLLOWERS 15

/* What the leader knows of one follower (leader.h). Written by the fetch handlers of its
 * fetches (any worker) and reset by the metadata thread when leadership starts; plain
 * atomics, no lock. */
typedef struct sf_follower {
    _Atomic int32_t id;             /* broker id; -1: a free slot */
    _Atomic int32_t epoch;          /* the leader epoch the slot was set up for */
    _Atomic int64_t leo;            /* its log end offset (its last fetch offset); -1: unknown */
    _Atomic int64_t caught_up_ms;   /* the last time it had everything the leader had */
    _Atomic int64_t prev_leader_leo; /* the leader's LEO at its previous fetch */
    _Atomic int64_t prev_fetch_ms;  /* the time of its previous fetch */
    _Atomic int pending;            /* an ISR expansion adding it is in flight */
} sf_follower_t;

struct sf_partition {
    atomic_int refcnt;
    char *topic;
    int32_t index;
    sf_log_t *log;        /* in @ld's table until the partition is deleted */
    sf_logdir_t *ld;
    sf_iopool_t *manager; /* the log-manager thread */
    atomic_int retired;
    sf_partition_deleted_fn deleted;
    void *deleted_arg;
    sf_mail_t job; /* the deletion, queued on the log-manager thread */
    /* Replication (leader.h): the leader epoch this broker leads at (-1: not leading), the
     * LEO when that leadership began, and the followers. hw_known: the log's high watermark
     * was set in this process (by a leadership or by the fetcher); until then it is unknown. */
    _Atomic int32_t lead_epoch;
    atomic_int hw_known;
    _Atomic int64_t lead_start_offset;
    sf_follower_t followers[SF_PARTITION_MAX_FOLLOWERS];
    /* The ISR change last asked for (replication.c, its thread only): at which partition
     * state version (-1: none in hand) and when. */
    int32_t isr_asked_version;
    int64_t isr_asked_ms;
    /* The traffic share metric (prom.c, the metadata thread only): the log end offset at the
     * last sample (-1: none yet) and the append rate in records/s, averaged over a minute. */
    int64_t traffic_leo;
    double traffic_rate;
};

/* A partition for @log (found or created in @ld; borrowed from its table), one reference.
 * @manager and @deleted(@arg) are used once it is retired. NULL on no memory. */
sf_partition_t *sf_partition_new(sf_log_t *log, sf_logdir_t *ld, sf_iopool_t *manager,
                                 sf_partition_deleted_fn deleted, void *arg);

/* Take / drop a reference. Any thread. The last drop of a retired partition hands the
 * deletion of its log to the log-manager thread; of any other, just frees the object (the
 * log stays in its directory). */
sf_partition_t *sf_partition_ref(sf_partition_t *p);
void sf_partition_unref(sf_partition_t *p);

/* Its topic was deleted: delete the log once the last reference goes. Any thread. */
void sf_partition_retire(sf_partition_t *p);

#endif
