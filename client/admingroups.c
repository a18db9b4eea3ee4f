/* The admin client's consumer-group calls (streamflow.h): list, describe and delete groups,
 * read and change their committed offsets, look up partition offsets (ListOffsets) and the
 * lag that results. Each is a blocking call; group requests go to the group's coordinator,
 * which FindCoordinator names and names again when it moves. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adminapi.h"
#include "arena.h"
#include "assignor.h"
#include "cgroup.h"
#include "clientconf.h"
#include "clock.h"
#include "coord.h"
#include "err.h"
#include "proto.h"

#define LISTGROUPS_MAX 5
#define DESCRIBEGROUPS_MAX 5
#define DELETEGROUPS_MAX 2
#define LISTOFFSETS_MAX 5
#define METADATA_MAX 8
/* ListOffsets rounds (a leader that moved is asked again after a metadata refresh). */
#define LISTOFFSETS_ROUNDS 5

/* ------------------------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------------------------ */

char *sf_admin_dup_slice(sf_slice_t s) {
    return s.len > 0 ? sf_slice_strdup(s) : strdup("");
}

/* A growable list of partitions whose topics it owns (then packed for the caller). */
typedef struct tplist {
    sf_topic_partition_t *v;
    size_t n, cap;
    int oom;
} tplist_t;

static void tplist_add(tplist_t *l, sf_slice_t topic, int32_t partition, int64_t offset,
                       int err) {
    char *t;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        sf_topic_partition_t *v = realloc(l->v, cap * sizeof(*v));
        if (!v) {
            l->oom = 1;
            return;
        }
        l->v = v;
        l->cap = cap;
    }
    if (!(t = sf_admin_dup_slice(topic))) {
        l->oom = 1;
        return;
    }
    l->v[l->n].topic = t;
    l->v[l->n].partition = partition;
    l->v[l->n].offset = offset;
    l->v[l->n].err = err;
    l->n++;
}

static void tplist_free(tplist_t *l) {
    size_t i;
    for (i = 0; i < l->n; i++)
        free((char *)l->v[i].topic);
    free(l->v);
    memset(l, 0, sizeof(*l));
}

/* Hand @l to the caller as one sorted allocation. */
static int tplist_give(tplist_t *l, sf_topic_partition_t **out, size_t *count) {
    int rc = l->oom ? SF_ERROR_NOMEM : SF_OK;
    *out = NULL;
    *count = 0;
    if (rc == SF_OK && l->n) {
        qsort(l->v, l->n, sizeof(*l->v), sf_cgroup_tp_cmp);
        if (!(*out = sf_cgroup_tps_pack(l->v, l->n)))
            rc = SF_ERROR_NOMEM;
        else
            *count = l->n;
    }
    tplist_free(l);
    return rc;
}

/* ------------------------------------------------------------------------------------------
 * The coordinator
 * ------------------------------------------------------------------------------------------ */

static int coord_call(sf_admin_t *a, const char *group, int16_t api, int16_t max_version,
                      sf_client_encode_fn enc, sf_client_decode_fn dec, void *arg,
                      int64_t deadline, int32_t *coord) {
    return sf_coord_call(sf_admin_client(a), group, SF_COORD_GROUP, api, max_version, enc, dec,
                         arg, deadline, coord);
}

/* 1 when @kerr is a coordinator error worth asking again for. */
static int coord_kerr(int16_t kerr) {
    return kerr && sf_cgroup_coord_retriable(sf_client_kerr(kerr));
}

/* ------------------------------------------------------------------------------------------
 * ListGroups
 * ------------------------------------------------------------------------------------------ */

typedef struct brokers_call {
    int32_t *ids;
    size_t n;
} brokers_call_t;

static int brokers_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    sf_proto_MetadataRequest_t req;
    (void)arg;
    memset(&req, 0, sizeof(req));
    req.TopicsCount = 0; /* brokers only */
    req.AllowAutoTopicCreation = false;
    return sf_proto_MetadataRequest_encode(wb, version, &req);
}

static int brokers_copy(brokers_call_t *c, const sf_proto_MetadataResponse_t *resp) {
    int32_t i;
    if (resp->BrokersCount <= 0)
        return SF_OK;
    if (!(c->ids = calloc((size_t)resp->BrokersCount, sizeof(*c->ids))))
        return SF_ERROR_NOMEM;
    for (i = 0; i < resp->BrokersCount; i++)
        c->ids[c->n++] = resp->Brokers[i].NodeId;
    return SF_OK;
}

