/* Produce, every version: check each partition here, then validate its records
 * (validator.c) and append them to the leader's log on the partition's I/O thread (where the
 * producer state deduplicates idempotent producers' retries, producers.h), waking
 * the fetches waiting on it; answer when every partition is done. With acks=all, a
 * replicated partition is done once its high watermark passed the batch (every ISR member
 * has it): the request waits in the purgatory for that (leader.h).
 * A transactional batch that would begin its producer's transaction on a partition is first
 * verified with the transaction coordinator (KIP-890, verify.h): those partitions are
 * appended in a second round, once the coordinator confirmed them. */
#include "dispatch.h"

#include "brokercfg.h"
#include "clock.h"
#include "leader.h"
#include "log.h"
#include "logging.h"
#include "metrics.h"
#include "validator.h"
#include "verify.h"

/* The largest records section one batch may decompress to. */
#define PRODUCE_MAX_DECOMPRESSED (64 * 1024 * 1024)

typedef struct produce_job produce_job_t;

typedef struct produce_op {
    sf_kreq_t *kr;
    const sf_proto_ProduceRequest_t *preq;
    sf_proto_ProduceResponse_t resp;
    int64_t now;
    produce_job_t *jobs; /* one per partition of the request */
    int njobs;
    atomic_int waiting;  /* partitions whose acks=all wait for the ISR */
    atomic_int verifying; /* partitions waiting for their transaction's coordinator */
    produce_job_t **vjobs; /* ... those, while it is asked */
    sf_txn_tp_t *vparts;
    sf_mail_t home;      /* the move back to the worker to wait there */
} produce_op_t;

/* One partition's append, on its I/O thread. */
struct produce_job {
    sf_kjob_t job;
    produce_op_t *op;
    const char *topic;
    int64_t wait_offset; /* acks=all: answered once the high watermark reaches it (0: not) */
    const sf_log_t *log; /* ... of this log (compared, never followed once the view moved on) */
    const sf_proto_ProduceRequest_PartitionProduceData_t *pp;
    sf_proto_ProduceResponse_PartitionProduceResponse_t *rp;
    sf_proto_ProduceResponse_BatchIndexAndErrorMessage_t record_error;
    uint64_t guard;      /* the transaction verification its append presents (0: none) */
    int verify;          /* 1 while its transaction is being verified */
    int16_t verify_err;  /* ... and the coordinator's answer */
    int64_t producer_id; /* the batch's producer, when verified */
    int16_t producer_epoch;
};

/* NOT_LEADER_OR_FOLLOWER from v10: where the leader is (KIP-951). */
static void leader_hint(sf_kreq_t *kr, const char *topic,
                        sf_proto_ProduceResponse_PartitionProduceResponse_t *rp) {
    const sf_cluster_partition_t *cp = sf_kreq_partition(kr, topic, rp->Index);
    if (cp && cp->leader >= 0) {
        rp->CurrentLeader.LeaderId = cp->leader;
        rp->CurrentLeader.LeaderEpoch = cp->leader_epoch;
    }
}

static void validate_cfg(const sf_kreq_t *kr, const sf_log_config_t *lc, int64_t now,
                         sf_validate_cfg_t *vc) {
    vc->produce_version = kr->version;
    vc->log_append_time = lc->log_append_time;
    vc->codec = lc->compression;
    vc->level = lc->compression_level;
    vc->compacted = lc->compacted;
    vc->now_ms = now;
    vc->before_max_ms = lc->timestamp_before_max_ms;
    vc->after_max_ms = lc->timestamp_after_max_ms;
    vc->max_decompressed = PRODUCE_MAX_DECOMPRESSED;
}

/* KIP-890: 1 when the batch is transactional and may begin its producer's transaction here,
 * so the coordinator is asked first (pj->verify), or it was refused; 0 to append now. */
