/* A partition log: an ordered list of segments in <log.dir>/<topic>-<partition>/.
 *
 * Threading: append, read, retention, offset_for_timestamp, delete_records, truncate and delete
 * are called from the event-loop thread; sf_log_flush may run concurrently on a background
 * thread. A per-log mutex guards the segment list, the offsets and the indexes (short
 * critical sections); segments are reference counted (atomic), so a slice handed out by
 * sf_log_read stays valid (its fd open) until released, even after retention or
 * sf_log_delete_records deleted the segment. */
#ifndef SF_LOG_H
#define SF_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "segment.h"

typedef struct sf_log_config {
    int64_t segment_bytes;        /* log.segment.bytes, 1073741824 (at most INT32_MAX used) */
    int64_t roll_ms;              /* log.roll.ms, 7 days */
    int64_t retention_ms;         /* log.retention.ms, 7 days; -1 = unlimited */
    int64_t retention_bytes;      /* log.retention.bytes, -1 = unlimited */
    int32_t index_interval_bytes; /* log.index.interval.bytes, 4096 */
    int64_t flush_messages;       /* log.flush.interval.messages, INT64_MAX = never by count */
    int64_t flush_ms;             /* log.flush.interval.ms, INT64_MAX = never by time */
    int32_t max_message_bytes;    /* message.max.bytes, 1048588: largest batch accepted */
    int64_t index_max_bytes;      /* log.index.size.max.bytes, 10485760 */
    /* What the validator needs (validator.h); the log itself does not look at these. */
    int log_append_time;          /* message.timestamp.type=LogAppendTime (0) */
    int compression;              /* compression.type: -1 producer (default), else 0..4 */
    int compression_level;        /* compression.<codec>.level, -1 for the codec's default */
    int compacted;                /* cleanup.policy includes compact (0) */
    int64_t timestamp_before_max_ms; /* message.timestamp.before.max.ms (INT64_MAX) */
    int64_t timestamp_after_max_ms;  /* message.timestamp.after.max.ms (INT64_MAX) */
    int32_t min_insync_replicas;  /* min.insync.replicas (1) */
} sf_log_config_t;

/* Fill @cfg with Kafka's defaults (values above). */
void sf_log_config_default(sf_log_config_t *cfg);

typedef struct sf_log sf_log_t;

/* A file range to send: valid until sf_log_slice_release(seg). */
typedef struct sf_log_slice {
    int fd;           /* the segment's .log file; do not close */
    int64_t pos;      /* file position of the first byte */
    size_t len;       /* bytes: whole batches */
    sf_segment_t *seg; /* the reference to release; NULL when len == 0 */
} sf_log_slice_t;

typedef struct sf_log_append_info {
    int64_t FirstOffset;    /* offset given to the first record */
    int64_t LastOffset;     /* offset given to the last record */
    int64_t LogAppendTime;  /* -1 (CreateTime) */
    int64_t LogStartOffset; /* the log start offset after the append */
    int32_t RecordCount;    /* records appended */
} sf_log_append_info_t;

/* Open (creating the directory <dir>/<topic>-<partition> if missing) the log of a partition.
 * Segments holding offsets at or after @recovery_point are re-validated batch by batch, CRCs
 * included (pass 0 to recover everything, INT64_MAX when the last shutdown was clean); the
 * others have the headers after their last index entry checked. A torn or corrupt tail (no
 * valid batch after it) is truncated with a log line naming the file and the position;
 * damage with valid data after it takes the log offline instead (sf_log_offline) and changes
 * no file. Missing, short or inconsistent indexes are rebuilt. Never fsyncs: the
 * directory entries of a new log become durable with its first sf_log_flush, and the entry
 * of its directory in @dir when the caller fsyncs @dir.
 * @cfg is copied; @dir and @topic are copied.
 * @return SF_OK and *@logp (owned by the caller: sf_log_close / sf_log_delete), or
 * SF_ERR_IO / SF_ERR_NOMEM / SF_ERR_INVALID (bad topic or partition). */
int sf_log_open(const char *dir, const char *topic, int32_t partition, const sf_log_config_t *cfg,
                int64_t recovery_point, sf_log_t **logp);

/* Close the files and free @log (NULL ok). No fsync: pending index entries are written to the
 * page cache only. Slices still held keep their segments alive until released. Not while a
 * sf_log_flush of @log runs on another thread. */
void sf_log_close(sf_log_t *log);

