/* The producer state of one partition (Kafka's ProducerStateManager): for every producer id
 * that wrote to it, the epoch, its last five batches (sequence range and offsets), the first
 * offset of its ongoing transaction and the coordinator epoch of its last marker. The
 * leader checks a producer's batch against it before the append: a retried batch is answered
 * with the offsets it got the first time, a batch out of sequence or from an older epoch is
 * refused. Followers record the batches they replicate and the log rebuilds the table from
 * its batch headers when it is opened, so a new leader recognises retries too.
 *
 * Transactions: a transactional batch of a producer with no ongoing transaction starts one at
 * its first offset; a marker (a control batch: commit or abort) ends it. The ongoing ones are
 * also kept sorted by first offset, so the first unstable offset (where the last stable
 * offset stops) is read in O(1) and a marker costs O(ongoing transactions).
 *
 * Pure data structure: the owner serialises access (the partition log's mutex). */
#ifndef SF_PRODUCERS_H
#define SF_PRODUCERS_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "recbatch.h"

/* Batches remembered per producer (Kafka's NumBatchesToRetain; a client has at most five in
 * flight per partition). */
#define SF_PRODUCER_BATCHES 5

typedef struct sf_producer_batch {
    int32_t first_seq, last_seq;
    int64_t first_offset, last_offset;
    int64_t timestamp; /* the batch's MaxTimestamp */
} sf_producer_batch_t;

typedef struct sf_producer {
    int64_t id;     /* -1: a free slot */
    int16_t epoch;
    int nbatches;   /* 0..SF_PRODUCER_BATCHES, oldest first */
    sf_producer_batch_t batches[SF_PRODUCER_BATCHES];
    int64_t last_timestamp; /* MaxTimestamp of the newest batch: what expiry measures */
    int64_t txn_first_offset;  /* first offset of the ongoing transaction, -1: none */
    int32_t coordinator_epoch; /* the coordinator epoch of its last marker, -1: unknown */
    uint64_t verify_guard;     /* a transaction verification under way (KIP-890), 0: none */
} sf_producer_t;

/* An ongoing transaction. */
typedef struct sf_producer_txn {
    int64_t first_offset;
    int64_t producer_id;
} sf_producer_txn_t;

typedef struct sf_producers {
    sf_producer_t *slots; /* open addressing, capacity a power of two */
    size_t cap, n;
    sf_producer_txn_t *txns; /* the ongoing transactions, by first offset */
    size_t ntxns, captxns;
} sf_producers_t;

/* One producer batch as the table sees it. */
typedef struct sf_producer_append {
    int64_t producer_id;
    int16_t epoch;
    int32_t first_seq, last_seq;
    int64_t first_offset, last_offset; /* the offsets the log gave it (record only) */
    int64_t max_timestamp;
    int transactional; /* attributes bit 4: part of a transaction */
    int control;       /* attributes bit 5: a marker (needs sf_producer_marker_parse) */
    int commit;        /* a marker's type: 1 commit, 0 abort */
    int32_t coordinator_epoch; /* a marker's coordinator epoch */
} sf_producer_append_t;

/* Describe the batch whose header is @hdr; 0 when it carries no producer id. A control batch
 * has control set; its type and coordinator epoch are read by sf_producer_marker_parse. */
int sf_producer_append_from(const sf_recbatch_hdr_t *hdr, sf_producer_append_t *out);

/* Read the marker of the control batch at @batch (@len bytes, uncompressed, its one record:
 * key version int16 and type int16, value version int16 and coordinator epoch int32) into
 * b->commit and b->coordinator_epoch. @return SF_OK, or SF_ERR_MALFORMED (a record that does
 * not decode, or another control type than commit and abort). */
int sf_producer_marker_parse(const uint8_t *batch, size_t len, sf_producer_append_t *b);

void sf_producers_init(sf_producers_t *ps);
void sf_producers_free(sf_producers_t *ps);
void sf_producers_clear(sf_producers_t *ps);

/* The entry of producer @id, or NULL. */
const sf_producer_t *sf_producers_find(const sf_producers_t *ps, int64_t id);

