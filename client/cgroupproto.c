/* The group protocol's requests of the membership (cgroup_int.h): FindCoordinator, JoinGroup,
 * SyncGroup with the leader's assignment, Heartbeat and LeaveGroup; and the codec helpers
 * the admin client shares (cgroup.h). I/O thread, lock held, unless a function says
 * otherwise. */
#include "cgroup_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "clock.h"
#include "err.h"

#define PROTOCOL_TYPE "consumer"
#define JOIN_MAX 9
#define SYNC_MAX 5
#define HEARTBEAT_MAX 4
#define LEAVE_MAX 5
/* A JoinGroup waits at the coordinator up to the rebalance timeout; this much more before the
 * client gives up on it (Kafka's JOIN_GROUP_TIMEOUT_LAPSE). */
#define JOIN_LAPSE_MS 5000
/* How long a leader waits for the metadata of topics other members subscribe to. */
#define LEADER_MD_WAIT_MS 3000
/* The backoff after a group error the application has to act on. */
#define FATAL_BACKOFF_MS 5000

static int64_t now_ms(void) {
    return sf_clock_mono_ms();
}

/* ------------------------------------------------------------------------------------------
 * Codec helpers
 * ------------------------------------------------------------------------------------------ */

int sf_cgroup_coord_retriable(int err) {
    return err == SF_KERR_NOT_COORDINATOR || err == SF_KERR_COORDINATOR_NOT_AVAILABLE ||
           err == SF_KERR_COORDINATOR_LOAD_IN_PROGRESS || err == SF_KERR_REQUEST_TIMED_OUT ||
           err == SF_ERROR_TRANSPORT || err == SF_ERROR_TIMED_OUT;
}

static int decoded(int rc) {
    return rc == SF_OK || rc == SF_ERR_NOMEM ? rc : SF_ERROR_MALFORMED;
}

static sf_slice_t slice_or_null(const char *s) {
    sf_slice_t null = {NULL, -1};
    return s ? sf_slice_cstr(s) : null;
}

int sf_cgroup_findcoord_encode(sf_wbuf_t *wb, int16_t version, const char *id, int8_t key_type) {
    sf_proto_FindCoordinatorRequest_t req;
    sf_slice_t key = sf_slice_cstr(id);
    if (key_type && version < 1)
        return SF_ERR_UNSUPPORTED;
    sf_proto_FindCoordinatorRequest_init(&req);
    req.Key = key;       /* v0-3 */
    req.KeyType = key_type;
    req.CoordinatorKeysCount = 1; /* v4+ */
    req.CoordinatorKeys = &key;
    return sf_proto_FindCoordinatorRequest_encode(wb, version, &req);
}

int sf_cgroup_findcoord_decode(sf_rbuf_t *body, int16_t version, int32_t *node, int16_t *kerr) {
    sf_proto_FindCoordinatorResponse_t resp;
    sf_arena_t arena;
    int rc;
    sf_arena_init(&arena, 0);
    rc = decoded(sf_proto_FindCoordinatorResponse_decode(body, version, &arena, &resp));
    if (rc == SF_OK && version >= 4) {
        if (resp.CoordinatorsCount < 1) {
            rc = SF_ERROR_MALFORMED;
        } else {
            *kerr = resp.Coordinators[0].ErrorCode;
            *node = resp.Coordinators[0].NodeId;
        }
    } else if (rc == SF_OK) {
        *kerr = resp.ErrorCode;
        *node = resp.NodeId;
    }
    sf_arena_reset(&arena);
    if (rc == SF_OK && *kerr == 0 && *node < 0)
        rc = SF_ERROR_MALFORMED;
    return rc;
}

/* Sorted copies of @tps grouped by topic, for the encoders: @order holds the sorted copy;
 * group g covers order[start[g]] .. order[start[g + 1] - 1]. */
typedef struct tp_groups {
    sf_topic_partition_t *order;
    size_t *start;
    size_t n;
} tp_groups_t;

static int tp_groups(const sf_topic_partition_t *tps, size_t n, tp_groups_t *g) {
    size_t i;
    memset(g, 0, sizeof(*g));
    if (n > INT32_MAX)
        return SF_ERR_NOMEM;
    g->order = malloc((n ? n : 1) * sizeof(*g->order));
    g->start = malloc((n + 1) * sizeof(*g->start));
    if (!g->order || !g->start) {
        free(g->order);
        free(g->start);
        return SF_ERR_NOMEM;
    }
    if (n)
        memcpy(g->order, tps, n * sizeof(*tps));
    qsort(g->order, n, sizeof(*g->order), sf_cgroup_tp_cmp);
    for (i = 0; i < n; i++)
        if (i == 0 || strcmp(g->order[i].topic, g->order[i - 1].topic) != 0)
            g->start[g->n++] = i;
    g->start[g->n] = n;
    return SF_OK;
}

static void tp_groups_free(tp_groups_t *g) {
    free(g->order);
    free(g->start);
}

