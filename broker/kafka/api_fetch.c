/* Fetch, every version: file ranges of the leaders' logs sent zero-copy, long polls parked in
 * the purgatory on the partitions they read, and message sets of magic 0 and 1 made from the
 * stored batches for Fetch v0-v3 (Kafka's down-conversion, which reads and decompresses the
 * batches: on an I/O thread). read_committed consumers (Fetch v4+ IsolationLevel 1) read
 * below the last stable offset and are told of the aborted transactions they read; a marker
 * that moves the LSO wakes them as any append does. */
#include "dispatch.h"

#include <stdlib.h>
#include <string.h>

#include "brokercfg.h"
#include "clock.h"
#include "election_rules.h"
#include "leader.h"
#include "log.h"
#include "logging.h"
#include "metrics.h"
#include "msgset.h"
#include "throttle.h"
#include "topiccfg.h"

/* Longest a fetch may wait, whatever the client asks. */
#define FETCH_MAX_WAIT_MS 60000
/* Largest decompressed batch down-conversion works on. */
#define FETCH_MAX_DECOMPRESSED (64 * 1024 * 1024)
#define CODEC_ZSTD_BIT (1u << 4)

/* A fetch being answered (in the request arena): a parked one is read again after appends. */
typedef struct fetch_op {
    sf_kreq_t *kr;
    const sf_proto_FetchRequest_t *freq;
    sf_proto_FetchResponse_t resp; /* topics and partitions mirror freq's */
    const char **topics;           /* names; NULL for an unknown topic id */
    sf_log_slice_t *slices;        /* one per requested partition, in order */
    sf_wbuf_t *converted;          /* Fetch v0-v3: the converted records of each partition
                                      (on the heap: they outlive the request's arena) */
    int32_t *convert_max;          /* Fetch v0-v3: the byte limit of each partition's */
    sf_kjob_t convert_job;
    int npartitions;
    int errors; /* partitions answered with an error by the last read */
    int32_t replica; /* the follower fetching (broker id), or -1 for a consumer */
    int throttle_rate_set; /* the leader throttle has this request's rate */
    int64_t throttled_bytes; /* read by the last attempt for throttled replicas */
} fetch_op_t;

/* Message format of a fetch version: magic 0 for v0-v1, 1 for v2-v3, 2 (no conversion). */
static int8_t fetch_magic(int16_t version) {
    return version < 2 ? 0 : version < 4 ? 1 : 2;
}

static void release(fetch_op_t *op) {
    int i;
    for (i = 0; i < op->npartitions; i++) {
        sf_log_slice_release(op->slices[i].seg);
        memset(&op->slices[i], 0, sizeof(op->slices[i]));
        if (op->converted)
            sf_wbuf_free(&op->converted[i]);
    }
}

static fetch_op_t *fetch_op_new(sf_kreq_t *kr, const sf_proto_FetchRequest_t *freq) {
    fetch_op_t *op = sf_kreq_alloc(kr, 1, sizeof(*op));
    int t, n = 0;
    if (!op)
        return NULL;
    op->kr = kr;
    op->freq = freq;
    op->replica = kr->version >= 15 ? freq->ReplicaState.ReplicaId : freq->ReplicaId;
    sf_proto_FetchResponse_init(&op->resp);
    op->resp.Responses = sf_kreq_alloc(kr, (size_t)freq->TopicsCount, sizeof(*op->resp.Responses));
    op->topics = sf_kreq_alloc(kr, (size_t)freq->TopicsCount, sizeof(*op->topics));
    if (!op->resp.Responses || !op->topics)
        return NULL;
    op->resp.ResponsesCount = freq->TopicsCount;
    for (t = 0; t < freq->TopicsCount; t++) {
        const sf_proto_FetchRequest_FetchTopic_t *ft = &freq->Topics[t];
        sf_proto_FetchResponse_FetchableTopicResponse_t *rt = &op->resp.Responses[t];
        sf_proto_FetchResponse_FetchableTopicResponse_init(rt);
        rt->Topic = ft->Topic;
        rt->TopicId = ft->TopicId;
        if (kr->version >= 13) {
            const sf_cluster_topic_t *ct = sf_kreq_topic_by_id(kr, &ft->TopicId);
            op->topics[t] = ct ? ct->name : NULL;
        } else if (!(op->topics[t] = sf_kreq_str(kr, ft->Topic))) {
            return NULL;
        }
        rt->Partitions = sf_kreq_alloc(kr, (size_t)ft->PartitionsCount, sizeof(*rt->Partitions));
        if (!rt->Partitions)
            return NULL;
        rt->PartitionsCount = ft->PartitionsCount;
        n += ft->PartitionsCount;
    }
    op->npartitions = n;
    if (!(op->slices = sf_kreq_alloc(kr, (size_t)n, sizeof(*op->slices))))
        return NULL;
    if (fetch_magic(kr->version) < 2 &&
        (!(op->converted = calloc((size_t)n + 1, sizeof(*op->converted))) ||
         !(op->convert_max = sf_kreq_alloc(kr, (size_t)n, sizeof(*op->convert_max)))))
        return NULL;
    return op;
}