static int brokers_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    sf_proto_MetadataResponse_t resp;
    sf_arena_t arena;
    int rc;
    sf_arena_init(&arena, 0);
    rc = sf_admin_decoded(sf_proto_MetadataResponse_decode(body, version, &arena, &resp));
    if (rc == SF_OK)
        rc = brokers_copy(arg, &resp);
    sf_arena_reset(&arena);
    return rc;
}

int sf_admin_broker_ids(sf_admin_t *a, int64_t deadline, int32_t **ids, size_t *n) {
    brokers_call_t bc = {NULL, 0};
    int rc = sf_client_call(sf_admin_client(a), SF_CLIENT_ANY_BROKER, SF_PROTO_API_Metadata,
                            METADATA_MAX, brokers_encode, brokers_decode, &bc,
                            sf_admin_ms_left(deadline));
    if (rc != SF_OK) {
        free(bc.ids);
        return rc;
    }
    *ids = bc.ids;
    *n = bc.n;
    return SF_OK;
}

typedef struct lg_call {
    sf_group_listing_t *v;
    size_t n, cap;
    int32_t broker;
    int16_t kerr;
} lg_call_t;

static int lg_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    sf_proto_ListGroupsRequest_t req;
    (void)arg;
    sf_proto_ListGroupsRequest_init(&req);
    return sf_proto_ListGroupsRequest_encode(wb, version, &req);
}

static int lg_add(lg_call_t *c, const sf_proto_ListGroupsResponse_ListedGroup_t *lg,
                  int16_t version) {
    sf_group_listing_t *e;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        sf_group_listing_t *v = realloc(c->v, cap * sizeof(*v));
        if (!v)
            return SF_ERROR_NOMEM;
        c->v = v;
        c->cap = cap;
    }
    e = &c->v[c->n];
    memset(e, 0, sizeof(*e));
    e->coordinator = c->broker;
    e->group_id = sf_admin_dup_slice(lg->GroupId);
    e->protocol_type = sf_admin_dup_slice(lg->ProtocolType);
    if (version >= 4)
        e->state = sf_admin_dup_slice(lg->GroupState);
    /* Counted only when whole: the listing is sorted by group_id and freed by count. */
    if (!e->group_id || !e->protocol_type || (version >= 4 && !e->state)) {
        free(e->group_id);
        free(e->protocol_type);
        free(e->state);
        return SF_ERROR_NOMEM;
    }
    c->n++;
    return SF_OK;
}

static int lg_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    lg_call_t *c = arg;
    sf_proto_ListGroupsResponse_t resp;
    sf_arena_t arena;
    int32_t i;
    int rc;
    sf_arena_init(&arena, 0);
    rc = sf_admin_decoded(sf_proto_ListGroupsResponse_decode(body, version, &arena, &resp));
    if (rc == SF_OK)
        c->kerr = resp.ErrorCode;
    for (i = 0; rc == SF_OK && !resp.ErrorCode && i < resp.GroupsCount; i++)
        rc = lg_add(c, &resp.Groups[i], version);
    sf_arena_reset(&arena);
    return rc;
}

static int listing_cmp(const void *x, const void *y) {
    const sf_group_listing_t *a = x, *b = y;
    return strcmp(a->group_id, b->group_id);
}

void sf_group_listings_destroy(sf_group_listing_t *groups, size_t count) {
    size_t i;
    for (i = 0; groups && i < count; i++) {
        free(groups[i].group_id);
        free(groups[i].protocol_type);
        free(groups[i].state);
    }
    free(groups);
}

/* Sort by id and keep the first listing of each group (a group whose coordinator moves
 * between two answers is listed twice). */
static void listings_merge(lg_call_t *c) {
    size_t i, k = 0;
    if (c->n > 1)
        qsort(c->v, c->n, sizeof(*c->v), listing_cmp);
    for (i = 0; i < c->n; i++) {
        if (k > 0 && strcmp(c->v[k - 1].group_id, c->v[i].group_id) == 0) {
            free(c->v[i].group_id);
            free(c->v[i].protocol_type);
            free(c->v[i].state);
            continue;
        }
        c->v[k++] = c->v[i];
    }
    c->n = k;
}

