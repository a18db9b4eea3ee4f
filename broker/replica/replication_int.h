/* The replication module's private state, shared by replication.c (the client, the views, the
 * ISR changes) and fetcher.c (the follower fetches). Everything here runs on the inter-broker
 * client's thread with the client lock held, but for the hand-over of views. */
#ifndef SF_REPLICATION_INT_H
#define SF_REPLICATION_INT_H

#include <stdint.h>

#include "client.h"
#include "replication.h"
#include "throttle.h"

struct event;

/* A partition followed here. */
typedef struct repl_follow {
    sf_partition_t *part; /* referenced */
    const sf_cluster_topic_t *topic; /* in r->view */
    int32_t leader, epoch;
    int64_t backoff_until_ms; /* no fetch before (after an error) */
    int throttled; /* out of the ISR and named in follower.replication.throttled.replicas */
} repl_follow_t;

/* A leader fetched from: one Fetch in flight at most. */
typedef struct repl_leader {
    int32_t id;
    int busy;
    int64_t backoff_until_ms;
} repl_leader_t;

struct sf_replication {
    const struct sf_brokercfg *cfg;
    sf_broker_t *b;
    sf_client_t *cl;
    struct event *tick; /* wakes the client thread for the ISR checks */
    sf_view_t *incoming; /* handed over by the metadata thread (client lock) */
    sf_view_t *view;     /* the client thread's */
    repl_follow_t *follows; /* sorted by leader, then topic */
    int nfollows;
    repl_leader_t *leaders;
    int nleaders, cap_leaders;
    int isr_busy;        /* an AlterPartition is in flight */
    struct shutdown_ctx *shutdown; /* a controlled shutdown under way */
    int64_t next_isr_check_ms;
    sf_throttle_t throttle; /* follower.replication.throttled.rate */
};

/* The followed partition @part at @epoch, or NULL (it moved on). */
repl_follow_t *repl_follow_find(sf_replication_t *r, const sf_partition_t *part, int32_t epoch);

/* The leader entry of broker @id, added if missing (NULL on no memory). */
repl_leader_t *repl_leader_get(sf_replication_t *r, int32_t id);

/* Send a Fetch to every idle leader with partitions to fetch (fetcher.c). */
void repl_fetch_all(sf_replication_t *r);

#endif
