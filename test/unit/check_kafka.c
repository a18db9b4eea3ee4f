/* Unit tests for the Kafka request handlers (broker/kafka/) over a fake broker: no ZooKeeper,
 * no sockets.
 *
 * This file defines the broker.h accessors and the server.h functions the handlers use (they
 * link against broker/libsfbrokercore.la, which has neither broker.c nor server.c): a broker
 * with a configuration read from properties, a metadata snapshot built from parts (broker 1
 * alive with a PLAINTEXT endpoint and leading every partition) in a real view with real logs
 * in a temporary directory, a real purgatory on a real event_base, so long polls run with
 * event_base_loop, and I/O "threads" that run every job at once on the caller's thread;
 * requests for the metadata thread run at once too. sf_req_respond copies the response body (spliced log ranges included) and
 * decodes it with the generated codec; send_msg() encodes a request with the generated encoder,
 * frames it as the server does and dispatches it.
 *
 * core: every API version the dispatcher serves for ApiVersions, Produce, Fetch, ListOffsets,
 *       Metadata, DescribeConfigs, DeleteRecords and OffsetForLeaderEpoch, legacy message
 *       formats both ways, topic configs that change what is stored (LogAppendTime,
 *       compression.type), long polls, dynamic broker configs (DescribeConfigs, validate-only
 *       IncrementalAlterConfigs).
 * limits: unknown APIs and versions, bodies that do not decode, every refusal of a produce
 *       (nothing stored), unknown topics, ids, partitions and offsets, wait expiry, size
 *       limits of a fetch. */
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

static struct sf_broker fb;
static char basedir[64]; /* made by main() and removed at the end, failed tests' logs too */
static char tmpdir[96];  /* one test's log directory inside it */

const sf_brokercfg_t *sf_broker_cfg(const sf_broker_t *b) {
    return b->cfg;
}

sf_view_t *sf_broker_view(sf_broker_t *b) {
    return b->view;
}

/* Never registered in ZooKeeper: admin writes and auto-creation find no cluster. */
sf_cluster_t *sf_broker_cluster(sf_broker_t *b) {
    (void)b;
    return NULL;
}

sf_coord_t *sf_broker_coordinator(sf_broker_t *b) {
    (void)b;
    return NULL;
}

struct sf_txn_coord *sf_broker_txn_coordinator(sf_broker_t *b) {
    (void)b;
    return NULL;
}

/* The transaction coordinator's answer to a leader's verification: @fake_verify_err for every
 * partition, after an abort marker for the producer in @fake_verify_abort (when set: the
 * transaction ends while its partition is verified). */
static int16_t fake_verify_err;
static int fake_verify_calls;
static sf_log_t *fake_verify_abort;

int sf_broker_verify_txn(sf_broker_t *b, const sf_cluster_snapshot_t *snap, const char *txn_id,
                         int64_t producer_id, int16_t epoch, const struct sf_txn_tp *parts,
                         int n, int timeout_ms, void (*cb)(void *arg, const int16_t *errs),
                         void *arg) {
    int16_t errs[8];
    int i;
    (void)b;
    (void)snap;
    (void)txn_id;
    (void)parts;
    (void)timeout_ms;
    ck_assert_int_le(n, 8);
    fake_verify_calls++;
    if (fake_verify_abort)
        ck_assert_int_eq(sf_log_append_marker(fake_verify_abort, producer_id, epoch, 0, 0, 0,
                                              NULL), SF_OK);
    for (i = 0; i < n; i++)
        errs[i] = fake_verify_err;
    cb(arg, errs);
    return SF_OK;
}

static sf_partition_t *partition_of(void *arg, const char *topic, int32_t partition) {
    sf_broker_t *b = arg;
    int i;
    for (i = 0; i < b->nlogs; i++)
        if (!strcmp(sf_log_topic(b->logs[i]), topic) && sf_log_partition(b->logs[i]) == partition)
            return b->parts[i];
    return NULL;
}

void sf_broker_notify_partition(sf_broker_t *b, const void *log) {
    sf_purgatory_notify(b->purgatory, sf_pkey_partition(log));
}

sf_iopool_t *sf_broker_io(sf_broker_t *b) {
    return b->io;
}

sf_throttle_t *sf_broker_leader_throttle(sf_broker_t *b) {
    static sf_throttle_t t = {PTHREAD_MUTEX_INITIALIZER, INT64_MAX, 0, 0};
    (void)b;
    return &t;
}

void sf_broker_to_metadata(sf_broker_t *b, sf_mail_t *m) {
    (void)b;
    m->fn(m->arg);
}

const char *const *sf_broker_endpoints(const sf_broker_t *b, size_t *n) {
    *n = 1;
    return b->endpoints;
}

/* As broker.c: "NAME://host:port", IPv6 hosts in brackets. */
int sf_broker_endpoint_parse(const char *endpoint, const char *listener, char *host,
                             size_t hostsize, int32_t *port) {
    size_t n = strlen(listener);
    const char *h, *colon;
    if (strncmp(endpoint, listener, n) || strncmp(endpoint + n, "://", 3))
        return -1;
    h = endpoint + n + 3;
    if (!(colon = strrchr(h, ':')))
        return -1;
    n = (size_t)(colon - h);
    if (n && h[0] == '[' && h[n - 1] == ']') {
        h++;
        n -= 2;
    }
    if (n >= hostsize)
        return -1;
    memcpy(host, h, n);
    host[n] = '\0';
    *port = (int32_t)atoi(colon + 1);
    return 0;
}

sf_purgatory_t *sf_broker_purgatory(sf_broker_t *b) {
    return b->purgatory;
}

/* A new view of fb.snap, as the broker publishes one for each snapshot. */
static void refresh_view(void) {
    sf_view_unref(fb.view);
    ck_assert_ptr_nonnull(fb.view = sf_view_new(fb.snap, fb.cfg, partition_of, &fb));
}

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

static reply_t *replies;
static int32_t correlation;

static void req_free(sf_req_t *req) {
    sf_arena_reset(&req->arena);
    free(req);
}

/* The response body in one buffer: the writer's bytes with every splice's file range read in
 * its place; each slice's segment reference is released, as the server does. */
static uint8_t *flatten(sf_wbuf_t *body, size_t *len) {
    size_t total = sf_wbuf_total(body), pos = 0, out = 0, i;
    uint8_t *p = malloc(total + 1);
    ck_assert_ptr_nonnull(p);
    for (i = 0; i < body->nsplices; i++) {
        const sf_splice_t *sp = &body->splices[i];
        sf_log_slice_t *sl = sp->ref;
        ck_assert_uint_ge(sp->at, pos);
        memcpy(p + out, body->p + pos, sp->at - pos);
        out += sp->at - pos;
        pos = sp->at;
        ck_assert_uint_eq(sl->len, sp->len);
        ck_assert_int_eq(sf_log_slice_copy(sl, p + out), SF_OK);
        out += sp->len;
        sf_log_slice_release(sl->seg);
    }
    memcpy(p + out, body->p + pos, body->len - pos);
    out += body->len - pos;
    ck_assert_uint_eq(out, total);
    *len = out;
    return p;
}

void sf_req_respond(sf_req_t *req, sf_wbuf_t *body) {
    reply_t *r = req->conn->reply;
    const sf_proto_spec_t *spec = sf_proto_spec_get(r->api);
    sf_rbuf_t rb;
    int16_t v = r->version;
    int rc, err = body->err;
    ck_assert_int_eq(r->state, R_PENDING);
    r->body = flatten(body, &r->len);
    sf_wbuf_free(body);
    req_free(req);
    if (err) {
        /* The server closes the connection when a response did not encode. */
        r->state = R_CLOSED;
        return;
    }
    r->state = R_BODY;
    /* ApiVersions answers a version it does not know with a v0 body (KIP-511). */
    if (v > spec->MaxVersion)
        v = 0;
    sf_arena_init(&r->arena, 0);
    r->msg = sf_arena_alloc(&r->arena, spec->ResponseSize);
    ck_assert_ptr_nonnull(r->msg);
    sf_rbuf_init(&rb, r->body, r->len);
    rc = spec->ResponseDecode(&rb, v, &r->arena, r->msg);
    ck_assert_msg(rc == SF_OK, "%s v%d response does not decode: %s", spec->Name, v,
                  sf_err_str(rc));
    ck_assert_msg(rb.pos == r->len, "%s v%d response: %zu of %zu bytes decoded", spec->Name, v,
                  rb.pos, r->len);
}

void sf_req_respond_none(sf_req_t *req) {
    reply_t *r = req->conn->reply;
    ck_assert_int_eq(r->state, R_PENDING);
    r->state = R_NONE;
    req_free(req);
}

void sf_req_close(sf_req_t *req) {
    reply_t *r = req->conn->reply;
    ck_assert_int_eq(r->state, R_PENDING);
    r->state = R_CLOSED;
    req_free(req);
}

int sf_req_post(sf_req_t *req, sf_mail_t *m) {
    (void)req;
    (void)m;
    return 0;
}

const char *sf_conn_peer(const sf_conn_t *conn) {
    (void)conn;
    return "127.0.0.1:40000";
}

void sf_conn_jobs_add(sf_conn_t *conn, int delta) {
    conn->jobs += delta;
}

int sf_conn_jobs(const sf_conn_t *conn) {
    return conn->jobs;
}

int sf_conn_is_tls(const sf_conn_t *conn) {
    (void)conn;
    return 0;
}

int sf_conn_closed(const sf_conn_t *conn) {
    (void)conn;
    return 0;
}

const char *sf_conn_listener(const sf_conn_t *conn) {
    (void)conn;
    return "PLAINTEXT";
}

/* Frame @body (@len bytes) behind a request header as a client would, turn it into an
 * sf_req_t as conn_dispatch does, and dispatch it. The reply may still be pending (parked). */
static reply_t *send_raw(int16_t api, int16_t version, const void *body, size_t len) {
    sf_proto_RequestHeader_t hdr;
    reply_t *r = calloc(1, sizeof(*r));
    sf_req_t *req;
    sf_wbuf_t wb;

    ck_assert_ptr_nonnull(r);
    r->conn.reply = r;
    r->api = api;
    r->version = version;
    r->next = replies;
    replies = r;
    hdr.RequestApiKey = api;
    hdr.RequestApiVersion = version;
    hdr.CorrelationId = ++correlation;
    hdr.ClientId = sf_slice_cstr("check-kafka");
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_proto_RequestHeader_encode(&wb, &hdr), SF_OK);
    sf_wbuf_raw(&wb, body, len);
    ck_assert_int_eq(wb.err, SF_OK);

    req = malloc(sizeof(*req) + wb.len);
    ck_assert_ptr_nonnull(req);
    memset(req, 0, sizeof(*req));
    req->frame = (uint8_t *)(req + 1);
    req->frame_len = wb.len;
    memcpy(req->frame, wb.p, wb.len);
    sf_wbuf_free(&wb);
    sf_rbuf_init(&req->body, req->frame, req->frame_len);
    ck_assert_int_eq(sf_proto_RequestHeader_decode(&req->body, &req->hdr), SF_OK);
    ck_assert_int_eq(req->hdr.CorrelationId, correlation);
    sf_arena_init(&req->arena, SF_SERVER_ARENA_LIMIT(req->frame_len));
    req->conn = &r->conn;
    sf_kafka_dispatch(req, &fb);
    return r;
}

/* The request struct @msg of API @api encoded at @version with the generated encoder. */
static void encode_msg(int16_t api, int16_t version, const void *msg, sf_wbuf_t *wb) {
    const sf_proto_spec_t *spec = sf_proto_spec_get(api);
    int rc;
    ck_assert_ptr_nonnull(spec);
    sf_wbuf_init(wb);
    rc = spec->RequestEncode(wb, version, msg);
    ck_assert_msg(rc == SF_OK, "%s v%d request does not encode: %s", spec->Name, version,
                  sf_err_str(rc));
}

static reply_t *send_msg(int16_t api, int16_t version, const void *msg) {
    sf_wbuf_t wb;
    reply_t *r;
    encode_msg(api, version, msg, &wb);
    r = send_raw(api, version, wb.p, wb.len);
    sf_wbuf_free(&wb);
    return r;
}

/* The decoded response of an answered request. */
static void *body_of(const reply_t *r) {
    ck_assert_msg(r->state == R_BODY, "%s v%d: no response (state %d)",
                  sf_proto_api_name(r->api), r->version, r->state);
    return r->msg;
}

/* ---- fixture: the broker's parts ---- */

typedef struct topic_def {
    const char *name;
    int npartitions;
    const char *config[2]; /* one override (name, value) or none */
} topic_def_t;

/* Sorted by name, as snapshot configs are. */
static const topic_def_t topic_defs[] = {
    {"compact", 1, {"cleanup.policy", "compact"}},
    {"gz", 1, {"compression.type", "gzip"}},
    {"lat", 1, {"message.timestamp.type", "LogAppendTime"}},
    {"plain", 2, {NULL, NULL}},
};
#define NTOPICS ((int)(sizeof(topic_defs) / sizeof(topic_defs[0])))

static void topic_id_of(int i, uint8_t id[16]) {
    memset(id, 0, 16);
    id[0] = 0x5f;
    id[15] = (uint8_t)(i + 1);
}

static sf_cluster_snapshot_t *make_snapshot(void) {
    sf_cluster_broker_t *br = calloc(1, sizeof(*br));
    sf_cluster_topic_t *topics = calloc(NTOPICS, sizeof(*topics));
    int i, p;
    ck_assert_ptr_nonnull(br);
    ck_assert_ptr_nonnull(topics);
    br->id = 1;
    br->host = strdup("127.0.0.1");
    br->port = 9092;
    br->endpoints = calloc(1, sizeof(char *));
    br->endpoints[0] = strdup(ENDPOINT);
    br->nendpoints = 1;
    br->epoch = 10;
    for (i = 0; i < NTOPICS; i++) {
        const topic_def_t *d = &topic_defs[i];
        sf_cluster_topic_t *t = &topics[i];
        t->name = strdup(d->name);
        topic_id_of(i, t->topic_id);
        t->npartitions = d->npartitions;
        t->partitions = calloc((size_t)d->npartitions, sizeof(*t->partitions));
        ck_assert_ptr_nonnull(t->partitions);
        for (p = 0; p < d->npartitions; p++) {
            sf_cluster_partition_t *part = &t->partitions[p];
            part->partition = p;
            part->leader = 1;
            part->leader_epoch = 0;
            part->controller_epoch = 1;
            part->replicas = malloc(sizeof(int32_t));
            part->replicas[0] = 1;
            part->nreplicas = 1;
            part->isr = malloc(sizeof(int32_t));
            part->isr[0] = 1;
            part->nisr = 1;
        }
        if (d->config[0]) {
            t->configs = calloc(1, sizeof(*t->configs));
            t->configs[0].name = strdup(d->config[0]);
            t->configs[0].value = strdup(d->config[1]);
            t->nconfigs = 1;
        }
    }
    return sf_cluster_snapshot_build_copy(strdup("check-kafka-cluster"), 1, 1, br, 1, topics,
                                          NTOPICS);
}

