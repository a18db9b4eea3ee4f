/* Producer internals: the record accumulator (topics, partitions, queued batches), the
 * RecordBatch v2 writer, partitioning and the send/retry/expiry decisions. These are plain
 * data structures and functions with no locking and no network, so they can be tested alone;
 * accumulator.c implements them; producer.c calls them with the client lock held and does the
 * I/O.
 *
 * Ordering. Each partition has a queue of batches, oldest first. Records are appended to the
 * newest (tail) batch until it cannot take the next record (max_batch_bytes); then a new batch
 * is queued behind it. At most one batch per partition is in flight (part->inflight); a batch
 * that fails with a retriable error goes back to the FRONT of its queue, so records of one
 * partition reach the broker in the order they were sent. A batch is closed (its header
 * written, maybe compressed) when it is taken for sending; nothing is appended to it after. */
#ifndef SF_PRODUCER_H
#define SF_PRODUCER_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "compress.h"
#include "recbatch.h"
#include "streamflow.h"

typedef struct sf_producer_batch sf_producer_batch_t;
typedef struct sf_producer_part sf_producer_part_t;
typedef struct sf_producer_topic sf_producer_topic_t;

/* The accumulator's settings (from the client configuration; times in milliseconds). */
typedef struct sf_producer_accconf {
    int linger_ms;           /* linger.ms */
    int batch_size;          /* batch.size: a batch of at least this many bytes is ready */
    int max_batch_bytes;     /* a batch (header included) never grows past this
                              * (max.request.size) */
    int delivery_timeout_ms; /* delivery.timeout.ms, counted from a batch's first record */
    int retries;             /* retries */
    int retry_backoff_ms;    /* retry.backoff.ms */
    int partitioner_murmur2; /* 1: keyed records by murmur2; 0: keyed records at random */
} sf_producer_accconf_t;

/* What the delivery report of one record needs besides its bytes in the batch. */
typedef struct sf_producer_recmeta {
    uint32_t pos;       /* offset of the record (its length varint) in batch->buf */
    sf_delivery_cb *cb; /* may be NULL */
    void *opaque;
} sf_producer_recmeta_t;

/* A record batch being filled, queued, in flight or done. */
struct sf_producer_batch {
    sf_producer_batch_t *next;  /* queue or delivery-report list link */
    sf_producer_part_t *part;
    uint8_t *buf;               /* owned: SF_RECBATCH_HEADER_SIZE header bytes, then the
                                 * uncompressed records; kept until the reports are served */
    size_t len, cap;
    int32_t count;              /* records */
    int32_t ncb;                /* records with a delivery callback */
    int64_t base_ts, max_ts;    /* first and largest record timestamp (CreateTime) */
    int64_t created;            /* monotonic ms of the first append: linger.ms and
                                 * delivery.timeout.ms count from it */
    sf_producer_recmeta_t *meta; /* owned, count entries */
    size_t metacap;
    size_t mem;                 /* bytes charged to buffer.memory for these records */
    /* sending */
    int closed;                 /* header written (sf_producer_batch_close): no appends */
    sf_wbuf_t zbuf;             /* the compressed wire form, when compression helped */
    const uint8_t *wire;        /* the bytes to send: buf or zbuf.p */
    size_t wire_len;
    int attempts;               /* retries done */
    int64_t retry_at;           /* monotonic ms before which it is not sent again */
    int64_t pid;                /* idempotence.h: the producer id it carries (-1: none) */
    int16_t epoch;              /* ... its epoch */
    int32_t seq;                /* ... and its first sequence number */
    int transactional;          /* written in a transaction (the header's attribute) */
    /* outcome (valid once done) */
    int err;
    int64_t base_offset;        /* -1 when unknown (acks=0, failure) */
    int64_t append_time;        /* LogAppendTime, or -1 for CreateTime */
};

struct sf_producer_part {
    sf_producer_topic_t *topic;
    int32_t id;
    int32_t leader;                 /* from the last metadata, -1 when none */
    sf_producer_batch_t *head, *tail; /* queued batches, oldest first */
    sf_producer_batch_t *inflight;  /* the batch of this partition in a request, or NULL */
    sf_producer_part_t *next_active; /* link in acc->active */
    int active;                     /* on acc->active */
    int64_t seq_pid;                /* idempotence.h: the producer id of next_seq (-1) */
    int16_t seq_epoch;
    int32_t next_seq;               /* the sequence number of the next new batch */
    uint32_t txn_gen;               /* the transaction it was added to (AddPartitionsToTxn) */
};

