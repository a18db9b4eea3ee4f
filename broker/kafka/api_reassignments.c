/* AlterPartitionReassignments and ListPartitionReassignments (KIP-455), on the controller.
 * Alter checks each partition against the snapshot (UNKNOWN_TOPIC_OR_PARTITION,
 * INVALID_REPLICA_ASSIGNMENT for an empty target, a repeated or unregistered broker,
 * NO_REASSIGNMENT_IN_PROGRESS for a cancellation with nothing to cancel), starts the rest with
 * sf_cluster_reassign and answers once ZooKeeper has the new assignments (the moves then
 * finish in the background). List answers from the snapshot: the partitions with a
 * reassignment under way, with their replicas, adding and removing replicas. Other brokers
 * answer NOT_CONTROLLER. */
#include "dispatch.h"

#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "state_write.h"

typedef sf_proto_AlterPartitionReassignmentsResponse_ReassignablePartitionResponse_t alter_rp_t;
typedef sf_proto_AlterPartitionReassignmentsResponse_ReassignableTopicResponse_t alter_rt_t;
typedef sf_proto_ListPartitionReassignmentsResponse_OngoingPartitionReassignment_t list_rp_t;
typedef sf_proto_ListPartitionReassignmentsResponse_OngoingTopicReassignment_t list_rt_t;
typedef sf_proto_AlterPartitionReassignmentsRequest_ReassignablePartition_t alter_p_t;

/* The write for a request; on the heap, freed when both the answer and the ZooKeeper
 * completion happened (as state_write.c). */
typedef struct alter_op {
    sf_kreq_t *kr; /* NULL once answered */
    const sf_proto_AlterPartitionReassignmentsResponse_t *resp;
    sf_cluster_reassignment_t *r;
    alter_rp_t **slot;
    int n;
    int zk_pending;
    sf_pwait_t *wait;
} alter_op_t;

static void alter_free(alter_op_t *op) {
    int i;
    for (i = 0; i < op->n; i++) {
        free((char *)op->r[i].topic);
        free((int32_t *)op->r[i].replicas);
    }
    free(op->r);
    free(op->slot);
    free(op);
}

static void alter_answer(alter_op_t *op) {
    sf_kreq_respond(op->kr, op->resp);
    op->kr = NULL;
}

static void result(alter_rp_t *rp, int16_t code, const char *msg) {
    rp->ErrorCode = code;
    rp->ErrorMessage = sf_slice_cstr(msg); /* a literal */
}

static void alter_done(void *arg, int err) {
    alter_op_t *op = arg;
    int i;
    op->zk_pending = 0;
    if (!op->kr) {
        alter_free(op);
        return;
    }
    for (i = 0; i < op->n; i++) {
        int e = err == SF_OK ? op->r[i].err : err;
        if (e == SF_OK)
            result(op->slot[i], SF_KERR_NONE, NULL);
        else if (e == SF_ERR_NOTFOUND)
            result(op->slot[i], SF_KERR_UNKNOWN_TOPIC_OR_PARTITION,
                   "The partition does not exist.");
        else if (e == SF_ERR_INVALID)
            result(op->slot[i], SF_KERR_INVALID_REPLICA_ASSIGNMENT, "Invalid target replicas.");
        else if (e == SF_ERR_STATE)
            result(op->slot[i], SF_KERR_NOT_CONTROLLER, "This broker is not the controller.");
        else
            result(op->slot[i], SF_KERR_UNKNOWN_SERVER_ERROR, "Writing to ZooKeeper failed.");
    }
    if (op->wait)
        sf_purgatory_cancel(sf_broker_purgatory(op->kr->b), op->wait);
    op->wait = NULL;
    alter_answer(op);
    alter_free(op);
}

