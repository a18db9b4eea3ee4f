/* The transactional producer's requests (txnproducer.h). */
#include "txnproducer.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arena.h"
#include "coord.h"
#include "proto.h"

#define INITPID_MAX 4 /* the last version before transactions v2 (KIP-890) */
#define ADDPARTS_MAX 3
#define ADDOFFSETS_MAX 3
#define TXNOFFSETS_MAX 3
#define ENDTXN_MAX 3
#define CONCURRENT_RETRY_MS 10

int sf_txnreq_fatal(int err) {
    return err == SF_KERR_PRODUCER_FENCED || err == SF_KERR_INVALID_PRODUCER_EPOCH ||
           err == SF_KERR_INVALID_PRODUCER_ID_MAPPING;
}

/* One request of the transaction: @dec leaves the answer's error in *@kerr. */
typedef struct txn_call {
    const sf_txn_t *t;
    const void *arg; /* what the request carries */
    int16_t kerr;
    int64_t pid;
    int16_t epoch;
} txn_call_t;

/* The request to the coordinator of @key, again while the answer says to wait. */
static int txn_run(sf_client_t *cl, const char *key, int8_t key_type, int16_t api,
                   int16_t max_version, sf_client_encode_fn enc, sf_client_decode_fn dec,
                   txn_call_t *c, int64_t deadline) {
    for (;;) {
        int rc = sf_coord_call(cl, key, key_type, api, max_version, enc, dec, c, deadline, NULL);
        if (rc == SF_OK)
            rc = sf_client_kerr(c->kerr);
        if (rc != SF_KERR_CONCURRENT_TRANSACTIONS && rc != SF_KERR_COORDINATOR_LOAD_IN_PROGRESS &&
            rc != SF_KERR_NOT_COORDINATOR && rc != SF_KERR_COORDINATOR_NOT_AVAILABLE)
            return rc;
        if (sf_coord_ms_left(deadline) <= 0)
            return SF_ERROR_TIMED_OUT;
        if (rc == SF_KERR_CONCURRENT_TRANSACTIONS) {
            /* the previous transaction's markers: done within milliseconds (as the Java
             * client, retried sooner than retry.backoff.ms) */
            struct timespec ts = {0, CONCURRENT_RETRY_MS * 1000000L};
            nanosleep(&ts, NULL);
        } else {
            sf_coord_backoff(cl, deadline);
        }
    }
}

static int decoded(int rc) {
    return rc == SF_OK || rc == SF_ERR_NOMEM ? rc : SF_ERROR_MALFORMED;
}

/* ---- InitProducerId ---- */

static int init_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    txn_call_t *c = arg;
    sf_proto_InitProducerIdRequest_t req;
    sf_proto_InitProducerIdRequest_init(&req);
    req.TransactionalId = sf_slice_cstr(c->t->id);
    req.TransactionTimeoutMs = c->t->timeout_ms;
    return sf_proto_InitProducerIdRequest_encode(wb, version, &req);
}

static int init_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    txn_call_t *c = arg;
    sf_proto_InitProducerIdResponse_t resp;
    sf_arena_t arena;
    int rc;
    sf_arena_init(&arena, 0);
    rc = decoded(sf_proto_InitProducerIdResponse_decode(body, version, &arena, &resp));
    if (rc == SF_OK) {
        c->kerr = resp.ErrorCode;
        c->pid = resp.ProducerId;
        c->epoch = resp.ProducerEpoch;
    }
    sf_arena_reset(&arena);
    return rc;
}

int sf_txnreq_init_pid(sf_client_t *cl, sf_txn_t *t, int64_t deadline) {
    txn_call_t c = {t, NULL, 0, -1, -1};
    int rc = txn_run(cl, t->id, SF_COORD_TRANSACTION, SF_PROTO_API_InitProducerId, INITPID_MAX,
                     init_encode, init_decode, &c, deadline);
    if (rc == SF_OK) {
        t->pid = c.pid;
        t->epoch = c.epoch;
    }
    return rc;
}

/* ---- AddPartitionsToTxn ---- */

typedef struct add_part {
    const char *topic;
    int32_t partition;
} add_part_t;

