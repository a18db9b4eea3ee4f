/* The partition log's producer state (producers.h): checked by the leader's appends,
 * recorded by every append, expired after producer.id.expiration.ms. Transaction markers end
 * a producer's transaction here, and an abort is indexed (logtxn.c). It is written to
 * <offset>.snapshot files when a segment rolls and when the log closes, and loaded from the
 * newest readable one when the log opens or is truncated, the batches after it replayed from
 * their headers (all of the log when there is none). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "log.h"
#include "log_int.h"
#include "logging.h"

/* The largest control batch read back by a replay (a marker takes some 80 bytes). */
#define MARKER_MAX_BYTES 1024

/* The producer batch at @p, if it has a producer id (a cheap test first: most have none). A
 * control batch counts only as a marker that reads. */
static int batch_producer(const uint8_t *p, size_t size, sf_producer_append_t *out) {
    sf_recbatch_hdr_t hdr;
    size_t bsize;
    if ((int64_t)sf_load_be64(p + SF_RECBATCH_OFF_PRODUCER_ID) < 0)
        return 0;
    if (sf_recbatch_header_parse(p, size, &hdr, &bsize) != SF_OK)
        return 0;
    if (!sf_producer_append_from(&hdr, out))
        return 0;
    return !out->control || sf_producer_marker_parse(p, bsize, out) == SF_OK;
}

/* Record one appended (or replayed) batch @b of @seg; an abort marker that ends a
 * transaction indexes it. */
static int record_locked(sf_log_t *log, sf_segment_t *seg, const sf_producer_append_t *b) {
    int64_t txn_first = -1;
    int rc = b->control ? sf_producers_record_marker(&log->producers, b, &txn_first)
                        : sf_producers_record(&log->producers, b);
    /* Kafka indexes only transactions with data here: a marker alone changes no offset a
     * consumer reads. */
    if (rc == SF_OK && b->control && !b->commit && txn_first >= 0)
        sf_log_txn_aborted_locked(log, seg, b->producer_id, txn_first, b->first_offset);
    return rc;
}

int sf_log_producers_check_marker_locked(sf_log_t *log, const uint8_t *batch, size_t len) {
    sf_producer_append_t b;
    if (!batch_producer(batch, len, &b) || !b.control)
        return SF_ERR_INVALID;
    return sf_producers_check_marker(&log->producers, b.producer_id, b.epoch,
                                     b.coordinator_epoch);
}

int sf_log_producers_check_locked(sf_log_t *log, const uint8_t *batches,
                                  const sf_segment_batch_t *bv, size_t nb, uint64_t guard,
                                  sf_log_append_info_t *info) {
    sf_producer_append_t stackv[4], *seen = stackv;
    size_t pos = 0, i, j, nseen = 0;
    int rc = SF_OK;
    for (i = 0; i < nb && rc == SF_OK; pos += bv[i].size, i++) {
        sf_producer_append_t b;
        const sf_producer_append_t *prev = NULL;
        sf_producer_batch_t dup;
        if (!batch_producer(batches + pos, bv[i].size, &b))
            continue;
        for (j = nseen; j-- > 0 && !prev;)
            if (seen[j].producer_id == b.producer_id)
                prev = &seen[j];
        rc = sf_producers_check(&log->producers, &b, prev, guard, &dup);
        if (rc == SF_ERR_DUPLICATE && info) {
            /* Answered as the first append was (Kafka returns the original offsets). */
            info->FirstOffset = dup.first_offset;
            info->LastOffset = dup.last_offset;
            info->LogAppendTime = -1;
            info->LogStartOffset = start_offset_locked(log);
            info->RecordCount = 0;
        }
        if (rc != SF_OK)
            break;
        if (nseen == sizeof(stackv) / sizeof(stackv[0]) && seen == stackv) {
            /* Many producers in one append: rare (clients send one batch per partition). */
            if (!(seen = malloc(nb * sizeof(*seen))))
                return SF_ERR_NOMEM;
            memcpy(seen, stackv, sizeof(stackv));
        }
        seen[nseen++] = b;
    }
    if (seen != stackv)
        free(seen);
    return rc;
}

void sf_log_producers_record_locked(sf_log_t *log, const uint8_t *batches,
                                    const sf_segment_batch_t *bv, size_t nb) {
    size_t pos = 0, i;
    for (i = 0; i < nb; pos += bv[i].size, i++) {
        sf_producer_append_t b;
        if (batch_producer(batches + pos, bv[i].size, &b) &&
            record_locked(log, active_seg(log), &b) != SF_OK)
            sf_log(SF_LOG_WARNING, "STORAGE", "%s: no memory to record producer %" PRId64
                   "; its retries will not be recognised", log->path, b.producer_id);
    }
}

