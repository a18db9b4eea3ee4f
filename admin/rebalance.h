/* An even placement of replicas and preferred leaders over a set of brokers, for
 * "streamflow cluster rebalance" and "streamflow topic reassign --generate". Pure functions:
 * the commands read the cluster, call sf_rebalance_plan and apply the result as a partition
 * reassignment. */
#ifndef SF_REBALANCE_H
#define SF_REBALANCE_H

#include <stddef.h>
#include <stdint.h>

typedef struct sf_rebalance_broker {
    int32_t id;
    const char *rack; /* NULL when none */
} sf_rebalance_broker_t;

typedef struct sf_rebalance_partition {
    const char *topic;
    int32_t partition;
    const int32_t *replicas; /* now, the first the preferred leader */
    size_t replica_count;    /* the replication factor, kept */
} sf_rebalance_partition_t;

/* Propose replicas for the @nparts partitions of @parts (those of one topic next to each
 * other) on the @nbrokers brokers of @brokers (ids distinct). Each topic's replicas are
 * spread so that no broker holds more than one above another (as far as racks allow), ties
 * going to the brokers with the fewest over all topics, and its preferred leaders as evenly
 * as moving leadership among each partition's replicas allows; when every broker has a rack,
 * no rack holds more of a partition's replicas than its share (one each while there are racks
 * enough).
 * Replicas already on a broker stay there where balance allows, in their order, so a balanced
 * cluster gets its own placement back. @out receives, for each partition in turn, its
 * replica_count proposed ids (the sum of the replica counts in all). Returns 0, or -1 when a
 * partition has more replicas than there are brokers (or none), or an id is repeated. */
int sf_rebalance_plan(const sf_rebalance_broker_t *brokers, size_t nbrokers,
                      const sf_rebalance_partition_t *parts, size_t nparts, int32_t *out);

#endif
