/* The producer state of one partition (Kafka's ProducerStateManager): for every producer id
 * that wrote to it, the epoch and its last five batches (sequence range and offsets). The
 * leader checks a producer's batch against it before the append: a retried batch is answered
 * with the offsets it got the first time, a batch out of sequence or from an older epoch is
 * refused. Followers record the batches they replicate and the log rebuilds the table from
 * its batch headers when it is opened, so a new leader recognises retries too.
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
} sf_producer_t;

typedef struct sf_producers {
    sf_producer_t *slots; /* open addressing, capacity a power of two */
    size_t cap, n;
} sf_producers_t;

/* One producer batch as the table sees it. */
typedef struct sf_producer_append {
    int64_t producer_id;
    int16_t epoch;
    int32_t first_seq, last_seq;
    int64_t first_offset, last_offset; /* the offsets the log gave it (record only) */
    int64_t max_timestamp;
} sf_producer_append_t;

/* Describe the batch whose header is @hdr; 0 when it carries no producer id. */
int sf_producer_append_from(const sf_recbatch_hdr_t *hdr, sf_producer_append_t *out);

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
 * it instead of the table. @return SF_OK or the errors above. */
int sf_producers_check(const sf_producers_t *ps, const sf_producer_append_t *b,
                       const sf_producer_append_t *prev, sf_producer_batch_t *dup);

/* Record the appended batch @b (leader, follower and rebuild alike): a higher epoch starts a
 * new history, a lower one is ignored. @return SF_OK or SF_ERR_NOMEM. */
int sf_producers_record(sf_producers_t *ps, const sf_producer_append_t *b);

/* Forget the producers whose newest batch is older than @expiration_ms at @now_ms
 * (producer.id.expiration.ms). @return how many went. */
size_t sf_producers_expire(sf_producers_t *ps, int64_t now_ms, int64_t expiration_ms);

/* The table as a snapshot file's bytes, appended to @wb: version (int16, 1), CRC-32C of what
 * follows (uint32), the count (int32), then per producer its id (int64), epoch (int16), last
 * timestamp (int64), batch count (int8) and batches (first and last sequence int32, first and
 * last offset and timestamp int64), big-endian. @return SF_OK or SF_ERR_NOMEM. */
int sf_producers_encode(const sf_producers_t *ps, sf_wbuf_t *wb);
/* Load such bytes into @ps (cleared first). @return SF_OK, SF_ERR_CORRUPT (a CRC, a count or
 * a length that does not match), SF_ERR_UNSUPPORTED (another version) or SF_ERR_NOMEM; on an
 * error @ps is left empty. */
int sf_producers_decode(sf_producers_t *ps, const uint8_t *p, size_t len);

/* 1 when some producer has a batch ending at or after @offset (a truncation there changes
 * the table), else 0. */
int sf_producers_reach(const sf_producers_t *ps, int64_t offset);

#endif