/* The partition's log if this broker leads it at the epoch the client knows; else NULL with
 * the error in rp. */
static sf_log_t *partition_log(fetch_op_t *op, const char *topic,
                               const sf_proto_FetchRequest_FetchPartition_t *fp,
                               sf_proto_FetchResponse_PartitionData_t *rp) {
    const sf_cluster_partition_t *cp;
    sf_partition_t *part;
    sf_kerr_t kerr;
    if (!topic) {
        rp->ErrorCode = SF_KERR_UNKNOWN_TOPIC_ID;
        return NULL;
    }
    if (!(part = sf_kreq_leader(op->kr, topic, fp->Partition, &kerr))) {
        rp->ErrorCode = kerr;
        return NULL;
    }
    cp = sf_kreq_partition(op->kr, topic, fp->Partition);
    if (fp->CurrentLeaderEpoch >= 0 && cp && fp->CurrentLeaderEpoch != cp->leader_epoch) {
        /* KIP-320: a client behind the leader's epoch was fenced; one ahead is early. */
        rp->ErrorCode = fp->CurrentLeaderEpoch < cp->leader_epoch ? SF_KERR_FENCED_LEADER_EPOCH
                                                                  : SF_KERR_UNKNOWN_LEADER_EPOCH;
        return NULL;
    }
    return part->log;
}

/* Fetch v0-v3: replace the slice by its records converted to the version's message format.
 * Returns the converted size, or -1 with rp->ErrorCode set. */
static int64_t down_convert(fetch_op_t *op, const char *topic, sf_log_slice_t *sl,
                            sf_wbuf_t *out, int32_t max,
                            sf_proto_FetchResponse_PartitionData_t *rp) {
    char flag[8];
    uint8_t *raw;
    size_t used;
    int rc;
    sf_topiccfg_get(sf_kreq_topiccfg(op->kr), sf_kreq_topic(op->kr, topic),
                    "message.downconversion.enable", flag, sizeof(flag));
    if (!strcmp(flag, "false")) {
        /* As Kafka: old fetch versions are refused where down-conversion is turned off. */
        rc = SF_ERR_STATE;
    } else if (!(raw = malloc(sl->len))) {
        rc = SF_ERR_NOMEM;
    } else {
        rc = sf_log_slice_copy(sl, raw);
        if (rc == SF_OK)
            rc = sf_msgset_from_batches(raw, sl->len, fetch_magic(op->kr->version), (size_t)max,
                                        FETCH_MAX_DECOMPRESSED, out, &used);
        free(raw);
    }
    sf_log_slice_release(sl->seg);
    memset(sl, 0, sizeof(*sl));
    if (rc != SF_OK) {
        rp->ErrorCode = rc == SF_ERR_STATE         ? SF_KERR_UNSUPPORTED_VERSION
                        : rc == SF_ERR_UNSUPPORTED ? SF_KERR_UNSUPPORTED_COMPRESSION_TYPE
                                                   : sf_err_to_kerr(rc, SF_ERR_OP_READ);
        sf_wbuf_free(out);
        return -1;
    }
    rp->Records.p = out->p;
    rp->Records.len = (int32_t)out->len;
    return (int64_t)out->len;
}

/* A follower's fetch (replica id set) of a partition led here: its log agrees with the
 * leader's up to its fetch offset (else the diverging epoch is answered, KIP-595's check of
 * LastFetchedEpoch, and it truncates), so the offset is its log end offset: the high watermark
 * may move. Returns 0 to read on, -1 with rp set when nothing is read. */
