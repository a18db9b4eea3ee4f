/* Log segments: the .log file of batches and its two sparse indexes (see segment.h). */
#include "segment.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "logging.h"

#define SCAN_CHUNK (1 << 20) /* recovery / rebuild read size */
#define HDR_CHUNK 8192       /* header scan read size on the read path */
/* statfs f_type of the file systems that keep file data in memory (no block reservations). */
#define TMPFS_MAGIC_NUMBER 0x01021994
#define RAMFS_MAGIC_NUMBER 0x858458f6

/* ---- index arrays ---- */

static void idx_init(sf_segment_index_t *ix, size_t entry_size, const char *ext) {
    memset(ix, 0, sizeof(*ix));
    ix->entry_size = entry_size;
    ix->ext = ext;
}

static void idx_release(sf_segment_index_t *ix) {
    if (ix->mapped)
        munmap(ix->data, ix->n * ix->entry_size);
    else
        free(ix->data);
    ix->data = NULL;
    ix->n = ix->cap = ix->written = 0;
    ix->mapped = 0;
    ix->loaded = 0;
}

/* An empty heap index (the file is rewritten from scratch on the next write). */
static void idx_reset_heap(sf_segment_index_t *ix) {
    idx_release(ix);
    ix->loaded = 1;
}

static int idx_push(sf_segment_index_t *ix, const uint8_t *entry) {
    assert(ix->loaded && !ix->mapped);
    if (ix->n == ix->cap) {
        size_t cap = ix->cap ? ix->cap * 2 : 64;
        uint8_t *p = realloc(ix->data, cap * ix->entry_size);
        if (!p)
            return SF_ERR_NOMEM;
        ix->data = p;
        ix->cap = cap;
    }
    memcpy(ix->data + ix->n * ix->entry_size, entry, ix->entry_size);
    ix->n++;
    return SF_OK;
}

static uint32_t oidx_rel(const sf_segment_index_t *ix, size_t i) {
    return sf_load_be32(ix->data + i * SF_SEGMENT_OFFSET_ENTRY_SIZE);
}

static uint32_t oidx_pos(const sf_segment_index_t *ix, size_t i) {
    return sf_load_be32(ix->data + i * SF_SEGMENT_OFFSET_ENTRY_SIZE + 4);
}

static int64_t tidx_ts(const sf_segment_index_t *ix, size_t i) {
    return (int64_t)sf_load_be64(ix->data + i * SF_SEGMENT_TIME_ENTRY_SIZE);
}

static uint32_t tidx_rel(const sf_segment_index_t *ix, size_t i) {
    return sf_load_be32(ix->data + i * SF_SEGMENT_TIME_ENTRY_SIZE + 8);
}

/* ---- paths and files ---- */

void sf_segment_path(char *buf, size_t size, const char *dir, int64_t base_offset) {
    snprintf(buf, size, "%s/%020" PRId64, dir, base_offset);
}

static void ext_path(char *buf, size_t size, const sf_segment_t *seg, const char *ext) {
    snprintf(buf, size, "%s%s", seg->path, ext);
}

static int pwrite_all(int fd, const uint8_t *p, size_t len, int64_t at) {
    while (len > 0) {
        ssize_t w = pwrite(fd, p, len, (off_t)at);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return SF_ERR_IO;
        }
        if (w == 0) {
            errno = ENOSPC;
            return SF_ERR_IO;
        }
        p += w;
        len -= (size_t)w;
        at += w;
    }
    return SF_OK;
}

/* Read exactly @len bytes at @at; a short file is SF_ERR_CORRUPT. */
static int pread_all(int fd, uint8_t *p, size_t len, int64_t at) {
    while (len > 0) {
        ssize_t r = pread(fd, p, len, (off_t)at);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return SF_ERR_IO;
        }
        if (r == 0)
            return SF_ERR_CORRUPT;
        p += r;
        len -= (size_t)r;
        at += r;
    }
    return SF_OK;
}

/* ---- the descriptor cache ---- */

#define FD_CACHE_MIN 16

/* Every open .log descriptor is counted in @open; those not pinned are also in the LRU list
 * (most recently released at the head) and may be closed to stay under @limit. Lock order: a
 * log's mutex, then this one (never the other way round). */
static struct {
    pthread_mutex_t mu;
    sf_segment_t *head, *tail;
    size_t open;
    size_t limit; /* 0 until first used or set */
    uint64_t opens, evictions;
} fdc = {PTHREAD_MUTEX_INITIALIZER, NULL, NULL, 0, 0, 0, 0};

static size_t fd_cache_default(void) {
    struct rlimit rl;
    rlim_t n = 1048576;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        n = rl.rlim_cur;
    /* Half for segments; the rest for connections, index files and the rest of the broker. */
    return n / 2 > FD_CACHE_MIN ? (size_t)(n / 2) : FD_CACHE_MIN;
}

static size_t fd_limit_locked(void) {
    if (fdc.limit == 0)
        fdc.limit = fd_cache_default();
    return fdc.limit;
}

static void lru_unlink_locked(sf_segment_t *seg) {
    if (seg->lru_prev)
        seg->lru_prev->lru_next = seg->lru_next;
    else
        fdc.head = seg->lru_next;
    if (seg->lru_next)
        seg->lru_next->lru_prev = seg->lru_prev;
    else
        fdc.tail = seg->lru_prev;
    seg->lru_prev = seg->lru_next = NULL;
}

static void lru_push_locked(sf_segment_t *seg) {
    seg->lru_prev = NULL;
    seg->lru_next = fdc.head;
    if (fdc.head)
        fdc.head->lru_prev = seg;
    else
        fdc.tail = seg;
    fdc.head = seg;
}

/* Close the least recently used unpinned descriptor. @return 0 if there was none. */
static int evict_one_locked(void) {
    sf_segment_t *seg = fdc.tail;
    if (!seg)
        return 0;
    assert(seg->fd_pins == 0 && seg->fd >= 0);
    lru_unlink_locked(seg);
    close(seg->fd);
    seg->fd = -1;
    fdc.open--;
    fdc.evictions++;
    return 1;
}

static void evict_locked(void) {
    size_t limit = fd_limit_locked();
    while (fdc.open > limit && evict_one_locked())
        ;
}

/* Open the .log of @seg (cache mutex held). At the process's descriptor limit, cached
 * descriptors are given back until the open succeeds. */
static int fd_open_locked(sf_segment_t *seg, int flags, mode_t mode) {
    char path[4200];
    snprintf(path, sizeof(path), "%s.log", seg->path);
    for (;;) {
        seg->fd = open(path, flags | O_CLOEXEC, mode);
        if (seg->fd >= 0)
            break;
        if ((errno != EMFILE && errno != ENFILE) || !evict_one_locked())
            return SF_ERR_IO;
    }
    fdc.open++;
    fdc.opens++;
    return SF_OK;
}