int sf_cgroup_commit_encode(sf_wbuf_t *wb, int16_t version, const char *group,
                            int32_t generation, const char *member_id, const char *instance_id,
                            const sf_topic_partition_t *tps, size_t n) {
    sf_proto_OffsetCommitRequest_t req;
    sf_proto_OffsetCommitRequest_OffsetCommitRequestTopic_t *topics;
    sf_proto_OffsetCommitRequest_OffsetCommitRequestPartition_t *parts;
    tp_groups_t g;
    size_t i, k;
    int rc;
    if ((rc = tp_groups(tps, n, &g)) != SF_OK)
        return rc;
    topics = calloc(g.n + 1, sizeof(*topics));
    parts = calloc(n + 1, sizeof(*parts));
    if (!topics || !parts) {
        rc = SF_ERR_NOMEM;
        goto out;
    }
    for (i = 0; i < g.n; i++) {
        topics[i].Name = sf_slice_cstr(g.order[g.start[i]].topic);
        topics[i].PartitionsCount = (int32_t)(g.start[i + 1] - g.start[i]);
        topics[i].Partitions = parts + g.start[i];
        for (k = g.start[i]; k < g.start[i + 1]; k++) {
            sf_proto_OffsetCommitRequest_OffsetCommitRequestPartition_init(&parts[k]);
            parts[k].PartitionIndex = g.order[k].partition;
            parts[k].CommittedOffset = g.order[k].offset;
            parts[k].CommittedMetadata = sf_slice_cstr(""); /* what Java's consumer sends */
        }
    }
    sf_proto_OffsetCommitRequest_init(&req);
    req.GroupId = sf_slice_cstr(group);
    req.GenerationIdOrMemberEpoch = generation;
    req.MemberId = sf_slice_cstr(member_id ? member_id : "");
    req.GroupInstanceId = slice_or_null(instance_id);
    req.TopicsCount = (int32_t)g.n;
    req.Topics = topics;
    rc = sf_proto_OffsetCommitRequest_encode(wb, version, &req);
out:
    free(topics);
    free(parts);
    tp_groups_free(&g);
    return rc;
}

int sf_cgroup_commit_decode(sf_rbuf_t *body, int16_t version, sf_topic_partition_t *tps,
                            size_t n) {
    sf_proto_OffsetCommitResponse_t resp;
    sf_arena_t arena;
    size_t i;
    int32_t t, p;
    int rc;
    sf_arena_init(&arena, 0);
    rc = decoded(sf_proto_OffsetCommitResponse_decode(body, version, &arena, &resp));
    for (i = 0; rc == SF_OK && i < n; i++) {
        tps[i].err = SF_ERROR_MALFORMED; /* unless the answer lists it */
        for (t = 0; t < resp.TopicsCount; t++) {
            const sf_proto_OffsetCommitResponse_OffsetCommitResponseTopic_t *rt = &resp.Topics[t];
            if (!sf_slice_eq(rt->Name, tps[i].topic))
                continue;
            for (p = 0; p < rt->PartitionsCount; p++)
                if (rt->Partitions[p].PartitionIndex == tps[i].partition)
                    tps[i].err = sf_client_kerr(rt->Partitions[p].ErrorCode);
        }
    }
    sf_arena_reset(&arena);
    return rc;
}

int sf_cgroup_fetch_encode(sf_wbuf_t *wb, int16_t version, const char *group,
                           const sf_topic_partition_t *tps, size_t n, int require_stable) {
    sf_proto_OffsetFetchRequest_t req;
    sf_proto_OffsetFetchRequest_OffsetFetchRequestTopic_t *topics;
    sf_proto_OffsetFetchRequest_OffsetFetchRequestTopics_t *topics8;
    sf_proto_OffsetFetchRequest_OffsetFetchRequestGroup_t grp;
    int32_t *parts;
    tp_groups_t g;
    size_t i, k;
    int rc;
    if (n == 0 && version < 2)
        return SF_ERR_UNSUPPORTED; /* "every partition" needs a null topic list */
    if ((rc = tp_groups(tps, n, &g)) != SF_OK)
        return rc;
    topics = calloc(g.n + 1, sizeof(*topics));
    topics8 = calloc(g.n + 1, sizeof(*topics8));
    parts = calloc(n + 1, sizeof(*parts));
    if (!topics || !topics8 || !parts) {
        rc = SF_ERR_NOMEM;
        goto out;
    }
    for (i = 0; i < g.n; i++) {
        topics[i].Name = topics8[i].Name = sf_slice_cstr(g.order[g.start[i]].topic);
        topics[i].PartitionIndexesCount = topics8[i].PartitionIndexesCount =
            (int32_t)(g.start[i + 1] - g.start[i]);
        topics[i].PartitionIndexes = topics8[i].PartitionIndexes = parts + g.start[i];
        for (k = g.start[i]; k < g.start[i + 1]; k++)
            parts[k] = g.order[k].partition;
    }
    sf_proto_OffsetFetchRequest_init(&req);
    sf_proto_OffsetFetchRequest_OffsetFetchRequestGroup_init(&grp);
    /* v0-7: one group; v8+: a list of groups. */
    req.GroupId = grp.GroupId = sf_slice_cstr(group);
    req.TopicsCount = grp.TopicsCount = n ? (int32_t)g.n : -1;
    req.Topics = n ? topics : NULL;
    grp.Topics = n ? topics8 : NULL;
    req.GroupsCount = 1;
    req.Groups = &grp;
    req.RequireStable = require_stable != 0;
    rc = sf_proto_OffsetFetchRequest_encode(wb, version, &req);
out:
    free(topics);
    free(topics8);
    free(parts);
    tp_groups_free(&g);
    return rc;
}

int sf_cgroup_fetch_decode(sf_rbuf_t *body, int16_t version, int16_t *kerr,
                           sf_cgroup_offset_fn fn, void *arg) {
    sf_proto_OffsetFetchResponse_t resp;
    sf_arena_t arena;
    int32_t t, p;
    int rc;
    sf_arena_init(&arena, 0);
    rc = decoded(sf_proto_OffsetFetchResponse_decode(body, version, &arena, &resp));
    *kerr = 0;
    if (rc == SF_OK && version >= 8) {
        const sf_proto_OffsetFetchResponse_OffsetFetchResponseGroup_t *rg;
        if (resp.GroupsCount < 1) {
            rc = SF_ERROR_MALFORMED;
            goto out;
        }
        rg = &resp.Groups[0];
        *kerr = rg->ErrorCode;
        for (t = 0; t < rg->TopicsCount; t++)
            for (p = 0; p < rg->Topics[t].PartitionsCount; p++) {
                const sf_proto_OffsetFetchResponse_OffsetFetchResponsePartitions_t *rp =
                    &rg->Topics[t].Partitions[p];
                fn(arg, rg->Topics[t].Name, rp->PartitionIndex, rp->CommittedOffset,
                   rp->ErrorCode);
            }
    } else if (rc == SF_OK) {
        *kerr = resp.ErrorCode;
        for (t = 0; t < resp.TopicsCount; t++)
            for (p = 0; p < resp.Topics[t].PartitionsCount; p++) {
                const sf_proto_OffsetFetchResponse_OffsetFetchResponsePartition_t *rp =
                    &resp.Topics[t].Partitions[p];
                fn(arg, resp.Topics[t].Name, rp->PartitionIndex, rp->CommittedOffset,
                   rp->ErrorCode);
            }
    }
out:
    sf_arena_reset(&arena);
    return rc;
}

