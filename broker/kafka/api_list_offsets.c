/* ListOffsets, every version: the offset for a timestamp, or for one of the special ones. */
#include "dispatch.h"

#include "log.h"

/* The special timestamps of ListOffsets. */
#define LATEST (-1)
#define EARLIEST (-2)
#define MAX_TIMESTAMP (-3)   /* v7+: the record with the largest timestamp (KIP-734) */
#define EARLIEST_LOCAL (-4)  /* v8+: the first offset on local disk (KIP-405) */
#define LATEST_TIERED (-5)   /* v9+: the last offset in tiered storage */

/* Fill @rp for one partition of a log this broker leads. */
static void lookup(sf_log_t *log, int64_t ts, sf_proto_ListOffsetsResponse_ListOffsetsPartitionResponse_t *rp) {
    int64_t off, found;
    int rc;
    switch (ts) {
    case EARLIEST:
    case EARLIEST_LOCAL:
        rp->Offset = sf_log_start_offset(log);
        return;
    case LATEST:
        /* read_uncommitted and read_committed alike: no transactions, LSO = HW. */
        rp->Offset = sf_log_high_watermark(log);
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
    if (rc == SF_OK && off < sf_log_high_watermark(log)) {
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

static void list_partition(sf_kreq_t *kr, const char *topic,
                           const sf_proto_ListOffsetsRequest_ListOffsetsPartition_t *lp,
                           sf_proto_ListOffsetsResponse_ListOffsetsPartitionResponse_t *rp) {
    const sf_cluster_partition_t *cp = sf_kreq_partition(kr, topic, lp->PartitionIndex);
    sf_kerr_t kerr;
    sf_log_t *log = sf_kreq_leader_log(kr, topic, lp->PartitionIndex, &kerr);
    sf_proto_ListOffsetsResponse_ListOffsetsPartitionResponse_init(rp);
    rp->PartitionIndex = lp->PartitionIndex;
    if (!log) {
        rp->ErrorCode = kerr;
        return;
    }
    if (lp->CurrentLeaderEpoch >= 0 && cp && lp->CurrentLeaderEpoch != cp->leader_epoch) {
        rp->ErrorCode = lp->CurrentLeaderEpoch < cp->leader_epoch ? SF_KERR_FENCED_LEADER_EPOCH
                                                                  : SF_KERR_UNKNOWN_LEADER_EPOCH;
        return;
    }
    lookup(log, lp->Timestamp, rp);
    if (cp && rp->ErrorCode == SF_KERR_NONE && rp->Offset >= 0)
        rp->LeaderEpoch = cp->leader_epoch;
}

void sf_kapi_ListOffsets(sf_kreq_t *kr, void *msg) {
    const sf_proto_ListOffsetsRequest_t *lreq = msg;
    sf_proto_ListOffsetsResponse_t resp;
    int t, p;

    sf_proto_ListOffsetsResponse_init(&resp);
    resp.Topics = sf_kreq_alloc(kr, (size_t)lreq->TopicsCount, sizeof(*resp.Topics));
    if (!resp.Topics)
        goto nomem;
    resp.TopicsCount = lreq->TopicsCount;
    for (t = 0; t < lreq->TopicsCount; t++) {
        const sf_proto_ListOffsetsRequest_ListOffsetsTopic_t *lt = &lreq->Topics[t];
        sf_proto_ListOffsetsResponse_ListOffsetsTopicResponse_t *rt = &resp.Topics[t];
        const char *topic = sf_kreq_str(kr, lt->Name);
        rt->Name = lt->Name;
        rt->Partitions = sf_kreq_alloc(kr, (size_t)lt->PartitionsCount, sizeof(*rt->Partitions));
        if (!rt->Partitions || !topic)
            goto nomem;
        rt->PartitionsCount = lt->PartitionsCount;
        for (p = 0; p < lt->PartitionsCount; p++) {
            list_partition(kr, topic, &lt->Partitions[p], &rt->Partitions[p]);
            if (kr->version == 0 && old_style(kr, &lt->Partitions[p], &rt->Partitions[p]))
                goto nomem;
        }
    }
    sf_kreq_respond(kr, &resp);
    return;
nomem:
    sf_kreq_close(kr, "no memory for the response");
}