/* @quiet: a missing file is expected (errno ENOENT, not logged). */
static int fd_acquire(sf_segment_t *seg, int quiet) {
    int rc = SF_OK;
    pthread_mutex_lock(&fdc.mu);
    if (seg->fd >= 0) {
        if (seg->fd_pins == 0)
            lru_unlink_locked(seg);
    } else if ((rc = fd_open_locked(seg, O_RDWR, 0)) != SF_OK) {
        int e = errno;
        /* Logged once per segment: readers retry, and each would log again. */
        if (!seg->fd_open_failed && !(quiet && e == ENOENT))
            sf_log(SF_LOG_ERR, "STORAGE", "cannot open %s.log: %s", seg->path, strerror(e));
        seg->fd_open_failed |= !(quiet && e == ENOENT);
        pthread_mutex_unlock(&fdc.mu);
        errno = e;
        return rc;
    }
    seg->fd_pins++;
    evict_locked();
    pthread_mutex_unlock(&fdc.mu);
    return rc;
}

int sf_segment_fd_acquire(sf_segment_t *seg) {
    return fd_acquire(seg, 0);
}

void sf_segment_fd_release(sf_segment_t *seg) {
    pthread_mutex_lock(&fdc.mu);
    assert(seg->fd_pins > 0 && seg->fd >= 0);
    if (--seg->fd_pins == 0) {
        lru_push_locked(seg);
        evict_locked();
    }
    pthread_mutex_unlock(&fdc.mu);
}

void sf_segment_fd_cache_set_limit(size_t limit) {
    pthread_mutex_lock(&fdc.mu);
    fdc.limit = limit ? limit : fd_cache_default();
    evict_locked();
    pthread_mutex_unlock(&fdc.mu);
}

size_t sf_segment_fd_cache_limit(void) {
    size_t n;
    pthread_mutex_lock(&fdc.mu);
    n = fd_limit_locked();
    pthread_mutex_unlock(&fdc.mu);
    return n;
}

void sf_segment_fd_cache_stats(size_t *open_now, uint64_t *opens, uint64_t *evictions) {
    pthread_mutex_lock(&fdc.mu);
    if (open_now)
        *open_now = fdc.open;
    if (opens)
        *opens = fdc.opens;
    if (evictions)
        *evictions = fdc.evictions;
    pthread_mutex_unlock(&fdc.mu);
}

/* ---- segment objects ---- */

static sf_segment_t *seg_alloc(const char *dir, int64_t base_offset) {
    char path[4096];
    sf_segment_t *seg = calloc(1, sizeof(*seg));
    if (!seg)
        return NULL;
    sf_segment_path(path, sizeof(path), dir, base_offset);
    seg->path = strdup(path);
    if (!seg->path) {
        free(seg);
        return NULL;
    }
    atomic_init(&seg->refcnt, 1);
    seg->fd = -1;
    seg->base_offset = base_offset;
    seg->next_offset = base_offset;
    seg->max_timestamp = -1;
    seg->offset_of_max_timestamp = -1;
    seg->roll_base_ms = -1;
    seg->mtime_ms = -1;
    seg->damaged_at = -1;
    idx_init(&seg->oidx, SF_SEGMENT_OFFSET_ENTRY_SIZE, ".index");
    idx_init(&seg->tidx, SF_SEGMENT_TIME_ENTRY_SIZE, ".timeindex");
    return seg;
}

/* Open the .log of a new segment object and pin it. */
static int seg_open_pinned(sf_segment_t *seg, int flags, mode_t mode) {
    int rc;
    pthread_mutex_lock(&fdc.mu);
    rc = fd_open_locked(seg, flags, mode);
    if (rc == SF_OK) {
        seg->fd_pins = 1;
        evict_locked();
    }
    pthread_mutex_unlock(&fdc.mu);
    return rc;
}

static void seg_free(sf_segment_t *seg) {
    pthread_mutex_lock(&fdc.mu);
    /* A pin is always held together with a reference. */
    assert(seg->fd_pins == 0);
    if (seg->fd >= 0) {
        lru_unlink_locked(seg);
        close(seg->fd);
        fdc.open--;
    }
    pthread_mutex_unlock(&fdc.mu);
    idx_release(&seg->oidx);
    idx_release(&seg->tidx);
    free(seg->path);
    free(seg);
}

/* Free a segment that failed while being set up: drop its pin first. */
static void seg_discard(sf_segment_t *seg) {
    if (seg->fd_pins > 0)
        sf_segment_fd_release(seg);
    seg_free(seg);
}

void sf_segment_ref(sf_segment_t *seg) {
    atomic_fetch_add_explicit(&seg->refcnt, 1, memory_order_relaxed);
}

void sf_segment_unref(sf_segment_t *seg) {
    if (!seg)
        return;
    if (atomic_fetch_sub_explicit(&seg->refcnt, 1, memory_order_acq_rel) == 1)
        seg_free(seg);
}

int sf_segment_create(const char *dir, int64_t base_offset, sf_segment_t **segp) {
    char path[4200];
    sf_segment_t *seg;
    int fd, i;
    static const char *const exts[] = {".index", ".timeindex"};

    *segp = NULL;
    seg = seg_alloc(dir, base_offset);
    if (!seg)
        return SF_ERR_NOMEM;
    ext_path(path, sizeof(path), seg, ".log");
    if (seg_open_pinned(seg, O_RDWR | O_CREAT | O_TRUNC, 0644) != SF_OK) {
        sf_log(SF_LOG_ERR, "STORAGE", "cannot create %s: %s", path, strerror(errno));
        goto err;
    }
    /* Empty index files, so a crash right now leaves a consistent segment. */
    for (i = 0; i < 2; i++) {
        ext_path(path, sizeof(path), seg, exts[i]);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) {
            sf_log(SF_LOG_ERR, "STORAGE", "cannot create %s: %s", path, strerror(errno));
            goto err;
        }
        close(fd);
    }
    /* A transaction index of an earlier segment of that name belongs to none now (it is
     * created by the first abort marker the segment takes: txnindex.h). */
    ext_path(path, sizeof(path), seg, ".txnindex");
    (void)unlink(path);
    seg->oidx.loaded = seg->tidx.loaded = 1;
    *segp = seg;
    return SF_OK;

err:
    seg_discard(seg);
    return SF_ERR_IO;
}

int sf_segment_open(const char *dir, int64_t base_offset, sf_segment_t **segp) {
    char path[4200];
    struct stat st;
    sf_segment_t *seg;

    *segp = NULL;
    seg = seg_alloc(dir, base_offset);
    if (!seg)
        return SF_ERR_NOMEM;
    ext_path(path, sizeof(path), seg, ".log");
    if (seg_open_pinned(seg, O_RDWR, 0) != SF_OK || fstat(seg->fd, &st) < 0) {
        sf_log(SF_LOG_ERR, "STORAGE", "cannot open %s: %s", path, strerror(errno));
        seg_discard(seg);
        return SF_ERR_IO;
    }
    seg->size = st.st_size;
    seg->mtime_ms = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
    if (seg->size > SF_SEGMENT_MAX_BYTES) {
        /* Positions past 2 GiB cannot be indexed; the tail is cut by recovery or load. */
        sf_log(SF_LOG_WARNING, "STORAGE", "%s is larger than %d bytes; ignoring the rest", path,
               SF_SEGMENT_MAX_BYTES);
        seg->size = SF_SEGMENT_MAX_BYTES;
    }
    seg->synced_size = seg->size;
    *segp = seg;
    return SF_OK;
}