static int follower_fetch(fetch_op_t *op, const char *topic,
                          const sf_proto_FetchRequest_FetchPartition_t *fp, sf_partition_t *part,
                          sf_proto_FetchResponse_PartitionData_t *rp) {
    const sf_cluster_partition_t *cp = sf_kreq_partition(op->kr, topic, fp->Partition);
    int32_t self = sf_broker_cfg(op->kr->b)->broker_id, found;
    int64_t end;
    if (!sf_leader_replicated(cp)) {
        rp->ErrorCode = SF_KERR_NOT_LEADER_OR_FOLLOWER;
        return -1;
    }
    if (fp->LastFetchedEpoch >= 0) {
        sf_log_end_offset_for_epoch(part->log, fp->LastFetchedEpoch, &found, &end);
        if (found != fp->LastFetchedEpoch || end < fp->FetchOffset) {
            rp->DivergingEpoch.Epoch = found;
            rp->DivergingEpoch.EndOffset = end;
            return -1;
        }
    }
    if (sf_leader_follower_fetched(part, op->replica, cp->leader_epoch, fp->FetchOffset,
                                   sf_clock_wall_ms()) < 0) {
        rp->ErrorCode = SF_KERR_NOT_LEADER_OR_FOLLOWER;
        return -1;
    }
    if (sf_leader_update_hw(part, cp, self))
        sf_broker_notify_partition(op->kr->b, part->log);
    return 0;
}

/* Kafka's shouldLeaderThrottle: 1 when the follower's fetch of this partition counts against
 * leader.replication.throttled.rate (the follower is out of the ISR and the topic names this
 * broker's replica in leader.replication.throttled.replicas), with *@hold set when that rate
 * is used up and nothing should be read now. */
static int leader_throttled(fetch_op_t *op, const char *topic,
                            const sf_proto_FetchRequest_FetchPartition_t *fp, int *hold) {
    const sf_cluster_partition_t *cp = sf_kreq_partition(op->kr, topic, fp->Partition);
    const sf_topiccfg_ctx_t *ctx = sf_kreq_topiccfg(op->kr);
    sf_throttle_t *t = sf_broker_leader_throttle(op->kr->b);
    *hold = 0;
    if (!cp || sf_elect_has(cp->isr, cp->nisr, op->replica) ||
        !sf_throttle_listed(ctx, sf_kreq_topic(op->kr, topic), SF_THROTTLE_LEADER_REPLICAS,
                            fp->Partition, sf_broker_cfg(op->kr->b)->broker_id))
        return 0;
    if (!op->throttle_rate_set) {
        sf_throttle_set_rate(t, sf_throttle_rate(ctx, SF_THROTTLE_LEADER_RATE));
        op->throttle_rate_set = 1;
    }
    *hold = sf_throttle_exceeded(t, sf_clock_mono_ms());
    return 1;
}

/* read_committed: the aborted transactions overlapping what @sl holds from @fp's offset on
 * (Kafka's collectAbortedTransactions: last offset >= the fetch offset, first offset below
 * the offset after the data), into rp in the request's arena. Returns 0, or -1 with
 * rp->ErrorCode set. */
static int aborted_txns(fetch_op_t *op, sf_log_t *log, const sf_log_slice_t *sl,
                        const sf_proto_FetchRequest_FetchPartition_t *fp,
                        sf_proto_FetchResponse_PartitionData_t *rp) {
    sf_aborted_txn_t *v = NULL;
    int64_t end;
    size_t n = 0, i;
    /* A first look with the widest bound: nearly always none, and no header read. */
    int rc = sf_log_aborted_txns(log, fp->FetchOffset, rp->LastStableOffset, &v, &n);
    if (rc == SF_OK && n > 0 && (rc = sf_log_slice_next_offset(sl, &end)) == SF_OK) {
        free(v);
        v = NULL;
        rc = sf_log_aborted_txns(log, fp->FetchOffset, end, &v, &n);
    }
    if (rc == SF_OK && n > 0 &&
        !(rp->AbortedTransactions = sf_kreq_alloc(op->kr, n, sizeof(*rp->AbortedTransactions))))
        rc = SF_ERR_NOMEM;
    for (i = 0; rc == SF_OK && i < n; i++) {
        rp->AbortedTransactions[i].ProducerId = v[i].producer_id;
        rp->AbortedTransactions[i].FirstOffset = v[i].first_offset;
    }
    free(v);
    if (rc != SF_OK) {
        rp->ErrorCode = sf_err_to_kerr(rc, SF_ERR_OP_READ);
        return -1;
    }
    rp->AbortedTransactionsCount = (int32_t)n;
    return 0;
}

