/* The admin client: topics, partitions, configs and cluster metadata, each a blocking call
 * (sf_client_call) on a client whose role has no hooks. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adminapi.h"
#include "arena.h"
#include "client.h"
#include "clientconf.h"
#include "clock.h"
#include "coord.h"
#include "err.h"
#include "proto.h"
#include "streamflow.h"

/* Highest versions this client speaks (all non-flexible except IncrementalAlterConfigs v1). */
#define ADMIN_METADATA_MAX 8
#define ADMIN_CREATETOPICS_MAX 5 /* v5: the answer says what was made */
#define ADMIN_DELETETOPICS_MAX 3
#define ADMIN_CREATEPARTITIONS_MAX 1
#define ADMIN_DESCRIBECONFIGS_MAX 3
#define ADMIN_INCALTERCONFIGS_MAX 1

/* ConfigResource types. */
#define ADMIN_RESOURCE_TOPIC 2
#define ADMIN_RESOURCE_BROKER 4

struct sf_admin {
    sf_client_t *cl;
};

sf_admin_t *sf_admin_new(const sf_conf_t *conf, char *errstr, size_t errstr_size) {
    sf_admin_t *a;
    sf_client_role_t role;

    if (errstr != NULL && errstr_size > 0)
        errstr[0] = '\0';
    if (conf == NULL) {
        if (errstr != NULL && errstr_size > 0)
            snprintf(errstr, errstr_size, "no configuration given");
        return NULL;
    }
    a = calloc(1, sizeof *a);
    if (a == NULL) {
        if (errstr != NULL && errstr_size > 0)
            snprintf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    /* Every admin operation is a synchronous call: the role has no hooks. */
    memset(&role, 0, sizeof role);
    role.self = a;
    a->cl = sf_client_new(conf, &role, 1, errstr, errstr_size);
    if (a->cl == NULL) {
        free(a);
        return NULL;
    }
    return a;
}

void sf_admin_destroy(sf_admin_t *a) {
    if (a == NULL)
        return;
    sf_client_destroy(a->cl);
    free(a);
}

/* ------------------------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------------------------ */

sf_client_t *sf_admin_client(sf_admin_t *a) {
    return a->cl;
}

int sf_admin_timeout(sf_admin_t *a, int timeout_ms) {
    const sf_clientconf_t *cc;

    if (timeout_ms > 0)
        return timeout_ms;
    cc = sf_client_conf(a->cl);
    return cc != NULL && cc->request_timeout_ms > 0 ? cc->request_timeout_ms : 30000;
}

int64_t sf_admin_deadline(sf_admin_t *a, int timeout_ms) {
    return sf_clock_mono_ms() + sf_admin_timeout(a, timeout_ms);
}

int sf_admin_ms_left(int64_t deadline) {
    return sf_coord_ms_left(deadline);
}

void sf_admin_backoff(sf_admin_t *a, int64_t deadline) {
    sf_coord_backoff(a->cl, deadline);
}

int sf_admin_decoded(int rc) {
    return rc == SF_OK || rc == SF_ERR_NOMEM ? rc : SF_ERROR_MALFORMED;
}

/* A malloc'd copy of @s in *@out (NULL for a null slice). Returns SF_OK or SF_ERROR_NOMEM. */
static int admin_strdup(sf_slice_t s, char **out) {
    *out = NULL;
    if (s.len < 0 || s.p == NULL)
        return s.len <= 0 ? SF_OK : SF_ERROR_MALFORMED;
    *out = sf_slice_strdup(s);
    return *out != NULL ? SF_OK : SF_ERROR_NOMEM;
}

/* Copy a broker's ErrorMessage into the caller's @errstr (cleared when there is none). */
static void admin_errstr(char *errstr, size_t size, const char *msg) {
    if (errstr == NULL || size == 0)
        return;
    errstr[0] = '\0';
    if (msg != NULL)
        snprintf(errstr, size, "%s", msg);
}

/* The outcome of decoding a response body: any codec failure but running out of memory means
 * the response is malformed. */
/* Whether each of the @n configs @kvs has a name; else @errstr says it and this returns
 * SF_ERROR_INVALID. */
static int admin_configs_named(const sf_config_kv_t *kvs, size_t n, char *errstr,
                               size_t errstr_size) {
    size_t i;

    for (i = 0; i < n; i++) {
        if (kvs[i].name == NULL || kvs[i].name[0] == '\0') {
            admin_errstr(errstr, errstr_size, "a config without a name");
            return SF_ERROR_INVALID;
        }
    }
    return SF_OK;
}

/* The broker a BROKER resource named @name is sent to: a decimal id is that broker (each
 * broker describes and changes its own configs), "" (the cluster-wide default) any broker.
 * Returns SF_OK, or SF_ERROR_INVALID when @name is neither. */
static int admin_broker_target(const char *name, int32_t *target) {
    char *end;
    long id;

    if (*name == '\0') {
        *target = SF_CLIENT_ANY_BROKER;
        return SF_OK;
    }
    id = strtol(name, &end, 10);
    if (*end != '\0' || *name < '0' || *name > '9' || id < 0 || id > INT32_MAX)
        return SF_ERROR_INVALID;
    *target = (int32_t)id;
    return SF_OK;
}

/* @rc of a request sent to broker @target, with the transport error the core gives for a
 * broker the metadata does not list told apart from a broker that is down: SF_ERROR_NOTFOUND. */
static int admin_broker_rc(sf_admin_t *a, int32_t target, int rc) {
    int known = 0;

    if (rc != SF_ERROR_TRANSPORT || target < 0)
        return rc;
    sf_client_lock(a->cl);
    if (sf_client_broker(a->cl, target) == NULL && sf_client_brokers(a->cl, &known) != NULL &&
        known > 0)
        rc = SF_ERROR_NOTFOUND;
    sf_client_unlock(a->cl);
    return rc;
}

/* The state of a call that targets one topic and learns one error code and message. */
typedef struct admin_topic_op {
    const char *topic;
    int32_t count;          /* partitions (create / create partitions) */
    int16_t replication;    /* create */
    const int32_t *replicas; /* create: count x replication broker ids, or NULL */
    int validate_only;      /* create */
    const sf_config_kv_t *configs;
    size_t config_count;
    int64_t deadline;       /* of the call; the request body's TimeoutMs is what is left */
    int8_t resource_type;   /* alter configs: ADMIN_RESOURCE_TOPIC or _BROKER */
    /* result */
    int32_t created_count;      /* create: the partitions and replicas made (v5+), else -1 */
    int16_t created_replication;
    int16_t ErrorCode;
    char *ErrorMessage;     /* malloc'd, NULL if none */
} admin_topic_op_t;

int sf_admin_controller_call(sf_admin_t *a, int64_t deadline, int16_t api, int16_t max_version,
                             sf_client_encode_fn enc, sf_client_decode_fn dec, void *arg,
                             int16_t *kerr) {
    for (;;) {
        int left = sf_admin_ms_left(deadline), rc;
        if (left <= 0)
            return SF_ERROR_TIMED_OUT;
        *kerr = 0;
        rc = sf_client_call(a->cl, SF_CLIENT_CONTROLLER, api, max_version, enc, dec, arg, left);
        if (rc != SF_OK || *kerr != SF_KERR_NOT_CONTROLLER)
            return rc;
        /* The controller moved since the last metadata: learn the new one and try again. */
        sf_client_lock(a->cl);
        sf_client_metadata_stale(a->cl);
        sf_client_unlock(a->cl);
        sf_admin_backoff(a, deadline);
    }
}

/* Send a request for one topic to @target and return the transport error or the topic's
 * error as a library code; @errstr receives the broker's message. For the controller
 * (SF_CLIENT_CONTROLLER) the request follows NOT_CONTROLLER (sf_admin_controller_call).
 * Frees op->ErrorMessage before returning. */
static int admin_topic_call(sf_admin_t *a, int32_t target, int16_t api_key, int16_t max_version,
                            sf_client_encode_fn enc, sf_client_decode_fn dec,
                            admin_topic_op_t *op, int timeout_ms, char *errstr,
                            size_t errstr_size) {
    int rc;

    admin_errstr(errstr, errstr_size, NULL);
    op->deadline = sf_admin_deadline(a, timeout_ms);
    op->ErrorCode = 0;
    if (target == SF_CLIENT_CONTROLLER)
        rc = sf_admin_controller_call(a, op->deadline, api_key, max_version, enc, dec, op,
                                      &op->ErrorCode);
    else
        rc = sf_client_call(a->cl, target, api_key, max_version, enc, dec, op,
                            sf_admin_ms_left(op->deadline));
    if (rc == SF_OK) {
        admin_errstr(errstr, errstr_size, op->ErrorMessage);
        rc = sf_client_kerr(op->ErrorCode);
    }
    free(op->ErrorMessage);
    op->ErrorMessage = NULL;
    return rc;
}

/* Decode the response body @body of message @Msg (sf_proto_@Msg_decode) into @resp with an
 * arena of its own, then evaluate @then (an int: SF_OK or an error) while the arena holds
 * what @resp points to. Yields SF_OK or a library error. */
#define ADMIN_DECODE(Msg, body, version, resp, then)                                           \
    ({                                                                                         \
        sf_arena_t _arena;                                                                     \
        int _rc;                                                                               \
        sf_arena_init(&_arena, 0);                                                             \
        _rc = sf_admin_decoded(sf_proto_##Msg##_decode((body), (version), &_arena, &(resp)));     \
        if (_rc == SF_OK)                                                                      \
            _rc = (then);                                                                      \
        sf_arena_reset(&_arena);                                                               \
        _rc;                                                                                   \
    })

/* The index of the element of @arr (@n of them) whose slice @field equals @topic, or -1. */
#define ADMIN_FIND(arr, n, field, topic)                                                       \
    ({                                                                                         \
        int32_t _i, _found = -1;                                                               \
        for (_i = 0; _i < (n); _i++)                                                           \
            if (sf_slice_eq((arr)[_i].field, (topic))) {                                       \
                _found = _i;                                                                   \
                break;                                                                         \
            }                                                                                  \
        _found;                                                                                \
    })

/* Record @op's answer: @code and a copy of @msg. Returns SF_OK or SF_ERROR_NOMEM. */
static int admin_topic_result(admin_topic_op_t *op, int16_t code, sf_slice_t msg) {
    op->ErrorCode = code;
    free(op->ErrorMessage); /* of an earlier NOT_CONTROLLER answer */
    return admin_strdup(msg, &op->ErrorMessage);
}

/* Record @op's answer from the element of @arr (@n of them, each with Name, ErrorCode and
 * ErrorMessage) named @op->topic; SF_ERROR_MALFORMED when there is none. */
#define ADMIN_TOPIC_RESULT(op, arr, n)                                                         \
    ({                                                                                         \
        int32_t _at = ADMIN_FIND(arr, n, Name, (op)->topic);                                   \
        _at < 0 ? SF_ERROR_MALFORMED                                                           \
                : admin_topic_result((op), (arr)[_at].ErrorCode, (arr)[_at].ErrorMessage);     \
    })

/* ------------------------------------------------------------------------------------------
 * Metadata
 * ------------------------------------------------------------------------------------------ */

typedef struct admin_describe {
    const char *const *topics;
    size_t topic_count;
    sf_cluster_info_t *info;
} admin_describe_t;

static int admin_metadata_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    admin_describe_t *d = arg;
    sf_proto_MetadataRequest_t req;
    sf_proto_MetadataRequest_MetadataRequestTopic_t *topics = NULL;
    size_t i;
    int rc;

    memset(&req, 0, sizeof req);
    if (d->topic_count > 0) {
        topics = calloc(d->topic_count, sizeof *topics);
        if (topics == NULL)
            return SF_ERR_NOMEM;
        for (i = 0; i < d->topic_count; i++)
            topics[i].Name = sf_slice_cstr(d->topics[i]);
        req.TopicsCount = (int32_t)d->topic_count;
        req.Topics = topics;
    } else {
        req.TopicsCount = -1; /* all topics */
    }
    /* Describing must never create: v4+ says so; older versions cannot. */
    req.AllowAutoTopicCreation = false;
    rc = sf_proto_MetadataRequest_encode(wb, version, &req);
    free(topics);
    return rc;
}

static int admin_cmp_broker(const void *x, const void *y) {
    const sf_broker_info_t *a = x, *b = y;
    return a->id < b->id ? -1 : a->id > b->id;
}

static int admin_cmp_topic(const void *x, const void *y) {
    const sf_topic_info_t *a = x, *b = y;
    return strcmp(a->name, b->name);
}

static int admin_cmp_partition(const void *x, const void *y) {
    const sf_partition_info_t *a = x, *b = y;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* A malloc'd copy of @n int32s (NULL when @n is 0). */
static int admin_ids_dup(const int32_t *ids, int32_t n, int32_t **out, size_t *count) {
    *out = NULL;
    *count = 0;
    if (n <= 0)
        return SF_OK;
    *out = malloc((size_t)n * sizeof **out);
    if (*out == NULL)
        return SF_ERROR_NOMEM;
    memcpy(*out, ids, (size_t)n * sizeof **out);
    *count = (size_t)n;
    return SF_OK;
}

static int admin_metadata_copy(const sf_proto_MetadataResponse_t *resp,
                               sf_cluster_info_t **out) {
    sf_cluster_info_t *info;
    int32_t i, j;
    int rc;

    info = calloc(1, sizeof *info);
    if (info == NULL)
        return SF_ERROR_NOMEM;
    info->controller_id = resp->ControllerId;
    if ((rc = admin_strdup(resp->ClusterId, &info->cluster_id)) != SF_OK)
        goto err;
    if (resp->BrokersCount > 0) {
        info->brokers = calloc((size_t)resp->BrokersCount, sizeof *info->brokers);
        if (info->brokers == NULL)
            goto nomem;
        for (i = 0; i < resp->BrokersCount; i++) {
            const sf_proto_MetadataResponse_MetadataResponseBroker_t *pb = &resp->Brokers[i];
            sf_broker_info_t *b = &info->brokers[info->broker_count++];

            b->id = pb->NodeId;
            b->port = pb->Port;
            if ((rc = admin_strdup(pb->Host, &b->host)) != SF_OK)
                goto err;
            if (b->host == NULL && (b->host = strdup("")) == NULL)
                goto nomem;
            if ((rc = admin_strdup(pb->Rack, &b->rack)) != SF_OK)
                goto err;
        }
        if (info->broker_count > 1)
            qsort(info->brokers, info->broker_count, sizeof *info->brokers, admin_cmp_broker);
    }
    if (resp->TopicsCount > 0) {
        info->topics = calloc((size_t)resp->TopicsCount, sizeof *info->topics);
        if (info->topics == NULL)
            goto nomem;
        for (i = 0; i < resp->TopicsCount; i++) {
            const sf_proto_MetadataResponse_MetadataResponseTopic_t *pt = &resp->Topics[i];
            sf_topic_info_t *t = &info->topics[info->topic_count++];

            t->err = sf_client_kerr(pt->ErrorCode);
            t->internal = pt->IsInternal;
            if ((rc = admin_strdup(pt->Name, &t->name)) != SF_OK)
                goto err;
            if (t->name == NULL && (t->name = strdup("")) == NULL)
                goto nomem;
            if (pt->PartitionsCount <= 0)
                continue;
            t->partitions = calloc((size_t)pt->PartitionsCount, sizeof *t->partitions);
            if (t->partitions == NULL)
                goto nomem;
            for (j = 0; j < pt->PartitionsCount; j++) {
                const sf_proto_MetadataResponse_MetadataResponsePartition_t *pp = &pt->Partitions[j];
                sf_partition_info_t *p = &t->partitions[t->partition_count++];

                p->id = pp->PartitionIndex;
                p->leader = pp->LeaderId;
                p->leader_epoch = pp->LeaderEpoch;
                p->err = sf_client_kerr(pp->ErrorCode);
                if ((rc = admin_ids_dup(pp->ReplicaNodes, pp->ReplicaNodesCount, &p->replicas,
                                        &p->replica_count)) != SF_OK)
                    goto err;
                if ((rc = admin_ids_dup(pp->IsrNodes, pp->IsrNodesCount, &p->isr,
                                        &p->isr_count)) != SF_OK)
                    goto err;
            }
            if (t->partition_count > 1)
                qsort(t->partitions, t->partition_count, sizeof *t->partitions,
                      admin_cmp_partition);
        }
        if (info->topic_count > 1)
            qsort(info->topics, info->topic_count, sizeof *info->topics, admin_cmp_topic);
    }
    *out = info;
    return SF_OK;
nomem:
    rc = SF_ERROR_NOMEM;
err:
    sf_cluster_info_destroy(info);
    return rc;
}

static int admin_metadata_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    admin_describe_t *d = arg;
    sf_proto_MetadataResponse_t resp;

    return ADMIN_DECODE(MetadataResponse, body, version, resp,
                        admin_metadata_copy(&resp, &d->info));
}

int sf_admin_describe_cluster(sf_admin_t *a, const char *const *topics, size_t topic_count,
                              int timeout_ms, sf_cluster_info_t **out) {
    admin_describe_t d;
    size_t i;
    int rc;

    if (out != NULL)
        *out = NULL;
    if (a == NULL || out == NULL || (topic_count > 0 && topics == NULL) ||
        topic_count > INT32_MAX)
        return SF_ERROR_INVALID;
    for (i = 0; i < topic_count; i++)
        if (topics[i] == NULL)
            return SF_ERROR_INVALID;
    memset(&d, 0, sizeof d);
    d.topics = topics;
    d.topic_count = topic_count;
    rc = sf_client_call(a->cl, SF_CLIENT_ANY_BROKER, SF_PROTO_API_Metadata, ADMIN_METADATA_MAX,
                        admin_metadata_encode, admin_metadata_decode, &d,
                        sf_admin_timeout(a, timeout_ms));
    if (rc != SF_OK) {
        sf_cluster_info_destroy(d.info);
        return rc;
    }
    *out = d.info;
    return SF_OK;
}

void sf_cluster_info_destroy(sf_cluster_info_t *info) {
    size_t i, j;

    if (info == NULL)
        return;
    for (i = 0; i < info->broker_count; i++) {
        free(info->brokers[i].host);
        free(info->brokers[i].rack);
    }
    free(info->brokers);
    for (i = 0; i < info->topic_count; i++) {
        sf_topic_info_t *t = &info->topics[i];
        for (j = 0; j < t->partition_count; j++) {
            free(t->partitions[j].replicas);
            free(t->partitions[j].isr);
        }
        free(t->partitions);
        free(t->name);
    }
    free(info->topics);
    free(info->cluster_id);
    free(info);
}

/* ------------------------------------------------------------------------------------------
 * CreateTopics
 * ------------------------------------------------------------------------------------------ */

static int admin_create_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    admin_topic_op_t *op = arg;
    sf_proto_CreateTopicsRequest_t req;
    sf_proto_CreateTopicsRequest_CreatableTopic_t topic;
    sf_proto_CreateTopicsRequest_CreatableTopicConfig_t *configs = NULL;
    sf_proto_CreateTopicsRequest_CreatableReplicaAssignment_t *assignments = NULL;
    size_t i;
    int rc;

    memset(&req, 0, sizeof req);
    memset(&topic, 0, sizeof topic);
    topic.Name = sf_slice_cstr(op->topic);
    topic.NumPartitions = op->count;
    topic.ReplicationFactor = op->replication;
    if (op->replicas) {
        /* With explicit assignments the count and factor are -1 (Kafka's rule). */
        if (!(assignments = calloc((size_t)op->count, sizeof *assignments)))
            return SF_ERR_NOMEM;
        for (i = 0; i < (size_t)op->count; i++) {
            assignments[i].PartitionIndex = (int32_t)i;
            assignments[i].BrokerIdsCount = op->replication;
            assignments[i].BrokerIds = (int32_t *)op->replicas + i * (size_t)op->replication;
        }
        topic.AssignmentsCount = op->count;
        topic.Assignments = assignments;
        topic.NumPartitions = -1;
        topic.ReplicationFactor = -1;
    }
    if (op->config_count > 0) {
        configs = calloc(op->config_count, sizeof *configs);
        if (configs == NULL) {
            free(assignments);
            return SF_ERR_NOMEM;
        }
        for (i = 0; i < op->config_count; i++) {
            configs[i].Name = sf_slice_cstr(op->configs[i].name);
            configs[i].Value = sf_slice_cstr(op->configs[i].value);
        }
    }
    topic.ConfigsCount = (int32_t)op->config_count;
    topic.Configs = configs;
    req.TopicsCount = 1;
    req.Topics = &topic;
    req.TimeoutMs = sf_admin_ms_left(op->deadline);
    req.ValidateOnly = op->validate_only != 0;
    rc = sf_proto_CreateTopicsRequest_encode(wb, version, &req);
    free(configs);
    free(assignments);
    return rc;
}

