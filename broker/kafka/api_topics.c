/* CreateTopics, DeleteTopics and CreatePartitions: checked here, written to ZooKeeper by the
 * cluster module (topic assignment and config znodes), answered once the metadata shows them
 * (admin_op.c). */
#include "dispatch.h"

#include <stdlib.h>
#include <string.h>

#include "admin_op.h"
#include "brokercfg.h"
#include "logging.h"
#include "topiccfg.h"
#include "znode.h"

/* ---- CreateTopics ---- */

/* The partition count and replication factor the cluster module will accept, checked the
 * same way for a validate-only request as for a real one. Returns 0 after failing @it. */
static int partitions_fit(sf_kreq_t *kr, sf_cluster_t *cl, sf_admin_item_t *it, int rf) {
    char why[200];
    int rc = sf_cluster_partitions_check(cl, it->partitions, rf, why, sizeof(why));
    if (rc == SF_OK) {
        /* A validate-only request answers what the real one would: it could not be written
         * now (the real one gets REQUEST_TIMED_OUT). */
        if (it->op->validate_only && !sf_cluster_connected(cl))
            return sf_admin_fail(it, SF_KERR_REQUEST_TIMED_OUT, "ZooKeeper is not reachable");
        return 1;
    }
    return sf_admin_fail(it, rc == SF_ERR_INVALID && it->partitions >= 1 &&
                                     it->partitions <= SF_CLUSTER_MAX_PARTITIONS
                                 ? SF_KERR_INVALID_REPLICATION_FACTOR
                                 : SF_KERR_INVALID_PARTITIONS,
                         sf_kreq_printf(kr, "%s", why));
}

/* The created topic's configs for the v5+ response (KIP-525). */
static void describe_created(sf_kreq_t *kr, const sf_cluster_topic_t *t,
                             sf_proto_CreateTopicsResponse_CreatableTopicResult_t *rt) {
    size_t n, i;
    const sf_topiccfg_def_t *defs = sf_topiccfg_all(&n);
    rt->Configs = sf_kreq_alloc(kr, n, sizeof(*rt->Configs));
    if (!rt->Configs)
        return;
    rt->ConfigsCount = (int32_t)n;
    for (i = 0; i < n; i++) {
        sf_topiccfg_value_t v;
        sf_proto_CreateTopicsResponse_CreatableTopicConfigs_t *c = &rt->Configs[i];
        sf_proto_CreateTopicsResponse_CreatableTopicConfigs_init(c);
        sf_topiccfg_resolve(sf_kreq_topiccfg(kr), t, &defs[i], &v, 1);
        c->Name = sf_slice_cstr(defs[i].name);
        c->Value = sf_kreq_slice(kr, v.value);
        c->ConfigSource = (int8_t)(v.source == SF_CFGSRC_TOPIC ? SF_CFGSRC_TOPIC : v.source);
    }
}

static void create_respond(sf_admin_op_t *op) {
    sf_kreq_t *kr = op->kr;
    sf_proto_CreateTopicsResponse_t resp;
    int i;
    sf_proto_CreateTopicsResponse_init(&resp);
    /* On the heap: the request arena may be used up by now. */
    resp.Topics = calloc((size_t)op->nitems + 1, sizeof(*resp.Topics));
    if (!resp.Topics) {
        sf_kreq_close(kr, "no memory for the response");
        return;
    }
    resp.TopicsCount = op->nitems;
    for (i = 0; i < op->nitems; i++) {
        const sf_admin_item_t *it = &op->items[i];
        sf_proto_CreateTopicsResponse_CreatableTopicResult_t *rt = &resp.Topics[i];
        const sf_cluster_topic_t *t = it->error ? NULL : sf_kreq_topic(kr, it->topic);
        sf_proto_CreateTopicsResponse_CreatableTopicResult_init(rt);
        rt->Name = sf_slice_cstr(it->topic ? it->topic : "");
        rt->ErrorCode = it->error;
        rt->ErrorMessage = sf_slice_cstr(it->message);
        if (it->error)
            continue;
        rt->NumPartitions = it->partitions;
        rt->ReplicationFactor = it->replication_factor;
        if (t) {
            memcpy(rt->TopicId.b, t->topic_id, sizeof(rt->TopicId.b));
            if (kr->version >= 5)
                describe_created(kr, t, rt);
        }
    }
    sf_kreq_respond(kr, &resp);
    free(resp.Topics);
}

