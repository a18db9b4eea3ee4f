/* Partition logs: segment list, append, read, recovery, flush and retention (see log.h). */
#include "log.h"
#include "log_int.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cluster.h"
#include "znode.h"
#include "compress.h"
#include "buf.h"
#include "clock.h"
#include "err.h"
#include "logging.h"
#include "metrics.h"

#define BATCHES_ON_STACK 32
/* Disk blocks reserved ahead of the appends to the active segment (sf_segment_preallocate). */
#define SF_LOG_PREALLOC_BYTES (8 * 1024 * 1024)

void sf_log_config_default(sf_log_config_t *cfg) {
    cfg->segment_bytes = 1073741824;
    cfg->roll_ms = 7LL * 24 * 3600 * 1000;
    cfg->retention_ms = 7LL * 24 * 3600 * 1000;
    cfg->retention_bytes = -1;
    cfg->index_interval_bytes = 4096;
    cfg->flush_messages = INT64_MAX;
    cfg->flush_ms = INT64_MAX;
    cfg->max_message_bytes = 1048588;
    cfg->index_max_bytes = 10485760;
    cfg->log_append_time = 0;
    cfg->compression = -1;
    cfg->compression_level = -1;
    cfg->compacted = 0;
    cfg->timestamp_before_max_ms = INT64_MAX;
    cfg->timestamp_after_max_ms = INT64_MAX;
    cfg->min_insync_replicas = 1;
}

/* The largest decompressed batch a timestamp lookup reads. */
#define LOG_MAX_DECOMPRESSED (64 * 1024 * 1024)

/* ---- helpers ---- */

/* A reference and a descriptor pin, for reading a segment outside the log mutex. Called with
 * log->mu held (the segment is in the list, so its files exist). */
static int seg_get(sf_segment_t *seg) {
    int rc = sf_segment_fd_acquire(seg);
    if (rc == SF_OK)
        sf_segment_ref(seg);
    return rc;
}

static void seg_put(sf_segment_t *seg) {
    sf_segment_fd_release(seg);
    sf_segment_unref(seg);
}

/* Take the partition offline on this broker: a batch that does not check out lies below data
 * that was acknowledged, so neither cutting it nor serving around it is right. One log line;
 * from then on every read, append and lookup fails with SF_ERR_IO (KAFKA_STORAGE_ERROR) and
 * says nothing more. Called with log->mu held, or before the log is shared. */
static void offline_locked(sf_log_t *log, const sf_segment_t *seg, int64_t pos, const char *why) {
    if (log->offline)
        return;
    log->offline = 1;
    sf_log(SF_LOG_ERR, "STORAGE",
           "%s: partition offline: %s at position %" PRId64 " of %s.log, with data after it; "
           "nothing of it is served until the file is repaired or removed", log->path, why, pos,
           seg->path);
}

static int segs_push(sf_log_t *log, sf_segment_t *seg) {
    if (log->nsegs == log->capsegs) {
        size_t cap = log->capsegs ? log->capsegs * 2 : 8;
        sf_segment_t **p = realloc(log->segs, cap * sizeof(*p));
        if (!p)
            return SF_ERR_NOMEM;
        log->segs = p;
        log->capsegs = cap;
    }
    log->segs[log->nsegs++] = seg;
    return SF_OK;
}

static int64_t segment_limit(const sf_log_t *log) {
    int64_t lim = log->cfg.segment_bytes;
    if (lim <= 0 || lim > SF_SEGMENT_MAX_BYTES)
        lim = SF_SEGMENT_MAX_BYTES;
    return lim;
}

int sf_log_fsync_dir(const char *path) {
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = SF_OK;
    if (fd < 0)
        return SF_ERR_IO;
    if (fsync(fd) < 0)
        rc = SF_ERR_IO;
    close(fd);
    return rc;
}

