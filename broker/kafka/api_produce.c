/* Produce, every version: validate each partition's records (validator.c), append them to
 * the leader's log, and wake the fetches waiting on it. */
#include "dispatch.h"

#include "brokercfg.h"
#include "clock.h"
#include "log.h"
#include "logging.h"
#include "validator.h"

/* The largest records section one batch may decompress to. */
#define PRODUCE_MAX_DECOMPRESSED (64 * 1024 * 1024)

/* NOT_LEADER_OR_FOLLOWER from v10: where the leader is (KIP-951). */
static void leader_hint(sf_kreq_t *kr, const char *topic,
                        sf_proto_ProduceResponse_PartitionProduceResponse_t *rp) {
    const sf_cluster_partition_t *cp = sf_kreq_partition(kr, topic, rp->Index);
    if (cp && cp->leader >= 0) {
        rp->CurrentLeader.LeaderId = cp->leader;
        rp->CurrentLeader.LeaderEpoch = cp->leader_epoch;
    }
}

/* The append path of one partition; fills @rp. */
static void produce_partition(sf_kreq_t *kr, const sf_proto_ProduceRequest_t *preq,
                              const char *topic,
                              const sf_proto_ProduceRequest_PartitionProduceData_t *pp,
                              sf_proto_ProduceResponse_PartitionProduceResponse_t *rp,
                              int64_t now) {
    const sf_cluster_partition_t *cp;
    sf_validate_result_t vr;
    sf_validate_cfg_t vc;
    sf_log_append_info_t info;
    sf_log_config_t lc;
    sf_wbuf_t rebuilt;
    sf_kerr_t kerr;
    sf_log_t *log;
    int rc;

    if (preq->Acks != 0 && preq->Acks != 1 && preq->Acks != -1) {
        rp->ErrorCode = SF_KERR_INVALID_REQUIRED_ACKS;
        return;
    }
    if (!(log = sf_kreq_leader_log(kr, topic, pp->Index, &kerr))) {
        rp->ErrorCode = kerr;
        if (kerr == SF_KERR_NOT_LEADER_OR_FOLLOWER)
            leader_hint(kr, topic, rp);
        return;
    }
    sf_log_get_config(log, &lc);
    cp = sf_kreq_partition(kr, topic, pp->Index);
    if (preq->Acks == -1 && cp && cp->nisr < lc.min_insync_replicas) {
        rp->ErrorCode = SF_KERR_NOT_ENOUGH_REPLICAS;
        return;
    }
    if (pp->Records.len <= 0) {
        rp->ErrorCode = SF_KERR_INVALID_RECORD; /* "at least one record batch", as Kafka */
        return;
    }
    vc.produce_version = kr->version;
    vc.log_append_time = lc.log_append_time;
    vc.codec = lc.compression;
    vc.level = lc.compression_level;
    vc.compacted = lc.compacted;
    vc.now_ms = now;
    vc.before_max_ms = lc.timestamp_before_max_ms;
    vc.after_max_ms = lc.timestamp_after_max_ms;
    vc.max_decompressed = PRODUCE_MAX_DECOMPRESSED;
    sf_wbuf_init(&rebuilt);
    /* The request buffer is the connection's own mutable frame: batches are fixed in place. */
    rc = sf_validate_produce((uint8_t *)pp->Records.p, (size_t)pp->Records.len, &vc, &rebuilt, &vr);
    if (rc == SF_OK)
        rc = sf_log_append(log, vr.batches, vr.len, now, &info);
    sf_wbuf_free(&rebuilt);
    if (rc != SF_OK) {
        rp->ErrorCode = sf_err_to_kerr(rc, SF_ERR_OP_APPEND);
        rp->ErrorMessage = sf_slice_cstr(vr.message);
        if (rc == SF_ERR_RECORD && vr.bad_batch >= 0 &&
            (rp->RecordErrors = sf_kreq_alloc(kr, 1, sizeof(*rp->RecordErrors)))) {
            rp->RecordErrorsCount = 1;
            rp->RecordErrors[0].BatchIndex = vr.bad_batch;
            rp->RecordErrors[0].BatchIndexErrorMessage = sf_slice_cstr(vr.message);
        }
        sf_log(SF_LOG_INFO, "PRODUCE", "%s: %s-%d: records refused: %s", sf_kreq_peer(kr), topic,
               pp->Index, vr.message ? vr.message : sf_err_str(rc));
        return;
    }
    sf_purgatory_notify(sf_broker_purgatory(kr->b), sf_pkey_partition(log));
    rp->BaseOffset = info.FirstOffset;
    rp->LogAppendTimeMs = vr.log_append_time;
    rp->LogStartOffset = info.LogStartOffset;
}

void sf_kapi_Produce(sf_kreq_t *kr, void *msg) {
    const sf_proto_ProduceRequest_t *preq = msg;
    sf_proto_ProduceResponse_t resp;
    int64_t now = sf_clock_wall_ms();
    int t, p, failed = 0;

    sf_proto_ProduceResponse_init(&resp);
    resp.Responses = sf_kreq_alloc(kr, (size_t)preq->TopicDataCount, sizeof(*resp.Responses));
    if (!resp.Responses)
        goto nomem;
    resp.ResponsesCount = preq->TopicDataCount;
    for (t = 0; t < preq->TopicDataCount; t++) {
        const sf_proto_ProduceRequest_TopicProduceData_t *pt = &preq->TopicData[t];
        sf_proto_ProduceResponse_TopicProduceResponse_t *rt = &resp.Responses[t];
        const char *topic = sf_kreq_str(kr, pt->Name);
        rt->Name = pt->Name;
        rt->PartitionResponses = sf_kreq_alloc(kr, (size_t)pt->PartitionDataCount,
                                               sizeof(*rt->PartitionResponses));
        if (!rt->PartitionResponses || !topic)
            goto nomem;
        rt->PartitionResponsesCount = pt->PartitionDataCount;
        for (p = 0; p < pt->PartitionDataCount; p++) {
            sf_proto_ProduceResponse_PartitionProduceResponse_t *rp = &rt->PartitionResponses[p];
            sf_proto_ProduceResponse_PartitionProduceResponse_init(rp);
            rp->Index = pt->PartitionData[p].Index;
            rp->BaseOffset = -1;
            produce_partition(kr, preq, topic, &pt->PartitionData[p], rp, now);
            failed |= rp->ErrorCode != SF_KERR_NONE;
        }
    }
    if (preq->Acks == 0) {
        /* No answer is expected; as Kafka does, a refused partition closes the connection, so
         * the producer notices and refreshes its metadata. */
        if (failed)
            sf_kreq_close(kr, "acks=0 produce refused for a partition");
        else
            sf_kreq_respond_none(kr);
        return;
    }
    sf_kreq_respond(kr, &resp);
    return;
nomem:
    sf_kreq_close(kr, "no memory for the response");
}
