/* The broker's counters, for /metrics (broker/http/).
 *
 * Every thread that counts (network workers, I/O threads, the metadata thread) has its own
 * block of counters, made on its first count and kept until exit: only that thread writes
 * it, with plain relaxed stores (no lock, no locked instruction), and a scrape sums the
 * blocks of every thread with relaxed loads. A block outlives its thread so that nothing
 * counted is lost from the totals. */
#ifndef SF_METRICS_H
#define SF_METRICS_H

#include <stdatomic.h>
#include <stdint.h>

#include "zk.h"

#define SF_METRICS_NAPI 128    /* API keys counted (higher ones count as the last) */
#define SF_METRICS_NVERSION 32 /* versions per API */
#define SF_METRICS_NBUCKET 12  /* request latency buckets, sf_metrics_bucket_ms */

typedef struct sf_metrics_block {
    _Atomic uint64_t messages_in; /* records appended from producers */
    _Atomic uint64_t bytes_in;    /* their batch bytes */
    _Atomic uint64_t bytes_out;   /* record bytes sent in Fetch responses */
    _Atomic uint64_t requests[SF_METRICS_NAPI][SF_METRICS_NVERSION];
    /* By API and version; last bucket: +Inf. Only the pages of the APIs and versions used
     * are ever touched. */
    _Atomic uint64_t latency[SF_METRICS_NAPI][SF_METRICS_NVERSION][SF_METRICS_NBUCKET + 1];
    _Atomic uint64_t latency_us[SF_METRICS_NAPI][SF_METRICS_NVERSION]; /* the sum */
    _Atomic uint64_t flushes[SF_METRICS_NBUCKET + 1]; /* log flushes by duration bucket */
    _Atomic uint64_t flush_us;                        /* their total duration */
    _Atomic uint64_t isr_shrinks, isr_expands;        /* ISR changes the controller made */
    _Atomic uint64_t zk_latency[SF_ZK_NREQ][SF_METRICS_NBUCKET + 1]; /* by SF_ZK_REQ_* */
    _Atomic uint64_t zk_latency_us[SF_ZK_NREQ];
    _Atomic uint64_t zk_failures[SF_ZK_NREQ]; /* connection loss, timeouts, expiry */
    struct sf_metrics_block *next;
} sf_metrics_block_t;

/* The upper bounds of the latency buckets, in milliseconds. */
extern const double sf_metrics_bucket_ms[SF_METRICS_NBUCKET];

/* The calling thread's block (made on first use; NULL only when out of memory). */
sf_metrics_block_t *sf_metrics_here(void);

/* Add @n to one of the calling thread's counters. */
static inline void sf_metrics_add(_Atomic uint64_t *c, uint64_t n) {
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

/* Count a record batch appended for a producer / record bytes fetched. Any thread. */
void sf_metrics_produced(uint64_t records, uint64_t bytes);
void sf_metrics_fetched(uint64_t bytes);

/* Count a request of @api_key / @version answered @us microseconds after it arrived. Any
 * thread. */
void sf_metrics_request(int16_t api_key, int16_t version, int64_t us);

/* Count a log flush (fsync of segments) that took @us microseconds. Any thread. */
void sf_metrics_flush(int64_t us);

/* Count an ISR change of a partition led here that the controller made. Any thread. */
void sf_metrics_isr_change(int shrink);

/* Count a ZooKeeper request (an sf_zk_observe_cb; @arg unused). The metadata thread. */
void sf_metrics_zk_request(int req, int zrc, int64_t us, void *arg);

/* The sums over every thread's block, into @out (zeroed first). Any thread. */
void sf_metrics_sum(sf_metrics_block_t *out);

#endif