/* "<20 digits>.log" -> base offset. */
int sf_log_parse_file_name(const char *name, const char *ext, int64_t *base) {
    size_t i, n = strlen(name), elen = strlen(ext);
    int64_t v = 0;
    if (n != 20 + elen || strcmp(name + 20, ext) != 0)
        return 0;
    for (i = 0; i < 20; i++) {
        if (name[i] < '0' || name[i] > '9')
            return 0;
        if (v > (INT64_MAX - (name[i] - '0')) / 10)
            return 0;
        v = v * 10 + (name[i] - '0');
    }
    *base = v;
    return 1;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int has_suffix(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

/* List the segment base offsets in @path, removing leftovers of interrupted operations and
 * index files whose .log is gone. */
static int list_segments(const char *path, int64_t **bases, size_t *count) {
    DIR *d = opendir(path);
    struct dirent *de;
    int64_t *v = NULL, base;
    size_t n = 0, cap = 0;
    char file[4200];

    *bases = NULL;
    *count = 0;
    if (!d)
        return SF_ERR_IO;
    while ((de = readdir(d)) != NULL) {
        if (sf_log_parse_file_name(de->d_name, ".log", &base)) {
            if (n == cap) {
                int64_t *p;
                cap = cap ? cap * 2 : 16;
                p = realloc(v, cap * sizeof(*v));
                if (!p) {
                    free(v);
                    closedir(d);
                    return SF_ERR_NOMEM;
                }
                v = p;
            }
            v[n++] = base;
        } else if (has_suffix(de->d_name, ".deleted") || has_suffix(de->d_name, ".cleaned") ||
                   has_suffix(de->d_name, ".swap") || has_suffix(de->d_name, ".tmp")) {
            snprintf(file, sizeof(file), "%s/%s", path, de->d_name);
            sf_log(SF_LOG_INFO, "STORAGE", "removing leftover file %s", file);
            (void)unlink(file);
        }
    }
    closedir(d);
    if (n > 1)
        qsort(v, n, sizeof(*v), cmp_i64);
    /* Index files without their .log. */
    d = opendir(path);
    if (d) {
        while ((de = readdir(d)) != NULL) {
            if ((sf_log_parse_file_name(de->d_name, ".index", &base) ||
                 sf_log_parse_file_name(de->d_name, ".timeindex", &base) ||
                 sf_log_parse_file_name(de->d_name, ".txnindex", &base)) &&
                (n == 0 || !bsearch(&base, v, n, sizeof(*v), cmp_i64))) {
                snprintf(file, sizeof(file), "%s/%s", path, de->d_name);
                sf_log(SF_LOG_INFO, "STORAGE", "removing orphan index %s", file);
                (void)unlink(file);
            }
        }
        closedir(d);
    }
    *bases = v;
    *count = n;
    return SF_OK;
}

/* Remove a segment that follows a truncated one (unreachable data). */
static void delete_segment_files(const sf_log_t *log, int64_t base) {
    static const char *const exts[] = {".log", ".index", ".timeindex", ".txnindex"};
    char path[4096], file[4200];
    int i;
    sf_log(SF_LOG_WARNING, "STORAGE", "%s: deleting segment %020" PRId64 " after a truncated one",
           log->path, base);
    sf_segment_path(path, sizeof(path), log->path, base);
    for (i = 0; i < 4; i++) {
        snprintf(file, sizeof(file), "%s%s", path, exts[i]);
        if (unlink(file) < 0 && errno != ENOENT)
            sf_log(SF_LOG_ERR, "STORAGE", "cannot delete %s: %s", file, strerror(errno));
    }
}

/* Whether any of the @n segments at @bases (after a damaged one) has bytes in its .log. */
static int later_data(const sf_log_t *log, const int64_t *bases, size_t n) {
    char path[4096], file[4200];
    struct stat st;
    size_t i;
    for (i = 0; i < n; i++) {
        sf_segment_path(path, sizeof(path), log->path, bases[i]);
        snprintf(file, sizeof(file), "%s.log", path);
        if (stat(file, &st) < 0 || st.st_size > 0)
            return 1; /* unreadable counts as data: never delete what cannot be looked at */
    }
    return 0;
}

/* Open and recover / load every segment. */
static int load_segments(sf_log_t *log, int64_t recovery_point) {
    int64_t *bases;
    size_t n, i;
    int rc;

    rc = list_segments(log->path, &bases, &n);
    if (rc != SF_OK) {
        sf_log(SF_LOG_ERR, "STORAGE", "cannot list %s: %s", log->path, strerror(errno));
        return rc;
    }
    for (i = 0; i < n; i++) {
        sf_segment_t *seg;
        int last = i + 1 == n;
        /* The segment holds offsets [base_i, base_i+1): recover it if that range reaches
         * the recovery point. */
        int recover = last ? recovery_point != INT64_MAX : bases[i + 1] > recovery_point;
        int tail_cut = 0;

        rc = sf_segment_open(log->path, bases[i], &seg);
        if (rc != SF_OK)
            goto out;
        if (recover)
            rc = sf_segment_recover(seg, seg->base_offset, index_interval(log));
        else
            rc = sf_segment_load(seg, last, index_interval(log));
        if (rc == SF_OK && seg->damaged_at >= 0 && !log->offline) {
            /* The tail of the log (a torn or unwritten end, nothing valid after it) is cut, as
             * Kafka's recovery does; damage with data after it keeps every file as it is. */
            if (!seg->damage_after && !later_data(log, bases + i + 1, n - i - 1)) {
                rc = sf_segment_truncate(seg);
                tail_cut = 1;
            } else {
                offline_locked(log, seg, seg->damaged_at, seg->damage_why);
            }
        }
        if (rc == SF_OK && recover && !last && !tail_cut)
            rc = sf_segment_seal(seg);
        if (rc == SF_OK)
            rc = segs_push(log, seg);
        if (rc != SF_OK) {
            seg_put(seg);
            goto out;
        }
        /* Only the active segment keeps its descriptor pinned: a log of thousands of segments
         * opens them one at a time here and lets the cache close the old ones. */
        if (!last && !tail_cut)
            sf_segment_fd_release(seg);
        else
            log->pinned = seg;
        if (tail_cut && !last) {
            /* The later segments hold nothing (later_data): the log ends here. */
            size_t j;
            for (j = i + 1; j < n; j++)
                delete_segment_files(log, bases[j]);
            /* The truncated segment is the active one now; the rebuild that found the damage
             * left its indexes on the heap, ready for appends. */
            assert(seg->oidx.loaded && !seg->oidx.mapped);
            seg->sealed = 0;
            break;
        }
    }
    /* Sealed segments end where the next one starts. */
    for (i = 0; i + 1 < log->nsegs; i++)
        if (log->segs[i]->next_offset < log->segs[i + 1]->base_offset)
            log->segs[i]->next_offset = log->segs[i + 1]->base_offset;
    rc = SF_OK;
out:
    free(bases);
    return rc;
}

int sf_log_open(const char *dir, const char *topic, int32_t partition, const sf_log_config_t *cfg,
                int64_t recovery_point, sf_log_t **logp) {
    sf_log_t *log;
    char path[4096];
    int rc = SF_ERR_NOMEM;

    *logp = NULL;
    if (!sf_znode_topic_name_valid(topic) || partition < 0)
        return SF_ERR_INVALID;
    if ((size_t)snprintf(path, sizeof(path), "%s/%s-%d", dir, topic, (int)partition) >=
        sizeof(path))
        return SF_ERR_INVALID;
    log = calloc(1, sizeof(*log));
    if (!log)
        return SF_ERR_NOMEM;
    pthread_mutex_init(&log->mu, NULL);
    pthread_mutex_init(&log->flush_mu, NULL);
    log->topic = strdup(topic);
    log->path = strdup(path);
    log->partition = partition;
    log->cfg = *cfg;
    log->hw = -1;
    log->checkpointed_hw = -1;
    log->first_unflushed_ms = -1;
    if (!log->topic || !log->path || sf_epochs_init(&log->epochs, path) != SF_OK)
        goto err;
    if (mkdir(path, 0755) < 0 && errno != EEXIST) {
        sf_log(SF_LOG_ERR, "STORAGE", "cannot create %s: %s", path, strerror(errno));
        rc = SF_ERR_IO;
        goto err;
    }
    rc = load_segments(log, recovery_point);
    if (rc != SF_OK)
        goto err;
    if (log->nsegs == 0) {
        sf_segment_t *seg;
        rc = sf_segment_create(path, 0, &seg);
        if (rc != SF_OK)
            goto err;
        rc = segs_push(log, seg);
        if (rc != SF_OK) {
            seg_put(seg);
            goto err;
        }
        log->pinned = seg;
        /* The new directory entries are made durable by the next sf_log_flush (the
         * directory's owner calls it off the event loop), not here. */
        log->dir_unsynced = 1;
    }
    log->leo = active_seg(log)->next_offset;
    log->recovery_point = recovery_point < log->leo ? recovery_point : log->leo;
    if (log->recovery_point < start_offset_locked(log))
        log->recovery_point = start_offset_locked(log);
    rc = sf_log_epochs_open(log);
    /* The aborted transactions first: the producer state's replay adds only what is missing. */
    if (rc == SF_OK && !log->offline && (rc = sf_log_txns_load_locked(log)) == SF_OK &&
        (rc = sf_log_producers_load_locked(log)) == SF_OK)
        log->producers_loaded = 1;
    if (rc != SF_OK)
        goto err;
    sf_log(SF_LOG_INFO, "STORAGE", "%s: opened, %zu segment(s), offsets %" PRId64 "..%" PRId64,
           path, log->nsegs, start_offset_locked(log), log->leo);
    *logp = log;
    return SF_OK;

err:
    sf_log_close(log);
    return rc;
}

void sf_log_close(sf_log_t *log) {
    size_t i;
    if (!log)
        return;
    if (log->pinned && !log->offline && log->producers_loaded)
        sf_log_producers_snapshot_locked(log, log->leo);
    if (log->pinned) {
        assert(log->pinned == active_seg(log));
        (void)sf_segment_seal(log->pinned); /* final time entry, pending index entries */
        sf_segment_fd_release(log->pinned);
        log->pinned = NULL;
    }
    for (i = 0; i < log->nsegs; i++)
        sf_segment_unref(log->segs[i]);
    free(log->segs);
    sf_epochs_free(&log->epochs);
    sf_producers_free(&log->producers);
    sf_txnindex_free(&log->aborted);
    free(log->topic);
    free(log->path);
    pthread_mutex_destroy(&log->mu);
    pthread_mutex_destroy(&log->flush_mu);
    free(log);
}

/* ---- append ---- */

int sf_log_roll_locked(sf_log_t *log, int64_t base) {
    sf_segment_t *seg, *old = active_seg(log);
    int rc;
    assert(base >= log->leo);
    rc = sf_segment_create(log->path, base, &seg);
    if (rc != SF_OK)
        return rc;
    rc = segs_push(log, seg);
    if (rc != SF_OK) {
        (void)sf_segment_unlink(seg);
        seg_put(seg);
        return rc;
    }
    if (sf_segment_seal(old) != SF_OK)
        sf_log(SF_LOG_WARNING, "STORAGE", "%s: could not write the indexes of segment %020" PRId64
               "; they will be rebuilt", log->path, old->base_offset);
    sf_log_producers_snapshot_locked(log, base);
    assert(log->pinned == old);
    sf_segment_fd_release(old); /* sealed: its descriptor may go to the cache */
    log->pinned = seg;
    log->sealed_unsynced = 1;
    log->dir_unsynced = 1;
    /* A replica's append after a gap: the offsets skipped hold nothing, and the LEO is never
     * below the active segment's base, even if the write that follows fails. */
    log->leo = base;
    sf_log(SF_LOG_INFO, "STORAGE", "%s: rolled new segment at offset %" PRId64, log->path, base);
    return SF_OK;
}

/* Whether appending @len bytes in @nbatches batches ending at @last_offset needs a new
 * segment (as Kafka's Log.maybeRoll). */
static int needs_roll(const sf_log_t *log, size_t len, size_t nbatches, int64_t last_offset,
                      int64_t now_ms) {
    const sf_segment_t *seg = active_seg(log);
    int64_t max_entries_o, max_entries_t;
    /* First, as even an empty segment cannot index a replica's batch far past its base. */
    if (last_offset - seg->base_offset > INT32_MAX)
        return 1;
    if (seg->size == 0)
        return 0;
    if (seg->size + (int64_t)len > segment_limit(log))
        return 1;
    if (seg->roll_base_ms >= 0 && log->cfg.roll_ms >= 0 &&
        now_ms - seg->roll_base_ms > log->cfg.roll_ms)
        return 1;
    max_entries_o = log->cfg.index_max_bytes / SF_SEGMENT_OFFSET_ENTRY_SIZE;
    max_entries_t = log->cfg.index_max_bytes / SF_SEGMENT_TIME_ENTRY_SIZE;
    if ((int64_t)(seg->oidx.n + nbatches) > max_entries_o ||
        (int64_t)(seg->tidx.n + nbatches) > max_entries_t)
        return 1;
    return 0;
}

/* How log_append treats the batches (APPEND_MARKER: one control batch the log built). */
enum { APPEND_LEADER, APPEND_VALIDATED, APPEND_REPLICA, APPEND_MARKER };

/* Check the framing and sizes of every batch in @batches (and, unless APPEND_VALIDATED, its
 * CRC and records) and describe them in @bv: offsets relative to the batch for the leader's
 * appends, the batch's own for a replica's (which must increase: SF_ERR_RANGE). */
static int parse_batches(const sf_log_t *log, const uint8_t *batches, size_t len, int mode,
                         sf_segment_batch_t **bvp, size_t *nbp, size_t capb, int64_t *records) {
    sf_segment_batch_t *bv = *bvp, *stackv = *bvp;
    size_t nb = 0, pos = 0;
    int rc = SF_OK;

    while (pos < len) {
        sf_recbatch_hdr_t hdr;
        size_t bsize;
        if (len - pos > SF_RECBATCH_OFF_MAGIC && batches[pos + SF_RECBATCH_OFF_MAGIC] != 2)
            return SF_ERR_UNSUPPORTED;
        rc = sf_recbatch_header_parse(batches + pos, len - pos, &hdr, &bsize);
        if (rc == SF_ERR_MALFORMED)
            return rc;
        if (rc == SF_AGAIN && len - pos < SF_RECBATCH_HEADER_SIZE)
            return SF_ERR_MALFORMED; /* a partial header */
        if (log->cfg.max_message_bytes > 0 && bsize > (size_t)log->cfg.max_message_bytes)
            return SF_ERR_TOOLARGE;
        if (rc == SF_AGAIN)
            return SF_ERR_MALFORMED; /* a partial batch */
        if (mode != APPEND_VALIDATED && (rc = sf_recbatch_validate(batches + pos, bsize, &hdr)))
            return rc;
        if (nb == capb) {
            sf_segment_batch_t *p;
            capb *= 2;
            p = bv == stackv ? malloc(capb * sizeof(*p)) : realloc(bv, capb * sizeof(*p));
            if (!p)
                return SF_ERR_NOMEM;
            if (bv == stackv)
                memcpy(p, stackv, nb * sizeof(*p));
            *bvp = bv = p;
        }
        if (mode == APPEND_REPLICA) {
            /* The leader's offsets, kept: they must go up batch after batch. */
            if (hdr.BaseOffset < 0 || hdr.LastOffsetDelta < 0 ||
                hdr.BaseOffset > INT64_MAX - 1 - hdr.LastOffsetDelta ||
                (nb > 0 && hdr.BaseOffset <= bv[nb - 1].last_offset))
                return SF_ERR_RANGE;
            bv[nb].base_offset = hdr.BaseOffset;
            bv[nb].last_offset = hdr.BaseOffset + hdr.LastOffsetDelta;
        } else {
            bv[nb].base_offset = 0; /* assigned under the lock */
            bv[nb].last_offset = hdr.LastOffsetDelta; /* relative until then */
        }
        bv[nb].max_timestamp = hdr.MaxTimestamp;
        bv[nb].size = bsize;
        nb++;
        *records += hdr.RecordCount;
        pos += bsize;
        *nbp = nb;
    }
    return len > SF_SEGMENT_MAX_BYTES ? SF_ERR_TOOLARGE : SF_OK;
}

/* Give the leader's batches their offsets and epoch, in @batches. Returns the next offset. */
static int64_t assign_offsets_locked(const sf_log_t *log, uint8_t *batches,
                                     sf_segment_batch_t *bv, size_t nb) {
    int64_t next = log->leo;
    size_t pos = 0, i;
    for (i = 0; i < nb; i++) {
        int64_t delta = bv[i].last_offset;
        sf_recbatch_set_base_offset(batches + pos, next);
        sf_recbatch_set_leader_epoch(batches + pos, log->leader_epoch);
        bv[i].base_offset = next;
        bv[i].last_offset = next + delta;
        next = bv[i].last_offset + 1;
        pos += bv[i].size;
    }
    return next;
}

/* Record the epochs of appended batches that start one above the latest cached epoch; the
 * checkpoint is written only when that happened (a leader change: rare). */
static void note_epochs_locked(sf_log_t *log, const uint8_t *batches,
                               const sf_segment_batch_t *bv, size_t nb) {
    size_t pos = 0, i;
    int changed = 0;
    for (i = 0; i < nb; i++) {
        int32_t epoch = (int32_t)sf_load_be32(batches + pos + SF_RECBATCH_OFF_LEADER_EPOCH);
        if (epoch > sf_epochs_latest(&log->epochs) &&
            sf_epochs_assign(&log->epochs, epoch, bv[i].base_offset) == 1)
            changed = 1;
        pos += bv[i].size;
    }
    if (changed)
        sf_log_epochs_save_locked(log);
}

static int log_append(sf_log_t *log, uint8_t *batches, size_t len, int64_t now_ms, int mode,
                      uint64_t guard, sf_log_append_info_t *info) {
    sf_segment_batch_t stackv[BATCHES_ON_STACK], *bv = stackv;
    size_t nb = 0;
    int64_t records = 0, next, first;
    int rc;

    if (len == 0)
        return SF_ERR_MALFORMED;
    /* Validate everything before touching the log (no lock needed). */
    rc = parse_batches(log, batches, len, mode, &bv, &nb, BATCHES_ON_STACK, &records);
    if (rc != SF_OK)
        goto out;

    pthread_mutex_lock(&log->mu);
    if (log->offline) {
        pthread_mutex_unlock(&log->mu);
        rc = SF_ERR_IO;
        goto out;
    }
    if (mode == APPEND_REPLICA) {
        /* A gap after the LEO is fine (compaction leaves them); going back is not. */
        if (bv[0].base_offset < log->leo) {
            pthread_mutex_unlock(&log->mu);
            rc = SF_ERR_RANGE;
            goto out;
        }
        first = bv[0].base_offset;
        next = bv[nb - 1].last_offset + 1;
        if (next - 1 - first > INT32_MAX) {
            /* More than one segment can index: the caller splits the append. */
            pthread_mutex_unlock(&log->mu);
            rc = SF_ERR_RANGE;
            goto out;
        }
    } else {
        rc = mode == APPEND_MARKER ? sf_log_producers_check_marker_locked(log, batches, len)
                                   : sf_log_producers_check_locked(log, batches, bv, nb, guard,
                                                                   info);
        if (rc != SF_OK) {
            pthread_mutex_unlock(&log->mu);
            goto out;
        }
        first = log->leo;
        next = assign_offsets_locked(log, batches, bv, nb);
    }
    if (needs_roll(log, len, nb, next - 1, now_ms)) {
        rc = sf_log_roll_locked(log, first);
        if (rc != SF_OK) {
            pthread_mutex_unlock(&log->mu);
            goto out;
        }
    }
    {
        /* Reserve blocks ahead of the appends (never past the segment size limit, so a
         * segment rolled for size keeps little or nothing of it). */
        sf_segment_t *seg = active_seg(log);
        if (seg->size + (int64_t)len > seg->prealloc_end) {
            int64_t upto = seg->size + (int64_t)len + SF_LOG_PREALLOC_BYTES;
            int64_t lim = segment_limit(log);
            if (upto > lim)
                upto = seg->size + (int64_t)len > lim ? seg->size + (int64_t)len : lim;
            sf_segment_preallocate(seg, upto);
        }
    }
    rc = sf_segment_append(active_seg(log), batches, len, bv, nb, now_ms, index_interval(log));
    if (rc == SF_OK) {
        if (info) {
            info->FirstOffset = first;
            info->LastOffset = next - 1;
            info->LogAppendTime = -1;
            info->LogStartOffset = start_offset_locked(log);
            info->RecordCount = records > INT32_MAX ? INT32_MAX : (int32_t)records;
        }
        log->leo = next;
        if (log->unflushed_msgs == 0)
            log->first_unflushed_ms = now_ms;
        log->unflushed_msgs += records;
        log->last_append_ms = now_ms;
        note_epochs_locked(log, batches, bv, nb);
        sf_log_producers_record_locked(log, batches, bv, nb);
    }
    pthread_mutex_unlock(&log->mu);
out:
    if (bv != stackv)
        free(bv);
    return rc;
}

int sf_log_append(sf_log_t *log, uint8_t *batches, size_t len, int64_t now_ms,
                  sf_log_append_info_t *info) {
    return log_append(log, batches, len, now_ms, APPEND_LEADER, 0, info);
}

int sf_log_append_validated(sf_log_t *log, uint8_t *batches, size_t len, int64_t now_ms,
                            uint64_t guard, sf_log_append_info_t *info) {
    return log_append(log, batches, len, now_ms, APPEND_VALIDATED, guard, info);
}

int sf_log_append_replica(sf_log_t *log, const uint8_t *batches, size_t len, int64_t now_ms,
                          sf_log_append_info_t *info) {
    /* Nothing is written to the buffer in this mode (the leader's offsets and epochs stay). */
    return log_append(log, (uint8_t *)(uintptr_t)batches, len, now_ms, APPEND_REPLICA, 0, info);
}

/* The version of a marker's key and value (Kafka's ControlRecordType, EndTransactionMarker). */
#define MARKER_VERSION 0

int sf_log_append_marker(sf_log_t *log, int64_t producer_id, int16_t producer_epoch,
                         int commit, int32_t coordinator_epoch, int64_t now_ms,
                         int64_t *offset) {
    uint8_t key[4], value[6];
    sf_recbatch_record_t rec;
    sf_recbatch_hdr_t tmpl;
    sf_log_append_info_t info;
    sf_wbuf_t wb;
    int rc;
    /* key: version, type */
    sf_store_be16(key, MARKER_VERSION);
    sf_store_be16(key + 2, commit ? SF_RECBATCH_CONTROL_COMMIT : SF_RECBATCH_CONTROL_ABORT);
    /* value: version, coordinator epoch */
    sf_store_be16(value, MARKER_VERSION);
    sf_store_be32(value + 2, (uint32_t)coordinator_epoch);
    memset(&rec, 0, sizeof(rec));
    rec.timestamp = now_ms;
    rec.key.p = key;
    rec.key.len = (int32_t)sizeof(key);
    rec.value.p = value;
    rec.value.len = (int32_t)sizeof(value);
    memset(&tmpl, 0, sizeof(tmpl));
    tmpl.PartitionLeaderEpoch = -1; /* stamped by the append */
    tmpl.Attributes = SF_RECBATCH_ATTR_TRANSACTIONAL | SF_RECBATCH_ATTR_CONTROL;
    tmpl.BaseTimestamp = now_ms;
    tmpl.ProducerId = producer_id;
    tmpl.ProducerEpoch = producer_epoch;
    tmpl.BaseSequence = -1;
    sf_wbuf_init(&wb); /* a marker is rare next to records: the heap is fine */
    rc = sf_recbatch_build_hdr(&wb, &tmpl, &rec, 1);
    if (rc == SF_OK)
        rc = log_append(log, wb.p, wb.len, now_ms, APPEND_MARKER, 0, &info);
    sf_wbuf_free(&wb);
    if (rc == SF_OK && offset)
        *offset = info.FirstOffset;
    return rc;
}

void sf_log_set_leader_epoch(sf_log_t *log, int32_t leader_epoch) {
    pthread_mutex_lock(&log->mu);
    log->leader_epoch = leader_epoch;
    pthread_mutex_unlock(&log->mu);
}

/* ---- offsets ---- */

int64_t sf_log_start_offset(sf_log_t *log) {
    int64_t v;
    pthread_mutex_lock(&log->mu);
    v = start_offset_locked(log);
    pthread_mutex_unlock(&log->mu);
    return v;
}

int64_t sf_log_base_offset(sf_log_t *log) {
    int64_t v;
    pthread_mutex_lock(&log->mu);
    v = log->segs[0]->base_offset;
    pthread_mutex_unlock(&log->mu);
    return v;
}

int64_t sf_log_end_offset(sf_log_t *log) {
    int64_t v;
    pthread_mutex_lock(&log->mu);
    v = log->leo;
    pthread_mutex_unlock(&log->mu);
    return v;
}

int64_t sf_log_high_watermark(sf_log_t *log) {
    int64_t v;
    pthread_mutex_lock(&log->mu);
    v = hw_locked(log);
    pthread_mutex_unlock(&log->mu);
    return v;
}

int sf_log_known_high_watermark(sf_log_t *log, int64_t *hw) {
    pthread_mutex_lock(&log->mu);
    *hw = log->hw >= 0 ? hw_locked(log) : log->checkpointed_hw;
    if (*hw >= 0 && *hw < start_offset_locked(log))
        *hw = start_offset_locked(log); /* retention moved on */
    if (*hw > log->leo)
        *hw = log->leo;
    pthread_mutex_unlock(&log->mu);
    return *hw >= 0;
}

int64_t sf_log_checkpointed_high_watermark(sf_log_t *log) {
    int64_t v;
    pthread_mutex_lock(&log->mu);
    v = log->checkpointed_hw;
    pthread_mutex_unlock(&log->mu);
    return v;
}

void sf_log_set_checkpointed_high_watermark(sf_log_t *log, int64_t hw) {
    pthread_mutex_lock(&log->mu);
    log->checkpointed_hw = hw < 0 ? -1 : hw > log->leo ? log->leo : hw;
    pthread_mutex_unlock(&log->mu);
}

void sf_log_set_high_watermark(sf_log_t *log, int64_t hw) {
    pthread_mutex_lock(&log->mu);
    if (hw >= 0) {
        if (hw < start_offset_locked(log))
            hw = start_offset_locked(log);
        if (hw > log->leo)
            hw = log->leo;
    } else {
        hw = -1;
    }
    log->hw = hw;
    pthread_mutex_unlock(&log->mu);
}

int64_t sf_log_size_bytes(sf_log_t *log) {
    int64_t total = 0;
    size_t i;
    pthread_mutex_lock(&log->mu);
    for (i = 0; i < log->nsegs; i++)
        total += log->segs[i]->size;
    pthread_mutex_unlock(&log->mu);
    return total;
}

size_t sf_log_segment_count(sf_log_t *log) {
    size_t n;
    pthread_mutex_lock(&log->mu);
    n = log->nsegs;
    pthread_mutex_unlock(&log->mu);
    return n;
}

int64_t sf_log_recovery_point(sf_log_t *log) {
    int64_t v;
    pthread_mutex_lock(&log->mu);
    v = log->recovery_point;
    pthread_mutex_unlock(&log->mu);
    return v;
}

/* ---- read ---- */

int sf_log_slice_copy(const sf_log_slice_t *sl, uint8_t *buf) {
    if (!sl->len)
        return SF_OK;
    return sf_segment_read(sl->seg, sl->pos, buf, sl->len);
}

int sf_log_slice_codecs(const sf_log_slice_t *sl, unsigned *mask) {
    *mask = 0;
    if (!sl->len)
        return SF_OK;
    return sf_segment_codecs(sl->seg, sl->pos, sl->pos + (int64_t)sl->len, mask);
}

int sf_log_slice_next_offset(const sf_log_slice_t *sl, int64_t *next) {
    int64_t pos = sl->pos, end = sl->pos + (int64_t)sl->len, found;
    sf_recbatch_hdr_t hdr;
    size_t bsize;
    int rc;
    *next = -1;
    while (pos < end) {
        if ((rc = sf_segment_scan(sl->seg, pos, end, -1, &found, &hdr, &bsize)) != SF_OK)
            return rc == SF_ERR_NOTFOUND ? SF_ERR_CORRUPT : rc;
        *next = sf_recbatch_next_offset(&hdr);
        pos = found + (int64_t)bsize;
    }
    return SF_OK;
}

void sf_log_slice_release(sf_segment_t *seg) {
    if (seg)
        seg_put(seg);
}

/* A read met a batch that does not check out at @pos of @seg: offline (logged once). */
static int read_damaged(sf_log_t *log, const sf_segment_t *seg, int64_t pos) {
    pthread_mutex_lock(&log->mu);
    offline_locked(log, seg, pos, "a batch header that does not check out");
    pthread_mutex_unlock(&log->mu);
    return SF_ERR_IO;
}

/* Where to start scanning @seg for @offset, its index loaded (log->mu held). An index that
 * points at no batch was rebuilt by the caller (@rebuilt): start from its entries again.
 * @return SF_OK, SF_ERR_CORRUPT (*@bad_pos: the log is damaged) or an error. */
static int read_start_locked(sf_log_t *log, sf_segment_t *seg, int64_t offset, int rebuilt,
                             int64_t *pos, int64_t *bad_pos) {
    int rc = rebuilt ? sf_segment_index_rebuild(seg, index_interval(log), bad_pos)
                     : sf_segment_index_ensure(seg, index_interval(log), bad_pos);
    if (rc == SF_OK)
        *pos = sf_segment_index_lookup(seg, offset);
    return rc;
}

int sf_log_read(sf_log_t *log, int64_t offset, int32_t max_bytes, int64_t max_offset,
                sf_log_slice_t *out) {
    sf_segment_t *seg;
    int64_t pos = 0, end, found, run_end, seg_base;
    sf_recbatch_hdr_t hdr;
    size_t bsize, i;
    int rc, rebuilt = 0;

    memset(out, 0, sizeof(*out));
    out->fd = -1;
    pthread_mutex_lock(&log->mu);
    if (log->offline) {
        pthread_mutex_unlock(&log->mu);
        return SF_ERR_IO;
    }
    if (offset < start_offset_locked(log) || offset > log->leo) {
        pthread_mutex_unlock(&log->mu);
        return SF_ERR_RANGE;
    }
    if (offset == log->leo) {
        pthread_mutex_unlock(&log->mu);
        return SF_OK;
    }
    i = seg_find(log, offset);
    for (;;) {
        seg = log->segs[i];
        rc = read_start_locked(log, seg, offset, rebuilt, &pos, &found);
        if (rc == SF_ERR_CORRUPT) {
            offline_locked(log, seg, found, "a batch header that does not check out");
            rc = SF_ERR_IO;
        }
        if (rc != SF_OK) {
            pthread_mutex_unlock(&log->mu);
            return rc;
        }
        end = seg->size;
        seg_base = seg->base_offset;
        rc = seg_get(seg);
        pthread_mutex_unlock(&log->mu);
        if (rc != SF_OK)
            return rc;

        /* Headers are read outside the lock, below the size snapshot. */
        rc = sf_segment_scan(seg, pos, end, offset, &found, &hdr, &bsize);
        if (rc == SF_ERR_CORRUPT && pos > 0 && !rebuilt) {
            /* An index entry may point at no batch (a damaged .index): rebuilding it from
             * the .log tells that from damage in the .log itself. */
            seg_put(seg);
            rebuilt = 1;
            pthread_mutex_lock(&log->mu);
            i = seg_find(log, seg_base);
            if (log->offline || log->segs[i]->base_offset != seg_base) {
                pthread_mutex_unlock(&log->mu);
                return log->offline ? SF_ERR_IO : SF_OK;
            }
            continue;
        }
        rebuilt = 0;
        if (rc != SF_ERR_NOTFOUND)
            break;
        /* Nothing at or after @offset here (a gap at the segment's end): try the next. */
        seg_put(seg);
        pthread_mutex_lock(&log->mu);
        i = seg_find(log, seg_base) + 1;
        if (i >= log->nsegs || log->segs[i - 1]->base_offset != seg_base) {
            pthread_mutex_unlock(&log->mu);
            return SF_OK;
        }
    }
    if (rc == SF_ERR_CORRUPT) {
        rc = read_damaged(log, seg, found);
        seg_put(seg);
        return rc;
    }
    if (rc != SF_OK) {
        seg_put(seg);
        return rc;
    }
    if (hdr.BaseOffset >= max_offset) {
        seg_put(seg);
        return SF_OK;
    }
    /* KIP-74: the first batch always goes, then whole batches while they fit. Every header
     * on the way is read and checked (not skipped with the index): a batch that does not
     * check out is never sent, and reading headers from the page cache costs little next to
     * sending the bytes (see the consume measurements in the commit that made it so). */
    run_end = found + (int64_t)bsize;
    if (max_bytes > 0 && (int64_t)bsize < max_bytes && run_end < end) {
        rc = sf_segment_extent(seg, run_end, sf_recbatch_next_offset(&hdr), end,
                               found + max_bytes, max_offset, &run_end);
        if (rc == SF_ERR_CORRUPT) {
            rc = read_damaged(log, seg, run_end);
            seg_put(seg);
            return rc;
        }
        if (rc != SF_OK && run_end <= found) {
            seg_put(seg);
            return rc;
        }
    }
    out->fd = seg->fd;
    out->pos = found;
    out->len = (size_t)(run_end - found);
    out->seg = seg;
    return SF_OK;
}

/* ---- time lookup ---- */

/* Read the batch at @pos and find its first record with timestamp >= @ts and offset >= @from.
 * Returns SF_OK, SF_ERR_NOTFOUND (none in this batch) or an error. */
static int batch_find_timestamp(const sf_segment_t *seg, int64_t pos, size_t bsize,
                                const sf_recbatch_hdr_t *hdr, int64_t ts, int64_t from,
                                int64_t *offset, int64_t *found_ts) {
    int codec = hdr->Attributes & SF_RECBATCH_ATTR_COMPRESSION_MASK;
    sf_recbatch_iter_t it;
    sf_recbatch_record_t rec;
    sf_wbuf_t plain;
    uint8_t *buf;
    int rc;

    if (hdr->Attributes & SF_RECBATCH_ATTR_LOG_APPEND_TIME) {
        /* Every record carries the batch's append time. */
        *offset = hdr->BaseOffset > from ? hdr->BaseOffset : from;
        *found_ts = hdr->MaxTimestamp;
        return SF_OK;
    }
    if (bsize < SF_RECBATCH_HEADER_SIZE || !(buf = malloc(bsize)))
        return bsize < SF_RECBATCH_HEADER_SIZE ? SF_ERR_CORRUPT : SF_ERR_NOMEM;
    sf_wbuf_init(&plain);
    rc = sf_segment_read(seg, pos, buf, bsize);
    if (rc == SF_OK && codec != SF_COMPRESS_NONE) {
        /* The exact record inside a compressed batch, as Kafka answers. */
        rc = sf_decompress((sf_compress_codec_t)codec, buf + SF_RECBATCH_HEADER_SIZE,
                           bsize - SF_RECBATCH_HEADER_SIZE, LOG_MAX_DECOMPRESSED, &plain);
        if (rc == SF_OK)
            sf_recbatch_iter_init_records(&it, hdr, plain.p, plain.len);
    } else if (rc == SF_OK) {
        rc = sf_recbatch_iter_init(&it, buf, bsize);
    }
    while (rc == SF_OK && (rc = sf_recbatch_iter_next(&it, &rec)) == SF_OK) {
        if (rec.offset >= from && rec.timestamp >= ts) {
            *offset = rec.offset;
            *found_ts = rec.timestamp;
            break;
        }
    }
    sf_wbuf_free(&plain);
    free(buf);
    return rc;
}

int sf_log_offset_for_timestamp(sf_log_t *log, int64_t timestamp, int64_t *offset,
                                int64_t *found_timestamp) {
    size_t i = 0;
    int rc = SF_ERR_NOTFOUND;
    pthread_mutex_lock(&log->mu);
    if (log->offline)
        rc = SF_ERR_IO;
    while (rc == SF_ERR_NOTFOUND && i < log->nsegs) {
        sf_segment_t *seg = log->segs[i];
        int64_t from, pos, end, found, base = seg->base_offset;
        sf_recbatch_hdr_t hdr;
        size_t bsize;

        /* As Kafka: the first segment whose largest timestamp reaches the target. */
        if (seg->max_timestamp < timestamp) {
            i++;
            continue;
        }
        rc = sf_segment_index_ensure(seg, index_interval(log), &found);
        if (rc == SF_ERR_CORRUPT) {
            offline_locked(log, seg, found, "a batch header that does not check out");
            rc = SF_ERR_IO;
        }
        if (rc != SF_OK)
            break;
        from = sf_segment_time_lookup(seg, timestamp);
        /* Records below the log start offset (DeleteRecords) are gone even if still on disk. */
        if (from < start_offset_locked(log))
            from = start_offset_locked(log);
        pos = sf_segment_index_lookup(seg, from);
        end = seg->size;
        rc = seg_get(seg);
        pthread_mutex_unlock(&log->mu);
        if (rc != SF_OK)
            return rc;
        /* Walk batches from there: the first whose MaxTimestamp reaches the target. */
        for (;;) {
            rc = sf_segment_scan(seg, pos, end, from, &found, &hdr, &bsize);
            if (rc != SF_OK)
                break;
            if (hdr.MaxTimestamp >= timestamp) {
                rc = batch_find_timestamp(seg, found, bsize, &hdr, timestamp, from, offset,
                                          found_timestamp);
                if (rc != SF_ERR_NOTFOUND)
                    break;
            }
            pos = found + (int64_t)bsize;
        }
        if (rc == SF_ERR_CORRUPT)
            rc = read_damaged(log, seg, found);
        seg_put(seg);
        if (rc != SF_ERR_NOTFOUND)
            return rc;
        pthread_mutex_lock(&log->mu);
        /* The list may have changed while unlocked: go on after this segment's base. */
        for (i = 0; i < log->nsegs && log->segs[i]->base_offset <= base; i++)
            ;
    }
    pthread_mutex_unlock(&log->mu);
    return rc;
}

int sf_log_max_timestamp(sf_log_t *log, int64_t *offset, int64_t *timestamp) {
    size_t i;
    *offset = *timestamp = -1;
    pthread_mutex_lock(&log->mu);
    if (log->offline) {
        pthread_mutex_unlock(&log->mu);
        return SF_ERR_IO;
    }
    for (i = 0; i < log->nsegs; i++)
        if (log->segs[i]->max_timestamp > *timestamp) {
            *timestamp = log->segs[i]->max_timestamp;
            *offset = log->segs[i]->offset_of_max_timestamp;
        }
    pthread_mutex_unlock(&log->mu);
    return *offset >= 0 ? SF_OK : SF_ERR_NOTFOUND;
}

/* ---- flush ---- */

int sf_log_needs_flush(sf_log_t *log, int64_t now_ms) {
    int r;
    pthread_mutex_lock(&log->mu);
    r = log->sealed_unsynced ||
        (log->unflushed_msgs > 0 &&
         (log->unflushed_msgs >= log->cfg.flush_messages ||
          (log->first_unflushed_ms >= 0 && now_ms - log->first_unflushed_ms >= log->cfg.flush_ms)));
    pthread_mutex_unlock(&log->mu);
    return r;
}

int sf_log_flush(sf_log_t *log) {
    sf_segment_t **v = NULL;
    int64_t *sizes = NULL, target, msgs, started_us;
    int *idx = NULL, dir_sync, rc = SF_OK;
    size_t n = 0, i;

    pthread_mutex_lock(&log->flush_mu);
    pthread_mutex_lock(&log->mu);
    if (log->offline) {
        /* Nothing is appended; the recovery point stays where the damage was found. */
        pthread_mutex_unlock(&log->mu);
        goto out;
    }
    target = log->leo;
    msgs = log->unflushed_msgs;
    v = malloc(log->nsegs * sizeof(*v));
    sizes = malloc(log->nsegs * sizeof(*sizes));
    idx = malloc(log->nsegs * sizeof(*idx));
    if (!v || !sizes || !idx) {
        pthread_mutex_unlock(&log->mu);
        rc = SF_ERR_NOMEM;
        goto out;
    }
    for (i = 0; i < log->nsegs; i++) {
        sf_segment_t *seg = log->segs[i];
        if (seg == active_seg(log))
            (void)sf_segment_write_indexes(seg); /* pending entries into the page cache */
        if (seg->synced_size >= seg->size && !seg->index_unsynced)
            continue;
        sf_segment_ref(seg); /* the sync pins its descriptor, one segment at a time */
        v[n] = seg;
        sizes[n] = seg->size;
        idx[n] = seg->index_unsynced;
        seg->index_unsynced = 0;
        n++;
    }
    if (log->epochs_unsaved)
        sf_log_epochs_sync_locked(log); /* after a leadership change: rare, so under the lock */
    dir_sync = log->dir_unsynced;
    log->dir_unsynced = 0;
    log->sealed_unsynced = 0;
    pthread_mutex_unlock(&log->mu);

    /* The slow part, outside the lock: appends go on meanwhile. */
    started_us = n || dir_sync ? sf_clock_mono_us() : 0;
    for (i = 0; i < n && rc == SF_OK; i++)
        rc = sf_segment_sync(v[i], idx[i]);
    if (rc == SF_OK && dir_sync && sf_log_fsync_dir(log->path) != SF_OK)
        rc = SF_ERR_IO;
    if (started_us)
        sf_metrics_flush(sf_clock_mono_us() - started_us);

    pthread_mutex_lock(&log->mu);
    if (rc == SF_OK) {
        for (i = 0; i < n; i++)
            if (v[i]->synced_size < sizes[i])
                v[i]->synced_size = sizes[i];
        if (log->recovery_point < target)
            log->recovery_point = target;
        log->unflushed_msgs -= msgs;
        log->first_unflushed_ms = log->unflushed_msgs > 0 ? log->last_append_ms : -1;
    } else {
        for (i = 0; i < n; i++)
            if (idx[i])
                v[i]->index_unsynced = 1;
        log->dir_unsynced |= dir_sync;
        log->sealed_unsynced = 1;
    }
    pthread_mutex_unlock(&log->mu);
    for (i = 0; i < n; i++)
        sf_segment_unref(v[i]);
out:
    free(v);
    free(sizes);
    free(idx);
    pthread_mutex_unlock(&log->flush_mu);
    return rc;
}

/* ---- retention ---- */

int sf_log_retention(sf_log_t *log, int64_t now_ms) {
    sf_segment_t **dead = NULL;
    size_t ndead = 0, i;
    int64_t total = 0;
    int rc = SF_OK;

    pthread_mutex_lock(&log->mu);
    if (log->offline) {
        /* Its files stay as they are for whoever repairs them. */
        pthread_mutex_unlock(&log->mu);
        return 0;
    }
    for (i = 0; i < log->nsegs; i++)
        total += log->segs[i]->size;
    while (log->nsegs - ndead > 1) {
        sf_segment_t *seg = log->segs[ndead];
        int by_time = log->cfg.retention_ms >= 0 &&
                      now_ms - sf_segment_largest_timestamp(seg) > log->cfg.retention_ms;
        int by_bytes = log->cfg.retention_bytes >= 0 &&
                       total - seg->size >= log->cfg.retention_bytes;
        if (!by_time && !by_bytes)
            break;
        total -= seg->size;
        ndead++;
    }
    if (ndead > 0) {
        dead = malloc(ndead * sizeof(*dead));
        if (!dead) {
            ndead = 0;
        } else {
            memcpy(dead, log->segs, ndead * sizeof(*dead));
            memmove(log->segs, log->segs + ndead, (log->nsegs - ndead) * sizeof(*dead));
            log->nsegs -= ndead;
            if (log->recovery_point < start_offset_locked(log))
                log->recovery_point = start_offset_locked(log);
            if (log->hw >= 0 && log->hw < start_offset_locked(log))
                log->hw = start_offset_locked(log);
            if (sf_epochs_truncate_from_start(&log->epochs, start_offset_locked(log)))
                sf_log_epochs_save_locked(log);
            sf_log_txns_start_moved_locked(log);
            sf_log(SF_LOG_INFO, "STORAGE",
                   "%s: retention deleted %zu segment(s); log start offset %" PRId64, log->path,
                   ndead, start_offset_locked(log));
        }
    }
    {
        sf_segment_t *seg = active_seg(log);
        if (seg->size > 0 && seg->roll_base_ms >= 0 && log->cfg.roll_ms >= 0 &&
            now_ms - seg->roll_base_ms > log->cfg.roll_ms)
            rc = sf_log_roll_locked(log, log->leo);
    }
    pthread_mutex_unlock(&log->mu);
    /* Unlink outside the lock; readers holding a slice keep the fd until they release. */
    for (i = 0; i < ndead; i++) {
        if (sf_segment_unlink(dead[i]) != SF_OK)
            rc = SF_ERR_IO;
        sf_segment_unref(dead[i]);
    }
    free(dead);
    return rc != SF_OK ? rc : (int)ndead;
}

/* ---- record deletion ---- */

int sf_log_delete_records(sf_log_t *log, int64_t offset, int64_t *low_watermark) {
    sf_segment_t **dead = NULL;
    size_t ndead = 0, i;
    int64_t start;
    int rc = SF_OK;

    pthread_mutex_lock(&log->mu);
    if (log->offline) {
        pthread_mutex_unlock(&log->mu);
        return SF_ERR_IO;
    }
    if (offset == -1)
        offset = hw_locked(log);
    /* As Kafka's maybeIncrementLogStartOffset: never past what consumers may see. */
    if (offset < 0 || offset > hw_locked(log)) {
        pthread_mutex_unlock(&log->mu);
        return SF_ERR_RANGE;
    }
    if (offset > start_offset_locked(log)) {
        /* Whole segments below the new start: segment i holds [base_i, base_i+1). The
         * active one stays, even when everything in it is below the start. */
        while (ndead + 1 < log->nsegs && log->segs[ndead + 1]->base_offset <= offset)
            ndead++;
        /* Allocate before changing anything, so a failure leaves the log as it was. */
        if (ndead > 0 && !(dead = malloc(ndead * sizeof(*dead)))) {
            pthread_mutex_unlock(&log->mu);
            return SF_ERR_NOMEM;
        }
        if (ndead > 0) {
            memcpy(dead, log->segs, ndead * sizeof(*dead));
            memmove(log->segs, log->segs + ndead, (log->nsegs - ndead) * sizeof(*dead));
            log->nsegs -= ndead;
        }
        log->start = offset;
        assert(start_offset_locked(log) == offset && offset <= log->leo);
        if (log->recovery_point < offset)
            log->recovery_point = offset;
        if (sf_epochs_truncate_from_start(&log->epochs, offset))
            sf_log_epochs_save_locked(log);
        sf_log_txns_start_moved_locked(log);
        sf_log(SF_LOG_INFO, "STORAGE",
               "%s: records deleted below offset %" PRId64 " (%zu segment(s) removed)", log->path,
               offset, ndead);
    }
    start = start_offset_locked(log);
    pthread_mutex_unlock(&log->mu);
    /* Unlink outside the lock, as retention does: held slices keep their fd. */
    for (i = 0; i < ndead; i++) {
        if (sf_segment_unlink(dead[i]) != SF_OK)
            rc = SF_ERR_IO;
        sf_segment_unref(dead[i]);
    }
    free(dead);
    if (low_watermark)
        *low_watermark = start;
    return rc;
}

void sf_log_set_config(sf_log_t *log, const sf_log_config_t *cfg) {
    pthread_mutex_lock(&log->mu);
    log->cfg = *cfg;
    pthread_mutex_unlock(&log->mu);
}

void sf_log_get_config(sf_log_t *log, sf_log_config_t *out) {
    pthread_mutex_lock(&log->mu);
    *out = log->cfg;
    pthread_mutex_unlock(&log->mu);
}

/* ---- deletion ---- */

int sf_log_delete(sf_log_t *log) {
    DIR *d;
    struct dirent *de;
    char file[4200];
    int rc = SF_OK;
    size_t i;

    log->producers_loaded = 0; /* no snapshot into the directory being removed */
    for (i = 0; i < log->nsegs; i++) {
        if (sf_segment_unlink(log->segs[i]) != SF_OK)
            rc = SF_ERR_IO;
        if (log->segs[i] == log->pinned) {
            sf_segment_fd_release(log->pinned);
            log->pinned = NULL;
        }
        sf_segment_unref(log->segs[i]);
    }
    log->nsegs = 0;
    d = opendir(log->path);
    if (d) {
        while ((de = readdir(d)) != NULL) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                continue;
            snprintf(file, sizeof(file), "%s/%s", log->path, de->d_name);
            if (unlink(file) < 0 && errno != ENOENT)
                rc = SF_ERR_IO;
        }
        closedir(d);
    }
    if (rmdir(log->path) < 0 && errno != ENOENT) {
        sf_log(SF_LOG_ERR, "STORAGE", "cannot remove %s: %s", log->path, strerror(errno));
        rc = SF_ERR_IO;
    } else {
        sf_log(SF_LOG_INFO, "STORAGE", "%s: deleted", log->path);
    }
    sf_log_close(log);
    return rc;
}

/* ---- accessors ---- */

uint64_t sf_log_key_hash(const char *topic, int32_t partition) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    const unsigned char *p;
    for (p = (const unsigned char *)topic; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    return (h ^ (uint32_t)partition) * 1099511628211ULL;
}

const char *sf_log_topic(const sf_log_t *log) {
    return log->topic;
}

int32_t sf_log_partition(const sf_log_t *log) {
    return log->partition;
}

const char *sf_log_path(const sf_log_t *log) {
    return log->path;
}

int sf_log_offline(sf_log_t *log) {
    int v;
    pthread_mutex_lock(&log->mu);
    v = log->offline;
    pthread_mutex_unlock(&log->mu);
    return v;
}
