/* The idempotent producer's identity and sequence numbers (see idempotence.h). */
#include "idempotence.h"

#include <inttypes.h>

#include "clientconf.h"
#include "clock.h"
#include "err.h"
#include "proto.h"

#define IDEM_INIT_VERSION 4 /* InitProducerId: v4 is the last before transactions v2 */
#define IDEM_BACKOFF_MAX_MS 1000

void sf_idem_init(sf_idem_t *id, int enabled, void (*wake)(void *), void *arg) {
    id->state = enabled ? SF_IDEM_NEED : SF_IDEM_OFF;
    id->pid = -1;
    id->epoch = -1;
    id->inflight = 0;
    id->retry_at = 0;
    id->tries = 0;
    id->wake = wake;
    id->arg = arg;
}

static int init_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    sf_proto_InitProducerIdRequest_t req;
    (void)arg;
    sf_proto_InitProducerIdRequest_init(&req);
    req.TransactionalId.p = NULL;
    req.TransactionalId.len = -1;
    req.TransactionTimeoutMs = 60000;
    return sf_proto_InitProducerIdRequest_encode(wb, version, &req);
}

static void init_response(sf_client_t *cl, int err, int32_t broker_id, int16_t version,
                          sf_rbuf_t *body, void *arg) {
    sf_idem_t *id = arg;
    sf_proto_InitProducerIdResponse_t resp;
    sf_arena_t arena;
    const sf_clientconf_t *cc = sf_client_conf(cl);
    int64_t backoff;
    sf_arena_init(&arena, 0);
    if (!err && sf_proto_InitProducerIdResponse_decode(body, version, &arena, &resp) != SF_OK)
        err = SF_ERROR_MALFORMED;
    else if (!err)
        err = sf_client_kerr(resp.ErrorCode);
    sf_arena_reset(&arena);
    if (err == SF_ERROR_DESTROYED)
        return;
    if (err == SF_ERROR_UNSUPPORTED) {
        sf_client_log(cl, SF_LOG_LEVEL_WARNING, "producer: broker %" PRId32 " has no "
                      "InitProducerId: idempotence is off", broker_id);
        id->state = SF_IDEM_OFF;
    } else if (err) {
        backoff = (int64_t)cc->retry_backoff_ms << (id->tries < 4 ? id->tries : 4);
        id->tries++;
        id->state = SF_IDEM_NEED;
        id->retry_at = sf_clock_mono_ms() +
                       (backoff < IDEM_BACKOFF_MAX_MS ? backoff : IDEM_BACKOFF_MAX_MS);
        sf_client_log(cl, SF_LOG_LEVEL_INFO, "producer: InitProducerId failed (%s); retrying",
                      sf_error_name(err));
    } else {
        id->pid = resp.ProducerId;
        id->epoch = resp.ProducerEpoch;
        id->tries = 0;
        id->state = SF_IDEM_READY;
        sf_client_log(cl, SF_LOG_LEVEL_DEBUG, "producer: producer id %" PRId64 ", epoch %d",
                      id->pid, (int)id->epoch);
    }
    id->wake(id->arg);
}

void sf_idem_external(sf_idem_t *id) {
    id->external = 1;
}

void sf_idem_set(sf_idem_t *id, int64_t pid, int16_t epoch) {
    id->pid = pid;
    id->epoch = epoch;
    id->tries = 0;
    id->state = SF_IDEM_READY;
}

int sf_idem_ready(sf_idem_t *id, sf_client_t *cl, int64_t now, int64_t *next) {
    switch (id->state) {
    case SF_IDEM_OFF:
    case SF_IDEM_READY: return 1;
    case SF_IDEM_RESET:
        if (id->inflight > 0)
            return 0; /* their answers come first: they may be retried under the new id */
        id->state = SF_IDEM_NEED;
        id->retry_at = now;
        /* fall through */
    case SF_IDEM_NEED:
        if (id->external)
            return 0; /* the application takes the next one (sf_idem_set) */
        if (now < id->retry_at) {
            if (id->retry_at < *next)
                *next = id->retry_at;
            return 0;
        }
        if (sf_client_request(cl, SF_CLIENT_ANY_BROKER, SF_PROTO_API_InitProducerId,
                              IDEM_INIT_VERSION, init_encode, init_response, id, -1, 0) == SF_OK)
            id->state = SF_IDEM_ASKING;
        else if ((id->retry_at = now + IDEM_BACKOFF_MAX_MS) < *next)
            *next = id->retry_at;
        return 0;
    case SF_IDEM_ASKING: return 0;
    }
    return 0;
}