/* ---- index maintenance ---- */

/* Account for one appended batch at @pos: the largest timestamp, and an index entry when
 * index_interval bytes were appended since the last one (as Kafka's LogSegment.append). */
static void index_batch(sf_segment_t *seg, int64_t pos, const sf_segment_batch_t *b,
                        int32_t index_interval) {
    uint8_t e[SF_SEGMENT_TIME_ENTRY_SIZE];
    if (b->max_timestamp > seg->max_timestamp) {
        seg->max_timestamp = b->max_timestamp;
        seg->offset_of_max_timestamp = b->last_offset;
    }
    if (seg->bytes_since_index >= index_interval) {
        sf_store_be32(e, (uint32_t)(b->base_offset - seg->base_offset));
        sf_store_be32(e + 4, (uint32_t)pos);
        /* A missing entry only makes lookups scan a little further: not an error. */
        (void)idx_push(&seg->oidx, e);
        if (seg->max_timestamp >= 0 &&
            (seg->tidx.n == 0 || seg->max_timestamp > tidx_ts(&seg->tidx, seg->tidx.n - 1))) {
            sf_store_be64(e, (uint64_t)seg->max_timestamp);
            sf_store_be32(e + 8, (uint32_t)(seg->offset_of_max_timestamp - seg->base_offset));
            (void)idx_push(&seg->tidx, e);
        }
        seg->bytes_since_index = 0;
    }
    seg->bytes_since_index += (int64_t)b->size;
    seg->next_offset = b->last_offset + 1;
}

/* Write the entries of @ix not yet in its file. The file always holds exactly ix->written
 * entries; written == 0 rewrites it from scratch. @rewrite: start from scratch and write the
 * file even when it gets no entries (after a rebuild). */
static int idx_write(sf_segment_t *seg, sf_segment_index_t *ix, int rewrite) {
    char path[4200];
    int fd, rc;
    if (rewrite)
        ix->written = 0;
    if (!ix->loaded || ix->mapped || (ix->written >= ix->n && !rewrite))
        return SF_OK;
    ext_path(path, sizeof(path), seg, ix->ext);
    fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (ix->written == 0 ? O_TRUNC : 0), 0644);
    if (fd < 0) {
        sf_log(SF_LOG_ERR, "STORAGE", "cannot write %s: %s", path, strerror(errno));
        return SF_ERR_IO;
    }
    rc = ix->n == ix->written ? SF_OK
                              : pwrite_all(fd, ix->data + ix->written * ix->entry_size,
                                           (ix->n - ix->written) * ix->entry_size,
                                           (int64_t)(ix->written * ix->entry_size));
    if (rc == SF_OK && ix->written == 0 && ftruncate(fd, (off_t)(ix->n * ix->entry_size)) < 0)
        rc = SF_ERR_IO;
    if (rc != SF_OK)
        sf_log(SF_LOG_ERR, "STORAGE", "cannot write %s: %s", path, strerror(errno));
    close(fd);
    if (rc == SF_OK) {
        ix->written = ix->n;
        seg->index_unsynced = 1;
    }
    return rc;
}

int sf_segment_write_indexes(sf_segment_t *seg) {
    int rc = idx_write(seg, &seg->oidx, 0);
    int rc2 = idx_write(seg, &seg->tidx, 0);
    return rc != SF_OK ? rc : rc2;
}

/* ---- scanning the .log (recovery, rebuild, load) ---- */

typedef struct scan_ctx {
    sf_segment_t *seg;
    uint8_t *buf;
    size_t cap;
    int64_t wpos; /* file position of buf[0] */
    size_t wlen;  /* valid bytes in buf */
} scan_ctx_t;

/* Point at @need bytes at file position @pos (the caller checked they are below seg->size).
 * Returns NULL and sets *rc on failure. */
static const uint8_t *scan_get(scan_ctx_t *sc, int64_t pos, size_t need, int *rc) {
    size_t want;
    if (pos >= sc->wpos && pos + (int64_t)need <= sc->wpos + (int64_t)sc->wlen)
        return sc->buf + (pos - sc->wpos);
    if (need > sc->cap) {
        uint8_t *p = realloc(sc->buf, need);
        if (!p) {
            *rc = SF_ERR_NOMEM;
            return NULL;
        }
        sc->buf = p;
        sc->cap = need;
    }
    want = sc->cap;
    if ((int64_t)want > sc->seg->size - pos)
        want = (size_t)(sc->seg->size - pos);
    if (want < need)
        want = need;
    *rc = pread_all(sc->seg->fd, sc->buf, want, pos);
    if (*rc != SF_OK) {
        sc->wlen = 0;
        return NULL;
    }
    sc->wpos = pos;
    sc->wlen = want;
    return sc->buf;
}

/* Walk batches from @pos (a batch boundary whose state the caller set up: next_offset,
 * max_timestamp, bytes_since_index) to seg->size, adding index entries as appends would.
 * @full re-validates every batch (CRC and records). Stops at the first batch that is torn,
 * invalid or out of order; *@valid_end receives where it stopped. Returns SF_OK (whether or
 * not it stopped early) or an I/O / memory error. @skip_first_index: the batch at @pos
 * already has its index entry. */
static int scan_batches(sf_segment_t *seg, int64_t pos, int full, int64_t min_offset,
                        int32_t index_interval, int skip_first_index, int64_t *valid_end) {
    scan_ctx_t sc;
    int rc = SF_OK;
    int first = 1;

    memset(&sc, 0, sizeof(sc));
    sc.seg = seg;
    sc.cap = SCAN_CHUNK;
    sc.buf = malloc(sc.cap);
    if (!sc.buf)
        return SF_ERR_NOMEM;
    if (min_offset < seg->base_offset)
        min_offset = seg->base_offset;

    while (pos < seg->size) {
        sf_recbatch_hdr_t hdr;
        sf_segment_batch_t b;
        size_t bsize;
        const uint8_t *p;
        int64_t expect = seg->next_offset > min_offset ? seg->next_offset : min_offset;

        if (seg->size - pos < SF_RECBATCH_HEADER_SIZE)
            break; /* torn header */
        p = scan_get(&sc, pos, SF_RECBATCH_HEADER_SIZE, &rc);
        if (!p)
            break;
        if (sf_recbatch_header_parse(p, SF_RECBATCH_HEADER_SIZE, &hdr, &bsize) == SF_ERR_MALFORMED)
            break;
        if (hdr.Magic != 2 || (int64_t)bsize > seg->size - pos)
            break; /* garbage or a torn batch */
        /* Offsets in order and indexable; BaseOffset comes from the file, so compare
         * without adding to it (expect >= base_offset >= 0: the subtraction cannot wrap). */
        if (hdr.BaseOffset < expect || hdr.LastOffsetDelta < 0 ||
            hdr.BaseOffset - seg->base_offset > (int64_t)INT32_MAX - hdr.LastOffsetDelta ||
            hdr.BaseOffset > INT64_MAX - 1 - hdr.LastOffsetDelta)
            break;
        if (full) {
            p = scan_get(&sc, pos, bsize, &rc);
            if (!p)
                break;
            if (sf_recbatch_validate(p, bsize, &hdr) != SF_OK)
                break;
        }
        b.base_offset = hdr.BaseOffset;
        b.last_offset = hdr.BaseOffset + hdr.LastOffsetDelta;
        b.max_timestamp = hdr.MaxTimestamp;
        b.size = bsize;
        if (first && skip_first_index) {
            /* The entry for this batch exists; only account its bytes. */
            if (b.max_timestamp > seg->max_timestamp) {
                seg->max_timestamp = b.max_timestamp;
                seg->offset_of_max_timestamp = b.last_offset;
            }
            seg->bytes_since_index = (int64_t)bsize;
            seg->next_offset = b.last_offset + 1;
        } else {
            index_batch(seg, pos, &b, index_interval);
        }
        first = 0;
        pos += (int64_t)bsize;
    }
    free(sc.buf);
    *valid_end = pos;
    return rc;
}

