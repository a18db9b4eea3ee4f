/* Replication between brokers (see replication.h): the inter-broker client, the partitions
 * followed and led here, and the ISR changes the leaders ask the controller for. */
#include "config.h"

#include "replication.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "arena.h"
#include "brokercfg.h"
#include "clock.h"
#include "election_rules.h"
#include "err.h"
#include "kmsg.h"
#include "leader.h"
#include "log.h"
#include "logging.h"
#include "metrics.h"
#include "replication_int.h"

/* How often the leaders look at their followers (at most; replica.lag.time.max.ms / 2 when
 * shorter, as Kafka). An ISR addition waits for it too. */
#define ISR_CHECK_MAX_MS 250
/* ControlledShutdown v3 (BrokerEpoch, flexible). */
#define CONTROLLED_SHUTDOWN_VERSION 3
/* AlterPartition v1: topic names, LeaderRecoveryState. */
#define ALTER_PARTITION_VERSION 1
/* A refused or failed ISR change is asked again after this long. */
#define ISR_RETRY_MS 1000
/* The most partitions one AlterPartition carries; more wait for the next check. */
#define SF_ISR_MAX_PER_REQUEST 1000
/* An ISR change asked for and answered is not asked again before the partition state shows it,
 * or this long. */
#define ISR_ASK_AGAIN_MS 5000

/* ---- the followed partitions ---- */

repl_follow_t *repl_follow_find(sf_replication_t *r, const sf_partition_t *part, int32_t epoch) {
    int i;
    for (i = 0; i < r->nfollows; i++)
        if (r->follows[i].part == part)
            return r->follows[i].epoch == epoch ? &r->follows[i] : NULL;
    return NULL;
}

repl_leader_t *repl_leader_get(sf_replication_t *r, int32_t id) {
    int i;
    for (i = 0; i < r->nleaders; i++)
        if (r->leaders[i].id == id)
            return &r->leaders[i];
    if (r->nleaders == r->cap_leaders) {
        int cap = r->cap_leaders ? r->cap_leaders * 2 : 8;
        repl_leader_t *nl = realloc(r->leaders, (size_t)cap * sizeof(*nl));
        if (!nl)
            return NULL;
        r->leaders = nl;
        r->cap_leaders = cap;
    }
    memset(&r->leaders[r->nleaders], 0, sizeof(r->leaders[0]));
    r->leaders[r->nleaders].id = id;
    return &r->leaders[r->nleaders++];
}

static int follow_cmp(const void *a, const void *b) {
    const repl_follow_t *x = a, *y = b;
    int c;
    if (x->leader != y->leader)
        return x->leader < y->leader ? -1 : 1;
    if ((c = strcmp(x->topic->name, y->topic->name)))
        return c;
    return (x->part->index > y->part->index) - (x->part->index < y->part->index);
}

static void follows_free(repl_follow_t *f, int n) {
    int i;
    for (i = 0; i < n; i++)
        sf_partition_unref(f[i].part);
    free(f);
}

/* The partitions of @v held here whose leader is another live broker. */
static repl_follow_t *follows_of(sf_replication_t *r, const sf_view_t *v, int *n) {
    const sf_cluster_snapshot_t *snap = v->snap;
    repl_follow_t *f = NULL;
    int t, i, m = 0, cap = 0;
    for (t = 0; t < snap->ntopics; t++) {
        const sf_cluster_topic_t *topic = snap->topics[t];
        for (i = 0; i < topic->npartitions; i++) {
            const sf_cluster_partition_t *cp = &topic->partitions[i];
            sf_partition_t *part = v->parts[t] ? v->parts[t][i] : NULL;
            if (!part || cp->leader < 0 || cp->leader == r->cfg->broker_id ||
                !sf_cluster_snapshot_broker(snap, cp->leader))
                continue;
            if (m == cap) {
                repl_follow_t *nf = realloc(f, (size_t)(cap = cap ? cap * 2 : 16) * sizeof(*f));
                if (!nf)
                    break;
                f = nf;
            }
            f[m].part = sf_partition_ref(part);
            f[m].topic = topic;
            f[m].leader = cp->leader;
            f[m].epoch = cp->leader_epoch;
            f[m].backoff_until_ms = 0;
            f[m].throttled =
                !sf_elect_has(cp->isr, cp->nisr, r->cfg->broker_id) &&
                sf_throttle_listed(&v->topiccfg, topic, SF_THROTTLE_FOLLOWER_REPLICAS,
                                   cp->partition, r->cfg->broker_id);
            m++;
        }
    }
    if (m > 1)
        qsort(f, (size_t)m, sizeof(*f), follow_cmp);
    *n = m;
    return f;
}

