/* The partition log's private state, shared by its files (log.c: open, append, read, flush,
 * retention; logrepl.c: truncation, the high watermark of a follower and the leader-epoch
 * cache). Everything here is guarded by log->mu unless said otherwise. */
#ifndef SF_LOG_INT_H
#define SF_LOG_INT_H

#include <assert.h>
#include <pthread.h>
#include <stdint.h>

#include "epochs.h"
#include "log.h"
#include "producers.h"
#include "segment.h"
#include "txnindex.h"

struct sf_log {
    pthread_mutex_t mu;       /* segment list, offsets, indexes, counters */
    pthread_mutex_t flush_mu; /* one flush at a time */
    char *topic;
    int32_t partition;
    char *path; /* <dir>/<topic>-<partition> */
    sf_log_config_t cfg;
    sf_segment_t **segs; /* by base offset; the last one takes appends */
    sf_segment_t *pinned; /* the segment whose descriptor the log pins (the active one) */
    size_t nsegs, capsegs;
    int64_t leo;
    int64_t start; /* log start offset set by DeleteRecords; the first segment's base if higher */
    int64_t hw; /* -1: follows the LEO */
    int64_t checkpointed_hw; /* from replication-offset-checkpoint at open; -1: none */
    int32_t leader_epoch;
    int64_t recovery_point;
    int64_t unflushed_msgs;
    int64_t first_unflushed_ms; /* now_ms of the first append since the last flush; -1 */
    int64_t last_append_ms;
    int offline;         /* damaged mid-log: nothing is served or appended (logged once) */
    int sealed_unsynced; /* a roll happened since the last flush */
    int dir_unsynced;    /* a segment file was created since the last flush */
    sf_epochs_t epochs;  /* the leader-epoch cache */
    int epochs_unsaved;  /* its checkpoint is not durable yet (or failed): sf_log_flush syncs */
    sf_producers_t producers; /* the producer state (logproducers.c) */
    int producers_loaded;     /* ... is complete: a close writes its snapshot */
    uint64_t verify_guards;   /* the last transaction verification guard handed out */
    sf_txnindex_t aborted;    /* the aborted transactions, all segments' (logtxn.c) */
};

static inline sf_segment_t *active_seg(const sf_log_t *log) {
    assert(log->nsegs > 0);
    return log->segs[log->nsegs - 1];
}

/* Index of the segment with the largest base offset <= @offset (0 if none). */
static inline size_t seg_find(const sf_log_t *log, int64_t offset) {
    size_t lo = 0, hi = log->nsegs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (log->segs[mid]->base_offset <= offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == 0 ? 0 : lo - 1;
}

static inline int64_t start_offset_locked(const sf_log_t *log) {
    int64_t base = log->segs[0]->base_offset;
    return log->start > base ? log->start : base;
}

static inline int32_t index_interval(const sf_log_t *log) {
    return log->cfg.index_interval_bytes > 0 ? log->cfg.index_interval_bytes : 1;
}

static inline int64_t hw_locked(const sf_log_t *log) {
    if (log->hw < 0 || log->hw > log->leo)
        return log->leo;
    return log->hw;
}

/* The last stable offset: the high watermark, or the first offset of the oldest ongoing
 * transaction when that is lower (Kafka's firstUnstableOffset), never below the log start. */
static inline int64_t lso_locked(const sf_log_t *log) {
    int64_t hw = hw_locked(log), first = sf_producers_first_unstable(&log->producers);
    int64_t lso = first >= 0 && first < hw ? first : hw;
    return lso < start_offset_locked(log) ? start_offset_locked(log) : lso;
}

/* 1 when @name is a 20-digit offset followed by @ext (".log"), the offset in *@base. */
int sf_log_parse_file_name(const char *name, const char *ext, int64_t *base);

/* Seal the active segment and start a new one at @base (the LEO, or above it when a replica
 * append starts after a gap). */
int sf_log_roll_locked(sf_log_t *log, int64_t base);

/* Load the leader-epoch cache at open (checkpoint, else rebuilt from the batch headers). */
int sf_log_epochs_open(sf_log_t *log);

/* Write the epoch checkpoint after the cache changed, into the page cache only (leadership
 * changes of many partitions must not wait for one fsync each); the next sf_log_flush makes
 * it durable, or writes it again after a failure (epochs_unsaved). */
void sf_log_epochs_save_locked(sf_log_t *log);
/* The same, durable (sf_log_flush). */
void sf_log_epochs_sync_locked(sf_log_t *log);

/* ---- the producer state (logproducers.c) ---- */

/* Check the producer batches of a leader's append (described by @bv, @nb; @guard as
 * sf_producers_check) before offsets are given: SF_OK, SF_ERR_DUPLICATE (the first append's
 * offsets in *@info), SF_ERR_SEQUENCE, SF_ERR_PRODUCER_EPOCH, SF_ERR_TXN_STATE or
 * SF_ERR_NOMEM. */
int sf_log_producers_check_locked(sf_log_t *log, const uint8_t *batches,
                                  const sf_segment_batch_t *bv, size_t nb, uint64_t guard,
                                  sf_log_append_info_t *info);
/* Record the producer batches of an append that was written (offsets given). */
void sf_log_producers_record_locked(sf_log_t *log, const uint8_t *batches,
                                    const sf_segment_batch_t *bv, size_t nb);
/* Load the table from the newest snapshot (removing those past the LEO or unreadable) and
 * the batch headers after it. @return SF_OK, SF_ERR_IO or SF_ERR_NOMEM. */
int sf_log_producers_load_locked(sf_log_t *log);
/* Write the table as the snapshot of @offset (the LEO: at a roll or close); failures are
 * logged. Keeps the two newest snapshots. */
void sf_log_producers_snapshot_locked(sf_log_t *log, int64_t offset);
/* The log was truncated to @end (@fully: nothing kept): drop what went, snapshots too. */
void sf_log_producers_truncated_locked(sf_log_t *log, int64_t end, int fully);
/* Check a marker the leader is about to append (the control batch at @batch, @len bytes):
 * SF_OK, SF_ERR_PRODUCER_EPOCH or SF_ERR_COORDINATOR_FENCED (sf_producers_check_marker). */
int sf_log_producers_check_marker_locked(sf_log_t *log, const uint8_t *batch, size_t len);

/* ---- the aborted transactions (logtxn.c) ---- */

/* Load the .txnindex files of every segment at open (after the segments, before the
 * producer state's replay, which adds what a crash kept from the files). */
int sf_log_txns_load_locked(sf_log_t *log);
/* The transaction of @producer_id from @first_offset was aborted by the marker at
 * @last_offset in @seg: index it (once) with the LSO as the producer state has it now. */
void sf_log_txn_aborted_locked(sf_log_t *log, sf_segment_t *seg, int64_t producer_id,
                               int64_t first_offset, int64_t last_offset);
/* The log was truncated to @end (@fully: nothing kept): drop the entries at or after it. */
void sf_log_txns_truncated_locked(sf_log_t *log, int64_t end, int fully);
/* Segments were removed from the start of the log: forget their entries. */
void sf_log_txns_start_moved_locked(sf_log_t *log);

#endif
