/* The transaction coordinator's APIs, on the metadata thread (txn.h): AddPartitionsToTxn
 * (every version; v4+ batches transactions and may only verify), AddOffsetsToTxn, EndTxn,
 * DescribeTransactions and ListTransactions. InitProducerId is in api_producers.c,
 * WriteTxnMarkers (the partition leaders' side) in api_txn_markers.c. */
#include "dispatch.h"

#include <stdlib.h>
#include <string.h>

#include "broker.h"
#include "clock.h"
#include "txn.h"

/* Before v2 a fenced producer hears INVALID_PRODUCER_EPOCH (PRODUCER_FENCED came with it). */
static int16_t fenced_error(const sf_kreq_t *kr) {
    return kr->version < 2 ? SF_KERR_INVALID_PRODUCER_EPOCH : SF_KERR_PRODUCER_FENCED;
}

static sf_txn_coord_t *coord(sf_kreq_t *kr) {
    return sf_broker_txn_coordinator(kr->b);
}

/* ---- AddPartitionsToTxn ---- */

typedef struct add_txn {
    struct add_op *op;
    sf_proto_AddPartitionsToTxnResponse_AddPartitionsToTxnTopicResult_t *results;
    int nresults;
    sf_txn_tp_t *parts;
    int nparts;
} add_txn_t;

typedef struct add_op {
    sf_kreq_t *kr;
    sf_proto_AddPartitionsToTxnResponse_t resp;
    int pending;
} add_op_t;

static void add_finish(add_op_t *op) {
    if (--op->pending == 0)
        sf_kreq_respond(op->kr, &op->resp);
}

/* Fill the per-partition answers, in the order the request named them. */
static void add_fill(add_txn_t *at, const int16_t *errs, int16_t err) {
    int t, p, k = 0;
    for (t = 0; t < at->nresults; t++)
        for (p = 0; p < at->results[t].ResultsByPartitionCount; p++, k++)
            at->results[t].ResultsByPartition[p].PartitionErrorCode = errs ? errs[k] : err;
}

static void add_done(void *arg, int16_t error, const int16_t *errs) {
    add_txn_t *at = arg;
    add_fill(at, errs, error);
    add_finish(at->op);
}

/* 1 when partition @idx of @topic (named @name) exists. A verification may name a group's
 * offsets partition (TxnOffsetCommit's, api_offsets.c): a bucket of the group coordinators. */
static int add_known(const sf_kreq_t *kr, const char *name, const sf_cluster_topic_t *topic,
                     int32_t idx, int verify_only) {
    if (verify_only && !strcmp(name, "__consumer_offsets"))
        return kr->snap && idx >= 0 && idx < kr->snap->ngroup_buckets;
    return topic && idx >= 0 && idx < topic->npartitions;
}

/* The answer slots and partition list of one transaction's topics; 0 when a topic or
 * partition is unknown (then already answered: those UNKNOWN_TOPIC_OR_PARTITION, the others
 * OPERATION_NOT_ATTEMPTED, as Kafka). -1 on no memory. */
static int add_prepare(sf_kreq_t *kr, add_txn_t *at,
                       const sf_proto_AddPartitionsToTxnRequest_AddPartitionsToTxnTopic_t *tv,
                       int nt, int verify_only) {
    int t, p, k = 0, n = 0, unknown = 0;
    for (t = 0; t < nt; t++)
        n += tv[t].PartitionsCount;
    if (!(at->results = sf_kreq_alloc(kr, (size_t)nt + 1, sizeof(*at->results))) ||
        !(at->parts = sf_kreq_alloc(kr, (size_t)n + 1, sizeof(*at->parts))))
        return -1;
    at->nresults = nt;
    at->nparts = n;
    for (t = 0; t < nt; t++) {
        sf_proto_AddPartitionsToTxnResponse_AddPartitionsToTxnTopicResult_t *r = &at->results[t];
        const char *name = sf_kreq_str(kr, tv[t].Name);
        const sf_cluster_topic_t *topic = name ? sf_kreq_topic(kr, name) : NULL;
        sf_proto_AddPartitionsToTxnResponse_AddPartitionsToTxnTopicResult_init(r);
        r->Name = tv[t].Name;
        if (!name || !(r->ResultsByPartition = sf_kreq_alloc(
                           kr, (size_t)tv[t].PartitionsCount + 1, sizeof(*r->ResultsByPartition))))
            return -1;
        r->ResultsByPartitionCount = tv[t].PartitionsCount;
        for (p = 0; p < tv[t].PartitionsCount; p++, k++) {
            int32_t idx = tv[t].Partitions[p];
            int known = add_known(kr, name, topic, idx, verify_only);
            r->ResultsByPartition[p].PartitionIndex = idx;
            r->ResultsByPartition[p].PartitionErrorCode =
                known ? SF_KERR_OPERATION_NOT_ATTEMPTED : SF_KERR_UNKNOWN_TOPIC_OR_PARTITION;
            unknown |= !known;
            at->parts[k].topic = name;
            at->parts[k].partition = idx;
        }
    }
    return !unknown;
}

