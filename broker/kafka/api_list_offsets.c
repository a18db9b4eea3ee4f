/* ListOffsets, every version: the offset for a timestamp, or for one of the special ones. */
#include "dispatch.h"

#include "log.h"

/* The special timestamps of ListOffsets. */
#define LATEST (-1)
#define EARLIEST (-2)
#define MAX_TIMESTAMP (-3)   /* v7+: the record with the largest timestamp (KIP-734) */
#define EARLIEST_LOCAL (-4)  /* v8+: the first offset on local disk (KIP-405) */
#define LATEST_TIERED (-5)   /* v9+: the last offset in tiered storage */

/* Fill @rp for one partition of a log this broker leads; @committed: read_committed
 * (IsolationLevel 1), which sees only what lies below the last stable offset. */
static void lookup(sf_log_t *log, int64_t ts, int committed,
                   sf_proto_ListOffsetsResponse_ListOffsetsPartitionResponse_t *rp) {
    int64_t off, found, visible;
    int rc;
    if (sf_log_offline(log)) {
        rp->ErrorCode = SF_KERR_KAFKA_STORAGE_ERROR; /* its offsets are not known for sure */
        return;
    }
    switch (ts) {
    case EARLIEST:
    case EARLIEST_LOCAL:
        rp->Offset = sf_log_start_offset(log);
        return;
    case LATEST:
        rp->Offset = committed ? sf_log_last_stable_offset(log) : sf_log_high_watermark(log);
        return;
    case LATEST_TIERED:
        return; /* no tiered storage: -1, as Kafka answers without it */
    case MAX_TIMESTAMP:
        rc = sf_log_max_timestamp(log, &off, &found);
        /* The log knows the batch that holds the largest timestamp (its last offset, as the
         * time index keeps it); Kafka answers the first record carrying it (KAFKA-16310). */
        if (rc == SF_OK)
            rc = sf_log_offset_for_timestamp(log, found, &off, &found);
        break;
    default:
        rc = ts < 0 ? SF_ERR_NOTFOUND : sf_log_offset_for_timestamp(log, ts, &off, &found);
    }
    /* As Kafka's fetchOffsetByTimestamp: an offset the isolation level cannot read yet is
     * not an answer. */
    visible = committed ? sf_log_last_stable_offset(log) : sf_log_high_watermark(log);
    if (rc == SF_OK && off < visible) {
        rp->Offset = off;
        rp->Timestamp = found;
    } else if (rc != SF_OK && rc != SF_ERR_NOTFOUND) {
        rp->ErrorCode = SF_KERR_KAFKA_STORAGE_ERROR;
    }
    /* Not found: offset and timestamp -1, as Kafka answers. */
}

/* v0 answers a list: the offset found, at most MaxNumOffsets of them. */
static int old_style(sf_kreq_t *kr, const sf_proto_ListOffsetsRequest_ListOffsetsPartition_t *lp,
                     sf_proto_ListOffsetsResponse_ListOffsetsPartitionResponse_t *rp) {
    if (rp->ErrorCode || rp->Offset < 0 || lp->MaxNumOffsets <= 0)
        return SF_OK;
    if (!(rp->OldStyleOffsets = sf_kreq_alloc(kr, 1, sizeof(int64_t))))
        return SF_ERR_NOMEM;
    rp->OldStyleOffsets[0] = rp->Offset;
    rp->OldStyleOffsetsCount = 1;
    return SF_OK;
}

/* A lookup that reads the log (a timestamp): on the partition's I/O thread. */
typedef struct lookup_job {
    sf_kjob_t job;
    int64_t timestamp;
    int32_t leader_epoch;
    int committed; /* IsolationLevel 1 */
    sf_proto_ListOffsetsResponse_ListOffsetsPartitionResponse_t *rp;
} lookup_job_t;

static void lookup_fill(sf_log_t *log, lookup_job_t *lj) {
    lookup(log, lj->timestamp, lj->committed, lj->rp);
    if (lj->rp->ErrorCode == SF_KERR_NONE && lj->rp->Offset >= 0)
        lj->rp->LeaderEpoch = lj->leader_epoch;
}

static void lookup_run(sf_kjob_t *job) {
    lookup_fill(job->part->log, job->arg);
}