/* Append the record batches in @batches (@len bytes, one or more whole v2 batches).
 * Every batch is validated first; nothing is written if one is bad: SF_ERR_CORRUPT (CRC),
 * SF_ERR_TOOLARGE (a batch over max_message_bytes), SF_ERR_MALFORMED (sizes, counts, a
 * partial batch, len 0), SF_ERR_UNSUPPORTED (magic < 2). Then BaseOffset and
 * PartitionLeaderEpoch are rewritten IN THE CALLER'S BUFFER, the active segment is rolled if
 * needed (size, roll_ms measured with @now_ms, index full, relative offset overflow) and all
 * batches go to the page cache with one write. Never fsyncs.
 * @info (may be NULL) receives the assigned offsets. @return SF_OK, the errors above, or
 * SF_ERR_IO (the segment is truncated back; nothing became visible). */
int sf_log_append(sf_log_t *log, uint8_t *batches, size_t len, int64_t now_ms,
                  sf_log_append_info_t *info);

/* The same for batches the caller has validated already (sf_validate_produce: CRCs, records):
 * only their framing and sizes are checked again here. Both check the batches that carry a
 * producer id against the partition's producer state (producers.h) first: a retried batch
 * appends nothing and returns SF_ERR_DUPLICATE with the offsets it was given the first time
 * in @info; SF_ERR_SEQUENCE, SF_ERR_PRODUCER_EPOCH and SF_ERR_TXN_STATE refuse the append.
 * @guard: 0, or the one sf_log_txn_verify_begin gave for the producer's batch (a batch that
 * would start a transaction is refused unless that verification still stands). */
int sf_log_append_validated(sf_log_t *log, uint8_t *batches, size_t len, int64_t now_ms,
                            uint64_t guard, sf_log_append_info_t *info);

/* Before the leader appends a transactional batch of @producer_id at @epoch: 0 when the
 * producer has a transaction ongoing here, else 1 with the guard the append must present
 * after the coordinator confirmed the partition is in the transaction (KIP-890; a marker
 * written meanwhile voids it). SF_ERR_NOMEM. */
int sf_log_txn_verify_begin(sf_log_t *log, int64_t producer_id, int16_t epoch, int64_t now_ms,
                            uint64_t *guard);

/* Write a transaction marker (a control batch) for @producer_id at @producer_epoch: commit
 * (@commit 1) or abort (0), stamped with @coordinator_epoch, as the partition's leader.
 * @offset gets the marker's offset. SF_ERR_PRODUCER_EPOCH when @producer_epoch is below the
 * producer's epoch here; SF_ERR_COORDINATOR_FENCED when @coordinator_epoch is below the one
 * the producer's last marker carried; SF_ERR_IO as sf_log_append. A producer with no ongoing
 * transaction here still gets its marker (as Kafka writes it).
 * The batch is Kafka's: attributes transactional | control, base sequence -1, timestamps
 * @now_ms, the leader epoch stamped as sf_log_append does, one record whose key is (version
 * int16 0, type int16: 0 abort, 1 commit) and value (version int16 0, coordinator epoch
 * int32). It ends the producer's ongoing transaction (moving the last stable offset), and an
 * abort of one indexes it (sf_log_aborted_txns, the segment's .txnindex). Replicated markers
 * (sf_log_append_replica) and those the log replays at open do the same.
 * As with every append, the caller wakes the fetches waiting on the partition
 * (sf_broker_notify_partition) and moves the high watermark when it leads alone. */
int sf_log_append_marker(sf_log_t *log, int64_t producer_id, int16_t producer_epoch,
                         int commit, int32_t coordinator_epoch, int64_t now_ms,
                         int64_t *offset);

/* The PartitionLeaderEpoch stamped into batches appended from now on (default 0). The first
 * batch appended with an epoch above the latest one in the epoch cache adds an entry (epoch,
 * its offset), for sf_log_append and sf_log_append_validated alike. */
void sf_log_set_leader_epoch(sf_log_t *log, int32_t leader_epoch);

/* ---- replication ---- */

/* Append record batches replicated from the leader: their BaseOffset and PartitionLeaderEpoch
 * are kept (nothing is rewritten; @batches is not written to). Every batch is validated as
 * sf_log_append does (framing, sizes, magic 2, CRC). The first batch must start at or after
 * the LEO (a gap is allowed, as compaction leaves them) and offsets must increase batch to
 * batch: else SF_ERR_RANGE and nothing is written (also when one call spans more than 2^31
 * offsets, as a segment cannot index that: split it). A batch whose PartitionLeaderEpoch is
 * above the latest epoch in the epoch cache adds an entry (epoch, its BaseOffset). The high
 * watermark is not moved. Producer batches are recorded in the producer state, unchecked.
 * @info (may be NULL) as sf_log_append's, FirstOffset the first batch's BaseOffset. @return SF_OK, SF_ERR_RANGE, or sf_log_append's errors. */
