/* The fake broker of the Kafka request handler tests (see kafka_fixture.h). */
#include "kafka_fixture.h"

/* ---- the fake broker (broker.h) ---- */

struct sf_broker fb;
static char basedir[64]; /* made by kafka_fixture_main, removed at the end with every log */
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

int16_t fake_verify_err;
int fake_verify_calls;
sf_log_t *fake_verify_abort;

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

void refresh_view(void) {
    sf_view_unref(fb.view);
    ck_assert_ptr_nonnull(fb.view = sf_view_new(fb.snap, fb.cfg, partition_of, &fb));
}

/* ---- the fake server (server.h): every request has its own connection and reply ---- */

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

reply_t *send_raw(int16_t api, int16_t version, const void *body, size_t len) {
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

void encode_msg(int16_t api, int16_t version, const void *msg, sf_wbuf_t *wb) {
    const sf_proto_spec_t *spec = sf_proto_spec_get(api);
    int rc;
    ck_assert_ptr_nonnull(spec);
    sf_wbuf_init(wb);
    rc = spec->RequestEncode(wb, version, msg);
    ck_assert_msg(rc == SF_OK, "%s v%d request does not encode: %s", spec->Name, version,
                  sf_err_str(rc));
}

reply_t *send_msg(int16_t api, int16_t version, const void *msg) {
    sf_wbuf_t wb;
    reply_t *r;
    encode_msg(api, version, msg, &wb);
    r = send_raw(api, version, wb.p, wb.len);
    sf_wbuf_free(&wb);
    return r;
}

void *body_of(const reply_t *r) {
    ck_assert_msg(r->state == R_BODY, "%s v%d: no response (state %d)",
                  sf_proto_api_name(r->api), r->version, r->state);
    return r->msg;
}

/* ---- fixture: the broker's parts ---- */

const topic_def_t topic_defs[NTOPICS] = {
    {"compact", 1, {"cleanup.policy", "compact"}},
    {"gz", 1, {"compression.type", "gzip"}},
    {"lat", 1, {"message.timestamp.type", "LogAppendTime"}},
    {"plain", 2, {NULL, NULL}},
};

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

void setup(void) {
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
            fb.parts[fb.nlogs] = sf_partition_new(log, NULL, NULL, NULL, NULL);
            ck_assert_ptr_nonnull(fb.parts[fb.nlogs]);
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

void teardown(void) {
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

sf_log_t *log_of(const char *topic, int32_t partition) {
    sf_partition_t *part = partition_of(&fb, topic, partition);
    ck_assert_ptr_nonnull(part);
    return part->log;
}

sf_uuid_t uuid_of(const char *topic) {
    const sf_cluster_topic_t *t = sf_cluster_snapshot_topic(fb.snap, topic);
    sf_uuid_t id;
    ck_assert_ptr_nonnull(t);
    memcpy(id.b, t->topic_id, sizeof(id.b));
    return id;
}

/* ---- records ---- */

void put_records(sf_wbuf_t *wb, int16_t attrs, const sf_recbatch_record_t *recs, int n) {
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

void put_batch(sf_wbuf_t *wb, int16_t attrs, const int64_t *ts, int n, const char *tag) {
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

void put_simple(sf_wbuf_t *wb, int16_t attrs, int n, const char *tag) {
    int64_t ts[16];
    int i;
    for (i = 0; i < n; i++)
        ts[i] = 1000 * (i + 1);
    put_batch(wb, attrs, ts, n, tag);
}

void reseal(uint8_t *p, size_t size) {
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

void put_message(sf_wbuf_t *wb, int magic, int64_t offset, int64_t ts, const char *key,
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

static void copy_slice(char *dst, size_t size, sf_slice_t s) {
    size_t n = s.len > 0 ? (size_t)s.len : 0;
    ck_assert_uint_lt(n, size);
    memcpy(dst, s.p, n);
    dst[n] = '\0';
}

void got_batches(sf_slice_t records, got_t *g) {
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

void got_messages(sf_slice_t records, int magic, got_t *g) {
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

const char *produce_txn_id;

reply_t *produce(int16_t v, const char *topic, int32_t partition, const void *records,
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

sf_proto_ProduceResponse_PartitionProduceResponse_t *produced(const reply_t *r) {
    sf_proto_ProduceResponse_t *resp = body_of(r);
    ck_assert_int_eq(resp->ResponsesCount, 1);
    ck_assert_int_eq(resp->Responses[0].PartitionResponsesCount, 1);
    return &resp->Responses[0].PartitionResponses[0];
}

int64_t produce_ok(int16_t v, const char *topic, int32_t partition, const sf_wbuf_t *wb) {
    reply_t *r = produce(v, topic, partition, wb->p, wb->len, 1);
    sf_proto_ProduceResponse_PartitionProduceResponse_t *rp = produced(r);
    ck_assert_msg(rp->ErrorCode == 0, "Produce v%d to %s-%d: error %d", v, topic, partition,
                  rp->ErrorCode);
    return rp->BaseOffset;
}

int8_t isolation;

reply_t *fetch_id(int16_t v, const char *topic, const sf_uuid_t *id, int32_t partition,
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

reply_t *fetch(int16_t v, const char *topic, int32_t partition, int64_t offset) {
    return fetch_id(v, topic, NULL, partition, offset, 0, 1, 1 << 20);
}

sf_proto_FetchResponse_PartitionData_t *fetched(const reply_t *r) {
    sf_proto_FetchResponse_t *resp = body_of(r);
    if (r->version >= 7)
        ck_assert_int_eq(resp->ErrorCode, 0);
    ck_assert_int_eq(resp->ResponsesCount, 1);
    ck_assert_int_eq(resp->Responses[0].PartitionsCount, 1);
    return &resp->Responses[0].Partitions[0];
}

sf_proto_FetchResponse_PartitionData_t *fetch_got(int16_t v, const char *topic,
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

sf_proto_ListOffsetsResponse_ListOffsetsPartitionResponse_t *
listed(int16_t v, const char *topic, int32_t partition, int64_t ts) {
    sf_proto_ListOffsetsResponse_t *resp = body_of(list_offsets(v, topic, partition, ts));
    ck_assert_int_eq(resp->TopicsCount, 1);
    ck_assert_int_eq(resp->Topics[0].PartitionsCount, 1);
    return &resp->Topics[0].Partitions[0];
}

sf_proto_MetadataResponse_t *metadata(int16_t v, const char *const *names, int n,
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

sf_proto_DescribeConfigsResponse_DescribeConfigsResult_t *
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

const sf_proto_DescribeConfigsResponse_DescribeConfigsResourceResult_t *
config_entry(const sf_proto_DescribeConfigsResponse_DescribeConfigsResult_t *rr,
      const char *name) {
    int i;
    for (i = 0; i < rr->ConfigsCount; i++)
        if (sf_slice_eq(rr->Configs[i].Name, name))
            return &rr->Configs[i];
    ck_abort_msg("config %s not described", name);
    return NULL;
}

sf_proto_DeleteRecordsResponse_DeleteRecordsPartitionResult_t *
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

int kafka_fixture_main(Suite *s, const char *name) {
    SRunner *sr = srunner_create(s);
    int failed;
    /* Refusals log a line each; show them only on request. */
    if (!getenv("SF_TEST_LOG"))
        sf_log_level = 0;
    snprintf(basedir, sizeof(basedir), "/tmp/sf-check-%s-XXXXXX", name);
    if (!mkdtemp(basedir)) {
        perror(basedir);
        srunner_free(sr);
        return EXIT_FAILURE;
    }
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    nftw(basedir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