static void list_partition(sf_kreq_t *kr, const char *topic, int committed,
                           const sf_proto_ListOffsetsRequest_ListOffsetsPartition_t *lp,
                           sf_proto_ListOffsetsResponse_ListOffsetsPartitionResponse_t *rp,
                           lookup_job_t *lj) {
    const sf_cluster_partition_t *cp = sf_kreq_partition(kr, topic, lp->PartitionIndex);
    sf_kerr_t kerr;
    sf_partition_t *part = sf_kreq_leader(kr, topic, lp->PartitionIndex, &kerr);
    sf_proto_ListOffsetsResponse_ListOffsetsPartitionResponse_init(rp);
    rp->PartitionIndex = lp->PartitionIndex;
    if (!part) {
        rp->ErrorCode = kerr;
        return;
    }
    if (lp->CurrentLeaderEpoch >= 0 && cp && lp->CurrentLeaderEpoch != cp->leader_epoch) {
        rp->ErrorCode = lp->CurrentLeaderEpoch < cp->leader_epoch ? SF_KERR_FENCED_LEADER_EPOCH
                                                                  : SF_KERR_UNKNOWN_LEADER_EPOCH;
        return;
    }
    lj->timestamp = lp->Timestamp;
    lj->committed = committed;
    lj->leader_epoch = cp ? cp->leader_epoch : -1;
    lj->rp = rp;
    if (lp->Timestamp >= 0 || lp->Timestamp == MAX_TIMESTAMP)
        sf_kreq_job_submit(kr, &lj->job, part, lookup_run, lj); /* reads the indexes and log */
    else
        lookup_fill(part->log, lj); /* offsets kept in memory */
}

typedef struct list_op {
    const sf_proto_ListOffsetsRequest_t *lreq;
    sf_proto_ListOffsetsResponse_t resp;
} list_op_t;

static void list_done(sf_kreq_t *kr, void *arg) {
    list_op_t *op = arg;
    int t, p;
    for (t = 0; kr->version == 0 && t < op->resp.TopicsCount; t++)
        for (p = 0; p < op->resp.Topics[t].PartitionsCount; p++)
            if (old_style(kr, &op->lreq->Topics[t].Partitions[p], &op->resp.Topics[t].Partitions[p])) {
                sf_kreq_close(kr, "no memory for the response");
                return;
            }
    sf_kreq_respond(kr, &op->resp);
}

void sf_kapi_ListOffsets(sf_kreq_t *kr, void *msg) {
    const sf_proto_ListOffsetsRequest_t *lreq = msg;
    list_op_t *op = sf_kreq_alloc(kr, 1, sizeof(*op));
    int t, p;

    if (!op)
        goto nomem;
    op->lreq = lreq;
    sf_proto_ListOffsetsResponse_init(&op->resp);
    op->resp.Topics = sf_kreq_alloc(kr, (size_t)lreq->TopicsCount, sizeof(*op->resp.Topics));
    if (!op->resp.Topics)
        goto nomem;
    op->resp.TopicsCount = lreq->TopicsCount;
    for (t = 0; t < lreq->TopicsCount; t++) {
        sf_proto_ListOffsetsResponse_ListOffsetsTopicResponse_t *rt = &op->resp.Topics[t];
        rt->Name = lreq->Topics[t].Name;
        rt->Partitions = sf_kreq_alloc(kr, (size_t)lreq->Topics[t].PartitionsCount,
                                       sizeof(*rt->Partitions));
        if (!rt->Partitions)
            goto nomem;
        rt->PartitionsCount = lreq->Topics[t].PartitionsCount;
    }
    sf_kreq_jobs_begin(kr, list_done, op);
    for (t = 0; t < lreq->TopicsCount; t++) {
        const sf_proto_ListOffsetsRequest_ListOffsetsTopic_t *lt = &lreq->Topics[t];
        sf_proto_ListOffsetsResponse_ListOffsetsTopicResponse_t *rt = &op->resp.Topics[t];
        const char *topic = sf_kreq_str(kr, lt->Name);
        lookup_job_t *jobs = sf_kreq_alloc(kr, (size_t)lt->PartitionsCount, sizeof(*jobs));
        for (p = 0; p < lt->PartitionsCount; p++) {
            if (!topic || !jobs) {
                sf_proto_ListOffsetsResponse_ListOffsetsPartitionResponse_init(&rt->Partitions[p]);
                rt->Partitions[p].PartitionIndex = lt->Partitions[p].PartitionIndex;
                rt->Partitions[p].ErrorCode = SF_KERR_UNKNOWN_SERVER_ERROR;
                continue;
            }
            list_partition(kr, topic, kr->version >= 2 && lreq->IsolationLevel == 1,
                           &lt->Partitions[p], &rt->Partitions[p], &jobs[p]);
        }
    }
    sf_kreq_jobs_end(kr);
    return;
nomem:
    sf_kreq_close(kr, "no memory for the response");
}
