/* DeleteRecords: move partitions' log start offsets (the records below become unreadable and
 * their whole segments are deleted). */
#include "dispatch.h"

#include <string.h>

#include "log.h"
#include "logging.h"
#include "topiccfg.h"

static void delete_partition(sf_kreq_t *kr, const char *topic,
                             const sf_proto_DeleteRecordsRequest_DeleteRecordsPartition_t *dp,
                             sf_proto_DeleteRecordsResponse_DeleteRecordsPartitionResult_t *rp) {
    sf_kerr_t kerr;
    sf_log_t *log = sf_kreq_leader_log(kr, topic, dp->PartitionIndex, &kerr);
    char policy[64];
    int rc;
    sf_proto_DeleteRecordsResponse_DeleteRecordsPartitionResult_init(rp);
    rp->PartitionIndex = dp->PartitionIndex;
    rp->LowWatermark = -1;
    if (!log) {
        rp->ErrorCode = kerr;
        return;
    }
    sf_topiccfg_get(sf_broker_topiccfg(kr->b), sf_kreq_topic(kr, topic), "cleanup.policy", policy,
                    sizeof(policy));
    if (strstr(policy, "compact") && !strstr(policy, "delete")) {
        /* As Kafka: a compacted log keeps the latest record of every key. */
        rp->ErrorCode = SF_KERR_POLICY_VIOLATION;
        return;
    }
    rc = sf_log_delete_records(log, dp->Offset, &rp->LowWatermark);
    rp->ErrorCode = sf_err_to_kerr(rc, SF_ERR_OP_READ);
    if (rc == SF_OK)
        sf_log(SF_LOG_INFO, "ADMIN", "%s: %s-%d starts at offset %lld now", sf_kreq_peer(kr),
               topic, dp->PartitionIndex, (long long)rp->LowWatermark);
}

void sf_kapi_DeleteRecords(sf_kreq_t *kr, void *msg) {
    const sf_proto_DeleteRecordsRequest_t *dreq = msg;
    sf_proto_DeleteRecordsResponse_t resp;
    int t, p;
    sf_proto_DeleteRecordsResponse_init(&resp);
    resp.Topics = sf_kreq_alloc(kr, (size_t)dreq->TopicsCount, sizeof(*resp.Topics));
    if (!resp.Topics)
        goto nomem;
    resp.TopicsCount = dreq->TopicsCount;
    for (t = 0; t < dreq->TopicsCount; t++) {
        const sf_proto_DeleteRecordsRequest_DeleteRecordsTopic_t *dt = &dreq->Topics[t];
        sf_proto_DeleteRecordsResponse_DeleteRecordsTopicResult_t *rt = &resp.Topics[t];
        const char *topic = sf_kreq_str(kr, dt->Name);
        rt->Name = dt->Name;
        rt->Partitions = sf_kreq_alloc(kr, (size_t)dt->PartitionsCount, sizeof(*rt->Partitions));
        if (!rt->Partitions || !topic)
            goto nomem;
        rt->PartitionsCount = dt->PartitionsCount;
        for (p = 0; p < dt->PartitionsCount; p++)
            delete_partition(kr, topic, &dt->Partitions[p], &rt->Partitions[p]);
    }
    sf_kreq_respond(kr, &resp);
    return;
nomem:
    sf_kreq_close(kr, "no memory for the response");
}
