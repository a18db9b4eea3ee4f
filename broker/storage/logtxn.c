/* What transactions need of a partition log: the last stable offset (from the producer
 * state's ongoing transactions, logproducers.c) and the aborted transactions (txnindex.h),
 * loaded at open, added by abort markers as they are appended or replayed, cut by
 * truncations and forgotten with the segments retention deletes (see log.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "log.h"
#include "log_int.h"
#include "logging.h"

int sf_log_txns_load_locked(sf_log_t *log) {
    size_t i;
    int rc = SF_OK;
    sf_txnindex_clear(&log->aborted);
    for (i = 0; i < log->nsegs && rc == SF_OK; i++) {
        const sf_segment_t *seg = log->segs[i];
        /* A crash may have cut the log below entries written before it: they go. */
        rc = sf_txnindex_load(&log->aborted, seg->path, seg->base_offset, seg->next_offset);
    }
    if (rc == SF_ERR_IO)
        sf_log(SF_LOG_ERR, "STORAGE", "%s: cannot read the aborted-transaction index",
               log->path);
    return rc;
}

void sf_log_txn_aborted_locked(sf_log_t *log, sf_segment_t *seg, int64_t producer_id,
                               int64_t first_offset, int64_t last_offset) {
    sf_txnindex_entry_t e;
    int64_t next = sf_producers_first_unstable(&log->producers);
    e.producer_id = producer_id;
    e.first_offset = first_offset;
    e.last_offset = last_offset;
    /* As Kafka's lastStableOffset(completedTxn): the first transaction still open, else the
     * offset after the marker (the transaction ended is no longer among the open ones). */
    e.last_stable_offset = next >= 0 ? next : last_offset + 1;
    switch (sf_txnindex_add(&log->aborted, seg->path, &e)) {
    case 1:
    case SF_ERR_IO: /* in memory all the same; logged */
        seg->index_unsynced = 1;
        log->dir_unsynced = 1; /* the file may be new */
        break;
    case SF_ERR_NOMEM:
        sf_log(SF_LOG_ERR, "STORAGE", "%s: no memory to index the aborted transaction of "
               "producer %" PRId64 " at offset %" PRId64 "; read_committed consumers will see "
               "its records", log->path, producer_id, last_offset);
        break;
    default:
        break; /* indexed already (a replay) */
    }
}

void sf_log_txns_truncated_locked(sf_log_t *log, int64_t end, int fully) {
    const sf_segment_t *seg = active_seg(log);
    /* The segments after the cut took their files with them; the one cut is the active one,
     * and a full truncation left one empty segment. */
    if (sf_txnindex_truncate(&log->aborted, seg->path, seg->base_offset,
                             fully ? seg->base_offset : end) != SF_OK)
        sf_log(SF_LOG_WARNING, "STORAGE", "%s: the aborted-transaction index keeps entries "
               "past the truncation until the next open", log->path);
    if (fully)
        sf_txnindex_clear(&log->aborted);
}

void sf_log_txns_start_moved_locked(sf_log_t *log) {
    sf_txnindex_drop_below(&log->aborted, log->segs[0]->base_offset);
}

int64_t sf_log_last_stable_offset(sf_log_t *log) {
    int64_t v;
    pthread_mutex_lock(&log->mu);
    v = lso_locked(log);
    pthread_mutex_unlock(&log->mu);
    return v;
}

int sf_log_aborted_txns(sf_log_t *log, int64_t from, int64_t to, sf_aborted_txn_t **out,
                        size_t *n) {
    size_t i, k = 0, first;
    *out = NULL;
    *n = 0;
    pthread_mutex_lock(&log->mu);
    first = sf_txnindex_lower(&log->aborted, from);
    for (i = first; i < log->aborted.n; i++)
        k += log->aborted.v[i].first_offset < to;
    if (k > 0 && !(*out = malloc(k * sizeof(**out)))) {
        pthread_mutex_unlock(&log->mu);
        return SF_ERR_NOMEM;
    }
    for (i = first; k > 0 && i < log->aborted.n; i++) {
        const sf_txnindex_entry_t *e = &log->aborted.v[i];
        if (e->first_offset >= to)
            continue;
        (*out)[*n].producer_id = e->producer_id;
        (*out)[*n].first_offset = e->first_offset;
        (*out)[*n].last_offset = e->last_offset;
        (*n)++;
    }
    pthread_mutex_unlock(&log->mu);
    return SF_OK;
}