static int admin_create_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    admin_topic_op_t *op = arg;
    sf_proto_CreateTopicsResponse_t resp;

    return ADMIN_DECODE(CreateTopicsResponse, body, version, resp, ({
                            int32_t at = ADMIN_FIND(resp.Topics, resp.TopicsCount, Name,
                                                    op->topic);
                            if (at >= 0 && resp.Topics[at].NumPartitions > 0) { /* v5+ */
                                op->created_count = resp.Topics[at].NumPartitions;
                                op->created_replication = resp.Topics[at].ReplicationFactor;
                            }
                            ADMIN_TOPIC_RESULT(op, resp.Topics, resp.TopicsCount);
                        }));
}

int sf_admin_create_topic(sf_admin_t *a, const char *topic, int32_t partitions,
                          int16_t replication_factor, const sf_config_kv_t *configs,
                          size_t config_count, int timeout_ms, char *errstr,
                          size_t errstr_size) {
    return sf_admin_create_topic_ex(a, topic, &partitions, &replication_factor, NULL, configs,
                                    config_count, 0, timeout_ms, errstr, errstr_size);
}

int sf_admin_create_topic_ex(sf_admin_t *a, const char *topic, int32_t *partitions_inout,
                             int16_t *replication_inout, const int32_t *replicas,
                             const sf_config_kv_t *configs, size_t config_count,
                             int validate_only, int timeout_ms, char *errstr,
                             size_t errstr_size) {
    admin_topic_op_t op;
    int32_t partitions = partitions_inout ? *partitions_inout : -1;
    int16_t replication_factor = replication_inout ? *replication_inout : -1;
    int rc;

    admin_errstr(errstr, errstr_size, NULL);
    if (a == NULL || topic == NULL || *topic == '\0' || (config_count > 0 && configs == NULL) ||
        config_count > INT32_MAX || partitions == 0 || partitions < -1 ||
        replication_factor == 0 || replication_factor < -1 ||
        (replicas && (partitions < 1 || replication_factor < 1))) {
        admin_errstr(errstr, errstr_size, "invalid topic name, partition count, replication "
                                          "factor or configs");
        return SF_ERROR_INVALID;
    }
    if ((rc = admin_configs_named(configs, config_count, errstr, errstr_size)) != SF_OK)
        return rc;
    memset(&op, 0, sizeof op);
    op.topic = topic;
    op.count = partitions;
    op.replication = replication_factor;
    op.replicas = replicas;
    op.validate_only = validate_only;
    op.configs = configs;
    op.config_count = config_count;
    op.created_count = -1;
    rc = admin_topic_call(a, SF_CLIENT_CONTROLLER, SF_PROTO_API_CreateTopics,
                          ADMIN_CREATETOPICS_MAX, admin_create_encode, admin_create_decode, &op,
                          timeout_ms, errstr, errstr_size);
    if (rc == SF_OK && op.created_count > 0 && partitions_inout && replication_inout) {
        *partitions_inout = op.created_count;
        *replication_inout = op.created_replication;
    }
    return rc;
}

