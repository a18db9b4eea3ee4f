/* What replication needs of a partition log: truncation (a follower cutting back to where it
 * and the leader agree), the follower's high watermark, and the leader-epoch cache with its
 * checkpoint (see log.h). */
#include <inttypes.h>
#include <stdio.h>

#include "err.h"
#include "log.h"
#include "log_int.h"
#include "logging.h"

/* ---- the epoch cache ---- */

void sf_log_epochs_save_locked(sf_log_t *log) {
    (void)sf_epochs_write(&log->epochs, 0);
    log->epochs_unsaved = 1;
}

void sf_log_epochs_sync_locked(sf_log_t *log) {
    log->epochs_unsaved = sf_epochs_write(&log->epochs, 1) != SF_OK;
}

/* Walk every batch header and note each epoch above the latest one (the cache as the appends
 * would have built it). Before the log is shared. */
static int epochs_rebuild(sf_log_t *log) {
    size_t i;
    int rc = SF_OK;
    sf_epochs_clear(&log->epochs);
    for (i = 0; i < log->nsegs && rc == SF_OK; i++) {
        sf_segment_t *seg = log->segs[i];
        int64_t pos = 0, found;
        sf_recbatch_hdr_t hdr;
        size_t bsize;
        if (sf_segment_fd_acquire(seg) != SF_OK)
            return SF_ERR_IO;
        while (rc == SF_OK && pos < seg->size) {
            if (sf_segment_scan(seg, pos, seg->size, -1, &found, &hdr, &bsize) != SF_OK)
                break; /* damage was dealt with by the load: use what reads */
            if (hdr.PartitionLeaderEpoch > sf_epochs_latest(&log->epochs) &&
                sf_epochs_assign(&log->epochs, hdr.PartitionLeaderEpoch, hdr.BaseOffset) < 0)
                rc = SF_ERR_NOMEM;
            pos = found + (int64_t)bsize;
        }
        sf_segment_fd_release(seg);
    }
    (void)sf_epochs_truncate_from_start(&log->epochs, start_offset_locked(log));
    return rc;
}

int sf_log_epochs_open(sf_log_t *log) {
    int rc = sf_epochs_load(&log->epochs);
    if (rc == SF_OK) {
        /* A crash can leave the log shorter than the checkpoint says. */
        int changed = sf_epochs_truncate_from_end(&log->epochs, log->leo);
        changed |= sf_epochs_truncate_from_start(&log->epochs, start_offset_locked(log));
        if (changed)
            sf_log_epochs_save_locked(log);
        return SF_OK;
    }
    if (rc == SF_ERR_NOMEM)
        return rc;
    if (rc != SF_ERR_NOTFOUND)
        sf_log(SF_LOG_WARNING, "STORAGE", "%s: %s unreadable; rebuilding it from the batches",
               log->path, SF_EPOCHS_FILE);
    if (log->offline)
        return SF_OK; /* nothing is served; the cache is rebuilt once the files are repaired */
    if (epochs_rebuild(log) == SF_ERR_NOMEM)
        return SF_ERR_NOMEM;
    /* A new empty log has nothing to record (no file, no fsync per partition created). */
    if (log->epochs.n > 0 || rc != SF_ERR_NOTFOUND)
        sf_log_epochs_save_locked(log);
    return SF_OK;
}

void sf_log_epoch_assign(sf_log_t *log, int32_t epoch, int64_t start_offset) {
    pthread_mutex_lock(&log->mu);
    log->leader_epoch = epoch;
    if (sf_epochs_assign(&log->epochs, epoch, start_offset) == 1)
        sf_log_epochs_save_locked(log);
    pthread_mutex_unlock(&log->mu);
}

int32_t sf_log_latest_epoch(sf_log_t *log) {
    int32_t v;
    pthread_mutex_lock(&log->mu);
    v = sf_epochs_latest(&log->epochs);
    pthread_mutex_unlock(&log->mu);
    return v;
}

void sf_log_end_offset_for_epoch(sf_log_t *log, int32_t epoch, int32_t *found_epoch,
                                 int64_t *end_offset) {
    pthread_mutex_lock(&log->mu);
    sf_epochs_end_offset_for(&log->epochs, epoch, log->leo, found_epoch, end_offset);
    pthread_mutex_unlock(&log->mu);
}

/* ---- high watermark ---- */

int sf_log_advance_high_watermark(sf_log_t *log, int64_t hw) {
    int64_t cur;
    int moved = 0;
    if (hw < 0)
        return 0;
    pthread_mutex_lock(&log->mu);
    cur = hw_locked(log);
    if (hw > log->leo)
        hw = log->leo;
    if (hw >= cur) {
        moved = hw > cur;
        log->hw = hw;
    }
    pthread_mutex_unlock(&log->mu);
    return moved;
}

/* ---- truncation ---- */

/* Drop segments [@from, nsegs) from the list and their files (rare: under the lock, so that
 * no roll recreates a file of the same name before it is gone). */
static int drop_segments_locked(sf_log_t *log, size_t from) {
    int rc = SF_OK;
    size_t i;
    for (i = from; i < log->nsegs; i++) {
        sf_segment_t *seg = log->segs[i];
        if (sf_segment_unlink(seg) != SF_OK)
            rc = SF_ERR_IO;
        if (seg == log->pinned) {
            sf_segment_fd_release(seg);
            log->pinned = NULL;
        }
        sf_segment_unref(seg);
    }
    if (log->nsegs > from)
        log->dir_unsynced = 1;
    log->nsegs = from;
    return rc;
}

