/* Transaction verification requests (verify.h). */
#include "verify.h"

#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "client.h"
#include "err.h"
#include "kmsg.h"

#define VERIFY_VERSION 4 /* the first with VerifyOnly; v5 only adds TRANSACTION_ABORTABLE */

typedef struct verify_req {
    sf_arena_t arena;
    sf_proto_AddPartitionsToTxnRequest_t req;
    const sf_txn_tp_t *parts;
    int n;
    sf_txn_verify_cb cb;
    void *arg;
    int16_t errs[];
} verify_req_t;

static int verify_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    verify_req_t *r = arg;
    if (version < VERIFY_VERSION)
        return SF_ERR_UNSUPPORTED; /* a coordinator that cannot verify: fails the request */
    return sf_proto_AddPartitionsToTxnRequest_encode(wb, version, &r->req);
}

/* The error of partition @tp in @res, UNKNOWN_SERVER_ERROR when it is not answered. */
static int16_t answered(const sf_proto_AddPartitionsToTxnResponse_AddPartitionsToTxnResult_t *res,
                        const sf_txn_tp_t *tp) {
    int t, p;
    for (t = 0; t < res->TopicResultsCount; t++) {
        const sf_proto_AddPartitionsToTxnResponse_AddPartitionsToTxnTopicResult_t *tr =
            &res->TopicResults[t];
        if (!sf_slice_eq(tr->Name, tp->topic))
            continue;
        for (p = 0; p < tr->ResultsByPartitionCount; p++)
            if (tr->ResultsByPartition[p].PartitionIndex == tp->partition)
                return tr->ResultsByPartition[p].PartitionErrorCode;
    }
    return SF_KERR_UNKNOWN_SERVER_ERROR;
}

static void verify_done(sf_client_t *cl, int err, int32_t broker_id, int16_t version,
                        sf_rbuf_t *body, void *arg) {
    verify_req_t *r = arg;
    sf_proto_AddPartitionsToTxnResponse_t resp;
    int i;
    (void)cl;
    (void)broker_id;
    for (i = 0; i < r->n; i++)
        r->errs[i] = SF_KERR_NETWORK_EXCEPTION;
    if (!err && sf_proto_AddPartitionsToTxnResponse_decode(body, version, &r->arena, &resp) ==
                    SF_OK) {
        for (i = 0; i < r->n; i++)
            r->errs[i] = resp.ErrorCode              ? resp.ErrorCode
                         : resp.ResultsByTransactionCount != 1 ? SF_KERR_UNKNOWN_SERVER_ERROR
                         : answered(&resp.ResultsByTransaction[0], &r->parts[i]);
    }
    r->cb(r->arg, r->errs);
    sf_arena_reset(&r->arena);
    free(r);
}

/* The one transaction of the request: @r's partitions grouped by topic. */
static int verify_build(verify_req_t *r, const char *txn_id, int64_t producer_id,
                        int16_t epoch) {
    sf_proto_AddPartitionsToTxnRequest_AddPartitionsToTxnTransaction_t *tx;
    sf_proto_AddPartitionsToTxnRequest_AddPartitionsToTxnTopic_t *tp = NULL;
    int i;
    sf_proto_AddPartitionsToTxnRequest_init(&r->req);
    if (!(tx = sf_arena_calloc(&r->arena, 1, sizeof(*tx))))
        return SF_ERR_NOMEM;
    sf_proto_AddPartitionsToTxnRequest_AddPartitionsToTxnTransaction_init(tx);
    if (!(tx->Topics = sf_arena_calloc(&r->arena, (size_t)r->n, sizeof(*tx->Topics))))
        return SF_ERR_NOMEM;
    r->req.Transactions = tx;
    r->req.TransactionsCount = 1;
    tx->TransactionalId = sf_slice_cstr(txn_id);
    tx->ProducerId = producer_id;
    tx->ProducerEpoch = epoch;
    tx->VerifyOnly = 1;
    for (i = 0; i < r->n; i++) {
        if (!tp || !sf_slice_eq(tp->Name, r->parts[i].topic)) {
            tp = &tx->Topics[tx->TopicsCount++];
            sf_proto_AddPartitionsToTxnRequest_AddPartitionsToTxnTopic_init(tp);
            tp->Name = sf_slice_cstr(r->parts[i].topic);
            if (!(tp->Partitions = sf_arena_calloc(&r->arena, (size_t)r->n, sizeof(int32_t))))
                return SF_ERR_NOMEM;
        }
        tp->Partitions[tp->PartitionsCount++] = r->parts[i].partition;
    }
    return SF_OK;
}

int sf_txn_verify(sf_client_t *cl, int32_t coordinator, const char *txn_id,
                  int64_t producer_id, int16_t epoch, const sf_txn_tp_t *parts, int n,
                  int timeout_ms, sf_txn_verify_cb cb, void *arg) {
    verify_req_t *r = calloc(1, sizeof(*r) + (size_t)(n + 1) * sizeof(int16_t));
    int rc;
    if (!r)
        return SF_ERR_NOMEM;
    sf_arena_init(&r->arena, 0);
    r->parts = parts;
    r->n = n;
    r->cb = cb;
    r->arg = arg;
    rc = verify_build(r, txn_id, producer_id, epoch);
    if (rc == SF_OK) {
        sf_client_lock(cl);
        /* Not on the connection whose follower fetches wait at the coordinator for data
         * (replica.fetch.wait.max.ms): a broker answers a connection's requests in order. */
        rc = sf_client_request(cl, SF_CLIENT_COORD_CONN(coordinator),
                               SF_PROTO_API_AddPartitionsToTxn, VERIFY_VERSION,
                               verify_encode, verify_done, r, timeout_ms, 0);
        sf_client_unlock(cl);
    }
    if (rc != SF_OK) {
        sf_arena_reset(&r->arena);
        free(r);
    }
    return rc;
}
