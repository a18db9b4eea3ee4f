/* Leader election and ISR rules (election_rules.h), after Kafka's PartitionLeaderElectionAlgorithms
 * (offlinePartitionLeaderElection, controlledShutdownPartitionLeaderElection) and the ISR
 * checks of its controller's AlterPartition handling. */
#include "election_rules.h"

#include <stdlib.h>
#include <string.h>

static int live(const sf_cluster_snapshot_t *snap, int32_t id) {
    return id >= 0 && sf_cluster_snapshot_broker(snap, id) != NULL;
}

int sf_elect_has(const int32_t *v, int n, int32_t id) {
    int i;
    for (i = 0; i < n; i++)
        if (v[i] == id)
            return 1;
    return 0;
}

int sf_elect_same_set(const int32_t *a, int na, const int32_t *b, int nb) {
    int i;
    if (na != nb)
        return 0;
    for (i = 0; i < na; i++)
        if (!sf_elect_has(b, nb, a[i]) || !sf_elect_has(a, na, b[i]))
            return 0;
    return 1;
}

/* Room for an ISR of up to @n members (at least one) in @out. */
static int isr_alloc(sf_cluster_partition_t *out, int n) {
    out->isr = malloc((size_t)(n > 0 ? n : 1) * sizeof(int32_t));
    out->nisr = 0;
    return out->isr ? SF_OK : SF_ERR_NOMEM;
}

int sf_elect_initial(const sf_cluster_partition_t *part, const sf_cluster_snapshot_t *snap,
                     sf_cluster_partition_t *out) {
    int i;
    out->leader = -1;
    for (i = 0; i < part->nreplicas && out->leader < 0; i++)
        if (live(snap, part->replicas[i]))
            out->leader = part->replicas[i];
    if (out->leader < 0)
        return SF_ERR_NOTFOUND;
    if (isr_alloc(out, part->nreplicas) != SF_OK)
        return SF_ERR_NOMEM;
    for (i = 0; i < part->nreplicas; i++)
        if (live(snap, part->replicas[i]) && !sf_elect_has(out->isr, out->nisr, part->replicas[i]))
            out->isr[out->nisr++] = part->replicas[i];
    out->leader_epoch = 0;
    return SF_OK;
}

/* The first replica in assignment order that is live, in the ISR and not @skip; -1 if none. */
static int32_t first_live_in_isr(const sf_cluster_partition_t *part,
                                 const sf_cluster_snapshot_t *snap, int32_t skip) {
    int i;
    for (i = 0; i < part->nreplicas; i++) {
        int32_t r = part->replicas[i];
        if (r != skip && live(snap, r) && sf_elect_has(part->isr, part->nisr, r))
            return r;
    }
    return -1;
}

/* @out = the ISR of @part less the brokers that are not live and @drop, in ISR order; the
 * leader alone when nothing is left. */
static int isr_keep_live(const sf_cluster_partition_t *part, const sf_cluster_snapshot_t *snap,
                         int32_t drop, int32_t leader, sf_cluster_partition_t *out) {
    int i;
    if (isr_alloc(out, part->nisr + 1) != SF_OK)
        return SF_ERR_NOMEM;
    for (i = 0; i < part->nisr; i++) {
        int32_t r = part->isr[i];
        if (r != drop && live(snap, r) && !sf_elect_has(out->isr, out->nisr, r))
            out->isr[out->nisr++] = r;
    }
    if (!out->nisr && leader >= 0)
        out->isr[out->nisr++] = leader;
    return SF_OK;
}

static int isr_copy(const sf_cluster_partition_t *part, sf_cluster_partition_t *out) {
    if (isr_alloc(out, part->nisr) != SF_OK)
        return SF_ERR_NOMEM;
    if (part->nisr)
        memcpy(out->isr, part->isr, (size_t)part->nisr * sizeof(int32_t));
    out->nisr = part->nisr;
    return SF_OK;
}

/* The leader is gone (or there was none): elect. */
static int elect_offline(const sf_cluster_partition_t *part, const sf_cluster_snapshot_t *snap,
                         int unclean, sf_cluster_partition_t *out) {
    int32_t leader = first_live_in_isr(part, snap, -1);
    int i;
    out->leader_epoch = part->leader_epoch + 1;
    if (leader >= 0) {
        out->leader = leader;
        return isr_keep_live(part, snap, -1, leader, out) ? SF_ERR_NOMEM : SF_ELECT_LEADER;
    }
    for (i = 0; unclean && i < part->nreplicas && leader < 0; i++)
        if (live(snap, part->replicas[i]))
            leader = part->replicas[i];
    if (leader >= 0) {
        if (isr_alloc(out, 1) != SF_OK)
            return SF_ERR_NOMEM;
        out->leader = leader;
        out->isr[out->nisr++] = leader;
        return SF_ELECT_UNCLEAN;
    }
    /* Offline: Kafka keeps the last ISR, so a member that comes back is elected. */
    if (part->leader < 0)
        return SF_ELECT_NONE;
    out->leader = -1;
    return isr_copy(part, out) ? SF_ERR_NOMEM : SF_ELECT_OFFLINE;
}

