/* The follower fetches (see replication.h): one Fetch at a time per leader, carrying every
 * partition followed there; the answer is appended as it is, or truncates a diverging log. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "brokercfg.h"
#include "clock.h"
#include "err.h"
#include "kmsg.h"
#include "log.h"
#include "logging.h"
#include "replication_int.h"

/* Fetch v12: topic names, LastFetchedEpoch, DivergingEpoch. */
#define FETCH_VERSION 12

/* One partition of a Fetch in flight. */
typedef struct fetch_item {
    sf_partition_t *part; /* referenced */
    int32_t epoch;
    int64_t offset;
} fetch_item_t;

typedef struct fetch_ctx {
    sf_replication_t *r;
    int32_t leader;
    int n;
    sf_arena_t arena; /* the request, then the decoded response */
    sf_proto_FetchRequest_t req;
    fetch_item_t items[];
} fetch_ctx_t;

static void ctx_free(fetch_ctx_t *ctx) {
    int i;
    for (i = 0; i < ctx->n; i++)
        sf_partition_unref(ctx->items[i].part);
    sf_arena_reset(&ctx->arena);
    free(ctx);
}

static int fetch_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    fetch_ctx_t *ctx = arg;
    return sf_proto_FetchRequest_encode(wb, version, &ctx->req);
}

/* The length of the whole batches at the start of @p (a leader answers whole batches; a
 * partial one at the end is left for the next fetch). */
static size_t whole_batches(const uint8_t *p, size_t len) {
    size_t pos = 0;
    while (len - pos >= 12) {
        uint32_t n = (uint32_t)p[pos + 8] << 24 | (uint32_t)p[pos + 9] << 16 |
                     (uint32_t)p[pos + 10] << 8 | p[pos + 11];
        if (n > len - pos - 12)
            break;
        pos += 12 + n;
    }
    return pos;
}

/* The leader's log and ours part at (@epoch, @end): cut ours where they agree. Returns 0, or
 * -1 when that changed nothing (the next fetch would diverge the same way). */
static int truncate_diverging(fetch_item_t *it, int32_t epoch, int64_t end) {
    sf_log_t *log = it->part->log;
    int64_t leo = sf_log_end_offset(log), to, mine;
    int32_t found, latest = sf_log_latest_epoch(log);
    if (end < 0) {
        /* The leader has nothing at or below our epochs: fall back to what was committed. */
        to = sf_log_high_watermark(log);
    } else {
        sf_log_end_offset_for_epoch(log, epoch, &found, &mine);
        to = found < 0 || mine < 0 || end < mine ? end : mine;
    }
    if (to > leo)
        to = leo;
    if (to < leo)
        sf_log(SF_LOG_NOTICE, "REPL", "%s-%d: truncating to offset %lld (log end %lld), where "
               "the log agrees with the leader's (epoch %d)", it->part->topic, it->part->index,
               (long long)to, (long long)leo, epoch);
    if (sf_log_truncate(log, to) != SF_OK) {
        sf_log(SF_LOG_ERR, "REPL", "%s-%d: truncation failed", it->part->topic, it->part->index);
        return -1;
    }
    return sf_log_end_offset(log) == leo && sf_log_latest_epoch(log) == latest ? -1 : 0;
}

