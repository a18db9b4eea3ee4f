/* Metadata and DescribeCluster: brokers, controller, topics, partitions, from the snapshot. */
#include "dispatch.h"

#include <stdlib.h>
#include <string.h>

#include "brokercfg.h"
#include "group.h"
#include "logging.h"
#include "topiccfg.h"
#include "znode.h"

/* Longest a Metadata request waits for a controller to be elected. */
#define METADATA_MAX_WAIT_MS 3000
/* AclOperation bits of what a client may do without an authorizer (Kafka's answer to
 * IncludeTopicAuthorizedOperations / IncludeClusterAuthorizedOperations then). */
#define TOPIC_OPERATIONS 0x0df8   /* READ WRITE CREATE DELETE ALTER DESCRIBE, *_CONFIGS */
#define CLUSTER_OPERATIONS 0x1fa0 /* CREATE ALTER DESCRIBE CLUSTER_ACTION *_CONFIGS IDEMPOTENT */

static int broker_alive(const sf_cluster_snapshot_t *snap, int32_t id) {
    return snap && sf_cluster_snapshot_broker(snap, id) != NULL;
}

/* An auto-creation, on its way to the metadata thread. */
typedef struct auto_create {
    sf_mail_t mail;
    sf_broker_t *b;
    char topic[];
} auto_create_t;

static void auto_create_done(void *arg, int err) {
    auto_create_t *ac = arg;
    if (err != SF_OK && err != SF_ERR_EXISTS)
        sf_log(SF_LOG_WARNING, "ADMIN", "auto-creating topic %s failed: %s", ac->topic,
               sf_err_str(err));
    else if (err == SF_OK)
        sf_log(SF_LOG_INFO, "ADMIN", "auto-created topic %s", ac->topic);
    free(ac);
}

/* On the metadata thread. */
static void auto_create_run(void *arg) {
    auto_create_t *ac = arg;
    const sf_brokercfg_t *cfg = sf_broker_cfg(ac->b);
    sf_cluster_t *cl = sf_broker_cluster(ac->b);
    int rc = cl ? sf_cluster_topic_create(cl, ac->topic, cfg->num_partitions,
                                          (int16_t)cfg->default_replication_factor, NULL, NULL,
                                          0, auto_create_done, ac)
                : SF_ERR_STATE;
    if (rc != SF_OK)
        auto_create_done(ac, rc);
}

/* Create @topic with the broker defaults (auto.create.topics.enable), on the metadata
 * thread. As Kafka does, the client sees LEADER_NOT_AVAILABLE until the metadata shows the
 * topic, and retries. */
static sf_kerr_t auto_create(sf_kreq_t *kr, const char *topic) {
    const sf_brokercfg_t *cfg = sf_broker_cfg(kr->b);
    size_t n = strlen(topic) + 1;
    auto_create_t *ac;
    if (sf_topiccfg_name_reserved(topic))
        return SF_KERR_UNKNOWN_TOPIC_OR_PARTITION;
    if (kr->snap && cfg->default_replication_factor > kr->snap->nbrokers)
        return SF_KERR_INVALID_REPLICATION_FACTOR;
    if (!kr->snap || !(ac = malloc(sizeof(*ac) + n)))
        return SF_KERR_LEADER_NOT_AVAILABLE;
    ac->b = kr->b;
    memcpy(ac->topic, topic, n);
    ac->mail.fn = auto_create_run;
    ac->mail.arg = ac;
    ac->mail.heap = 0;
    sf_broker_to_metadata(kr->b, &ac->mail);
    return SF_KERR_LEADER_NOT_AVAILABLE;
}