static int verify_first(produce_job_t *pj, sf_log_t *log) {
    const sf_proto_ProduceRequest_t *preq = pj->op->preq;
    sf_recbatch_hdr_t hdr;
    size_t bsize;
    int rc;
    if (pj->guard || !sf_broker_cfg(pj->op->kr->b)->txn_verification_enable ||
        sf_recbatch_header_parse(pj->pp->Records.p, (size_t)pj->pp->Records.len, &hdr,
                                 &bsize) != SF_OK ||
        hdr.ProducerId < 0 || (hdr.Attributes & SF_RECBATCH_ATTR_CONTROL) ||
        !(hdr.Attributes & SF_RECBATCH_ATTR_TRANSACTIONAL))
        return 0; /* validation refuses what does not parse */
    rc = sf_log_txn_verify_begin(log, hdr.ProducerId, hdr.ProducerEpoch, pj->op->now, &pj->guard);
    if (rc == 0)
        return 0; /* its transaction is ongoing here */
    if (rc < 0) {
        pj->rp->ErrorCode = SF_KERR_UNKNOWN_SERVER_ERROR;
    } else if (!preq->TransactionalId.p) {
        pj->rp->ErrorCode = SF_KERR_INVALID_TXN_STATE;
        pj->rp->ErrorMessage = sf_slice_cstr("a transactional batch needs the transactional id");
    } else {
        pj->verify = 1;
        pj->producer_id = hdr.ProducerId;
        pj->producer_epoch = hdr.ProducerEpoch;
        atomic_fetch_add(&pj->op->verifying, 1);
    }
    return 1;
}

/* The append of one partition (I/O thread); fills pj->rp. */
static void append_job(sf_kjob_t *job) {
    produce_job_t *pj = job->arg;
    sf_kreq_t *kr = job->kr;
    sf_log_t *log = job->part->log;
    sf_proto_ProduceResponse_PartitionProduceResponse_t *rp = pj->rp;
    const sf_cluster_partition_t *cp = sf_kreq_partition(kr, pj->topic, pj->pp->Index);
    sf_validate_result_t vr;
    sf_validate_cfg_t vc;
    sf_log_append_info_t info;
    sf_log_config_t lc;
    sf_wbuf_t rebuilt;
    int rc;

    sf_log_get_config(log, &lc);
    if (pj->op->preq->Acks == -1 && cp && cp->nisr < lc.min_insync_replicas) {
        rp->ErrorCode = SF_KERR_NOT_ENOUGH_REPLICAS;
        return;
    }
    if (verify_first(pj, log))
        return;
    validate_cfg(kr, &lc, pj->op->now, &vc);
    sf_wbuf_init(&rebuilt);
    /* The request buffer is the connection's own mutable frame: batches are fixed in place. */
    rc = sf_validate_produce((uint8_t *)pj->pp->Records.p, (size_t)pj->pp->Records.len, &vc,
                             &rebuilt, &vr);
    if (rc == SF_OK)
        rc = sf_log_append_validated(log, vr.batches, vr.len, pj->op->now, pj->guard, &info);
    sf_wbuf_free(&rebuilt);
    if (rc == SF_ERR_DUPLICATE) {
        /* A producer's retry of a batch appended already: its offsets, nothing written. */
        vr.records = 0;
        vr.len = 0;
        rc = SF_OK;
    } else if (rc == SF_ERR_SEQUENCE) {
        vr.message = "the batch's sequence number does not follow the producer's last one";
    } else if (rc == SF_ERR_PRODUCER_EPOCH) {
        vr.message = "the producer's epoch is older than the partition's: it was fenced";
    } else if (rc == SF_ERR_TXN_STATE) {
        vr.message = pj->guard ? "the producer's transaction ended while it was verified"
                               : "a plain batch from a producer inside a transaction";
    }
    if (rc != SF_OK) {
        rp->ErrorCode = sf_err_to_kerr(rc, SF_ERR_OP_APPEND);
        rp->ErrorMessage = sf_slice_cstr(vr.message);
        if (rc == SF_ERR_RECORD && vr.bad_batch >= 0) {
            rp->RecordErrors = &pj->record_error;
            rp->RecordErrorsCount = 1;
            pj->record_error.BatchIndex = vr.bad_batch;
            pj->record_error.BatchIndexErrorMessage = sf_slice_cstr(vr.message);
        }
        sf_log(SF_LOG_INFO, "PRODUCE", "%s: %s-%d: records refused: %s", sf_kreq_peer(kr),
               pj->topic, pj->pp->Index, vr.message ? vr.message : sf_err_str(rc));
        return;
    }
    sf_metrics_produced((uint64_t)vr.records, vr.len);
    rp->BaseOffset = info.FirstOffset;
    rp->LogAppendTimeMs = vr.log_append_time;
    rp->LogStartOffset = info.LogStartOffset;
    if (sf_leader_replicated(cp)) {
        sf_leader_update_hw(job->part, cp, sf_broker_cfg(kr->b)->broker_id);
        if (pj->op->preq->Acks == -1 && sf_log_high_watermark(log) <= info.LastOffset) {
            pj->wait_offset = info.LastOffset + 1;
            pj->log = log;
            atomic_fetch_add(&pj->op->waiting, 1);
        }
    }
    sf_broker_notify_partition(kr->b, log);
}