/* ------------------------------------------------------------------------------------------
 * The coordinator
 * ------------------------------------------------------------------------------------------ */

void sf_cgroup_coord_dead(sf_cgroup_t *g, int32_t coord, const char *why) {
    if (g->coord < 0 || g->coord != coord)
        return;
    sf_cgroup_log(g, SF_LOG_LEVEL_INFO, "group %s: coordinator %d lost (%s): finding it again",
                  g->id, (int)g->coord, why);
    g->coord = -1;
    g->find_at = now_ms();
    /* Membership requests queued for it may wait for a reconnect until they time out (a
     * JoinGroup only after the rebalance timeout): the next ones go to the coordinator found
     * next, and the answers to these are dropped (mreq_current). */
    g->coord_epoch++;
    g->req_inflight = 0;
    g->hb_inflight = 0;
    if (g->state == G_SYNC)
        g->state = G_JOIN;
}

static int fc_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    sf_cgroup_t *g = arg;
    return sf_cgroup_findcoord_encode(wb, version, g->id, 0);
}

static void fc_done(sf_client_t *cl, int err, int32_t broker_id, int16_t version,
                    sf_rbuf_t *body, void *arg) {
    sf_cgroup_t *g = arg;
    int32_t node = -1;
    int16_t kerr = 0;
    (void)cl;
    (void)broker_id;
    g->finding = 0;
    if (err == SF_ERROR_DESTROYED || g->stopped)
        return;
    if (!err && (err = sf_cgroup_findcoord_decode(body, version, &node, &kerr)) == SF_OK)
        err = sf_client_kerr(kerr);
    if (err) {
        int64_t delay = sf_cgroup_backoff(g) << (g->find_fails < 4 ? g->find_fails : 4);
        g->find_fails++;
        g->find_at = now_ms() + delay;
        if (err == SF_KERR_COORDINATOR_NOT_AVAILABLE || sf_error_retriable(err))
            sf_cgroup_log(g, SF_LOG_LEVEL_DEBUG, "group %s: FindCoordinator: %s", g->id,
                          sf_error_name(err));
        else
            sf_cgroup_report(g, "finding the coordinator", err);
    } else {
        g->coord = node;
        g->find_fails = 0;
        sf_client_signal(g->cl); /* a LeaveGroup at close may wait for it */
        sf_cgroup_log(g, SF_LOG_LEVEL_INFO, "group %s: coordinator is broker %d", g->id,
                      (int)node);
    }
    sf_cgroup_run(g);
}

void sf_cgroup_find(sf_cgroup_t *g, int64_t now) {
    if (g->finding || now < g->find_at)
        return;
    if (sf_client_request(g->cl, SF_CLIENT_ANY_BROKER, SF_PROTO_API_FindCoordinator,
                          SF_CGROUP_FINDCOORD_MAX, fc_encode, fc_done, g, -1, 0) == SF_OK)
        g->finding = 1;
    else
        g->find_at = now + sf_cgroup_backoff(g);
}

/* The answer to a membership request (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) is still
 * for the current membership (not from before a reset, and not after the stop). */
typedef struct mreq {
    sf_cgroup_t *g;
    uint32_t epoch, coord_epoch;
    int32_t coord; /* the coordinator it was sent to */
    int32_t generation;
    char *member_id;
    sf_wbuf_t *bufs; /* JoinGroup: a subscription per protocol; SyncGroup: an assignment per
                      * member */
    char **ids;      /* SyncGroup: the member of each assignment */
    size_t nbufs;
    const char *reason; /* LeaveGroup (static) */
} mreq_t;

static mreq_t *mreq_new(sf_cgroup_t *g, size_t nbufs) {
    mreq_t *r = calloc(1, sizeof(*r));
    size_t i;
    if (!r)
        return NULL;
    r->g = g;
    r->epoch = g->epoch;
    r->coord = g->coord;
    r->coord_epoch = g->coord_epoch;
    r->generation = g->generation;
    if (!(r->member_id = strdup(g->member_id)) ||
        (nbufs && (!(r->bufs = calloc(nbufs, sizeof(*r->bufs))) ||
                   !(r->ids = calloc(nbufs, sizeof(*r->ids)))))) {
        free(r->bufs);
        free(r->member_id);
        free(r);
        return NULL;
    }
    r->nbufs = nbufs;
    for (i = 0; i < nbufs; i++)
        sf_wbuf_init(&r->bufs[i]);
    return r;
}

static void mreq_free(mreq_t *r) {
    size_t i;
    for (i = 0; i < r->nbufs; i++) {
        sf_wbuf_free(&r->bufs[i]);
        free(r->ids[i]);
    }
    free(r->bufs);
    free(r->ids);
    free(r->member_id);
    free(r);
}

/* Whether the answer to @r still matters (not for an older membership or an older
 * coordinator); frees @r when not. */
static int mreq_current(mreq_t *r, int err) {
    sf_cgroup_t *g = r->g;
    if (err == SF_ERROR_DESTROYED || g->stopped || r->epoch != g->epoch ||
        r->coord_epoch != g->coord_epoch) {
        mreq_free(r);
        return 0;
    }
    return 1;
}