static int addparts_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    txn_call_t *c = arg;
    const add_part_t *ap = c->arg;
    sf_proto_AddPartitionsToTxnRequest_t req;
    sf_proto_AddPartitionsToTxnRequest_AddPartitionsToTxnTopic_t topic;
    int32_t partition = ap->partition;
    sf_proto_AddPartitionsToTxnRequest_init(&req);
    sf_proto_AddPartitionsToTxnRequest_AddPartitionsToTxnTopic_init(&topic);
    topic.Name = sf_slice_cstr(ap->topic);
    topic.Partitions = &partition;
    topic.PartitionsCount = 1;
    req.V3AndBelowTransactionalId = sf_slice_cstr(c->t->id);
    req.V3AndBelowProducerId = c->t->pid;
    req.V3AndBelowProducerEpoch = c->t->epoch;
    req.V3AndBelowTopics = &topic;
    req.V3AndBelowTopicsCount = 1;
    return sf_proto_AddPartitionsToTxnRequest_encode(wb, version, &req);
}

static int addparts_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    txn_call_t *c = arg;
    sf_proto_AddPartitionsToTxnResponse_t resp;
    sf_arena_t arena;
    int32_t t, p;
    int rc;
    sf_arena_init(&arena, 0);
    rc = decoded(sf_proto_AddPartitionsToTxnResponse_decode(body, version, &arena, &resp));
    c->kerr = SF_ERROR_MALFORMED; /* unless the partition is in the answer */
    for (t = 0; rc == SF_OK && t < resp.ResultsByTopicV3AndBelowCount; t++)
        for (p = 0; p < resp.ResultsByTopicV3AndBelow[t].ResultsByPartitionCount; p++)
            c->kerr = resp.ResultsByTopicV3AndBelow[t].ResultsByPartition[p].PartitionErrorCode;
    sf_arena_reset(&arena);
    return rc;
}

int sf_txnreq_add_partition(sf_client_t *cl, const sf_txn_t *t, const char *topic,
                         int32_t partition, int64_t deadline) {
    add_part_t ap = {topic, partition};
    txn_call_t c = {t, &ap, 0, -1, -1};
    return txn_run(cl, t->id, SF_COORD_TRANSACTION, SF_PROTO_API_AddPartitionsToTxn,
                   ADDPARTS_MAX, addparts_encode, addparts_decode, &c, deadline);
}

/* ---- AddOffsetsToTxn and TxnOffsetCommit ---- */

static int addoffsets_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    txn_call_t *c = arg;
    sf_proto_AddOffsetsToTxnRequest_t req;
    sf_proto_AddOffsetsToTxnRequest_init(&req);
    req.TransactionalId = sf_slice_cstr(c->t->id);
    req.ProducerId = c->t->pid;
    req.ProducerEpoch = c->t->epoch;
    req.GroupId = sf_slice_cstr(((const sf_group_metadata_t *)c->arg)->group_id);
    return sf_proto_AddOffsetsToTxnRequest_encode(wb, version, &req);
}

static int addoffsets_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    txn_call_t *c = arg;
    sf_proto_AddOffsetsToTxnResponse_t resp;
    sf_arena_t arena;
    int rc;
    sf_arena_init(&arena, 0);
    rc = decoded(sf_proto_AddOffsetsToTxnResponse_decode(body, version, &arena, &resp));
    if (rc == SF_OK)
        c->kerr = resp.ErrorCode;
    sf_arena_reset(&arena);
    return rc;
}

typedef struct offsets_arg {
    const sf_group_metadata_t *md;
    const sf_topic_partition_t *v;
    size_t n;
} offsets_arg_t;

