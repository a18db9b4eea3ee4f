#include "config.h"

#include "handler.h"

#include <errno.h>
#include <event2/event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brokercfg.h"
#include "clock.h"
#include "cluster.h"
#include "err.h"
#include "log.h"
#include "logging.h"
#include "proto.h"

/* Longest an admin request waits for its change to show in the metadata. */
#define ADMIN_MAX_WAIT_MS 30000
/* Longest a fetch may wait, whatever the client asks. */
#define FETCH_MAX_WAIT_MS 60000
/* Longest a Metadata request waits for a controller to be elected. */
#define METADATA_MAX_WAIT_MS 3000

typedef struct fetch_wait fetch_wait_t;
/* Appended-to logs remembered between two looks at the parked fetches. */
#define FETCH_APPENDED_MAX 64
typedef struct fetch_ctx fetch_ctx_t;
typedef struct admin_op admin_op_t;
typedef struct metadata_wait metadata_wait_t;

struct sf_handler {
    sf_broker_t *b;
    fetch_wait_t *fetches; /* parked long-poll fetches */
    admin_op_t *admins;    /* admin requests waiting for ZooKeeper or the metadata */
    metadata_wait_t *metadata_waits; /* Metadata requests waiting for a controller */
    struct event *wake_ev; /* re-evaluates parked fetches after appends */
    int wake_pending;
    /* Logs appended to since the parked fetches were last looked at: only the fetches that
     * read one of them are evaluated again (all of them after an overflow). The pointers are
     * compared, never followed. */
    const sf_log_t *appended[FETCH_APPENDED_MAX];
    int nappended;
    int appended_overflow;
};

/* A Fetch request waiting for MinBytes or MaxWaitMs. */
struct fetch_wait {
    sf_handler_t *h;
    sf_req_t *req;
    fetch_ctx_t *fc; /* in the request arena */
    struct event *timer;
    fetch_wait_t *prev, *next;
    const sf_log_t **logs; /* the logs it reads (in the request arena) */
    int nlogs;
    int watch_all; /* a partition had no log here: look again after every append */
};

/* A Metadata request waiting for a controller. */
struct metadata_wait {
    sf_handler_t *h;
    sf_req_t *req;
    sf_proto_MetadataRequest_t mreq;
    struct event *timer;
    metadata_wait_t *prev, *next;
};

typedef enum { ADMIN_CREATE, ADMIN_DELETE, ADMIN_PARTITIONS, ADMIN_CONFIGS } admin_kind_t;

/* One topic of an admin request. */
typedef struct admin_item {
    admin_op_t *op;
    char *topic; /* owned; NULL if the request's name was null */
    int16_t error;
    const char *message; /* static, in the request arena, or NULL */
    int32_t partitions;  /* ADMIN_PARTITIONS: the new count */
    int zk_pending;      /* the ZooKeeper write has not completed */
    /* ADMIN_CONFIGS: the resource as the request names it (borrows the request, read only
     * while it is unanswered), and for a topic its new override set (owned). */
    int8_t resource_type;
    sf_slice_t resource_name;
    sf_cluster_config_entry_t *configs;
    int nconfigs;
} admin_item_t;

struct admin_op {
    sf_handler_t *h;
    sf_req_t *req; /* NULL once answered */
    admin_kind_t kind;
    admin_item_t *items;
    int nitems;
    int zk_pending; /* items whose ZooKeeper write has not completed */
    int validate_only;
    struct event *timer;
    admin_op_t *prev, *next;
};

static void respond(sf_req_t *req, sf_wbuf_t *wb) {
    sf_req_respond(req, wb);
    sf_wbuf_free(wb);
}

/* Answer a request whose body or version we cannot serve. */
static void respond_unsupported(sf_req_t *req) {
    sf_wbuf_t wb;
    sf_wbuf_init(&wb);
    /* An unknown API or version has no response layout we can encode: answer with the error
     * code where every response version starts with one or a throttle time, so the client can
     * at least log UNSUPPORTED_VERSION, as Kafka's error responses do. */
    sf_wbuf_i16(&wb, SF_KERR_UNSUPPORTED_VERSION);
    respond(req, &wb);
}

static void reject_malformed(sf_req_t *req, int rc) {
    sf_log(SF_LOG_INFO, "PROTOERR", "%s: %s v%d request does not decode (%s); closing",
           sf_conn_peer(req->conn), sf_proto_api_name(req->hdr.RequestApiKey),
           req->hdr.RequestApiVersion, sf_err_str(rc));
    sf_req_close(req);
}

/* A NUL-terminated copy of a slice in the request arena. */
static char *arena_str(sf_req_t *req, sf_slice_t s) {
    char *r;
    if (s.len < 0)
        return NULL;
    r = sf_arena_alloc(&req->arena, (size_t)s.len + 1);
    if (r && s.len)
        memcpy(r, s.p, (size_t)s.len);
    return r;
}

static sf_slice_t arena_slice(sf_req_t *req, const char *s) {
    size_t n = strlen(s);
    char *r = sf_arena_alloc(&req->arena, n + 1);
    sf_slice_t sl = {NULL, 0};
    if (r) {
        memcpy(r, s, n + 1);
        sl.p = (const uint8_t *)r;
        sl.len = (int32_t)n;
    }
    return sl;
}