static int fill_topic(sf_kreq_t *kr, const sf_cluster_topic_t *t,
                      sf_proto_MetadataResponse_MetadataResponseTopic_t *mt) {
    int p, i;
    mt->Name = sf_slice_cstr(t->name);
    memcpy(mt->TopicId.b, t->topic_id, sizeof(mt->TopicId.b));
    mt->Partitions = sf_kreq_alloc(kr, (size_t)t->npartitions, sizeof(*mt->Partitions));
    if (!mt->Partitions)
        return SF_ERR_NOMEM;
    mt->PartitionsCount = t->npartitions;
    for (p = 0; p < t->npartitions; p++) {
        const sf_cluster_partition_t *cp = &t->partitions[p];
        sf_proto_MetadataResponse_MetadataResponsePartition_t *mp = &mt->Partitions[p];
        int noff = 0;
        sf_proto_MetadataResponse_MetadataResponsePartition_init(mp);
        mp->PartitionIndex = p;
        mp->LeaderEpoch = cp->leader_epoch;
        mp->ReplicaNodes = cp->replicas;
        mp->ReplicaNodesCount = cp->nreplicas;
        mp->IsrNodes = cp->isr;
        mp->IsrNodesCount = cp->nisr;
        if (cp->leader >= 0 && broker_alive(kr->snap, cp->leader)) {
            mp->LeaderId = cp->leader;
        } else {
            mp->LeaderId = -1;
            mp->ErrorCode = SF_KERR_LEADER_NOT_AVAILABLE;
        }
        mp->OfflineReplicas = sf_kreq_alloc(kr, (size_t)cp->nreplicas, sizeof(int32_t));
        if (!mp->OfflineReplicas)
            return SF_ERR_NOMEM;
        for (i = 0; i < cp->nreplicas; i++)
            if (!broker_alive(kr->snap, cp->replicas[i]))
                mp->OfflineReplicas[noff++] = cp->replicas[i];
        mp->OfflineReplicasCount = noff;
    }
    return SF_OK;
}

/* One requested topic, by name (or by id from v10). */
static int fill_requested(sf_kreq_t *kr, const sf_proto_MetadataRequest_t *mreq,
                          const sf_proto_MetadataRequest_MetadataRequestTopic_t *rt,
                          sf_proto_MetadataResponse_MetadataResponseTopic_t *mt) {
    const sf_brokercfg_t *cfg = sf_broker_cfg(kr->b);
    const sf_cluster_topic_t *t;
    char *name = sf_kreq_str(kr, rt->Name);
    mt->Name = rt->Name;
    mt->TopicId = rt->TopicId;
    if (!name) {
        if (!(t = sf_kreq_topic_by_id(kr, &rt->TopicId))) {
            mt->ErrorCode = SF_KERR_UNKNOWN_TOPIC_ID;
            return SF_OK;
        }
        return fill_topic(kr, t, mt);
    }
    if ((t = sf_kreq_topic(kr, name)))
        return fill_topic(kr, t, mt);
    if (!sf_znode_topic_name_valid(name))
        mt->ErrorCode = SF_KERR_INVALID_TOPIC_EXCEPTION;
    else if (cfg->auto_create_topics_enable && (kr->version < 4 || mreq->AllowAutoTopicCreation))
        mt->ErrorCode = auto_create(kr, name);
    else
        mt->ErrorCode = SF_KERR_UNKNOWN_TOPIC_OR_PARTITION;
    return SF_OK;
}

/* The live brokers' endpoints on the listener @kr came in on; this broker alone before the
 * snapshot lists it, so a client can retry here. Returns the count (-1 on no memory). */
typedef struct broker_ep {
    int32_t id, port;
    sf_slice_t host, rack;
} broker_ep_t;

static int listener_brokers(sf_kreq_t *kr, broker_ep_t **out) {
    const sf_cluster_snapshot_t *snap = kr->snap;
    const char *listener = sf_kreq_listener(kr);
    int i, nb = 0;
    broker_ep_t *eps = sf_kreq_alloc(kr, snap ? (size_t)snap->nbrokers : 1, sizeof(*eps));
    char host[256];
    int32_t port;
    *out = eps;
    if (!eps)
        return -1;
    for (i = 0; snap && i < snap->nbrokers; i++) {
        const sf_cluster_broker_t *br = &snap->brokers[i];
        int e;
        for (e = 0; e < br->nendpoints; e++) {
            if (sf_broker_endpoint_parse(br->endpoints[e], listener, host, sizeof(host), &port))
                continue;
            eps[nb].id = br->id;
            eps[nb].host = sf_kreq_slice(kr, host);
            eps[nb].port = port;
            eps[nb].rack = sf_slice_cstr(br->rack);
            nb++;
            break;
        }
    }
    if (nb == 0) {
        size_t n, e;
        const char *const *own = sf_broker_endpoints(kr->b, &n);
        for (e = 0; e < n; e++) {
            if (sf_broker_endpoint_parse(own[e], listener, host, sizeof(host), &port))
                continue;
            eps[0].id = sf_broker_cfg(kr->b)->broker_id;
            eps[0].host = sf_kreq_slice(kr, host);
            eps[0].port = port;
            eps[0].rack = sf_slice_cstr(NULL);
            nb = 1;
            break;
        }
    }
    return nb;
}

