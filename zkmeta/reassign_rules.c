/* Reassignment rules (reassign_rules.h), after Kafka's ReplicaAssignment.reassignTo and the
 * completion step of KafkaController.onPartitionReassignment. */
#include "reassign_rules.h"

#include <stdlib.h>
#include <string.h>

#include "election_rules.h"
#include "err.h"

int sf_reassign_target(const sf_cluster_partition_t *p, int32_t *out) {
    int i, n = 0;
    for (i = 0; i < p->nreplicas; i++)
        if (!sf_elect_has(p->removing, p->nremoving, p->replicas[i]))
            out[n++] = p->replicas[i];
    return n;
}

static int valid_target(const int32_t *t, int n) {
    int i;
    if (n < 1 || n > SF_CLUSTER_MAX_REPLICAS)
        return 0;
    for (i = 0; i < n; i++)
        if (t[i] < 0 || sf_elect_has(t, i, t[i]))
            return 0;
    return 1;
}

int sf_reassign_start(const sf_cluster_partition_t *p, const int32_t *target, int n,
                      sf_cluster_partition_t *out) {
    int32_t *orig = malloc((size_t)(p->nreplicas + 1) * sizeof(int32_t));
    int i, norig = 0, cap;
    memset(out, 0, sizeof(*out));
    if (!orig)
        return SF_ERR_NOMEM;
    for (i = 0; i < p->nreplicas; i++)
        if (!sf_elect_has(p->adding, p->nadding, p->replicas[i]))
            orig[norig++] = p->replicas[i];
    if (!target) {
        target = orig;
        n = norig;
    }
    if (!valid_target(target, n)) {
        free(orig);
        return SF_ERR_INVALID;
    }
    cap = n + p->nreplicas;
    out->replicas = malloc((size_t)cap * sizeof(int32_t));
    out->adding = malloc((size_t)cap * sizeof(int32_t));
    out->removing = malloc((size_t)cap * sizeof(int32_t));
    if (!out->replicas || !out->adding || !out->removing) {
        free(orig);
        sf_cluster_partition_clear(out);
        return SF_ERR_NOMEM;
    }
    for (i = 0; i < n; i++) {
        out->replicas[out->nreplicas++] = target[i];
        if (!sf_elect_has(orig, norig, target[i]))
            out->adding[out->nadding++] = target[i];
    }
    for (i = 0; i < p->nreplicas; i++)
        if (!sf_elect_has(target, n, p->replicas[i])) {
            out->replicas[out->nreplicas++] = p->replicas[i];
            out->removing[out->nremoving++] = p->replicas[i];
        }
    if (out->nreplicas > SF_CLUSTER_MAX_REPLICAS) { /* the topic znode could not hold it */
        free(orig);
        sf_cluster_partition_clear(out);
        return SF_ERR_INVALID;
    }
    if (!out->nremoving)
        out->nadding = 0; /* the target is the replica set: nothing to wait for */
    free(orig);
    if (!out->nadding) {
        free(out->adding);
        out->adding = NULL;
    }
    if (!out->nremoving) {
        free(out->removing);
        out->removing = NULL;
    }
    return SF_OK;
}

static int live(const sf_cluster_snapshot_t *snap, int32_t id) {
    return sf_cluster_snapshot_broker(snap, id) != NULL;
}

/* The leader once @target (@n of them) is the replica set: the current one if it is in the
 * target and live, else the first target replica in the ISR that is live; -1 if none. */
static int32_t finish_leader(const sf_cluster_partition_t *p, const sf_cluster_snapshot_t *snap,
                             const int32_t *target, int n) {
    int i;
    if (sf_elect_has(target, n, p->leader) && live(snap, p->leader))
        return p->leader;
    for (i = 0; i < n; i++)
        if (sf_elect_has(p->isr, p->nisr, target[i]) && live(snap, target[i]))
            return target[i];
    return -1;
}

int sf_reassign_finish(const sf_cluster_partition_t *p, const sf_cluster_snapshot_t *snap,
                       sf_cluster_partition_t *out) {
    int32_t *target;
    int i, n;
    memset(out, 0, sizeof(*out));
    if (!sf_cluster_partition_reassigning(p) || !sf_cluster_partition_has_state(p))
        return 0;
    if (!(target = malloc((size_t)(p->nreplicas + 1) * sizeof(int32_t))))
        return SF_ERR_NOMEM;
    n = sf_reassign_target(p, target);
    for (i = 0; i < n && sf_elect_has(p->isr, p->nisr, target[i]); i++)
        ;
    if (n < 1 || i < n || (out->leader = finish_leader(p, snap, target, n)) < 0) {
        free(target);
        out->leader = 0;
        return 0; /* a target replica is still catching up, or no one can lead */
    }
    if (!(out->isr = malloc((size_t)p->nisr * sizeof(int32_t)))) {
        free(target);
        return SF_ERR_NOMEM;
    }
    for (i = 0; i < p->nisr; i++)
        if (sf_elect_has(target, n, p->isr[i]))
            out->isr[out->nisr++] = p->isr[i];
    out->partition = p->partition;
    out->leader_epoch = p->leader_epoch + 1;
    out->replicas = target;
    out->nreplicas = n;
    return 1;
}
