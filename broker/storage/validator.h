/* The log validator: what a partition leader checks and fixes in a producer's records before
 * they are stored, as Kafka's LogValidator does.
 *
 * Every batch is checked whole: its CRC, its codec (known, and zstd only from Produce v7), the
 * control bit a client may not set (markers are the broker's), a producer id and sequence on
 * transactional batches as on idempotent ones, and every record, compressed ones
 * decompressed under a cap: the count and the last offset delta must match the records really
 * there, offset deltas run 0..n-1, header keys are not null, keys are present on compacted
 * topics, timestamps lie in the allowed window. The batch's MaxTimestamp is computed from its
 * records (or set to the append time for LogAppendTime topics) and the header and CRC rewritten
 * when it differs. Batches are recompressed when the topic's compression.type asks for another
 * codec, and message sets of magic 0 and 1 (Produce v0-v2) are converted to one v2 batch.
 *
 * The checks run before the partition's append lock is taken; they read and may rewrite the
 * request's own buffer. Pure functions: any thread. */
#ifndef SF_VALIDATOR_H
#define SF_VALIDATOR_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* How a topic wants its records (from its configs) and the request they came in. */
typedef struct sf_validate_cfg {
    int16_t produce_version;
    int log_append_time;     /* message.timestamp.type=LogAppendTime */
    int codec;               /* compression.type: -1 for producer, else 0..4 */
    int level;               /* the codec's compression level, -1 for its default */
    int compacted;           /* cleanup.policy includes compact: every record needs a key */
    int64_t now_ms;          /* the append time */
    int64_t before_max_ms;   /* message.timestamp.before.max.ms (INT64_MAX: no limit) */
    int64_t after_max_ms;    /* message.timestamp.after.max.ms */
    size_t max_decompressed; /* largest decompressed records section of one batch */
} sf_validate_cfg_t;

typedef struct sf_validate_result {
    uint8_t *batches;  /* what to append: the caller's bytes (fixed in place) or out->p */
    size_t len;
    int32_t nbatches;
    int32_t records;
    int64_t log_append_time; /* the append time given to the batches, or -1 (CreateTime) */
    int32_t bad_batch;       /* on an error: the index of the failing batch (or -1) */
    const char *message;     /* on an error: why, for the response (static) */
} sf_validate_result_t;

/* Validate the producer's batches at @p (@len bytes, the request's mutable buffer). When they
 * must be rebuilt (conversion, recompression) the result is written to @out (initialised by
 * the caller, freed by it) and res->batches points into it.
 * @return SF_OK, SF_ERR_CORRUPT (a CRC), SF_ERR_MALFORMED (records or headers that do not
 * decode, data that does not decompress), SF_ERR_RECORD (Kafka's InvalidRecordException: no
 * batch, a batch cut short, magic 0/1 from Produce v3+, counts that do not match the records,
 * offsets, the control bit, a transactional batch without a producer id, null keys, a
 * producer's batch among others),
 * SF_ERR_CODEC (an unknown codec, zstd before Produce v7), SF_ERR_TIMESTAMP, SF_ERR_TOOLARGE (past max_decompressed),
 * SF_ERR_NOMEM. */
int sf_validate_produce(uint8_t *p, size_t len, const sf_validate_cfg_t *cfg, sf_wbuf_t *out,
                        sf_validate_result_t *res);

#endif