/* ------------------------------------------------------------------------------------------
 * DeleteTopics
 * ------------------------------------------------------------------------------------------ */

static int admin_delete_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    admin_topic_op_t *op = arg;
    sf_proto_DeleteTopicsRequest_t req;
    sf_slice_t name = sf_slice_cstr(op->topic);

    memset(&req, 0, sizeof req);
    req.TopicNamesCount = 1;
    req.TopicNames = &name;
    req.TimeoutMs = sf_admin_ms_left(op->deadline);
    return sf_proto_DeleteTopicsRequest_encode(wb, version, &req);
}

static int admin_delete_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    admin_topic_op_t *op = arg;
    sf_proto_DeleteTopicsResponse_t resp;

    /* DeleteTopics answers have no ErrorMessage. */
    return ADMIN_DECODE(DeleteTopicsResponse, body, version, resp, ({
                            int32_t i = ADMIN_FIND(resp.Responses, resp.ResponsesCount, Name,
                                                   op->topic);
                            if (i >= 0)
                                op->ErrorCode = resp.Responses[i].ErrorCode;
                            i < 0 ? SF_ERROR_MALFORMED : SF_OK;
                        }));
}

int sf_admin_delete_topic(sf_admin_t *a, const char *topic, int timeout_ms, char *errstr,
                          size_t errstr_size) {
    admin_topic_op_t op;

    admin_errstr(errstr, errstr_size, NULL);
    if (a == NULL || topic == NULL || *topic == '\0')
        return SF_ERROR_INVALID;
    memset(&op, 0, sizeof op);
    op.topic = topic;
    return admin_topic_call(a, SF_CLIENT_CONTROLLER, SF_PROTO_API_DeleteTopics,
                            ADMIN_DELETETOPICS_MAX, admin_delete_encode, admin_delete_decode, &op,
                            timeout_ms, errstr, errstr_size);
}