/* Read one partition into rp. Returns the record bytes gathered. */
static int64_t read_partition(fetch_op_t *op, const char *topic,
                              const sf_proto_FetchRequest_FetchPartition_t *fp, int idx,
                              int32_t budget, int64_t total,
                              sf_proto_FetchResponse_PartitionData_t *rp) {
    sf_log_slice_t *sl = &op->slices[idx];
    int32_t max = fp->PartitionMaxBytes < budget ? fp->PartitionMaxBytes : budget;
    unsigned codecs;
    sf_log_t *log;
    int rc, committed, throttled = 0, hold = 0;

    sf_proto_FetchResponse_PartitionData_init(rp);
    rp->PartitionIndex = fp->Partition;
    rp->HighWatermark = -1;
    if (!(log = partition_log(op, topic, fp, rp)))
        return 0;
    if (op->replica >= 0 &&
        follower_fetch(op, topic, fp, sf_view_partition(op->kr->view, topic, fp->Partition),
                       rp) < 0) {
        rp->HighWatermark = sf_log_high_watermark(log);
        return 0;
    }
    rp->HighWatermark = sf_log_high_watermark(log);
    /* Kafka answers the LSO whatever the isolation level (the HW when no transaction is
     * open). */
    rp->LastStableOffset = sf_log_last_stable_offset(log);
    rp->LogStartOffset = sf_log_start_offset(log);
    /* read_committed gets the list of aborted transactions (empty when none), read_uncommitted
     * null, as Kafka answers. */
    committed = op->freq->IsolationLevel == 1 && op->replica < 0;
    rp->AbortedTransactionsCount = op->freq->IsolationLevel == 1 ? 0 : -1;
    rp->Records.len = 0;
    if (max <= 0 && total > 0)
        return 0;
    if (op->replica >= 0 && (throttled = leader_throttled(op, topic, fp, &hold)) && hold)
        return 0;
    /* Followers read up to the log end offset, consumers up to the high watermark, or the
     * last stable offset for read_committed. */
    rc = sf_log_read(log, fp->FetchOffset, max > 0 ? max : 1,
                     op->replica >= 0 ? INT64_MAX
                     : committed      ? rp->LastStableOffset
                                      : rp->HighWatermark,
                     sl);
    if (rc != SF_OK) {
        rp->ErrorCode = sf_err_to_kerr(rc, SF_ERR_OP_READ);
        return 0;
    }
    if (sl->len == 0)
        return 0;
    /* KIP-74: a batch larger than the limits is still sent when it is the first data of the
     * response, so a consumer never gets stuck behind it. */
    if ((int64_t)sl->len > max && total > 0) {
        sf_log_slice_release(sl->seg);
        memset(sl, 0, sizeof(*sl));
        return 0;
    }
    if (committed && aborted_txns(op, log, sl, fp, rp) < 0) {
        sf_log_slice_release(sl->seg);
        memset(sl, 0, sizeof(*sl));
        return 0;
    }
    if (fetch_magic(op->kr->version) < 2) {
        op->convert_max[idx] = max; /* converted when answering (convert_run) */
        return (int64_t)sl->len;
    }
    if (op->kr->version < 10 && sf_log_slice_codecs(sl, &codecs) == SF_OK &&
        (codecs & CODEC_ZSTD_BIT)) {
        /* zstd batches are readable from Fetch v10 (KIP-110). */
        sf_log_slice_release(sl->seg);
        memset(sl, 0, sizeof(*sl));
        rp->ErrorCode = SF_KERR_UNSUPPORTED_COMPRESSION_TYPE;
        return 0;
    }
    if (throttled)
        op->throttled_bytes += (int64_t)sl->len; /* counted when answered */
    rp->Records.len = (int32_t)sl->len;
    rp->RecordsRef = sl;
    return (int64_t)sl->len;
}

/* Read what the fetch asks for into op->resp, taking slice references. Returns the record
 * bytes gathered; op->errors counts the partitions that failed. */
static int64_t fetch_read(fetch_op_t *op) {
    const sf_proto_FetchRequest_t *freq = op->freq;
    int64_t total = 0;
    int32_t budget = freq->MaxBytes > 0 ? freq->MaxBytes : INT32_MAX;
    int t, p, idx = 0;

    sf_kreq_refresh(op->kr);
    op->errors = 0;
    op->throttled_bytes = 0;
    for (t = 0; t < freq->TopicsCount; t++) {
        const sf_proto_FetchRequest_FetchTopic_t *ft = &freq->Topics[t];
        for (p = 0; p < ft->PartitionsCount; p++, idx++) {
            sf_proto_FetchResponse_PartitionData_t *rp = &op->resp.Responses[t].Partitions[p];
            int64_t got = read_partition(op, op->topics[t], &ft->Partitions[p], idx, budget,
                                         total, rp);
            if (rp->ErrorCode)
                op->errors++;
            total += got;
            budget = got >= budget ? 0 : budget - (int32_t)got;
        }
    }
    return total;
}