static sf_slice_t why_slice(const sf_cgroup_t *g) {
    sf_slice_t null = {NULL, -1};
    return g->why[0] ? sf_slice_cstr(g->why) : null;
}

/* A membership error the member can do nothing about but retry later. */
static void fatal(sf_cgroup_t *g, const char *what, int err, int64_t now) {
    sf_cgroup_report(g, what, err);
    g->state = G_JOIN;
    g->join_at = now + FATAL_BACKOFF_MS;
}

/* The common answers to JoinGroup and SyncGroup (sent to @coord): 1 when @err was handled
 * here. */
static int member_error(sf_cgroup_t *g, int32_t coord, const char *what, int err, int64_t now) {
    switch (err) {
    case SF_KERR_UNKNOWN_MEMBER_ID:
    case SF_KERR_ILLEGAL_GENERATION:
        sf_cgroup_fenced(g, what, err);
        return 1;
    case SF_KERR_FENCED_INSTANCE_ID:
        sf_cgroup_instance_fenced(g, what);
        return 1;
    case SF_KERR_REBALANCE_IN_PROGRESS:
        g->state = G_JOIN;
        g->join_at = now;
        return 1;
    case SF_KERR_COORDINATOR_LOAD_IN_PROGRESS:
        g->state = G_JOIN;
        g->join_at = now + sf_cgroup_backoff(g);
        return 1;
    default:
        if (!sf_cgroup_coord_retriable(err))
            return 0;
        sf_cgroup_coord_dead(g, coord, sf_error_name(err));
        g->state = G_JOIN;
        g->join_at = now + sf_cgroup_backoff(g);
        return 1;
    }
}

/* ------------------------------------------------------------------------------------------
 * JoinGroup
 * ------------------------------------------------------------------------------------------ */

static int join_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    mreq_t *r = arg;
    sf_cgroup_t *g = r->g;
    sf_proto_JoinGroupRequest_t req;
    sf_proto_JoinGroupRequest_JoinGroupRequestProtocol_t protos[SF_CLIENTCONF_MAX_ASSIGNORS];
    size_t i;
    sf_proto_JoinGroupRequest_init(&req);
    for (i = 0; i < r->nbufs; i++) {
        protos[i].Name = sf_slice_cstr(
            sf_assignor_name((sf_assignor_kind_t)g->conf->assignors.kinds[i]));
        protos[i].Metadata.p = r->bufs[i].p;
        protos[i].Metadata.len = (int32_t)r->bufs[i].len;
    }
    req.GroupId = sf_slice_cstr(g->id);
    req.SessionTimeoutMs = g->conf->session_timeout_ms;
    req.RebalanceTimeoutMs = g->conf->max_poll_interval_ms; /* v1+ */
    req.MemberId = sf_slice_cstr(r->member_id);
    req.GroupInstanceId = slice_or_null(g->conf->group_instance_id); /* v5+ */
    req.ProtocolType = sf_slice_cstr(PROTOCOL_TYPE);
    req.ProtocolsCount = (int32_t)r->nbufs;
    req.Protocols = protos;
    req.Reason = why_slice(g); /* v8+ */
    return sf_proto_JoinGroupRequest_encode(wb, version, &req);
}

/* The subscription of each configured assignor into @r->bufs. */
static int join_metadata(sf_cgroup_t *g, mreq_t *r) {
    sf_assignor_tp_t *owned = calloc(g->nowned + 1, sizeof(*owned));
    uint8_t gen[4];
    size_t i;
    int rc = SF_OK;
    if (!owned)
        return SF_ERROR_NOMEM;
    for (i = 0; i < g->nowned; i++) {
        owned[i].topic = g->owned[i].topic;
        owned[i].partition = g->owned[i].partition;
    }
    sf_store_be32(gen, (uint32_t)g->generation);
    for (i = 0; i < r->nbufs && rc == SF_OK; i++) {
        sf_assignor_kind_t kind = (sf_assignor_kind_t)g->conf->assignors.kinds[i];
        /* cooperative-sticky also puts the generation in its user data, as Kafka's does. */
        sf_slice_t ud = {NULL, -1};
        if (kind == SF_ASSIGNOR_COOPERATIVE_STICKY) {
            ud.p = gen;
            ud.len = 4;
        }
        rc = sf_assignor_subscription_encode(&r->bufs[i], SF_ASSIGNOR_SUBSCRIPTION_VERSION,
                                             (const char *const *)g->topics, g->ntopics, owned,
                                             g->nowned, g->generation, ud);
    }
    free(owned);
    return rc;
}

/* The leader's copy of the members of the JoinGroup answer @resp into g->jm: all of them or,
 * out of memory, SF_ERROR_NOMEM (the caller clears what was copied). */
static int leader_copy_members(sf_cgroup_t *g, const sf_proto_JoinGroupResponse_t *resp) {
    int32_t i;
    if (resp->MembersCount <= 0)
        return SF_OK;
    if (!(g->jm = calloc((size_t)resp->MembersCount, sizeof(*g->jm))))
        return SF_ERROR_NOMEM;
    for (i = 0; i < resp->MembersCount; i++) {
        const sf_proto_JoinGroupResponse_JoinGroupResponseMember_t *m = &resp->Members[i];
        jmember_t *j = &g->jm[g->njm++];
        j->member_id = sf_slice_strdup(m->MemberId);
        j->instance_id =
            m->GroupInstanceId.len >= 0 ? sf_slice_strdup(m->GroupInstanceId) : NULL;
        j->len = m->Metadata.len > 0 ? (size_t)m->Metadata.len : 0;
        j->meta = malloc(j->len + 1);
        if (!j->member_id || !j->meta || (m->GroupInstanceId.len >= 0 && !j->instance_id))
            return SF_ERROR_NOMEM;
        if (j->len)
            memcpy(j->meta, m->Metadata.p, j->len);
    }
    return SF_OK;
}