/* ------------------------------------------------------------------------------------------
 * CreatePartitions
 * ------------------------------------------------------------------------------------------ */

static int admin_partitions_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    admin_topic_op_t *op = arg;
    sf_proto_CreatePartitionsRequest_t req;
    sf_proto_CreatePartitionsRequest_CreatePartitionsTopic_t topic;

    memset(&req, 0, sizeof req);
    memset(&topic, 0, sizeof topic);
    topic.Name = sf_slice_cstr(op->topic);
    topic.Count = op->count;
    topic.AssignmentsCount = -1; /* the broker places the new partitions */
    topic.Assignments = NULL;
    req.TopicsCount = 1;
    req.Topics = &topic;
    req.TimeoutMs = sf_admin_ms_left(op->deadline);
    req.ValidateOnly = false;
    return sf_proto_CreatePartitionsRequest_encode(wb, version, &req);
}

static int admin_partitions_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    admin_topic_op_t *op = arg;
    sf_proto_CreatePartitionsResponse_t resp;

    return ADMIN_DECODE(CreatePartitionsResponse, body, version, resp,
                        ADMIN_TOPIC_RESULT(op, resp.Results, resp.ResultsCount));
}

int sf_admin_create_partitions(sf_admin_t *a, const char *topic, int32_t total_count,
                               int timeout_ms, char *errstr, size_t errstr_size) {
    admin_topic_op_t op;

    admin_errstr(errstr, errstr_size, NULL);
    if (a == NULL || topic == NULL || *topic == '\0' || total_count <= 0) {
        admin_errstr(errstr, errstr_size, "invalid topic name or partition count");
        return SF_ERROR_INVALID;
    }
    memset(&op, 0, sizeof op);
    op.topic = topic;
    op.count = total_count;
    return admin_topic_call(a, SF_CLIENT_CONTROLLER, SF_PROTO_API_CreatePartitions,
                            ADMIN_CREATEPARTITIONS_MAX, admin_partitions_encode,
                            admin_partitions_decode, &op, timeout_ms, errstr, errstr_size);
}

