/* DeleteRecords: move partitions' log start offsets (the records below become unreadable and
 * their whole segments are deleted, on each partition's I/O thread). */
#include "dispatch.h"

#include <string.h>

#include "log.h"
#include "logging.h"
#include "topiccfg.h"

typedef struct delete_job {
    sf_kjob_t job;
    const char *topic;
    int64_t offset;
    sf_proto_DeleteRecordsResponse_DeleteRecordsPartitionResult_t *rp;
} delete_job_t;

static void delete_run(sf_kjob_t *job) {
    delete_job_t *dj = job->arg;
    int rc = sf_log_delete_records(job->part->log, dj->offset, &dj->rp->LowWatermark);
    dj->rp->ErrorCode = sf_err_to_kerr(rc, SF_ERR_OP_READ);
    if (rc == SF_OK)
        sf_log(SF_LOG_INFO, "ADMIN", "%s: %s-%d starts at offset %lld now", sf_kreq_peer(job->kr),
               dj->topic, dj->rp->PartitionIndex, (long long)dj->rp->LowWatermark);
}

static void delete_partition(sf_kreq_t *kr, const char *topic,
                             const sf_proto_DeleteRecordsRequest_DeleteRecordsPartition_t *dp,
                             sf_proto_DeleteRecordsResponse_DeleteRecordsPartitionResult_t *rp,
                             delete_job_t *dj) {
    sf_kerr_t kerr;
    sf_partition_t *part = sf_kreq_leader(kr, topic, dp->PartitionIndex, &kerr);
    char policy[64];
    if (!part) {
        rp->ErrorCode = kerr;
        return;
    }
    sf_topiccfg_get(sf_kreq_topiccfg(kr), sf_kreq_topic(kr, topic), "cleanup.policy", policy,
                    sizeof(policy));
    if (strstr(policy, "compact") && !strstr(policy, "delete")) {
        /* As Kafka: a compacted log keeps the latest record of every key. */
        rp->ErrorCode = SF_KERR_POLICY_VIOLATION;
        return;
    }
    dj->topic = topic;
    dj->offset = dp->Offset;
    dj->rp = rp;
    sf_kreq_job_submit(kr, &dj->job, part, delete_run, dj);
}

static void delete_done(sf_kreq_t *kr, void *arg) {
    sf_kreq_respond(kr, arg);
}

void sf_kapi_DeleteRecords(sf_kreq_t *kr, void *msg) {
    const sf_proto_DeleteRecordsRequest_t *dreq = msg;
    sf_proto_DeleteRecordsResponse_t *resp = sf_kreq_alloc(kr, 1, sizeof(*resp));
    int t, p;
    if (!resp)
        goto nomem;
    sf_proto_DeleteRecordsResponse_init(resp);
    resp->Topics = sf_kreq_alloc(kr, (size_t)dreq->TopicsCount, sizeof(*resp->Topics));
    if (!resp->Topics)
        goto nomem;
    resp->TopicsCount = dreq->TopicsCount;
    for (t = 0; t < dreq->TopicsCount; t++) {
        const sf_proto_DeleteRecordsRequest_DeleteRecordsTopic_t *dt = &dreq->Topics[t];
        sf_proto_DeleteRecordsResponse_DeleteRecordsTopicResult_t *rt = &resp->Topics[t];
        rt->Name = dt->Name;
        rt->Partitions = sf_kreq_alloc(kr, (size_t)dt->PartitionsCount, sizeof(*rt->Partitions));
        if (!rt->Partitions)
            goto nomem;
        rt->PartitionsCount = dt->PartitionsCount;
        for (p = 0; p < dt->PartitionsCount; p++) {
            sf_proto_DeleteRecordsResponse_DeleteRecordsPartitionResult_init(&rt->Partitions[p]);
            rt->Partitions[p].PartitionIndex = dt->Partitions[p].PartitionIndex;
            rt->Partitions[p].LowWatermark = -1;
        }
    }
    sf_kreq_jobs_begin(kr, delete_done, resp);
    for (t = 0; t < dreq->TopicsCount; t++) {
        const sf_proto_DeleteRecordsRequest_DeleteRecordsTopic_t *dt = &dreq->Topics[t];
        const char *topic = sf_kreq_str(kr, dt->Name);
        delete_job_t *jobs = sf_kreq_alloc(kr, (size_t)dt->PartitionsCount, sizeof(*jobs));
        for (p = 0; p < dt->PartitionsCount; p++) {
            if (!topic || !jobs)
                resp->Topics[t].Partitions[p].ErrorCode = SF_KERR_UNKNOWN_SERVER_ERROR;
            else
                delete_partition(kr, topic, &dt->Partitions[p], &resp->Topics[t].Partitions[p],
                                 &jobs[p]);
        }
    }
    sf_kreq_jobs_end(kr);
    return;
nomem:
    sf_kreq_close(kr, "no memory for the response");
}