int sf_log_append_replica(sf_log_t *log, const uint8_t *batches, size_t len, int64_t now_ms,
                          sf_log_append_info_t *info);

/* Remove every record at and after @offset (a follower truncating to where its log and the
 * leader's agree). Segments that start after @offset are deleted, the one holding it is cut
 * at the batch boundary (@offset must be a batch boundary, or the LEO; else the cut is at the
 * start of the batch holding @offset; a segment starting exactly at @offset is emptied and
 * kept, as Kafka's truncateTo), indexes trimmed (the aborted transactions with a marker at or
 * after the cut too), the producer state (ongoing transactions included) reloaded as it was
 * at the cut, epoch cache entries starting at or after the
 * new LEO removed, the HW clamped to the new LEO. @offset == LEO only drops the epoch
 * entries that start there; @offset > LEO changes nothing.
 * @offset below the log start offset truncates everything and restarts the log at @offset
 * (Kafka's truncateFullyAndStartAt; the epoch cache is emptied). Segment files are removed
 * under the log mutex (a rare operation); slices held keep their segments readable.
 * @return SF_OK, SF_ERR_INVALID (@offset < 0) or SF_ERR_IO (also: the log is offline, or a
 * file could not be removed, logged, with the truncation done all the same). */
int sf_log_truncate(sf_log_t *log, int64_t offset);

/* Kafka's truncateFullyAndStartAt at any @offset, also past the LEO: every record goes, the
 * log (start, LEO, recovery point, an explicit high watermark) starts again at @offset, the
 * epoch cache is emptied. For a follower whose log ends below its leader's log start.
 * @return SF_OK, SF_ERR_INVALID (@offset < 0) or SF_ERR_IO (as sf_log_truncate). */
int sf_log_truncate_fully(sf_log_t *log, int64_t offset);

/* Set the high watermark explicitly (as sf_log_set_high_watermark) but only ever upwards:
 * a value below the current one is ignored (and a negative one). Clamped to the LEO. A log
 * whose high watermark follows the LEO holds it at the LEO from then on (explicit). Returns
 * 1 when it moved, else 0. */
int sf_log_advance_high_watermark(sf_log_t *log, int64_t hw);

/* The leader-epoch cache (Kafka's LeaderEpochFileCache): (epoch, start offset) pairs, kept in
 * <partition dir>/leader-epoch-checkpoint in Kafka's text format (version line "0", count line,
 * then "epoch startOffset" lines), replaced atomically (temp file, fsync, rename) whenever it
 * changes (under the log mutex: entries change only at leader changes, truncations and log
 * start moves); loaded at sf_log_open (entries past the LEO or below the log start dropped),
 * and rebuilt from the batch headers when missing or unreadable (then written, unless the log
 * is empty and the file was only missing). A failed write is retried by sf_log_flush.
 * Moving the log start offset (sf_log_delete_records, sf_log_retention) drops the entries
 * wholly below it and moves the first kept entry's start up to it. */

/* The leader became leader for @epoch at @start_offset (its LEO): add (epoch, start) if @epoch
 * is above the latest one; entries with a larger epoch or a start offset >= @start_offset are
 * dropped first, as Kafka's assign does. Also stamps @epoch on later appends like
 * sf_log_set_leader_epoch. */
void sf_log_epoch_assign(sf_log_t *log, int32_t epoch, int64_t start_offset);
/* The latest epoch in the cache, or -1 when empty. */
int32_t sf_log_latest_epoch(sf_log_t *log);
/* Kafka's endOffsetFor (OffsetForLeaderEpoch): for the largest cached epoch <= @epoch, the
 * epoch found and the start offset of the next larger epoch (or the LEO if it is the latest).
 * When @epoch is below every cached epoch: @epoch itself and the first cached epoch's start
 * offset (its batches are gone here; a follower truncates to that). Above the latest, or an
 * empty cache: found -1, end -1 (UNDEFINED). */
void sf_log_end_offset_for_epoch(sf_log_t *log, int32_t epoch, int32_t *found_epoch,
                                 int64_t *end_offset);

/* The log start offset: the first offset that can be read. The base offset of the oldest
 * segment, or higher after sf_log_delete_records. */
int64_t sf_log_start_offset(sf_log_t *log);
/* The base offset of the oldest segment (<= the log start offset; records between the two
 * are still on disk but no longer readable). */