/* ------------------------------------------------------------------------------------------
 * DescribeConfigs
 * ------------------------------------------------------------------------------------------ */

typedef struct admin_configs {
    int8_t type;
    const char *name;
    sf_config_entry_t *entries;
    size_t count;
    int16_t ErrorCode;
} admin_configs_t;

static int admin_configs_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    admin_configs_t *c = arg;
    sf_proto_DescribeConfigsRequest_t req;
    sf_proto_DescribeConfigsRequest_DescribeConfigsResource_t res;

    memset(&req, 0, sizeof req);
    memset(&res, 0, sizeof res);
    res.ResourceType = c->type;
    res.ResourceName = sf_slice_cstr(c->name);
    res.ConfigurationKeysCount = -1; /* every key */
    res.ConfigurationKeys = NULL;
    req.ResourcesCount = 1;
    req.Resources = &res;
    req.IncludeSynonyms = false;
    req.IncludeDocumentation = false;
    return sf_proto_DescribeConfigsRequest_encode(wb, version, &req);
}

static int admin_configs_copy(admin_configs_t *c, int16_t version,
                              const sf_proto_DescribeConfigsResponse_DescribeConfigsResult_t *res) {
    int32_t i;
    int rc;

    c->ErrorCode = res->ErrorCode;
    if (res->ErrorCode != 0 || res->ConfigsCount <= 0)
        return SF_OK;
    c->entries = calloc((size_t)res->ConfigsCount, sizeof *c->entries);
    if (c->entries == NULL)
        return SF_ERROR_NOMEM;
    for (i = 0; i < res->ConfigsCount; i++) {
        const sf_proto_DescribeConfigsResponse_DescribeConfigsResourceResult_t *pc = &res->Configs[i];
        sf_config_entry_t *e = &c->entries[c->count++];

        if ((rc = admin_strdup(pc->Name, &e->name)) != SF_OK)
            return rc;
        if (e->name == NULL && (e->name = strdup("")) == NULL)
            return SF_ERROR_NOMEM;
        if ((rc = admin_strdup(pc->Value, &e->value)) != SF_OK)
            return rc;
        e->read_only = pc->ReadOnly;
        e->sensitive = pc->IsSensitive;
        if (version >= 1) {
            e->source = pc->ConfigSource;
            e->is_default = pc->ConfigSource == 5; /* DEFAULT_CONFIG */
        } else {
            /* v0 has only IsDefault: map it as Kafka's admin client does. */
            e->is_default = pc->IsDefault;
            e->source = pc->IsDefault ? 5 : c->type == ADMIN_RESOURCE_TOPIC ? 1 : 4;
        }
    }
    return SF_OK;
}

