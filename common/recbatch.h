/* Kafka RecordBatch v2 (magic 2): header parsing, full validation, a record iterator for
 * uncompressed batches and a builder.
 *
 * Batch layout (all integers big-endian):
 *   BaseOffset i64 | BatchLength i32 (bytes after this field) | PartitionLeaderEpoch i32 |
 *   Magic i8 | CRC u32 (CRC32C over Attributes..end) | Attributes i16 | LastOffsetDelta i32 |
 *   BaseTimestamp i64 | MaxTimestamp i64 | ProducerId i64 | ProducerEpoch i16 |
 *   BaseSequence i32 | RecordCount i32 | records...
 * Record: varint Length | Attributes i8 | varlong TimestampDelta | varint OffsetDelta |
 *   varbytes Key | varbytes Value | varint HeaderCount | headers (varbytes key, varbytes value).
 */
#ifndef SF_RECBATCH_H
#define SF_RECBATCH_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* Fixed batch header size (BaseOffset .. RecordCount). */
#define SF_RECBATCH_HEADER_SIZE 61
/* Bytes before BatchLength's count starts (BaseOffset + BatchLength). */
#define SF_RECBATCH_LOG_OVERHEAD 12
/* The smallest BatchLength a valid header can carry (header minus the log overhead). */
#define SF_RECBATCH_MIN_BATCH_LENGTH (SF_RECBATCH_HEADER_SIZE - SF_RECBATCH_LOG_OVERHEAD)
/* Byte offsets of the header fields. */
#define SF_RECBATCH_OFF_BASE_OFFSET 0
#define SF_RECBATCH_OFF_BATCH_LENGTH 8
#define SF_RECBATCH_OFF_LEADER_EPOCH 12
#define SF_RECBATCH_OFF_MAGIC 16
#define SF_RECBATCH_OFF_CRC 17
#define SF_RECBATCH_OFF_ATTRIBUTES 21
#define SF_RECBATCH_OFF_LAST_OFFSET_DELTA 23
#define SF_RECBATCH_OFF_BASE_TIMESTAMP 27
#define SF_RECBATCH_OFF_MAX_TIMESTAMP 35
#define SF_RECBATCH_OFF_PRODUCER_ID 43
#define SF_RECBATCH_OFF_PRODUCER_EPOCH 51
#define SF_RECBATCH_OFF_BASE_SEQUENCE 53
#define SF_RECBATCH_OFF_RECORD_COUNT 57

/* Attributes bits. */
#define SF_RECBATCH_ATTR_COMPRESSION_MASK 0x07 /* 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd */
#define SF_RECBATCH_ATTR_LOG_APPEND_TIME 0x08  /* timestamp type: 1 = LogAppendTime */
#define SF_RECBATCH_ATTR_TRANSACTIONAL 0x10
#define SF_RECBATCH_ATTR_CONTROL 0x20

/* The type in a control record's key (Kafka's ControlRecordType): transaction markers. */
#define SF_RECBATCH_CONTROL_ABORT 0
#define SF_RECBATCH_CONTROL_COMMIT 1

/* The batch header, fields named as in Kafka. */
typedef struct sf_recbatch_hdr {
    int64_t BaseOffset;
    int32_t BatchLength;
    int32_t PartitionLeaderEpoch;
    int8_t Magic;
    uint32_t Crc;
    int16_t Attributes;
    int32_t LastOffsetDelta;
    int64_t BaseTimestamp;
    int64_t MaxTimestamp;
    int64_t ProducerId;
    int16_t ProducerEpoch;
    int32_t BaseSequence;
    int32_t RecordCount;
} sf_recbatch_hdr_t;

/* The offset after the batch's last record (BaseOffset + LastOffsetDelta + 1). The fields come
 * from the wire, so the sum wraps as Java's long arithmetic does instead of overflowing. */
static inline int64_t sf_recbatch_next_offset(const sf_recbatch_hdr_t *hdr) {
    return (int64_t)((uint64_t)hdr->BaseOffset + (uint64_t)(int64_t)hdr->LastOffsetDelta + 1);
}

/* One record header (key is a string, value nullable bytes). Slices borrow the batch. */
typedef struct sf_recbatch_rechdr {
    sf_slice_t key;
    sf_slice_t value; /* len -1 = null */
} sf_recbatch_rechdr_t;

/* One record.
 * Filled by sf_recbatch_iter_next (slices borrow the batch bytes; headers_raw holds the
 * header_count encoded headers, read them with sf_recbatch_rechdr_read; headers is NULL).
 * Read by sf_recbatch_build (offset and attributes and headers_raw are ignored; timestamp is
 * absolute; headers points to header_count entries, may be NULL when header_count is 0). */
typedef struct sf_recbatch_record {
    int64_t offset;    /* BaseOffset + OffsetDelta */
    int64_t timestamp; /* BaseTimestamp + TimestampDelta (MaxTimestamp for LogAppendTime) */
    int8_t attributes;
    sf_slice_t key;   /* len -1 = null */
    sf_slice_t value; /* len -1 = null */
    int32_t header_count;
    sf_slice_t headers_raw;              /* iterator output */
    const sf_recbatch_rechdr_t *headers; /* builder input, borrowed */
} sf_recbatch_record_t;

/* Parse the fixed header at @p (no CRC check).
 * @batch_size receives the whole batch size (BatchLength + 12).
 * @return SF_OK when @len holds the header and the whole batch; SF_AGAIN when fewer than 61
 * bytes or fewer than the whole batch are present (@hdr and @batch_size are still filled once
 * 61 bytes are there); SF_ERR_MALFORMED when BatchLength is impossible (smaller than the
 * header). */