static void join_ok(sf_cgroup_t *g, const sf_proto_JoinGroupResponse_t *resp, int16_t version,
                    int64_t now) {
    char *member = sf_slice_strdup(resp->MemberId), *proto = sf_slice_strdup(resp->ProtocolName);
    sf_assignor_kind_t kind;
    if (!member || !proto || sf_assignor_parse(proto, &kind) != SF_OK ||
        (resp->ProtocolType.len >= 0 && !sf_slice_eq(resp->ProtocolType, PROTOCOL_TYPE))) {
        free(member);
        free(proto);
        fatal(g, "JoinGroup chose an unknown protocol", SF_KERR_INCONSISTENT_GROUP_PROTOCOL, now);
        return;
    }
    free(g->member_id);
    free(g->protocol);
    g->member_id = member;
    g->protocol = proto;
    g->assignor = kind;
    g->generation = resp->GenerationId;
    g->leader = sf_slice_eq(resp->Leader, member);
    g->skip_assignment = version >= 9 && resp->SkipAssignment;
    sf_cgroup_leader_clear(g);
    if (g->leader && !g->skip_assignment && leader_copy_members(g, resp) != SF_OK) {
        /* An assignment without every member would give the missing ones nothing: join
         * again later (the coordinator starts the rebalance over) rather than send it. */
        sf_cgroup_leader_clear(g);
        sf_cgroup_log(g, SF_LOG_LEVEL_ERR,
                      "group %s: out of memory for the members of generation %d: rejoining",
                      g->id, (int)g->generation);
        g->state = G_JOIN;
        g->join_at = now + sf_cgroup_backoff(g);
        return;
    }
    g->md_wait_until = now + LEADER_MD_WAIT_MS;
    g->state = G_SYNC;
    sf_cgroup_log(g, SF_LOG_LEVEL_INFO, "group %s: joined generation %d as %s (%s%s)", g->id,
                  (int)g->generation, g->member_id, g->protocol, g->leader ? ", leader" : "");
}

static void join_done(sf_client_t *cl, int err, int32_t broker_id, int16_t version,
                      sf_rbuf_t *body, void *arg) {
    mreq_t *r = arg;
    sf_cgroup_t *g = r->g;
    sf_proto_JoinGroupResponse_t resp;
    sf_arena_t arena;
    int64_t now = now_ms();
    (void)cl;
    (void)broker_id;
    if (!mreq_current(r, err))
        return;
    g->req_inflight = 0;
    sf_arena_init(&arena, 0);
    if (!err && (err = decoded(sf_proto_JoinGroupResponse_decode(body, version, &arena,
                                                                 &resp))) == SF_OK)
        err = sf_client_kerr(resp.ErrorCode);
    if (err == SF_OK) {
        join_ok(g, &resp, version, now);
    } else if (err == SF_KERR_MEMBER_ID_REQUIRED) {
        /* KIP-394: join again at once with the id the coordinator handed out. */
        char *member = sf_slice_strdup(resp.MemberId);
        if (member) {
            free(g->member_id);
            g->member_id = member;
        }
        g->join_at = now;
    } else if (!member_error(g, r->coord, "JoinGroup", err, now)) {
        if (err == SF_KERR_GROUP_MAX_SIZE_REACHED)
            g->member_id[0] = '\0';
        fatal(g, "joining the group", err, now);
    }
    sf_arena_reset(&arena);
    mreq_free(r);
    sf_cgroup_run(g);
}

void sf_cgroup_join(sf_cgroup_t *g, int64_t now) {
    mreq_t *r = mreq_new(g, (size_t)g->conf->assignors.n);
    int timeout = g->conf->request_timeout_ms;
    if (g->conf->max_poll_interval_ms < INT32_MAX - JOIN_LAPSE_MS &&
        g->conf->max_poll_interval_ms + JOIN_LAPSE_MS > timeout)
        timeout = g->conf->max_poll_interval_ms + JOIN_LAPSE_MS;
    if (!r || join_metadata(g, r) != SF_OK ||
        sf_client_request(g->cl, SF_CLIENT_COORD_CONN(g->coord), SF_PROTO_API_JoinGroup,
                          JOIN_MAX, join_encode, join_done, r, timeout, 0) != SF_OK) {
        if (r)
            mreq_free(r);
        g->join_at = now + sf_cgroup_backoff(g);
        return;
    }
    g->req_inflight = 1;
    g->rejoin = 0;
    sf_cgroup_log(g, SF_LOG_LEVEL_DEBUG,
                  "group %s: JoinGroup to broker %d (member '%s', %zu topics, %zu owned)", g->id,
                  (int)g->coord, g->member_id, g->ntopics, g->nowned);
}

/* ------------------------------------------------------------------------------------------
 * The leader's assignment
 * ------------------------------------------------------------------------------------------ */

void sf_cgroup_leader_clear(sf_cgroup_t *g) {
    size_t i;
    for (i = 0; i < g->njm; i++) {
        free(g->jm[i].member_id);
        free(g->jm[i].instance_id);
        free(g->jm[i].meta);
    }
    free(g->jm);
    g->jm = NULL;
    g->njm = 0;
    for (i = 0; i < g->nsnap; i++)
        free((char *)g->snap[i].name);
    free(g->snap);
    g->snap = NULL;
    g->nsnap = 0;
}

int sf_cgroup_leader_stale(sf_cgroup_t *g) {
    size_t i;
    for (i = 0; i < g->nsnap; i++) {
        const sf_client_topic_t *t = sf_client_topic(g->cl, g->snap[i].name);
        if (t && !t->err && t->partition_count != g->snap[i].partitions)
            return 1;
    }
    return 0;
}