/* Append what the leader sent for @it, or act on its error. */
static void fetched_partition(sf_replication_t *r, fetch_item_t *it,
                              const sf_proto_FetchResponse_PartitionData_t *pd, int64_t now) {
    repl_follow_t *f = repl_follow_find(r, it->part, it->epoch);
    sf_log_t *log = it->part->log;
    size_t len;
    int rc;
    if (!f || atomic_load(&it->part->lead_epoch) >= 0 || sf_log_end_offset(log) != it->offset)
        return; /* no longer followed at this epoch, or the log moved meanwhile */
    if (pd->ErrorCode == SF_KERR_OFFSET_OUT_OF_RANGE && pd->LogStartOffset > it->offset) {
        /* Behind what the leader still has (its retention moved on): start over at its log
         * start, as Kafka's follower does. */
        sf_log(SF_LOG_NOTICE, "REPL", "%s-%d: offset %lld is below the leader's log start "
               "%lld: starting the log over there", it->part->topic, it->part->index,
               (long long)it->offset, (long long)pd->LogStartOffset);
        if (sf_log_truncate_fully(log, pd->LogStartOffset) != SF_OK)
            f->backoff_until_ms = now + r->cfg->replica_fetch_backoff_ms;
        return;
    }
    if (pd->ErrorCode != SF_KERR_NONE) {
        if (pd->ErrorCode == SF_KERR_OFFSET_OUT_OF_RANGE)
            sf_log(SF_LOG_WARNING, "REPL", "%s-%d: offset %lld is outside the leader's log "
                   "(it starts at %lld)", it->part->topic, it->part->index,
                   (long long)it->offset, (long long)pd->LogStartOffset);
        f->backoff_until_ms = now + r->cfg->replica_fetch_backoff_ms;
        return;
    }
    if (pd->DivergingEpoch.Epoch >= 0 || pd->DivergingEpoch.EndOffset >= 0) {
        if (truncate_diverging(it, pd->DivergingEpoch.Epoch, pd->DivergingEpoch.EndOffset) < 0) {
            sf_log(SF_LOG_WARNING, "REPL", "%s-%d: the leader's log diverges at epoch %d, end "
                   "%lld, and truncating does not resolve it", it->part->topic, it->part->index,
                   pd->DivergingEpoch.Epoch, (long long)pd->DivergingEpoch.EndOffset);
            f->backoff_until_ms = now + r->cfg->replica_fetch_backoff_ms;
        }
        return;
    }
    len = pd->Records.len > 0 ? whole_batches(pd->Records.p, (size_t)pd->Records.len) : 0;
    if (f->throttled && len > 0)
        sf_throttle_record(&r->throttle, (int64_t)len, sf_clock_mono_ms());
    if (len > 0 && (rc = sf_log_append_replica(log, pd->Records.p, len, now, NULL)) != SF_OK) {
        sf_log(SF_LOG_ERR, "REPL", "%s-%d: cannot append the leader's batches at %lld: %s",
               it->part->topic, it->part->index, (long long)it->offset, sf_err_str(rc));
        f->backoff_until_ms = now + r->cfg->replica_fetch_backoff_ms;
        return;
    }
    if (pd->HighWatermark >= 0) {
        int64_t leo = sf_log_end_offset(log);
        sf_log_set_high_watermark(log, pd->HighWatermark < leo ? pd->HighWatermark : leo);
        atomic_store(&it->part->hw_known, 1);
    }
}

static void fetch_done(sf_client_t *cl, int err, int32_t broker_id, int16_t version,
                       sf_rbuf_t *body, void *arg) {
    fetch_ctx_t *ctx = arg;
    sf_replication_t *r = ctx->r;
    repl_leader_t *l = repl_leader_get(r, ctx->leader);
    sf_proto_FetchResponse_t resp;
    int64_t now = sf_clock_wall_ms();
    int t, p, i;
    (void)broker_id;
    if (l)
        l->busy = 0;
    if (err == SF_ERROR_DESTROYED) {
        ctx_free(ctx);
        return;
    }
    sf_arena_reset(&ctx->arena);
    if (err || sf_proto_FetchResponse_decode(body, version, &ctx->arena, &resp) != SF_OK ||
        resp.ErrorCode) {
        if (l)
            l->backoff_until_ms = now + r->cfg->replica_fetch_backoff_ms;
        sf_log(SF_LOG_INFO, "REPL", "fetch from broker %d failed (%s); retrying",
               ctx->leader, err ? sf_error_str(err) : "a bad answer");
        sf_client_metadata_stale(cl);
        ctx_free(ctx);
        repl_fetch_all(r);
        return;
    }
    for (t = 0; t < resp.ResponsesCount; t++) {
        const sf_proto_FetchResponse_FetchableTopicResponse_t *rt = &resp.Responses[t];
        for (p = 0; p < rt->PartitionsCount; p++)
            for (i = 0; i < ctx->n; i++)
                if (ctx->items[i].part->index == rt->Partitions[p].PartitionIndex &&
                    sf_slice_eq(rt->Topic, ctx->items[i].part->topic))
                    fetched_partition(r, &ctx->items[i], &rt->Partitions[p], now);
    }
    ctx_free(ctx);
    repl_fetch_all(r);
}

