/* The fake broker the Kafka request handler tests (check_kafka.c, check_kafka_admin.c) run
 * against: no ZooKeeper, no sockets.
 *
 * kafka_fixture.c defines the broker.h accessors and the server.h functions the handlers use
 * (they link against broker/libsfbrokercore.la, which has neither broker.c nor server.c): a
 * broker with a configuration read from properties, a metadata snapshot built from parts
 * (broker 1 alive with a PLAINTEXT endpoint and leading every partition) in a real view with
 * real logs in a temporary directory, a real purgatory on a real event_base, so long polls run
 * with event_base_loop, and I/O "threads" that run every job at once on the caller's thread;
 * requests for the metadata thread run at once too. sf_req_respond copies the response body
 * (spliced log ranges included) and decodes it with the generated codec; send_msg() encodes a
 * request with the generated encoder, frames it as the server does and dispatches it. */
#ifndef SF_TEST_KAFKA_FIXTURE_H
#define SF_TEST_KAFKA_FIXTURE_H

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "broker.h"
#include "brokercfg.h"
#include "buf.h"
#include "clock.h"
#include "cluster.h"
#include "compress.h"
#include "crc32c.h"
#include "dispatch.h"
#include "group.h"
#include "err.h"
#include "iopool.h"
#include "kmsg.h"
#include "log.h"
#include "logging.h"
#include "msgset.h"
#include "props.h"
#include "proto.h"
#include "purgatory.h"
#include "recbatch.h"
#include "server.h"
#include "throttle.h"
#include "topiccfg.h"
#include "view.h"

/* ---- the fake broker (broker.h) ---- */

#define MAX_LOGS 8

#define ENDPOINT "PLAINTEXT://127.0.0.1:9092"

struct sf_broker {
    struct event_base *base;
    sf_brokercfg_t *cfg;
    sf_cluster_snapshot_t *snap;
    sf_view_t *view; /* of snap and parts (refresh_view after changing snap) */
    sf_purgatory_t *purgatory;
    sf_iopool_t *io;
    sf_topiccfg_ctx_t topiccfg;
    sf_log_t *logs[MAX_LOGS];
    sf_partition_t *parts[MAX_LOGS];
    int nlogs;
    const char *endpoints[1];
};

/* ---- the fake server (server.h): every request has its own connection and reply ---- */

enum { R_PENDING, R_BODY, R_NONE, R_CLOSED };

typedef struct reply reply_t;

struct sf_conn {
    reply_t *reply;
    int jobs;
};

struct reply {
    struct sf_conn conn;
    int state;            /* R_* */
    int16_t api, version; /* of the request */
    uint8_t *body;        /* the response body, spliced ranges copied in */
    size_t len;
    sf_arena_t arena; /* the decoded response */
    void *msg;
    reply_t *next;
};

/* ---- fixture: the broker's parts ---- */

typedef struct topic_def {
    const char *name;
    int npartitions;
    const char *config[2]; /* one override (name, value) or none */
} topic_def_t;

#define NTOPICS 4

/* ---- records ---- */

/* What a fetch returned, record by record. */
typedef struct got_rec {
    int64_t offset, timestamp;
    char key[32], value[32];
} got_rec_t;

typedef struct got {
    int nrecs, nbatches;
    got_rec_t recs[64];
    sf_recbatch_hdr_t hdrs[16]; /* of each batch (v2) */
} got_t;

/* ---- requests ---- */

/* ---- the fixture's state and helpers (kafka_fixture.c) ---- */

extern struct sf_broker fb;

/* The transaction coordinator's answer to a leader's verification: @fake_verify_err for every
 * partition, after an abort marker for the producer in @fake_verify_abort (when set: the
 * transaction ends while its partition is verified). */
extern int16_t fake_verify_err;

extern int fake_verify_calls;

extern sf_log_t *fake_verify_abort;

/* Sorted by name, as snapshot configs are. */
extern const topic_def_t topic_defs[NTOPICS];

/* The TransactionalId of the Produce requests below. */
extern const char *produce_txn_id;

/* The IsolationLevel of the Fetch and ListOffsets requests below (1: read_committed). */
extern int8_t isolation;

/* A new view of fb.snap, as the broker publishes one for each snapshot. */
void refresh_view(void);

/* Frame @body (@len bytes) behind a request header as a client would, turn it into an
 * sf_req_t as conn_dispatch does, and dispatch it. The reply may still be pending (parked). */
