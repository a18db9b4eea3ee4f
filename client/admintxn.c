/* Admin calls about transactions: every transactional id of the cluster (ListTransactions to
 * each broker) and one id's state at its transaction coordinator (DescribeTransactions). */
#include <stdlib.h>
#include <string.h>

#include "adminapi.h"
#include "arena.h"
#include "cgroup.h"
#include "coord.h"
#include "proto.h"

#define LISTTXNS_MAX 1
#define DESCRIBETXNS_MAX 0

/* ---- ListTransactions ---- */

typedef struct lt_call {
    sf_txn_listing_t *v;
    size_t n, cap;
    int32_t broker;
    int16_t kerr;
} lt_call_t;

static int lt_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    sf_proto_ListTransactionsRequest_t req;
    (void)arg;
    sf_proto_ListTransactionsRequest_init(&req); /* no filters */
    return sf_proto_ListTransactionsRequest_encode(wb, version, &req);
}

static int lt_add(lt_call_t *c, const sf_proto_ListTransactionsResponse_TransactionState_t *ts) {
    sf_txn_listing_t *e;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        sf_txn_listing_t *v = realloc(c->v, cap * sizeof(*v));
        if (!v)
            return SF_ERROR_NOMEM;
        c->v = v;
        c->cap = cap;
    }
    e = &c->v[c->n];
    e->transactional_id = sf_admin_dup_slice(ts->TransactionalId);
    e->state = sf_admin_dup_slice(ts->TransactionState);
    e->producer_id = ts->ProducerId;
    e->coordinator = c->broker;
    if (!e->transactional_id || !e->state) {
        free(e->transactional_id);
        free(e->state);
        return SF_ERROR_NOMEM;
    }
    c->n++;
    return SF_OK;
}

static int lt_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    lt_call_t *c = arg;
    sf_proto_ListTransactionsResponse_t resp;
    sf_arena_t arena;
    int32_t i;
    int rc;
    sf_arena_init(&arena, 0);
    rc = sf_admin_decoded(sf_proto_ListTransactionsResponse_decode(body, version, &arena, &resp));
    if (rc == SF_OK)
        c->kerr = resp.ErrorCode;
    for (i = 0; rc == SF_OK && !resp.ErrorCode && i < resp.TransactionStatesCount; i++)
        rc = lt_add(c, &resp.TransactionStates[i]);
    sf_arena_reset(&arena);
    return rc;
}

static int listing_cmp(const void *x, const void *y) {
    const sf_txn_listing_t *a = x, *b = y;
    return strcmp(a->transactional_id, b->transactional_id);
}

void sf_txn_listings_destroy(sf_txn_listing_t *txns, size_t count) {
    size_t i;
    for (i = 0; txns && i < count; i++) {
        free(txns[i].transactional_id);
        free(txns[i].state);
    }
    free(txns);
}

/* Sorted by id, each listed once (an id whose coordinator moved between two answers is
 * listed by both). */
static void listings_merge(lt_call_t *c) {
    size_t i, k = 0;
    if (c->n > 1)
        qsort(c->v, c->n, sizeof(*c->v), listing_cmp);
    for (i = 0; i < c->n; i++) {
        if (k > 0 && !strcmp(c->v[k - 1].transactional_id, c->v[i].transactional_id)) {
            free(c->v[i].transactional_id);
            free(c->v[i].state);
            continue;
        }
        c->v[k++] = c->v[i];
    }
    c->n = k;
}

int sf_admin_list_transactions(sf_admin_t *a, int timeout_ms, sf_txn_listing_t **txns,
                               size_t *count) {
    lt_call_t lc;
    int rc;
    if (txns)
        *txns = NULL;
    if (count)
        *count = 0;
    if (!a || !txns || !count)
        return SF_ERROR_INVALID;
    memset(&lc, 0, sizeof(lc));
    rc = sf_admin_each_broker(a, sf_admin_deadline(a, timeout_ms), SF_PROTO_API_ListTransactions,
                              LISTTXNS_MAX, lt_encode, lt_decode, &lc, &lc.broker, &lc.kerr);
    listings_merge(&lc);
    *txns = lc.v;
    *count = lc.n;
    return rc;
}

/* ---- DescribeTransactions ---- */

typedef struct dt_call {
    const char *id;
    sf_txn_info_t *info;
    int err; /* the id's error in the answer */
} dt_call_t;