static void metadata_answer(sf_kreq_t *kr, const sf_proto_MetadataRequest_t *mreq) {
    const sf_cluster_snapshot_t *snap = kr->snap;
    sf_proto_MetadataResponse_t resp;
    broker_ep_t *eps;
    int i, nb = listener_brokers(kr, &eps);
    /* v0 has no null array: an empty one asks for every topic. */
    int all = mreq->TopicsCount < 0 || (kr->version == 0 && mreq->TopicsCount == 0);

    sf_proto_MetadataResponse_init(&resp);
    resp.ControllerId = snap ? snap->controller_id : -1;
    resp.ClusterId = sf_slice_cstr(snap ? snap->cluster_id : NULL);
    if (kr->version >= 8 && kr->version <= 10 && mreq->IncludeClusterAuthorizedOperations)
        resp.ClusterAuthorizedOperations = CLUSTER_OPERATIONS;
    resp.Brokers = sf_kreq_alloc(kr, nb > 0 ? (size_t)nb : 0, sizeof(*resp.Brokers));
    if (nb < 0 || !resp.Brokers)
        goto nomem;
    for (i = 0; i < nb; i++) {
        resp.Brokers[i].NodeId = eps[i].id;
        resp.Brokers[i].Host = eps[i].host;
        resp.Brokers[i].Port = eps[i].port;
        resp.Brokers[i].Rack = eps[i].rack;
    }
    resp.BrokersCount = nb;
    resp.TopicsCount = all ? (snap ? snap->ntopics : 0) : mreq->TopicsCount;
    resp.Topics = sf_kreq_alloc(kr, (size_t)resp.TopicsCount, sizeof(*resp.Topics));
    if (!resp.Topics)
        goto nomem;
    for (i = 0; i < resp.TopicsCount; i++) {
        sf_proto_MetadataResponse_MetadataResponseTopic_t *mt = &resp.Topics[i];
        int rc;
        sf_proto_MetadataResponse_MetadataResponseTopic_init(mt);
        rc = all ? fill_topic(kr, snap->topics[i], mt)
                 : fill_requested(kr, mreq, &mreq->Topics[i], mt);
        if (rc != SF_OK)
            goto nomem;
        if (kr->version >= 8 && mreq->IncludeTopicAuthorizedOperations)
            mt->TopicAuthorizedOperations = TOPIC_OPERATIONS;
    }
    sf_kreq_respond(kr, &resp);
    return;
nomem:
    sf_kreq_close(kr, "no memory for the response");
}

typedef struct metadata_wait {
    sf_kreq_t *kr;
    const sf_proto_MetadataRequest_t *mreq;
} metadata_wait_t;

/* Right after start the broker is registered a moment before a controller is elected; admin
 * clients that see no controller give up, so Metadata waits until there is one. */
static int controller_known(const sf_kreq_t *kr) {
    return kr->snap && kr->snap->controller_id >= 0;
}

static int metadata_attempt(void *arg, int final) {
    metadata_wait_t *mw = arg;
    sf_kreq_refresh(mw->kr);
    if (!final && !controller_known(mw->kr))
        return 0;
    metadata_answer(mw->kr, mw->mreq);
    return 1;
}

void sf_kapi_Metadata(sf_kreq_t *kr, void *msg) {
    sf_pkey_t key = sf_pkey_metadata();
    metadata_wait_t *mw;
    if (controller_known(kr) || !(mw = sf_kreq_alloc(kr, 1, sizeof(*mw)))) {
        metadata_answer(kr, msg);
        return;
    }
    mw->kr = kr;
    mw->mreq = msg;
    if (!sf_kreq_park(kr, &key, 1, METADATA_MAX_WAIT_MS, metadata_attempt, mw))
        metadata_answer(kr, msg);
}

void sf_kapi_DescribeCluster(sf_kreq_t *kr, void *msg) {
    const sf_proto_DescribeClusterRequest_t *dreq = msg;
    sf_proto_DescribeClusterResponse_t resp;
    broker_ep_t *eps;
    int i, nb = listener_brokers(kr, &eps);
    sf_proto_DescribeClusterResponse_init(&resp);
    if (dreq->EndpointType != 1) {
        /* Only brokers are described (1); controllers (2) are KRaft's. */
        resp.ErrorCode = SF_KERR_UNSUPPORTED_ENDPOINT_TYPE;
        resp.ErrorMessage = sf_slice_cstr("only broker endpoints (type 1) are described");
        sf_kreq_respond(kr, &resp);
        return;
    }
    resp.ClusterId = sf_slice_cstr(kr->snap && kr->snap->cluster_id ? kr->snap->cluster_id : "");
    resp.ControllerId = kr->snap ? kr->snap->controller_id : -1;
    if (dreq->IncludeClusterAuthorizedOperations)
        resp.ClusterAuthorizedOperations = CLUSTER_OPERATIONS;
    resp.Brokers = sf_kreq_alloc(kr, nb > 0 ? (size_t)nb : 0, sizeof(*resp.Brokers));
    if (nb < 0 || !resp.Brokers) {
        sf_kreq_close(kr, "no memory for the response");
        return;
    }
    for (i = 0; i < nb; i++) {
        sf_proto_DescribeClusterResponse_DescribeClusterBroker_init(&resp.Brokers[i]);
        resp.Brokers[i].BrokerId = eps[i].id;
        resp.Brokers[i].Host = eps[i].host;
        resp.Brokers[i].Port = eps[i].port;
        resp.Brokers[i].Rack = eps[i].rack;
    }
    resp.BrokersCount = nb;
    sf_kreq_respond(kr, &resp);
}