static sf_brokercfg_t *make_cfg(void) {
    char text[512], errstr[512];
    sf_props_t *props = NULL;
    sf_brokercfg_t *cfg = NULL;
    int rc;
    snprintf(text, sizeof(text),
             "broker.id=1\nzookeeper.connect=127.0.0.1:2181\nlog.dirs=%s\n"
             "log.retention.hours=100\nauto.create.topics.enable=true\n",
             tmpdir);
    rc = sf_props_parse(text, strlen(text), "check_kafka.conf", &props, errstr, sizeof(errstr));
    ck_assert_msg(rc == SF_OK, "%s", errstr);
    rc = sf_brokercfg_from_props(props, &cfg, errstr, sizeof(errstr));
    sf_props_free(props);
    ck_assert_msg(rc == SF_OK, "%s", errstr);
    return cfg;
}

static void setup(void) {
    int t, p;
    snprintf(tmpdir, sizeof(tmpdir), "%s/test-XXXXXX", basedir);
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    memset(&fb, 0, sizeof(fb));
    replies = NULL;
    fb.cfg = make_cfg();
    fb.topiccfg.cfg = fb.cfg;
    fb.endpoints[0] = ENDPOINT;
    ck_assert_ptr_nonnull(fb.base = event_base_new());
    ck_assert_ptr_nonnull(fb.purgatory = sf_purgatory_new(fb.base));
    ck_assert_ptr_nonnull(fb.io = sf_iopool_new(0, "io"));
    ck_assert_ptr_nonnull(fb.snap = make_snapshot());
    /* As broker.c does for every partition it holds: the log with its topic's settings. */
    for (t = 0; t < NTOPICS; t++) {
        const sf_cluster_topic_t *topic = sf_cluster_snapshot_topic(fb.snap, topic_defs[t].name);
        sf_log_config_t lc;
        ck_assert_ptr_nonnull(topic);
        sf_topiccfg_log_config(&fb.topiccfg, topic, &lc);
        for (p = 0; p < topic->npartitions; p++) {
            sf_log_t *log;
            ck_assert_int_lt(fb.nlogs, MAX_LOGS);
            ck_assert_int_eq(sf_log_open(tmpdir, topic->name, p, &lc, 0, &log), SF_OK);
            sf_log_set_leader_epoch(log, topic->partitions[p].leader_epoch);
            ck_assert_ptr_nonnull(fb.parts[fb.nlogs] = sf_partition_new(log, NULL, NULL, NULL, NULL));
            fb.logs[fb.nlogs++] = log;
        }
    }
    refresh_view();
}

