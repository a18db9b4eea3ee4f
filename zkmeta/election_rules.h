/* The controller's decisions about one partition's leader and ISR, as Apache Kafka's
 * ZooKeeper-mode controller takes them: at creation, when brokers die (failover), when a broker
 * shuts down in a controlled way, and when a leader asks to change its ISR (AlterPartition).
 * Pure functions of a partition and a snapshot; a broker is live when the snapshot has its
 * registration. */
#ifndef SF_ELECTION_RULES_H
#define SF_ELECTION_RULES_H

#include <stdint.h>

#include "err.h"
#include "snapshot.h"

/* What sf_elect_failover / sf_elect_shutdown decided (negative: SF_ERR_NOMEM). */
typedef enum sf_elect_outcome {
    SF_ELECT_NONE = 0,    /* nothing to change */
    SF_ELECT_LEADER,      /* a new leader from the live ISR */
    SF_ELECT_UNCLEAN,     /* a new leader from outside the ISR (unclean election) */
    SF_ELECT_OFFLINE,     /* the leader is gone and no one may take over: leader -1 */
    SF_ELECT_SHRINK,      /* the same leader; brokers left the ISR */
} sf_elect_outcome_t;

/* The state of a partition that has none: the first live replica in assignment order leads,
 * the ISR is every live replica in assignment order, leader epoch 0. Fills @out's leader,
 * leader_epoch, isr (malloc'd) and nisr. Returns SF_OK, SF_ERR_NOTFOUND (no live replica) or
 * SF_ERR_NOMEM. */
int sf_elect_initial(const sf_cluster_partition_t *part, const sf_cluster_snapshot_t *snap,
                     sf_cluster_partition_t *out);

/* After brokers left: a partition whose leader is not live (or -1) gets the first replica in
 * assignment order that is live and in the ISR, with the ISR less the brokers that are not
 * live (the new leader alone if that is empty); with none such it gets, if @unclean, the first
 * live replica with itself as the ISR, else leader -1 with the ISR kept as it was. A live
 * leader with dead brokers in its ISR keeps leading with them removed. The leader epoch goes
 * up by one with each change, except for a partition that was offline already and stays so
 * (then SF_ELECT_NONE). When the outcome is not SF_ELECT_NONE, fills @out's leader,
 * leader_epoch, isr (malloc'd) and nisr. */
int sf_elect_failover(const sf_cluster_partition_t *part, const sf_cluster_snapshot_t *snap,
                      int unclean, sf_cluster_partition_t *out);

/* Broker @leaving shuts down: a partition it leads moves to the first replica in assignment
 * order that is live, in the ISR and not @leaving (SF_ELECT_LEADER; SF_ELECT_NONE when there
 * is none: the partition stays where it is); a partition it follows in the ISR drops it from
 * the ISR (SF_ELECT_SHRINK), unless it is the last member. Leader epoch + 1 with each change;
 * @out as for sf_elect_failover. */
int sf_elect_shutdown(const sf_cluster_partition_t *part, const sf_cluster_snapshot_t *snap,
                      int32_t leaving, sf_cluster_partition_t *out);

/* KIP-841: a new leader in @out that @down says is shutting down (@down(@arg, id)) gives way
 * to the first replica in assignment order that is in @out's ISR and not shutting down; it
 * stays when there is none (a leader that is leaving is better than none). Returns 1 when
 * the leader changed. */
int sf_elect_avoid_shutting_down(const sf_cluster_partition_t *part,
                                 int (*down)(void *arg, int32_t id), void *arg,
                                 sf_cluster_partition_t *out);

/* Preferred leader election (Kafka's preferredReplicaPartitionLeaderElection): the first
 * replica in assignment order leads if it is live and in the ISR (SF_ELECT_LEADER, the ISR
 * kept, leader epoch + 1; @out as for sf_elect_failover). SF_ELECT_NONE when it leads
 * already (or the partition has no replicas), SF_ELECT_OFFLINE when it cannot lead now. */
int sf_elect_preferred(const sf_cluster_partition_t *part, const sf_cluster_snapshot_t *snap,
                       sf_cluster_partition_t *out);

/* Kafka's auto leader rebalance check for @broker: 1 if, of the partitions (with a state)
 * whose preferred replica is @broker, more than @percent per cent are led by another broker. */
int sf_elect_imbalanced(const sf_cluster_snapshot_t *snap, int32_t broker, int percent);

/* An AlterPartition request for @part from broker @requester, as Kafka's controller checks it:
 * NOT_LEADER_OR_FOLLOWER (the requester does not lead it), FENCED_LEADER_EPOCH (@leader_epoch
 * is not the current one), INVALID_UPDATE_VERSION (@partition_epoch is not the state znode's
 * version), INVALID_REQUEST (the new ISR is empty, names a broker twice or leaves out the
 * leader), INELIGIBLE_REPLICA (a member is not a live replica of the partition, or, when
 * @epochs is not NULL, an epoch >= 0 there differs from the member's registration); else
 * NONE. @isr and @epochs hold @n entries. */
sf_kerr_t sf_elect_alter_check(const sf_cluster_partition_t *part,
                               const sf_cluster_snapshot_t *snap, int32_t requester,
                               int32_t leader_epoch, int32_t partition_epoch,
                               const int32_t *isr, const int64_t *epochs, int n);

/* 1 if @id is one of the @n ids in @v. */
int sf_elect_has(const int32_t *v, int n, int32_t id);

/* 1 if @a and @b (@na, @nb entries) hold the same brokers in any order. */
int sf_elect_same_set(const int32_t *a, int na, const int32_t *b, int nb);

#endif