/* ---- FindCoordinator: the owner of the group's (or transactional id's) bucket ---- */

typedef struct coordinator_answer {
    int16_t error;
    const char *message;
    int32_t node_id, port;
    sf_slice_t host;
} coordinator_answer_t;

static coordinator_answer_t find_coordinator(sf_kreq_t *kr, const broker_ep_t *eps, int nb,
                                             sf_slice_t key, int8_t key_type) {
    const sf_cluster_snapshot_t *snap = kr->snap;
    coordinator_answer_t a = {SF_KERR_COORDINATOR_NOT_AVAILABLE, NULL, -1, -1, {(const uint8_t *)"", 0}};
    int i, b;
    /* Transactional ids share the group coordinators' buckets (txn.h). */
    if (key_type != 0 && key_type != 1) {
        a.error = SF_KERR_INVALID_REQUEST;
        a.message = "Unknown coordinator key type.";
        return a;
    }
    if (key.len <= 0) {
        a.error = key_type == 1 ? SF_KERR_INVALID_REQUEST : SF_KERR_INVALID_GROUP_ID;
        return a;
    }
    if (!snap || snap->ngroup_buckets < 1) {
        a.message = "The group coordinators are not placed yet.";
        return a;
    }
    b = sf_coord_bucket_of((const char *)key.p, (size_t)key.len, snap->ngroup_buckets);
    for (i = 0; i < nb; i++)
        if (eps[i].id == snap->group_buckets[b].broker) {
            a.error = SF_KERR_NONE;
            a.node_id = eps[i].id;
            a.host = eps[i].host;
            a.port = eps[i].port;
            return a;
        }
    a.message = "The group's coordinator is not available.";
    return a;
}

void sf_kapi_FindCoordinator(sf_kreq_t *kr, void *msg) {
    const sf_proto_FindCoordinatorRequest_t *req = msg;
    sf_proto_FindCoordinatorResponse_t resp;
    broker_ep_t *eps;
    int i, nb = listener_brokers(kr, &eps);
    sf_proto_FindCoordinatorResponse_init(&resp);
    if (nb < 0) {
        sf_kreq_close(kr, "no memory for the response");
        return;
    }
    if (kr->version < 4) {
        coordinator_answer_t a = find_coordinator(kr, eps, nb, req->Key, req->KeyType);
        resp.ErrorCode = a.error;
        resp.ErrorMessage = sf_slice_cstr(a.message);
        resp.NodeId = a.node_id;
        resp.Host = a.host;
        resp.Port = a.port;
        sf_kreq_respond(kr, &resp);
        return;
    }
    resp.CoordinatorsCount = req->CoordinatorKeysCount > 0 ? req->CoordinatorKeysCount : 0;
    resp.Coordinators = sf_kreq_alloc(kr, (size_t)resp.CoordinatorsCount,
                                      sizeof(*resp.Coordinators));
    if (!resp.Coordinators) {
        sf_kreq_close(kr, "no memory for the response");
        return;
    }
    for (i = 0; i < resp.CoordinatorsCount; i++) {
        sf_proto_FindCoordinatorResponse_Coordinator_t *c = &resp.Coordinators[i];
        coordinator_answer_t a =
            find_coordinator(kr, eps, nb, req->CoordinatorKeys[i], req->KeyType);
        sf_proto_FindCoordinatorResponse_Coordinator_init(c);
        c->Key = req->CoordinatorKeys[i];
        c->ErrorCode = a.error;
        c->ErrorMessage = sf_slice_cstr(a.message);
        c->NodeId = a.node_id;
        c->Host = a.host;
        c->Port = a.port;
    }
    sf_kreq_respond(kr, &resp);
}