/* A formatted message in the request arena (NULL on no memory). */
static int config_value_ok(const char *name, const char *value, char *why, size_t size);
static const char *arena_printf(sf_req_t *req, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static const char *arena_printf(sf_req_t *req, const char *fmt, ...) {
    char buf[512], *r;
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    r = sf_arena_alloc(&req->arena, strlen(buf) + 1);
    if (r)
        memcpy(r, buf, strlen(buf) + 1);
    return r;
}

/* Kafka's wire error for a storage result. */
static sf_kerr_t append_kerr(int rc) {
    switch (rc) {
    case SF_ERR_UNSUPPORTED: return SF_KERR_UNSUPPORTED_FOR_MESSAGE_FORMAT;
    case SF_ERR_MALFORMED: return SF_KERR_CORRUPT_MESSAGE;
    case SF_ERR_TOOLARGE: return SF_KERR_MESSAGE_TOO_LARGE;
    default: return sf_err_to_kerr(rc);
    }
}

static const sf_cluster_partition_t *find_partition(sf_cluster_snapshot_t *snap,
                                                    const char *topic, int32_t partition) {
    const sf_cluster_topic_t *t = snap ? sf_cluster_snapshot_topic(snap, topic) : NULL;
    if (!t || partition < 0 || partition >= t->npartitions)
        return NULL;
    return &t->partitions[partition];
}

/* The local log of a partition this broker leads, or NULL with the error for the client. */
static sf_log_t *leader_log(sf_handler_t *h, const char *topic, int32_t partition,
                            sf_kerr_t *err) {
    sf_cluster_snapshot_t *snap = sf_broker_snapshot(h->b);
    const sf_cluster_partition_t *part = topic ? find_partition(snap, topic, partition) : NULL;
    sf_log_t *log;
    if (!part) {
        *err = SF_KERR_UNKNOWN_TOPIC_OR_PARTITION;
        return NULL;
    }
    if (part->leader != sf_broker_cfg(h->b)->broker_id) {
        *err = SF_KERR_NOT_LEADER_OR_FOLLOWER;
        return NULL;
    }
    log = sf_broker_log(h->b, topic, partition);
    if (!log)
        *err = SF_KERR_NOT_LEADER_OR_FOLLOWER;
    else
        *err = SF_KERR_NONE;
    return log;
}

/* ------------------------------------------------------------------------------------------
 * ApiVersions
 * ------------------------------------------------------------------------------------------ */

/* The APIs this broker answers and the versions it advertises (DESIGN.md section 2). */
typedef struct api_range {
    int16_t key, min, max;
} api_range_t;

static const api_range_t apis[] = {
    {SF_PROTO_API_Produce, 0, 8},
    {SF_PROTO_API_Fetch, 4, 11},
    {SF_PROTO_API_ListOffsets, 1, 5},
    {SF_PROTO_API_Metadata, 0, 8},
    {SF_PROTO_API_ApiVersions, 0, 3},
    {SF_PROTO_API_CreateTopics, 2, 4},
    {SF_PROTO_API_DeleteTopics, 1, 3},
    {SF_PROTO_API_DescribeConfigs, 0, 3},
    {SF_PROTO_API_AlterConfigs, 0, 1},
    {SF_PROTO_API_CreatePartitions, 0, 1},
    {SF_PROTO_API_IncrementalAlterConfigs, 0, 1},
};

static int version_supported(int16_t key, int16_t ver) {
    size_t i;
    for (i = 0; i < sizeof(apis) / sizeof(apis[0]); i++)
        if (apis[i].key == key)
            return ver >= apis[i].min && ver <= apis[i].max;
    return 0;
}

static void handle_ApiVersions(sf_handler_t *h, sf_req_t *req) {
    int16_t ver = req->hdr.RequestApiVersion;
    size_t n = sizeof(apis) / sizeof(apis[0]), i;
    sf_proto_ApiVersionsRequest_t areq;
    sf_proto_ApiVersionsResponse_t resp;
    sf_proto_ApiVersionsResponse_ApiVersion_t own;
    sf_wbuf_t wb;
    int rc;
    (void)h;

    sf_wbuf_init(&wb);
    sf_proto_ApiVersionsResponse_init(&resp);
    if (!version_supported(SF_PROTO_API_ApiVersions, ver)) {
        /* A v0 body with UNSUPPORTED_VERSION and ApiVersions' own range (KIP-511), so the
         * client can retry with a version both speak. */
        sf_proto_ApiVersionsResponse_ApiVersion_init(&own);
        own.ApiKey = SF_PROTO_API_ApiVersions;
        own.MinVersion = 0;
        own.MaxVersion = 3;
        resp.ErrorCode = SF_KERR_UNSUPPORTED_VERSION;
        resp.ApiKeysCount = 1;
        resp.ApiKeys = &own;
        sf_proto_ApiVersionsResponse_encode(&wb, 0, &resp);
        respond(req, &wb);
        return;
    }
    rc = sf_proto_ApiVersionsRequest_decode(&req->body, ver, &req->arena, &areq);
    if (rc != SF_OK) {
        /* Kafka answers a v3 request with bad client software fields with INVALID_REQUEST. */
        resp.ErrorCode = SF_KERR_INVALID_REQUEST;
    } else {
        resp.ApiKeys = sf_arena_calloc(&req->arena, n, sizeof(*resp.ApiKeys));
        if (!resp.ApiKeys) {
            sf_req_close(req);
            return;
        }
        for (i = 0; i < n; i++) {
            resp.ApiKeys[i].ApiKey = apis[i].key;
            resp.ApiKeys[i].MinVersion = apis[i].min;
            resp.ApiKeys[i].MaxVersion = apis[i].max;
        }
        resp.ApiKeysCount = (int32_t)n;
    }
    sf_proto_ApiVersionsResponse_encode(&wb, ver, &resp);
    respond(req, &wb);
}

/* ------------------------------------------------------------------------------------------
 * Metadata
 * ------------------------------------------------------------------------------------------ */

static void auto_create_done(void *arg, int err) {
    char *topic = arg;
    if (err != SF_OK && err != SF_ERR_EXISTS)
        sf_log(SF_LOG_WARNING, "ADMIN", "auto-creating topic %s failed: %s", topic,
               sf_err_str(err));
    else if (err == SF_OK)
        sf_log(SF_LOG_INFO, "ADMIN", "auto-created topic %s", topic);
    free(topic);
}

/* Create @topic with the broker defaults (auto.create.topics.enable). */
static sf_kerr_t auto_create(sf_handler_t *h, const char *topic) {
    const sf_brokercfg_t *cfg = sf_broker_cfg(h->b);
    sf_cluster_t *cl = sf_broker_cluster(h->b);
    char *arg;
    int rc;
    if (!cl)
        return SF_KERR_LEADER_NOT_AVAILABLE;
    arg = strdup(topic);
    if (!arg)
        return SF_KERR_UNKNOWN_SERVER_ERROR;
    rc = sf_cluster_topic_create(cl, topic, cfg->num_partitions,
                                 (int16_t)cfg->default_replication_factor, NULL, NULL, 0,
                                 auto_create_done, arg);
    if (rc != SF_OK) {
        free(arg);
        return rc == SF_ERR_INVALID ? SF_KERR_INVALID_REPLICATION_FACTOR
                                    : SF_KERR_LEADER_NOT_AVAILABLE;
    }
    /* As Kafka does: the topic exists once the metadata shows it; until then the client sees
     * LEADER_NOT_AVAILABLE and retries. */
    return SF_KERR_LEADER_NOT_AVAILABLE;
}

static int broker_alive(const sf_cluster_snapshot_t *snap, int32_t id) {
    return sf_cluster_snapshot_broker(snap, id) != NULL;
}

static int fill_topic_metadata(sf_req_t *req, sf_cluster_snapshot_t *snap,
                               const sf_cluster_topic_t *t, sf_proto_MetadataResponse_MetadataResponseTopic_t *mt) {
    int p, i;
    mt->Name = sf_slice_cstr(t->name);
    mt->TopicAuthorizedOperations = INT32_MIN;
    mt->Partitions = sf_arena_calloc(&req->arena, (size_t)t->npartitions, sizeof(*mt->Partitions));
    if (t->npartitions && !mt->Partitions)
        return SF_ERR_NOMEM;
    mt->PartitionsCount = t->npartitions;
    for (p = 0; p < t->npartitions; p++) {
        const sf_cluster_partition_t *cp = &t->partitions[p];
        sf_proto_MetadataResponse_MetadataResponsePartition_t *mp = &mt->Partitions[p];
        int noff = 0;
        mp->PartitionIndex = p;
        mp->LeaderEpoch = cp->leader_epoch;
        mp->ReplicaNodes = cp->replicas;
        mp->ReplicaNodesCount = cp->nreplicas;
        mp->IsrNodes = cp->isr;
        mp->IsrNodesCount = cp->nisr;
        if (cp->leader >= 0 && broker_alive(snap, cp->leader)) {
            mp->LeaderId = cp->leader;
        } else {
            mp->LeaderId = -1;
            mp->ErrorCode = SF_KERR_LEADER_NOT_AVAILABLE;
        }
        mp->OfflineReplicas = sf_arena_calloc(&req->arena, (size_t)cp->nreplicas + 1, sizeof(int32_t));
        if (!mp->OfflineReplicas)
            return SF_ERR_NOMEM;
        for (i = 0; i < cp->nreplicas; i++)
            if (!broker_alive(snap, cp->replicas[i]))
                mp->OfflineReplicas[noff++] = cp->replicas[i];
        mp->OfflineReplicasCount = noff;
    }
    return SF_OK;
}

static void metadata_answer(sf_handler_t *h, sf_req_t *req,
                            const sf_proto_MetadataRequest_t *mreq) {
    int16_t ver = req->hdr.RequestApiVersion;
    const sf_brokercfg_t *cfg = sf_broker_cfg(h->b);
    sf_cluster_snapshot_t *snap = sf_broker_snapshot(h->b);
    const char *listener = sf_conn_listener(req->conn);
    sf_proto_MetadataResponse_t resp;
    sf_wbuf_t wb;
    int i, nb = 0;

    memset(&resp, 0, sizeof(resp));
    resp.ControllerId = snap ? snap->controller_id : -1;
    resp.ClusterId = snap && snap->cluster_id ? sf_slice_cstr(snap->cluster_id) : sf_slice_cstr(NULL);
    resp.ClusterAuthorizedOperations = INT32_MIN;

    /* Brokers: each live broker's endpoint on the listener this client came in on. */
    resp.Brokers = sf_arena_calloc(&req->arena, snap ? (size_t)snap->nbrokers + 1 : 1,
                                   sizeof(*resp.Brokers));
    if (!resp.Brokers)
        goto nomem;
    for (i = 0; snap && i < snap->nbrokers; i++) {
        const sf_cluster_broker_t *br = &snap->brokers[i];
        int e;
        for (e = 0; e < br->nendpoints; e++) {
            char host[256];
            int32_t port;
            if (sf_broker_endpoint_parse(br->endpoints[e], listener, host, sizeof(host), &port))
                continue;
            resp.Brokers[nb].NodeId = br->id;
            resp.Brokers[nb].Host = arena_slice(req, host);
            resp.Brokers[nb].Port = port;
            resp.Brokers[nb].Rack = sf_slice_cstr(br->rack);
            nb++;
            break;
        }
    }
    if (nb == 0) {
        /* Not registered yet: describe this broker alone so the client can retry here. */
        size_t n, e;
        const char *const *eps = sf_broker_endpoints(h->b, &n);
        for (e = 0; e < n; e++) {
            char host[256];
            int32_t port;
            if (sf_broker_endpoint_parse(eps[e], listener, host, sizeof(host), &port))
                continue;
            resp.Brokers[0].NodeId = cfg->broker_id;
            resp.Brokers[0].Host = arena_slice(req, host);
            resp.Brokers[0].Port = port;
            resp.Brokers[0].Rack = sf_slice_cstr(NULL);
            nb = 1;
            break;
        }
    }
    resp.BrokersCount = nb;

    if (mreq->TopicsCount < 0) {
        int n = snap ? snap->ntopics : 0;
        resp.Topics = sf_arena_calloc(&req->arena, (size_t)n + 1, sizeof(*resp.Topics));
        if (!resp.Topics)
            goto nomem;
        for (i = 0; i < n; i++)
            if (fill_topic_metadata(req, snap, &snap->topics[i], &resp.Topics[i]) != SF_OK)
                goto nomem;
        resp.TopicsCount = n;
    } else {
        int allow = cfg->auto_create_topics_enable && (ver < 4 || mreq->AllowAutoTopicCreation);
        resp.Topics = sf_arena_calloc(&req->arena, (size_t)mreq->TopicsCount + 1, sizeof(*resp.Topics));
        if (!resp.Topics)
            goto nomem;
        for (i = 0; i < mreq->TopicsCount; i++) {
            sf_proto_MetadataResponse_MetadataResponseTopic_t *mt = &resp.Topics[i];
            char *name = arena_str(req, mreq->Topics[i].Name);
            const sf_cluster_topic_t *t = name && snap ? sf_cluster_snapshot_topic(snap, name) : NULL;
            mt->Name = mreq->Topics[i].Name;
            mt->TopicAuthorizedOperations = INT32_MIN;
            if (t) {
                if (fill_topic_metadata(req, snap, t, mt) != SF_OK)
                    goto nomem;
            } else if (!name || !sf_cluster_topic_name_valid(name)) {
                mt->ErrorCode = SF_KERR_INVALID_TOPIC_EXCEPTION;
            } else if (allow) {
                mt->ErrorCode = auto_create(h, name);
            } else {
                mt->ErrorCode = SF_KERR_UNKNOWN_TOPIC_OR_PARTITION;
            }
        }
        resp.TopicsCount = mreq->TopicsCount;
    }
    sf_wbuf_init(&wb);
    sf_proto_MetadataResponse_encode(&wb, ver, &resp);
    respond(req, &wb);
    return;
nomem:
    sf_req_close(req);
}

static void metadata_wait_free(metadata_wait_t *mw) {
    sf_handler_t *h = mw->h;
    if (mw->prev)
        mw->prev->next = mw->next;
    else
        h->metadata_waits = mw->next;
    if (mw->next)
        mw->next->prev = mw->prev;
    event_free(mw->timer);
    free(mw);
}

static void metadata_timeout_cb(evutil_socket_t fd, short what, void *arg) {
    metadata_wait_t *mw = arg;
    (void)fd;
    (void)what;
    metadata_answer(mw->h, mw->req, &mw->mreq);
    metadata_wait_free(mw);
}

/* Right after start the broker is registered a moment before a controller is elected; admin
 * clients that see no controller give up, so hold Metadata requests until there is one. */
static int metadata_ready(sf_handler_t *h) {
    sf_cluster_snapshot_t *snap = sf_broker_snapshot(h->b);
    return snap && snap->controller_id >= 0;
}

static void handle_Metadata(sf_handler_t *h, sf_req_t *req) {
    sf_proto_MetadataRequest_t mreq;
    metadata_wait_t *mw;
    struct timeval tv = {METADATA_MAX_WAIT_MS / 1000, (METADATA_MAX_WAIT_MS % 1000) * 1000};
    int rc;

    rc = sf_proto_MetadataRequest_decode(&req->body, req->hdr.RequestApiVersion, &req->arena, &mreq);
    if (rc != SF_OK) {
        reject_malformed(req, rc);
        return;
    }
    if (metadata_ready(h) || !(mw = calloc(1, sizeof(*mw)))) {
        metadata_answer(h, req, &mreq);
        return;
    }
    mw->h = h;
    mw->req = req;
    mw->mreq = mreq;
    mw->timer = evtimer_new(sf_broker_base(h->b), metadata_timeout_cb, mw);
    if (!mw->timer) {
        free(mw);
        metadata_answer(h, req, &mreq);
        return;
    }
    evtimer_add(mw->timer, &tv);
    mw->next = h->metadata_waits;
    if (h->metadata_waits)
        h->metadata_waits->prev = mw;
    h->metadata_waits = mw;
}

/* ------------------------------------------------------------------------------------------
 * Produce
 * ------------------------------------------------------------------------------------------ */

/* @log was appended to: look at the parked fetches that read it, once this loop pass ends. */
static void wake_fetches(sf_handler_t *h, const sf_log_t *log) {
    int i;
    if (!h->fetches)
        return;
    for (i = 0; i < h->nappended && h->appended[i] != log; i++)
        ;
    if (i == h->nappended) {
        if (h->nappended < FETCH_APPENDED_MAX)
            h->appended[h->nappended++] = log;
        else
            h->appended_overflow = 1;
    }
    if (!h->wake_pending) {
        h->wake_pending = 1;
        event_active(h->wake_ev, 0, 0);
    }
}

static void handle_Produce(sf_handler_t *h, sf_req_t *req) {
    int16_t ver = req->hdr.RequestApiVersion;
    const sf_brokercfg_t *cfg = sf_broker_cfg(h->b);
    sf_cluster_snapshot_t *snap = sf_broker_snapshot(h->b);
    sf_proto_ProduceRequest_t preq;
    sf_proto_ProduceResponse_t resp;
    int64_t now = sf_clock_wall_ms();
    sf_wbuf_t wb;
    int rc, t, p;

    rc = sf_proto_ProduceRequest_decode(&req->body, ver, &req->arena, &preq);
    if (rc != SF_OK) {
        reject_malformed(req, rc);
        return;
    }
    memset(&resp, 0, sizeof(resp));
    resp.Responses = sf_arena_calloc(&req->arena, (size_t)preq.TopicDataCount + 1, sizeof(*resp.Responses));
    if (!resp.Responses)
        goto nomem;
    resp.ResponsesCount = preq.TopicDataCount;
    for (t = 0; t < preq.TopicDataCount; t++) {
        sf_proto_ProduceRequest_TopicProduceData_t *pt = &preq.TopicData[t];
        sf_proto_ProduceResponse_TopicProduceResponse_t *rt = &resp.Responses[t];
        char *topic = arena_str(req, pt->Name);
        rt->Name = pt->Name;
        rt->PartitionResponses = sf_arena_calloc(&req->arena, (size_t)pt->PartitionDataCount + 1,
                                                 sizeof(*rt->PartitionResponses));
        if (!rt->PartitionResponses)
            goto nomem;
        rt->PartitionResponsesCount = pt->PartitionDataCount;
        for (p = 0; p < pt->PartitionDataCount; p++) {
            sf_proto_ProduceRequest_PartitionProduceData_t *pp = &pt->PartitionData[p];
            sf_proto_ProduceResponse_PartitionProduceResponse_t *rp = &rt->PartitionResponses[p];
            sf_log_append_info_t info;
            sf_kerr_t kerr;
            sf_log_t *log;
            rp->Index = pp->Index;
            rp->BaseOffset = -1;
            rp->LogAppendTimeMs = -1;
            rp->LogStartOffset = -1;
            rp->ErrorMessage = sf_slice_cstr(NULL);
            if (ver < 3) {
                /* Magic 0 and 1 message sets are not stored. */
                rp->ErrorCode = SF_KERR_UNSUPPORTED_VERSION;
                continue;
            }
            if (preq.Acks != 0 && preq.Acks != 1 && preq.Acks != -1) {
                rp->ErrorCode = SF_KERR_INVALID_REQUIRED_ACKS;
                continue;
            }
            log = leader_log(h, topic, pp->Index, &kerr);
            if (!log) {
                rp->ErrorCode = kerr;
                continue;
            }
            if (preq.Acks == -1) {
                const sf_cluster_partition_t *cp = find_partition(snap, topic, pp->Index);
                const char *mir = sf_cluster_topic_config(sf_cluster_snapshot_topic(snap, topic),
                                                          "min.insync.replicas");
                int min_isr = mir ? atoi(mir) : cfg->min_insync_replicas;
                if (cp && cp->nisr < min_isr) {
                    rp->ErrorCode = SF_KERR_NOT_ENOUGH_REPLICAS;
                    continue;
                }
            }
            if (pp->Records.len <= 0) {
                rp->ErrorCode = SF_KERR_CORRUPT_MESSAGE;
                continue;
            }
            rc = sf_log_append(log, (uint8_t *)pp->Records.p, (size_t)pp->Records.len, now, &info);
            if (rc != SF_OK) {
                rp->ErrorCode = append_kerr(rc);
                sf_log(SF_LOG_INFO, "PRODUCE", "%s: %s-%d: append rejected: %s",
                       sf_conn_peer(req->conn), topic, pp->Index, sf_err_str(rc));
                continue;
            }
            wake_fetches(h, log);
            rp->BaseOffset = info.FirstOffset;
            rp->LogAppendTimeMs = info.LogAppendTime;
            rp->LogStartOffset = info.LogStartOffset;
        }
    }
    if (preq.Acks == 0) {
        sf_req_respond_none(req);
        return;
    }
    sf_wbuf_init(&wb);
    sf_proto_ProduceResponse_encode(&wb, ver, &resp);
    respond(req, &wb);
    return;
nomem:
    sf_req_close(req);
}

/* ------------------------------------------------------------------------------------------
 * Fetch (with the purgatory for long polls)
 * ------------------------------------------------------------------------------------------ */

static void release_slices(sf_proto_FetchResponse_t *resp) {
    int t, p;
    for (t = 0; t < resp->ResponsesCount; t++)
        for (p = 0; p < resp->Responses[t].PartitionsCount; p++) {
            sf_proto_FetchResponse_PartitionData_t *rp = &resp->Responses[t].Partitions[p];
            if (rp->RecordsRef) {
                sf_log_slice_release(((sf_log_slice_t *)rp->RecordsRef)->seg);
                rp->RecordsRef = NULL;
            }
        }
}

/* Everything a fetch needs, allocated once in the request arena: a parked fetch is read again
 * after every append, and must not allocate each time. */
struct fetch_ctx {
    sf_proto_FetchRequest_t freq;
    sf_proto_FetchResponse_t resp; /* topics and partitions mirror freq */
    char **topics;                 /* NUL-terminated topic names */
    sf_log_slice_t *slices;        /* one per requested partition, in order */
};

static fetch_ctx_t *fetch_ctx_new(sf_req_t *req, const sf_proto_FetchRequest_t *freq) {
    fetch_ctx_t *fc = sf_arena_alloc(&req->arena, sizeof(*fc));
    size_t nparts = 0;
    int t;
    if (!fc)
        return NULL;
    fc->freq = *freq;
    fc->resp.Responses = sf_arena_calloc(&req->arena, (size_t)freq->TopicsCount + 1,
                                         sizeof(*fc->resp.Responses));
    fc->topics = sf_arena_calloc(&req->arena, (size_t)freq->TopicsCount + 1, sizeof(char *));
    if (!fc->resp.Responses || !fc->topics)
        return NULL;
    fc->resp.ResponsesCount = freq->TopicsCount;
    for (t = 0; t < freq->TopicsCount; t++) {
        const sf_proto_FetchRequest_FetchTopic_t *ft = &freq->Topics[t];
        sf_proto_FetchResponse_FetchableTopicResponse_t *rt = &fc->resp.Responses[t];
        rt->Topic = ft->Topic;
        rt->Partitions = sf_arena_calloc(&req->arena, (size_t)ft->PartitionsCount + 1,
                                         sizeof(*rt->Partitions));
        fc->topics[t] = arena_str(req, ft->Topic);
        if (!rt->Partitions || (ft->Topic.len >= 0 && !fc->topics[t]))
            return NULL;
        rt->PartitionsCount = ft->PartitionsCount;
        nparts += (size_t)ft->PartitionsCount;
    }
    fc->slices = sf_arena_calloc(&req->arena, nparts + 1, sizeof(*fc->slices));
    return fc->slices ? fc : NULL;
}

/* Read what the fetch asks for into fc->resp, taking slice references. Returns the record
 * bytes gathered. */
static int64_t fetch_read(sf_handler_t *h, fetch_ctx_t *fc) {
    const sf_proto_FetchRequest_t *freq = &fc->freq;
    sf_log_slice_t *slice = fc->slices;
    int64_t total = 0;
    int32_t budget = freq->MaxBytes > 0 ? freq->MaxBytes : INT32_MAX;
    int t, p;

    for (t = 0; t < freq->TopicsCount; t++) {
        const sf_proto_FetchRequest_FetchTopic_t *ft = &freq->Topics[t];
        sf_proto_FetchResponse_FetchableTopicResponse_t *rt = &fc->resp.Responses[t];
        for (p = 0; p < ft->PartitionsCount; p++, slice++) {
            const sf_proto_FetchRequest_FetchPartition_t *fp = &ft->Partitions[p];
            sf_proto_FetchResponse_PartitionData_t *rp = &rt->Partitions[p];
            sf_kerr_t kerr;
            sf_log_t *log;
            int32_t max;
            int rc;

            memset(rp, 0, sizeof(*rp));
            rp->PartitionIndex = fp->Partition;
            rp->HighWatermark = -1;
            rp->LastStableOffset = -1;
            rp->LogStartOffset = -1;
            rp->PreferredReadReplica = -1;
            rp->AbortedTransactionsCount = -1;
            rp->Records.len = -1;
            log = leader_log(h, fc->topics[t], fp->Partition, &kerr);
            if (!log) {
                rp->ErrorCode = kerr;
                continue;
            }
            rp->HighWatermark = sf_log_high_watermark(log);
            rp->LastStableOffset = rp->HighWatermark;
            rp->LogStartOffset = sf_log_start_offset(log);
            rp->Records.len = 0;
            max = fp->PartitionMaxBytes < budget ? fp->PartitionMaxBytes : budget;
            if (max <= 0 && total > 0)
                continue;
            rc = sf_log_read(log, fp->FetchOffset, max > 0 ? max : 1, rp->HighWatermark, slice);
            if (rc == SF_ERR_RANGE) {
                rp->ErrorCode = SF_KERR_OFFSET_OUT_OF_RANGE;
                continue;
            }
            if (rc != SF_OK) {
                rp->ErrorCode = SF_KERR_KAFKA_STORAGE_ERROR;
                continue;
            }
            if (slice->len == 0)
                continue;
            /* KIP-74: a batch larger than the limits is still sent when it is the first data of
             * the response, so a consumer never gets stuck behind it. */
            if ((int64_t)slice->len > max && total > 0) {
                sf_log_slice_release(slice->seg);
                continue;
            }
            rp->Records.len = (int32_t)slice->len;
            rp->RecordsRef = slice;
            total += (int64_t)slice->len;
            budget = (int64_t)slice->len >= budget ? 0 : budget - (int32_t)slice->len;
        }
    }
    return total;
}

static void fetch_wait_free(fetch_wait_t *fw) {
    sf_handler_t *h = fw->h;
    if (fw->prev)
        fw->prev->next = fw->next;
    else
        h->fetches = fw->next;
    if (fw->next)
        fw->next->prev = fw->prev;
    if (fw->timer)
        event_free(fw->timer);
    free(fw);
}

/* Answer or park a fetch. @final: answer with whatever there is. Returns 1 if it was
 * answered. */
static int fetch_try(sf_handler_t *h, sf_req_t *req, fetch_ctx_t *fc, int final) {
    int64_t got = fetch_read(h, fc);
    sf_wbuf_t wb;
    if (!final && got < fc->freq.MinBytes && !sf_conn_closed(req->conn)) {
        release_slices(&fc->resp);
        return 0;
    }
    sf_wbuf_init(&wb);
    sf_proto_FetchResponse_encode(&wb, req->hdr.RequestApiVersion, &fc->resp);
    /* The server takes the slice references over with the response. */
    sf_req_respond(req, &wb);
    sf_wbuf_free(&wb);
    return 1;
}

static void fetch_timeout_cb(evutil_socket_t fd, short what, void *arg) {
    fetch_wait_t *fw = arg;
    (void)fd;
    (void)what;
    fetch_try(fw->h, fw->req, fw->fc, 1);
    fetch_wait_free(fw);
}

/* 1 if @fw reads a log appended to since the last look. */
static int fetch_wait_touched(const sf_handler_t *h, const fetch_wait_t *fw) {
    int i, j;
    if (fw->watch_all || h->appended_overflow)
        return 1;
    for (i = 0; i < fw->nlogs; i++)
        for (j = 0; j < h->nappended; j++)
            if (fw->logs[i] == h->appended[j])
                return 1;
    return 0;
}

static void fetch_wake_cb(evutil_socket_t fd, short what, void *arg) {
    sf_handler_t *h = arg;
    fetch_wait_t *fw, *next;
    (void)fd;
    (void)what;
    h->wake_pending = 0;
    for (fw = h->fetches; fw; fw = next) {
        next = fw->next;
        if (fetch_wait_touched(h, fw) && fetch_try(h, fw->req, fw->fc, 0))
            fetch_wait_free(fw);
    }
    h->nappended = 0;
    h->appended_overflow = 0;
}

/* Note the logs @fw reads (a partition without one here makes it look after every append). */
static void fetch_wait_watch(sf_handler_t *h, fetch_wait_t *fw, sf_req_t *req) {
    const sf_proto_FetchRequest_t *freq = &fw->fc->freq;
    int t, p, n = 0;
    for (t = 0; t < freq->TopicsCount; t++)
        n += freq->Topics[t].PartitionsCount;
    fw->logs = sf_arena_calloc(&req->arena, (size_t)n + 1, sizeof(*fw->logs));
    if (!fw->logs) {
        fw->watch_all = 1;
        return;
    }
    for (t = 0; t < freq->TopicsCount; t++)
        for (p = 0; p < freq->Topics[t].PartitionsCount; p++) {
            sf_kerr_t kerr;
            const sf_log_t *log =
                leader_log(h, fw->fc->topics[t], freq->Topics[t].Partitions[p].Partition, &kerr);
            if (log)
                fw->logs[fw->nlogs++] = log;
            else
                fw->watch_all = 1;
        }
}

static void handle_Fetch(sf_handler_t *h, sf_req_t *req) {
    fetch_wait_t *fw;
    fetch_ctx_t *fc;
    sf_proto_FetchRequest_t freq;
    struct timeval tv;
    int32_t wait;
    int rc;

    rc = sf_proto_FetchRequest_decode(&req->body, req->hdr.RequestApiVersion, &req->arena, &freq);
    if (rc != SF_OK) {
        reject_malformed(req, rc);
        return;
    }
    fc = fetch_ctx_new(req, &freq);
    if (!fc) {
        sf_req_close(req);
        return;
    }
    if (fetch_try(h, req, fc, freq.MaxWaitMs <= 0 || freq.MinBytes <= 0))
        return;
    fw = calloc(1, sizeof(*fw));
    if (fw)
        fw->timer = evtimer_new(sf_broker_base(h->b), fetch_timeout_cb, fw);
    if (!fw || !fw->timer) {
        free(fw);
        fetch_try(h, req, fc, 1);
        return;
    }
    fw->h = h;
    fw->req = req;
    fw->fc = fc;
    fetch_wait_watch(h, fw, req);
    wait = freq.MaxWaitMs < FETCH_MAX_WAIT_MS ? freq.MaxWaitMs : FETCH_MAX_WAIT_MS;
    tv.tv_sec = wait / 1000;
    tv.tv_usec = (wait % 1000) * 1000;
    evtimer_add(fw->timer, &tv);
    fw->next = h->fetches;
    if (h->fetches)
        h->fetches->prev = fw;
    h->fetches = fw;
}

/* ------------------------------------------------------------------------------------------
 * ListOffsets
 * ------------------------------------------------------------------------------------------ */

#define LIST_OFFSETS_LATEST (-1)
#define LIST_OFFSETS_EARLIEST (-2)

static void handle_ListOffsets(sf_handler_t *h, sf_req_t *req) {
    int16_t ver = req->hdr.RequestApiVersion;
    sf_proto_ListOffsetsRequest_t lreq;
    sf_proto_ListOffsetsResponse_t resp;
    sf_cluster_snapshot_t *snap = sf_broker_snapshot(h->b);
    sf_wbuf_t wb;
    int rc, t, p;

    rc = sf_proto_ListOffsetsRequest_decode(&req->body, ver, &req->arena, &lreq);
    if (rc != SF_OK) {
        reject_malformed(req, rc);
        return;
    }
    memset(&resp, 0, sizeof(resp));
    resp.Topics = sf_arena_calloc(&req->arena, (size_t)lreq.TopicsCount + 1, sizeof(*resp.Topics));
    if (!resp.Topics)
        goto nomem;
    resp.TopicsCount = lreq.TopicsCount;
    for (t = 0; t < lreq.TopicsCount; t++) {
        sf_proto_ListOffsetsRequest_ListOffsetsTopic_t *lt = &lreq.Topics[t];
        sf_proto_ListOffsetsResponse_ListOffsetsTopicResponse_t *rt = &resp.Topics[t];
        char *topic = arena_str(req, lt->Name);
        rt->Name = lt->Name;
        rt->Partitions = sf_arena_calloc(&req->arena, (size_t)lt->PartitionsCount + 1, sizeof(*rt->Partitions));
        if (!rt->Partitions)
            goto nomem;
        rt->PartitionsCount = lt->PartitionsCount;
        for (p = 0; p < lt->PartitionsCount; p++) {
            sf_proto_ListOffsetsRequest_ListOffsetsPartition_t *lp = &lt->Partitions[p];
            sf_proto_ListOffsetsResponse_ListOffsetsPartitionResponse_t *rp = &rt->Partitions[p];
            const sf_cluster_partition_t *cp;
            sf_kerr_t kerr;
            sf_log_t *log = leader_log(h, topic, lp->PartitionIndex, &kerr);
            rp->PartitionIndex = lp->PartitionIndex;
            rp->Timestamp = -1;
            rp->Offset = -1;
            rp->LeaderEpoch = -1;
            if (!log) {
                rp->ErrorCode = kerr;
                continue;
            }
            cp = find_partition(snap, topic, lp->PartitionIndex);
            if (lp->Timestamp == LIST_OFFSETS_EARLIEST) {
                rp->Offset = sf_log_start_offset(log);
            } else if (lp->Timestamp == LIST_OFFSETS_LATEST) {
                rp->Offset = sf_log_high_watermark(log);
            } else {
                int64_t off, ts;
                rc = sf_log_offset_for_timestamp(log, lp->Timestamp, &off, &ts);
                if (rc == SF_OK && off < sf_log_high_watermark(log)) {
                    rp->Offset = off;
                    rp->Timestamp = ts;
                } else if (rc != SF_OK && rc != SF_ERR_NOTFOUND) {
                    rp->ErrorCode = SF_KERR_KAFKA_STORAGE_ERROR;
                }
                /* Not found: offset and timestamp -1, as Kafka answers. */
            }
            if (cp && rp->ErrorCode == SF_KERR_NONE && rp->Offset >= 0)
                rp->LeaderEpoch = cp->leader_epoch;
        }
    }
    sf_wbuf_init(&wb);
    sf_proto_ListOffsetsResponse_encode(&wb, ver, &resp);
    respond(req, &wb);
    return;
nomem:
    sf_req_close(req);
}

/* ------------------------------------------------------------------------------------------
 * Admin requests: CreateTopics, DeleteTopics, CreatePartitions
 * ------------------------------------------------------------------------------------------ */

static void admin_respond(admin_op_t *op) {
    sf_req_t *req = op->req;
    int16_t ver = req->hdr.RequestApiVersion;
    sf_wbuf_t wb;
    void *arr; /* the response array: on the heap, as the request arena may be used up */
    int i;

    sf_wbuf_init(&wb);
    if (op->kind == ADMIN_CREATE) {
        sf_proto_CreateTopicsResponse_t resp;
        memset(&resp, 0, sizeof(resp));
        resp.Topics = arr = calloc((size_t)op->nitems + 1, sizeof(*resp.Topics));
        for (i = 0; resp.Topics && i < op->nitems; i++) {
            resp.Topics[i].Name = sf_slice_cstr(op->items[i].topic ? op->items[i].topic : "");
            resp.Topics[i].ErrorCode = op->items[i].error;
            resp.Topics[i].ErrorMessage = sf_slice_cstr(op->items[i].message);
        }
        resp.TopicsCount = resp.Topics ? op->nitems : 0;
        sf_proto_CreateTopicsResponse_encode(&wb, ver, &resp);
    } else if (op->kind == ADMIN_DELETE) {
        sf_proto_DeleteTopicsResponse_t resp;
        memset(&resp, 0, sizeof(resp));
        resp.Responses = arr = calloc((size_t)op->nitems + 1, sizeof(*resp.Responses));
        for (i = 0; resp.Responses && i < op->nitems; i++) {
            resp.Responses[i].Name = sf_slice_cstr(op->items[i].topic ? op->items[i].topic : "");
            resp.Responses[i].ErrorCode = op->items[i].error;
        }
        resp.ResponsesCount = resp.Responses ? op->nitems : 0;
        sf_proto_DeleteTopicsResponse_encode(&wb, ver, &resp);
    } else if (op->kind == ADMIN_CONFIGS) {
        /* AlterConfigs and IncrementalAlterConfigs answer in the same layout. */
#define FILL_ALTER_RESPONSE(resp)                                                             \
    do {                                                                                      \
        memset(&resp, 0, sizeof(resp));                                                       \
        resp.Responses = arr = calloc((size_t)op->nitems + 1, sizeof(*resp.Responses));       \
        for (i = 0; resp.Responses && i < op->nitems; i++) {                                  \
            resp.Responses[i].ErrorCode = op->items[i].error;                                 \
            resp.Responses[i].ErrorMessage = sf_slice_cstr(op->items[i].message);             \
            resp.Responses[i].ResourceType = op->items[i].resource_type;                      \
            resp.Responses[i].ResourceName = op->items[i].resource_name;                      \
        }                                                                                     \
        resp.ResponsesCount = resp.Responses ? op->nitems : 0;                                \
    } while (0)
        if (req->hdr.RequestApiKey == SF_PROTO_API_IncrementalAlterConfigs) {
            sf_proto_IncrementalAlterConfigsResponse_t resp;
            FILL_ALTER_RESPONSE(resp);
            sf_proto_IncrementalAlterConfigsResponse_encode(&wb, ver, &resp);
        } else {
            sf_proto_AlterConfigsResponse_t resp;
            FILL_ALTER_RESPONSE(resp);
            sf_proto_AlterConfigsResponse_encode(&wb, ver, &resp);
        }
#undef FILL_ALTER_RESPONSE
    } else {
        sf_proto_CreatePartitionsResponse_t resp;
        memset(&resp, 0, sizeof(resp));
        resp.Results = arr = calloc((size_t)op->nitems + 1, sizeof(*resp.Results));
        for (i = 0; resp.Results && i < op->nitems; i++) {
            resp.Results[i].Name = sf_slice_cstr(op->items[i].topic ? op->items[i].topic : "");
            resp.Results[i].ErrorCode = op->items[i].error;
            resp.Results[i].ErrorMessage = sf_slice_cstr(op->items[i].message);
        }
        resp.ResultsCount = resp.Results ? op->nitems : 0;
        sf_proto_CreatePartitionsResponse_encode(&wb, ver, &resp);
    }
    /* The item names live in the request arena: respond before anything is freed. */
    if (arr) {
        respond(req, &wb);
    } else {
        sf_wbuf_free(&wb);
        sf_req_close(req);
    }
    free(arr);
    op->req = NULL;
}

static void admin_free(admin_op_t *op) {
    sf_handler_t *h = op->h;
    int i;
    if (h) {
        if (op->prev)
            op->prev->next = op->next;
        else
            h->admins = op->next;
        if (op->next)
            op->next->prev = op->prev;
    }
    if (op->timer)
        event_free(op->timer);
    for (i = 0; i < op->nitems; i++) {
        free(op->items[i].topic);
        sf_cluster_configs_free(op->items[i].configs, op->items[i].nconfigs);
    }
    free(op->items);
    free(op);
}

/* 1 when @t's overrides are exactly the set @it wrote. */
static int configs_shown(const sf_cluster_topic_t *t, const admin_item_t *it) {
    int i;
    if (t->nconfigs != it->nconfigs)
        return 0;
    for (i = 0; i < it->nconfigs; i++) {
        const char *v = sf_cluster_topic_config(t, it->configs[i].name);
        if (!v || strcmp(v, it->configs[i].value))
            return 0;
    }
    return 1;
}

/* 1 when every successful item's change is visible in the metadata and local logs. */
static int admin_visible(admin_op_t *op) {
    sf_cluster_snapshot_t *snap = sf_broker_snapshot(op->h->b);
    int i;
    if (op->validate_only)
        return 1;
    for (i = 0; i < op->nitems; i++) {
        const admin_item_t *it = &op->items[i];
        const sf_cluster_topic_t *t;
        if (it->error != SF_KERR_NONE)
            continue;
        t = snap ? sf_cluster_snapshot_topic(snap, it->topic) : NULL;
        if (op->kind == ADMIN_CONFIGS) {
            /* A topic deleted meanwhile has nothing left to show. */
            if (t && !configs_shown(t, it))
                return 0;
            continue;
        }
        if (op->kind == ADMIN_DELETE ? t != NULL : (!t || t->npartitions < it->partitions))
            return 0;
    }
    return 1;
}

/* Answer @op if its ZooKeeper writes are done and the metadata shows them (or @force). The
 * op is freed once answered and no ZooKeeper completion refers to it. Returns 1 if freed. */
static int admin_check(admin_op_t *op, int force) {
    int i;
    if (op->req && op->zk_pending == 0 && (force || admin_visible(op)))
        admin_respond(op);
    if (force && op->req) {
        for (i = 0; i < op->nitems; i++)
            if (op->items[i].zk_pending)
                op->items[i].error = SF_KERR_REQUEST_TIMED_OUT;
        admin_respond(op);
    }
    if (!op->req && op->zk_pending == 0) {
        admin_free(op);
        return 1;
    }
    return 0;
}

static void admin_done(void *arg, int err) {
    admin_item_t *it = arg;
    admin_op_t *op = it->op;
    it->zk_pending = 0;
    op->zk_pending--;
    if (!op->h) {
        /* The handlers are gone (shutdown) and the request was answered. */
        if (op->zk_pending == 0)
            admin_free(op);
        return;
    }
    switch (err) {
    case SF_OK: break;
    case SF_ERR_EXISTS: it->error = SF_KERR_TOPIC_ALREADY_EXISTS; break;
    case SF_ERR_NOTFOUND: it->error = SF_KERR_UNKNOWN_TOPIC_OR_PARTITION; break;
    case SF_ERR_INVALID:
        it->error = op->kind == ADMIN_PARTITIONS ? SF_KERR_INVALID_PARTITIONS
                    : op->kind == ADMIN_CONFIGS  ? SF_KERR_INVALID_CONFIG
                                                 : SF_KERR_INVALID_REPLICATION_FACTOR;
        break;
    default:
        it->error = SF_KERR_UNKNOWN_SERVER_ERROR;
        it->message = "the ZooKeeper write failed";
    }
    admin_check(op, 0);
}

static void admin_timeout_cb(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    admin_check(arg, 1);
}

static admin_op_t *admin_new(sf_handler_t *h, sf_req_t *req, admin_kind_t kind, int nitems,
                             int32_t timeout_ms) {
    admin_op_t *op = calloc(1, sizeof(*op));
    struct timeval tv;
    if (!op)
        return NULL;
    /* Items outlive the request when a ZooKeeper write completes after the answer. */
    op->items = calloc((size_t)nitems + 1, sizeof(*op->items));
    op->timer = evtimer_new(sf_broker_base(h->b), admin_timeout_cb, op);
    if (!op->items || !op->timer) {
        if (op->timer)
            event_free(op->timer);
        free(op->items);
        free(op);
        return NULL;
    }
    op->h = h;
    op->req = req;
    op->kind = kind;
    op->nitems = nitems;
    if (timeout_ms <= 0 || timeout_ms > ADMIN_MAX_WAIT_MS)
        timeout_ms = ADMIN_MAX_WAIT_MS;
    tv.tv_sec = timeout_ms / 1000;
    tv.tv_usec = (timeout_ms % 1000) * 1000;
    evtimer_add(op->timer, &tv);
    op->next = h->admins;
    if (h->admins)
        h->admins->prev = op;
    h->admins = op;
    return op;
}

/* Record the item's ZooKeeper write as started (rc SF_OK) or its synchronous failure. */
static void admin_started(admin_item_t *it, int rc) {
    if (rc == SF_OK) {
        it->zk_pending = 1;
        it->op->zk_pending++;
    } else if (rc == SF_ERR_INVALID) {
        it->error = it->op->kind == ADMIN_PARTITIONS ? SF_KERR_INVALID_PARTITIONS
                    : it->op->kind == ADMIN_CONFIGS  ? SF_KERR_INVALID_CONFIG
                                                     : SF_KERR_INVALID_REPLICATION_FACTOR;
    } else {
        it->error = SF_KERR_UNKNOWN_SERVER_ERROR;
    }
}

/* The name of item @idx of a request, for finding names given more than once: @tag (a
 * resource type, or 0) and @name (a negative length never matches). */
typedef struct dup_key {
    int tag;
    sf_slice_t name;
    int idx;
} dup_key_t;

static int dup_key_cmp(const void *a, const void *b) {
    const dup_key_t *x = a, *y = b;
    int32_t n = x->name.len < y->name.len ? x->name.len : y->name.len;
    int c = n > 0 ? memcmp(x->name.p, y->name.p, (size_t)n) : 0;
    if (x->tag != y->tag)
        return x->tag < y->tag ? -1 : 1;
    if (c)
        return c;
    if (x->name.len != y->name.len)
        return x->name.len < y->name.len ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Sort @keys (@n of them) to find the names given more than once, in n log n (a request can
 * hold millions of items). Sets dup[idx] for each item whose name another item has too (@dup
 * may be NULL). Returns the lowest index whose name appears at a lower one, or -1. Callers
 * malloc @keys and @dup: the decoded request may have used up the request arena. */
static int dup_find(dup_key_t *keys, int n, char *dup) {
    int i, first = -1;
    qsort(keys, (size_t)n, sizeof(*keys), dup_key_cmp);
    for (i = 1; i < n; i++) {
        const dup_key_t *x = &keys[i - 1], *y = &keys[i];
        if (y->name.len < 0 || x->tag != y->tag || x->name.len != y->name.len ||
            (y->name.len && memcmp(x->name.p, y->name.p, (size_t)y->name.len)))
            continue;
        if (dup)
            dup[x->idx] = dup[y->idx] = 1;
        if (first < 0 || y->idx < first)
            first = y->idx;
    }
    return first;
}

static void handle_CreateTopics(sf_handler_t *h, sf_req_t *req) {
    const sf_brokercfg_t *cfg = sf_broker_cfg(h->b);
    sf_cluster_snapshot_t *snap = sf_broker_snapshot(h->b);
    sf_cluster_t *cl = sf_broker_cluster(h->b);
    sf_proto_CreateTopicsRequest_t creq;
    admin_op_t *op;
    dup_key_t *keys;
    char *dup;
    int rc, i, j, k;

    rc = sf_proto_CreateTopicsRequest_decode(&req->body, req->hdr.RequestApiVersion, &req->arena,
                                             &creq);
    if (rc != SF_OK) {
        reject_malformed(req, rc);
        return;
    }
    op = admin_new(h, req, ADMIN_CREATE, creq.TopicsCount, creq.TimeoutMs);
    if (!op) {
        sf_req_close(req);
        return;
    }
    op->validate_only = creq.ValidateOnly;
    keys = calloc((size_t)creq.TopicsCount + 1, sizeof(*keys));
    dup = calloc((size_t)creq.TopicsCount + 1, 1);
    if (!keys || !dup) {
        free(keys);
        free(dup);
        sf_req_close(req);
        op->req = NULL;
        admin_free(op);
        return;
    }
    for (i = 0; i < creq.TopicsCount; i++) {
        op->items[i].topic = sf_slice_strdup(creq.Topics[i].Name);
        keys[i].name = sf_slice_cstr(op->items[i].topic);
        keys[i].idx = i;
    }
    dup_find(keys, creq.TopicsCount, dup);
    free(keys);
    for (i = 0; i < creq.TopicsCount; i++) {
        sf_proto_CreateTopicsRequest_CreatableTopic_t *ct = &creq.Topics[i];
        admin_item_t *it = &op->items[i];
        int32_t nparts = ct->NumPartitions;
        int16_t rf = ct->ReplicationFactor;
        int32_t *assignment = NULL;
        sf_cluster_config_entry_t *configs = NULL;
        size_t z;

        it->op = op;
        if (!it->topic || !sf_cluster_topic_name_valid(it->topic)) {
            it->error = SF_KERR_INVALID_TOPIC_EXCEPTION;
            it->message = "topic names are 1 to 249 characters of [a-zA-Z0-9._-], not . or ..";
            continue;
        }
        if (dup[i]) {
            it->error = SF_KERR_INVALID_REQUEST;
            it->message = "the topic is named more than once in the request";
            continue;
        }
        if (!cl) {
            it->error = SF_KERR_NOT_CONTROLLER;
            it->message = "the broker is not registered in ZooKeeper yet";
            continue;
        }
        if (snap && sf_cluster_snapshot_topic(snap, it->topic)) {
            it->error = SF_KERR_TOPIC_ALREADY_EXISTS;
            it->message = "the topic already exists";
            continue;
        }
        if (ct->AssignmentsCount > 0) {
            /* Manual assignment: partition-major broker ids, all of one length. */
            if (nparts != -1 || rf != -1) {
                it->error = SF_KERR_INVALID_REQUEST;
                it->message = "give either an assignment or partitions and replication factor";
                continue;
            }
            nparts = ct->AssignmentsCount;
            rf = (int16_t)ct->Assignments[0].BrokerIdsCount;
            assignment = sf_arena_calloc(&req->arena, (size_t)nparts * (size_t)(rf > 0 ? rf : 1),
                                         sizeof(int32_t));
            if (!assignment) {
                it->error = SF_KERR_UNKNOWN_SERVER_ERROR;
                continue;
            }
            /* -1: no replica list yet, so a partition given twice (and one left out) is seen. */
            for (z = 0; z < (size_t)nparts * (size_t)(rf > 0 ? rf : 1); z++)
                assignment[z] = -1;
            for (j = 0; j < nparts && it->error == SF_KERR_NONE; j++) {
                const sf_proto_CreateTopicsRequest_CreatableReplicaAssignment_t *a = &ct->Assignments[j];
                if (a->PartitionIndex < 0 || a->PartitionIndex >= nparts || a->BrokerIdsCount != rf ||
                    rf <= 0 || assignment[(size_t)a->PartitionIndex * (size_t)rf] != -1) {
                    it->error = SF_KERR_INVALID_REPLICA_ASSIGNMENT;
                    it->message = "partitions must be numbered 0..n-1 with replica lists of one length";
                    break;
                }
                for (k = 0; k < rf; k++) {
                    if (!snap || !sf_cluster_snapshot_broker(snap, a->BrokerIds[k])) {
                        it->error = SF_KERR_INVALID_REPLICA_ASSIGNMENT;
                        it->message = "the assignment names a broker that is not registered";
                        break;
                    }
                    assignment[(size_t)a->PartitionIndex * (size_t)rf + (size_t)k] = a->BrokerIds[k];
                }
            }
            if (it->error != SF_KERR_NONE)
                continue;
        } else {
            if (nparts == -1)
                nparts = cfg->num_partitions;
            if (rf == -1)
                rf = (int16_t)cfg->default_replication_factor;
            if (nparts <= 0) {
                it->error = SF_KERR_INVALID_PARTITIONS;
                it->message = "the number of partitions must be at least 1";
                continue;
            }
            if (rf <= 0 || !snap || rf > snap->nbrokers) {
                it->error = SF_KERR_INVALID_REPLICATION_FACTOR;
                it->message = "the replication factor is larger than the number of live brokers";
                continue;
            }
        }
        if (ct->ConfigsCount > 0) {
            configs = sf_arena_calloc(&req->arena, (size_t)ct->ConfigsCount, sizeof(*configs));
            if (!configs) {
                it->error = SF_KERR_UNKNOWN_SERVER_ERROR;
                continue;
            }
            for (j = 0; j < ct->ConfigsCount; j++) {
                char why[160];
                configs[j].name = arena_str(req, ct->Configs[j].Name);
                configs[j].value = arena_str(req, ct->Configs[j].Value);
                if (!configs[j].name || !configs[j].value ||
                    !sf_broker_topic_config_known(configs[j].name)) {
                    it->error = SF_KERR_INVALID_CONFIG;
                    it->message = "unknown topic config or null value";
                    break;
                }
                if (!config_value_ok(configs[j].name, configs[j].value, why, sizeof(why))) {
                    it->error = SF_KERR_INVALID_CONFIG;
                    it->message = arena_printf(req, "invalid value \"%.100s\" for %s: %s",
                                               configs[j].value, configs[j].name, why);
                    break;
                }
            }
            if (it->error != SF_KERR_NONE)
                continue;
        }
        it->partitions = nparts;
        if (creq.ValidateOnly)
            continue;
        admin_started(it, sf_cluster_topic_create(cl, it->topic, nparts, rf, assignment, configs,
                                                  ct->ConfigsCount > 0 ? ct->ConfigsCount : 0,
                                                  admin_done, it));
    }
    free(dup);
    admin_check(op, 0);
}

static void handle_DeleteTopics(sf_handler_t *h, sf_req_t *req) {
    const sf_brokercfg_t *cfg = sf_broker_cfg(h->b);
    sf_cluster_snapshot_t *snap = sf_broker_snapshot(h->b);
    sf_cluster_t *cl = sf_broker_cluster(h->b);
    sf_proto_DeleteTopicsRequest_t dreq;
    admin_op_t *op;
    int rc, i;

    rc = sf_proto_DeleteTopicsRequest_decode(&req->body, req->hdr.RequestApiVersion, &req->arena,
                                             &dreq);
    if (rc != SF_OK) {
        reject_malformed(req, rc);
        return;
    }
    op = admin_new(h, req, ADMIN_DELETE, dreq.TopicNamesCount, dreq.TimeoutMs);
    if (!op) {
        sf_req_close(req);
        return;
    }
    for (i = 0; i < dreq.TopicNamesCount; i++) {
        admin_item_t *it = &op->items[i];
        it->op = op;
        it->topic = sf_slice_strdup(dreq.TopicNames[i]);
        if (!it->topic) {
            it->error = SF_KERR_INVALID_REQUEST;
        } else if (!cfg->delete_topic_enable) {
            it->error = SF_KERR_TOPIC_DELETION_DISABLED;
        } else if (!cl) {
            it->error = SF_KERR_NOT_CONTROLLER;
        } else if (!snap || !sf_cluster_snapshot_topic(snap, it->topic)) {
            it->error = SF_KERR_UNKNOWN_TOPIC_OR_PARTITION;
        } else {
            admin_started(it, sf_cluster_topic_delete(cl, it->topic, admin_done, it));
        }
    }
    admin_check(op, 0);
}

static void handle_CreatePartitions(sf_handler_t *h, sf_req_t *req) {
    sf_cluster_snapshot_t *snap = sf_broker_snapshot(h->b);
    sf_cluster_t *cl = sf_broker_cluster(h->b);
    sf_proto_CreatePartitionsRequest_t creq;
    admin_op_t *op;
    int rc, i, j, k;

    rc = sf_proto_CreatePartitionsRequest_decode(&req->body, req->hdr.RequestApiVersion,
                                                 &req->arena, &creq);
    if (rc != SF_OK) {
        reject_malformed(req, rc);
        return;
    }
    op = admin_new(h, req, ADMIN_PARTITIONS, creq.TopicsCount, creq.TimeoutMs);
    if (!op) {
        sf_req_close(req);
        return;
    }
    op->validate_only = creq.ValidateOnly;
    for (i = 0; i < creq.TopicsCount; i++) {
        sf_proto_CreatePartitionsRequest_CreatePartitionsTopic_t *ct = &creq.Topics[i];
        admin_item_t *it = &op->items[i];
        const sf_cluster_topic_t *t;
        int32_t *assignment = NULL;
        it->op = op;
        it->topic = sf_slice_strdup(ct->Name);
        it->partitions = ct->Count;
        if (!it->topic) {
            it->error = SF_KERR_INVALID_REQUEST;
            continue;
        }
        t = snap ? sf_cluster_snapshot_topic(snap, it->topic) : NULL;
        if (!t) {
            it->error = SF_KERR_UNKNOWN_TOPIC_OR_PARTITION;
            continue;
        }
        if (ct->Count <= t->npartitions) {
            it->error = SF_KERR_INVALID_PARTITIONS;
            it->message = "the new partition count must be larger than the current one";
            continue;
        }
        if (!cl) {
            it->error = SF_KERR_NOT_CONTROLLER;
            continue;
        }
        if (ct->AssignmentsCount > 0) {
            int rf = t->npartitions ? t->partitions[0].nreplicas : 1;
            if (ct->AssignmentsCount != ct->Count - t->npartitions) {
                it->error = SF_KERR_INVALID_REPLICA_ASSIGNMENT;
                it->message = "give one replica list per new partition";
                continue;
            }
            assignment = sf_arena_calloc(&req->arena, (size_t)ct->AssignmentsCount * (size_t)rf,
                                         sizeof(int32_t));
            if (!assignment) {
                it->error = SF_KERR_UNKNOWN_SERVER_ERROR;
                continue;
            }
            for (j = 0; j < ct->AssignmentsCount && it->error == SF_KERR_NONE; j++) {
                if (ct->Assignments[j].BrokerIdsCount != rf) {
                    it->error = SF_KERR_INVALID_REPLICA_ASSIGNMENT;
                    it->message = "each replica list must have the topic's replication factor";
                    break;
                }
                for (k = 0; k < rf; k++)
                    assignment[(size_t)j * (size_t)rf + (size_t)k] = ct->Assignments[j].BrokerIds[k];
            }
            if (it->error != SF_KERR_NONE)
                continue;
        }
        if (creq.ValidateOnly)
            continue;
        admin_started(it, sf_cluster_partitions_add(cl, it->topic, ct->Count, assignment,
                                                    admin_done, it));
    }
    admin_check(op, 0);
}

/* ------------------------------------------------------------------------------------------
 * DescribeConfigs
 * ------------------------------------------------------------------------------------------ */

#define RESOURCE_TOPIC 2
#define RESOURCE_BROKER 4
/* ConfigSource values (DescribeConfigsResponse). */
#define SOURCE_DYNAMIC_TOPIC 1
#define SOURCE_STATIC_BROKER 4
#define SOURCE_DEFAULT 5

static int key_wanted(const sf_proto_DescribeConfigsRequest_DescribeConfigsResource_t *res, const char *name) {
    int i;
    if (res->ConfigurationKeysCount < 0)
        return 1;
    for (i = 0; i < res->ConfigurationKeysCount; i++)
        if (sf_slice_eq(res->ConfigurationKeys[i], name))
            return 1;
    return 0;
}

static void handle_DescribeConfigs(sf_handler_t *h, sf_req_t *req) {
    int16_t ver = req->hdr.RequestApiVersion;
    const sf_brokercfg_t *cfg = sf_broker_cfg(h->b);
    sf_cluster_snapshot_t *snap = sf_broker_snapshot(h->b);
    sf_proto_DescribeConfigsRequest_t dreq;
    sf_proto_DescribeConfigsResponse_t resp;
    sf_wbuf_t wb;
    int rc, i;

    rc = sf_proto_DescribeConfigsRequest_decode(&req->body, ver, &req->arena, &dreq);
    if (rc != SF_OK) {
        reject_malformed(req, rc);
        return;
    }
    memset(&resp, 0, sizeof(resp));
    resp.Results = sf_arena_calloc(&req->arena, (size_t)dreq.ResourcesCount + 1, sizeof(*resp.Results));
    if (!resp.Results)
        goto nomem;
    resp.ResultsCount = dreq.ResourcesCount;
    for (i = 0; i < dreq.ResourcesCount; i++) {
        const sf_proto_DescribeConfigsRequest_DescribeConfigsResource_t *res = &dreq.Resources[i];
        sf_proto_DescribeConfigsResponse_DescribeConfigsResult_t *rr = &resp.Results[i];
        sf_broker_topic_config_t tc[32];
        char *name = arena_str(req, res->ResourceName);
        const sf_cluster_topic_t *t = NULL;
        size_t n, j;
        rr->ResourceType = res->ResourceType;
        rr->ResourceName = res->ResourceName;
        rr->ErrorMessage = sf_slice_cstr(NULL);
        if (res->ResourceType == RESOURCE_TOPIC) {
            t = name && snap ? sf_cluster_snapshot_topic(snap, name) : NULL;
            if (!t) {
                rr->ErrorCode = SF_KERR_UNKNOWN_TOPIC_OR_PARTITION;
                continue;
            }
        } else if (res->ResourceType == RESOURCE_BROKER) {
            char id[16];
            snprintf(id, sizeof(id), "%d", cfg->broker_id);
            if (!name || (name[0] && strcmp(name, id))) {
                rr->ErrorCode = SF_KERR_INVALID_REQUEST;
                rr->ErrorMessage = sf_slice_cstr("not this broker's id");
                continue;
            }
        } else {
            rr->ErrorCode = SF_KERR_INVALID_REQUEST;
            rr->ErrorMessage = sf_slice_cstr("only topic and broker resources are described");
            continue;
        }
        n = sf_broker_topic_configs(h->b, t, tc, sizeof(tc) / sizeof(tc[0]));
        rr->Configs = sf_arena_calloc(&req->arena, n + 1, sizeof(*rr->Configs));
        if (!rr->Configs)
            goto nomem;
        for (j = 0; j < n; j++) {
            sf_proto_DescribeConfigsResponse_DescribeConfigsResourceResult_t *c;
            /* Broker resources use the broker key names (log.* for the log settings). */
            const char *cname =
                res->ResourceType == RESOURCE_BROKER ? tc[j].broker_name : tc[j].name;
            if (!key_wanted(res, cname))
                continue;
            c = &rr->Configs[rr->ConfigsCount++];
            c->Name = sf_slice_cstr(cname);
            c->Value = arena_slice(req, tc[j].value);
            c->ReadOnly = res->ResourceType == RESOURCE_BROKER;
            c->IsDefault = tc[j].is_default;
            c->ConfigSource = res->ResourceType == RESOURCE_BROKER ? SOURCE_STATIC_BROKER
                              : tc[j].is_default                 ? SOURCE_DEFAULT
                                                                 : SOURCE_DYNAMIC_TOPIC;
            c->Documentation = sf_slice_cstr(NULL);
        }
    }
    sf_wbuf_init(&wb);
    sf_proto_DescribeConfigsResponse_encode(&wb, ver, &resp);
    respond(req, &wb);
    return;
nomem:
    sf_req_close(req);
}

/* ------------------------------------------------------------------------------------------
 * AlterConfigs and IncrementalAlterConfigs: topic config overrides in ZooKeeper
 * ------------------------------------------------------------------------------------------ */

/* What a topic config accepts (Kafka's LogConfig validators). Configs the broker knows but
 * this table does not name accept any value. */
typedef enum { CV_INT, CV_LONG, CV_ONE_OF, CV_LIST_OF } config_kind_t;

typedef struct config_rule {
    const char *name;
    config_kind_t kind;
    int64_t min;         /* CV_INT / CV_LONG */
    const char *choices; /* CV_ONE_OF / CV_LIST_OF: comma-separated */
} config_rule_t;

static const config_rule_t config_rules[] = {
    {"segment.bytes", CV_INT, 14, NULL}, /* at least one legacy record overhead */
    {"segment.ms", CV_LONG, 1, NULL},
    {"retention.ms", CV_LONG, -1, NULL},
    {"retention.bytes", CV_LONG, INT64_MIN, NULL},
    {"max.message.bytes", CV_INT, 0, NULL},
    {"flush.messages", CV_LONG, 1, NULL},
    {"flush.ms", CV_LONG, 0, NULL},
    {"index.interval.bytes", CV_INT, 0, NULL},
    {"segment.index.bytes", CV_INT, 4, NULL},
    {"min.insync.replicas", CV_INT, 1, NULL},
    {"cleanup.policy", CV_LIST_OF, 0, "compact,delete"},
    {"compression.type", CV_ONE_OF, 0, "uncompressed,zstd,lz4,snappy,gzip,producer"},
    {"message.timestamp.type", CV_ONE_OF, 0, "CreateTime,LogAppendTime"},
};

static const config_rule_t *config_rule(const char *name) {
    size_t i;
    for (i = 0; i < sizeof(config_rules) / sizeof(config_rules[0]); i++)
        if (!strcmp(config_rules[i].name, name))
            return &config_rules[i];
    return NULL;
}

/* The next item of a comma-separated list at *@pos (spaces around commas ignored): its start
 * and length. Returns 0 after the last item (a list of "" has one empty item). */
static int list_next(const char **pos, const char **tok, size_t *len) {
    const char *p = *pos, *end;
    if (!p)
        return 0;
    while (*p == ' ')
        p++;
    end = strchr(p, ',');
    *pos = end ? end + 1 : NULL;
    if (!end)
        end = p + strlen(p);
    *tok = p;
    while (end > p && end[-1] == ' ')
        end--;
    *len = (size_t)(end - p);
    return 1;
}

static int list_has(const char *list, const char *tok, size_t len) {
    const char *pos = list, *t;
    size_t n;
    while (list_next(&pos, &t, &n))
        if (n == len && !memcmp(t, tok, len))
            return 1;
    return 0;
}

/* 1 if @value suits config @name; else 0 with the reason in @why. */
static int config_value_ok(const char *name, const char *value, char *why, size_t size) {
    const config_rule_t *rule = config_rule(name);
    const char *pos, *t;
    size_t n;
    if (!rule)
        return 1;
    switch (rule->kind) {
    case CV_INT:
    case CV_LONG: {
        const char *p = value[0] == '-' ? value + 1 : value;
        char *end;
        long long x;
        errno = 0;
        x = strtoll(value, &end, 10);
        /* Digits only (strtoll alone would take spaces and a '+'). */
        if (*p < '0' || *p > '9' || *end) {
            snprintf(why, size, "not an integer");
            return 0;
        }
        if (errno == ERANGE || (rule->kind == CV_INT && (x < INT32_MIN || x > INT32_MAX))) {
            snprintf(why, size, "out of the range of a %d-bit integer",
                     rule->kind == CV_INT ? 32 : 64);
            return 0;
        }
        if (x < rule->min) {
            snprintf(why, size, "must be at least %lld", (long long)rule->min);
            return 0;
        }
        return 1;
    }
    case CV_ONE_OF:
        if (strchr(value, ',') || !list_has(rule->choices, value, strlen(value))) {
            snprintf(why, size, "must be one of %s", rule->choices);
            return 0;
        }
        return 1;
    case CV_LIST_OF:
        /* Items must be choices and distinct, so the loop ends within a few items. */
        for (pos = value; list_next(&pos, &t, &n);) {
            if (n == 0 || !list_has(rule->choices, t, n)) {
                snprintf(why, size, "must be a list of %s", rule->choices);
                return 0;
            }
            if (pos && list_has(pos, t, n)) {
                snprintf(why, size, "%.*s is listed twice", (int)n, t);
                return 0;
            }
        }
        return 1;
    }
    return 1;
}

/* APPEND (@subtract 0) or SUBTRACT the items of @arg to/from the list @old; the result is in
 * the request arena (NULL on no memory). Costs |old| x |arg|: callers keep one of them short. */
static char *list_edit(sf_req_t *req, const char *old, const char *arg, int subtract) {
    size_t cap = strlen(old) + strlen(arg) + 2, len = 0, n;
    char *r = sf_arena_alloc(&req->arena, cap);
    const char *pos, *t;
    if (!r)
        return NULL;
    r[0] = '\0';
    for (pos = old; list_next(&pos, &t, &n);) {
        if (n == 0 || (subtract && list_has(arg, t, n)))
            continue;
        len += (size_t)snprintf(r + len, cap - len, "%s%.*s", len ? "," : "", (int)n, t);
    }
    for (pos = arg; !subtract && list_next(&pos, &t, &n);) {
        if (n == 0 || list_has(r, t, n))
            continue;
        len += (size_t)snprintf(r + len, cap - len, "%s%.*s", len ? "," : "", (int)n, t);
    }
    return r;
}

/* A resource to change, from either request: AlterConfigs' are rewritten as SET operations
 * (where a null value means unset). */
typedef sf_proto_IncrementalAlterConfigsRequest_AlterConfigsResource_t config_resource_t;
typedef sf_proto_IncrementalAlterConfigsRequest_AlterableConfig_t config_change_t;

static int config_find(const sf_cluster_config_entry_t *cfgs, int n, const char *name) {
    int i;
    for (i = 0; i < n; i++)
        if (!strcmp(cfgs[i].name, name))
            return i;
    return -1;
}

/* Set @it's error and message, unless an error is there already. Returns 0. */
static int config_fail(admin_item_t *it, int16_t err, const char *msg) {
    if (it->error == SF_KERR_NONE) {
        it->error = err;
        it->message = msg;
    }
    return 0;
}

/* Work out a topic resource's new override set into it->configs, or set it->error. The new
 * set starts from the current overrides (incremental) or from nothing (AlterConfigs replaces
 * the whole set: keys not given are removed). Returns 1 if the set is ready. */
static int config_topic_prepare(sf_handler_t *h, sf_req_t *req, admin_item_t *it,
                                const config_resource_t *res, int incremental) {
    sf_cluster_snapshot_t *snap = sf_broker_snapshot(h->b);
    const sf_cluster_topic_t *t;
    sf_cluster_config_entry_t *cfgs;
    dup_key_t *keys;
    int n = 0, cap, j;

    it->topic = sf_slice_strdup(res->ResourceName);
    if (!it->topic)
        return config_fail(it, SF_KERR_UNKNOWN_SERVER_ERROR, NULL);
    t = snap && sf_cluster_topic_name_valid(it->topic) ? sf_cluster_snapshot_topic(snap, it->topic)
                                                       : NULL;
    if (!t)
        return config_fail(it, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION, "the topic does not exist");
    keys = calloc((size_t)res->ConfigsCount + 1, sizeof(*keys));
    if (!keys)
        return config_fail(it, SF_KERR_UNKNOWN_SERVER_ERROR, NULL);
    for (j = 0; j < res->ConfigsCount; j++) {
        keys[j].name = res->Configs[j].Name;
        keys[j].idx = j;
    }
    j = dup_find(keys, res->ConfigsCount, NULL);
    free(keys);
    if (j >= 0)
        return config_fail(it, SF_KERR_INVALID_REQUEST,
                           arena_printf(req, "config %.*s is named more than once",
                                        res->Configs[j].Name.len > 200 ? 200
                                                                       : res->Configs[j].Name.len,
                                        (const char *)res->Configs[j].Name.p));

    cap = (incremental ? t->nconfigs : 0) + res->ConfigsCount;
    cfgs = calloc((size_t)cap + 1, sizeof(*cfgs));
    if (!cfgs)
        return config_fail(it, SF_KERR_UNKNOWN_SERVER_ERROR, NULL);
    /* Overrides StreamFlow does not know (written by other tools) are kept as they are. */
    for (j = 0; incremental && j < t->nconfigs; j++) {
        if (!t->configs[j].name || !t->configs[j].value)
            continue;
        cfgs[n].name = strdup(t->configs[j].name);
        cfgs[n].value = strdup(t->configs[j].value);
        if (!cfgs[n++].value || !cfgs[n - 1].name) {
            config_fail(it, SF_KERR_UNKNOWN_SERVER_ERROR, NULL);
            goto out;
        }
    }
    for (j = 0; j < res->ConfigsCount; j++) {
        const config_change_t *ch = &res->Configs[j];
        char *name = arena_str(req, ch->Name), *value = arena_str(req, ch->Value);
        const char *newval = NULL;
        char why[160];
        int at;
        if (!name || (ch->Value.len >= 0 && !value)) {
            config_fail(it, SF_KERR_UNKNOWN_SERVER_ERROR, NULL);
            goto out;
        }
        if (strlen(name) != (size_t)ch->Name.len || !sf_broker_topic_config_known(name)) {
            config_fail(it, SF_KERR_INVALID_CONFIG,
                        arena_printf(req, "unknown topic config %.200s", name));
            goto out;
        }
        at = config_find(cfgs, n, name);
        switch (ch->ConfigOperation) {
        case SF_PROTO_CONFIG_OP_SET:
            if (!value && incremental) {
                config_fail(it, SF_KERR_INVALID_REQUEST,
                            arena_printf(req, "null value for %s (use DELETE to remove it)", name));
                goto out;
            }
            newval = value; /* AlterConfigs: null leaves the key unset */
            break;
        case SF_PROTO_CONFIG_OP_DELETE:
            break;
        case SF_PROTO_CONFIG_OP_APPEND:
        case SF_PROTO_CONFIG_OP_SUBTRACT: {
            const config_rule_t *rule = config_rule(name);
            const char *old;
            sf_broker_topic_config_t dflt[32];
            size_t nd, d;
            if (!rule || rule->kind != CV_LIST_OF) {
                config_fail(it, SF_KERR_INVALID_REQUEST,
                            arena_printf(req, "%s is not a list config: APPEND and SUBTRACT "
                                              "apply to list configs (cleanup.policy) only",
                                         name));
                goto out;
            }
            if (!value) {
                config_fail(it, SF_KERR_INVALID_REQUEST,
                            arena_printf(req, "null value for %s", name));
                goto out;
            }
            /* Items to add must be valid ones (which also keeps the list short). */
            if (ch->ConfigOperation == SF_PROTO_CONFIG_OP_APPEND &&
                !config_value_ok(name, value, why, sizeof(why))) {
                config_fail(it, SF_KERR_INVALID_CONFIG,
                            arena_printf(req, "invalid value \"%.100s\" for %s: %s", value, name,
                                         why));
                goto out;
            }
            /* The list to edit: the override, else the default (as Kafka does). */
            old = at >= 0 ? cfgs[at].value : "";
            if (at < 0) {
                nd = sf_broker_topic_configs(h->b, NULL, dflt, sizeof(dflt) / sizeof(dflt[0]));
                for (d = 0; d < nd; d++)
                    if (!strcmp(dflt[d].name, name))
                        old = arena_str(req, sf_slice_cstr(dflt[d].value));
            }
            newval = old ? list_edit(req, old, value,
                                     ch->ConfigOperation == SF_PROTO_CONFIG_OP_SUBTRACT)
                         : NULL;
            if (!newval) {
                config_fail(it, SF_KERR_UNKNOWN_SERVER_ERROR, NULL);
                goto out;
            }
            break;
        }
        default:
            config_fail(it, SF_KERR_INVALID_REQUEST,
                        arena_printf(req, "unknown config operation %d for %s",
                                     ch->ConfigOperation, name));
            goto out;
        }
        if (newval && !config_value_ok(name, newval, why, sizeof(why))) {
            config_fail(it, SF_KERR_INVALID_CONFIG,
                        arena_printf(req, "invalid value \"%.100s\" for %s: %s", newval, name, why));
            goto out;
        }
        /* Lists are stored without the spaces Kafka allows around commas. */
        if (newval && config_rule(name) && config_rule(name)->kind == CV_LIST_OF &&
            !(newval = list_edit(req, newval, "", 0))) {
            config_fail(it, SF_KERR_UNKNOWN_SERVER_ERROR, NULL);
            goto out;
        }
        if (!newval) {
            if (at >= 0) {
                free(cfgs[at].name);
                free(cfgs[at].value);
                cfgs[at] = cfgs[--n];
            }
            continue;
        }
        if (at < 0) {
            at = n++;
            cfgs[at].name = strdup(name);
        } else {
            free(cfgs[at].value);
        }
        cfgs[at].value = strdup(newval);
        if (!cfgs[at].name || !cfgs[at].value) {
            config_fail(it, SF_KERR_UNKNOWN_SERVER_ERROR, NULL);
            goto out;
        }
    }
out:
    if (it->error != SF_KERR_NONE) {
        sf_cluster_configs_free(cfgs, n);
        return 0;
    }
    it->configs = cfgs;
    it->nconfigs = n;
    return 1;
}

static void alter_configs_run(sf_handler_t *h, sf_req_t *req, int incremental,
                              const config_resource_t *res, int32_t nres, bool validate_only) {
    sf_cluster_t *cl = sf_broker_cluster(h->b);
    dup_key_t *keys = calloc((size_t)nres + 1, sizeof(*keys));
    char *dup = calloc((size_t)nres + 1, 1);
    admin_op_t *op = NULL;
    int i;

    if (!keys || !dup || !(op = admin_new(h, req, ADMIN_CONFIGS, nres, 0))) {
        free(keys);
        free(dup);
        sf_req_close(req);
        return;
    }
    op->validate_only = validate_only;
    for (i = 0; i < nres; i++) {
        admin_item_t *it = &op->items[i];
        it->op = op;
        it->resource_type = res[i].ResourceType;
        it->resource_name = res[i].ResourceName;
        keys[i].tag = res[i].ResourceType;
        keys[i].name = res[i].ResourceName;
        keys[i].idx = i;
    }
    dup_find(keys, nres, dup);
    free(keys);
    for (i = 0; i < nres; i++) {
        admin_item_t *it = &op->items[i];
        if (dup[i]) {
            config_fail(it, SF_KERR_INVALID_REQUEST,
                        "the resource is named more than once in the request");
            continue;
        }
        if (res[i].ResourceType == RESOURCE_BROKER) {
            /* Kafka's dynamic broker configs are not supported. */
            config_fail(it, SF_KERR_INVALID_REQUEST,
                        "broker configs are read-only; change streamflowd.conf");
            continue;
        }
        if (res[i].ResourceType != RESOURCE_TOPIC) {
            config_fail(it, SF_KERR_INVALID_REQUEST,
                        arena_printf(req, "resource type %d cannot be altered; only topics (2) "
                                          "can",
                                     res[i].ResourceType));
            continue;
        }
        if (!config_topic_prepare(h, req, it, &res[i], incremental) || validate_only)
            continue;
        if (!cl) {
            config_fail(it, SF_KERR_NOT_CONTROLLER, "the broker is not registered in ZooKeeper yet");
            continue;
        }
        sf_log(SF_LOG_INFO, "ADMIN", "%s: %s the config of %s (%d override(s))",
               sf_conn_peer(req->conn), incremental ? "changing" : "replacing", it->topic,
               it->nconfigs);
        admin_started(it, sf_cluster_topic_config_set(cl, it->topic, it->configs, it->nconfigs,
                                                      admin_done, it));
    }
    free(dup);
    admin_check(op, 0);
}

static void handle_AlterConfigs(sf_handler_t *h, sf_req_t *req) {
    sf_proto_AlterConfigsRequest_t areq;
    config_resource_t *res;
    int rc, i, j;

    rc = sf_proto_AlterConfigsRequest_decode(&req->body, req->hdr.RequestApiVersion, &req->arena,
                                             &areq);
    if (rc != SF_OK) {
        reject_malformed(req, rc);
        return;
    }
    /* As the incremental form: every given key SET, the rest removed (incremental = 0). */
    res = sf_arena_calloc(&req->arena, (size_t)areq.ResourcesCount + 1, sizeof(*res));
    if (!res)
        goto nomem;
    for (i = 0; i < areq.ResourcesCount; i++) {
        const sf_proto_AlterConfigsRequest_AlterConfigsResource_t *ar = &areq.Resources[i];
        res[i].ResourceType = ar->ResourceType;
        res[i].ResourceName = ar->ResourceName;
        res[i].ConfigsCount = ar->ConfigsCount;
        res[i].Configs = sf_arena_calloc(&req->arena, (size_t)ar->ConfigsCount + 1,
                                         sizeof(*res[i].Configs));
        if (!res[i].Configs)
            goto nomem;
        for (j = 0; j < ar->ConfigsCount; j++) {
            res[i].Configs[j].Name = ar->Configs[j].Name;
            res[i].Configs[j].ConfigOperation = SF_PROTO_CONFIG_OP_SET;
            res[i].Configs[j].Value = ar->Configs[j].Value;
        }
    }
    alter_configs_run(h, req, 0, res, areq.ResourcesCount, areq.ValidateOnly);
    return;
nomem:
    sf_req_close(req);
}

static void handle_IncrementalAlterConfigs(sf_handler_t *h, sf_req_t *req) {
    sf_proto_IncrementalAlterConfigsRequest_t ireq;
    int rc;

    rc = sf_proto_IncrementalAlterConfigsRequest_decode(&req->body, req->hdr.RequestApiVersion,
                                                        &req->arena, &ireq);
    if (rc != SF_OK) {
        reject_malformed(req, rc);
        return;
    }
    alter_configs_run(h, req, 1, ireq.Resources, ireq.ResourcesCount, ireq.ValidateOnly);
}

/* ------------------------------------------------------------------------------------------
 * Dispatch
 * ------------------------------------------------------------------------------------------ */

void sf_handler_dispatch(sf_req_t *req, void *arg) {
    sf_handler_t *h = arg;
    int16_t key = req->hdr.RequestApiKey, ver = req->hdr.RequestApiVersion;

    if (key == SF_PROTO_API_ApiVersions) {
        handle_ApiVersions(h, req);
        return;
    }
    if (!version_supported(key, ver)) {
        sf_log(SF_LOG_INFO, "PROTOERR", "%s: unsupported request %s (key %d) v%d",
               sf_conn_peer(req->conn), sf_proto_api_name(key), key, ver);
        respond_unsupported(req);
        return;
    }
    switch (key) {
    case SF_PROTO_API_Produce: handle_Produce(h, req); break;
    case SF_PROTO_API_Fetch: handle_Fetch(h, req); break;
    case SF_PROTO_API_ListOffsets: handle_ListOffsets(h, req); break;
    case SF_PROTO_API_Metadata: handle_Metadata(h, req); break;
    case SF_PROTO_API_CreateTopics: handle_CreateTopics(h, req); break;
    case SF_PROTO_API_DeleteTopics: handle_DeleteTopics(h, req); break;
    case SF_PROTO_API_CreatePartitions: handle_CreatePartitions(h, req); break;
    case SF_PROTO_API_DescribeConfigs: handle_DescribeConfigs(h, req); break;
    case SF_PROTO_API_AlterConfigs: handle_AlterConfigs(h, req); break;
    case SF_PROTO_API_IncrementalAlterConfigs: handle_IncrementalAlterConfigs(h, req); break;
    default: respond_unsupported(req); break;
    }
}

void sf_handler_on_snapshot(sf_handler_t *h) {
    admin_op_t *op, *next;
    while (h->metadata_waits && metadata_ready(h)) {
        metadata_wait_t *mw = h->metadata_waits;
        metadata_answer(h, mw->req, &mw->mreq);
        metadata_wait_free(mw);
    }
    for (op = h->admins; op; op = next) {
        next = op->next;
        admin_check(op, 0);
    }
}

sf_handler_t *sf_handler_new(sf_broker_t *b) {
    sf_handler_t *h = calloc(1, sizeof(*h));
    if (!h)
        return NULL;
    h->b = b;
    h->wake_ev = event_new(sf_broker_base(b), -1, 0, fetch_wake_cb, h);
    if (!h->wake_ev) {
        free(h);
        return NULL;
    }
    return h;
}

void sf_handler_free(sf_handler_t *h) {
    admin_op_t *op, *next;
    if (!h)
        return;
    while (h->metadata_waits) {
        metadata_wait_t *mw = h->metadata_waits;
        metadata_answer(h, mw->req, &mw->mreq);
        metadata_wait_free(mw);
    }
    while (h->fetches) {
        fetch_wait_t *fw = h->fetches;
        fetch_try(h, fw->req, fw->fc, 1);
        fetch_wait_free(fw);
    }
    /* Admin requests get their answer now; ZooKeeper completions that are still due find
     * their op through the items, so those ops stay until the cluster module (freed after
     * the handlers) completes them with an error. */
    for (op = h->admins; op; op = next) {
        next = op->next;
        if (op->req)
            admin_respond(op);
        op->h = NULL;
        if (op->zk_pending == 0)
            admin_free(op);
    }
    event_free(h->wake_ev);
    free(h);
}