reply_t *send_raw(int16_t api, int16_t version, const void *body, size_t len);

/* The request struct @msg of API @api encoded at @version with the generated encoder. */
void encode_msg(int16_t api, int16_t version, const void *msg, sf_wbuf_t *wb);

/* send_raw of @msg encoded with the generated encoder (encode_msg). */
reply_t *send_msg(int16_t api, int16_t version, const void *msg);

/* The decoded response of an answered request. */
void *body_of(const reply_t *r);

void setup(void);

void teardown(void);

sf_log_t *log_of(const char *topic, int32_t partition);

sf_uuid_t uuid_of(const char *topic);

/* Append one v2 batch of @recs as a producer builds it: Attributes @attrs (codec and flag
 * bits; codecs 1-4 compress the records section), no producer id, BaseOffset 0,
 * BaseTimestamp the first record's, MaxTimestamp the largest. */
void put_records(sf_wbuf_t *wb, int16_t attrs, const sf_recbatch_record_t *recs, int n);

/* put_records of @n records "<tag>-k<i>" / "<tag>-v<i>" with timestamps @ts. */
void put_batch(sf_wbuf_t *wb, int16_t attrs, const int64_t *ts, int n, const char *tag);

/* A batch of @n records with timestamps 1000, 2000, ... */
void put_simple(sf_wbuf_t *wb, int16_t attrs, int n, const char *tag);

/* Recompute the CRC of the batch at @p after a change to the bytes it covers. */
void reseal(uint8_t *p, size_t size);

/* Append one uncompressed legacy message (magic 0 or 1) to a message set. */
void put_message(sf_wbuf_t *wb, int magic, int64_t offset, int64_t ts, const char *key,
                 const char *value);

/* Parse the record batches of a fetched partition (each CRC checked, compressed ones
 * decompressed). */
void got_batches(sf_slice_t records, got_t *g);

/* Parse a fetched legacy message set: every message of @magic, CRC checked, uncompressed. */
void got_messages(sf_slice_t records, int magic, got_t *g);

/* Produce @records (@len bytes) to one partition with @acks. */
reply_t *produce(int16_t v, const char *topic, int32_t partition, const void *records,
                 size_t len, int16_t acks);

/* The one partition of a produce response. */
sf_proto_ProduceResponse_PartitionProduceResponse_t *produced(const reply_t *r);

/* Produce and expect success; returns the base offset. */
int64_t produce_ok(int16_t v, const char *topic, int32_t partition, const sf_wbuf_t *wb);

/* Fetch one partition from @offset. From v13 the topic goes by @id, or by the id the snapshot
 * gives @topic when @id is NULL. */
reply_t *fetch_id(int16_t v, const char *topic, const sf_uuid_t *id, int32_t partition,
                  int64_t offset, int32_t max_wait, int32_t min_bytes,
                  int32_t partition_max);

/* fetch_id by name, without waiting, 1 MiB for the partition. */
reply_t *fetch(int16_t v, const char *topic, int32_t partition, int64_t offset);

/* The one partition of a fetch response. */
sf_proto_FetchResponse_PartitionData_t *fetched(const reply_t *r);

/* Fetch and parse what comes back in the version's message format. */
sf_proto_FetchResponse_PartitionData_t *fetch_got(int16_t v, const char *topic,
                                                  int32_t partition, int64_t offset,
                                                  got_t *g);

/* ListOffsets of one partition at timestamp @ts: its answer. */
sf_proto_ListOffsetsResponse_ListOffsetsPartitionResponse_t *
listed(int16_t v, const char *topic, int32_t partition, int64_t ts);

/* Metadata for @n topics by name (@n -1: a null array). */
sf_proto_MetadataResponse_t *metadata(int16_t v, const char *const *names, int n,
                                      bool allow_auto_create);

sf_proto_DescribeConfigsResponse_DescribeConfigsResult_t *
describe_topic(int16_t v, const char *topic, bool synonyms);

const sf_proto_DescribeConfigsResponse_DescribeConfigsResourceResult_t *
config_entry(const sf_proto_DescribeConfigsResponse_DescribeConfigsResult_t *rr,
             const char *name);

sf_proto_DeleteRecordsResponse_DeleteRecordsPartitionResult_t *
delete_records(int16_t v, const char *topic, int32_t partition, int64_t offset);

/* Run suite @s (setup and teardown as its fixtures) in a base directory named after @name,
 * removed at the end; the exit status for main(). */
int kafka_fixture_main(Suite *s, const char *name);

#endif
