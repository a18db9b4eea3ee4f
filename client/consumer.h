/* Consumer internals shared by client/consumer.c, client/reqrep.c and the unit tests: the
 * decoding of a partition's fetched records into messages, and access to the client core.
 *
 * Messages decoded from one partition's records in one fetch response live together in one
 * message chunk: the record bytes are copied (or decompressed) once into memory the chunk owns,
 * and every sf_message_t of the chunk points into it. The chunk counts the messages not yet
 * destroyed; the last sf_message_destroy frees it, so a message stays valid after the consumer
 * that produced it is destroyed. */
#ifndef SF_CONSUMER_H
#define SF_CONSUMER_H

#include <stddef.h>
#include <stdint.h>

#include "client.h"
#include "streamflow.h"

/* The decompressed size one compressed batch may have; a larger one is reported as
 * SF_ERROR_TOOLARGE rather than allocated. */
#define SF_CONSUMER_MAX_DECOMPRESSED (64 * 1024 * 1024)

typedef struct sf_consumer_chunk sf_consumer_chunk_t;

/* A cache of freed chunk allocations, shared by a consumer and the chunks it decoded. */
typedef struct sf_consumer_pool sf_consumer_pool_t;

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

/* ---- for the group membership (cgroup.c); all with the client lock held ---- */

/* The membership of @c, or NULL when it has no group.id. */
struct sf_cgroup *sf_consumer_cgroup(sf_consumer_t *c);

/* Assign / unassign a partition for the group (as sf_consumer_assign / unassign do).
 * @offset is an offset, SF_OFFSET_BEGINNING or SF_OFFSET_END; with @err != 0 the partition is
 * assigned paused, with an error event @err for the application (no offset to start from). */
int sf_consumer_group_add(sf_consumer_t *c, const char *topic, int32_t partition, int64_t offset,
                          int err);
int sf_consumer_group_remove(sf_consumer_t *c, const char *topic, int32_t partition);

/* The position of an assigned partition: the offset after the last message handed out (-1
 * while it is being resolved, or when not assigned). With @pending, the last message poll
 * returned counts as not processed until the next poll. */
int64_t sf_consumer_group_position(sf_consumer_t *c, const char *topic, int32_t partition,
                                   int pending);

/* The assigned partitions with their positions (topics borrowed, valid while the lock is
 * held), at most @cap of them into @out; returns how many there are. */
size_t sf_consumer_group_parts(sf_consumer_t *c, sf_topic_partition_t *out, size_t cap);

/* 1 while an application thread waits in sf_consumer_poll. */
int sf_consumer_polling(sf_consumer_t *c);

/* The client core under @c (for reqrep.c: metadata and admin calls). */
sf_client_t *sf_consumer_client(sf_consumer_t *c);

/* The milliseconds from now until @deadline (sf_clock_mono_ms time), at least 1, as a
 * timeout argument; -1 when @deadline is -1 (none). */
int sf_consumer_ms_left(int64_t deadline);

/* Mark the metadata stale and wait (application thread, lock held) @backoff_ms for it, no
 * longer than until @deadline (-1: none). Returns SF_ERROR_TIMED_OUT once @deadline has
 * passed, else SF_OK. */
int sf_consumer_metadata_backoff(sf_client_t *cl, int64_t backoff_ms, int64_t deadline);

#endif