/* @s as a C string from @arena ("" when out of memory: the caller checks the arena). */
static const char *arena_str(sf_arena_t *arena, sf_slice_t s) {
    size_t len = s.len > 0 ? (size_t)s.len : 0;
    char *p = sf_arena_alloc(arena, len + 1);
    if (!p)
        return "";
    if (len)
        memcpy(p, s.p, len);
    p[len] = '\0';
    return p;
}

/* Member @m of the JoinGroup answer as the assignors see it; *@version is its subscription's
 * version (the assignment goes back in the same one, at most the newest). */
static int leader_member(sf_arena_t *arena, const jmember_t *j, sf_assignor_member_t *m,
                         int16_t *version) {
    sf_proto_ConsumerProtocolSubscription_t sub;
    const char **topics;
    sf_assignor_tp_t *owned;
    size_t n = 0;
    int32_t i, k;
    int rc = sf_assignor_subscription_decode(j->meta, j->len, arena, version, &sub);
    if (rc != SF_OK)
        return rc;
    if (*version > SF_ASSIGNOR_ASSIGNMENT_VERSION)
        *version = SF_ASSIGNOR_ASSIGNMENT_VERSION;
    topics = sf_arena_calloc(arena, (size_t)sub.TopicsCount + 1, sizeof(*topics));
    for (i = 0; topics && i < sub.TopicsCount; i++)
        topics[i] = arena_str(arena, sub.Topics[i]);
    for (i = 0; i < sub.OwnedPartitionsCount; i++)
        n += (size_t)sub.OwnedPartitions[i].PartitionsCount;
    owned = sf_arena_calloc(arena, n + 1, sizeof(*owned));
    if (!topics || !owned)
        return SF_ERR_NOMEM;
    m->member_id = j->member_id;
    m->instance_id = j->instance_id;
    m->topics = topics;
    m->ntopics = (size_t)sub.TopicsCount;
    m->owned = owned;
    for (i = 0; i < sub.OwnedPartitionsCount; i++) {
        const char *t = arena_str(arena, sub.OwnedPartitions[i].Topic);
        for (k = 0; k < sub.OwnedPartitions[i].PartitionsCount; k++) {
            owned[m->nowned].topic = t;
            owned[m->nowned++].partition = sub.OwnedPartitions[i].Partitions[k];
        }
    }
    m->generation = sub.GenerationId >= 0 ? sub.GenerationId
                                          : sf_assignor_userdata_generation(sub.UserData);
    return SF_OK;
}

/* The topics the members subscribe to, with partition counts; 0 when some are not in the
 * metadata yet and the leader still waits for them. */
static int leader_topics(sf_cgroup_t *g, const sf_assignor_member_t *mb, size_t n, int64_t now,
                         sf_arena_t *arena, sf_assignor_topic_t **out, size_t *nout) {
    sf_assignor_topic_t *v;
    size_t i, j, k, total = 0;
    int missing = 0;
    for (i = 0; i < n; i++)
        total += mb[i].ntopics;
    if (!(v = sf_arena_calloc(arena, total + 1, sizeof(*v))))
        return -1;
    for (i = 0, k = 0; i < n; i++)
        for (j = 0; j < mb[i].ntopics; j++) {
            size_t x;
            for (x = 0; x < k && strcmp(v[x].name, mb[i].topics[j]) != 0; x++)
                ;
            if (x == k)
                v[k++].name = mb[i].topics[j];
        }
    for (i = 0; i < k; i++) {
        const sf_client_topic_t *t = sf_client_topic(g->cl, v[i].name);
        if (!t) {
            sf_client_metadata_want(g->cl, v[i].name, 0);
            missing = 1;
        }
        v[i].partitions = t && !t->err ? t->partition_count : 0;
    }
    if (missing && now < g->md_wait_until)
        return 0;
    *out = v;
    *nout = k;
    return 1;
}

/* Keep the partition counts the assignment saw, to notice when they change. */
static void leader_snapshot(sf_cgroup_t *g, const sf_assignor_topic_t *v, size_t n) {
    size_t i;
    for (i = 0; i < g->nsnap; i++)
        free((char *)g->snap[i].name);
    free(g->snap);
    g->nsnap = 0;
    if (!(g->snap = calloc(n + 1, sizeof(*g->snap))))
        return;
    for (i = 0; i < n; i++) {
        if (!(g->snap[g->nsnap].name = strdup(v[i].name)))
            break;
        g->snap[g->nsnap++].partitions = v[i].partitions;
    }
}

/* Run the assignor over the JoinGroup members into @r (an assignment per member). Returns 1
 * when done, 0 to wait for metadata, -1 on a failure (out of memory, a member's subscription
 * that does not decode). */
static int leader_assign(sf_cgroup_t *g, int64_t now, mreq_t *r) {
    sf_arena_t arena;
    sf_assignor_member_t *mb = calloc(g->njm + 1, sizeof(*mb));
    int16_t *versions = calloc(g->njm + 1, sizeof(*versions));
    sf_assignor_topic_t *topics = NULL;
    size_t i, ntopics = 0;
    int rc = -1;
    sf_arena_init(&arena, 0);
    if (!mb || !versions)
        goto out;
    for (i = 0; i < g->njm; i++)
        if (leader_member(&arena, &g->jm[i], &mb[i], &versions[i]) != SF_OK) {
            sf_cgroup_log(g, SF_LOG_LEVEL_WARNING,
                          "group %s: member %s sent a subscription that does not decode", g->id,
                          g->jm[i].member_id);
            goto out;
        }
    if ((rc = leader_topics(g, mb, g->njm, now, &arena, &topics, &ntopics)) <= 0)
        goto out;
    rc = -1;
    if (sf_assignor_assign(g->assignor, topics, ntopics, mb, g->njm) != SF_OK)
        goto out;
    leader_snapshot(g, topics, ntopics);
    for (i = 0; i < g->njm; i++) {
        if (!(r->ids[i] = strdup(g->jm[i].member_id)) ||
            sf_assignor_assignment_encode(&r->bufs[i], versions[i], mb[i].assigned,
                                          mb[i].nassigned) != SF_OK)
            goto out;
    }
    rc = 1;
out:
    if (mb)
        sf_assignor_members_clear(mb, g->njm);
    free(mb);
    free(versions);
    sf_arena_reset(&arena);
    return rc;
}