/* Check one partition here; a partition that passes gets its job (@pj). */
static void produce_partition(sf_kreq_t *kr, produce_op_t *op, const char *topic,
                              const sf_proto_ProduceRequest_PartitionProduceData_t *pp,
                              sf_proto_ProduceResponse_PartitionProduceResponse_t *rp,
                              produce_job_t *pj) {
    sf_partition_t *part;
    sf_kerr_t kerr;

    if (op->preq->Acks != 0 && op->preq->Acks != 1 && op->preq->Acks != -1) {
        rp->ErrorCode = SF_KERR_INVALID_REQUIRED_ACKS;
        return;
    }
    if (!(part = sf_kreq_leader(kr, topic, pp->Index, &kerr))) {
        rp->ErrorCode = kerr;
        if (kerr == SF_KERR_NOT_LEADER_OR_FOLLOWER)
            leader_hint(kr, topic, rp);
        return;
    }
    if (pp->Records.len <= 0) {
        rp->ErrorCode = SF_KERR_INVALID_RECORD; /* "at least one record batch", as Kafka */
        return;
    }
    pj->op = op;
    pj->topic = topic;
    pj->pp = pp;
    pj->rp = rp;
    sf_kreq_append_submit(kr, &pj->job, part, append_job, pj);
}

static void produce_answer(sf_kreq_t *kr, produce_op_t *op) {
    int t, p, failed = 0;
    for (t = 0; t < op->resp.ResponsesCount; t++)
        for (p = 0; p < op->resp.Responses[t].PartitionResponsesCount; p++)
            failed |= op->resp.Responses[t].PartitionResponses[p].ErrorCode != SF_KERR_NONE;
    if (op->preq->Acks == 0) {
        /* No answer is expected; as Kafka does, a refused partition closes the connection, so
         * the producer notices and refreshes its metadata. */
        if (failed)
            sf_kreq_close(kr, "acks=0 produce refused for a partition");
        else
            sf_kreq_respond_none(kr);
        return;
    }
    sf_kreq_respond(kr, &op->resp);
}

/* acks=all: settle the partitions whose high watermark reached their batch, that lost their
 * leadership here, or (@final) that waited too long. Returns 1 when the request was answered. */
static int acks_attempt(void *arg, int final) {
    produce_op_t *op = arg;
    sf_kreq_t *kr = op->kr;
    int32_t self = sf_broker_cfg(kr->b)->broker_id;
    int i, pending = 0;
    sf_kreq_refresh(kr);
    for (i = 0; i < op->njobs; i++) {
        produce_job_t *pj = &op->jobs[i];
        const sf_cluster_partition_t *cp;
        sf_partition_t *part;
        sf_log_config_t lc;
        int led;
        if (!pj->wait_offset)
            continue;
        /* The partition as the newest view holds it (the append's view may be gone). */
        cp = sf_kreq_partition(kr, pj->topic, pj->pp->Index);
        part = sf_view_partition(kr->view, pj->topic, pj->pp->Index);
        led = cp && cp->leader == self && part && part->log == pj->log;
        if (led)
            sf_leader_update_hw(part, cp, self); /* the ISR may have changed meanwhile */
        if (!led) {
            pj->rp->ErrorCode = SF_KERR_NOT_LEADER_OR_FOLLOWER;
        } else if (sf_log_high_watermark(part->log) >= pj->wait_offset) {
            /* As Kafka: the ISR may have shrunk below the minimum while the batch waited. */
            sf_log_get_config(part->log, &lc);
            if (cp->nisr < lc.min_insync_replicas)
                pj->rp->ErrorCode = SF_KERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND;
        } else if (final) {
            pj->rp->ErrorCode = SF_KERR_REQUEST_TIMED_OUT;
        } else {
            pending++;
            continue;
        }
        if (pj->rp->ErrorCode)
            pj->rp->BaseOffset = -1;
        pj->wait_offset = 0;
    }
    if (pending)
        return 0;
    produce_answer(kr, op);
    return 1;
}

