/* Admin calls about where partitions live, answered by the controller: reassignments (KIP-455:
 * AlterPartitionReassignments starts or cancels moves, ListPartitionReassignments tells what
 * is still moving) and leader elections (ElectLeaders). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adminapi.h"
#include "arena.h"
#include "proto.h"

#define ALTER_REASSIGNMENTS_MAX 0
#define LIST_REASSIGNMENTS_MAX 0
#define ELECT_LEADERS_MAX 2

/* A partition of a request, for grouping the partitions by topic. */
typedef struct ra_item {
    const char *topic;
    int32_t partition;
    size_t at; /* its index in the caller's list */
} ra_item_t;

static int ra_item_cmp(const void *x, const void *y) {
    const ra_item_t *a = x, *b = y;
    int c = strcmp(a->topic, b->topic);
    if (c)
        return c;
    return (a->partition > b->partition) - (a->partition < b->partition);
}

/* Sort @items (@n) by topic and return how many topics they name. */
static int32_t ra_items_sort(ra_item_t *items, size_t n) {
    int32_t topics = 0;
    size_t i;
    qsort(items, n, sizeof(*items), ra_item_cmp);
    for (i = 0; i < n; i++)
        if (i == 0 || strcmp(items[i].topic, items[i - 1].topic))
            topics++;
    return topics;
}

/* The number of items from @i on that name the topic of item @i. */
static size_t ra_run(const ra_item_t *items, size_t n, size_t i) {
    size_t j = i + 1;
    while (j < n && !strcmp(items[j].topic, items[i].topic))
        j++;
    return j - i;
}

/* The items of @n partitions @parts, sorted, in *@out (@ntopics: the topics they name).
 * Returns SF_OK or SF_ERROR_NOMEM. */
static int ra_items_of(const sf_topic_partition_t *parts, size_t n, ra_item_t **out,
                       int32_t *ntopics) {
    size_t i;
    if (!(*out = malloc((n ? n : 1) * sizeof(**out))))
        return SF_ERROR_NOMEM;
    for (i = 0; i < n; i++) {
        (*out)[i].topic = parts[i].topic;
        (*out)[i].partition = parts[i].partition;
        (*out)[i].at = i;
    }
    *ntopics = ra_items_sort(*out, n);
    return SF_OK;
}

/* ---- AlterPartitionReassignments ---- */

typedef struct ar_call {
    sf_reassignment_target_t *targets;
    ra_item_t *items; /* sorted */
    size_t n;
    int32_t ntopics;
    int64_t deadline;
    int16_t kerr;
    char *msg; /* the first failure's message */
} ar_call_t;

static int ar_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    ar_call_t *c = arg;
    sf_proto_AlterPartitionReassignmentsRequest_t req;
    sf_proto_AlterPartitionReassignmentsRequest_ReassignableTopic_t *topics;
    sf_proto_AlterPartitionReassignmentsRequest_ReassignablePartition_t *parts;
    size_t i, k = 0;
    int32_t t = 0;
    int rc;
    topics = calloc((size_t)c->ntopics, sizeof(*topics));
    parts = calloc(c->n, sizeof(*parts));
    if (!topics || !parts) {
        free(topics);
        free(parts);
        return SF_ERR_NOMEM;
    }
    for (i = 0; i < c->n; t++) {
        size_t run = ra_run(c->items, c->n, i);
        topics[t].Name = sf_slice_cstr(c->items[i].topic);
        topics[t].PartitionsCount = (int32_t)run;
        topics[t].Partitions = &parts[k];
        for (; run > 0; run--, i++, k++) {
            const sf_reassignment_target_t *tg = &c->targets[c->items[i].at];
            parts[k].PartitionIndex = tg->partition;
            parts[k].Replicas = (int32_t *)tg->replicas;
            parts[k].ReplicasCount = tg->replicas ? (int32_t)tg->replica_count : -1;
        }
    }
    sf_proto_AlterPartitionReassignmentsRequest_init(&req);
    req.TimeoutMs = sf_admin_ms_left(c->deadline);
    req.TopicsCount = c->ntopics;
    req.Topics = topics;
    rc = sf_proto_AlterPartitionReassignmentsRequest_encode(wb, version, &req);
    free(topics);
    free(parts);
    return rc;
}