/* Whether a whole, valid batch (CRC and all) starts anywhere after @pos: then the bytes at
 * @pos are damage in the middle of the log rather than a torn or unwritten tail. Byte by byte,
 * but a candidate needs magic 2 and a length that fits before its CRC is computed; runs only
 * when damage was found. */
static int valid_batch_after(sf_segment_t *seg, int64_t pos, int64_t file_size) {
    scan_ctx_t sc;
    int rc = SF_OK, found = 0;
    int64_t p;
    int64_t saved = seg->size;

    memset(&sc, 0, sizeof(sc));
    sc.seg = seg;
    sc.cap = SCAN_CHUNK;
    if (!(sc.buf = malloc(sc.cap)))
        return 1; /* cannot tell: assume the worst (keep the data) */
    seg->size = file_size; /* scan_get reads below seg->size */
    for (p = pos + 1; !found && p + SF_RECBATCH_HEADER_SIZE <= file_size; p++) {
        sf_recbatch_hdr_t hdr;
        size_t bsize;
        const uint8_t *h = scan_get(&sc, p, SF_RECBATCH_HEADER_SIZE, &rc);
        if (!h)
            break;
        if (h[SF_RECBATCH_OFF_MAGIC] != 2 ||
            sf_recbatch_header_parse(h, SF_RECBATCH_HEADER_SIZE, &hdr, &bsize) ==
                SF_ERR_MALFORMED ||
            (int64_t)bsize > file_size - p || hdr.BaseOffset < seg->base_offset)
            continue;
        h = scan_get(&sc, p, bsize, &rc);
        if (!h)
            break;
        found = sf_recbatch_validate(h, bsize, &hdr) == SF_OK;
    }
    seg->size = saved;
    free(sc.buf);
    return found || rc != SF_OK;
}

/* Hide everything from @valid_end (nothing there is served) and remember why: the log decides
 * whether to cut it (the tail) or to take the partition offline (damage mid-log). */
static void record_damage(sf_segment_t *seg, int64_t valid_end, const char *why) {
    seg->damaged_at = valid_end;
    seg->file_size = seg->size;
    seg->damage_why = why;
    seg->damage_after = valid_batch_after(seg, valid_end, seg->size);
    seg->size = valid_end;
    if (seg->synced_size > valid_end)
        seg->synced_size = valid_end;
}

int sf_segment_truncate(sf_segment_t *seg) {
    assert(seg->damaged_at >= 0 && seg->damaged_at == seg->size);
    sf_log(SF_LOG_WARNING, "STORAGE",
           "%s.log: %s at position %" PRId64 "; truncating %" PRId64 " bytes", seg->path,
           seg->damage_why, seg->damaged_at, seg->file_size - seg->damaged_at);
    if (ftruncate(seg->fd, (off_t)seg->damaged_at) < 0) {
        sf_log(SF_LOG_ERR, "STORAGE", "cannot truncate %s.log: %s", seg->path, strerror(errno));
        return SF_ERR_IO;
    }
    seg->prealloc_end = 0; /* the truncation dropped any reservation past the end */
    seg->damaged_at = -1;
    return SF_OK;
}