static int add_one(sf_kreq_t *kr, add_op_t *op, add_txn_t *at, sf_slice_t id, int64_t pid,
                   int16_t epoch, int verify_only,
                   const sf_proto_AddPartitionsToTxnRequest_AddPartitionsToTxnTopic_t *tv, int nt) {
    const char *sid = sf_kreq_str(kr, id);
    int rc;
    at->op = op;
    if (!sid || (rc = add_prepare(kr, at, tv, nt, verify_only)) < 0)
        return -1;
    op->pending++;
    if (!rc)
        add_finish(op);
    else if (!coord(kr) || !*sid)
        add_done(at, coord(kr) ? SF_KERR_INVALID_REQUEST : SF_KERR_COORDINATOR_NOT_AVAILABLE,
                 NULL);
    else
        sf_txn_add_partitions(coord(kr), sid, pid, epoch, at->parts, at->nparts, verify_only,
                              fenced_error(kr), add_done, at);
    return 0;
}

void sf_kapi_AddPartitionsToTxn(sf_kreq_t *kr, void *msg) {
    const sf_proto_AddPartitionsToTxnRequest_t *req = msg;
    add_op_t *op = sf_kreq_alloc(kr, 1, sizeof(*op));
    add_txn_t *ats;
    int i, n = kr->version < 4 ? 1 : req->TransactionsCount;
    if (!op || !(ats = sf_kreq_alloc(kr, (size_t)n + 1, sizeof(*ats))))
        goto nomem;
    op->kr = kr;
    op->pending = 1; /* until every transaction is under way */
    sf_proto_AddPartitionsToTxnResponse_init(&op->resp);
    if (kr->version < 4) {
        if (add_one(kr, op, &ats[0], req->V3AndBelowTransactionalId, req->V3AndBelowProducerId,
                    req->V3AndBelowProducerEpoch, 0, req->V3AndBelowTopics,
                    req->V3AndBelowTopicsCount) < 0)
            goto nomem;
        op->resp.ResultsByTopicV3AndBelow = ats[0].results;
        op->resp.ResultsByTopicV3AndBelowCount = ats[0].nresults;
        add_finish(op);
        return;
    }
    if (!(op->resp.ResultsByTransaction =
              sf_kreq_alloc(kr, (size_t)n + 1, sizeof(*op->resp.ResultsByTransaction))))
        goto nomem;
    op->resp.ResultsByTransactionCount = n;
    for (i = 0; i < n; i++) {
        const sf_proto_AddPartitionsToTxnRequest_AddPartitionsToTxnTransaction_t *tx =
            &req->Transactions[i];
        sf_proto_AddPartitionsToTxnResponse_AddPartitionsToTxnResult_t *r =
            &op->resp.ResultsByTransaction[i];
        sf_proto_AddPartitionsToTxnResponse_AddPartitionsToTxnResult_init(r);
        r->TransactionalId = tx->TransactionalId;
        if (add_one(kr, op, &ats[i], tx->TransactionalId, tx->ProducerId, tx->ProducerEpoch,
                    tx->VerifyOnly, tx->Topics, tx->TopicsCount) < 0) {
            /* Others may be under way already: answer this one as failed as a whole. */
            op->resp.ErrorCode = SF_KERR_UNKNOWN_SERVER_ERROR;
            ats[i].results = NULL;
            ats[i].nresults = 0;
        }
        r->TopicResults = ats[i].results; /* filled when the coordinator answers */
        r->TopicResultsCount = ats[i].nresults;
    }
    add_finish(op);
    return;
nomem:
    sf_kreq_close(kr, "no memory for the request");
}

/* ---- AddOffsetsToTxn ---- */

static void offsets_done(void *arg, int16_t error, const int16_t *errs) {
    sf_kreq_t *kr = arg;
    sf_proto_AddOffsetsToTxnResponse_t resp;
    sf_proto_AddOffsetsToTxnResponse_init(&resp);
    resp.ErrorCode = errs ? errs[0] : error;
    sf_kreq_respond(kr, &resp);
}

