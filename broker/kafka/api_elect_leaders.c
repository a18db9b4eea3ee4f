/* ElectLeaders (on the controller): preferred-replica elections (type 0, the only one before
 * v1) or unclean elections (type 1) for the partitions named, or for every partition when the
 * list is null. As Kafka's controller answers: ELECTION_NOT_NEEDED where the preferred replica
 * leads already (type 0) or the leader is live (type 1), PREFERRED_LEADER_NOT_AVAILABLE when
 * the preferred replica is not live or not in the ISR, ELIGIBLE_LEADERS_NOT_AVAILABLE when no
 * live replica can lead, UNKNOWN_TOPIC_OR_PARTITION, INVALID_TOPIC_EXCEPTION for a topic being
 * deleted, NOT_CONTROLLER on other brokers. The new leaders are written as versioned state
 * znode updates in one multi-op and answered from its completion. */
#include "dispatch.h"

#include <stdlib.h>
#include <string.h>

#include "election_rules.h"
#include "logging.h"
#include "state_write.h"

#define ELECT_PREFERRED 0
#define ELECT_UNCLEAN 1

typedef sf_proto_ElectLeadersResponse_PartitionResult_t elect_rp_t;
typedef sf_proto_ElectLeadersResponse_ReplicaElectionResult_t elect_rt_t;

static void fill_written(void *slot, const sf_cluster_partition_t *st, int32_t version,
                         int16_t kerr) {
    elect_rp_t *rp = slot;
    (void)st;
    (void)version;
    rp->ErrorCode = kerr;
}

static void result_error(elect_rp_t *rp, int16_t code, const char *msg) {
    rp->ErrorCode = code;
    rp->ErrorMessage = sf_slice_cstr(msg); /* a literal */
}

/* The election for one partition of @t: an error in @rp now, or a write queued in @op. */
static void elect_one(sf_kstate_op_t *op, const sf_cluster_snapshot_t *snap,
                      const sf_cluster_topic_t *t, int8_t type, elect_rp_t *rp) {
    const sf_cluster_partition_t *part = &t->partitions[rp->PartitionId];
    sf_cluster_partition_t st = {0};
    int out;
    if (!sf_cluster_partition_has_state(part)) {
        result_error(rp, SF_KERR_ELIGIBLE_LEADERS_NOT_AVAILABLE, "The partition has no state yet.");
        return;
    }
    if (type == ELECT_PREFERRED) {
        out = sf_elect_preferred(part, snap, &st);
    } else if (part->leader >= 0 && sf_cluster_snapshot_broker(snap, part->leader)) {
        out = SF_ELECT_NONE; /* a live leader: nothing unclean to do */
    } else {
        out = sf_elect_failover(part, snap, 1, &st);
        if (out == SF_ELECT_NONE || out == SF_ELECT_SHRINK) {
            free(st.isr);
            st.isr = NULL;
            out = SF_ELECT_OFFLINE;
        }
    }
    if (out < 0) {
        result_error(rp, SF_KERR_UNKNOWN_SERVER_ERROR, "No memory for the election.");
    } else if (out == SF_ELECT_NONE) {
        result_error(rp, SF_KERR_ELECTION_NOT_NEEDED,
                     "Leader election not needed for topic partition.");
    } else if (out == SF_ELECT_OFFLINE) {
        free(st.isr);
        if (type == ELECT_PREFERRED)
            result_error(rp, SF_KERR_PREFERRED_LEADER_NOT_AVAILABLE,
                         "The preferred replica is not live or not in the ISR.");
        else
            result_error(rp, SF_KERR_ELIGIBLE_LEADERS_NOT_AVAILABLE,
                         "No live replica of the partition.");
    } else {
        if (sf_kstate_op_add(op, t->name, part, st.leader, st.leader_epoch, st.isr, st.nisr, rp) !=
            SF_OK)
            result_error(rp, SF_KERR_UNKNOWN_SERVER_ERROR, "No memory for the election.");
        free(st.isr);
    }
}

/* One topic's results: @parts (@n of them; NULL: every partition, leaving out those that need
 * no election, as Kafka does for a null list). The results never move once a write for them
 * is queued. */