/* The target named @topic / @partition, or NULL. */
static sf_reassignment_target_t *ar_find(ar_call_t *c, sf_slice_t topic, int32_t partition) {
    size_t i;
    for (i = 0; i < c->n; i++)
        if (c->targets[i].partition == partition && sf_slice_eq(topic, c->targets[i].topic))
            return &c->targets[i];
    return NULL;
}

static int ar_take(ar_call_t *c, const sf_proto_AlterPartitionReassignmentsResponse_t *resp) {
    int32_t t, p;
    size_t i;
    c->kerr = resp->ErrorCode;
    for (i = 0; i < c->n; i++)
        c->targets[i].err = resp->ErrorCode ? sf_client_kerr(resp->ErrorCode)
                                            : SF_ERROR_MALFORMED; /* unless answered */
    if (resp->ErrorCode)
        return (c->msg = sf_admin_dup_slice(resp->ErrorMessage)) ? SF_OK : SF_ERROR_NOMEM;
    for (t = 0; t < resp->ResponsesCount; t++) {
        const sf_proto_AlterPartitionReassignmentsResponse_ReassignableTopicResponse_t *rt =
            &resp->Responses[t];
        for (p = 0; p < rt->PartitionsCount; p++) {
            const sf_proto_AlterPartitionReassignmentsResponse_ReassignablePartitionResponse_t
                *rp = &rt->Partitions[p];
            sf_reassignment_target_t *tg = ar_find(c, rt->Name, rp->PartitionIndex);
            if (!tg)
                continue;
            tg->err = sf_client_kerr(rp->ErrorCode);
            if (tg->err && !c->msg && !(c->msg = sf_admin_dup_slice(rp->ErrorMessage)))
                return SF_ERROR_NOMEM;
        }
    }
    return SF_OK;
}

static int ar_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    ar_call_t *c = arg;
    sf_proto_AlterPartitionReassignmentsResponse_t resp;
    sf_arena_t arena;
    int rc;
    free(c->msg); /* of an earlier NOT_CONTROLLER answer */
    c->msg = NULL;
    sf_arena_init(&arena, 0);
    rc = sf_admin_decoded(
        sf_proto_AlterPartitionReassignmentsResponse_decode(body, version, &arena, &resp));
    if (rc == SF_OK)
        rc = ar_take(c, &resp);
    sf_arena_reset(&arena);
    return rc;
}

static int ar_valid(const sf_reassignment_target_t *targets, size_t count) {
    size_t i;
    if (count > INT32_MAX || (count && !targets))
        return 0;
    for (i = 0; i < count; i++)
        if (!targets[i].topic || !*targets[i].topic || targets[i].partition < 0 ||
            targets[i].replica_count > INT32_MAX ||
            (targets[i].replicas && !targets[i].replica_count))
            return 0;
    return 1;
}

static void ar_errstr(char *errstr, size_t size, const char *msg) {
    if (errstr && size)
        snprintf(errstr, size, "%s", msg ? msg : "");
}