static int alter_timeout(void *arg, int final) {
    alter_op_t *op = arg;
    int i;
    if (!final)
        return 0;
    op->wait = NULL;
    for (i = 0; i < op->n; i++)
        result(op->slot[i], SF_KERR_REQUEST_TIMED_OUT, "ZooKeeper did not answer in time.");
    alter_answer(op);
    if (!op->zk_pending)
        alter_free(op);
    return 1;
}

/* An error for @rp now, or NONE when the move may be queued. */
static int16_t alter_check(const sf_cluster_snapshot_t *snap, const sf_cluster_topic_t *t,
                           const alter_p_t *p, alter_rp_t *rp) {
    int i, j;
    if (!t || p->PartitionIndex < 0 || p->PartitionIndex >= t->npartitions ||
        sf_cluster_snapshot_deleting(snap, t->name)) {
        result(rp, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.");
        return rp->ErrorCode;
    }
    if (p->ReplicasCount < 0) {
        if (!sf_cluster_partition_reassigning(&t->partitions[p->PartitionIndex]))
            result(rp, SF_KERR_NO_REASSIGNMENT_IN_PROGRESS,
                   "No reassignment of the partition is in progress.");
        return rp->ErrorCode;
    }
    if (p->ReplicasCount < 1 || p->ReplicasCount > SF_CLUSTER_MAX_REPLICAS) {
        result(rp, SF_KERR_INVALID_REPLICA_ASSIGNMENT, "The replica list is empty or too long.");
        return rp->ErrorCode;
    }
    for (i = 0; i < p->ReplicasCount; i++) {
        for (j = 0; j < i && p->Replicas[j] != p->Replicas[i]; j++)
            ;
        if (j < i || !sf_cluster_snapshot_broker(snap, p->Replicas[i])) {
            result(rp, SF_KERR_INVALID_REPLICA_ASSIGNMENT,
                   j < i ? "A broker appears twice in the replica list."
                         : "A broker in the replica list is not registered.");
            return rp->ErrorCode;
        }
    }
    return SF_KERR_NONE;
}

static int alter_queue(alter_op_t *op, const char *topic, const alter_p_t *p, alter_rp_t *rp) {
    sf_cluster_reassignment_t *r = &op->r[op->n];
    memset(r, 0, sizeof(*r));
    r->partition = p->PartitionIndex;
    if (!(r->topic = strdup(topic)))
        return SF_ERR_NOMEM;
    if (p->ReplicasCount > 0) {
        int32_t *v = malloc((size_t)p->ReplicasCount * sizeof(int32_t));
        if (!v) {
            free((char *)r->topic);
            return SF_ERR_NOMEM;
        }
        memcpy(v, p->Replicas, (size_t)p->ReplicasCount * sizeof(int32_t));
        r->replicas = v;
        r->nreplicas = p->ReplicasCount;
    }
    op->slot[op->n++] = rp;
    return SF_OK;
}

/* The results of every partition of @req into @resp, the moves to make into @op. */
static int alter_fill(sf_kreq_t *kr, alter_op_t *op, const sf_cluster_snapshot_t *snap,
                      const sf_proto_AlterPartitionReassignmentsRequest_t *req,
                      sf_proto_AlterPartitionReassignmentsResponse_t *resp) {
    int i, k;
    if (req->TopicsCount > 0 &&
        !(resp->Responses = sf_kreq_alloc(kr, (size_t)req->TopicsCount, sizeof(alter_rt_t))))
        return SF_ERR_NOMEM;
    resp->ResponsesCount = req->TopicsCount > 0 ? req->TopicsCount : 0;
    for (i = 0; i < resp->ResponsesCount; i++) {
        const sf_proto_AlterPartitionReassignmentsRequest_ReassignableTopic_t *tp = &req->Topics[i];
        alter_rt_t *rt = &resp->Responses[i];
        const char *topic = sf_kreq_str(kr, tp->Name);
        const sf_cluster_topic_t *t = topic ? sf_cluster_snapshot_topic(snap, topic) : NULL;
        sf_proto_AlterPartitionReassignmentsResponse_ReassignableTopicResponse_init(rt);
        rt->Name = tp->Name;
        if (tp->PartitionsCount > 0 &&
            !(rt->Partitions = sf_kreq_alloc(kr, (size_t)tp->PartitionsCount, sizeof(alter_rp_t))))
            return SF_ERR_NOMEM;
        rt->PartitionsCount = tp->PartitionsCount > 0 ? tp->PartitionsCount : 0;
        for (k = 0; k < rt->PartitionsCount; k++) {
            alter_rp_t *rp = &rt->Partitions[k];
            sf_proto_AlterPartitionReassignmentsResponse_ReassignablePartitionResponse_init(rp);
            rp->PartitionIndex = tp->Partitions[k].PartitionIndex;
            if (alter_check(snap, t, &tp->Partitions[k], rp) == SF_KERR_NONE &&
                alter_queue(op, topic, &tp->Partitions[k], rp) != SF_OK)
                return SF_ERR_NOMEM;
        }
    }
    return SF_OK;
}

void sf_kapi_AlterPartitionReassignments(sf_kreq_t *kr, void *msg) {
    const sf_proto_AlterPartitionReassignmentsRequest_t *req = msg;
    sf_cluster_t *cl = sf_broker_cluster(kr->b);
    const sf_cluster_snapshot_t *snap = cl ? sf_cluster_current(cl) : NULL;
    sf_proto_AlterPartitionReassignmentsResponse_t *resp = sf_kreq_alloc(kr, 1, sizeof(*resp));
    sf_pkey_t key = sf_pkey_metadata();
    alter_op_t *op = calloc(1, sizeof(*op));
    int i, n = 0, rc;
    for (i = 0; i < req->TopicsCount; i++)
        n += req->Topics[i].PartitionsCount > 0 ? req->Topics[i].PartitionsCount : 0;
    if (op) {
        op->r = calloc((size_t)n + 1, sizeof(*op->r));
        op->slot = calloc((size_t)n + 1, sizeof(*op->slot));
    }
    if (!resp || !op || !op->r || !op->slot) {
        if (op)
            alter_free(op);
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    op->kr = kr;
    op->resp = resp;
    sf_proto_AlterPartitionReassignmentsResponse_init(resp);
    if (!snap || !sf_cluster_is_controller(cl)) {
        resp->ErrorCode = SF_KERR_NOT_CONTROLLER;
        resp->ErrorMessage = sf_slice_cstr("This broker is not the controller.");
        alter_answer(op);
        alter_free(op);
        return;
    }
    if (alter_fill(kr, op, snap, req, resp) != SF_OK) {
        sf_kreq_close(kr, "no memory for the request");
        alter_free(op);
        return;
    }
    if (!op->n) {
        alter_answer(op);
        alter_free(op);
        return;
    }
    op->zk_pending = 1;
    if ((rc = sf_cluster_reassign(cl, op->r, op->n, alter_done, op)) != SF_OK) {
        alter_done(op, rc);
        return;
    }
    op->wait = sf_kreq_park(kr, &key, 1, SF_KSTATE_MAX_WAIT_MS, alter_timeout, op);
}

/* ---- ListPartitionReassignments ---- */

static int32_t *arena_ids(sf_kreq_t *kr, const int32_t *v, int n) {
    int32_t *out = sf_kreq_alloc(kr, (size_t)(n > 0 ? n : 1), sizeof(int32_t));
    if (out && n > 0)
        memcpy(out, v, (size_t)n * sizeof(int32_t));
    return out;
}

/* @t's partitions under reassignment (those in @parts, or all when @parts is NULL). */
static int list_topic(sf_kreq_t *kr, const sf_cluster_topic_t *t, sf_slice_t name,
                      const int32_t *parts, int nparts, list_rt_t *rt) {
    int i, n = parts ? nparts : t->npartitions;
    sf_proto_ListPartitionReassignmentsResponse_OngoingTopicReassignment_init(rt);
    rt->Name = name;
    if (n > 0 && !(rt->Partitions = sf_kreq_alloc(kr, (size_t)n, sizeof(list_rp_t))))
        return SF_ERR_NOMEM;
    for (i = 0; i < n; i++) {
        int32_t p = parts ? parts[i] : i;
        const sf_cluster_partition_t *cp;
        list_rp_t *rp;
        if (p < 0 || p >= t->npartitions ||
            !sf_cluster_partition_reassigning(cp = &t->partitions[p]))
            continue;
        rp = &rt->Partitions[rt->PartitionsCount++];
        sf_proto_ListPartitionReassignmentsResponse_OngoingPartitionReassignment_init(rp);
        rp->PartitionIndex = p;
        rp->Replicas = arena_ids(kr, cp->replicas, cp->nreplicas);
        rp->AddingReplicas = arena_ids(kr, cp->adding, cp->nadding);
        rp->RemovingReplicas = arena_ids(kr, cp->removing, cp->nremoving);
        if (!rp->Replicas || !rp->AddingReplicas || !rp->RemovingReplicas)
            return SF_ERR_NOMEM;
        rp->ReplicasCount = cp->nreplicas;
        rp->AddingReplicasCount = cp->nadding;
        rp->RemovingReplicasCount = cp->nremoving;
    }
    return SF_OK;
}

static int list_fill(sf_kreq_t *kr, const sf_cluster_snapshot_t *snap,
                     const sf_proto_ListPartitionReassignmentsRequest_t *req,
                     sf_proto_ListPartitionReassignmentsResponse_t *resp) {
    int all = req->TopicsCount < 0, n = all ? (int)snap->ntopics : req->TopicsCount, i, rc;
    if (n > 0 && !(resp->Topics = sf_kreq_alloc(kr, (size_t)n, sizeof(list_rt_t))))
        return SF_ERR_NOMEM;
    for (i = 0; i < n; i++) {
        const sf_cluster_topic_t *t;
        sf_slice_t name;
        list_rt_t *rt = &resp->Topics[resp->TopicsCount];
        if (all) {
            t = snap->topics[i];
            name = sf_slice_cstr(sf_kreq_str(kr, sf_slice_cstr(t->name)));
        } else {
            const char *s = sf_kreq_str(kr, req->Topics[i].Name);
            t = s ? sf_cluster_snapshot_topic(snap, s) : NULL;
            name = req->Topics[i].Name;
        }
        if (!t)
            continue;
        rc = all ? list_topic(kr, t, name, NULL, 0, rt)
                 : list_topic(kr, t, name, req->Topics[i].PartitionIndexes,
                              req->Topics[i].PartitionIndexesCount, rt);
        if (rc != SF_OK)
            return rc;
        if (rt->PartitionsCount > 0)
            resp->TopicsCount++;
    }
    return SF_OK;
}

void sf_kapi_ListPartitionReassignments(sf_kreq_t *kr, void *msg) {
    const sf_proto_ListPartitionReassignmentsRequest_t *req = msg;
    sf_cluster_t *cl = sf_broker_cluster(kr->b);
    const sf_cluster_snapshot_t *snap = cl ? sf_cluster_current(cl) : NULL;
    sf_proto_ListPartitionReassignmentsResponse_t *resp = sf_kreq_alloc(kr, 1, sizeof(*resp));
    if (!resp) {
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    sf_proto_ListPartitionReassignmentsResponse_init(resp);
    if (!snap || !sf_cluster_is_controller(cl)) {
        resp->ErrorCode = SF_KERR_NOT_CONTROLLER;
        resp->ErrorMessage = sf_slice_cstr("This broker is not the controller.");
    } else if (list_fill(kr, snap, req, resp) != SF_OK) {
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    sf_kreq_respond(kr, resp);
}