/* The index of the element of @arr (@n of them) with ResourceType @type and ResourceName
 * @name, or -1. */
#define ADMIN_FIND_RESOURCE(arr, n, type, name)                                                \
    ({                                                                                         \
        int32_t _r, _hit = -1;                                                                 \
        for (_r = 0; _r < (n); _r++)                                                           \
            if ((arr)[_r].ResourceType == (type) &&                                           \
                sf_slice_eq((arr)[_r].ResourceName, (name))) {                                 \
                _hit = _r;                                                                     \
                break;                                                                         \
            }                                                                                  \
        _hit;                                                                                  \
    })

static int admin_configs_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    admin_configs_t *c = arg;
    sf_proto_DescribeConfigsResponse_t resp;

    return ADMIN_DECODE(DescribeConfigsResponse, body, version, resp, ({
                            int32_t i = ADMIN_FIND_RESOURCE(resp.Results, resp.ResultsCount,
                                                            c->type, c->name);
                            i < 0 ? SF_ERROR_MALFORMED
                                  : admin_configs_copy(c, version, &resp.Results[i]);
                        }));
}

int sf_admin_describe_configs(sf_admin_t *a, const char *topic, int broker, int timeout_ms,
                              sf_config_entry_t **entries, size_t *count) {
    admin_configs_t c;
    int32_t target = SF_CLIENT_ANY_BROKER;
    int rc;

    if (entries != NULL)
        *entries = NULL;
    if (count != NULL)
        *count = 0;
    if (a == NULL || topic == NULL || (*topic == '\0' && !broker) || entries == NULL ||
        count == NULL)
        return SF_ERROR_INVALID;
    /* A broker describes its own configs only: ask that broker. */
    if (broker && admin_broker_target(topic, &target) != SF_OK)
        return SF_ERROR_INVALID;
    memset(&c, 0, sizeof c);
    c.type = broker ? ADMIN_RESOURCE_BROKER : ADMIN_RESOURCE_TOPIC;
    c.name = topic;
    rc = sf_client_call(a->cl, target, SF_PROTO_API_DescribeConfigs, ADMIN_DESCRIBECONFIGS_MAX,
                        admin_configs_encode, admin_configs_decode, &c,
                        sf_admin_timeout(a, timeout_ms));
    if (rc == SF_OK)
        rc = sf_client_kerr(c.ErrorCode);
    rc = admin_broker_rc(a, target, rc);
    if (rc != SF_OK) {
        sf_config_entries_destroy(c.entries, c.count);
        return rc;
    }
    *entries = c.entries;
    *count = c.count;
    return SF_OK;
}

