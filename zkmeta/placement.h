/* Replica placement: which brokers hold the replicas of new partitions. Pure functions. */
#ifndef SF_PLACEMENT_H
#define SF_PLACEMENT_H

#include <stdint.h>

#include "snapshot.h"

/* Kafka's AdminUtils.assignReplicasToBrokers. @brokers: live broker ids sorted ascending
 * (n >= rf); @racks: NULL, or the rack of each of them (borrowed; NULL for a broker without
 * one). Assign @npartitions partitions numbered from @start_partition with @rf replicas each
 * into @out (npartitions * rf ids, partition-major). @start_index is the fixed start index, or
 * -1 for a random one. Rack-aware (assignReplicasToBrokersRackAware) when
 * sf_placement_rack_aware says so, else rack-unaware (assignReplicasToBrokersRackUnaware).
 * Returns SF_OK, SF_ERR_INVALID or SF_ERR_NOMEM. */
int sf_placement_assign(const int32_t *brokers, const char *const *racks, int nbrokers,
                        int32_t npartitions, int rf, int32_t start_partition, int start_index,
                        int32_t *out);

/* 1 if placement over brokers with these @racks (NULL for none) is rack-aware: every one of
 * the @nbrokers has a rack. Otherwise 0, also when only some have one, where Kafka's
 * RackAwareMode.Safe ignores the racks. */
int sf_placement_rack_aware(const char *const *racks, int nbrokers);

/* Coordinator buckets over the live brokers (@live: sorted ascending, @nlive >= 1): @cur (@n
 * buckets, owner -1 for none) into @out, where every bucket whose owner is not live goes to
 * the least loaded live broker, and then buckets move one at a time from the most to the least
 * loaded until their counts differ by at most one. A bucket keeps its epoch while it keeps its
 * owner and gets epoch + 1 when it moves. Returns the number of buckets that moved, -1 on no
 * memory. */
int sf_placement_buckets(const sf_cluster_bucket_t *cur, int n, const int32_t *live, int nlive,
                         sf_cluster_bucket_t *out);

#endif