/* Take the newest view handed over: the partitions to follow follow from it. */
static void view_take(sf_replication_t *r) {
    sf_view_t *v = r->incoming;
    repl_follow_t *f;
    int n, i;
    if (!v)
        return;
    r->incoming = NULL;
    f = follows_of(r, v, &n);
    for (i = 0; i < n; i++) {
        /* A partition still followed at the same epoch keeps its backoff. */
        repl_follow_t *old = repl_follow_find(r, f[i].part, f[i].epoch);
        if (old && old->leader == f[i].leader)
            f[i].backoff_until_ms = old->backoff_until_ms;
    }
    if (n != r->nfollows)
        sf_log(SF_LOG_INFO, "REPL", "following %d partition(s) on other brokers", n);
    follows_free(r->follows, r->nfollows);
    r->follows = f;
    r->nfollows = n;
    sf_throttle_set_rate(&r->throttle, sf_throttle_rate(&v->topiccfg, SF_THROTTLE_FOLLOWER_RATE));
    sf_view_unref(r->view);
    r->view = v;
}

/* ---- the leaders' ISR changes ---- */

typedef struct isr_item {
    sf_partition_t *part; /* referenced */
    int shrink;           /* the change asked for removes replicas */
} isr_item_t;

typedef struct isr_ctx {
    sf_replication_t *r;
    int n;
    sf_arena_t arena;
    sf_proto_AlterPartitionRequest_t req;
    isr_item_t items[];
} isr_ctx_t;

static void isr_ctx_free(isr_ctx_t *ctx) {
    int i;
    for (i = 0; i < ctx->n; i++)
        sf_partition_unref(ctx->items[i].part);
    sf_arena_reset(&ctx->arena);
    free(ctx);
}

static int isr_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    isr_ctx_t *ctx = arg;
    return sf_proto_AlterPartitionRequest_encode(wb, version, &ctx->req);
}

static void isr_done(sf_client_t *cl, int err, int32_t broker_id, int16_t version,
                     sf_rbuf_t *body, void *arg) {
    isr_ctx_t *ctx = arg;
    sf_proto_AlterPartitionResponse_t resp;
    int i, t, p, ok, decoded;
    (void)cl;
    (void)broker_id;
    ctx->r->isr_busy = 0;
    sf_arena_reset(&ctx->arena);
    decoded = !err && sf_proto_AlterPartitionResponse_decode(body, version, &ctx->arena, &resp) ==
                          SF_OK;
    ok = decoded && !resp.ErrorCode;
    for (i = 0; i < ctx->n; i++) {
        sf_partition_t *part = ctx->items[i].part;
        /* A partition the answer does not name counts as failed. */
        int16_t code = decoded && !ok ? resp.ErrorCode : SF_KERR_UNKNOWN_SERVER_ERROR;
        for (t = 0; ok && t < resp.TopicsCount; t++)
            for (p = 0; p < resp.Topics[t].PartitionsCount; p++)
                if (sf_slice_eq(resp.Topics[t].TopicName, part->topic) &&
                    resp.Topics[t].Partitions[p].PartitionIndex == part->index)
                    code = resp.Topics[t].Partitions[p].ErrorCode;
        if (code != SF_KERR_NONE) {
            /* Asked again ISR_RETRY_MS from now, from the state then. */
            sf_leader_isr_settled(part);
            part->isr_asked_ms = sf_clock_wall_ms() - ISR_ASK_AGAIN_MS + ISR_RETRY_MS;
            sf_log(SF_LOG_INFO, "REPL", "%s-%d: the controller did not change the ISR (%s)",
                   part->topic, part->index,
                   err ? sf_error_str(err) : sf_error_name(sf_client_kerr(code)));
        } else {
            sf_metrics_isr_change(ctx->items[i].shrink);
        }
    }
    isr_ctx_free(ctx);
}

