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

/* Longest the request waits for its ZooKeeper write before it is answered with a timeout. */
#define ALTER_MAX_WAIT_MS 30000

typedef sf_proto_AlterPartitionResponse_PartitionData_t alter_rp_t;

/* The request while its write is in flight. On the heap: the write may complete after the
 * request was answered (timeout, shutdown); freed when both happened. */
typedef struct alter_op {
    sf_kreq_t *kr;            /* NULL once answered */
    sf_proto_AlterPartitionResponse_t resp; /* arrays in the request arena */
    sf_cluster_state_write_t *w; /* the writes (heap; topics and ISRs in strs / isrs) */
    alter_rp_t **slot;        /* the response partition of each write */
    int n, cap;
    int zk_pending;
    sf_pwait_t *wait;
} alter_op_t;

static void op_free(alter_op_t *op) {
    int i;
    for (i = 0; i < op->n; i++) {
        free((char *)op->w[i].topic);
        free(op->w[i].st.isr);
    }
    free(op->w);
    free(op->slot);
    free(op);
}

static void answer(alter_op_t *op) {
    sf_kreq_respond(op->kr, &op->resp);
    op->kr = NULL; /* the arena (and the response arrays) are gone */
}

/* A partition's answer from a state. */
static void fill(alter_rp_t *rp, int32_t leader, int32_t epoch, int32_t *isr, int nisr,
                 int32_t version) {
    rp->LeaderId = leader;
    rp->LeaderEpoch = epoch;
    rp->Isr = isr;
    rp->IsrCount = nisr;
    rp->PartitionEpoch = version;
}

static void write_done(void *arg, int err) {
    alter_op_t *op = arg;
    int i;
    op->zk_pending = 0;
    if (!op->kr) {
        op_free(op);
        return;
    }
    for (i = 0; i < op->n; i++) {
        const sf_cluster_state_write_t *w = &op->w[i];
        alter_rp_t *rp = op->slot[i];
        int e = err == SF_OK ? w->err : err;
        if (e == SF_OK)
            fill(rp, w->st.leader, w->st.leader_epoch, w->st.isr, w->st.nisr, w->new_version);
        else
            rp->ErrorCode = e == SF_ERR_STATE && err == SF_OK ? SF_KERR_INVALID_UPDATE_VERSION
                            : e == SF_ERR_STATE      ? SF_KERR_NOT_CONTROLLER
                            : e == SF_ERR_NOTFOUND   ? SF_KERR_UNKNOWN_TOPIC_OR_PARTITION
                                                     : sf_err_to_kerr(e, SF_ERR_OP_REQUEST);
    }
    if (op->wait)
        sf_purgatory_cancel(sf_broker_purgatory(op->kr->b), op->wait);
    op->wait = NULL;
    answer(op);
    op_free(op);
}