int sf_admin_each_broker(sf_admin_t *a, int64_t deadline, int16_t api, int16_t max_version,
                         sf_client_encode_fn enc, sf_client_decode_fn dec, void *arg,
                         int32_t *broker, int16_t *kerr) {
    int32_t *ids = NULL;
    size_t nids = 0, i;
    int rc, first = SF_OK;
    if ((rc = sf_admin_broker_ids(a, deadline, &ids, &nids)) != SF_OK)
        return rc;
    for (i = 0; i < nids; i++) {
        *broker = ids[i];
        *kerr = 0;
        rc = sf_client_call(sf_admin_client(a), ids[i], api, max_version, enc, dec, arg,
                            sf_admin_ms_left(deadline) > 0 ? sf_admin_ms_left(deadline) : 1);
        if (rc == SF_OK)
            rc = sf_client_kerr(*kerr);
        if (rc != SF_OK && first == SF_OK)
            first = rc;
    }
    free(ids);
    return first;
}

int sf_admin_list_groups(sf_admin_t *a, int timeout_ms, sf_group_listing_t **groups,
                         size_t *count) {
    lg_call_t lc;
    int rc;
    if (groups)
        *groups = NULL;
    if (count)
        *count = 0;
    if (!a || !groups || !count)
        return SF_ERROR_INVALID;
    memset(&lc, 0, sizeof(lc));
    rc = sf_admin_each_broker(a, sf_admin_deadline(a, timeout_ms), SF_PROTO_API_ListGroups,
                              LISTGROUPS_MAX, lg_encode, lg_decode, &lc, &lc.broker, &lc.kerr);
    listings_merge(&lc);
    *groups = lc.v;
    *count = lc.n;
    return rc;
}

/* ------------------------------------------------------------------------------------------
 * DescribeGroups
 * ------------------------------------------------------------------------------------------ */

typedef struct dg_call {
    const char *group;
    sf_group_info_t *info;
} dg_call_t;

static int dg_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    dg_call_t *c = arg;
    sf_proto_DescribeGroupsRequest_t req;
    sf_slice_t id = sf_slice_cstr(c->group);
    sf_proto_DescribeGroupsRequest_init(&req);
    req.GroupsCount = 1;
    req.Groups = &id;
    req.IncludeAuthorizedOperations = false;
    return sf_proto_DescribeGroupsRequest_encode(wb, version, &req);
}

/* The partitions of a member's ConsumerProtocolAssignment. */
static int member_assignment(sf_group_member_t *m, sf_slice_t bytes) {
    sf_proto_ConsumerProtocolAssignment_t asg;
    sf_arena_t arena;
    tplist_t l = {0};
    int16_t version;
    int32_t t, p;
    int rc;
    sf_arena_init(&arena, 0);
    rc = sf_assignor_assignment_decode(bytes.p, bytes.len > 0 ? (size_t)bytes.len : 0, &arena,
                                       &version, &asg);
    for (t = 0; rc == SF_OK && t < asg.AssignedPartitionsCount; t++)
        for (p = 0; p < asg.AssignedPartitions[t].PartitionsCount; p++)
            tplist_add(&l, asg.AssignedPartitions[t].Topic,
                       asg.AssignedPartitions[t].Partitions[p], -1, 0);
    sf_arena_reset(&arena);
    if (rc != SF_OK) {
        tplist_free(&l);
        return rc == SF_ERR_NOMEM ? SF_ERROR_NOMEM : SF_OK; /* not the consumer protocol */
    }
    return tplist_give(&l, &m->assignment, &m->assignment_count);
}

static int dg_member(sf_group_member_t *m,
                     const sf_proto_DescribeGroupsResponse_DescribedGroupMember_t *dm,
                     int consumer) {
    m->member_id = sf_admin_dup_slice(dm->MemberId);
    m->client_id = sf_admin_dup_slice(dm->ClientId);
    m->host = sf_admin_dup_slice(dm->ClientHost);
    if (dm->GroupInstanceId.len >= 0 && !(m->instance_id = sf_admin_dup_slice(dm->GroupInstanceId)))
        return SF_ERROR_NOMEM;
    if (!m->member_id || !m->client_id || !m->host)
        return SF_ERROR_NOMEM;
    return consumer ? member_assignment(m, dm->MemberAssignment) : SF_OK;
}