void sf_config_entries_destroy(sf_config_entry_t *entries, size_t count) {
    size_t i;

    if (entries == NULL)
        return;
    for (i = 0; i < count; i++) {
        free(entries[i].name);
        free(entries[i].value);
    }
    free(entries);
}

/* ------------------------------------------------------------------------------------------
 * IncrementalAlterConfigs
 * ------------------------------------------------------------------------------------------ */

static int admin_alter_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    admin_topic_op_t *op = arg;
    sf_proto_IncrementalAlterConfigsRequest_t req;
    sf_proto_IncrementalAlterConfigsRequest_AlterConfigsResource_t res;
    sf_proto_IncrementalAlterConfigsRequest_AlterableConfig_t *configs;
    size_t i;
    int rc;

    configs = calloc(op->config_count ? op->config_count : 1, sizeof *configs);
    if (configs == NULL)
        return SF_ERR_NOMEM;
    for (i = 0; i < op->config_count; i++) {
        configs[i].Name = sf_slice_cstr(op->configs[i].name);
        configs[i].ConfigOperation =
            op->configs[i].value != NULL ? SF_PROTO_CONFIG_OP_SET : SF_PROTO_CONFIG_OP_DELETE;
        configs[i].Value = sf_slice_cstr(op->configs[i].value);
    }
    memset(&res, 0, sizeof res);
    res.ResourceType = op->resource_type;
    res.ResourceName = sf_slice_cstr(op->topic);
    res.ConfigsCount = (int32_t)op->config_count;
    res.Configs = configs;
    memset(&req, 0, sizeof req);
    req.ResourcesCount = 1;
    req.Resources = &res;
    req.ValidateOnly = false;
    rc = sf_proto_IncrementalAlterConfigsRequest_encode(wb, version, &req);
    free(configs);
    return rc;
}

static int admin_alter_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    admin_topic_op_t *op = arg;
    sf_proto_IncrementalAlterConfigsResponse_t resp;

    return ADMIN_DECODE(IncrementalAlterConfigsResponse, body, version, resp, ({
                            int32_t i = ADMIN_FIND_RESOURCE(resp.Responses, resp.ResponsesCount,
                                                            op->resource_type, op->topic);
                            i < 0 ? SF_ERROR_MALFORMED
                                  : admin_topic_result(op, resp.Responses[i].ErrorCode,
                                                       resp.Responses[i].ErrorMessage);
                        }));
}