struct sf_producer_topic {
    char *name;                 /* owned */
    sf_producer_topic_t *next;  /* hash chain */
    int known;                  /* metadata was seen */
    int err;                    /* the topic's error in that metadata (0, or a Kafka code) */
    int32_t nparts;             /* partitions in the metadata */
    int32_t cap;                /* entries allocated in parts (parts never shrink) */
    sf_producer_part_t **parts; /* owned, cap entries */
    int32_t *avail;             /* owned: partitions with a leader (navail of them) */
    int32_t navail;
    int32_t sticky;             /* partition for null-key records, -1 to choose again */
};

/* The accumulator: every topic and partition the producer has seen. */
typedef struct sf_producer_acc {
    sf_producer_accconf_t conf;
    sf_producer_topic_t **buckets; /* owned hash table of topics */
    size_t nbuckets, ntopics;
    sf_producer_topic_t *last;     /* the topic of the previous lookup */
    sf_producer_part_t *active, *active_tail; /* partitions that may have queued batches */
    int flushing;                  /* flushes in progress: every batch is ready */
    uint64_t rng;                  /* xorshift state for the random choices */
    sf_producer_batch_t *cache;    /* released batches kept for reuse */
    int ncache;
} sf_producer_acc_t;

/* Events reported by sf_producer_acc_append (bit mask). */
#define SF_PRODUCER_EV_NEW_BATCH 0x1 /* a new batch was started */
#define SF_PRODUCER_EV_BEHIND 0x2    /* ... behind another queued batch (which is now ready) */
#define SF_PRODUCER_EV_FULL 0x4      /* the batch just reached batch_size bytes */

/* Upper bound of what a record adds to a batch beyond sf_producer_record_fixed_size():
 * length varint, attributes, timestamp delta, offset delta. */
#define SF_PRODUCER_RECORD_OVERHEAD (5 + 1 + 10 + 5)

/* Initialise @acc with @conf (copied) and a seed for the random choices. Returns SF_OK or
 * SF_ERR_NOMEM. */
int sf_producer_acc_init(sf_producer_acc_t *acc, const sf_producer_accconf_t *conf,
                         uint64_t seed);

/* Free every topic, partition and batch (queued, in flight or cached) of @acc. Batches on
 * other lists (delivery reports) are the caller's: release them first. */
void sf_producer_acc_free(sf_producer_acc_t *acc);

/* The topic named @name (borrowed), created (unknown, no partitions) when missing and @create.
 * Returns NULL when missing and !@create, or out of memory. Topics live as long as @acc. */
sf_producer_topic_t *sf_producer_acc_topic(sf_producer_acc_t *acc, const char *name,
                                           int create);

/* Apply metadata to @t: @err (0 or a Kafka error code for the whole topic), @nparts
 * partitions with leaders @leaders[i] (-1 for none; @leaders may be NULL when @nparts is 0).
 * Partitions are added as needed, never removed. Returns SF_OK or SF_ERR_NOMEM. */
int sf_producer_topic_update(sf_producer_acc_t *acc, sf_producer_topic_t *t, int err,
                             int32_t nparts, const int32_t *leaders);

/* The bytes the key, value and headers of @rec take in a record (varint lengths included), or
 * SIZE_MAX when @rec is invalid (a header without a key, headers NULL with a count, a length
 * above INT32_MAX). @rec is borrowed. */
size_t sf_producer_record_fixed_size(const sf_record_t *rec);

/* Choose the partition of @rec in @t (which must have partitions): rec->partition when set
 * (-1 when it is not below t->nparts), murmur2 of the key (or a random partition when
 * conf.partitioner_murmur2 is 0), else the topic's sticky partition, chosen at random among
 * the partitions with a leader and kept until a batch of it is taken for sending. */
int32_t sf_producer_acc_partition(sf_producer_acc_t *acc, sf_producer_topic_t *t,
                                  const sf_record_t *rec);

/* Pick a new sticky partition: at random among @avail (@navail ids; all @nparts partitions
 * when @navail is 0), different from @prev when there is a choice. @rng is the xorshift
 * state. Returns a partition, or -1 when @nparts < 1. */
int32_t sf_producer_sticky_pick(uint64_t *rng, int32_t prev, const int32_t *avail,
                                int32_t navail, int32_t nparts);

/* Append @rec (borrowed; @fixed = sf_producer_record_fixed_size(rec)) with timestamp @ts to
 * the tail batch of @part, or to a new batch when there is none, it is closed, or the record
 * does not fit in max_batch_bytes. @now is the monotonic time in ms (used when a batch is
 * started). @cb/@opaque are kept for the delivery report. *@charged receives the bytes to
 * count against buffer.memory (also added to the batch's mem), *@events SF_PRODUCER_EV_*.
 * Returns SF_OK, SF_ERR_TOOLARGE (the record alone is over max_batch_bytes) or SF_ERR_NOMEM
 * (nothing appended then). */