static int dg_copy(sf_group_info_t *info,
                   const sf_proto_DescribeGroupsResponse_DescribedGroup_t *dg) {
    int consumer = sf_slice_eq(dg->ProtocolType, "consumer");
    int32_t i;
    int rc;
    info->err = sf_client_kerr(dg->ErrorCode);
    if (!(info->state = sf_admin_dup_slice(dg->GroupState)) ||
        !(info->protocol_type = sf_admin_dup_slice(dg->ProtocolType)) ||
        !(info->protocol = sf_admin_dup_slice(dg->ProtocolData)))
        return SF_ERROR_NOMEM;
    if (dg->MembersCount <= 0)
        return SF_OK;
    if (!(info->members = calloc((size_t)dg->MembersCount, sizeof(*info->members))))
        return SF_ERROR_NOMEM;
    for (i = 0; i < dg->MembersCount; i++) {
        info->member_count++;
        if ((rc = dg_member(&info->members[i], &dg->Members[i], consumer)) != SF_OK)
            return rc;
    }
    return SF_OK;
}

static int dg_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    dg_call_t *c = arg;
    sf_proto_DescribeGroupsResponse_t resp;
    sf_arena_t arena;
    int32_t i;
    int rc;
    sf_arena_init(&arena, 0);
    rc = sf_admin_decoded(sf_proto_DescribeGroupsResponse_decode(body, version, &arena, &resp));
    for (i = 0; rc == SF_OK && i < resp.GroupsCount; i++) {
        const sf_proto_DescribeGroupsResponse_DescribedGroup_t *dg = &resp.Groups[i];
        if (!sf_slice_eq(dg->GroupId, c->group))
            continue;
        rc = coord_kerr(dg->ErrorCode) ? sf_client_kerr(dg->ErrorCode) : dg_copy(c->info, dg);
        break;
    }
    if (rc == SF_OK && i == resp.GroupsCount)
        rc = SF_ERROR_MALFORMED; /* the group is not in the answer */
    sf_arena_reset(&arena);
    return rc;
}

static void group_info_clear(sf_group_info_t *info) {
    size_t j;
    free(info->state);
    free(info->protocol_type);
    free(info->protocol);
    for (j = 0; j < info->member_count; j++) {
        sf_group_member_t *m = &info->members[j];
        free(m->member_id);
        free(m->instance_id);
        free(m->client_id);
        free(m->host);
        free(m->assignment);
    }
    free(info->members);
    info->state = info->protocol_type = info->protocol = NULL;
    info->members = NULL;
    info->member_count = 0;
}

void sf_group_info_destroy(sf_group_info_t *info, size_t count) {
    size_t i;
    for (i = 0; info && i < count; i++) {
        group_info_clear(&info[i]);
        free(info[i].group_id);
    }
    free(info);
}

int sf_admin_describe_groups(sf_admin_t *a, const char *const *groups, size_t count,
                             int timeout_ms, sf_group_info_t **out) {
    sf_group_info_t *info;
    int64_t deadline;
    int rc, first = SF_OK;
    size_t i;
    if (out)
        *out = NULL;
    if (!a || !out || (count && !groups))
        return SF_ERROR_INVALID;
    for (i = 0; i < count; i++)
        if (!groups[i] || !groups[i][0])
            return SF_ERROR_INVALID;
    if (!(info = calloc(count + 1, sizeof(*info))))
        return SF_ERROR_NOMEM;
    deadline = sf_admin_deadline(a, timeout_ms);
    for (i = 0; i < count; i++) {
        dg_call_t c = {groups[i], &info[i]};
        info[i].coordinator = -1;
        if (!(info[i].group_id = strdup(groups[i]))) {
            sf_group_info_destroy(info, count);
            return SF_ERROR_NOMEM;
        }
        rc = coord_call(a, groups[i], SF_PROTO_API_DescribeGroups, DESCRIBEGROUPS_MAX,
                        dg_encode, dg_decode, &c, deadline, &info[i].coordinator);
        if (rc != SF_OK) {
            group_info_clear(&info[i]);
            info[i].err = rc;
            if (first == SF_OK)
                first = rc;
        }
    }
    *out = info;
    return first;
}

/* ------------------------------------------------------------------------------------------
 * DeleteGroups
 * ------------------------------------------------------------------------------------------ */

typedef struct del_call {
    const char *group;
    int16_t kerr;
} del_call_t;