static int elect_topic(sf_kreq_t *kr, sf_kstate_op_t *op, const sf_cluster_snapshot_t *snap,
                       int8_t type, int is_controller, sf_slice_t name, const int32_t *parts,
                       int n, elect_rt_t *rt) {
    const char *topic = sf_kreq_str(kr, name);
    const sf_cluster_topic_t *t = topic && snap ? sf_cluster_snapshot_topic(snap, topic) : NULL;
    int i;
    sf_proto_ElectLeadersResponse_ReplicaElectionResult_init(rt);
    rt->Topic = name;
    if (!parts)
        n = t ? t->npartitions : 0;
    if (n > 0 && !(rt->PartitionResult = sf_kreq_alloc(kr, (size_t)n, sizeof(elect_rp_t))))
        return SF_ERR_NOMEM;
    for (i = 0; i < n; i++) {
        elect_rp_t *rp = &rt->PartitionResult[rt->PartitionResultCount];
        sf_proto_ElectLeadersResponse_PartitionResult_init(rp);
        rp->PartitionId = parts ? parts[i] : i;
        if (!is_controller)
            result_error(rp, SF_KERR_NOT_CONTROLLER, "This broker is not the controller.");
        else if (!t || rp->PartitionId < 0 || rp->PartitionId >= t->npartitions)
            result_error(rp, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.");
        else if (sf_cluster_snapshot_deleting(snap, t->name))
            result_error(rp, SF_KERR_INVALID_TOPIC_EXCEPTION, "The topic is being deleted.");
        else
            elect_one(op, snap, t, type, rp);
        if (parts || rp->ErrorCode != SF_KERR_ELECTION_NOT_NEEDED)
            rt->PartitionResultCount++;
    }
    return SF_OK;
}

/* Every topic's results when the request names none (topics with none left out). */
static int elect_everything(sf_kreq_t *kr, sf_kstate_op_t *op, const sf_cluster_snapshot_t *snap,
                            int8_t type, int is_controller, sf_proto_ElectLeadersResponse_t *resp) {
    int i, n = snap ? (int)snap->ntopics : 0;
    elect_rt_t *rt;
    if (n > 0 && !(resp->ReplicaElectionResults = sf_kreq_alloc(kr, (size_t)n, sizeof(elect_rt_t))))
        return SF_ERR_NOMEM;
    for (i = 0; i < n; i++) {
        /* The name in the arena: the snapshot may be gone when the answer is written. */
        const char *name = snap->topics[i]->name;
        size_t len = strlen(name);
        char *copy = sf_kreq_alloc(kr, len + 1, 1);
        if (!copy)
            return SF_ERR_NOMEM;
        memcpy(copy, name, len + 1);
        rt = &resp->ReplicaElectionResults[resp->ReplicaElectionResultsCount];
        if (elect_topic(kr, op, snap, type, is_controller, sf_slice_cstr(copy), NULL, 0, rt) !=
            SF_OK)
            return SF_ERR_NOMEM;
        if (rt->PartitionResultCount > 0)
            resp->ReplicaElectionResultsCount++; /* queued slots are in rt's own array */
    }
    return SF_OK;
}

/* Sizes before the writes are queued: a queued result must not move. */
static int count_partitions(const sf_proto_ElectLeadersRequest_t *req,
                            const sf_cluster_snapshot_t *snap) {
    int i, n = 0;
    if (req->TopicPartitionsCount < 0) {
        for (i = 0; snap && i < (int)snap->ntopics; i++)
            n += snap->topics[i]->npartitions;
        return n;
    }
    for (i = 0; i < req->TopicPartitionsCount; i++)
        n += req->TopicPartitions[i].PartitionsCount;
    return n;
}

void sf_kapi_ElectLeaders(sf_kreq_t *kr, void *msg) {
    const sf_proto_ElectLeadersRequest_t *req = msg;
    sf_cluster_t *cl = sf_broker_cluster(kr->b);
    const sf_cluster_snapshot_t *snap = cl ? sf_cluster_current(cl) : NULL;
    int is_controller = snap && sf_cluster_is_controller(cl);
    int8_t type = kr->version >= 1 ? req->ElectionType : ELECT_PREFERRED;
    sf_proto_ElectLeadersResponse_t *resp = sf_kreq_alloc(kr, 1, sizeof(*resp));
    sf_kstate_op_t *op;
    int i, rc = SF_OK;
    if (!resp || !(op = sf_kstate_op_new(kr, resp, count_partitions(req, snap), fill_written))) {
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    sf_proto_ElectLeadersResponse_init(resp);
    if (type != ELECT_PREFERRED && type != ELECT_UNCLEAN) {
        resp->ErrorCode = SF_KERR_INVALID_REQUEST;
        sf_kstate_op_abandon(op, NULL);
        return;
    }
    if (req->TopicPartitionsCount < 0) {
        rc = elect_everything(kr, op, snap, type, is_controller, resp);
    } else {
        if (req->TopicPartitionsCount > 0 &&
            !(resp->ReplicaElectionResults =
                  sf_kreq_alloc(kr, (size_t)req->TopicPartitionsCount, sizeof(elect_rt_t))))
            rc = SF_ERR_NOMEM;
        resp->ReplicaElectionResultsCount = rc == SF_OK ? req->TopicPartitionsCount : 0;
        for (i = 0; rc == SF_OK && i < req->TopicPartitionsCount; i++) {
            const sf_proto_ElectLeadersRequest_TopicPartitions_t *tp = &req->TopicPartitions[i];
            rc = elect_topic(kr, op, snap, type, is_controller, tp->Topic, tp->Partitions,
                             tp->PartitionsCount, &resp->ReplicaElectionResults[i]);
        }
    }
    if (rc != SF_OK) {
        sf_kstate_op_abandon(op, "no memory for the request");
        return;
    }
    sf_kstate_op_run(op);
}
