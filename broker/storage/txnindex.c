/* The aborted-transaction index of a partition log (see txnindex.h). */
#include "txnindex.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "logging.h"

#define ENTRY_VERSION 0
#define READ_ENTRIES 256 /* entries read at a time when loading */

void sf_txnindex_init(sf_txnindex_t *ti) {
    memset(ti, 0, sizeof(*ti));
}

void sf_txnindex_free(sf_txnindex_t *ti) {
    free(ti->v);
    sf_txnindex_init(ti);
}

void sf_txnindex_clear(sf_txnindex_t *ti) {
    ti->n = 0;
}

static void file_path(char *buf, size_t size, const char *seg_path) {
    snprintf(buf, size, "%s" SF_TXNINDEX_EXT, seg_path);
}

static int reserve(sf_txnindex_t *ti) {
    sf_txnindex_entry_t *v;
    size_t cap;
    if (ti->n < ti->cap)
        return SF_OK;
    cap = ti->cap ? ti->cap * 2 : 16;
    if (!(v = realloc(ti->v, cap * sizeof(*v))))
        return SF_ERR_NOMEM;
    ti->v = v;
    ti->cap = cap;
    return SF_OK;
}

/* One entry in the file's layout. */
static void entry_encode(uint8_t *p, const sf_txnindex_entry_t *e) {
    sf_store_be16(p, ENTRY_VERSION);                        /* version */
    sf_store_be64(p + 2, (uint64_t)e->producer_id);         /* producerId */
    sf_store_be64(p + 10, (uint64_t)e->first_offset);       /* firstOffset */
    sf_store_be64(p + 18, (uint64_t)e->last_offset);        /* lastOffset */
    sf_store_be64(p + 26, (uint64_t)e->last_stable_offset); /* lastStableOffset */
}

/* Decode the entry at @p; 0 when it does not fit after @prev_last in [@base, @end). */
static int entry_decode(const uint8_t *p, int64_t prev_last, int64_t base, int64_t end,
                        sf_txnindex_entry_t *e) {
    if (sf_load_be16(p) != ENTRY_VERSION)
        return 0;
    e->producer_id = (int64_t)sf_load_be64(p + 2);
    e->first_offset = (int64_t)sf_load_be64(p + 10);
    e->last_offset = (int64_t)sf_load_be64(p + 18);
    e->last_stable_offset = (int64_t)sf_load_be64(p + 26);
    return e->last_offset > prev_last && e->last_offset >= base && e->last_offset < end &&
           e->first_offset <= e->last_offset && e->producer_id >= 0;
}

int sf_txnindex_load(sf_txnindex_t *ti, const char *seg_path, int64_t base, int64_t end) {
    uint8_t buf[READ_ENTRIES * SF_TXNINDEX_ENTRY_SIZE];
    char path[4200];
    int64_t pos = 0, prev = ti->n ? ti->v[ti->n - 1].last_offset : INT64_MIN;
    ssize_t got;
    int fd, done = 0, rc = SF_OK;
    file_path(path, sizeof(path), seg_path);
    if ((fd = open(path, O_RDWR | O_CLOEXEC)) < 0)
        return errno == ENOENT ? SF_OK : SF_ERR_IO;
    while (!done && rc == SF_OK && (got = pread(fd, buf, sizeof(buf), pos)) > 0) {
        size_t i, whole = (size_t)got / SF_TXNINDEX_ENTRY_SIZE;
        for (i = 0; i < whole && rc == SF_OK; i++) {
            sf_txnindex_entry_t e;
            if (!entry_decode(buf + i * SF_TXNINDEX_ENTRY_SIZE, prev, base, end, &e)) {
                done = 1;
                break;
            }
            if ((rc = reserve(ti)) == SF_OK) {
                ti->v[ti->n++] = e;
                prev = e.last_offset;
                pos += SF_TXNINDEX_ENTRY_SIZE;
            }
        }
        /* A short read of less than an entry is the torn tail. */
        done |= whole == 0;
    }
    if (rc == SF_OK) {
        off_t size = lseek(fd, 0, SEEK_END);
        if (size > pos) {
            /* A torn write, or entries past a crash's cut of the log: not part of it. */
            sf_log(SF_LOG_WARNING, "STORAGE", "%s: cut at byte %" PRId64 " of %" PRId64
                   " (a torn or stale tail)", path, pos, (int64_t)size);
            if (ftruncate(fd, (off_t)pos) < 0)
                rc = SF_ERR_IO;
        }
    }
    close(fd);
    return rc;
}

int sf_txnindex_add(sf_txnindex_t *ti, const char *seg_path, const sf_txnindex_entry_t *e) {
    uint8_t buf[SF_TXNINDEX_ENTRY_SIZE];
    char path[4200];
    int fd, ok;
    if (ti->n && ti->v[ti->n - 1].last_offset >= e->last_offset)
        return 0;
    if (reserve(ti) != SF_OK)
        return SF_ERR_NOMEM;
    ti->v[ti->n++] = *e;
    entry_encode(buf, e);
    file_path(path, sizeof(path), seg_path);
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    ok = fd >= 0 && write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf);
    if (fd >= 0)
        ok = close(fd) == 0 && ok;
    if (!ok) {
        sf_log(SF_LOG_ERR, "STORAGE", "%s: cannot add the aborted transaction of producer %"
               PRId64 " at offset %" PRId64 ": %s", path, e->producer_id, e->last_offset,
               strerror(errno));
        return SF_ERR_IO;
    }
    return 1;
}

size_t sf_txnindex_lower(const sf_txnindex_t *ti, int64_t offset) {
    size_t lo = 0, hi = ti->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ti->v[mid].last_offset < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int sf_txnindex_truncate(sf_txnindex_t *ti, const char *seg_path, int64_t base, int64_t offset) {
    char path[4200];
    size_t keep = sf_txnindex_lower(ti, offset), first = sf_txnindex_lower(ti, base);
    assert(offset >= base && keep >= first);
    ti->n = keep;
    file_path(path, sizeof(path), seg_path);
    if (truncate(path, (off_t)((keep - first) * SF_TXNINDEX_ENTRY_SIZE)) < 0 && errno != ENOENT) {
        sf_log(SF_LOG_ERR, "STORAGE", "cannot truncate %s: %s", path, strerror(errno));
        return SF_ERR_IO;
    }
    return SF_OK;
}

void sf_txnindex_drop_below(sf_txnindex_t *ti, int64_t offset) {
    size_t k = sf_txnindex_lower(ti, offset);
    if (k == 0)
        return;
    memmove(ti->v, ti->v + k, (ti->n - k) * sizeof(*ti->v));
    ti->n -= k;
}