static int del_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    del_call_t *c = arg;
    sf_proto_DeleteGroupsRequest_t req;
    sf_slice_t id = sf_slice_cstr(c->group);
    sf_proto_DeleteGroupsRequest_init(&req);
    req.GroupsNamesCount = 1;
    req.GroupsNames = &id;
    return sf_proto_DeleteGroupsRequest_encode(wb, version, &req);
}

static int del_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    del_call_t *c = arg;
    sf_proto_DeleteGroupsResponse_t resp;
    sf_arena_t arena;
    int32_t i;
    int rc;
    sf_arena_init(&arena, 0);
    rc = sf_admin_decoded(sf_proto_DeleteGroupsResponse_decode(body, version, &arena, &resp));
    if (rc == SF_OK)
        rc = SF_ERROR_MALFORMED; /* unless the group is in the answer */
    for (i = 0; rc == SF_ERROR_MALFORMED && i < resp.ResultsCount; i++)
        if (sf_slice_eq(resp.Results[i].GroupId, c->group)) {
            c->kerr = resp.Results[i].ErrorCode;
            rc = coord_kerr(c->kerr) ? sf_client_kerr(c->kerr) : SF_OK;
        }
    sf_arena_reset(&arena);
    return rc;
}

int sf_admin_delete_groups(sf_admin_t *a, const char *const *groups, size_t count, int *errs,
                           int timeout_ms) {
    int64_t deadline;
    int rc, first = SF_OK;
    size_t i;
    if (!a || (count && !groups))
        return SF_ERROR_INVALID;
    for (i = 0; i < count; i++)
        if (!groups[i] || !groups[i][0])
            return SF_ERROR_INVALID;
    deadline = sf_admin_deadline(a, timeout_ms);
    for (i = 0; i < count; i++) {
        del_call_t c = {groups[i], 0};
        rc = coord_call(a, groups[i], SF_PROTO_API_DeleteGroups, DELETEGROUPS_MAX, del_encode,
                        del_decode, &c, deadline, NULL);
        if (rc == SF_OK)
            rc = sf_client_kerr(c.kerr);
        if (errs)
            errs[i] = rc;
        if (rc != SF_OK && first == SF_OK)
            first = rc;
    }
    return first;
}

/* ------------------------------------------------------------------------------------------
 * Committed offsets
 * ------------------------------------------------------------------------------------------ */

typedef struct of_call {
    const char *group;
    tplist_t l;
    int16_t kerr;
} of_call_t;

static int of_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    return sf_cgroup_fetch_encode(wb, version, ((of_call_t *)arg)->group, NULL, 0, 0);
}

static void of_add(void *arg, sf_slice_t topic, int32_t partition, int64_t offset,
                   int16_t err) {
    of_call_t *c = arg;
    if (offset >= 0 || err)
        tplist_add(&c->l, topic, partition, offset, sf_client_kerr(err));
}

static int of_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    of_call_t *c = arg;
    int rc;
    tplist_free(&c->l); /* from an earlier attempt */
    rc = sf_cgroup_fetch_decode(body, version, &c->kerr, of_add, c);
    if (rc == SF_OK && coord_kerr(c->kerr))
        rc = sf_client_kerr(c->kerr);
    return rc;
}

int sf_admin_list_group_offsets(sf_admin_t *a, const char *group, int timeout_ms,
                                sf_topic_partition_t **offsets, size_t *count) {
    of_call_t c;
    int rc;
    if (offsets)
        *offsets = NULL;
    if (count)
        *count = 0;
    if (!a || !group || !group[0] || !offsets || !count)
        return SF_ERROR_INVALID;
    memset(&c, 0, sizeof(c));
    c.group = group;
    rc = coord_call(a, group, SF_PROTO_API_OffsetFetch, SF_CGROUP_OFFSETFETCH_MAX, of_encode,
                    of_decode, &c, sf_admin_deadline(a, timeout_ms), NULL);
    if (rc == SF_OK)
        rc = sf_client_kerr(c.kerr);
    if (rc != SF_OK) {
        tplist_free(&c.l);
        return rc;
    }
    return tplist_give(&c.l, offsets, count);
}

typedef struct oc_call {
    const char *group;
    sf_topic_partition_t *tps;
    size_t n;
} oc_call_t;

static int oc_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    oc_call_t *c = arg;
    return sf_cgroup_commit_encode(wb, version, c->group, -1, "", NULL, c->tps, c->n);
}