static int64_t file_mtime_ms(int fd) {
    struct stat st;
    if (fstat(fd, &st) < 0)
        return -1;
    return (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
}

/* Keep the first @keep entries of @ix on the heap, the file to be rewritten from scratch. */
static int idx_keep(sf_segment_index_t *ix, size_t keep) {
    if (ix->mapped) {
        uint8_t *p = keep ? malloc(keep * ix->entry_size) : NULL;
        if (keep && !p)
            return SF_ERR_NOMEM;
        if (keep)
            memcpy(p, ix->data, keep * ix->entry_size);
        idx_release(ix);
        ix->data = p;
        ix->cap = keep;
        ix->loaded = 1;
    }
    ix->n = keep;
    ix->written = 0;
    return SF_OK;
}

int sf_segment_truncate_to(sf_segment_t *seg, int64_t offset, int32_t index_interval,
                           int64_t *end) {
    sf_recbatch_hdr_t hdr;
    int64_t cut = seg->size, start = 0, valid_end, next;
    size_t bsize, ko, kt;
    int rc = sf_segment_index_ensure(seg, index_interval, end);

    if (rc != SF_OK)
        return rc;
    next = offset;
    rc = sf_segment_scan(seg, sf_segment_index_lookup(seg, offset), seg->size, offset, &cut,
                         &hdr, &bsize);
    if (rc == SF_ERR_NOTFOUND) {
        cut = seg->size; /* nothing at or after @offset here */
    } else if (rc != SF_OK) {
        *end = cut;
        return rc;
    } else if (hdr.BaseOffset < offset) {
        next = hdr.BaseOffset; /* @offset inside a batch: the whole batch goes */
    }
    /* Entries for the batches that stay (positions before the cut, offsets before next). */
    for (ko = seg->oidx.n; ko > 0 && oidx_pos(&seg->oidx, ko - 1) >= cut; ko--)
        ;
    for (kt = seg->tidx.n;
         kt > 0 && seg->base_offset + (int64_t)tidx_rel(&seg->tidx, kt - 1) >= next; kt--)
        ;
    if ((rc = idx_keep(&seg->oidx, ko)) != SF_OK || (rc = idx_keep(&seg->tidx, kt)) != SF_OK)
        return rc;
    if (cut < seg->size && ftruncate(seg->fd, (off_t)cut) < 0) {
        sf_log(SF_LOG_ERR, "STORAGE", "cannot truncate %s.log: %s", seg->path, strerror(errno));
        return SF_ERR_IO;
    }
    seg->size = cut;
    if (seg->synced_size > cut)
        seg->synced_size = cut;
    seg->prealloc_end = 0;
    seg->sealed = 0;
    /* As at load: the state at the last offset entry, then the batches after it. */
    seg->next_offset = seg->base_offset;
    seg->max_timestamp = seg->offset_of_max_timestamp = -1;
    seg->bytes_since_index = 0;
    if (ko > 0) {
        start = oidx_pos(&seg->oidx, ko - 1);
        seg->next_offset = seg->base_offset + oidx_rel(&seg->oidx, ko - 1);
    }
    if (kt > 0) {
        seg->max_timestamp = tidx_ts(&seg->tidx, kt - 1);
        seg->offset_of_max_timestamp = seg->base_offset + tidx_rel(&seg->tidx, kt - 1);
    }
    rc = scan_batches(seg, start, 0, seg->next_offset, index_interval, ko > 0, &valid_end);
    if (rc == SF_OK && valid_end != cut) {
        *end = valid_end;
        return SF_ERR_CORRUPT;
    }
    if (rc == SF_OK)
        rc = idx_write(seg, &seg->oidx, 1);
    if (rc == SF_OK)
        rc = idx_write(seg, &seg->tidx, 1);
    if (seg->next_offset < next)
        seg->next_offset = next; /* a gap up to @offset: the next append starts there */
    if (seg->size == 0)
        seg->roll_base_ms = -1;
    else if (seg->roll_base_ms < 0)
        seg->roll_base_ms = file_mtime_ms(seg->fd);
    *end = seg->next_offset;
    return rc;
}

static void state_reset(sf_segment_t *seg) {
    idx_reset_heap(&seg->oidx);
    idx_reset_heap(&seg->tidx);
    seg->next_offset = seg->base_offset;
    seg->max_timestamp = -1;
    seg->offset_of_max_timestamp = -1;
    seg->bytes_since_index = 0;
}

/* Rebuild both indexes from the .log (headers only, or fully validated) and rewrite the
 * files. At open time (@at_open) a tail that does not scan is recorded (record_damage); later
 * (a sealed segment in use) it is SF_ERR_CORRUPT with its position in *@bad_pos, and the
 * index files are left alone. */
static int rebuild(sf_segment_t *seg, int full, int64_t min_offset, int32_t index_interval,
                   int at_open, int64_t *bad_pos) {
    int64_t valid_end = 0;
    int rc, rc2;
    state_reset(seg);
    rc = scan_batches(seg, 0, full, min_offset, index_interval, 0, &valid_end);
    if (rc != SF_OK)
        return rc;
    if (valid_end < seg->size && !at_open) {
        if (bad_pos)
            *bad_pos = valid_end;
        return SF_ERR_CORRUPT;
    }
    if (valid_end < seg->size)
        record_damage(seg, valid_end, full ? "invalid or torn batch" : "unreadable batch");
    rc = idx_write(seg, &seg->oidx, 1);
    rc2 = idx_write(seg, &seg->tidx, 1);
    if (seg->size > 0 && seg->roll_base_ms < 0)
        seg->roll_base_ms = file_mtime_ms(seg->fd);
    return rc != SF_OK ? rc : rc2;
}

int sf_segment_recover(sf_segment_t *seg, int64_t min_offset, int32_t index_interval) {
    /* Whatever survived a crash is not known to be on disk. */
    seg->synced_size = 0;
    return rebuild(seg, 1, min_offset, index_interval, 1, NULL);
}

/* Whether an index file of @bytes can belong to @seg: whole entries, and no more of them
 * than the .log has batches (each offset entry points at a different batch start; the time
 * index has at most one entry more). A longer file is never read in. */
static int idx_size_ok(const sf_segment_t *seg, const sf_segment_index_t *ix, int64_t bytes) {
    int64_t entries = bytes / (int64_t)ix->entry_size;
    return bytes >= 0 && bytes % (int64_t)ix->entry_size == 0 &&
           entries <= seg->size / SF_RECBATCH_HEADER_SIZE + 1;
}

/* Map (or read, @heap) an index file. Returns SF_OK, SF_ERR_CORRUPT when the file is missing
 * or its size does not fit (idx_size_ok), SF_ERR_IO / SF_ERR_NOMEM. */
static int idx_load(sf_segment_t *seg, sf_segment_index_t *ix, int heap) {
    char path[4200];
    struct stat st;
    size_t bytes;
    int fd, rc = SF_OK;

    idx_release(ix);
    ext_path(path, sizeof(path), seg, ix->ext);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? SF_ERR_CORRUPT : SF_ERR_IO;
    if (fstat(fd, &st) < 0) {
        close(fd);
        return SF_ERR_IO;
    }
    bytes = (size_t)st.st_size;
    if (!idx_size_ok(seg, ix, st.st_size)) {
        close(fd);
        return SF_ERR_CORRUPT;
    }
    if (bytes == 0) {
        /* nothing to map */
    } else if (heap) {
        ix->data = malloc(bytes);
        if (!ix->data)
            rc = SF_ERR_NOMEM;
        else
            rc = pread_all(fd, ix->data, bytes, 0);
        ix->cap = bytes / ix->entry_size;
    } else {
        void *m = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED)
            rc = SF_ERR_IO;
        else {
            ix->data = m;
            ix->mapped = 1;
        }
    }
    close(fd);
    if (rc != SF_OK) {
        free(ix->data);
        ix->data = NULL;
        ix->cap = 0;
        return rc;
    }
    ix->n = ix->written = bytes / ix->entry_size;
    ix->loaded = 1;
    return SF_OK;
}

/* Entries increase strictly, positions stay inside the .log, relative offsets are indexable. */
static int idx_sane(const sf_segment_t *seg) {
    const sf_segment_index_t *o = &seg->oidx, *t = &seg->tidx;
    size_t i;
    for (i = 0; i < o->n; i++) {
        if (oidx_rel(o, i) > INT32_MAX || oidx_pos(o, i) >= (uint64_t)seg->size)
            return 0;
        if (i > 0 && (oidx_rel(o, i) <= oidx_rel(o, i - 1) || oidx_pos(o, i) <= oidx_pos(o, i - 1)))
            return 0;
    }
    for (i = 0; i < t->n; i++) {
        if (tidx_rel(t, i) > INT32_MAX || tidx_ts(t, i) < 0)
            return 0;
        if (i > 0 && (tidx_ts(t, i) <= tidx_ts(t, i - 1) || tidx_rel(t, i) < tidx_rel(t, i - 1)))
            return 0;
    }
    return 1;
}

int sf_segment_index_rebuild(sf_segment_t *seg, int32_t index_interval, int64_t *bad_pos) {
    int rc;
    sf_log(SF_LOG_WARNING, "STORAGE", "%s.index: an entry points at no batch; rebuilding",
           seg->path);
    if ((rc = sf_segment_fd_acquire(seg)) != SF_OK)
        return rc;
    rc = rebuild(seg, 0, seg->base_offset, index_interval, 0, bad_pos);
    sf_segment_fd_release(seg);
    return rc;
}

