/* Message chunks: the decoding of a partition's fetched records into messages
 * (records.c), for the consumer (consumer.c), request/reply and the unit tests.
 *
 * Messages decoded from one partition's records in one fetch response live together in one
 * message chunk: the record bytes are copied (or decompressed) once into memory the chunk owns,
 * and every sf_message_t of the chunk points into it. The chunk counts the messages not yet
 * destroyed; the last sf_message_destroy frees it, so a message stays valid after the consumer
 * that produced it is destroyed. */
#ifndef SF_RECORDS_H
#define SF_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "streamflow.h"

/* The decompressed size one compressed batch may have; a larger one is reported as
 * SF_ERROR_TOOLARGE rather than allocated. */
#define SF_CONSUMER_MAX_DECOMPRESSED (64 * 1024 * 1024)

typedef struct sf_consumer_chunk sf_consumer_chunk_t;
typedef struct sf_consumer_pool sf_consumer_pool_t;

/* A chunk; the consumer reads @bytes and links its partition queues through @qnext, the rest
 * is records.c's. */
struct sf_consumer_chunk {
    int refs;           /* messages not destroyed yet (atomic) */
    size_t nmsgs;       /* messages in @msgs */
    size_t next;        /* the next one to hand out */
    struct cmsg *msgs;  /* inside this allocation, or malloc when @msgs_own */
    int msgs_own;
    sf_header_t *hdrs;  /* every message's headers, malloc */
    uint8_t **bufs;     /* decompressed payloads the messages point into */
    size_t nbufs;
    size_t bytes;       /* memory accounted to the consumer's queue */
    sf_consumer_chunk_t *qnext; /* the partition queue */
    char *topic;        /* inside this allocation */
    uint8_t *raw;       /* copied uncompressed batches, inside this allocation */
    sf_consumer_pool_t *pool; /* where this allocation goes back to, or NULL */
    size_t alloc_size;  /* this allocation's size */
};

/* A cache of freed chunk allocations, shared by a consumer and the chunks it decoded
 * (sf_consumer_pool_t, above). */

/* A new pool (NULL when out of memory). */
sf_consumer_pool_t *sf_consumer_pool_new(void);

/* The owner is done with @pool: it is freed once no chunk uses its memory any more. */
void sf_consumer_pool_release(sf_consumer_pool_t *pool);

/* The outcome of sf_consumer_parse_records. */
typedef struct sf_consumer_parse {
    /* The messages at or after the fetch offset, in offset order; NULL when there are none.
     * Owned by the caller: hand every message out with sf_consumer_chunk_take, or drop the
     * rest with sf_consumer_chunk_drop. */
    sf_consumer_chunk_t *chunk;
    /* The offset to fetch next: one past the last batch decoded (at least the fetch offset).
     * When @err is set, the offset of the batch that failed. */
    int64_t next_offset;
    /* 0, or why decoding stopped at next_offset: SF_ERROR_CORRUPT (CRC mismatch),
     * SF_ERROR_MALFORMED, SF_ERROR_UNSUPPORTED (not magic 2, unknown codec), SF_ERROR_TOOLARGE
     * (decompressed batch over the cap), SF_ERROR_NOMEM. Messages before it are in @chunk. */
    int err;
    /* The full size of an incomplete batch at the end of the records (0 when the records end
     * on a batch boundary; the bytes present when not even its header is complete). */
    size_t partial_size;
    /* Memory the chunk holds (record copies, decompressed payloads, message arrays). */
    size_t bytes;
} sf_consumer_parse_t;

/* An aborted transaction a read_committed Fetch answer lists: its producer and first offset. */
typedef struct sf_consumer_aborted {
    int64_t producer_id, first_offset;
} sf_consumer_aborted_t;

/* Decode the record batches at @records (@len bytes, borrowed; a Fetch response's Records for
 * @topic/@partition, the last batch possibly truncated) into messages with offsets >=
 * @fetch_offset. Control batches, the batches of the @naborted transactions @aborted (in any
 * order; the answer's AbortedTransactions) and records below @fetch_offset are skipped, but
 * the position still moves past them. With @check_crcs every batch's CRC is verified. Compressed
 * batches are decompressed up to @max_decompressed bytes each. @topic is copied. The chunk's
 * memory comes from @pool when it is large (@pool may be NULL: malloc).
 * Returns SF_OK (then see @out->err for a batch that stopped the decoding) or SF_ERROR_NOMEM
 * (nothing allocated). */
int sf_consumer_parse_records(sf_consumer_pool_t *pool, const char *topic, int32_t partition,
                              const uint8_t *records, size_t len, int64_t fetch_offset,
                              const sf_consumer_aborted_t *aborted, size_t naborted,
                              int check_crcs, size_t max_decompressed,
                              sf_consumer_parse_t *out);

/* A chunk holding one error event for @topic/@partition at @offset (err != 0), or NULL when out
 * of memory. */
sf_consumer_chunk_t *sf_consumer_chunk_new_error(const char *topic, int32_t partition,
                                                 int64_t offset, int err);

/* The number of messages not yet taken from @chunk. */
size_t sf_consumer_chunk_remaining(const sf_consumer_chunk_t *chunk);

/* The next message of @chunk without taking it, or NULL when all were taken. */
const sf_message_t *sf_consumer_chunk_peek(const sf_consumer_chunk_t *chunk);

/* Take the next message (the caller then owns it: sf_message_destroy), or NULL when all were
 * taken. The chunk may be freed by the last sf_message_destroy once every message is taken. */
sf_message_t *sf_consumer_chunk_take(sf_consumer_chunk_t *chunk);

/* Destroy every message not yet taken; @chunk must not be used after (it is freed once the
 * taken messages are destroyed too). */
void sf_consumer_chunk_drop(sf_consumer_chunk_t *chunk);

#endif
