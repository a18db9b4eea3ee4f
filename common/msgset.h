/* Kafka legacy message sets (magic 0 and 1, the formats before RecordBatch v2), converted to
 * and from v2 record batches: up-conversion when Produce v0-v2 appends, down-conversion when
 * Fetch v0-v3 reads.
 *
 * Message set layout (all integers big-endian), a sequence of entries:
 *   Offset i64 | MessageSize i32 (bytes after this field) | Message
 * Message ("LegacyRecord"):
 *   Crc u32 (CRC-32 IEEE over Magic..end) | Magic i8 (0 or 1) | Attributes i8 |
 *   Timestamp i64 (magic 1 only) | Key bytes (i32 length, -1 null) |
 *   Value bytes (i32 length, -1 null)
 * Attributes: bits 0-2 codec (0 none, 1 gzip, 2 snappy, 3 lz4; zstd never appears in magic 0/1),
 * bit 3 timestamp type (magic 1 only: 0 CreateTime, 1 LogAppendTime).
 *
 * A compressed message (a "wrapper") holds a whole compressed inner message set in its Value.
 * Magic 1 wrappers: inner offsets are relative (0..n-1) and the wrapper's Offset is the absolute
 * offset of the last inner message; a LogAppendTime wrapper gives every inner message its own
 * Timestamp. Magic 0 wrappers: inner offsets are absolute. Inner messages are never compressed.
 * Framings: gzip, snappy (xerial) and lz4 frames as compress.h describes; lz4 in magic 0 carries
 * the frame header checksum computed over the frame magic too (the historic Kafka bug,
 * KAFKA-3160), which is accepted on input and written on output. */
#ifndef SF_MSGSET_H
#define SF_MSGSET_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* Bytes before a message (Offset + MessageSize). */
#define SF_MSGSET_LOG_OVERHEAD 12
/* Byte offset of the first entry's Magic: Offset, MessageSize, Crc. It is also where a v2
 * batch keeps its Magic (2). */
#define SF_MSGSET_OFF_MAGIC 16
/* The smallest MessageSize of each magic (Crc, Magic, Attributes, [Timestamp], two lengths). */
#define SF_MSGSET_MIN_MESSAGE_V0 14
#define SF_MSGSET_MIN_MESSAGE_V1 22

/* Attributes bits. */
#define SF_MSGSET_ATTR_COMPRESSION_MASK 0x07
#define SF_MSGSET_ATTR_LOG_APPEND_TIME 0x08 /* magic 1 only */

/* What sf_msgset_to_batch found in the message set. */
typedef struct sf_msgset_info {
    int32_t count;         /* records (inner messages of wrappers counted one by one) */
    int8_t magic;          /* 0 or 1 */
    int8_t codec;          /* the source codec: the last wrapper's, 0 when none was compressed */
    int log_append_time;   /* every record had timestamp type LogAppendTime (magic 1) */
    int64_t max_timestamp; /* the largest record timestamp; -1 (NO_TIMESTAMP) for magic 0 */
} sf_msgset_info_t;

/* The Magic byte of the first entry of @p (@len bytes, borrowed): 0..255 (0 or 1 for a legacy
 * message set, 2 for a v2 record batch), or -1 when @len is too short to hold it. Nothing else
 * is checked. */
int sf_msgset_magic(const uint8_t *p, size_t len);

/* Up-conversion: check the legacy message set at @p (exactly @len bytes, borrowed) and APPEND
 * one v2 record batch holding all its records in order to @out.
 *
 * Checked: every entry and every inner message of a wrapper (CRC, sizes filling the set and the
 * message exactly, key and value inside the message), one magic (0 or 1) throughout including
 * inner messages, codecs 0-3, no compressed inner message, a non-null Value in wrappers that
 * decompresses to at least one message, at least one record in all. Offsets in the set are not
 * checked: the batch gets new ones.
 * The batch: BaseOffset 0, PartitionLeaderEpoch -1, no producer (id, epoch, sequence -1),
 * OffsetDeltas 0..n-1, no record headers, BaseTimestamp the first record's timestamp,
 * MaxTimestamp the largest. Timestamps: magic 0 records get -1 (NO_TIMESTAMP); magic 1 records
 * their own, or the wrapper's for inner messages of a LogAppendTime wrapper. The batch has
 * timestamp type LogAppendTime only when every record had it (a v2 reader then sees
 * MaxTimestamp on every record); otherwise CreateTime, with each record's timestamp kept.
 * @codec: the batch's codec 0-4 (compressed at the codec's default level), or -1 to keep the
 * source's (info->codec).
 * @max_decompressed: cap on the total bytes the wrappers decompress to.
 * @info: filled on success; may be NULL.
 * On failure @out is left at its length on entry.
 * @return SF_OK; SF_ERR_CORRUPT (a CRC mismatch, or a wrapper Value that does not decompress);
 * SF_ERR_MALFORMED (structure: an entry cut short, a size that lies, mixed magics, nested
 * compression, no records); SF_ERR_UNSUPPORTED (a Magic other than 0/1, or a codec above 3 in
 * the set); SF_ERR_TOOLARGE (past @max_decompressed); SF_ERR_INVALID (@codec out of range);
 * SF_ERR_NOMEM, or @out->err if @out had already failed. */
int sf_msgset_to_batch(const uint8_t *p, size_t len, int codec, size_t max_decompressed,
                       sf_wbuf_t *out, sf_msgset_info_t *info);

/* Down-conversion: APPEND to @out the records of the v2 batches at @p (@len bytes, borrowed,
 * as stored in a log: BaseOffset set) as a message set of magic @magic (0 or 1).
 *
 * Batches are taken in order and each is checked (sf_recbatch_validate) first. A control batch
 * is skipped. An uncompressed batch becomes one message per record, at its absolute offset. A
 * compressed batch becomes one wrapper of the same codec whose Value is the compressed inner
 * set: magic 1 inner offsets 0..n-1 and the wrapper at the last record's offset; magic 0 inner
 * offsets absolute (the wrapper at the last one too). Magic 1 keeps timestamps and the
 * timestamp type (a LogAppendTime batch: Attributes bit 3 on every message and the wrapper,
 * all at the batch's MaxTimestamp; a CreateTime wrapper carries its largest inner timestamp);
 * magic 0 drops them. Record headers are dropped. Keys and values are copied.
 *
 * Conversion stops (SF_OK) before an incomplete final batch, which is left alone, and before a
 * batch whose messages would take the output appended in this call past @max_out bytes or
 * whose records would take the decompressed bytes of this call past @max_decompressed; but
 * the first converted batch is always converted whole (KIP-74), so a large one is not stuck.
 * @consumed (may be NULL) receives the input bytes converted or skipped (0 on failure).
 * On failure @out is left at its length on entry.
 * @return SF_OK (also when the input is empty or only control batches: 0 bytes appended);
 * SF_ERR_MALFORMED or SF_ERR_CORRUPT for a batch that does not parse or decode (including a
 * batch that is not magic 2); SF_ERR_UNSUPPORTED for a zstd batch (old fetch versions cannot
 * read zstd: answer UNSUPPORTED_COMPRESSION_TYPE); SF_ERR_TOOLARGE when the first converted
 * batch alone passes @max_decompressed; SF_ERR_INVALID for @magic other than 0/1;
 * SF_ERR_NOMEM, or @out->err if @out had already failed. */
int sf_msgset_from_batches(const uint8_t *p, size_t len, int8_t magic, size_t max_out,
                           size_t max_decompressed, sf_wbuf_t *out, size_t *consumed);

#endif