/* ------------------------------------------------------------------------------------------
 * SyncGroup
 * ------------------------------------------------------------------------------------------ */

static int sync_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    mreq_t *r = arg;
    sf_cgroup_t *g = r->g;
    sf_proto_SyncGroupRequest_t req;
    sf_proto_SyncGroupRequest_SyncGroupRequestAssignment_t *asg = NULL;
    size_t i;
    int rc;
    if (r->nbufs && !(asg = calloc(r->nbufs, sizeof(*asg))))
        return SF_ERR_NOMEM;
    for (i = 0; i < r->nbufs; i++) {
        asg[i].MemberId = sf_slice_cstr(r->ids[i]);
        asg[i].Assignment.p = r->bufs[i].p;
        asg[i].Assignment.len = (int32_t)r->bufs[i].len;
    }
    sf_proto_SyncGroupRequest_init(&req);
    req.GroupId = sf_slice_cstr(g->id);
    req.GenerationId = r->generation;
    req.MemberId = sf_slice_cstr(r->member_id);
    req.GroupInstanceId = slice_or_null(g->conf->group_instance_id); /* v3+ */
    req.ProtocolType = sf_slice_cstr(PROTOCOL_TYPE);                   /* v5+ */
    req.ProtocolName = slice_or_null(g->protocol);                     /* v5+ */
    req.AssignmentsCount = (int32_t)r->nbufs;
    req.Assignments = asg;
    rc = sf_proto_SyncGroupRequest_encode(wb, version, &req);
    free(asg);
    return rc;
}

static void sync_ok(sf_cgroup_t *g, const sf_proto_SyncGroupResponse_t *resp, int64_t now) {
    sf_proto_ConsumerProtocolAssignment_t asg;
    sf_arena_t arena;
    int16_t version;
    int rc;
    if ((resp->ProtocolName.len >= 0 && !sf_slice_eq(resp->ProtocolName, g->protocol)) ||
        (resp->ProtocolType.len >= 0 && !sf_slice_eq(resp->ProtocolType, PROTOCOL_TYPE))) {
        fatal(g, "SyncGroup answered for another protocol", SF_KERR_INCONSISTENT_GROUP_PROTOCOL,
              now);
        return;
    }
    sf_arena_init(&arena, 0);
    rc = sf_assignor_assignment_decode(resp->Assignment.p,
                                       resp->Assignment.len > 0 ? (size_t)resp->Assignment.len : 0,
                                       &arena, &version, &asg);
    if (rc != SF_OK) {
        sf_arena_reset(&arena);
        fatal(g, "the assignment does not decode", SF_ERROR_MALFORMED, now);
        return;
    }
    g->state = G_STABLE;
    g->why[0] = '\0';
    g->next_hb = now + g->conf->heartbeat_interval_ms;
    sf_cgroup_assignment(g, &asg);
    sf_arena_reset(&arena);
}

static void sync_done(sf_client_t *cl, int err, int32_t broker_id, int16_t version,
                      sf_rbuf_t *body, void *arg) {
    mreq_t *r = arg;
    sf_cgroup_t *g = r->g;
    sf_proto_SyncGroupResponse_t resp;
    sf_arena_t arena;
    int64_t now = now_ms();
    (void)cl;
    (void)broker_id;
    if (!mreq_current(r, err))
        return;
    g->req_inflight = 0;
    sf_arena_init(&arena, 0);
    if (!err && (err = decoded(sf_proto_SyncGroupResponse_decode(body, version, &arena,
                                                                 &resp))) == SF_OK)
        err = sf_client_kerr(resp.ErrorCode);
    if (err == SF_OK)
        sync_ok(g, &resp, now);
    else if (!member_error(g, r->coord, "SyncGroup", err, now))
        fatal(g, "syncing the group", err, now);
    sf_arena_reset(&arena);
    mreq_free(r);
    sf_cgroup_run(g);
}

void sf_cgroup_sync(sf_cgroup_t *g, int64_t now) {
    size_t n = g->leader && !g->skip_assignment ? g->njm : 0;
    mreq_t *r = mreq_new(g, n);
    int rc = 1;
    if (r && n)
        rc = leader_assign(g, now, r);
    if (rc == 0) { /* waiting for metadata (the metadata hook runs this again) */
        mreq_free(r);
        return;
    }
    if (!r || rc < 0 ||
        sf_client_request(g->cl, SF_CLIENT_COORD_CONN(g->coord), SF_PROTO_API_SyncGroup,
                          SYNC_MAX, sync_encode, sync_done, r, -1, 0) != SF_OK) {
        if (r)
            mreq_free(r);
        /* Without an assignment of its own the leader can only start over. */
        g->state = G_JOIN;
        g->join_at = now + sf_cgroup_backoff(g);
        return;
    }
    g->req_inflight = 1;
}

/* ------------------------------------------------------------------------------------------
 * Heartbeat
 * ------------------------------------------------------------------------------------------ */

static int hb_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    mreq_t *r = arg;
    sf_proto_HeartbeatRequest_t req;
    sf_proto_HeartbeatRequest_init(&req);
    req.GroupId = sf_slice_cstr(r->g->id);
    req.GenerationId = r->generation;
    req.MemberId = sf_slice_cstr(r->member_id);
    req.GroupInstanceId = slice_or_null(r->g->conf->group_instance_id); /* v3+ */
    return sf_proto_HeartbeatRequest_encode(wb, version, &req);
}

