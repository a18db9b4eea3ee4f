/* The classic consumer group APIs on the group coordinator (metadata thread): JoinGroup,
 * SyncGroup, Heartbeat and LeaveGroup (group/membership.c), ListGroups, DescribeGroups and
 * DeleteGroups (group/groupadmin.c). Each decodes its request into the group module's
 * terms, lets sf_coord_with_group find (or load) the group, and answers from the module's
 * callback; a join or sync waits inside its group until the phase completes. */
#include "dispatch.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "group.h"

/* A request's string as a C string in the arena: "" for a null or absent one, NULL on no
 * memory. */
static const char *str_or_empty(sf_kreq_t *kr, sf_slice_t s) {
    return s.p && s.len > 0 ? sf_kreq_str(kr, s) : "";
}

static const char *str_or_null(sf_kreq_t *kr, sf_slice_t s) {
    return s.p && s.len >= 0 ? sf_kreq_str(kr, s) : NULL;
}

/* Run @fn for the request's group, or answer @fn's error path when there is no coordinator. */
static void with_group(sf_kreq_t *kr, sf_slice_t group, sf_group_fn fn) {
    sf_coord_t *c = sf_broker_coordinator(kr->b);
    const char *id = str_or_empty(kr, group);
    if (!c || !id)
        fn(kr, NULL, SF_KERR_COORDINATOR_NOT_AVAILABLE);
    else
        sf_coord_with_group(c, id, fn, kr);
}

static size_t slice_len(sf_slice_t s) {
    return s.len > 0 ? (size_t)s.len : 0;
}

/* "/127.0.0.1", as Kafka shows a member's host. */
static const char *client_host(sf_kreq_t *kr) {
    const char *peer = sf_conn_peer(kr->req->conn), *colon = strrchr(peer, ':');
    return sf_kreq_printf(kr, "/%.*s", colon ? (int)(colon - peer) : (int)strlen(peer), peer);
}

/* ---- JoinGroup ---- */

static void join_answer(void *arg, const sf_gjoin_result_t *r) {
    sf_kreq_t *kr = arg;
    sf_proto_JoinGroupResponse_t resp;
    int i;
    sf_proto_JoinGroupResponse_init(&resp);
    resp.ErrorCode = r->error;
    resp.GenerationId = r->generation;
    resp.ProtocolType = sf_slice_cstr(r->protocol_type);
    /* Encoded before returning: the group's strings can be borrowed. */
    resp.ProtocolName = sf_slice_cstr(r->protocol_name || kr->version >= 7 ? r->protocol_name : "");
    resp.Leader = sf_slice_cstr(r->leader ? r->leader : "");
    resp.MemberId = sf_slice_cstr(r->member_id ? r->member_id : "");
    resp.SkipAssignment = r->skip_assignment != 0;
    if (r->nmembers > 0 &&
        !(resp.Members = sf_kreq_alloc(kr, (size_t)r->nmembers, sizeof(*resp.Members)))) {
        sf_kreq_close(kr, "no memory for the response");
        return;
    }
    resp.MembersCount = r->nmembers;
    for (i = 0; i < r->nmembers; i++) {
        sf_proto_JoinGroupResponse_JoinGroupResponseMember_t *m = &resp.Members[i];
        sf_proto_JoinGroupResponse_JoinGroupResponseMember_init(m);
        m->MemberId = sf_slice_cstr(r->members[i].member_id);
        m->GroupInstanceId = sf_slice_cstr(r->members[i].instance_id);
        m->Metadata.p = r->members[i].meta;
        m->Metadata.len = (int32_t)r->members[i].len;
    }
    sf_kreq_respond(kr, &resp);
}

