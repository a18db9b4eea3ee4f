/* Partition reassignment (KIP-455) as Kafka's controller carries it out: the replica set
 * grows to the target plus the replicas being moved away, the new replicas catch up and join
 * the ISR, and then the leadership moves if it must and the old replicas go, in one write.
 * Pure functions of a partition and a snapshot, like election_rules.h. */
#ifndef SF_REASSIGN_RULES_H
#define SF_REASSIGN_RULES_H

#include <stdint.h>

#include "snapshot.h"

/* The target of @p's reassignment under way: its replicas less those being removed, in
 * assignment order, into @out (room for p->nreplicas); returns their count. */
int sf_reassign_target(const sf_cluster_partition_t *p, int32_t *out);

/* Start moving @p to @target (@n distinct broker ids), or, with @target NULL, cancel the
 * reassignment under way (the target is then the original replicas, those before it began).
 * Fills @out's replicas, adding and removing (malloc'd): the replicas are the target followed
 * by the current ones not in it; adding = target less the original replicas; removing = the
 * current replicas not in the target. A target equal to the current replicas as a set ends
 * with no reassignment (the new order is kept). SF_OK, SF_ERR_INVALID (empty target, a
 * negative or repeated id, more than SF_CLUSTER_MAX_REPLICAS in the target or in the replicas
 * it would give) or SF_ERR_NOMEM. */
int sf_reassign_start(const sf_cluster_partition_t *p, const int32_t *target, int n,
                      sf_cluster_partition_t *out);

/* Whether @p's reassignment can finish now: every target replica is in the ISR and one of
 * them that is live can lead (the current leader if it is in the target and live, else the
 * first such in target order). Then fills @out: leader, leader_epoch + 1, the ISR less the
 * replicas being removed, and the target as the replicas (all malloc'd; no adding or
 * removing), and returns 1; 0 when it must wait (or @p is not being reassigned), SF_ERR_NOMEM
 * on no memory. */
int sf_reassign_finish(const sf_cluster_partition_t *p, const sf_cluster_snapshot_t *snap,
                       sf_cluster_partition_t *out);

#endif