/* Add @part's wanted ISR @isr (@n members) to the request. */
static int isr_add(isr_ctx_t *ctx, const sf_cluster_topic_t *topic,
                   const sf_cluster_partition_t *cp, sf_partition_t *part, const int32_t *isr,
                   int n) {
    sf_proto_AlterPartitionRequest_t *req = &ctx->req;
    sf_proto_AlterPartitionRequest_TopicData_t *td = NULL;
    sf_proto_AlterPartitionRequest_PartitionData_t *pd;
    if (req->TopicsCount > 0 && sf_slice_eq(req->Topics[req->TopicsCount - 1].TopicName,
                                            topic->name))
        td = &req->Topics[req->TopicsCount - 1];
    if (!td) {
        td = &req->Topics[req->TopicsCount++];
        sf_proto_AlterPartitionRequest_TopicData_init(td);
        /* The partition's own name (referenced by the request), not the snapshot's: the
         * request is encoded later, maybe after the snapshot is gone. */
        td->TopicName = sf_slice_cstr(part->topic);
        memcpy(td->TopicId.b, topic->topic_id, 16);
        if (!(td->Partitions = sf_arena_calloc(&ctx->arena, (size_t)topic->npartitions,
                                               sizeof(*td->Partitions))))
            return SF_ERR_NOMEM;
    }
    pd = &td->Partitions[td->PartitionsCount++];
    sf_proto_AlterPartitionRequest_PartitionData_init(pd);
    pd->PartitionIndex = cp->partition;
    pd->LeaderEpoch = cp->leader_epoch;
    pd->PartitionEpoch = cp->state_version;
    if (!(pd->NewIsr = sf_arena_calloc(&ctx->arena, (size_t)n, sizeof(int32_t))))
        return SF_ERR_NOMEM;
    memcpy(pd->NewIsr, isr, (size_t)n * sizeof(int32_t));
    pd->NewIsrCount = n;
    ctx->items[ctx->n].shrink = n < cp->nisr;
    ctx->items[ctx->n++].part = sf_partition_ref(part);
    sf_log(SF_LOG_INFO, "REPL", "%s-%d: asking the controller to %s the ISR (%d of %d replicas)",
           topic->name, cp->partition, n < cp->nisr ? "shrink" : "expand", n, cp->nreplicas);
    return SF_OK;
}

/* For one led partition: move the high watermark, and add the ISR change it wants. */
static void isr_check_partition(sf_replication_t *r, isr_ctx_t *ctx,
                                const sf_cluster_topic_t *topic, const sf_cluster_partition_t *cp,
                                sf_partition_t *part, int64_t now, int32_t *isr) {
    int n;
    if (sf_leader_update_hw(part, cp, r->cfg->broker_id))
        sf_broker_notify_partition(r->b, part->log);
    if (part->isr_asked_version == cp->state_version && now - part->isr_asked_ms < ISR_ASK_AGAIN_MS)
        return;
    n = sf_leader_wanted_isr(part, cp, r->cfg->broker_id, now, r->cfg->replica_lag_time_max_ms,
                             isr);
    if (n > 0 && ctx && ctx->n < SF_ISR_MAX_PER_REQUEST &&
        isr_add(ctx, topic, cp, part, isr, n) == SF_OK) {
        part->isr_asked_version = cp->state_version;
        part->isr_asked_ms = now;
    }
}

/* Every led, replicated partition of the view: high watermarks, then one AlterPartition with
 * the ISR changes wanted (while none is in flight). */
static void isr_check(sf_replication_t *r, int64_t now) {
    const sf_cluster_snapshot_t *snap = r->view->snap;
    const sf_cluster_broker_t *self = sf_cluster_snapshot_broker(snap, r->cfg->broker_id);
    isr_ctx_t *ctx = NULL;
    int32_t isr[SF_CLUSTER_MAX_REPLICAS];
    int t, i;
    if (!r->isr_busy && snap->controller_id >= 0 && self &&
        (ctx = calloc(1, sizeof(*ctx) + SF_ISR_MAX_PER_REQUEST * sizeof(ctx->items[0])))) {
        sf_arena_init(&ctx->arena, 0);
        ctx->r = r;
        sf_proto_AlterPartitionRequest_init(&ctx->req);
        ctx->req.BrokerId = r->cfg->broker_id;
        ctx->req.BrokerEpoch = self->epoch;
        if (!(ctx->req.Topics = sf_arena_calloc(&ctx->arena, (size_t)snap->ntopics + 1,
                                                sizeof(*ctx->req.Topics)))) {
            isr_ctx_free(ctx);
            ctx = NULL;
        }
    }
    for (t = 0; t < snap->ntopics; t++) {
        const sf_cluster_topic_t *topic = snap->topics[t];
        for (i = 0; r->view->parts[t] && i < topic->npartitions; i++) {
            const sf_cluster_partition_t *cp = &topic->partitions[i];
            if (r->view->parts[t][i] && cp->leader == r->cfg->broker_id &&
                sf_leader_replicated(cp))
                isr_check_partition(r, ctx, topic, cp, r->view->parts[t][i], now, isr);
        }
    }
    if (!ctx)
        return;
    if (ctx->n > 0 &&
        sf_client_request(r->cl, snap->controller_id, SF_PROTO_API_AlterPartition,
                          ALTER_PARTITION_VERSION, isr_encode, isr_done, ctx,
                          r->cfg->replica_socket_timeout_ms, 0) == SF_OK) {
        r->isr_busy = 1;
        return;
    }
    for (i = 0; i < ctx->n; i++)
        ctx->items[i].part->isr_asked_version = -1;
    isr_ctx_free(ctx);
}