static void join_run(void *arg, sf_group_t *g, int16_t err) {
    sf_kreq_t *kr = arg;
    const sf_proto_JoinGroupRequest_t *req = kr->msg;
    int np = req->ProtocolsCount > 0 ? req->ProtocolsCount : 0;
    sf_gprotocol_t *protos = sf_kreq_alloc(kr, (size_t)np, sizeof(*protos));
    sf_gjoin_t j;
    int i;
    memset(&j, 0, sizeof(j));
    j.member_id = str_or_empty(kr, req->MemberId);
    if (!g || !protos || !j.member_id) {
        sf_gjoin_result_t r = {g ? SF_KERR_UNKNOWN_SERVER_ERROR : err, -1, NULL, NULL, "",
                               j.member_id ? j.member_id : "", NULL, 0, 0};
        join_answer(kr, &r);
        return;
    }
    for (i = 0; i < req->ProtocolsCount; i++) {
        protos[i].name = str_or_empty(kr, req->Protocols[i].Name);
        protos[i].meta = req->Protocols[i].Metadata.p;
        protos[i].len = slice_len(req->Protocols[i].Metadata);
    }
    j.instance_id = kr->version >= 5 ? str_or_null(kr, req->GroupInstanceId) : NULL;
    j.client_id = kr->client_id;
    j.client_host = client_host(kr);
    j.protocol_type = str_or_empty(kr, req->ProtocolType);
    j.session_ms = req->SessionTimeoutMs;
    j.rebalance_ms = kr->version >= 1 && req->RebalanceTimeoutMs > 0 ? req->RebalanceTimeoutMs
                                                                     : req->SessionTimeoutMs;
    j.protocols = protos;
    j.nprotocols = req->ProtocolsCount > 0 ? req->ProtocolsCount : 0;
    j.require_known_id = kr->version >= 4;
    sf_group_join(g, &j, join_answer, kr);
}

void sf_kapi_JoinGroup(sf_kreq_t *kr, void *msg) {
    with_group(kr, ((sf_proto_JoinGroupRequest_t *)msg)->GroupId, join_run);
}

/* ---- SyncGroup ---- */

static void sync_answer(void *arg, int16_t error, const char *protocol_type,
                        const char *protocol_name, const uint8_t *data, size_t len) {
    sf_kreq_t *kr = arg;
    sf_proto_SyncGroupResponse_t resp;
    sf_proto_SyncGroupResponse_init(&resp);
    resp.ErrorCode = error;
    resp.ProtocolType = sf_slice_cstr(error ? NULL : protocol_type);
    resp.ProtocolName = sf_slice_cstr(error ? NULL : protocol_name);
    resp.Assignment.p = data ? data : (const uint8_t *)"";
    resp.Assignment.len = (int32_t)len;
    sf_kreq_respond(kr, &resp);
}

static void sync_run(void *arg, sf_group_t *g, int16_t err) {
    sf_kreq_t *kr = arg;
    const sf_proto_SyncGroupRequest_t *req = kr->msg;
    int n = req->AssignmentsCount > 0 ? req->AssignmentsCount : 0, i;
    sf_gassignment_t *a = sf_kreq_alloc(kr, (size_t)n, sizeof(*a));
    const char *member = str_or_empty(kr, req->MemberId);
    if (!g || !a || !member) {
        sync_answer(kr, g ? SF_KERR_UNKNOWN_SERVER_ERROR : err, NULL, NULL, NULL, 0);
        return;
    }
    for (i = 0; i < n; i++) {
        a[i].member_id = str_or_empty(kr, req->Assignments[i].MemberId);
        a[i].data = req->Assignments[i].Assignment.p;
        a[i].len = slice_len(req->Assignments[i].Assignment);
    }
    sf_group_sync(g, member, kr->version >= 3 ? str_or_null(kr, req->GroupInstanceId) : NULL,
                  req->GenerationId, kr->version >= 5 ? str_or_null(kr, req->ProtocolType) : NULL,
                  kr->version >= 5 ? str_or_null(kr, req->ProtocolName) : NULL, a, n, sync_answer,
                  kr);
}

void sf_kapi_SyncGroup(sf_kreq_t *kr, void *msg) {
    with_group(kr, ((sf_proto_SyncGroupRequest_t *)msg)->GroupId, sync_run);
}

/* ---- Heartbeat ---- */