int sf_admin_alter_reassignments(sf_admin_t *a, sf_reassignment_target_t *targets, size_t count,
                                 int timeout_ms, char *errstr, size_t errstr_size) {
    ar_call_t c;
    size_t i;
    int rc;
    ar_errstr(errstr, errstr_size, NULL);
    if (!a || !ar_valid(targets, count)) {
        ar_errstr(errstr, errstr_size, "invalid topic, partition or replica list");
        return SF_ERROR_INVALID;
    }
    if (!count)
        return SF_OK;
    memset(&c, 0, sizeof(c));
    c.targets = targets;
    c.n = count;
    if (!(c.items = malloc(count * sizeof(*c.items))))
        return SF_ERROR_NOMEM;
    for (i = 0; i < count; i++) {
        c.items[i].topic = targets[i].topic;
        c.items[i].partition = targets[i].partition;
        c.items[i].at = i;
    }
    c.ntopics = ra_items_sort(c.items, count);
    c.deadline = sf_admin_deadline(a, timeout_ms);
    rc = sf_admin_controller_call(a, c.deadline, SF_PROTO_API_AlterPartitionReassignments,
                                  ALTER_REASSIGNMENTS_MAX, ar_encode, ar_decode, &c, &c.kerr);
    if (rc == SF_OK)
        rc = sf_client_kerr(c.kerr);
    ar_errstr(errstr, errstr_size, c.msg);
    free(c.msg);
    free(c.items);
    return rc;
}

/* ---- ListPartitionReassignments ---- */

typedef struct lr_call {
    ra_item_t *items; /* sorted; NULL for every partition */
    size_t nitems;
    int32_t ntopics;
    int64_t deadline;
    int16_t kerr;
    sf_reassignment_t *v;
    size_t n;
} lr_call_t;

static int lr_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    lr_call_t *c = arg;
    sf_proto_ListPartitionReassignmentsRequest_t req;
    sf_proto_ListPartitionReassignmentsRequest_ListPartitionReassignmentsTopics_t *topics = NULL;
    int32_t *ids = NULL, t = 0;
    size_t i, k = 0;
    int rc;
    sf_proto_ListPartitionReassignmentsRequest_init(&req);
    req.TimeoutMs = sf_admin_ms_left(c->deadline);
    req.TopicsCount = -1; /* every partition */
    if (c->items) {
        topics = calloc((size_t)c->ntopics, sizeof(*topics));
        ids = calloc(c->nitems, sizeof(*ids));
        if (!topics || !ids) {
            free(topics);
            free(ids);
            return SF_ERR_NOMEM;
        }
        for (i = 0; i < c->nitems; t++) {
            size_t run = ra_run(c->items, c->nitems, i);
            topics[t].Name = sf_slice_cstr(c->items[i].topic);
            topics[t].PartitionIndexesCount = (int32_t)run;
            topics[t].PartitionIndexes = &ids[k];
            for (; run > 0; run--, i++)
                ids[k++] = c->items[i].partition;
        }
        req.TopicsCount = c->ntopics;
        req.Topics = topics;
    }
    rc = sf_proto_ListPartitionReassignmentsRequest_encode(wb, version, &req);
    free(topics);
    free(ids);
    return rc;
}

static int lr_ids(const int32_t *ids, int32_t n, int32_t **out, size_t *count) {
    *count = n > 0 ? (size_t)n : 0;
    *out = NULL;
    if (!*count)
        return SF_OK;
    if (!(*out = malloc(*count * sizeof(**out))))
        return SF_ERROR_NOMEM;
    memcpy(*out, ids, *count * sizeof(**out));
    return SF_OK;
}

static int lr_add(lr_call_t *c, sf_slice_t topic,
                  const sf_proto_ListPartitionReassignmentsResponse_OngoingPartitionReassignment_t
                      *op) {
    sf_reassignment_t *r = &c->v[c->n++];
    r->partition = op->PartitionIndex;
    if (!(r->topic = sf_admin_dup_slice(topic)) ||
        lr_ids(op->Replicas, op->ReplicasCount, &r->replicas, &r->replica_count) ||
        lr_ids(op->AddingReplicas, op->AddingReplicasCount, &r->adding, &r->adding_count) ||
        lr_ids(op->RemovingReplicas, op->RemovingReplicasCount, &r->removing,
               &r->removing_count))
        return SF_ERROR_NOMEM;
    return SF_OK;
}

