/* One log segment: <base %020lld>.log with its sparse .index (relative offset u32 + file
 * position u32, big-endian) and .timeindex (timestamp i64 + relative offset u32), and the
 * .txnindex of the aborted transactions whose markers it holds, when there are any (kept by
 * the log: txnindex.h; a segment only syncs and removes it).
 *
 * This header is internal to the storage engine (broker/storage/log.c). Everything but the reference
 * count and the descriptor fields is guarded by the owning log's mutex; the struct is visible so
 * the log can read its fields directly. Other modules only see the opaque sf_segment_t through
 * broker/storage/log.h.
 *
 * Descriptors: the .log file is opened on demand. A segment's fd is valid while the segment is
 * pinned (sf_segment_fd_acquire); unpinned descriptors stay open in a process-wide cache of at
 * most sf_segment_fd_cache_limit() descriptors, least recently used first out. The log keeps
 * its active segment pinned, and every slice handed to a sender holds a pin, so a descriptor
 * being sent from (sendfile) is never closed under it.
 *
 * Index entries are kept in the file's big-endian layout: in a heap array while the segment
 * is active (appended to the file on flush, roll and close), and mapped read-only from the
 * file, on first use, once the segment is sealed. */
#ifndef SF_SEGMENT_H
#define SF_SEGMENT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "recbatch.h"

#define SF_SEGMENT_OFFSET_ENTRY_SIZE 8 /* relative offset u32, position u32 */
#define SF_SEGMENT_TIME_ENTRY_SIZE 12  /* timestamp i64, relative offset u32 */
/* Segments never grow past this: index positions are u32 and Kafka caps segments at 2 GiB. */
#define SF_SEGMENT_MAX_BYTES INT32_MAX

/* An index in memory, entries in the file's layout. */
typedef struct sf_segment_index {
    uint8_t *data;     /* heap (active or rebuilt) or mmap (sealed, loaded lazily) */
    size_t n;          /* entries in data */
    size_t cap;        /* heap capacity in entries (0 when mapped or empty) */
    size_t written;    /* entries already written to the file */
    size_t entry_size; /* SF_SEGMENT_*_ENTRY_SIZE */
    int mapped;        /* data is an mmap of the file */
    int loaded;        /* data reflects the index (0: sealed and not mapped yet) */
    const char *ext;   /* ".index" / ".timeindex" */
} sf_segment_index_t;

typedef struct sf_segment {
    atomic_int refcnt;          /* the log's list holds one; each slice one more */
    int64_t base_offset;
    char *path;                 /* "<dir>/<base %020lld>" without extension, owned */
    /* The .log file (O_RDWR), -1 while closed. fd, fd_pins and the LRU links are guarded by
     * the descriptor cache's mutex; fd may be read without it while the caller holds a pin. */
    int fd;
    int fd_pins;                /* sf_segment_fd_acquire calls not yet released */
    int fd_open_failed;         /* a reopen failed and was logged (logged once) */
    struct sf_segment *lru_prev, *lru_next; /* in the cache's LRU list while open and unpinned */
    int64_t mtime_ms;           /* .log mtime when opened or sealed (sealed segments) */
    /* Damage found by recover / load / a rebuild: size was set to damaged_at (nothing from
     * there is served) and the file still has file_size bytes. damage_after: a valid batch
     * lies after the damage in this file (so the damage is not the tail). */
    int64_t damaged_at;         /* -1: none */
    int64_t file_size;
    int damage_after;
    const char *damage_why;     /* static string */
    int64_t size;               /* bytes of whole valid batches */
    int64_t synced_size;        /* bytes known to be fsynced */
    int64_t next_offset;        /* offset after the last batch (base_offset when empty) */
    int64_t max_timestamp;      /* largest batch MaxTimestamp; -1 when none */
    int64_t offset_of_max_timestamp;
    int64_t roll_base_ms;       /* when the segment got its first batch; -1 when empty */
    int64_t bytes_since_index;  /* bytes appended since the last index entry */
    int sealed;                 /* no more appends (a newer segment exists) */
    int index_unsynced;         /* index bytes written to the files but not fsynced */
    int64_t prealloc_end;       /* disk blocks are reserved up to here (sf_segment_preallocate) */
    int prealloc_off;           /* the file system does not take (or gain from) reservations */
    sf_segment_index_t oidx;    /* offset index */
    sf_segment_index_t tidx;    /* time index */
} sf_segment_t;

/* What the log tells a segment about each batch it appends. */
typedef struct sf_segment_batch {
    int64_t base_offset;
    int64_t last_offset;
    int64_t max_timestamp;
    size_t size;
} sf_segment_batch_t;