/* Cut segment @k at @offset, making it the active one, and drop the segments after it.
 * @return SF_OK, or an error when the cut failed (nothing changed); a segment file that could
 * not be removed sets *@drop_rc to SF_ERR_IO. */
static int cut_segment_locked(sf_log_t *log, size_t k, int64_t offset, int64_t *end,
                              int *drop_rc) {
    sf_segment_t *seg = log->segs[k];
    int pinned = seg == log->pinned;
    int rc;
    *drop_rc = SF_OK;
    if (!pinned && sf_segment_fd_acquire(seg) != SF_OK)
        return SF_ERR_IO;
    rc = sf_segment_truncate_to(seg, offset, index_interval(log), end);
    if (rc != SF_OK) {
        sf_log(SF_LOG_ERR, "STORAGE", "%s: cannot truncate segment %020" PRId64 " to offset %"
               PRId64 ": %s", log->path, seg->base_offset, offset, sf_err_str(rc));
        if (!pinned)
            sf_segment_fd_release(seg);
        return SF_ERR_IO;
    }
    if (!pinned) {
        /* The pin taken above is the active segment's from now on. */
        *drop_rc = drop_segments_locked(log, k + 1);
        log->pinned = seg;
    }
    assert(k + 1 == log->nsegs && log->pinned == seg);
    return SF_OK;
}

/* Kafka's truncateFullyAndStartAt: nothing is kept and the log restarts at @offset. */
static int truncate_fully_locked(sf_log_t *log, int64_t offset) {
    sf_segment_t *seg;
    int64_t end;
    int rc;
    if (log->segs[0]->base_offset == offset) {
        /* A new segment would have the oldest one's name: empty that one instead. */
        int drop_rc;
        rc = cut_segment_locked(log, 0, offset, &end, &drop_rc);
        if (rc != SF_OK)
            return rc;
        rc = drop_rc;
    } else {
        if (sf_segment_create(log->path, offset, &seg) != SF_OK)
            return SF_ERR_IO;
        rc = drop_segments_locked(log, 0);
        log->segs[0] = seg; /* nsegs was >= 1: there is room */
        log->nsegs = 1;
        log->pinned = seg;
        log->dir_unsynced = 1;
    }
    log->start = offset;
    log->leo = offset;
    log->recovery_point = offset;
    if (log->hw >= 0)
        log->hw = offset;
    log->checkpointed_hw = -1; /* nothing of what it named is left */
    if (sf_epochs_clear(&log->epochs))
        sf_log_epochs_save_locked(log);
    sf_log(SF_LOG_INFO, "STORAGE", "%s: truncated fully; the log starts again at offset %" PRId64,
           log->path, offset);
    return rc;
}

static int truncate_locked(sf_log_t *log, int64_t offset) {
    size_t nsegs = log->nsegs;
    int64_t end;
    int drop_rc, rc = cut_segment_locked(log, seg_find(log, offset), offset, &end, &drop_rc);
    if (rc != SF_OK)
        return rc;
    /* Never below the log start offset (a batch straddling it was cut whole). */
    if (end < start_offset_locked(log))
        end = active_seg(log)->next_offset = start_offset_locked(log);
    log->leo = end;
    if (log->hw > end)
        log->hw = end;
    if (log->checkpointed_hw > end)
        log->checkpointed_hw = end;
    if (log->recovery_point > end)
        log->recovery_point = end;
    if (sf_epochs_truncate_from_end(&log->epochs, end))
        sf_log_epochs_save_locked(log);
    sf_log(SF_LOG_INFO, "STORAGE", "%s: truncated to offset %" PRId64 " (%zu segment(s) removed)",
           log->path, end, nsegs - log->nsegs);
    return drop_rc;
}

int sf_log_truncate_fully(sf_log_t *log, int64_t offset) {
    int rc;
    if (offset < 0)
        return SF_ERR_INVALID;
    pthread_mutex_lock(&log->mu);
    if (log->offline) {
        rc = SF_ERR_IO;
    } else {
        rc = truncate_fully_locked(log, offset);
        sf_log_txns_truncated_locked(log, log->leo, 1);
        sf_log_producers_truncated_locked(log, log->leo, 1);
    }
    pthread_mutex_unlock(&log->mu);
    return rc;
}

int sf_log_truncate(sf_log_t *log, int64_t offset) {
    int rc = SF_OK;
    if (offset < 0)
        return SF_ERR_INVALID;
    pthread_mutex_lock(&log->mu);
    if (log->offline)
        rc = SF_ERR_IO;
    else if (offset >= log->leo) {
        /* Nothing to cut, but an epoch that starts at the end (one this broker led without
         * writing) goes, or the follower would name it to its leader again. */
        if (offset == log->leo && sf_epochs_truncate_from_end(&log->epochs, offset))
            sf_log_epochs_save_locked(log);
    } else {
        int64_t old_leo = log->leo;
        int fully = offset < start_offset_locked(log);
        rc = fully ? truncate_fully_locked(log, offset) : truncate_locked(log, offset);
        if (log->leo != old_leo) { /* else the cut failed: nothing went */
            /* The index first: the producer state's reload replays markers into it. */
            sf_log_txns_truncated_locked(log, log->leo, fully);
            sf_log_producers_truncated_locked(log, log->leo, fully);
        }
    }
    pthread_mutex_unlock(&log->mu);
    return rc;
}