static int dt_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    dt_call_t *c = arg;
    sf_proto_DescribeTransactionsRequest_t req;
    sf_slice_t id = sf_slice_cstr(c->id);
    sf_proto_DescribeTransactionsRequest_init(&req);
    req.TransactionalIds = &id;
    req.TransactionalIdsCount = 1;
    return sf_proto_DescribeTransactionsRequest_encode(wb, version, &req);
}

void sf_txn_info_destroy(sf_txn_info_t *info) {
    size_t i;
    if (!info)
        return;
    for (i = 0; i < info->partition_count; i++)
        free((char *)info->partitions[i].topic);
    free(info->partitions);
    free(info->transactional_id);
    free(info->state);
    free(info);
}

static int dt_partitions(sf_txn_info_t *info,
                         const sf_proto_DescribeTransactionsResponse_TransactionState_t *ts) {
    size_t n = 0;
    int32_t t, p;
    for (t = 0; t < ts->TopicsCount; t++)
        n += ts->Topics[t].PartitionsCount > 0 ? (size_t)ts->Topics[t].PartitionsCount : 0;
    if (!(info->partitions = calloc(n + 1, sizeof(*info->partitions))))
        return SF_ERROR_NOMEM;
    for (t = 0; t < ts->TopicsCount; t++)
        for (p = 0; p < ts->Topics[t].PartitionsCount; p++) {
            sf_topic_partition_t *tp = &info->partitions[info->partition_count];
            if (!(tp->topic = sf_admin_dup_slice(ts->Topics[t].Topic)))
                return SF_ERROR_NOMEM;
            tp->partition = ts->Topics[t].Partitions[p];
            tp->offset = -1;
            info->partition_count++;
        }
    return SF_OK;
}

static int dt_take(dt_call_t *c, const sf_proto_DescribeTransactionsResponse_TransactionState_t *ts) {
    sf_txn_info_t *info;
    c->err = sf_client_kerr(ts->ErrorCode);
    if (c->err)
        return SF_OK;
    if (!(info = calloc(1, sizeof(*info))))
        return SF_ERROR_NOMEM;
    info->timeout_ms = ts->TransactionTimeoutMs;
    info->start_ms = ts->TransactionStartTimeMs;
    info->producer_id = ts->ProducerId;
    info->producer_epoch = ts->ProducerEpoch;
    if (!(info->transactional_id = sf_admin_dup_slice(ts->TransactionalId)) ||
        !(info->state = sf_admin_dup_slice(ts->TransactionState)) || dt_partitions(info, ts) != SF_OK) {
        sf_txn_info_destroy(info);
        return SF_ERROR_NOMEM;
    }
    sf_txn_info_destroy(c->info); /* an answer before a coordinator moved */
    c->info = info;
    return SF_OK;
}

static int dt_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    dt_call_t *c = arg;
    sf_proto_DescribeTransactionsResponse_t resp;
    sf_arena_t arena;
    int32_t i;
    int rc;
    sf_arena_init(&arena, 0);
    rc = sf_admin_decoded(
        sf_proto_DescribeTransactionsResponse_decode(body, version, &arena, &resp));
    c->err = SF_ERROR_MALFORMED; /* unless the id is in the answer */
    for (i = 0; rc == SF_OK && i < resp.TransactionStatesCount; i++)
        if (sf_slice_eq(resp.TransactionStates[i].TransactionalId, c->id))
            rc = dt_take(c, &resp.TransactionStates[i]);
    sf_arena_reset(&arena);
    /* NOT_COORDINATOR and the like: the call finds the coordinator again */
    return rc == SF_OK && sf_cgroup_coord_retriable(c->err) ? c->err : rc;
}

int sf_admin_describe_transaction(sf_admin_t *a, const char *transactional_id, int timeout_ms,
                                  sf_txn_info_t **info) {
    dt_call_t c = {transactional_id, NULL, 0};
    int32_t coord = -1;
    int rc;
    if (info)
        *info = NULL;
    if (!a || !transactional_id || !transactional_id[0] || !info)
        return SF_ERROR_INVALID;
    rc = sf_coord_call(sf_admin_client(a), transactional_id, SF_COORD_TRANSACTION,
                       SF_PROTO_API_DescribeTransactions, DESCRIBETXNS_MAX, dt_encode, dt_decode,
                       &c, sf_admin_deadline(a, timeout_ms), &coord);
    if (rc == SF_OK)
        rc = c.err;
    if (rc != SF_OK) {
        sf_txn_info_destroy(c.info);
        return rc;
    }
    c.info->coordinator = coord;
    *info = c.info;
    return SF_OK;
}
