/* One log directory (an entry of log.dirs): the partition logs it holds, its lock, the
 * recovery-point and log-start-offset checkpoints, the clean-shutdown marker, meta.properties
 * and a background flusher thread.
 *
 * Threading: everything but the flusher runs on the event-loop thread. The flusher flushes
 * logs and writes the checkpoint concurrently; a mutex guards the table of logs, and a log
 * removed while the flusher works on it is deleted by the flusher once it is done. */
#ifndef SF_LOGDIR_H
#define SF_LOGDIR_H

#include <stddef.h>
#include <stdint.h>

#include "log.h"

#define SF_LOGDIR_LOCK_FILE ".lock"
#define SF_LOGDIR_CLEAN_MARKER ".streamflow_cleanshutdown"
#define SF_LOGDIR_RECOVERY_CHECKPOINT "recovery-point-offset-checkpoint"
/* Log start offsets moved by DeleteRecords, listed only for the logs whose start is past
 * their oldest segment (Kafka's file and format). */
#define SF_LOGDIR_LOG_START_CHECKPOINT "log-start-offset-checkpoint"
/* Each log's high watermark as replication knew it (Kafka's file and format), written at most
 * every SF_LOGDIR_HW_CHECKPOINT_MS and at close; a partition led again after a restart starts
 * from it rather than from nothing. */
#define SF_LOGDIR_HW_CHECKPOINT "replication-offset-checkpoint"
#define SF_LOGDIR_HW_CHECKPOINT_MS 5000
#define SF_LOGDIR_META "meta.properties"

typedef struct sf_logdir sf_logdir_t;

/* Open the log directory @path (created if its parent exists), lock it (flock on .lock so two
 * brokers cannot share it), read and remove the clean-shutdown marker, read the recovery-point
 * checkpoint and open every "<topic>-<partition>" subdirectory, recovering from its recovery
 * point (everything when the marker was absent and the checkpoint has no entry; nothing when
 * the marker was present). Each log then starts at the offset the log-start-offset checkpoint
 * gives it (clamped to [its oldest segment's base, its LEO]; a missing file is an empty list;
 * the file is rewritten at once when a value had to be lowered) and the high watermark the
 * replication-offset-checkpoint gives it (sf_log_checkpointed_high_watermark). "*-delete"
 * directories are removed. @defaults is copied and used
 * for the logs found. On failure @errstr receives a sentence naming the directory and the
 * cause. @return SF_OK and *@out (owned: sf_logdir_close), SF_ERR_IO, SF_ERR_STATE (locked by
 * another process), SF_ERR_NOMEM. */
int sf_logdir_open(const char *path, const sf_log_config_t *defaults, sf_logdir_t **out,
                   char *errstr, size_t errstr_size);

/* The directory path (owned by @ld). */
const char *sf_logdir_path(const sf_logdir_t *ld);

/* 1 if the directory had the clean-shutdown marker when opened. */
int sf_logdir_was_clean(const sf_logdir_t *ld);

/* Check meta.properties: write "version=0\nbroker.id=<id>\n" if absent; fail with
 * SF_ERR_INVALID and a sentence in @errstr if it names another broker id (or SF_ERR_IO). */
int sf_logdir_check_broker_id(sf_logdir_t *ld, int32_t broker_id, char *errstr,
                              size_t errstr_size);

/* The log of a partition, or NULL. Borrowed: valid until removed or the logdir is closed. */
sf_log_t *sf_logdir_get(sf_logdir_t *ld, const char *topic, int32_t partition);

/* Create (or return the existing) log of a partition, without fsyncing on the caller's
 * thread: the flusher's next round (or sf_logdir_close) makes the new files durable. @cfg
 * (NULL = the directory defaults) is copied. *@out (@out may be NULL) is borrowed as for sf_logdir_get. @return SF_OK, SF_ERR_INVALID (topic name not
 * [A-Za-z0-9._-]{1,249} or partition < 0), SF_ERR_IO, SF_ERR_NOMEM. */
int sf_logdir_create(sf_logdir_t *ld, const char *topic, int32_t partition,
                     const sf_log_config_t *cfg, sf_log_t **out);

/* Delete a partition's log and files (the removal is made durable by the next checkpoint
 * write, off the caller's thread). @return SF_OK, SF_ERR_NOTFOUND, SF_ERR_IO. */
int sf_logdir_remove(sf_logdir_t *ld, const char *topic, int32_t partition);

/* Number of logs. */
size_t sf_logdir_count(const sf_logdir_t *ld);

/* Call @fn for every log (loop thread; @fn must not create or remove logs). */
void sf_logdir_foreach(sf_logdir_t *ld, void (*fn)(sf_log_t *log, void *arg), void *arg);

/* Start the background flusher: every @check_interval_ms it flushes the logs for which
 * sf_log_needs_flush (wall-clock ms) and writes the recovery-point checkpoint when a recovery
 * point moved, the log-start-offset checkpoint when a log start offset moved, the
 * replication-offset-checkpoint when a high watermark moved (every SF_LOGDIR_HW_CHECKPOINT_MS
 * at most) (each: tmp file, fsync, rename, fsync dir). @return SF_OK, SF_ERR_STATE (running),
 * SF_ERR_IO (thread creation failed). */
int sf_logdir_start_flusher(sf_logdir_t *ld, int64_t check_interval_ms);

/* Write the recovery-point checkpoint now, and the log-start-offset and high watermark
 * checkpoints unless they are unchanged since their last write. @return SF_OK, SF_ERR_IO or SF_ERR_NOMEM. */
int sf_logdir_write_checkpoint(sf_logdir_t *ld);

/* Apply retention (and time-based rolling) to every log, and forget the producers idle for
 * @producer_expiration_ms (producer.id.expiration.ms); called from a timer on the loop.
 * @now_ms is wall-clock ms. */
void sf_logdir_retention(sf_logdir_t *ld, int64_t now_ms, int64_t producer_expiration_ms);

/* Stop the flusher, flush every log, write the checkpoints and, when @clean and every flush
 * succeeded, the clean-shutdown marker (fsynced); close the logs, release the lock and free
 * @ld (NULL ok). @return SF_OK or the first error. */
int sf_logdir_close(sf_logdir_t *ld, int clean);

#endif