static int attempt(void *arg, int final) {
    alter_op_t *op = arg;
    int i;
    if (!final)
        return 0;
    op->wait = NULL;
    for (i = 0; i < op->n; i++)
        op->slot[i]->ErrorCode = SF_KERR_REQUEST_TIMED_OUT;
    answer(op);
    if (!op->zk_pending)
        op_free(op);
    return 1;
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

/* Queue the write of @part's new ISR, answered into @rp. */
static int add_write(alter_op_t *op, const char *topic, const sf_cluster_partition_t *part,
                     const int32_t *isr, int n, alter_rp_t *rp) {
    sf_cluster_state_write_t *w = &op->w[op->n];
    memset(w, 0, sizeof(*w));
    w->topic = strdup(topic);
    w->st.isr = malloc((size_t)n * sizeof(int32_t));
    if (!w->topic || !w->st.isr) {
        free((char *)w->topic);
        free(w->st.isr);
        return SF_ERR_NOMEM;
    }
    memcpy(w->st.isr, isr, (size_t)n * sizeof(int32_t));
    w->st.nisr = n;
    w->st.partition = part->partition;
    w->st.leader = part->leader;
    w->st.leader_epoch = part->leader_epoch;
    w->version = part->state_version;
    op->slot[op->n++] = rp;
    return SF_OK;
}

/* One partition: checked, then answered now or queued for the write. */
static void alter_one(alter_op_t *op, const sf_proto_AlterPartitionRequest_t *req,
                      const sf_cluster_snapshot_t *snap, const sf_cluster_topic_t *t,
                      const sf_proto_AlterPartitionRequest_PartitionData_t *pd, alter_rp_t *rp) {
    sf_kreq_t *kr = op->kr;
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
    /* Kafka: a leader still recovering from an unclean election is alone in its ISR. */
    if (rp->ErrorCode == SF_KERR_NONE &&
        (pd->LeaderRecoveryState < 0 || pd->LeaderRecoveryState > 1 ||
         (pd->LeaderRecoveryState == 1 && n > 1)))
        rp->ErrorCode = SF_KERR_INVALID_REQUEST;
    if (rp->ErrorCode == SF_KERR_NONE && add_write(op, t->name, part, isr, n, rp) != SF_OK)
        rp->ErrorCode = SF_KERR_UNKNOWN_SERVER_ERROR;
}

/* The request's topics and partitions into op->resp, with the writes they need. */
static int alter_all(alter_op_t *op, const sf_proto_AlterPartitionRequest_t *req,
                     const sf_cluster_snapshot_t *snap) {
    sf_kreq_t *kr = op->kr;
    int i, j, total = 0;
    for (i = 0; i < req->TopicsCount; i++)
        total += req->Topics[i].PartitionsCount;
    op->w = calloc((size_t)total + 1, sizeof(*op->w));
    op->slot = calloc((size_t)total + 1, sizeof(*op->slot));
    op->resp.Topics = sf_kreq_alloc(kr, (size_t)req->TopicsCount, sizeof(*op->resp.Topics));
    if (!op->w || !op->slot || !op->resp.Topics)
        return SF_ERR_NOMEM;
    op->resp.TopicsCount = req->TopicsCount;
    for (i = 0; i < req->TopicsCount; i++) {
        const sf_proto_AlterPartitionRequest_TopicData_t *td = &req->Topics[i];
        sf_proto_AlterPartitionResponse_TopicData_t *rt = &op->resp.Topics[i];
        const char *name = kr->version < 2 ? sf_kreq_str(kr, td->TopicName) : NULL;
        const sf_cluster_topic_t *t =
            kr->version < 2 ? (name ? sf_cluster_snapshot_topic(snap, name) : NULL)
                            : sf_cluster_snapshot_topic_by_id(snap, td->TopicId.b);
        sf_proto_AlterPartitionResponse_TopicData_init(rt);
        rt->TopicName = td->TopicName;
        rt->TopicId = td->TopicId;
        rt->Partitions = sf_kreq_alloc(kr, (size_t)td->PartitionsCount, sizeof(*rt->Partitions));
        if (!rt->Partitions)
            return SF_ERR_NOMEM;
        rt->PartitionsCount = td->PartitionsCount;
        for (j = 0; j < td->PartitionsCount; j++)
            alter_one(op, req, snap, t, &td->Partitions[j], &rt->Partitions[j]);
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

static void alter_run(alter_op_t *op) {
    sf_cluster_t *cl = sf_broker_cluster(op->kr->b);
    sf_pkey_t key = sf_pkey_metadata();
    int rc;
    if (!op->n) {
        answer(op);
        op_free(op);
        return;
    }
    rc = sf_cluster_alter_isr(cl, op->w, op->n, write_done, op);
    if (rc != SF_OK) {
        op->zk_pending = 1; /* answer it as a completion would */
        write_done(op, rc);
        return;
    }
    op->zk_pending = 1;
    op->wait = sf_kreq_park(op->kr, &key, 1, ALTER_MAX_WAIT_MS, attempt, op);
}

void sf_kapi_AlterPartition(sf_kreq_t *kr, void *msg) {
    const sf_proto_AlterPartitionRequest_t *req = msg;
    sf_cluster_t *cl = sf_broker_cluster(kr->b);
    /* The controller's own model: the newest state versions, not a thread's older view. */
    const sf_cluster_snapshot_t *snap = cl ? sf_cluster_current(cl) : NULL;
    alter_op_t *op = calloc(1, sizeof(*op));
    if (!op) {
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    op->kr = kr;
    sf_proto_AlterPartitionResponse_init(&op->resp);
    op->resp.ErrorCode = request_error(cl, snap, req);
    if (op->resp.ErrorCode != SF_KERR_NONE) {
        sf_log(SF_LOG_DEBUG, "CONTROLLER", "AlterPartition from broker %d refused: error %d",
               (int)req->BrokerId, (int)op->resp.ErrorCode);
        answer(op);
        op_free(op);
        return;
    }
    if (alter_all(op, req, snap) != SF_OK) {
        sf_kreq_close(kr, "no memory for the request");
        op_free(op);
        return;
    }
    alter_run(op);
}