static int lr_take(lr_call_t *c, const sf_proto_ListPartitionReassignmentsResponse_t *resp) {
    size_t total = 0;
    int32_t t, p;
    int rc = SF_OK;
    c->kerr = resp->ErrorCode;
    sf_reassignments_destroy(c->v, c->n); /* of an earlier NOT_CONTROLLER answer */
    c->v = NULL;
    c->n = 0;
    for (t = 0; t < resp->TopicsCount; t++)
        total += (size_t)resp->Topics[t].PartitionsCount;
    if (resp->ErrorCode || !total)
        return SF_OK;
    if (!(c->v = calloc(total, sizeof(*c->v))))
        return SF_ERROR_NOMEM;
    for (t = 0; rc == SF_OK && t < resp->TopicsCount; t++)
        for (p = 0; rc == SF_OK && p < resp->Topics[t].PartitionsCount; p++)
            rc = lr_add(c, resp->Topics[t].Name, &resp->Topics[t].Partitions[p]);
    return rc;
}

static int lr_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    lr_call_t *c = arg;
    sf_proto_ListPartitionReassignmentsResponse_t resp;
    sf_arena_t arena;
    int rc;
    sf_arena_init(&arena, 0);
    rc = sf_admin_decoded(
        sf_proto_ListPartitionReassignmentsResponse_decode(body, version, &arena, &resp));
    if (rc == SF_OK)
        rc = lr_take(c, &resp);
    sf_arena_reset(&arena);
    return rc;
}

static int lr_cmp(const void *x, const void *y) {
    const sf_reassignment_t *a = x, *b = y;
    int c = strcmp(a->topic, b->topic);
    if (c)
        return c;
    return (a->partition > b->partition) - (a->partition < b->partition);
}

int sf_admin_list_reassignments(sf_admin_t *a, const sf_topic_partition_t *parts, size_t count,
                                int timeout_ms, sf_reassignment_t **out, size_t *n) {
    lr_call_t c;
    size_t i;
    int rc;
    if (out)
        *out = NULL;
    if (n)
        *n = 0;
    if (!a || !out || !n || count > INT32_MAX || (count && !parts))
        return SF_ERROR_INVALID;
    for (i = 0; i < count; i++)
        if (!parts[i].topic || !*parts[i].topic || parts[i].partition < 0)
            return SF_ERROR_INVALID;
    memset(&c, 0, sizeof(c));
    if (count && ra_items_of(parts, count, &c.items, &c.ntopics) != SF_OK)
        return SF_ERROR_NOMEM;
    c.nitems = count;
    c.deadline = sf_admin_deadline(a, timeout_ms);
    rc = sf_admin_controller_call(a, c.deadline, SF_PROTO_API_ListPartitionReassignments,
                                  LIST_REASSIGNMENTS_MAX, lr_encode, lr_decode, &c, &c.kerr);
    if (rc == SF_OK)
        rc = sf_client_kerr(c.kerr);
    free(c.items);
    if (rc != SF_OK) {
        sf_reassignments_destroy(c.v, c.n);
        return rc;
    }
    if (c.n)
        qsort(c.v, c.n, sizeof(*c.v), lr_cmp);
    *out = c.v;
    *n = c.n;
    return SF_OK;
}

void sf_reassignments_destroy(sf_reassignment_t *r, size_t n) {
    size_t i;
    if (!r)
        return;
    for (i = 0; i < n; i++) {
        free(r[i].topic);
        free(r[i].replicas);
        free(r[i].adding);
        free(r[i].removing);
    }
    free(r);
}

/* ---- ElectLeaders ---- */

typedef struct el_call {
    sf_topic_partition_t *parts;
    ra_item_t *items; /* sorted; NULL for every partition */
    size_t n;
    int32_t ntopics;
    int unclean;
    int64_t deadline;
    int16_t kerr;
} el_call_t;