static int oc_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    oc_call_t *c = arg;
    size_t i;
    int rc = sf_cgroup_commit_decode(body, version, c->tps, c->n);
    /* A coordinator error comes per partition: the same for every one. */
    for (i = 0; rc == SF_OK && i < c->n; i++)
        if (c->tps[i].err && sf_cgroup_coord_retriable(c->tps[i].err))
            rc = c->tps[i].err;
    return rc;
}

int sf_admin_alter_group_offsets(sf_admin_t *a, const char *group,
                                 sf_topic_partition_t *offsets, size_t count, int timeout_ms) {
    oc_call_t c = {group, offsets, count};
    size_t i;
    int rc;
    if (!a || !group || !group[0] || (count && !offsets))
        return SF_ERROR_INVALID;
    for (i = 0; i < count; i++)
        if (!offsets[i].topic || offsets[i].partition < 0 || offsets[i].offset < 0)
            return SF_ERROR_INVALID;
    if (count == 0)
        return SF_OK;
    rc = coord_call(a, group, SF_PROTO_API_OffsetCommit, SF_CGROUP_OFFSETCOMMIT_MAX, oc_encode,
                    oc_decode, &c, sf_admin_deadline(a, timeout_ms), NULL);
    for (i = 0; rc == SF_OK && i < count; i++)
        if (offsets[i].err)
            rc = offsets[i].err;
    return rc;
}

/* ------------------------------------------------------------------------------------------
 * ListOffsets
 * ------------------------------------------------------------------------------------------ */

typedef struct lo_call {
    sf_topic_partition_t *parts;
    int32_t *leader; /* per part; -1: not asked in this round */
    size_t n;
    int32_t broker;  /* this request's */
    int64_t spec;
} lo_call_t;

static int lo_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    lo_call_t *c = arg;
    sf_proto_ListOffsetsRequest_t req;
    sf_proto_ListOffsetsRequest_ListOffsetsTopic_t *topics = calloc(c->n + 1, sizeof(*topics));
    sf_proto_ListOffsetsRequest_ListOffsetsPartition_t *ps = calloc(c->n + 1, sizeof(*ps));
    size_t i;
    int32_t nt = 0;
    int rc = SF_ERR_NOMEM;
    if (!topics || !ps)
        goto out;
    /* The parts are sorted: those of one topic are next to each other. */
    for (i = 0; i < c->n; i++) {
        if (c->leader[i] != c->broker)
            continue;
        if (nt == 0 || !sf_slice_eq(topics[nt - 1].Name, c->parts[i].topic)) {
            topics[nt].Name = sf_slice_cstr(c->parts[i].topic);
            topics[nt].Partitions = &ps[i];
            nt++;
        }
        /* Partitions of a topic are contiguous in ps: take them from where the topic began. */
        topics[nt - 1].Partitions[topics[nt - 1].PartitionsCount].PartitionIndex =
            c->parts[i].partition;
        topics[nt - 1].Partitions[topics[nt - 1].PartitionsCount].CurrentLeaderEpoch = -1;
        topics[nt - 1].Partitions[topics[nt - 1].PartitionsCount].Timestamp = c->spec;
        topics[nt - 1].Partitions[topics[nt - 1].PartitionsCount].MaxNumOffsets = 1;
        topics[nt - 1].PartitionsCount++;
    }
    sf_proto_ListOffsetsRequest_init(&req);
    req.ReplicaId = -1;
    req.IsolationLevel = 0;
    req.TopicsCount = nt;
    req.Topics = topics;
    rc = sf_proto_ListOffsetsRequest_encode(wb, version, &req);
out:
    free(topics);
    free(ps);
    return rc;
}

static void lo_apply(lo_call_t *c, sf_slice_t topic,
                     const sf_proto_ListOffsetsResponse_ListOffsetsPartitionResponse_t *rp,
                     int16_t version) {
    size_t i;
    for (i = 0; i < c->n; i++) {
        if (c->leader[i] != c->broker || c->parts[i].partition != rp->PartitionIndex ||
            !sf_slice_eq(topic, c->parts[i].topic))
            continue;
        c->parts[i].err = sf_client_kerr(rp->ErrorCode);
        if (version == 0)
            c->parts[i].offset = rp->OldStyleOffsetsCount > 0 ? rp->OldStyleOffsets[0] : -1;
        else
            c->parts[i].offset = rp->Offset;
    }
}

