/* OffsetForLeaderEpoch, every version (KIP-101, KIP-279, KIP-320): where a leader epoch ends
 * in the leader's log. Followers ask it to know where to truncate; consumers ask it after a
 * leader change to detect a log that lost what they had read. */
#include "dispatch.h"

#include "log.h"

/* The ReplicaId of a debugging tool (v3+): any replica held here answers, not only the
 * leader. */
#define DEBUGGING_REPLICA_ID (-2)

typedef sf_proto_OffsetForLeaderEpochRequest_OffsetForLeaderPartition_t epoch_req_t;
typedef sf_proto_OffsetForLeaderEpochResponse_EpochEndOffset_t epoch_end_t;

/* The log for one partition, or NULL with ep->ErrorCode set. */
static sf_log_t *partition_log(sf_kreq_t *kr, const char *topic, int debug,
                               const epoch_req_t *lp, epoch_end_t *ep, int *leader) {
    const sf_cluster_partition_t *cp = sf_kreq_partition(kr, topic, lp->Partition);
    sf_partition_t *part;
    sf_kerr_t kerr;
    part = sf_kreq_leader(kr, topic, lp->Partition, &kerr);
    *leader = part != NULL;
    if (!part && debug && kerr == SF_KERR_NOT_LEADER_OR_FOLLOWER)
        part = sf_view_partition(kr->view, topic, lp->Partition);
    if (!part) {
        ep->ErrorCode = kerr;
        return NULL;
    }
    if (lp->CurrentLeaderEpoch >= 0 && cp && lp->CurrentLeaderEpoch != cp->leader_epoch) {
        /* KIP-320: a client behind the leader's epoch was fenced; one ahead is early. */
        ep->ErrorCode = lp->CurrentLeaderEpoch < cp->leader_epoch ? SF_KERR_FENCED_LEADER_EPOCH
                                                                  : SF_KERR_UNKNOWN_LEADER_EPOCH;
        return NULL;
    }
    if (sf_log_offline(part->log)) {
        ep->ErrorCode = SF_KERR_KAFKA_STORAGE_ERROR;
        return NULL;
    }
    return part->log;
}

static void epoch_partition(sf_kreq_t *kr, const char *topic, int debug, const epoch_req_t *lp,
                            epoch_end_t *ep) {
    const sf_cluster_partition_t *cp;
    sf_log_t *log;
    int leader;
    sf_proto_OffsetForLeaderEpochResponse_EpochEndOffset_init(ep);
    ep->Partition = lp->Partition;
    if (!topic) {
        ep->ErrorCode = SF_KERR_UNKNOWN_SERVER_ERROR;
        return;
    }
    if (!(log = partition_log(kr, topic, debug, lp, ep, &leader)))
        return;
    cp = sf_kreq_partition(kr, topic, lp->Partition);
    if (leader && cp && lp->LeaderEpoch >= 0 && lp->LeaderEpoch == cp->leader_epoch) {
        /* The epoch being written to ends at the LEO, even before its first write. */
        ep->LeaderEpoch = lp->LeaderEpoch;
        ep->EndOffset = sf_log_end_offset(log);
        return;
    }
    /* Only the offsets held in memory are read: cheap enough for the worker. */
    sf_log_end_offset_for_epoch(log, lp->LeaderEpoch, &ep->LeaderEpoch, &ep->EndOffset);
}

void sf_kapi_OffsetForLeaderEpoch(sf_kreq_t *kr, void *msg) {
    const sf_proto_OffsetForLeaderEpochRequest_t *lreq = msg;
    sf_proto_OffsetForLeaderEpochResponse_t resp;
    /* ReplicaId is on the wire from v3; below, its default (-2) says nothing. */
    int debug = kr->version >= 3 && lreq->ReplicaId == DEBUGGING_REPLICA_ID;
    int t, p;

    sf_proto_OffsetForLeaderEpochResponse_init(&resp);
    resp.Topics = sf_kreq_alloc(kr, (size_t)lreq->TopicsCount, sizeof(*resp.Topics));
    if (!resp.Topics)
        goto nomem;
    resp.TopicsCount = lreq->TopicsCount;
    for (t = 0; t < lreq->TopicsCount; t++) {
        const sf_proto_OffsetForLeaderEpochRequest_OffsetForLeaderTopic_t *lt = &lreq->Topics[t];
        sf_proto_OffsetForLeaderEpochResponse_OffsetForLeaderTopicResult_t *rt = &resp.Topics[t];
        const char *topic = sf_kreq_str(kr, lt->Topic);
        rt->Topic = lt->Topic;
        rt->Partitions = sf_kreq_alloc(kr, (size_t)lt->PartitionsCount, sizeof(*rt->Partitions));
        if (!rt->Partitions)
            goto nomem;
        rt->PartitionsCount = lt->PartitionsCount;
        for (p = 0; p < lt->PartitionsCount; p++)
            epoch_partition(kr, topic, debug, &lt->Partitions[p], &rt->Partitions[p]);
    }
    sf_kreq_respond(kr, &resp);
    return;
nomem:
    sf_kreq_close(kr, "no memory for the response");
}
