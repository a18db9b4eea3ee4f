/* Replication quotas, as Kafka's: a broker's leader.replication.throttled.rate and
 * follower.replication.throttled.rate (dynamic broker configs, bytes per second) bound what it
 * sends to and fetches for the replicas its topics name in leader.replication.throttled.replicas
 * and follower.replication.throttled.replicas ("partition:broker,..." or "*"), while those
 * replicas are out of the ISR: what a reassignment copies. In-sync replicas are never held back.
 *
 * A throttle is a token bucket of one second's worth of bytes, shared by the threads that use
 * it (a mutex, taken once per fetch). */
#ifndef SF_THROTTLE_H
#define SF_THROTTLE_H

#include <pthread.h>
#include <stdint.h>

#include "topiccfg.h"

#define SF_THROTTLE_LEADER_RATE "leader.replication.throttled.rate"
#define SF_THROTTLE_FOLLOWER_RATE "follower.replication.throttled.rate"
#define SF_THROTTLE_LEADER_REPLICAS "leader.replication.throttled.replicas"
#define SF_THROTTLE_FOLLOWER_REPLICAS "follower.replication.throttled.replicas"

typedef struct sf_throttle {
    pthread_mutex_t lock;
    int64_t rate;   /* bytes per second; INT64_MAX: unbounded */
    double tokens;  /* bytes that may go now; below 0 once the rate is used up */
    int64_t last_ms;
} sf_throttle_t;

void sf_throttle_init(sf_throttle_t *t);
void sf_throttle_destroy(sf_throttle_t *t);

/* Set the rate (bytes per second, INT64_MAX for none); the bucket starts full. */
void sf_throttle_set_rate(sf_throttle_t *t, int64_t rate);

/* 1 when the rate is used up at @now_ms (monotonic): throttled replicas wait. */
int sf_throttle_exceeded(sf_throttle_t *t, int64_t now_ms);

/* Count @bytes sent or fetched for throttled replicas at @now_ms (monotonic). */
void sf_throttle_record(sf_throttle_t *t, int64_t bytes, int64_t now_ms);

/* The effective rate @key (SF_THROTTLE_*_RATE) under @ctx: this broker's dynamic config, the
 * cluster default, the file, else INT64_MAX. */
int64_t sf_throttle_rate(const sf_topiccfg_ctx_t *ctx, const char *key);

/* 1 when replica @broker of partition @partition is throttled by topic @t's config @key
 * (SF_THROTTLE_*_REPLICAS): "*", or a "partition:broker" item of the list. */
int sf_throttle_listed(const sf_topiccfg_ctx_t *ctx, const sf_cluster_topic_t *t,
                       const char *key, int32_t partition, int32_t broker);

#endif