static int el_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    el_call_t *c = arg;
    sf_proto_ElectLeadersRequest_t req;
    sf_proto_ElectLeadersRequest_TopicPartitions_t *topics = NULL;
    int32_t *ids = NULL, t = 0;
    size_t i, k = 0;
    int rc;
    sf_proto_ElectLeadersRequest_init(&req);
    req.ElectionType = (int8_t)(c->unclean ? 1 : 0);
    req.TimeoutMs = sf_admin_ms_left(c->deadline);
    req.TopicPartitionsCount = -1; /* every partition */
    if (c->items) {
        topics = calloc((size_t)c->ntopics, sizeof(*topics));
        ids = calloc(c->n, sizeof(*ids));
        if (!topics || !ids) {
            free(topics);
            free(ids);
            return SF_ERR_NOMEM;
        }
        for (i = 0; i < c->n; t++) {
            size_t run = ra_run(c->items, c->n, i);
            topics[t].Topic = sf_slice_cstr(c->items[i].topic);
            topics[t].PartitionsCount = (int32_t)run;
            topics[t].Partitions = &ids[k];
            for (; run > 0; run--, i++)
                ids[k++] = c->items[i].partition;
        }
        req.TopicPartitionsCount = c->ntopics;
        req.TopicPartitions = topics;
    }
    rc = sf_proto_ElectLeadersRequest_encode(wb, version, &req);
    free(topics);
    free(ids);
    return rc;
}

static void el_take(el_call_t *c, const sf_proto_ElectLeadersResponse_t *resp) {
    int32_t t, p;
    size_t i;
    c->kerr = resp->ErrorCode;
    for (i = 0; i < c->n; i++)
        c->parts[i].err = resp->ErrorCode ? sf_client_kerr(resp->ErrorCode)
                                          : SF_ERROR_MALFORMED; /* unless answered */
    for (t = 0; !resp->ErrorCode && t < resp->ReplicaElectionResultsCount; t++) {
        const sf_proto_ElectLeadersResponse_ReplicaElectionResult_t *rt =
            &resp->ReplicaElectionResults[t];
        for (p = 0; p < rt->PartitionResultCount; p++)
            for (i = 0; i < c->n; i++)
                if (c->parts[i].partition == rt->PartitionResult[p].PartitionId &&
                    sf_slice_eq(rt->Topic, c->parts[i].topic))
                    c->parts[i].err = sf_client_kerr(rt->PartitionResult[p].ErrorCode);
    }
}

static int el_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    el_call_t *c = arg;
    sf_proto_ElectLeadersResponse_t resp;
    sf_arena_t arena;
    int rc;
    sf_arena_init(&arena, 0);
    rc = sf_admin_decoded(sf_proto_ElectLeadersResponse_decode(body, version, &arena, &resp));
    if (rc == SF_OK)
        el_take(c, &resp);
    sf_arena_reset(&arena);
    return rc;
}

int sf_admin_elect_leaders(sf_admin_t *a, int unclean, sf_topic_partition_t *parts,
                           size_t count, int timeout_ms) {
    el_call_t c;
    size_t i;
    int rc;
    if (!a || count > INT32_MAX || (count && !parts))
        return SF_ERROR_INVALID;
    for (i = 0; i < count; i++)
        if (!parts[i].topic || !*parts[i].topic || parts[i].partition < 0)
            return SF_ERROR_INVALID;
    memset(&c, 0, sizeof(c));
    c.parts = parts;
    c.unclean = unclean;
    if (count && ra_items_of(parts, count, &c.items, &c.ntopics) != SF_OK)
        return SF_ERROR_NOMEM;
    c.n = count;
    c.deadline = sf_admin_deadline(a, timeout_ms);
    rc = sf_admin_controller_call(a, c.deadline, SF_PROTO_API_ElectLeaders, ELECT_LEADERS_MAX,
                                  el_encode, el_decode, &c, &c.kerr);
    if (rc == SF_OK)
        rc = sf_client_kerr(c.kerr);
    free(c.items);
    return rc;
}