int sf_producer_acc_append(sf_producer_acc_t *acc, sf_producer_part_t *part,
                           const sf_record_t *rec, size_t fixed, int64_t ts, int64_t now,
                           sf_delivery_cb *cb, void *opaque, size_t *charged, int *events);

/* Whether the queued batch @b may be sent at @now, ignoring whether its partition has a batch
 * in flight: it waits out its retry backoff, then it is ready when it was sent before, when
 * @has_newer (a batch is queued behind it), when @flushing, when it holds batch_size bytes, or
 * when it is linger_ms old. When not ready, *@next is lowered to the time it will be (if it
 * is a matter of time). Returns 1 or 0. */
int sf_producer_batch_ready(const sf_producer_accconf_t *conf, const sf_producer_batch_t *b,
                            int has_newer, int flushing, int64_t now, int64_t *next);

/* Take the head batch of @part for sending: it becomes part->inflight and leaves the queue
 * (the caller then closes it). The topic's sticky partition is chosen again if it was @part.
 * Returns the batch, or NULL when the queue is empty or a batch is already in flight. */
sf_producer_batch_t *sf_producer_acc_take(sf_producer_acc_t *acc, sf_producer_part_t *part);

/* The in-flight batch @b failed and will be retried: put it back at the FRONT of its
 * partition's queue, count the attempt, and hold it until @now + retry_backoff_ms. */
void sf_producer_acc_requeue(sf_producer_acc_t *acc, sf_producer_batch_t *b, int64_t now);

/* The in-flight batch @b is finished (delivered or failed): its partition may send again. */
void sf_producer_acc_done(sf_producer_acc_t *acc, sf_producer_batch_t *b);

/* Whether a batch that failed with @err may be retried at @now: the error is retriable
 * (sf_error_retriable), fewer than conf->retries retries were done, and delivery_timeout_ms
 * has not passed since its first record. Returns 1 or 0. */
int sf_producer_retry_ok(const sf_producer_accconf_t *conf, const sf_producer_batch_t *b,
                         int err, int64_t now);

/* Remove and return the head batch of @part when its delivery_timeout_ms has passed at @now
 * (the caller fails it with SF_ERROR_TIMED_OUT); NULL otherwise. In-flight batches are not
 * touched. Call until it returns NULL. */
sf_producer_batch_t *sf_producer_acc_expire(sf_producer_acc_t *acc, sf_producer_part_t *part,
                                            int64_t now);

/* Rewrite the producer id, epoch and first sequence of the closed batch @b (from its
 * fields) in its wire bytes, and the CRC. */
void sf_producer_batch_restamp(sf_producer_batch_t *b);

/* Close @b: write the RecordBatch v2 header (BaseOffset 0, PartitionLeaderEpoch -1, no
 * producer id, the CRC32C) and, for @codec other than none, compress the records section
 * (at @level, -1 for the codec's default) when that makes it smaller. Sets b->wire and
 * b->wire_len. A closed batch is left as it is. Returns SF_OK, or SF_ERR_NOMEM / a
 * compression error (the batch is then still closed, uncompressed). */
int sf_producer_batch_close(sf_producer_batch_t *b, sf_compress_codec_t codec, int level);

/* Decode record @i of @b from its (uncompressed) buffer into @rec: offset is the index,
 * timestamp absolute, slices borrow b->buf. Returns SF_OK or SF_ERR_MALFORMED. */
int sf_producer_batch_record(const sf_producer_batch_t *b, int32_t i,
                             sf_recbatch_record_t *rec);

/* The in-flight batch @b (at least 2 records) was too large for the broker
 * (MESSAGE_TOO_LARGE): re-encode its records into batches of about half its size and put them
 * at the FRONT of its partition's queue, in order, ready at once (they keep b's creation time
 * and attempt count); @b is released. *@mem_delta receives the change in charged bytes.
 * Returns SF_OK, SF_ERR_INVALID (fewer than 2 records) or SF_ERR_NOMEM (@b untouched). */
int sf_producer_acc_split(sf_producer_acc_t *acc, sf_producer_batch_t *b, int64_t *mem_delta);

/* Give back a batch that is no longer queued or in flight (kept for reuse or freed). */
void sf_producer_acc_release(sf_producer_acc_t *acc, sf_producer_batch_t *b);

#endif