/* Check @b before the leader appends it, as Kafka does: the same epoch and sequence range as
 * a remembered batch is a duplicate (SF_ERR_DUPLICATE, that batch in *@dup); an epoch below
 * the producer's is fenced (SF_ERR_PRODUCER_EPOCH); a new epoch must start at sequence 0 and
 * the same epoch continue the last sequence (else SF_ERR_SEQUENCE). An unknown producer may
 * start anywhere (its state may have expired or been deleted with the log). @prev (NULL if
 * none) is an earlier batch of the same producer in the same append: @b is checked against
 * it instead of the table.
 * Transactions: a batch that is not transactional from a producer with an ongoing
 * transaction is refused (SF_ERR_TXN_STATE). With @guard (not 0: the append was verified
 * with the transaction coordinator, KIP-890), a transactional batch that would start a
 * transaction is refused unless the producer still holds that guard (no marker came since
 * the verification began; sf_producers_verify_begin). @return SF_OK or the errors above. */
int sf_producers_check(const sf_producers_t *ps, const sf_producer_append_t *b,
                       const sf_producer_append_t *prev, uint64_t guard,
                       sf_producer_batch_t *dup);

/* Before a transactional batch of producer @id at @epoch that may start a transaction is
 * verified with its coordinator: 0 when the producer has a transaction ongoing here (nothing
 * to verify), else 1 with the guard its append must present in *@guard: the one a
 * verification under way holds, or @fresh (not 0), which the producer (created when
 * unknown, at @now_ms) now holds. A marker or the start of a transaction drops the guard.
 * @return 0, 1 or SF_ERR_NOMEM. */
int sf_producers_verify_begin(sf_producers_t *ps, int64_t id, int16_t epoch, uint64_t fresh,
                              int64_t now_ms, uint64_t *guard);

/* Check a marker for producer @id at @epoch from @coordinator_epoch before the leader writes
 * it, as Kafka's appendEndTxnMarker: SF_ERR_PRODUCER_EPOCH when @epoch is below the
 * producer's, SF_ERR_COORDINATOR_FENCED when @coordinator_epoch is below the one of its last
 * marker; an unknown producer passes. @return SF_OK or those. */
int sf_producers_check_marker(const sf_producers_t *ps, int64_t id, int16_t epoch,
                              int32_t coordinator_epoch);

/* Record the appended batch @b (leader, follower and rebuild alike): a higher epoch starts a
 * new history, a lower one is ignored. A transactional batch starts the producer's
 * transaction at its first offset when none is ongoing; a marker (b->control) is recorded as
 * sf_producers_record_marker. @return SF_OK or SF_ERR_NOMEM. */
int sf_producers_record(sf_producers_t *ps, const sf_producer_append_t *b);

/* Record the marker @b: it ends the producer's ongoing transaction (*@txn_first, may be NULL,
 * gets its first offset; -1 when there was none), sets its coordinator epoch and raises its
 * epoch to the marker's (a higher one starts a new history). Unchecked: the leader checked it
 * with sf_producers_check_marker. @return SF_OK or SF_ERR_NOMEM (nothing changed). */
int sf_producers_record_marker(sf_producers_t *ps, const sf_producer_append_t *b,
                               int64_t *txn_first);

/* The first offset of the oldest ongoing transaction (the first unstable offset), or -1. */
static inline int64_t sf_producers_first_unstable(const sf_producers_t *ps) {
    return ps->ntxns ? ps->txns[0].first_offset : -1;
}

/* Forget the producers whose newest batch is older than @expiration_ms at @now_ms
 * (producer.id.expiration.ms); never one with an ongoing transaction. @return how many went. */
size_t sf_producers_expire(sf_producers_t *ps, int64_t now_ms, int64_t expiration_ms);

/* The table as a snapshot file's bytes, appended to @wb: version (int16, 2), CRC-32C of what
 * follows (uint32), the count (int32), then per producer its id (int64), epoch (int16), last
 * timestamp (int64), first offset of its ongoing transaction (int64, -1 none), coordinator
 * epoch (int32, -1 unknown), batch count (int8) and batches (first and last sequence int32,
 * first and last offset and timestamp int64), big-endian. @return SF_OK or SF_ERR_NOMEM. */
int sf_producers_encode(const sf_producers_t *ps, sf_wbuf_t *wb);
/* Load such bytes into @ps (cleared first); version 1 (without the two transaction fields:
 * they load as -1) too. @return SF_OK, SF_ERR_CORRUPT (a CRC, a count or a length that does
 * not match), SF_ERR_UNSUPPORTED (another version) or SF_ERR_NOMEM; on an error @ps is left
 * empty. */
int sf_producers_decode(sf_producers_t *ps, const uint8_t *p, size_t len);

/* 1 when a truncation at @offset may change the table: some producer has a batch ending at
 * or after @offset, or transaction state (an ongoing transaction or a marker: markers leave
 * no batch to compare with, so any such state counts), else 0. */
int sf_producers_reach(const sf_producers_t *ps, int64_t offset);

#endif