static int rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void teardown(void) {
    int i;
    /* Answers what is still parked, then the logs can go. */
    sf_purgatory_free(fb.purgatory);
    sf_iopool_free(fb.io);
    sf_view_unref(fb.view);
    for (i = 0; i < fb.nlogs; i++) {
        sf_partition_unref(fb.parts[i]);
        sf_log_close(fb.logs[i]);
    }
    sf_cluster_snapshot_unref(fb.snap);
    sf_brokercfg_free(fb.cfg);
    event_base_free(fb.base);
    while (replies) {
        reply_t *r = replies;
        replies = r->next;
        free(r->body);
        sf_arena_reset(&r->arena);
        free(r);
    }
    nftw(tmpdir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static sf_log_t *log_of(const char *topic, int32_t partition) {
    sf_partition_t *part = partition_of(&fb, topic, partition);
    ck_assert_ptr_nonnull(part);
    return part->log;
}

static sf_uuid_t uuid_of(const char *topic) {
    const sf_cluster_topic_t *t = sf_cluster_snapshot_topic(fb.snap, topic);
    sf_uuid_t id;
    ck_assert_ptr_nonnull(t);
    memcpy(id.b, t->topic_id, sizeof(id.b));
    return id;
}

/* ---- records ---- */

/* Append one v2 batch of @recs as a producer builds it: Attributes @attrs (codec and flag
 * bits; codecs 1-4 compress the records section), no producer id, BaseOffset 0,
 * BaseTimestamp the first record's, MaxTimestamp the largest. */
static void put_records(sf_wbuf_t *wb, int16_t attrs, const sf_recbatch_record_t *recs, int n) {
    sf_recbatch_hdr_t h;
    sf_wbuf_t sec, packed;
    int codec = attrs & SF_RECBATCH_ATTR_COMPRESSION_MASK, i;

    memset(&h, 0, sizeof(h));
    h.MaxTimestamp = -1;
    for (i = 0; i < n; i++)
        if (recs[i].timestamp > h.MaxTimestamp)
            h.MaxTimestamp = recs[i].timestamp;
    sf_wbuf_init(&sec);
    sf_wbuf_init(&packed);
    ck_assert_int_eq(sf_recbatch_encode_records(&sec, recs[0].timestamp, recs, n), SF_OK);
    h.PartitionLeaderEpoch = -1;
    h.Magic = 2;
    h.Attributes = attrs;
    h.LastOffsetDelta = n - 1;
    h.BaseTimestamp = recs[0].timestamp;
    h.ProducerId = -1;
    h.ProducerEpoch = -1;
    h.BaseSequence = -1;
    h.RecordCount = n;
    if (codec >= SF_COMPRESS_GZIP && codec <= SF_COMPRESS_ZSTD) {
        ck_assert_int_eq(sf_compress((sf_compress_codec_t)codec, -1, sec.p, sec.len, &packed),
                         SF_OK);
        ck_assert_int_eq(sf_recbatch_build_raw(wb, &h, packed.p, packed.len), SF_OK);
    } else {
        ck_assert_int_eq(sf_recbatch_build_raw(wb, &h, sec.p, sec.len), SF_OK);
    }
    sf_wbuf_free(&sec);
    sf_wbuf_free(&packed);
}

/* put_records of @n records "<tag>-k<i>" / "<tag>-v<i>" with timestamps @ts. */
static void put_batch(sf_wbuf_t *wb, int16_t attrs, const int64_t *ts, int n, const char *tag) {
    sf_recbatch_record_t recs[16];
    char keys[16][32], vals[16][32];
    int i;

    ck_assert_int_le(n, 16);
    memset(recs, 0, sizeof(recs));
    for (i = 0; i < n; i++) {
        snprintf(keys[i], sizeof(keys[i]), "%s-k%d", tag, i);
        snprintf(vals[i], sizeof(vals[i]), "%s-v%d", tag, i);
        recs[i].timestamp = ts[i];
        recs[i].key = sf_slice_cstr(keys[i]);
        recs[i].value = sf_slice_cstr(vals[i]);
    }
    put_records(wb, attrs, recs, n);
}

/* A batch of @n records with timestamps 1000, 2000, ... */
static void put_simple(sf_wbuf_t *wb, int16_t attrs, int n, const char *tag) {
    int64_t ts[16];
    int i;
    for (i = 0; i < n; i++)
        ts[i] = 1000 * (i + 1);
    put_batch(wb, attrs, ts, n, tag);
}

/* Recompute the CRC of the batch at @p after a change to the bytes it covers. */
static void reseal(uint8_t *p, size_t size) {
    sf_store_be32(p + SF_RECBATCH_OFF_CRC,
                  sf_crc32c(0, p + SF_RECBATCH_OFF_ATTRIBUTES, size - SF_RECBATCH_OFF_ATTRIBUTES));
}

/* CRC-32 (IEEE, reflected), as legacy messages carry it. */
static uint32_t crc32_ieee(const uint8_t *p, size_t n) {
    uint32_t c = 0xffffffffu;
    size_t i;
    int k;
    for (i = 0; i < n; i++) {
        c ^= p[i];
        for (k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
    }
    return c ^ 0xffffffffu;
}

/* Append one uncompressed legacy message (magic 0 or 1) to a message set. */
static void put_message(sf_wbuf_t *wb, int magic, int64_t offset, int64_t ts, const char *key,
                        const char *value) {
    size_t size_at, crc_at;
    sf_wbuf_i64(wb, offset);                /* Offset */
    size_at = sf_wbuf_mark_i32(wb);         /* MessageSize, patched */
    crc_at = sf_wbuf_mark_i32(wb);          /* Crc, patched */
    sf_wbuf_i8(wb, (int8_t)magic);          /* Magic */
    sf_wbuf_i8(wb, 0);                      /* Attributes: no codec, CreateTime */
    if (magic == 1)
        sf_wbuf_i64(wb, ts);                /* Timestamp */
    sf_wbuf_bytes(wb, sf_slice_cstr(key));  /* Key */
    sf_wbuf_bytes(wb, sf_slice_cstr(value)); /* Value */
    ck_assert_int_eq(wb->err, SF_OK);
    sf_wbuf_patch_i32(wb, size_at, (int32_t)(wb->len - size_at - 4));
    sf_wbuf_patch_i32(wb, crc_at, (int32_t)crc32_ieee(wb->p + crc_at + 4, wb->len - crc_at - 4));
}

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

static void copy_slice(char *dst, size_t size, sf_slice_t s) {
    size_t n = s.len > 0 ? (size_t)s.len : 0;
    ck_assert_uint_lt(n, size);
    memcpy(dst, s.p, n);
    dst[n] = '\0';
}

/* Parse the record batches of a fetched partition (each CRC checked, compressed ones
 * decompressed). */
static void got_batches(sf_slice_t records, got_t *g) {
    const uint8_t *p = records.p;
    size_t len = records.len > 0 ? (size_t)records.len : 0, pos = 0;
    memset(g, 0, sizeof(*g));
    while (pos < len) {
        sf_recbatch_hdr_t h;
        sf_recbatch_iter_t it;
        sf_recbatch_record_t rec;
        sf_wbuf_t plain;
        size_t size;
        int codec, rc;
        ck_assert_int_eq(sf_recbatch_header_parse(p + pos, len - pos, &h, &size), SF_OK);
        ck_assert_int_eq(sf_recbatch_validate(p + pos, size, &h), SF_OK);
        codec = h.Attributes & SF_RECBATCH_ATTR_COMPRESSION_MASK;
        sf_wbuf_init(&plain);
        if (codec) {
            ck_assert_int_eq(sf_decompress((sf_compress_codec_t)codec,
                                           p + pos + SF_RECBATCH_HEADER_SIZE,
                                           size - SF_RECBATCH_HEADER_SIZE, 1 << 20, &plain),
                             SF_OK);
            sf_recbatch_iter_init_records(&it, &h, plain.p, plain.len);
        } else {
            ck_assert_int_eq(sf_recbatch_iter_init(&it, p + pos, size), SF_OK);
        }
        while ((rc = sf_recbatch_iter_next(&it, &rec)) == SF_OK) {
            got_rec_t *gr = &g->recs[g->nrecs++];
            ck_assert_int_le(g->nrecs, 64);
            gr->offset = rec.offset;
            gr->timestamp = rec.timestamp;
            copy_slice(gr->key, sizeof(gr->key), rec.key);
            copy_slice(gr->value, sizeof(gr->value), rec.value);
        }
        ck_assert_int_eq(rc, SF_ERR_NOTFOUND);
        sf_wbuf_free(&plain);
        ck_assert_int_lt(g->nbatches, 16);
        g->hdrs[g->nbatches++] = h;
        pos += size;
    }
}

/* Parse a fetched legacy message set: every message of @magic, CRC checked, uncompressed. */
static void got_messages(sf_slice_t records, int magic, got_t *g) {
    const uint8_t *p = records.p;
    size_t len = records.len > 0 ? (size_t)records.len : 0, pos = 0;
    memset(g, 0, sizeof(*g));
    while (pos < len) {
        got_rec_t *gr = &g->recs[g->nrecs++];
        const uint8_t *msg;
        sf_rbuf_t rb;
        uint32_t size;
        ck_assert_int_le(g->nrecs, 64);
        ck_assert_uint_ge(len - pos, SF_MSGSET_LOG_OVERHEAD);
        gr->offset = (int64_t)sf_load_be64(p + pos);
        size = sf_load_be32(p + pos + 8);
        ck_assert_uint_le(size, len - pos - SF_MSGSET_LOG_OVERHEAD);
        ck_assert_uint_ge(size, SF_MSGSET_MIN_MESSAGE_V0);
        msg = p + pos + SF_MSGSET_LOG_OVERHEAD;
        sf_rbuf_init(&rb, msg, size);
        ck_assert_uint_eq(sf_rbuf_u32(&rb), crc32_ieee(msg + 4, size - 4));
        ck_assert_int_eq(sf_rbuf_i8(&rb), magic);
        ck_assert_int_eq(sf_rbuf_i8(&rb) & 0x07, 0);
        gr->timestamp = magic == 1 ? sf_rbuf_i64(&rb) : -1;
        copy_slice(gr->key, sizeof(gr->key), sf_rbuf_bytes(&rb, 1));
        copy_slice(gr->value, sizeof(gr->value), sf_rbuf_bytes(&rb, 1));
        ck_assert_int_eq(rb.err, SF_OK);
        ck_assert_uint_eq(sf_rbuf_remaining(&rb), 0);
        pos += SF_MSGSET_LOG_OVERHEAD + size;
    }
}

/* ---- requests ---- */

/* Produce @len bytes of records to one partition. */
/* The TransactionalId of the Produce requests below. */
static const char *produce_txn_id;

static reply_t *produce(int16_t v, const char *topic, int32_t partition, const void *records,
                        size_t len, int16_t acks) {
    sf_proto_ProduceRequest_t req;
    sf_proto_ProduceRequest_TopicProduceData_t td;
    sf_proto_ProduceRequest_PartitionProduceData_t pd;
    sf_proto_ProduceRequest_init(&req);
    sf_proto_ProduceRequest_TopicProduceData_init(&td);
    sf_proto_ProduceRequest_PartitionProduceData_init(&pd);
    req.TransactionalId = sf_slice_cstr(produce_txn_id);
    req.Acks = acks;
    req.TimeoutMs = 1000;
    req.TopicDataCount = 1;
    req.TopicData = &td;
    td.Name = sf_slice_cstr(topic);
    td.PartitionDataCount = 1;
    td.PartitionData = &pd;
    pd.Index = partition;
    pd.Records.p = records;
    pd.Records.len = (int32_t)len;
    return send_msg(SF_PROTO_API_Produce, v, &req);
}

/* The one partition of a produce response. */
static sf_proto_ProduceResponse_PartitionProduceResponse_t *produced(const reply_t *r) {
    sf_proto_ProduceResponse_t *resp = body_of(r);
    ck_assert_int_eq(resp->ResponsesCount, 1);
    ck_assert_int_eq(resp->Responses[0].PartitionResponsesCount, 1);
    return &resp->Responses[0].PartitionResponses[0];
}

/* Produce and expect success; returns the base offset. */
static int64_t produce_ok(int16_t v, const char *topic, int32_t partition, const sf_wbuf_t *wb) {
    reply_t *r = produce(v, topic, partition, wb->p, wb->len, 1);
    sf_proto_ProduceResponse_PartitionProduceResponse_t *rp = produced(r);
    ck_assert_msg(rp->ErrorCode == 0, "Produce v%d to %s-%d: error %d", v, topic, partition,
                  rp->ErrorCode);
    return rp->BaseOffset;
}

/* The IsolationLevel of the Fetch and ListOffsets requests below (1: read_committed). */
static int8_t isolation;

/* Fetch one partition from @offset. From v13 the topic goes by @id, or by the id the snapshot
 * gives @topic when @id is NULL. */
static reply_t *fetch_id(int16_t v, const char *topic, const sf_uuid_t *id, int32_t partition,
                         int64_t offset, int32_t max_wait, int32_t min_bytes,
                         int32_t partition_max) {
    sf_proto_FetchRequest_t req;
    sf_proto_FetchRequest_FetchTopic_t ft;
    sf_proto_FetchRequest_FetchPartition_t fp;
    sf_proto_FetchRequest_init(&req);
    sf_proto_FetchRequest_FetchTopic_init(&ft);
    sf_proto_FetchRequest_FetchPartition_init(&fp);
    req.MaxWaitMs = max_wait;
    req.MinBytes = min_bytes;
    req.MaxBytes = 1 << 20;
    req.IsolationLevel = isolation;
    req.TopicsCount = 1;
    req.Topics = &ft;
    ft.Topic = sf_slice_cstr(topic);
    if (v >= 13)
        ft.TopicId = id ? *id : uuid_of(topic);
    ft.PartitionsCount = 1;
    ft.Partitions = &fp;
    fp.Partition = partition;
    fp.FetchOffset = offset;
    fp.PartitionMaxBytes = partition_max;
    return send_msg(SF_PROTO_API_Fetch, v, &req);
}

static reply_t *fetch(int16_t v, const char *topic, int32_t partition, int64_t offset) {
    return fetch_id(v, topic, NULL, partition, offset, 0, 1, 1 << 20);
}

static sf_proto_FetchResponse_PartitionData_t *fetched(const reply_t *r) {
    sf_proto_FetchResponse_t *resp = body_of(r);
    if (r->version >= 7)
        ck_assert_int_eq(resp->ErrorCode, 0);
    ck_assert_int_eq(resp->ResponsesCount, 1);
    ck_assert_int_eq(resp->Responses[0].PartitionsCount, 1);
    return &resp->Responses[0].Partitions[0];
}

/* Fetch and parse what comes back in the version's message format. */
static sf_proto_FetchResponse_PartitionData_t *fetch_got(int16_t v, const char *topic,
                                                         int32_t partition, int64_t offset,
                                                         got_t *g) {
    sf_proto_FetchResponse_PartitionData_t *rp = fetched(fetch(v, topic, partition, offset));
    ck_assert_msg(rp->ErrorCode == 0, "Fetch v%d %s-%d: error %d", v, topic, partition,
                  rp->ErrorCode);
    if (v < 4)
        got_messages(rp->Records, v < 2 ? 0 : 1, g);
    else
        got_batches(rp->Records, g);
    return rp;
}

static reply_t *list_offsets(int16_t v, const char *topic, int32_t partition, int64_t ts) {
    sf_proto_ListOffsetsRequest_t req;
    sf_proto_ListOffsetsRequest_ListOffsetsTopic_t lt;
    sf_proto_ListOffsetsRequest_ListOffsetsPartition_t lp;
    sf_proto_ListOffsetsRequest_init(&req);
    sf_proto_ListOffsetsRequest_ListOffsetsTopic_init(&lt);
    sf_proto_ListOffsetsRequest_ListOffsetsPartition_init(&lp);
    req.ReplicaId = -1;
    req.IsolationLevel = isolation;
    req.TopicsCount = 1;
    req.Topics = &lt;
    req.TimeoutMs = 1000;
    lt.Name = sf_slice_cstr(topic);
    lt.PartitionsCount = 1;
    lt.Partitions = &lp;
    lp.PartitionIndex = partition;
    lp.Timestamp = ts;
    lp.MaxNumOffsets = 1;
    return send_msg(SF_PROTO_API_ListOffsets, v, &req);
}

static sf_proto_ListOffsetsResponse_ListOffsetsPartitionResponse_t *
listed(int16_t v, const char *topic, int32_t partition, int64_t ts) {
    sf_proto_ListOffsetsResponse_t *resp = body_of(list_offsets(v, topic, partition, ts));
    ck_assert_int_eq(resp->TopicsCount, 1);
    ck_assert_int_eq(resp->Topics[0].PartitionsCount, 1);
    return &resp->Topics[0].Partitions[0];
}

/* Metadata for @n topics by name (@n -1: a null array). */
static sf_proto_MetadataResponse_t *metadata(int16_t v, const char *const *names, int n,
                                             bool allow_auto_create) {
    sf_proto_MetadataRequest_t req;
    sf_proto_MetadataRequest_MetadataRequestTopic_t topics[4];
    int i;
    sf_proto_MetadataRequest_init(&req);
    ck_assert_int_le(n, 4);
    for (i = 0; i < n; i++) {
        sf_proto_MetadataRequest_MetadataRequestTopic_init(&topics[i]);
        topics[i].Name = sf_slice_cstr(names[i]);
    }
    req.TopicsCount = n;
    req.Topics = n >= 0 ? topics : NULL;
    req.AllowAutoTopicCreation = allow_auto_create;
    return body_of(send_msg(SF_PROTO_API_Metadata, v, &req));
}

static sf_proto_DescribeConfigsResponse_DescribeConfigsResult_t *
describe_topic(int16_t v, const char *topic, bool synonyms) {
    sf_proto_DescribeConfigsRequest_t req;
    sf_proto_DescribeConfigsRequest_DescribeConfigsResource_t res;
    sf_proto_DescribeConfigsResponse_t *resp;
    sf_proto_DescribeConfigsRequest_init(&req);
    sf_proto_DescribeConfigsRequest_DescribeConfigsResource_init(&res);
    res.ResourceType = 2; /* TOPIC */
    res.ResourceName = sf_slice_cstr(topic);
    res.ConfigurationKeysCount = -1;
    res.ConfigurationKeys = NULL;
    req.ResourcesCount = 1;
    req.Resources = &res;
    req.IncludeSynonyms = synonyms;
    resp = body_of(send_msg(SF_PROTO_API_DescribeConfigs, v, &req));
    ck_assert_int_eq(resp->ResultsCount, 1);
    return &resp->Results[0];
}

static const sf_proto_DescribeConfigsResponse_DescribeConfigsResourceResult_t *
config_entry(const sf_proto_DescribeConfigsResponse_DescribeConfigsResult_t *rr,
             const char *name) {
    int i;
    for (i = 0; i < rr->ConfigsCount; i++)
        if (sf_slice_eq(rr->Configs[i].Name, name))
            return &rr->Configs[i];
    ck_abort_msg("config %s not described", name);
    return NULL;
}

static sf_proto_DeleteRecordsResponse_DeleteRecordsPartitionResult_t *
delete_records(int16_t v, const char *topic, int32_t partition, int64_t offset) {
    sf_proto_DeleteRecordsRequest_t req;
    sf_proto_DeleteRecordsRequest_DeleteRecordsTopic_t dt;
    sf_proto_DeleteRecordsRequest_DeleteRecordsPartition_t dp;
    sf_proto_DeleteRecordsResponse_t *resp;
    sf_proto_DeleteRecordsRequest_init(&req);
    sf_proto_DeleteRecordsRequest_DeleteRecordsTopic_init(&dt);
    sf_proto_DeleteRecordsRequest_DeleteRecordsPartition_init(&dp);
    req.TopicsCount = 1;
    req.Topics = &dt;
    req.TimeoutMs = 1000;
    dt.Name = sf_slice_cstr(topic);
    dt.PartitionsCount = 1;
    dt.Partitions = &dp;
    dp.PartitionIndex = partition;
    dp.Offset = offset;
    resp = body_of(send_msg(SF_PROTO_API_DeleteRecords, v, &req));
    ck_assert_int_eq(resp->TopicsCount, 1);
    ck_assert_int_eq(resp->Topics[0].PartitionsCount, 1);
    return &resp->Topics[0].Partitions[0];
}

/* ---- ApiVersions and dispatch ---- */

START_TEST(test_api_versions) {
    size_t n, i;
    const sf_kapi_t *apis = sf_kapi_all(&n);
    int16_t v;
    ck_assert_uint_gt(n, 10);
    for (v = 0; v <= 4; v++) {
        sf_proto_ApiVersionsRequest_t req;
        sf_proto_ApiVersionsResponse_t *resp;
        sf_proto_ApiVersionsRequest_init(&req);
        req.ClientSoftwareName = sf_slice_cstr("check-kafka");
        req.ClientSoftwareVersion = sf_slice_cstr("1.0");
        resp = body_of(send_msg(SF_PROTO_API_ApiVersions, v, &req));
        ck_assert_int_eq(resp->ErrorCode, 0);
        ck_assert_int_eq(resp->ApiKeysCount, (int32_t)n);
        for (i = 0; i < n; i++) {
            ck_assert_int_eq(resp->ApiKeys[i].ApiKey, apis[i].key);
            ck_assert_int_eq(resp->ApiKeys[i].MinVersion, apis[i].min);
            ck_assert_int_eq(resp->ApiKeys[i].MaxVersion, apis[i].max);
        }
        /* The ranges Kafka 3.9 accepts for the APIs tested below (DESIGN.md section 2). */
        ck_assert_int_eq(resp->ApiKeys[0].ApiKey, SF_PROTO_API_Produce);
        ck_assert_int_eq(resp->ApiKeys[0].MaxVersion, 11);
        ck_assert_int_eq(resp->ApiKeys[1].ApiKey, SF_PROTO_API_Fetch);
        ck_assert_int_eq(resp->ApiKeys[1].MaxVersion, 17);
    }
}
END_TEST

START_TEST(test_api_versions_unknown_version) {
    /* KIP-511: a version above the max gets the v0 error body with ApiVersions' own range. */
    reply_t *r = send_raw(SF_PROTO_API_ApiVersions, 99, "", 0);
    sf_proto_ApiVersionsResponse_t *resp = body_of(r);
    ck_assert_int_eq(resp->ErrorCode, SF_KERR_UNSUPPORTED_VERSION);
    ck_assert_int_eq(resp->ApiKeysCount, 1);
    ck_assert_int_eq(resp->ApiKeys[0].ApiKey, SF_PROTO_API_ApiVersions);
    ck_assert_int_eq(resp->ApiKeys[0].MinVersion, 0);
    ck_assert_int_eq(resp->ApiKeys[0].MaxVersion, 4);
}
END_TEST

START_TEST(test_api_versions_bad_client_software) {
    /* v3 with a ClientSoftwareName claiming 100 bytes that are not there: INVALID_REQUEST. */
    static const uint8_t body[] = {101, 'x'};
    sf_proto_ApiVersionsResponse_t *resp =
        body_of(send_raw(SF_PROTO_API_ApiVersions, 3, body, sizeof(body)));
    ck_assert_int_eq(resp->ErrorCode, SF_KERR_INVALID_REQUEST);
}
END_TEST

START_TEST(test_dispatch_closes) {
    sf_proto_MetadataRequest_t mreq;
    sf_proto_MetadataRequest_MetadataRequestTopic_t mt;
    sf_wbuf_t wb, batch;
    sf_proto_ProduceRequest_t preq;
    sf_proto_ProduceRequest_TopicProduceData_t td;
    sf_proto_ProduceRequest_PartitionProduceData_t pd;
    size_t cut;

    /* An API key nobody knows, one the codec knows but the broker does not serve, a version
     * above the max and a negative one. */
    ck_assert_int_eq(send_raw(1000, 0, "", 0)->state, R_CLOSED);
    ck_assert_int_eq(send_raw(SF_PROTO_API_OffsetCommit, 2, "", 0)->state, R_CLOSED);
    ck_assert_int_eq(send_raw(SF_PROTO_API_Produce, 12, "", 0)->state, R_CLOSED);
    ck_assert_int_eq(send_raw(SF_PROTO_API_Metadata, 13, "", 0)->state, R_CLOSED);
    ck_assert_int_eq(send_raw(SF_PROTO_API_Fetch, -1, "", 0)->state, R_CLOSED);

    /* Bodies that do not decode: empty, and every strict prefix of a good Metadata v1. */
    ck_assert_int_eq(send_raw(SF_PROTO_API_Produce, 3, "", 0)->state, R_CLOSED);
    sf_proto_MetadataRequest_init(&mreq);
    sf_proto_MetadataRequest_MetadataRequestTopic_init(&mt);
    mt.Name = sf_slice_cstr("plain");
    mreq.TopicsCount = 1;
    mreq.Topics = &mt;
    encode_msg(SF_PROTO_API_Metadata, 1, &mreq, &wb);
    ck_assert_int_eq(send_raw(SF_PROTO_API_Metadata, 1, wb.p, wb.len)->state, R_BODY);
    for (cut = 0; cut < wb.len; cut++)
        ck_assert_msg(send_raw(SF_PROTO_API_Metadata, 1, wb.p, cut)->state == R_CLOSED,
                      "Metadata v1 cut to %zu bytes answered", cut);
    sf_wbuf_free(&wb);

    /* A produce cut short stores nothing. */
    sf_wbuf_init(&batch);
    put_simple(&batch, 0, 2, "cut");
    sf_proto_ProduceRequest_init(&preq);
    sf_proto_ProduceRequest_TopicProduceData_init(&td);
    sf_proto_ProduceRequest_PartitionProduceData_init(&pd);
    preq.Acks = 1;
    preq.TopicDataCount = 1;
    preq.TopicData = &td;
    td.Name = sf_slice_cstr("plain");
    td.PartitionDataCount = 1;
    td.PartitionData = &pd;
    pd.Records.p = batch.p;
    pd.Records.len = (int32_t)batch.len;
    encode_msg(SF_PROTO_API_Produce, 9, &preq, &wb);
    ck_assert_int_eq(send_raw(SF_PROTO_API_Produce, 9, wb.p, wb.len - 2)->state, R_CLOSED);
    ck_assert_int_eq(sf_log_end_offset(log_of("plain", 0)), 0);
    sf_wbuf_free(&wb);
    sf_wbuf_free(&batch);
}
END_TEST

/* ---- Produce ---- */

START_TEST(test_produce_every_version) {
    sf_log_t *log = log_of("plain", 0);
    int64_t next = 0;
    int16_t v;
    got_t g;
    for (v = 3; v <= 11; v++) {
        sf_proto_ProduceResponse_PartitionProduceResponse_t *rp;
        sf_wbuf_t wb;
        char tag[8];
        snprintf(tag, sizeof(tag), "p%d", v);
        sf_wbuf_init(&wb);
        put_simple(&wb, 0, 3, tag);
        rp = produced(produce(v, "plain", 0, wb.p, wb.len, v % 2 ? -1 : 1));
        ck_assert_msg(rp->ErrorCode == 0, "Produce v%d: error %d", v, rp->ErrorCode);
        ck_assert_int_eq(rp->Index, 0);
        ck_assert_int_eq(rp->BaseOffset, next);
        ck_assert_int_eq(rp->LogAppendTimeMs, -1);
        ck_assert_int_eq(rp->LogStartOffset, v >= 5 ? 0 : -1);
        if (v >= 8) {
            ck_assert_int_eq(rp->RecordErrorsCount, 0);
            ck_assert_int_lt(rp->ErrorMessage.len, 0);
        }
        next += 3;
        ck_assert_int_eq(sf_log_end_offset(log), next);
        sf_wbuf_free(&wb);
    }
    /* What was stored reads back in order, each produce one batch. */
    fetch_got(11, "plain", 0, 0, &g);
    ck_assert_int_eq(g.nbatches, 9);
    ck_assert_int_eq(g.nrecs, 27);
    ck_assert_str_eq(g.recs[0].key, "p3-k0");
    ck_assert_str_eq(g.recs[26].value, "p11-v2");
    ck_assert_int_eq(g.recs[26].offset, 26);
    ck_assert_int_eq(g.recs[4].timestamp, 2000);
}
END_TEST

START_TEST(test_produce_acks_zero) {
    sf_wbuf_t wb;
    sf_wbuf_init(&wb);
    put_simple(&wb, 0, 2, "a0");
    ck_assert_int_eq(produce(7, "plain", 0, wb.p, wb.len, 0)->state, R_NONE);
    ck_assert_int_eq(sf_log_end_offset(log_of("plain", 0)), 2);
    /* A refusal has no answer to go in: Kafka closes the connection instead. */
    ck_assert_int_eq(produce(7, "nosuch", 0, wb.p, wb.len, 0)->state, R_CLOSED);
    wb.p[wb.len - 1] ^= 1;
    ck_assert_int_eq(produce(7, "plain", 0, wb.p, wb.len, 0)->state, R_CLOSED);
    ck_assert_int_eq(sf_log_end_offset(log_of("plain", 0)), 2);
    sf_wbuf_free(&wb);
}
END_TEST

/* Produce v0 with magic 0 and v2 with magic 1: stored, read back by Fetch v0 and v2 in those
 * formats and by Fetch v4+ as record batches. */
START_TEST(test_produce_legacy_formats) {
    sf_proto_ProduceResponse_PartitionProduceResponse_t *rp;
    sf_wbuf_t m0, m1;
    int16_t v;
    got_t g;
    int i;

    sf_wbuf_init(&m0);
    put_message(&m0, 0, 0, -1, "k0", "v0");
    put_message(&m0, 0, 1, -1, "k1", "v1");
    sf_wbuf_init(&m1);
    put_message(&m1, 1, 0, 1000, "k2", "v2");
    put_message(&m1, 1, 1, 2000, "k3", "v3");
    rp = produced(produce(0, "plain", 1, m0.p, m0.len, 1));
    ck_assert_int_eq(rp->ErrorCode, 0);
    ck_assert_int_eq(rp->BaseOffset, 0);
    rp = produced(produce(2, "plain", 1, m1.p, m1.len, -1));
    ck_assert_int_eq(rp->ErrorCode, 0);
    ck_assert_int_eq(rp->BaseOffset, 2);
    ck_assert_int_eq(rp->LogAppendTimeMs, -1);
    ck_assert_int_eq(sf_log_end_offset(log_of("plain", 1)), 4);

    /* Fetch v0/v1: magic 0, no timestamps; v2/v3: magic 1 with them. */
    for (v = 0; v <= 3; v++) {
        fetch_got(v, "plain", 1, 0, &g);
        ck_assert_int_eq(g.nrecs, 4);
        for (i = 0; i < 4; i++) {
            char key[8];
            snprintf(key, sizeof(key), "k%d", i);
            ck_assert_int_eq(g.recs[i].offset, i);
            ck_assert_str_eq(g.recs[i].key, key);
        }
        ck_assert_str_eq(g.recs[3].value, "v3");
        ck_assert_int_eq(g.recs[0].timestamp, -1);
        ck_assert_int_eq(g.recs[2].timestamp, v >= 2 ? 1000 : -1);
        ck_assert_int_eq(g.recs[3].timestamp, v >= 2 ? 2000 : -1);
    }
    /* From a later offset: only the messages from there. */
    fetch_got(2, "plain", 1, 2, &g);
    ck_assert_int_eq(g.nrecs, 2);
    ck_assert_int_eq(g.recs[0].offset, 2);
    /* Fetch v4+: the stored v2 batches, one per produce. */
    for (v = 4; v <= 12; v += 4) {
        fetch_got(v, "plain", 1, 0, &g);
        ck_assert_int_eq(g.nbatches, 2);
        ck_assert_int_eq(g.nrecs, 4);
        ck_assert_int_eq(g.hdrs[0].Magic, 2);
        ck_assert_int_eq(g.hdrs[1].BaseOffset, 2);
        ck_assert_int_eq(g.hdrs[1].MaxTimestamp, 2000);
        ck_assert_str_eq(g.recs[1].value, "v1");
        ck_assert_int_eq(g.recs[0].timestamp, -1);
        ck_assert_int_eq(g.recs[2].timestamp, 1000);
        ck_assert_int_eq(g.recs[3].timestamp, 2000);
    }
    sf_wbuf_free(&m0);
    sf_wbuf_free(&m1);
}
END_TEST

/* Produce @len bytes at @v to plain-0 (or @topic) and expect @kerr with nothing stored. */
static void refused(int16_t v, const char *topic, int32_t partition, const void *p, size_t len,
                    int16_t acks, sf_kerr_t kerr, const char *what) {
    sf_log_t *log = log_of("plain", 0);
    int64_t leo = sf_log_end_offset(log), size = sf_log_size_bytes(log);
    sf_proto_ProduceResponse_PartitionProduceResponse_t *rp =
        produced(produce(v, topic, partition, p, len, acks));
    ck_assert_msg(rp->ErrorCode == kerr, "%s: error %d, expected %d", what, rp->ErrorCode, kerr);
    ck_assert_int_eq(rp->BaseOffset, -1);
    ck_assert_int_eq(sf_log_end_offset(log), leo);
    ck_assert_int_eq(sf_log_size_bytes(log), size);
}

START_TEST(test_produce_refusals) {
    sf_wbuf_t wb;
    int64_t ts[2] = {1000, 2000};
    static const char garbage[] = "this is not a gzip stream at all";
    sf_recbatch_hdr_t h;

    /* One good batch first, so "nothing stored" is checked against a non-empty log. */
    sf_wbuf_init(&wb);
    put_simple(&wb, 0, 1, "good");
    ck_assert_int_eq(produce_ok(8, "plain", 0, &wb), 0);

    sf_wbuf_reset(&wb);
    put_batch(&wb, SF_RECBATCH_ATTR_CONTROL, ts, 2, "ctl");
    refused(8, "plain", 0, wb.p, wb.len, 1, SF_KERR_INVALID_RECORD, "control batch");

    sf_wbuf_reset(&wb);
    put_batch(&wb, SF_RECBATCH_ATTR_TRANSACTIONAL, ts, 2, "txn");
    refused(8, "plain", 0, wb.p, wb.len, 1, SF_KERR_INVALID_RECORD, "transactional, no pid");

    sf_wbuf_reset(&wb);
    put_batch(&wb, 5, ts, 2, "c5");
    refused(8, "plain", 0, wb.p, wb.len, 1, SF_KERR_UNSUPPORTED_COMPRESSION_TYPE, "codec 5");
    sf_wbuf_reset(&wb);
    put_batch(&wb, 7, ts, 2, "c7");
    refused(8, "plain", 0, wb.p, wb.len, 1, SF_KERR_UNSUPPORTED_COMPRESSION_TYPE, "codec 7");

    /* zstd needs Produce v7 (KIP-110). */
    sf_wbuf_reset(&wb);
    put_batch(&wb, SF_COMPRESS_ZSTD, ts, 2, "zs");
    refused(6, "plain", 0, wb.p, wb.len, 1, SF_KERR_UNSUPPORTED_COMPRESSION_TYPE, "zstd at v6");

    /* RecordCount larger than the records: see test_produce_invalid_record. */

    /* A byte of a value changed under the CRC. */
    sf_wbuf_reset(&wb);
    put_batch(&wb, 0, ts, 2, "crc");
    wb.p[wb.len - 2] ^= 0x20;
    refused(8, "plain", 0, wb.p, wb.len, 1, SF_KERR_CORRUPT_MESSAGE, "bad CRC");

    /* The gzip flag over bytes that are not gzip (CRC right). */
    sf_wbuf_reset(&wb);
    memset(&h, 0, sizeof(h));
    h.PartitionLeaderEpoch = -1;
    h.Attributes = SF_COMPRESS_GZIP;
    h.LastOffsetDelta = 1;
    h.BaseTimestamp = 1000;
    h.MaxTimestamp = 2000;
    h.ProducerId = -1;
    h.ProducerEpoch = -1;
    h.BaseSequence = -1;
    h.RecordCount = 2;
    ck_assert_int_eq(sf_recbatch_build_raw(&wb, &h, (const uint8_t *)garbage, sizeof(garbage)),
                     SF_OK);
    refused(8, "plain", 0, wb.p, wb.len, 1, SF_KERR_CORRUPT_MESSAGE, "gzip over garbage");

    /* acks 2; a topic and a partition that do not exist. */
    sf_wbuf_reset(&wb);
    put_simple(&wb, 0, 2, "ok");
    refused(8, "plain", 0, wb.p, wb.len, 2, SF_KERR_INVALID_REQUIRED_ACKS, "acks 2");
    refused(8, "plain", 0, wb.p, wb.len, -2, SF_KERR_INVALID_REQUIRED_ACKS, "acks -2");
    refused(8, "nosuch", 0, wb.p, wb.len, 1, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION, "unknown topic");
    refused(8, "plain", 2, wb.p, wb.len, 1, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION, "partition 2");
    refused(8, "plain", -1, wb.p, wb.len, 1, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION, "partition -1");

    /* The same good batch is still accepted after all that. */
    ck_assert_int_eq(produce_ok(8, "plain", 0, &wb), 1);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_produce_refusals_limits) {
    sf_wbuf_t wb, two;
    int64_t ts[2] = {1000, 2000};

    /* A BatchLength smaller than any message: Kafka's CorruptRecordException ("Record size
     * 10 is less than the minimum record overhead (14)"). */
    sf_wbuf_init(&wb);
    put_batch(&wb, 0, ts, 2, "len");
    sf_store_be32(wb.p + SF_RECBATCH_OFF_BATCH_LENGTH, 10);
    refused(8, "plain", 0, wb.p, wb.len, 1, SF_KERR_CORRUPT_MESSAGE, "BatchLength 10");
    /* A good batch followed by a bad one: neither is stored. */
    sf_wbuf_init(&two);
    put_batch(&two, 0, ts, 2, "one");
    put_batch(&two, SF_RECBATCH_ATTR_CONTROL, ts, 2, "two");
    refused(8, "plain", 0, two.p, two.len, 1, SF_KERR_INVALID_RECORD, "good then bad");
    sf_wbuf_free(&two);
    sf_wbuf_free(&wb);
}
END_TEST

/* Set plain-0's message.timestamp.before.max.ms. */
static void set_before_max_ms(int64_t ms) {
    sf_log_config_t lc;
    sf_log_get_config(log_of("plain", 0), &lc);
    lc.timestamp_before_max_ms = ms;
    sf_log_set_config(log_of("plain", 0), &lc);
}

/* The rules on each record, for plain and compressed batches: keys on a compacted topic,
 * header keys, timestamps within message.timestamp.before.max.ms. */
START_TEST(test_produce_record_rules) {
    sf_recbatch_record_t recs[2];
    sf_recbatch_rechdr_t h;
    int64_t now = sf_clock_wall_ms();
    sf_wbuf_t wb;
    int16_t codec;

    sf_wbuf_init(&wb);
    for (codec = SF_COMPRESS_NONE; codec <= SF_COMPRESS_LZ4; codec += SF_COMPRESS_LZ4) {
        memset(recs, 0, sizeof(recs));
        recs[0].timestamp = now;
        recs[0].key = sf_slice_cstr("k");
        recs[0].value = sf_slice_cstr("v0");
        recs[1].timestamp = now + 5;
        recs[1].key.len = -1;
        recs[1].value = sf_slice_cstr("v1");
        recs[1].header_count = 1;
        recs[1].headers = &h;
        h.key = sf_slice_cstr("h");
        h.value = sf_slice_cstr("v");
        sf_wbuf_reset(&wb);
        put_records(&wb, codec, recs, 2);
        refused(8, "compact", 0, wb.p, wb.len, 1, SF_KERR_INVALID_RECORD, "compacted, null key");
        ck_assert_int_eq(sf_log_end_offset(log_of("compact", 0)), codec ? 2 : 0);
        produce_ok(8, "plain", 0, &wb);

        recs[1].key = sf_slice_cstr("k");
        h.key.p = NULL;
        h.key.len = -1;
        sf_wbuf_reset(&wb);
        put_records(&wb, codec, recs, 2);
        refused(8, "plain", 0, wb.p, wb.len, 1, SF_KERR_INVALID_RECORD, "null header key");

        set_before_max_ms(3600000);
        h.key = sf_slice_cstr("h");
        recs[1].timestamp = now - 7200000;
        sf_wbuf_reset(&wb);
        put_records(&wb, codec, recs, 2);
        refused(8, "plain", 0, wb.p, wb.len, 1, SF_KERR_INVALID_TIMESTAMP, "two hours old");
        recs[1].timestamp = now - 60000;
        sf_wbuf_reset(&wb);
        put_records(&wb, codec, recs, 2);
        produce_ok(8, "plain", 0, &wb);
        produce_ok(8, "compact", 0, &wb);
        set_before_max_ms(INT64_MAX);
    }
    sf_wbuf_free(&wb);
}
END_TEST

/* What Kafka 3.9 answers with INVALID_RECORD (an InvalidRecordException), and nothing stored:
 *   - RecordCount larger than the records there (DefaultRecordBatch's iterator);
 *   - RecordCount != LastOffsetDelta + 1 (LogValidator.validateBatch);
 *   - no whole batch (empty records, a batch cut short) from Produce v3
 *     (ProduceRequest.validateRecords);
 *   - a magic 0/1 message set from Produce v3 (validateRecords). */
START_TEST(test_produce_invalid_record) {
    sf_log_t *log = log_of("plain", 0);
    int64_t ts[2] = {1000, 2000};
    char wrong[512] = "";
    sf_wbuf_t cnt, delta, cut, legacy;
    struct {
        const char *what;
        const sf_wbuf_t *wb;
        size_t len;
    } cases[5];
    int i;

    sf_wbuf_init(&cnt);
    put_batch(&cnt, 0, ts, 2, "cnt");
    sf_store_be32(cnt.p + SF_RECBATCH_OFF_RECORD_COUNT, 3);
    sf_store_be32(cnt.p + SF_RECBATCH_OFF_LAST_OFFSET_DELTA, 2);
    reseal(cnt.p, cnt.len);
    sf_wbuf_init(&delta);
    put_batch(&delta, 0, ts, 2, "delta");
    sf_store_be32(delta.p + SF_RECBATCH_OFF_RECORD_COUNT, 3);
    reseal(delta.p, delta.len);
    sf_wbuf_init(&cut);
    put_batch(&cut, 0, ts, 2, "cut");
    sf_wbuf_init(&legacy);
    put_message(&legacy, 1, 0, 1000, "k", "v");
    cases[0].what = "RecordCount larger than the records";
    cases[0].wb = &cnt;
    cases[0].len = cnt.len;
    cases[1].what = "RecordCount != LastOffsetDelta + 1";
    cases[1].wb = &delta;
    cases[1].len = delta.len;
    cases[2].what = "no records";
    cases[2].wb = &cut;
    cases[2].len = 0;
    cases[3].what = "a batch cut short";
    cases[3].wb = &cut;
    cases[3].len = cut.len - 1;
    cases[4].what = "magic 1 at Produce v3";
    cases[4].wb = &legacy;
    cases[4].len = legacy.len;
    for (i = 0; i < 5; i++) {
        sf_proto_ProduceResponse_PartitionProduceResponse_t *rp =
            produced(produce(i == 4 ? 3 : 8, "plain", 0, cases[i].wb->p, cases[i].len, 1));
        ck_assert_int_ne(rp->ErrorCode, 0);
        ck_assert_int_eq(sf_log_end_offset(log), 0);
        if (rp->ErrorCode != SF_KERR_INVALID_RECORD)
            snprintf(wrong + strlen(wrong), sizeof(wrong) - strlen(wrong), "; %s: %d",
                     cases[i].what, rp->ErrorCode);
    }
    sf_wbuf_free(&cnt);
    sf_wbuf_free(&delta);
    sf_wbuf_free(&cut);
    sf_wbuf_free(&legacy);
    ck_assert_msg(!wrong[0], "Kafka answers INVALID_RECORD (87)%s", wrong);
}
END_TEST

START_TEST(test_produce_log_append_time) {
    sf_proto_ProduceResponse_PartitionProduceResponse_t *rp;
    int64_t ts[2] = {1000, 2000}, before, after;
    sf_wbuf_t wb;
    got_t g;

    sf_wbuf_init(&wb);
    put_batch(&wb, 0, ts, 2, "lat");
    before = sf_clock_wall_ms();
    rp = produced(produce(8, "lat", 0, wb.p, wb.len, 1));
    after = sf_clock_wall_ms();
    ck_assert_int_eq(rp->ErrorCode, 0);
    ck_assert_int_ge(rp->LogAppendTimeMs, before);
    ck_assert_int_le(rp->LogAppendTimeMs, after);
    fetch_got(11, "lat", 0, 0, &g);
    ck_assert_int_eq(g.nbatches, 1);
    ck_assert(g.hdrs[0].Attributes & SF_RECBATCH_ATTR_LOG_APPEND_TIME);
    ck_assert_int_eq(g.hdrs[0].MaxTimestamp, rp->LogAppendTimeMs);
    /* Every record reads with the append time. */
    ck_assert_int_eq(g.recs[0].timestamp, rp->LogAppendTimeMs);
    ck_assert_int_eq(g.recs[1].timestamp, rp->LogAppendTimeMs);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_produce_create_time_max_timestamp) {
    int64_t ts[3] = {1000, 3000, 2000};
    sf_wbuf_t wb;
    got_t g;

    /* A producer that left MaxTimestamp at -1: the broker computes it from the records. */
    sf_wbuf_init(&wb);
    put_batch(&wb, 0, ts, 3, "ct");
    sf_store_be64(wb.p + SF_RECBATCH_OFF_MAX_TIMESTAMP, (uint64_t)-1);
    reseal(wb.p, wb.len);
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), 0);
    fetch_got(11, "plain", 0, 0, &g);
    ck_assert_int_eq(g.nbatches, 1);
    ck_assert_int_eq(g.hdrs[0].MaxTimestamp, 3000);
    ck_assert(!(g.hdrs[0].Attributes & SF_RECBATCH_ATTR_LOG_APPEND_TIME));
    ck_assert_int_eq(g.recs[2].timestamp, 2000);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_produce_topic_compression) {
    sf_wbuf_t wb;
    got_t g;
    sf_wbuf_init(&wb);
    put_simple(&wb, 0, 3, "gz");
    ck_assert_int_eq(produce_ok(9, "gz", 0, &wb), 0);
    fetch_got(11, "gz", 0, 0, &g);
    ck_assert_int_eq(g.nbatches, 1);
    ck_assert_int_eq(g.hdrs[0].Attributes & SF_RECBATCH_ATTR_COMPRESSION_MASK, SF_COMPRESS_GZIP);
    ck_assert_int_eq(g.nrecs, 3);
    ck_assert_str_eq(g.recs[2].key, "gz-k2");
    ck_assert_int_eq(g.recs[2].timestamp, 3000);
    /* A batch the producer compressed otherwise is recompressed too. */
    sf_wbuf_reset(&wb);
    put_simple(&wb, SF_COMPRESS_LZ4, 2, "lz");
    ck_assert_int_eq(produce_ok(9, "gz", 0, &wb), 3);
    fetch_got(11, "gz", 0, 3, &g);
    ck_assert_int_eq(g.hdrs[0].Attributes & SF_RECBATCH_ATTR_COMPRESSION_MASK, SF_COMPRESS_GZIP);
    ck_assert_str_eq(g.recs[1].value, "lz-v1");
    sf_wbuf_free(&wb);
}
END_TEST

/* ---- Fetch ---- */

START_TEST(test_fetch_every_version) {
    sf_wbuf_t wb;
    int16_t v;
    sf_wbuf_init(&wb);
    put_simple(&wb, 0, 2, "f");
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), 0);
    for (v = 0; v <= 17; v++) {
        reply_t *r = fetch(v, "plain", 0, 0);
        sf_proto_FetchResponse_t *resp = body_of(r);
        sf_proto_FetchResponse_PartitionData_t *rp = fetched(r);
        got_t g;
        ck_assert_msg(rp->ErrorCode == 0, "Fetch v%d: error %d", v, rp->ErrorCode);
        ck_assert_int_eq(rp->HighWatermark, 2);
        if (v >= 4)
            ck_assert_int_eq(rp->LastStableOffset, 2);
        if (v >= 5)
            ck_assert_int_eq(rp->LogStartOffset, 0);
        if (v >= 13) {
            sf_uuid_t id = uuid_of("plain");
            ck_assert(!memcmp(resp->Responses[0].TopicId.b, id.b, 16));
        } else {
            ck_assert(sf_slice_eq(resp->Responses[0].Topic, "plain"));
        }
        if (v < 4)
            got_messages(rp->Records, v < 2 ? 0 : 1, &g);
        else
            got_batches(rp->Records, &g);
        ck_assert_int_eq(g.nrecs, 2);
        ck_assert_str_eq(g.recs[1].key, "f-k1");
        ck_assert_str_eq(g.recs[1].value, "f-v1");
        ck_assert_int_eq(g.recs[1].offset, 1);
    }
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_fetch_unknown) {
    sf_uuid_t unknown;
    sf_proto_FetchResponse_PartitionData_t *rp;
    int16_t v;
    memset(&unknown, 0, sizeof(unknown));
    unknown.b[0] = 0x77;
    for (v = 13; v <= 17; v++) {
        rp = fetched(fetch_id(v, "plain", &unknown, 0, 0, 0, 1, 1 << 20));
        ck_assert_int_eq(rp->ErrorCode, SF_KERR_UNKNOWN_TOPIC_ID);
        ck_assert_int_le(rp->Records.len, 0);
    }
    rp = fetched(fetch(12, "nosuch", 0, 0));
    ck_assert_int_eq(rp->ErrorCode, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION);
    rp = fetched(fetch(4, "plain", 5, 0));
    ck_assert_int_eq(rp->ErrorCode, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION);
    /* Past the log end offset, and before the start. */
    rp = fetched(fetch(11, "plain", 0, 1));
    ck_assert_int_eq(rp->ErrorCode, SF_KERR_OFFSET_OUT_OF_RANGE);
    rp = fetched(fetch(11, "plain", 0, -1));
    ck_assert_int_eq(rp->ErrorCode, SF_KERR_OFFSET_OUT_OF_RANGE);
}
END_TEST