/* ---- the client thread ---- */

static void on_shutdown_wake(sf_replication_t *r);

static void on_wake(sf_client_t *cl, void *self) {
    sf_replication_t *r = self;
    int64_t now = sf_clock_wall_ms();
    (void)cl;
    view_take(r);
    on_shutdown_wake(r);
    if (!r->view)
        return;
    if (now >= r->next_isr_check_ms) {
        int64_t every = r->cfg->replica_lag_time_max_ms / 2;
        r->next_isr_check_ms = now + (every < ISR_CHECK_MAX_MS ? every : ISR_CHECK_MAX_MS);
        isr_check(r, now);
    }
    repl_fetch_all(r);
}

static void tick_cb(evutil_socket_t fd, short what, void *arg) {
    sf_replication_t *r = arg;
    (void)fd;
    (void)what;
    sf_client_wake(r->cl);
}

int sf_replication_new(const sf_brokercfg_t *cfg, sf_broker_t *b, sf_replication_t **out,
                       char *errstr, size_t errstr_size) {
    sf_replication_t *r = calloc(1, sizeof(*r));
    sf_client_role_t role;
    sf_conf_t *conf;
    if (!r) {
        snprintf(errstr, errstr_size, "out of memory");
        return SF_ERR_NOMEM;
    }
    r->cfg = cfg;
    r->b = b;
    sf_throttle_init(&r->throttle);
    if (!(conf = sf_broker_client_conf(b, "replication", "REPL", errstr, errstr_size))) {
        sf_throttle_destroy(&r->throttle);
        free(r);
        return SF_ERR_INVALID;
    }
    memset(&role, 0, sizeof(role));
    role.self = r;
    role.on_wake = on_wake;
    r->cl = sf_client_new(conf, &role, 1, errstr, errstr_size);
    sf_conf_destroy(conf);
    if (!r->cl) {
        sf_throttle_destroy(&r->throttle);
        free(r);
        return SF_ERR_INVALID;
    }
    *out = r;
    return SF_OK;
}

void sf_replication_update(sf_replication_t *r, sf_view_t *view) {
    sf_view_t *old;
    if (!r)
        return;
    sf_client_lock(r->cl);
    old = r->incoming;
    r->incoming = sf_view_ref(view);
    if (!r->tick && (r->tick = event_new(sf_client_base(r->cl), -1, EV_PERSIST, tick_cb, r))) {
        struct timeval tv = {0, ISR_CHECK_MAX_MS * 1000};
        event_add(r->tick, &tv);
    }
    sf_client_unlock(r->cl);
    sf_view_unref(old);
    sf_client_wake(r->cl);
}

void sf_replication_free(sf_replication_t *r) {
    if (!r)
        return;
    sf_client_lock(r->cl);
    if (r->tick)
        event_free(r->tick);
    r->tick = NULL;
    sf_client_unlock(r->cl);
    sf_client_destroy(r->cl);
    follows_free(r->follows, r->nfollows);
    free(r->leaders);
    sf_view_unref(r->incoming);
    sf_view_unref(r->view);
    sf_throttle_destroy(&r->throttle);
    free(r);
}

/* ---- controlled shutdown ---- */

typedef struct shutdown_ctx {
    sf_replication_t *r;
    sf_mail_t *done;
    int attempts;
    struct event *retry;
    sf_arena_t arena;
} shutdown_ctx_t;

static void shutdown_send(shutdown_ctx_t *sc);