/* The replica lists of a manual assignment, partition-major, into *@out (arena). */
static int manual_assignment(sf_kreq_t *kr, const sf_proto_CreateTopicsRequest_CreatableTopic_t *ct,
                             sf_admin_item_t *it, int32_t **out) {
    int32_t np = ct->AssignmentsCount, j, k;
    int16_t rf = (int16_t)ct->Assignments[0].BrokerIdsCount;
    int32_t *a;
    size_t z;
    if (ct->NumPartitions != -1 || ct->ReplicationFactor != -1)
        return sf_admin_fail(it, SF_KERR_INVALID_REQUEST,
                             "give either an assignment or partitions and replication factor");
    if (rf <= 0 || !(a = sf_kreq_alloc(kr, (size_t)np * (size_t)rf, sizeof(int32_t))))
        return sf_admin_fail(it, SF_KERR_INVALID_REPLICA_ASSIGNMENT, "empty replica list");
    /* -1: no replica list yet, so a partition given twice (and one left out) is seen. */
    for (z = 0; z < (size_t)np * (size_t)rf; z++)
        a[z] = -1;
    for (j = 0; j < np; j++) {
        const sf_proto_CreateTopicsRequest_CreatableReplicaAssignment_t *as = &ct->Assignments[j];
        if (as->PartitionIndex < 0 || as->PartitionIndex >= np || as->BrokerIdsCount != rf ||
            a[(size_t)as->PartitionIndex * (size_t)rf] != -1)
            return sf_admin_fail(it, SF_KERR_INVALID_REPLICA_ASSIGNMENT,
                                 "partitions must be numbered 0..n-1 with replica lists of one "
                                 "length");
        for (k = 0; k < rf; k++) {
            if (!kr->snap || !sf_cluster_snapshot_broker(kr->snap, as->BrokerIds[k]))
                return sf_admin_fail(it, SF_KERR_INVALID_REPLICA_ASSIGNMENT,
                                     "the assignment names a broker that is not registered");
            a[(size_t)as->PartitionIndex * (size_t)rf + (size_t)k] = as->BrokerIds[k];
        }
    }
    it->partitions = np;
    it->replication_factor = rf;
    *out = a;
    return 1;
}

/* Check the configs of a new topic into *@out (arena). */
static int create_configs(sf_kreq_t *kr, const sf_proto_CreateTopicsRequest_CreatableTopic_t *ct,
                          sf_admin_item_t *it, sf_cluster_config_entry_t **out) {
    sf_cluster_config_entry_t *cfgs;
    int j;
    if (ct->ConfigsCount <= 0)
        return 1;
    if (!(cfgs = sf_kreq_alloc(kr, (size_t)ct->ConfigsCount, sizeof(*cfgs))))
        return sf_admin_fail(it, SF_KERR_UNKNOWN_SERVER_ERROR, NULL);
    for (j = 0; j < ct->ConfigsCount; j++) {
        const sf_topiccfg_def_t *def;
        char why[160], *norm;
        cfgs[j].name = sf_kreq_str(kr, ct->Configs[j].Name);
        cfgs[j].value = sf_kreq_str(kr, ct->Configs[j].Value);
        if (!cfgs[j].name || !(def = sf_topiccfg_find(cfgs[j].name)))
            return sf_admin_fail(it, SF_KERR_INVALID_CONFIG,
                                 sf_kreq_printf(kr, "unknown topic config %.200s",
                                                cfgs[j].name ? cfgs[j].name : "(null)"));
        if (!cfgs[j].value)
            return sf_admin_fail(it, SF_KERR_INVALID_CONFIG,
                                 sf_kreq_printf(kr, "null value for %s", cfgs[j].name));
        if (!sf_topiccfg_validate(def, cfgs[j].value, why, sizeof(why)))
            return sf_admin_fail(it, SF_KERR_INVALID_CONFIG,
                                 sf_kreq_printf(kr, "invalid value \"%.100s\" for %s: %s",
                                                cfgs[j].value, cfgs[j].name, why));
        if ((norm = sf_kreq_alloc(kr, strlen(cfgs[j].value) + 1, 1)))
            cfgs[j].value = (char *)sf_topiccfg_normalize(def, cfgs[j].value, norm,
                                                          strlen(cfgs[j].value) + 1);
    }
    *out = cfgs;
    return 1;
}