int sf_segment_index_ensure(sf_segment_t *seg, int32_t index_interval, int64_t *bad_pos) {
    int rc;
    if (seg->oidx.loaded && seg->tidx.loaded)
        return SF_OK;
    rc = idx_load(seg, &seg->oidx, 0);
    if (rc == SF_OK)
        rc = idx_load(seg, &seg->tidx, 0);
    if (rc == SF_OK && idx_sane(seg))
        return SF_OK;
    if (rc == SF_ERR_IO || rc == SF_ERR_NOMEM) {
        idx_release(&seg->oidx);
        idx_release(&seg->tidx);
        return rc;
    }
    sf_log(SF_LOG_WARNING, "STORAGE", "%s: index missing or inconsistent; rebuilding", seg->path);
    if ((rc = sf_segment_fd_acquire(seg)) != SF_OK)
        return rc;
    rc = rebuild(seg, 0, seg->base_offset, index_interval, 0, bad_pos);
    sf_segment_fd_release(seg);
    return rc;
}

/* SF_OK when the index file exists and its size fits (idx_size_ok), SF_ERR_CORRUPT when not. */
static int idx_check_size(const sf_segment_t *seg, const sf_segment_index_t *ix) {
    char path[4200];
    struct stat st;
    ext_path(path, sizeof(path), seg, ix->ext);
    if (stat(path, &st) < 0)
        return errno == ENOENT ? SF_ERR_CORRUPT : SF_ERR_IO;
    return idx_size_ok(seg, ix, st.st_size) ? SF_OK : SF_ERR_CORRUPT;
}

/* Take the largest timestamp of a sealed segment from the time index's last entry. */
static int tidx_read_last(sf_segment_t *seg) {
    char path[4200];
    uint8_t e[SF_SEGMENT_TIME_ENTRY_SIZE];
    struct stat st;
    int fd, rc = SF_OK;
    ext_path(path, sizeof(path), seg, ".timeindex");
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) < 0) {
        if (fd >= 0)
            close(fd);
        return SF_ERR_CORRUPT;
    }
    if (st.st_size >= SF_SEGMENT_TIME_ENTRY_SIZE) {
        rc = pread_all(fd, e, sizeof(e), st.st_size - SF_SEGMENT_TIME_ENTRY_SIZE);
        if (rc == SF_OK) {
            int64_t ts = (int64_t)sf_load_be64(e);
            uint32_t rel = sf_load_be32(e + 8);
            if (ts < 0 || rel > INT32_MAX)
                rc = SF_ERR_CORRUPT;
            seg->max_timestamp = ts;
            seg->offset_of_max_timestamp = seg->base_offset + rel;
        }
    }
    close(fd);
    return rc;
}

/* A sealed segment after a clean shutdown: the header at the last offset-index entry carries
 * that entry's offset, the headers from there check out and end exactly at the end of the
 * file, and no batch there has a larger timestamp than the time index's last entry (the final
 * entry written at sealing holds the segment's largest). A few preads per segment; anything
 * else is SF_ERR_CORRUPT (the caller rebuilds, which tells index damage from log damage). */
static int sealed_tail_check(sf_segment_t *seg) {
    char path[4200];
    uint8_t e[SF_SEGMENT_OFFSET_ENTRY_SIZE];
    struct stat st;
    scan_ctx_t sc;
    int64_t pos = 0, expect = seg->base_offset, max_ts = -1;
    int fd, rc = SF_OK, entry = 0;

    ext_path(path, sizeof(path), seg, ".index");
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return errno == ENOENT ? SF_ERR_CORRUPT : SF_ERR_IO;
    if (fstat(fd, &st) < 0)
        rc = SF_ERR_IO;
    else if (st.st_size >= SF_SEGMENT_OFFSET_ENTRY_SIZE &&
             (rc = pread_all(fd, e, sizeof(e), st.st_size - (off_t)sizeof(e))) == SF_OK) {
        expect = seg->base_offset + sf_load_be32(e);
        pos = sf_load_be32(e + 4);
        entry = 1;
    }
    close(fd);
    if (rc != SF_OK)
        return rc;
    if (pos > 0 && pos >= seg->size)
        return SF_ERR_CORRUPT;
    memset(&sc, 0, sizeof(sc));
    sc.seg = seg;
    sc.cap = 65536;
    if (!(sc.buf = malloc(sc.cap)))
        return SF_ERR_NOMEM;
    while (rc == SF_OK && pos < seg->size) {
        sf_recbatch_hdr_t hdr;
        size_t bsize;
        const uint8_t *p = NULL;
        if (seg->size - pos < SF_RECBATCH_HEADER_SIZE ||
            !(p = scan_get(&sc, pos, SF_RECBATCH_HEADER_SIZE, &rc))) {
            rc = rc != SF_OK ? rc : SF_ERR_CORRUPT;
            break;
        }
        if (sf_recbatch_header_parse(p, SF_RECBATCH_HEADER_SIZE, &hdr, &bsize) ==
                SF_ERR_MALFORMED ||
            hdr.Magic != 2 || (int64_t)bsize > seg->size - pos || hdr.LastOffsetDelta < 0 ||
            (entry ? hdr.BaseOffset != expect : hdr.BaseOffset < expect) ||
            hdr.BaseOffset - seg->base_offset > (int64_t)INT32_MAX - hdr.LastOffsetDelta) {
            rc = SF_ERR_CORRUPT;
            break;
        }
        if (hdr.MaxTimestamp > max_ts)
            max_ts = hdr.MaxTimestamp;
        expect = hdr.BaseOffset + hdr.LastOffsetDelta + 1;
        entry = 0;
        pos += (int64_t)bsize;
    }
    free(sc.buf);
    if (rc == SF_OK && max_ts > seg->max_timestamp)
        rc = SF_ERR_CORRUPT; /* an empty or short time index */
    return rc;
}