static void shutdown_finish(shutdown_ctx_t *sc) {
    sf_broker_to_metadata(sc->r->b, sc->done);
    if (sc->retry)
        event_free(sc->retry);
    sf_arena_reset(&sc->arena);
    sc->r->shutdown = NULL;
    free(sc);
}

static int shutdown_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    shutdown_ctx_t *sc = arg;
    const sf_cluster_broker_t *self =
        sf_cluster_snapshot_broker(sc->r->view->snap, sc->r->cfg->broker_id);
    sf_proto_ControlledShutdownRequest_t req;
    sf_proto_ControlledShutdownRequest_init(&req);
    req.BrokerId = sc->r->cfg->broker_id;
    req.BrokerEpoch = self ? self->epoch : -1;
    return sf_proto_ControlledShutdownRequest_encode(wb, version, &req);
}

static void shutdown_retry_cb(evutil_socket_t fd, short what, void *arg) {
    shutdown_ctx_t *sc = arg;
    (void)fd;
    (void)what;
    sf_client_lock(sc->r->cl);
    shutdown_send(sc);
    sf_client_unlock(sc->r->cl);
}

static void shutdown_done(sf_client_t *cl, int err, int32_t broker_id, int16_t version,
                          sf_rbuf_t *body, void *arg) {
    shutdown_ctx_t *sc = arg;
    sf_proto_ControlledShutdownResponse_t resp;
    struct timeval tv;
    int32_t left = -1;
    (void)cl;
    sf_arena_reset(&sc->arena);
    if (!err && sf_proto_ControlledShutdownResponse_decode(body, version, &sc->arena, &resp) ==
                    SF_OK && !resp.ErrorCode)
        left = resp.RemainingPartitionsCount;
    if (left == 0 || err == SF_ERROR_DESTROYED || err == SF_ERROR_UNSUPPORTED ||
        ++sc->attempts > sc->r->cfg->controlled_shutdown_max_retries || !sc->retry) {
        if (left == 0)
            sf_log(SF_LOG_NOTICE, "REPL", "controlled shutdown: leadership moved off this broker");
        else
            sf_log(SF_LOG_WARNING, "REPL", "controlled shutdown incomplete (%s); shutting down",
                   err ? sf_error_str(err) : "partitions still led here");
        shutdown_finish(sc);
        return;
    }
    sf_log(SF_LOG_INFO, "REPL", "controlled shutdown: broker %d answered %s; retrying",
           broker_id, err ? sf_error_str(err) : "with partitions still led here");
    tv.tv_sec = sc->r->cfg->controlled_shutdown_retry_backoff_ms / 1000;
    tv.tv_usec = (sc->r->cfg->controlled_shutdown_retry_backoff_ms % 1000) * 1000;
    event_add(sc->retry, &tv);
}

static void shutdown_send(shutdown_ctx_t *sc) {
    const sf_cluster_snapshot_t *snap = sc->r->view ? sc->r->view->snap : NULL;
    if (!snap || snap->controller_id < 0 ||
        sf_client_request(sc->r->cl, snap->controller_id, SF_PROTO_API_ControlledShutdown,
                          CONTROLLED_SHUTDOWN_VERSION, shutdown_encode, shutdown_done, sc,
                          sc->r->cfg->replica_socket_timeout_ms, 0) != SF_OK) {
        sf_log(SF_LOG_WARNING, "REPL", "controlled shutdown: no controller to ask");
        shutdown_finish(sc);
    }
}

static void on_shutdown_wake(sf_replication_t *r) {
    shutdown_ctx_t *sc = r->shutdown;
    if (!sc || sc->attempts || sc->retry)
        return;
    sc->retry = evtimer_new(sf_client_base(r->cl), shutdown_retry_cb, sc);
    shutdown_send(sc);
}

int sf_replication_controlled_shutdown(sf_replication_t *r, sf_mail_t *done) {
    shutdown_ctx_t *sc;
    if (!r || !r->cfg->controlled_shutdown_enable || !(sc = calloc(1, sizeof(*sc))))
        return 0;
    sc->r = r;
    sc->done = done;
    sf_arena_init(&sc->arena, 0);
    sf_client_lock(r->cl);
    r->shutdown = sc;
    sf_client_unlock(r->cl);
    sf_client_wake(r->cl);
    return 1;
}

sf_client_t *sf_replication_client(sf_replication_t *r) {
    return r->cl;
}