int64_t sf_log_base_offset(sf_log_t *log);
/* The log end offset (LEO): the offset the next record will get. */
int64_t sf_log_end_offset(sf_log_t *log);
/* The high watermark: follows the LEO unless set with sf_log_set_high_watermark (replication);
 * it never exceeds the LEO. */
int64_t sf_log_high_watermark(sf_log_t *log);
/* The last stable offset (Kafka's UnifiedLog.lastStableOffset): the high watermark, or the
 * first offset of the oldest ongoing transaction when that is lower, never below the log
 * start offset. read_committed consumers read below it. O(1). */
int64_t sf_log_last_stable_offset(sf_log_t *log);

/* An aborted transaction: its producer, first offset and its abort marker's offset. */
typedef struct sf_aborted_txn {
    int64_t producer_id, first_offset, last_offset;
} sf_aborted_txn_t;
/* The aborted transactions with last offset >= @from and first offset < @to, oldest first,
 * into a malloc'd array (*@out, *@n; NULL/0 when none). SF_OK or SF_ERR_NOMEM/SF_ERR_IO. */
int sf_log_aborted_txns(sf_log_t *log, int64_t from, int64_t to, sf_aborted_txn_t **out,
                        size_t *n);

/* The high watermark as far as it is known: the one set explicitly (replication), else the
 * one the replication-offset-checkpoint gave at open. 1 with *@hw, or 0 when neither is
 * (*@hw -1): a log whose high watermark follows its LEO says nothing about what the ISR has. */
int sf_log_known_high_watermark(sf_log_t *log, int64_t *hw);
/* The high watermark the log directory's replication-offset-checkpoint gave at open (clamped
 * to the LEO then), or -1; set by the log directory (the log does not use it itself). */
int64_t sf_log_checkpointed_high_watermark(sf_log_t *log);
void sf_log_set_checkpointed_high_watermark(sf_log_t *log, int64_t hw);

/* Set the high watermark explicitly; from then on appends no longer move it. Clamped to
 * [start, LEO]. Pass -1 to return to "high watermark == LEO". */
void sf_log_set_high_watermark(sf_log_t *log, int64_t hw);
/* Bytes held by all segments. */
int64_t sf_log_size_bytes(sf_log_t *log);
/* Number of segments (>= 1). */
size_t sf_log_segment_count(sf_log_t *log);

/* Find the batch holding @offset and return whole batches from there in @out: at most
 * @max_bytes but always at least the first whole batch (KIP-74), never a batch whose first
 * offset is >= @max_offset (pass the high watermark; INT64_MAX for no bound). Reads one
 * segment per call. offset == LEO (or no batch below @max_offset) -> SF_OK with len 0 and
 * seg NULL. offset outside [start, LEO] -> SF_ERR_RANGE. On success with len > 0, out->seg
 * holds a reference the caller drops with sf_log_slice_release.
 * Every batch header returned is checked (length, magic, offsets); one that does not check
 * out takes the log offline (logged once). CRCs are not computed here (the zero-copy path
 * never reads the bytes it sends): recovery checks them, and so do clients.
 * @return SF_OK, SF_ERR_RANGE, SF_ERR_IO (also: offline). */
int sf_log_read(sf_log_t *log, int64_t offset, int32_t max_bytes, int64_t max_offset,
                sf_log_slice_t *out);

/* Copy the bytes of @sl (sl->len of them) into @buf. Any thread.
 * @return SF_OK, SF_ERR_CORRUPT (the file is shorter) or SF_ERR_IO. */
int sf_log_slice_copy(const sf_log_slice_t *sl, uint8_t *buf);
/* The compression codecs of the batches in @sl, as bits 1 << codec, into *@mask. Any thread.
 * @return SF_OK, SF_ERR_CORRUPT or SF_ERR_IO. */
int sf_log_slice_codecs(const sf_log_slice_t *sl, unsigned *mask);

/* The offset after the last batch of @sl (its batch headers are read) into *@next; -1 for
 * an empty slice. Any thread. @return SF_OK, SF_ERR_CORRUPT or SF_ERR_IO. */
int sf_log_slice_next_offset(const sf_log_slice_t *sl, int64_t *next);

/* Drop the reference taken by sf_log_read; NULL ok; thread-safe. The segment's fd is closed
 * when its last reference goes, even if retention already unlinked its files. */
void sf_log_slice_release(sf_segment_t *seg);

/* The first offset whose record timestamp is >= @timestamp (time index, then a scan using
 * batch MaxTimestamp, then the records of that batch, decompressed when needed). In a
 * LogAppendTime batch every record has the batch's time: its first offset is returned.
 * Never an offset below the log start offset (sf_log_delete_records).
 * @return SF_OK with *@offset and *@found_timestamp, or SF_ERR_NOTFOUND if no record
 * qualifies, SF_ERR_IO. */