static void create_one(sf_kreq_t *kr, const sf_proto_CreateTopicsRequest_t *creq,
                       const sf_proto_CreateTopicsRequest_CreatableTopic_t *ct, int dup,
                       sf_admin_item_t *it) {
    const sf_brokercfg_t *cfg = sf_broker_cfg(kr->b);
    sf_cluster_t *cl = sf_broker_cluster(kr->b);
    sf_cluster_config_entry_t *configs = NULL;
    int32_t *assignment = NULL;

    if (!it->topic || !sf_znode_topic_name_valid(it->topic)) {
        sf_admin_fail(it, SF_KERR_INVALID_TOPIC_EXCEPTION,
                      "topic names are 1 to 249 characters of [a-zA-Z0-9._-], not . or ..");
        return;
    }
    if (sf_topiccfg_name_reserved(it->topic)) {
        sf_admin_fail(it, SF_KERR_INVALID_REQUEST, "the name is reserved for a Kafka internal topic");
        return;
    }
    if (dup) {
        sf_admin_fail(it, SF_KERR_INVALID_REQUEST, "the topic is named more than once in the request");
        return;
    }
    if (!cl) {
        sf_admin_fail(it, SF_KERR_NOT_CONTROLLER, "the broker is not registered in ZooKeeper yet");
        return;
    }
    if (sf_kreq_topic(kr, it->topic)) {
        sf_admin_fail(it, SF_KERR_TOPIC_ALREADY_EXISTS, "the topic already exists");
        return;
    }
    if (ct->AssignmentsCount > 0) {
        if (!manual_assignment(kr, ct, it, &assignment))
            return;
    } else {
        it->partitions = ct->NumPartitions == -1 ? cfg->num_partitions : ct->NumPartitions;
        it->replication_factor = ct->ReplicationFactor == -1
                                     ? (int16_t)cfg->default_replication_factor
                                     : ct->ReplicationFactor;
        if (it->partitions <= 0) {
            sf_admin_fail(it, SF_KERR_INVALID_PARTITIONS, "the number of partitions must be at least 1");
            return;
        }
        if (it->replication_factor <= 0 || !kr->snap ||
            it->replication_factor > kr->snap->nbrokers) {
            sf_admin_fail(it, SF_KERR_INVALID_REPLICATION_FACTOR,
                          "the replication factor is larger than the number of live brokers");
            return;
        }
    }
    if (!partitions_fit(kr, cl, it, it->replication_factor))
        return;
    if (!create_configs(kr, ct, it, &configs) || creq->ValidateOnly)
        return;
    sf_admin_started(it, sf_cluster_topic_create(cl, it->topic, it->partitions,
                                                 it->replication_factor, assignment, configs,
                                                 ct->ConfigsCount > 0 ? ct->ConfigsCount : 0,
                                                 sf_admin_done, it));
}