static void heartbeat_run(void *arg, sf_group_t *g, int16_t err) {
    sf_kreq_t *kr = arg;
    const sf_proto_HeartbeatRequest_t *req = kr->msg;
    sf_proto_HeartbeatResponse_t resp;
    const char *member = str_or_empty(kr, req->MemberId);
    sf_proto_HeartbeatResponse_init(&resp);
    resp.ErrorCode = !g        ? err
                     : !member ? SF_KERR_UNKNOWN_SERVER_ERROR
                               : sf_group_heartbeat(g, member,
                                                    kr->version >= 3
                                                        ? str_or_null(kr, req->GroupInstanceId)
                                                        : NULL,
                                                    req->GenerationId);
    sf_kreq_respond(kr, &resp);
}

void sf_kapi_Heartbeat(sf_kreq_t *kr, void *msg) {
    with_group(kr, ((sf_proto_HeartbeatRequest_t *)msg)->GroupId, heartbeat_run);
}

/* ---- LeaveGroup ---- */

static void leave_run(void *arg, sf_group_t *g, int16_t err) {
    sf_kreq_t *kr = arg;
    const sf_proto_LeaveGroupRequest_t *req = kr->msg;
    sf_proto_LeaveGroupResponse_t resp;
    int i;
    sf_proto_LeaveGroupResponse_init(&resp);
    if (!g) {
        resp.ErrorCode = err;
    } else if (kr->version < 3) {
        const char *member = str_or_empty(kr, req->MemberId);
        resp.ErrorCode = member ? sf_group_leave(g, member, NULL) : SF_KERR_UNKNOWN_SERVER_ERROR;
    } else if (req->MembersCount > 0) {
        if (!(resp.Members = sf_kreq_alloc(kr, (size_t)req->MembersCount, sizeof(*resp.Members)))) {
            sf_kreq_close(kr, "no memory for the response");
            return;
        }
        resp.MembersCount = req->MembersCount;
        for (i = 0; i < req->MembersCount; i++) {
            const sf_proto_LeaveGroupRequest_MemberIdentity_t *mi = &req->Members[i];
            sf_proto_LeaveGroupResponse_MemberResponse_t *mr = &resp.Members[i];
            const char *member = str_or_empty(kr, mi->MemberId);
            sf_proto_LeaveGroupResponse_MemberResponse_init(mr);
            mr->MemberId = mi->MemberId;
            mr->GroupInstanceId = mi->GroupInstanceId;
            mr->ErrorCode = member ? sf_group_leave(g, member, str_or_null(kr, mi->GroupInstanceId))
                                   : SF_KERR_UNKNOWN_SERVER_ERROR;
        }
    }
    sf_kreq_respond(kr, &resp);
}

void sf_kapi_LeaveGroup(sf_kreq_t *kr, void *msg) {
    with_group(kr, ((sf_proto_LeaveGroupRequest_t *)msg)->GroupId, leave_run);
}

/* ---- ListGroups: this coordinator's groups ---- */

static int state_listed(sf_kreq_t *kr, const sf_proto_ListGroupsRequest_t *req,
                        const char *state) {
    int i;
    if (kr->version < 4 || req->StatesFilterCount <= 0)
        return 1;
    for (i = 0; i < req->StatesFilterCount; i++)
        if ((size_t)req->StatesFilter[i].len == strlen(state) &&
            !strncasecmp((const char *)req->StatesFilter[i].p, state, strlen(state)))
            return 1;
    return 0;
}

/* Every group here is a classic one. */
static int type_listed(sf_kreq_t *kr, const sf_proto_ListGroupsRequest_t *req) {
    int i;
    if (kr->version < 5 || req->TypesFilterCount <= 0)
        return 1;
    for (i = 0; i < req->TypesFilterCount; i++)
        if (req->TypesFilter[i].len == 7 && !strncasecmp((const char *)req->TypesFilter[i].p,
                                                         "classic", 7))
            return 1;
    return 0;
}

