/* The leader's side of replication for one partition with more than one replica: what each
 * follower has (from its fetches), the high watermark that follows from the ISR, and the ISR
 * changes the leader asks the controller for (Kafka's rules: a follower stays in the ISR while
 * it catches up with the leader's log end offset at least every replica.lag.time.max.ms, and
 * joins it once it has everything below the high watermark and the start of this leadership).
 *
 * The ISR itself is the controller's (the partition state in ZooKeeper, as the request's
 * snapshot shows it); a follower whose addition is in flight counts as a member here already,
 * so that the high watermark never passes a record it lacks (KIP-497's "maximal ISR").
 *
 * Threading: sf_leader_apply on the metadata thread; the others on any thread (the fetch and
 * produce handlers): the state is atomics, and the high watermark moves under the log's lock
 * (sf_log_advance_high_watermark). A partition with one replica never comes here: its high
 * watermark is its log end offset. */
#ifndef SF_LEADER_H
#define SF_LEADER_H

#include <stdint.h>

#include "partition.h"
#include "snapshot.h"

/* 1 if @cp is replicated (more than one replica): its high watermark is tracked here. */
static inline int sf_leader_replicated(const sf_cluster_partition_t *cp) {
    return cp && cp->nreplicas > 1;
}

/* The metadata thread, for each new snapshot: @part's state @cp as broker @self sees it. When
 * @self leads at a leader epoch it did not lead at before, the followers start over (their
 * offsets unknown, caught up as of @now_ms) and the leadership's start offset is the LEO. */
void sf_leader_apply(sf_partition_t *part, const sf_cluster_partition_t *cp, int32_t self,
                     int64_t now_ms);

/* A fetch of follower @replica at @offset with the leader epoch @epoch it knows, at @now_ms.
 * Returns 0, or -1 if @replica is not a follower of this leadership (not a replica, or the
 * epoch differs): the fetch is refused. */
int sf_leader_follower_fetched(sf_partition_t *part, int32_t replica, int32_t epoch,
                               int64_t offset, int64_t now_ms);

/* Move the high watermark up to what every ISR member of @cp has (the leader's LEO when the
 * ISR is the leader alone). Returns 1 if it moved (the caller wakes the partition's waiters). */
int sf_leader_update_hw(sf_partition_t *part, const sf_cluster_partition_t *cp, int32_t self);

/* The ISR the leader wants for @cp at @now_ms: members whose follower fell behind for more
 * than @lag_max_ms dropped, followers caught up added (LEO at the high watermark and the
 * leadership's start, and caught up within @lag_max_ms; marked pending). Written to @isr
 * (room for cp->nreplicas) in assignment order. Returns its size, or 0 when it equals the
 * current ISR (or @self does not lead @cp). */
int sf_leader_wanted_isr(sf_partition_t *part, const sf_cluster_partition_t *cp, int32_t self,
                         int64_t now_ms, int64_t lag_max_ms, int32_t *isr);

/* The ISR change asked for with sf_leader_wanted_isr is over (written, refused or failed):
 * followers marked pending no longer count unless the ISR has them. */
void sf_leader_isr_settled(sf_partition_t *part);

#endif