/* On the request's worker: wait for the ISR on the partitions and on leadership changes. */
static void acks_park(void *arg) {
    produce_op_t *op = arg;
    sf_kreq_t *kr = op->kr;
    sf_pkey_t *keys = sf_kreq_alloc(kr, (size_t)op->njobs + 1, sizeof(*keys));
    int i, n = 0;
    if (acks_attempt(op, !keys))
        return;
    keys[n++] = sf_pkey_metadata();
    for (i = 0; i < op->njobs; i++)
        if (op->jobs[i].wait_offset)
            keys[n++] = sf_pkey_partition(op->jobs[i].log);
    if (!sf_kreq_park(kr, keys, n, op->preq->TimeoutMs > 0 ? op->preq->TimeoutMs : 0,
                      acks_attempt, op))
        acks_attempt(op, 1);
}

/* A refusal of the coordinator as the producer hears it (Kafka's ReplicaManager): the errors
 * a retry may cure become NOT_ENOUGH_REPLICAS, which every client retries without a metadata
 * refresh; fenced is INVALID_PRODUCER_EPOCH, the produce error for it. */
static int16_t verify_error(int16_t err) {
    if (sf_txn_verify_retriable(err))
        return SF_KERR_NOT_ENOUGH_REPLICAS;
    return err == SF_KERR_PRODUCER_FENCED ? SF_KERR_INVALID_PRODUCER_EPOCH : err;
}

static void produce_done(sf_kreq_t *kr, void *arg);

/* On the worker: the verified partitions are appended (a second round of jobs), the others
 * answered with the coordinator's refusal. */
static void verify_resume(void *arg) {
    produce_op_t *op = arg;
    sf_kreq_t *kr = op->kr;
    int i;
    sf_kreq_refresh(kr); /* leadership may have moved meanwhile */
    atomic_store(&op->verifying, 0);
    sf_kreq_jobs_begin(kr, produce_done, op);
    for (i = 0; i < op->njobs; i++) {
        produce_job_t *pj = &op->jobs[i];
        sf_partition_t *part;
        sf_kerr_t kerr;
        if (!pj->verify)
            continue;
        pj->verify = 0;
        if ((pj->rp->ErrorCode = verify_error(pj->verify_err)) != SF_KERR_NONE) {
            if (pj->verify_err == SF_KERR_INVALID_TXN_STATE)
                pj->rp->ErrorMessage = sf_slice_cstr("the partition is not in the transaction");
            continue;
        }
        if (!(part = sf_kreq_leader(kr, pj->topic, pj->pp->Index, &kerr))) {
            pj->rp->ErrorCode = kerr;
            continue;
        }
        sf_kreq_append_submit(kr, &pj->job, part, append_job, pj);
    }
    sf_kreq_jobs_end(kr);
}

/* The coordinator's answer (another thread). */
static void verify_answered(void *arg, const int16_t *errs) {
    produce_op_t *op = arg;
    int i, n = atomic_load(&op->verifying);
    for (i = 0; i < n; i++)
        op->vjobs[i]->verify_err = errs ? errs[i] : SF_KERR_COORDINATOR_NOT_AVAILABLE;
    sf_kreq_home(op->kr, &op->home, verify_resume, op);
}

/* On the worker: ask the coordinator about the partitions that wait. One producer per
 * request, as Kafka wants: the batches of another one get INVALID_PRODUCER_ID_MAPPING. */
