/* Transaction verification (KIP-890 part 1): before a partition leader appends the batch
 * that would begin a producer's transaction on a partition, it asks the transaction
 * coordinator of the producer's transactional id whether the partition is in the producer's
 * ongoing transaction: AddPartitionsToTxn v4 with VerifyOnly, one transaction per request,
 * over the inter-broker client (to this broker too, through its own listener), as Kafka's
 * AddPartitionsToTxnManager does. api_produce.c uses it through sf_broker_verify_txn.
 *
 * Any thread: the answer comes on the client's I/O thread. */
#ifndef SF_TXN_VERIFY_H
#define SF_TXN_VERIFY_H

/* How long a verification may take (Kafka's request.timeout.ms for the inter-broker call). */
#define SF_TXN_VERIFY_TIMEOUT_MS 30000

#include <stdint.h>

#include "err.h"
#include "txn.h"

struct sf_client;

/* The coordinator's answer: one Kafka error per partition, in the order asked (NONE: in the
 * transaction). A request that failed on the way gives every partition NETWORK_EXCEPTION. */
typedef void (*sf_txn_verify_cb)(void *arg, const int16_t *errs);

/* 1 for the answers a retry may cure (the coordinator busy, moving or unreachable): the
 * requests that waited for them turn these into an error of their own API that every client
 * retries. */
static inline int sf_txn_verify_retriable(int16_t err) {
    return err == SF_KERR_CONCURRENT_TRANSACTIONS || err == SF_KERR_NETWORK_EXCEPTION ||
           err == SF_KERR_REQUEST_TIMED_OUT || err == SF_KERR_COORDINATOR_LOAD_IN_PROGRESS ||
           err == SF_KERR_COORDINATOR_NOT_AVAILABLE || err == SF_KERR_NOT_COORDINATOR;
}

/* Ask broker @coordinator about @parts (@n, sorted by topic so each topic is named once;
 * borrowed until @cb) of producer @producer_id at @epoch with transactional id @txn_id,
 * waiting at most @timeout_ms. @cb runs exactly once when this returns SF_OK; on an error
 * (SF_ERR_NOMEM, or the client refused the request) it does not run. */
int sf_txn_verify(struct sf_client *cl, int32_t coordinator, const char *txn_id,
                  int64_t producer_id, int16_t epoch, const sf_txn_tp_t *parts, int n,
                  int timeout_ms, sf_txn_verify_cb cb, void *arg);

#endif