int sf_admin_alter_configs(sf_admin_t *a, const char *topic, const sf_config_kv_t *kvs,
                           size_t count, int timeout_ms, char *errstr, size_t errstr_size) {
    admin_topic_op_t op;
    int rc;

    admin_errstr(errstr, errstr_size, NULL);
    if (a == NULL || topic == NULL || *topic == '\0' || (count > 0 && kvs == NULL) ||
        count == 0 || count > INT32_MAX) {
        admin_errstr(errstr, errstr_size, "no topic or no config to change");
        return SF_ERROR_INVALID;
    }
    if ((rc = admin_configs_named(kvs, count, errstr, errstr_size)) != SF_OK)
        return rc;
    memset(&op, 0, sizeof op);
    op.topic = topic;
    op.configs = kvs;
    op.config_count = count;
    op.resource_type = ADMIN_RESOURCE_TOPIC;
    /* Topic configs live in ZooKeeper: any broker can change them. */
    return admin_topic_call(a, SF_CLIENT_ANY_BROKER, SF_PROTO_API_IncrementalAlterConfigs,
                            ADMIN_INCALTERCONFIGS_MAX, admin_alter_encode, admin_alter_decode,
                            &op, timeout_ms, errstr, errstr_size);
}

int sf_admin_alter_broker_configs(sf_admin_t *a, const char *broker, const sf_config_kv_t *kvs,
                                  size_t count, int timeout_ms, char *errstr,
                                  size_t errstr_size) {
    admin_topic_op_t op;
    int32_t target;
    int rc;

    admin_errstr(errstr, errstr_size, NULL);
    if (a == NULL || broker == NULL || kvs == NULL || count == 0 || count > INT32_MAX) {
        admin_errstr(errstr, errstr_size, "no broker or no config to change");
        return SF_ERROR_INVALID;
    }
    if (admin_broker_target(broker, &target) != SF_OK) {
        admin_errstr(errstr, errstr_size,
                     "a broker is named by its id, or \"\" for the cluster-wide default");
        return SF_ERROR_INVALID;
    }
    if ((rc = admin_configs_named(kvs, count, errstr, errstr_size)) != SF_OK)
        return rc;
    memset(&op, 0, sizeof op);
    op.topic = broker;
    op.configs = kvs;
    op.config_count = count;
    op.resource_type = ADMIN_RESOURCE_BROKER;
    /* Each broker changes its own dynamic configs; any one changes the cluster default. */
    rc = admin_topic_call(a, target, SF_PROTO_API_IncrementalAlterConfigs,
                          ADMIN_INCALTERCONFIGS_MAX, admin_alter_encode, admin_alter_decode, &op,
                          timeout_ms, errstr, errstr_size);
    return admin_broker_rc(a, target, rc);
}

/* ------------------------------------------------------------------------------------------
 * ApiVersions
 * ------------------------------------------------------------------------------------------ */

typedef struct admin_apis {
    sf_api_version_t *apis;
    size_t count;
    int16_t ErrorCode;
} admin_apis_t;

static int admin_apis_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    sf_proto_ApiVersionsRequest_t req;

    (void)arg;
    sf_proto_ApiVersionsRequest_init(&req);
    req.ClientSoftwareName = sf_slice_cstr("libstreamflow");
    req.ClientSoftwareVersion = sf_slice_cstr(sf_version());
    return sf_proto_ApiVersionsRequest_encode(wb, version, &req);
}

static int admin_cmp_api(const void *x, const void *y) {
    const sf_api_version_t *a = x, *b = y;
    return a->api_key < b->api_key ? -1 : a->api_key > b->api_key;
}

static int admin_apis_copy(admin_apis_t *r, const sf_proto_ApiVersionsResponse_t *resp) {
    int32_t i;

    r->ErrorCode = resp->ErrorCode;
    if (resp->ApiKeysCount <= 0)
        return SF_OK;
    r->apis = calloc((size_t)resp->ApiKeysCount, sizeof *r->apis);
    if (r->apis == NULL)
        return SF_ERROR_NOMEM;
    for (i = 0; i < resp->ApiKeysCount; i++) {
        sf_api_version_t *v = &r->apis[r->count++];
        v->api_key = resp->ApiKeys[i].ApiKey;
        v->min_version = resp->ApiKeys[i].MinVersion;
        v->max_version = resp->ApiKeys[i].MaxVersion;
        v->name = sf_proto_api_name(v->api_key);
    }
    qsort(r->apis, r->count, sizeof *r->apis, admin_cmp_api);
    return SF_OK;
}

static int admin_apis_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    sf_proto_ApiVersionsResponse_t resp;

    return ADMIN_DECODE(ApiVersionsResponse, body, version, resp, admin_apis_copy(arg, &resp));
}

int sf_admin_api_versions(sf_admin_t *a, int32_t broker, int timeout_ms,
                          sf_api_version_t **apis, size_t *count) {
    admin_apis_t r;
    int rc;

    if (apis != NULL)
        *apis = NULL;
    if (count != NULL)
        *count = 0;
    if (a == NULL || apis == NULL || count == NULL || broker < -1)
        return SF_ERROR_INVALID;
    memset(&r, 0, sizeof r);
    rc = sf_client_call(a->cl, broker, SF_PROTO_API_ApiVersions, 3, admin_apis_encode,
                        admin_apis_decode, &r, sf_admin_timeout(a, timeout_ms));
    rc = admin_broker_rc(a, broker, rc);
    if (rc == SF_OK && r.ErrorCode != 0)
        rc = sf_client_kerr(r.ErrorCode);
    if (rc != SF_OK) {
        free(r.apis);
        return rc;
    }
    *apis = r.apis;
    *count = r.count;
    return SF_OK;
}

void sf_api_versions_destroy(sf_api_version_t *apis) {
    free(apis);
}