/* Send the response. The server takes the slice references over; converted records are
 * copied into it. Answering frees the request and its arena, op included: the converted
 * buffers are freed through copies of their pointers. */
static void fetch_answer(sf_kreq_t *kr, void *arg) {
    fetch_op_t *op = arg;
    sf_wbuf_t *converted = op->converted;
    int i, n = op->npartitions;
    uint64_t bytes = 0;
    int32_t t, p;
    for (t = 0; t < op->resp.ResponsesCount; t++)
        for (p = 0; p < op->resp.Responses[t].PartitionsCount; p++)
            bytes += (uint64_t)op->resp.Responses[t].Partitions[p].Records.len;
    sf_metrics_fetched(bytes);
    sf_kreq_respond(kr, &op->resp);
    for (i = 0; converted && i < n; i++)
        sf_wbuf_free(&converted[i]);
    free(converted);
}

/* Fetch v0-v3, on an I/O thread: every slice read becomes the version's message set. */
static void convert_run(sf_kjob_t *job) {
    fetch_op_t *op = job->arg;
    int t, p, idx = 0;
    for (t = 0; t < op->freq->TopicsCount; t++)
        for (p = 0; p < op->freq->Topics[t].PartitionsCount; p++, idx++)
            if (op->slices[idx].len > 0)
                down_convert(op, op->topics[t], &op->slices[idx], &op->converted[idx],
                             op->convert_max[idx], &op->resp.Responses[t].Partitions[p]);
}

/* Answer now with what there is (@final), or when there is enough or an error; else keep
 * waiting. Returns 1 when answered (or handed to the I/O thread that converts it). */
static int fetch_attempt(void *arg, int final) {
    fetch_op_t *op = arg;
    int64_t got = fetch_read(op);
    if (!final && got < op->freq->MinBytes && !op->errors && !sf_kreq_conn_closed(op->kr)) {
        release(op);
        return 0;
    }
    if (op->throttled_bytes)
        sf_throttle_record(sf_broker_leader_throttle(op->kr->b), op->throttled_bytes,
                           sf_clock_mono_ms());
    if (!op->converted) {
        fetch_answer(op->kr, op);
        return 1;
    }
    sf_kreq_jobs_begin(op->kr, fetch_answer, op);
    sf_kreq_job_submit(op->kr, &op->convert_job, NULL, convert_run, op);
    sf_kreq_jobs_end(op->kr);
    return 1;
}

/* Park the fetch on its partitions' logs and on metadata changes (a leader moving away). */
static void fetch_park(fetch_op_t *op, int32_t wait) {
    sf_kreq_t *kr = op->kr;
    sf_pkey_t *keys = sf_kreq_alloc(kr, (size_t)op->npartitions + 1, sizeof(*keys));
    int t, p, n = 0;
    if (!keys) {
        fetch_attempt(op, 1);
        return;
    }
    keys[n++] = sf_pkey_metadata();
    for (t = 0; t < op->freq->TopicsCount; t++)
        for (p = 0; p < op->freq->Topics[t].PartitionsCount; p++) {
            sf_kerr_t kerr;
            sf_partition_t *part =
                op->topics[t] ? sf_kreq_leader(kr, op->topics[t],
                                               op->freq->Topics[t].Partitions[p].Partition, &kerr)
                              : NULL;
            if (part)
                keys[n++] = sf_pkey_partition(part->log);
        }
    if (!sf_kreq_park(kr, keys, n, wait < FETCH_MAX_WAIT_MS ? wait : FETCH_MAX_WAIT_MS,
                      fetch_attempt, op))
        fetch_attempt(op, 1);
}

void sf_kapi_Fetch(sf_kreq_t *kr, void *msg) {
    const sf_proto_FetchRequest_t *freq = msg;
    fetch_op_t *op;
    if (kr->version >= 7 && freq->SessionId != 0) {
        /* Fetch sessions (KIP-227) are never handed out: full fetches only. */
        sf_proto_FetchResponse_t resp;
        sf_proto_FetchResponse_init(&resp);
        resp.ErrorCode = SF_KERR_FETCH_SESSION_ID_NOT_FOUND;
        sf_kreq_respond(kr, &resp);
        return;
    }
    if (!(op = fetch_op_new(kr, freq))) {
        sf_kreq_close(kr, "no memory for the fetch");
        return;
    }
    if (fetch_attempt(op, freq->MaxWaitMs <= 0 || freq->MinBytes <= 0))
        return;
    fetch_park(op, freq->MaxWaitMs);
}