int sf_log_offset_for_timestamp(sf_log_t *log, int64_t timestamp, int64_t *offset,
                                int64_t *found_timestamp);

/* The largest timestamp in the log and the offset that carries it (ListOffsets
 * MAX_TIMESTAMP, KIP-734). @return SF_OK, or SF_ERR_NOTFOUND for an empty log. */
int sf_log_max_timestamp(sf_log_t *log, int64_t *offset, int64_t *timestamp);

/* fsync the segment files (and their indexes) up to the current LEO and advance the recovery
 * point to it. Thread-safe: may run on a background thread while the loop appends (the fsync
 * runs outside the log mutex). @return SF_OK or SF_ERR_IO. */
int sf_log_flush(sf_log_t *log);

/* Offsets below the recovery point are known to be on disk. */
int64_t sf_log_recovery_point(sf_log_t *log);

/* 1 if flush_messages records were appended since the last flush or flush_ms elapsed since
 * then (and something is unflushed), else 0. Thread-safe. */
int sf_log_needs_flush(sf_log_t *log, int64_t now_ms);

/* Delete whole old segments, never the active one: those whose largest timestamp is older
 * than retention_ms, and the oldest while the log exceeds retention_bytes. Advances the start
 * offset. Rolls the active segment when it is non-empty and roll_ms elapsed.
 * @return the number of segments deleted (>= 0) or SF_ERR_IO. */
int sf_log_retention(sf_log_t *log, int64_t now_ms);

/* DeleteRecords: move the log start offset up to @offset (-1: the high watermark). Every
 * whole segment below it is removed (never the active one); slices held keep their segment
 * readable until released. An offset below the current start changes nothing. The new start
 * is not durable by itself: the log directory checkpoints it (logdir.h).
 * @low_watermark (may be NULL) receives the log start offset afterwards.
 * @return SF_OK; SF_ERR_RANGE (nothing changed) when @offset is above the high watermark or
 * negative other than -1; SF_ERR_NOMEM (nothing changed); SF_ERR_IO when a segment file could
 * not be removed (logged; the start offset has moved all the same). */
int sf_log_delete_records(sf_log_t *log, int64_t offset, int64_t *low_watermark);

/* Replace the configuration (topic config change); @cfg is copied. Applies to later appends,
 * rolls and retention. */
void sf_log_set_config(sf_log_t *log, const sf_log_config_t *cfg);
/* A copy of the configuration. */
void sf_log_get_config(sf_log_t *log, sf_log_config_t *out);

/* Close the log and remove its directory and files (topic deletion); frees @log. Held slices
 * stay readable until released. The caller makes sure no sf_log_flush runs on @log
 * (sf_logdir_remove does). @return SF_OK or SF_ERR_IO (the log is freed anyway). */
int sf_log_delete(sf_log_t *log);

/* fsync the directory @path (making its entries durable). @return SF_OK or SF_ERR_IO. */
int sf_log_fsync_dir(const char *path);

/* A hash of (@topic, @partition) for tables of partitions (FNV-1a). */
uint64_t sf_log_key_hash(const char *topic, int32_t partition);

/* Forget the producers idle for @expiration_ms at @now_ms (producer.id.expiration.ms), but
 * never one with an ongoing transaction. @return how many went. Thread-safe. */
size_t sf_log_expire_producers(sf_log_t *log, int64_t now_ms, int64_t expiration_ms);

/* A copy of producer @producer_id's state here. @return SF_OK or SF_ERR_NOTFOUND. */
struct sf_producer;
int sf_log_producer(sf_log_t *log, int64_t producer_id, struct sf_producer *out);
/* Copies of every producer's state here (DescribeProducers): *@out is malloc'd (free it),
 * *@n entries, in no order. @return SF_OK or SF_ERR_NOMEM. Thread-safe. */
int sf_log_producers_list(sf_log_t *log, struct sf_producer **out, size_t *n);

/* The topic (owned by @log) and partition. */
const char *sf_log_topic(const sf_log_t *log);
int32_t sf_log_partition(const sf_log_t *log);
/* The partition directory path (owned by @log). */
const char *sf_log_path(const sf_log_t *log);

/* 1 when the log is offline on this broker: a batch that does not check out was found with
 * data after it (at open, or by a read). Reads, appends, lookups and DeleteRecords then fail
 * with SF_ERR_IO (KAFKA_STORAGE_ERROR); flush and retention leave it alone. Thread-safe. */
int sf_log_offline(sf_log_t *log);

#endif