static int txnoffsets_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    txn_call_t *c = arg;
    const offsets_arg_t *oa = c->arg;
    sf_proto_TxnOffsetCommitRequest_t req;
    sf_proto_TxnOffsetCommitRequest_TxnOffsetCommitRequestTopic_t *topics;
    sf_proto_TxnOffsetCommitRequest_TxnOffsetCommitRequestPartition_t *parts;
    size_t i;
    int rc;
    topics = calloc(oa->n + 1, sizeof(*topics));
    parts = calloc(oa->n + 1, sizeof(*parts));
    if (!topics || !parts) {
        free(topics);
        free(parts);
        return SF_ERR_NOMEM;
    }
    sf_proto_TxnOffsetCommitRequest_init(&req);
    req.TransactionalId = sf_slice_cstr(c->t->id);
    req.GroupId = sf_slice_cstr(oa->md->group_id);
    req.ProducerId = c->t->pid;
    req.ProducerEpoch = c->t->epoch;
    req.GenerationId = oa->md->generation; /* v3+ (KIP-447); older versions leave them out */
    req.MemberId = sf_slice_cstr(oa->md->member_id);
    req.GroupInstanceId = sf_slice_cstr(oa->md->instance_id);
    for (i = 0; i < oa->n; i++) { /* one topic entry per partition: the broker merges them */
        sf_proto_TxnOffsetCommitRequest_TxnOffsetCommitRequestPartition_init(&parts[i]);
        parts[i].PartitionIndex = oa->v[i].partition;
        parts[i].CommittedOffset = oa->v[i].offset;
        parts[i].CommittedMetadata = sf_slice_cstr("");
        topics[i].Name = sf_slice_cstr(oa->v[i].topic);
        topics[i].Partitions = &parts[i];
        topics[i].PartitionsCount = 1;
    }
    req.Topics = topics;
    req.TopicsCount = (int32_t)oa->n;
    rc = sf_proto_TxnOffsetCommitRequest_encode(wb, version, &req);
    free(topics);
    free(parts);
    return rc;
}

static int txnoffsets_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    txn_call_t *c = arg;
    sf_proto_TxnOffsetCommitResponse_t resp;
    sf_arena_t arena;
    int32_t t, p;
    int rc;
    sf_arena_init(&arena, 0);
    rc = decoded(sf_proto_TxnOffsetCommitResponse_decode(body, version, &arena, &resp));
    c->kerr = 0;
    for (t = 0; rc == SF_OK && t < resp.TopicsCount; t++)
        for (p = 0; p < resp.Topics[t].PartitionsCount && !c->kerr; p++)
            c->kerr = resp.Topics[t].Partitions[p].ErrorCode;
    sf_arena_reset(&arena);
    return rc;
}

int sf_txnreq_commit_offsets(sf_client_t *cl, const sf_txn_t *t, const sf_group_metadata_t *md,
                             const sf_topic_partition_t *v, size_t n, int64_t deadline) {
    offsets_arg_t oa = {md, v, n};
    txn_call_t c = {t, md, 0, -1, -1};
    int rc = txn_run(cl, t->id, SF_COORD_TRANSACTION, SF_PROTO_API_AddOffsetsToTxn,
                     ADDOFFSETS_MAX, addoffsets_encode, addoffsets_decode, &c, deadline);
    if (rc != SF_OK || n == 0)
        return rc;
    c.arg = &oa;
    c.kerr = 0;
    return txn_run(cl, md->group_id, SF_COORD_GROUP, SF_PROTO_API_TxnOffsetCommit, TXNOFFSETS_MAX,
                   txnoffsets_encode, txnoffsets_decode, &c, deadline);
}

/* ---- EndTxn ---- */

typedef struct end_arg {
    int commit;
} end_arg_t;

static int end_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    txn_call_t *c = arg;
    sf_proto_EndTxnRequest_t req;
    sf_proto_EndTxnRequest_init(&req);
    req.TransactionalId = sf_slice_cstr(c->t->id);
    req.ProducerId = c->t->pid;
    req.ProducerEpoch = c->t->epoch;
    req.Committed = ((const end_arg_t *)c->arg)->commit != 0;
    return sf_proto_EndTxnRequest_encode(wb, version, &req);
}

static int end_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    txn_call_t *c = arg;
    sf_proto_EndTxnResponse_t resp;
    sf_arena_t arena;
    int rc;
    sf_arena_init(&arena, 0);
    rc = decoded(sf_proto_EndTxnResponse_decode(body, version, &arena, &resp));
    if (rc == SF_OK)
        c->kerr = resp.ErrorCode;
    sf_arena_reset(&arena);
    return rc;
}

int sf_txnreq_end(sf_client_t *cl, const sf_txn_t *t, int commit, int64_t deadline) {
    end_arg_t ea = {commit};
    txn_call_t c = {t, &ea, 0, -1, -1};
    return txn_run(cl, t->id, SF_COORD_TRANSACTION, SF_PROTO_API_EndTxn, ENDTXN_MAX, end_encode,
                   end_decode, &c, deadline);
}