static void list_answer(void *arg, int16_t error, const sf_glisting_t *v, int n) {
    sf_kreq_t *kr = arg;
    const sf_proto_ListGroupsRequest_t *req = kr->msg;
    sf_proto_ListGroupsResponse_t resp;
    int i;
    sf_proto_ListGroupsResponse_init(&resp);
    resp.ErrorCode = error;
    if (!(resp.Groups = sf_kreq_alloc(kr, (size_t)n, sizeof(*resp.Groups)))) {
        sf_kreq_close(kr, "no memory for the response");
        return;
    }
    for (i = 0; i < n && type_listed(kr, req); i++) {
        sf_proto_ListGroupsResponse_ListedGroup_t *lg = &resp.Groups[resp.GroupsCount];
        if (!state_listed(kr, req, v[i].state))
            continue;
        sf_proto_ListGroupsResponse_ListedGroup_init(lg);
        lg->GroupId = sf_kreq_slice(kr, v[i].id);
        lg->ProtocolType = sf_kreq_slice(kr, v[i].protocol_type);
        lg->GroupState = sf_kreq_slice(kr, v[i].state);
        lg->GroupType = sf_slice_cstr("classic");
        resp.GroupsCount++;
    }
    sf_kreq_respond(kr, &resp);
}

void sf_kapi_ListGroups(sf_kreq_t *kr, void *msg) {
    sf_coord_t *c = sf_broker_coordinator(kr->b);
    (void)msg;
    if (!c)
        list_answer(kr, SF_KERR_COORDINATOR_NOT_AVAILABLE, NULL, 0);
    else
        sf_coord_list(c, list_answer, kr);
}

/* ---- DescribeGroups and DeleteGroups: many groups, each answered when its group is ---- */

typedef struct multi_ctx {
    sf_kreq_t *kr;
    int pending;
    void *resp;
} multi_ctx_t;

typedef struct multi_one {
    multi_ctx_t *mc;
    int index;
} multi_one_t;

/* Start @fn for each of the @n groups named in @names; the response goes out when the last
 * one is done (multi_done). */