/* The request for the followed partitions [@from, @to) of one leader (r->follows order),
 * leaving out those in backoff and, while the follower rate is used up, the throttled ones
 * (Kafka's shouldFollowerThrottle). */
static fetch_ctx_t *fetch_build(sf_replication_t *r, int from, int to, int64_t now) {
    fetch_ctx_t *ctx = calloc(1, sizeof(*ctx) + (size_t)(to - from) * sizeof(ctx->items[0]));
    int hold = sf_throttle_exceeded(&r->throttle, sf_clock_mono_ms());
    sf_proto_FetchRequest_t *req;
    sf_proto_FetchRequest_FetchTopic_t *ft = NULL;
    int i;
    if (!ctx)
        return NULL;
    sf_arena_init(&ctx->arena, 0);
    ctx->r = r;
    ctx->leader = r->follows[from].leader;
    req = &ctx->req;
    sf_proto_FetchRequest_init(req);
    req->ReplicaId = r->cfg->broker_id;
    req->MaxWaitMs = r->cfg->replica_fetch_wait_max_ms;
    req->MinBytes = r->cfg->replica_fetch_min_bytes;
    req->MaxBytes = r->cfg->replica_fetch_response_max_bytes;
    if (!(req->Topics = sf_arena_calloc(&ctx->arena, (size_t)(to - from), sizeof(*req->Topics))))
        goto nomem;
    for (i = from; i < to; i++) {
        repl_follow_t *f = &r->follows[i];
        sf_proto_FetchRequest_FetchPartition_t *fp;
        fetch_item_t *it;
        if (f->backoff_until_ms > now || (hold && f->throttled))
            continue;
        if (!ft || !sf_slice_eq(ft->Topic, f->part->topic)) {
            ft = &req->Topics[req->TopicsCount++];
            sf_proto_FetchRequest_FetchTopic_init(ft);
            /* The partition's own name (referenced below): the request is encoded when its
             * connection is up, maybe after this view's snapshot is gone. */
            ft->Topic = sf_slice_cstr(f->part->topic);
            if (!(ft->Partitions = sf_arena_calloc(&ctx->arena, (size_t)(to - i),
                                                   sizeof(*ft->Partitions))))
                goto nomem;
        }
        it = &ctx->items[ctx->n++];
        it->part = sf_partition_ref(f->part);
        it->epoch = f->epoch;
        it->offset = sf_log_end_offset(f->part->log);
        fp = &ft->Partitions[ft->PartitionsCount++];
        sf_proto_FetchRequest_FetchPartition_init(fp);
        fp->Partition = f->part->index;
        fp->CurrentLeaderEpoch = f->epoch;
        fp->FetchOffset = it->offset;
        fp->LastFetchedEpoch = sf_log_latest_epoch(f->part->log);
        fp->LogStartOffset = sf_log_start_offset(f->part->log);
        fp->PartitionMaxBytes = r->cfg->replica_fetch_max_bytes;
    }
    return ctx;
nomem:
    ctx_free(ctx);
    return NULL;
}

void repl_fetch_all(sf_replication_t *r) {
    int64_t now = sf_clock_wall_ms();
    int i = 0, j;
    while (i < r->nfollows) {
        repl_leader_t *l = repl_leader_get(r, r->follows[i].leader);
        fetch_ctx_t *ctx;
        for (j = i; j < r->nfollows && r->follows[j].leader == r->follows[i].leader; j++)
            ;
        if (l && !l->busy && l->backoff_until_ms <= now && (ctx = fetch_build(r, i, j, now))) {
            if (ctx->n == 0) {
                ctx_free(ctx);
            } else if (sf_client_request(r->cl, ctx->leader, SF_PROTO_API_Fetch, FETCH_VERSION,
                                         fetch_encode, fetch_done, ctx,
                                         r->cfg->replica_socket_timeout_ms, 0) == SF_OK) {
                l->busy = 1;
            } else {
                ctx_free(ctx);
            }
        }
        i = j;
    }
}