START_TEST(test_fetch_zstd) {
    sf_wbuf_t wb;
    int16_t v;
    sf_wbuf_init(&wb);
    put_simple(&wb, SF_COMPRESS_ZSTD, 2, "zs");
    ck_assert_int_eq(produce_ok(7, "plain", 0, &wb), 0);
    /* Below Fetch v10 (KIP-110) zstd cannot be read, down-converted or not. */
    for (v = 0; v <= 9; v++) {
        sf_proto_FetchResponse_PartitionData_t *rp = fetched(fetch(v, "plain", 0, 0));
        ck_assert_msg(rp->ErrorCode == SF_KERR_UNSUPPORTED_COMPRESSION_TYPE,
                      "Fetch v%d of zstd: error %d", v, rp->ErrorCode);
        ck_assert_int_le(rp->Records.len, 0);
    }
    for (v = 10; v <= 17; v++) {
        got_t g;
        fetch_got(v, "plain", 0, 0, &g);
        ck_assert_int_eq(g.nbatches, 1);
        ck_assert_int_eq(g.hdrs[0].Attributes & SF_RECBATCH_ATTR_COMPRESSION_MASK,
                         SF_COMPRESS_ZSTD);
        ck_assert_str_eq(g.recs[1].value, "zs-v1");
    }
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_fetch_long_poll) {
    sf_proto_FetchResponse_PartitionData_t *rp;
    reply_t *r;
    sf_wbuf_t wb;
    got_t g;

    sf_wbuf_init(&wb);
    put_simple(&wb, 0, 1, "old");
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), 0);
    /* At the log end, waiting for one byte: parked. */
    r = fetch_id(12, "plain", NULL, 0, 1, 5000, 1, 1 << 20);
    ck_assert_int_eq(r->state, R_PENDING);
    ck_assert_uint_eq(sf_purgatory_size(fb.purgatory), 1);
    /* An append to another partition does not complete it. */
    ck_assert_int_eq(produce_ok(9, "plain", 1, &wb), 0);
    ck_assert_int_ge(event_base_loop(fb.base, EVLOOP_NONBLOCK), 0);
    ck_assert_int_eq(r->state, R_PENDING);
    /* An append to its partition does, once the loop runs. */
    sf_wbuf_reset(&wb);
    put_simple(&wb, 0, 2, "new");
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), 1);
    ck_assert_int_eq(r->state, R_PENDING);
    ck_assert_int_ge(event_base_loop(fb.base, EVLOOP_NONBLOCK), 0);
    rp = fetched(r);
    ck_assert_int_eq(rp->ErrorCode, 0);
    ck_assert_int_eq(rp->HighWatermark, 3);
    got_batches(rp->Records, &g);
    ck_assert_int_eq(g.nrecs, 2);
    ck_assert_int_eq(g.recs[0].offset, 1);
    ck_assert_str_eq(g.recs[0].key, "new-k0");
    ck_assert_uint_eq(sf_purgatory_size(fb.purgatory), 0);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_fetch_wait_expires) {
    sf_proto_FetchResponse_PartitionData_t *rp;
    reply_t *r;
    /* Nothing comes: after MaxWaitMs the fetch is answered empty. */
    r = fetch_id(11, "plain", NULL, 0, 0, 30, 1, 1 << 20);
    ck_assert_int_eq(r->state, R_PENDING);
    /* The purgatory tries it once more right after parking; then its deadline passes. */
    ck_assert_int_ge(event_base_loop(fb.base, EVLOOP_ONCE), 0);
    ck_assert_int_eq(r->state, R_PENDING);
    ck_assert_int_ge(event_base_loop(fb.base, EVLOOP_ONCE), 0);
    rp = fetched(r);
    ck_assert_int_eq(rp->ErrorCode, 0);
    ck_assert_int_eq(rp->HighWatermark, 0);
    ck_assert_int_le(rp->Records.len, 0);
    ck_assert_uint_eq(sf_purgatory_size(fb.purgatory), 0);
    /* MinBytes 0 never waits. */
    r = fetch_id(11, "plain", NULL, 0, 0, 5000, 0, 1 << 20);
    ck_assert_int_eq(r->state, R_BODY);
}
END_TEST