void sf_idem_stamp(sf_idem_t *id, sf_producer_part_t *part, sf_producer_batch_t *b) {
    if (id->state == SF_IDEM_OFF)
        return;
    id->inflight++;
    if (b->pid == id->pid && b->epoch == id->epoch)
        return; /* a retry: the same numbers, so the leader knows it */
    if (part->seq_pid != id->pid || part->seq_epoch != id->epoch) {
        part->seq_pid = id->pid;
        part->seq_epoch = id->epoch;
        part->next_seq = 0;
    }
    b->pid = id->pid;
    b->epoch = id->epoch;
    b->seq = part->next_seq;
    /* Sequences wrap from INT32_MAX to 0, as the brokers expect. */
    part->next_seq = part->next_seq > INT32_MAX - b->count
                         ? part->next_seq - (INT32_MAX - b->count) - 1
                         : part->next_seq + b->count;
    if (b->closed)
        sf_producer_batch_restamp(b);
}

static void renew(sf_idem_t *id) {
    if (id->state == SF_IDEM_READY)
        id->state = SF_IDEM_RESET;
}

int sf_idem_answered(sf_idem_t *id, sf_producer_batch_t *b, int err, int *renew_id) {
    *renew_id = 0;
    if (id->state == SF_IDEM_OFF || b->pid < 0)
        return err;
    if (id->inflight > 0)
        id->inflight--;
    switch (err) {
    case SF_KERR_DUPLICATE_SEQUENCE_NUMBER: return 0;
    case SF_KERR_OUT_OF_ORDER_SEQUENCE_NUMBER:
    case SF_KERR_UNKNOWN_PRODUCER_ID:
    case SF_KERR_INVALID_PRODUCER_EPOCH:
        /* Only if the batch still carries the current id: a batch of an older one is
         * simply sent again under the new one. */
        if (b->pid == id->pid && b->epoch == id->epoch)
            renew(id);
        *renew_id = 1;
        return err;
    default: return err;
    }
}

/* Errors with which a leader refuses a batch before writing anything. */
static int refused_unwritten(int err) {
    switch (err) {
    case SF_KERR_MESSAGE_TOO_LARGE:
    case SF_KERR_RECORD_LIST_TOO_LARGE:
    case SF_KERR_CORRUPT_MESSAGE:
    case SF_KERR_INVALID_RECORD:
    case SF_KERR_INVALID_TIMESTAMP:
    case SF_KERR_UNSUPPORTED_FOR_MESSAGE_FORMAT:
    case SF_KERR_UNSUPPORTED_COMPRESSION_TYPE:
    case SF_KERR_UNKNOWN_TOPIC_OR_PARTITION:
    case SF_KERR_NOT_ENOUGH_REPLICAS: return 1;
    default: return 0;
    }
}

void sf_idem_failed(sf_idem_t *id, sf_producer_part_t *part, sf_producer_batch_t *b, int err) {
    int32_t end;
    if (id->state == SF_IDEM_OFF || b->pid < 0 || b->pid != id->pid || b->epoch != id->epoch)
        return;
    end = b->seq > INT32_MAX - b->count ? b->seq - (INT32_MAX - b->count) - 1 : b->seq + b->count;
    /* Only a first attempt's refusal is sure: an earlier attempt that timed out may have been
     * written, and its retry refused for another reason (NOT_ENOUGH_REPLICAS). */
    if (refused_unwritten(err) && b->attempts == 0 && part->seq_pid == b->pid &&
        part->next_seq == end)
        part->next_seq = b->seq; /* nothing took those numbers */
    else
        renew(id);
}