static void verify_send(void *arg) {
    produce_op_t *op = arg;
    sf_kreq_t *kr = op->kr;
    const char *txn_id = sf_kreq_str(kr, op->preq->TransactionalId);
    produce_job_t *first = NULL;
    int i, n = 0;
    op->vjobs = sf_kreq_alloc(kr, (size_t)op->njobs, sizeof(*op->vjobs));
    op->vparts = sf_kreq_alloc(kr, (size_t)op->njobs, sizeof(*op->vparts));
    for (i = 0; i < op->njobs; i++) {
        produce_job_t *pj = &op->jobs[i];
        if (!pj->verify)
            continue;
        if (!first)
            first = pj;
        pj->verify_err = SF_KERR_COORDINATOR_NOT_AVAILABLE; /* unless it is answered */
        if (pj->producer_id != first->producer_id || pj->producer_epoch != first->producer_epoch)
            pj->verify_err = SF_KERR_INVALID_PRODUCER_ID_MAPPING;
        else if (op->vjobs && op->vparts) {
            op->vjobs[n] = pj;
            op->vparts[n].topic = pj->topic;
            op->vparts[n++].partition = pj->pp->Index;
        }
    }
    atomic_store(&op->verifying, n);
    if (!txn_id || !n ||
        sf_broker_verify_txn(kr->b, kr->snap, txn_id, first->producer_id, first->producer_epoch,
                             op->vparts, n, SF_TXN_VERIFY_TIMEOUT_MS, verify_answered,
                             op) != SF_OK)
        verify_answered(op, NULL);
}

/* Every partition is done (on the thread that finished last). */
static void produce_done(sf_kreq_t *kr, void *arg) {
    produce_op_t *op = arg;
    if (atomic_load(&op->verifying) > 0)
        sf_kreq_home(kr, &op->home, verify_send, op);
    else if (atomic_load(&op->waiting) > 0)
        sf_kreq_home(kr, &op->home, acks_park, op);
    else
        produce_answer(kr, op);
}

void sf_kapi_Produce(sf_kreq_t *kr, void *msg) {
    const sf_proto_ProduceRequest_t *preq = msg;
    produce_op_t *op = sf_kreq_alloc(kr, 1, sizeof(*op));
    produce_job_t *pj;
    int t, p;

    if (!op)
        goto nomem;
    op->kr = kr;
    op->preq = preq;
    op->now = sf_clock_wall_ms();
    atomic_init(&op->waiting, 0);
    atomic_init(&op->verifying, 0);
    sf_proto_ProduceResponse_init(&op->resp);
    op->resp.Responses = sf_kreq_alloc(kr, (size_t)preq->TopicDataCount, sizeof(*op->resp.Responses));
    if (!op->resp.Responses)
        goto nomem;
    op->resp.ResponsesCount = preq->TopicDataCount;
    /* Everything the jobs use is allocated first: they run while this goes on. */
    for (t = 0; t < preq->TopicDataCount; t++) {
        const sf_proto_ProduceRequest_TopicProduceData_t *pt = &preq->TopicData[t];
        sf_proto_ProduceResponse_TopicProduceResponse_t *rt = &op->resp.Responses[t];
        rt->Name = pt->Name;
        rt->PartitionResponses = sf_kreq_alloc(kr, (size_t)pt->PartitionDataCount,
                                               sizeof(*rt->PartitionResponses));
        if (!rt->PartitionResponses)
            goto nomem;
        rt->PartitionResponsesCount = pt->PartitionDataCount;
        op->njobs += pt->PartitionDataCount;
    }
    if (!(op->jobs = sf_kreq_alloc(kr, (size_t)op->njobs, sizeof(*op->jobs))))
        goto nomem;
    pj = op->jobs;
    sf_kreq_jobs_begin(kr, produce_done, op);
    for (t = 0; t < preq->TopicDataCount; t++) {
        const sf_proto_ProduceRequest_TopicProduceData_t *pt = &preq->TopicData[t];
        sf_proto_ProduceResponse_TopicProduceResponse_t *rt = &op->resp.Responses[t];
        const char *topic = sf_kreq_str(kr, pt->Name);
        for (p = 0; p < pt->PartitionDataCount; p++, pj++) {
            sf_proto_ProduceResponse_PartitionProduceResponse_t *rp = &rt->PartitionResponses[p];
            sf_proto_ProduceResponse_PartitionProduceResponse_init(rp);
            rp->Index = pt->PartitionData[p].Index;
            rp->BaseOffset = -1;
            if (!topic) {
                /* Out of arena memory half way: the partitions left fail. */
                rp->ErrorCode = SF_KERR_UNKNOWN_SERVER_ERROR;
                continue;
            }
            produce_partition(kr, op, topic, &pt->PartitionData[p], rp, pj);
        }
    }
    sf_kreq_jobs_end(kr);
    return;
nomem:
    sf_kreq_close(kr, "no memory for the response");
}