int sf_segment_load(sf_segment_t *seg, int active, int32_t index_interval) {
    int64_t start = 0, valid_end = 0;
    int rc, skip_first = 0;

    if (!active) {
        /* Sealed: a cheap check of the files now (the full check runs when they are mapped
         * on first use); the largest timestamp is the time index's last entry. */
        seg->sealed = 1;
        rc = idx_check_size(seg, &seg->oidx);
        if (rc == SF_OK)
            rc = idx_check_size(seg, &seg->tidx);
        if (rc == SF_ERR_IO)
            return rc;
        if (rc == SF_OK)
            rc = tidx_read_last(seg);
        if (rc == SF_OK)
            rc = sealed_tail_check(seg);
        if (rc == SF_ERR_IO || rc == SF_ERR_NOMEM)
            return rc;
        if (rc == SF_OK)
            return SF_OK;
        sf_log(SF_LOG_WARNING, "STORAGE", "%s: index missing or inconsistent; rebuilding",
               seg->path);
        return rebuild(seg, 0, seg->base_offset, index_interval, 1, NULL);
    }

    /* Active: indexes on the heap (they keep growing), then scan from the last entry to find
     * the end; at the last entry the time index held the largest timestamp so far. */
    rc = idx_load(seg, &seg->oidx, 1);
    if (rc == SF_OK)
        rc = idx_load(seg, &seg->tidx, 1);
    if (rc == SF_ERR_IO || rc == SF_ERR_NOMEM)
        return rc;
    if (rc != SF_OK || !idx_sane(seg)) {
        sf_log(SF_LOG_WARNING, "STORAGE", "%s: index missing or inconsistent; rebuilding",
               seg->path);
        return rebuild(seg, 0, seg->base_offset, index_interval, 1, NULL);
    }
    seg->next_offset = seg->base_offset;
    if (seg->oidx.n > 0) {
        start = oidx_pos(&seg->oidx, seg->oidx.n - 1);
        seg->next_offset = seg->base_offset + oidx_rel(&seg->oidx, seg->oidx.n - 1);
        skip_first = 1;
    }
    if (seg->tidx.n > 0) {
        seg->max_timestamp = tidx_ts(&seg->tidx, seg->tidx.n - 1);
        seg->offset_of_max_timestamp = seg->base_offset + tidx_rel(&seg->tidx, seg->tidx.n - 1);
    }
    rc = scan_batches(seg, start, 0, seg->next_offset, index_interval, skip_first, &valid_end);
    if (rc != SF_OK)
        return rc;
    if (skip_first && valid_end == start) {
        /* The last index entry points at nothing valid: the index cannot be trusted. */
        return rebuild(seg, 0, seg->base_offset, index_interval, 1, NULL);
    }
    if (valid_end < seg->size)
        record_damage(seg, valid_end, "partial or unreadable batch");
    if (seg->size > 0)
        seg->roll_base_ms = file_mtime_ms(seg->fd);
    return SF_OK;
}

/* ---- append ---- */

int sf_segment_append(sf_segment_t *seg, const uint8_t *buf, size_t len,
                      const sf_segment_batch_t *batches, size_t nbatches, int64_t now_ms,
                      int32_t index_interval) {
    int64_t pos = seg->size;
    size_t i;

    assert(!seg->sealed && seg->oidx.loaded && !seg->oidx.mapped);
    if (pwrite_all(seg->fd, buf, len, seg->size) != SF_OK) {
        int e = errno;
        sf_log(SF_LOG_ERR, "STORAGE", "write to %s.log failed: %s", seg->path, strerror(e));
        /* Nothing of a failed append may stay behind a later successful one. */
        if (ftruncate(seg->fd, (off_t)seg->size) < 0)
            sf_log(SF_LOG_ERR, "STORAGE", "cannot truncate %s.log back: %s", seg->path,
                   strerror(errno));
        seg->prealloc_end = 0;
        errno = e;
        return SF_ERR_IO;
    }
    for (i = 0; i < nbatches; i++) {
        index_batch(seg, pos, &batches[i], index_interval);
        pos += (int64_t)batches[i].size;
    }
    assert(pos == seg->size + (int64_t)len);
    seg->size = pos;
    if (seg->roll_base_ms < 0)
        seg->roll_base_ms = now_ms;
    return SF_OK;
}

void sf_segment_preallocate(sf_segment_t *seg, int64_t upto) {
    int64_t from = seg->prealloc_end > seg->size ? seg->prealloc_end : seg->size;
    struct statfs sfs;
    if (seg->prealloc_off || seg->sealed || upto <= from)
        return;
    if (seg->prealloc_end == 0 && fstatfs(seg->fd, &sfs) == 0 &&
        ((unsigned long)sfs.f_type == TMPFS_MAGIC_NUMBER ||
         (unsigned long)sfs.f_type == RAMFS_MAGIC_NUMBER)) {
        seg->prealloc_off = 1;
        return;
    }
    if (fallocate(seg->fd, FALLOC_FL_KEEP_SIZE, (off_t)from, (off_t)(upto - from)) < 0) {
        /* Unsupported, or no space: appends work as without it (and report ENOSPC). */
        sf_log(SF_LOG_DEBUG, "STORAGE", "%s.log: no block reservation: %s", seg->path,
               strerror(errno));
        seg->prealloc_off = 1;
        return;
    }
    seg->prealloc_end = upto;
}

/* ---- lookups ---- */

int sf_segment_read(const sf_segment_t *seg, int64_t pos, uint8_t *buf, size_t len) {
    return pread_all(seg->fd, buf, len, pos);
}

int64_t sf_segment_index_lookup(const sf_segment_t *seg, int64_t offset) {
    const sf_segment_index_t *ix = &seg->oidx;
    size_t lo = 0, hi = ix->n;
    int64_t rel = offset - seg->base_offset;
    assert(ix->loaded);
    if (rel < 0)
        return 0;
    /* First entry with rel > target; the one before it is the floor. */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((int64_t)oidx_rel(ix, mid) <= rel)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == 0 ? 0 : oidx_pos(ix, lo - 1);
}

int64_t sf_segment_index_floor_pos(const sf_segment_t *seg, int64_t max_pos, int64_t max_offset) {
    const sf_segment_index_t *ix = &seg->oidx;
    size_t lo = 0, hi = ix->n;
    assert(ix->loaded);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((int64_t)oidx_pos(ix, mid) <= max_pos &&
            seg->base_offset + (int64_t)oidx_rel(ix, mid) < max_offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == 0 ? 0 : oidx_pos(ix, lo - 1);
}

int64_t sf_segment_time_lookup(const sf_segment_t *seg, int64_t timestamp) {
    const sf_segment_index_t *ix = &seg->tidx;
    size_t lo = 0, hi = ix->n;
    assert(ix->loaded);
    /* Entries with a timestamp below the target cover offsets that cannot match. */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tidx_ts(ix, mid) < timestamp)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == 0 ? seg->base_offset : seg->base_offset + tidx_rel(ix, lo - 1) + 1;
}

/* Buffered reads of batch headers on the read path. */
typedef struct hdr_cursor {
    uint8_t buf[HDR_CHUNK];
    int64_t wpos;
    size_t wlen;
} hdr_cursor_t;

/* The header of the batch at @pos (a boundary below @end_pos); the batch must end by
 * @end_pos. */
static int cursor_header(const sf_segment_t *seg, hdr_cursor_t *c, int64_t pos, int64_t end_pos,
                         sf_recbatch_hdr_t *hdr, size_t *bsize) {
    int rc;
    if (end_pos - pos < SF_RECBATCH_HEADER_SIZE)
        return SF_ERR_CORRUPT;
    if (c->wlen == 0 || pos < c->wpos ||
        pos + SF_RECBATCH_HEADER_SIZE > c->wpos + (int64_t)c->wlen) {
        ssize_t r;
        size_t want = sizeof(c->buf);
        if ((int64_t)want > end_pos - pos)
            want = (size_t)(end_pos - pos);
        do
            r = pread(seg->fd, c->buf, want, (off_t)pos);
        while (r < 0 && errno == EINTR);
        if (r < 0)
            return SF_ERR_IO;
        if (r < SF_RECBATCH_HEADER_SIZE)
            return SF_ERR_CORRUPT;
        c->wpos = pos;
        c->wlen = (size_t)r;
    }
    rc = sf_recbatch_header_parse(c->buf + (pos - c->wpos), SF_RECBATCH_HEADER_SIZE, hdr, bsize);
    /* What a client would choke on: a length that does not fit, another magic, offsets that
     * are not this segment's. The CRC is the client's to check (check.crcs): computing it
     * here would mean reading every byte the zero-copy path sends without touching. */
    if (rc == SF_ERR_MALFORMED || (int64_t)*bsize > end_pos - pos || hdr->Magic != 2 ||
        hdr->LastOffsetDelta < 0 || hdr->BaseOffset < seg->base_offset ||
        hdr->BaseOffset - seg->base_offset > (int64_t)INT32_MAX - hdr->LastOffsetDelta)
        return SF_ERR_CORRUPT;
    return SF_OK;
}