static int lo_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    lo_call_t *c = arg;
    sf_proto_ListOffsetsResponse_t resp;
    sf_arena_t arena;
    int32_t t, p;
    int rc;
    sf_arena_init(&arena, 0);
    rc = sf_admin_decoded(sf_proto_ListOffsetsResponse_decode(body, version, &arena, &resp));
    for (t = 0; rc == SF_OK && t < resp.TopicsCount; t++)
        for (p = 0; p < resp.Topics[t].PartitionsCount; p++)
            lo_apply(c, resp.Topics[t].Name, &resp.Topics[t].Partitions[p], version);
    sf_arena_reset(&arena);
    return rc;
}

/* The leader of each part still to be asked (err set), from fresh metadata; parts whose topic
 * or partition is missing get their error. Returns SF_OK or the metadata call's error. */
static int lo_leaders(sf_admin_t *a, lo_call_t *c, int64_t deadline) {
    const char **names = calloc(c->n + 1, sizeof(*names));
    sf_cluster_info_t *info = NULL;
    size_t i, j, nn = 0;
    int rc;
    if (!names)
        return SF_ERROR_NOMEM;
    for (i = 0; i < c->n; i++)
        if (c->parts[i].err && (nn == 0 || strcmp(names[nn - 1], c->parts[i].topic) != 0))
            names[nn++] = c->parts[i].topic;
    rc = sf_admin_describe_cluster(a, names, nn, sf_admin_ms_left(deadline) > 0 ? sf_admin_ms_left(deadline) : 1,
                                   &info);
    free(names);
    for (i = 0; rc == SF_OK && i < c->n; i++) {
        const sf_topic_info_t *t = NULL;
        c->leader[i] = -1;
        if (!c->parts[i].err)
            continue;
        for (j = 0; j < info->topic_count && !t; j++)
            if (strcmp(info->topics[j].name, c->parts[i].topic) == 0)
                t = &info->topics[j];
        if (!t || t->err) {
            c->parts[i].err = t ? t->err : SF_KERR_UNKNOWN_TOPIC_OR_PARTITION;
            continue;
        }
        c->parts[i].err = SF_KERR_UNKNOWN_TOPIC_OR_PARTITION;
        for (j = 0; j < t->partition_count; j++)
            if (t->partitions[j].id == c->parts[i].partition) {
                c->leader[i] = t->partitions[j].leader;
                c->parts[i].err = c->leader[i] < 0 ? SF_KERR_LEADER_NOT_AVAILABLE
                                                   : SF_ERROR_TIMED_OUT; /* until answered */
            }
    }
    sf_cluster_info_destroy(info);
    return rc;
}

/* One round: a ListOffsets to each leader for its parts. */
static void lo_round(sf_admin_t *a, lo_call_t *c, int64_t deadline) {
    size_t i, j;
    for (i = 0; i < c->n; i++) {
        int rc;
        int seen = 0;
        if (c->leader[i] < 0)
            continue;
        for (j = 0; j < i && !seen; j++)
            seen = c->leader[j] == c->leader[i];
        if (seen)
            continue; /* that leader was asked already */
        c->broker = c->leader[i];
        rc = sf_client_call(sf_admin_client(a), c->broker, SF_PROTO_API_ListOffsets,
                            LISTOFFSETS_MAX, lo_encode, lo_decode, c,
                            sf_admin_ms_left(deadline) > 0 ? sf_admin_ms_left(deadline) : 1);
        for (j = 0; rc != SF_OK && j < c->n; j++)
            if (c->leader[j] == c->broker)
                c->parts[j].err = rc;
    }
}

static int lo_retriable(int err) {
    return err && (sf_error_retriable(err) || err == SF_KERR_NOT_LEADER_OR_FOLLOWER ||
                   err == SF_KERR_LEADER_NOT_AVAILABLE || err == SF_KERR_FENCED_LEADER_EPOCH ||
                   err == SF_KERR_UNKNOWN_LEADER_EPOCH || err == SF_KERR_OFFSET_NOT_AVAILABLE);
}