int sf_log_txn_verify_begin(sf_log_t *log, int64_t producer_id, int16_t epoch, int64_t now_ms,
                            uint64_t *guard) {
    int rc;
    pthread_mutex_lock(&log->mu);
    rc = sf_producers_verify_begin(&log->producers, producer_id, epoch, ++log->verify_guards,
                                   now_ms, guard);
    pthread_mutex_unlock(&log->mu);
    return rc;
}

/* ---- snapshots: <offset>.snapshot, the table as it was with the batches below offset ---- */

#define SNAPSHOT_EXT ".snapshot"
#define SNAPSHOTS_KEPT 2 /* the newest ones; older ones only help a deep truncation */
/* The largest snapshot written or read (some six million producers): a larger table is not
 * written, and the log is replayed from an older snapshot instead. */
#define SNAPSHOT_MAX_BYTES ((size_t)1 << 30)

static void snapshot_path(char *buf, size_t size, const sf_log_t *log, int64_t offset) {
    snprintf(buf, size, "%s/%020" PRId64 SNAPSHOT_EXT, log->path, offset);
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The offsets of the snapshot files, ascending (malloc'd into *@v). */
static int list_snapshots(const sf_log_t *log, int64_t **v, size_t *n) {
    DIR *d = opendir(log->path);
    struct dirent *de;
    size_t cap = 0;
    int64_t off;
    *v = NULL;
    *n = 0;
    if (!d)
        return SF_ERR_IO;
    while ((de = readdir(d)) != NULL) {
        if (!sf_log_parse_file_name(de->d_name, SNAPSHOT_EXT, &off))
            continue;
        if (*n == cap) {
            int64_t *p = realloc(*v, (cap = cap ? cap * 2 : 8) * sizeof(*p));
            if (!p) {
                closedir(d);
                return SF_ERR_NOMEM;
            }
            *v = p;
        }
        (*v)[(*n)++] = off;
    }
    closedir(d);
    if (*n > 1)
        qsort(*v, *n, sizeof(**v), cmp_i64);
    return SF_OK;
}

static void snapshot_remove(const sf_log_t *log, int64_t offset) {
    char path[4200];
    snapshot_path(path, sizeof(path), log, offset);
    if (unlink(path) < 0 && errno != ENOENT)
        sf_log(SF_LOG_WARNING, "STORAGE", "cannot remove %s: %s", path, strerror(errno));
}

/* Remove the snapshots above @max, and all but the newest @keep of the others. */
static void snapshots_prune(const sf_log_t *log, int64_t max, size_t keep) {
    int64_t *v;
    size_t n, i, kept = 0;
    if (list_snapshots(log, &v, &n) != SF_OK)
        return;
    for (i = n; i-- > 0;)
        if (v[i] > max || kept++ >= keep)
            snapshot_remove(log, v[i]);
    free(v);
}

void sf_log_producers_snapshot_locked(sf_log_t *log, int64_t offset) {
    char path[4200], tmp[4300];
    sf_wbuf_t wb;
    int fd, ok = 0;
    sf_wbuf_init(&wb);
    snapshot_path(path, sizeof(path), log, offset);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path); /* a leftover is removed at open */
    if (sf_producers_encode(&log->producers, &wb) == SF_OK && wb.len <= SNAPSHOT_MAX_BYTES &&
        (fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) >= 0) {
        ok = write(fd, wb.p, wb.len) == (ssize_t)wb.len;
        ok = close(fd) == 0 && ok && rename(tmp, path) == 0;
        if (!ok)
            (void)unlink(tmp);
    }
    sf_wbuf_free(&wb);
    if (!ok) {
        sf_log(SF_LOG_WARNING, "STORAGE", "%s: cannot write the producer snapshot %s: %s",
               log->path, path, strerror(errno));
        return;
    }
    snapshots_prune(log, offset, SNAPSHOTS_KEPT);
}

/* Load snapshot @offset into the table. */
static int snapshot_load(sf_log_t *log, int64_t offset) {
    char path[4200];
    uint8_t *buf = NULL;
    struct stat st;
    int fd, rc = SF_ERR_IO;
    snapshot_path(path, sizeof(path), log, offset);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return SF_ERR_IO;
    if (fstat(fd, &st) == 0 && (size_t)st.st_size <= SNAPSHOT_MAX_BYTES &&
        (buf = malloc((size_t)st.st_size + 1)) &&
        read(fd, buf, (size_t)st.st_size) == (ssize_t)st.st_size)
        rc = sf_producers_decode(&log->producers, buf, (size_t)st.st_size);
    close(fd);
    free(buf);
    if (rc != SF_OK && rc != SF_ERR_NOMEM)
        sf_log(SF_LOG_WARNING, "STORAGE", "%s: producer snapshot %s unreadable (%s); removed",
               log->path, path, sf_err_str(rc));
    return rc;
}

/* The marker of the control batch at @pos of @seg (header @hdr, @bsize bytes) into @b.
 * @return 1 when it reads as one. */
static int replay_marker(const sf_segment_t *seg, int64_t pos, size_t bsize,
                         sf_producer_append_t *b) {
    uint8_t buf[MARKER_MAX_BYTES];
    return bsize <= sizeof(buf) && sf_segment_read(seg, pos, buf, bsize) == SF_OK &&
           sf_producer_marker_parse(buf, bsize, b) == SF_OK;
}

/* Record every producer batch from @offset (a batch boundary, or below the log) on. */
static int replay_from_locked(sf_log_t *log, int64_t offset) {
    size_t i;
    int rc = SF_OK;
    for (i = seg_find(log, offset); i < log->nsegs && rc == SF_OK; i++) {
        sf_segment_t *seg = log->segs[i];
        int pinned = seg == log->pinned;
        int64_t pos = 0, found;
        sf_recbatch_hdr_t hdr;
        size_t bsize;
        if (!pinned && sf_segment_fd_acquire(seg) != SF_OK)
            return SF_ERR_IO;
        while (rc == SF_OK && pos < seg->size) {
            sf_producer_append_t b;
            if (sf_segment_scan(seg, pos, seg->size, offset, &found, &hdr, &bsize) != SF_OK)
                break; /* the end, or damage the load dealt with: use what reads */
            if (sf_producer_append_from(&hdr, &b) &&
                (!b.control || replay_marker(seg, found, bsize, &b)))
                rc = record_locked(log, seg, &b);
            pos = found + (int64_t)bsize;
        }
        if (!pinned)
            sf_segment_fd_release(seg);
    }
    return rc;
}

int sf_log_producers_load_locked(sf_log_t *log) {
    int64_t *v, from = 0;
    size_t n, i;
    int found = 0, rc = list_snapshots(log, &v, &n);
    if (rc != SF_OK)
        return rc;
    sf_producers_clear(&log->producers);
    for (i = n; i-- > 0;) {
        if (v[i] > log->leo) {
            snapshot_remove(log, v[i]); /* the log lost what it covered (a crash) */
            continue;
        }
        if ((rc = snapshot_load(log, v[i])) == SF_OK) {
            from = v[i];
            found = 1;
            break;
        }
        if (rc == SF_ERR_NOMEM)
            break;
        snapshot_remove(log, v[i]);
    }
    free(v);
    if (rc == SF_ERR_NOMEM || (rc = replay_from_locked(log, from)) != SF_OK)
        return rc;
    /* The whole log was replayed (no snapshot yet, or none readable): keep the result, so
     * that the next open or truncation starts from here. */
    if (!found && log->leo > start_offset_locked(log))
        sf_log_producers_snapshot_locked(log, log->leo);
    return SF_OK;
}

void sf_log_producers_truncated_locked(sf_log_t *log, int64_t end, int fully) {
    snapshots_prune(log, fully ? -1 : end, SIZE_MAX);
    if (fully) {
        sf_producers_clear(&log->producers);
    } else if (sf_producers_reach(&log->producers, end) && sf_log_producers_load_locked(log)) {
        /* Incomplete: no snapshot is written from it (the next open replays the log). */
        log->producers_loaded = 0;
        sf_log(SF_LOG_WARNING, "STORAGE", "%s: could not rebuild the producer state after the "
               "truncation; retries of its producers may not be recognised", log->path);
    }
}

size_t sf_log_expire_producers(sf_log_t *log, int64_t now_ms, int64_t expiration_ms) {
    size_t n;
    pthread_mutex_lock(&log->mu);
    n = sf_producers_expire(&log->producers, now_ms, expiration_ms);
    pthread_mutex_unlock(&log->mu);
    return n;
}

int sf_log_producer(sf_log_t *log, int64_t producer_id, sf_producer_t *out) {
    const sf_producer_t *p;
    pthread_mutex_lock(&log->mu);
    p = sf_producers_find(&log->producers, producer_id);
    if (p)
        *out = *p;
    pthread_mutex_unlock(&log->mu);
    return p ? SF_OK : SF_ERR_NOTFOUND;
}

int sf_log_producers_list(sf_log_t *log, sf_producer_t **out, size_t *n) {
    size_t i, k = 0;
    int rc = SF_OK;
    pthread_mutex_lock(&log->mu);
    *out = malloc((log->producers.n ? log->producers.n : 1) * sizeof(**out));
    for (i = 0; *out && i < log->producers.cap; i++)
        if (log->producers.slots[i].id != -1)
            (*out)[k++] = log->producers.slots[i];
    if (!*out)
        rc = SF_ERR_NOMEM;
    pthread_mutex_unlock(&log->mu);
    *n = k;
    return rc;
}
