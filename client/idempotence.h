/* The idempotent producer (enable.idempotence, on by default as in the Java client): a
 * producer id and epoch from InitProducerId, and per partition the sequence numbers stamped
 * on its batches, so that the leader stores a retried batch once and refuses one out of
 * order. The producer keeps one batch in flight per partition, so a partition's batches reach
 * its leader in sequence order, retries included.
 *
 * When a leader says it lost track (OUT_OF_ORDER_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID,
 * INVALID_PRODUCER_EPOCH), or a batch fails for good after it may have been written, the
 * producer stops sending, waits for the batches in flight, takes a new producer id and starts
 * every partition at sequence 0 again (the recovery of KIP-360, as the Java client does it);
 * batches sent again then carry the new id. A broker without InitProducerId turns
 * idempotence off, with a warning.
 *
 * I/O thread, client lock held. */
#ifndef SF_CLIENT_IDEMPOTENCE_H
#define SF_CLIENT_IDEMPOTENCE_H

#include <stdint.h>

#include "client.h"
#include "producer.h"

typedef enum {
    SF_IDEM_OFF,    /* not idempotent */
    SF_IDEM_NEED,   /* no producer id yet: ask (at retry_at) */
    SF_IDEM_ASKING, /* InitProducerId in flight */
    SF_IDEM_READY,  /* batches are stamped and sent */
    SF_IDEM_RESET,  /* a new producer id is needed once nothing is in flight */
} sf_idem_state_t;

typedef struct sf_idem {
    sf_idem_state_t state;
    int64_t pid;
    int16_t epoch;
    int inflight;     /* stamped batches sent and not answered */
    int64_t retry_at; /* SF_IDEM_NEED: not before this (monotonic ms) */
    int tries;        /* InitProducerId failures in a row (for the backoff) */
    void (*wake)(void *arg); /* run when a producer id arrived */
    void *arg;
    int external; /* a transactional producer: the application gets the producer id */
} sf_idem_t;

/* Start in SF_IDEM_NEED when @enabled, else SF_IDEM_OFF; @wake(@arg) runs the producer. */
void sf_idem_init(sf_idem_t *id, int enabled, void (*wake)(void *), void *arg);

/* A transactional producer (txnproducer.h): producer ids come from sf_idem_set, never
 * asked for here; one that must be replaced waits in SF_IDEM_NEED for the next. */
void sf_idem_external(sf_idem_t *id);
void sf_idem_set(sf_idem_t *id, int64_t pid, int16_t epoch);

/* 1 when batches may be sent now (idempotence off, or a producer id is ready). Otherwise
 * asks for a producer id when it is time and lowers *@next to when to look again. */
int sf_idem_ready(sf_idem_t *id, sf_client_t *cl, int64_t now, int64_t *next);

/* Give @b, about to be sent to @part's leader, the current producer id, epoch and the
 * partition's next sequence numbers, unless it carries them already (a retry). The header
 * and CRC are rewritten when @b was encoded with other ones. Counts it in flight. */
void sf_idem_stamp(sf_idem_t *id, sf_producer_part_t *part, sf_producer_batch_t *b);

/* The answer for a stamped batch @b arrived (or the request failed): no longer in flight.
 * Returns what the producer makes of @err (0 or a Kafka / library error): 0 for success
 * (DUPLICATE_SEQUENCE_NUMBER is a success: the leader has it), and sets *@renew when the
 * producer id must be replaced, the batch then being sent again under the new one. */
int sf_idem_answered(sf_idem_t *id, sf_producer_batch_t *b, int err, int *renew);

/* @b, stamped, failed for good with @err (it is not sent again): the leader may hold it, so
 * the partition's next sequences would not follow. A new producer id is taken (see above),
 * unless @err says the leader refused the batch (a record or size error: nothing written) on
 * its first attempt and @b is the latest of its partition: then the partition's sequence
 * goes back. */
void sf_idem_failed(sf_idem_t *id, sf_producer_part_t *part, sf_producer_batch_t *b, int err);

#endif