int sf_admin_list_offsets(sf_admin_t *a, sf_topic_partition_t *parts, size_t count, int64_t spec,
                          int timeout_ms) {
    lo_call_t c;
    int64_t deadline;
    size_t i, *order = NULL;
    int round, rc = SF_OK, again = 1;
    if (!a || (count && !parts) || spec < SF_OFFSET_BEGINNING)
        return SF_ERROR_INVALID;
    for (i = 0; i < count; i++)
        if (!parts[i].topic || !parts[i].topic[0] || parts[i].partition < 0)
            return SF_ERROR_INVALID;
    if (count == 0)
        return SF_OK;
    memset(&c, 0, sizeof(c));
    c.n = count;
    c.spec = spec;
    c.parts = malloc(count * sizeof(*c.parts));
    c.leader = malloc(count * sizeof(*c.leader));
    order = malloc(count * sizeof(*order));
    if (!c.parts || !c.leader || !order) {
        rc = SF_ERROR_NOMEM;
        goto out;
    }
    /* A sorted copy, each entry remembering its place in @parts (in its offset field). */
    for (i = 0; i < count; i++) {
        c.parts[i] = parts[i];
        c.parts[i].offset = (int64_t)i;
    }
    qsort(c.parts, count, sizeof(*c.parts), sf_cgroup_tp_cmp);
    for (i = 0; i < count; i++) {
        order[i] = (size_t)c.parts[i].offset;
        c.parts[i].offset = -1;
        c.parts[i].err = SF_ERROR_TIMED_OUT;
    }
    deadline = sf_admin_deadline(a, timeout_ms);
    for (round = 0; again && round < LISTOFFSETS_ROUNDS && sf_admin_ms_left(deadline) > 0; round++) {
        if (round > 0)
            sf_admin_backoff(a, deadline);
        if ((rc = lo_leaders(a, &c, deadline)) != SF_OK)
            break;
        lo_round(a, &c, deadline);
        for (i = 0, again = 0; i < count; i++)
            again |= lo_retriable(c.parts[i].err);
    }
    for (i = 0; i < count; i++) {
        parts[order[i]].offset = c.parts[i].offset;
        parts[order[i]].err = rc != SF_OK ? rc : c.parts[i].err;
        if (rc == SF_OK && parts[order[i]].err)
            rc = parts[order[i]].err;
    }
out:
    free(c.parts);
    free(c.leader);
    free(order);
    return rc;
}

/* ------------------------------------------------------------------------------------------
 * Lag
 * ------------------------------------------------------------------------------------------ */

int sf_admin_group_lag(sf_admin_t *a, const char *group, int timeout_ms, sf_group_lag_t **lag,
                       size_t *count) {
    sf_topic_partition_t *offs = NULL, *ends = NULL;
    size_t n = 0, i, size;
    int64_t deadline;
    char *p;
    int rc;
    if (lag)
        *lag = NULL;
    if (count)
        *count = 0;
    if (!a || !lag || !count)
        return SF_ERROR_INVALID;
    deadline = sf_admin_deadline(a, timeout_ms);
    if ((rc = sf_admin_list_group_offsets(a, group, timeout_ms, &offs, &n)) != SF_OK || n == 0)
        return rc;
    size = n * sizeof(**lag);
    for (i = 0; i < n; i++)
        size += strlen(offs[i].topic) + 1;
    if (!(ends = malloc(n * sizeof(*ends))) || !(*lag = malloc(size))) {
        free(ends);
        free(offs);
        return SF_ERROR_NOMEM;
    }
    memcpy(ends, offs, n * sizeof(*ends));
    sf_admin_list_offsets(a, ends, n, SF_OFFSET_END, sf_admin_ms_left(deadline) > 0 ? sf_admin_ms_left(deadline) : 1);
    p = (char *)(*lag + n);
    for (i = 0; i < n; i++) {
        sf_group_lag_t *l = &(*lag)[i];
        size_t len = strlen(offs[i].topic) + 1;
        memcpy(p, offs[i].topic, len);
        l->topic = p;
        p += len;
        l->partition = offs[i].partition;
        l->committed = offs[i].offset;
        l->err = offs[i].err ? offs[i].err : ends[i].err;
        l->log_end = ends[i].err ? -1 : ends[i].offset;
        l->lag = l->log_end < 0 ? -1 : l->log_end > l->committed ? l->log_end - l->committed : 0;
    }
    free(ends);
    free(offs);
    *count = n;
    return SF_OK;
}

void sf_group_lag_destroy(sf_group_lag_t *lag) {
    free(lag);
}