START_TEST(test_fetch_limits) {
    sf_proto_FetchResponse_PartitionData_t *rp;
    sf_proto_FetchRequest_t req;
    sf_proto_FetchResponse_t *resp;
    sf_wbuf_t wb;
    got_t g;

    sf_wbuf_init(&wb);
    put_simple(&wb, 0, 3, "a");
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), 0);
    sf_wbuf_reset(&wb);
    put_simple(&wb, 0, 3, "b");
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), 3);
    /* KIP-74: a first batch larger than PartitionMaxBytes still comes whole, alone. */
    rp = fetched(fetch_id(11, "plain", NULL, 0, 0, 0, 1, 1));
    ck_assert_int_eq(rp->ErrorCode, 0);
    got_batches(rp->Records, &g);
    ck_assert_int_eq(g.nbatches, 1);
    ck_assert_int_eq(g.nrecs, 3);
    /* From the middle of a batch: the whole batch it is in (the client skips the rest). */
    rp = fetched(fetch(11, "plain", 0, 4));
    got_batches(rp->Records, &g);
    ck_assert_int_eq(g.hdrs[0].BaseOffset, 3);
    /* At the log end: nothing, no error. */
    rp = fetched(fetch(11, "plain", 0, 6));
    ck_assert_int_eq(rp->ErrorCode, 0);
    ck_assert_int_le(rp->Records.len, 0);
    /* Fetch sessions are not handed out: a session id is refused. */
    sf_proto_FetchRequest_init(&req);
    req.SessionId = 42;
    req.SessionEpoch = 1;
    resp = body_of(send_msg(SF_PROTO_API_Fetch, 7, &req));
    ck_assert_int_eq(resp->ErrorCode, SF_KERR_FETCH_SESSION_ID_NOT_FOUND);
    sf_wbuf_free(&wb);
}
END_TEST

/* ---- ListOffsets ---- */

START_TEST(test_list_offsets) {
    sf_proto_ListOffsetsResponse_ListOffsetsPartitionResponse_t *lp;
    int64_t ts[3] = {1000, 5000, 2000};
    sf_wbuf_t wb;
    int16_t v;

    sf_wbuf_init(&wb);
    put_batch(&wb, 0, ts, 3, "lo");
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), 0);
    /* v0: the old list of offsets. */
    lp = listed(0, "plain", 0, -1);
    ck_assert_int_eq(lp->ErrorCode, 0);
    ck_assert_int_eq(lp->OldStyleOffsetsCount, 1);
    ck_assert_int_eq(lp->OldStyleOffsets[0], 3);
    lp = listed(0, "plain", 0, -2);
    ck_assert_int_eq(lp->OldStyleOffsetsCount, 1);
    ck_assert_int_eq(lp->OldStyleOffsets[0], 0);
    for (v = 1; v <= 10; v++) {
        lp = listed(v, "plain", 0, -2);
        ck_assert_int_eq(lp->ErrorCode, 0);
        ck_assert_int_eq(lp->Offset, 0);
        lp = listed(v, "plain", 0, -1);
        ck_assert_int_eq(lp->ErrorCode, 0);
        ck_assert_int_eq(lp->Offset, 3);
        if (v >= 4)
            ck_assert_int_eq(lp->LeaderEpoch, 0);
        /* By timestamp: the first record at or after it. */
        lp = listed(v, "plain", 0, 1500);
        ck_assert_int_eq(lp->Offset, 1);
        ck_assert_int_eq(lp->Timestamp, 5000);
        lp = listed(v, "plain", 0, 5001);
        ck_assert_int_eq(lp->ErrorCode, 0);
        ck_assert_int_eq(lp->Offset, -1);
        ck_assert_int_eq(lp->Timestamp, -1);
    }
    /* MAX_TIMESTAMP (KIP-734): the record carrying the largest timestamp. */
    for (v = 7; v <= 10; v++) {
        lp = listed(v, "plain", 0, -3);
        ck_assert_int_eq(lp->ErrorCode, 0);
        ck_assert_int_eq(lp->Offset, 1);
        ck_assert_int_eq(lp->Timestamp, 5000);
    }
    sf_wbuf_free(&wb);
}
END_TEST

/* read_committed: Fetch and ListOffsets stop at the last stable offset, and Fetch lists the
 * aborted transactions it returns (null for read_uncommitted). */