/* Reserve disk blocks for the range [size, @upto) of the .log file ahead of appends
 * (fallocate FALLOC_FL_KEEP_SIZE: the file's size and contents do not change, nor does
 * anything readers or recovery see), so that appends into it skip the file system's per-block
 * delayed-allocation work. Best effort and idempotent: failures are ignored (and turn it off
 * for the segment), as are file systems that keep data in memory (tmpfs), where a reservation
 * would hold memory. Truncations drop what lies past the new end, and sealing gives back what
 * is left. Loop thread only. */
void sf_segment_preallocate(sf_segment_t *seg, int64_t upto);

/* Create a new empty segment (files created, truncated if present) at @base_offset in @dir.
 * @return SF_OK and *@segp (one reference and one descriptor pin, the caller's), SF_ERR_IO or
 * SF_ERR_NOMEM. */
int sf_segment_create(const char *dir, int64_t base_offset, sf_segment_t **segp);

/* Open the existing segment files at @base_offset in @dir without reading them (size is the
 * file size). Follow with sf_segment_recover or sf_segment_load (both need the pin).
 * @return SF_OK and *@segp (one reference and one descriptor pin), SF_ERR_IO or SF_ERR_NOMEM. */
int sf_segment_open(const char *dir, int64_t base_offset, sf_segment_t **segp);

/* Re-validate every batch from the start (sf_recbatch_validate, offsets increasing, at least
 * @min_offset, relative offsets in range) and rebuild both indexes (files rewritten) with
 * @index_interval. The first invalid byte is recorded in damaged_at (the file is not
 * changed: the log decides, sf_segment_truncate). @return SF_OK or SF_ERR_IO / SF_ERR_NOMEM. */
int sf_segment_recover(sf_segment_t *seg, int64_t min_offset, int32_t index_interval);

/* Cut the .log at damaged_at (damage at the tail of the log), with a log line naming the
 * file and the position. @return SF_OK or SF_ERR_IO. */
int sf_segment_truncate(sf_segment_t *seg);

/* Remove the batches at and after @offset (a follower truncating its log): the .log is cut
 * at the start of the first batch whose last offset is >= @offset, both indexes lose the
 * entries past the cut (rewritten; a mapped index is read back to the heap) and the segment
 * takes appends again (sealed cleared), its next offset set to @offset or the cut batch's
 * base, whichever is lower. Needs the descriptor pin and the log mutex.
 * @return SF_OK with the new next offset in *@end (seg->next_offset), SF_ERR_CORRUPT (a batch
 * header that does not check out, at *@end), SF_ERR_IO or SF_ERR_NOMEM. */
int sf_segment_truncate_to(sf_segment_t *seg, int64_t offset, int32_t index_interval,
                           int64_t *end);

/* Load a segment that was shut down cleanly: check the index files (rebuilt when missing or
 * inconsistent), and scan batch headers from the last offset-index entry to the end: the
 * active segment gets its next offset and largest timestamp from there, a sealed one checks
 * that its last index entries agree with the batches (a short or empty time index, or an
 * offset index pointing elsewhere, is rebuilt). Indexes of sealed segments are mapped lazily.
 * A header that does not check out is recorded in damaged_at (see sf_segment_recover).
 * @return SF_OK or SF_ERR_IO / SF_ERR_NOMEM. */
int sf_segment_load(sf_segment_t *seg, int active, int32_t index_interval);

/* Append @len bytes of validated batches (offsets already assigned) described by @batches
 * (@nbatches entries) at the end of the .log with one pwrite, then add index entries.
 * On a failed or short write the file is truncated back and SF_ERR_IO returned. */
int sf_segment_append(sf_segment_t *seg, const uint8_t *buf, size_t len,
                      const sf_segment_batch_t *batches, size_t nbatches, int64_t now_ms,
                      int32_t index_interval);

/* Make sure the indexes are in memory (sealed segments are mapped on first use; an
 * inconsistent file is rebuilt from the .log). @return SF_OK, SF_ERR_CORRUPT (the rebuild met
 * a batch header that does not check out, at *@bad_pos), or an error. */
int sf_segment_index_ensure(sf_segment_t *seg, int32_t index_interval, int64_t *bad_pos);

/* Rebuild both indexes from the .log now (an entry pointed at no batch). Loop or I/O thread,
 * log mutex held. @return as sf_segment_index_ensure. */
int sf_segment_index_rebuild(sf_segment_t *seg, int32_t index_interval, int64_t *bad_pos);

/* The file position of the last offset-index entry whose offset is <= @offset (0 if none).
 * Index must be loaded (sf_segment_index_ensure). */
int64_t sf_segment_index_lookup(const sf_segment_t *seg, int64_t offset);

/* The position of the last offset-index entry whose position is <= @max_pos and whose offset
 * is < @max_offset; 0 if none. Index must be loaded. */
