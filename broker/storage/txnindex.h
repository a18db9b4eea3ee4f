/* The aborted transactions of a partition log (Kafka's TransactionIndex): one entry per
 * transaction ended by an abort marker, in the <base %020lld>.txnindex file of the segment
 * holding that marker, in Kafka's layout: 34-byte big-endian entries of version (int16, 0),
 * producer id (int64), first offset (int64), last offset (int64: the marker's) and last
 * stable offset (int64: the LSO right after the marker). A read_committed consumer is told
 * of every aborted transaction its fetch overlaps, to drop that producer's records.
 *
 * Every entry of the log is also kept in memory, oldest first (last offsets strictly
 * increase, as markers do): aborts are rare next to records, and a fetch then finds the ones
 * it overlaps without reading files. The files are appended to as markers come, read when the
 * log opens, cut when it is truncated and removed with their segments (segment.h).
 *
 * Pure data structure plus file I/O by path: the owner serialises access (the log's mutex). */
#ifndef SF_TXNINDEX_H
#define SF_TXNINDEX_H

#include <stddef.h>
#include <stdint.h>

#define SF_TXNINDEX_EXT ".txnindex"
#define SF_TXNINDEX_ENTRY_SIZE 34

typedef struct sf_txnindex_entry {
    int64_t producer_id;
    int64_t first_offset;
    int64_t last_offset;        /* the abort marker's offset */
    int64_t last_stable_offset; /* the LSO right after the marker */
} sf_txnindex_entry_t;

typedef struct sf_txnindex {
    sf_txnindex_entry_t *v; /* by last offset, strictly increasing */
    size_t n, cap;
} sf_txnindex_t;

void sf_txnindex_init(sf_txnindex_t *ti);
void sf_txnindex_free(sf_txnindex_t *ti);
void sf_txnindex_clear(sf_txnindex_t *ti);

/* Append the entries of the file of segment @seg_path ("<dir>/<base %020lld>", borrowed),
 * which holds offsets [@base, @end), to @ti. The file ends at a torn tail (its size is not a
 * multiple of 34: a crash during a write) or at the first entry that does not fit (a version
 * other than 0, a last offset outside [@base, @end) or not above the entry before it, a first
 * offset above it): it is cut there, logged. A missing file holds nothing.
 * @return SF_OK, SF_ERR_NOMEM or SF_ERR_IO. */
int sf_txnindex_load(sf_txnindex_t *ti, const char *seg_path, int64_t base, int64_t end);

/* Add @e to @ti and to the end of the file of segment @seg_path unless an entry with a last
 * offset at or above e->last_offset is there already (a replay of markers already indexed).
 * @return 1 (added), 0 (already there), SF_ERR_NOMEM (nothing changed) or SF_ERR_IO (kept in
 * memory; the file lacks it, logged). */
int sf_txnindex_add(sf_txnindex_t *ti, const char *seg_path, const sf_txnindex_entry_t *e);

/* Remove the entries whose last offset is >= @offset. The file of segment @seg_path (base
 * @base: the one holding @offset) is cut to the entries it keeps; later segments' files go
 * with their segments. @return SF_OK or SF_ERR_IO (the memory is cut all the same). */
int sf_txnindex_truncate(sf_txnindex_t *ti, const char *seg_path, int64_t base, int64_t offset);

/* Forget the entries whose last offset is below @offset (the segments holding them were
 * deleted, their files with them). */
void sf_txnindex_drop_below(sf_txnindex_t *ti, int64_t offset);

/* The index of the first entry whose last offset is >= @offset (ti->n when none). */
size_t sf_txnindex_lower(const sf_txnindex_t *ti, int64_t offset);

#endif