static void multi_run(sf_kreq_t *kr, multi_ctx_t *mc, const sf_slice_t *names, int n,
                      sf_group_fn fn) {
    sf_coord_t *c = sf_broker_coordinator(kr->b);
    multi_one_t *ones = sf_kreq_alloc(kr, (size_t)n, sizeof(*ones));
    int i;
    if (!ones) {
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    mc->kr = kr;
    mc->pending = n + 1; /* a guard while starting */
    for (i = 0; i < n; i++) {
        const char *id = str_or_empty(kr, names[i]);
        ones[i].mc = mc;
        ones[i].index = i;
        if (!c || !id)
            fn(&ones[i], NULL, SF_KERR_COORDINATOR_NOT_AVAILABLE);
        else
            sf_coord_with_group(c, id, fn, &ones[i]);
    }
    if (--mc->pending == 0)
        sf_kreq_respond(kr, mc->resp);
}

static void multi_done(multi_ctx_t *mc) {
    if (--mc->pending == 0)
        sf_kreq_respond(mc->kr, mc->resp);
}

typedef sf_proto_DescribeGroupsResponse_DescribedGroup_t described_t;

static void describe_fill(void *arg, const sf_gdescription_t *d) {
    multi_one_t *one = arg;
    sf_kreq_t *kr = one->mc->kr;
    described_t *dg = &((sf_proto_DescribeGroupsResponse_t *)one->mc->resp)->Groups[one->index];
    int i;
    dg->GroupState = sf_kreq_slice(kr, d->state);
    dg->ProtocolType = sf_kreq_slice(kr, d->protocol_type);
    dg->ProtocolData = sf_kreq_slice(kr, d->protocol);
    if (!(dg->Members = sf_kreq_alloc(kr, (size_t)d->nmembers, sizeof(*dg->Members)))) {
        dg->ErrorCode = SF_KERR_UNKNOWN_SERVER_ERROR;
        return;
    }
    dg->MembersCount = d->nmembers;
    for (i = 0; i < d->nmembers; i++) {
        sf_proto_DescribeGroupsResponse_DescribedGroupMember_t *m = &dg->Members[i];
        const sf_gdescribed_member_t *s = &d->members[i];
        uint8_t *meta = sf_kreq_alloc(kr, s->meta_len, 1);
        uint8_t *asg = sf_kreq_alloc(kr, s->assignment_len, 1);
        sf_proto_DescribeGroupsResponse_DescribedGroupMember_init(m);
        m->MemberId = sf_kreq_slice(kr, s->member_id);
        m->GroupInstanceId = s->instance_id ? sf_kreq_slice(kr, s->instance_id)
                                            : sf_slice_cstr(NULL);
        m->ClientId = sf_kreq_slice(kr, s->client_id);
        m->ClientHost = sf_kreq_slice(kr, s->client_host);
        if (!meta || !asg) {
            dg->ErrorCode = SF_KERR_UNKNOWN_SERVER_ERROR;
            return;
        }
        if (s->meta_len)
            memcpy(meta, s->meta, s->meta_len);
        if (s->assignment_len)
            memcpy(asg, s->assignment, s->assignment_len);
        m->MemberMetadata.p = meta;
        m->MemberMetadata.len = (int32_t)s->meta_len;
        m->MemberAssignment.p = asg;
        m->MemberAssignment.len = (int32_t)s->assignment_len;
    }
}

static void describe_run(void *arg, sf_group_t *g, int16_t err) {
    multi_one_t *one = arg;
    described_t *dg = &((sf_proto_DescribeGroupsResponse_t *)one->mc->resp)->Groups[one->index];
    dg->ErrorCode = err;
    if (g && sf_group_describe(g, describe_fill, one) != SF_OK)
        dg->ErrorCode = SF_KERR_UNKNOWN_SERVER_ERROR;
    multi_done(one->mc);
}

void sf_kapi_DescribeGroups(sf_kreq_t *kr, void *msg) {
    const sf_proto_DescribeGroupsRequest_t *req = msg;
    multi_ctx_t *mc = sf_kreq_alloc(kr, 1, sizeof(*mc));
    sf_proto_DescribeGroupsResponse_t *resp = sf_kreq_alloc(kr, 1, sizeof(*resp));
    int i, n = req->GroupsCount > 0 ? req->GroupsCount : 0;
    described_t *groups = sf_kreq_alloc(kr, (size_t)n, sizeof(*groups));
    if (!mc || !resp || !groups) {
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    sf_proto_DescribeGroupsResponse_init(resp);
    resp->Groups = groups;
    for (i = 0; i < n; i++) {
        sf_proto_DescribeGroupsResponse_DescribedGroup_init(&resp->Groups[i]);
        resp->Groups[i].GroupId = req->Groups[i];
        resp->Groups[i].GroupState = sf_slice_cstr("");
        resp->Groups[i].ProtocolType = sf_slice_cstr("");
        resp->Groups[i].ProtocolData = sf_slice_cstr("");
    }
    resp->GroupsCount = n;
    mc->resp = resp;
    multi_run(kr, mc, req->Groups, n, describe_run);
}

static void delete_done(void *arg, int16_t error) {
    multi_one_t *one = arg;
    ((sf_proto_DeleteGroupsResponse_t *)one->mc->resp)->Results[one->index].ErrorCode = error;
    multi_done(one->mc);
}

static void delete_run(void *arg, sf_group_t *g, int16_t err) {
    if (!g)
        delete_done(arg, err);
    else
        sf_group_delete(g, delete_done, arg);
}

void sf_kapi_DeleteGroups(sf_kreq_t *kr, void *msg) {
    const sf_proto_DeleteGroupsRequest_t *req = msg;
    multi_ctx_t *mc = sf_kreq_alloc(kr, 1, sizeof(*mc));
    sf_proto_DeleteGroupsResponse_t *resp = sf_kreq_alloc(kr, 1, sizeof(*resp));
    int i, n = req->GroupsNamesCount > 0 ? req->GroupsNamesCount : 0;
    sf_proto_DeleteGroupsResponse_DeletableGroupResult_t *res =
        sf_kreq_alloc(kr, (size_t)n, sizeof(*res));
    if (!mc || !resp || !res) {
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    sf_proto_DeleteGroupsResponse_init(resp);
    for (i = 0; i < n; i++) {
        sf_proto_DeleteGroupsResponse_DeletableGroupResult_init(&res[i]);
        res[i].GroupId = req->GroupsNames[i];
    }
    resp->Results = res;
    resp->ResultsCount = n;
    mc->resp = resp;
    multi_run(kr, mc, req->GroupsNames, n, delete_run);
}