START_TEST(test_read_committed) {
    sf_log_t *log = log_of("plain", 0);
    sf_proto_FetchResponse_PartitionData_t *rp;
    sf_recbatch_record_t rec;
    sf_recbatch_hdr_t h;
    int64_t off;
    sf_wbuf_t wb;
    int16_t v;
    sf_wbuf_init(&wb);
    put_simple(&wb, 0, 2, "rc");
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), 0);
    /* Producer 5's transaction at offset 2. */
    sf_wbuf_reset(&wb);
    memset(&h, 0, sizeof(h));
    memset(&rec, 0, sizeof(rec));
    h.Attributes = SF_RECBATCH_ATTR_TRANSACTIONAL;
    h.ProducerId = 5;
    rec.key = rec.value = sf_slice_cstr("t");
    ck_assert_int_eq(sf_recbatch_build_hdr(&wb, &h, &rec, 1), SF_OK);
    ck_assert_int_eq(sf_log_append(log, wb.p, wb.len, 0, NULL), SF_OK);
    for (v = 4; v <= 17; v += 13) {
        isolation = 0;
        rp = fetched(fetch(v, "plain", 0, 0));
        ck_assert_int_eq(rp->HighWatermark, 3);
        ck_assert_int_eq(rp->LastStableOffset, 2);
        ck_assert_int_eq(rp->AbortedTransactionsCount, -1);
        ck_assert_int_gt(rp->Records.len, 0);
        isolation = 1;
        rp = fetched(fetch(v, "plain", 0, 2));
        ck_assert_int_eq(rp->ErrorCode, 0);
        ck_assert_int_eq(rp->Records.len, 0); /* nothing below the LSO there */
        ck_assert_int_eq(rp->AbortedTransactionsCount, 0);
        ck_assert_int_eq(listed(v > 10 ? 7 : 2, "plain", 0, -1)->Offset, 2);
    }
    ck_assert_int_eq(sf_log_append_marker(log, 5, 0, 0, 0, 0, &off), SF_OK);
    ck_assert_int_eq(off, 3);
    for (v = 4; v <= 17; v += 13) {
        isolation = 1;
        rp = fetched(fetch(v, "plain", 0, 2));
        ck_assert_int_eq(rp->LastStableOffset, 4);
        ck_assert_int_gt(rp->Records.len, 0);
        ck_assert_int_eq(rp->AbortedTransactionsCount, 1);
        ck_assert_int_eq(rp->AbortedTransactions[0].ProducerId, 5);
        ck_assert_int_eq(rp->AbortedTransactions[0].FirstOffset, 2);
        rp = fetched(fetch(v, "plain", 0, 4));
        ck_assert_int_eq(rp->AbortedTransactionsCount, 0);
        ck_assert_int_eq(listed(v > 10 ? 7 : 2, "plain", 0, -1)->Offset, 4);
    }
    isolation = 0;
    sf_wbuf_free(&wb);
}
END_TEST

/* A batch of producer 11 at epoch 0 from sequence @seq, transactional or not. */
static void put_producer(sf_wbuf_t *wb, int transactional, int32_t seq) {
    sf_recbatch_record_t rec;
    sf_recbatch_hdr_t h;
    sf_wbuf_reset(wb);
    memset(&h, 0, sizeof(h));
    memset(&rec, 0, sizeof(rec));
    h.Attributes = transactional ? SF_RECBATCH_ATTR_TRANSACTIONAL : 0;
    h.ProducerId = 11;
    h.BaseSequence = seq;
    rec.key = rec.value = sf_slice_cstr("v");
    ck_assert_int_eq(sf_recbatch_build_hdr(wb, &h, &rec, 1), SF_OK);
}

/* KIP-890: a transaction's first batch on a partition is appended only once the coordinator
 * confirmed the partition is in it, and only if no marker ended it meanwhile. */
START_TEST(test_produce_txn_verification) {
    sf_log_t *log = log_of("plain", 0);
    sf_wbuf_t wb;
    sf_wbuf_init(&wb);
    put_producer(&wb, 1, 0);
    refused(9, "plain", 0, wb.p, wb.len, 1, SF_KERR_INVALID_TXN_STATE, "no transactional id");
    ck_assert_int_eq(fake_verify_calls, 0);
    produce_txn_id = "txn";
    fake_verify_err = SF_KERR_INVALID_TXN_STATE;
    refused(9, "plain", 0, wb.p, wb.len, 1, SF_KERR_INVALID_TXN_STATE, "not in the transaction");
    fake_verify_err = SF_KERR_CONCURRENT_TRANSACTIONS;
    refused(9, "plain", 0, wb.p, wb.len, -1, SF_KERR_NOT_ENOUGH_REPLICAS, "busy coordinator");
    fake_verify_err = SF_KERR_PRODUCER_FENCED;
    refused(9, "plain", 0, wb.p, wb.len, 1, SF_KERR_INVALID_PRODUCER_EPOCH, "fenced");
    /* Confirmed, but aborted before the append: still refused. */
    fake_verify_err = SF_KERR_NONE;
    fake_verify_abort = log;
    ck_assert_int_eq(produced(produce(9, "plain", 0, wb.p, wb.len, 1))->ErrorCode,
                     SF_KERR_INVALID_TXN_STATE);
    fake_verify_abort = NULL;
    ck_assert_int_eq(fake_verify_calls, 4);
    ck_assert_int_eq(sf_log_last_stable_offset(log), sf_log_end_offset(log));
    /* Confirmed: appended; the next batch of the transaction needs no verification. */
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), sf_log_end_offset(log) - 1);
    put_producer(&wb, 1, 1);
    produce_ok(9, "plain", 0, &wb);
    ck_assert_int_eq(fake_verify_calls, 5);
    ck_assert_int_lt(sf_log_last_stable_offset(log), sf_log_end_offset(log));
    /* A plain batch inside the transaction is refused. */
    put_producer(&wb, 0, 2);
    refused(9, "plain", 0, wb.p, wb.len, 1, SF_KERR_INVALID_TXN_STATE, "plain in a transaction");
    produce_txn_id = NULL;
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_list_offsets_compressed) {
    sf_proto_ListOffsetsResponse_ListOffsetsPartitionResponse_t *lp;
    int64_t ts[4] = {1000, 2000, 3000, 4000}, late[3] = {1500, 9000, 1200};
    sf_wbuf_t wb;
    sf_wbuf_init(&wb);
    put_batch(&wb, 0, ts, 4, "c");
    ck_assert_int_eq(produce_ok(9, "gz", 0, &wb), 0);
    /* Stored gzip-compressed (compression.type=gzip): the lookup looks inside the batch. */
    lp = listed(5, "gz", 0, 2000);
    ck_assert_int_eq(lp->Offset, 1);
    ck_assert_int_eq(lp->Timestamp, 2000);
    lp = listed(5, "gz", 0, 2500);
    ck_assert_int_eq(lp->Offset, 2);
    ck_assert_int_eq(lp->Timestamp, 3000);
    lp = listed(5, "gz", 0, 0);
    ck_assert_int_eq(lp->Offset, 0);
    lp = listed(8, "gz", 0, -3);
    ck_assert_int_eq(lp->Offset, 3);
    ck_assert_int_eq(lp->Timestamp, 4000);
    /* A second batch whose largest timestamp is on its middle record: that record's offset
     * (Kafka 3.9, KAFKA-16310), not the batch's last. */
    sf_wbuf_reset(&wb);
    put_batch(&wb, 0, late, 3, "m");
    ck_assert_int_eq(produce_ok(9, "gz", 0, &wb), 4);
    lp = listed(8, "gz", 0, -3);
    ck_assert_int_eq(lp->Offset, 5);
    ck_assert_int_eq(lp->Timestamp, 9000);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_list_offsets_limits) {
    sf_proto_ListOffsetsResponse_ListOffsetsPartitionResponse_t *lp;
    /* An empty log: earliest = latest = 0, no record for any timestamp or the max. */
    lp = listed(7, "plain", 0, -2);
    ck_assert_int_eq(lp->Offset, 0);
    lp = listed(7, "plain", 0, -1);
    ck_assert_int_eq(lp->Offset, 0);
    lp = listed(7, "plain", 0, 0);
    ck_assert_int_eq(lp->ErrorCode, 0);
    ck_assert_int_eq(lp->Offset, -1);
    lp = listed(7, "plain", 0, -3);
    ck_assert_int_eq(lp->ErrorCode, 0);
    ck_assert_int_eq(lp->Offset, -1);
    lp = listed(0, "plain", 0, 12345);
    ck_assert_int_eq(lp->OldStyleOffsetsCount, 0);
    lp = listed(3, "nosuch", 0, -1);
    ck_assert_int_eq(lp->ErrorCode, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION);
    lp = listed(0, "plain", 9, -1);
    ck_assert_int_eq(lp->ErrorCode, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION);
}
END_TEST

/* ---- Metadata ---- */

static const sf_proto_MetadataResponse_MetadataResponseTopic_t *
md_topic(const sf_proto_MetadataResponse_t *resp, const char *name) {
    int i;
    for (i = 0; i < resp->TopicsCount; i++)
        if (sf_slice_eq(resp->Topics[i].Name, name))
            return &resp->Topics[i];
    ck_abort_msg("topic %s not in the metadata", name);
    return NULL;
}

START_TEST(test_metadata) {
    sf_proto_MetadataResponse_t *resp;
    const sf_proto_MetadataResponse_MetadataResponseTopic_t *mt;
    static const char *const one[] = {"plain"};
    int16_t v;
    int i;

    /* v0: an empty list means every topic. */
    resp = metadata(0, NULL, 0, true);
    ck_assert_int_eq(resp->TopicsCount, NTOPICS);
    ck_assert_int_eq(resp->BrokersCount, 1);
    ck_assert_int_eq(resp->Brokers[0].NodeId, 1);
    ck_assert(sf_slice_eq(resp->Brokers[0].Host, "127.0.0.1"));
    ck_assert_int_eq(resp->Brokers[0].Port, 9092);
    mt = md_topic(resp, "plain");
    ck_assert_int_eq(mt->ErrorCode, 0);
    ck_assert_int_eq(mt->PartitionsCount, 2);
    ck_assert_int_eq(mt->Partitions[1].LeaderId, 1);
    ck_assert_int_eq(mt->Partitions[1].PartitionIndex, 1);
    /* v1+: null means every topic, empty none. */
    for (v = 1; v <= 12; v++) {
        resp = metadata(v, NULL, -1, true);
        ck_assert_int_eq(resp->TopicsCount, NTOPICS);
        ck_assert_int_eq(resp->ControllerId, 1);
        resp = metadata(v, NULL, 0, true);
        ck_assert_int_eq(resp->TopicsCount, 0);
        ck_assert_int_eq(resp->BrokersCount, 1);
        resp = metadata(v, one, 1, true);
        ck_assert_int_eq(resp->TopicsCount, 1);
        ck_assert_int_eq(resp->Topics[0].ErrorCode, 0);
        ck_assert_int_eq(resp->Topics[0].PartitionsCount, 2);
        if (v >= 2)
            ck_assert(sf_slice_eq(resp->ClusterId, "check-kafka-cluster"));
        /* v10+: topic ids. */
        if (v >= 10) {
            sf_uuid_t id = uuid_of("plain");
            ck_assert(!memcmp(resp->Topics[0].TopicId.b, id.b, 16));
        }
    }
    resp = metadata(10, NULL, -1, true);
    for (i = 0; i < NTOPICS; i++) {
        sf_uuid_t id = uuid_of(topic_defs[i].name);
        ck_assert(!memcmp(md_topic(resp, topic_defs[i].name)->TopicId.b, id.b, 16));
    }
}
END_TEST

START_TEST(test_metadata_by_topic_id) {
    sf_proto_MetadataRequest_t req;
    sf_proto_MetadataRequest_MetadataRequestTopic_t topics[2];
    sf_proto_MetadataResponse_t *resp;
    sf_uuid_t id = uuid_of("gz");
    sf_proto_MetadataRequest_init(&req);
    sf_proto_MetadataRequest_MetadataRequestTopic_init(&topics[0]);
    sf_proto_MetadataRequest_MetadataRequestTopic_init(&topics[1]);
    topics[0].Name = sf_slice_cstr(NULL);
    topics[0].TopicId = id;
    topics[1].Name = sf_slice_cstr(NULL);
    topics[1].TopicId.b[3] = 0x42; /* no such topic */
    req.TopicsCount = 2;
    req.Topics = topics;
    resp = body_of(send_msg(SF_PROTO_API_Metadata, 12, &req));
    ck_assert_int_eq(resp->TopicsCount, 2);
    ck_assert_int_eq(resp->Topics[0].ErrorCode, 0);
    ck_assert(sf_slice_eq(resp->Topics[0].Name, "gz"));
    ck_assert(!memcmp(resp->Topics[0].TopicId.b, id.b, 16));
    ck_assert_int_eq(resp->Topics[0].PartitionsCount, 1);
    ck_assert_int_eq(resp->Topics[1].ErrorCode, SF_KERR_UNKNOWN_TOPIC_ID);
}
END_TEST

START_TEST(test_metadata_unknown_topics) {
    static const char *const offsets[] = {"__consumer_offsets"};
    static const char *const fresh[] = {"fresh"};
    static const char *const bad[] = {"bad/name"};
    sf_proto_MetadataResponse_t *resp;
    char longname[251];
    const char *const lng[] = {longname};
    int16_t v;

    ck_assert(fb.cfg->auto_create_topics_enable);
    for (v = 0; v <= 12; v++) {
        /* Kafka's internal topics are never auto-created as ordinary ones. */
        resp = metadata(v, offsets, 1, true);
        ck_assert_int_eq(resp->TopicsCount, 1);
        ck_assert_int_eq(resp->Topics[0].ErrorCode, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION);
        /* Another unknown topic is auto-created: the client sees LEADER_NOT_AVAILABLE until
         * it shows up (here it never does: there is no ZooKeeper). */
        resp = metadata(v, fresh, 1, true);
        ck_assert_int_eq(resp->Topics[0].ErrorCode, SF_KERR_LEADER_NOT_AVAILABLE);
        /* ... unless the client asks not to (v4+). */
        resp = metadata(v, fresh, 1, false);
        ck_assert_int_eq(resp->Topics[0].ErrorCode, v >= 4 ? SF_KERR_UNKNOWN_TOPIC_OR_PARTITION
                                                           : SF_KERR_LEADER_NOT_AVAILABLE);
        resp = metadata(v, bad, 1, true);
        ck_assert_int_eq(resp->Topics[0].ErrorCode, SF_KERR_INVALID_TOPIC_EXCEPTION);
    }
    memset(longname, 'x', 250);
    longname[250] = '\0';
    resp = metadata(9, lng, 1, true);
    ck_assert_int_eq(resp->Topics[0].ErrorCode, SF_KERR_INVALID_TOPIC_EXCEPTION);
}
END_TEST

/* ---- DescribeConfigs ---- */