void sf_kapi_AddOffsetsToTxn(sf_kreq_t *kr, void *msg) {
    const sf_proto_AddOffsetsToTxnRequest_t *req = msg;
    const char *id = sf_kreq_str(kr, req->TransactionalId), *group = sf_kreq_str(kr, req->GroupId);
    if (!id || !group) {
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    if (!coord(kr) || !*id) {
        offsets_done(kr, coord(kr) ? SF_KERR_INVALID_REQUEST : SF_KERR_COORDINATOR_NOT_AVAILABLE,
                     NULL);
        return;
    }
    sf_txn_add_offsets(coord(kr), id, req->ProducerId, req->ProducerEpoch, group,
                       fenced_error(kr), offsets_done, kr);
}

/* ---- EndTxn ---- */

static void end_done(void *arg, int16_t error, int64_t pid, int16_t epoch) {
    sf_kreq_t *kr = arg;
    sf_proto_EndTxnResponse_t resp;
    sf_proto_EndTxnResponse_init(&resp);
    resp.ErrorCode = error;
    resp.ProducerId = pid;
    resp.ProducerEpoch = epoch;
    sf_kreq_respond(kr, &resp);
}

void sf_kapi_EndTxn(sf_kreq_t *kr, void *msg) {
    const sf_proto_EndTxnRequest_t *req = msg;
    const char *id = sf_kreq_str(kr, req->TransactionalId);
    if (!id) {
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    if (!coord(kr) || !*id) {
        end_done(kr, coord(kr) ? SF_KERR_INVALID_REQUEST : SF_KERR_COORDINATOR_NOT_AVAILABLE, -1,
                 -1);
        return;
    }
    sf_txn_end(coord(kr), id, req->ProducerId, req->ProducerEpoch, req->Committed,
               fenced_error(kr), end_done, kr);
}

/* ---- DescribeTransactions ---- */

typedef struct desc_op {
    sf_kreq_t *kr;
    sf_proto_DescribeTransactionsResponse_t resp;
    int pending;
} desc_op_t;

typedef struct desc_one {
    desc_op_t *op;
    sf_proto_DescribeTransactionsResponse_TransactionState_t *st;
} desc_one_t;

static void desc_finish(desc_op_t *op) {
    if (--op->pending == 0)
        sf_kreq_respond(op->kr, &op->resp);
}

/* The partitions of @d, grouped by topic (they come sorted), into @st. */
static int desc_topics(sf_kreq_t *kr, const sf_txn_description_t *d,
                       sf_proto_DescribeTransactionsResponse_TransactionState_t *st) {
    sf_proto_DescribeTransactionsResponse_TopicData_t *td = NULL;
    int i;
    if (!(st->Topics = sf_kreq_alloc(kr, (size_t)d->nparts + 1, sizeof(*st->Topics))))
        return -1;
    for (i = 0; i < d->nparts; i++) {
        if (!td || strcmp(d->parts[i].topic, d->parts[i - 1].topic)) {
            int k, n = 0;
            for (k = i; k < d->nparts && !strcmp(d->parts[k].topic, d->parts[i].topic); k++)
                n++;
            td = &st->Topics[st->TopicsCount++];
            sf_proto_DescribeTransactionsResponse_TopicData_init(td);
            td->Topic = sf_kreq_slice(kr, d->parts[i].topic);
            if (!td->Topic.p || !(td->Partitions = sf_kreq_alloc(kr, (size_t)n, sizeof(int32_t))))
                return -1;
        }
        td->Partitions[td->PartitionsCount++] = d->parts[i].partition;
    }
    return 0;
}

static void desc_done(void *arg, int16_t error, const sf_txn_description_t *d) {
    desc_one_t *one = arg;
    sf_proto_DescribeTransactionsResponse_TransactionState_t *st = one->st;
    st->ErrorCode = error;
    if (!error) {
        st->TransactionState = sf_kreq_slice(one->op->kr, d->state);
        st->TransactionTimeoutMs = d->timeout_ms;
        st->TransactionStartTimeMs = d->start_ms;
        st->ProducerId = d->producer_id;
        st->ProducerEpoch = d->producer_epoch;
        if (desc_topics(one->op->kr, d, st) < 0)
            st->ErrorCode = SF_KERR_UNKNOWN_SERVER_ERROR;
    }
    desc_finish(one->op);
}

void sf_kapi_DescribeTransactions(sf_kreq_t *kr, void *msg) {
    const sf_proto_DescribeTransactionsRequest_t *req = msg;
    desc_op_t *op = sf_kreq_alloc(kr, 1, sizeof(*op));
    desc_one_t *ones;
    int i, n = req->TransactionalIdsCount > 0 ? req->TransactionalIdsCount : 0;
    if (!op || !(ones = sf_kreq_alloc(kr, (size_t)n + 1, sizeof(*ones))) ||
        !(op->resp.TransactionStates = sf_kreq_alloc(kr, (size_t)n + 1,
                                                     sizeof(*op->resp.TransactionStates)))) {
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    op->kr = kr;
    op->pending = n + 1;
    op->resp.TransactionStatesCount = n;
    for (i = 0; i < n; i++) {
        sf_proto_DescribeTransactionsResponse_TransactionState_t *st =
            &op->resp.TransactionStates[i];
        const char *id = sf_kreq_str(kr, req->TransactionalIds[i]);
        sf_proto_DescribeTransactionsResponse_TransactionState_init(st);
        st->TransactionalId = req->TransactionalIds[i];
        st->TransactionState = sf_slice_cstr("");
        ones[i].op = op;
        ones[i].st = st;
        if (!id || !*id || !coord(kr))
            desc_done(&ones[i], !id || !*id ? SF_KERR_TRANSACTIONAL_ID_NOT_FOUND
                                            : SF_KERR_COORDINATOR_NOT_AVAILABLE, NULL);
        else
            sf_txn_describe(coord(kr), id, desc_done, &ones[i]);
    }
    desc_finish(op);
}

/* ---- ListTransactions ---- */

typedef struct list_op {
    sf_kreq_t *kr;
    sf_proto_ListTransactionsResponse_t *resp;
    int cap, failed;
} list_op_t;

static void list_one(void *arg, const sf_txn_description_t *d) {
    list_op_t *op = arg;
    sf_proto_ListTransactionsResponse_TransactionState_t *st;
    if (op->resp->TransactionStatesCount == op->cap) {
        int cap = op->cap ? 2 * op->cap : 16;
        st = sf_kreq_alloc(op->kr, (size_t)cap, sizeof(*st));
        if (!st) {
            op->failed = 1;
            return;
        }
        if (op->cap)
            memcpy(st, op->resp->TransactionStates, (size_t)op->cap * sizeof(*st));
        op->resp->TransactionStates = st;
        op->cap = cap;
    }
    st = &op->resp->TransactionStates[op->resp->TransactionStatesCount];
    sf_proto_ListTransactionsResponse_TransactionState_init(st);
    st->TransactionalId = sf_kreq_slice(op->kr, d->id);
    st->ProducerId = d->producer_id;
    st->TransactionState = sf_kreq_slice(op->kr, d->state);
    if (!st->TransactionalId.p || !st->TransactionState.p)
        op->failed = 1;
    else
        op->resp->TransactionStatesCount++;
}

static const char *const known_states[] = {
    "Empty",          "Ongoing",       "PrepareCommit", "PrepareAbort",
    "CompleteCommit", "CompleteAbort", "Dead",          "PrepareEpochFence"};

static int state_known(sf_slice_t s) {
    size_t i;
    for (i = 0; i < sizeof(known_states) / sizeof(known_states[0]); i++)
        if (sf_slice_eq(s, known_states[i]))
            return 1;
    return 0;
}

void sf_kapi_ListTransactions(sf_kreq_t *kr, void *msg) {
    const sf_proto_ListTransactionsRequest_t *req = msg;
    sf_proto_ListTransactionsResponse_t resp;
    list_op_t op = {kr, &resp, 0, 0};
    int i, ns = req->StateFiltersCount > 0 ? req->StateFiltersCount : 0, nk = 0;
    const char **states = sf_kreq_alloc(kr, (size_t)ns + 1, sizeof(char *));
    sf_proto_ListTransactionsResponse_init(&resp);
    resp.UnknownStateFilters = sf_kreq_alloc(kr, (size_t)ns + 1, sizeof(sf_slice_t));
    if (!states || !resp.UnknownStateFilters)
        goto nomem;
    for (i = 0; i < ns; i++) {
        if (!state_known(req->StateFilters[i]))
            resp.UnknownStateFilters[resp.UnknownStateFiltersCount++] = req->StateFilters[i];
        else if (!(states[nk++] = sf_kreq_str(kr, req->StateFilters[i])))
            goto nomem;
    }
    if (!coord(kr)) {
        resp.ErrorCode = SF_KERR_COORDINATOR_NOT_AVAILABLE;
    } else if (!ns || nk) { /* only unknown states asked for: nothing matches */
        sf_txn_list(coord(kr), states, nk, req->ProducerIdFilters,
                    req->ProducerIdFiltersCount > 0 ? req->ProducerIdFiltersCount : 0,
                    kr->version >= 1 ? req->DurationFilter : -1, sf_clock_wall_ms(), list_one,
                    &op);
        if (op.failed)
            goto nomem;
    }
    sf_kreq_respond(kr, &resp);
    return;
nomem:
    sf_kreq_close(kr, "no memory for the response");
}