static void hb_done(sf_client_t *cl, int err, int32_t broker_id, int16_t version,
                    sf_rbuf_t *body, void *arg) {
    mreq_t *r = arg;
    sf_cgroup_t *g = r->g;
    sf_proto_HeartbeatResponse_t resp;
    sf_arena_t arena;
    int32_t coord = r->coord;
    (void)cl;
    (void)broker_id;
    if (!mreq_current(r, err))
        return;
    g->hb_inflight = 0;
    sf_arena_init(&arena, 0);
    if (!err && (err = decoded(sf_proto_HeartbeatResponse_decode(body, version, &arena,
                                                                 &resp))) == SF_OK)
        err = sf_client_kerr(resp.ErrorCode);
    sf_arena_reset(&arena);
    mreq_free(r);
    switch (err) {
    case SF_OK:
        break;
    case SF_KERR_REBALANCE_IN_PROGRESS:
        /* Expected while preparing: the member is on its way to JoinGroup. */
        if (g->state == G_STABLE)
            sf_cgroup_rejoin(g, "the group is rebalancing");
        break;
    case SF_KERR_UNKNOWN_MEMBER_ID:
    case SF_KERR_ILLEGAL_GENERATION:
        if (g->state == G_STABLE || g->state == G_PREPARE)
            sf_cgroup_fenced(g, "Heartbeat", err);
        break;
    case SF_KERR_FENCED_INSTANCE_ID:
        if (g->state == G_STABLE || g->state == G_PREPARE)
            sf_cgroup_instance_fenced(g, "Heartbeat");
        break;
    default:
        if (sf_cgroup_coord_retriable(err))
            sf_cgroup_coord_dead(g, coord, sf_error_name(err));
        else
            sf_cgroup_log(g, SF_LOG_LEVEL_WARNING, "group %s: Heartbeat: %s", g->id,
                          sf_error_name(err));
        g->next_hb = now_ms() + sf_cgroup_backoff(g);
    }
    sf_cgroup_run(g);
}

void sf_cgroup_heartbeat(sf_cgroup_t *g, int64_t now) {
    mreq_t *r;
    if (g->hb_inflight || g->coord < 0 || g->generation < 0 || !g->member_id[0] ||
        now < g->next_hb)
        return;
    g->next_hb = now + g->conf->heartbeat_interval_ms;
    if (!(r = mreq_new(g, 0)))
        return;
    if (sf_client_request(g->cl, SF_CLIENT_COORD_CONN(g->coord), SF_PROTO_API_Heartbeat,
                          HEARTBEAT_MAX, hb_encode, hb_done, r, -1, 0) != SF_OK) {
        mreq_free(r);
        return;
    }
    g->hb_inflight = 1;
}

/* ------------------------------------------------------------------------------------------
 * LeaveGroup
 * ------------------------------------------------------------------------------------------ */

static int leave_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    mreq_t *r = arg;
    sf_proto_LeaveGroupRequest_t req;
    sf_proto_LeaveGroupRequest_MemberIdentity_t me;
    sf_proto_LeaveGroupRequest_init(&req);
    me.MemberId = sf_slice_cstr(r->member_id);
    me.GroupInstanceId = slice_or_null(r->g->conf->group_instance_id);
    me.Reason = slice_or_null(r->reason); /* v5+ */
    req.GroupId = sf_slice_cstr(r->g->id);
    req.MemberId = me.MemberId; /* v0-2 */
    req.MembersCount = 1;       /* v3+ */
    req.Members = &me;
    return sf_proto_LeaveGroupRequest_encode(wb, version, &req);
}

static void leave_done(sf_client_t *cl, int err, int32_t broker_id, int16_t version,
                       sf_rbuf_t *body, void *arg) {
    mreq_t *r = arg;
    sf_cgroup_t *g = r->g;
    sf_proto_LeaveGroupResponse_t resp;
    sf_arena_t arena;
    (void)cl;
    (void)broker_id;
    g->leaving = 0;
    sf_client_signal(g->cl);
    if (err == SF_ERROR_DESTROYED || g->stopped) {
        mreq_free(r);
        return;
    }
    sf_arena_init(&arena, 0);
    if (!err && (err = decoded(sf_proto_LeaveGroupResponse_decode(body, version, &arena,
                                                                  &resp))) == SF_OK) {
        err = sf_client_kerr(resp.ErrorCode);
        if (!err && version >= 3 && resp.MembersCount > 0)
            err = sf_client_kerr(resp.Members[0].ErrorCode);
    }
    sf_arena_reset(&arena);
    sf_cgroup_log(g, err ? SF_LOG_LEVEL_WARNING : SF_LOG_LEVEL_INFO, "group %s: %s left%s%s",
                  g->id, r->member_id, err ? ": " : "", err ? sf_error_name(err) : "");
    mreq_free(r);
    sf_cgroup_run(g);
}

void sf_cgroup_leave(sf_cgroup_t *g, const char *why) {
    int32_t conn;
    mreq_t *r;
    if (!g->member_id[0] || g->coord < 0 || g->conf->group_instance_id || !(r = mreq_new(g, 0)))
        return;
    r->reason = why;
    /* Behind a JoinGroup on the coordinator's connection it would wait for the whole
     * rebalance: the broker's other connection carries it past (the coordinator then answers
     * the JoinGroup too, and the reset that follows drops that answer). */
    conn = g->req_inflight ? g->coord : SF_CLIENT_COORD_CONN(g->coord);
    if (sf_client_request(g->cl, conn, SF_PROTO_API_LeaveGroup, LEAVE_MAX, leave_encode,
                          leave_done, r, -1, 0) != SF_OK) {
        mreq_free(r);
        return;
    }
    g->leaving = 1;
}