START_TEST(test_describe_configs) {
    size_t n, i;
    const sf_topiccfg_def_t *defs = sf_topiccfg_all(&n);
    int16_t v;
    ck_assert_uint_gt(n, 30);
    for (v = 0; v <= 4; v++) {
        const sf_proto_DescribeConfigsResponse_DescribeConfigsResult_t *rr =
            describe_topic(v, "gz", v >= 1);
        const sf_proto_DescribeConfigsResponse_DescribeConfigsResourceResult_t *c;
        int j, found = 0;
        ck_assert_int_eq(rr->ErrorCode, 0);
        ck_assert_int_eq(rr->ResourceType, 2);
        ck_assert(sf_slice_eq(rr->ResourceName, "gz"));
        /* Every Kafka topic config. */
        ck_assert_int_eq(rr->ConfigsCount, (int32_t)n);
        for (i = 0; i < n; i++)
            ck_assert(sf_slice_eq(rr->Configs[i].Name, defs[i].name));
        /* The override. */
        c = config_entry(rr, "compression.type");
        ck_assert(sf_slice_eq(c->Value, "gzip"));
        ck_assert(!c->ReadOnly);
        if (v == 0) {
            ck_assert(!c->IsDefault);
            ck_assert(config_entry(rr, "segment.bytes")->IsDefault);
            continue;
        }
        ck_assert_int_eq(c->ConfigSource, 1);
        ck_assert_int_ge(c->SynonymsCount, 1);
        ck_assert(sf_slice_eq(c->Synonyms[0].Name, "compression.type"));
        ck_assert(sf_slice_eq(c->Synonyms[0].Value, "gzip"));
        ck_assert_int_eq(c->Synonyms[0].Source, 1);
        /* A Kafka default. */
        c = config_entry(rr, "segment.bytes");
        ck_assert(sf_slice_eq(c->Value, "1073741824"));
        ck_assert_int_eq(c->ConfigSource, 5);
        /* log.retention.hours=100 in the broker's file, in the topic config's unit. */
        c = config_entry(rr, "retention.ms");
        ck_assert(sf_slice_eq(c->Value, "360000000"));
        ck_assert_int_eq(c->ConfigSource, 4);
        for (j = 0; j < c->SynonymsCount; j++)
            if (sf_slice_eq(c->Synonyms[j].Name, "log.retention.hours")) {
                ck_assert(sf_slice_eq(c->Synonyms[j].Value, "360000000"));
                ck_assert_int_eq(c->Synonyms[j].Source, 4);
                found = 1;
            }
        ck_assert(found);
        if (v >= 3)
            ck_assert_int_eq(c->ConfigType, 5); /* LONG */
    }
    /* Without IncludeSynonyms, none. */
    ck_assert_int_eq(config_entry(describe_topic(1, "gz", false), "retention.ms")->SynonymsCount,
                     0);
}
END_TEST

START_TEST(test_describe_configs_unknown) {
    int16_t v;
    for (v = 0; v <= 4; v++) {
        const sf_proto_DescribeConfigsResponse_DescribeConfigsResult_t *rr =
            describe_topic(v, "nosuch", v >= 1);
        ck_assert_int_eq(rr->ErrorCode, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION);
        ck_assert_int_eq(rr->ConfigsCount, 0);
    }
}
END_TEST

/* ---- dynamic broker configs: DescribeConfigs and (validate-only) IncrementalAlterConfigs ---- */

static sf_cluster_config_entry_t *entries(const char *const *kv, int n) {
    sf_cluster_config_entry_t *e = calloc((size_t)n, sizeof(*e));
    int i;
    ck_assert_ptr_nonnull(e);
    for (i = 0; i < n; i++) {
        e[i].name = strdup(kv[2 * i]);
        e[i].value = strdup(kv[2 * i + 1]);
    }
    return e;
}

static sf_proto_DescribeConfigsResponse_DescribeConfigsResult_t *describe_broker(const char *name) {
    sf_proto_DescribeConfigsRequest_t req;
    sf_proto_DescribeConfigsRequest_DescribeConfigsResource_t res;
    sf_proto_DescribeConfigsResponse_t *resp;
    sf_proto_DescribeConfigsRequest_init(&req);
    sf_proto_DescribeConfigsRequest_DescribeConfigsResource_init(&res);
    res.ResourceType = 4; /* BROKER */
    res.ResourceName = sf_slice_cstr(name);
    res.ConfigurationKeysCount = -1;
    req.ResourcesCount = 1;
    req.Resources = &res;
    req.IncludeSynonyms = true;
    resp = body_of(send_msg(SF_PROTO_API_DescribeConfigs, 1, &req));
    ck_assert_int_eq(resp->ResultsCount, 1);
    return &resp->Results[0];
}

/* One IncrementalAlterConfigs v1 change of a BROKER resource: the error code. */
static int16_t alter_broker(const char *name, const char *key, int8_t op, const char *value,
                            bool validate_only) {
    sf_proto_IncrementalAlterConfigsRequest_t req;
    sf_proto_IncrementalAlterConfigsRequest_AlterConfigsResource_t res;
    sf_proto_IncrementalAlterConfigsRequest_AlterableConfig_t ch;
    sf_proto_IncrementalAlterConfigsResponse_t *resp;
    sf_proto_IncrementalAlterConfigsRequest_init(&req);
    sf_proto_IncrementalAlterConfigsRequest_AlterConfigsResource_init(&res);
    sf_proto_IncrementalAlterConfigsRequest_AlterableConfig_init(&ch);
    ch.Name = sf_slice_cstr(key);
    ch.ConfigOperation = op;
    ch.Value = sf_slice_cstr(value);
    res.ResourceType = 4;
    res.ResourceName = sf_slice_cstr(name);
    res.ConfigsCount = 1;
    res.Configs = &ch;
    req.ResourcesCount = 1;
    req.Resources = &res;
    req.ValidateOnly = validate_only;
    resp = body_of(send_msg(SF_PROTO_API_IncrementalAlterConfigs, 1, &req));
    ck_assert_int_eq(resp->ResponsesCount, 1);
    ck_assert_int_eq(resp->Responses[0].ResourceType, 4);
    ck_assert(sf_slice_eq(resp->Responses[0].ResourceName, name));
    return resp->Responses[0].ErrorCode;
}

START_TEST(test_dynamic_broker_configs) {
    static const char *const mine[] = {"log.retention.ms", "7000"};
    static const char *const dflt[] = {"log.message.timestamp.type", "LogAppendTime",
                                       "log.retention.ms", "5000", "no.such.setting", "1"};
    const sf_proto_DescribeConfigsResponse_DescribeConfigsResult_t *rr;
    const sf_proto_DescribeConfigsResponse_DescribeConfigsResourceResult_t *c;
    int i;
    /* As the snapshot of ZooKeeper's /config/brokers/1 and /config/brokers/<default>. */
    fb.snap->broker_configs = entries(mine, 1);
    fb.snap->nbroker_configs = 1;
    fb.snap->default_configs = entries(dflt, 3);
    fb.snap->ndefault_configs = 3;
    refresh_view();

    rr = describe_broker("1");
    ck_assert_int_eq(rr->ErrorCode, 0);
    for (i = 0; i < rr->ConfigsCount; i++)
        ck_assert(!rr->Configs[i].ReadOnly); /* every broker setting behind a topic config */
    c = config_entry(rr, "log.retention.ms");
    ck_assert(sf_slice_eq(c->Value, "7000"));
    ck_assert_int_eq(c->ConfigSource, 2); /* DYNAMIC_BROKER_CONFIG */
    ck_assert_int_eq(c->SynonymsCount, 4);
    ck_assert(sf_slice_eq(c->Synonyms[1].Name, "log.retention.ms"));
    ck_assert(sf_slice_eq(c->Synonyms[1].Value, "5000"));
    ck_assert_int_eq(c->Synonyms[1].Source, 3);
    ck_assert(sf_slice_eq(c->Synonyms[2].Name, "log.retention.hours"));
    ck_assert_int_eq(c->Synonyms[2].Source, 4);
    ck_assert_int_eq(c->Synonyms[3].Source, 5);
    c = config_entry(rr, "log.message.timestamp.type");
    ck_assert(sf_slice_eq(c->Value, "LogAppendTime"));
    ck_assert_int_eq(c->ConfigSource, 3); /* DYNAMIC_DEFAULT_BROKER_CONFIG */
    ck_assert_int_eq(config_entry(rr, "log.segment.bytes")->ConfigSource, 5);
    /* A topic inherits them. */
    c = config_entry(describe_topic(1, "gz", true), "retention.ms");
    ck_assert(sf_slice_eq(c->Value, "7000"));
    ck_assert_int_eq(c->ConfigSource, 2);
    /* The default: only what is set, as stored (settings StreamFlow does not know left out). */
    rr = describe_broker("");
    ck_assert_int_eq(rr->ErrorCode, 0);
    ck_assert_int_eq(rr->ConfigsCount, 2);
    ck_assert(sf_slice_eq(rr->Configs[0].Name, "log.message.timestamp.type"));
    ck_assert(sf_slice_eq(rr->Configs[1].Value, "5000"));
    ck_assert_int_eq(rr->Configs[1].ConfigSource, 3);
    ck_assert_int_eq(rr->Configs[1].SynonymsCount, 1);
    ck_assert_int_eq(describe_broker("2")->ErrorCode, SF_KERR_INVALID_REQUEST);
    ck_assert_int_eq(describe_broker("x1")->ErrorCode, SF_KERR_INVALID_REQUEST);

    /* Validation, as the topic configs behind them (hours in ms); no write without
     * validate_only, as the broker is not in ZooKeeper. */
    ck_assert_int_eq(alter_broker("1", "log.retention.hours", 0, "5", true), 0);
    ck_assert_int_eq(alter_broker("", "log.cleanup.policy", 2, "compact", true), 0);
    ck_assert_int_eq(alter_broker("01", "log.retention.ms", 0, "5", true), 0);
    ck_assert_int_eq(alter_broker("1", "log.retention.hours", 0, "5h", true),
                     SF_KERR_INVALID_CONFIG);
    ck_assert_int_eq(alter_broker("1", "log.retention.minutes", 0, "-2", true), 0); /* -1 */
    ck_assert_int_eq(alter_broker("1", "log.segment.bytes", 0, "13", true), SF_KERR_INVALID_CONFIG);
    ck_assert_int_eq(alter_broker("1", "log.dirs", 0, "/x", true), SF_KERR_INVALID_REQUEST);
    ck_assert_int_eq(alter_broker("1", "segment.bytes", 0, "1024", true), SF_KERR_INVALID_REQUEST);
    ck_assert_int_eq(alter_broker("", "no.such.setting", 1, NULL, true), 0); /* stored: removable */
    ck_assert_int_eq(alter_broker("", "log.dirs", 1, NULL, true), SF_KERR_INVALID_REQUEST);
    ck_assert_int_eq(alter_broker("1", "log.retention.ms", 2, "5", true), SF_KERR_INVALID_REQUEST);
    ck_assert_int_eq(alter_broker("2", "log.retention.ms", 0, "5", true), SF_KERR_INVALID_REQUEST);
    ck_assert_int_eq(alter_broker("12345678901", "log.retention.ms", 0, "5", true),
                     SF_KERR_INVALID_REQUEST);
    ck_assert_int_eq(alter_broker("1", "log.retention.ms", 0, "5", false), SF_KERR_NOT_CONTROLLER);
}
END_TEST

/* ---- controller APIs ---- */

START_TEST(test_controller_apis_not_controller) {
    int16_t v;
    /* No cluster here: this broker is not the controller, at every version. */
    for (v = 0; v <= 3; v++) {
        sf_proto_AlterPartitionRequest_t areq;
        sf_proto_AlterPartitionRequest_TopicData_t td;
        sf_proto_AlterPartitionRequest_PartitionData_t pd;
        sf_proto_AlterPartitionResponse_t *aresp;
        sf_proto_ControlledShutdownRequest_t creq;
        sf_proto_ControlledShutdownResponse_t *cresp;
        sf_proto_AlterPartitionRequest_init(&areq);
        sf_proto_AlterPartitionRequest_TopicData_init(&td);
        sf_proto_AlterPartitionRequest_PartitionData_init(&pd);
        areq.BrokerId = 1;
        areq.TopicsCount = 1;
        areq.Topics = &td;
        td.TopicName = sf_slice_cstr("t");
        td.PartitionsCount = 1;
        td.Partitions = &pd;
        aresp = body_of(send_msg(SF_PROTO_API_AlterPartition, v, &areq));
        ck_assert_int_eq(aresp->ErrorCode, SF_KERR_NOT_CONTROLLER);
        ck_assert_int_eq(aresp->TopicsCount, 0);
        sf_proto_ControlledShutdownRequest_init(&creq);
        creq.BrokerId = 1;
        cresp = body_of(send_msg(SF_PROTO_API_ControlledShutdown, v, &creq));
        ck_assert_int_eq(cresp->ErrorCode, SF_KERR_NOT_CONTROLLER);
        ck_assert_int_eq(cresp->RemainingPartitionsCount, 0);
    }
}
END_TEST

/* ---- DeleteRecords ---- */

START_TEST(test_delete_records) {
    sf_proto_DeleteRecordsResponse_DeleteRecordsPartitionResult_t *dp;
    sf_log_t *log = log_of("plain", 0);
    sf_wbuf_t wb;
    int16_t v;

    sf_wbuf_init(&wb);
    put_simple(&wb, 0, 2, "d");
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), 0);
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), 2);
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), 4);
    for (v = 0; v <= 2; v++) {
        dp = delete_records(v, "plain", 0, 1 + v);
        ck_assert_int_eq(dp->ErrorCode, 0);
        ck_assert_int_eq(dp->LowWatermark, 1 + v);
        ck_assert_int_eq(sf_log_start_offset(log), 1 + v);
    }
    ck_assert_int_eq(listed(1, "plain", 0, -2)->Offset, 3);
    ck_assert_int_eq(fetched(fetch(11, "plain", 0, 2))->ErrorCode, SF_KERR_OFFSET_OUT_OF_RANGE);
    ck_assert_int_eq(fetched(fetch(11, "plain", 0, 3))->LogStartOffset, 3);
    /* Above the high watermark: refused, nothing moves. */
    dp = delete_records(2, "plain", 0, 7);
    ck_assert_int_eq(dp->ErrorCode, SF_KERR_OFFSET_OUT_OF_RANGE);
    ck_assert_int_eq(sf_log_start_offset(log), 3);
    /* Below the start: nothing moves back. */
    dp = delete_records(2, "plain", 0, 1);
    ck_assert_int_eq(dp->ErrorCode, 0);
    ck_assert_int_eq(dp->LowWatermark, 3);
    /* -1: up to the high watermark. */
    dp = delete_records(2, "plain", 0, -1);
    ck_assert_int_eq(dp->ErrorCode, 0);
    ck_assert_int_eq(dp->LowWatermark, 6);
    ck_assert_int_eq(sf_log_start_offset(log), 6);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_delete_records_refused) {
    sf_proto_DeleteRecordsResponse_DeleteRecordsPartitionResult_t *dp;
    /* A compacted topic keeps the latest record of every key. */
    dp = delete_records(1, "compact", 0, 0);
    ck_assert_int_eq(dp->ErrorCode, SF_KERR_POLICY_VIOLATION);
    ck_assert_int_eq(dp->LowWatermark, -1);
    dp = delete_records(1, "nosuch", 0, 0);
    ck_assert_int_eq(dp->ErrorCode, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION);
    dp = delete_records(1, "plain", 3, 0);
    ck_assert_int_eq(dp->ErrorCode, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION);
    dp = delete_records(1, "plain", 0, -2);
    ck_assert_int_eq(dp->ErrorCode, SF_KERR_OFFSET_OUT_OF_RANGE);
}
END_TEST

/* ---- OffsetForLeaderEpoch ---- */

typedef sf_proto_OffsetForLeaderEpochResponse_EpochEndOffset_t epoch_end_t;