int64_t sf_segment_index_floor_pos(const sf_segment_t *seg, int64_t max_pos, int64_t max_offset);

/* The offset after the time-index entry with the largest timestamp < @timestamp (where a scan
 * for @timestamp may start), or base_offset if none. Index must be loaded. */
int64_t sf_segment_time_lookup(const sf_segment_t *seg, int64_t timestamp);

/* Scan batch headers with pread from @pos (a batch boundary) up to @end_pos for the first
 * batch whose last offset is >= @offset. Lock-free (reads bytes below a size snapshot).
 * @return SF_OK with *@found_pos, *@hdr, *@batch_size; SF_ERR_NOTFOUND at @end_pos;
 * SF_ERR_CORRUPT when a header does not check out (length, magic 2, offsets in the segment's
 * range) or overruns @end_pos, with its position in *@found_pos; SF_ERR_IO. */
int sf_segment_scan(const sf_segment_t *seg, int64_t pos, int64_t end_pos, int64_t offset,
                    int64_t *found_pos, sf_recbatch_hdr_t *hdr, size_t *batch_size);

/* From @pos (a batch boundary, where offset @next_offset is due), the end of the run of whole
 * batches that each end by @max_end (and @end_pos, a size snapshot) and start below
 * @max_offset; *@run_end == @pos when the first does not qualify. Every header in the run is
 * checked as sf_segment_scan does, and offsets must increase. Lock-free. @return SF_OK, or
 * SF_ERR_CORRUPT / SF_ERR_IO with *@run_end where the walk stopped. */
int sf_segment_extent(const sf_segment_t *seg, int64_t pos, int64_t next_offset, int64_t end_pos,
                      int64_t max_end, int64_t max_offset, int64_t *run_end);

/* The codecs (bit 1 << codec) of the whole batches in [@pos, @end_pos). Lock-free.
 * @return SF_OK, SF_ERR_CORRUPT or SF_ERR_IO. */
int sf_segment_codecs(const sf_segment_t *seg, int64_t pos, int64_t end_pos, unsigned *mask);
/* Read exactly @len bytes of the .log at @pos into @buf. Lock-free (read below a size
 * snapshot). @return SF_OK, SF_ERR_CORRUPT (the file ends first) or SF_ERR_IO. */
int sf_segment_read(const sf_segment_t *seg, int64_t pos, uint8_t *buf, size_t len);

/* Write index entries not yet in the files (page cache only). @return SF_OK or SF_ERR_IO. */
int sf_segment_write_indexes(sf_segment_t *seg);

/* Seal the segment (a newer one takes the appends): add the final time-index entry, write
 * pending index entries and free the heap indexes (mapped again on demand). */
int sf_segment_seal(sf_segment_t *seg);

/* fsync the .log and, when @indexes, the index files, .txnindex too (opened by path; a missing file is not
 * an error). Call without the log mutex, holding a reference (not a pin: the descriptor is
 * pinned for the length of the call). */
int sf_segment_sync(sf_segment_t *seg, int indexes);

/* The segment's largest timestamp for retention: max_timestamp, or the .log mtime (ms) when
 * no batch has a timestamp. */
int64_t sf_segment_largest_timestamp(const sf_segment_t *seg);

/* Unlink the segment's files (the fd stays open until the last reference goes). */
int sf_segment_unlink(sf_segment_t *seg);

/* Take / drop a reference (atomic; thread-safe). The last unref closes the fd and frees. */
void sf_segment_ref(sf_segment_t *seg);
void sf_segment_unref(sf_segment_t *seg);

/* Pin the segment's .log descriptor, opening it again if the cache closed it. Thread-safe;
 * call while the segment's files exist (the log holds the segment in its list).
 * @return SF_OK (seg->fd valid until the matching sf_segment_fd_release) or SF_ERR_IO. */
int sf_segment_fd_acquire(sf_segment_t *seg);
/* Drop a pin; the descriptor stays cached until evicted. Thread-safe. */
void sf_segment_fd_release(sf_segment_t *seg);

/* Set the most .log descriptors kept open by the process (log.segment.fd.cache.size); 0 for
 * the default, half of RLIMIT_NOFILE (at least 16). Pinned descriptors (active segments,
 * slices being sent) are never closed, so more may be open while they are. Thread-safe. */
void sf_segment_fd_cache_set_limit(size_t limit);
/* The limit in force. */
size_t sf_segment_fd_cache_limit(void);
/* Counters: descriptors open now, opens and evictions since start (any may be NULL). */
void sf_segment_fd_cache_stats(size_t *open_now, uint64_t *opens, uint64_t *evictions);

/* Format the file name base "<dir>/<%020lld>" into @buf. */
void sf_segment_path(char *buf, size_t size, const char *dir, int64_t base_offset);

#endif
