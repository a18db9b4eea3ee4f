/* The producer APIs.
 *
 * InitProducerId, every version, on the metadata thread. A producer without a transactional
 * id (an idempotent producer) gets a new producer id at epoch 0 every time it asks, as from
 * Kafka's transaction coordinator (the ProducerId and ProducerEpoch of v3+ matter for
 * transactional ids only); the ids come from the block this broker reserved in ZooKeeper
 * (sf_cluster_producer_id). An empty transactional id is INVALID_REQUEST, as in Kafka; any
 * other goes to its transaction coordinator (txn.h), which bumps its epoch.
 *
 * DescribeProducers: the producer state of partitions this broker leads (producers.h), as
 * Kafka's leader reports it; NOT_LEADER_OR_FOLLOWER elsewhere. */
#include "dispatch.h"

#include <stdlib.h>

#include "broker.h"
#include "cluster.h"
#include "err.h"
#include "log.h"
#include "producers.h"
#include "txn.h"

typedef struct pid_op {
    sf_kreq_t *kr;
    int64_t id;
} pid_op_t;

static void answer_epoch(sf_kreq_t *kr, sf_kerr_t error, int64_t id, int16_t epoch) {
    sf_proto_InitProducerIdResponse_t resp;
    sf_proto_InitProducerIdResponse_init(&resp);
    resp.ErrorCode = error;
    resp.ProducerId = error ? -1 : id;
    resp.ProducerEpoch = error ? -1 : epoch;
    sf_kreq_respond(kr, &resp);
}

static void answer(sf_kreq_t *kr, sf_kerr_t error, int64_t id) {
    answer_epoch(kr, error, id, 0);
}

static void txn_initialised(void *arg, int16_t error, int64_t id, int16_t epoch) {
    answer_epoch(arg, error, id, epoch);
}

static sf_kerr_t pid_error(int err) {
    /* COORDINATOR_NOT_AVAILABLE is retriable for every client: ZooKeeper may come back. */
    return err == SF_OK ? SF_KERR_NONE : SF_KERR_COORDINATOR_NOT_AVAILABLE;
}

static void got_id(void *arg, int err) {
    pid_op_t *op = arg;
    answer(op->kr, pid_error(err), op->id);
}

void sf_kapi_InitProducerId(sf_kreq_t *kr, void *msg) {
    const sf_proto_InitProducerIdRequest_t *req = msg;
    pid_op_t *op;
    int rc;

    if (req->TransactionalId.p && req->TransactionalId.len >= 0) {
        sf_txn_coord_t *tc = sf_broker_txn_coordinator(kr->b);
        const char *id = sf_kreq_str(kr, req->TransactionalId);
        if (!tc || !id || !*id)
            answer(kr, id && !*id ? SF_KERR_INVALID_REQUEST : SF_KERR_COORDINATOR_NOT_AVAILABLE,
                   -1);
        else
            sf_txn_init_producer(tc, id, req->TransactionTimeoutMs,
                                 kr->version >= 3 ? req->ProducerId : -1,
                                 kr->version >= 3 ? req->ProducerEpoch : -1,
                                 kr->version < 4 ? SF_KERR_INVALID_PRODUCER_EPOCH
                                                 : SF_KERR_PRODUCER_FENCED,
                                 txn_initialised, kr);
        return;
    }
    if (!(op = sf_kreq_alloc(kr, 1, sizeof(*op)))) {
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    op->kr = kr;
    rc = sf_cluster_producer_id(sf_broker_cluster(kr->b), &op->id, got_id, op);
    if (rc != SF_AGAIN)
        answer(kr, pid_error(rc), op->id);
}

/* ---- DescribeProducers ---- */

static void describe_partition(sf_kreq_t *kr, const char *topic,
                               sf_proto_DescribeProducersResponse_PartitionResponse_t *rp) {
    sf_proto_DescribeProducersResponse_ProducerState_t *ps;
    sf_producer_t *v = NULL;
    sf_partition_t *part;
    sf_kerr_t kerr;
    size_t n = 0, i;
    if (!topic || !(part = sf_kreq_leader(kr, topic, rp->PartitionIndex, &kerr))) {
        rp->ErrorCode = topic ? kerr : SF_KERR_UNKNOWN_SERVER_ERROR;
        return;
    }
    if (sf_log_producers_list(part->log, &v, &n) != SF_OK ||
        !(ps = sf_kreq_alloc(kr, n ? n : 1, sizeof(*ps)))) {
        free(v);
        rp->ErrorCode = SF_KERR_UNKNOWN_SERVER_ERROR;
        return;
    }
    for (i = 0; i < n; i++) {
        sf_proto_DescribeProducersResponse_ProducerState_init(&ps[i]);
        ps[i].ProducerId = v[i].id;
        ps[i].ProducerEpoch = v[i].epoch;
        ps[i].LastSequence = v[i].nbatches ? v[i].batches[v[i].nbatches - 1].last_seq : -1;
        ps[i].LastTimestamp = v[i].last_timestamp;
        ps[i].CoordinatorEpoch = v[i].coordinator_epoch;
        ps[i].CurrentTxnStartOffset = v[i].txn_first_offset;
    }
    free(v);
    rp->ActiveProducers = ps;
    rp->ActiveProducersCount = (int32_t)n;
}

void sf_kapi_DescribeProducers(sf_kreq_t *kr, void *msg) {
    const sf_proto_DescribeProducersRequest_t *req = msg;
    sf_proto_DescribeProducersResponse_t resp;
    int t, p;
    sf_proto_DescribeProducersResponse_init(&resp);
    resp.Topics = sf_kreq_alloc(kr, (size_t)req->TopicsCount, sizeof(*resp.Topics));
    if (!resp.Topics && req->TopicsCount > 0)
        goto nomem;
    resp.TopicsCount = req->TopicsCount;
    for (t = 0; t < req->TopicsCount; t++) {
        const sf_proto_DescribeProducersRequest_TopicRequest_t *qt = &req->Topics[t];
        sf_proto_DescribeProducersResponse_TopicResponse_t *rt = &resp.Topics[t];
        const char *topic = sf_kreq_str(kr, qt->Name);
        sf_proto_DescribeProducersResponse_TopicResponse_init(rt);
        rt->Name = qt->Name;
        rt->Partitions = sf_kreq_alloc(kr, (size_t)qt->PartitionIndexesCount,
                                       sizeof(*rt->Partitions));
        if (!rt->Partitions && qt->PartitionIndexesCount > 0)
            goto nomem;
        rt->PartitionsCount = qt->PartitionIndexesCount;
        for (p = 0; p < qt->PartitionIndexesCount; p++) {
            sf_proto_DescribeProducersResponse_PartitionResponse_init(&rt->Partitions[p]);
            rt->Partitions[p].PartitionIndex = qt->PartitionIndexes[p];
            describe_partition(kr, topic, &rt->Partitions[p]);
        }
    }
    sf_kreq_respond(kr, &resp);
    return;
nomem:
    sf_kreq_close(kr, "no memory for the response");
}
