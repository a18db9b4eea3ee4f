/* AlterPartition (on the controller): a partition leader asks to change its ISR. Checked as
 * Kafka's controller checks it (election_rules.h), written by the cluster module as versioned
 * state znode updates in one multi-op, answered from the ZooKeeper completion with each
 * partition's new state. The leader epoch stays (Kafka does not bump it for an ISR change); the
 * partition epoch is the state znode's new version. */
#include "dispatch.h"

#include <stdlib.h>
#include <string.h>

#include "election_rules.h"
#include "logging.h"
#include "state_write.h"

typedef sf_proto_AlterPartitionResponse_PartitionData_t alter_rp_t;

/* A partition's answer from a state. */
static void fill(alter_rp_t *rp, int32_t leader, int32_t epoch, int32_t *isr, int nisr,
                 int32_t version) {
    rp->LeaderId = leader;
    rp->LeaderEpoch = epoch;
    rp->Isr = isr;
    rp->IsrCount = nisr;
    rp->PartitionEpoch = version;
}

/* The outcome of a write (state_write.h). The ISR is the write's own: the answer is encoded
 * before the write is freed. */
static void fill_written(void *slot, const sf_cluster_partition_t *st, int32_t version,
                         int16_t kerr) {
    alter_rp_t *rp = slot;
    if (kerr == SF_KERR_NONE)
        fill(rp, st->leader, st->leader_epoch, st->isr, st->nisr, version);
    else
        rp->ErrorCode = kerr;
}

/* The new ISR of @pd (NewIsr before v3, NewIsrWithEpochs from v3) into the arena. */
static int new_isr(sf_kreq_t *kr, const sf_proto_AlterPartitionRequest_PartitionData_t *pd,
                   int32_t **isr, int64_t **epochs) {
    int i, n = kr->version >= 3 ? pd->NewIsrWithEpochsCount : pd->NewIsrCount;
    *epochs = NULL;
    if (kr->version < 3) {
        *isr = pd->NewIsr;
        return n;
    }
    *isr = sf_kreq_alloc(kr, (size_t)n, sizeof(int32_t));
    *epochs = sf_kreq_alloc(kr, (size_t)n, sizeof(int64_t));
    if (!*isr || !*epochs)
        return -1;
    for (i = 0; i < n; i++) {
        (*isr)[i] = pd->NewIsrWithEpochs[i].BrokerId;
        (*epochs)[i] = pd->NewIsrWithEpochs[i].BrokerEpoch;
    }
    return n;
}

/* One partition: checked, then answered now or queued for the write. */
/* 1 if the new ISR @isr (@n) adds a broker that is in controlled shutdown. */
static int adds_shutting_down(sf_kreq_t *kr, const sf_cluster_partition_t *part,
                              const int32_t *isr, int n) {
    sf_cluster_t *cl = sf_broker_cluster(kr->b);
    int i;
    for (i = 0; cl && i < n; i++)
        if (!sf_elect_has(part->isr, part->nisr, isr[i]) &&
            sf_cluster_broker_shutting_down(cl, isr[i]))
            return 1;
    return 0;
}

static void alter_one(sf_kreq_t *kr, sf_kstate_op_t *op,
                      const sf_proto_AlterPartitionRequest_t *req,
                      const sf_cluster_snapshot_t *snap, const sf_cluster_topic_t *t,
                      const sf_proto_AlterPartitionRequest_PartitionData_t *pd, alter_rp_t *rp) {
    const sf_cluster_partition_t *part;
    int32_t *isr;
    int64_t *epochs;
    int n;
    sf_proto_AlterPartitionResponse_PartitionData_init(rp);
    rp->PartitionIndex = pd->PartitionIndex;
    if (!t || pd->PartitionIndex < 0 || pd->PartitionIndex >= t->npartitions) {
        rp->ErrorCode = !t && kr->version >= 2 ? SF_KERR_UNKNOWN_TOPIC_ID
                                               : SF_KERR_UNKNOWN_TOPIC_OR_PARTITION;
        return;
    }
    part = &t->partitions[pd->PartitionIndex];
    if ((n = new_isr(kr, pd, &isr, &epochs)) < 0) {
        rp->ErrorCode = SF_KERR_UNKNOWN_SERVER_ERROR;
        return;
    }
    /* The ISR it has already (a retry after a lost answer): the current state, no write. */
    if (part->leader == req->BrokerId && pd->LeaderEpoch == part->leader_epoch &&
        sf_elect_same_set(isr, n, part->isr, part->nisr)) {
        /* A copy: the answer may come after the snapshot is gone. */
        int32_t *cur = sf_kreq_alloc(kr, (size_t)part->nisr, sizeof(int32_t));
        if (!cur) {
            rp->ErrorCode = SF_KERR_UNKNOWN_SERVER_ERROR;
            return;
        }
        if (part->nisr)
            memcpy(cur, part->isr, (size_t)part->nisr * sizeof(int32_t));
        fill(rp, part->leader, part->leader_epoch, cur, part->nisr, part->state_version);
        return;
    }
    rp->ErrorCode = sf_elect_alter_check(part, snap, req->BrokerId, pd->LeaderEpoch,
                                         pd->PartitionEpoch, isr, epochs, n);
    /* KIP-841: a broker in controlled shutdown is not added to an ISR. */
    if (rp->ErrorCode == SF_KERR_NONE && adds_shutting_down(kr, part, isr, n))
        rp->ErrorCode = SF_KERR_INELIGIBLE_REPLICA;
    /* Before v2 (KIP-841) Kafka answers that as OPERATION_NOT_ATTEMPTED. */
    if (rp->ErrorCode == SF_KERR_INELIGIBLE_REPLICA && kr->version < 2)
        rp->ErrorCode = SF_KERR_OPERATION_NOT_ATTEMPTED;
    /* Kafka: a leader still recovering from an unclean election is alone in its ISR. */
    if (rp->ErrorCode == SF_KERR_NONE &&
        (pd->LeaderRecoveryState < 0 || pd->LeaderRecoveryState > 1 ||
         (pd->LeaderRecoveryState == 1 && n > 1)))
        rp->ErrorCode = SF_KERR_INVALID_REQUEST;
    /* The leader epoch stays: Kafka does not bump it for an ISR change. */
    if (rp->ErrorCode == SF_KERR_NONE &&
        sf_kstate_op_add(op, t->name, part, part->leader, part->leader_epoch, isr, n, rp) !=
            SF_OK)
        rp->ErrorCode = SF_KERR_UNKNOWN_SERVER_ERROR;
}

