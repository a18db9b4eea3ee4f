/* The leader-epoch cache of one partition log (Kafka's LeaderEpochFileCache, KIP-101/279):
 * (epoch, start offset) pairs, epochs and start offsets both strictly increasing, and their
 * checkpoint file <partition dir>/leader-epoch-checkpoint in Kafka's text format:
 *
 *     0                  version
 *     2                  number of entries
 *     0 0                epoch start-offset
 *     3 1200
 *
 * This header is internal to the storage engine: the log (log.c) owns one cache and calls
 * these functions with its mutex held; others use the sf_log_*epoch* functions of log.h. */
#ifndef SF_EPOCHS_H
#define SF_EPOCHS_H

#include <stddef.h>
#include <stdint.h>

#define SF_EPOCHS_FILE "leader-epoch-checkpoint"
/* The most entries a checkpoint may hold when read back (one per leader change). */
#define SF_EPOCHS_MAX_ENTRIES (1 << 20)

typedef struct sf_epoch_entry {
    int32_t epoch;
    int64_t start_offset; /* the first offset written in this epoch */
} sf_epoch_entry_t;

typedef struct sf_epochs {
    sf_epoch_entry_t *v; /* by epoch (and start offset), ascending */
    size_t n, cap;
    char *path; /* the checkpoint file, owned */
} sf_epochs_t;

/* Set up an empty cache whose checkpoint is <@dir>/leader-epoch-checkpoint (@dir copied).
 * @return SF_OK or SF_ERR_NOMEM. */
int sf_epochs_init(sf_epochs_t *ec, const char *dir);
/* Free the entries and the path; the file is left alone. */
void sf_epochs_free(sf_epochs_t *ec);

/* Replace the entries with the checkpoint file's. @return SF_OK, SF_ERR_NOTFOUND (no file),
 * SF_ERR_CORRUPT (not a version-0 checkpoint: torn, garbage, entries out of order; the cache
 * is left empty), SF_ERR_IO or SF_ERR_NOMEM. */
int sf_epochs_load(sf_epochs_t *ec);

/* Write the entries to the checkpoint file: a temporary file, then (@durable) fsync, then a
 * rename over the old one. A write that is not durable may be lost or torn by a crash: the
 * load then rebuilds the cache from the batches.
 * @return SF_OK or SF_ERR_IO (logged; the old file stays). */
int sf_epochs_write(const sf_epochs_t *ec, int durable);

/* Add (@epoch, @start_offset) when @epoch is above the latest epoch (or the cache is empty),
 * first dropping the entries whose epoch is >= @epoch or whose start offset is >=
 * @start_offset, as Kafka's assign. Negative arguments are ignored.
 * @return 1 when the cache changed, 0 when not, SF_ERR_NOMEM (unchanged). */
int sf_epochs_assign(sf_epochs_t *ec, int32_t epoch, int64_t start_offset);

/* Drop the entries that start at or after @end_offset (the log was truncated to it).
 * @return 1 when the cache changed, else 0. */
int sf_epochs_truncate_from_end(sf_epochs_t *ec, int64_t end_offset);

/* The log now starts at @start_offset: drop the entries wholly below it (those followed by
 * an entry that starts at or below it) and move the first kept entry's start up to it.
 * @return 1 when the cache changed, else 0. */
int sf_epochs_truncate_from_start(sf_epochs_t *ec, int64_t start_offset);

/* Drop every entry. @return 1 when there were some. */
int sf_epochs_clear(sf_epochs_t *ec);

/* The latest epoch, or -1 when the cache is empty. */
int32_t sf_epochs_latest(const sf_epochs_t *ec);

/* Kafka's endOffsetFor for a log whose end offset is @leo: see sf_log_end_offset_for_epoch
 * (log.h). */
void sf_epochs_end_offset_for(const sf_epochs_t *ec, int32_t epoch, int64_t leo,
                              int32_t *found_epoch, int64_t *end_offset);

#endif