void sf_kapi_CreateTopics(sf_kreq_t *kr, void *msg) {
    const sf_proto_CreateTopicsRequest_t *creq = msg;
    sf_admin_op_t *op = sf_admin_op_new(kr, SF_ADMIN_CREATE, creq->TopicsCount, create_respond);
    sf_admin_key_t *keys = calloc((size_t)creq->TopicsCount + 1, sizeof(*keys));
    char *dup = calloc((size_t)creq->TopicsCount + 1, 1);
    int i;
    if (!op || !keys || !dup) {
        free(keys);
        free(dup);
        if (op)
            sf_admin_op_free(op);
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    op->validate_only = creq->ValidateOnly;
    for (i = 0; i < creq->TopicsCount; i++) {
        op->items[i].topic = sf_admin_name_dup(creq->Topics[i].Name);
        keys[i].name = sf_slice_cstr(op->items[i].topic);
        keys[i].idx = i;
    }
    sf_admin_find_dups(keys, creq->TopicsCount, dup);
    for (i = 0; i < creq->TopicsCount; i++)
        create_one(kr, creq, &creq->Topics[i], dup[i], &op->items[i]);
    free(keys);
    free(dup);
    sf_admin_run(op, creq->TimeoutMs);
}

/* ---- DeleteTopics ---- */

static void delete_respond(sf_admin_op_t *op) {
    sf_proto_DeleteTopicsResponse_t resp;
    int i;
    sf_proto_DeleteTopicsResponse_init(&resp);
    resp.Responses = calloc((size_t)op->nitems + 1, sizeof(*resp.Responses));
    if (!resp.Responses) {
        sf_kreq_close(op->kr, "no memory for the response");
        return;
    }
    resp.ResponsesCount = op->nitems;
    for (i = 0; i < op->nitems; i++) {
        const sf_admin_item_t *it = &op->items[i];
        sf_proto_DeleteTopicsResponse_DeletableTopicResult_t *rt = &resp.Responses[i];
        sf_proto_DeleteTopicsResponse_DeletableTopicResult_init(rt);
        rt->Name = sf_slice_cstr(op->kr->version >= 6 ? it->topic : it->topic ? it->topic : "");
        rt->ErrorCode = it->error;
        rt->ErrorMessage = sf_slice_cstr(it->message);
        if (it->resource_name.len == 16)
            memcpy(rt->TopicId.b, it->resource_name.p, 16);
    }
    sf_kreq_respond(op->kr, &resp);
    free(resp.Responses);
}

void sf_kapi_DeleteTopics(sf_kreq_t *kr, void *msg) {
    const sf_proto_DeleteTopicsRequest_t *dreq = msg;
    const sf_brokercfg_t *cfg = sf_broker_cfg(kr->b);
    sf_cluster_t *cl = sf_broker_cluster(kr->b);
    int n = kr->version >= 6 ? dreq->TopicsCount : dreq->TopicNamesCount, i;
    sf_admin_op_t *op = sf_admin_op_new(kr, SF_ADMIN_DELETE, n, delete_respond);
    if (!op) {
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    for (i = 0; i < n; i++) {
        sf_admin_item_t *it = &op->items[i];
        if (kr->version >= 6) {
            const sf_proto_DeleteTopicsRequest_DeleteTopicState_t *ts = &dreq->Topics[i];
            const sf_cluster_topic_t *t = ts->Name.len < 0 ? sf_kreq_topic_by_id(kr, &ts->TopicId)
                                                           : NULL;
            it->topic = t ? strdup(t->name) : sf_admin_name_dup(ts->Name);
            it->resource_name.p = ts->TopicId.b; /* answered with the id it was asked by */
            it->resource_name.len = 16;
            if (!it->topic) {
                sf_admin_fail(it, SF_KERR_UNKNOWN_TOPIC_ID, "no topic has that id");
                continue;
            }
        } else if (!(it->topic = sf_admin_name_dup(dreq->TopicNames[i]))) {
            sf_admin_fail(it, SF_KERR_INVALID_REQUEST, "null topic name");
            continue;
        }
        if (!cfg->delete_topic_enable)
            sf_admin_fail(it, SF_KERR_TOPIC_DELETION_DISABLED, "delete.topic.enable is false");
        else if (!cl)
            sf_admin_fail(it, SF_KERR_NOT_CONTROLLER, "the broker is not registered in ZooKeeper yet");
        else if (!sf_kreq_topic(kr, it->topic))
            sf_admin_fail(it, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION, "the topic does not exist");
        else
            sf_admin_started(it, sf_cluster_topic_delete(cl, it->topic, sf_admin_done, it));
    }
    sf_admin_run(op, dreq->TimeoutMs);
}

/* ---- CreatePartitions ---- */

static void partitions_respond(sf_admin_op_t *op) {
    sf_proto_CreatePartitionsResponse_t resp;
    int i;
    sf_proto_CreatePartitionsResponse_init(&resp);
    resp.Results = calloc((size_t)op->nitems + 1, sizeof(*resp.Results));
    if (!resp.Results) {
        sf_kreq_close(op->kr, "no memory for the response");
        return;
    }
    resp.ResultsCount = op->nitems;
    for (i = 0; i < op->nitems; i++) {
        sf_proto_CreatePartitionsResponse_CreatePartitionsTopicResult_init(&resp.Results[i]);
        resp.Results[i].Name = sf_slice_cstr(op->items[i].topic ? op->items[i].topic : "");
        resp.Results[i].ErrorCode = op->items[i].error;
        resp.Results[i].ErrorMessage = sf_slice_cstr(op->items[i].message);
    }
    sf_kreq_respond(op->kr, &resp);
    free(resp.Results);
}

/* The replica lists of the new partitions, partition-major, into *@out (arena). */
static int new_assignment(sf_kreq_t *kr, const sf_proto_CreatePartitionsRequest_CreatePartitionsTopic_t *ct,
                          const sf_cluster_topic_t *t, sf_admin_item_t *it, int32_t **out) {
    int rf = t->npartitions ? t->partitions[0].nreplicas : 1, j, k;
    int32_t *a;
    if (ct->AssignmentsCount != ct->Count - t->npartitions)
        return sf_admin_fail(it, SF_KERR_INVALID_REPLICA_ASSIGNMENT,
                             "give one replica list per new partition");
    if (!(a = sf_kreq_alloc(kr, (size_t)ct->AssignmentsCount * (size_t)rf, sizeof(int32_t))))
        return sf_admin_fail(it, SF_KERR_UNKNOWN_SERVER_ERROR, NULL);
    for (j = 0; j < ct->AssignmentsCount; j++) {
        if (ct->Assignments[j].BrokerIdsCount != rf)
            return sf_admin_fail(it, SF_KERR_INVALID_REPLICA_ASSIGNMENT,
                                 "each replica list must have the topic's replication factor");
        for (k = 0; k < rf; k++)
            a[(size_t)j * (size_t)rf + (size_t)k] = ct->Assignments[j].BrokerIds[k];
    }
    *out = a;
    return 1;
}

/* 1 if a partition of @t is being reassigned (Kafka refuses to add partitions then). */
static int reassigning(const sf_cluster_topic_t *t) {
    int p;
    for (p = 0; p < t->npartitions; p++)
        if (sf_cluster_partition_reassigning(&t->partitions[p]))
            return 1;
    return 0;
}

void sf_kapi_CreatePartitions(sf_kreq_t *kr, void *msg) {
    const sf_proto_CreatePartitionsRequest_t *creq = msg;
    sf_cluster_t *cl = sf_broker_cluster(kr->b);
    sf_admin_op_t *op = sf_admin_op_new(kr, SF_ADMIN_PARTITIONS, creq->TopicsCount,
                                        partitions_respond);
    int i;
    if (!op) {
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    op->validate_only = creq->ValidateOnly;
    for (i = 0; i < creq->TopicsCount; i++) {
        const sf_proto_CreatePartitionsRequest_CreatePartitionsTopic_t *ct = &creq->Topics[i];
        sf_admin_item_t *it = &op->items[i];
        const sf_cluster_topic_t *t;
        int32_t *assignment = NULL;
        it->topic = sf_admin_name_dup(ct->Name);
        it->partitions = ct->Count;
        if (!it->topic) {
            sf_admin_fail(it, SF_KERR_INVALID_REQUEST, "null topic name");
        } else if (!(t = sf_kreq_topic(kr, it->topic))) {
            sf_admin_fail(it, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION, "the topic does not exist");
        } else if (ct->Count <= t->npartitions) {
            sf_admin_fail(it, SF_KERR_INVALID_PARTITIONS,
                          sf_kreq_printf(kr, "the topic has %d partitions; the new count must be "
                                             "larger", t->npartitions));
        } else if (reassigning(t)) {
            sf_admin_fail(it, SF_KERR_REASSIGNMENT_IN_PROGRESS,
                          "a reassignment of the topic's partitions is in progress");
        } else if (!cl) {
            sf_admin_fail(it, SF_KERR_NOT_CONTROLLER, "the broker is not registered in ZooKeeper yet");
        } else if (!partitions_fit(kr, cl, it, t->npartitions ? t->partitions[0].nreplicas : 1)) {
            continue;
        } else if ((ct->AssignmentsCount <= 0 || new_assignment(kr, ct, t, it, &assignment)) &&
                   !creq->ValidateOnly) {
            sf_admin_started(it, sf_cluster_partitions_add(cl, it->topic, ct->Count, assignment,
                                                           sf_admin_done, it));
        }
    }
    sf_admin_run(op, creq->TimeoutMs);
}