/* The request's topics and partitions into @resp, with the writes they need in @op. */
static int alter_all(sf_kreq_t *kr, sf_kstate_op_t *op, const sf_proto_AlterPartitionRequest_t *req,
                     const sf_cluster_snapshot_t *snap, sf_proto_AlterPartitionResponse_t *resp) {
    int i, j;
    resp->Topics = sf_kreq_alloc(kr, (size_t)req->TopicsCount, sizeof(*resp->Topics));
    if (!resp->Topics && req->TopicsCount)
        return SF_ERR_NOMEM;
    resp->TopicsCount = req->TopicsCount;
    for (i = 0; i < req->TopicsCount; i++) {
        const sf_proto_AlterPartitionRequest_TopicData_t *td = &req->Topics[i];
        sf_proto_AlterPartitionResponse_TopicData_t *rt = &resp->Topics[i];
        const char *name = kr->version < 2 ? sf_kreq_str(kr, td->TopicName) : NULL;
        const sf_cluster_topic_t *t =
            kr->version < 2 ? (name ? sf_cluster_snapshot_topic(snap, name) : NULL)
                            : sf_cluster_snapshot_topic_by_id(snap, td->TopicId.b);
        sf_proto_AlterPartitionResponse_TopicData_init(rt);
        rt->TopicName = td->TopicName;
        rt->TopicId = td->TopicId;
        rt->Partitions = sf_kreq_alloc(kr, (size_t)td->PartitionsCount, sizeof(*rt->Partitions));
        if (!rt->Partitions && td->PartitionsCount)
            return SF_ERR_NOMEM;
        rt->PartitionsCount = td->PartitionsCount;
        for (j = 0; j < td->PartitionsCount; j++)
            alter_one(kr, op, req, snap, t, &td->Partitions[j], &rt->Partitions[j]);
    }
    return SF_OK;
}

/* The request-level error: not the controller, or a requester whose epoch is not current. */
static sf_kerr_t request_error(sf_cluster_t *cl, const sf_cluster_snapshot_t *snap,
                               const sf_proto_AlterPartitionRequest_t *req) {
    const sf_cluster_broker_t *b;
    if (!cl || !snap || !sf_cluster_is_controller(cl))
        return SF_KERR_NOT_CONTROLLER;
    b = sf_cluster_snapshot_broker(snap, req->BrokerId);
    if (!b || (req->BrokerEpoch >= 0 && req->BrokerEpoch != b->epoch))
        return SF_KERR_STALE_BROKER_EPOCH;
    return SF_KERR_NONE;
}

void sf_kapi_AlterPartition(sf_kreq_t *kr, void *msg) {
    const sf_proto_AlterPartitionRequest_t *req = msg;
    sf_cluster_t *cl = sf_broker_cluster(kr->b);
    /* The controller's own model: the newest state versions, not a thread's older view. */
    const sf_cluster_snapshot_t *snap = cl ? sf_cluster_current(cl) : NULL;
    sf_proto_AlterPartitionResponse_t *resp = sf_kreq_alloc(kr, 1, sizeof(*resp));
    sf_kstate_op_t *op;
    int i, total = 0;
    for (i = 0; i < req->TopicsCount; i++)
        total += req->Topics[i].PartitionsCount;
    if (!resp || !(op = sf_kstate_op_new(kr, resp, total, fill_written))) {
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    sf_proto_AlterPartitionResponse_init(resp);
    resp->ErrorCode = request_error(cl, snap, req);
    if (resp->ErrorCode != SF_KERR_NONE) {
        sf_log(SF_LOG_DEBUG, "CONTROLLER", "AlterPartition from broker %d refused: error %d",
               (int)req->BrokerId, (int)resp->ErrorCode);
        sf_kstate_op_abandon(op, NULL);
        return;
    }
    if (alter_all(kr, op, req, snap, resp) != SF_OK) {
        sf_kstate_op_abandon(op, "no memory for the request");
        return;
    }
    sf_kstate_op_run(op);
}