int sf_elect_failover(const sf_cluster_partition_t *part, const sf_cluster_snapshot_t *snap,
                      int unclean, sf_cluster_partition_t *out) {
    int i, dead = 0;
    if (!sf_cluster_partition_has_state(part))
        return SF_ELECT_NONE;
    if (!live(snap, part->leader))
        return elect_offline(part, snap, unclean, out);
    for (i = 0; i < part->nisr; i++)
        dead |= !live(snap, part->isr[i]);
    if (!dead)
        return SF_ELECT_NONE;
    out->leader = part->leader;
    out->leader_epoch = part->leader_epoch + 1;
    return isr_keep_live(part, snap, -1, part->leader, out) ? SF_ERR_NOMEM : SF_ELECT_SHRINK;
}

int sf_elect_shutdown(const sf_cluster_partition_t *part, const sf_cluster_snapshot_t *snap,
                      int32_t leaving, sf_cluster_partition_t *out) {
    int32_t leader;
    int i;
    if (!sf_cluster_partition_has_state(part))
        return SF_ELECT_NONE;
    if (part->leader == leaving) {
        if ((leader = first_live_in_isr(part, snap, leaving)) < 0)
            return SF_ELECT_NONE;
        out->leader = leader;
        out->leader_epoch = part->leader_epoch + 1;
        return isr_keep_live(part, snap, leaving, leader, out) ? SF_ERR_NOMEM : SF_ELECT_LEADER;
    }
    if (!sf_elect_has(part->isr, part->nisr, leaving) || part->nisr < 2)
        return SF_ELECT_NONE;
    out->leader = part->leader;
    out->leader_epoch = part->leader_epoch + 1;
    if (isr_alloc(out, part->nisr) != SF_OK)
        return SF_ERR_NOMEM;
    for (i = 0; i < part->nisr; i++)
        if (part->isr[i] != leaving)
            out->isr[out->nisr++] = part->isr[i];
    return SF_ELECT_SHRINK;
}

sf_kerr_t sf_elect_alter_check(const sf_cluster_partition_t *part,
                               const sf_cluster_snapshot_t *snap, int32_t requester,
                               int32_t leader_epoch, int32_t partition_epoch,
                               const int32_t *isr, const int64_t *epochs, int n) {
    int i;
    if (!sf_cluster_partition_has_state(part) || part->leader != requester)
        return SF_KERR_NOT_LEADER_OR_FOLLOWER;
    if (leader_epoch != part->leader_epoch)
        return SF_KERR_FENCED_LEADER_EPOCH;
    if (partition_epoch != part->state_version)
        return SF_KERR_INVALID_UPDATE_VERSION;
    if (n < 1 || !sf_elect_has(isr, n, part->leader))
        return SF_KERR_INVALID_REQUEST;
    for (i = 0; i < n; i++) {
        const sf_cluster_broker_t *b = sf_cluster_snapshot_broker(snap, isr[i]);
        if (sf_elect_has(isr, i, isr[i]))
            return SF_KERR_INVALID_REQUEST;
        if (!b || !sf_elect_has(part->replicas, part->nreplicas, isr[i]))
            return SF_KERR_INELIGIBLE_REPLICA;
        if (epochs && epochs[i] >= 0 && epochs[i] != b->epoch)
            return SF_KERR_INELIGIBLE_REPLICA;
    }
    return SF_KERR_NONE;
}

int sf_elect_avoid_shutting_down(const sf_cluster_partition_t *part,
                                 int (*down)(void *arg, int32_t id), void *arg,
                                 sf_cluster_partition_t *out) {
    int i;
    if (out->leader < 0 || !down(arg, out->leader))
        return 0;
    for (i = 0; i < part->nreplicas; i++) {
        int32_t r = part->replicas[i];
        if (r != out->leader && sf_elect_has(out->isr, out->nisr, r) && !down(arg, r)) {
            out->leader = r;
            return 1;
        }
    }
    return 0;
}

int sf_elect_preferred(const sf_cluster_partition_t *part, const sf_cluster_snapshot_t *snap,
                       sf_cluster_partition_t *out) {
    int32_t preferred = part->nreplicas > 0 ? part->replicas[0] : -1;
    if (preferred < 0 || part->leader == preferred)
        return SF_ELECT_NONE;
    if (!live(snap, preferred) || !sf_elect_has(part->isr, part->nisr, preferred))
        return SF_ELECT_OFFLINE;
    if (isr_copy(part, out) != SF_OK)
        return SF_ERR_NOMEM;
    out->leader = preferred;
    out->leader_epoch = part->leader_epoch + 1;
    return SF_ELECT_LEADER;
}

int sf_elect_imbalanced(const sf_cluster_snapshot_t *snap, int32_t broker, int percent) {
    int t, p, preferred = 0, elsewhere = 0;
    for (t = 0; t < snap->ntopics; t++) {
        const sf_cluster_topic_t *topic = snap->topics[t];
        for (p = 0; p < topic->npartitions; p++) {
            const sf_cluster_partition_t *part = &topic->partitions[p];
            if (part->nreplicas < 1 || part->replicas[0] != broker ||
                !sf_cluster_partition_has_state(part))
                continue;
            preferred++;
            elsewhere += part->leader != broker;
        }
    }
    /* elsewhere / preferred > percent / 100, in integers */
    return preferred > 0 && (int64_t)elsewhere * 100 > (int64_t)percent * preferred;
}