int sf_recbatch_header_parse(const uint8_t *p, size_t len, sf_recbatch_hdr_t *hdr,
                             size_t *batch_size);

/* Fully check ONE batch occupying exactly @len bytes at @p; @hdr receives its header (may be
 * NULL).
 * @return SF_OK; SF_ERR_UNSUPPORTED when Magic != 2; SF_ERR_CORRUPT when the CRC32C does not
 * match; SF_ERR_MALFORMED when sizes are inconsistent, RecordCount < 1,
 * LastOffsetDelta + 1 != RecordCount, or (uncompressed batches) a record does not decode
 * inside the batch or the OffsetDeltas are not 0..count-1 in order. Compressed batches are
 * checked up to the CRC only (the broker does not decompress). */
int sf_recbatch_validate(const uint8_t *p, size_t len, sf_recbatch_hdr_t *hdr);

/* What sf_recbatch_records_scan found in a batch's records. */
typedef struct sf_recbatch_scan {
    int64_t max_timestamp; /* the largest record timestamp, at least -1 */
    int64_t min_timestamp; /* the smallest */
    int32_t null_keys;     /* records with a null key */
} sf_recbatch_scan_t;

/* Walk the records section @records (@len bytes, decompressed) of a batch with header @hdr
 * with sf_recbatch_validate's rules (and non-null header keys), gathering @scan; timestamps
 * are BaseTimestamp plus each delta, whatever the timestamp type.
 * @return SF_OK or SF_ERR_MALFORMED. */
int sf_recbatch_records_scan(const sf_recbatch_hdr_t *hdr, const uint8_t *records, size_t len,
                             sf_recbatch_scan_t *scan);

/* Rewrite the fields not covered by the CRC, in place. */
void sf_recbatch_set_base_offset(uint8_t *p, int64_t base_offset);
void sf_recbatch_set_leader_epoch(uint8_t *p, int32_t leader_epoch);

/* Iterator over the records of one uncompressed batch. All fields are private. */
typedef struct sf_recbatch_iter {
    sf_recbatch_hdr_t hdr;
    sf_rbuf_t rb;   /* over the records section */
    int32_t index;  /* records returned so far */
    int err;
} sf_recbatch_iter_t;

/* Start iterating the batch at @p (exactly @len bytes, borrowed for the iterator's life). The
 * CRC is not checked here (use sf_recbatch_validate first on untrusted bytes).
 * @return SF_OK; SF_ERR_MALFORMED when the header or BatchLength does not fit @len;
 * SF_ERR_UNSUPPORTED when Magic != 2 or the batch is compressed. */
int sf_recbatch_iter_init(sf_recbatch_iter_t *it, const uint8_t *p, size_t len);

/* Start iterating a records section that lives apart from its header (e.g. the decompressed
 * payload of a compressed batch). @hdr is copied; @records (@len bytes) is borrowed. */
void sf_recbatch_iter_init_records(sf_recbatch_iter_t *it, const sf_recbatch_hdr_t *hdr,
                                   const uint8_t *records, size_t len);

/* Decode the next record into @rec (slices borrow the batch).
 * @return SF_OK with a record; SF_ERR_NOTFOUND when all RecordCount records were returned;
 * SF_ERR_MALFORMED when a record does not decode (the iterator then stays failed). */
int sf_recbatch_iter_next(sf_recbatch_iter_t *it, sf_recbatch_record_t *rec);

/* Read one record header from @rb (initialised over a record's headers_raw); call it
 * header_count times. @return SF_OK or SF_ERR_MALFORMED. */
int sf_recbatch_rechdr_read(sf_rbuf_t *rb, sf_recbatch_rechdr_t *h);

/* Append one uncompressed batch of @n (>= 1) records to @wb: BaseOffset @base_offset,
 * BaseTimestamp @base_timestamp, MaxTimestamp the largest record timestamp, OffsetDeltas
 * 0..n-1, PartitionLeaderEpoch -1, no producer id (-1/-1/-1), correct CRC.
 * @recs is borrowed. @return SF_OK, SF_ERR_INVALID (n < 1), or wb->err. */
int sf_recbatch_build(sf_wbuf_t *wb, int64_t base_offset, int64_t base_timestamp,
                      const sf_recbatch_record_t *recs, int n);

/* Same as sf_recbatch_build with the header fields taken from @tmpl: BaseOffset,
 * PartitionLeaderEpoch, Attributes (compression bits must be 0), BaseTimestamp, ProducerId,
 * ProducerEpoch, BaseSequence. The other fields are computed. */
int sf_recbatch_build_hdr(sf_wbuf_t *wb, const sf_recbatch_hdr_t *tmpl,
                          const sf_recbatch_record_t *recs, int n);

/* Append a batch whose records section was prepared by the caller (e.g. compressed
 * records): header fields from @tmpl (Attributes as given, LastOffsetDelta, MaxTimestamp and
 * RecordCount as given), then @records, with BatchLength and CRC computed. */
int sf_recbatch_build_raw(sf_wbuf_t *wb, const sf_recbatch_hdr_t *tmpl, const uint8_t *records,
                          size_t len);

/* Append the records section for @recs (OffsetDeltas 0..n-1, timestamps relative to
 * @base_timestamp) without a batch header; for callers that compress it. */
int sf_recbatch_encode_records(sf_wbuf_t *wb, int64_t base_timestamp,
                               const sf_recbatch_record_t *recs, int n);

#endif