int sf_segment_scan(const sf_segment_t *seg, int64_t pos, int64_t end_pos, int64_t offset,
                    int64_t *found_pos, sf_recbatch_hdr_t *hdr, size_t *batch_size) {
    hdr_cursor_t c;
    c.wlen = 0;
    c.wpos = 0;
    while (pos < end_pos) {
        size_t bsize;
        int rc = cursor_header(seg, &c, pos, end_pos, hdr, &bsize);
        if (rc != SF_OK) {
            *found_pos = pos; /* the caller logs it, once */
            return rc;
        }
        if (sf_recbatch_next_offset(hdr) > offset) {
            *found_pos = pos;
            *batch_size = bsize;
            return SF_OK;
        }
        pos += (int64_t)bsize;
    }
    return SF_ERR_NOTFOUND;
}

int sf_segment_extent(const sf_segment_t *seg, int64_t pos, int64_t next_offset, int64_t end_pos,
                      int64_t max_end, int64_t max_offset, int64_t *run_end) {
    hdr_cursor_t c;
    c.wlen = 0;
    c.wpos = 0;
    while (pos < end_pos) {
        sf_recbatch_hdr_t hdr;
        size_t bsize;
        int rc = cursor_header(seg, &c, pos, end_pos, &hdr, &bsize);
        if (rc == SF_OK && hdr.BaseOffset < next_offset)
            rc = SF_ERR_CORRUPT;
        if (rc != SF_OK) {
            *run_end = pos;
            return rc;
        }
        if (hdr.BaseOffset >= max_offset || pos + (int64_t)bsize > max_end)
            break;
        next_offset = sf_recbatch_next_offset(&hdr);
        pos += (int64_t)bsize;
    }
    *run_end = pos;
    return SF_OK;
}

int sf_segment_codecs(const sf_segment_t *seg, int64_t pos, int64_t end_pos, unsigned *mask) {
    hdr_cursor_t c;
    c.wlen = 0;
    c.wpos = 0;
    *mask = 0;
    while (pos < end_pos) {
        sf_recbatch_hdr_t hdr;
        size_t bsize;
        int rc = cursor_header(seg, &c, pos, end_pos, &hdr, &bsize);
        if (rc != SF_OK)
            return rc;
        *mask |= 1u << (hdr.Attributes & SF_RECBATCH_ATTR_COMPRESSION_MASK);
        pos += (int64_t)bsize;
    }
    return SF_OK;
}

/* ---- lifecycle ---- */

/* Give back the blocks reserved past the end of the .log (sf_segment_preallocate; also those
 * a run before a crash left): a truncation to the same size drops them. The modification time
 * stays what the last append made it (it stands in for the largest timestamp when batches
 * carry none). */
static void prealloc_release(sf_segment_t *seg) {
    struct stat st;
    if (fstat(seg->fd, &st) < 0)
        return;
    if (seg->prealloc_end > 0 || (int64_t)st.st_blocks * 512 >= st.st_size + 2 * st.st_blksize) {
        struct timespec times[2];
        times[0] = st.st_atim;
        times[1] = st.st_mtim;
        if (ftruncate(seg->fd, st.st_size) == 0)
            (void)futimens(seg->fd, times);
    }
    seg->prealloc_end = 0;
}

int sf_segment_seal(sf_segment_t *seg) {
    int rc;
    if (seg->sealed)
        return SF_OK;
    prealloc_release(seg);
    if (seg->max_timestamp >= 0 && seg->tidx.loaded && !seg->tidx.mapped &&
        (seg->tidx.n == 0 || seg->max_timestamp > tidx_ts(&seg->tidx, seg->tidx.n - 1))) {
        uint8_t e[SF_SEGMENT_TIME_ENTRY_SIZE];
        sf_store_be64(e, (uint64_t)seg->max_timestamp);
        sf_store_be32(e + 8, (uint32_t)(seg->offset_of_max_timestamp - seg->base_offset));
        (void)idx_push(&seg->tidx, e);
    }
    rc = sf_segment_write_indexes(seg);
    seg->sealed = 1;
    seg->mtime_ms = file_mtime_ms(seg->fd); /* retention reads it without the descriptor */
    if (rc == SF_OK) {
        /* The files are complete: free the heap copies, map them again when needed. */
        idx_release(&seg->oidx);
        idx_release(&seg->tidx);
    }
    return rc;
}

int sf_segment_sync(sf_segment_t *seg, int indexes) {
    char path[4200];
    const char *const exts[] = {".index", ".timeindex", ".txnindex"};
    int i, rc = SF_OK;
    /* Pinned only while it is synced: a flush of thousands of segments holds one at a time. */
    if (fd_acquire(seg, 1) != SF_OK)
        return errno == ENOENT ? SF_OK : SF_ERR_IO; /* deleted meanwhile: nothing to sync */
    if (fdatasync(seg->fd) < 0) {
        sf_log(SF_LOG_ERR, "STORAGE", "fsync of %s.log failed: %s", seg->path, strerror(errno));
        sf_segment_fd_release(seg);
        return SF_ERR_IO;
    }
    sf_segment_fd_release(seg);
    for (i = 0; indexes && i < 3; i++) {
        int fd;
        ext_path(path, sizeof(path), seg, exts[i]);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue; /* deleted meanwhile, or never written: rebuilt if ever needed */
        if (fsync(fd) < 0) {
            sf_log(SF_LOG_ERR, "STORAGE", "fsync of %s failed: %s", path, strerror(errno));
            rc = SF_ERR_IO;
        }
        close(fd);
    }
    return rc;
}

int64_t sf_segment_largest_timestamp(const sf_segment_t *seg) {
    if (seg->max_timestamp >= 0)
        return seg->max_timestamp;
    /* The active segment's descriptor is pinned by its log; a sealed one's mtime is fixed. */
    return seg->sealed ? seg->mtime_ms : file_mtime_ms(seg->fd);
}

int sf_segment_unlink(sf_segment_t *seg) {
    char path[4200];
    const char *const exts[] = {".log", ".index", ".timeindex", ".txnindex"};
    int i, rc = SF_OK;
    for (i = 0; i < 4; i++) {
        ext_path(path, sizeof(path), seg, exts[i]);
        if (unlink(path) < 0 && errno != ENOENT) {
            sf_log(SF_LOG_ERR, "STORAGE", "cannot delete %s: %s", path, strerror(errno));
            rc = SF_ERR_IO;
        }
    }
    return rc;
}