/* Where @epoch ends in @topic-@partition, asked with @replica_id (v3+) and @current (v2+). */
static epoch_end_t *epoch_end(int16_t v, int32_t replica_id, const char *topic,
                              int32_t partition, int32_t current, int32_t epoch) {
    sf_proto_OffsetForLeaderEpochRequest_t req;
    sf_proto_OffsetForLeaderEpochRequest_OffsetForLeaderTopic_t lt;
    sf_proto_OffsetForLeaderEpochRequest_OffsetForLeaderPartition_t lp;
    sf_proto_OffsetForLeaderEpochResponse_t *resp;
    sf_proto_OffsetForLeaderEpochRequest_init(&req);
    sf_proto_OffsetForLeaderEpochRequest_OffsetForLeaderTopic_init(&lt);
    sf_proto_OffsetForLeaderEpochRequest_OffsetForLeaderPartition_init(&lp);
    req.ReplicaId = replica_id;
    req.TopicsCount = 1;
    req.Topics = &lt;
    lt.Topic = sf_slice_cstr(topic);
    lt.PartitionsCount = 1;
    lt.Partitions = &lp;
    lp.Partition = partition;
    lp.CurrentLeaderEpoch = current;
    lp.LeaderEpoch = epoch;
    resp = body_of(send_msg(SF_PROTO_API_OffsetForLeaderEpoch, v, &req));
    ck_assert_int_eq(resp->TopicsCount, 1);
    ck_assert_int_eq(resp->Topics[0].PartitionsCount, 1);
    ck_assert_int_eq(resp->Topics[0].Partitions[0].Partition, partition);
    return &resp->Topics[0].Partitions[0];
}

static void expect_epoch_end(int16_t v, int32_t epoch, int32_t want_epoch, int64_t want_end) {
    epoch_end_t *ep = epoch_end(v, -1, "plain", 0, -1, epoch);
    ck_assert_int_eq(ep->ErrorCode, 0);
    ck_assert_msg(ep->EndOffset == want_end, "v%d epoch %d: end %lld", v, epoch,
                  (long long)ep->EndOffset);
    /* v0 carries no epoch: the decoder's default. */
    ck_assert_int_eq(ep->LeaderEpoch, v >= 1 ? want_epoch : -1);
}

/* The snapshot's partition, changed in place for a test (the views share it). */
static sf_cluster_partition_t *snap_partition(const char *topic, int32_t partition) {
    const sf_cluster_topic_t *t = sf_cluster_snapshot_topic(fb.snap, topic);
    ck_assert_ptr_nonnull(t);
    return (sf_cluster_partition_t *)&t->partitions[partition];
}

START_TEST(test_offset_for_leader_epoch) {
    sf_log_t *log = log_of("plain", 0);
    epoch_end_t *ep;
    sf_wbuf_t wb;
    int16_t v;

    sf_wbuf_init(&wb);
    put_simple(&wb, 0, 3, "e0");
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), 0); /* epoch 0: 0..2 */
    /* A leader change to epoch 2, recorded at the LEO as the replica manager does. */
    snap_partition("plain", 0)->leader_epoch = 2;
    refresh_view();
    sf_log_epoch_assign(log, 2, sf_log_end_offset(log));
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), 3); /* epoch 2: 3..5 */
    for (v = 0; v <= 4; v++) {
        expect_epoch_end(v, 0, 0, 3);
        expect_epoch_end(v, 1, 0, 3); /* between: the epoch below, the next one's start */
        expect_epoch_end(v, 2, 2, 6); /* the current one: the LEO */
        expect_epoch_end(v, 3, -1, -1);
        expect_epoch_end(v, -1, -1, -1);
    }
    /* KIP-320: the asker's idea of the current epoch is checked from v2. */
    for (v = 2; v <= 4; v++) {
        ep = epoch_end(v, -1, "plain", 0, 1, 0);
        ck_assert_int_eq(ep->ErrorCode, SF_KERR_FENCED_LEADER_EPOCH);
        ck_assert_int_eq(ep->EndOffset, -1);
        ep = epoch_end(v, -1, "plain", 0, 3, 0);
        ck_assert_int_eq(ep->ErrorCode, SF_KERR_UNKNOWN_LEADER_EPOCH);
        ep = epoch_end(v, 1, "plain", 0, 2, 0);
        ck_assert_int_eq(ep->ErrorCode, 0);
        ck_assert_int_eq(ep->EndOffset, 3);
    }
    /* A new epoch answers before its first write. */
    snap_partition("plain", 1)->leader_epoch = 4;
    refresh_view();
    sf_log_epoch_assign(log_of("plain", 1), 4, 0);
    ep = epoch_end(4, -1, "plain", 1, 4, 4);
    ck_assert_int_eq(ep->ErrorCode, 0);
    ck_assert_int_eq(ep->LeaderEpoch, 4);
    ck_assert_int_eq(ep->EndOffset, 0);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_offset_for_leader_epoch_refused) {
    epoch_end_t *ep;
    ep = epoch_end(4, -1, "nosuch", 0, -1, 0);
    ck_assert_int_eq(ep->ErrorCode, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION);
    ep = epoch_end(4, -1, "plain", 7, -1, 0);
    ck_assert_int_eq(ep->ErrorCode, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION);
    ep = epoch_end(3, -2, "plain", 7, -1, 0);
    ck_assert_int_eq(ep->ErrorCode, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION);
    /* Led elsewhere now: only a debugging tool (ReplicaId -2, v3+) reads this replica. */
    sf_log_epoch_assign(log_of("plain", 1), 0, 0);
    snap_partition("plain", 1)->leader = 2;
    refresh_view();
    ep = epoch_end(4, -1, "plain", 1, -1, 0);
    ck_assert_int_eq(ep->ErrorCode, SF_KERR_NOT_LEADER_OR_FOLLOWER);
    ep = epoch_end(3, 1, "plain", 1, -1, 0);
    ck_assert_int_eq(ep->ErrorCode, SF_KERR_NOT_LEADER_OR_FOLLOWER);
    ep = epoch_end(2, -1, "plain", 1, -1, 0); /* no ReplicaId on the wire before v3 */
    ck_assert_int_eq(ep->ErrorCode, SF_KERR_NOT_LEADER_OR_FOLLOWER);
    ep = epoch_end(3, -2, "plain", 1, -1, 0);
    ck_assert_int_eq(ep->ErrorCode, 0);
    ck_assert_int_eq(ep->LeaderEpoch, 0);
    ck_assert_int_eq(ep->EndOffset, 0);
    ep = epoch_end(4, -2, "plain", 1, 1, 0);
    ck_assert_int_eq(ep->ErrorCode, SF_KERR_UNKNOWN_LEADER_EPOCH);
}
END_TEST

/* ---- readiness and names ---- */

/* Before the first metadata snapshot, requests other than ApiVersions wait for it instead of
 * describing an empty cluster, and are answered once it arrives. */
START_TEST(test_dispatch_waits_for_metadata) {
    static const char *const plain[] = {"plain"};
    sf_proto_MetadataRequest_t req;
    sf_proto_MetadataRequest_MetadataRequestTopic_t t;
    sf_proto_MetadataResponse_t *resp;
    sf_view_t *view = fb.view;
    reply_t *r, *av, *first, *second;
    sf_wbuf_t wb;

    fb.view = NULL;
    sf_proto_MetadataRequest_init(&req);
    sf_proto_MetadataRequest_MetadataRequestTopic_init(&t);
    t.Name = sf_slice_cstr(plain[0]);
    req.TopicsCount = 1;
    req.Topics = &t;
    r = send_msg(SF_PROTO_API_Metadata, 4, &req);
    ck_assert_int_eq(r->state, R_PENDING);
    ck_assert_uint_eq(sf_purgatory_size(fb.purgatory), 1);
    av = send_raw(SF_PROTO_API_ApiVersions, 0, "", 0);
    ck_assert_int_eq(av->state, R_BODY);
    ck_assert_int_ge(event_base_loop(fb.base, EVLOOP_NONBLOCK), 0);
    ck_assert_int_eq(r->state, R_PENDING);
    /* The snapshot arrives: the topic is there. */
    fb.view = view;
    sf_purgatory_notify(fb.purgatory, sf_pkey_metadata());
    ck_assert_int_ge(event_base_loop(fb.base, EVLOOP_NONBLOCK), 0);
    resp = body_of(r);
    ck_assert_int_eq(resp->TopicsCount, 1);
    ck_assert_int_eq(resp->Topics[0].ErrorCode, 0);
    ck_assert_int_eq(resp->Topics[0].PartitionsCount, 2);

    /* A request that arrives after the snapshot but while others still wait queues behind
     * them: two pipelined appends keep their order. */
    sf_wbuf_init(&wb);
    put_simple(&wb, 0, 1, "first");
    fb.view = NULL;
    first = produce(9, "plain", 0, wb.p, wb.len, 1);
    ck_assert_int_eq(first->state, R_PENDING);
    fb.view = view;
    sf_purgatory_notify(fb.purgatory, sf_pkey_metadata());
    second = produce(9, "plain", 0, wb.p, wb.len, 1);
    ck_assert_int_eq(second->state, R_PENDING);
    ck_assert_int_ge(event_base_loop(fb.base, EVLOOP_NONBLOCK), 0);
    ck_assert_int_eq(produced(first)->ErrorCode, 0);
    ck_assert_int_eq(produced(first)->BaseOffset, 0);
    ck_assert_int_eq(produced(second)->ErrorCode, 0);
    ck_assert_int_eq(produced(second)->BaseOffset, 1);
    sf_wbuf_free(&wb);
}
END_TEST

/* A NUL inside a topic name is refused as an invalid name wherever a name is taken, never cut
 * short to the topic before it ("plain\0x" is not "plain"). */
START_TEST(test_names_with_nul) {
    static const char nul_plain[] = "plain\0x", nul_new[] = "fresh\0x";
    sf_proto_MetadataRequest_t mreq;
    sf_proto_MetadataRequest_MetadataRequestTopic_t mt;
    sf_proto_MetadataResponse_t *mresp;
    sf_proto_CreateTopicsRequest_t creq;
    sf_proto_CreateTopicsRequest_CreatableTopic_t ct;
    sf_proto_CreateTopicsResponse_t *cresp;
    sf_proto_ProduceRequest_t preq;
    sf_proto_ProduceRequest_TopicProduceData_t td;
    sf_proto_ProduceRequest_PartitionProduceData_t pd;
    sf_wbuf_t wb;
    reply_t *r;
    int16_t v;

    for (v = 1; v <= 12; v += 3) {
        sf_proto_MetadataRequest_init(&mreq);
        sf_proto_MetadataRequest_MetadataRequestTopic_init(&mt);
        mreq.TopicsCount = 1;
        mreq.Topics = &mt;
        mreq.AllowAutoTopicCreation = true;
        mt.Name = (sf_slice_t){(const uint8_t *)nul_plain, sizeof(nul_plain) - 1};
        mresp = body_of(send_msg(SF_PROTO_API_Metadata, v, &mreq));
        ck_assert_int_eq(mresp->Topics[0].ErrorCode, SF_KERR_INVALID_TOPIC_EXCEPTION);
        mt.Name = (sf_slice_t){(const uint8_t *)nul_new, sizeof(nul_new) - 1};
        mresp = body_of(send_msg(SF_PROTO_API_Metadata, v, &mreq));
        ck_assert_int_eq(mresp->Topics[0].ErrorCode, SF_KERR_INVALID_TOPIC_EXCEPTION);
    }
    /* CreateTopics, validate-only and real. */
    for (v = 0; v <= 1; v++) {
        sf_proto_CreateTopicsRequest_init(&creq);
        sf_proto_CreateTopicsRequest_CreatableTopic_init(&ct);
        ct.Name = (sf_slice_t){(const uint8_t *)nul_new, sizeof(nul_new) - 1};
        ct.NumPartitions = 1;
        ct.ReplicationFactor = 1;
        creq.TopicsCount = 1;
        creq.Topics = &ct;
        creq.ValidateOnly = v;
        cresp = body_of(send_msg(SF_PROTO_API_CreateTopics, 4, &creq));
        ck_assert_int_eq(cresp->TopicsCount, 1);
        ck_assert_int_eq(cresp->Topics[0].ErrorCode, SF_KERR_INVALID_TOPIC_EXCEPTION);
    }
    /* Produce: nothing reaches "plain". */
    sf_wbuf_init(&wb);
    put_simple(&wb, 0, 1, "nul");
    sf_proto_ProduceRequest_init(&preq);
    sf_proto_ProduceRequest_TopicProduceData_init(&td);
    sf_proto_ProduceRequest_PartitionProduceData_init(&pd);
    preq.TransactionalId = sf_slice_cstr(NULL);
    preq.Acks = 1;
    preq.TimeoutMs = 1000;
    preq.TopicDataCount = 1;
    preq.TopicData = &td;
    td.Name = (sf_slice_t){(const uint8_t *)nul_plain, sizeof(nul_plain) - 1};
    td.PartitionDataCount = 1;
    td.PartitionData = &pd;
    pd.Records.p = wb.p;
    pd.Records.len = (int32_t)wb.len;
    r = send_msg(SF_PROTO_API_Produce, 9, &preq);
    ck_assert_int_eq(produced(r)->ErrorCode, SF_KERR_INVALID_TOPIC_EXCEPTION);
    ck_assert_int_eq(sf_log_end_offset(log_of("plain", 0)), 0);
    sf_wbuf_free(&wb);
}
END_TEST

static Suite *kafka_suite(void) {
    Suite *s = suite_create("kafka");
    TCase *core = tcase_create("core"), *limits = tcase_create("limits");
    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_checked_fixture(limits, setup, teardown);
    tcase_add_test(core, test_api_versions);
    tcase_add_test(core, test_produce_every_version);
    tcase_add_test(core, test_produce_acks_zero);
    tcase_add_test(core, test_produce_legacy_formats);
    tcase_add_test(core, test_produce_log_append_time);
    tcase_add_test(core, test_produce_create_time_max_timestamp);
    tcase_add_test(core, test_produce_record_rules);
    tcase_add_test(core, test_produce_topic_compression);
    tcase_add_test(core, test_fetch_every_version);
    tcase_add_test(core, test_fetch_zstd);
    tcase_add_test(core, test_fetch_long_poll);
    tcase_add_test(core, test_list_offsets);
    tcase_add_test(core, test_read_committed);
    tcase_add_test(core, test_produce_txn_verification);
    tcase_add_test(core, test_list_offsets_compressed);
    tcase_add_test(core, test_metadata);
    tcase_add_test(core, test_metadata_by_topic_id);
    tcase_add_test(core, test_describe_configs);
    tcase_add_test(core, test_dynamic_broker_configs);
    tcase_add_test(core, test_delete_records);
    tcase_add_test(core, test_offset_for_leader_epoch);
    tcase_add_test(limits, test_api_versions_unknown_version);
    tcase_add_test(limits, test_api_versions_bad_client_software);
    tcase_add_test(limits, test_dispatch_closes);
    tcase_add_test(limits, test_produce_refusals);
    tcase_add_test(limits, test_produce_refusals_limits);
    tcase_add_test(limits, test_produce_invalid_record);
    tcase_add_test(limits, test_fetch_unknown);
    tcase_add_test(limits, test_fetch_wait_expires);
    tcase_add_test(limits, test_fetch_limits);
    tcase_add_test(limits, test_list_offsets_limits);
    tcase_add_test(limits, test_metadata_unknown_topics);
    tcase_add_test(limits, test_describe_configs_unknown);
    tcase_add_test(limits, test_delete_records_refused);
    tcase_add_test(limits, test_offset_for_leader_epoch_refused);
    tcase_add_test(limits, test_dispatch_waits_for_metadata);
    tcase_add_test(limits, test_names_with_nul);
    tcase_add_test(limits, test_controller_apis_not_controller);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(kafka_suite());
    int failed;
    /* Refusals log a line each; show them only on request. */
    if (!getenv("SF_TEST_LOG"))
        sf_log_level = 0;
    strcpy(basedir, "/tmp/sf-check-kafka-XXXXXX");
    if (!mkdtemp(basedir)) {
        perror(basedir);
        return EXIT_FAILURE;
    }
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    nftw(basedir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
